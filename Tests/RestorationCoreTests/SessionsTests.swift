// The session record (Sessions.swift): what is written reads back; anything
// torn, foreign or zeroed is no session.
import XCTest
@testable import RestorationCore

final class SessionsTests: XCTestCase {
    let owner = CrashGuard.Owner(pid: 4242, start: 987654, boot: "b00t-id")

    func testEncodeParseRoundTrip() {
        let text = SessionFile.encode(owner)
        XCTAssertEqual(text, "restoration-session 1\npid=4242\nstart=987654\nboot=b00t-id\nend\n")
        XCTAssertEqual(SessionFile.parse(Array(text.utf8)), owner)
        XCTAssertEqual(SessionFile.path("/a/state.rst"), "/a/state.rst.session")
    }

    func testAnythingElseIsNoSession() {
        let good = Array(SessionFile.encode(owner).utf8)
        XCTAssertNil(SessionFile.parse([]))
        XCTAssertNil(SessionFile.parse(Array(good.dropLast())), "torn: no final newline")
        XCTAssertNil(SessionFile.parse([UInt8](repeating: 0, count: good.count)), "zeroed")
        XCTAssertNil(SessionFile.parse(Array("restoration-session 2\npid=1\nstart=1\nboot=x\nend\n".utf8)), "foreign magic")
        XCTAssertNil(SessionFile.parse(Array("restoration-session 1\npid=0\nstart=1\nboot=x\nend\n".utf8)), "pid 0")
        XCTAssertNil(SessionFile.parse(Array("restoration-session 1\npid=1\nstart=-1\nboot=x\nend\n".utf8)), "negative start")
        XCTAssertNil(SessionFile.parse(Array("restoration-session 1\npid=1\nstart=1\nboot=\nend\n".utf8)), "empty boot id")
        XCTAssertNil(SessionFile.parse([0xff, 0xfe]), "not UTF-8")
    }

    func testRestoreReasonsAreTheCValues() {
        XCTAssertEqual(RestoreReason.firstLaunch.rawValue, 0)
        XCTAssertEqual(RestoreReason.reset.rawValue, 5)
        XCTAssertEqual(RestoreReason.fallback.description, "RST_REASON_FALLBACK")
    }
}
