// A migrated record's added tail (the fields a migration step added at the
// record's end): the decode calls read them where the new code reads them
// — a read that misses the hint looks at the tail before scanning. Every
// script of decode calls ends the same way (status, message, value) on a
// migrated archive, whose records have such a tail, as on an archive saved
// directly by the new version with the same fields in the same order,
// which has none: through the C face's lanes and through its checked calls.

import XCTest
import CRestoration
import RestorationArchive
import RestorationCore
@testable import RestorationCFace

final class AddedTailTests: XCTestCase {
    typealias Op = DecodeLaneTests.Op
    static let key = DecodeLaneTests.key

    /// The fields version 0 writes, its first key named `first`.
    static func writeOld(_ c: OpaquePointer, first: String) {
        let k = AddedTailTests.key
        _ = CFace.encode_int(c, k(first), 1)
        _ = CFace.encode_string(c, k("b"), "bee")
        _ = CFace.encode_begin_record(c, k("note"))
        _ = CFace.encode_int(c, k("t"), 2)
        _ = CFace.encode_end_record(c)
        _ = CFace.encode_int(c, k("z"), 3)
    }

    /// The values the migration adds, one of every kind, in its order;
    /// true when every write succeeded.
    static func writeAdded(_ c: OpaquePointer) -> Bool {
        let k = AddedTailTests.key
        var ok = CFace.encode_int(c, k("n1"), 10) == RST_OK
        ok = ok && CFace.encode_string(c, k("s1"), "hello") == RST_OK
        ok = ok && CFace.encode_double(c, k("d1"), 0.5) == RST_OK
        ok = ok && CFace.encode_bool(c, k("f1"), true) == RST_OK
        let rows: [Int64] = [1, -2, 1 << 40]
        ok = ok && rows.withUnsafeBufferPointer { CFace.encode_int_array(c, k("r1"), $0.baseAddress, $0.count) } == RST_OK
        let blob: [UInt8] = [0, 1, 255]
        ok = ok && blob.withUnsafeBytes { CFace.encode_bytes(c, k("by"), $0.baseAddress, $0.count) } == RST_OK
        ok = ok && CFace.encode_begin_record(c, k("rec")) == RST_OK
        ok = ok && CFace.encode_int(c, k("inner"), 5) == RST_OK
        return ok && CFace.encode_end_record(c) == RST_OK
    }

    /// Version 0 of class "C": the fields before the migration.
    final class OldSaver: ObjectBehavior {
        func encode(_ node: ObjectNode, _ coder: Coder) { AddedTailTests.writeOld(OpaquePointer(coder.handle), first: "a") }
        func decode(_ node: ObjectNode, _ coder: Coder) {}
        func finished(_ node: ObjectNode) {}
        func released(_ node: ObjectNode) {}
        var instance: UnsafeMutableRawPointer? { nil }
    }

    /// The step from version 0: "a" renamed, one value of every kind added.
    static func migrate(_ coder: Coder, _ from: UInt32) -> RestorationFailure? {
        let c = OpaquePointer(coder.handle)
        let ok = CFace.coder_rename(c, AddedTailTests.key("a"), AddedTailTests.key("amount")) == RST_OK && writeAdded(c)
        return ok ? nil : RestorationFailure(.state, "the step failed")
    }

    /// Version 1 saved directly: the migrated record's fields in its order.
    final class NewSaver: ObjectBehavior {
        func encode(_ node: ObjectNode, _ coder: Coder) {
            let c = OpaquePointer(coder.handle)
            AddedTailTests.writeOld(c, first: "amount")
            XCTAssertTrue(AddedTailTests.writeAdded(c))
        }
        func decode(_ node: ObjectNode, _ coder: Coder) {}
        func finished(_ node: ObjectNode) {}
        func released(_ node: ObjectNode) {}
        var instance: UnsafeMutableRawPointer? { nil }
    }

