/// The C face of the engine: the semantics of every function of
/// Include/restoration.h (argument checks, handle conversion, the
/// thread-local `rst_last_error`, C names in messages), the adapters that
/// let the core call C callbacks and C factories, and the C-string arena of
/// decode calls. The core (RestorationCore) knows only Swift types; this
/// module is where C meets it.
///
/// Each `CFace.<name>` implements `rst_<name>` (`mem_free` is `rst_free`),
/// named as the member of `rst_host_api` that points to it. Two modules use
/// them without this module exporting any symbol:
/// - RestorationC exports them as the `rst_*` symbols of librestoration.so
///   (`@c @implementation`, one forwarding line each, checked against the
///   header by the compiler);
/// - RestorationPlugins builds the `rst_host_api` table plugins receive from
///   them, so a Swift host or restorectl hands plugins the same functions
///   without linking RestorationC.
/// `rst_engine_create`, `rst_load_plugins` and `rst_list_plugins` are the
/// plugin loader's (it sits above this module): see
/// RestorationPlugins/HostTable.swift.
public enum CFace {}
