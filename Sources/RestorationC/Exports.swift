import CRestoration
import RestorationCFace
import RestorationPlugins

// The exported C ABI: every function of Include/restoration.h under its
// rst_* name, for librestoration.so. Each one forwards to the C face
// (RestorationCFace: `CFace.<name>`; the plugin functions and
// engine_create are the loader's, RestorationPlugins), which the host table
// given to plugins holds too. `@c @implementation` makes the compiler check
// every signature against the header. Nothing else lives here.

// MARK: Versions, errors, memory

@c @implementation
public func rst_version() -> UnsafePointer<CChar>! {
    CFace.version()
}

@c @implementation
public func rst_status_name(_ s: rst_status) -> UnsafePointer<CChar>! {
    CFace.status_name(s)
}

@c @implementation
public func rst_last_error() -> UnsafePointer<CChar>! {
    CFace.last_error()
}

@c @implementation
public func rst_free(_ p: UnsafeMutableRawPointer!) {
    CFace.mem_free(p)
}

// MARK: Engine

@c @implementation
public func rst_engine_options_init(_ opts: UnsafeMutablePointer<rst_engine_options>!, _ version: UInt32) -> rst_status {
    CFace.engine_options_init(opts, version)
}

@c @implementation
public func rst_engine_create(_ opts: UnsafePointer<rst_engine_options>!, _ out: UnsafeMutablePointer<OpaquePointer?>!) -> rst_status {
    CFace.engine_create(opts, out)
}

@c @implementation
public func rst_engine_destroy(_ e: OpaquePointer!) {
    CFace.engine_destroy(e)
}

// MARK: Objects

@c @implementation
public func rst_register_object(_ e: OpaquePointer!, _ identifier: UnsafePointer<CChar>!, _ parent: OpaquePointer!,
                                _ class_name: UnsafePointer<CChar>!, _ callbacks: UnsafePointer<rst_object_callbacks>!,
                                _ instance: UnsafeMutableRawPointer!, _ out: UnsafeMutablePointer<OpaquePointer?>!) -> rst_status {
    CFace.register_object(e, identifier, parent, class_name, callbacks, instance, out)
}

@c @implementation
public func rst_unregister_object(_ e: OpaquePointer!, _ o: OpaquePointer!) -> rst_status {
    CFace.unregister_object(e, o)
}

@c @implementation
public func rst_find_object(_ e: OpaquePointer!, _ path: UnsafePointer<CChar>!) -> OpaquePointer! {
    CFace.find_object(e, path)
}

@c @implementation
public func rst_object_instance(_ o: OpaquePointer!) -> UnsafeMutableRawPointer! {
    CFace.object_instance(o)
}

@c @implementation
public func rst_object_identifier(_ o: OpaquePointer!) -> UnsafePointer<CChar>! {
    CFace.object_identifier(o)
}

@c @implementation
public func rst_object_parent(_ o: OpaquePointer!) -> OpaquePointer! {
    CFace.object_parent(o)
}

@c @implementation
public func rst_object_path(_ o: OpaquePointer!, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>!) -> rst_status {
    CFace.object_path(o, out)
}

@c @implementation
public func rst_object_class_name(_ o: OpaquePointer!) -> UnsafePointer<CChar>! {
    CFace.object_class_name(o)
}

// MARK: Classes

@c @implementation
public func rst_register_class(_ e: OpaquePointer!, _ class_name: UnsafePointer<CChar>!, _ factory: rst_factory_fn!, _ ctx: UnsafeMutableRawPointer!) -> rst_status {
    CFace.register_class(e, class_name, factory, ctx)
}

@c @implementation
public func rst_set_fallback_factory(_ e: OpaquePointer!, _ factory: rst_factory_fn!, _ ctx: UnsafeMutableRawPointer!) -> rst_status {
    CFace.set_fallback_factory(e, factory, ctx)
}

// MARK: Save and restore

@c @implementation
public func rst_save(_ e: OpaquePointer!) -> rst_status {
    CFace.save(e)
}

@c @implementation
public func rst_restore(_ e: OpaquePointer!) -> rst_status {
    CFace.restore(e)
}

@c @implementation
public func rst_save_to_buffer(_ e: OpaquePointer!, _ out: UnsafeMutablePointer<UnsafeMutableRawPointer?>!, _ len: UnsafeMutablePointer<Int>!) -> rst_status {
    CFace.save_to_buffer(e, out, len)
}

