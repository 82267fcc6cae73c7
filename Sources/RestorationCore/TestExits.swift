#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `RESTORATION_TEST_EXIT` (docs/TESTING.md): a program under test reports
/// what its first file restore did and ends, with no test code in it.
///
/// - `restored`: when the first restore of an engine with an archive path
///   has finished (after `didFinishRestoring`, after a restore that found
///   nothing, or after one that failed), a JSON report is written to
///   `RESTORATION_TEST_REPORT` (atomically: a temporary beside it, fsync,
///   rename) and the process ends with `_exit(0)`: stdio is flushed first,
///   but no `atexit` handler, destructor or signal handler runs, so the
///   program cannot save on the way out and the archive is left exactly as
///   the restore found it.
/// - `roundtrip`: the same, after the engine's state, just restored and
///   untouched, is saved to `<report>.rst` (the archive is not touched).
///   With `RESTORATION_TEST_SETTLE=MS` (1 to 600000) that save waits for the
///   program's first idle moment at least MS milliseconds after the
///   restore: the first `rst_dispatch` from then on (the event descriptor,
///   `rst_next_timeout_ms` or the autosave thread says it is due), so what
///   the program changes after its first frame is in it. Without a
///   dispatcher it never comes, and the program runs on.
///
/// Without `RESTORATION_TEST_REPORT` nothing happens but one WARNING. A
/// report that cannot be written is logged at ERROR and the process ends
/// with `_exit(70)`. Read once per process with `secure_getenv`.
public enum TestExits {
    public enum Mode: Equatable, Sendable {
        case off, restored, roundtrip
    }

    /// The parsed variables (read on first use). Kept as separate
    /// constants: the optimizer of Swift 6.3 fails on a global tuple here.
    private static let parsed = parse(KillPoints.secureEnvironment("RESTORATION_TEST_EXIT"),
                                      report: KillPoints.secureEnvironment("RESTORATION_TEST_REPORT"))
    /// The mode in effect (`.off` when the report file is missing).
    public static let mode: Mode = parsed.mode
    /// The report file, with a mode.
    static let reportPath: String? = parsed.report
    /// The sentence to log once, when a variable is set but cannot act.
    public static let warning: String? = settle.warning.map { w in parsed.warning.map { $0 + "; " + w } ?? w } ?? parsed.warning
    /// `RESTORATION_TEST_SETTLE` (roundtrip only): how long after the restore
    /// the round trip's save waits, at least, for a dispatch; 0: none.
    private static let settle = parseSettle(KillPoints.secureEnvironment("RESTORATION_TEST_SETTLE"))
    static var settleMs: Int64 { mode == .roundtrip ? settle.ms : 0 }

    /// Parses `RESTORATION_TEST_SETTLE`.
    public static func parseSettle(_ value: String?) -> (ms: Int64, warning: String?) {
        guard let value, !value.isEmpty else { return (0, nil) }
        guard value.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let v = Int64(value), v <= 600_000 else {
            return (0, "RESTORATION_TEST_SETTLE='\(value)' is not a whole number of milliseconds from 0 to 600000; the round trip saves right after the restore")
        }
        return (v, nil)
    }

    /// Parses the two variables.
    public static func parse(_ value: String?, report: String?) -> (mode: Mode, report: String?, warning: String?) {
        guard let value, !value.isEmpty else { return (.off, nil, nil) }
        let m: Mode
        switch value {
        case "restored": m = .restored
        case "roundtrip": m = .roundtrip
        default:
            return (.off, nil, "RESTORATION_TEST_EXIT='\(value)' is neither 'restored' nor 'roundtrip'; ignored")
        }
        guard let report, !report.isEmpty else {
            return (.off, nil, "RESTORATION_TEST_EXIT=\(value) without RESTORATION_TEST_REPORT: no report is written and the program goes on")
        }
        return (m, report, nil)
    }

    private static let active: Bool = mode != .off
    private static let once = Mutex()
    nonisolated(unsafe) private static var fired = false

    /// Runs one file restore (`body`); afterwards `restore-finished` is
    /// reached (when it restored and no extended restoration is open) and
    /// the test exit fires for the first restore of the process.
    @inline(__always)
    static func fileRestore(_ engine: Engine, _ body: () throws(RestorationFailure) -> Void) throws(RestorationFailure) {
        guard _slowPath(active) else {
            try body()
            if !engine.deferred.isOpen { KillPoints.reach(.restoreFinished) }
            return
        }
        do { try body() } catch {
            ended(engine, error)
            throw error
        }
        guard !engine.deferred.isOpen else { return }   // the last token's completion ends it
        KillPoints.reach(.restoreFinished)
        ended(engine, nil)
    }

    /// An extended restoration completed (`didFinishRestoring` ran, the
    /// marker is gone).
    static func deferredRestoreFinished(_ engine: Engine) {
        guard engine.restoreReason != .buffer else { return }
        KillPoints.reach(.restoreFinished)
        if active { ended(engine, nil) }
    }

