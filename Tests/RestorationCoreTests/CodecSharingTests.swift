// What the core reads through the codec instead of by hand: the info
// block's save time (ArchiveHeader.savedAtRange, the unchanged-save check)
// and the varints of the core's own payloads (readVarint over an array).
import XCTest
import RestorationArchive
@testable import RestorationCore

final class CodecSharingTests: XCTestCase {
    /// Two saves of the same state differ only inside the save time's
    /// range, which the codec finds after the info's three strings.
    func testTheSaveTimeIsWhereTheCodecSaysAndNothingElseDiffers() throws {
        let e = Engine(configuration: .init(appVersion: "1.2.3", idiom: "desktop"))
        try e.register(identifier: "A", parent: nil, className: "K", behavior: nil)
        let first = try e.saveToBytes()
        usleep(3000)
        let second = try e.saveToBytes()
        XCTAssertEqual(first.count, second.count)
        let r = try XCTUnwrap(first.withUnsafeBytes { ArchiveHeader.savedAtRange(in: $0) })
        XCTAssertEqual(r.count, 8)
        XCTAssertEqual(second.withUnsafeBytes { ArchiveHeader.savedAtRange(in: $0) }, r)
        let reader = try first.withUnsafeBytes { try Engine.validate($0, source: "the save") }
        let stored = first[r].enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        XCTAssertEqual(Int64(bitPattern: stored), reader.info.savedAtMs, "the 8 bytes are saved_at_ms, little-endian")
        XCTAssertEqual(Array(first[..<r.lowerBound]), Array(second[..<r.lowerBound]))
        XCTAssertEqual(Array(first[r.upperBound..<(first.count - 4)]), Array(second[r.upperBound..<(second.count - 4)]))
        XCTAssertTrue(first.withUnsafeBytes { a in second.withUnsafeBytes { b in Storage.sameButTime(a, b) } })
        // Bytes that cannot hold the info: no range.
        XCTAssertNil(Array(first[..<12]).withUnsafeBytes { ArchiveHeader.savedAtRange(in: $0) })
        XCTAssertNil(Array(first[..<(r.upperBound + 3)]).withUnsafeBytes { ArchiveHeader.savedAtRange(in: $0) })
        var cut = Array(first[..<17])
        cut[16] = 0x80   // a length whose varint never ends
        XCTAssertNil(cut.withUnsafeBytes { ArchiveHeader.savedAtRange(in: $0) })
    }

    /// The array form of the codec's varint reader: decodes and advances;
    /// cut off, too long or overflowing: nil and the position unchanged.
    func testTheArrayVarintReader() {
        var pos = 0
        XCTAssertEqual(readVarint([0x96, 0x01, 0x05], &pos), 150)
        XCTAssertEqual(pos, 2)
        XCTAssertEqual(readVarint([0x96, 0x01, 0x05], &pos), 5)
        XCTAssertEqual(pos, 3)
        XCTAssertNil(readVarint([0x96, 0x01, 0x05], &pos), "at the end")
        XCTAssertEqual(pos, 3)
        pos = 0
        XCTAssertNil(readVarint([0x80, 0x80], &pos), "cut off")
        XCTAssertEqual(pos, 0)
        XCTAssertNil(readVarint([UInt8](repeating: 0x80, count: 10) + [0x01], &pos), "longer than 10 bytes")
        XCTAssertNil(readVarint([UInt8](repeating: 0xFF, count: 9) + [0x02], &pos), "over 64 bits")
        XCTAssertEqual(pos, 0)
        XCTAssertEqual(readVarint([UInt8](repeating: 0xFF, count: 9) + [0x01], &pos), UInt64.max)
        pos = 0
        XCTAssertNil(readVarint([], &pos))
    }
}
