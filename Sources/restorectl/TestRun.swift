// The runs of `restorectl test` (Test.swift): baseline, seed, one kill and
// one relaunch per point, the round trip.
//
// A program whose engine has an archive path is checked twice per point:
// the file the death left (the archive or a generation must be valid), and
// what the relaunch reports. A program with a store of its own (its report
// names no file) is judged by the relaunch's report alone: its reason, and
// that it skipped nothing the launch before it did not skip.

import RestorationArchive
import RestorationCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

struct DeathTest {
    let command: [String]
    private(set) var archivePath: String?
    /// The store the first report names ("file '…'", or the store's own description).
    private(set) var storeDescription = ""
    let timeout: Double
    let io: ChildIO
    /// `--settle`: the round trip saves at the first dispatch this long after the restore (0: at once).
    let settleMs: Int
    let dir: String
    private var runs = 0
    /// The paths the previous launch restored (archive path only).
    private var baseline: Set<String> = []
    /// What the previous launch skipped (path and reason).
    private var previousSkips: Set<String> = []
    /// Whether anything was ever restored (a relaunch's FIRST_LAUNCH then loses state).
    private var somethingSaved = false
    private var results = TestResults()
    /// The report of the last point's relaunch.
    private var lastRelaunch: TestReport?

    init(command: [String], archive: String?, timeout: Double, io: ChildIO, settleMs: Int = 0) throws(CtlFailure) {
        self.command = command
        self.archivePath = archive
        self.timeout = timeout
        self.io = io
        self.settleMs = settleMs
        let base = (getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp") + "/restorectl-test-XXXXXX"
        var template = Array(base.utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw CtlFailure(Exit.io, "cannot create a temporary directory from \(Text.quotedPath(base)): \(String(cString: strerror(errno)))")
        }
        dir = String(cString: made)
    }

    func cleanUp() {
        for f in (try? listDirectory(dir)) ?? [] { unlink("\(dir)/\(f)") }
        rmdir(dir)
    }

    private func listDirectory(_ path: String) throws -> [String] {
        guard let d = opendir(path) else { return [] }
        defer { closedir(d) }
        var out: [String] = []
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name != "." && name != ".." { out.append(name) }
        }
        return out
    }

    // MARK: launching

    private mutating func launch(_ label: String, env: [String: String], keys: Bool = true) throws(CtlFailure) -> (ChildEnd, String) {
        runs += 1
        let log = "\(dir)/\(runs)-\(label).log"
        var childIO = io
        if !keys { childIO.keys = nil }
        return (try TestChild.run(command, env: env, log: log, timeout: timeout, io: childIO), log)
    }

    /// A launch with RESTORATION_TEST_EXIT=mode.
    private mutating func relaunch(_ label: String, mode: String = "restored", env extra: [String: String] = [:],
                                   keys: Bool = true) throws(CtlFailure) -> (ChildEnd, TestReport?, String, String) {
        let report = "\(dir)/\(runs + 1)-\(label).json"
        var env = ["RESTORATION_TEST_EXIT": mode, "RESTORATION_TEST_REPORT": report]
        for (k, v) in extra { env[k] = v }
        let (end, log) = try launch(label, env: env, keys: keys)
        return (end, end == .exited(0) ? TestReport.read(report) : nil, log, report)
    }

    private func logBlock(_ title: String, _ log: String) -> String {
        "--- \(title): output of '\(command.joined(separator: " "))' ---\n" + TestChild.tail(log)
    }

    /// Why a program may have ended on its own: said when its input was /dev/null.
    private var stdinNote: String {
        guard !io.pty && io.keys == nil else { return "" }
        return "; its standard input was /dev/null and its output a file, so a program that reads its input or needs a terminal ends at once (run it with --pty, and --keys to type into it)"
    }

    /// The same, short, for a table row.
    private var stdinNoteShort: String {
        guard !io.pty && io.keys == nil else { return "" }
        return "; its standard input was /dev/null (a terminal program needs --pty)"
    }

    // MARK: the archive

    private struct ArchiveState {
        var exists = false
        var valid = false
        var message = ""
    }

    /// Whether the archive, or else one of its generations, is valid.
    private func archiveState() -> ArchiveState {
        guard let path = archivePath else { return ArchiveState() }
        var s = ArchiveState()
        var problem = ""
        if FileRules.exists(path) {
            s.exists = true
            do {
                _ = try LoadedArchive.load(path)
                s.valid = true
                return s
            } catch {
                problem = error.message
            }
        }
        for g in FileStore.generationFiles(of: path) {
            s.exists = true
            if (try? LoadedArchive.load(g)) != nil {
                s.valid = true
                s.message = problem.isEmpty ? "" : "\(problem); generation \(Text.quotedPath(g)) is valid"
                return s
            }
        }
        s.message = problem.isEmpty ? "no valid archive or generation at \(Text.quotedPath(path))" : problem
        return s
    }

