import Dispatch
import Foundation
import RestorationCore

// When to save and what happened last time (docs/LIFECYCLE.md) in the Swift
// API: dirty tracking, autosave on the main queue (for @MainActor code) or
// on the engine's thread, signal saves, a stream of save events, restore
// reasons and generations. See docs/LIFECYCLE.md.

extension RestorationEngine {
    /// Why a restore restores what it does.
    ///
    /// The corresponding C type is `rst_restore_reason`.
    public enum RestoreReason: Int, Sendable, Equatable, CaseIterable, CustomStringConvertible {
        /// No archive: never saved, or discarded.
        case firstLaunch = 0
        /// The previous session ended cleanly.
        case relaunch = 1
        /// The previous session died: the archive is its last save.
        case recover = 2
        /// ``RestorationEngine/restore(from:)``.
        case buffer = 3
        /// The current archive was missing or invalid (or
        /// ``RestorationEngine/restore(generation:)`` asked): an older generation.
        case fallback = 4
        /// An archive or a generation existed but none could be restored:
        /// each invalid one was set aside intact, and the restore threw.
        case reset = 5
        /// The previous session ended cleanly on another machine (a store
        /// that roams between machines, such as restoration-etcd).
        case handoff = 6

        init(_ r: RestorationCore.RestoreReason) { self = RestoreReason(rawValue: Int(r.rawValue)) ?? .firstLaunch }

        /// The C enumerator's name, `"RST_REASON_RECOVER"`. The
        /// corresponding C function is `rst_restore_reason_name`.
        public var description: String { RestorationCore.CSpelling.restoreReason(rawValue: UInt32(rawValue)).description }
    }

    /// What an autosave or a signal save did (``saveEvents``).
    public enum SaveEvent: Sendable {
        /// An autosave (or the save on `signal`) succeeded.
        case saved(signal: Int32?)
        /// It failed; an autosave is retried after `retryAfter` (the engine
        /// stays dirty); a signal save is not retried (the signal goes on).
        case failed(RestorationError, retryAfter: Duration?, signal: Int32?)
    }

    /// The options as Engine.Configuration.validate names them.
    static let optionNames = Engine.Configuration.OptionNames(
        archivePath: "the archive path", appVersion: "the app version", idiom: "the idiom",
        autosaveDelay: "autosaveDelay", autosaveMaxDelay: "autosaveMaxDelay", generations: "generations",
        anArchivePath: "an archive path")

    /// The autosave delays in milliseconds (the rest of their checks:
    /// Engine.Configuration.validate).
    static func autosaveTimes(_ o: Options) throws(RestorationError) -> (UInt32, UInt32) {
        func ms(_ d: Duration?, _ what: String) throws(RestorationError) -> UInt32 {
            guard let d else { return 0 }
            let (s, atto) = d.components
            let v = s * 1000 + atto / 1_000_000_000_000_000
            guard v >= 0, v <= Int64(UInt32.max) else { throw RestorationError.invalid("RestorationEngine: \(what) \(d) is out of range") }
            return UInt32(v)
        }
        return (try ms(o.autosaveDelay, "autosaveDelay"), try ms(o.autosaveMaxDelay, "autosaveMaxDelay"))
    }

    static func signalDeadlineMs(_ o: Options) throws(RestorationError) -> UInt32 {
        guard let d = o.signalDeadline else { return 1000 }
        let (s, atto) = d.components
        let v = s * 1000 + atto / 1_000_000_000_000_000
        guard v > 0, v <= Int64(UInt32.max) else {
            throw RestorationError.invalid("RestorationEngine: signalDeadline \(d) is out of range (1 ms to \(UInt32.max) ms)")
        }
        return UInt32(v)
    }

    /// Dispatched saves go through this engine's lock, as ``save()`` does.
    func installLifecycle() {
        core.lifecycle.performSave = { [weak self] () throws(RestorationFailure) in
            guard let self else { throw RestorationFailure(.state, "the engine is being destroyed") }
            do throws(RestorationError) { try self.saveUnreported() } catch { throw error.failure }
        }
        core.lifecycle.observer = { [weak self] event in self?.events.yield(event) }
    }

    // MARK: dirty

    /// Marks the engine dirty: its state changed and should be saved. Cheap,
    /// callable from any thread or actor, never waits for a running save.
    ///
    /// The corresponding C function is `rst_mark_dirty`.
    public func markDirty() { core.lifecycle.markDirty() }

    /// True from a ``markDirty()`` until a save that began after it succeeds.
    ///
    /// The corresponding C function is `rst_is_dirty`.
    public var isDirty: Bool { core.lifecycle.isDirty }

