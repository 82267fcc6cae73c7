// The decode calls' lane (Coder.fastDecodeInt and the others: the field at
// the open record's hint) agrees with the checked path: the same script of
// decode calls is run once through the C face's rst_decode_* functions
// (which try the lane first) and once through the checked functions behind
// them (CFace.decodeIntChecked and the others, which never use it), each in
// its own restore of the same archive. Every call must end the same way: the
// same status, the same message, the same value handed out.

import XCTest
import CRestoration
import RestorationArchive
import RestorationCore
@testable import RestorationCFace

final class DecodeLaneTests: XCTestCase {
    enum Op {
        case bool(String)
        case int(String)
        case double(String)
        case string(String)
        case bytes(String)
        case object(String)
        case ints(String, cap: Int)
        case beginRecord(String)
        case endRecord
    }

    /// Keys at fixed addresses, as a C host's literals (the key cache maps
    /// an address to its key: the lane needs a hit).
    nonisolated(unsafe) static var cKeys: [String: UnsafeMutablePointer<CChar>] = [:]

    static func key(_ k: String) -> UnsafeMutablePointer<CChar> {
        if let p = cKeys[k] { return p }
        let p = strdup(k)!
        cKeys[k] = p
        return p
    }

    /// Writes every kind of value, keys past 15 and past 142 included.
    final class Saver: ObjectBehavior {
        var nodes: [ObjectNode] = []
        func encode(_ node: ObjectNode, _ coder: Coder) {
            let c = OpaquePointer(coder.handle)
            let k = DecodeLaneTests.key
            _ = CFace.encode_bool(c, k("flag"), true)
            _ = CFace.encode_bool(c, k("off"), false)
            _ = CFace.encode_int(c, k("number"), 1 << 40)
            _ = CFace.encode_double(c, k("ratio"), 0.25)
            _ = CFace.encode_string(c, k("title"), "héllo, wörld: sixteen+")
            _ = CFace.encode_string(c, k("empty"), "")
            let blob = (0..<40).map { UInt8($0) }
            _ = blob.withUnsafeBytes { CFace.encode_bytes(c, k("blob"), $0.baseAddress, $0.count) }
            _ = CFace.encode_bytes(c, k("nob"), nil, 0)
            _ = CFace.encode_object(c, k("link"), OpaquePointer(nodes[0].handle))
            _ = CFace.encode_os_string(c, k("os"), "file")
            let bad: [CChar] = [0x66, -1, 0x66, 0]
            _ = CFace.encode_os_string(c, k("osbad"), bad)
            _ = CFace.encode_begin_record(c, k("note"))
            _ = CFace.encode_string(c, k("text"), "t")
            _ = CFace.encode_int(c, k("count"), -7)
            _ = CFace.encode_begin_record(c, k("inner"))
            _ = CFace.encode_end_record(c)
            _ = CFace.encode_end_record(c)
            let rows: [Int64] = [1, -2, 1 << 50, 3]
            _ = rows.withUnsafeBufferPointer { CFace.encode_int_array(c, k("rows"), $0.baseAddress, $0.count) }
            for i in 0..<150 { _ = CFace.encode_int(c, k("key\(i)"), Int64(i) - 75) }
        }
        func decode(_ node: ObjectNode, _ coder: Coder) {}
        func finished(_ node: ObjectNode) {}
        func released(_ node: ObjectNode) {}
        var instance: UnsafeMutableRawPointer? { nil }
    }

    final class Scripted: ObjectBehavior {
        let ops: [Op]
        let viaLane: Bool
        var outcomes: [String] = []
        init(_ ops: [Op], viaLane: Bool) { self.ops = ops; self.viaLane = viaLane }

        func decode(_ node: ObjectNode, _ coder: Coder) {
            let c = OpaquePointer(coder.handle)
            for op in ops { outcomes.append(run(op, c, coder)) }
        }

        func run(_ op: Op, _ c: OpaquePointer, _ coder: Coder) -> String {
            let k = DecodeLaneTests.key
            let s: rst_status
            var value = ""
            switch op {
            case .bool(let key):
                var v = false
                s = viaLane ? CFace.decode_bool(c, k(key), &v) : CFace.decodeBoolChecked(coder, k(key), &v)
                value = "\(v)"
            case .int(let key):
                var v: Int64 = 0
                s = viaLane ? CFace.decode_int(c, k(key), &v) : CFace.decodeIntChecked(coder, k(key), &v)
                value = "\(v)"
            case .double(let key):
                var v = 0.0
                s = viaLane ? CFace.decode_double(c, k(key), &v) : CFace.decodeDoubleChecked(coder, k(key), &v)
                value = "\(v)"
            case .string(let key):
                var p: UnsafePointer<CChar>? = nil
                var n = -1
                s = viaLane ? CFace.decode_string(c, k(key), &p, &n) : CFace.decodeStringChecked(coder, k(key), &p, &n)
                value = "\(p.map { String(cString: $0) } ?? "nil") \(n)"
                if let p { XCTAssertEqual(strlen(p), n) }   // NUL-terminated at its length
            case .bytes(let key):
                var p: UnsafeRawPointer? = nil
                var n = -1
                s = viaLane ? CFace.decode_bytes(c, k(key), &p, &n) : CFace.decodeBytesChecked(coder, k(key), &p, &n)
                value = p.map { Array(UnsafeRawBufferPointer(start: $0, count: max(0, n))).description } ?? "nil \(n)"
            case .object(let key):
                var o: OpaquePointer? = nil
                s = viaLane ? CFace.decode_object(c, k(key), &o) : CFace.decodeObjectChecked(coder, k(key), &o)
                value = o.map { ObjectNode.from(handle: UnsafeRawPointer($0)).path } ?? "nil"
            case .ints(let key, let cap):
                var buf = [Int64](repeating: 99, count: max(cap, 1))
                var n = -1
                s = buf.withUnsafeMutableBufferPointer { b in
                    let p = cap > 0 ? b.baseAddress : nil
                    if viaLane { return CFace.decode_int_array(c, k(key), p, cap, &n) }
                    n = 0   // what decode_int_array does before the coder is reached
                    return CFace.decodeIntArrayChecked(coder, k(key), p.map { UnsafeMutableBufferPointer(start: $0, count: cap) }, &n)
                }
                value = "\(n) \(buf)"
            case .beginRecord(let key):
                s = viaLane ? CFace.decode_begin_record(c, k(key)) : CFace.decodeBeginRecordChecked(coder, k(key))
            case .endRecord:
                s = viaLane ? CFace.decode_end_record(c) : CFace.decodeEndRecordChecked(coder)
            }
            if s == RST_OK { return "ok \(value)" }
            return "\(s.rawValue) \(CFace.last_error().map { String(cString: $0) } ?? "") \(value)"
        }

