import CRestoration
import RestorationArchive
import RestorationCore
#if canImport(Glibc)
import Glibc
#endif

// The engine, object and class halves of Include/restoration.h. Each
// function checks its arguments, converts handles, calls the core, and turns
// a RestorationFailure into a status plus rst_last_error().

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

// MARK: objects

extension CFace {
    public static func register_object(_ e: OpaquePointer!, _ identifier: UnsafePointer<CChar>!, _ parent: OpaquePointer!,
                                    _ class_name: UnsafePointer<CChar>!, _ callbacks: UnsafePointer<rst_object_callbacks>!,
                                    _ instance: UnsafeMutableRawPointer!, _ out: UnsafeMutablePointer<OpaquePointer?>!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_register_object: engine is NULL") }
        guard let identifier else { return fail(.invalid, "rst_register_object: identifier is NULL") }
        return Unmanaged<Engine>.fromOpaque(UnsafeRawPointer(e))._withUnsafeGuaranteedRef { engine in
            do throws(RestorationFailure) {
                // The host's table, kept by address as the core's ObjectCallbacks (same layout).
                let n = try engine.register(cIdentifier: identifier, parent: parent.map { UnsafeRawPointer($0) }, cClassName: class_name,
                                            callbacks: callbacks.map(objectCallbacks), instance: instance)
                out?.pointee = OpaquePointer(n)
                return RST_OK
            } catch {
                return fail(error, in: "rst_register_object")
            }
        }
    }
}

extension CFace {
    public static func unregister_object(_ e: OpaquePointer!, _ o: OpaquePointer!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_unregister_object: engine is NULL") }
        guard let o else { return fail(.invalid, "rst_unregister_object: object is NULL") }
        do {
            try engine(e).unregister(node(o))
            return RST_OK
        } catch {
            return fail(error, in: "rst_unregister_object")
        }
    }
}

extension CFace {
    public static func find_object(_ e: OpaquePointer!, _ path: UnsafePointer<CChar>!) -> OpaquePointer! {
        guard let e else { _ = fail(.invalid, "rst_find_object: engine is NULL"); return nil }
        guard let path else { _ = fail(.invalid, "rst_find_object: path is NULL"); return nil }
        guard let p = String(validatingCString: path) else { _ = fail(.invalid, "rst_find_object: the path is not valid UTF-8"); return nil }
        return engine(e).find(path: p).map(handle)
    }
}

extension CFace {
    public static func object_instance(_ o: OpaquePointer!) -> UnsafeMutableRawPointer! {
        guard let o else { return nil }
        return withNode(o) { $0.instance }
    }
}

extension CFace {
    public static func object_identifier(_ o: OpaquePointer!) -> UnsafePointer<CChar>! {
        guard let o else { return nil }
        return withNode(o) { UnsafePointer($0.cIdentifier) }
    }
}

extension CFace {
    public static func object_parent(_ o: OpaquePointer!) -> OpaquePointer! {
        guard let o else { return nil }
        return withNode(o) { $0.parentHandle.map { OpaquePointer($0) } }
    }
}

extension CFace {
    public static func object_path(_ o: OpaquePointer!, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>!) -> rst_status {
        guard let o else { return fail(.invalid, "rst_object_path: object is NULL") }
        guard let out else { return fail(.invalid, "rst_object_path: out is NULL") }
        guard let p = strdup(node(o).path) else { return fail(.noMemory, "rst_object_path: out of memory") }
        out.pointee = p
        return RST_OK
    }
}

extension CFace {
    public static func object_class_name(_ o: OpaquePointer!) -> UnsafePointer<CChar>! {
        guard let o else { return nil }
        return withNode(o) { $0.cClassName }
    }
}

// MARK: classes

extension CFace {
    public static func register_class(_ e: OpaquePointer!, _ class_name: UnsafePointer<CChar>!, _ factory: rst_factory_fn!, _ ctx: UnsafeMutableRawPointer!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_register_class: engine is NULL") }
        guard let class_name else { return fail(.invalid, "rst_register_class: class_name is NULL") }
        guard let factory else { return fail(.invalid, "rst_register_class: factory is NULL") }
        guard let name = String(validatingCString: class_name) else { return fail(.invalid, "rst_register_class: the class name is not valid UTF-8") }
        do {
            try engine(e).registerClass(name, function: factory, context: ctx)
            return RST_OK
        } catch {
            return fail(error, in: "rst_register_class")
        }
    }
}

extension CFace {
    public static func set_fallback_factory(_ e: OpaquePointer!, _ factory: rst_factory_fn!, _ ctx: UnsafeMutableRawPointer!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_set_fallback_factory: engine is NULL") }
        engine(e).setFallbackFactory(function: factory, context: ctx)
        return RST_OK
    }
}

// MARK: save and restore

