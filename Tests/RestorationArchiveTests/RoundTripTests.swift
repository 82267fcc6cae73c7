import RestorationArchive
import XCTest

final class RoundTripTests: XCTestCase {
    /// A small archive with every value type, used by several tests.
    static func sample() throws -> [UInt8] {
        var w = ArchiveWriter()
        w.begin("Tabs", className: "TabController")
        try w.writeBool(w.key("visible"), true)
        try w.writeBool(w.key("hidden"), false)
        try w.writeInt(w.key("count"), -3)
        try w.writeDouble(w.key("ratio"), 0.25)
        try w.writeString("title", "Héllo ✓")
        try w.writeBytes("blob", [0, 1, 2, 0xFF])
        try w.writeObject(w.key("peer"), record: 1)
        try w.writeIntArray("ids", [1, -1, Int64.max])
        try w.writeStringArray("tags", ["a", "", "ü"])
        try w.beginRecord(w.key("meta"))
        try w.writeString("text", "inner")
        try w.writeInt(w.key("count"), 7)
        try w.endRecord()
        try w.endObject()
        w.begin("Nav", parent: 0)
        try w.writeObject(w.key("peer"), record: 0)
        try w.endObject()
        return try w.finish(info: ArchiveInfo(appVersion: "2.1", systemVersion: "Linux 6.8", idiom: "desktop", savedAtMs: 1_700_000_000_123))
    }

