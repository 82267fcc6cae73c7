import CRestoration
import RestorationCFace
import RestorationCore

/// The table plugins receive (`rst_host_api`): every function of
/// restoration.h, so a plugin never links librestoration.so and works the
/// same in a C host, restorectl, or a Swift host that carries the core
/// statically. Its members are the C face's functions (RestorationCFace),
/// the same ones librestoration.so exports, plus the loader's own three
/// (engine_create, which attaches a plugin loader when plugin_dir is set,
/// load_plugins and list_plugins). Built once; lives for the process.
/// The loader owns it because only the loader hands it out.
let restorationHostAPI: UnsafePointer<rst_host_api> = {
    var t = rst_host_api()
    t.table_version = UInt32(RST_HOST_API_VERSION)
    t.table_size = UInt32(MemoryLayout<rst_host_api>.size)
    t.version = { CFace.version() }
    t.status_name = { CFace.status_name($0) }
    t.last_error = { CFace.last_error() }
    t.mem_free = { CFace.mem_free($0) }
    t.engine_create = { CFace.engine_create($0, $1) }
    t.engine_destroy = { CFace.engine_destroy($0) }
    t.register_object = { CFace.register_object($0, $1, $2, $3, $4, $5, $6) }
    t.unregister_object = { CFace.unregister_object($0, $1) }
    t.find_object = { CFace.find_object($0, $1) }
    t.object_instance = { CFace.object_instance($0) }
    t.object_identifier = { CFace.object_identifier($0) }
    t.object_parent = { CFace.object_parent($0) }
    t.register_class = { CFace.register_class($0, $1, $2, $3) }
    t.set_fallback_factory = { CFace.set_fallback_factory($0, $1, $2) }
    t.save = { CFace.save($0) }
    t.restore = { CFace.restore($0) }
    t.save_to_buffer = { CFace.save_to_buffer($0, $1, $2) }
    t.restore_from_buffer = { CFace.restore_from_buffer($0, $1, $2) }
    t.discard = { CFace.discard($0) }
    t.read_archive_info = { CFace.read_archive_info($0, $1) }
    t.last_restore_report = { CFace.last_restore_report($0, $1) }
    t.encode_bool = { CFace.encode_bool($0, $1, $2) }
    t.encode_int = { CFace.encode_int($0, $1, $2) }
    t.encode_double = { CFace.encode_double($0, $1, $2) }
    t.encode_string = { CFace.encode_string($0, $1, $2) }
    t.encode_bytes = { CFace.encode_bytes($0, $1, $2, $3) }
    t.encode_object = { CFace.encode_object($0, $1, $2) }
    t.encode_int_array = { CFace.encode_int_array($0, $1, $2, $3) }
    t.encode_string_array = { CFace.encode_string_array($0, $1, $2, $3) }
    t.encode_begin_record = { CFace.encode_begin_record($0, $1) }
    t.encode_end_record = { CFace.encode_end_record($0) }
    t.coder_contains = { CFace.coder_contains($0, $1) }
    t.decode_bool = { CFace.decode_bool($0, $1, $2) }
    t.decode_int = { CFace.decode_int($0, $1, $2) }
    t.decode_double = { CFace.decode_double($0, $1, $2) }
    t.decode_string = { CFace.decode_string($0, $1, $2, $3) }
    t.decode_bytes = { CFace.decode_bytes($0, $1, $2, $3) }
    t.decode_object = { CFace.decode_object($0, $1, $2) }
    t.decode_int_array = { CFace.decode_int_array($0, $1, $2, $3, $4) }
    t.decode_string_array = { CFace.decode_string_array($0, $1, $2, $3, $4, $5) }
    t.decode_begin_record = { CFace.decode_begin_record($0, $1) }
    t.decode_end_record = { CFace.decode_end_record($0) }
    t.coder_value_type = { CFace.coder_value_type($0, $1) }
    t.object_path = { CFace.object_path($0, $1) }
    t.object_class_name = { CFace.object_class_name($0) }
    t.load_plugins = { CFace.load_plugins($0) }
    t.list_plugins = { CFace.list_plugins($0, $1, $2) }
    t.engine_options_init = { CFace.engine_options_init($0, $1) }
    t.coder_fail = { CFace.coder_fail($0, $1, $2) }
    // Table version 2 (library 1.1): when to save, what happened last time (docs/LIFECYCLE.md).
    t.mark_dirty = { CFace.mark_dirty($0, $1) }
    t.is_dirty = { CFace.is_dirty($0) }
    t.flush = { CFace.flush($0) }
    t.event_fd = { CFace.event_fd($0) }
    t.dispatch = { CFace.dispatch($0) }
    t.next_timeout_ms = { CFace.next_timeout_ms($0) }
    t.start_autosave_thread = { CFace.start_autosave_thread($0) }
    t.save_on_signals = { CFace.save_on_signals($0, $1, $2) }
    t.last_restore_reason = { CFace.last_restore_reason($0) }
    t.restore_generation = { CFace.restore_generation($0, $1) }
    t.restore_reason_name = { CFace.restore_reason_name($0) }
    // Table version 2 (library 1.1): surviving change (docs/EVOLUTION.md).
    t.last_restore_skips = { CFace.last_restore_skips($0, $1, $2) }
    t.skip_reason_name = { CFace.skip_reason_name($0) }
    t.encode_object_array = { CFace.encode_object_array($0, $1, $2, $3) }
    t.decode_object_array = { CFace.decode_object_array($0, $1, $2, $3, $4) }
    t.set_class_version = { CFace.set_class_version($0, $1, $2) }
    t.register_migration = { CFace.register_migration($0, $1, $2, $3, $4) }
    t.coder_class_version = { CFace.coder_class_version($0) }
    t.coder_remove = { CFace.coder_remove($0, $1) }
    t.coder_rename = { CFace.coder_rename($0, $1, $2) }
    t.extend_restoration = { CFace.extend_restoration($0, $1, $2) }
    t.complete_restoration = { CFace.complete_restoration($0, $1) }
    t.encode_os_string = { CFace.encode_os_string($0, $1, $2) }
    t.decode_os_string = { CFace.decode_os_string($0, $1, $2) }
    t.decode_string_copy = { CFace.decode_string_copy($0, $1, $2, $3, $4) }
    t.set_save_listener = { CFace.set_save_listener($0, $1, $2) }
    // Table version 3 (library 1.2): size budgets.
    t.set_object_priority = { CFace.set_object_priority($0, $1) }
    t.last_save_sizes = { CFace.last_save_sizes($0, $1, $2) }
    // Table version 3 (library 1.2), the storage door's member:
    t.close_session = { CFace.close_session($0) }
    // Table version 3 (library 1.2): sensitive values and exports.
    t.coder_set_sensitivity = { CFace.coder_set_sensitivity($0, $1, $2) }
    t.set_key_sensitivity = { CFace.set_key_sensitivity($0, $1, $2, $3) }
    t.export_state = { CFace.export_state($0, $1, $2, $3) }
    let p = UnsafeMutablePointer<rst_host_api>.allocate(capacity: 1)
    p.initialize(to: t)
    return UnsafePointer(p)
}()

