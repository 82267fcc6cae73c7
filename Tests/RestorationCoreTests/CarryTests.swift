// Carry.swift: records nothing could produce are carried through the next
// saves, counted down by each save that writes them.
import XCTest
@testable import RestorationCore

final class CarryTests: XCTestCase {
    /// An archive of A (class Host) and its child A/B (class Gone).
    private func archive() throws -> [UInt8] {
        let e = Engine(configuration: .init())
        let a = try e.register(identifier: "A", parent: nil, className: "Host", behavior: nil)
        _ = try e.register(identifier: "B", parent: a, className: "Gone", behavior: nil)
        return try e.saveToBytes()
    }

    private func records(_ bytes: [UInt8]) throws -> Int {
        try bytes.withUnsafeBytes { try Engine.validate($0, source: "the save") }.recordCount
    }

    func testUnclaimedRecordIsCarriedForTheConfiguredSaves() throws {
        let bytes = try archive()
        var c = Engine.Configuration()
        c.carrySaves = 2
        let e = Engine(configuration: c)
        _ = try e.register(identifier: "A", parent: nil, className: "Host", behavior: nil)
        try bytes.withUnsafeBytes { try e.restore(bytes: $0) }
        XCTAssertEqual(e.carriedRecords.map(\.path), ["A/B"])
        XCTAssertEqual(e.carriedRecords.map(\.savesLeft), [2])
        XCTAssertEqual(try records(try e.saveToBytes()), 2, "the first save writes it")
        XCTAssertEqual(e.carriedRecords.map(\.savesLeft), [1])
        XCTAssertEqual(try records(try e.saveToBytes()), 2, "the second save writes it")
        XCTAssertTrue(e.carriedRecords.isEmpty)
        XCTAssertTrue(e.carry.isEmpty)
        XCTAssertEqual(try records(try e.saveToBytes()), 1, "then it is gone")
    }

    func testNothingIsCarriedWithoutCarrySaves() throws {
        let bytes = try archive()
        let e = Engine(configuration: .init())
        _ = try e.register(identifier: "A", parent: nil, className: "Host", behavior: nil)
        try bytes.withUnsafeBytes { try e.restore(bytes: $0) }
        XCTAssertTrue(e.carry.isEmpty)
        XCTAssertEqual(try records(try e.saveToBytes()), 1)
    }

    func testAClaimedRecordIsNotCarried() throws {
        let bytes = try archive()
        var c = Engine.Configuration()
        c.carrySaves = 2
        let e = Engine(configuration: c)
        let a = try e.register(identifier: "A", parent: nil, className: "Host", behavior: nil)
        _ = try e.register(identifier: "B", parent: a, className: "Gone", behavior: nil)
        try bytes.withUnsafeBytes { try e.restore(bytes: $0) }
        XCTAssertTrue(e.carry.isEmpty)
    }
}
