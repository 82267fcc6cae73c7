// Low-level byte helpers shared by the writer and the reader: CRC-32C,
// LEB128 varints, zigzag, hashing, byte comparison and UTF-8 validation.

import CCRC32C

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

    /// The checksum computed in software whatever the CPU has (for tests
    /// that compare the two paths).
    public static func softwareChecksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
        return ~software(~crc, base, bytes.count, nil)
    }

    /// The CRC of `count` bytes at `base`, continuing `crc` (a final value).
    @usableFromInline
    static func update(_ crc: UInt32, _ base: UnsafeRawPointer, _ count: Int) -> UInt32 {
        ~run(~crc, base, count, nil)
    }

    /// Copies `count` bytes from `src` to `dst` (which must not overlap) and
    /// returns their CRC, continuing `crc`, in one pass over the data.
    @usableFromInline
    static func copy(_ crc: UInt32, from src: UnsafeRawPointer, to dst: UnsafeMutableRawPointer, _ count: Int) -> UInt32 {
        ~run(~crc, src, count, dst)
    }

    @inline(__always)
    static func slice8(_ t: UnsafePointer<UInt32>, _ w: UInt64) -> UInt32 {
        t[1792 &+ Int(w & 0xFF)] ^ t[1536 &+ Int((w &>> 8) & 0xFF)]
            ^ t[1280 &+ Int((w &>> 16) & 0xFF)] ^ t[1024 &+ Int((w &>> 24) & 0xFF)]
            ^ t[768 &+ Int((w &>> 32) & 0xFF)] ^ t[512 &+ Int((w &>> 40) & 0xFF)]
            ^ t[256 &+ Int((w &>> 48) & 0xFF)] ^ t[Int(w &>> 56)]
    }

    /// Bytes per stream of the three-stream loop.
    static let streamBytes = 8192

    /// True when the CPU's CRC-32C instruction is used (x86-64 with SSE4.2,
    /// detected once at run time); otherwise the slicing-by-8 code below.
    public static let hardware: Bool = restoration_crc32c_hw_available() != 0

    /// Runs the raw CRC register `c` over the bytes (no pre/post inversion),
    /// optionally copying them to `dst`: with the CPU instruction when there
    /// is one, else in software.
    @inline(__always)
    static func run(_ c0: UInt32, _ base: UnsafeRawPointer, _ count: Int, _ dst: UnsafeMutableRawPointer?) -> UInt32 {
        if hardware {
            if let dst { dst.copyMemory(from: base, byteCount: count) }
            return restoration_crc32c_hw_run(c0, base, count)
        }
        return software(c0, base, count, dst)
    }

    /// The raw register over the bytes in software (kept and tested on every
    /// machine: `CRC32C.softwareChecksum`). Large inputs run as three
    /// interleaved slicing-by-8 streams whose registers are combined with
    /// precomputed shift constants (x^(8L) and x^(16L) mod P).
    @inline(__always)
    static func software(_ c0: UInt32, _ base: UnsafeRawPointer, _ count: Int, _ dst: UnsafeMutableRawPointer?) -> UInt32 {
        let t = crc32cTables
        var c = c0
        var p = base
        var n = count
        var out = dst
        let L = streamBytes
        if n >= 3 * L {
            let shiftL = crc32cShiftL, shift2L = crc32cShift2L
            while n >= 3 * L {
                var a = c, b: UInt32 = 0, d: UInt32 = 0
                var i = 0
                while i < L {
                    let wa = p.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                    let wb = p.loadUnaligned(fromByteOffset: i &+ L, as: UInt64.self)
                    let wd = p.loadUnaligned(fromByteOffset: i &+ 2 &* L, as: UInt64.self)
                    if let o = out {
                        o.storeBytes(of: wa, toByteOffset: i, as: UInt64.self)
                        o.storeBytes(of: wb, toByteOffset: i &+ L, as: UInt64.self)
                        o.storeBytes(of: wd, toByteOffset: i &+ 2 &* L, as: UInt64.self)
                    }
                    a = slice8(t, UInt64(littleEndian: wa) ^ UInt64(a))
                    b = slice8(t, UInt64(littleEndian: wb) ^ UInt64(b))
                    d = slice8(t, UInt64(littleEndian: wd) ^ UInt64(d))
                    i &+= 8
                }
                c = crc32cMultiply(shift2L, a) ^ crc32cMultiply(shiftL, b) ^ d
                p += 3 &* L
                out = out.map { $0 + 3 &* L }
                n &-= 3 &* L
            }
        }
        while n >= 8 {
            let w = p.loadUnaligned(as: UInt64.self)
            if let o = out {
                o.storeBytes(of: w, as: UInt64.self)
                out = o + 8
            }
            c = slice8(t, UInt64(littleEndian: w) ^ UInt64(c))
            p += 8
            n &-= 8
        }
        while n > 0 {
            let byte = p.load(as: UInt8.self)
            if let o = out {
                o.storeBytes(of: byte, as: UInt8.self)
                out = o + 1
            }
            c = t[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c &>> 8)
            p += 1
            n &-= 1
        }
        return c
    }
}