@c @implementation
public func rst_restore_from_buffer(_ e: OpaquePointer!, _ data: UnsafeRawPointer!, _ len: Int) -> rst_status {
    CFace.restore_from_buffer(e, data, len)
}

@c @implementation
public func rst_discard(_ e: OpaquePointer!) -> rst_status {
    CFace.discard(e)
}

@c @implementation
public func rst_read_archive_info(_ path: UnsafePointer<CChar>!, _ out: UnsafeMutablePointer<UnsafeMutablePointer<rst_archive_info>?>!) -> rst_status {
    CFace.read_archive_info(path, out)
}

@c @implementation
public func rst_last_restore_report(_ e: OpaquePointer!, _ out: UnsafeMutablePointer<rst_restore_report>!) -> rst_status {
    CFace.last_restore_report(e, out)
}

// MARK: Coder: encode

@c @implementation
public func rst_encode_bool(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ v: Bool) -> rst_status {
    CFace.encode_bool(c, key, v)
}

@c @implementation
public func rst_encode_int(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ v: Int64) -> rst_status {
    CFace.encode_int(c, key, v)
}

@c @implementation
public func rst_encode_double(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ v: Double) -> rst_status {
    CFace.encode_double(c, key, v)
}

@c @implementation
public func rst_encode_string(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ utf8: UnsafePointer<CChar>!) -> rst_status {
    CFace.encode_string(c, key, utf8)
}

@c @implementation
public func rst_encode_bytes(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ p: UnsafeRawPointer!, _ n: Int) -> rst_status {
    CFace.encode_bytes(c, key, p, n)
}

@c @implementation
public func rst_encode_object(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ ref: OpaquePointer!) -> rst_status {
    CFace.encode_object(c, key, ref)
}

@c @implementation
public func rst_encode_int_array(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ v: UnsafePointer<Int64>!, _ n: Int) -> rst_status {
    CFace.encode_int_array(c, key, v, n)
}

@c @implementation
public func rst_encode_string_array(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ v: UnsafePointer<UnsafePointer<CChar>?>!, _ n: Int) -> rst_status {
    CFace.encode_string_array(c, key, v, n)
}

@c @implementation
public func rst_encode_begin_record(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!) -> rst_status {
    CFace.encode_begin_record(c, key)
}

@c @implementation
public func rst_encode_end_record(_ c: OpaquePointer!) -> rst_status {
    CFace.encode_end_record(c)
}

// MARK: Coder: decode

@c @implementation
public func rst_coder_contains(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!) -> Bool {
    CFace.coder_contains(c, key)
}

@c @implementation
public func rst_coder_value_type(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!) -> rst_value_type {
    CFace.coder_value_type(c, key)
}

@c @implementation
public func rst_decode_bool(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ out: UnsafeMutablePointer<Bool>!) -> rst_status {
    CFace.decode_bool(c, key, out)
}

@c @implementation
public func rst_decode_int(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ out: UnsafeMutablePointer<Int64>!) -> rst_status {
    CFace.decode_int(c, key, out)
}

@c @implementation
public func rst_decode_double(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ out: UnsafeMutablePointer<Double>!) -> rst_status {
    CFace.decode_double(c, key, out)
}

@c @implementation
public func rst_decode_string(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ out: UnsafeMutablePointer<UnsafePointer<CChar>?>!, _ len: UnsafeMutablePointer<Int>!) -> rst_status {
    CFace.decode_string(c, key, out, len)
}

@c @implementation
public func rst_decode_bytes(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ out: UnsafeMutablePointer<UnsafeRawPointer?>!, _ len: UnsafeMutablePointer<Int>!) -> rst_status {
    CFace.decode_bytes(c, key, out, len)
}

@c @implementation
public func rst_decode_object(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ out: UnsafeMutablePointer<OpaquePointer?>!) -> rst_status {
    CFace.decode_object(c, key, out)
}

@c @implementation
public func rst_decode_int_array(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ buf: UnsafeMutablePointer<Int64>!, _ cap: Int, _ count: UnsafeMutablePointer<Int>!) -> rst_status {
    CFace.decode_int_array(c, key, buf, cap, count)
}

@c @implementation
public func rst_decode_string_array(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ index: Int,
                                    _ out: UnsafeMutablePointer<UnsafePointer<CChar>?>!, _ len: UnsafeMutablePointer<Int>!,
                                    _ count: UnsafeMutablePointer<Int>!) -> rst_status {
    CFace.decode_string_array(c, key, index, out, len, count)
}

@c @implementation
public func rst_decode_begin_record(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!) -> rst_status {
    CFace.decode_begin_record(c, key)
}

