import XCTest
@testable import RestorationArchive

/// Varints of every length, 9 and 10 bytes included (full-range and
/// negative 64-bit ints: timestamps, ids, hashes), read and written
/// without a byte loop: the same values, ends and refusals as LEB128 byte
/// by byte, at every distance from the limit, and the validator's runs of
/// common fields with keys from 15 on.
final class LongVarintTests: XCTestCase {
    /// Values of every bit length, and random ones.
    private var values: [UInt64] {
        var v: [UInt64] = [0, 1, 0x7F, 0x80, 0x3FFF, 0x4000, 0x1F_FFFF, 0x20_0000]
        for bits in 1...64 {
            let top: UInt64 = bits == 64 ? .max : (1 << UInt64(bits)) - 1
            v += [top, top >> 1 | (1 << UInt64(bits - 1))]
        }
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<3000 { v.append(rng.next() >> UInt64.random(in: 0...63, using: &rng)) }
        return v
    }

    /// The bounded reader byte by byte: what every fast path must agree with.
    private func reference(_ b: [UInt8], _ limit: Int) -> (UInt64, Int)? {
        var r: UInt64 = 0
        for i in 0..<min(limit, 10) {
            let x = b[i]
            if i == 9 && x > 1 { return nil }
            r |= UInt64(x & 0x7F) << UInt64(7 * i)
            if x < 0x80 { return (r, i + 1) }
        }
        return nil
    }

    func testReadersAgreeAtEveryLimit() {
        for v in values {
            let enc = varint(v)
            // Followed by nothing, and by padding (so that the word loads apply).
            for pad in [0, 1, 8, 16] {
                let b = enc + [UInt8](repeating: 0xFF, count: pad)
                for limit in 0...b.count {
                    let want = reference(b, limit)
                    b.withUnsafeBytes { p in
                        var pos = 0
                        let got = readVarint(p.baseAddress!, &pos, limit)
                        XCTAssertEqual(got, want?.0, "\(v) limit \(limit) pad \(pad)")
                        XCTAssertEqual(pos, want?.1 ?? 0, "\(v) limit \(limit) pad \(pad): the position")
                        var s = 0
                        XCTAssertEqual(skipVarint(p.baseAddress!, &s, limit), want != nil, "\(v) skip, limit \(limit)")
                        XCTAssertEqual(s, want?.1 ?? 0, "\(v) skip, limit \(limit): the position")
                        if let (w, e) = wordVarint(p.baseAddress!, 0, readable: b.count) {
                            XCTAssertEqual(w, v, "\(v): wordVarint")
                            XCTAssertEqual(e, enc.count, "\(v): wordVarint's end")
                        } else {
                            XCTAssertTrue(b.count < 8 || (enc.count > 8 && b.count < 10), "\(v): wordVarint declined with \(b.count) readable")
                        }
                    }
                }
            }
        }
    }

    func testLongVarintsThatAreTooLongOrOverflowAreRefused() {
        let padded = { (b: [UInt8]) in b + [UInt8](repeating: 0, count: 8) }
        for bad in [[UInt8](repeating: 0xFF, count: 9) + [0x02],       // bit 64
                    [UInt8](repeating: 0xFF, count: 9) + [0x81, 0x00],  // an 11th byte
                    [UInt8](repeating: 0x80, count: 9) + [0x80, 0x01]] {
            for b in [bad, padded(bad)] {
                b.withUnsafeBytes { p in
                    var pos = 0
                    XCTAssertNil(readVarint(p.baseAddress!, &pos, b.count), "\(bad)")
                    XCTAssertEqual(pos, 0)
                    XCTAssertNil(wordVarint(p.baseAddress!, 0, readable: b.count))
                    XCTAssertEqual(longVarintEnd(p.baseAddress!, 0, readable: b.count), 0)
                }
            }
        }
        // Non-minimal but within 64 bits: read, as the format allows.
        let nonMinimal: [UInt8] = [UInt8](repeating: 0x80, count: 9) + [0x00]
        nonMinimal.withUnsafeBytes { p in
            var pos = 0
            XCTAssertEqual(readVarint(p.baseAddress!, &pos, 10), 0)
            XCTAssertEqual(pos, 10)
            XCTAssertEqual(longVarintEnd(p.baseAddress!, 0, readable: 10), 10)
        }
    }

    func testLongVarintsAreWrittenAsLEB128() {
        for v in values where v >= 1 << 21 {
            var b = [UInt8](repeating: 0xEE, count: 12)
            let n = b.withUnsafeMutableBytes { putLongVarint($0.baseAddress!, v) }
            XCTAssertEqual(Array(b[0..<n]), varint(v), "\(v)")
            XCTAssertTrue(b[max(n, 8)...].allSatisfy { $0 == 0xEE }, "\(v): nothing written past 8 bytes or the varint")
        }
    }

    /// An object of 40 keys (25 of them from 15 on, one extension byte
    /// each) holding ints of every size, an int array of full-range ints
    /// and a nested record: validated, read back value by value; a 10th
    /// varint byte above 1 in such a field is CORRUPT with its place.
    func testValidatorRunsWithLongIntsAndExtendedKeys() throws {
        var ints: [Int64] = [0, -1, 1 << 40, Int64.min, Int64.max, -1_700_000_000_000, 1_700_000_000_000]
        while ints.count < 36 { ints.append(Int64.random(in: .min ... .max)) }
        var entries = ints.enumerated().map { ArchiveEntry(key: "key\($0.offset)", value: .int($0.element)) }
        entries.append(ArchiveEntry(key: "array", value: .intArray([Int64.min, Int64.max, -5, 1 << 62])))
        entries.append(ArchiveEntry(key: "note", value: .record([ArchiveEntry(key: "key3", value: .int(Int64.min)),
                                                                ArchiveEntry(key: "text", value: .string("x"))])))
        entries.append(ArchiveEntry(key: "flag", value: .bool(true)))
        entries.append(ArchiveEntry(key: "last", value: .int(Int64.min)))   // a 10-byte varint at the archive's end
        let doc = ArchiveDocument(info: ArchiveInfo(), objects: [ArchiveObject(identifier: "a", entries: entries)])
        let bytes = try doc.encode()
        let r = try ArchiveReader(bytes: bytes)
        var i = 0
        r.forEachField(in: r.fields(ofRecord: 0)) { f in
            if i < ints.count { XCTAssertEqual(r.int(f), ints[i], "key\(i)") }
            i += 1
        }
        XCTAssertEqual(i, entries.count)
        XCTAssertEqual(ArchiveDocument(reader: r).objects, doc.objects, "every value read back as written")

        // The 10th byte of Int64.min's zigzag varint (key "key3", index 3)
        // set to 2: the same failure through the runs as byte by byte.
        let target = varint(zigzag(Int64.min))
        XCTAssertEqual(target.count, 10)
        guard let at = (0...(bytes.count - 10)).first(where: { Array(bytes[$0..<$0 + 10]) == target }) else {
            return XCTFail("the varint of Int64.min is not in the archive")
        }
        var bad = bytes
        bad[at + 9] = 2
        fixChecksum(&bad)
        expectFailure(bad, "corrupt", "int value overflows 64 bits")
    }
}