/// a(x) * b(x) mod P(x) in the reflected bit order of CRC-32C (a != 0).
func crc32cMultiply(_ a: UInt32, _ b: UInt32) -> UInt32 {
    var m: UInt32 = 1 << 31
    var p: UInt32 = 0
    var b = b
    while true {
        if a & m != 0 {
            p ^= b
            if a & (m &- 1) == 0 { break }
        }
        m &>>= 1
        b = b & 1 != 0 ? (b &>> 1) ^ 0x82F6_3B78 : b &>> 1
    }
    return p
}

/// x^(8n) mod P: the operator that shifts a CRC register over n zero bytes.
func crc32cShiftOperator(bytes n: Int) -> UInt32 {
    // x^(2^k) mod P for k = 0, 1, 2, ...
    var powers: [UInt32] = []
    var q: UInt32 = 1 << 30 // x^1
    for _ in 0..<64 {
        powers.append(q)
        q = crc32cMultiply(q, q)
    }
    var result: UInt32 = 1 << 31 // x^0
    var bits = n * 8
    var k = 0
    while bits != 0 {
        if bits & 1 != 0 { result = crc32cMultiply(powers[k], result) }
        bits >>= 1
        k += 1
    }
    return result
}

let crc32cShiftL: UInt32 = crc32cShiftOperator(bytes: CRC32C.streamBytes)
let crc32cShift2L: UInt32 = crc32cShiftOperator(bytes: 2 * CRC32C.streamBytes)

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

