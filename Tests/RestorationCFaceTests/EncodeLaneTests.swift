// The encode calls' fast lane (Coder.fastLane, FieldSink) agrees with the
// checked path: the same script of encode calls is run once through the C
// face's rst_encode_* functions (which try the lane first) and once through
// the core's checked calls (Coder.encodeInt and the others, which never use
// it); every call must end the same way (the same status and, but for the
// C function's name in front, the same message) and the archives must hold
// the same records.

import XCTest
import CRestoration
import RestorationArchive
import RestorationCore
import RestorationCFace

final class EncodeLaneTests: XCTestCase {
    enum Op {
        case bool(String, Bool)
        case int(String, Int64)
        case double(String, Double)
        case string(String, [UInt8])
        case bytes(String, [UInt8])
        case object(String, Int)        // the n-th object of the script's engine
        case ints(String, [Int64])
        case beginRecord(String)
        case endRecord
        case secret(String)             // the key's sensitivity (the core's call, on both sides)
    }

    final class Scripted: ObjectBehavior {
        let ops: [Op]
        let viaC: Bool
        var nodes: [ObjectNode] = []
        var outcomes: [String] = []
        init(_ ops: [Op], viaC: Bool) { self.ops = ops; self.viaC = viaC }

        func encode(_ node: ObjectNode, _ coder: Coder) {
            let c = OpaquePointer(coder.handle)
            for op in ops {
                if viaC { outcomes.append(runC(op, c)) } else { outcomes.append(runChecked(op, coder)) }
            }
        }

        /// Keys at fixed addresses, as a C host's literals (the key cache
        /// maps an address to its key: the lane needs a hit).
        nonisolated(unsafe) static var cKeys: [String: UnsafeMutablePointer<CChar>] = [:]

        func runC(_ op: Op, _ c: OpaquePointer) -> String {
            func key<T>(_ k: String, _ body: (UnsafePointer<CChar>) -> T) -> T {
                if Scripted.cKeys[k] == nil { Scripted.cKeys[k] = strdup(k) }
                return body(Scripted.cKeys[k]!)
            }
            let s: rst_status
            switch op {
            case .bool(let k, let v): s = key(k) { CFace.encode_bool(c, $0, v) }
            case .int(let k, let v): s = key(k) { CFace.encode_int(c, $0, v) }
            case .double(let k, let v): s = key(k) { CFace.encode_double(c, $0, v) }
            case .string(let k, let v):
                s = key(k) { kp in (v + [0]).withUnsafeBufferPointer { b in b.withMemoryRebound(to: CChar.self) { CFace.encode_string(c, kp, $0.baseAddress!) } } }
            case .bytes(let k, let v): s = key(k) { kp in v.withUnsafeBytes { CFace.encode_bytes(c, kp, $0.baseAddress, $0.count) } }
            case .object(let k, let i): s = key(k) { CFace.encode_object(c, $0, OpaquePointer(Unmanaged.passUnretained(nodes[i]).toOpaque())) }
            case .ints(let k, let v): s = key(k) { kp in v.withUnsafeBufferPointer { CFace.encode_int_array(c, kp, $0.baseAddress, $0.count) } }
            case .beginRecord(let k): s = key(k) { CFace.encode_begin_record(c, $0) }
            case .endRecord: s = CFace.encode_end_record(c)
            case .secret:
                return runChecked(op, Coder.from(handle: UnsafeRawPointer(c)))
            }
            if s == RST_OK { return "ok" }
            var message = CFace.last_error().map { String(cString: $0) } ?? ""
            if let colon = message.range(of: ": "), message.hasPrefix("rst_encode_") { message = String(message[colon.upperBound...]) }
            return "\(s.rawValue) \(message)"   // rst_status and Status share their numbers
        }

        func runChecked(_ op: Op, _ coder: Coder) -> String {
            func key(_ k: String, _ body: (KeyBytes) throws(RestorationFailure) -> Void) -> String {
                let b = Array(k.utf8)
                return b.withUnsafeBytes { u in outcome { () throws(RestorationFailure) in try body(KeyBytes(u)) } }
            }
            switch op {
            case .bool(let k, let v): return key(k) { (kb) throws(RestorationFailure) in try coder.encodeBool(kb, v) }
            case .int(let k, let v): return key(k) { (kb) throws(RestorationFailure) in try coder.encodeInt(kb, v) }
            case .double(let k, let v): return key(k) { (kb) throws(RestorationFailure) in try coder.encodeDouble(kb, v) }
            case .string(let k, let v): return v.withUnsafeBytes { u in key(k) { (kb) throws(RestorationFailure) in try coder.encodeString(kb, u) } }
            case .bytes(let k, let v): return v.withUnsafeBytes { u in key(k) { (kb) throws(RestorationFailure) in try coder.encodeBytes(kb, u) } }
            case .object(let k, let i): return key(k) { (kb) throws(RestorationFailure) in try coder.encodeObject(kb, nodes[i]) }
            case .ints(let k, let v): return v.withUnsafeBufferPointer { u in key(k) { (kb) throws(RestorationFailure) in try coder.encodeIntArray(kb, u) } }
            case .beginRecord(let k): return key(k) { (kb) throws(RestorationFailure) in try coder.encodeBeginRecord(kb) }
            case .endRecord: return outcome { () throws(RestorationFailure) in try coder.encodeEndRecord() }
            case .secret(let k): return key(k) { (kb) throws(RestorationFailure) in try coder.setSensitivity(kb, .secret) }
            }
        }

