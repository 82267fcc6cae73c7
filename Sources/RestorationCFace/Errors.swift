import CRestoration
import RestorationCore
#if canImport(Glibc)
import Glibc
#endif

// The thread-local last error (rst_last_error): a malloc'd C string per
// thread, replaced only by the next failing call on that thread.
private let lastErrorKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key) { p in free(p) }
    return key
}()

@usableFromInline
func setLastError(_ message: String) {
    let old = pthread_getspecific(lastErrorKey)
    pthread_setspecific(lastErrorKey, strdup(message))
    free(old)
}

func lastErrorPointer() -> UnsafePointer<CChar>? {
    pthread_getspecific(lastErrorKey).map { UnsafePointer($0.assumingMemoryBound(to: CChar.self)) }
}

@inline(__always) @usableFromInline
func cStatus(_ s: Status) -> rst_status { rst_status(rawValue: s.rawValue) }

/// Records a failure as this thread's last error and returns its status.
@inline(never)
public func fail(_ f: RestorationFailure) -> rst_status {
    setLastError(f.message)
    return cStatus(f.status)
}

/// Records a failure of the core as this thread's last error, naming the C
/// function that reported it ("rst_decode_int: record 3 ('A/B') has no key
/// 'x'"): the core's messages name no C function, so a Swift user never
/// reads one; the C face adds them where it reports to C.
@inline(never)
public func fail(_ f: RestorationFailure, in function: StaticString) -> rst_status {
    let name = "\(function)"
    setLastError(f.message.hasPrefix(name + ":") ? f.message : name + ": " + f.message)
    return cStatus(f.status)
}

@inline(never)
public func fail(_ status: Status, _ message: String) -> rst_status {
    setLastError(message)
    return cStatus(status)
}

/// A static C string from a literal.
@inline(__always)
func staticCString(_ s: StaticString) -> UnsafePointer<CChar> {
    UnsafeRawPointer(s.utf8Start).assumingMemoryBound(to: CChar.self)
}

@inline(__always)
func keyBytes(_ key: UnsafePointer<CChar>) -> KeyBytes {
    KeyBytes(UnsafeRawBufferPointer(start: key, count: strlen(key)))
}

// Handles are the core objects' addresses (Unmanaged, unretained except the
// engine, which rst_engine_create retains and rst_engine_destroy releases).
@inline(__always) public func engine(_ p: OpaquePointer) -> Engine { Engine.from(handle: UnsafeRawPointer(p)) }
@inline(__always) func node(_ p: OpaquePointer) -> ObjectNode { ObjectNode.from(handle: UnsafeRawPointer(p)) }
/// The node behind a handle, without retain/release (accessors called per
/// object from callbacks: the node's reference count stays untouched).
@inline(__always) func withNode<T>(_ p: OpaquePointer, _ body: (ObjectNode) -> T) -> T {
    Unmanaged<ObjectNode>.fromOpaque(UnsafeRawPointer(p))._withUnsafeGuaranteedRef(body)
}
@inline(__always) func coder(_ p: OpaquePointer) -> Coder { Coder.from(handle: UnsafeRawPointer(p)) }
@inline(__always) func handle(_ e: Engine) -> OpaquePointer { OpaquePointer(e.handle) }
@inline(__always) func handle(_ n: ObjectNode) -> OpaquePointer { OpaquePointer(n.handle) }
@inline(__always) func handle(_ c: Coder) -> OpaquePointer { OpaquePointer(c.handle) }

/// `rst_object_callbacks` as the core's `ObjectCallbacks`: the same four
/// optional function pointers in the same order (checked by
/// `callbackLayoutsMatch`, asserted in debug builds and by a test).
@inline(__always)
func objectCallbacks(_ p: UnsafePointer<rst_object_callbacks>) -> UnsafePointer<ObjectCallbacks> {
    assert(callbackLayoutsMatch, "rst_object_callbacks and ObjectCallbacks differ")
    return UnsafeRawPointer(p).assumingMemoryBound(to: ObjectCallbacks.self)
}

/// Whether `rst_object_callbacks` and `ObjectCallbacks` have one layout.
public let callbackLayoutsMatch: Bool = {
    typealias C = rst_object_callbacks
    typealias S = ObjectCallbacks
    return MemoryLayout<C>.size == MemoryLayout<S>.size && MemoryLayout<C>.alignment == MemoryLayout<S>.alignment
        && MemoryLayout<C>.offset(of: \C.encode) == MemoryLayout<S>.offset(of: \S.encode)
        && MemoryLayout<C>.offset(of: \C.decode) == MemoryLayout<S>.offset(of: \S.decode)
        && MemoryLayout<C>.offset(of: \C.finished) == MemoryLayout<S>.offset(of: \S.finished)
        && MemoryLayout<C>.offset(of: \C.release) == MemoryLayout<S>.offset(of: \S.release)
}()