    /// The paths a report says were restored: the records of the file it
    /// restored, less the ones it skipped.
    private func restoredPaths(_ r: TestReport) -> Set<String> {
        guard let path = archivePath, r.status == Status.ok.cName, r.reason != RestoreReason.firstLaunch.cName else { return [] }
        let file = r.generation == 0 ? path : FileStore.generationPath(path, r.generation)
        guard let a = try? LoadedArchive.load(file) else { return [] }
        var paths = Set((0..<a.reader.recordCount).map { a.reader.path(ofRecord: $0) })
        for s in r.skipped { paths.remove(s.path) }
        return paths
    }

    /// Takes a report as the previous launch's: what it restored and skipped.
    private mutating func takeBaseline(_ r: TestReport) {
        baseline = restoredPaths(r)
        previousSkips = Set(r.skipped.map { $0.path + "\u{0}" + $0.reason })
        if r.status == Status.ok.cName && r.reason != RestoreReason.firstLaunch.cName { somethingSaved = true }
    }

    private static func describe(_ r: TestReport) -> String {
        if r.status == Status.notFound.cName { return "a first launch: nothing saved yet (\(r.error))" }
        if r.status != Status.ok.cName { return "the restore failed (\(r.status): \(r.error))" }
        if r.reason == RestoreReason.firstLaunch.cName { return "a first launch (\(r.reason)): nothing saved yet" }
        return "\(r.reason), \(r.restored) restored" + (r.generation > 0 ? " from generation \(r.generation)" : "")
    }

    // MARK: the test

    mutating func runAll(_ points: [KillPoint], roundtrip: Bool) throws(CtlFailure) -> TestResults {
        // 1. A plain run: which archive, and what it restores.
        let (end, report, log, _) = try relaunch("baseline")
        guard let report else {
            var why = "the first run (RESTORATION_TEST_EXIT=restored) \(end.text) without a report"
            if end == .timedOut {
                why += ": its first restore did not finish within \(Text.seconds(timeout)) (does it restore at start?)"
            } else if !stdinNote.isEmpty {
                why += " before its first restore finished" + stdinNote + "; or it does not restore from a store or archive path at start"
            } else {
                why += " before its first restore finished: does it restore from a store or archive path at start?"
            }
            results.setupFailure = why
            results.failureLogs.append(logBlock("first run", log))
            return results
        }
        storeDescription = report.store
        if archivePath == nil { archivePath = report.storeFile }
        results.store = storeDescription
        results.archive = archivePath
        takeBaseline(report)
        results.baseline = "baseline: " + Self.describe(report)
        if report.skipped.contains(where: { $0.reason == SkipReason.quarantined.cName }) { try heal(report) }
        // 2. Nothing saved yet: run until the first save is in place.
        let nothingSaved = archivePath != nil ? !archiveState().exists : report.reason == RestoreReason.firstLaunch.cName
        if nothingSaved {
            let (seedEnd, seedLog) = try launch("seed", env: ["RESTORATION_KILL_AT": KillPoint.saveReplaced.rawValue])
            if seedEnd == .killed {
                let (_, again, _, _) = try relaunch("baseline-2")
                if let again {
                    takeBaseline(again)
                    results.baseline! += "; after its first save (a run killed at save-replaced): " + Self.describe(again)
                }
            } else {
                var note = "; a run to make its first save \(seedEnd.text) before that save was in place"
                if case .exited = seedEnd { note += stdinNote }
                results.baseline! += note + ", so the points run with nothing saved"
                results.failureLogs.append(logBlock("the run to make the first save", seedLog))
            }
        }
        if roundtrip { try runRoundtrip() }
        for p in points {
            lastRelaunch = nil
            results.points.append(try runPoint(p))
            if let report = lastRelaunch, report.skipped.contains(where: { $0.reason == SkipReason.quarantined.cName }) { try heal(report) }
        }
        return results
    }

