"""The engine, the coder, stores and the callbacks the C library calls."""
from __future__ import annotations

import atexit
import enum
import os
import pathlib
import signal as _signal
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ._errors import (InvalidError, NotFoundError, RestorationError, StateError, Status,
                      TypeMismatchError, describe, error_for, status_of)
from ._native import ffi, lib

__all__ = [
    "Engine", "Coder", "ObjectRef", "Restorable", "ArchiveInfo", "RestoreReport", "Skip",
    "SizeEntry", "PluginInfo", "PluginClass", "RestoreReason", "SkipReason", "Sensitivity",
    "Budget", "SaveTrigger", "LogLevel", "ValueType", "Slot", "Store", "FileStore",
    "MemoryStore", "RestoreToken", "read_archive_info", "library_version",
]

_MISSING: Any = object()
LIST_KEY = "#list"   # a list no C array type holds: a record with its length here, items "0".."n-1"
KEYS_KEY = "#keys"   # a dict written from Python: a record that lists its own keys here


class RestoreReason(enum.IntEnum):
    """Why the last restore read what it read (``rst_restore_reason``)."""
    FIRST_LAUNCH = 0
    RELAUNCH = 1
    RECOVER = 2
    BUFFER = 3
    FALLBACK = 4
    RESET = 5

    @property
    def c_name(self) -> str:
        return "RST_REASON_" + self.name


class SkipReason(enum.IntEnum):
    """Why a record was not restored (``rst_skip_reason``)."""
    NO_FACTORY = 1
    DECLINED = 2
    FACTORY_ERROR = 3
    PLUGIN_REJECTED = 4
    PARENT_SKIPPED = 5
    QUARANTINED = 6
    NO_MIGRATION = 7
    MIGRATION_FAILED = 8
    TOO_NEW = 9
    EXPIRED = 10
    DECODE_FAILED = 11
    TRIMMED = 12

    @property
    def c_name(self) -> str:
        return "RST_SKIP_" + self.name


class Sensitivity(enum.IntEnum):
    """How a value may be written (``rst_sensitivity``)."""
    NORMAL = 0
    SECRET = 1      # never written
    ENCRYPTED = 2   # sealed with the key the ``encryption_key`` callback gives
    LOCAL = 3       # written, left out of portable exports


class Budget(enum.IntEnum):
    """What a save over ``size_budget`` does."""
    WARN = 0
    TRIM = 1
    FAIL = 2


class SaveTrigger(enum.IntEnum):
    """What started a save (the save listener's ``trigger``)."""
    CALL = 0
    AUTO = 1
    SIGNAL = 2


class LogLevel(enum.IntEnum):
    DEBUG = 0
    INFO = 1
    WARNING = 2
    ERROR = 3


class ValueType(enum.IntEnum):
    """The type of a stored value (``rst_value_type``)."""
    NONE = 0
    BOOL = 1
    INT = 2
    DOUBLE = 3
    STRING = 4
    BYTES = 5
    OBJECT = 6
    INT_ARRAY = 7
    STRING_ARRAY = 8
    RECORD = 9
    OBJECT_ARRAY = 10
    OS_STRING = 11
    SEALED = 12
    UNKNOWN = 15


class Slot(enum.IntEnum):
    """A store's slot kinds (``rst_slot``)."""
    ARCHIVE = 0
    GENERATION = 1
    INVALID = 2
    MARKER = 3
    QUARANTINE = 4
    SESSION = 5
    CRASHED = 6


@runtime_checkable
class Restorable(Protocol):
    """What ``Engine.register`` needs of an object. Two optional hooks:
    ``application_finished_restoring_state()`` (after every object of a
    restore was decoded) and ``restoration_released()`` (the object left the
    engine)."""

    def encode_restorable_state(self, coder: Coder) -> None: ...
    def decode_restorable_state(self, coder: Coder) -> None: ...


@dataclass(frozen=True)
class ArchiveInfo:
    format_version: int
    app_version: str
    system_version: str
    idiom: str
    saved_at_ms: int
    object_count: int
    restore_reason: RestoreReason
    generation: int


@dataclass(frozen=True)
class RestoreReport:
    archived: int
    restored: int
    skipped: int
    plugins_loaded: int
    plugins_rejected: int


@dataclass(frozen=True)
class Skip:
    path: str
    class_name: str
    reason: SkipReason | int
    version: int
    detail: str


@dataclass(frozen=True)
class SizeEntry:
    path: str
    class_name: str
    own_bytes: int
    subtree_bytes: int
    trimmed: bool


@dataclass(frozen=True)
class PluginClass:
    class_name: str
    factory_symbol: str
    signature: str
    usable: bool
    reason: str


@dataclass(frozen=True)
class PluginInfo:
    path: str
    name: str
    version: str
    state: int   # 0 discovered, 1 loaded, 2 rejected
    reason: str
    classes: tuple[PluginClass, ...]


def _s(p: Any) -> str:
    return "" if p == ffi.NULL else ffi.string(p).decode("utf-8", "replace")


def _last_error() -> str:
    return _s(lib.rst_last_error())


def _raise(st: int) -> None:
    raise error_for(st, _last_error())


_KEYS: dict[str, bytes] = {}


def _key(key: str) -> bytes:
    """A key's UTF-8 bytes, kept: programs use the same few keys again and again."""
    k = _KEYS.get(key)
    if k is not None:
        return k
    if type(key) is not str:
        raise InvalidError(f"a key must be a str, not {type(key).__name__}")
    if len(_KEYS) >= 65536:
        _KEYS.clear()
    k = _KEYS[key] = key.encode("utf-8")
    return k


# The coder's C functions, looked up once (a cffi call is the hot path of
# every save and restore).
_enc_bool, _enc_int, _enc_double = lib.rst_encode_bool, lib.rst_encode_int, lib.rst_encode_double
_enc_string, _enc_bytes, _enc_object = lib.rst_encode_string, lib.rst_encode_bytes, lib.rst_encode_object
_enc_int_array = lib.rst_encode_int_array
_dec_bool, _dec_int, _dec_double = lib.rst_decode_bool, lib.rst_decode_int, lib.rst_decode_double
_dec_string, _dec_bytes, _value_type = lib.rst_decode_string, lib.rst_decode_bytes, lib.rst_coder_value_type
_dec_scalar = lib.py_decode_scalar
_unpack, _new = ffi.unpack, ffi.new
_OBJECT_CALLBACKS = lib.py_object_callbacks(False)
_OBJECT_CALLBACKS_FINISHED = lib.py_object_callbacks(True)   # with the finished hook


def _cstr(what: str, value: str) -> bytes:
    if "\0" in value:
        raise InvalidError(f"{what}: a NUL character cannot be stored in a C string")
    return value.encode("utf-8")


def _a(word: str) -> str:
    return ("an " if word[:1] in "aeiou" else "a ") + word


def library_version() -> str:
    """The C library's version (``rst_version()``)."""
    return _s(lib.rst_version())


def _archive_info(p: Any) -> ArchiveInfo:
    try:
        reason: RestoreReason = RestoreReason(p.restore_reason)
    except ValueError:
        reason = RestoreReason.FIRST_LAUNCH
    return ArchiveInfo(p.format_version, _s(p.app_version), _s(p.system_version), _s(p.idiom),
                       p.saved_at_ms, p.object_count, reason, p.generation)


