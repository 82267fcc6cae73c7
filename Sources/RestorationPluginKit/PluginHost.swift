// RestorationPluginKit: writing Restoration plugins in Swift.
//
// A plugin is a shared object that exports `rst_plugin_manifest_v1`
// (Include/restoration_plugin.h). It reaches the engine only through the
// `rst_host_api` table that function receives — never by linking
// librestoration.so or the Swift core — so the same file works in a C host,
// in restorectl and in a Swift host that carries the core statically. This
// module depends on the C headers only (CRestoration) and keeps that table.
//
// A whole plugin:
//
//     import CRestoration
//     import RestorationPluginKit
//
//     let plugin = PluginDefinition(name: "my-plugin", version: "1.0", classes: [
//         PluginClass("Thing", factory: "my_plugin_make_thing", signature: "EPI"),
//     ])
//
//     @_cdecl("rst_plugin_manifest_v1")
//     public func myPluginManifest(_ api: UnsafePointer<rst_host_api>?) -> UnsafePointer<rst_plugin_manifest>? {
//         plugin.manifest(api)
//     }
//
//     @_cdecl("my_plugin_make_thing")
//     public func makeThing(_ e: OpaquePointer?, _ parent: OpaquePointer?, _ id: UnsafePointer<CChar>?) -> OpaquePointer? {
//         guard let e, let id else { return nil }
//         return try? PluginEngine(e).register(Thing(), identifier: String(cString: id),
//                                              parent: parent.map(PluginObjectRef.init), className: "Thing").raw
//     }
//
// Rules (see docs and ../shared/notes/SWIFT-C-ABI.md): export with a
// `public` `@_cdecl` (non-public ones vanish in release builds), give the
// plugin module a unique name, use the shared Swift runtime, and never
// depend on RestorationCore or Restoration (a second copy of the engine).

import CRestoration
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The host's `rst_host_api` table, kept by `PluginDefinition.manifest(_:)`
/// (or `PluginHost.install(_:)`) when the host calls the plugin's
/// `rst_plugin_manifest_v1`. One per plugin image: each plugin carries its
/// own copy of this module.
public enum PluginHost {
    nonisolated(unsafe) private static var table: UnsafePointer<rst_host_api>?

    /// Keeps `api` as the table every wrapper calls through. Returns false
    /// (and keeps nothing) for NULL or a table older than version 1 — what
    /// `RST_PLUGIN_INIT` does in C; the manifest function should then return
    /// NULL so the host rejects the plugin cleanly.
    @discardableResult
    public static func install(_ api: UnsafePointer<rst_host_api>?) -> Bool {
        guard let api, api.pointee.table_version >= 1,
              Int(api.pointee.table_size) >= MemoryLayout<rst_host_api>.offset(of: \rst_host_api.decode_end_record)! + MemoryLayout<UnsafeRawPointer>.size
        else { return false }
        table = api
        return true
    }

    /// True once a usable table was installed.
    public static var isInstalled: Bool { table != nil }

    /// The table. Only valid after `install(_:)` succeeded (the host always
    /// calls the manifest function before anything else of the plugin).
    public static var api: UnsafePointer<rst_host_api> {
        guard let table else {
            preconditionFailure("RestorationPluginKit: no rst_host_api installed (call PluginDefinition.manifest(_:) or PluginHost.install(_:) from rst_plugin_manifest_v1 first)")
        }
        return table
    }

    /// Whether the host's table has the member at `keyPath` (it was built
    /// with it): `RST_HOST_API_HAS` in Swift. Members past
    /// `decode_end_record` are additions a version-1 host may lack.
    public static func has<T>(_ keyPath: KeyPath<rst_host_api, T>) -> Bool {
        guard let table, let offset = MemoryLayout<rst_host_api>.offset(of: keyPath) else { return false }
        return Int(table.pointee.table_size) >= offset + MemoryLayout<T>.size
    }

    /// `rst_version()` of the host.
    public static var version: String { api.pointee.version().map { String(cString: $0) } ?? "" }

    /// `rst_last_error()` of the host, for this thread.
    public static var lastError: String {
        guard let p = api.pointee.last_error() else { return "" }
        return String(cString: p)
    }

    /// `rst_status_name(s)`.
    public static func statusName(_ s: rst_status) -> String {
        guard let p = api.pointee.status_name(s) else { return "RST_ERR_UNKNOWN" }
        return String(cString: p)
    }
}

/// A failed host call: its status and `rst_last_error()` at the time.
public struct PluginError: Error, CustomStringConvertible {
    public let status: rst_status
    public let message: String

    public init(_ status: rst_status, _ message: String) {
        self.status = status
        self.message = message
    }

    public var description: String { "\(PluginHost.statusName(status)): \(message)" }

    /// Throws for any status but RST_OK.
    @inline(__always)
    static func check(_ s: rst_status) throws(PluginError) {
        if s != RST_OK { throw PluginError(s, PluginHost.lastError) }
    }
}
