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
            start and saves while it runs. restorectl first runs it with \
            RESTORATION_TEST_EXIT=restored to learn its archive (unless --archive is \
            given) and what it restores; when there is no archive yet, it runs it \
            once more until its first save is in place. Then, per point, it runs \
            COMMAND with RESTORATION_KILL_AT=POINT: the library sends the process \
            SIGKILL when it reaches POINT. A point not reached within --timeout \
            seconds, or not reached because the program ended on its own, is NOT \
            REACHED (not a failure). After the kill the archive, or one of its \
            generations, must be valid; the program is relaunched with \
            RESTORATION_TEST_EXIT=restored and the point PASSes when that relaunch \
            reports RST_REASON_RECOVER or RST_REASON_FALLBACK, did not die, and \
            skipped nothing the previous launch restored (after restore-decoding, \
            the record whose decode was running is quarantined: expected, and \
            named). Otherwise it FAILs with the reason, and the program's output \
            is shown on stderr.

            Points: \(KillPoint.allCases.map(\.rawValue).joined(separator: ", ")).

            --roundtrip relaunches once with RESTORATION_TEST_EXIT=roundtrip: the \
            program restores, and the library saves the state just restored, \
            untouched, beside the report. Every value that does not come back the \
            same is listed as 'PATH key: saved X, restored then saved Y' (save times \
            ignored); any difference fails.

            The child's stdin is /dev/null and its output goes to a log; it runs in \
            its own process group, killed whole after each run. A GUI program runs \
            the same way under Xvfb (set DISPLAY).

            --json prints {"command": [...], "archive": PATH, "points": [{"point", \
            "verdict": "PASS"|"FAIL"|"NOT REACHED", "reason", "reason_code", \
            "skipped": [{"path", "reason"}]}], "roundtrip": null | {"verdict", \
            "differences": [...]}, "passed": N, "failed": N, "not_reached": N, \
            "ok": BOOL}.

            Exits 0 when every reached point and the round trip pass, 1 otherwise.

            EXAMPLES
              restorectl test -- ./myapp --demo-loop
              restorectl test --points save-written,restore-decoding --timeout 20 -- ./myapp
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

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    @Argument(parsing: .postTerminator, help: ArgumentHelp("The program and its arguments, after '--'.", valueName: "command"))
    var command: [String] = []

    func validate() throws {
        if command.isEmpty { throw ValidationError("give the program to test after '--'") }
        if !(timeout > 0 && timeout <= 86400) { throw ValidationError("--timeout must be a number of seconds above 0") }
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
        var session = try DeathTest(command: command, archive: archive, timeout: timeout)
        defer { session.cleanUp() }
        let results = try session.runAll(selectedPoints(), roundtrip: roundtrip)
        var out = Output()
        if json {
            out.write(JSONWriter.write(results.json(command: command, archive: session.archivePath ?? "")))
        } else {
            for l in results.table(archive: session.archivePath ?? "") { out.line(l) }
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
                          status: str("status"), error: str("error"))
    }

    /// The archive path a store description names ("file '<path>'").
    var storeFile: String? {
        guard store.hasPrefix("file '"), store.hasSuffix("'"), store.count > 7 else { return nil }
        return String(store.dropFirst(6).dropLast())
    }
}

/// One point's outcome.
struct PointResult {
    enum Verdict: String { case pass = "PASS", fail = "FAIL", notReached = "NOT REACHED" }
    var point: String
    var verdict: Verdict
    var reason: String
    var code: String
    var skipped: [(path: String, reason: String)] = []
}

struct TestResults {
    var points: [PointResult] = []
    var roundtrip: (pass: Bool, differences: [String], reason: String)?
    var failureLogs: [String] = []

    var ok: Bool { !points.contains { $0.verdict == .fail } && (roundtrip?.pass ?? true) }

    func table(archive: String) -> [String] {
        var lines = ["archive \(Text.quotedPath(archive))", ""]
        let w = max(5, points.map(\.point.count).max() ?? 0, roundtrip == nil ? 0 : 9)
        func pad(_ s: String, _ n: Int) -> String { s + String(repeating: " ", count: max(0, n - s.count)) }
        lines.append(pad("POINT", w) + "  " + pad("VERDICT", 11) + "  REASON")
        for p in points { lines.append(pad(p.point, w) + "  " + pad(p.verdict.rawValue, 11) + "  " + Text.oneLine(p.reason)) }
        if let rt = roundtrip {
            lines.append(pad("roundtrip", w) + "  " + pad(rt.pass ? "PASS" : "FAIL", 11) + "  " + Text.oneLine(rt.reason))
            for d in rt.differences { lines.append("  " + d) }
        }
        let passed = points.filter { $0.verdict == .pass }.count
        let failed = points.filter { $0.verdict == .fail }.count
        let missed = points.filter { $0.verdict == .notReached }.count
        lines.append("")
        lines.append("\(passed) passed, \(failed) failed, \(missed) not reached" + (roundtrip.map { $0.pass ? "; round trip passed" : "; round trip FAILED" } ?? ""))
        return lines
    }

    func json(command: [String], archive: String) -> JSON {
        let pts: [JSON] = points.map { p in
            .object([("point", .string(p.point)), ("verdict", .string(p.verdict.rawValue)),
                     ("reason", .string(p.reason)), ("reason_code", .string(p.code)),
                     ("skipped", .array(p.skipped.map { .object([("path", .string($0.path)), ("reason", .string($0.reason))]) }))])
        }
        let rt: JSON = roundtrip.map { .object([("verdict", .string($0.pass ? "PASS" : "FAIL")), ("reason", .string($0.reason)),
                                                 ("differences", .array($0.differences.map { .string($0) }))]) } ?? .null
        return .object([
            ("command", .array(command.map { .string($0) })),
            ("archive", .string(archive)),
            ("points", .array(pts)),
            ("roundtrip", rt),
            ("passed", .int(Int64(points.filter { $0.verdict == .pass }.count))),
            ("failed", .int(Int64(points.filter { $0.verdict == .fail }.count))),
            ("not_reached", .int(Int64(points.filter { $0.verdict == .notReached }.count))),
            ("ok", .bool(ok)),
        ])
    }
}
