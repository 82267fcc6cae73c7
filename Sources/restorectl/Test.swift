// `restorectl test`: process-death testing of any program linked with the
// library, with no test code in it (docs/TESTING.md). The library does the
// work inside the program (RESTORATION_KILL_AT, RESTORATION_TEST_EXIT);
// this command launches it once per kill point, checks the archive the
// death left and what the next launch restores.

import ArgumentParser
import RestorationArchive
import RestorationCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

struct TestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Kill a program at each save and restore point and check what its next launch restores.",
        discussion: """
            COMMAND is an ordinary program linked with the library that restores at \
            start and saves while it runs, to an archive path or to a store of its \
            own. restorectl first runs it with RESTORATION_TEST_EXIT=restored to \
            learn its archive (unless --archive is given) and what it restores; when \
            nothing is saved yet, it runs it once more until its first save is in \
            place. Then, per point, it runs COMMAND with RESTORATION_KILL_AT=POINT: \
            the library sends the process SIGKILL when it reaches POINT. A point not \
            reached within --timeout seconds, or not reached because the program \
            ended on its own, is NOT REACHED. After the kill the archive, or one of \
            its generations, must be valid (with an archive path); the program is \
            relaunched with RESTORATION_TEST_EXIT=restored and the point PASSes when \
            that relaunch reports RST_REASON_RECOVER or RST_REASON_FALLBACK, did not \
            die, and skipped nothing the previous launch restored (a store of its \
            own: nothing the previous launch did not skip). After restore-decoding \
            the record whose decode was running is quarantined: expected, and named. \
            A point reached before anything was saved is FIRST LAUNCH: it tested \
            nothing. Otherwise it FAILs with the reason, and the program's output is \
            shown on stderr.

            Points: \(KillPoint.allCases.map(\.rawValue).joined(separator: ", ")).

            --roundtrip relaunches once with RESTORATION_TEST_EXIT=roundtrip (and no \
            --keys): the program restores, and the library saves its state beside \
            the report at the program's first idle moment: its first rst_dispatch \
            --settle MS (default \(TestCommand.defaultSettleMs)) or more after the restore \
            (RESTORATION_TEST_SETTLE), so what it changes after its first frame is \
            seen; --settle 0 saves right after the restore (a program that keeps \
            changing its state by itself needs that). Every value that does not come \
            back the same is listed as 'PATH key: saved X, restored then saved Y' \
            (save times ignored; a sealed ENCRYPTED value by its inner type and \
            length, as restorectl does not have the program's key); any difference fails.

            Without --pty the child's stdin is /dev/null (a pipe with --keys) and \
            its output goes to a log. With --pty its stdin, stdout and stderr are a \
            pseudo-terminal of 80x24 (TERM=\(TestChild.defaultTerm) when TERM is unset or \
            dumb), in a session of its own. --keys FILE (or - for stdin) types into \
            every launch but the round trip's: each line is typed without its line \
            end, with the escapes \\e (ESC), \\r (Enter), \\n, \\t and \\\\; a line \
            @WAIT:MS pauses MS milliseconds. The child runs in its own process \
            group, killed whole after each run. A GUI program runs the same way \
            under Xvfb (set DISPLAY).

            --json prints {"command": [...], "archive": PATH, "store": DESCRIPTION, \
            "baseline": TEXT, "error": null | TEXT, "points": [{"point", "verdict": \
            "PASS"|"FAIL"|"NOT REACHED"|"FIRST LAUNCH", "reason", "reason_code", \
            "skipped": [{"path", "reason"}]}], "roundtrip": null | {"verdict", \
            "reason", "differences": [...]}, "passed": N, "failed": N, \
            "not_reached": N, "first_launch": N, "ok": BOOL, "verdict": [TEXT]}.

            Exits 0 only when every point asked for was reached and passed (NOT \
            REACHED too with --allow-not-reached) and the round trip passed; 1 \
            otherwise, with the reasons after the table on stdout.

            EXAMPLES
              restorectl test -- ./myapp --demo-loop
              restorectl test --points save-written,restore-decoding --timeout 20 -- ./myapp
              restorectl test --pty --keys keys.txt -- ./my-curses-app
              xvfb-run restorectl test --roundtrip -- ./my-gtk-app

            \(Exit.table)
            """)

    @Option(help: ArgumentHelp("Comma-separated kill points, or 'all'.", valueName: "list"))
    var points = "all"

    @Option(help: ArgumentHelp("The archive the program saves (default: the one its first run names).", valueName: "path"))
    var archive: String?

    @Option(help: ArgumentHelp("Seconds to wait for a point, and for a relaunch to restore.", valueName: "s"))
    var timeout: Double = 10

    @Flag(help: "Also check that a restore followed by a save gives back every value.")
    var roundtrip = false

    @Option(help: ArgumentHelp("With --roundtrip: save at the program's first idle moment this many milliseconds after its restore (0: right after it).", valueName: "ms"))
    var settle = TestCommand.defaultSettleMs

    /// The default of --settle: longer than a first frame takes, even under Xvfb.
    static let defaultSettleMs = 500

    @Flag(help: "Pass even when points are not reached (they are still listed).")
    var allowNotReached = false

    @Flag(help: "Run the program in a pseudo-terminal of its own.")
    var pty = false

    @Option(help: ArgumentHelp("Type this file's lines into every launch ('-': standard input).", valueName: "file"))
    var keys: String?

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    @Argument(parsing: .postTerminator, help: ArgumentHelp("The program and its arguments, after '--'.", valueName: "command"))
    var command: [String] = []

    func validate() throws {
        if command.isEmpty { throw ValidationError("give the program to test after '--'") }
        if !(timeout > 0 && timeout <= 86400) { throw ValidationError("--timeout must be a number of seconds above 0") }
        if keys == "" { throw ValidationError("--keys: give a file, or - for standard input") }
        if !(0...600_000).contains(settle) { throw ValidationError("--settle must be a whole number of milliseconds from 0 to 600000") }
        _ = try selectedPoints()
    }

    func selectedPoints() throws(ValidationError) -> [KillPoint] {
        if points == "all" { return KillPoint.allCases }
        var out: [KillPoint] = []
        for name in points.split(separator: ",", omittingEmptySubsequences: false) {
            let n = String(name).trimmingSpaces()
            guard let p = KillPoint(rawValue: n) else {
                throw ValidationError("--points: '\(n)' is not a kill point (\(KillPoint.allCases.map(\.rawValue).joined(separator: ", ")), or all)")
            }
            if !out.contains(p) { out.append(p) }
        }
        return out
    }

    func run() throws {
        TestChild.killChildOnInterrupt()
        let typed = try keys.map { path throws(CtlFailure) in try Keys.load(path) }
        var session = try DeathTest(command: command, archive: archive, timeout: timeout, io: ChildIO(pty: pty, keys: typed),
                                    settleMs: settle)
        defer { session.cleanUp() }
        var results = try session.runAll(selectedPoints(), roundtrip: roundtrip)
        results.allowNotReached = allowNotReached
        var out = Output()
        if json {
            out.write(JSONWriter.write(results.json(command: command)))
        } else {
            for l in results.table() { out.line(l) }
        }
        out.flush()
        fflush(stdout)
        for f in results.failureLogs { fputs(f + "\n", stderr) }
        if !results.ok { throw ExitCode(Exit.failure) }
    }
}