/// Writes `x` (at least 2^21: 4 to 10 bytes) as LEB128 at `p` without a
/// byte loop; returns the number of bytes written. The 7-bit groups of the
/// low 56 bits are spread over the 8 bytes of one word by three
/// mask-and-shift steps (`varintGroups` undone), the continuation bits set
/// by the length, the word stored whole; a 9th and 10th byte follow for
/// a value of 57 bits or more. The same bytes as `putVarintSlow`; the
/// caller has 10 writable bytes at `p` (bytes of the word past the
/// varint's end are scratch, not covered by the writer's count).
@inlinable @inline(__always)
func putLongVarint(_ p: UnsafeMutableRawPointer, _ x: UInt64) -> Int {
    var w = x & 0x00FF_FFFF_FFFF_FFFF
    w = (w & 0x0000_0000_0FFF_FFFF) | ((w & 0x00FF_FFFF_F000_0000) &<< 4)
    w = (w & 0x0000_3FFF_0000_3FFF) | ((w & 0x0FFF_C000_0FFF_C000) &<< 2)
    w = (w & 0x007F_007F_007F_007F) | ((w & 0x3F80_3F80_3F80_3F80) &<< 1)
    if x < 1 &<< 56 {
        let len = varintSize(x)                                  // 4...8
        w |= 0x8080_8080_8080_8080 &>> UInt64((9 &- len) &* 8)   // every byte but the last continues
        p.storeBytes(of: w.littleEndian, as: UInt64.self)
        return len
    }
    p.storeBytes(of: (w | 0x8080_8080_8080_8080).littleEndian, as: UInt64.self)
    let top = x &>> 56                                          // bits 56...63
    if top < 0x80 {
        p.storeBytes(of: UInt8(truncatingIfNeeded: top), toByteOffset: 8, as: UInt8.self)
        return 9
    }
    p.storeBytes(of: UInt8(truncatingIfNeeded: top), toByteOffset: 8, as: UInt8.self)   // bit 7 set: continues
    p.storeBytes(of: UInt8(1), toByteOffset: 9, as: UInt8.self)
    return 10
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

/// The one varint reader (validator and reader alike): decodes the LEB128
/// varint at `pos`, never reading at or past `limit`, and advances `pos`.
/// Returns nil, with `pos` unchanged, when the varint is cut off by `limit`,
/// is longer than 10 bytes, or overflows 64 bits (see `varintProblem` for
/// which). One to three bytes are decoded inline.
@inlinable @inline(__always)
func readVarint(_ base: UnsafeRawPointer, _ pos: inout Int, _ limit: Int) -> UInt64? {
    let p = pos
    if p < limit {
        let x = base.load(fromByteOffset: p, as: UInt8.self)
        if x < 0x80 {
            pos = p &+ 1
            return UInt64(x)
        }
        if limit &- p >= 3 {
            var r = UInt64(x & 0x7F)
            let y = base.load(fromByteOffset: p &+ 1, as: UInt8.self)
            r |= UInt64(y & 0x7F) &<< 7
            if y < 0x80 {
                pos = p &+ 2
                return r
            }
            let z = base.load(fromByteOffset: p &+ 2, as: UInt8.self)
            if z < 0x80 {
                pos = p &+ 3
                return r | (UInt64(z) &<< 14)
            }
        }
    }
    return readVarintSlow(base, &pos, limit)
}

/// The varint at the start of the 8 bytes `w` (loaded little-endian) and
/// its length, when it ends within them (1 to 8 bytes: such a varint can
/// neither be too long nor overflow); nil when all 8 bytes continue. The
/// end is the first byte below 0x80; the 7-bit groups are packed by
/// `varintGroups`.
@inlinable @inline(__always)
func varintInWord(_ w: UInt64) -> (UInt64, Int)? {
    let stops = ~w & 0x8080_8080_8080_8080
    if stops == 0 { return nil }
    let len = (stops.trailingZeroBitCount &+ 1) &>> 3          // 1...8
    return (varintGroups(len == 8 ? w : w & ((1 &<< UInt64(len &* 8)) &- 1)), len)
}

/// The 7-bit groups of the 8 bytes `w` (loaded little-endian), packed into
/// 56 bits by three mask-and-shift steps (the continuation bits dropped).
@inlinable @inline(__always)
func varintGroups(_ w: UInt64) -> UInt64 {
    var x = w & 0x7F7F_7F7F_7F7F_7F7F
    x = (x & 0x007F_007F_007F_007F) | ((x & 0x7F00_7F00_7F00_7F00) &>> 1)
    x = (x & 0x0000_3FFF_0000_3FFF) | ((x & 0x3FFF_0000_3FFF_0000) &>> 2)
    x = (x & 0x0000_0000_0FFF_FFFF) | ((x & 0x0FFF_FFFF_0000_0000) &>> 4)
    return x
}

/// The varint at `p` whose first 8 bytes, `w` (loaded little-endian), all
/// continue: 9 or 10 bytes (a full-range or negative 64-bit int), and
/// where it ends, when `readable` bytes at `p` hold it. The 10th byte may
/// only be 0 or 1 (bit 63, no continuation): anything else is too long or
/// overflows. nil then, or when it needs more than `readable` bytes (the
/// bounded reader tells which).
@inlinable @inline(__always)
func longVarint(_ base: UnsafeRawPointer, _ p: Int, _ w: UInt64, readable: Int) -> (UInt64, Int)? {
    guard readable >= 10 else { return nil }
    let b8 = base.load(fromByteOffset: p &+ 8, as: UInt8.self)
    let b9 = base.load(fromByteOffset: p &+ 9, as: UInt8.self)
    let x = varintGroups(w) | (UInt64(b8 & 0x7F) &<< 56)
    if b8 < 0x80 { return (x, p &+ 9) }
    guard b9 <= 1 else { return nil }
    return (x | (UInt64(b9) &<< 63), p &+ 10)
}

/// The varint at `p` and where it ends, from one word load (two more
/// bytes for one of 9 or 10), when `readable` bytes at `p` hold it (at
/// least 8 always, 10 for one longer than 8); nil otherwise, and for a
/// varint the bounded reader refuses. The caller checks the end against
/// its limit.
@inlinable @inline(__always)
func wordVarint(_ base: UnsafeRawPointer, _ p: Int, readable: Int) -> (UInt64, Int)? {
    guard readable >= 8 else { return nil }
    let w = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: p, as: UInt64.self))
    if let (x, len) = varintInWord(w) { return (x, p &+ len) }
    return longVarint(base, p, w, readable: readable)
}