extension CFace {
    public static func save(_ e: OpaquePointer!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_save: engine is NULL") }
        if !engine(e).hasStore { return fail(.invalid, "rst_save: the engine has no archive_path (use rst_save_to_buffer)") }
        do {
            let engine = engine(e)
            try engine.lifecycle.reportingSave(.call) { () throws(RestorationFailure) in try engine.save() }
            return RST_OK
        } catch {
            return fail(error, in: "rst_save")
        }
    }
}

extension CFace {
    public static func restore(_ e: OpaquePointer!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_restore: engine is NULL") }
        if !engine(e).hasStore { return fail(.invalid, "rst_restore: the engine has no archive_path (use rst_restore_from_buffer)") }
        do {
            try engine(e).restore()
            return RST_OK
        } catch {
            return fail(error, in: "rst_restore")
        }
    }
}

extension CFace {
    public static func save_to_buffer(_ e: OpaquePointer!, _ out: UnsafeMutablePointer<UnsafeMutableRawPointer?>!, _ len: UnsafeMutablePointer<Int>!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_save_to_buffer: engine is NULL") }
        guard let out, let len else { return fail(.invalid, "rst_save_to_buffer: out or len is NULL") }
        do {
            var asked = 0
            guard let (p, n) = try engine(e).saveToBuffer(allocate: { size in
                asked = size
                return malloc(max(size, 1))
            }) else { return fail(.noMemory, "rst_save_to_buffer: cannot allocate \(asked) bytes") }
            out.pointee = p
            len.pointee = n
            return RST_OK
        } catch {
            return fail(error, in: "rst_save_to_buffer")
        }
    }
}

extension CFace {
    public static func restore_from_buffer(_ e: OpaquePointer!, _ data: UnsafeRawPointer!, _ len: Int) -> rst_status {
        guard let e else { return fail(.invalid, "rst_restore_from_buffer: engine is NULL") }
        guard data != nil || len == 0 else { return fail(.invalid, "rst_restore_from_buffer: data is NULL") }
        do {
            try engine(e).restore(bytes: UnsafeRawBufferPointer(start: data, count: len))
            return RST_OK
        } catch {
            return fail(error, in: "rst_restore_from_buffer")
        }
    }
}

extension CFace {
    public static func discard(_ e: OpaquePointer!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_discard: engine is NULL") }
        if !engine(e).hasStore { return fail(.invalid, "rst_discard: the engine has no archive_path") }
        do {
            try engine(e).discard()
            return RST_OK
        } catch {
            return fail(error, in: "rst_discard")
        }
    }
}

extension CFace {
    public static func read_archive_info(_ path: UnsafePointer<CChar>!, _ out: UnsafeMutablePointer<UnsafeMutablePointer<rst_archive_info>?>!) -> rst_status {
        guard let path else { return fail(.invalid, "rst_read_archive_info: path is NULL") }
        guard let out else { return fail(.invalid, "rst_read_archive_info: out is NULL") }
        // Refused like rst_engine_create's paths: String(cString:) would replace
        // the bytes with U+FFFD and open another file.
        guard let p = String(validatingCString: path) else { return fail(.invalid, "rst_read_archive_info: path is not valid UTF-8") }
        do {
            let reader = try Engine.validate(adopting: try FileStore.readBuffer(p), source: "archive '\(p)'")
            let info = reader.info
            var packer = OneAllocation()
            packer.reserve(MemoryLayout<rst_archive_info>.stride)
            let strings = [info.appVersion, info.systemVersion, info.idiom]
            for s in strings { packer.reserveString(s) }
            guard let block = packer.allocate() else { return fail(.noMemory, "rst_read_archive_info: out of memory") }
            let result = block.bindMemory(to: rst_archive_info.self, capacity: 1)
            var cursor = OneAllocation.Cursor(block: block, offset: MemoryLayout<rst_archive_info>.stride)
            result.initialize(to: rst_archive_info(format_version: info.formatVersion,
                                                   app_version: cursor.put(info.appVersion),
                                                   system_version: cursor.put(info.systemVersion),
                                                   idiom: cursor.put(info.idiom),
                                                   saved_at_ms: info.savedAtMs, object_count: info.objectCount,
                                                   restore_reason: 0, generation: 0))
            out.pointee = result
            return RST_OK
        } catch {
            return fail(error, in: "rst_read_archive_info")
        }
    }
}

extension CFace {
    public static func last_restore_report(_ e: OpaquePointer!, _ out: UnsafeMutablePointer<rst_restore_report>!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_last_restore_report: engine is NULL") }
        guard let out else { return fail(.invalid, "rst_last_restore_report: out is NULL") }
        guard let r = engine(e).lastRestoreReport else {
            return fail(.state, "rst_last_restore_report: this engine has not restored anything yet")
        }
        out.pointee = rst_restore_report(archived: r.archived, restored: r.restored, skipped: r.skipped,
                                         plugins_loaded: r.pluginsLoaded, plugins_rejected: r.pluginsRejected)
        return RST_OK
    }
}

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
