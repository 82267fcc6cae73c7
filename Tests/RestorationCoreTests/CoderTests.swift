import XCTest
@testable import RestorationArchive
@testable import RestorationCore

/// Coder.swift: typed keyed values, valid only during a callback; messages
/// name the object and key, never a C function.
final class CoderTests: XCTestCase {
    final class Box: ObjectBehavior {
        var onEncode: (Coder) -> Void = { _ in }
        var onDecode: (Coder) -> Void = { _ in }
        var finished = 0
        func encode(_ node: ObjectNode, _ coder: Coder) { onEncode(coder) }
        func decode(_ node: ObjectNode, _ coder: Coder) { onDecode(coder) }
        func finished(_ node: ObjectNode) { finished += 1 }
        func released(_ node: ObjectNode) {}
        var instance: UnsafeMutableRawPointer? { nil }
    }

    private func roundTrip(encode: @escaping (Coder) -> Void, decode: @escaping (Coder) -> Void) throws -> (Box, Engine) {
        let a = Engine(configuration: .init())
        let box = Box()
        box.onEncode = encode
        try a.register(identifier: "Obj", parent: nil, className: nil, behavior: box)
        let bytes = try a.saveToBytes()
        let b = Engine(configuration: .init())
        let box2 = Box()
        box2.onDecode = decode
        try b.register(identifier: "Obj", parent: nil, className: nil, behavior: box2)
        try bytes.withUnsafeBytes { raw in try b.restore(bytes: raw) }
        return (box2, b)
    }

    func testEveryTypeRoundTrips() throws {
        var got: [String] = []
        _ = try roundTrip(encode: { c in
            try! c.encodeBool(key("b"), true)
            try! c.encodeInt(key("i"), -42)
            try! c.encodeDouble(key("d"), -0.0)
            _ = "text".utf8.withContiguousStorageIfAvailable { try! c.encodeString(key("s"), UnsafeRawBufferPointer($0)) }
            [UInt8]([1, 2, 3]).withUnsafeBytes { try! c.encodeBytes(key("y"), $0) }
            [Int64(5), 6].withUnsafeBufferPointer { try! c.encodeIntArray(key("ia"), $0) }
            try! c.encodeBeginRecord(key("r"))
            try! c.encodeInt(key("i"), 7)
            try! c.encodeEndRecord()
        }, decode: { c in
            got.append("\(try! c.decodeBool(key("b")))")
            got.append("\(try! c.decodeInt(key("i")))")
            got.append("\(try! c.decodeDouble(key("d")).sign == .minus)")
            got.append(try! c.decodeString(key("s")))
            got.append("\(Array(try! c.decodeBytes(key("y"))))")
            got.append("\(try! c.decodeIntArray(key("ia")))")
            try! c.decodeBeginRecord(key("r"))
            got.append("\(try! c.decodeInt(key("i")))")
            try! c.decodeEndRecord()
        })
        XCTAssertEqual(got, ["true", "-42", "true", "text", "[1, 2, 3]", "[5, 6]", "7"])
    }

    func testMissingKeysAndWrongTypesNameTheRecordAndKeyButNoCFunction() throws {
        var errors: [RestorationFailure] = []
        _ = try roundTrip(encode: { c in try! c.encodeInt(key("n"), 1) }, decode: { c in
            do throws(RestorationFailure) { _ = try c.decodeInt(key("absent")) } catch { errors.append(error) }
            do throws(RestorationFailure) { _ = try c.decodeString(key("n")) } catch { errors.append(error) }
        })
        XCTAssertEqual(errors.map(\.status), [.notFound, .type])
        for e in errors {
            XCTAssertTrue(e.message.contains("'Obj'"), e.message)
            XCTAssertFalse(e.message.contains("rst_"), e.message)
        }
    }

    func testTheCoderIsDeadOutsideItsCallback() throws {
        var kept: Coder?
        _ = try roundTrip(encode: { c in kept = c; try! c.encodeInt(key("n"), 1) }, decode: { _ in })
        XCTAssertThrowsError(try kept!.encodeInt(key("late"), 1)) { e in
            XCTAssertEqual((e as! RestorationFailure).status, .state)
        }
        XCTAssertThrowsError(try kept!.failCallback(RestorationFailure(.io, "late"))) { e in
            XCTAssertEqual((e as! RestorationFailure).status, .state)
        }
    }

    func testAFailedEncodeCallbackFailsTheSave() throws {
        let a = Engine(configuration: .init())
        let box = Box()
        box.onEncode = { c in try! c.failCallback(RestorationFailure(.io, "the model is gone")) }
        try a.register(identifier: "Obj", parent: nil, className: nil, behavior: box)
        XCTAssertThrowsError(try a.saveToBytes()) { e in
            let f = e as! RestorationFailure
            XCTAssertEqual(f.status, .io)
            XCTAssertTrue(f.message.contains("'Obj'") && f.message.contains("the model is gone"), f.message)
        }
    }

    func testAFailedDecodeCallbackIsNotCountedAsRestored() throws {
        let (box, engine) = try roundTrip(encode: { c in try! c.encodeInt(key("n"), 1) }, decode: { c in
            try! c.failCallback(RestorationFailure(.type, "not what I expected"))
        })
        XCTAssertEqual(box.finished, 0)
        XCTAssertEqual(engine.lastRestoreReport?.restored, 0)
        XCTAssertEqual(engine.lastRestoreReport?.skipped, 1)
    }

    /// The decode role's scan hint: keys read in any order, the record's
    /// last field among them (found by a scan, it leaves the hint where it
    /// was), absent keys between them, a nested record read backwards:
    /// every value is the one saved, whatever the hint.
    func testEveryReadingOrderFindsEveryValue() throws {
        let keys: [KeyBytes] = [key("a"), key("b"), key("c"), key("d"), key("e"), key("f")]
        func permutations(_ a: [Int]) -> [[Int]] {
            a.count <= 1 ? [a] : a.indices.flatMap { i in permutations(a.enumerated().filter { $0.offset != i }.map(\.element)).map { [a[i]] + $0 } }
        }
        var reads = 0, wrong: [String] = []
        _ = try roundTrip(encode: { c in
            for (i, k) in keys.enumerated() {
                try! c.encodeInt(k, Int64(i + 1))
                if i == 2 {
                    try! c.encodeBeginRecord(key("r"))
                    try! c.encodeInt(key("x"), 7)
                    try! c.encodeInt(key("y"), 8)
                    try! c.encodeEndRecord()
                }
            }
        }, decode: { c in
            for order in permutations(Array(keys.indices)) {
                for (n, i) in order.enumerated() {
                    let v = try? c.decodeInt(keys[i])
                    if v != Int64(i + 1) { wrong.append("\(order): \(i) gave \(String(describing: v))") }
                    reads += 1
                    if n == 2 {
                        if (try? c.decodeInt(key("zz"))) != nil || (try? c.contains(key("zz"))) != false { wrong.append("\(order): zz found") }
                    }
                }
                try! c.decodeBeginRecord(key("r"))
                let r = [try? c.decodeInt(key("y")), try? c.decodeInt(key("x")), try? c.decodeInt(key("y"))]
                try! c.decodeEndRecord()
                if r != [8, 7, 8] { wrong.append("\(order): r gave \(r)") }
            }
        })
        XCTAssertEqual(reads, 720 * 6)
        XCTAssertEqual(wrong, [])
    }
}