@c @implementation
public func rst_decode_end_record(_ c: OpaquePointer!) -> rst_status {
    CFace.decode_end_record(c)
}

@c @implementation
public func rst_coder_fail(_ c: OpaquePointer!, _ status: rst_status, _ message: UnsafePointer<CChar>!) -> rst_status {
    CFace.coder_fail(c, status, message)
}

// MARK: Plugins

@c @implementation
public func rst_load_plugins(_ e: OpaquePointer!) -> rst_status {
    CFace.load_plugins(e)
}

@c @implementation
public func rst_list_plugins(_ e: OpaquePointer!, _ out: UnsafeMutablePointer<UnsafeMutablePointer<rst_plugin_info>?>!, _ count: UnsafeMutablePointer<Int>!) -> rst_status {
    CFace.list_plugins(e, out, count)
}

// MARK: When to save, what happened last time (library 1.1)

@c @implementation
public func rst_mark_dirty(_ e: OpaquePointer!, _ o: OpaquePointer!) -> rst_status {
    CFace.mark_dirty(e, o)
}

@c @implementation
public func rst_is_dirty(_ e: OpaquePointer!) -> Bool {
    CFace.is_dirty(e)
}

@c @implementation
public func rst_flush(_ e: OpaquePointer!) -> rst_status {
    CFace.flush(e)
}

@c @implementation
public func rst_event_fd(_ e: OpaquePointer!) -> Int32 {
    CFace.event_fd(e)
}

@c @implementation
public func rst_dispatch(_ e: OpaquePointer!) -> rst_status {
    CFace.dispatch(e)
}

@c @implementation
public func rst_next_timeout_ms(_ e: OpaquePointer!) -> Int64 {
    CFace.next_timeout_ms(e)
}

@c @implementation
public func rst_start_autosave_thread(_ e: OpaquePointer!) -> rst_status {
    CFace.start_autosave_thread(e)
}

@c @implementation
public func rst_save_on_signals(_ e: OpaquePointer!, _ signals: UnsafePointer<Int32>!, _ count: Int) -> rst_status {
    CFace.save_on_signals(e, signals, count)
}

@c @implementation
public func rst_last_restore_reason(_ e: OpaquePointer!) -> rst_restore_reason {
    CFace.last_restore_reason(e)
}

@c @implementation
public func rst_restore_generation(_ e: OpaquePointer!, _ generation: UInt32) -> rst_status {
    CFace.restore_generation(e, generation)
}

@c @implementation
public func rst_restore_reason_name(_ r: rst_restore_reason) -> UnsafePointer<CChar>! {
    CFace.restore_reason_name(r)
}

// MARK: skips, object arrays (docs/EVOLUTION.md)

@c @implementation
public func rst_last_restore_skips(_ e: OpaquePointer!, _ out: UnsafeMutablePointer<UnsafeMutablePointer<rst_skipped_record>?>!, _ count: UnsafeMutablePointer<Int>!) -> rst_status {
    CFace.last_restore_skips(e, out, count)
}

@c @implementation
public func rst_skip_reason_name(_ r: rst_skip_reason) -> UnsafePointer<CChar>! {
    CFace.skip_reason_name(r)
}

@c @implementation
public func rst_encode_object_array(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ v: UnsafePointer<OpaquePointer?>!, _ n: Int) -> rst_status {
    CFace.encode_object_array(c, key, v, n)
}

@c @implementation
public func rst_decode_object_array(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ index: Int, _ out: UnsafeMutablePointer<OpaquePointer?>!, _ count: UnsafeMutablePointer<Int>!) -> rst_status {
    CFace.decode_object_array(c, key, index, out, count)
}

// MARK: class versions and migrations (docs/EVOLUTION.md)

@c @implementation
public func rst_set_class_version(_ e: OpaquePointer!, _ class_name: UnsafePointer<CChar>!, _ version: UInt32) -> rst_status {
    CFace.set_class_version(e, class_name, version)
}

@c @implementation
public func rst_register_migration(_ e: OpaquePointer!, _ class_name: UnsafePointer<CChar>!, _ from_version: UInt32, _ fn: rst_migrate_fn!, _ ctx: UnsafeMutableRawPointer!) -> rst_status {
    CFace.register_migration(e, class_name, from_version, fn, ctx)
}

@c @implementation
public func rst_coder_class_version(_ c: OpaquePointer!) -> UInt32 {
    CFace.coder_class_version(c)
}

@c @implementation
public func rst_coder_remove(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!) -> rst_status {
    CFace.coder_remove(c, key)
}