    /// Saves now if dirty; does nothing when clean.
    ///
    /// - Throws: As ``save()``.
    ///
    /// The corresponding C function is `rst_flush`.
    public func flush() throws(RestorationError) {
        if isDirty { try save() }
    }

    // MARK: dispatch

    /// Does the work that is due now (a due autosave, a signal save) on the
    /// calling thread; never waits for work.
    ///
    /// - Throws: The failing autosave's error (it stays due and is retried).
    ///
    /// The corresponding C function is `rst_dispatch`.
    public func dispatch() throws(RestorationError) {
        do throws(RestorationFailure) { try core.lifecycle.dispatch() } catch { throw RestorationError(error) }
    }

    /// When ``dispatch()`` has work next: `.zero` for now, nil when nothing
    /// is pending. For loops that cannot watch ``eventFileDescriptor()``.
    ///
    /// The corresponding C function is `rst_next_timeout_ms`.
    public var nextTimeout: Duration? {
        let ms = core.lifecycle.nextTimeoutMs()
        return ms < 0 ? nil : .milliseconds(ms)
    }

    /// A descriptor readable exactly while ``dispatch()`` has work, for a
    /// loop that polls descriptors (owned by the engine: do not close it).
    ///
    /// - Throws: ``RestorationError/invalid(_:)`` without an archive path;
    ///   ``RestorationError/io(_:)`` when it cannot be made.
    ///
    /// The corresponding C function is `rst_event_fd`.
    public func eventFileDescriptor() throws(RestorationError) -> Int32 {
        try requireArchive("eventFileDescriptor")
        do throws(RestorationFailure) { return try core.lifecycle.eventDescriptor() } catch { throw RestorationError(error) }
    }