    func testEveryTypeRoundTrips() throws {
        let extremes: [Int64] = [0, 1, -1, 63, -64, 64, -65, Int64.max, Int64.min, Int64.max - 1, Int64.min + 1]
        let doubles: [Double] = [0, -0.0, 1.5, -1e308, .infinity, -.infinity, .nan, .leastNonzeroMagnitude, .greatestFiniteMagnitude]
        var w = ArchiveWriter()
        w.begin("root", className: "Root")
        for (i, v) in extremes.enumerated() { try w.writeInt(w.key("i\(i)"), v) }
        for (i, v) in doubles.enumerated() { try w.writeDouble(w.key("d\(i)"), v) }
        try w.writeString("empty", "")
        try w.writeBytes("noBytes", [])
        try w.writeIntArray("noInts", [])
        try w.writeStringArray("noStrings", [])
        try w.writeIntArray("ints", extremes)
        try w.writeStringArray("strings", ["x", "", "ünïcödé", "日本語", "🎉"])
        try w.writeString("unicode", "Ça va? 日本 🎉")
        try w.writeBytes("bytes", Array(0...255))
        try w.writeBool(w.key("t"), true)
        try w.writeBool(w.key("f"), false)
        try w.writeObject(w.key("self"), record: 0)
        try w.beginRecord(w.key("emptyRecord"))
        try w.endRecord()
        try w.endObject()
        let bytes = try w.finish(info: ArchiveInfo(formatVersion: 9, appVersion: "a", systemVersion: "s", idiom: "i", savedAtMs: -5, objectCount: 99))

        let r = try ArchiveReader(bytes: bytes)
        XCTAssertEqual(r.info, ArchiveInfo(formatVersion: 1, appVersion: "a", systemVersion: "s", idiom: "i", savedAtMs: -5, objectCount: 1))
        XCTAssertEqual(r.recordCount, 1)
        XCTAssertEqual(r.byteCount, bytes.count)
        for (i, v) in extremes.enumerated() {
            let f = try XCTUnwrap(r.field(0, "i\(i)"))
            XCTAssertEqual(f.tag, .int)
            XCTAssertEqual(r.int(f), v)
        }
        for (i, v) in doubles.enumerated() {
            let f = try XCTUnwrap(r.field(0, "d\(i)"))
            XCTAssertEqual(f.tag, .double)
            XCTAssertEqual(r.double(f).bitPattern, v.bitPattern)
        }
        XCTAssertEqual(r.bytes(try XCTUnwrap(r.field(0, "empty"))).count, 0)
        XCTAssertEqual(r.field(0, "empty")?.tag, .string)
        XCTAssertEqual(r.bytes(try XCTUnwrap(r.field(0, "noBytes"))).count, 0)
        XCTAssertEqual(r.intArrayCount(try XCTUnwrap(r.field(0, "noInts"))), 0)
        XCTAssertEqual(r.stringArrayCount(try XCTUnwrap(r.field(0, "noStrings"))), 0)
        XCTAssertNil(r.stringArrayElement(try XCTUnwrap(r.field(0, "noStrings")), at: 0))
        let ints = try XCTUnwrap(r.field(0, "ints"))
        XCTAssertEqual(r.intArrayCount(ints), extremes.count)
        var buf = [Int64](repeating: 0, count: extremes.count)
        buf.withUnsafeMutableBufferPointer { r.intArray(ints, into: $0) }
        XCTAssertEqual(buf, extremes)
        let strings = try XCTUnwrap(r.field(0, "strings"))
        XCTAssertEqual(r.stringArrayCount(strings), 5)
        let got = (0..<5).map { String(decoding: r.stringArrayElement(strings, at: $0)!, as: UTF8.self) }
        XCTAssertEqual(got, ["x", "", "ünïcödé", "日本語", "🎉"])
        XCTAssertNil(r.stringArrayElement(strings, at: 5))
        XCTAssertNil(r.stringArrayElement(strings, at: -1))
        XCTAssertEqual(r.text(try XCTUnwrap(r.field(0, "unicode"))), "Ça va? 日本 🎉")
        XCTAssertEqual(Array(r.bytes(try XCTUnwrap(r.field(0, "bytes")))), Array(0...255))
        XCTAssertEqual(r.bool(try XCTUnwrap(r.field(0, "t"))), true)
        XCTAssertEqual(r.bool(try XCTUnwrap(r.field(0, "f"))), false)
        XCTAssertEqual(r.field(0, "f")?.tag, .boolFalse)
        XCTAssertEqual(r.objectRecord(try XCTUnwrap(r.field(0, "self"))), 0)
        XCTAssertTrue(r.hasForwardReferences) // a self reference counts
        let er = try XCTUnwrap(r.field(0, "emptyRecord"))
        XCTAssertEqual(er.tag, .record)
        let sub = r.recordFields(er)
        XCTAssertEqual(sub.start, sub.end)
        XCTAssertEqual(r.className(ofRecord: 0).map { r.name($0) }, "Root")
        XCTAssertEqual(r.path(ofRecord: 0), "root")
        XCTAssertNil(r.field(0, "missing"))
    }

    func testSampleStructure() throws {
        let r = try ArchiveReader(bytes: try RoundTripTests.sample())
        XCTAssertEqual(r.info.appVersion, "2.1")
        XCTAssertEqual(r.info.systemVersion, "Linux 6.8")
        XCTAssertEqual(r.info.idiom, "desktop")
        XCTAssertEqual(r.info.savedAtMs, 1_700_000_000_123)
        XCTAssertEqual(r.recordCount, 2)
        XCTAssertEqual(r.path(ofRecord: 1), "Tabs/Nav")
        XCTAssertEqual(r.parent(ofRecord: 1), 0)
        XCTAssertNil(r.parent(ofRecord: 0))
        XCTAssertEqual(r.depth(ofRecord: 0), 0)
        XCTAssertEqual(r.depth(ofRecord: 1), 1)
        XCTAssertNil(r.className(ofRecord: 1))
        XCTAssertEqual(r.name(r.identifier(ofRecord: 1)), "Nav")
        XCTAssertEqual(Array(r.references(ofRecord: 0)), [1])
        XCTAssertEqual(Array(r.references(ofRecord: 1)), [0])
        XCTAssertTrue(r.hasForwardReferences)
        // Keys and names are stored once, in first-use order.
        XCTAssertEqual((0..<UInt32(r.keyCount)).map { r.keyName($0) },
                       ["visible", "hidden", "count", "ratio", "title", "blob", "peer", "ids", "tags", "meta", "text"])
        XCTAssertEqual((0..<UInt32(r.nameCount)).map { r.name($0) }, ["Tabs", "TabController", "Nav"])
        XCTAssertEqual(r.key("peer"), 6)
        XCTAssertNil(r.key("nope"))
        var nav = "Nav"
        XCTAssertEqual(nav.withUTF8 { r.nameIndex(UnsafeRawBufferPointer($0)) }, 2)
        // Nested record.
        let meta = try XCTUnwrap(r.field(0, "meta"))
        let sub = r.recordFields(meta)
        var hint = sub.start
        let text = try XCTUnwrap(r.find(try XCTUnwrap(r.key("text")), in: sub, hint: &hint))
        XCTAssertEqual(r.text(text), "inner")
        let count = try XCTUnwrap(r.find(try XCTUnwrap(r.key("count")), in: sub, hint: &hint))
        XCTAssertEqual(r.int(count), 7)
        // The object-level "count" is another value.
        XCTAssertEqual(r.int(try XCTUnwrap(r.field(0, "count"))), -3)
    }

