// Low-level byte helpers shared by the writer and the reader: CRC-32C,
// LEB128 varints, zigzag, hashing, byte comparison and UTF-8 validation.

// MARK: - CRC-32C

/// The eight slicing-by-8 tables of CRC-32C (Castagnoli, reflected polynomial
/// 0x82F63B78), computed once on first use and never freed.
@usableFromInline
let crc32cTables: UnsafePointer<UInt32> = {
    let t = UnsafeMutablePointer<UInt32>.allocate(capacity: 8 * 256)
    for i in 0..<256 {
        var c = UInt32(i)
        for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
        t[i] = c
    }
    for k in 1..<8 {
        for i in 0..<256 {
            let prev = t[(k - 1) * 256 + i]
            t[k * 256 + i] = (prev >> 8) ^ t[Int(prev & 0xFF)]
        }
    }
    return UnsafePointer(t)
}()

/// CRC-32C (Castagnoli): reflected, init 0xFFFFFFFF, final xor 0xFFFFFFFF.
public enum CRC32C {
    /// The checksum of `bytes`. To checksum data in pieces, pass the previous
    /// result as `continuing`.
    public static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
        return update(crc, base, bytes.count)
    }

    public static func checksum(_ bytes: [UInt8], continuing crc: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0, continuing: crc) }
    }

    @usableFromInline
    static func update(_ crc: UInt32, _ base: UnsafeRawPointer, _ count: Int) -> UInt32 {
        let t = crc32cTables
        var c = ~crc
        var p = base
        var n = count
        while n >= 16 {
            let w0 = UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)) ^ UInt64(c)
            c = t[1792 &+ Int(w0 & 0xFF)] ^ t[1536 &+ Int((w0 &>> 8) & 0xFF)]
                ^ t[1280 &+ Int((w0 &>> 16) & 0xFF)] ^ t[1024 &+ Int((w0 &>> 24) & 0xFF)]
                ^ t[768 &+ Int((w0 &>> 32) & 0xFF)] ^ t[512 &+ Int((w0 &>> 40) & 0xFF)]
                ^ t[256 &+ Int((w0 &>> 48) & 0xFF)] ^ t[Int(w0 &>> 56)]
            let w1 = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) ^ UInt64(c)
            c = t[1792 &+ Int(w1 & 0xFF)] ^ t[1536 &+ Int((w1 &>> 8) & 0xFF)]
                ^ t[1280 &+ Int((w1 &>> 16) & 0xFF)] ^ t[1024 &+ Int((w1 &>> 24) & 0xFF)]
                ^ t[768 &+ Int((w1 &>> 32) & 0xFF)] ^ t[512 &+ Int((w1 &>> 40) & 0xFF)]
                ^ t[256 &+ Int((w1 &>> 48) & 0xFF)] ^ t[Int(w1 &>> 56)]
            p += 16
            n &-= 16
        }
        if n >= 8 {
            let w = UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)) ^ UInt64(c)
            c = t[1792 &+ Int(w & 0xFF)] ^ t[1536 &+ Int((w &>> 8) & 0xFF)]
                ^ t[1280 &+ Int((w &>> 16) & 0xFF)] ^ t[1024 &+ Int((w &>> 24) & 0xFF)]
                ^ t[768 &+ Int((w &>> 32) & 0xFF)] ^ t[512 &+ Int((w &>> 40) & 0xFF)]
                ^ t[256 &+ Int((w &>> 48) & 0xFF)] ^ t[Int(w &>> 56)]
            p += 8
            n &-= 8
        }
        while n > 0 {
            c = t[Int((c ^ UInt32(p.load(as: UInt8.self))) & 0xFF)] ^ (c &>> 8)
            p += 1
            n &-= 1
        }
        return ~c
    }
}

// MARK: - Varints

/// Bytes of the LEB128 encoding of `x` (1...10).
@inlinable @inline(__always)
func varintSize(_ x: UInt64) -> Int {
    let bits = 64 &- (x | 1).leadingZeroBitCount
    return (bits &+ 6) / 7
}

/// Writes `x` as LEB128 at `p`; returns the number of bytes written (1...10).
@inlinable @inline(__always)
func putVarint(_ p: UnsafeMutableRawPointer, _ x: UInt64) -> Int {
    if x < 0x80 {
        p.storeBytes(of: UInt8(truncatingIfNeeded: x), as: UInt8.self)
        return 1
    }
    return putVarintSlow(p, x)
}

@inlinable
func putVarintSlow(_ p: UnsafeMutableRawPointer, _ x: UInt64) -> Int {
    var v = x
    var i = 0
    while v >= 0x80 {
        p.storeBytes(of: UInt8(truncatingIfNeeded: v) | 0x80, toByteOffset: i, as: UInt8.self)
        v &>>= 7
        i &+= 1
    }
    p.storeBytes(of: UInt8(truncatingIfNeeded: v), toByteOffset: i, as: UInt8.self)
    return i &+ 1
}

@inlinable @inline(__always)
func zigzag(_ v: Int64) -> UInt64 {
    UInt64(bitPattern: (v &<< 1) ^ (v &>> 63))
}

@inlinable @inline(__always)
func unzigzag(_ u: UInt64) -> Int64 {
    Int64(bitPattern: (u &>> 1) ^ (0 &- (u & 1)))
}