@inlinable @inline(never)
func readVarintSlow(_ base: UnsafeRawPointer, _ pos: inout Int, _ limit: Int) -> UInt64? {
    // With 8 readable: one word load; a varint of 4 to 8 bytes (an int of
    // up to 56 bits, e.g. a 32-bit value) ends within it, one of 9 or 10
    // (a full-range or negative 64-bit int) takes its last two bytes from
    // beyond it.
    let p = pos
    if limit &- p >= 8 {
        let w = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: p, as: UInt64.self))
        if let (x, len) = varintInWord(w) {
            pos = p &+ len
            return x
        }
        if limit &- p >= 10 {
            guard let (x, e) = longVarint(base, p, w, readable: 10) else { return nil }
            pos = e
            return x
        }
    }
    // Fewer than 10 bytes before limit: byte by byte.
    var q = p
    var result: UInt64 = 0
    var shift: UInt64 = 0
    var i = 0
    while q < limit {
        let x = base.load(fromByteOffset: q, as: UInt8.self)
        q &+= 1
        if i == 9 && x > 1 { return nil }       // an 11th byte, or bits past 64
        result |= UInt64(x & 0x7F) &<< shift
        if x < 0x80 {
            pos = q
            return result
        }
        shift &+= 7
        i &+= 1
    }
    return nil                                  // cut off by limit
}

/// Where the varint at `p` ends when it is longer than 8 bytes (its first
/// 8 all continue), for a reader that has `readable` bytes at `p` and
/// needs only its end: 0 when it is too long, overflows 64 bits, or needs
/// more than `readable` bytes (the varint reader says which). Out of line:
/// the validator's runs of common fields stay as small as they were.
@inline(never)
func longVarintEnd(_ base: UnsafeRawPointer, _ p: Int, readable: Int) -> Int {
    guard readable >= 10 else { return 0 }
    if base.load(fromByteOffset: p &+ 8, as: UInt8.self) < 0x80 { return p &+ 9 }
    return base.load(fromByteOffset: p &+ 9, as: UInt8.self) <= 1 ? p &+ 10 : 0
}

/// Moves `pos` past the varint there without decoding it, for a reader
/// that needs only where the varint ends (the validator's int values, the
/// reader's field walk): it leaves `pos` exactly where `readVarint` would,
/// and returns false, with `pos` unchanged, exactly when `readVarint`
/// returns nil. With 8 bytes readable, a varint of up to 8 bytes is found
/// from one word (its end is the first byte below 0x80; a varint that short
/// can be neither too long nor overflow); any other goes through the
/// varint reader.
@inlinable @inline(__always)
func skipVarint(_ base: UnsafeRawPointer, _ pos: inout Int, _ limit: Int) -> Bool {
    let p = pos
    if limit &- p >= 8 {
        let w = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: p, as: UInt64.self))
        let stops = ~w & 0x8080_8080_8080_8080
        if stops != 0 {
            pos = p &+ ((stops.trailingZeroBitCount &+ 1) &>> 3)
            return true
        }
    }
    return readVarintSlow(base, &pos, limit) != nil
}