    func testOnlyBackwardReferences() throws {
        var w = ArchiveWriter()
        w.begin("a")
        try w.endObject()
        w.begin("b", parent: 0)
        try w.writeObject(w.key("ref"), record: 0)
        try w.beginRecord(w.key("nested"))
        try w.writeObject(w.key("ref"), record: 1 - 1)
        try w.endRecord()
        try w.endObject()
        let r = try ArchiveReader(bytes: try w.finish(info: ArchiveInfo()))
        XCTAssertFalse(r.hasForwardReferences)
        XCTAssertEqual(Array(r.references(ofRecord: 1)), [0, 0])
        XCTAssertEqual(r.references(ofRecord: 0).count, 0)
    }

    func testDeterminism() throws {
        let a = try RoundTripTests.sample()
        let b = try RoundTripTests.sample()
        XCTAssertEqual(a, b)
        // finish twice gives the same bytes too.
        var w = ArchiveWriter()
        w.begin("x")
        try w.writeInt(w.key("k"), 1)
        try w.endObject()
        let one = try w.finish(info: ArchiveInfo(savedAtMs: 1))
        let two = try w.finish(info: ArchiveInfo(savedAtMs: 1))
        XCTAssertEqual(one, two)
    }

    func testResetGivesAFreshWriter() throws {
        let fresh = try RoundTripTests.sample()
        var w = ArchiveWriter()
        for _ in 0..<40 { _ = w.key("junk\(UInt32.random(in: 0...1000))") }
        w.begin("junk")
        try w.beginRecord(w.key("open"))
        for i in 0..<20 { try w.writeInt(w.key("k\(i)"), 1) }
        w.reset()
        XCTAssertEqual(w.recordCount, 0)
        XCTAssertEqual(w.keyCount, 0)
        XCTAssertEqual(w.nameCount, 0)
        XCTAssertFalse(w.isObjectOpen)
        // The same calls as sample() give the same bytes.
        w.begin("Tabs", className: "TabController")
        try w.writeBool(w.key("visible"), true)
        try w.writeBool(w.key("hidden"), false)
        try w.writeInt(w.key("count"), -3)
        try w.writeDouble(w.key("ratio"), 0.25)
        try w.writeString("title", "Héllo ✓")
        try w.writeBytes("blob", [0, 1, 2, 0xFF])
        try w.writeObject(w.key("peer"), record: 1)
        try w.writeIntArray("ids", [1, -1, Int64.max])
        try w.writeStringArray("tags", ["a", "", "ü"])
        try w.beginRecord(w.key("meta"))
        try w.writeString("text", "inner")
        try w.writeInt(w.key("count"), 7)
        try w.endRecord()
        try w.endObject()
        w.begin("Nav", parent: 0)
        try w.writeObject(w.key("peer"), record: 0)
        try w.endObject()
        let again = try w.finish(info: ArchiveInfo(appVersion: "2.1", systemVersion: "Linux 6.8", idiom: "desktop", savedAtMs: 1_700_000_000_123))
        XCTAssertEqual(again, fresh)
    }