    /// Dispatches on the main queue: a `DispatchSource` watches the
    /// engine's descriptor, so every autosave and signal save runs on the
    /// main thread — the main actor's — where `@MainActor` objects live.
    /// The way to autosave in a Swift program whose state is on the main
    /// actor (a `dispatchMain()` or `RunLoop.main` program, SwiftUI, a GTK
    /// binding that drives the main queue). Calling it again does nothing.
    ///
    /// - Throws: As ``eventFileDescriptor()``.
    public func autosaveOnMainQueue() throws(RestorationError) {
        let fd = try eventFileDescriptor()
        mainSourceLock.lock()
        defer { mainSourceLock.unlock() }
        guard mainSource == nil else { return }
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: .main)
        source.setEventHandler { [weak self] in try? self?.dispatch() }
        source.resume()
        mainSource = source
    }

    /// Starts the engine's own thread, which dispatches: saves then run on
    /// that thread (so objects registered from the main actor fail there:
    /// use ``autosaveOnMainQueue()`` for them).
    ///
    /// - Throws: ``RestorationError/state(_:)`` when already started.
    ///
    /// The corresponding C function is `rst_start_autosave_thread`.
    public func startAutosaveThread() throws(RestorationError) {
        try requireArchive("startAutosaveThread")
        do throws(RestorationFailure) { try core.lifecycle.startThread() } catch { throw RestorationError(error) }
    }

    /// On the first of `signals` (default SIGTERM, SIGINT, SIGHUP) the
    /// engine saves if dirty through its dispatcher (never in the handler),
    /// then the signal goes on, so the process ends as it would have.
    /// Needs a dispatcher first: ``autosaveOnMainQueue()``,
    /// ``eventFileDescriptor()`` or ``startAutosaveThread()``.
    ///
    /// The corresponding C function is `rst_save_on_signals`.
    public func saveOnSignals(_ signals: [Int32] = [SIGTERM, SIGINT, SIGHUP]) throws(RestorationError) {
        try requireArchive("saveOnSignals")
        do throws(RestorationFailure) { try core.lifecycle.saveOnSignals(signals) } catch { throw RestorationError(error) }
    }

    /// What started a save (``setSaveListener(_:)``).
    ///
    /// The corresponding C values are `RST_SAVE_CALL`, `RST_SAVE_AUTO` and
    /// `RST_SAVE_SIGNAL`.
    public enum SaveTrigger: UInt32, Sendable {
        /// ``save()`` or ``flush()`` (when it saved).
        case call = 0
        /// An autosave.
        case auto = 1
        /// The save of a signal claimed by ``saveOnSignals(_:)``.
        case signal = 2
    }

    /// Sets (or with nil removes) the listener told after every attempt to
    /// save to the archive path — ``save()``, ``flush()`` when it saves, an
    /// autosave, a signal save — with the error, or nil for success. Not
    /// after ``saveToData()``, nor when ``flush()`` finds nothing to save.
    /// It runs on the thread that saved with no lock of the engine held, so
    /// it may call ``markDirty()``. One per engine (the C listener of the
    /// same engine is the same slot).
    ///
    /// The corresponding C function is `rst_set_save_listener`.
    public func setSaveListener(_ listener: (@Sendable (SaveTrigger, RestorationError?) -> Void)?) {
        guard let listener else {
            core.lifecycle.saveListener = nil
            return
        }
        core.lifecycle.saveListener = { trigger, failure in
            listener(SaveTrigger(rawValue: trigger.rawValue) ?? .call, failure.map { RestorationError($0) })
        }
    }

    /// The autosaves and signal saves as they happen (not ``save()`` or
    /// ``flush()``, whose result the caller has). Each access returns a new
    /// stream; events before it are not replayed.
    ///
    /// ```swift
    /// for await event in engine.saveEvents {
    ///     if case .failed(let error, _, _) = event { statusBar.show(error) }
    /// }
    /// ```
    public var saveEvents: AsyncStream<SaveEvent> { events.stream() }

    private func requireArchive(_ what: String) throws(RestorationError) {
        if !core.hasStore { throw RestorationError.invalid("\(what): the engine has no archive path") }
    }

    // MARK: what happened last time

    /// Marks this engine's session as ended cleanly, so the next restore of
    /// its archive reports ``RestoreReason/relaunch`` instead of
    /// ``RestoreReason/recover``. The engine also does this when it is
    /// released — but a top-level `let engine` in `main.swift` is a global,
    /// and globals are never released: such a program calls this before it
    /// exits (after its last save), or its every clean exit reads as a death
    /// at the next launch.
    ///
    /// Safe to call twice, or before any save or restore (it does nothing
    /// then), and without a store or archive path; a later save or restore
    /// records the session again. With an archive path (or a store that
    /// maps), it takes no lock and allocates nothing, so a signal handler
    /// that ends the process may call it.
    ///
    /// The corresponding C function is `rst_close_session`.
    public func closeSession() { core.closeSession() }

    /// The reason of the last restore; ``RestoreReason/firstLaunch`` before
    /// any, or when the last found no archive.
    ///
    /// The corresponding C function is `rst_last_restore_reason`.
    public var lastRestoreReason: RestoreReason { RestoreReason(core.lastRestoreReason) }

    /// Restores generation `generation` (`<archive>.k`), reason
    /// ``RestoreReason/fallback``; 0: the current archive, as ``restore()``.
    ///
    /// - Throws: ``RestorationError/notFound(_:)`` for a missing generation;
    ///   otherwise as ``restore()``.
    ///
    /// The corresponding C function is `rst_restore_generation`.
    public func restore(generation: Int) throws(RestorationError) {
        guard generation >= 0 else { throw RestorationError.invalid("restore(generation:): \(generation) is negative") }
        try registry.locked { () throws(RestorationError) in
            registry.sweep()
            do throws(RestorationFailure) {
                try core.restore(generation: UInt32(clamping: generation))
            } catch { throw RestorationError(error) }
        }
    }
}

/// The continuations of ``RestorationEngine/saveEvents``.
final class SaveEventHub: @unchecked Sendable {
    private let lock = NSLock()
    private var continuations: [UUID: AsyncStream<RestorationEngine.SaveEvent>.Continuation] = [:]

    func stream() -> AsyncStream<RestorationEngine.SaveEvent> {
        AsyncStream { c in
            let id = UUID()
            lock.withLock { continuations[id] = c }
            c.onTermination = { [weak self] _ in self?.lock.withLock { _ = self?.continuations.removeValue(forKey: id) } }
        }
    }

    func yield(_ e: Lifecycle.Event) {
        let event: RestorationEngine.SaveEvent
        switch e {
        case .saved(let cause): event = .saved(signal: cause.signal)
        case .failed(let f, let retry, let cause):
            event = .failed(RestorationError(f), retryAfter: retry < 0 ? nil : .milliseconds(retry), signal: cause.signal)
        }
        for c in lock.withLock({ Array(continuations.values) }) { c.yield(event) }
    }

    func finish() {
        for c in lock.withLock({ Array(continuations.values) }) { c.finish() }
    }
}

extension Lifecycle.SaveCause {
    var signal: Int32? { if case .signal(let s) = self { return s }; return nil }
}
