// docs/LIFECYCLE.md through real C programs (C/lifecycle.c, C/generations.c):
// options version 2, when to save, signal saves, restore reasons and
// generations. Each program prints "<name>: ok N checks"; a failed check
// prints file:line and the engine's last error.
import Foundation
import XCTest

final class LifecycleCTests: XCTestCase {
    private func run(_ program: String, _ mode: String, _ extra: [String] = [], timeout: Double = 120) throws {
        let dir = CTestDir("\(program)-\(mode)")
        try runC(program, [mode, dir.path] + extra, timeout: timeout)
    }

    /// Version 2 options: a version 1 struct (exactly as long as version 1)
    /// is accepted and nothing past `log` is read; init per version; limits
    /// (generations > 16, max below delay, no archive_path; carry_saves accepted);
    /// 1.2.0; reason names; NULL arguments.
    func testOptionsVersion2() throws { try run("lifecycle", "options") }

    /// Dirty from a mark until a save that began after it succeeds; flush;
    /// an object of another engine; buffers do not clean.
    func testDirtyTrackingAndFlush() throws { try run("lifecycle", "dirty") }

    /// Delay 200 ms: no save before 150 ms, one within 2 s; marks every
    /// 50 ms for 1 s postpone it; a flush disarms the descriptor.
    func testDebouncedAutosave() throws { try run("lifecycle", "debounce") }

    /// Delay 200 ms, ceiling 600 ms: continuous marks still save, not
    /// before 450 ms, within 3 s; the default ceiling is 10 × the delay.
    func testAutosaveCeiling() throws { try run("lifecycle", "ceiling") }

    /// should_save refuses three times: retries after 100, 200, 400 ms
    /// (capped), each logged at WARNING, the engine dirty all along.
    func testRetryWithBackoff() throws { try run("lifecycle", "retry") }

    /// The descriptor: readable exactly while a save is due, until dispatched.
    func testEventDescriptorReadableExactlyWhileWorkIsDue() throws { try run("lifecycle", "fd") }

    /// The engine's own thread saves off the main thread; a second start is
    /// RST_ERR_STATE; destroy joins it.
    func testAutosaveThread() throws { try run("lifecycle", "thread") }

    /// Which signals can be claimed, RST_ERR_STATE without a dispatcher, the
    /// previous disposition back when the last engine lets go.
    func testSignalClaimRules() throws { try run("lifecycle", "signals") }

    /// A forked child marks dirty and gets SIGTERM (fd loop, then thread)
    /// or SIGINT: it ends by that signal and its archive holds the new state.
    func testSaveOnSIGTERMThenEndBySIGTERM() throws { try run("lifecycle", "sigterm") }

    /// Two engines claim SIGTERM (one by fd, one by its thread): both save,
    /// then the process ends by SIGTERM.
    func testTwoEnginesOnOneSignal() throws { try run("lifecycle", "two-engines") }

    /// 4 threads mark (and register, unregister) while the engine's thread
    /// autosaves and the main thread dispatches, flushes and saves; clean at
    /// the end (also run under ThreadSanitizer by `make test-tsan`).
    func testMarksFromThreadsWhileAutosaving() throws {
        let dir = CTestDir("autosave-threads")
        try runC("autosave_threads", [dir.path, "1.0"])
    }

    /// First launch, relaunch, buffer, RECOVER after kill -9 (not hidden by
    /// an earlier save), relaunch after a clean end, torn and other-boot sessions.
    func testRestoreReasons() throws { try run("generations", "reasons") }

    /// Rotation to .1….K; a corrupt archive falls back to generation 1 and
    /// is set aside intact; invalid generations skipped and kept;
    /// rst_restore_generation; discard removes them.
    func testGenerationsAndFallback() throws { try run("generations", "fallback") }

    /// kill -9 at random moments of rotating saves (seeded): the path always
    /// holds a valid archive, never older than before, and the chain is
    /// newest first.
    func testKill9DuringRotatingSaves() throws {
        let seed = UInt32.random(in: 1...1_000_000)
        print("kill -9 during rotating saves: seed \(seed)")
        try run("generations", "killrotate", [String(seed), "25"], timeout: 240)
    }

    // MARK: library 1.2: saving moments (C/saving_moments.c)

    private func moments(_ mode: String) throws { try run("saving_moments", mode, timeout: 60) }

    /// A previous SIGTERM handler that exit()s and an atexit that flushes and
    /// destroys the engine (a curses program): the claimed signal's save, the
    /// re-raise into that handler and the atexit complete (fd loop and
    /// thread); the change is saved and the next launch is a relaunch.
    func testClaimedSignalWithExitingPreviousHandlerDoesNotDeadlock() throws { try moments("exit-handler") }

    /// A host blocked in read() never dispatches: SIGTERM still ends it
    /// (signal_deadline_ms 300, within 5 s, not before the deadline); the
    /// unsaved change is lost and the next restore reports RECOVER; the
    /// handler has SA_RESTART.
    func testClaimedSignalEndsTheProgramAfterItsDeadline() throws { try moments("deadline") }

    /// Version-2 options and signal_deadline_ms 0: the deadline is 1000 ms.
    func testSignalDeadlineDefaultsToOneSecond() throws { try moments("default-deadline") }

    /// rst_set_save_listener: CALL for rst_save and a saving rst_flush, AUTO
    /// for autosaves, failures with their status; nothing for a clean flush
    /// or a buffer save; no engine lock held (another thread saves, the
    /// listener marks dirty); NULL removes it.
    func testSaveListener() throws { try moments("listener") }

    /// The listener hears a signal save as RST_SAVE_SIGNAL, once.
    func testSaveListenerOnSignal() throws { try moments("listener-signal") }

    /// Marks from the factory, decode, finished and did_finish_restoring on
    /// the restoring thread are ignored (RST_OK); a mark from another thread
    /// during the restore counts.
    func testMarksDuringARestoreAreIgnored() throws { try moments("restore-marks") }

    /// An autosave failing the same way logs one WARNING (the rest at
    /// DEBUG); a different failure logs at once; the success after them
    /// logs at INFO; the same failure after a success is new again.
    func testRepeatedAutosaveFailuresAreLoggedOnce() throws { try moments("repeated-failures") }
}
