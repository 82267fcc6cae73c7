import CRestoration
import RestorationCore
#if canImport(Glibc)
import Glibc
#endif

// "Objects" of Include/restoration.h: register, find, the object's
// accessors, classes and factories, priority (plugins are the loader's:
// RestorationPlugins). Each function checks its arguments, converts
// handles, calls the core, and turns a RestorationFailure into a status
// plus rst_last_error().

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

    public static func find_object(_ e: OpaquePointer!, _ path: UnsafePointer<CChar>!) -> OpaquePointer! {
        guard let e else { _ = fail(.invalid, "rst_find_object: engine is NULL"); return nil }
        guard let path else { _ = fail(.invalid, "rst_find_object: path is NULL"); return nil }
        guard let p = String(validatingCString: path) else { _ = fail(.invalid, "rst_find_object: the path is not valid UTF-8"); return nil }
        return engine(e).find(path: p).map(handle)
    }

    public static func object_instance(_ o: OpaquePointer!) -> UnsafeMutableRawPointer! {
        guard let o else { return nil }
        return withNode(o) { $0.instance }
    }

    public static func object_identifier(_ o: OpaquePointer!) -> UnsafePointer<CChar>! {
        guard let o else { return nil }
        return withNode(o) { UnsafePointer($0.cIdentifier) }
    }

    public static func object_parent(_ o: OpaquePointer!) -> OpaquePointer! {
        guard let o else { return nil }
        return withNode(o) { $0.parentHandle.map { OpaquePointer($0) } }
    }

    public static func object_path(_ o: OpaquePointer!, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>!) -> rst_status {
        guard let o else { return fail(.invalid, "rst_object_path: object is NULL") }
        guard let out else { return fail(.invalid, "rst_object_path: out is NULL") }
        guard let p = strdup(node(o).path) else { return fail(.noMemory, "rst_object_path: out of memory") }
        out.pointee = p
        return RST_OK
    }

    public static func object_class_name(_ o: OpaquePointer!) -> UnsafePointer<CChar>! {
        guard let o else { return nil }
        return withNode(o) { $0.cClassName }
    }

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

    public static func set_fallback_factory(_ e: OpaquePointer!, _ factory: rst_factory_fn!, _ ctx: UnsafeMutableRawPointer!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_set_fallback_factory: engine is NULL") }
        engine(e).setFallbackFactory(function: factory, context: ctx)
        return RST_OK
    }

    public static func set_object_priority(_ o: OpaquePointer!, _ priority: Int32) -> rst_status {
        guard let o else { return fail(.invalid, "rst_set_object_priority: object is NULL") }
        let n = node(o)
        guard n.isRegistered else { return fail(.invalid, "rst_set_object_priority: the object is not registered") }
        n.engine.setPriority(priority, of: n)
        return RST_OK
    }
}
