# Types for the cffi extension built by restoration_build.py.
from collections.abc import Callable
from typing import Any, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])

class _FFI:
    NULL: Any
    def def_extern(self, name: str = ..., error: Any = ..., onerror: Any = ...) -> Callable[[_F], _F]: ...
    def __getattr__(self, name: str) -> Any: ...

ffi: _FFI
lib: Any
