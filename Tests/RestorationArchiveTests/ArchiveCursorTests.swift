import XCTest
@testable import RestorationArchive

/// The one cursor every reader of archive bytes walks with: no read goes
/// at or past its limit, and a read that does not fit leaves the position.
final class ArchiveCursorTests: XCTestCase {
    func testVarintsBytesAndLengths() {
        let b: [UInt8] = [0x05] + varint(300) + [0x03] + Array("abc".utf8) + [0x7F]
        b.withUnsafeBytes { p in
            var c = ArchiveCursor(p.baseAddress!, at: 0)
            XCTAssertEqual(c.byte(), 5)
            XCTAssertEqual(c.varint(b.count), 300)
            XCTAssertEqual(c.pos, 3)
            let n = c.length(b.count)
            XCTAssertEqual(n, 3)
            XCTAssertEqual(Array(c.bytes(3)), Array("abc".utf8))
            c.skip(3)
            XCTAssertEqual(c.remaining(b.count), 1)
            XCTAssertEqual(c.varint(b.count), 0x7F)
            XCTAssertEqual(c.remaining(b.count), 0)
            XCTAssertNil(c.varint(b.count), "nothing left before the limit")
        }
    }

    func testReadsStopAtTheLimit() {
        let b: [UInt8] = varint(300) + [0x05, 1, 2]
        b.withUnsafeBytes { p in
            var c = ArchiveCursor(p.baseAddress!, at: 0)
            XCTAssertNil(c.varint(1), "a varint cut off by the limit")
            XCTAssertEqual(c.pos, 0)
            XCTAssertEqual(c.varintProblem(1), .cutOff)
            c.skip(2)
            XCTAssertNil(c.length(b.count), "a length longer than what remains")
            XCTAssertEqual(c.pos, 3, "after the length's varint")
            c.pos = 2
            XCTAssertNil(c.length(4), "the limit, not the buffer, bounds a length")
        }
    }

    func testTooLongAndOverflowingVarints() {
        let tooLong = [UInt8](repeating: 0x80, count: 10) + [0]
        let overflow = [UInt8](repeating: 0xFF, count: 9) + [0x02]
        for (bytes, problem) in [(tooLong, VarintProblem.tooLong), (overflow, .overflow)] {
            bytes.withUnsafeBytes { p in
                var c = ArchiveCursor(p.baseAddress!, at: 0)
                XCTAssertNil(c.varint(bytes.count))
                XCTAssertEqual(c.pos, 0)
                XCTAssertEqual(c.varintProblem(bytes.count), problem)
            }
        }
    }
}
