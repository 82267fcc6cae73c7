// The session record (Sessions.swift): what is written reads back; anything
// torn, foreign or zeroed is no session.
import XCTest
@testable import RestorationCore

final class SessionsTests: XCTestCase {
    let owner = CrashGuard.Owner(pid: 4242, start: 987654, boot: "b00t-id")

    func testEncodeParseRoundTrip() {
        let text = SessionFile.encode(owner)
        let m = MachineIdentity.current.identity
        XCTAssertTrue(text.hasPrefix("restoration-session 2\npid=4242\nstart=987654\nboot=b00t-id\nmachine=\(m.id)\nhost=\(m.host)\nbegan="), text)
        XCTAssertTrue(text.hasSuffix("\nend\n"))
        usleep(3000)
        XCTAssertEqual(SessionFile.encode(owner), text, "the same bytes at every encoding: the file store's closer compares them")
        XCTAssertEqual(SessionFile.parse(Array(text.utf8)), owner)
        let r = SessionFile.parseRecord(Array(text.utf8))
        XCTAssertEqual(r?.machine, m.id)
        XCTAssertEqual(r?.host, m.host)
        XCTAssertEqual(r?.isOtherMachine, false)
        XCTAssertNotNil(r?.beganMs)
        XCTAssertEqual(SessionFile.path("/a/state.rst"), "/a/state.rst.session")
    }

    /// 1.1 and 1.2 wrote version 1 (no machine): read as this machine's.
    func testVersion1RecordsAreRead() {
        let r = SessionFile.parseRecord(Array("restoration-session 1\npid=4242\nstart=987654\nboot=b00t-id\nend\n".utf8))
        XCTAssertEqual(r?.owner, owner)
        XCTAssertNil(r?.machine)
        XCTAssertEqual(r?.isOtherMachine, false)
    }

    func testARecordOfAnotherMachine() {
        let text = "restoration-session 2\npid=1\nstart=1\nboot=x\nmachine=other-machine-id\nhost=desk\nbegan=1795870000000\nend\n"
        let r = SessionFile.parseRecord(Array(text.utf8))
        XCTAssertEqual(r?.host, "desk")
        XCTAssertEqual(r?.isOtherMachine, MachineIdentity.current.identity.id != "other-machine-id")
        XCTAssertEqual(MachineIdentity.describe(host: "desk", id: "abc"), "desk (machine abc)")
    }

    func testAnythingElseIsNoSession() {
        let good = Array(SessionFile.encode(owner).utf8)
        XCTAssertNil(SessionFile.parse([]))
        XCTAssertNil(SessionFile.parse(Array(good.dropLast())), "torn: no final newline")
        XCTAssertNil(SessionFile.parse([UInt8](repeating: 0, count: good.count)), "zeroed")
        XCTAssertNil(SessionFile.parse(Array("restoration-session 3\npid=1\nstart=1\nboot=x\nend\n".utf8)), "foreign magic")
        XCTAssertNil(SessionFile.parse(Array("restoration-session 2\npid=1\nstart=1\nboot=x\nend\n".utf8)), "version 2 without its machine")
        XCTAssertNil(SessionFile.parse(Array("restoration-session 2\npid=1\nstart=1\nboot=x\nmachine=a/b\nhost=h\nbegan=1\nend\n".utf8)), "a machine id with '/'")
        XCTAssertNil(SessionFile.parse(Array("restoration-session 1\npid=0\nstart=1\nboot=x\nend\n".utf8)), "pid 0")
        XCTAssertNil(SessionFile.parse(Array("restoration-session 1\npid=1\nstart=-1\nboot=x\nend\n".utf8)), "negative start")
        XCTAssertNil(SessionFile.parse(Array("restoration-session 1\npid=1\nstart=1\nboot=\nend\n".utf8)), "empty boot id")
        XCTAssertNil(SessionFile.parse([0xff, 0xfe]), "not UTF-8")
    }

    func testMachineOverridesAreChecked() {
        XCTAssertTrue(MachineIdentity.valid("laptop-1"))
        XCTAssertFalse(MachineIdentity.valid(""))
        XCTAssertFalse(MachineIdentity.valid("a/b"))
        XCTAssertFalse(MachineIdentity.valid("a\nb"))
        XCTAssertTrue(MachineIdentity.valid(MachineIdentity.current.identity.id))
        XCTAssertTrue(MachineIdentity.valid(MachineIdentity.current.identity.host))
    }

    func testRestoreReasonsAreTheCValues() {
        XCTAssertEqual(RestoreReason.firstLaunch.rawValue, 0)
        XCTAssertEqual(RestoreReason.reset.rawValue, 5)
        XCTAssertEqual(RestoreReason.fallback.description, "RST_REASON_FALLBACK")
    }
}
