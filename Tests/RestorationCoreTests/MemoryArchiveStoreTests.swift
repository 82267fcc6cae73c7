// The in-memory store (MemoryArchiveStore.swift): what is written is read
// back, moved, linked, listed and removed per slot and index.
import XCTest
@testable import RestorationCore

final class MemoryArchiveStoreTests: XCTestCase {
    func bytes(_ s: MemoryArchiveStore, _ slot: StoreSlot, _ i: UInt64) throws -> [UInt8]? {
        guard let b = try s.read(slot, i) else { return nil }
        defer { b.release() }
        return [UInt8](b.bytes)
    }

    func testWriteReadMoveLinkRemove() throws {
        let s = MemoryArchiveStore(name: "test")
        XCTAssertEqual(s.describe, "test")
        XCTAssertNil(try bytes(s, .archive, 0))
        var durable = 0
        try [UInt8]([1, 2, 3]).withUnsafeBytes { try s.write(.archive, 0, $0, whenDurable: { durable += 1 }) }
        XCTAssertEqual(durable, 1)
        XCTAssertEqual(try bytes(s, .archive, 0), [1, 2, 3])
        try [UInt8]().withUnsafeBytes { try s.write(.marker, 0, $0, whenDurable: nil) }
        XCTAssertEqual(try bytes(s, .marker, 0), [])
        try s.link(.archive, 0, to: .generation, 1)
        try s.move(.archive, 0, to: .generation, 2)
        XCTAssertNil(try bytes(s, .archive, 0))
        XCTAssertEqual(try s.list(.generation).sorted(), [1, 2])
        XCTAssertEqual(try bytes(s, .generation, 2), [1, 2, 3])
        try s.remove(.generation, 1)
        XCTAssertEqual(try s.list(.generation), [2])
        XCTAssertTrue(s.canLink)
        try s.lock()
        s.unlock()
    }
}