def read_archive_info(path: str | os.PathLike[str]) -> ArchiveInfo:
    """The header of the archive at ``path`` (the whole file is validated)."""
    out = ffi.new("rst_archive_info **")
    st = lib.rst_read_archive_info(os.fsencode(path), out)
    if st:
        _raise(st)
    try:
        return _archive_info(out[0])
    finally:
        lib.rst_free(out[0])


# ---------------------------------------------------------------------------
# Objects


class ObjectRef:
    """A registered object as the engine sees it: its path, class and the
    Python object (``obj``; None for an object only scoping its children, or
    one a plugin made)."""

    __slots__ = ("_engine", "_ptr", "obj", "_handle", "__weakref__")

    def __init__(self, engine: Engine, ptr: Any, obj: Any) -> None:
        self._engine = engine
        self._ptr = ptr
        self.obj = obj
        self._handle: Any = None

    def _live(self) -> Any:
        if self._ptr is None:
            raise StateError("the object is no longer registered")
        return self._ptr

    @property
    def registered(self) -> bool:
        return self._ptr is not None

    @property
    def identifier(self) -> str:
        return _s(lib.rst_object_identifier(self._live()))

    @property
    def class_name(self) -> str | None:
        p = lib.rst_object_class_name(self._live())
        return None if p == ffi.NULL else _s(p)

    @property
    def path(self) -> str:
        out = ffi.new("char **")
        st = lib.rst_object_path(self._live(), out)
        if st:
            _raise(st)
        try:
            return _s(out[0])
        finally:
            lib.rst_free(out[0])

    @property
    def parent(self) -> ObjectRef | None:
        p = lib.rst_object_parent(self._live())
        return None if p == ffi.NULL else self._engine._ref_for(p)

    def mark_dirty(self) -> None:
        self._engine._check(lib.rst_mark_dirty(self._engine._e(), self._live()))

    def set_priority(self, priority: int) -> None:
        """Lower is trimmed first under ``Budget.TRIM`` (default 0)."""
        self._engine._check(lib.rst_set_object_priority(self._live(), priority))

    def unregister(self) -> None:
        self._engine.unregister(self)

    def __repr__(self) -> str:
        if self._ptr is None:
            return "<ObjectRef (unregistered)>"
        return f"<ObjectRef {self.path!r} class={self.class_name!r}>"


# ---------------------------------------------------------------------------
# The coder


class _Scratch:
    """Out-parameters reused by every coder call of one thread."""

    def __init__(self) -> None:
        self.b = ffi.new("bool *")
        self.i = ffi.new("int64_t *")
        self.d = ffi.new("double *")
        self.p = ffi.new("const char **")
        self.v = ffi.new("const void **")
        self.n = ffi.new("size_t *")
        self.o = ffi.new("rst_object **")
        self.any = ffi.new("py_scalar *")


_tls_scratch = threading.local()


def _scratch() -> _Scratch:
    s: _Scratch | None = getattr(_tls_scratch, "s", None)
    if s is None:
        s = _tls_scratch.s = _Scratch()
    return s