    /// Clears a quarantine an earlier death left on the file `report`
    /// restored (as `restorectl quarantine --clear` does), so the next point
    /// starts from the whole state, and takes the baseline again. A store of
    /// the program's own keeps its quarantine: the records stay skipped, and
    /// the next points expect that.
    private mutating func heal(_ report: TestReport) throws(CtlFailure) {
        guard let path = archivePath else { return }
        let file = report.generation == 0 ? path : FileStore.generationPath(path, report.generation)
        do { try Engine.clearQuarantine(of: file) } catch { throw CtlFailure(error) }
        if case (_, let again?, _, _) = try relaunch("baseline-cleared") { takeBaseline(again) }
    }

    private mutating func runPoint(_ p: KillPoint) throws(CtlFailure) -> PointResult {
        let name = p.rawValue
        let before = archiveState()
        let (end, log) = try launch(name, env: ["RESTORATION_KILL_AT": name])
        switch end {
        case .killed: break
        case .timedOut:
            return PointResult(point: name, verdict: .notReached, reason: "not reached within \(Text.seconds(timeout)) (restorectl ended the program)", code: "not_reached_timeout")
        case .exited(let c):
            return PointResult(point: name, verdict: .notReached, reason: "the program exited (status \(c)) without reaching it" + stdinNoteShort, code: "not_reached_exited")
        case .signaled:
            results.failureLogs.append(logBlock("\(name), the run to kill", log))
            return PointResult(point: name, verdict: .fail, reason: "the program \(end.text) before reaching the point", code: "died_before")
        }
        let after = archiveState()
        if after.exists && !after.valid {
            results.failureLogs.append(logBlock("\(name), the killed run", log))
            return PointResult(point: name, verdict: .fail, reason: "after the kill: \(after.message)", code: "archive_invalid")
        }
        if !after.exists && before.exists {
            return PointResult(point: name, verdict: .fail, reason: "after the kill there is no archive and no generation at \(Text.quotedPath(archivePath ?? ""))", code: "archive_gone")
        }
        let (end2, report, log2, _) = try relaunch("\(name)-relaunch")
        func fail(_ why: String, _ code: String) -> PointResult {
            results.failureLogs.append(logBlock("\(name), the relaunch", log2))
            return PointResult(point: name, verdict: .fail, reason: why, code: code)
        }
        guard end2 == .exited(0) else {
            if end2 == .timedOut { return fail("the relaunch did not finish its first restore within \(Text.seconds(timeout))", "relaunch_timeout") }
            return fail("the relaunch \(end2.text)" + (end2 == .killed || end2.isSignal ? "" : " without a report" + stdinNote), "relaunch_died")
        }
        guard let report else { return fail("the relaunch wrote no report", "no_report") }
        lastRelaunch = report
        let skips = report.skipped.map { (path: $0.path, reason: $0.reason) }
        let recovered = report.reason == RestoreReason.recover.cName || report.reason == RestoreReason.fallback.cName
        let firstLaunch = report.reason == RestoreReason.firstLaunch.cName
            && (report.status == Status.ok.cName || report.status == Status.notFound.cName)
        // Nothing was saved before this kill: the point tested nothing.
        if firstLaunch && !somethingSaved && !before.exists && !after.exists {
            return PointResult(point: name, verdict: .firstLaunch,
                               reason: "reached, but nothing was saved before it: the relaunch was a first launch (\(report.reason)), so there was no state to lose and nothing was tested",
                               code: "first_launch", skipped: skips)
        }
        guard recovered else {
            var why = "the relaunch restored with \(report.reason), not RST_REASON_RECOVER or RST_REASON_FALLBACK"
            if firstLaunch { why += ": the state saved before the kill was not restored" }
            if report.status != Status.ok.cName { why += " (\(report.status): \(report.error))" }
            var r = fail(why, "reason")
            r.skipped = skips
            return r
        }
        let quarantined = report.skipped.filter { $0.reason == SkipReason.quarantined.cName }.map(\.path)
        var expected: [String] = []
        for s in report.skipped {
            let underQuarantine = quarantined.contains { s.path == $0 || s.path.hasPrefix($0 + "/") }
            if p == .restoreDecoding && underQuarantine {
                if s.reason == SkipReason.quarantined.cName { expected.append(s.path) }
                continue
            }
            let lost = archivePath != nil ? baseline.contains(s.path) : !previousSkips.contains(s.path + "\u{0}" + s.reason)
            if lost {
                var r = fail("the relaunch skipped \(Text.quotedPath(s.path)) (\(s.reason): \(s.detail)), which the previous launch " + (archivePath != nil ? "restored" : "did not skip"), "skipped")
                r.skipped = skips
                return r
            }
        }
        takeBaseline(report)
        var why = "the relaunch: \(report.reason), \(report.restored) restored"
        if report.generation > 0 { why += " from generation \(report.generation)" }
        if !expected.isEmpty {
            why += "; " + expected.map { Text.quotedPath($0) }.joined(separator: ", ") + " quarantined, as expected after a death in its decode"
            if archivePath == nil { why += " (the program's own store keeps the quarantine: the next points start without that record)" }
        }
        if !after.message.isEmpty { why += "; " + after.message }
        return PointResult(point: name, verdict: .pass, reason: why, code: "pass", skipped: skips)
    }

