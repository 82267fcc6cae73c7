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
///
/// A C key (NUL-terminated) is measured with strlen and compared in place:
/// keys of at most 8 bytes by their first 8 bytes as one word (read with
/// loads inside the key), longer ones with memcmp. Nothing past the key's
/// terminator is read (sanitizer-clean).
@usableFromInline
struct KeyCache {
    @usableFromInline
    struct Entry {
        @usableFromInline var address: UnsafeRawPointer?
        @usableFromInline var count: Int
        @usableFromInline var index: UInt32
        /// The key's first 8 bytes, zero padded (ObjectNode.prefix).
        @usableFromInline var prefix: UInt64
        @usableFromInline var copy: UnsafeMutableRawPointer?
        @usableFromInline var capacity: Int

        @usableFromInline
        init(address: UnsafeRawPointer?, count: Int, index: UInt32, prefix: UInt64, copy: UnsafeMutableRawPointer?, capacity: Int) {
            self.address = address
            self.count = count
            self.index = index
            self.prefix = prefix
            self.copy = copy
            self.capacity = capacity
        }
    }

    /// Marks a key that the archive does not hold (decode side).
    @usableFromInline static let absent = UInt32.max
    private static let size = 256
    @usableFromInline let entries: UnsafeMutablePointer<Entry>

    private static let empty = Entry(address: nil, count: 0, index: 0, prefix: 0, copy: nil, capacity: 0)

    init() {
        entries = .allocate(capacity: KeyCache.size)
        entries.initialize(repeating: KeyCache.empty, count: KeyCache.size)
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
            entries[i] = KeyCache.empty
        }
    }

    @inlinable @inline(__always)
    func slot(_ p: UnsafeRawPointer) -> Int {
        // Fibonacci hashing: nearby literals spread over the whole table.
        let a = UInt64(UInt(bitPattern: p))
        return Int(truncatingIfNeeded: (a &* 0x9E37_79B9_7F4A_7C15) >> 56)
    }

    /// A key whose length is known (the Swift API, or a C key after strlen).
    @inlinable @inline(__always)
    func lookup(_ key: UnsafeRawBufferPointer) -> UInt32? {
        guard let p = key.baseAddress else { return nil }
        let e = entries + slot(p)
        guard e.pointee.address == p, e.pointee.count == key.count,
              let copy = e.pointee.copy, memcmp(copy, p, key.count) == 0 else { return nil }
        return e.pointee.index
    }

    /// A NUL-terminated C key. One of at most 8 bytes (the cached key's
    /// length) is compared byte by byte with the cached prefix, its NUL
    /// included, without measuring it first: byte i is read only after
    /// bytes 0..<i matched the cached key's, none of which is NUL, so
    /// nothing past the key's terminator is read. A longer one is measured
    /// and compared with the copy.
    @inlinable @inline(__always)
    func lookup(cString p: UnsafeRawPointer) -> UInt32? {
        let e = entries + slot(p)
        guard e.pointee.address == p else { return nil }
        let n = e.pointee.count
        if n > 8 { return lookupLong(cString: p, e) }
        var w = e.pointee.prefix
        var i = 0
        while i < n {
            if p.load(fromByteOffset: i, as: UInt8.self) != UInt8(truncatingIfNeeded: w) { return nil }
            w &>>= 8
            i &+= 1
        }
        return p.load(fromByteOffset: n, as: UInt8.self) == 0 ? e.pointee.index : nil
    }

    /// A C key whose cached key is longer than 8 bytes.
    @usableFromInline @inline(never)
    func lookupLong(cString p: UnsafeRawPointer, _ e: UnsafeMutablePointer<Entry>) -> UInt32? {
        let n = strlen(p.assumingMemoryBound(to: CChar.self))
        guard n == e.pointee.count else { return nil }
        return lookupLong(UnsafeRawBufferPointer(start: p, count: n), e)
    }

    /// A key longer than 8 bytes, compared with the copy.
    @usableFromInline @inline(never)
    func lookupLong(_ key: UnsafeRawBufferPointer, _ e: UnsafeMutablePointer<Entry>) -> UInt32? {
        guard let copy = e.pointee.copy, memcmp(copy, key.baseAddress.unsafelyUnwrapped, key.count) == 0 else { return nil }
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
            guard copy != nil else { e.pointee = KeyCache.empty; return }
        }
        copy!.copyMemory(from: p, byteCount: key.count)
        e.pointee = Entry(address: p, count: key.count, index: index, prefix: ObjectNode.prefix(key), copy: copy, capacity: capacity)
    }

    /// A C key (its bytes, without the NUL).
    func store(cKey key: UnsafeRawBufferPointer, _ index: UInt32) {
        store(key, index)
    }
}
