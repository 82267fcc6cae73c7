#!/usr/bin/env bash
# The docs as a reader follows them:
#   1. every relative link of README.md and docs/**/*.md (inline, reference
#      and HTML links, images too) names a file or folder inside the
#      repository, and its #anchor a heading of that file (GitHub's slugs:
#      lower case, punctuation dropped, spaces as '-', '-1', '-2' for
#      repeats) or an explicit <a name|id>; `#L12` anchors into other files
#      are accepted; a link that leaves the repository fails;
#   2. every manual page we ship (hand-written *.1…*.9 in the repository,
#      `@VERSION@`/`@DATE@` substituted as `make` does) names in its
#      references (`.BR name (N)`, `\fBname\fR(N)`, `.Xr name N`) only pages
#      that exist, for our own pages (names starting with "restor"): a page
#      file in the repository, or one the Makefile generates (man/NAME.N);
#   3. every such page is free of `mandoc -T lint` warnings.
# Each link, reference and page checked counts once; a failure prints
#   file:line: link → why
# Before the repository, the checker runs on a small tree of its own with
# known faults and must report exactly those (one more check: "self-test").
#   Tests/docs/links.sh [SUMMARY_FILE] [FILE.md …]   (default: README.md docs/**/*.md)
#   DOCS_ROOT=DIR Tests/docs/links.sh …              (check another tree; no self-test)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
cd "${DOCS_ROOT:-$HERE/../..}" || exit 1
SUMMARY=${1:-/dev/null}
shift || true
SELF_PASS=0; SELF_FAIL=0