@c @implementation
public func rst_coder_rename(_ c: OpaquePointer!, _ from_key: UnsafePointer<CChar>!, _ to_key: UnsafePointer<CChar>!) -> rst_status {
    CFace.coder_rename(c, from_key, to_key)
}

// MARK: restoration that finishes later (docs/EVOLUTION.md)

@c @implementation
public func rst_extend_restoration(_ e: OpaquePointer!, _ deadline_ms: UInt32, _ out: UnsafeMutablePointer<OpaquePointer?>!) -> rst_status {
    CFace.extend_restoration(e, deadline_ms, out)
}

@c @implementation
public func rst_complete_restoration(_ e: OpaquePointer!, _ t: OpaquePointer!) -> rst_status {
    CFace.complete_restoration(e, t)
}

// MARK: v1.2: file names are bytes (OS strings)

@c @implementation
public func rst_encode_os_string(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ v: UnsafePointer<CChar>!) -> rst_status {
    CFace.encode_os_string(c, key, v)
}

@c @implementation
public func rst_decode_os_string(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ out: UnsafeMutablePointer<UnsafePointer<CChar>?>!) -> rst_status {
    CFace.decode_os_string(c, key, out)
}

@c @implementation
public func rst_decode_string_copy(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ buf: UnsafeMutablePointer<CChar>!, _ cap: Int, _ len: UnsafeMutablePointer<Int>!) -> rst_status {
    CFace.decode_string_copy(c, key, buf, cap, len)
}

// MARK: library 1.2: the save listener

@c @implementation
public func rst_set_save_listener(_ e: OpaquePointer!, _ fn: rst_save_listener!, _ ctx: UnsafeMutableRawPointer!) -> rst_status {
    CFace.set_save_listener(e, fn, ctx)
}

// MARK: Library 1.2: size budgets

@c @implementation
public func rst_set_object_priority(_ o: OpaquePointer!, _ priority: Int32) -> rst_status {
    CFace.set_object_priority(o, priority)
}

@c @implementation
public func rst_last_save_sizes(_ e: OpaquePointer!, _ out: UnsafeMutablePointer<UnsafeMutablePointer<rst_size_entry>?>!, _ count: UnsafeMutablePointer<Int>!) -> rst_status {
    CFace.last_save_sizes(e, out, count)
}

// MARK: library 1.2: the storage door (restoration_store.h) and sessions

@c @implementation
public func rst_engine_create_with_store(_ opts: UnsafePointer<rst_engine_options>!, _ ops: UnsafePointer<rst_store_ops>!, _ ctx: UnsafeMutableRawPointer!, _ out: UnsafeMutablePointer<OpaquePointer?>!) -> rst_status {
    CFace.engine_create_with_store(opts, ops, ctx, out)
}

@c @implementation
public func rst_file_store(_ archive_path: UnsafePointer<CChar>!, _ ops: UnsafeMutablePointer<UnsafePointer<rst_store_ops>?>!, _ ctx: UnsafeMutablePointer<UnsafeMutableRawPointer?>!) -> rst_status {
    CFace.file_store(archive_path, ops, ctx)
}

@c @implementation
public func rst_memory_store(_ ops: UnsafeMutablePointer<UnsafePointer<rst_store_ops>?>!, _ ctx: UnsafeMutablePointer<UnsafeMutableRawPointer?>!) -> rst_status {
    CFace.memory_store(ops, ctx)
}

@c @implementation
public func rst_store_set_error(_ sentence: UnsafePointer<CChar>!) {
    CFace.store_set_error(sentence)
}

@c @implementation
public func rst_close_session(_ e: OpaquePointer!) {
    CFace.close_session(e)
}

// MARK: sensitive values and portable exports (library 1.2)

@c @implementation
public func rst_set_key_sensitivity(_ e: OpaquePointer!, _ class_name: UnsafePointer<CChar>!, _ key: UnsafePointer<CChar>!, _ s: rst_sensitivity) -> rst_status {
    CFace.set_key_sensitivity(e, class_name, key, s)
}

@c @implementation
public func rst_coder_set_sensitivity(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ s: rst_sensitivity) -> rst_status {
    CFace.coder_set_sensitivity(c, key, s)
}

@c @implementation
public func rst_export(_ e: OpaquePointer!, _ flags: UInt32, _ buf: UnsafeMutablePointer<UnsafeMutableRawPointer?>!, _ len: UnsafeMutablePointer<Int>!) -> rst_status {
    CFace.export_state(e, flags, buf, len)
}