/// `skipVarint` for a varint that must end by `limit` in a buffer of which
/// `readable` bytes may be read (`limit <= readable`): the word is loaded
/// when 8 bytes are readable, even when fewer than 8 remain before
/// `limit` (a record's last field). A varint whose first stop byte lies at
/// or past `limit` has only continuation bytes before `limit`, so the
/// reader would call it cut off: false, `pos` unchanged, as `skipVarint`
/// with `limit` gives. Anything else goes through `skipVarint`.
@inlinable @inline(__always)
func skipVarint(_ base: UnsafeRawPointer, _ pos: inout Int, _ limit: Int, readable: Int) -> Bool {
    let p = pos
    if readable &- p >= 8 {
        let w = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: p, as: UInt64.self))
        let stops = ~w & 0x8080_8080_8080_8080
        if stops != 0 {
            let e = p &+ ((stops.trailingZeroBitCount &+ 1) &>> 3)
            if e > limit { return false }
            pos = e
            return true
        }
    }
    return skipVarint(base, &pos, limit)
}

/// Why `readVarint` returned nil at `pos` (for messages).
enum VarintProblem { case cutOff, tooLong, overflow }

func varintProblem(_ base: UnsafeRawPointer, at pos: Int, _ limit: Int) -> VarintProblem {
    var p = pos
    var i = 0
    while p < limit {
        let x = base.load(fromByteOffset: p, as: UInt8.self)
        p += 1
        if i == 9 && x > 1 { return x & 0x80 != 0 ? .tooLong : .overflow }
        if x < 0x80 { break }
        i += 1
    }
    return .cutOff
}

// MARK: - Hashing and comparison

/// The last 8 bytes of a string of n >= 8 bytes, or, for n < 8, its bytes
/// packed into one word without loops: together with the full 8-byte words
/// before it, this covers every byte exactly enough to tell strings of the
/// same length apart.
@inlinable @inline(__always)
func tailWord(_ p: UnsafeRawPointer, _ n: Int) -> UInt64 {
    if n >= 8 { return p.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self) }
    if n >= 4 {
        let lo = UInt64(p.loadUnaligned(as: UInt32.self))
        let hi = UInt64(p.loadUnaligned(fromByteOffset: n &- 4, as: UInt32.self))
        return lo | (hi &<< 32)
    }
    if n > 0 {
        let a = UInt64(p.load(as: UInt8.self))
        let b = UInt64(p.load(fromByteOffset: n &>> 1, as: UInt8.self))
        let c = UInt64(p.load(fromByteOffset: n &- 1, as: UInt8.self))
        return a | (b &<< 8) | (c &<< 16)
    }
    return 0
}

/// A fast, seedless hash of a short byte string (keys, names). Deterministic,
/// though nothing in the output depends on it.
@inlinable @inline(__always)
func hashBytes(_ p: UnsafeRawPointer?, _ n: Int) -> UInt32 {
    var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(truncatingIfNeeded: n)
    guard let p = p, n > 0 else { return UInt32(truncatingIfNeeded: (h &* 0xC4CE_B9FE_1A85_EC53) &>> 32) }
    var i = 0
    while i &+ 8 < n {
        let w = p.loadUnaligned(fromByteOffset: i, as: UInt64.self)
        h = (h ^ w) &* 0xFF51_AFD7_ED55_8CCD
        h ^= h &>> 29
        i &+= 8
    }
    h = (h ^ tailWord(p, n)) &* 0xC4CE_B9FE_1A85_EC53
    h ^= h &>> 32
    h = h &* 0x9E37_79B9_7F4A_7C15
    return UInt32(truncatingIfNeeded: h &>> 32)
}

/// memcmp(a, b, n) == 0, without libc.
@inlinable @inline(__always)
func bytesEqual(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer?, _ n: Int) -> Bool {
    guard let b = b, n > 0 else { return n == 0 }
    var i = 0
    while i &+ 8 < n {
        if a.loadUnaligned(fromByteOffset: i, as: UInt64.self) != b.loadUnaligned(fromByteOffset: i, as: UInt64.self) {
            return false
        }
        i &+= 8
    }
    return tailWord(a, n) == tailWord(b, n)
}

