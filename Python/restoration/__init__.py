"""restoration: state preservation and restoration for Python programs,
over the C library ``librestoration`` (cffi, API mode).

    import restoration

    class Editor:
        def encode_restorable_state(self, coder):
            coder.encode("text", self.text)
        def decode_restorable_state(self, coder):
            self.text = coder.decode("text", default="")

    with restoration.Engine("state.rst", autosave_delay_ms=500) as engine:
        engine.register("editor", editor)
        engine.restore()   # NotFoundError on the first launch

See docs/PYTHON.md.
"""
from ._core import (ArchiveInfo, Budget, Coder, Engine, FileStore, LogLevel, MemoryStore,
                    ObjectRef, PluginClass, PluginInfo, Restorable, RestoreReason, RestoreReport,
                    RestoreToken, SaveTrigger, Sensitivity, SizeEntry, Skip, SkipReason, Slot,
                    Store, ValueType, library_version, read_archive_info)
from ._errors import (CorruptError, DuplicateError, InvalidError, LimitError, NoMemoryError,
                      NotFoundError, PluginError, RejectedError, RestorationError, StateError,
                      Status, StorageError, TypeMismatchError, VersionError)

__version__ = "1.3.0"

__all__ = [
    "ArchiveInfo", "Budget", "Coder", "Engine", "FileStore", "LogLevel", "MemoryStore",
    "ObjectRef", "PluginClass", "PluginInfo", "Restorable", "RestoreReason", "RestoreReport",
    "RestoreToken", "SaveTrigger", "Sensitivity", "SizeEntry", "Skip", "SkipReason", "Slot",
    "Store", "ValueType", "library_version", "read_archive_info",
    "CorruptError", "DuplicateError", "InvalidError", "LimitError", "NoMemoryError",
    "NotFoundError", "PluginError", "RejectedError", "RestorationError", "StateError",
    "Status", "StorageError", "TypeMismatchError", "VersionError", "__version__",
]