class Coder:
    """An object's values during one callback: ``encode`` at save, ``decode``
    at restore (and in factories and migrations). Valid during its callback
    only; afterwards every call raises StateError."""

    __slots__ = ("_c", "_engine", "_s", "_encoding")

    def __init__(self, c: Any, engine: Engine, encoding: bool) -> None:
        self._c = c
        self._engine = engine
        try:
            self._s = _tls_scratch.s
        except AttributeError:
            self._s = _tls_scratch.s = _Scratch()
        self._encoding = encoding

    def _ptr(self) -> Any:
        c = self._c
        if c is None:
            raise StateError("the coder was used after its callback returned")
        return c

    # -- encode --------------------------------------------------------------

    def encode(self, key: str, value: Any, *, sensitivity: Sensitivity | None = None) -> None:
        """Stores ``value`` under ``key``: bool, int (64-bit), float, str,
        bytes, os.PathLike (as the OS's bytes), a registered object (or its
        ObjectRef), a list or tuple of those, a dict (a nested record).
        None stores nothing (``decode`` then gives the default)."""
        c = self._c
        if c is None:
            raise StateError("the coder was used after its callback returned")
        k = _KEYS.get(key) or _key(key)
        if sensitivity is not None:
            st = lib.rst_coder_set_sensitivity(c, k, int(sensitivity))
            if st:
                _raise(st)
        t = type(value)
        if t is str:
            if "\0" in value:
                raise InvalidError(f"key '{key}': a NUL character cannot be stored in a string")
            st = _enc_string(c, k, value.encode("utf-8"))
        elif t is int:
            try:
                st = _enc_int(c, k, value)
            except OverflowError:
                raise TypeMismatchError(f"key '{key}': {value} does not fit in 64 bits") from None
        elif t is float:
            st = _enc_double(c, k, value)
        elif t is bool:
            st = _enc_bool(c, k, value)
        elif t is bytes:
            st = _enc_bytes(c, k, value, len(value))
        else:
            st = self._encode(c, key, k, value)
        if st:
            _raise(st)

    def _encode(self, c: Any, key: str, k: bytes, value: Any) -> int:
        t = type(value)
        if t is str:
            if "\0" in value:
                raise InvalidError(f"key '{key}': a NUL character cannot be stored in a string")
            return int(_enc_string(c, k, value.encode("utf-8")))
        if t is int:
            try:
                return int(_enc_int(c, k, value))
            except OverflowError:
                raise TypeMismatchError(f"key '{key}': {value} does not fit in 64 bits") from None
        if t is bool:
            return int(_enc_bool(c, k, value))
        if t is float:
            return int(_enc_double(c, k, value))
        if t is bytes:
            return int(_enc_bytes(c, k, value, len(value)))
        if t is bytearray or t is memoryview:
            buf = ffi.from_buffer(value)
            return int(_enc_bytes(c, k, ffi.cast("char *", buf), len(buf)))
        if value is None:
            return 0
        if t is list or t is tuple:
            return self._encode_list(c, key, k, value)
        if t is dict:
            return self._encode_dict(c, key, k, value)
        if isinstance(value, os.PathLike):
            raw = os.fsencode(value)
            if b"\0" in raw:
                raise InvalidError(f"key '{key}': a path with a NUL byte")
            return int(lib.rst_encode_os_string(c, k, raw))
        ref = self._engine._object_ptr(value)
        if ref is not None:
            return int(_enc_object(c, k, ref))
        if isinstance(value, bool):
            return int(_enc_bool(c, k, bool(value)))
        if isinstance(value, int):
            return self._encode(c, key, k, int(value))
        if isinstance(value, float):
            return int(_enc_double(c, k, float(value)))
        if isinstance(value, str):
            return self._encode(c, key, k, str(value))
        if isinstance(value, bytes):
            return self._encode(c, key, k, bytes(value))
        if isinstance(value, (list, tuple)):
            return self._encode_list(c, key, k, value)
        if isinstance(value, dict):
            return self._encode_dict(c, key, k, value)
        raise TypeMismatchError(
            f"key '{key}': cannot store {_a(t.__name__)} (bool, int, float, str, bytes, "
            "os.PathLike, a registered object, a list or a dict)")

    def _encode_list(self, c: Any, key: str, k: bytes, items: Sequence[Any]) -> int:
        n = len(items)
        if all(type(x) is int for x in items):
            try:
                arr = _new("int64_t[]", items)
            except OverflowError:
                raise TypeMismatchError(f"key '{key}': an item does not fit in 64 bits") from None
            return int(_enc_int_array(c, k, arr, n))
        if all(type(x) is str for x in items):
            keep = [ffi.new("char[]", _cstr(f"key '{key}'", x)) for x in items]
            return int(lib.rst_encode_string_array(c, k, ffi.new("char *[]", keep), n))
        ptrs = [self._engine._object_ptr(x) for x in items]
        if all(p is not None for p in ptrs):
            return int(lib.rst_encode_object_array(c, k, ffi.new("rst_object *[]", ptrs), n))
        st = int(lib.rst_encode_begin_record(c, k))
        if st:
            return st
        st = int(lib.rst_encode_int(c, LIST_KEY.encode(), n))
        for i, x in enumerate(items):
            if st:
                break
            st = self._encode(c, f"{key}[{i}]", str(i).encode(), x)
        end = int(lib.rst_encode_end_record(c))
        return st or end

    def _encode_dict(self, c: Any, key: str, k: bytes, d: dict[Any, Any]) -> int:
        for name in d:
            if type(name) is not str:
                raise TypeMismatchError(f"key '{key}': a record's keys are str, not {type(name).__name__}")
        st = int(lib.rst_encode_begin_record(c, k))
        if st:
            return st
        names = [n for n, v in d.items() if v is not None]
        keep = [ffi.new("char[]", _cstr(f"key '{key}'", n)) for n in names]
        st = int(lib.rst_encode_string_array(c, KEYS_KEY.encode(), ffi.new("char *[]", keep), len(keep)))
        for name in names:
            if st:
                break
            st = self._encode(c, f"{key}.{name}", name.encode("utf-8"), d[name])
        end = int(lib.rst_encode_end_record(c))
        return st or end

    # -- decode --------------------------------------------------------------

    def value_type(self, key: str) -> ValueType:
        t = int(lib.rst_coder_value_type(self._ptr(), _key(key)))
        try:
            return ValueType(t)
        except ValueError:
            return ValueType.UNKNOWN

    def __contains__(self, key: str) -> bool:
        return bool(lib.rst_coder_contains(self._ptr(), _key(key)))

    def decode(self, key: str, default: Any = _MISSING) -> Any:
        """The value under ``key``, of the type it was stored with (a path
        comes back as ``pathlib.Path``, an object as the registered Python
        object). A missing key gives ``default``, or raises NotFoundError
        without one. A default that is not None also says the type wanted
        (a stored value of another type: TypeMismatchError; an int where a
        float is wanted is converted), and a dict default names the keys of
        a record written by C or Swift (which lists no keys of its own)."""
        c = self._c
        if c is None:
            raise StateError("the coder was used after its callback returned")
        k = _KEYS.get(key) or _key(key)
        s = self._s
        if default is _MISSING or default is None:
            # One call: the type and, for a scalar, the value.
            v = s.any
            st = _dec_scalar(c, k, v)
            t = v.type
            if st:
                if t == 0:
                    if default is _MISSING:
                        raise NotFoundError(f"no value under key '{key}'")
                    return default
                _raise(st)
            if t == 2:
                return v.i
            if t == 4:
                return _unpack(v.p, v.n).decode("utf-8")
            if t == 3:
                return v.d
            if t == 1:
                return v.b
            if t == 5:
                return _unpack(v.p, v.n)
            if t == 6:
                return self._engine._object_for(v.o)
            return self._decode(c, key, k, t, None)
        # With a default of a plain type, one call: the typed decode (a
        # missing key gives the default; another type, the general path).
        dt = type(default)
        if dt is int:
            st = _dec_int(c, k, s.i)
            if st == 0:
                return s.i[0]
            if st == 2:
                return default
        elif dt is str:
            st = _dec_string(c, k, s.p, s.n)
            if st == 0:
                return _unpack(s.p[0], s.n[0]).decode("utf-8")
            if st == 2:
                return default
        elif dt is float:
            st = _dec_double(c, k, s.d)
            if st == 0:
                return s.d[0]
            if st == 2:
                return default
        elif dt is bool:
            st = _dec_bool(c, k, s.b)
            if st == 0:
                return bool(s.b[0])
            if st == 2:
                return default
        elif dt is bytes:
            st = _dec_bytes(c, k, s.v, s.n)
            if st == 0:
                return _unpack(ffi.cast("char *", s.v[0]), s.n[0])
            if st == 2:
                return default
        t = int(_value_type(c, k))
        if t == 0:
            if default is _MISSING:
                raise NotFoundError(f"no value under key '{key}'")
            return default
        if default is not _MISSING and default is not None:
            return self._decode_as(c, key, k, t, default)
        return self._decode(c, key, k, t, None)

    def _decode_as(self, c: Any, key: str, k: bytes, t: int, default: Any) -> Any:
        dt = type(default)
        if dt is bool:
            ok = t == 1
        elif dt is int:
            ok = t == 2
        elif dt is float:
            ok = t in (2, 3)
        elif dt is str:
            ok = t == 4
        elif dt is bytes:
            ok = t == 5
        elif isinstance(default, os.PathLike):
            ok = t == 11
        elif isinstance(default, (list, tuple)):
            ok = t in (7, 8, 10, 9)
        elif isinstance(default, dict):
            ok = t == 9
        else:
            ok = True
        if not ok:
            raise TypeMismatchError(
                f"key '{key}' holds {_a(ValueType(t).name.lower().replace('_', ' '))}, not {_a(dt.__name__)}")
        v = self._decode(c, key, k, t, default if isinstance(default, dict) else None)
        if dt is float and type(v) is int:
            return float(v)
        return v

    def _decode(self, c: Any, key: str, k: bytes, t: int, schema: dict[str, Any] | None) -> Any:
        s = self._s
        if t == 4:
            st = lib.rst_decode_string(c, k, s.p, s.n)
            if st:
                _raise(st)
            return ffi.unpack(s.p[0], s.n[0]).decode("utf-8")
        if t == 2:
            st = lib.rst_decode_int(c, k, s.i)
            if st:
                _raise(st)
            return s.i[0]
        if t == 1:
            st = lib.rst_decode_bool(c, k, s.b)
            if st:
                _raise(st)
            return bool(s.b[0])
        if t == 3:
            st = lib.rst_decode_double(c, k, s.d)
            if st:
                _raise(st)
            return s.d[0]
        if t == 5:
            st = lib.rst_decode_bytes(c, k, s.v, s.n)
            if st:
                _raise(st)
            return _unpack(ffi.cast("char *", s.v[0]), s.n[0])
        if t == 11:
            st = lib.rst_decode_os_string(c, k, s.p)
            if st:
                _raise(st)
            return pathlib.Path(os.fsdecode(ffi.string(s.p[0])))
        if t == 6:
            st = lib.rst_decode_object(c, k, s.o)
            if st:
                _raise(st)
            return self._engine._object_for(s.o[0])
        if t == 7:
            st = lib.rst_decode_int_array(c, k, ffi.NULL, 0, s.n)
            if st and st != 12:   # RST_ERR_LIMIT: asked for the count only
                _raise(st)
            n = s.n[0]
            buf = ffi.new("int64_t[]", max(n, 1))
            st = lib.rst_decode_int_array(c, k, buf, n, s.n)
            if st:
                _raise(st)
            return list(ffi.unpack(buf, n)) if n else []
        if t == 8:
            count = ffi.new("size_t *")
            st = lib.rst_decode_string_array(c, k, 0, s.p, s.n, count)
            if count[0] == 0:
                return []
            out: list[Any] = []
            for i in range(count[0]):
                if i:
                    st = lib.rst_decode_string_array(c, k, i, s.p, s.n, count)
                if st:
                    _raise(st)
                out.append(ffi.unpack(s.p[0], s.n[0]).decode("utf-8"))
            return out
        if t == 10:
            count = ffi.new("size_t *")
            st = lib.rst_decode_object_array(c, k, 0, s.o, count)
            if count[0] == 0:
                return []
            objs: list[Any] = []
            for i in range(count[0]):
                if i:
                    st = lib.rst_decode_object_array(c, k, i, s.o, count)
                if st:
                    _raise(st)
                objs.append(self._engine._object_for(s.o[0]))
            return objs
        if t == 9:
            return self._decode_record(c, key, k, schema)
        if t == 12:
            raise StateError(f"key '{key}' holds a sealed value that could not be opened")
        raise TypeMismatchError(f"key '{key}' holds a value of a type this library does not know ({t})")

    def _decode_record(self, c: Any, key: str, k: bytes, schema: dict[str, Any] | None) -> Any:
        st = lib.rst_decode_begin_record(c, k)
        if st:
            _raise(st)
        try:
            if lib.rst_coder_contains(c, LIST_KEY.encode()):
                n = self.decode(LIST_KEY)
                return [self.decode(str(i), None) for i in range(n)]
            names: list[str] = []
            if lib.rst_coder_contains(c, KEYS_KEY.encode()):
                names = list(self.decode(KEYS_KEY))
            elif schema is None:
                raise InvalidError(
                    f"key '{key}' holds a record written without its key list (by C or Swift): "
                    f"pass default={{...}} naming its keys, or read it inside coder.record('{key}')")
            result: dict[str, Any] = {}
            for name in names:
                sub = schema.get(name, _MISSING) if schema else _MISSING
                result[name] = self.decode(name, sub if sub is not _MISSING else None)
            if schema:
                for name, sub in schema.items():
                    if name not in result:
                        result[name] = self.decode(name, sub)
            return result
        finally:
            st = lib.rst_decode_end_record(c)
            if st:
                _raise(st)

    def record(self, key: str) -> _Record:
        """The nested record ``key``, entered for a ``with`` block: inside
        it, ``encode`` and ``decode`` work on the record's own keys."""
        return _Record(self, key)

    # -- migrations ------------------------------------------------------------

    @property
    def class_version(self) -> int:
        """In a migration: the version the record was saved with."""
        return int(lib.rst_coder_class_version(self._ptr()))

    def remove(self, key: str) -> None:
        """In a migration: removes ``key`` from the record."""
        st = lib.rst_coder_remove(self._ptr(), _key(key))
        if st:
            _raise(st)

    def rename(self, old: str, new: str) -> None:
        """In a migration: renames ``old`` to ``new``."""
        st = lib.rst_coder_rename(self._ptr(), _key(old), _key(new))
        if st:
            _raise(st)


