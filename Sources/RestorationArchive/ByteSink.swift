// ByteSink: a growable byte buffer for the rewriter's edited records.
//
// `[UInt8].append(contentsOf:)` of a raw buffer is a generic call of about
// 150 instructions however few bytes it moves; an edited record is a few
// such pieces per field (header, length, payload). The sink grows by
// doubling and writes with plain stores and `memcpy`. It owns its memory
// (freed by `release`, which its owner calls in its `deinit`).

struct ByteSink {
    private(set) var base: UnsafeMutableRawPointer? = nil
    private(set) var count = 0
    private var capacity = 0

    /// Makes room for `n` more bytes.
    @inline(__always) mutating func reserve(_ n: Int) {
        if _slowPath(count &+ n > capacity) { grow(count &+ n) }
    }

    private mutating func grow(_ needed: Int) {
        let newCapacity = max(needed, capacity &* 2, 256)
        let p = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        if let base {
            p.copyMemory(from: base, byteCount: count)
            base.deallocate()
        }
        base = p
        capacity = newCapacity
    }

    @inline(__always) mutating func byte(_ b: UInt8) {
        reserve(1)
        base.unsafelyUnwrapped.storeBytes(of: b, toByteOffset: count, as: UInt8.self)
        count &+= 1
    }

    @inline(__always) mutating func varint(_ x: UInt64) {
        reserve(10)
        count &+= putVarint(base.unsafelyUnwrapped + count, x)
    }

    @inline(__always) mutating func bytes(_ p: UnsafeRawPointer?, _ n: Int) {
        guard n > 0, let p else { return }
        reserve(n)
        (base.unsafelyUnwrapped + count).copyMemory(from: p, byteCount: n)
        count &+= n
    }

    @inline(__always) mutating func bytes(_ b: UnsafeRawBufferPointer) { bytes(b.baseAddress, b.count) }

    /// Drops the bytes from `start` on (a record whose writing failed).
    mutating func truncate(to start: Int) {
        precondition(start >= 0 && start <= count)
        count = start
    }

    /// The bytes written (valid until the next write).
    var written: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    mutating func release() {
        base?.deallocate()
        base = nil
        count = 0
        capacity = 0
    }
}