        func encode(_ node: ObjectNode, _ coder: Coder) {}
        func finished(_ node: ObjectNode) {}
        func released(_ node: ObjectNode) {}
        var instance: UnsafeMutableRawPointer? { nil }
    }

    /// An archive of three objects (o0 the parent of o1 and o2), each with the Saver's values.
    func archive() throws -> [UInt8] {
        let handle = try makeEngine()
        defer { CFace.engine_destroy(handle) }
        let engine = Engine.from(handle: UnsafeRawPointer(handle))
        let saver = Saver()
        var nodes: [ObjectNode] = []
        for i in 0..<3 {
            nodes.append(try engine.register(identifier: "o\(i)", parent: i == 0 ? nil : nodes[0], className: "C", behavior: saver))
        }
        saver.nodes = nodes
        return try engine.saveToBytes()
    }

    /// Every object of a restore of `bytes` runs `ops`; their outcomes, in order.
    func run(_ ops: [Op], _ bytes: [UInt8], viaLane: Bool) throws -> [String] {
        let handle = try makeEngine()
        defer { CFace.engine_destroy(handle) }
        let engine = Engine.from(handle: UnsafeRawPointer(handle))
        var behaviors: [Scripted] = []
        var nodes: [ObjectNode] = []
        for i in 0..<3 {
            let b = Scripted(ops, viaLane: viaLane)
            behaviors.append(b)
            nodes.append(try engine.register(identifier: "o\(i)", parent: i == 0 ? nil : nodes[0], className: "C", behavior: b))
        }
        let failure: RestorationFailure? = bytes.withUnsafeBytes { u in
            do throws(RestorationFailure) { try engine.restore(bytes: u); return nil } catch { return error }
        }
        if let failure { throw failure }
        return behaviors.flatMap { $0.outcomes }
    }

    func assertAgree(_ ops: [Op], file: StaticString = #filePath, line: UInt = #line) throws {
        let bytes = try archive()
        let lane = try run(ops, bytes, viaLane: true)
        let checked = try run(ops, bytes, viaLane: false)
        XCTAssertEqual(lane.count, ops.count * 3, file: file, line: line)
        XCTAssertEqual(lane, checked, file: file, line: line)
    }

    /// The order they were written in: the lane's case.
    static let saveOrder: [Op] = [
        .bool("flag"), .bool("off"), .int("number"), .double("ratio"), .string("title"), .string("empty"),
        .bytes("blob"), .bytes("nob"), .object("link"), .string("os"), .bytes("osbad"),
        .beginRecord("note"), .string("text"), .int("count"), .beginRecord("inner"), .endRecord, .endRecord,
        .ints("rows", cap: 4), .int("key0"), .int("key14"), .int("key15"), .int("key126"), .int("key127"), .int("key142"), .int("key143"), .int("key149"),
    ]

    func testSaveOrder() throws {
        try assertAgree(DecodeLaneTests.saveOrder)
    }

    /// Out of order, twice over, and every failure: absent keys, other
    /// types, OS strings read as strings, buffers too small, records
    /// closed at the top level.
    func testOtherOrdersAndFailures() throws {
        try assertAgree(DecodeLaneTests.saveOrder.reversed() + DecodeLaneTests.saveOrder)
        try assertAgree([
            .int("nope"), .bool("number"), .int("flag"), .int("title"), .double("number"), .string("blob"),
            .string("osbad"), .bytes("title"), .object("number"), .ints("number", cap: 4), .beginRecord("number"),
            .beginRecord("nope"), .endRecord, .ints("rows", cap: 3), .ints("rows", cap: 0), .ints("rows", cap: 8),
            .bool("flag"), .bool("flag"), .int("text"), .beginRecord("note"), .int("number"), .string("text"),
            .endRecord, .endRecord, .string("text"), .int("key149"), .int("key143"), .int("key142"),
        ])
    }

    /// A record read past its end, and nested records left open at the end of the callback.
    func testRecordsInAnyState() throws {
        try assertAgree([.beginRecord("note"), .beginRecord("inner"), .int("count"), .endRecord, .int("count"),
                         .beginRecord("inner"), .beginRecord("note")])
    }
}
