#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import RestorationArchive

// Restoration that finishes later (docs/EVOLUTION.md; (UIKit's extendStateRestoration /
// completeStateRestoration). A decode or finished callback of the restore
// in progress takes a token with a deadline; while a token is open,
// did_finish_restoring waits and the crash-loop marker stays (naming the
// record that extended, so a death before completion quarantines it). The
// last completion runs did_finish_restoring on the completing thread. A
// token whose deadline passes expires: reported as RST_SKIP_EXPIRED for its
// object (which keeps what it decoded; counted as skipped, not restored),
// and when no token is left open, did_finish_restoring runs on the thread
// that noticed: rst_dispatch or the autosave thread when the deadline comes
// (the engine's descriptor turns readable then, and rst_next_timeout_ms
// counts it), or the engine's next call, whichever is first.

/// One extension of a restore (`rst_restore_token`). Owned by its engine
/// (freed with it); a handle is its address.
public final class RestoreToken {
    enum State { case open, completed, expired }
    let record: Int
    let deadlineMs: Int64?
    var state = State.open

    init(record: Int, deadlineMs: Int64?) {
        self.record = record
        self.deadlineMs = deadlineMs
    }

    /// The opaque handle C sees.
    public var handle: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
}

/// What a restore with open tokens keeps until they are done.
final class PendingFinish {
    var guardToken: CrashGuard.Token?
    var watch: MarkerWatch?
    let reader: ArchiveReader
    init(guardToken: CrashGuard.Token?, watch: MarkerWatch?, reader: ArchiveReader) {
        self.guardToken = guardToken
        self.watch = watch
        self.reader = reader
    }
}

extension Engine {
    /// Extends the restore in progress: called from a `decode` or `finished`
    /// callback. `deadlineMs` 0: no deadline (until completed, a new restore
    /// or the engine's destroy).
    /// - Throws: `.state` anywhere else.
    public func extendRestoration(deadlineMs: UInt32) throws(RestorationFailure) -> RestoreToken {
        try lock.withLock { () throws(RestorationFailure) -> RestoreToken in try deferred.extend(deadlineMs: deadlineMs) }
    }

    /// Completes a token; the last open one runs did_finish_restoring here.
    /// - Throws: `.state` for a token completed or expired before (nothing
    ///   is freed twice); `.invalid` for a token of another engine.
    public func completeRestoration(handle: UnsafeRawPointer) throws(RestorationFailure) {
        lock.lock()
        defer { lock.unlock() }
        try deferred.complete(handle: handle)
    }
}

/// The tokens of extended restorations: every token (freed with the
/// engine), how many are open, what waits for them (`PendingFinish`) and
/// the record whose decode or finished callback runs. Owned by its engine;
/// every method runs under the engine's lock.
final class Deferred {
    private unowned let engine: Engine
    private var tokens: [RestoreToken] = []
    private var openTokens = 0
    private var pending: PendingFinish?
    /// The record whose decode or finished callback runs (-1: none); set by
    /// the engine around those callbacks.
    var callbackRecord = -1

    init(engine: Engine) { self.engine = engine }