    private mutating func runRoundtrip() throws(CtlFailure) {
        guard let path = archivePath else {
            results.roundtrip = (false, [], "the program keeps its state in a store of its own (\(storeDescription)) that restorectl cannot read, so there is no saved state to compare with (give --archive when the store keeps an archive file)")
            return
        }
        // What was saved, read before the launch (which may save itself).
        let savedBefore = try? LoadedArchive.load(path).document
        let settle = settleMs > 0 ? ["RESTORATION_TEST_SETTLE": String(settleMs)] : [:]
        let (end, report, log, reportFile) = try relaunch("roundtrip", mode: "roundtrip", env: settle, keys: false)
        func fail(_ why: String) {
            results.failureLogs.append(logBlock("the round trip", log))
            results.roundtrip = (false, [], why)
        }
        if end == .timedOut && settleMs > 0 {
            return fail("the relaunch was still running at the timeout: its restore done, the library waits for the program's first idle moment (\(settleMs) ms after the restore, at its first rst_dispatch: the event descriptor, rst_next_timeout_ms or the autosave thread) to save, and the program never dispatched; --settle 0 saves right after the restore")
        }
        guard end == .exited(0) else { return fail("the relaunch \(end.text)" + (end == .killed || end.isSignal ? "" : stdinNote)) }
        guard let report else { return fail("the relaunch wrote no report") }
        guard report.status == Status.ok.cName, report.reason != RestoreReason.firstLaunch.cName else {
            return fail("nothing was restored (\(report.reason)\(report.status == Status.ok.cName ? "" : ", \(report.status): \(report.error)")); nothing to compare")
        }
        let file = report.generation == 0 ? path : FileStore.generationPath(path, report.generation)
        let saved: ArchiveDocument, again: ArchiveDocument
        do {
            if report.generation == 0, let savedBefore { saved = savedBefore } else { saved = try LoadedArchive.load(file).document }
            if let e = report.roundtripError { return fail(e) }
            again = try LoadedArchive.load(reportFile + ".rst").document
        } catch {
            return fail(error.message)
        }
        var diff = RoundTripDiff(saved: saved, again: again)
        let diffs = diff.lines()
        var notes = ""
        if let s = report.skipped.first {
            notes = "; the restore skipped \(report.skipped.count) record\(report.skipped.count == 1 ? "" : "s") (first \(Text.quotedPath(s.path)), \(s.reason))"
        }
        if diff.sealedCompared > 0 {
            notes += "; \(diff.sealedCompared) sealed (ENCRYPTED) value\(diff.sealedCompared == 1 ? "" : "s") compared by inner type and length only: restorectl does not have the program's key, and a sealed value's bytes differ at every save (a fresh nonce)"
        }
        let when = settleMs > 0 ? " (saved at the program's first idle moment, \(settleMs) ms or more after its restore)" : " (saved right after the restore: --settle 0)"
        results.roundtrip = diffs.isEmpty
            ? (true, [], "\(saved.objects.count) objects: every value came back the same" + when + notes)
            : (false, diffs, "\(diffs.count) value\(diffs.count == 1 ? " does" : "s do") not come back the same (state the program does not really restore)" + when + notes)
        if !diffs.isEmpty { results.failureLogs.append(logBlock("the round trip", log)) }
    }
}

extension ChildEnd {
    var isSignal: Bool { if case .signaled = self { return true }; return false }
}

/// `PATH key: saved X, restored then saved Y`, for every value of an archive
/// that a restore followed by a save does not give back (save times aside).
struct RoundTripDiff {
    let saved: ArchiveDocument
    let again: ArchiveDocument
    let sp: [String]
    let ap: [String]
    let sr: Renderer
    let ar: Renderer
    /// Sealed (ENCRYPTED) values met on both sides: compared by their inner
    /// type and length, not their bytes (a fresh nonce at every save).
    private(set) var sealedCompared = 0

