import RestorationArchive
import XCTest

// MARK: - Building archives by hand (for hostile inputs)

func varint(_ v: UInt64) -> [UInt8] {
    var out: [UInt8] = []
    var x = v
    while x >= 0x80 {
        out.append(UInt8(x & 0x7F) | 0x80)
        x >>= 7
    }
    out.append(UInt8(x))
    return out
}

func zigzag(_ v: Int64) -> UInt64 { UInt64(bitPattern: (v << 1) ^ (v >> 63)) }

func lenPrefixed(_ b: [UInt8]) -> [UInt8] { varint(UInt64(b.count)) + b }
func lenPrefixed(_ s: String) -> [UInt8] { lenPrefixed(Array(s.utf8)) }

/// A field: header byte (+ key extension) and payload bytes as given.
func field(_ key: Int, _ tag: UInt8, _ payload: [UInt8] = []) -> [UInt8] {
    if key < 15 { return [UInt8(key << 4) | tag] + payload }
    return [0xF0 | tag] + varint(UInt64(key - 15)) + payload
}

func record(ident: UInt64, delta: UInt64 = 0, cls: UInt64 = 0, fields: [UInt8]) -> [UInt8] {
    varint(ident) + varint(delta) + varint(cls) + varint(UInt64(fields.count)) + fields
}

/// An archive assembled from raw parts, with a correct total_len and checksum
/// unless told otherwise.
struct RawArchive {
    var version: UInt16 = 1
    var flags: UInt16 = 0
    var app: [UInt8] = Array("app".utf8)
    var sys: [UInt8] = Array("sys".utf8)
    var idiom: [UInt8] = []
    var savedAt: Int64 = 42
    var objectCount: UInt64? = nil
    var keyCount: UInt64? = nil
    var nameCount: UInt64? = nil
    var keys: [[UInt8]] = []
    var names: [[UInt8]] = []
    var records: [[UInt8]] = []
    /// Raw bytes placed between the records and the checksum.
    var extra: [UInt8] = []
    var totalLen: UInt32? = nil
    var badChecksum = false

    init(keys: [String] = [], names: [String] = [], records: [[UInt8]] = []) {
        self.keys = keys.map { Array($0.utf8) }
        self.names = names.map { Array($0.utf8) }
        self.records = records
    }

    var bytes: [UInt8] {
        var b: [UInt8] = [0x89, 0x52, 0x53, 0x54, 0x0D, 0x0A, 0x1A, 0x0A]
        b += [UInt8(version & 0xFF), UInt8(version >> 8), UInt8(flags & 0xFF), UInt8(flags >> 8)]
        b += [0, 0, 0, 0] // total_len, patched below
        b += lenPrefixed(app) + lenPrefixed(sys) + lenPrefixed(idiom)
        withUnsafeBytes(of: savedAt.littleEndian) { b += $0 }
        b += varint(objectCount ?? UInt64(records.count))
        b += varint(keyCount ?? UInt64(keys.count))
        b += varint(nameCount ?? UInt64(names.count))
        for k in keys { b += lenPrefixed(k) }
        for n in names { b += lenPrefixed(n) }
        for r in records { b += r }
        b += extra
        let total = totalLen ?? UInt32(b.count + 4)
        withUnsafeBytes(of: total.littleEndian) { t in for i in 0..<4 { b[12 + i] = t[i] } }
        var crc = CRC32C.checksum(b)
        if badChecksum { crc ^= 1 }
        withUnsafeBytes(of: crc.littleEndian) { b += $0 }
        return b
    }
}

/// Rewrites the checksum of a complete archive after it was edited.
func fixChecksum(_ a: inout [UInt8]) {
    let n = a.count - 4
    let crc = CRC32C.checksum(Array(a[0..<n]))
    withUnsafeBytes(of: crc.littleEndian) { t in for i in 0..<4 { a[n + i] = t[i] } }
}

// MARK: - Assertions