extension CFace {
    /// `rst_engine_create`: the C face's, with this loader attached to an
    /// engine that has a plugin_dir.
    public static func engine_create(_ opts: UnsafePointer<rst_engine_options>!, _ out: UnsafeMutablePointer<OpaquePointer?>!) -> rst_status {
        createEngine(opts, out) { engine, directory in PluginLoader.attach(to: engine, directory: directory) }
    }
}

extension CFace {
    /// `rst_engine_create_with_store`: the table checked, the pair adopted
    /// (its `destroy` runs exactly once: here on failure, else at the
    /// engine's end), this loader attached as for rst_engine_create.
    public static func engine_create_with_store(_ opts: UnsafePointer<rst_engine_options>!, _ ops: UnsafePointer<rst_store_ops>!,
                                                _ ctx: UnsafeMutableRawPointer!, _ out: UnsafeMutablePointer<OpaquePointer?>!) -> rst_status {
        guard let ops else { return fail(.invalid, "rst_engine_create_with_store: ops is NULL") }
        if let f = checkStoreOps(ops) {
            ops.pointee.destroy?(ctx)
            return fail(f, in: "rst_engine_create_with_store")
        }
        if opts == nil || out == nil {
            ops.pointee.destroy?(ctx)
            return fail(.invalid, "rst_engine_create_with_store: \(opts == nil ? "opts" : "out") is NULL")
        }
        if isBuiltInStore(ops) && ctx == nil {
            ops.pointee.destroy?(ctx)
            return fail(.invalid, "rst_engine_create_with_store: ctx is NULL, but ops is a built-in store's table (pass the ctx rst_file_store or rst_memory_store gave)")
        }
        let store = adoptStore(ops, ctx)
        return createEngine(opts, out, store: store) { engine, directory in PluginLoader.attach(to: engine, directory: directory) }
    }
}