    func testNestedRecordsToDepth32() throws {
        var w = ArchiveWriter()
        w.begin("deep")
        let k = w.key("r")
        for d in 1...32 {
            try w.beginRecord(k)
            XCTAssertEqual(w.nestingDepth, d)
            try w.writeInt(w.key("level"), Int64(d))
        }
        XCTAssertThrowsError(try w.beginRecord(w.key("one-too-many"))) { e in
            guard case WriteFailure.limit = e as! WriteFailure else { return XCTFail("\(e)") }
        }
        for _ in 1...32 { try w.endRecord() }
        XCTAssertEqual(w.nestingDepth, 0)
        try w.endObject()
        let r = try ArchiveReader(bytes: try w.finish(info: ArchiveInfo()))
        var range = r.fields(ofRecord: 0)
        let level = try XCTUnwrap(r.key("level"))
        for d in 1...32 {
            var hint = range.start
            let f = try XCTUnwrap(r.find(0, in: range, hint: &hint))
            range = r.recordFields(f)
            hint = range.start
            XCTAssertEqual(r.int(try XCTUnwrap(r.find(level, in: range, hint: &hint))), Int64(d))
        }
    }

    func testNestedRecordsDeeperThan32AreRejected() throws {
        // 33 nested records, built by hand.
        var inner = field(1, 2, varint(zigzag(1)))
        for _ in 0..<33 { inner = field(0, 9, lenPrefixed(inner)) }
        expectFailure(RawArchive(keys: ["r", "v"], names: ["deep"], records: [record(ident: 0, fields: inner)]).bytes,
                      "limit", "deeper than the limit of 32", "record 0 (deep)")
        // 32 is fine.
        inner = field(1, 2, varint(zigzag(1)))
        for _ in 0..<32 { inner = field(0, 9, lenPrefixed(inner)) }
        XCTAssertNotNil(accept(RawArchive(keys: ["r", "v"], names: ["deep"], records: [record(ident: 0, fields: inner)]).bytes))
    }

    func testLargeRecordsUseMultiByteLengths() throws {
        // Fields and nested records of 128 bytes and more need 2- and 3-byte lengths.
        var w = ArchiveWriter()
        let sizes = [0, 1, 100, 120, 126, 127, 128, 129, 200, 16_383, 16_384, 70_000]
        for (i, n) in sizes.enumerated() {
            w.begin("o\(i)")
            try w.beginRecord(w.key("outer"))
            try w.beginRecord(w.key("inner"))
            try w.writeBytes("blob", [UInt8](repeating: UInt8(i), count: n))
            try w.endRecord()
            try w.writeBytes("blob", [UInt8](repeating: 7, count: n / 2))
            try w.endRecord()
            try w.writeInt(w.key("after"), Int64(n))
            try w.endObject()
        }
        let r = try ArchiveReader(bytes: try w.finish(info: ArchiveInfo()))
        for (i, n) in sizes.enumerated() {
            XCTAssertEqual(r.int(try XCTUnwrap(r.field(i, "after"))), Int64(n))
            let outer = r.recordFields(try XCTUnwrap(r.field(i, "outer")))
            var hint = outer.start
            let inner = r.recordFields(try XCTUnwrap(r.find(try XCTUnwrap(r.key("inner")), in: outer, hint: &hint)))
            hint = inner.start
            let blob = try XCTUnwrap(r.find(try XCTUnwrap(r.key("blob")), in: inner, hint: &hint))
            XCTAssertEqual(Array(r.bytes(blob)), [UInt8](repeating: UInt8(i), count: n))
            hint = outer.start
            let half = try XCTUnwrap(r.find(try XCTUnwrap(r.key("blob")), in: outer, hint: &hint))
            XCTAssertEqual(r.bytes(half).count, n / 2)
        }
    }