func expectFailure(_ bytes: [UInt8], _ kind: String, _ contains: String...,
                   file: StaticString = #filePath, line: UInt = #line) {
    do {
        let r = try ArchiveReader(bytes: bytes)
        XCTFail("expected \(kind) failure, but the archive was accepted (\(r.recordCount) records)", file: file, line: line)
    } catch {
        let actualKind: String
        switch error {
        case .corrupt: actualKind = "corrupt"
        case .version: actualKind = "version"
        case .limit: actualKind = "limit"
        }
        XCTAssertEqual(actualKind, kind, "message: \(error.message)", file: file, line: line)
        for c in contains {
            XCTAssertTrue(error.message.contains(c), "message '\(error.message)' lacks '\(c)'", file: file, line: line)
        }
    }
}

func accept(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> ArchiveReader? {
    do {
        return try ArchiveReader(bytes: bytes)
    } catch {
        XCTFail("archive rejected: \(error.message)", file: file, line: line)
        return nil
    }
}

// MARK: - Writer conveniences

extension ArchiveWriter {
    mutating func key(_ s: String) -> UInt32 {
        var s = s
        return s.withUTF8 { key(UnsafeRawBufferPointer($0)) }
    }
    mutating func name(_ s: String) -> UInt32 {
        var s = s
        return s.withUTF8 { name(UnsafeRawBufferPointer($0)) }
    }
    mutating func writeString(_ key: String, _ v: String) throws(WriteFailure) {
        let k = self.key(key)
        var v = v
        let r: Result<Void, WriteFailure> = v.withUTF8 { u in
            do throws(WriteFailure) { try writeString(k, UnsafeRawBufferPointer(u)); return .success(()) } catch { return .failure(error) }
        }
        try r.get()
    }
    mutating func writeBytes(_ key: String, _ v: [UInt8]) throws(WriteFailure) {
        let k = self.key(key)
        let r: Result<Void, WriteFailure> = v.withUnsafeBytes { u in
            do throws(WriteFailure) { try writeBytes(k, u); return .success(()) } catch { return .failure(error) }
        }
        try r.get()
    }
    mutating func writeIntArray(_ key: String, _ v: [Int64]) throws(WriteFailure) {
        let k = self.key(key)
        let r: Result<Void, WriteFailure> = v.withUnsafeBufferPointer { u in
            do throws(WriteFailure) { try writeIntArray(k, u); return .success(()) } catch { return .failure(error) }
        }
        try r.get()
    }
    mutating func writeStringArray(_ key: String, _ v: [String]) throws(WriteFailure) {
        let k = self.key(key)
        let arrays = v.map { Array($0.utf8) }
        var ptrs: [UnsafeMutableRawBufferPointer] = []
        defer { ptrs.forEach { $0.deallocate() } }
        for a in arrays {
            let p = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, a.count), alignment: 1)
            p.copyBytes(from: a)
            ptrs.append(p)
        }
        let views = zip(ptrs, arrays).map { UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer($0.0)[0..<$0.1.count]) }
        try writeStringArray(k, views)
    }
    mutating func begin(_ identifier: String, parent: Int? = nil, className: String? = nil) {
        let id = name(identifier)
        let c = className.map { name($0) }
        beginObject(identifier: id, parent: parent, className: c)
    }
}

extension ArchiveReader {
    func key(_ s: String) -> UInt32? {
        var s = s
        return s.withUTF8 { keyIndex(UnsafeRawBufferPointer($0)) }
    }
    func field(_ r: Int, _ key: String) -> Field? {
        guard let k = self.key(key) else { return nil }
        let range = fields(ofRecord: r)
        var hint = range.start
        return find(k, in: range, hint: &hint)
    }
    func text(_ f: Field) -> String { String(decoding: bytes(f), as: UTF8.self) }
}

/// Deep equality where NaN doubles compare by bit pattern.
func identical(_ a: ArchiveDocument, _ b: ArchiveDocument) -> Bool {
    guard a.info == b.info, a.objects.count == b.objects.count else { return false }
    for (x, y) in zip(a.objects, b.objects) {
        guard x.identifier == y.identifier, x.parent == y.parent, x.className == y.className,
              x.entries.count == y.entries.count else { return false }
        for (e, f) in zip(x.entries, y.entries) where e.key != f.key || !e.value.isIdentical(to: f.value) {
            return false
        }
    }
    return true
}

/// A deterministic pseudo-random generator for tests.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
