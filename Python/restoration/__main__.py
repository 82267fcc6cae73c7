"""``python -m restoration``: ``--version`` prints the package's and the C
library's versions; anything else runs ``restorectl`` with the same
arguments when it is installed, else says how to get it."""
from __future__ import annotations

import os
import shutil
import sys

from . import __version__, library_version


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("--version", "-V"):
        print(f"restoration {__version__} (librestoration {library_version()})")
        return 0
    tool = os.environ.get("RESTORECTL") or shutil.which("restorectl")
    if tool is None:
        print("restoration: restorectl is not installed. It comes with the C library: "
              "`make install` in the source tree installs it (or `swift build --product "
              "restorectl` builds it in .build/debug); then `python -m restoration ARGS` "
              "runs `restorectl ARGS`.", file=sys.stderr)
        return 2
    os.execv(tool, [tool, *args])
    return 0   # not reached


if __name__ == "__main__":
    sys.exit(main())
