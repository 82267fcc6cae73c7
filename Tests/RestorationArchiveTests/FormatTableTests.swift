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
                // With the whole buffer readable (the reader's field walk: a
                // record's last field ends within 8 bytes of its limit).
                var wp = 0
                let wok = skipVarint(b.baseAddress!, &wp, lim, readable: b.count)
                XCTAssertEqual(wok, v != nil, "readable: \(note)")
                XCTAssertEqual(wp, rp, "readable: \(note)")
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

    /// `field(at:before:key:rawTag:)`, the save-order fast path of the
    /// coder's decode calls, returns only what `find` returns from the same
    /// hint, with the same tag check the coder makes, and takes the fields
    /// it is meant for: keys of one header byte and of a one-byte
    /// extension, lengths below 128, ints whose varint the next 8 bytes hold.
    func testSaveOrderFieldAgreesWithFind() throws {
        var values: [ArchiveValue] = [
            .bool(false), .bool(true), .int(0), .int(-1), .int(1 << 40), .int(Int64.min), .int(Int64.max),
            .double(1.5), .string(""), .string("x"), .string(String(repeating: "s", count: 127)),
            .string(String(repeating: "t", count: 128)), .string(String(repeating: "u", count: 300)),
            .bytes([]), .bytes([1, 2, 3]), .bytes([UInt8](repeating: 7, count: 200)),
            .object(record: 0), .object(record: 1), .intArray([1, -2, 300]), .stringArray(["a", "bc"]),
            .objectArray([0, 1]), .osString([0xFF, 0x41]), .unknown(tag: 15, payload: [9, 9]),
            .record([ArchiveEntry(key: "k0", value: .int(5)), ArchiveEntry(key: "inner", value: .string("in")),
                     ArchiveEntry(key: "deep", value: .record([ArchiveEntry(key: "k1", value: .bool(true))]))]),
        ]
        // Keys 0..<15 (one header byte), 15..<143 (one extension byte) and beyond.
        while values.count < 300 { values.append(values.count % 3 == 0 ? .int(Int64(values.count) << 30) : .string("v\(values.count)")) }
        var entries = values.enumerated().map { ArchiveEntry(key: "k\($0.offset)", value: $0.element) }
        entries.append(ArchiveEntry(key: "last", value: .int(1 << 20)))   // near the archive's end
        let doc = ArchiveDocument(info: ArchiveInfo(), objects: [
            ArchiveObject(identifier: "a", entries: Array(entries.reversed())),
            ArchiveObject(identifier: "b", parent: 0, entries: entries),
        ])
        let r = try ArchiveReader(bytes: try doc.encode())
        var hits = 0
        func check(_ range: ArchiveReader.FieldRange) {
            var pos = range.start
            var fields: [ArchiveReader.Field] = []
            r.forEachField(in: range) { f in fields.append(f) }
            for (i, f) in fields.enumerated() {
                if f.tag == .record { check(r.recordFields(f)) }
                for key in [f.key, f.key &+ 1, f.key == 0 ? 7 : f.key &- 1, 15, 142, 143, UInt32(r.keyCount)] {
                    for raw in UInt8(0)..<16 {
                        var h1 = pos
                        let fast = r.field(at: pos, before: range.end, key: key, rawTag: raw)
                        // The int and reference forms read the same field, and its value.
                        if raw == ValueTag.int.rawValue {
                            let i = r.intField(at: pos, before: range.end, key: key)
                            XCTAssertEqual(i?.value, fast.map { r.int($0) })
                            XCTAssertEqual(i?.end, fast?.end)
                        }
                        if raw == ValueTag.object.rawValue {
                            let o = r.objectField(at: pos, before: range.end, key: key)
                            XCTAssertEqual(o?.record, fast.map { r.objectRecord($0) })
                            XCTAssertEqual(o?.end, fast?.end)
                        }
                        guard let fast else {
                            // Taken whenever it is meant to be.
                            if key == f.key && (raw == f.rawTag || (raw == 0 && f.rawTag == 1)) && key < 143 {
                                let shape = PayloadShape.of(rawTag: raw)
                                let shortLength = !shape.isLengthPrefixed || f.end - f.payload < 128
                                let inWord = (shape != .zigzag && shape != .recordIndex) || (r.byteCount - f.payload >= 8 && f.end - f.payload <= 8)
                                XCTAssertFalse(shortLength && inWord, "field \(i) key \(key) tag \(raw) not taken")
                            }
                            continue
                        }
                        hits += 1
                        let slow = r.find(key, in: range, hint: &h1)
                        XCTAssertEqual(fast, slow, "field \(i) key \(key) tag \(raw)")
                        XCTAssertTrue(fast.rawTag == raw || (raw == 0 && fast.rawTag == 1), "field \(i) key \(key) tag \(raw)")
                        XCTAssertEqual(h1, fast.end)
                    }
                }
                pos = f.end
            }
            XCTAssertEqual(pos, range.end)
        }
        check(r.fields(ofRecord: 0))
        check(r.fields(ofRecord: 1))
        XCTAssertGreaterThan(hits, 250)
        // Any position and end: nothing is read outside the archive, and a
        // field returned lies within them.
        var g = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let pos = Int.random(in: -3...(r.byteCount + 3), using: &g)
            let end = Int.random(in: -3...(r.byteCount + 3), using: &g)
            let key = UInt32.random(in: 0...200, using: &g)
            if let f = r.field(at: pos, before: end, key: key, rawTag: UInt8.random(in: 0..<16, using: &g)) {
                XCTAssertTrue(pos < f.payload && f.payload <= f.end && f.end <= end && end <= r.byteCount)
            }
        }
    }

    /// The validator's word-at-a-time check of short text agrees with
    /// `utf8Violation` for every length up to 20, every byte value at every
    /// position, every padding before the end of the readable bytes, and
    /// finds '/' exactly (names).
    func testShortTextCheckAgreesWithTheUTF8Validator() {
        let probes: [UInt8] = [0x00, 0x01, 0x2F, 0x41, 0x7F, 0x80, 0xBF, 0xC2, 0xE0, 0xED, 0xF0, 0xF4, 0xF5, 0xFF]
        for n in 0...20 {
            for at in 0..<max(n, 1) {
                for probe in probes {
                    for room in 0...9 {
                        var bytes = [UInt8](repeating: 0x61, count: n + room)
                        if n > 0 { bytes[at] = probe }
                        if room > 0 { bytes[n] = 0x80 }   // what follows the text must not count
                        bytes.withUnsafeBytes { buf in
                            let p = buf.baseAddress!
                            let slow = utf8Violation(p, n) < 0
                            XCTAssertEqual(isText(p, n, readable: n + room), slow, "n \(n) at \(at) byte \(probe) room \(room)")
                            if let (a, b) = shortTextWords(p, n, readable: n + room) {
                                XCTAssertLessThanOrEqual(n, 16)
                                XCTAssertTrue(n >= 8 || n == 0 || n + room >= 8)
                                let ascii = wordIsASCIIWithoutNUL(a) && wordIsASCIIWithoutNUL(b)
                                XCTAssertEqual(ascii, buf.prefix(n).allSatisfy { $0 != 0 && $0 < 0x80 }, "n \(n) at \(at) byte \(probe)")
                                if ascii {
                                    XCTAssertEqual(wordHasByte(a, 0x2F) || wordHasByte(b, 0x2F), buf.prefix(n).contains(0x2F))
                                }
                            } else {
                                XCTAssertTrue(n > 16 || (n > 0 && n < 8 && n + room < 8))
                            }
                        }
                    }
                }
            }
        }
        // Multi-byte UTF-8 of every length class is left to the validator.
        for s in ["é", "€", "𝄞", "aé", "€€€€€€", "abcdefgh€"] {
            let u = Array(s.utf8) + [UInt8](repeating: 0, count: 8)
            u.withUnsafeBytes { XCTAssertTrue(isText($0.baseAddress!, s.utf8.count, readable: u.count), s) }
        }
    }

    /// The coder's one-pass int array read agrees with `intArrayCount` and
    /// `intArray(_:into:)`: every element length, empty arrays, buffers
    /// absent, too small, exact and larger.
    func testIntArrayInOnePassAgreesWithCountAndCopy() throws {
        var arrays: [[Int64]] = [[], [0], [1, -1], [Int64.min, Int64.max, 0], Array(0..<200).map { Int64($0) << 20 }]
        for len in 1...10 { arrays.append((0..<len).map { Int64(1) << Int64(7 * $0) }) }
        let entries = arrays.enumerated().map { ArchiveEntry(key: "a\($0.offset)", value: .intArray($0.element)) }
        let doc = ArchiveDocument(info: ArchiveInfo(), objects: [ArchiveObject(identifier: "a", entries: entries)])
        let r = try ArchiveReader(bytes: try doc.encode())
        var i = 0
        r.forEachField(in: r.fields(ofRecord: 0)) { f in
            let want = arrays[i]
            XCTAssertEqual(r.intArrayCount(f), want.count)
            for room in [nil, 0, max(0, want.count - 1), want.count, want.count + 3] as [Int?] {
                var out = [Int64](repeating: 7, count: room ?? 0)
                var expected = out
                let (n, copied) = out.withUnsafeMutableBufferPointer { b in
                    r.intArray(f, ifRoomIn: room == nil ? nil : b)
                }
                XCTAssertEqual(n, want.count)
                XCTAssertEqual(copied, want.isEmpty || (room ?? -1) >= want.count)
                if copied && !want.isEmpty {
                    expected.withUnsafeMutableBufferPointer { r.intArray(f, into: $0) }
                    XCTAssertEqual(Array(out.prefix(want.count)), want)
                }
                XCTAssertEqual(out, expected, "array \(i) room \(String(describing: room))")
            }
            i += 1
        }
        XCTAssertEqual(i, arrays.count)
    }
}
