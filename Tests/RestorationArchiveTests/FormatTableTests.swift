@testable import RestorationArchive
import XCTest

/// The one table of tags and payload shapes, and the one varint reader.
final class FormatTableTests: XCTestCase {
    func testEveryTagHasOneShape() {
        let expected: [ValueTag: PayloadShape] = [
            .boolFalse: .none, .boolTrue: .none, .int: .zigzag, .double: .fixed64,
            .string: .text, .bytes: .bytes, .object: .recordIndex, .intArray: .zigzagArray,
            .stringArray: .textArray, .record: .fields, .objectArray: .recordIndexArray,
            .osString: .osText,
        ]
        XCTAssertEqual(expected.count, ValueTag.allCases.count)
        for tag in ValueTag.allCases {
            XCTAssertEqual(tag.shape, expected[tag], "\(tag)")
            XCTAssertFalse(ValueTag.isFuture(rawTag: tag.rawValue))
        }
        for raw in ValueTag.futureRawTags {
            XCTAssertNil(ValueTag(rawValue: raw))
            XCTAssertEqual(PayloadShape.of(rawTag: raw), .future)
            XCTAssertTrue(ValueTag.isFuture(rawTag: raw))
            XCTAssertTrue(PayloadShape.of(rawTag: raw).isLengthPrefixed, "future types must be skippable")
        }
        XCTAssertFalse(PayloadShape.none.isLengthPrefixed)
        XCTAssertFalse(PayloadShape.zigzag.isLengthPrefixed)
        XCTAssertFalse(PayloadShape.recordIndex.isLengthPrefixed)
        XCTAssertFalse(PayloadShape.fixed64.isLengthPrefixed)
        XCTAssertTrue(PayloadShape.fields.isLengthPrefixed)
        // v1.1's object arrays (tag 10) carry a length, so readers before
        // v1.1, which treated 10 as a future tag, skip them.
        XCTAssertTrue(PayloadShape.recordIndexArray.isLengthPrefixed)
        // v1.2's OS strings (tag 11) too: a 1.1 reader skips them.
        XCTAssertTrue(PayloadShape.osText.isLengthPrefixed)
        XCTAssertEqual(ValueTag.osString.rawValue, 11)
        // v1.2's sealed values (tag 12) too; they have no ValueTag (an engine
        // opens them before any decode) and are kept as opaque payloads.
        XCTAssertEqual(PayloadShape.of(rawTag: 12), .sealed)
        XCTAssertTrue(PayloadShape.sealed.isLengthPrefixed)
        XCTAssertNil(ValueTag(rawValue: 12))
        XCTAssertTrue(ValueTag.isOpaque(rawTag: 12))
        XCTAssertFalse(ValueTag.isFuture(rawTag: 12))
    }

    func testDocumentRawTagsAgreeWithTheTable() {
        let values: [(ArchiveValue, ValueTag)] = [
            (.bool(false), .boolFalse), (.bool(true), .boolTrue), (.int(1), .int), (.double(1), .double),
            (.string(""), .string), (.bytes([]), .bytes), (.object(record: 0), .object),
            (.intArray([]), .intArray), (.stringArray([]), .stringArray), (.record([]), .record),
            (.objectArray([]), .objectArray), (.osString([]), .osString),
        ]
        for (v, t) in values { XCTAssertEqual(v.rawTag, t.rawValue, "\(v)") }
    }

    private func read(_ bytes: [UInt8], limit: Int? = nil) -> (UInt64?, Int) {
        bytes.withUnsafeBytes { b in
            var pos = 0
            let v = readVarint(b.baseAddress!, &pos, limit ?? b.count)
            return (v, pos)
        }
    }

