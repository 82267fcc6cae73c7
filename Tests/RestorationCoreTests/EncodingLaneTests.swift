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
}
