// `restorectl test` on a real program: Tests/deathtest/broken.c (a program
// that restores at start and autosaves while it runs), compiled against
// librestoration.so — passing, a key its decode drops, a point it never
// reaches, the JSON output, and the command-line errors.
import Foundation
import XCTest

final class TestCommandTests: XCTestCase {
    /// broken.c compiled once per test into `dir`.
    private func program(_ dir: TempDir) throws -> String {
        let source = try String(contentsOfFile: Ctl.repo + "/Tests/deathtest/broken.c", encoding: .utf8)
        guard let exe = try Fixtures.compile(source, to: dir.file("broken"), in: dir, shared: false) else {
            throw XCTSkip("broken.c did not compile")
        }
        return exe
    }

    private func stateDir(_ dir: TempDir, _ name: String) -> String {
        let d = dir.file(name)
        mkdir(d, 0o755)
        return d
    }

    /// Every point passes, and the round trip; exit 0.
    func testEveryPointPassesForAGoodProgram() throws {
        let dir = TempDir("test-good")
        let exe = try program(dir)
        let r = try ctl(["test", "--roundtrip", "--timeout", "30", "--", exe, stateDir(dir, "st"), "good"])
        XCTAssertEqual(r.code, 0, "\(r)")
        XCTAssertTrue(r.stdout.contains("8 passed, 0 failed, 0 not reached; round trip passed"), "\(r)")
        for p in ["save-begin", "save-encoded", "save-written", "save-replaced", "restore-begin", "restore-decoding", "restore-finished", "autosave"] {
            XCTAssertTrue(r.stdout.contains("\n\(p) "), "no row for \(p): \(r)")
        }
        XCTAssertTrue(r.stdout.contains("'root' quarantined, as expected after a death in its decode"), "\(r)")
    }

    /// A decode that drops a key: the round trip fails, naming the path and key.
    func testRoundTripNamesADroppedKey() throws {
        let dir = TempDir("test-drop")
        let exe = try program(dir)
        let r = try ctl(["test", "--roundtrip", "--points", "save-replaced", "--timeout", "30", "--", exe, stateDir(dir, "st"), "drop-key"])
        XCTAssertEqual(r.code, 1, "\(r)")
        XCTAssertTrue(r.stdout.contains("  root label: saved string = \"label "), "\(r)")
        XCTAssertTrue(r.stdout.contains(", restored then saved string = \"start\""), "\(r)")
        XCTAssertTrue(r.stdout.contains("round trip FAILED"), "\(r)")
        XCTAssertTrue(r.stderr.contains("--- the round trip: output of"), "the program's log: \(r)")
    }

    /// A relaunch that skips what the previous launch restored fails the point.
    func testASkipAfterADeathFailsThePoint() throws {
        let dir = TempDir("test-skip")
        let exe = try program(dir)
        let r = try ctl(["test", "--json", "--points", "save-replaced", "--timeout", "30", "--", exe, stateDir(dir, "st"), "decline-later"])
        XCTAssertEqual(r.code, 1, "\(r)")
        let j = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdoutBytes)) as? [String: Any], "\(r)")
        XCTAssertEqual(j["ok"] as? Bool, false)
        XCTAssertEqual(j["failed"] as? Int, 1)
        let p = try XCTUnwrap((j["points"] as? [[String: Any]])?.first)
        XCTAssertEqual(p["verdict"] as? String, "FAIL")
        XCTAssertEqual(p["reason_code"] as? String, "skipped")
        XCTAssertTrue((p["reason"] as? String ?? "").contains("'root/child' (RST_SKIP_DECLINED"), "\(r)")
        XCTAssertTrue((j["archive"] as? String ?? "").hasSuffix("/st/broken.rst"))
    }

    /// A point never reached (timeout) or not reached because the program
    /// ended: NOT REACHED, not a failure; exit 0.
    func testNotReachedIsNotAFailure() throws {
        let dir = TempDir("test-idle")
        let exe = try program(dir)
        var r = try ctl(["test", "--points", "save-begin", "--timeout", "1", "--", exe, stateDir(dir, "idle"), "idle"])
        XCTAssertEqual(r.code, 0, "\(r)")
        XCTAssertTrue(r.stdout.contains("save-begin  NOT REACHED  not reached within 1 s (restorectl ended the program)"), "\(r)")
        r = try ctl(["test", "--points", "autosave", "--timeout", "30", "--", exe, stateDir(dir, "exit"), "exit"])
        XCTAssertEqual(r.code, 0, "\(r)")
        XCTAssertTrue(r.stdout.contains("autosave  NOT REACHED  the program exited (status 0) without reaching it"), "\(r)")
    }

    /// A program that never restores from a file gives no report: exit 1, said so.
    func testAProgramWithoutARestore() throws {
        let r = try ctl(["test", "--timeout", "10", "--", "/bin/true"])
        XCTAssertEqual(r.code, 1, "\(r)")
        XCTAssertTrue(r.stderr.contains("without a report: does the program restore from an archive path at start?"), "\(r)")
    }

    /// A command that does not exist: exit 3, named.
    func testMissingCommand() throws {
        let r = try expect(3, ["test", "--", "/nonexistent/program"])
        XCTAssertTrue(r.stderr.contains("cannot run '/nonexistent/program': No such file or directory"), "\(r)")
    }

    /// Command-line errors: exit 2, one line.
    func testUsageErrors() throws {
        try expect(2, ["test"])
        try expect(2, ["test", "--points", "save-begin,nowhere", "--", "/bin/true"])
        try expect(2, ["test", "--timeout", "0", "--", "/bin/true"])
        try expect(2, ["test", "--timeout", "-3", "--", "/bin/true"])
    }
}