    func testVarintReaderDecodesEveryLength() {
        let cases: [UInt64] = [0, 1, 127, 128, 300, 16383, 16384, 1 << 21, 1 << 35, UInt64.max >> 1, UInt64.max]
        for v in cases {
            var buf = [UInt8](repeating: 0, count: 10)
            let n = buf.withUnsafeMutableBytes { putVarint($0.baseAddress!, v) }
            XCTAssertEqual(n, varintSize(v))
            let (got, pos) = read(Array(buf[0..<n]))
            XCTAssertEqual(got, v)
            XCTAssertEqual(pos, n)
        }
        // Non-minimal forms are accepted as long as they fit.
        XCTAssertEqual(read([0x80, 0x00]).0, 0)
    }

    /// Varints of 4 to 8 bytes with at least 8 bytes readable take the
    /// one-word path: every length, both paddings, non-minimal forms and
    /// random values give what the byte loop gives.
    func testVarintWordPathAgreesWithTheByteLoop() {
        var rng = SystemRandomNumberGenerator()
        var values: [UInt64] = [0, 127, 128, 1 << 21, (1 << 28) - 1, 1 << 28, 1 << 35, (1 << 49) - 1, 1 << 49,
                                (1 << 56) - 1, 1 << 56, 1 << 63, UInt64.max, UInt64(UInt32.max), UInt64(UInt32.max) << 1]
        for _ in 0..<2000 { values.append(rng.next() >> UInt64.random(in: 0...63, using: &rng)) }
        for v in values {
            for pad: UInt8 in [0x00, 0xFF, 0x80] {
                var buf = [UInt8](repeating: pad, count: 20)
                let n = buf.withUnsafeMutableBytes { putVarint($0.baseAddress!, v) }
                let (got, pos) = read(buf)
                XCTAssertEqual(got, v, "\(v) with padding \(pad)")
                XCTAssertEqual(pos, n, "\(v) with padding \(pad)")
            }
        }
        // Non-minimal: 0 in 5 bytes and 8 bytes; 1 in 8 bytes, then garbage.
        XCTAssertEqual(read([0x80, 0x80, 0x80, 0x80, 0x00, 0xFF, 0xFF, 0xFF, 0xFF]).0, 0)
        XCTAssertEqual(read([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0xFF]).1, 8)
        XCTAssertEqual(read([0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x7F]).0, 1)
        // Longer than 10 bytes and 64-bit overflow still refused with padding.
        XCTAssertEqual(read([UInt8](repeating: 0xFF, count: 10) + [0x01, 0, 0, 0]).0, nil)
        XCTAssertEqual(read([UInt8](repeating: 0xFF, count: 9) + [0x02, 0, 0, 0]).0, nil)
        XCTAssertEqual(read([UInt8](repeating: 0xFF, count: 9) + [0x01, 0, 0, 0]).0, UInt64.max)
        // The limit still bounds the varint when 8 bytes exist past it.
        XCTAssertEqual(read([0x80, 0x80, 0x80, 0x80, 0x01, 0, 0, 0, 0], limit: 4).0, nil)
    }

    /// Skipping a varint ends where reading it does and fails exactly where
    /// reading fails: every length, paddings, limits, non-minimal forms,
    /// and the cut-off, too-long and overflowing cases.
    func testSkipVarintAgreesWithTheReader() {
        func both(_ bytes: [UInt8], limit: Int? = nil, _ note: String) {
            bytes.withUnsafeBytes { b in
                let lim = limit ?? b.count
                var rp = 0, sp = 0
                let v = readVarint(b.baseAddress!, &rp, lim)
                let ok = skipVarint(b.baseAddress!, &sp, lim)
                XCTAssertEqual(ok, v != nil, note)
                XCTAssertEqual(sp, rp, note)
            }
        }
        var rng = SystemRandomNumberGenerator()
        var values: [UInt64] = [0, 1, 127, 128, 16383, 16384, 1 << 21, (1 << 28) - 1, 1 << 28, 1 << 35,
                                (1 << 49) - 1, 1 << 49, (1 << 56) - 1, 1 << 56, 1 << 63, UInt64.max]
        for _ in 0..<1000 { values.append(rng.next() >> UInt64.random(in: 0...63, using: &rng)) }
        for v in values {
            for pad: UInt8 in [0x00, 0xFF, 0x80] {
                var buf = [UInt8](repeating: pad, count: 20)
                let n = buf.withUnsafeMutableBytes { putVarint($0.baseAddress!, v) }
                for limit in Set([n - 1, n, n + 1, n + 7, 20]) where limit >= 0 {
                    both(buf, limit: limit, "\(v), padding \(pad), limit \(limit)")
                }
            }
        }
        both([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0xFF], "8-byte non-minimal")
        both([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00], "9-byte non-minimal")
        both([UInt8](repeating: 0xFF, count: 10) + [0x01, 0, 0, 0], "too long")
        both([UInt8](repeating: 0xFF, count: 9) + [0x02, 0, 0, 0], "overflow")
        both([UInt8](repeating: 0xFF, count: 9) + [0x01, 0, 0, 0], "largest")
        both([0x80, 0x80, 0x80, 0x80, 0x01, 0, 0, 0, 0], limit: 4, "cut off by the limit")
        both([0x80, 0x80], "cut off by the end")
        both([], "empty")
    }

