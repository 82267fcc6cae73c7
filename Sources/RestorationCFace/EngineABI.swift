import CRestoration
import RestorationArchive
import RestorationCore
#if canImport(Glibc)
import Glibc
#endif

// "The engine" of Include/restoration.h: versions, errors, options, create
// and destroy. Each function checks its arguments, converts handles, calls
// the core, and turns a RestorationFailure into a status plus
// rst_last_error(). The other sections have a file each: ObjectsABI,
// SaveRestoreABI, CoderABI, LifecycleABI, EvolutionABI,
// SensitivityBudgetsABI; restoration_store.h is StoreABI.

extension CFace {
    /// RST_VERSION_STRING of the header this library was built with, so that
    /// rst_version(), the header, the SONAME and restoration.pc never disagree
    /// (Tests/install/run.sh checks all four).
    public static func version() -> UnsafePointer<CChar>! {
        libraryVersion
    }
}

extension CFace {
    public static func status_name(_ s: rst_status) -> UnsafePointer<CChar>! {
        staticCString(CSpelling.status(rawValue: s.rawValue))
    }
}

extension CFace {
    public static func last_error() -> UnsafePointer<CChar>! {
        lastErrorPointer() ?? staticCString("")
    }
}

extension CFace {
    public static func mem_free(_ p: UnsafeMutableRawPointer!) {
        free(p)
    }
}

// MARK: engine

extension CFace {
    public static func engine_options_init(_ opts: UnsafeMutablePointer<rst_engine_options>!, _ version: UInt32) -> rst_status {
        guard let opts else { return fail(.invalid, "rst_engine_options_init: opts is NULL") }
        guard version >= 1, version <= UInt32(RST_ENGINE_OPTIONS_VERSION) else {
            return fail(.version, "rst_engine_options_init: version \(version) is not one this library knows (1 to \(RST_ENGINE_OPTIONS_VERSION))")
        }
        // A version clears only the members the caller's version has.
        UnsafeMutableRawPointer(opts).initializeMemory(as: UInt8.self, repeating: 0, count: optionsSize(version: version))
        UnsafeMutableRawPointer(opts).storeBytes(of: version, as: UInt32.self)
        return RST_OK
    }
}

extension CFace {
    /// `rst_engine_create`, with the plugin loader passed in: this module sits
    /// below the loader, which calls this from its own `engine_create`
    /// (the one the library exports and the host table holds).
    public static func createEngine(_ opts: UnsafePointer<rst_engine_options>!, _ out: UnsafeMutablePointer<OpaquePointer?>!,
                                    attachPlugins: (Engine, String) -> Void) -> rst_status {
        createEngine(opts, out, store: nil, attachPlugins: attachPlugins)
    }

    /// `rst_engine_create` (`store` nil) and `rst_engine_create_with_store`:
    /// on any failure the store (when given) is released, which destroys it.
    public static func createEngine(_ opts: UnsafePointer<rst_engine_options>!, _ out: UnsafeMutablePointer<OpaquePointer?>!,
                                    store: ArchiveStore?, attachPlugins: (Engine, String) -> Void) -> rst_status {
        let fn: StaticString = store == nil ? "rst_engine_create" : "rst_engine_create_with_store"
        guard let opts else { return fail(.invalid, "\(fn): opts is NULL (use RST_ENGINE_OPTIONS_INIT)") }
        guard let out else { return fail(.invalid, "\(fn): out is NULL") }
        let config: Engine.Configuration, o: rst_engine_options
        switch readOptions(opts, store: store) {
        case .success(let read): (config, o) = read
        case .failure(let f): return fail(f, in: fn)
        }
        let e = Engine(configuration: config)
        let h = handle(e)
        let ctx = o.ctx
        if let f = o.should_save { e.shouldSave = { f(h, ctx) } }
        if o.version >= 3, let f = o.encryption_key {   // sensitive values (SensitivityABI.swift)
            e.setEncryptionKeyProvider { key in f(h, key.baseAddress!.assumingMemoryBound(to: UInt8.self), ctx) == RST_OK }
        }
        if let f = o.should_restore {
            e.shouldRestore = { [unowned e] info in
                withArchiveInfo(info, reason: e.restoreReason.rawValue, generation: e.restoreGeneration) { f(h, $0, ctx) }
            }
        }
        if let f = o.did_finish_restoring { e.didFinishRestoring = { f(h, ctx) } }
        if let f = o.log {
            e.logHandler = { level, message in
                f(h, Int32(level.rawValue), message, ctx)
            }
        }
        if let pluginDir = config.pluginDirectory {
            attachPlugins(e, pluginDir)
        }
        out.pointee = OpaquePointer(Unmanaged.passRetained(e).toOpaque())
        return RST_OK
    }
}

/// Calls `body` with a C view of `info` whose strings live during the call.
public func withArchiveInfo<T>(_ info: ArchiveInfo, reason: UInt32 = 0, generation: UInt32 = 0,
                               _ body: (UnsafePointer<rst_archive_info>) -> T) -> T {
    info.appVersion.withCString { app in
        info.systemVersion.withCString { sys in
            info.idiom.withCString { idiom in
                var c = rst_archive_info(format_version: info.formatVersion, app_version: app, system_version: sys,
                                         idiom: idiom, saved_at_ms: info.savedAtMs, object_count: info.objectCount,
                                         restore_reason: reason, generation: generation)
                return withUnsafePointer(to: &c) { body($0) }
            }
        }
    }
}

extension CFace {
    public static func engine_destroy(_ e: OpaquePointer!) {
        guard let e else { return }
        let engine = engine(e)
        if engine.destroy() {
            Unmanaged<Engine>.fromOpaque(UnsafeRawPointer(e)).release()
        } else {
            engine.log(.error, "rst_engine_destroy called from inside a save or restore callback; ignored")
        }
    }
}

// MARK: helpers

/// Sizes one malloc block for a struct followed by its strings.
public struct OneAllocation {
    public private(set) var size = 0
    public init() {}

    public mutating func reserve(_ bytes: Int) { size += (bytes + 7) & ~7 }
    public mutating func reserveString(_ s: String) { size += s.utf8.count + 1 }

    public func allocate() -> UnsafeMutableRawPointer? { malloc(max(size, 1)) }

    public struct Cursor {
        public let block: UnsafeMutableRawPointer
        public var offset: Int
        public init(block: UnsafeMutableRawPointer, offset: Int) {
            self.block = block
            self.offset = offset
        }

        /// Copies `s` NUL-terminated at the cursor.
        public mutating func put(_ s: String) -> UnsafePointer<CChar> {
            let dst = block + offset
            var copy = s
            let n = copy.withUTF8 { u -> Int in
                if let b = u.baseAddress { dst.copyMemory(from: b, byteCount: u.count) }
                return u.count
            }
            dst.storeBytes(of: 0, toByteOffset: n, as: UInt8.self)
            offset += n + 1
            return UnsafePointer(dst.assumingMemoryBound(to: CChar.self))
        }
    }
}

/// Allocated once, never freed (static storage, as rst_version() promises).
private let libraryVersion = UnsafePointer<CChar>(strdup(RST_VERSION_STRING)!)
