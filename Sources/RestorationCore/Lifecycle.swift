import CLifecycle
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// When to save (docs/LIFECYCLE.md): dirty tracking, the debounced autosave with
/// its ceiling and its retries, the pollable descriptor, the dispatch, the
/// engine-owned thread and the signal saves. One per engine.
///
/// Its state has its own small mutex (`state`), never held during a save,
/// so `markDirty` never waits for one (the engine's recursive lock is held
/// for the whole save). Times are CLOCK_MONOTONIC milliseconds.
public final class Lifecycle: @unchecked Sendable {
    /// What a dispatch did (for the Swift API's event stream).
    public enum Event: Sendable {
        case saved(reason: SaveCause)
        case failed(RestorationFailure, retryInMs: Int64, reason: SaveCause)
    }

    public enum SaveCause: Sendable {
        case autosave
        case signal(Int32)
    }

    /// What started a save the listener hears about (the raw values are the
    /// C `RST_SAVE_*` values).
    public enum SaveTrigger: UInt32, Sendable {
        /// An explicit save or flush.
        case call = 0
        /// An autosave.
        case auto = 1
        /// The save of a claimed signal.
        case signal = 2
    }

    /// Told after every attempt to save to the archive path (nil: it
    /// succeeded); never after buffer saves, or a flush that found nothing.
    public typealias SaveListener = (SaveTrigger, RestorationFailure?) -> Void

    unowned let engine: Engine
    public let delayMs: Int64
    public let maxDelayMs: Int64

    private let state = Mutex()
    // Under `state`:
    private var markSeq: UInt64 = 0
    private var cleanSeq: UInt64 = 0
    private var firstMarkMs: Int64 = -1
    private var lastMarkMs: Int64 = -1
    private var failures = 0
    private var retryAtMs: Int64 = -1
    private var armedDue: Int64 = -1
    private var epollFD: Int32 = -1, timerFD: Int32 = -1, eventFD: Int32 = -1
    private var handedOut = false
    private var asksForTimeouts = false
    private var signalClient: Int32 = -1
    private var thread: pthread_t?
    private var stopFD: Int32 = -1
    private var shutDown = false
    /// The thread running this engine's restore, while it runs: its marks are ignored.
    private var restoringThread: pthread_t?
    /// Repeated autosave failures: the last one's status and sentence, how
    /// many identical ones were not logged since, when the last summary was.
    private var failureKey: String?
    private var quietFailures = 0
    private var lastSummaryMs: Int64 = 0
    /// At most one summary of identical autosave failures per this long
    /// (a minute; tests shorten it).
    var failureSummaryIntervalMs: Int64 = 60_000

    /// Serializes dispatches (the host's and the thread's); tried, never waited for.
    private let dispatching = Mutex()

    /// Told after each dispatched save or failure (the Swift API's stream);
    /// runs on the dispatching thread, without the engine's lock.
    public var observer: ((Event) -> Void)? {
        get { state.withLock { observerStorage } }
        set { state.withLock { observerStorage = newValue } }
    }
    private var observerStorage: ((Event) -> Void)?

    /// The save listener (`rst_set_save_listener`; one per engine, shared by
    /// the faces). Runs on the saving thread with no lock of the engine held.
    public var saveListener: SaveListener? {
        get { state.withLock { saveListenerStorage } }
        set { state.withLock { saveListenerStorage = newValue } }
    }
    private var saveListenerStorage: SaveListener?

    /// Tells the listener about a save attempt; call it after the save
    /// returned (the engine's lock released).
    public func saveAttempted(_ trigger: SaveTrigger, _ failure: RestorationFailure?) {
        if let l = saveListener { l(trigger, failure) }
    }

    /// Runs an explicit save (`body`) and tells the listener how it went.
    public func reportingSave(_ trigger: SaveTrigger, _ body: () throws(RestorationFailure) -> Void) throws(RestorationFailure) {
        do {
            try body()
        } catch {
            saveAttempted(trigger, error)
            throw error
        }
        saveAttempted(trigger, nil)
    }