class _Record:
    """``with coder.record(key) as c:``: begin and end of a nested record."""

    __slots__ = ("_coder", "_key")

    def __init__(self, coder: Coder, key: str) -> None:
        self._coder = coder
        self._key = key

    def __enter__(self) -> Coder:
        co = self._coder
        c = co._ptr()
        k = _KEYS.get(self._key) or _key(self._key)
        st = lib.rst_encode_begin_record(c, k) if co._encoding else lib.rst_decode_begin_record(c, k)
        if st:
            _raise(st)
        return co

    def __exit__(self, et: Any, ev: Any, tb: Any) -> None:
        co = self._coder
        c = co._c
        if c is None:
            return
        st = lib.rst_encode_end_record(c) if co._encoding else lib.rst_decode_end_record(c)
        if st and et is None:
            _raise(st)


# ---------------------------------------------------------------------------
# Stores


class Store:
    """A store written in Python: where the engine keeps its archive, older
    generations, markers and the session (see docs/PYTHON.md). Subclass it
    and implement every method; a method that fails raises (a
    RestorationError's status is kept; another exception fails the
    operation as RST_ERR_IO unless it maps to a closer status)."""

    shared: bool = False

    def describe(self) -> str:
        return type(self).__name__

    def read(self, slot: Slot, index: int) -> bytes | None:
        raise NotImplementedError

    def write(self, slot: Slot, index: int, data: bytes) -> None:
        raise NotImplementedError

    def move(self, from_slot: Slot, from_index: int, to_slot: Slot, to_index: int) -> None:
        raise NotImplementedError

    def remove(self, slot: Slot, index: int) -> None:
        raise NotImplementedError

    def list(self, slot: Slot) -> list[int]:
        raise NotImplementedError

    def lock(self) -> None:
        raise NotImplementedError

    def unlock(self) -> None:
        raise NotImplementedError