        func outcome(_ body: () throws(RestorationFailure) -> Void) -> String {
            do throws(RestorationFailure) { try body(); return "ok" } catch { return "\(error.status.rawValue) \(error.message)" }
        }

        func decode(_ node: ObjectNode, _ coder: Coder) {}
        func finished(_ node: ObjectNode) {}
        func released(_ node: ObjectNode) {}
        var instance: UnsafeMutableRawPointer? { nil }
    }

    /// Runs `scripts` (one object each, the first the parent of the others)
    /// through the C face or the checked calls; returns every call's outcome,
    /// then the save's result (the archive's records, or its error).
    func run(_ scripts: [[Op]], viaC: Bool) throws -> [String] {
        let handle = try makeEngine()
        defer { CFace.engine_destroy(handle) }
        let engine = Engine.from(handle: UnsafeRawPointer(handle))
        let behaviors = scripts.map { Scripted($0, viaC: viaC) }
        var nodes: [ObjectNode] = []
        for (i, b) in behaviors.enumerated() {
            nodes.append(try engine.register(identifier: "o\(i)", parent: i == 0 ? nil : nodes[0], className: "C", behavior: b))
        }
        for b in behaviors { b.nodes = nodes }
        var result: [String]
        do throws(RestorationFailure) {
            let bytes = try engine.saveToBytes()
            if let reader = bytes.withUnsafeBytes({ try? Engine.validate($0, source: "test") }) {
                var doc = ArchiveDocument(reader: reader)
                doc.info.savedAtMs = 0
                result = ["\(doc)"]
            } else {
                result = ["the archive does not validate"]
            }
        } catch {
            result = ["save: \(error.status.rawValue) \(error.message)"]
        }
        return behaviors.flatMap { $0.outcomes } + result
    }

    func assertAgree(_ scripts: [[Op]], saves: Bool, file: StaticString = #filePath, line: UInt = #line) throws {
        // Each script twice: the second object finds the keys cached.
        let c = try run(scripts + scripts, viaC: true)
        let checked = try run(scripts + scripts, viaC: false)
        XCTAssertEqual(c, checked, file: file, line: line)
        XCTAssertEqual(checked.last?.hasPrefix("save: "), !saves, checked.last ?? "", file: file, line: line)
    }

    static var everyKind: [Op] {
        var ops: [Op] = [.bool("flag", true), .int("number", 1 << 40), .double("ratio", 0.25),
                         .string("title", Array("héllo, wörld: sixteen+".utf8)), .string("empty", []),
                         .bytes("blob", (0..<200).map { UInt8($0) }), .object("link", 0), .object("self", 1),
                         .ints("rows", [1, -2, 1 << 50]), .ints("long", (0..<13).map { Int64($0) }),
                         .beginRecord("note"), .string("text", Array("t".utf8)), .int("count", -7),
                         .beginRecord("inner"), .endRecord, .endRecord]
        for k in 0..<70 { ops.append(.int("key\(k)", Int64(k))) }
        return ops
    }

    func testEveryKindOfValue() throws {
        try assertAgree([EncodeLaneTests.everyKind, EncodeLaneTests.everyKind, [.int("number", 3)]], saves: true)
    }

    /// After the first error nothing more is written, and the save fails.
    func testDuplicateKeyFailsTheSave() throws {
        try assertAgree([[.int("a", 1), .int("b", 2)], [.int("a", 1), .int("a", 2), .int("c", 3), .endRecord, .beginRecord("r")]], saves: false)
        try assertAgree([[.beginRecord("r"), .int("a", 1), .bool("a", true), .endRecord, .int("z", 0)]], saves: false)
    }

    func testRefusedValues() throws {
        try assertAgree([[.string("bad", [0x66, 0xFF, 0x66]), .int("after", 1)]], saves: false)
        try assertAgree([[.endRecord, .int("after", 1)]], saves: false)
        var deep: [Op] = []
        for _ in 0..<40 { deep.append(.beginRecord("d")) }
        try assertAgree([deep], saves: false)
    }

    /// A key whose sensitivity is set takes the checked path for the rest
    /// of the object; the next object is back on the lane.
    func testSensitivity() throws {
        try assertAgree([[.int("a", 1), .secret("s"), .int("s", 2), .int("b", 3), .beginRecord("r"), .int("s", 4), .endRecord],
                         [.int("a", 1), .int("s", 2)]], saves: true)
    }
}