    func testManyKeysInOneRecord() throws {
        // More than 16 keys switches duplicate detection to a hash set, in the
        // writer and in the reader.
        var w = ArchiveWriter()
        w.begin("many")
        for i in 0..<300 { try w.writeInt(w.key("k\(i)"), Int64(i)) }
        XCTAssertEqual(w.tag(ofKey: w.key("k299")), .int)
        XCTAssertEqual(w.tag(ofKey: w.key("k3")), .int)
        XCTAssertNil(w.tag(ofKey: w.key("fresh")))
        XCTAssertThrowsError(try w.writeInt(w.key("k17"), 0)) { XCTAssertEqual($0 as? WriteFailure, .duplicateKey) }
        XCTAssertThrowsError(try w.writeBool(w.key("k0"), true)) { XCTAssertEqual($0 as? WriteFailure, .duplicateKey) }
        try w.beginRecord(w.key("nested"))
        XCTAssertNil(w.tag(ofKey: w.key("k5")))
        for i in 0..<40 { try w.writeInt(w.key("k\(i)"), Int64(-i)) }
        XCTAssertThrowsError(try w.writeInt(w.key("k39"), 0)) { XCTAssertEqual($0 as? WriteFailure, .duplicateKey) }
        try w.endRecord()
        XCTAssertThrowsError(try w.writeInt(w.key("k250"), 0)) { XCTAssertEqual($0 as? WriteFailure, .duplicateKey) }
        try w.writeInt(w.key("last"), 1)
        try w.endObject()
        w.begin("second")
        for i in 0..<20 { try w.writeInt(w.key("k\(i)"), Int64(i)) }
        try w.endObject()
        let r = try ArchiveReader(bytes: try w.finish(info: ArchiveInfo()))
        let range = r.fields(ofRecord: 0)
        var hint = range.start
        for i in stride(from: 299, through: 0, by: -7) {
            XCTAssertEqual(r.int(try XCTUnwrap(r.find(try XCTUnwrap(r.key("k\(i)")), in: range, hint: &hint))), Int64(i))
        }
        XCTAssertEqual(r.int(try XCTUnwrap(r.field(1, "k19"))), 19)
    }

    func testWriterTagsAndState() throws {
        var w = ArchiveWriter()
        XCTAssertThrowsError(try w.writeInt(w.key("x"), 1)) { e in
            guard case WriteFailure.state = e as! WriteFailure else { return XCTFail("\(e)") }
        }
        XCTAssertThrowsError(try w.endObject())
        XCTAssertThrowsError(try w.endRecord())
        w.begin("a")
        XCTAssertEqual(w.recordCount, 1)
        XCTAssertTrue(w.isObjectOpen)
        XCTAssertThrowsError(try w.endRecord()) { e in
            guard case WriteFailure.state = e as! WriteFailure else { return XCTFail("\(e)") }
        }
        try w.writeDouble(w.key("d"), 1)
        XCTAssertEqual(w.tag(ofKey: w.key("d")), .double)
        try w.beginRecord(w.key("r"))
        XCTAssertNil(w.tag(ofKey: w.key("d")), "values go to the innermost record")
        try w.writeBool(w.key("d"), false)
        XCTAssertEqual(w.tag(ofKey: w.key("d")), .boolFalse)
        XCTAssertThrowsError(try w.endObject()) { e in
            guard case WriteFailure.state = e as! WriteFailure else { return XCTFail("\(e)") }
        }
        try w.endRecord()
        XCTAssertEqual(w.tag(ofKey: w.key("r")), .record)
        XCTAssertEqual(w.tag(ofKey: w.key("d")), .double)
        XCTAssertThrowsError(try w.beginRecord(w.key("d"))) { XCTAssertEqual($0 as? WriteFailure, .duplicateKey) }
        XCTAssertThrowsError(try w.writeObject(w.key("neg"), record: -1))
        try w.writeObject(w.key("later"), record: 5)
        try w.endObject()
        XCTAssertFalse(w.isObjectOpen)
        // A reference to a record that was never written.
        XCTAssertThrowsError(try w.finish(info: ArchiveInfo())) { e in
            guard case WriteFailure.state(let m) = e as! WriteFailure else { return XCTFail("\(e)") }
            XCTAssertTrue(m.contains("record 5"), m)
        }
        // Misuse that cannot throw at once is reported by finish.
        var v = ArchiveWriter()
        v.begin("a")
        v.begin("b", parent: 0)
        try v.endObject()
        XCTAssertThrowsError(try v.finish(info: ArchiveInfo()))
        var p = ArchiveWriter()
        p.begin("a", parent: 0)
        try p.endObject()
        XCTAssertThrowsError(try p.finish(info: ArchiveInfo()))
        var o = ArchiveWriter()
        o.begin("open")
        XCTAssertThrowsError(try o.finish(info: ArchiveInfo()))
        var big = ArchiveWriter()
        XCTAssertThrowsError(try big.finish(info: ArchiveInfo(appVersion: String(repeating: "x", count: 4097)))) { e in
            guard case WriteFailure.limit = e as! WriteFailure else { return XCTFail("\(e)") }
        }
        XCTAssertNoThrow(try big.finish(info: ArchiveInfo(appVersion: String(repeating: "x", count: 4096))))
    }