self_test() {
    local t out want
    t=$(mktemp -d) || return 1
    mkdir -p "$t/docs/man" "$t/src"
    printf '# Top\n\nSee [the guide](docs/GUIDE.md#two-words) and [gone](docs/GONE.md).\n' > "$t/README.md"
    cat > "$t/docs/GUIDE.md" <<'MD'
# Guide
## Two `words`
## Two words
Setext heading
--------------
[ok](#two-words-1) [ok](#setext-heading) [ok](../src/a.c#L3) [ok](../src)
[bad anchor](#three) [outside](../../secret.md) [no anchor here](../src/a.c#main)
`[in code](nowhere.md)` and see `OTHER.md` and FORMAT.md
```
[in a fence](nowhere.md)
```
[ref]: GUIDE.md#nope
MD
    printf 'int a;\n' > "$t/src/a.c"
    printf '# Format\n' > "$t/FORMAT.md"
    printf '.TH RESTORATION-X 3 @DATE@ "x @VERSION@"\n.SH NAME\nx \\- y\n.SH SEE ALSO\n.BR restoration\\-y (3),\n.BR restoration\\-x (3)\n' > "$t/docs/man/restoration-x.3"
    out=$(DOCS_ROOT="$t" "$HERE/links.sh" /dev/null 2>&1)
    want="README.md:3: docs/GONE.md → no such file or folder: docs/GONE.md
docs/GUIDE.md:7: #three → docs/GUIDE.md has no heading whose anchor is #three
docs/GUIDE.md:7: ../../secret.md → points outside the repository (../secret.md)
docs/GUIDE.md:7: ../src/a.c#main → #main in src/a.c, which is not markdown (only #L<line> anchors can be checked there)
docs/GUIDE.md:8: OTHER.md → names a document that is not in the repository (looked beside the file and at the root)
docs/GUIDE.md:12: GUIDE.md#nope → docs/GUIDE.md has no heading whose anchor is #nope
docs/man/restoration-x.3:5: restoration-y(3) → no page restoration-y.3 in the repository, nor one the Makefile generates
docs: 8 passed, 7 failed"
    rm -rf "$t"
    if [ "$out" = "$want" ]; then
        SELF_PASS=1
    else
        SELF_FAIL=1
        echo "self-test: FAILED: the checker's report on its own faulty tree differs; got:"
        echo "$out"
        echo "--- expected:"
        echo "$want"
    fi
}
[ -z "${DOCS_ROOT:-}" ] && self_test

if ! command -v python3 >/dev/null 2>&1; then
    echo "docs: FAILED: python3 is not installed (make test-docs installs it)"
    echo "docs: 0 passed, 1 failed" | tee -a "$SUMMARY"
    exit 1
fi

python3 - "$SUMMARY" "$SELF_PASS" "$SELF_FAIL" "$@" <<'PY'
import os, re, subprocess, sys, shutil, unicodedata, urllib.parse, tempfile

summary = sys.argv[1]
root = os.path.realpath(".")
passed, failed = int(sys.argv[2]), int(sys.argv[3])     # the self-test's
SKIP_DIRS = {".git", ".build", ".build-install", ".swiftpm", "node_modules"}

def ok():
    global passed
    passed += 1

def bad(where, link, why):
    global failed
    failed += 1
    print(f"{where}: {link} \u2192 {why}")

def rel(p):
    return os.path.relpath(p, root)

def walk(top):
    for d, dirs, files in os.walk(top):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith(".build"))
        for f in sorted(files):
            yield os.path.join(d, f)

# --- markdown ---------------------------------------------------------------

FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")

def prose_lines(text):
    """(line number, line) outside fenced code blocks."""
    fence = None
    for n, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        yield n, line

def strip_code_spans(line):
    # `code` and ``code``: their content is not markup (kept as text for slugs).
    return re.sub(r"(`+)(.+?)\1", lambda m: "\0" + m.group(2).replace("[", "\1").replace("]", "\2") + "\0", line)

def slug(text):
    t = strip_code_spans(text).replace("\0", "").replace("\1", "[").replace("\2", "]")
    t = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", t)          # links: their text
    t = re.sub(r"<[^>]+>", "", t)                             # HTML tags
    t = t.strip().lower()
    out = []
    for ch in t:
        cat = unicodedata.category(ch)
        if ch in "-_" or cat[0] in "LN" or cat == "Mn":
            out.append(ch)
        elif ch == " ":
            out.append("-")
    return "".join(out)

anchor_cache = {}

def anchors(path):
    if path in anchor_cache:
        return anchor_cache[path]
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    found, seen = set(), {}
    def add(base):
        n = seen.get(base, 0)
        found.add(base if n == 0 else f"{base}-{n}")
        seen[base] = n + 1
    prev = ""
    for _, line in prose_lines(text):
        m = re.match(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if m:
            add(slug(m.group(2)))
        elif prev.strip() and re.match(r"^\s{0,3}(=+|-+)\s*$", line) and not re.match(r"^\s{0,3}([-*+]\s|\|)", prev) and "|" not in prev:
            add(slug(prev))
        for m in re.finditer(r"<a\s[^>]*\b(?:name|id)\s*=\s*[\"']([^\"']+)[\"']", line):
            found.add(m.group(1))
        prev = line
    anchor_cache[path] = found
    return found

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HTML = re.compile(r"<(?:a|img)\s[^>]*\b(?:href|src)\s*=\s*[\"']([^\"']+)[\"']", re.I)

def check_target(where, source, target):
    raw = target
    target = target.strip("<>")
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("//"):
        return          # a URL (https:, mailto:): not checked here
    path, _, anchor = target.partition("#")
    path = urllib.parse.unquote(path)
    anchor = urllib.parse.unquote(anchor)
    if path == "":
        dest = source
    elif path.startswith("/"):
        dest = os.path.join(root, path.lstrip("/"))
    else:
        dest = os.path.join(os.path.dirname(source), path)
    real = os.path.realpath(dest)
    if real != root and not real.startswith(root + os.sep):
        return bad(where, raw, f"points outside the repository ({os.path.normpath(os.path.relpath(dest, root))})")
    if not os.path.exists(real):
        return bad(where, raw, f"no such file or folder: {rel(real)}")
    if anchor:
        if os.path.isdir(real):
            return bad(where, raw, f"#{anchor} on a folder ({rel(real)})")
        if real.endswith(".md"):
            names = anchors(real)
            if anchor not in names:
                near = sorted(a for a in names if anchor.split("-")[0] in a)[:4]
                hint = f"; headings like: {', '.join('#' + a for a in near)}" if near else ""
                return bad(where, raw, f"{rel(real)} has no heading whose anchor is #{anchor}{hint}")
        elif not re.fullmatch(r"L\d+(-L\d+)?", anchor):
            return bad(where, raw, f"#{anchor} in {rel(real)}, which is not markdown (only #L<line> anchors can be checked there)")
    ok()

MENTION = re.compile(r"(?<![\w./-])((?:\.{1,2}/)?[\w][\w./-]*\.md)(?![\w/-])")

def check_mentions(where, source, line):
    """A document named in the text (`docs/TESTING.md`, see FORMAT.md), not
    as a link: it must exist too, beside the file or from the root."""
    text = re.sub(r"[a-zA-Z][a-zA-Z0-9+.-]*://\S+", " ", line)        # URLs
    text = LINK.sub(" ", text)
    text = HTML.sub(" ", text)
    for m in MENTION.finditer(text):
        name = m.group(1)
        cands = [os.path.join(os.path.dirname(source), name), os.path.join(root, name)]
        real = [os.path.realpath(c) for c in cands]
        if any(os.path.isfile(r) and (r.startswith(root + os.sep)) for r in real):
            ok()
        else:
            bad(where, name, "names a document that is not in the repository (looked beside the file and at the root)")

def check_markdown(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    for n, line in prose_lines(text):
        where = f"{rel(path)}:{n}"
        plain = strip_code_spans(line)
        m = REFDEF.match(plain)
        if m:
            check_target(where, path, m.group(1))
            continue
        for m in LINK.finditer(plain):
            check_target(where, path, m.group(1))
        for m in HTML.finditer(plain):
            check_target(where, path, m.group(1))
        check_mentions(where, path, plain.replace("\0", " ").replace("\1", "[").replace("\2", "]"))

files = sys.argv[4:]
if not files:
    files = ["README.md"] + sorted(p for p in walk("docs") if p.endswith(".md"))
for f in files:
    if not os.path.isfile(f):
        bad(f, f, "no such markdown file to check")
        continue
    check_markdown(os.path.realpath(f))

# --- manual pages -----------------------------------------------------------

def is_page(p):
    if not re.search(r"\.[1-9]$", p):
        return False
    try:
        with open(p, encoding="utf-8", errors="replace") as f:
            head = f.read(4096)
    except OSError:
        return False
    return re.search(r"^\.(TH|Dd)\b", head, re.M) is not None

pages = [p for p in walk(".") if is_page(p)]
shipped = {os.path.basename(p) for p in pages}
try:
    with open("Makefile", encoding="utf-8") as f:
        shipped |= set(re.findall(r"man/([A-Za-z0-9_.-]+\.[1-9])\b", f.read()))
except OSError:
    pass

version = ""
try:
    with open("Include/restoration.h", encoding="utf-8") as f:
        m = re.search(r'#define RST_VERSION_STRING "([^"]*)"', f.read())
        version = m.group(1) if m else ""
except OSError:
    pass
date = subprocess.run(["date", "-u", "+%Y-%m-%d"], capture_output=True, text=True).stdout.strip()
mdoc_date = subprocess.run(["date", "-u", "+%B %-d, %Y"], capture_output=True, text=True,
                           env=dict(os.environ, LC_ALL="C")).stdout.strip()

XR = [re.compile(r"^\.BR\s+\\?\"?([A-Za-z0-9_.\\-]+)\"?\s+\((\d)\)"),       # .BR name (3)
      re.compile(r"\\fB([A-Za-z0-9_.\\-]+)\\f[RP]\s*\((\d)\)"),           # \fBname\fR(3)
      re.compile(r"^\.Xr\s+([A-Za-z0-9_.\\-]+)\s+(\d)")]                  # .Xr name 3

mandoc = shutil.which("mandoc")
for p in pages:
    with open(p, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    for n, line in enumerate(lines, 1):
        for rx in XR:
            for m in rx.finditer(line):
                name, sec = m.group(1).replace("\\-", "-").replace("\\", ""), m.group(2)
                if not name.startswith("restor"):
                    continue
                if f"{name}.{sec}" in shipped:
                    ok()
                else:
                    bad(f"{rel(p)}:{n}", f"{name}({sec})", f"no page {name}.{sec} in the repository, nor one the Makefile generates")
    # lint the page as it is installed
    if not mandoc:
        bad(rel(p), "mandoc -T lint", "mandoc is not installed (make test-docs installs it)")
        continue
    with tempfile.NamedTemporaryFile("w", suffix=os.path.splitext(p)[1], delete=False) as t:
        # mdoc pages (.Dd) take the date as the Makefile writes it for them
        is_mdoc = any(l.startswith(".Dd") for l in lines)
        t.write("\n".join(lines).replace("@VERSION@", version).replace("@DATE@", mdoc_date if is_mdoc else date))
        tmp = t.name
    r = subprocess.run([mandoc, "-T", "lint", tmp], capture_output=True, text=True)
    os.unlink(tmp)
    out = (r.stdout + r.stderr).replace(tmp, rel(p)).strip()
    # an .Xr to a page this repository ships (checked above) is "not found"
    # only because it is not installed on this machine yet
    out = "\n".join(l for l in out.split("\n")
                    if not (re.search(r"referenced manual not found: Xr (\S+) (\d)", l)
                            and "%s.%s" % re.search(r"Xr (\S+) (\d)", l).groups() in shipped)).strip()
    # mandoc exits 1 for STYLE messages alone: what counts is what is left
    if out or r.returncode not in (0, 1):
        for l in (out.split("\n") if out else [f"exit status {r.returncode}"]):
            bad(rel(p), "mandoc -T lint", l)
    else:
        ok()

line = f"docs: {passed} passed, {failed} failed"
print(line)
with open(summary, "a") as f:
    f.write(line + "\n")
sys.exit(1 if failed else 0)
PY
