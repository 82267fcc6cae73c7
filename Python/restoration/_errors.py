"""Statuses and the exceptions that carry them."""
from __future__ import annotations

import enum


class Status(enum.IntEnum):
    """The C library's ``rst_status``, member for member, with its C names."""

    RST_OK = 0
    RST_ERR_INVALID = 1
    RST_ERR_NOT_FOUND = 2
    RST_ERR_DUPLICATE = 3
    RST_ERR_TYPE = 4
    RST_ERR_CORRUPT = 5
    RST_ERR_VERSION = 6
    RST_ERR_IO = 7
    RST_ERR_PLUGIN = 8
    RST_ERR_REJECTED = 9
    RST_ERR_NOMEM = 10
    RST_ERR_STATE = 11
    RST_ERR_LIMIT = 12


class RestorationError(Exception):
    """An engine call failed: ``status`` says how, ``message`` (also ``str()``)
    is the library's sentence (``rst_last_error()``). When a Python callback
    raised, the exception it raised is the ``__cause__``."""

    status: Status = Status.RST_ERR_INVALID

    def __init__(self, message: str, status: Status | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status

    def __str__(self) -> str:
        return self.message


class InvalidError(RestorationError, ValueError):
    """RST_ERR_INVALID: a bad argument or a misuse."""
    status = Status.RST_ERR_INVALID


class NotFoundError(RestorationError, LookupError):
    """RST_ERR_NOT_FOUND: no such key, object, class or archive."""
    status = Status.RST_ERR_NOT_FOUND


class DuplicateError(RestorationError):
    """RST_ERR_DUPLICATE: the path, key or class name is taken."""
    status = Status.RST_ERR_DUPLICATE


class TypeMismatchError(RestorationError, TypeError):
    """RST_ERR_TYPE: the key holds a value of another type."""
    status = Status.RST_ERR_TYPE


class CorruptError(RestorationError):
    """RST_ERR_CORRUPT: the archive failed validation; nothing was decoded."""
    status = Status.RST_ERR_CORRUPT


class VersionError(RestorationError):
    """RST_ERR_VERSION: an archive format or plugin ABI not supported."""
    status = Status.RST_ERR_VERSION


class StorageError(RestorationError):
    """RST_ERR_IO: the file system or the store failed."""
    status = Status.RST_ERR_IO


class PluginError(RestorationError):
    """RST_ERR_PLUGIN: a plugin failed to load or to create its object."""
    status = Status.RST_ERR_PLUGIN


class RejectedError(RestorationError):
    """RST_ERR_REJECTED: should_save/should_restore said no, or the
    crash-loop guard set the archive aside."""
    status = Status.RST_ERR_REJECTED


class NoMemoryError(RestorationError):
    """RST_ERR_NOMEM: an allocation failed."""
    status = Status.RST_ERR_NOMEM


class StateError(RestorationError):
    """RST_ERR_STATE: not allowed now (a coder used after its callback, ...)."""
    status = Status.RST_ERR_STATE


class LimitError(RestorationError):
    """RST_ERR_LIMIT: a size, count or depth limit was exceeded."""
    status = Status.RST_ERR_LIMIT


ERRORS: dict[Status, type[RestorationError]] = {
    cls.status: cls
    for cls in (InvalidError, NotFoundError, DuplicateError, TypeMismatchError, CorruptError,
                VersionError, StorageError, PluginError, RejectedError, NoMemoryError,
                StateError, LimitError)
}


def error_for(status: int, message: str) -> RestorationError:
    """The exception for a C status (an unknown one: a RestorationError)."""
    try:
        st = Status(status)
    except ValueError:
        return RestorationError(f"{message} (status {status})", Status.RST_ERR_INVALID)
    return ERRORS.get(st, RestorationError)(message, st)


def status_of(exc: BaseException) -> Status:
    """The status a Python callback's exception fails its operation with."""
    if isinstance(exc, RestorationError):
        return exc.status if exc.status != Status.RST_OK else Status.RST_ERR_INVALID
    if isinstance(exc, MemoryError):
        return Status.RST_ERR_NOMEM
    if isinstance(exc, OSError):
        return Status.RST_ERR_IO
    if isinstance(exc, (KeyError, LookupError)):
        return Status.RST_ERR_NOT_FOUND
    if isinstance(exc, TypeError):
        return Status.RST_ERR_TYPE
    return Status.RST_ERR_INVALID


def describe(exc: BaseException) -> str:
    """``ValueError: the text``: how a callback's exception reads in a sentence."""
    text = str(exc)
    name = type(exc).__name__
    return f"{name}: {text}" if text else name