class FileStore:
    """The built-in file store for ``path`` (what ``Engine(path)`` uses)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)


class MemoryStore:
    """The built-in memory store: nothing outlives the engine."""


class _StoreCtx:
    def __init__(self, store: Store, engine_ref: weakref.ref[Engine]) -> None:
        self.store = store
        self.engine_ref = engine_ref
        self.holds: dict[int, Any] = {}
        self.next_hold = 1
        self.describe_buf = ffi.new("char[]", store.describe().encode("utf-8", "replace"))
        self.handle: Any = None


_live_store_ctx: set[_StoreCtx] = set()


# ---------------------------------------------------------------------------
# The engine


class _Ctx:
    __slots__ = ("engine",)

    def __init__(self, engine: Engine) -> None:
        self.engine = weakref.ref(engine)


class _Factory:
    __slots__ = ("engine", "fn", "class_name", "class_bytes", "handle")

    def __init__(self, engine: Engine, fn: Callable[..., Any], class_name: str | None) -> None:
        self.engine = weakref.ref(engine)
        self.fn = fn
        self.class_name = class_name
        self.class_bytes = None if class_name is None else _cstr("class name", class_name)
        self.handle: Any = None


class _Migration:
    __slots__ = ("engine", "fn", "handle")

    def __init__(self, engine: Engine, fn: Callable[[Coder, int], None]) -> None:
        self.engine = weakref.ref(engine)
        self.fn = fn
        self.handle: Any = None


class RestoreToken:
    """An extended restoration: ``complete()`` it before its deadline."""

    def __init__(self, engine: Engine, ptr: Any) -> None:
        self._engine = engine
        self._ptr = ptr

    def complete(self) -> None:
        if self._ptr is None:
            raise StateError("this restoration was already completed")
        p, self._ptr = self._ptr, None
        self._engine._call(lib.rst_complete_restoration, self._engine._e(), p)


_engines: weakref.WeakSet[Engine] = weakref.WeakSet()
Target = Any  # a registered object, its ObjectRef, or its path


class Engine:
    """One engine: the objects registered with it, saved to and restored
    from one archive (a file, or a store). Use it as a context manager: at
    the end of the ``with`` block it saves what changed (``flush``) and
    closes. Options are the C options' names; callbacks are callables:
    ``should_save() -> bool``, ``should_restore(info: ArchiveInfo) ->
    bool``, ``did_finish_restoring()``, ``log(level: LogLevel, message:
    str)``, ``encryption_key() -> bytes`` (32 bytes)."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *,
                 store: Store | FileStore | MemoryStore | None = None,
                 plugin_dir: str | os.PathLike[str] | None = None,
                 app_version: str | None = None, idiom: str | None = None,
                 should_save: Callable[[], bool] | None = None,
                 should_restore: Callable[[ArchiveInfo], bool] | None = None,
                 did_finish_restoring: Callable[[], None] | None = None,
                 log: Callable[[LogLevel, str], None] | None = None,
                 autosave_delay_ms: int = 0, autosave_max_delay_ms: int = 0,
                 generations: int = 0, carry_saves: int = 0,
                 size_budget: int = 0, budget_policy: Budget = Budget.WARN,
                 encryption_key: Callable[[], bytes] | None = None,
                 signal_deadline_ms: int = 0,
                 crash_guard: bool = True, quarantine: bool = True) -> None:
        self._ptr: Any = None
        self._tls = threading.local()
        self._entries: dict[int, ObjectRef] = {}
        self._by_obj: dict[int, ObjectRef] = {}
        self._keep: list[Any] = []
        self.background_errors: list[BaseException] = []
        self._callbacks: dict[str, Any] = {"should_save": should_save, "should_restore": should_restore,
                           "did_finish_restoring": did_finish_restoring, "log": log,
                           "encryption_key": encryption_key, "listener": None}
        if path is not None and store is not None:
            raise InvalidError("Engine: give a path or a store, not both")
        o = ffi.new("rst_engine_options *")
        st = lib.rst_engine_options_init(o, lib.RST_ENGINE_OPTIONS_VERSION)
        if st:
            _raise(st)
        strings = []

        def cstr(v: Any) -> Any:
            b = os.fsencode(v) if isinstance(v, (os.PathLike, bytes)) else str(v).encode("utf-8")
            p = ffi.new("char[]", b)
            strings.append(p)
            return p

        if path is not None:
            o.archive_path = cstr(path)
        if plugin_dir is not None:
            o.plugin_dir = cstr(plugin_dir)
        if app_version is not None:
            o.app_version = cstr(app_version)
        if idiom is not None:
            o.idiom = cstr(idiom)
        self._ctx = ffi.new_handle(_Ctx(self))
        o.ctx = self._ctx
        if should_save is not None:
            o.should_save = lib._py_should_save
        if should_restore is not None:
            o.should_restore = lib._py_should_restore
        if did_finish_restoring is not None:
            o.did_finish_restoring = lib._py_did_finish_restoring
        if log is not None:
            o.log = lib._py_log
        if encryption_key is not None:
            o.encryption_key = lib._py_encryption_key
        o.flags = (0 if crash_guard else lib.RST_ENGINE_NO_CRASH_GUARD) | \
                  (0 if quarantine else lib.RST_ENGINE_NO_QUARANTINE)
        for name, value in (("autosave_delay_ms", autosave_delay_ms),
                            ("autosave_max_delay_ms", autosave_max_delay_ms),
                            ("generations", generations), ("carry_saves", carry_saves),
                            ("size_budget", size_budget), ("budget_policy", int(budget_policy)),
                            ("signal_deadline_ms", signal_deadline_ms)):
            if type(value) is not int or value < 0:
                raise InvalidError(f"Engine: {name} must be an int >= 0, not {value!r}")
            try:
                setattr(o, name, value)
            except OverflowError:
                raise InvalidError(f"Engine: {name}={value} is too large") from None
        out = ffi.new("rst_engine **")
        self._tls.active = 1
        self._tls.exc = None
        if store is None:
            st = lib.rst_engine_create(o, out)
        else:
            ops = ffi.new("const rst_store_ops **")
            sctx = ffi.new("void **")
            if isinstance(store, FileStore):
                st = lib.rst_file_store(os.fsencode(store.path), ops, sctx)
            elif isinstance(store, MemoryStore):
                st = lib.rst_memory_store(ops, sctx)
            elif isinstance(store, Store):
                sc = _StoreCtx(store, weakref.ref(self))
                sc.handle = ffi.new_handle(sc)
                _live_store_ctx.add(sc)
                ops[0] = lib.py_store_ops(bool(store.shared))
                sctx[0] = sc.handle
                st = 0
            else:
                raise InvalidError(f"Engine: store must be a Store, FileStore or MemoryStore, "
                                   f"not {type(store).__name__}")
            if st == 0:
                st = lib.rst_engine_create_with_store(o, ops[0], sctx[0], out)
        self._tls.active = 0
        self._check(st)
        self._ptr = out[0]
        _engines.add(self)

    # -- plumbing --------------------------------------------------------------

    def _e(self) -> Any:
        if self._ptr is None:
            raise StateError("the engine is closed")
        return self._ptr

    def _check(self, st: int) -> None:
        exc = getattr(self._tls, "exc", None)
        self._tls.exc = None
        if st:
            err = error_for(st, _last_error())
            if exc is not None:
                raise err from exc
            raise err
        if exc is not None:
            raise exc

    def _call(self, fn: Callable[..., int], *args: Any) -> None:
        """Calls the C function with the GIL released (cffi does), noting
        the exception a Python callback raises on this thread meanwhile."""
        tls = self._tls
        outer = getattr(tls, "active", 0)
        if not outer:
            tls.exc = None
        tls.active = outer + 1
        try:
            st = fn(*args)
        finally:
            tls.active = outer
        if outer:
            if st:
                _raise(st)
            return
        self._check(st)

    def _callback_failed(self, exc: BaseException) -> None:
        tls = self._tls
        if getattr(tls, "active", 0):
            if getattr(tls, "exc", None) is None:
                tls.exc = exc
        else:
            self.background_errors.append(exc)
            del self.background_errors[:-100]

    def _ref_for(self, p: Any) -> ObjectRef:
        addr = int(ffi.cast("uintptr_t", p))
        ref = self._entries.get(addr)
        return ref if ref is not None else ObjectRef(self, p, None)

    def _object_for(self, p: Any) -> Any:
        """What a decoded reference gives Python: the registered object, or
        an ObjectRef (an object without a Python instance), or None."""
        if p == ffi.NULL:
            return None
        ref = self._entries.get(int(ffi.cast("uintptr_t", p)))
        if ref is None:
            return ObjectRef(self, p, None)
        return ref.obj if ref.obj is not None else ref

    def _object_ptr(self, value: Any) -> Any:
        if isinstance(value, ObjectRef):
            return value._live()
        ref = self._by_obj.get(id(value))
        if ref is not None and ref.obj is value and ref._ptr is not None:
            return ref._ptr
        # The same object registered at several paths, the last one gone.
        for ref in self._entries.values():
            if ref.obj is value:
                self._by_obj[id(value)] = ref
                return ref._ptr
        return None

    def _resolve(self, target: Target, what: str) -> Any:
        if isinstance(target, ObjectRef):
            return target._live()
        if isinstance(target, str):
            p = lib.rst_find_object(self._e(), target.encode("utf-8"))
            if p == ffi.NULL:
                raise NotFoundError(f"{what}: no object at path '{target}'")
            return p
        p = self._object_ptr(target)
        if p is None:
            raise NotFoundError(f"{what}: {type(target).__name__} object is not registered with this engine")
        return p

    def _new_entry(self, identifier: str, parent: Any, obj: Any, cls: str | bytes | None,
                   c_identifier: Any = None) -> ObjectRef:
        """Registers ``obj``; ``c_identifier``, ``identifier`` as the C
        string a factory was given (no copy); ``cls`` may come as bytes."""
        if obj is not None:
            for m in ("encode_restorable_state", "decode_restorable_state"):
                if not callable(getattr(obj, m, None)):
                    raise TypeMismatchError(
                        f"register '{identifier}': a {type(obj).__name__} has no {m}(coder) method")
        ref = ObjectRef(self, None, obj)
        ref._handle = ffi.new_handle(ref)
        out = _scratch().o
        st = lib.rst_register_object(
            self._e(), _cstr("identifier", identifier) if c_identifier is None else c_identifier, parent,
            ffi.NULL if cls is None else cls if type(cls) is bytes else _cstr("class name", cls),  # type: ignore[arg-type]
            ffi.NULL if obj is None else _OBJECT_CALLBACKS_FINISHED
            if hasattr(obj, "application_finished_restoring_state") else _OBJECT_CALLBACKS,
            ref._handle, out)
        if st:
            _raise(st)
        p = out[0]
        ref._ptr = p
        self._entries[int(ffi.cast("uintptr_t", p))] = ref
        if obj is not None:
            self._by_obj[id(obj)] = ref
        return ref

    def _forget(self, ref: ObjectRef) -> None:
        if ref._ptr is not None:
            self._entries.pop(int(ffi.cast("uintptr_t", ref._ptr)), None)
        if ref.obj is not None and self._by_obj.get(id(ref.obj)) is ref:
            del self._by_obj[id(ref.obj)]
        ref._ptr = None

    # -- objects ---------------------------------------------------------------

    def register(self, path: str, obj: Any, parent: Target | None = None,
                 cls: str | None = None) -> ObjectRef:
        """Registers ``obj`` (anything with ``encode_restorable_state(coder)``
        and ``decode_restorable_state(coder)``; None: an object that only
        scopes its children) at ``path``: an identifier under ``parent``, or
        "A/B/C" under the registered "A/B". ``cls`` is the restoration class
        that can re-create it at restore."""
        if not isinstance(path, str) or not path:
            raise InvalidError(f"register: the path must be a non-empty str, not {path!r}")
        if parent is None and "/" in path:
            head, _, ident = path.rpartition("/")
            pp = self._resolve(head, f"register '{path}'")
        else:
            ident = path
            pp = ffi.NULL if parent is None else self._resolve(parent, f"register '{path}'")
        return self._new_entry(ident, pp, obj, cls)

    def unregister(self, target: Target) -> None:
        """Unregisters an object (and its descendants)."""
        self._call(lib.rst_unregister_object, self._e(), self._resolve(target, "unregister"))

    def find(self, path: str) -> Any:
        """The object registered at ``path`` (see ``ObjectRef``), or None."""
        p = lib.rst_find_object(self._e(), _cstr("path", path))
        return None if p == ffi.NULL else self._object_for(p)

    def ref(self, target: Target) -> ObjectRef:
        """The ObjectRef of a registered object or path."""
        return self._ref_for(self._resolve(target, "ref"))

    def register_class(self, name: str, factory: Callable[[str, Any, Coder], Any]) -> None:
        """Registers the restoration class ``name``: at restore,
        ``factory(identifier, parent, coder)`` returns the object to
        register for a record of that class (parent: the parent's object,
        None at a root), or None to decline."""
        f = _Factory(self, factory, name)
        f.handle = ffi.new_handle(f)
        self._call(lib.rst_register_class, self._e(), _cstr("class name", name), lib._py_factory, f.handle)
        self._keep.append(f)

    def set_fallback_factory(self, factory: Callable[[str, Any, Coder], Any] | None) -> None:
        """The factory asked when no class re-creates a record (None clears
        it). The object it returns is registered with the class name in its
        ``restoration_class`` attribute, if any."""
        if factory is None:
            self._call(lib.rst_set_fallback_factory, self._e(), ffi.NULL, ffi.NULL)
            return
        f = _Factory(self, factory, None)
        f.handle = ffi.new_handle(f)
        self._call(lib.rst_set_fallback_factory, self._e(), lib._py_factory, f.handle)
        self._keep.append(f)

    def set_class_version(self, name: str, version: int) -> None:
        self._call(lib.rst_set_class_version, self._e(), _cstr("class name", name), version)

    def register_migration(self, name: str, from_version: int, fn: Callable[[Coder, int], None]) -> None:
        """``fn(coder, from_version)`` edits a record of class ``name`` saved
        at ``from_version`` (``coder.rename``, ``remove``, ``encode``)."""
        m = _Migration(self, fn)
        m.handle = ffi.new_handle(m)
        self._call(lib.rst_register_migration, self._e(), _cstr("class name", name), from_version,
                   lib._py_migrate, m.handle)
        self._keep.append(m)

    def set_key_sensitivity(self, key: str, sensitivity: Sensitivity, cls: str | None = None) -> None:
        """Every value under ``key`` (in records of class ``cls``; None:
        every class) is written as ``sensitivity`` says."""
        self._call(lib.rst_set_key_sensitivity, self._e(),
                   ffi.NULL if cls is None else _cstr("class name", cls), _key(key), int(sensitivity))

    def set_priority(self, target: Target, priority: int) -> None:
        self._call(lib.rst_set_object_priority, self._resolve(target, "set_priority"), priority)

    # -- saving and restoring ---------------------------------------------------

    def save(self) -> None:
        """Saves every registered object (durably; the old archive stays on failure)."""
        self._call(lib.rst_save, self._e())

    def restore(self) -> RestoreReason:
        """Restores from the archive; returns why (the restore reason)."""
        self._call(lib.rst_restore, self._e())
        return self.last_restore_reason

    def restore_generation(self, generation: int) -> RestoreReason:
        self._call(lib.rst_restore_generation, self._e(), generation)
        return self.last_restore_reason

    def save_to_bytes(self) -> bytes:
        out = ffi.new("void **")
        n = ffi.new("size_t *")
        self._call(lib.rst_save_to_buffer, self._e(), out, n)
        try:
            return bytes(ffi.buffer(out[0], n[0]))
        finally:
            lib.rst_free(out[0])

    def restore_from_bytes(self, data: bytes) -> None:
        buf = ffi.from_buffer(data)
        self._call(lib.rst_restore_from_buffer, self._e(), buf, len(buf))

    def export(self, portable: bool = True) -> bytes:
        """An archive of the current state; ``portable`` leaves out LOCAL
        and ENCRYPTED values."""
        out = ffi.new("void **")
        n = ffi.new("size_t *")
        self._call(lib.rst_export, self._e(), lib.RST_EXPORT_PORTABLE if portable else 0, out, n)
        try:
            return bytes(ffi.buffer(out[0], n[0]))
        finally:
            lib.rst_free(out[0])

    def discard(self) -> None:
        """Deletes the saved state (the archive and what lies beside it)."""
        self._call(lib.rst_discard, self._e())

    @property
    def last_restore_reason(self) -> RestoreReason:
        r = int(lib.rst_last_restore_reason(self._e()))
        try:
            return RestoreReason(r)
        except ValueError:
            return RestoreReason.FIRST_LAUNCH

    def last_restore_report(self) -> RestoreReport:
        r = ffi.new("rst_restore_report *")
        self._call(lib.rst_last_restore_report, self._e(), r)
        return RestoreReport(r.archived, r.restored, r.skipped, r.plugins_loaded, r.plugins_rejected)

    def last_restore_skips(self) -> list[Skip]:
        out = ffi.new("rst_skipped_record **")
        n = ffi.new("size_t *")
        self._call(lib.rst_last_restore_skips, self._e(), out, n)
        try:
            skips = []
            for i in range(n[0]):
                s = out[0][i]
                reason: SkipReason | int
                try:
                    reason = SkipReason(s.reason)
                except ValueError:
                    reason = int(s.reason)
                skips.append(Skip(_s(s.path), _s(s.class_name), reason, s.version, _s(s.detail)))
            return skips
        finally:
            if out[0] != ffi.NULL:
                lib.rst_free(out[0])

    def last_save_sizes(self) -> list[SizeEntry]:
        out = ffi.new("rst_size_entry **")
        n = ffi.new("size_t *")
        self._call(lib.rst_last_save_sizes, self._e(), out, n)
        try:
            return [SizeEntry(_s(e.path), _s(e.class_name), e.own_bytes, e.subtree_bytes, bool(e.trimmed))
                    for e in (out[0][i] for i in range(n[0]))]
        finally:
            if out[0] != ffi.NULL:
                lib.rst_free(out[0])

    def extend_restoration(self, deadline_ms: int) -> RestoreToken:
        out = ffi.new("rst_restore_token **")
        self._call(lib.rst_extend_restoration, self._e(), deadline_ms, out)
        return RestoreToken(self, out[0])

    def load_plugins(self) -> None:
        self._call(lib.rst_load_plugins, self._e())

    def list_plugins(self) -> list[PluginInfo]:
        out = ffi.new("rst_plugin_info **")
        n = ffi.new("size_t *")
        self._call(lib.rst_list_plugins, self._e(), out, n)
        try:
            result = []
            for i in range(n[0]):
                p = out[0][i]
                classes = tuple(PluginClass(_s(c.class_name), _s(c.factory_symbol), _s(c.signature),
                                            bool(c.usable), _s(c.reason))
                                for c in (p.classes[j] for j in range(p.class_count)))
                result.append(PluginInfo(_s(p.path), _s(p.name), _s(p.version), p.state, _s(p.reason), classes))
            return result
        finally:
            if out[0] != ffi.NULL:
                lib.rst_free(out[0])

    # -- when to save ------------------------------------------------------------

    def mark_dirty(self, target: Target | None = None) -> None:
        """Something changed (in ``target``, if given): an autosave becomes due."""
        p = ffi.NULL if target is None else self._resolve(target, "mark_dirty")
        st = lib.rst_mark_dirty(self._e(), p)
        if st:
            _raise(st)

    @property
    def is_dirty(self) -> bool:
        return bool(lib.rst_is_dirty(self._e()))

    def flush(self) -> None:
        """Saves now if anything changed since the last save."""
        self._call(lib.rst_flush, self._e())

    @property
    def event_fd(self) -> int:
        """A descriptor that becomes readable when ``dispatch()`` has work
        (watch it in the program's own loop)."""
        return int(lib.rst_event_fd(self._e()))

    def dispatch(self) -> None:
        """Does the due work (an autosave, a signal's save); never waits."""
        self._call(lib.rst_dispatch, self._e())

    @property
    def next_timeout_ms(self) -> int:
        """Milliseconds until ``dispatch()`` has work (-1: none planned)."""
        return int(lib.rst_next_timeout_ms(self._e()))

    def start_autosave_thread(self) -> None:
        """Autosaves on the engine's own thread (callbacks then run there)."""
        self._call(lib.rst_start_autosave_thread, self._e())

    def save_on_signals(self, signals: Iterable[int] = (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP)) -> None:
        """Saves at these signals (in ``dispatch()`` or the autosave
        thread), then lets each end the program as it would have."""
        nums = [int(s) for s in signals]
        self._call(lib.rst_save_on_signals, self._e(), ffi.new("int[]", nums), len(nums))

    def set_save_listener(self, fn: Callable[[Status, SaveTrigger], None] | None) -> None:
        """``fn(status, trigger)`` after every save (Status.RST_OK or the failure)."""
        self._callbacks["listener"] = fn
        self._call(lib.rst_set_save_listener, self._e(),
                   ffi.NULL if fn is None else lib._py_save_listener, self._ctx)

    def close_session(self) -> None:
        """Marks the session as cleanly ended (the next restore reads RELAUNCH)."""
        lib.rst_close_session(self._e())

    # -- lifetime ------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._ptr is None

    def close(self) -> None:
        """Destroys the engine: every object's release, the autosave thread
        joined, signals given back, the session closed. It does not save
        (``flush()`` first, or leave a ``with`` block)."""
        p = self._ptr
        if p is None:
            return
        if getattr(self._tls, "active", 0):
            # The C library ignores a destroy from its own callbacks.
            raise StateError("close(): not from inside one of the engine's own callbacks")
        self._tls.exc = None
        self._tls.active = getattr(self._tls, "active", 0) + 1
        try:
            lib.rst_engine_destroy(p)
        finally:
            self._tls.active -= 1
            self._ptr = None
            _engines.discard(self)
        for ref in list(self._entries.values()):
            self._forget(ref)
        self._check(0)

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, et: Any, ev: Any, tb: Any) -> None:
        try:
            if et is None and self._ptr is not None:
                self.flush()
        finally:
            self.close()

    def __del__(self) -> None:
        if getattr(self, "_ptr", None) is not None:
            try:
                self.close()
            except BaseException:
                pass