/// Decodes a varint of a validated archive, never reading at or past `limit`
/// (a bad position gives a garbage value, never a fault). Advances `pos`.
@inlinable @inline(__always)
func readVarintBounded(_ base: UnsafeRawPointer, _ pos: inout Int, _ limit: Int) -> UInt64 {
    if pos < limit {
        let b = base.load(fromByteOffset: pos, as: UInt8.self)
        if b < 0x80 {
            pos &+= 1
            return UInt64(b)
        }
    }
    return readVarintBoundedSlow(base, &pos, limit)
}

@inlinable
func readVarintBoundedSlow(_ base: UnsafeRawPointer, _ pos: inout Int, _ limit: Int) -> UInt64 {
    var result: UInt64 = 0
    var shift: UInt64 = 0
    while pos < limit {
        let b = base.load(fromByteOffset: pos, as: UInt8.self)
        pos &+= 1
        if shift < 64 { result |= UInt64(b & 0x7F) &<< shift }
        if b < 0x80 { return result }
        shift &+= 7
    }
    return result
}

/// Skips a varint of a validated archive, never moving past `limit`.
@inlinable @inline(__always)
func skipVarintBounded(_ base: UnsafeRawPointer, _ pos: inout Int, _ limit: Int) {
    while pos < limit {
        let b = base.load(fromByteOffset: pos, as: UInt8.self)
        pos &+= 1
        if b < 0x80 { return }
    }
}

// MARK: - Hashing and comparison

/// A fast, seedless hash of a short byte string (keys, names). Deterministic,
/// so that nothing about the output depends on it anyway.
@inlinable @inline(__always)
func hashBytes(_ p: UnsafeRawPointer?, _ n: Int) -> UInt32 {
    var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(truncatingIfNeeded: n)
    guard let p = p else { return UInt32(truncatingIfNeeded: h &>> 32) }
    var i = 0
    while i &+ 8 <= n {
        let w = p.loadUnaligned(fromByteOffset: i, as: UInt64.self)
        h = (h ^ w) &* 0xFF51_AFD7_ED55_8CCD
        h ^= h &>> 29
        i &+= 8
    }
    if i < n {
        var w: UInt64 = 0
        var s: UInt64 = 0
        while i < n {
            w |= UInt64(p.load(fromByteOffset: i, as: UInt8.self)) &<< s
            s &+= 8
            i &+= 1
        }
        h = (h ^ w) &* 0xC4CE_B9FE_1A85_EC53
    }
    h ^= h &>> 32
    h = h &* 0x9E37_79B9_7F4A_7C15
    return UInt32(truncatingIfNeeded: h &>> 32)
}

/// memcmp(a, b, n) == 0, without libc.
@inlinable @inline(__always)
func bytesEqual(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer?, _ n: Int) -> Bool {
    guard let b = b else { return n == 0 }
    var i = 0
    while i &+ 8 <= n {
        if a.loadUnaligned(fromByteOffset: i, as: UInt64.self) != b.loadUnaligned(fromByteOffset: i, as: UInt64.self) {
            return false
        }
        i &+= 8
    }
    while i < n {
        if a.load(fromByteOffset: i, as: UInt8.self) != b.load(fromByteOffset: i, as: UInt8.self) { return false }
        i &+= 1
    }
    return true
}

// MARK: - UTF-8

/// Validates `n` bytes at `p` as UTF-8 without NUL bytes (RFC 3629: no
/// overlongs, no surrogates, nothing above U+10FFFF). Returns -1 when valid,
/// else the offset of the first offending byte (a 0 byte there means NUL).
@usableFromInline
func utf8Violation(_ p: UnsafeRawPointer, _ n: Int) -> Int {
    var i = 0
    while i < n {
        // ASCII fast path, 8 bytes at a time, stopping at a non-ASCII or NUL byte.
        while i &+ 8 <= n {
            let w = p.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            let hasZero = (w &- 0x0101_0101_0101_0101) & ~w & 0x8080_8080_8080_8080
            if (w & 0x8080_8080_8080_8080) | hasZero != 0 { break }
            i &+= 8
        }
        if i >= n { break }
        let b0 = p.load(fromByteOffset: i, as: UInt8.self)
        if b0 < 0x80 {
            if b0 == 0 { return i }
            i &+= 1
            continue
        }
        @inline(__always) func byte(_ k: Int) -> UInt8 {
            i &+ k < n ? p.load(fromByteOffset: i &+ k, as: UInt8.self) : 0
        }
        if b0 < 0xC2 { return i }
        if b0 < 0xE0 {
            if byte(1) & 0xC0 != 0x80 { return i }
            i &+= 2
        } else if b0 < 0xF0 {
            let b1 = byte(1)
            let lo: UInt8 = b0 == 0xE0 ? 0xA0 : 0x80
            let hi: UInt8 = b0 == 0xED ? 0x9F : 0xBF
            if b1 < lo || b1 > hi || byte(2) & 0xC0 != 0x80 { return i }
            i &+= 3
        } else if b0 < 0xF5 {
            let b1 = byte(1)
            let lo: UInt8 = b0 == 0xF0 ? 0x90 : 0x80
            let hi: UInt8 = b0 == 0xF4 ? 0x8F : 0xBF
            if b1 < lo || b1 > hi || byte(2) & 0xC0 != 0x80 || byte(3) & 0xC0 != 0x80 { return i }
            i &+= 4
        } else {
            return i
        }
    }
    return -1
}

/// True when the bytes are valid UTF-8 without NUL.
public func isValidArchiveText(_ bytes: UnsafeRawBufferPointer) -> Bool {
    guard let p = bytes.baseAddress else { return true }
    return utf8Violation(p, bytes.count) < 0
}
