import RestorationArchive
import RestorationCore

/// Bump allocator for the NUL-terminated copies that decode hands out as
/// `const char *`; reset when the callback that received them returns. One
/// per coder, kept as the coder's attachment (`arena(of:)`).
final class CStringArena: CoderAttachment {
    override init() { super.init() }

    /// A chunk: its size, then the previous chunk (a list, newest first).
    private struct Header {
        var size: Int
        var previous: UnsafeMutableRawPointer?
    }
    private static let headerSize = (MemoryLayout<Header>.stride + 15) & ~15
    private static let chunkSize = 64 * 1024

    /// The newest chunk; the oldest (the first allocated) is kept by reset().
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var chunk: UnsafeMutableRawPointer?
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    @usableFromInline var next: UnsafeMutableRawPointer?
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    @usableFromInline var limit: UnsafeMutableRawPointer?

    deinit {
        var c = chunk
        while let cur = c {
            c = cur.load(as: Header.self).previous
            cur.deallocate()
        }
    }

    /// A NUL-terminated copy of `bytes`, valid until `reset()`.
    @inlinable @inline(__always)
    func copy(_ bytes: UnsafeRawBufferPointer) -> UnsafePointer<CChar> {
        let n = bytes.count
        var dst = next
        if dst == nil || limit.unsafelyUnwrapped - dst.unsafelyUnwrapped <= n {
            dst = advance(n &+ 1)
        }
        let d = dst.unsafelyUnwrapped
        if n > 0, let src = bytes.baseAddress {
            // Short strings (4 to 16 bytes, what values usually are) as two
            // overlapping moves within the n bytes of `src` and the n + 1 of
            // `d`, without a call.
            copyBytes(d, src, n)
        }
        d.storeBytes(of: 0, toByteOffset: n, as: UInt8.self)
        next = d + (n &+ 1)
        return UnsafePointer(d.assumingMemoryBound(to: CChar.self))
    }

    /// A new chunk with room for `need` bytes; returns where they go.
    @usableFromInline @inline(never)
    func advance(_ need: Int) -> UnsafeMutableRawPointer {
        let size = max(need + CStringArena.headerSize, CStringArena.chunkSize)
        let base = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        base.storeBytes(of: Header(size: size, previous: chunk), as: Header.self)
        chunk = base
        limit = base + size
        return base + CStringArena.headerSize
    }

    /// The callback that received the copies returned.
    override func callbackDidEnd() { reset() }

    /// Invalidates every pointer handed out; keeps the first chunk.
    @inline(__always)
    func reset() {
        guard let c = chunk else { return }
        if c.load(as: Header.self).previous != nil { dropNewerChunks() }
        next = chunk.unsafelyUnwrapped + CStringArena.headerSize
    }

    @inline(never)
    private func dropNewerChunks() {
        var c = chunk.unsafelyUnwrapped
        while let prev = c.load(as: Header.self).previous {
            c.deallocate()
            c = prev
        }
        chunk = c
        limit = c + c.load(as: Header.self).size
    }
}

/// Calls `body` with the C-string arena of `coder` (made and attached on
/// first use), without reference counting.
@inline(__always)
func withArena<T>(_ coder: Coder, _ body: (CStringArena) -> T) -> T {
    if let ref = coder.attachmentRef {
        return Unmanaged<CStringArena>.fromOpaque(ref)._withUnsafeGuaranteedRef(body)
    }
    let arena = CStringArena()
    coder.attach(arena)
    return body(arena)
}

/// A NUL-terminated copy of `bytes`, valid until the current callback of
/// `coder` returns.
@inline(__always)
public func cString(_ bytes: UnsafeRawBufferPointer, for coder: Coder) -> UnsafePointer<CChar> {
    withArena(coder) { $0.copy(bytes) }
}