    /// How a dispatch saves; nil: `Engine.save()`. The Swift API routes it
    /// through its own lock (taken before the engine's), as its `save()` does.
    public var performSave: (() throws(RestorationFailure) -> Void)? {
        get { state.withLock { performSaveStorage } }
        set { state.withLock { performSaveStorage = newValue } }
    }
    private var performSaveStorage: (() throws(RestorationFailure) -> Void)?

    private func save() throws(RestorationFailure) {
        if let f = performSave { try f() } else { try engine.save() }
    }

    init(engine: Engine, delayMs: UInt32, maxDelayMs: UInt32) {
        self.engine = engine
        self.delayMs = Int64(delayMs)
        self.maxDelayMs = delayMs == 0 ? 0 : maxDelayMs == 0 ? Int64(delayMs) * 10 : Int64(maxDelayMs)
    }

    deinit {
        for fd in [epollFD, timerFD, eventFD, stopFD] where fd >= 0 { close(fd) }
    }

    static func now() -> Int64 { rlfd_now_ms() }

    // MARK: dirty

    /// Marks the engine dirty. Cheap, any thread, never waits for a save.
    /// A mark on the thread running this engine's restore, while it runs,
    /// is ignored: a restore by itself never makes the engine dirty.
    public func markDirty() {
        state.withLock {
            if let r = restoringThread, pthread_equal(r, pthread_self()) != 0 { return }
            markSeq &+= 1
            let now = Lifecycle.now()
            if firstMarkMs < 0 { firstMarkMs = now }
            lastMarkMs = now
            rearmLocked()
        }
    }

    public var isDirty: Bool { state.withLock { markSeq != cleanSeq } }

    /// The engine's restore begins (true) or ends (false) on this thread.
    func restoring(_ running: Bool) {
        state.withLock { restoringThread = running ? pthread_self() : nil }
    }

    /// A save is starting (the engine's lock held): what it will make clean.
    struct SaveToken { let seq: UInt64; let startMs: Int64 }

    func saveBegan() -> SaveToken {
        state.withLock { SaveToken(seq: markSeq, startMs: Lifecycle.now()) }
    }

    /// A save that began at `t` succeeded: the marks before it are saved.
    func saveSucceeded(_ t: SaveToken) {
        state.withLock {
            if t.seq &- cleanSeq < 1 << 63 { cleanSeq = t.seq }
            failures = 0
            retryAtMs = -1
            if markSeq == cleanSeq {
                firstMarkMs = -1
                lastMarkMs = -1
            } else {
                // Marked during the save: the ceiling counts from the save's start
                // (no later than the first of those marks).
                firstMarkMs = t.startMs
            }
            rearmLocked()
        }
    }

    // MARK: when

    /// When the next autosave is due (the state lock held); nil: none.
    private func autosaveDueLocked() -> Int64? {
        guard delayMs > 0, markSeq != cleanSeq, !shutDown else { return nil }
        if failures > 0 { return retryAtMs }
        return min(lastMarkMs + delayMs, firstMarkMs + maxDelayMs)
    }

    /// When `dispatch` next has work (the state lock held): a due autosave or
    /// the deadline of an extended restoration; nil: none.
    private func dueLocked() -> Int64? {
        var due = autosaveDueLocked()
        if tokenDeadlineMs >= 0 && !shutDown { due = min(due ?? tokenDeadlineMs, tokenDeadlineMs) }
        if testSettleAtMs >= 0 && !shutDown { due = min(due ?? testSettleAtMs, testSettleAtMs) }
        return due
    }

    /// The earliest deadline of an open extended restoration (docs/EVOLUTION.md),
    /// monotonic ms; -1: none. Kept by the engine (`updateTokenDeadline`), so
    /// the descriptor turns readable and `dispatch` expires the token on time.
    private var tokenDeadlineMs: Int64 = -1

    /// When the round trip of `RESTORATION_TEST_SETTLE` saves (monotonic
    /// ms; -1: not asked): at the first dispatch from then on.
    private var testSettleAtMs: Int64 = -1

