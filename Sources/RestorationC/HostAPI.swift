import CRestoration

/// The table plugins receive (`rst_host_api`): every function of
/// restoration.h, so a plugin never links librestoration.so and works the
/// same in a C host, restorectl, or a Swift host that carries the core
/// statically. Built once; lives for the process.
public let restorationHostAPI: UnsafePointer<rst_host_api> = {
    var t = rst_host_api()
    t.table_version = UInt32(RST_HOST_API_VERSION)
    t.table_size = UInt32(MemoryLayout<rst_host_api>.size)
    t.version = rst_version
    t.status_name = rst_status_name
    t.last_error = rst_last_error
    t.mem_free = rst_free
    t.engine_create = rst_engine_create
    t.engine_destroy = rst_engine_destroy
    t.register_object = rst_register_object
    t.unregister_object = rst_unregister_object
    t.find_object = rst_find_object
    t.object_instance = rst_object_instance
    t.object_identifier = rst_object_identifier
    t.object_parent = rst_object_parent
    t.register_class = rst_register_class
    t.set_fallback_factory = rst_set_fallback_factory
    t.save = rst_save
    t.restore = rst_restore
    t.save_to_buffer = rst_save_to_buffer
    t.restore_from_buffer = rst_restore_from_buffer
    t.discard = rst_discard
    t.read_archive_info = rst_read_archive_info
    t.last_restore_report = rst_last_restore_report
    t.encode_bool = rst_encode_bool
    t.encode_int = rst_encode_int
    t.encode_double = rst_encode_double
    t.encode_string = rst_encode_string
    t.encode_bytes = rst_encode_bytes
    t.encode_object = rst_encode_object
    t.encode_int_array = rst_encode_int_array
    t.encode_string_array = rst_encode_string_array
    t.encode_begin_record = rst_encode_begin_record
    t.encode_end_record = rst_encode_end_record
    t.coder_contains = rst_coder_contains
    t.decode_bool = rst_decode_bool
    t.decode_int = rst_decode_int
    t.decode_double = rst_decode_double
    t.decode_string = rst_decode_string
    t.decode_bytes = rst_decode_bytes
    t.decode_object = rst_decode_object
    t.decode_int_array = rst_decode_int_array
    t.decode_string_array = rst_decode_string_array
    t.decode_begin_record = rst_decode_begin_record
    t.decode_end_record = rst_decode_end_record
    t.coder_value_type = rst_coder_value_type
    t.object_path = rst_object_path
    t.object_class_name = rst_object_class_name
    t.load_plugins = rst_load_plugins
    t.list_plugins = rst_list_plugins
    t.engine_options_init = rst_engine_options_init
    let p = UnsafeMutablePointer<rst_host_api>.allocate(capacity: 1)
    p.initialize(to: t)
    return UnsafePointer(p)
}()
