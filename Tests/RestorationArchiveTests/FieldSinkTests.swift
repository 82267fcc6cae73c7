@testable import RestorationArchive
import XCTest

/// The encode calls' fast lane (`FieldSink`, ArchiveWriter.swift) agrees
/// with the checked `ArchiveWriter` calls: the same script of calls is run
/// on two writers, one trying the sink first and making the checked call
/// only when the sink declines, the other making only checked calls; every
/// call must end the same way (written, or the same error) and the two
/// archives must be the same bytes. A sink that declined must have changed
/// nothing (otherwise the checked call after it would write differently).
final class FieldSinkTests: XCTestCase {
    enum Op {
        case begin(parent: Int?)
        case end
        case bool(UInt32, Bool)
        case int(UInt32, Int64)
        case double(UInt32, Double)
        case string(UInt32, [UInt8])
        case bytes(UInt32, [UInt8])
        case object(UInt32, Int)
        case ints(UInt32, [Int64])
        case beginRecord(UInt32)
        case endRecord
    }

    /// Runs `ops` on a writer; with `fast`, each value goes through a sink
    /// taken once per object, as the engine does. Returns each call's
    /// outcome and the finished archive (or the finish error).
    func run(_ ops: [Op], fast: Bool, estimatedObjects: Int = 0) -> ([String], String) {
        var w = ArchiveWriter(estimatedObjects: estimatedObjects)
        for k in 0..<80 { Array("k\(k)".utf8).withUnsafeBytes { _ = w.key($0) } }
        var sink = w.sink()
        var outcomes: [String] = []
        var declined = 0
        func attempt(_ tried: Bool, _ checked: () throws(WriteFailure) -> Void) {
            if fast && tried { outcomes.append("ok"); return }
            if fast { declined += 1 }
            do throws(WriteFailure) { try checked(); outcomes.append("ok") } catch { outcomes.append("\(error)") }
        }
        for op in ops {
            switch op {
            case .begin(let parent):
                if fast { sink = w.sink(); sink.beginObject(identifier: 0, parent: parent, className: nil) } else { w.beginObject(identifier: 0, parent: parent, className: nil) }
                outcomes.append("begun")
            case .end:
                do throws(WriteFailure) { if fast { try sink.endObject() } else { try w.endObject() }; outcomes.append("ended") } catch { outcomes.append("\(error)") }
            case .bool(let k, let v):
                attempt(fast && sink.tryBool(k, v)) { () throws(WriteFailure) in try w.writeBool(k, v) }
            case .int(let k, let v):
                attempt(fast && sink.tryInt(k, v)) { () throws(WriteFailure) in try w.writeInt(k, v) }
            case .double(let k, let v):
                attempt(fast && sink.tryDouble(k, v)) { () throws(WriteFailure) in try w.writeDouble(k, v) }
            case .string(let k, let b):
                b.withUnsafeBytes { u in attempt(fast && sink.tryString(k, u)) { () throws(WriteFailure) in try w.writeString(k, u) } }
            case .bytes(let k, let b):
                b.withUnsafeBytes { u in attempt(fast && sink.tryBytes(k, u)) { () throws(WriteFailure) in try w.writeBytes(k, u) } }
            case .object(let k, let r):
                attempt(fast && sink.tryObject(k, record: r)) { () throws(WriteFailure) in try w.writeObject(k, record: r) }
            case .ints(let k, let v):
                v.withUnsafeBufferPointer { u in attempt(fast && sink.tryIntArray(k, u)) { () throws(WriteFailure) in try w.writeIntArray(k, u) } }
            case .beginRecord(let k):
                attempt(fast && sink.tryBeginRecord(k)) { () throws(WriteFailure) in try w.beginRecord(k) }
            case .endRecord:
                attempt(fast && sink.tryEndRecord()) { () throws(WriteFailure) in try w.endRecord() }
            }
        }
        if fast { outcomes.append("declined \(declined > 0)") }
        do throws(WriteFailure) {
            let bytes = try w.finish(info: ArchiveInfo(appVersion: "a", savedAtMs: 1))
            return (outcomes, bytes.map { String($0, radix: 16) }.joined(separator: " "))
        } catch {
            return (outcomes, "\(error)")
        }
    }