    func armTestSettle(at ms: Int64) {
        state.withLock {
            testSettleAtMs = ms
            rearmLocked()
        }
    }

    func setTokenDeadline(_ ms: Int64?) {
        state.withLock {
            tokenDeadlineMs = ms ?? -1
            rearmLocked()
        }
    }

    /// Arms the timer at the due time (which clears its expirations, so the
    /// descriptor is unreadable until then), or disarms it.
    private func rearmLocked() {
        guard timerFD >= 0 else { return }
        let due = dueLocked() ?? -1
        if due != armedDue {
            _ = rlfd_arm(timerFD, due)
            armedDue = due
        }
    }

    private var signalPendingLocked: Bool { signalClient >= 0 && rsig_peek_pending(signalClient) != 0 }

    /// Milliseconds until `dispatch` has work; 0: now; -1: nothing pending.
    /// Asking is taken as a promise to dispatch when it says (a loop that
    /// waits with a timeout is a dispatcher, as one polling the descriptor is).
    public func nextTimeoutMs() -> Int64 {
        state.withLock {
            asksForTimeouts = true
            if signalPendingLocked { return 0 }
            guard let due = dueLocked() else { return -1 }
            return max(0, due - Lifecycle.now())
        }
    }

    // MARK: the descriptor

    /// Creates the descriptors (the state lock held).
    private func ensureDescriptorsLocked() throws(RestorationFailure) {
        if epollFD >= 0 { return }
        var ep: Int32 = -1, tf: Int32 = -1, ev: Int32 = -1
        let e = rlfd_create(&ep, &tf, &ev)
        if e != 0 {
            throw RestorationFailure(e == ENOMEM ? .noMemory : .io, "cannot create the engine's event descriptors (epoll, timerfd, eventfd): \(FileStore.errnoText(e))")
        }
        epollFD = ep; timerFD = tf; eventFD = ev
        armedDue = -1
        rearmLocked()
    }

    /// The pollable descriptor (`rst_event_fd`); handing it out is a promise to poll it.
    public func eventDescriptor() throws(RestorationFailure) -> Int32 {
        try state.withLock { () throws(RestorationFailure) -> Int32 in
            guard !shutDown else { throw RestorationFailure(.state, "the engine is being destroyed") }
            try ensureDescriptorsLocked()
            handedOut = true
            return epollFD
        }
    }

    // MARK: dispatch

    /// Does the work that is due now on the calling thread (`rst_dispatch`):
    /// a signal save, else a due autosave. Never waits: another dispatch in
    /// progress (another thread) makes this one return at once.
    /// Returns false when another dispatch was running.
    @discardableResult
    public func dispatch() throws(RestorationFailure) -> Bool {
        guard dispatching.tryLock() else { return false }
        defer { dispatching.unlock() }
        let (sig, client) = state.withLock { () -> (Int32, Int32) in
            if timerFD >= 0 { rlfd_drain(timerFD, eventFD) }
            let s = signalClient >= 0 ? rsig_take_pending(signalClient) : 0
            return (s, signalClient)
        }
        if sig != 0 {
            signalSave(sig, client)
            return true
        }
        // RESTORATION_TEST_SETTLE: the round trip's save, then the process ends.
        let settle = state.withLock { testSettleAtMs }
        if settle >= 0 && settle <= Lifecycle.now() { TestExits.settled(engine) }
        // An extended restoration whose deadline passed expires here, on time.
        let deadline = state.withLock { tokenDeadlineMs }
        if deadline >= 0 && deadline <= Lifecycle.now() {
            engine.expireDueTokens()
        }
        let due = state.withLock { autosaveDueLocked() }
        let now = Lifecycle.now()
        guard let due, due <= now else {
            state.withLock { armedDue = -2; rearmLocked() }
            return true
        }
        do {
            KillPoints.reach(.autosave, when: engine.hasStore)
            try save()
        } catch {
            let (backoff, report) = state.withLock { () -> (Int64, FailureReport) in
                failures += 1
                var b = delayMs
                for _ in 1..<min(failures, 40) { b = min(b * 2, maxDelayMs) }
                b = min(b, maxDelayMs)
                retryAtMs = Lifecycle.now() + b
                rearmLocked()
                return (b, failureReportLocked(error))
            }
            let line = "autosave failed (\(error.status.cName)): \(error.message); still dirty, retrying in \(backoff) ms"
            switch report {
            case .first: engine.log(.warning, line)
            case .quiet: engine.log(.debug, line)
            case .summary(let n, let seconds):
                engine.log(.warning, "autosave still failing: \(n) more identical failure\(n == 1 ? "" : "s") in the last \(seconds) s (\(error.status.cName)): \(error.message); still dirty, retrying in \(backoff) ms")
            }
            saveAttempted(.auto, error)
            observer?(.failed(error, retryInMs: backoff, reason: .autosave))
            throw error
        }
        let recovered = state.withLock { () -> Int? in
            guard failureKey != nil else { return nil }
            let n = quietFailures
            failureKey = nil
            quietFailures = 0
            return n
        }
        if let n = recovered {
            engine.log(.info, "autosave succeeded again" + (n > 0 ? " (after \(n) more identical failure\(n == 1 ? "" : "s") not logged)" : ""))
        }
        saveAttempted(.auto, nil)
        observer?(.saved(reason: .autosave))
        return true
    }

