// `restorectl test` on a real program: Tests/deathtest/broken.c (a program
// that restores at start and autosaves while it runs), compiled against
// librestoration.so — passing, a key its decode drops, a point it never
// reaches, a first launch, sealed values, the JSON output, and the
// command-line errors; and Examples/curses-picker in a pseudo-terminal.
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
        let r = try ctl(["test", "--roundtrip", "--settle", "0", "--timeout", "30", "--", exe, stateDir(dir, "st"), "good"])
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
        let r = try ctl(["test", "--roundtrip", "--settle", "0", "--points", "save-replaced", "--timeout", "30", "--", exe, stateDir(dir, "st"), "drop-key"])
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
    /// ended: NOT REACHED, which fails the run (exit 1, said on stdout)
    /// unless --allow-not-reached.
    func testNotReachedFailsUnlessAllowed() throws {
        let dir = TempDir("test-idle")
        let exe = try program(dir)
        let idle = stateDir(dir, "idle")
        var r = try ctl(["test", "--points", "save-begin", "--timeout", "1", "--", exe, idle, "idle"])
        XCTAssertEqual(r.code, 1, "\(r)")
        XCTAssertTrue(r.stdout.contains("save-begin  NOT REACHED  not reached within 1 s (restorectl ended the program)"), "\(r)")
        XCTAssertTrue(r.stdout.contains("\nFAILED: 1 of 1 point not reached, so not tested"), "the explanation is on stdout: \(r)")
        r = try ctl(["test", "--allow-not-reached", "--points", "save-begin", "--timeout", "1", "--", exe, idle, "idle"])
        XCTAssertEqual(r.code, 0, "\(r)")
        XCTAssertTrue(r.stdout.contains("note: 1 of 1 point not reached, accepted (--allow-not-reached)"), "\(r)")
        r = try ctl(["test", "--json", "--points", "autosave", "--timeout", "30", "--", exe, stateDir(dir, "exit"), "exit"])
        XCTAssertEqual(r.code, 1, "\(r)")
        XCTAssertTrue(r.stdout.contains("the program exited (status 0) without reaching it; its standard input was /dev/null"), "\(r)")
        let j = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdoutBytes)) as? [String: Any], "\(r)")
        XCTAssertEqual(j["ok"] as? Bool, false)
        XCTAssertEqual(j["not_reached"] as? Int, 1)
    }

    /// Seven of eight points not reached no longer pass: a program that
    /// never saves, asked for every point, exits 1 and says why.
    func testAProgramThatNeverReachesAPointFails() throws {
        let dir = TempDir("test-never")
        let exe = try program(dir)
        let r = try ctl(["test", "--timeout", "1", "--", exe, stateDir(dir, "st"), "idle"])
        XCTAssertEqual(r.code, 1, "\(r)")
        XCTAssertTrue(r.stdout.contains("\n0 passed, 0 failed, "), "\(r)")
        XCTAssertFalse(r.stdout.contains(" PASS "), "no point passes: \(r)")
        XCTAssertTrue(r.stdout.contains("not reached, so not tested"), "\(r)")
    }

    /// A point reached before anything was saved tests nothing: FIRST
    /// LAUNCH, said so, and the run fails (--allow-not-reached or not).
    func testAFirstLaunchIsNotAPass() throws {
        let dir = TempDir("test-first")
        let exe = try program(dir)
        let r = try ctl(["test", "--allow-not-reached", "--points", "restore-begin", "--timeout", "1", "--", exe, stateDir(dir, "st"), "idle"])
        XCTAssertEqual(r.code, 1, "\(r)")
        XCTAssertTrue(r.stdout.contains("baseline: a first launch: nothing saved yet"), "\(r)")
        XCTAssertTrue(r.stdout.contains("restore-begin  FIRST LAUNCH reached, but nothing was saved before it"), "\(r)")
        XCTAssertTrue(r.stdout.contains("0 passed, 0 failed, 0 not reached, 1 first launch"), "\(r)")
        XCTAssertTrue(r.stdout.contains("FAILED: 1 of 1 point tested nothing"), "\(r)")
    }

    /// A program that never restores from a file gives no report: exit 1,
    /// said on stdout in sentences (no printed "\n"), with what its input was.
    func testAProgramWithoutARestore() throws {
        let r = try ctl(["test", "--timeout", "10", "--", "/bin/true"])
        XCTAssertEqual(r.code, 1, "\(r)")
        XCTAssertTrue(r.stdout.contains("FAILED: the first run (RESTORATION_TEST_EXIT=restored) exited with status 0 without a report"), "\(r)")
        XCTAssertTrue(r.stdout.contains("its standard input was /dev/null"), "\(r)")
        XCTAssertTrue(r.stderr.contains("--- first run: output of '/bin/true' ---\n(no output)"), "\(r)")
        XCTAssertFalse(r.stdout.contains("\\n") || r.stderr.contains("\\n"), "a literal \\n: \(r)")
    }

    /// An ENCRYPTED value is sealed afresh at every save (a new nonce): the
    /// round trip compares it by inner type and length and passes, says so,
    /// and still names a sealed value that does not come back.
    func testRoundTripWithSealedValues() throws {
        let dir = TempDir("test-sealed")
        let exe = try program(dir)
        var r = try ctl(["test", "--roundtrip", "--settle", "0", "--points", "save-replaced", "--timeout", "30", "--", exe, stateDir(dir, "st"), "sealed"])
        XCTAssertEqual(r.code, 0, "\(r)")
        XCTAssertTrue(r.stdout.contains("every value came back the same (saved right after the restore: --settle 0); 1 sealed (ENCRYPTED) value compared by inner type and length only"), "\(r)")
        r = try ctl(["test", "--roundtrip", "--settle", "0", "--points", "save-replaced", "--timeout", "30", "--", exe, stateDir(dir, "drop"), "sealed-drop"])
        XCTAssertEqual(r.code, 1, "\(r)")
        XCTAssertTrue(r.stdout.contains("  root label: saved sealed string ("), "\(r)")
    }

    /// A change the program makes after its first frame (broken.c drift moves
    /// "count" 100 ms after its restore): the round trip saves at the
    /// program's first idle moment (--settle, default 500 ms) and names it;
    /// saved right after the restore (--settle 0) it is missed.
    func testRoundTripWaitsForTheFirstIdleMoment() throws {
        let dir = TempDir("test-settle")
        let exe = try program(dir)
        var r = try ctl(["test", "--roundtrip", "--points", "save-replaced", "--timeout", "30", "--", exe, stateDir(dir, "st"), "drift"])
        XCTAssertEqual(r.code, 1, "\(r)")
        XCTAssertNotNil(r.stdout.range(of: #"\n  root count: saved int = ([0-9]+), restored then saved int = [0-9]+\n"#, options: .regularExpression), "\(r)")
        XCTAssertTrue(r.stdout.contains("(saved at the program's first idle moment, 500 ms or more after its restore)"), "\(r)")
        r = try ctl(["test", "--roundtrip", "--settle", "0", "--points", "save-replaced", "--timeout", "30", "--", exe, stateDir(dir, "st0"), "drift"])
        XCTAssertEqual(r.code, 0, "\(r)")
        XCTAssertTrue(r.stdout.contains("(saved right after the restore: --settle 0)"), "\(r)")
        try expect(2, ["test", "--settle", "-1", "--", "/bin/true"])
    }

    /// The curses example (Examples/curses-picker) in a pseudo-terminal,
    /// typed into from Examples/curses-picker/keys.txt: every point and the
    /// round trip pass. Without --pty it cannot start (stdin /dev/null), and
    /// the message says so instead of blaming its restore.
    func testPtyAndKeysOnTheCursesExample() throws {
        let dir = TempDir("test-pty")
        let exe = try compileWithNcurses(Ctl.repo + "/Examples/curses-picker/picker.c", to: dir.file("picker"))
        let keys = Ctl.repo + "/Examples/curses-picker/keys.txt"
        var r = try ctl(["test", "--pty", "--keys", keys, "--roundtrip", "--timeout", "30", "--", exe, stateDir(dir, "st")])
        XCTAssertEqual(r.code, 0, "\(r)")
        XCTAssertTrue(r.stdout.contains("\n8 passed, 0 failed, 0 not reached; round trip passed"), "\(r)")
        r = try ctl(["test", "--points", "save-begin", "--timeout", "30", "--", exe, stateDir(dir, "nopty")])
        XCTAssertEqual(r.code, 1, "\(r)")
        XCTAssertTrue(r.stdout.contains("save-begin  NOT REACHED  the program exited (status 1) without reaching it; its standard input was /dev/null (a terminal program needs --pty)"), "\(r)")
        XCTAssertTrue(r.stderr.contains("picker: standard input and output must be a terminal"), "\(r)")
    }

    /// --keys: a wrong escape or @WAIT is a usage error naming the line.
    func testKeysSyntaxErrors() throws {
        let dir = TempDir("test-keys")
        for (text, message) in [("jj\n\\q\n", "line 2, column 1: '\\q' is not an escape (\\e, \\r, \\n, \\t, \\\\)"),
                                ("@WAIT:soon\n", "line 1: '@WAIT:soon' is not @WAIT:MS"),
                                ("abc\\", "line 1, column 4: a backslash at the end of the line")] {
            let f = dir.file("keys")
            FileManager.default.createFile(atPath: f, contents: Data(text.utf8))
            let r = try expect(2, ["test", "--keys", f, "--", "/bin/true"])
            XCTAssertTrue(r.stderr.contains(message), "\(text): \(r)")
        }
        let r = try expect(3, ["test", "--keys", dir.file("missing"), "--", "/bin/true"])
        XCTAssertTrue(r.stderr.contains("--keys: cannot open"), "\(r)")
    }

    /// What --keys types reaches the program: through a pipe closed after the
    /// last line without --pty (cat ends at its EOF), over a terminal that is
    /// the program's controlling one with --pty. The output is in the log
    /// shown for the first run (these programs do not restore).
    func testKeysReachTheProgram() throws {
        let dir = TempDir("test-keys-io")
        let f = dir.file("keys")
        FileManager.default.createFile(atPath: f, contents: Data("@# typed\nhello\\tworld\\n\n@WAIT:50\nbye\\\\\\n\n".utf8))
        var r = try ctl(["test", "--keys", f, "--timeout", "10", "--", "/bin/cat"])
        XCTAssertEqual(r.code, 1, "\(r)")
        XCTAssertTrue(r.stderr.contains("--- first run: output of '/bin/cat' ---\nhello\tworld\nbye\\\n"), "\(r)")
        XCTAssertTrue(r.stdout.contains("exited with status 0 without a report before its first restore finished: does it restore"), "\(r)")
        r = try ctl(["test", "--pty", "--timeout", "10", "--", "/bin/sh", "-c", "tty; test -t 0 && test -t 1 && test -t 2 && echo all-three; (exec 3</dev/tty) 2>/dev/null && echo controlling; echo TERM=$TERM"])
        XCTAssertEqual(r.code, 1, "\(r)")
        XCTAssertNotNil(r.stderr.range(of: #"/dev/pts/[0-9]+\r?\nall-three\r?\ncontrolling\r?\nTERM="#, options: .regularExpression), "\(r)")
    }

    /// picker.c, linked with librestoration.so and ncurses.
    private func compileWithNcurses(_ source: String, to output: String) throws -> String {
        guard let cc = Ctl.cCompiler?.first, let flags = Ctl.cCompiler?.dropFirst() else { throw XCTSkip("no C compiler") }
        guard let bin = Ctl.bin, FileManager.default.fileExists(atPath: bin + "/librestoration.so") else {
            throw XCTSkip("librestoration.so is not built next to the tests")
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: cc)
        p.arguments = Array(flags) + ["-std=c11", "-Wall", "-Wextra", "-Werror", "-I", Ctl.repo + "/Include", source, "-o", output,
                                      "-L", bin, "-lrestoration", "-Wl,-rpath," + bin, "-lncurses"]
        let err = Pipe()
        p.standardError = err
        try p.run()
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            XCTFail("cc failed (libncurses-dev is needed: make deps): \(text)")
            throw XCTSkip("picker.c did not compile")
        }
        return output
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