/// memcpy for the short strings values usually are: up to 16 bytes inline
/// with overlapping word moves, longer ones through the standard library.
/// The writer reserves capacity beyond `n`, and `n > 0` (the C face's
/// C-string arena copies decoded strings with it too).
@inlinable @inline(__always)
public func copyBytes(_ dst: UnsafeMutableRawPointer, _ src: UnsafeRawPointer, _ n: Int) {
    if n >= 8 && n <= 16 {
        let a = src.loadUnaligned(as: UInt64.self)
        let b = src.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self)
        dst.storeBytes(of: a, as: UInt64.self)
        dst.storeBytes(of: b, toByteOffset: n &- 8, as: UInt64.self)
    } else if n >= 4 && n < 8 {
        let a = src.loadUnaligned(as: UInt32.self)
        let b = src.loadUnaligned(fromByteOffset: n &- 4, as: UInt32.self)
        dst.storeBytes(of: a, as: UInt32.self)
        dst.storeBytes(of: b, toByteOffset: n &- 4, as: UInt32.self)
    } else if n < 4 {
        var i = 0
        while i < n {
            dst.storeBytes(of: src.load(fromByteOffset: i, as: UInt8.self), toByteOffset: i, as: UInt8.self)
            i &+= 1
        }
    } else {
        dst.copyMemory(from: src, byteCount: n)
    }
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

/// The `n` bytes at `p` of a short text (at most 16) as two words, for a
/// check without a loop: bytes past `n` read as 0x01 (an ASCII byte that
/// is not NUL), and the two words overlap when n > 8. nil when n > 16, or
/// when n < 8 and fewer than 8 bytes can be read at `p` (`readable`: the
/// bytes readable there, at least n); then the caller takes the general
/// way. Nothing is read outside p ..< p + max(n, min(8, readable)).
@inlinable @inline(__always)
func shortTextWords(_ p: UnsafeRawPointer, _ n: Int, readable: Int) -> (UInt64, UInt64)? {
    if n >= 8 {
        guard n <= 16 else { return nil }
        return (UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)),
                UInt64(littleEndian: p.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self)))
    }
    if n == 0 { return (0x0101_0101_0101_0101, 0x0101_0101_0101_0101) }
    guard readable >= 8 else { return nil }
    let keep: UInt64 = (1 &<< UInt64(n &* 8)) &- 1
    let w = (UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)) & keep) | (0x0101_0101_0101_0101 & ~keep)
    return (w, w)
}

/// True when every byte of `w` is ASCII and not NUL (1...127).
@inlinable @inline(__always)
func wordIsASCIIWithoutNUL(_ w: UInt64) -> Bool {
    ((w &- 0x0101_0101_0101_0101) | w) & 0x8080_8080_8080_8080 == 0
}

/// True when some byte of `w` is `byte` (for words whose bytes are all
/// ASCII: exact then).
@inlinable @inline(__always)
func wordHasByte(_ w: UInt64, _ byte: UInt8) -> Bool {
    let x = w ^ (UInt64(byte) &* 0x0101_0101_0101_0101)
    return (x &- 0x0101_0101_0101_0101) & ~x & 0x8080_8080_8080_8080 != 0
}

/// `utf8Violation(p, n) < 0` for text, without a call for the short ASCII
/// text values usually are: at most 16 ASCII bytes without NUL are
/// checked with two word loads (`shortTextWords`); anything else goes to
/// `utf8Violation`. `readable`: the bytes that can be read at `p`.
@inlinable @inline(__always)
func isText(_ p: UnsafeRawPointer, _ n: Int, readable: Int) -> Bool {
    if let (a, b) = shortTextWords(p, n, readable: readable),
       wordIsASCIIWithoutNUL(a) && wordIsASCIIWithoutNUL(b) {
        return true
    }
    return utf8Violation(p, n) < 0
}

/// True when the bytes are valid UTF-8 without NUL.
public func isValidArchiveText(_ bytes: UnsafeRawBufferPointer) -> Bool {
    guard let p = bytes.baseAddress else { return true }
    return utf8Violation(p, bytes.count) < 0
}

// MARK: - Hash index

/// An open-addressing hash index in the style of Swiss tables: one control
/// byte per slot (0x80 empty, else a 7-bit tag of the hash) probed eight at
/// a time with SWAR, plus a UInt32 payload per slot (an entry index). The
/// entries themselves live elsewhere (a string arena, the archive, the
/// record table); only a matching tag leads to them. The control bytes are a
/// fifth of the memory of the slots, so they stay in cache where a table of
/// 64-bit slots would not: inserting a new string costs one cached load and
/// one store. No deletions, load factor at most 1/2.
@usableFromInline
struct HashIndex {
    /// capacity + 8 bytes: the first 8 are mirrored at the end so that a
    /// group of 8 can be loaded at any slot.
    @usableFromInline var ctrl: UnsafeMutablePointer<UInt8>
    @usableFromInline var slots: UnsafeMutablePointer<UInt32>
    @usableFromInline var mask: Int
    @usableFromInline var count: Int

