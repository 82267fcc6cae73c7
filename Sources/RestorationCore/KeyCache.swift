#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Maps a key's address to its index in the archive being written or read.
/// C hosts pass keys as string literals, so the same address comes back for
/// every object; a hit skips UTF-8 validation and the hash lookup. Every hit
/// is confirmed by comparing the bytes with a private copy, so a reused
/// buffer holding another key can never be mistaken for the cached one.
struct KeyCache {
    private struct Entry {
        var address: UnsafeRawPointer?
        var count: Int
        var copy: UnsafeMutableRawPointer?
        var capacity: Int
        var index: UInt32
    }

    /// Marks a key that the archive does not hold (decode side).
    static let absent = UInt32.max
    private static let size = 256
    private let entries: UnsafeMutablePointer<Entry>

    init() {
        entries = .allocate(capacity: KeyCache.size)
        entries.initialize(repeating: Entry(address: nil, count: 0, copy: nil, capacity: 0, index: 0), count: KeyCache.size)
    }

    /// Frees the copies; the cache must not be used afterwards.
    func destroy() {
        clear()
        entries.deallocate()
    }

    /// Forgets every entry (indexes belong to one archive).
    func clear() {
        for i in 0..<KeyCache.size {
            free(entries[i].copy)
            entries[i] = Entry(address: nil, count: 0, copy: nil, capacity: 0, index: 0)
        }
    }

    @inline(__always)
    private func slot(_ p: UnsafeRawPointer) -> Int {
        // Fibonacci hashing: nearby literals spread over the whole table.
        let a = UInt64(UInt(bitPattern: p))
        return Int(truncatingIfNeeded: (a &* 0x9E37_79B9_7F4A_7C15) >> 56)
    }

    @inline(__always)
    func lookup(_ key: UnsafeRawBufferPointer) -> UInt32? {
        guard let p = key.baseAddress else { return nil }
        let e = entries + slot(p)
        guard e.pointee.address == p, e.pointee.count == key.count,
              let copy = e.pointee.copy, memcmp(copy, p, key.count) == 0 else { return nil }
        return e.pointee.index
    }

    func store(_ key: UnsafeRawBufferPointer, _ index: UInt32) {
        guard let p = key.baseAddress else { return }
        let e = entries + slot(p)
        var copy = e.pointee.copy
        var capacity = e.pointee.capacity
        if copy == nil || capacity < key.count {
            free(copy)
            capacity = max(key.count, 32)
            copy = malloc(capacity)
            guard copy != nil else { e.pointee = Entry(address: nil, count: 0, copy: nil, capacity: 0, index: 0); return }
        }
        copy!.copyMemory(from: p, byteCount: key.count)
        e.pointee = Entry(address: p, count: key.count, copy: copy, capacity: capacity, index: index)
    }
}
