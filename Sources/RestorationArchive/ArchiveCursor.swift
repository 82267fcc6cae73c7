// The one way archive bytes are walked: a position with bounded reads.
// The validator, the reader and the rewriter read through it; every varint
// goes through the one bounded varint reader (`readVarint`), and every
// length is checked against the bytes that remain before the limit.

/// A read position in archive bytes. Reads never touch a byte at or past
/// the limit they are given; a read that does not fit returns nil and
/// leaves the position where it was.
@usableFromInline @frozen
struct ArchiveCursor {
    @usableFromInline let base: UnsafeRawPointer
    /// The offset of the next byte to read.
    @usableFromInline var pos: Int

    @inlinable @inline(__always)
    init(_ base: UnsafeRawPointer, at pos: Int) {
        self.base = base
        self.pos = pos
    }

    /// Bytes between the position and `limit` (negative past it).
    @inlinable @inline(__always)
    func remaining(_ limit: Int) -> Int { limit &- pos }

    /// The byte at the position, which the caller has checked is before
    /// its limit.
    @inlinable @inline(__always)
    mutating func byte() -> UInt8 {
        let x = base.load(fromByteOffset: pos, as: UInt8.self)
        pos &+= 1
        return x
    }

    /// Moves past `n` bytes the caller has checked are there.
    @inlinable @inline(__always)
    mutating func skip(_ n: Int) { pos &+= n }

    /// The next varint (the one bounded varint reader); nil when it is cut
    /// off by `limit`, too long or overflows (`varintProblem` says which).
    @inlinable @inline(__always)
    mutating func varint(_ limit: Int) -> UInt64? {
        readVarint(base, &pos, limit)
    }

    /// Moves past the next varint without decoding it: where `varint`
    /// would leave the position, false exactly when it would return nil.
    @inlinable @inline(__always)
    mutating func skipVarint(_ limit: Int) -> Bool {
        RestorationArchive.skipVarint(base, &pos, limit)
    }

    /// `skipVarint(limit)` where `readable` bytes of the buffer may be read
    /// (its one-word path also for a varint within 8 bytes of `limit`).
    @inlinable @inline(__always)
    mutating func skipVarint(_ limit: Int, readable: Int) -> Bool {
        RestorationArchive.skipVarint(base, &pos, limit, readable: readable)
    }

    /// A varint byte length followed by that many bytes before `limit`;
    /// nil when the varint cannot be read or the bytes do not fit (the
    /// position is then after the varint, if it was read).
    @inlinable @inline(__always)
    mutating func length(_ limit: Int) -> Int? {
        guard let v = readVarint(base, &pos, limit), v <= UInt64(max(0, limit &- pos)) else { return nil }
        return Int(truncatingIfNeeded: v)
    }

    /// Why `varint(limit)` returned nil at the position.
    func varintProblem(_ limit: Int) -> VarintProblem {
        RestorationArchive.varintProblem(base, at: pos, limit)
    }

    /// The bytes from the position to `count` more, as a buffer.
    @inlinable @inline(__always)
    func bytes(_ count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + pos, count: count)
    }
}
