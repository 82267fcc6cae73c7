// KillPoints.parse and TestExits (RESTORATION_KILL_AT, RESTORATION_TEST_EXIT):
// the values accepted and the sentences for the others, and the report's
// JSON. The process-level behaviour (SIGKILL, _exit) is tested by the C
// program C/killpoints.c (RestorationCTests.KillPointsCTests).
import XCTest
@testable import RestorationCore

final class TestExitsTests: XCTestCase {
    func testKillPointValues() {
        XCTAssertEqual(KillPoints.parse(nil), .off)
        XCTAssertEqual(KillPoints.parse(""), .off)
        XCTAssertEqual(KillPoints.parse("save-begin"), .armed(.saveBegin, count: 1))
        XCTAssertEqual(KillPoints.parse("restore-decoding:3"), .armed(.restoreDecoding, count: 3))
        for p in KillPoint.allCases { XCTAssertEqual(KillPoints.parse(p.rawValue), .armed(p, count: 1)) }
        guard case .invalid(let why) = KillPoints.parse("save") else { return XCTFail("accepted 'save'") }
        XCTAssertTrue(why.contains("RESTORATION_KILL_AT='save' names no kill point (save-begin, save-encoded"), why)
        for bad in ["save-begin:0", "save-begin:", "save-begin:-1", "save-begin:x", "save-begin:1:2"] {
            guard case .invalid(let w) = KillPoints.parse(bad) else { XCTFail("accepted '\(bad)'"); continue }
            XCTAssertTrue(w.contains("the count after ':' must be a whole number from 1; ignored"), w)
        }
        XCTAssertEqual(KillPoint.allCases.map(\.rawValue), ["save-begin", "save-encoded", "save-written", "save-replaced",
                                                           "restore-begin", "restore-decoding", "restore-finished", "autosave"])
    }

    func testTestExitValues() {
        XCTAssertEqual(TestExits.parse(nil, report: "/r").mode, .off)
        XCTAssertNil(TestExits.parse(nil, report: "/r").warning)
        let r = TestExits.parse("restored", report: "/tmp/r.json")
        XCTAssertEqual(r.mode, .restored)
        XCTAssertEqual(r.report, "/tmp/r.json")
        XCTAssertNil(r.warning)
        XCTAssertEqual(TestExits.parse("roundtrip", report: "/tmp/r.json").mode, .roundtrip)
        let noReport = TestExits.parse("restored", report: nil)
        XCTAssertEqual(noReport.mode, .off)
        XCTAssertEqual(noReport.warning, "RESTORATION_TEST_EXIT=restored without RESTORATION_TEST_REPORT: no report is written and the program goes on")
        XCTAssertEqual(TestExits.parse("roundtrip", report: "").mode, .off)
        let other = TestExits.parse("yes", report: "/r")
        XCTAssertEqual(other.mode, .off)
        XCTAssertEqual(other.warning, "RESTORATION_TEST_EXIT='yes' is neither 'restored' nor 'roundtrip'; ignored")
    }

    /// RESTORATION_TEST_SETTLE: milliseconds from 0 to 600000; anything else
    /// is named in a warning and the round trip saves at once.
    func testSettleValues() {
        XCTAssertEqual(TestExits.parseSettle(nil).ms, 0)
        XCTAssertNil(TestExits.parseSettle("").warning)
        XCTAssertEqual(TestExits.parseSettle("500").ms, 500)
        XCTAssertEqual(TestExits.parseSettle("600000").ms, 600_000)
        for bad in ["-1", "600001", "1.5", "soon", " 5"] {
            let r = TestExits.parseSettle(bad)
            XCTAssertEqual(r.ms, 0, bad)
            XCTAssertEqual(r.warning, "RESTORATION_TEST_SETTLE='\(bad)' is not a whole number of milliseconds from 0 to 600000; the round trip saves right after the restore")
        }
    }

    func testJSONStrings() {
        XCTAssertEqual(TestExits.json("plain"), "\"plain\"")
        XCTAssertEqual(TestExits.json("a\"b\\c\nd\te\u{01}é"), "\"a\\\"b\\\\c\\nd\\te\\u0001é\"")
    }

    /// The report of a file restore: reason, counts, skips, size, store.
    func testReportOfAFileRestore() throws {
        let dir = NSTemporaryDirectory() + "/testexits-\(getpid())-\(Int.random(in: 0..<1_000_000))"
        mkdir(dir, 0o700)
        defer { _ = try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/a \"q\".rst"
        let saver = Engine(configuration: .init(archivePath: path))
        _ = try saver.register(identifier: "root", parent: nil, className: nil, behavior: nil)
        let root = saver.find(path: "root")
        _ = try saver.register(identifier: "lost", parent: root, className: "Nobody", behavior: nil)
        try saver.save()
        let e = Engine(configuration: .init(archivePath: path))
        _ = try e.register(identifier: "root", parent: nil, className: nil, behavior: nil)
        try e.restore()
        let text = TestExits.report(e, nil, [])
        var st = stat()
        XCTAssertEqual(stat(path, &st), 0)
        XCTAssertTrue(text.hasPrefix("{\"reason\": \"RST_REASON_RELAUNCH\", \"generation\": 0, \"restored\": 1, \"skipped\": [{\"path\": \"root/lost\", \"reason\": \"RST_SKIP_NO_FACTORY\", \"detail\": "), text)
        XCTAssertTrue(text.hasSuffix("], \"archive_bytes\": \(st.st_size), \"store\": \"file '\(dir)/a \\\"q\\\".rst'\", \"status\": \"RST_OK\", \"error\": \"\"}\n"), text)
        let failed = TestExits.report(e, RestorationFailure(.notFound, "there is no archive at 'x'"), [("roundtrip", "\"x.rst\"")])
        XCTAssertTrue(failed.hasPrefix("{\"reason\": \"RST_REASON_FIRST_LAUNCH\", \"generation\": 0, \"restored\": 0, \"skipped\": [], \"archive_bytes\": 0, "), failed)
        XCTAssertTrue(failed.hasSuffix("\"status\": \"RST_ERR_NOT_FOUND\", \"error\": \"there is no archive at 'x'\", \"roundtrip\": \"x.rst\"}\n"), failed)
    }
}