extension String {
    func trimmingSpaces() -> String { Substring(self).trimmingCharacters() }
}

/// What a relaunch with RESTORATION_TEST_EXIT reported.
struct TestReport {
    var reason: String
    var generation: Int
    var restored: Int
    var skipped: [(path: String, reason: String, detail: String)]
    var archiveBytes: Int
    var store: String
    var status: String
    var error: String
    /// Why the round trip's save failed (RESTORATION_TEST_EXIT=roundtrip).
    var roundtripError: String?

    static func read(_ file: String) -> TestReport? {
        guard let bytes = try? FileStore.read(file), let j = try? JSONParser.parse(bytes) else { return nil }
        func str(_ k: String) -> String { if case .string(let s)? = j[k] { return s }; return "" }
        func int(_ k: String) -> Int { if case .number(let s)? = j[k] { return Int(s) ?? 0 }; return 0 }
        var skipped: [(String, String, String)] = []
        if case .array(let a)? = j["skipped"] {
            for e in a {
                var p = "", r = "", d = ""
                if case .string(let s)? = e["path"] { p = s }
                if case .string(let s)? = e["reason"] { r = s }
                if case .string(let s)? = e["detail"] { d = s }
                skipped.append((p, r, d))
            }
        }
        return TestReport(reason: str("reason"), generation: int("generation"), restored: int("restored"),
                          skipped: skipped, archiveBytes: int("archive_bytes"), store: str("store"),
                          status: str("status"), error: str("error"),
                          roundtripError: str("roundtrip_error").isEmpty ? nil : str("roundtrip_error"))
    }

    /// The archive path a store description names ("file '<path>'").
    var storeFile: String? {
        guard store.hasPrefix("file '"), store.hasSuffix("'"), store.count > 7 else { return nil }
        return String(store.dropFirst(6).dropLast())
    }
}

/// One point's outcome.
struct PointResult {
    enum Verdict: String { case pass = "PASS", fail = "FAIL", notReached = "NOT REACHED", firstLaunch = "FIRST LAUNCH" }
    var point: String
    var verdict: Verdict
    var reason: String
    var code: String
    var skipped: [(path: String, reason: String)] = []
}

struct TestResults {
    /// The archive the program saves (nil: a store of its own).
    var archive: String?
    /// The store its first report names.
    var store = ""
    /// What the first runs restored, said as a sentence.
    var baseline: String?
    /// Why no point could run (the first run gave no report).
    var setupFailure: String?
    var points: [PointResult] = []
    var roundtrip: (pass: Bool, differences: [String], reason: String)?
    var failureLogs: [String] = []
    var allowNotReached = false