    func testUnknownTagsRoundTripThroughWriter() throws {
        var w = ArchiveWriter()
        w.begin("a")
        try w.writeInt(w.key("before"), 1)
        try [UInt8]([9, 8, 7]).withUnsafeBytes { try w.writeUnknown(w.key("future"), tag: 13, payload: $0) }
        XCTAssertNil(w.tag(ofKey: w.key("future")))
        XCTAssertEqual(w.rawTag(ofKey: w.key("future")), 13)
        XCTAssertThrowsError(try [UInt8]().withUnsafeBytes { try w.writeUnknown(w.key("bad"), tag: 4, payload: $0) })
        try w.writeInt(w.key("after"), 2)
        try w.endObject()
        let r = try ArchiveReader(bytes: try w.finish(info: ArchiveInfo()))
        var seen: [(String, UInt8)] = []
        r.forEachField(in: r.fields(ofRecord: 0)) { seen.append((r.keyName($0.key), $0.rawTag)) }
        XCTAssertEqual(seen.map { $0.0 }, ["before", "future", "after"])
        XCTAssertEqual(seen.map { $0.1 }, [2, 13, 2])
        let f = try XCTUnwrap(r.field(0, "future"))
        XCTAssertNil(f.tag)
        XCTAssertEqual(Array(r.bytes(f)), [9, 8, 7])
        XCTAssertEqual(r.int(try XCTUnwrap(r.field(0, "after"))), 2)
    }

    func testCopyOnWrite() throws {
        var a = ArchiveWriter()
        a.begin("a")
        try a.writeInt(a.key("x"), 1)
        var b = a
        try b.writeInt(b.key("y"), 2)
        try b.endObject()
        XCTAssertNil(a.tag(ofKey: a.key("y")))
        try a.writeInt(a.key("z"), 3)
        try a.endObject()
        let ra = try ArchiveReader(bytes: try a.finish(info: ArchiveInfo()))
        let rb = try ArchiveReader(bytes: try b.finish(info: ArchiveInfo()))
        XCTAssertNotNil(ra.field(0, "z"))
        XCTAssertNil(ra.field(0, "y"))
        XCTAssertNotNil(rb.field(0, "y"))
        XCTAssertNil(rb.field(0, "z"))
    }