@atexit.register
def _close_all_engines() -> None:
    """At interpreter exit every engine still open is closed (as close()
    does: no save), before Python tears down what the callbacks need."""
    for e in list(_engines):
        try:
            e.close()
        except BaseException:
            pass


# ---------------------------------------------------------------------------
# The callbacks the C library calls (cffi ``extern "Python"``)


def _engine_of(ctx: Any) -> Engine | None:
    e: Engine | None = ffi.from_handle(ctx).engine()
    return e


@ffi.def_extern()
def _py_should_save(e: Any, ctx: Any) -> bool:
    eng = _engine_of(ctx)
    if eng is None:
        return False
    try:
        return bool(eng._callbacks["should_save"]())
    except BaseException as exc:
        eng._callback_failed(exc)
        return False


@ffi.def_extern()
def _py_should_restore(e: Any, info: Any, ctx: Any) -> bool:
    eng = _engine_of(ctx)
    if eng is None:
        return False
    try:
        return bool(eng._callbacks["should_restore"](_archive_info(info)))
    except BaseException as exc:
        eng._callback_failed(exc)
        return False


@ffi.def_extern()
def _py_did_finish_restoring(e: Any, ctx: Any) -> None:
    eng = _engine_of(ctx)
    if eng is None:
        return
    try:
        eng._callbacks["did_finish_restoring"]()
    except BaseException as exc:
        eng._callback_failed(exc)


