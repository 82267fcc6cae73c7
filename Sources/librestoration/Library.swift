// The `restoration` library product (librestoration.so.1) and nothing else.
//
// This target exists to carry the linker settings that belong to the shared
// library alone — its versioned SONAME, the export list (only `rst_*`), the
// Swift runtime linked in statically, lld — so that they never reach
// restorectl, the examples or the test bundles (SwiftPM gives a target's
// linker settings to every product that contains it). Its only content is
// the C ABI module, re-exported.
@_exported import RestorationC
