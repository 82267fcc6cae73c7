import CRestoration
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An `rst_engine *` the host handed the plugin (to `init` or a factory).
public struct PluginEngine: Hashable {
    public let raw: OpaquePointer

    public init(_ raw: OpaquePointer) { self.raw = raw }

    /// Registers `object` with the engine: its `encode`, `decode`,
    /// `finishedRestoring` and `released` are called through one static
    /// `rst_object_callbacks`. The engine holds a strong reference to the
    /// object until it leaves the engine (`released` is called, then the
    /// reference is dropped). A factory registers with exactly the parent and
    /// identifier it was given and returns `.raw` of the result.
    @discardableResult
    public func register(_ object: PluginRestorable, identifier: String, parent: PluginObjectRef?,
                         className: String?) throws(PluginError) -> PluginObjectRef {
        let box = Unmanaged.passRetained(ObjectBox(object))
        var out: OpaquePointer? = nil
        let api = PluginHost.api.pointee
        let s: rst_status
        if let className {
            s = api.register_object(raw, identifier, parent?.raw, className, swiftObjectCallbacks, box.toOpaque(), &out)
        } else {
            s = api.register_object(raw, identifier, parent?.raw, nil, swiftObjectCallbacks, box.toOpaque(), &out)
        }
        guard s == RST_OK, let out else {
            box.release()
            throw PluginError(s == RST_OK ? RST_ERR_INVALID : s, PluginHost.lastError)
        }
        return PluginObjectRef(out)
    }

    /// The object at "A/B/C", or nil.
    public func find(path: String) -> PluginObjectRef? {
        PluginHost.api.pointee.find_object(raw, path).map(PluginObjectRef.init)
    }

    /// Unregisters an object and its descendants (not from inside a save or
    /// restore callback: RST_ERR_STATE).
    public func unregister(_ object: PluginObjectRef) throws(PluginError) {
        try PluginError.check(PluginHost.api.pointee.unregister_object(raw, object.raw))
    }
}

/// An `rst_object *`: valid while the object is registered.
public struct PluginObjectRef: Hashable {
    public let raw: OpaquePointer

    public init(_ raw: OpaquePointer) { self.raw = raw }

    /// The identifier ("" if the host returned NULL).
    public var identifier: String {
        PluginHost.api.pointee.object_identifier(raw).map { String(cString: $0) } ?? ""
    }

    /// The parent, nil at a root.
    public var parent: PluginObjectRef? {
        PluginHost.api.pointee.object_parent(raw).map(PluginObjectRef.init)
    }

    /// The whole path "A/B/C" (built from identifiers on a host whose table
    /// lacks `object_path`).
    public var path: String {
        if PluginHost.has(\.object_path) {
            var out: UnsafeMutablePointer<CChar>? = nil
            if PluginHost.api.pointee.object_path(raw, &out) == RST_OK, let out {
                defer { PluginHost.api.pointee.mem_free(out) }
                return String(cString: out)
            }
        }
        var parts: [String] = []
        var o: PluginObjectRef? = self
        while let cur = o {
            parts.append(cur.identifier)
            o = cur.parent
        }
        return parts.reversed().joined(separator: "/")
    }

    /// The class name given at registration (nil if none, or on a host
    /// whose table lacks `object_class_name`).
    public var className: String? {
        guard PluginHost.has(\.object_class_name) else { return nil }
        return PluginHost.api.pointee.object_class_name(raw).map { String(cString: $0) }
    }

    /// The Swift object registered with `PluginEngine.register(_:...)`,
    /// if this object was registered that way by *this* plugin and is a `T`.
    /// Objects registered by C code or other plugins give nil (never a
    /// crash): only instance pointers this module handed out are trusted.
    public func object<T: AnyObject>(as type: T.Type = T.self) -> T? {
        guard let p = PluginHost.api.pointee.object_instance(raw), ObjectBox.isLive(p) else { return nil }
        return Unmanaged<ObjectBox>.fromOpaque(p).takeUnretainedValue().object as? T
    }
}