    func assertAgree(_ ops: [Op], estimatedObjects: Int = 0, expectDeclines: Bool? = nil, finishes: Bool = true, file: StaticString = #filePath, line: UInt = #line) {
        var (fast, fastBytes) = run(ops, fast: true, estimatedObjects: estimatedObjects)
        let (checked, checkedBytes) = run(ops, fast: false, estimatedObjects: estimatedObjects)
        let declined = fast.removeLast()
        XCTAssertEqual(fast, checked, file: file, line: line)
        XCTAssertEqual(fastBytes, checkedBytes, file: file, line: line)
        if let expectDeclines { XCTAssertEqual(declined, "declined \(expectDeclines)", file: file, line: line) }
        XCTAssertEqual(checkedBytes.hasPrefix("89 52 53 54"), finishes, checkedBytes, file: file, line: line)
    }

    func testEveryKindOfValue() {
        var ops: [Op] = [.begin(parent: nil)]
        ops += [.bool(0, true), .bool(1, false), .double(2, -0.0), .double(3, .infinity)]
        let ints: [Int64] = [0, 1, -1, 63, -64, 64, 8191, 8192, Int64(Int32.max), Int64(Int32.min), 1 << 55, -(1 << 56), Int64.max, Int64.min]
        for (i, v) in ints.enumerated() { ops.append(.int(UInt32(4 + i), v)) }
        ops += [.end, .begin(parent: 0)]
        for (i, n) in [0, 1, 7, 8, 15, 16, 17, 127, 128, 300].enumerated() {
            ops.append(.string(UInt32(i), Array(repeating: UInt8(ascii: "x"), count: n)))
            ops.append(.bytes(UInt32(20 + i), (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 37) }))
        }
        ops += [.end, .begin(parent: 1)]
        for n in 0...14 { ops.append(.ints(UInt32(n), (0..<n).map { Int64($0) << ($0 * 4) - 1 })) }
        ops += [.ints(15, Array(repeating: Int64.min, count: 12)), .end, .begin(parent: 0)]
        for (i, r) in [0, 1, 2, 3].enumerated() { ops.append(.object(UInt32(i), r)) }
        ops += [.end]
        assertAgree(ops, expectDeclines: true)   // the 13- and 14-element arrays, the 16th value on
        // References finish refuses (no such record) are still written alike.
        assertAgree([.begin(parent: nil), .object(0, 127), .object(1, 128), .object(2, 1 << 20), .object(3, ArchiveLimits.maxObjects - 1), .end], finishes: false)
    }

    /// Keys around 15 (one header byte or an escape), 64 (the bit set), a
    /// record's 16th and 17th values (the dictionary), duplicates.
    func testKeysAndRecordSizes() {
        var ops: [Op] = [.begin(parent: nil)]
        for k in 0..<70 { ops.append(.int(UInt32(k), Int64(k))) }
        for k in [0, 14, 15, 16, 63, 64, 69] { ops.append(.bool(UInt32(k), true)) }   // duplicates
        ops += [.end, .begin(parent: 0)]
        for k in [14, 15, 16, 62, 63] { ops.append(.string(UInt32(k), Array("v".utf8))); ops.append(.string(UInt32(k), [])) }
        ops += [.int(64, 1), .int(64, 2), .end]
        assertAgree(ops, expectDeclines: true)
    }

    func testNestedRecordsAndMisuse() {
        var ops: [Op] = [.int(0, 1), .beginRecord(1), .endRecord, .begin(parent: nil), .endRecord]
        for d in 0..<(ArchiveLimits.maxRecordDepth + 2) { ops.append(.beginRecord(UInt32(d % 3))); ops.append(.int(5, Int64(d))) }
        for _ in 0..<(ArchiveLimits.maxRecordDepth + 2) { ops.append(.endRecord) }
        ops += [.beginRecord(7), .beginRecord(7), .endRecord, .endRecord, .beginRecord(7), .end, .begin(parent: 0)]
        ops += [.object(1, -1), .object(2, ArchiveLimits.maxObjects), .object(3, 5), .end]
        assertAgree(ops, finishes: false)
    }

    /// A writer that starts small grows: the sink declines a value that
    /// does not fit the buffer, and the checked call grows it.
    func testGrowth() {
        var ops: [Op] = []
        for o in 0..<200 {
            ops.append(.begin(parent: o == 0 ? nil : o - 1))
            ops += [.string(0, Array(repeating: 0x61, count: 40 + o % 50)), .bytes(1, Array(repeating: 0xFF, count: o * 3)),
                    .ints(2, (0..<(o % 13)).map { -Int64($0) << 40 }), .beginRecord(3), .int(4, Int64(o) << 30), .endRecord,
                    .object(5, o / 2), .end]
        }
        assertAgree(ops, expectDeclines: true)
    }

    /// The sink's varints (2 and 3 bytes without the byte loop) are
    /// `putVarint`'s bytes, for every length and around every boundary.
    func testShortVarintsArePutVarints() {
        var values: [UInt64] = [0, 1, 0x7F, 0x80, 0x81, 0x3FFF, 0x4000, 0x4001, 0x1F_FFFF, 0x20_0000, 0x20_0001,
                                1 << 28, 1 << 35, 1 << 56, UInt64.max]
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<5000 { values.append(rng.next() >> UInt64.random(in: 0...63, using: &rng)) }
        for v in values {
            var a = [UInt8](repeating: 0xEE, count: 16), b = a
            let n = a.withUnsafeMutableBytes { putVarint($0.baseAddress!, v) }
            let m = b.withUnsafeMutableBytes { putShortVarint($0.baseAddress!, v) }
            XCTAssertEqual(m, n, "\(v)")
            XCTAssertEqual(Array(b[0..<m]), Array(a[0..<n]), "\(v)")
            // Scratch past the varint: a 3-byte one is stored as 4 bytes, one
            // of 4 to 8 as 8 (the callers have 10 writable bytes).
            let stored = m <= 2 ? m : (m == 3 ? 4 : max(m, 8))
            XCTAssertTrue(b[stored...].allSatisfy { $0 == 0xEE }, "\(v): nothing written past \(stored) bytes")
        }
    }

    /// beginObject's misuse is reported by finish, first problem first.
    func testBeginObjectNotesTheFirstProblem() throws {
        func firstProblem(_ body: (inout ArchiveWriter) -> Void) -> WriteFailure? {
            var w = ArchiveWriter()
            body(&w)
            do { _ = try w.finish(info: ArchiveInfo()); return nil } catch { return error }
        }
        XCTAssertEqual(firstProblem { w in
            w.beginObject(identifier: 0, parent: nil, className: nil)
            w.beginObject(identifier: 0, parent: 3, className: nil, version: 2)
            try? w.endObject()
        }, .state("beginObject was called while record 0 was still open (endObject is missing)"))
        XCTAssertEqual(firstProblem { w in
            w.beginObject(identifier: 0, parent: 0, className: nil, version: 2, carry: 1)
            try? w.endObject()
        }, .state("record 0: parent 0 is not an earlier record"))
        XCTAssertEqual(firstProblem { w in
            w.beginObject(identifier: 0, parent: -1, className: nil)
            try? w.endObject()
        }, .state("record 0: parent -1 is not an earlier record"))
        XCTAssertEqual(firstProblem { w in
            w.beginObject(identifier: 0, parent: nil, className: nil, version: 2, carry: 1)
            try? w.endObject()
        }, .state("record 0 has class version 2, but the writer was not told to store versions (recordVersions)"))
        XCTAssertEqual(firstProblem { w in
            w.recordVersions = true
            w.beginObject(identifier: 0, parent: nil, className: nil, version: 2, carry: 1)
            try? w.endObject()
        }, .state("record 0 is carried, but the writer was not told to store carry counts (recordCarry)"))
        XCTAssertNil(firstProblem { w in
            w.recordVersions = true
            w.recordCarry = true
            w.beginObject(identifier: 0, parent: nil, className: nil, version: 2, carry: 1)
            try? w.endObject()
        })
    }

    /// Record starts outgrow their first buffer, survive a copy of the
    /// writer and a reset.
    func testRecordStarts() throws {
        var w = ArchiveWriter(estimatedObjects: 2)
        var starts: [Int] = []
        for i in 0..<100 {
            starts.append(w.recordBytes)
            w.beginObject(identifier: UInt32(i), parent: i == 0 ? nil : i - 1, className: nil)
            try w.writeInt(0, Int64(i) << 20)
            try w.endObject()
        }
        let copy = w
        w.reset()
        w.beginObject(identifier: 7, parent: nil, className: nil)
        try w.endObject()
        XCTAssertEqual(w.recordCount, 1)
        XCTAssertEqual(w.recordStart(0), 0)
        XCTAssertEqual(copy.recordCount, 100)
        for i in 0..<100 {
            XCTAssertEqual(copy.recordStart(i), starts[i])
            XCTAssertEqual(copy.recordHeader(i).identifier, UInt32(i))
            XCTAssertEqual(copy.recordHeader(i).parent, i == 0 ? nil : i - 1)
        }
    }
}
