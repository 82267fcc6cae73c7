import CRestoration
import RestorationCore
import RestorationCFace
#if canImport(Glibc)
import Glibc
#endif

extension CFace {
    /// `rst_load_plugins`.
    public static func load_plugins(_ e: OpaquePointer!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_load_plugins: engine is NULL") }
        guard let loader = engine(e).classProvider as? PluginLoader else {
            return fail(.invalid, "rst_load_plugins: the engine was created without a plugin_dir")
        }
        do {
            try loader.loadAll()
            return RST_OK
        } catch {
            return fail(error, in: "rst_load_plugins")
        }
    }
}

extension CFace {
    /// `rst_list_plugins`.
    public static func list_plugins(_ e: OpaquePointer!, _ out: UnsafeMutablePointer<UnsafeMutablePointer<rst_plugin_info>?>!, _ count: UnsafeMutablePointer<Int>!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_list_plugins: engine is NULL") }
        guard let out, let count else { return fail(.invalid, "rst_list_plugins: out or count is NULL") }
        guard let loader = engine(e).classProvider as? PluginLoader else {
            return fail(.invalid, "rst_list_plugins: the engine was created without a plugin_dir")
        }
        let files: [PluginFileInfo]
        do { files = try loader.list() } catch { return fail(error, in: "rst_list_plugins") }
        out.pointee = nil
        count.pointee = files.count
        guard !files.isEmpty else { return RST_OK }

        // One allocation: the info array, then every class array, then the strings.
        var size = OneAllocation()
        size.reserve(MemoryLayout<rst_plugin_info>.stride * files.count)
        for f in files { size.reserve(MemoryLayout<rst_plugin_class_info>.stride * f.classes.count) }
        for f in files {
            for s in [f.path, f.name, f.version, f.reason] { size.reserveString(s) }
            for c in f.classes { for s in [c.className, c.factorySymbol, c.signature, c.reason] { size.reserveString(s) } }
        }
        guard let block = size.allocate() else { return fail(.noMemory, "rst_list_plugins: out of memory") }
        let infos = block.bindMemory(to: rst_plugin_info.self, capacity: files.count)
        var classOffset = (MemoryLayout<rst_plugin_info>.stride * files.count + 7) & ~7
        var stringsOffset = classOffset
        for f in files { stringsOffset += (MemoryLayout<rst_plugin_class_info>.stride * f.classes.count + 7) & ~7 }
        var cursor = OneAllocation.Cursor(block: block, offset: stringsOffset)
        for (i, f) in files.enumerated() {
            let classes = (block + classOffset).bindMemory(to: rst_plugin_class_info.self, capacity: max(f.classes.count, 1))
            for (j, c) in f.classes.enumerated() {
                (classes + j).initialize(to: rst_plugin_class_info(
                    class_name: cursor.put(c.className), factory_symbol: cursor.put(c.factorySymbol),
                    signature: cursor.put(c.signature), usable: c.usable, reason: cursor.put(c.reason)))
            }
            let state: rst_plugin_state
            switch f.state {
            case .discovered: state = RST_PLUGIN_DISCOVERED
            case .loaded: state = RST_PLUGIN_LOADED
            case .rejected: state = RST_PLUGIN_REJECTED
            }
            (infos + i).initialize(to: rst_plugin_info(
                path: cursor.put(f.path), name: cursor.put(f.name), version: cursor.put(f.version),
                state: state, reason: cursor.put(f.reason), class_count: f.classes.count,
                classes: f.classes.isEmpty ? nil : UnsafePointer(classes)))
            classOffset += (MemoryLayout<rst_plugin_class_info>.stride * f.classes.count + 7) & ~7
        }
        out.pointee = infos
        return RST_OK
    }
}
