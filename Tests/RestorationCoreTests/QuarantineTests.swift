// The quarantine record (Quarantine.swift): what is written reads back;
// anything else is no quarantine.
import XCTest
@testable import RestorationCore

final class QuarantineTests: XCTestCase {
    func testRoundTripAndRejections() {
        let e = Quarantine.Entry(archive: "10:0000beef", record: 3, path: "Root/A", pid: 55)
        let text = Quarantine.encode(e)
        XCTAssertEqual(Quarantine.parse(Array(text.utf8)), e)
        XCTAssertEqual(Quarantine.path("/x/state.rst"), "/x/state.rst.quarantine")
        XCTAssertNil(Quarantine.parse(Array(text.utf8.dropLast())), "torn")
        XCTAssertNil(Quarantine.parse(Array(text.replacingOccurrences(of: "record=3", with: "record=-1").utf8)))
        XCTAssertNil(Quarantine.parse(Array(text.replacingOccurrences(of: "restoration-quarantine 1", with: "restoration-quarantine 9").utf8)))
        XCTAssertNil(Quarantine.parse([0xff]))
    }
}