@ffi.def_extern()
def _py_log(e: Any, level: int, message: Any, ctx: Any) -> None:
    eng = _engine_of(ctx)
    if eng is None:
        return
    try:
        try:
            lv: LogLevel | int = LogLevel(level)
        except ValueError:
            lv = level
        eng._callbacks["log"](lv, _s(message))
    except BaseException as exc:
        eng._callback_failed(exc)


@ffi.def_extern()
def _py_encryption_key(e: Any, key: Any, ctx: Any) -> int:
    eng = _engine_of(ctx)
    if eng is None:
        return int(Status.RST_ERR_STATE)
    try:
        k = bytes(eng._callbacks["encryption_key"]())
        if len(k) != 32:
            raise InvalidError(f"encryption_key returned {len(k)} bytes, not 32")
        ffi.memmove(key, k, 32)
        return 0
    except BaseException as exc:
        eng._callback_failed(exc)
        return int(status_of(exc))


@ffi.def_extern()
def _py_save_listener(e: Any, status: int, trigger: int, ctx: Any) -> None:
    eng = _engine_of(ctx)
    if eng is None:
        return
    fn = eng._callbacks["listener"]
    if fn is None:
        return
    try:
        try:
            tr: SaveTrigger | int = SaveTrigger(trigger)
        except ValueError:
            tr = trigger
        fn(Status(status), tr)
    except BaseException as exc:
        eng._callback_failed(exc)