    /// Room for `n` entries at load factor 1/2.
    init(capacityFor n: Int) {
        var size = 16
        while size < n * 2 { size *= 2 }
        ctrl = UnsafeMutablePointer<UInt8>.allocate(capacity: size + 8)
        ctrl.initialize(repeating: 0x80, count: size + 8)
        slots = UnsafeMutablePointer<UInt32>.allocate(capacity: size)
        mask = size - 1
        count = 0
    }

    init(copying o: HashIndex) {
        let size = o.mask + 1
        ctrl = UnsafeMutablePointer<UInt8>.allocate(capacity: size + 8)
        ctrl.initialize(from: o.ctrl, count: size + 8)
        slots = UnsafeMutablePointer<UInt32>.allocate(capacity: size)
        slots.initialize(from: o.slots, count: size)
        mask = o.mask
        count = o.count
    }

    func release() {
        ctrl.deallocate()
        slots.deallocate()
    }

    mutating func removeAll() {
        ctrl.update(repeating: 0x80, count: mask + 1 + 8)
        count = 0
    }

    @inlinable @inline(__always)
    static func tag(_ h: UInt32) -> UInt8 { UInt8(truncatingIfNeeded: h &>> 25) }

    /// Looks for an entry with hash `h` for which `equals(entry)` is true.
    /// Returns it, or nil and the slot where it would be inserted.
    @inlinable @inline(__always)
    static func find(_ ctrl: UnsafePointer<UInt8>, _ slots: UnsafePointer<UInt32>, _ mask: Int,
                     _ h: UInt32, _ equals: (UInt32) -> Bool) -> (UInt32?, Int) {
        let tag = HashIndex.tag(h)
        let pattern = UInt64(tag) &* 0x0101_0101_0101_0101
        var pos = Int(truncatingIfNeeded: h) & mask
        while true {
            let g = UInt64(littleEndian: UnsafeRawPointer(ctrl + pos).loadUnaligned(as: UInt64.self))
            let x = g ^ pattern
            // Bytes of g equal to the tag (plus rare false positives, weeded out below).
            var m = (x &- 0x0101_0101_0101_0101) & ~x & 0x8080_8080_8080_8080
            while m != 0 {
                let s = (pos &+ (m.trailingZeroBitCount &>> 3)) & mask
                if ctrl[s] == tag {
                    let e = slots[s]
                    if equals(e) { return (e, s) }
                }
                m &= m &- 1
            }
            let empty = g & 0x8080_8080_8080_8080
            if empty != 0 { return (nil, (pos &+ (empty.trailingZeroBitCount &>> 3)) & mask) }
            pos = (pos &+ 8) & mask
        }
    }

    @inlinable @inline(__always)
    func find(_ h: UInt32, _ equals: (UInt32) -> Bool) -> (UInt32?, Int) {
        HashIndex.find(ctrl, slots, mask, h, equals)
    }

    /// Fills an empty slot found by `find`. The caller grows the index when
    /// `needsGrowth` says so.
    @inlinable @inline(__always)
    mutating func insert(at s: Int, _ h: UInt32, _ entry: UInt32) {
        let tag = HashIndex.tag(h)
        ctrl[s] = tag
        if s < 8 { ctrl[mask &+ 1 &+ s] = tag }
        slots[s] = entry
        count &+= 1
    }

    @inlinable var needsGrowth: Bool { count &* 2 > mask }

    /// Doubles the capacity, re-inserting entries 0 ..< count whose hashes
    /// are `hashes[entry]`.
    mutating func grow(hashes: UnsafePointer<UInt32>) {
        let n = count
        release()
        self = HashIndex(capacityFor: mask + 1)
        for e in 0..<n {
            let h = hashes[e]
            let (_, slot) = find(h) { _ in false }
            insert(at: slot, h, UInt32(truncatingIfNeeded: e))
        }
    }
}