    /// The reader's ints (read from one word when the archive has 8 bytes
    /// there) are the values written, for every varint length, in the
    /// middle of the records and as the last field; a field whose end cuts
    /// its varint short still reads as 0, as the varint reader gives.
    func testReaderIntsOfEveryLength() throws {
        var values: [Int64] = [0, 1, -1, 63, -64, 64, 8191, -8192, 8192, Int64(Int32.max), Int64(Int32.min),
                               1 << 40, -(1 << 48), (1 << 55) - 1, 1 << 55, Int64.max, Int64.min]
        for _ in 0..<200 { values.append(Int64.random(in: .min ... .max) >> Int64.random(in: 0...63)) }
        let entries = values.enumerated().map { ArchiveEntry(key: "k\($0.offset)", value: .int($0.element)) }
        let doc = ArchiveDocument(info: ArchiveInfo(), objects: [ArchiveObject(identifier: "a", entries: entries)])
        let r = try ArchiveReader(bytes: try doc.encode())
        var seen = 0
        r.forEachField(in: r.fields(ofRecord: 0)) { f in
            XCTAssertEqual(r.int(f), values[seen], "value \(seen)")
            if f.end - f.payload > 1 {
                XCTAssertEqual(r.int(ArchiveReader.Field(key: f.key, rawTag: f.rawTag, payload: f.payload, end: f.end - 1)), 0)
            }
            seen += 1
        }
        XCTAssertEqual(seen, values.count)
    }

    func testVarintReaderRejectsBadInputAndLeavesPosition() {
        // Cut off by the limit.
        XCTAssertEqual(read([0x80, 0x80]).0, nil)
        XCTAssertEqual(read([0x80, 0x80]).1, 0)
        XCTAssertEqual(read([0x81, 0x01], limit: 1).0, nil)
        XCTAssertEqual(read([], limit: 0).0, nil)
        // Longer than 10 bytes.
        XCTAssertEqual(read([UInt8](repeating: 0xFF, count: 10) + [0x01]).0, nil)
        // Overflows 64 bits (10th byte above 1).
        XCTAssertEqual(read([UInt8](repeating: 0xFF, count: 9) + [0x02]).0, nil)
        XCTAssertEqual(read([UInt8](repeating: 0xFF, count: 9) + [0x01]).0, UInt64.max)
        [UInt8](repeating: 0xFF, count: 9).withUnsafeBytes { b in
            XCTAssertEqual(varintProblem(b.baseAddress!, at: 0, b.count), .cutOff)
        }
        ([UInt8](repeating: 0xFF, count: 10) + [1]).withUnsafeBytes { b in
            XCTAssertEqual(varintProblem(b.baseAddress!, at: 0, b.count), .tooLong)
        }
        ([UInt8](repeating: 0xFF, count: 9) + [2]).withUnsafeBytes { b in
            XCTAssertEqual(varintProblem(b.baseAddress!, at: 0, b.count), .overflow)
        }
    }
}