    /// Monotonic milliseconds.
    static func monotonicMs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }


    /// Whether a token is open (did_finish_restoring and the marker's end wait).
    var isOpen: Bool { openTokens > 0 }

    private func log(_ level: LogLevel, _ message: @autoclosure () -> String) { engine.log(level, message()) }

    /// A token for the record whose callback runs.
    func extend(deadlineMs: UInt32) throws(RestorationFailure) -> RestoreToken {
            guard callbackRecord >= 0 else {
                throw RestorationFailure(.state, "a restoration is extended only from a decode or finished callback of the restore in progress")
            }
            let t = RestoreToken(record: callbackRecord,
                                 deadlineMs: deadlineMs == 0 ? nil : Deferred.monotonicMs() + Int64(deadlineMs))
            tokens.append(t)
            openTokens += 1
            updateTokenDeadline()
            return t
    }

    /// Completes the token at `handle`; the last open one runs did_finish_restoring.
    func complete(handle: UnsafeRawPointer) throws(RestorationFailure) {
        checkDeadlines()
        guard let t = tokens.first(where: { UnsafeRawPointer($0.handle) == handle }) else {
            throw RestorationFailure(.invalid, "the token is not one of this engine's")
        }
        switch t.state {
        case .completed: throw RestorationFailure(.state, "the token was already completed")
        case .expired: throw RestorationFailure(.state, "the token expired (its deadline passed first; the last restore's skips list its record)")
        case .open: break
        }
        t.state = .completed
        openTokens -= 1
        if openTokens == 0 { finishDeferred() } else { renameWatch() }
        updateTokenDeadline()
    }

    /// The restore ended with tokens open: what waits for them (the marker
    /// stays, naming the record of the oldest open token).
    func park(_ finish: PendingFinish) {
        pending = finish
        renameWatch()
    }

    /// Tells the lifecycle the earliest deadline of the open tokens, so the
    /// dispatcher wakes for it.
    private func updateTokenDeadline() {
        let earliest = tokens.lazy.filter { $0.state == .open }.compactMap(\.deadlineMs).min()
        engine.lifecycle.setTokenDeadline(earliest)
    }

    /// Expires every open token whose deadline passed. Called at the engine's
    /// entry points and by the dispatcher at the deadline (`expireDueTokens`).
    func checkDeadlines() {
        guard openTokens > 0 else { return }
        let now = Deferred.monotonicMs()
        var expired = false
        for t in tokens where t.state == .open {
            if let d = t.deadlineMs, d <= now {
                expire(t, "its extended restoration missed its deadline")
                expired = true
            }
        }
        if expired {
            if openTokens == 0 { finishDeferred() } else { renameWatch() }
            updateTokenDeadline()
        }
    }

    /// Expires every open token (a new restore; the engine's destroy, which
    /// does not call did_finish_restoring).
    func expireAll(_ why: String, callDidFinish: Bool = true) {
        guard openTokens > 0 else { return }
        for t in tokens where t.state == .open { expire(t, why) }
        finishDeferred(callDidFinish: callDidFinish)
        updateTokenDeadline()
    }

    private func expire(_ t: RestoreToken, _ why: String) {
        t.state = .expired
        openTokens -= 1
        let path = pending?.reader.path(ofRecord: t.record) ?? "record \(t.record)"
        log(.warning, "record \(t.record) ('\(path)'): \(why); it keeps what it decoded and counts as skipped (\(SkipReason.expired.cName))")
        engine.outcomes.unrestore(record: t.record, reason: .expired, detail: why + "; the object keeps what it decoded", reader: pending?.reader)
    }

    /// The marker names the record of the oldest open token.
    private func renameWatch() {
        if let t = tokens.first(where: { $0.state == .open }) { pending?.watch?.enter(t.record) }
    }

    /// The last token is done: did_finish_restoring, then the marker goes.
    private func finishDeferred(callDidFinish: Bool = true) {
        guard let p = pending else { return }
        pending = nil
        p.watch?.leave()
        if callDidFinish { engine.didFinishRestoring?() }
        p.watch?.unmap()
        if let g = p.guardToken, let w = CrashGuard.end(g) { log(.warning, w) }
        if callDidFinish { TestExits.deferredRestoreFinished(engine) }
    }
}

extension SkipLedger {
    /// The ledger with one more entry, kept in archive order.
    func adding(record: Int, reason: SkipReason, detail: String, reader other: ArchiveReader?) -> SkipLedger {
        var e = entries.filter { Int($0.record) != record }
        e.append((Int32(record), reason, detail))
        e.sort { $0.record < $1.record }
        return SkipLedger(reader: reader ?? other, entries: e, trimmed: trimmed)
    }
}