    /// How an autosave failure is logged: the first of a kind at WARNING,
    /// identical ones after it quietly (DEBUG), with one WARNING summary at
    /// most once per `failureSummaryIntervalMs`.
    enum FailureReport: Equatable {
        case first, quiet
        case summary(count: Int, seconds: Int64)
    }

    /// Classifies a failure (the state lock held). The key is the status and
    /// sentence, not the retry delay.
    private func failureReportLocked(_ error: RestorationFailure) -> FailureReport {
        let key = "\(error.status.cName): \(error.message)"
        let now = Lifecycle.now()
        guard key == failureKey else {
            failureKey = key
            quietFailures = 0
            lastSummaryMs = now
            return .first
        }
        quietFailures += 1
        if now - lastSummaryMs >= failureSummaryIntervalMs {
            let r = FailureReport.summary(count: quietFailures, seconds: (now - lastSummaryMs) / 1000)
            quietFailures = 0
            lastSummaryMs = now
            return r
        }
        return .quiet
    }

    /// The first delivery of a claimed signal: save if dirty, end the
    /// session when the signal will end the process, then let the signal go on.
    /// When the signal's deadline passed before this dispatch, the signal
    /// went on without it (the session stays open: the next launch recovers).
    /// The signal is re-raised by `rsig_done` after every lock is released.
    private func signalSave(_ sig: Int32, _ client: Int32) {
        if isDirty {
            do {
                try save()
                saveAttempted(.signal, nil)
                observer?(.saved(reason: .signal(sig)))
            } catch {
                engine.log(.error, "the save on signal \(sig) failed (\(error.status.cName)): \(error.message); the signal ends the process with the last saved state")
                saveAttempted(.signal, error)
                observer?(.failed(error, retryInMs: -1, reason: .signal(sig)))
            }
        }
        if rsig_still_owed(client, sig) && rsig_previous_is_default(sig) { engine.closeSession() }
        state.withLock { armedDue = -2; rearmLocked() }
        rsig_done(client, sig)
    }

    // MARK: the thread