    private static func ended(_ engine: Engine, _ failure: RestorationFailure?) {
        let first = once.withLock { () -> Bool in
            if fired { return false }
            fired = true
            return true
        }
        guard first, reportPath != nil else { return }
        if failure == nil && settleMs > 0 {
            // The save waits for the program's first idle moment (a dispatch).
            engine.lifecycle.armTestSettle(at: Lifecycle.now() + settleMs)
            return
        }
        finish(engine, failure)
    }

    /// The round trip's save, after the settle: at a dispatch (the lifecycle's).
    static func settled(_ engine: Engine) -> Never {
        finish(engine, nil)
    }

    /// Writes the report (and the round trip's save) and ends the process.
    private static func finish(_ engine: Engine, _ failure: RestorationFailure?) -> Never {
        let file = reportPath!
        var extra: [(String, String)] = []
        if mode == .roundtrip {
            let target = file + ".rst"
            do {
                let bytes = try engine.saveToBytes()
                try write(bytes, to: target)
                extra.append(("roundtrip", json(target)))
            } catch {
                extra.append(("roundtrip_error", json("saving the restored state to '\(target)' failed (\(error.status.cName)): \(error.message)")))
            }
        }
        let text = report(engine, failure, extra)
        do {
            try write(Array(text.utf8), to: file)
        } catch {
            engine.log(.error, "test exit: \(error.message)")
            fflush(nil)
            _exit(70)
        }
        fflush(nil)
        _exit(0)
    }

    /// The JSON report of the engine's last file restore.
    static func report(_ engine: Engine, _ failure: RestorationFailure?, _ extra: [(String, String)]) -> String {
        let store = engine.storage?.store
        let reason = failure == nil ? engine.restoreReason : .firstLaunch
        let generation = failure == nil ? engine.restoreGeneration : 0
        let counts = failure == nil ? engine.outcomes.counts : nil
        var bytes: Int64 = 0
        if failure == nil && reason != .firstLaunch, let store,
           let held = try? store.read(generation == 0 ? .archive : .generation, UInt64(generation)) {
            bytes = Int64(held.bytes.count)
            held.release()
        }
        let skipped = failure == nil ? engine.outcomes.skips.records : []
        var out = "{\"reason\": \(json(reason.cName)), \"generation\": \(generation), "
        out += "\"restored\": \(counts?.restored ?? 0), \"skipped\": ["
        out += skipped.map { "{\"path\": \(json($0.path)), \"reason\": \(json($0.reason.cName)), \"detail\": \(json($0.detail))}" }
            .joined(separator: ", ")
        out += "], \"archive_bytes\": \(bytes), \"store\": \(json(store?.describe ?? "")), "
        out += "\"status\": \(json((failure?.status ?? .ok).cName)), \"error\": \(json(failure?.message ?? ""))"
        for (k, v) in extra { out += ", \(json(k)): \(v)" }
        return out + "}\n"
    }

    /// A JSON string literal.
    static func json(_ s: String) -> String {
        var o = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": o += "\\\""
            case "\\": o += "\\\\"
            case "\n": o += "\\n"
            case "\r": o += "\\r"
            case "\t": o += "\\t"
            default:
                if u.value < 0x20 {
                    let h = String(u.value, radix: 16)
                    o += "\\u" + String(repeating: "0", count: 4 - h.count) + h
                } else {
                    o.unicodeScalars.append(u)
                }
            }
        }
        return o + "\""
    }

    /// Writes `bytes` to `path` through a temporary beside it: write, fsync, rename.
    static func write(_ bytes: [UInt8], to path: String) throws(RestorationFailure) {
        let tmp = "\(path).tmp-\(getpid())"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw RestorationFailure(.io, "cannot create '\(tmp)': \(FileStore.errnoText())")
        }
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + off, bytes.count - off) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                let why = FileStore.errnoText()
                close(fd); unlink(tmp)
                throw RestorationFailure(.io, "cannot write '\(tmp)': \(why)")
            }
            off += n
        }
        if fsync(fd) != 0 || close(fd) != 0 {
            let why = FileStore.errnoText()
            unlink(tmp)
            throw RestorationFailure(.io, "cannot write '\(tmp)': \(why)")
        }
        if rename(tmp, path) != 0 {
            let why = FileStore.errnoText()
            unlink(tmp)
            throw RestorationFailure(.io, "cannot rename '\(tmp)' to '\(path)': \(why)")
        }
    }
}

extension RestorePass {
    /// The `restore-decoding` kill point of a file restore: in the turn of
    /// the first decode callback of `order`, the crash marker naming its
    /// record (so the next restore quarantines that record), just before
    /// the call. Called only when that point is armed: restores pay nothing.
    func reachDecodingPoint(_ order: [Int32]) {
        guard rooms.outcomes.reason != .buffer else { return }
        for r32 in order {
            guard let u = session.unmanagedNode(Int(r32)),
                  u.with({ $0.handles(.decode) }) else { continue }
            watchEnter(Int(r32))
            KillPoints.reach(.restoreDecoding)
            watchLeave()
            return
        }
    }
}