    func testFindWithHints() throws {
        var w = ArchiveWriter()
        w.begin("a")
        for i in 0..<40 { try w.writeInt(w.key("k\(i)"), Int64(i * 10)) }
        try w.endObject()
        let r = try ArchiveReader(bytes: try w.finish(info: ArchiveInfo()))
        let range = r.fields(ofRecord: 0)
        let keys = (0..<40).map { r.key("k\($0)")! }
        // In order: each find starts where the last one ended.
        var hint = range.start
        for i in 0..<40 {
            let before = hint
            let f = try XCTUnwrap(r.find(keys[i], in: range, hint: &hint))
            // In-order finds are O(1): the field starts at the hint (its header
            // is one byte, two from key 15 on).
            XCTAssertEqual(f.payload - (i < 15 ? 1 : 2), before)
            XCTAssertEqual(r.int(f), Int64(i * 10))
            XCTAssertEqual(hint, f.end)
        }
        XCTAssertEqual(hint, range.end)
        // Out of order: wraps around.
        var rng = SplitMix(state: 7)
        for _ in 0..<200 {
            let i = Int(rng.next() % 40)
            let f = try XCTUnwrap(r.find(keys[i], in: range, hint: &hint))
            XCTAssertEqual(r.int(f), Int64(i * 10))
        }
        // Missing keys leave the hint alone.
        var h2 = range.start + 4
        let nested = r.key("k0")!
        XCTAssertNil(r.find(UInt32(r.keyCount + 3), in: range, hint: &h2))
        XCTAssertEqual(h2, range.start + 4)
        // A hint outside the range means range.start.
        var h3 = -5
        XCTAssertEqual(r.int(try XCTUnwrap(r.find(nested, in: range, hint: &h3))), 0)
        var h4 = 1 << 40
        XCTAssertEqual(r.int(try XCTUnwrap(r.find(keys[39], in: range, hint: &h4))), 390)
        // A bogus range is harmless.
        var h5 = 0
        XCTAssertNil(r.find(0, in: ArchiveReader.FieldRange(start: 0, end: 1 << 40), hint: &h5))
        var count = 0
        r.forEachField(in: ArchiveReader.FieldRange(start: 5, end: 2)) { _ in count += 1 }
        XCTAssertEqual(count, 0)
    }

    func testLookupsInLargeTables() throws {
        var w = ArchiveWriter(estimatedObjects: 10)
        let n = 5000
        w.begin("root")
        try w.endObject()
        for i in 1..<n {
            w.begin("item\(i)", parent: 0, className: i % 3 == 0 ? "Class\(i % 7)" : nil)
            try w.writeInt(w.key("k\(i % 300)"), Int64(i))
            try w.endObject()
        }
        let r = try ArchiveReader(bytes: try w.finish(info: ArchiveInfo()))
        XCTAssertEqual(r.recordCount, n)
        for i in 1..<n {
            var s = "item\(i)"
            let idx = try XCTUnwrap(s.withUTF8 { r.nameIndex(UnsafeRawBufferPointer($0)) })
            XCTAssertEqual(r.identifier(ofRecord: i), idx)
            XCTAssertEqual(r.path(ofRecord: i), "root/item\(i)")
        }
        for i in 0..<300 { XCTAssertEqual(r.key("k\(i)").map { r.keyName($0) }, "k\(i)") }
        for miss in ["item0", "item\(n)", "k300", "", "x"] {
            var s = miss
            XCTAssertNil(s.withUTF8 { r.nameIndex(UnsafeRawBufferPointer($0)) }, miss)
        }
        XCTAssertNil(r.key("k300"))
    }

    func testInterningIsStable() {
        var w = ArchiveWriter()
        var seen: [String: UInt32] = [:]
        for i in 0..<5000 {
            let s = "name-\(i % 1234)-\(String(repeating: "x", count: i % 37))"
            let k = w.key(s)
            if let old = seen[s] { XCTAssertEqual(old, k) } else { seen[s] = k }
        }
        XCTAssertEqual(w.keyCount, seen.count)
        XCTAssertEqual(Set(seen.values).count, seen.count)
        // Empty and one-byte strings are distinct.
        XCTAssertNotEqual(w.name(""), w.name("a"))
        XCTAssertEqual(w.name(""), w.name(""))
    }
}