    init(saved: ArchiveDocument, again: ArchiveDocument) {
        self.saved = saved
        self.again = again
        sp = saved.objects.indices.map { saved.path(of: $0) }
        ap = again.objects.indices.map { again.path(of: $0) }
        sr = Renderer(paths: sp, full: false)
        ar = Renderer(paths: ap, full: false)
    }

    mutating func lines() -> [String] {
        var out: [String] = []
        var againIndex: [String: Int] = [:]
        for (i, p) in ap.enumerated() { againIndex[p] = i }
        let savedPaths = Set(sp)
        for (i, p) in sp.enumerated() {
            let so = saved.objects[i]
            guard let j = againIndex[p] else {
                out.append("\(Text.escaped(p)): saved (\(so.className.map { "class " + Text.escaped($0) } ?? "no class")), restored then saved: missing")
                continue
            }
            let ao = again.objects[j]
            if so.className != ao.className {
                out.append("\(Text.escaped(p)) class: saved \(so.className.map { Text.escaped($0) } ?? "(none)"), restored then saved \(ao.className.map { Text.escaped($0) } ?? "(none)")")
            }
            compare(p, so.entries, ao.entries, trail: "", into: &out)
        }
        for (j, p) in ap.enumerated() where !savedPaths.contains(p) {
            out.append("\(Text.escaped(p)): not saved, restored then saved (\(again.objects[j].className.map { "class " + Text.escaped($0) } ?? "no class"))")
        }
        return out
    }

    private mutating func compare(_ path: String, _ a: [ArchiveEntry], _ b: [ArchiveEntry], trail: String, into out: inout [String]) {
        var bIndex: [String: Int] = [:]
        for (k, e) in b.enumerated() { bIndex[e.key] = k }
        var aKeys = Set<String>()
        let p = Text.escaped(path)
        for e in a {
            aKeys.insert(e.key)
            let name = trail + Text.escaped(e.key)
            guard let k = bIndex[e.key] else {
                out.append("\(p) \(name): saved \(sr.typeAndValue(e.value)), restored then saved (missing)")
                continue
            }
            let f = b[k]
            if case .record(let x) = e.value, case .record(let y) = f.value {
                compare(path, x, y, trail: name + ".", into: &out)
            } else if case .unknown(let t, let x) = e.value, t == ArchiveFormat.sealedTag,
                      case .unknown(let u, let y) = f.value, u == ArchiveFormat.sealedTag {
                // The first byte of a sealed payload is the inner value's tag,
                // in the clear; the length is the plaintext's plus a fixed overhead.
                sealedCompared += 1
                if x.first != y.first || x.count != y.count {
                    out.append("\(p) \(name): saved \(Self.sealedText(x)), restored then saved \(Self.sealedText(y))")
                }
            } else if !same(e.value, f.value) {
                out.append("\(p) \(name): saved \(sr.typeAndValue(e.value)), restored then saved \(ar.typeAndValue(f.value))")
            }
        }
        for f in b where !aKeys.contains(f.key) {
            out.append("\(p) \(trail + Text.escaped(f.key)): saved (missing), restored then saved \(ar.typeAndValue(f.value))")
        }
    }

    /// "sealed string (48 bytes)": the inner type a sealed payload names in the clear.
    static func sealedText(_ payload: [UInt8]) -> String {
        let inner: String
        switch payload.first.flatMap({ ValueTag(rawValue: $0) }) {
        case .boolFalse?, .boolTrue?: inner = "bool"
        case .int?: inner = "int"
        case .double?: inner = "double"
        case .string?: inner = "string"
        case .bytes?: inner = "bytes"
        case .object?: inner = "object"
        case .intArray?: inner = "int_array"
        case .stringArray?: inner = "string_array"
        case .record?: inner = "record"
        case .objectArray?: inner = "object_array"
        case .osString?: inner = "os_string"
        case nil: inner = "tag \(payload.first.map(String.init) ?? "none")"
        }
        return "sealed \(inner) (\(payload.count) bytes)"
    }

    /// Equal values; references compare the targets' paths, doubles their bits.
    private func same(_ x: ArchiveValue, _ y: ArchiveValue) -> Bool {
        switch (x, y) {
        case (.object(let r), .object(let s)):
            return (r < sp.count ? sp[r] : "#\(r)") == (s < ap.count ? ap[s] : "#\(s)")
        case (.objectArray(let a), .objectArray(let b)):
            return a.map { r in r < sp.count ? sp[r] : "#\(r)" } == b.map { s in s < ap.count ? ap[s] : "#\(s)" }
        case (.double(let d), .double(let e)):
            return d.bitPattern == e.bitPattern
        default:
            return x == y
        }
    }
}
