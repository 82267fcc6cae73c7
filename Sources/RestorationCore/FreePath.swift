#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A path known to be free during one factory call of a restore.
///
/// `materialize` searches a record's container for an object already at the
/// record's path; when there is none it invokes the record's factory, which
/// registers the object at that very path, and `register` would search the
/// container again for a duplicate. `FreePath` remembers the first search's
/// answer for that call (`set` before the factory, `clear` after it):
/// `isFree` says the name is still free in the container when the container
/// is the same, has gained no child since, and the name has the same bytes.
/// Safe because the children of an object only grow while a restore runs:
/// the engine's lock is held throughout (other threads wait), and
/// `unregister` and `destroy` are refused from its callbacks, so a child
/// count that has not moved means the same children, none of them named so.
struct FreePath {
    private var container: UnsafeMutableRawPointer? = nil
    private var childCount = 0
    private var key = IdentifierKey(UnsafeRawBufferPointer(start: nil, count: 0))

    /// `key` was searched for in `container` and not found; its bytes stay
    /// valid until `clear` (materialize's come from the archive's name table).
    @inline(__always)
    mutating func set(_ container: NodeRef, _ key: IdentifierKey) {
        self.container = container.handle
        childCount = container.with { $0.childCount }
        self.key = key
    }

    @inline(__always)
    mutating func clear() { container = nil }

    /// Whether `key` is known to be free in `container` (false: search).
    @inline(__always)
    func isFree(_ key: IdentifierKey, in container: NodeRef) -> Bool {
        guard let c = self.container, c == container.handle,
              container.with({ $0.childCount }) == childCount else { return false }
        let a = key.bytes, b = self.key.bytes
        guard a.count == b.count, key.prefix == self.key.prefix else { return false }
        return a.count <= 8 || memcmp(a.baseAddress.unsafelyUnwrapped + 8, b.baseAddress.unsafelyUnwrapped + 8, a.count - 8) == 0
    }
}