    /// Starts the engine-owned dispatching thread (`rst_start_autosave_thread`).
    public func startThread() throws(RestorationFailure) {
        try state.withLock { () throws(RestorationFailure) in
            guard !shutDown else { throw RestorationFailure(.state, "the engine is being destroyed") }
            guard thread == nil else { throw RestorationFailure(.state, "the autosave thread is already running") }
            try ensureDescriptorsLocked()
            var ep: Int32 = -1, tf: Int32 = -1, stop: Int32 = -1
            // A second eventfd stops the thread (only the eventfd of the triple is used).
            let e = rlfd_create(&ep, &tf, &stop)
            if e != 0 { throw RestorationFailure(.io, "cannot create the autosave thread's stop descriptor: \(FileStore.errnoText(e))") }
            close(ep); close(tf)
            stopFD = stop
            let me = Unmanaged.passRetained(self).toOpaque()
            var t = pthread_t()
            let r = pthread_create(&t, nil, { p in
                let me = Unmanaged<Lifecycle>.fromOpaque(p!).takeRetainedValue()
                me.threadMain()
                return nil
            }, me)
            if r != 0 {
                Unmanaged<Lifecycle>.fromOpaque(me).release()
                close(stopFD); stopFD = -1
                throw RestorationFailure(r == EAGAIN ? .noMemory : .io, "cannot start the autosave thread: \(FileStore.errnoText(r))")
            }
            thread = t
        }
    }

    private func threadMain() {
        rlfd_block_signals()
        let (fd, stop) = state.withLock { (epollFD, stopFD) }
        while rlfd_wait(fd, stop) == 1 {
            let ran = (try? dispatch()) ?? true
            if !ran { usleep(1000) }   // the host is dispatching: let it finish
        }
    }

    public var threadRunning: Bool { state.withLock { thread != nil } }

    // MARK: signals

    /// `rst_save_on_signals`.
    public func saveOnSignals(_ signals: [Int32]) throws(RestorationFailure) {
        for s in signals {
            guard s > 0, s < 65, ![SIGKILL, SIGSTOP, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT, SIGSYS].contains(s) else {
                throw RestorationFailure(.invalid, "signal \(s) cannot be claimed (SIGKILL, SIGSTOP and the synchronous fault signals cannot wait for a save)")
            }
        }
        try state.withLock { () throws(RestorationFailure) in
            guard !shutDown else { throw RestorationFailure(.state, "the engine is being destroyed") }
            guard thread != nil || handedOut || asksForTimeouts else {
                throw RestorationFailure(.state, "no dispatcher: start the autosave thread, hand the engine's event descriptor to the host's loop, or let the loop wait as the next timeout says, first")
            }
            try ensureDescriptorsLocked()
            if signalClient < 0 {
                signalClient = rsig_client_new(eventFD, engine.configuration.signalDeadlineMs)
                if signalClient < 0 { throw RestorationFailure(.limit, "too many engines claim signals (at most 64 at once)") }
            }
            for s in signals {
                let e = rsig_claim(signalClient, s)
                if e != 0 { throw RestorationFailure(.io, "cannot install a handler for signal \(s): \(FileStore.errnoText(e))") }
            }
        }
    }

    // MARK: teardown

    /// Releases the signals, stops and joins the thread, closes the
    /// descriptors. Called by `Engine.destroy` without the engine's lock.
    func shutdown() {
        let (client, t, stop) = state.withLock { () -> (Int32, pthread_t?, Int32) in
            shutDown = true
            let r = (signalClient, thread, stopFD)
            signalClient = -1
            thread = nil
            return r
        }
        if client >= 0 { rsig_client_release(client) }
        if let t {
            rlfd_wake(stop)
            if pthread_equal(t, pthread_self()) != 0 { pthread_detach(t) } else { pthread_join(t, nil) }
        }
        state.withLock {
            for fd in [epollFD, timerFD, eventFD, stopFD] where fd >= 0 { close(fd) }
            epollFD = -1; timerFD = -1; eventFD = -1; stopFD = -1
        }
    }
}

/// A plain (non-recursive) mutex that can be tried.
final class Mutex: @unchecked Sendable {
    private let m: UnsafeMutablePointer<pthread_mutex_t>
    init() {
        m = .allocate(capacity: 1)
        pthread_mutex_init(m, nil)
    }
    deinit {
        pthread_mutex_destroy(m)
        m.deallocate()
    }
    func lock() { pthread_mutex_lock(m) }
    func unlock() { pthread_mutex_unlock(m) }
    func tryLock() -> Bool { pthread_mutex_trylock(m) == 0 }
    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}