/// What a Swift plugin object does when the engine calls it. Every
/// requirement has a default that does nothing.
public protocol PluginRestorable: AnyObject {
    /// At save, in archive order. Throwing fails the save with the error
    /// (`rst_coder_fail`; a failing encode call already did).
    func encode(to coder: PluginCoder) throws(PluginError)
    /// At restore, pass 2. Throwing reports this object's restore as failed
    /// (`rst_coder_fail`): logged, not counted as restored, no
    /// `finishedRestoring`; the rest of the restore goes on. Catch what you
    /// can handle (a missing key is often fine) and decode the rest.
    func decode(from coder: PluginCoder) throws(PluginError)
    /// At restore, pass 3, after every object was decoded.
    func finishedRestoring()
    /// Once, when the object leaves the engine; the engine's reference is
    /// dropped right after.
    func released()
}

extension PluginRestorable {
    public func encode(to coder: PluginCoder) throws(PluginError) {}
    public func decode(from coder: PluginCoder) throws(PluginError) {}
    public func finishedRestoring() {}
    public func released() {}
}

/// The instance pointer handed to the engine: a retained box, so the
/// callbacks can recover the object, and a registry of live boxes, so a
/// foreign instance pointer is never mistaken for one.
final class ObjectBox {
    let object: PluginRestorable

    nonisolated(unsafe) private static var live = Set<UnsafeMutableRawPointer>()
    nonisolated(unsafe) private static var mutex: UnsafeMutablePointer<pthread_mutex_t> = {
        let m = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(m, nil)
        return m
    }()

    init(_ object: PluginRestorable) {
        self.object = object
        let p = Unmanaged.passUnretained(self).toOpaque()
        pthread_mutex_lock(ObjectBox.mutex)
        ObjectBox.live.insert(p)
        pthread_mutex_unlock(ObjectBox.mutex)
    }

    deinit {
        let p = Unmanaged.passUnretained(self).toOpaque()
        pthread_mutex_lock(ObjectBox.mutex)
        ObjectBox.live.remove(p)
        pthread_mutex_unlock(ObjectBox.mutex)
    }

    static func isLive(_ p: UnsafeMutableRawPointer) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return live.contains(p)
    }

    @inline(__always)
    static func from(_ p: UnsafeMutableRawPointer?) -> ObjectBox? {
        guard let p else { return nil }
        return Unmanaged<ObjectBox>.fromOpaque(p).takeUnretainedValue()
    }
}

/// One static callbacks struct for every Swift plugin object (the engine
/// keeps the pointer).
let swiftObjectCallbacks: UnsafePointer<rst_object_callbacks> = {
    var c = rst_object_callbacks()
    // A throw is the callback failing as a whole: reported to the host with
    // rst_coder_fail, the one rule of docs/ARCHITECTURE.md ("Errors"): an
    // encode failure fails the save, a decode failure is logged and the
    // object is not counted as restored.
    c.encode = { instance, coder in
        guard let box = ObjectBox.from(instance), let coder else { return }
        do { try box.object.encode(to: PluginCoder(coder)) } catch { reportCallbackFailure(coder, "encode", error) }
    }
    c.decode = { instance, coder in
        guard let box = ObjectBox.from(instance), let coder else { return }
        do { try box.object.decode(from: PluginCoder(coder)) } catch { reportCallbackFailure(coder, "decode", error) }
    }
    c.finished = { instance in
        ObjectBox.from(instance)?.object.finishedRestoring()
    }
    c.release = { instance in
        guard let instance else { return }
        let box = Unmanaged<ObjectBox>.fromOpaque(instance)
        box.takeUnretainedValue().object.released()
        box.release()
    }
    let p = UnsafeMutablePointer<rst_object_callbacks>.allocate(capacity: 1)
    p.initialize(to: c)
    return UnsafePointer(p)
}()

/// Tells the host that an encode or decode callback failed (`rst_coder_fail`).
/// A host whose table predates it gets the message on stderr instead, so
/// the error is never lost silently.
func reportCallbackFailure(_ coder: OpaquePointer, _ what: String, _ error: Error) {
    let status: rst_status = (error as? PluginError)?.status ?? RST_ERR_INVALID
    let message = "\(what) of a \(PluginDefinition.current?.name ?? "plugin") object threw: \(error)"
    if PluginHost.has(\rst_host_api.coder_fail), let fn = PluginHost.api.pointee.coder_fail {
        _ = message.withCString { fn(coder, status, $0) }
    } else {
        fputs("restoration plugin: \(message)\n", stderr)
    }
}
