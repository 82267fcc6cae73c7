// Lifecycle.swift: the parts of the autosave's bookkeeping that C programs
// cannot reach in a test's time (the once-a-minute summary of repeated
// failures) and the save listener's contract in the core.
import XCTest
import Foundation
@testable import RestorationCore

final class LifecycleTests: XCTestCase {
    private final class Lines: @unchecked Sendable {
        private let lock = NSLock()
        private var all: [(LogLevel, String)] = []
        func add(_ l: LogLevel, _ m: String) { lock.withLock { all.append((l, m)) } }
        var lines: [(LogLevel, String)] { lock.withLock { all } }
    }

    private func engine(_ dir: String, _ name: String) -> Engine {
        Engine(configuration: .init(archivePath: dir + "/" + name, autosaveDelayMs: 10, autosaveMaxDelayMs: 20))
    }

    private func tempDir() throws -> String {
        var template = Array("\(NSTemporaryDirectory())/rst-lifecycle.XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else { throw XCTSkip("mkdtemp") }
        let path = String(cString: template)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    /// Dispatches whatever is due for `ms` milliseconds; returns the failures.
    private func dispatch(_ e: Engine, for ms: Int64) -> Int {
        var failed = 0
        let end = Lifecycle.now() + ms
        while Lifecycle.now() < end {
            let t = e.lifecycle.nextTimeoutMs()
            if t == 0 {
                do { try e.lifecycle.dispatch() } catch { failed += 1 }
            } else {
                usleep(2000)
            }
        }
        return failed
    }

    /// Identical failures: one WARNING, then one summary per interval with
    /// the count of the quiet ones; every failure is at DEBUG or WARNING.
    func testIdenticalFailuresAreSummarizedOncePerInterval() throws {
        let e = engine(try tempDir(), "s.rst")
        let lines = Lines()
        e.logHandler = { lines.add($0, $1) }
        e.shouldSave = { false }
        e.lifecycle.failureSummaryIntervalMs = 250
        e.lifecycle.markDirty()
        let failed = dispatch(e, for: 900)
        XCTAssertGreaterThan(failed, 10)
        let warnings = lines.lines.filter { $0.0 >= .warning }.map(\.1)
        XCTAssertTrue(warnings.first?.hasPrefix("autosave failed (RST_ERR_REJECTED)") == true, "\(warnings)")
        let summaries = warnings.dropFirst()
        XCTAssertTrue((2...4).contains(summaries.count), "\(warnings)")
        for s in summaries {
            XCTAssertTrue(s.hasPrefix("autosave still failing: "), s)
            XCTAssertTrue(s.contains("identical failure"), s)
            XCTAssertTrue(s.contains("should_save returned false"), s)
        }
        let quiet = lines.lines.filter { $0.0 == .debug && $0.1.hasPrefix("autosave failed") }.count
        XCTAssertEqual(quiet + warnings.count, failed, "every failure is logged exactly once, at some level")
        _ = e.destroy()
    }

    /// The listener hears each save attempt with its trigger and failure,
    /// without the engine's lock (another thread can take it meanwhile).
    func testSaveListenerRunsWithoutTheEngineLock() throws {
        let e = engine(try tempDir(), "l.rst")
        let heard = Lines()
        e.lifecycle.saveListener = { trigger, failure in
            let done = DispatchSemaphore(value: 0)
            Thread { _ = try? e.saveToBytes(); done.signal() }.start()
            let ok = done.wait(timeout: .now() + 10) == .success
            heard.add(failure == nil ? .info : .warning, "\(trigger) \(ok)")
        }
        try e.lifecycle.reportingSave(.call) { () throws(RestorationFailure) in try e.save() }
        e.shouldSave = { false }
        XCTAssertThrowsError(try e.lifecycle.reportingSave(.call) { () throws(RestorationFailure) in try e.save() })
        e.shouldSave = nil
        e.lifecycle.markDirty()
        _ = dispatch(e, for: 300)
        XCTAssertEqual(heard.lines.map(\.1), ["call true", "call true", "auto true"])
        XCTAssertEqual(heard.lines.map(\.0), [.info, .warning, .info])
        e.lifecycle.saveListener = nil
        try e.save()
        XCTAssertEqual(heard.lines.count, 3)
        _ = e.destroy()
    }
}