def _fail_coder(coder: Any, exc: BaseException) -> None:
    lib.rst_coder_fail(coder, int(status_of(exc)), describe(exc).encode("utf-8", "replace"))


@ffi.def_extern()
def _py_factory(e: Any, parent: Any, identifier: Any, coder: Any, ctx: Any) -> Any:
    f: _Factory = ffi.from_handle(ctx)
    eng = f.engine()
    if eng is None:
        return ffi.NULL
    co = Coder(coder, eng, False)
    try:
        ident = _s(identifier)
        obj = f.fn(ident, None if parent == ffi.NULL else eng._object_for(parent), co)
        if obj is None:
            return ffi.NULL
        cls = f.class_bytes if f.class_bytes is not None else getattr(obj, "restoration_class", None)
        return eng._new_entry(ident, parent, obj, cls, identifier)._ptr
    except BaseException as exc:
        # As a C factory's failure: the record is skipped with this sentence.
        _fail_coder(coder, exc)
        return ffi.NULL
    finally:
        co._c = None


@ffi.def_extern()
def _py_migrate(c: Any, from_version: int, ctx: Any) -> int:
    m: _Migration = ffi.from_handle(ctx)
    eng = m.engine()
    if eng is None:
        return int(Status.RST_ERR_STATE)
    co = Coder(c, eng, True)
    try:
        m.fn(co, from_version)
        return 0
    except BaseException as exc:
        _fail_coder(c, exc)
        return int(status_of(exc))
    finally:
        co._c = None


@ffi.def_extern()
def _py_encode(instance: Any, coder: Any) -> None:
    ref: ObjectRef = ffi.from_handle(instance)
    eng = ref._engine
    co = Coder(coder, eng, True)
    try:
        ref.obj.encode_restorable_state(co)
    except BaseException as exc:
        _fail_coder(coder, exc)
        eng._callback_failed(exc)
    finally:
        co._c = None


@ffi.def_extern()
def _py_decode(instance: Any, coder: Any) -> None:
    ref: ObjectRef = ffi.from_handle(instance)
    co = Coder(coder, ref._engine, False)
    try:
        ref.obj.decode_restorable_state(co)
    except BaseException as exc:
        # As a C decode's failure: the object is listed in the skips
        # (DECODE_FAILED) with this sentence; the restore goes on.
        _fail_coder(coder, exc)
    finally:
        co._c = None


@ffi.def_extern()
def _py_finished(instance: Any) -> None:
    ref: ObjectRef = ffi.from_handle(instance)
    hook = getattr(ref.obj, "application_finished_restoring_state", None)
    if hook is None:
        return
    try:
        hook()
    except BaseException as exc:
        ref._engine._callback_failed(exc)


@ffi.def_extern()
def _py_release(instance: Any) -> None:
    ref: ObjectRef = ffi.from_handle(instance)
    eng = ref._engine
    obj = ref.obj
    eng._forget(ref)
    hook = getattr(obj, "restoration_released", None)
    if hook is None:
        return
    try:
        hook()
    except BaseException as exc:
        eng._callback_failed(exc)


# -- a store written in Python


def _store_failed(sc: _StoreCtx, exc: BaseException, what: str) -> int:
    st = status_of(exc)
    if st == Status.RST_ERR_INVALID and not isinstance(exc, RestorationError):
        st = Status.RST_ERR_IO
    lib.rst_store_set_error(f"{sc.store.describe()}: {what}: {describe(exc)}".encode("utf-8", "replace"))
    eng = sc.engine_ref()
    if eng is not None:
        eng._callback_failed(exc)
    return int(st)


def _slot(n: int) -> Slot | int:
    try:
        return Slot(n)
    except ValueError:
        return n


@ffi.def_extern()
def _py_store_read(ctx: Any, slot: int, index: int, data: Any, n: Any, hold: Any) -> int:
    sc: _StoreCtx = ffi.from_handle(ctx)
    try:
        b = sc.store.read(_slot(slot), index)  # type: ignore[arg-type]
        if b is None:
            return int(Status.RST_ERR_NOT_FOUND)
        buf = ffi.from_buffer(bytes(b))
        h = sc.next_hold
        sc.next_hold += 1
        sc.holds[h] = buf
        data[0] = buf
        n[0] = len(buf)
        hold[0] = ffi.cast("void *", h)
        return 0
    except BaseException as exc:
        return _store_failed(sc, exc, f"read of slot {_slot(slot)!s} {index}")


@ffi.def_extern()
def _py_store_release(ctx: Any, hold: Any) -> None:
    sc: _StoreCtx = ffi.from_handle(ctx)
    sc.holds.pop(int(ffi.cast("uintptr_t", hold)), None)


@ffi.def_extern()
def _py_store_write(ctx: Any, slot: int, index: int, data: Any, n: int) -> int:
    sc: _StoreCtx = ffi.from_handle(ctx)
    try:
        sc.store.write(_slot(slot), index, bytes(ffi.buffer(data, n)) if n else b"")  # type: ignore[arg-type]
        return 0
    except BaseException as exc:
        return _store_failed(sc, exc, f"write of slot {_slot(slot)!s} {index}")


@ffi.def_extern()
def _py_store_move(ctx: Any, f: int, fi: int, t: int, ti: int) -> int:
    sc: _StoreCtx = ffi.from_handle(ctx)
    try:
        sc.store.move(_slot(f), fi, _slot(t), ti)  # type: ignore[arg-type]
        return 0
    except NotFoundError:
        return int(Status.RST_ERR_NOT_FOUND)
    except BaseException as exc:
        return _store_failed(sc, exc, f"move of slot {_slot(f)!s} {fi}")


@ffi.def_extern()
def _py_store_remove(ctx: Any, slot: int, index: int) -> int:
    sc: _StoreCtx = ffi.from_handle(ctx)
    try:
        sc.store.remove(_slot(slot), index)  # type: ignore[arg-type]
        return 0
    except BaseException as exc:
        return _store_failed(sc, exc, f"remove of slot {_slot(slot)!s} {index}")


@ffi.def_extern()
def _py_store_list(ctx: Any, slot: int, indexes: Any, cap: int, count: Any) -> int:
    sc: _StoreCtx = ffi.from_handle(ctx)
    try:
        found = sorted(int(i) for i in sc.store.list(_slot(slot)))  # type: ignore[arg-type]
        for j, i in enumerate(found[:cap]):
            indexes[j] = i
        count[0] = len(found)
        return 0
    except BaseException as exc:
        return _store_failed(sc, exc, f"list of slot {_slot(slot)!s}")


@ffi.def_extern()
def _py_store_lock(ctx: Any) -> int:
    sc: _StoreCtx = ffi.from_handle(ctx)
    try:
        sc.store.lock()
        return 0
    except BaseException as exc:
        return _store_failed(sc, exc, "lock")


@ffi.def_extern()
def _py_store_unlock(ctx: Any) -> None:
    sc: _StoreCtx = ffi.from_handle(ctx)
    try:
        sc.store.unlock()
    except BaseException as exc:
        eng = sc.engine_ref()
        if eng is not None:
            eng._callback_failed(exc)


@ffi.def_extern()
def _py_store_describe(ctx: Any) -> Any:
    sc: _StoreCtx = ffi.from_handle(ctx)
    return sc.describe_buf


@ffi.def_extern()
def _py_store_destroy(ctx: Any) -> None:
    sc: _StoreCtx = ffi.from_handle(ctx)
    _live_store_ctx.discard(sc)
