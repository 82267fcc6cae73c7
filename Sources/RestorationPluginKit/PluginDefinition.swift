import CRestoration
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One restoration class of a plugin: the name archives use, the exported
/// factory function (`@_cdecl("…") public func`), and its signature —
/// which restore-time arguments it takes, in order:
///
/// | letter | Swift parameter type | value |
/// |---|---|---|
/// | `E` | `OpaquePointer?` (rst_engine *) | the engine → `PluginEngine` |
/// | `P` | `OpaquePointer?` (rst_object *) | the parent, nil at a root → `PluginObjectRef` |
/// | `I` | `UnsafePointer<CChar>?` | the identifier |
/// | `R` | `UnsafePointer<CChar>?` | the whole path "A/B/C" |
/// | `C` | `OpaquePointer?` (rst_coder *) | the record's state, readable → `PluginCoder` |
/// | `X` | `UnsafeMutableRawPointer?` | the plugin context from init → `PluginDefinition.context(_:as:)` |
/// | `D` | `UInt32` | the depth, 0 at a root |
/// | `T` | `Int64` | when the archive was saved, UTC ms |
///
/// The factory returns `OpaquePointer?`: the registered object's `raw`, or
/// nil to decline.
public struct PluginClass {
    public var name: String
    public var factorySymbol: String
    public var signature: String

    public init(_ name: String, factory symbol: String, signature: String) {
        self.name = name
        self.factorySymbol = symbol
        self.signature = signature
    }
}

/// Declares a plugin and builds its `rst_plugin_manifest` once, with
/// process lifetime (C strings strdup'ed once, never freed), so the exported
/// entry point is one line:
///
///     @_cdecl("rst_plugin_manifest_v1")
///     public func myManifest(_ api: UnsafePointer<rst_host_api>?) -> UnsafePointer<rst_plugin_manifest>? {
///         plugin.manifest(api)
///     }
///
/// Keep the definition in a global or static `let` (one per plugin image).
/// `initialize` runs once per engine that loads the plugin; the object it
/// returns is that engine's plugin context (the `X` argument of factories),
/// retained until `finalize` runs at the engine's destroy. Throwing from
/// `initialize` rejects the plugin for that engine (its `finalize` does not
/// run).
public final class PluginDefinition {
    public let name: String
    public let version: String
    public let classes: [PluginClass]
    let initialize: ((PluginEngine) throws -> AnyObject?)?
    let finalize: ((AnyObject?) -> Void)?

    /// The definition whose init/fini trampolines are in the manifest.
    nonisolated(unsafe) static var current: PluginDefinition?

    public init(name: String, version: String, classes: [PluginClass],
                initialize: ((PluginEngine) throws -> AnyObject?)? = nil,
                finalize: ((AnyObject?) -> Void)? = nil) {
        self.name = name
        self.version = version
        self.classes = classes
        self.initialize = initialize
        self.finalize = finalize
        self.built = PluginDefinition.build(name: name, version: version, classes: classes,
                                            hasInit: initialize != nil, hasFini: initialize != nil || finalize != nil)
    }

    /// Built once; never freed (the host may read it at any time).
    private let built: UnsafePointer<rst_plugin_manifest>

    /// What `rst_plugin_manifest_v1` returns: installs the host table
    /// (`PluginHost.install`) and returns the manifest, or nil when the
    /// table is missing or too old (the host then rejects the plugin).
    public func manifest(_ api: UnsafePointer<rst_host_api>?) -> UnsafePointer<rst_plugin_manifest>? {
        guard PluginHost.install(api) else { return nil }
        PluginDefinition.current = self
        return built
    }

    /// The context object `initialize` returned, from a factory's `X`
    /// argument.
    public static func context<T: AnyObject>(_ x: UnsafeMutableRawPointer?, as type: T.Type = T.self) -> T? {
        guard let x else { return nil }
        return Unmanaged<AnyObject>.fromOpaque(x).takeUnretainedValue() as? T
    }

    private static func build(name: String, version: String, classes: [PluginClass],
                              hasInit: Bool, hasFini: Bool) -> UnsafePointer<rst_plugin_manifest> {
        let table = UnsafeMutablePointer<rst_plugin_class>.allocate(capacity: max(classes.count, 1))
        for (i, c) in classes.enumerated() {
            (table + i).initialize(to: rst_plugin_class(class_name: UnsafePointer(strdup(c.name)),
                                                        factory_symbol: UnsafePointer(strdup(c.factorySymbol)),
                                                        signature: UnsafePointer(strdup(c.signature))))
        }
        var m = rst_plugin_manifest()
        m.abi_version = UInt32(RST_PLUGIN_ABI_VERSION)
        m.manifest_size = UInt32(MemoryLayout<rst_plugin_manifest>.size)
        m.name = UnsafePointer(strdup(name))
        m.version = UnsafePointer(strdup(version))
        m.class_count = classes.count
        m.classes = UnsafePointer(table)
        if hasInit {
            m.`init` = { engine, out in
                guard let def = PluginDefinition.current, let initialize = def.initialize, let engine else { return 1 }
                do {
                    let ctx = try initialize(PluginEngine(engine))
                    out?.pointee = ctx.map { Unmanaged.passRetained($0).toOpaque() }
                    return 0
                } catch {
                    return 1
                }
            }
        }
        // fini always runs when there is an init (to drop the retained
        // context), or when the plugin asked for one.
        if hasFini {
            m.fini = { ctx in
                let object: AnyObject? = ctx.map { Unmanaged<AnyObject>.fromOpaque($0).takeRetainedValue() }
                PluginDefinition.current?.finalize?(object)
            }
        }
        let p = UnsafeMutablePointer<rst_plugin_manifest>.allocate(capacity: 1)
        p.initialize(to: m)
        return UnsafePointer(p)
    }
}