    /// Two objects of class "C" saved by `saver` at class version `version`.
    func archive(_ saver: ObjectBehavior, version: UInt32?) throws -> [UInt8] {
        let handle = try makeEngine()
        defer { CFace.engine_destroy(handle) }
        let engine = Engine.from(handle: UnsafeRawPointer(handle))
        if let version { try engine.setClassVersion("C", version) }
        let root = try engine.register(identifier: "o0", parent: nil, className: "C", behavior: saver)
        _ = try engine.register(identifier: "o1", parent: root, className: "C", behavior: saver)
        return try engine.saveToBytes()
    }

    /// Every object of a restore of `bytes` (class "C" at version 1, with
    /// the migration from 0) runs `ops`; their outcomes, in order.
    func run(_ ops: [Op], _ bytes: [UInt8], viaLane: Bool) throws -> [String] {
        let handle = try makeEngine()
        defer { CFace.engine_destroy(handle) }
        let engine = Engine.from(handle: UnsafeRawPointer(handle))
        try engine.setClassVersion("C", 1)
        try engine.registerMigration("C", from: 0, AddedTailTests.migrate)
        let behaviors = [DecodeLaneTests.Scripted(ops, viaLane: viaLane), DecodeLaneTests.Scripted(ops, viaLane: viaLane)]
        let root = try engine.register(identifier: "o0", parent: nil, className: "C", behavior: behaviors[0])
        _ = try engine.register(identifier: "o1", parent: root, className: "C", behavior: behaviors[1])
        let failure: RestorationFailure? = bytes.withUnsafeBytes { u in
            do throws(RestorationFailure) { try engine.restore(bytes: u); return nil } catch { return error }
        }
        if let failure { throw failure }
        return behaviors.flatMap { $0.outcomes }
    }

    func assertAgree(_ ops: [Op], file: StaticString = #filePath, line: UInt = #line) throws {
        let migrated = try archive(OldSaver(), version: nil)
        let direct = try archive(NewSaver(), version: 1)
        let expected = try run(ops, direct, viaLane: false)
        XCTAssertEqual(expected.count, ops.count * 2, file: file, line: line)
        XCTAssertEqual(try run(ops, direct, viaLane: true), expected, "saved directly, through the lanes", file: file, line: line)
        XCTAssertEqual(try run(ops, migrated, viaLane: true), expected, "migrated, through the lanes", file: file, line: line)
        XCTAssertEqual(try run(ops, migrated, viaLane: false), expected, "migrated, through the checked calls", file: file, line: line)
    }

    /// The new code's order: each added key read where it reads it.
    static let newOrder: [Op] = [
        .int("amount"), .int("n1"), .string("b"), .string("s1"), .double("d1"), .beginRecord("note"), .int("t"), .endRecord,
        .bool("f1"), .ints("r1", cap: 3), .int("z"), .bytes("by"), .beginRecord("rec"), .int("inner"), .endRecord,
    ]

    func testTheNewCodesOrder() throws {
        try assertAgree(AddedTailTests.newOrder)
    }

    /// The record's order, reversed, twice over, and the added keys read
    /// out of their own order.
    func testOtherOrders() throws {
        try assertAgree(AddedTailTests.newOrder.reversed() + AddedTailTests.newOrder)
        try assertAgree([.int("n1"), .int("n1"), .bytes("by"), .string("s1"), .int("amount"), .beginRecord("rec"), .int("inner"),
                         .endRecord, .double("d1"), .int("z"), .ints("r1", cap: 3), .bool("f1")])
    }

    /// Added keys asked for as another type, absent keys, a buffer too
    /// small, a nested record's key asked for at the top level and the
    /// other way round: the same failures and messages.
    func testFailures() throws {
        try assertAgree([
            .string("n1"), .int("s1"), .bool("d1"), .double("f1"), .bytes("s1"), .ints("r1", cap: 2), .ints("r1", cap: 0),
            .int("nope"), .int("inner"), .object("n1"), .beginRecord("n1"), .int("amount"), .int("n1"),
            .beginRecord("note"), .int("n1"), .int("t"), .endRecord, .endRecord, .int("n1"),
        ])
    }
}