    func count(_ v: PointResult.Verdict) -> Int { points.filter { $0.verdict == v }.count }

    var ok: Bool {
        setupFailure == nil && count(.fail) == 0 && count(.firstLaunch) == 0
            && (allowNotReached || count(.notReached) == 0) && (roundtrip?.pass ?? true)
    }

    /// The sentences after the table: why the run fails, or what it accepted.
    var verdict: [String] {
        var out: [String] = []
        if let setupFailure { out.append("FAILED: " + setupFailure) }
        let total = points.count
        if count(.fail) > 0 {
            out.append("FAILED: \(count(.fail)) of \(total) point\(total == 1 ? "" : "s") failed: after a death there the next launch did not get the state back (the program's output is on stderr)")
        }
        if count(.firstLaunch) > 0 {
            out.append("FAILED: \(count(.firstLaunch)) of \(total) point\(total == 1 ? "" : "s") tested nothing: nothing was saved before the kill, so the relaunch was a first launch; make the program save before it (--keys to change something, or a first save at start)")
        }
        if count(.notReached) > 0 {
            if allowNotReached {
                out.append("note: \(count(.notReached)) of \(total) point\(total == 1 ? "" : "s") not reached, accepted (--allow-not-reached): they were not tested")
            } else {
                out.append("FAILED: \(count(.notReached)) of \(total) point\(total == 1 ? "" : "s") not reached, so not tested: make the program reach them (changes it saves while it runs: --keys, with --pty for a terminal program; a longer --timeout), or pass --allow-not-reached")
            }
        }
        if let rt = roundtrip, !rt.pass { out.append("FAILED: the round trip: " + rt.reason) }
        return out
    }

    func table() -> [String] {
        var lines: [String] = []
        if let archive { lines.append("archive \(Text.quotedPath(archive))") }
        else if !store.isEmpty { lines.append("store \(Text.oneLine(store)) (the program's own: judged by its relaunches' reports)") }
        if let baseline { lines.append(Text.oneLine(baseline)) }
        if setupFailure == nil {
            if !lines.isEmpty { lines.append("") }
            let w = max(5, points.map(\.point.count).max() ?? 0, roundtrip == nil ? 0 : 9)
            func pad(_ s: String, _ n: Int) -> String { s + String(repeating: " ", count: max(0, n - s.count)) }
            lines.append(pad("POINT", w) + "  " + pad("VERDICT", 12) + " REASON")
            for p in points { lines.append(pad(p.point, w) + "  " + pad(p.verdict.rawValue, 12) + " " + Text.oneLine(p.reason)) }
            if let rt = roundtrip {
                lines.append(pad("roundtrip", w) + "  " + pad(rt.pass ? "PASS" : "FAIL", 12) + " " + Text.oneLine(rt.reason))
                for d in rt.differences { lines.append("  " + d) }
            }
            lines.append("")
            var summary = "\(count(.pass)) passed, \(count(.fail)) failed, \(count(.notReached)) not reached"
            if count(.firstLaunch) > 0 { summary += ", \(count(.firstLaunch)) first launch" }
            lines.append(summary + (roundtrip.map { $0.pass ? "; round trip passed" : "; round trip FAILED" } ?? ""))
        }
        let v = verdict
        if !v.isEmpty {
            lines.append("")
            lines += v.map { Text.oneLine($0) }
        }
        return lines
    }

    func json(command: [String]) -> JSON {
        let pts: [JSON] = points.map { p in
            .object([("point", .string(p.point)), ("verdict", .string(p.verdict.rawValue)),
                     ("reason", .string(p.reason)), ("reason_code", .string(p.code)),
                     ("skipped", .array(p.skipped.map { .object([("path", .string($0.path)), ("reason", .string($0.reason))]) }))])
        }
        let rt: JSON = roundtrip.map { .object([("verdict", .string($0.pass ? "PASS" : "FAIL")), ("reason", .string($0.reason)),
                                                 ("differences", .array($0.differences.map { .string($0) }))]) } ?? .null
        return .object([
            ("command", .array(command.map { .string($0) })),
            ("archive", .string(archive ?? "")),
            ("store", .string(store)),
            ("baseline", baseline.map { .string($0) } ?? .null),
            ("error", setupFailure.map { .string($0) } ?? .null),
            ("points", .array(pts)),
            ("roundtrip", rt),
            ("passed", .int(Int64(count(.pass)))),
            ("failed", .int(Int64(count(.fail)))),
            ("not_reached", .int(Int64(count(.notReached)))),
            ("first_launch", .int(Int64(count(.firstLaunch)))),
            ("ok", .bool(ok)),
            ("verdict", .array(verdict.map { .string($0) })),
        ])
    }
}
