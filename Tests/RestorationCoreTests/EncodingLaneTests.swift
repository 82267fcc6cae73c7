import XCTest
@testable import RestorationArchive
@testable import RestorationCore

/// The encoding role's lane (the C face's fast lane, CoderEncoding.swift):
/// open only between `openLane` and `closeLane`, never after the save's
/// first failure or once the object's values are asked about.
final class EncodingLaneTests: XCTestCase {
    func testLaneIsClearedByAFailureAndBySensitivity() {
        var role = EncodingRole()
        role.writer.beginObject(identifier: 0, parent: nil, className: nil)
        role.openLane()
        XCTAssertNil(role.lane, "no sink: no lane")
        role.openSink()
        role.openLane()
        XCTAssertNotNil(role.lane)
        role.sensitivityOn = true
        XCTAssertNil(role.lane, "sensitivity switched on mid-callback")
        role.openLane()
        XCTAssertNil(role.lane, "an object whose values are asked about")
        role.sensitivityOn = false
        role.openLane()
        XCTAssertNotNil(role.lane)
        role.note(RestorationFailure(.invalid, "x"))
        XCTAssertNil(role.lane, "the save's first failure")
        role.openLane()
        XCTAssertNil(role.lane, "a failed save stays off the lane")
        role.failure = nil
        role.openLane()
        XCTAssertNotNil(role.lane)
        role.closeLane()
        XCTAssertNil(role.lane)
        role.closeSink()
        XCTAssertNil(role.sink)
    }

    /// The lane's text check (words, the last one overlapping) answers as
    /// `ArgumentRules.isText`: every length to 40, a NUL, a byte >= 0x80,
    /// valid and invalid UTF-8 at every position.
    func testLaneTextAgreesWithIsText() {
        let specials: [[UInt8]] = [[0], [0x80], [0xFF], [0xC3, 0xA9], [0xE2, 0x82, 0xAC], [0xC3], [0x7F], [0x01]]
        var cases: [[UInt8]] = []
        for n in 0...40 {
            let plain = (0..<n).map { UInt8(ascii: "a") + UInt8($0 % 26) }
            cases.append(plain)
            for i in 0..<n { for sp in specials { var c = plain; c.replaceSubrange(i..<min(n, i + sp.count), with: sp); cases.append(c) } }
        }
        for c in cases {
            c.withUnsafeBytes { b in XCTAssertEqual(Coder.isLaneText(b), ArgumentRules.isText(b), "\(c)") }
        }
    }
}
