// The Swift API's autosave, dispatch, thread, events, and failures with
// retry (docs/LIFECYCLE.md) from Swift 5 mode code.
import Foundation
import XCTest
import Restoration
#if canImport(Glibc)
import Glibc
#endif

final class AutosaveTests: XCTestCase {
    /// The engine's own thread saves after the delay; the stream reports it.
    func testAutosaveThreadAndSaveEvents() async throws {
        let dir = try temporaryDirectory(self)
        var options = RestorationEngine.Options(archivePath: dir.path + "/a.rst")
        options.autosaveDelay = .milliseconds(50)
        options.autosaveMaxDelay = .milliseconds(500)
        let engine = try RestorationEngine(options: options)
        let probe = Probe("P")
        let value = LockedBox(1)
        probe.onEncode = { try $0.encode(value.get(), forKey: "v") }
        try engine.register(probe)
        try engine.startAutosaveThread()
        XCTAssertThrowsError(try engine.startAutosaveThread()) { XCTAssertEqual(($0 as? RestorationError)?.statusName, "RST_ERR_STATE") }
        let events = engine.saveEvents
        value.set(7)
        engine.markDirty()
        for await e in events {
            guard case .saved(signal: nil) = e else { return XCTFail("\(e)") }
            break
        }
        XCTAssertFalse(engine.isDirty)
        let again = try RestorationEngine(archivePath: dir.path + "/a.rst")
        let p2 = Probe("P")
        var got = 0
        p2.onDecode = { got = try $0.decode(Int.self, forKey: "v") ?? 0 }
        try again.register(p2)
        try again.restore()
        XCTAssertEqual(got, 7)
        withExtendedLifetime(probe) {}
    }

    /// A failing autosave is reported in the stream with its retry delay,
    /// the engine stays dirty, and the next attempt succeeds.
    func testFailedAutosaveIsRetriedAndReported() throws {
        let dir = try temporaryDirectory(self)
        var options = RestorationEngine.Options(archivePath: dir.path + "/r.rst")
        options.autosaveDelay = .milliseconds(20)
        let refuse = LockedBox(true)
        options.shouldSave = { !refuse.get() }
        let log = LogBox()
        options.log = log.handler()
        let engine = try RestorationEngine(options: options)
        try engine.register(Probe("P"))
        let fd = try engine.eventFileDescriptor()
        engine.markDirty()
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        XCTAssertEqual(poll(&pfd, 1, 3000), 1)
        XCTAssertThrowsError(try engine.dispatch()) { XCTAssertEqual(($0 as? RestorationError)?.statusName, "RST_ERR_REJECTED") }
        XCTAssertTrue(engine.isDirty)
        XCTAssertTrue(log.warnings.contains { $0.contains("autosave failed") && $0.contains("retrying in 20 ms") }, "\(log.warnings)")
        XCTAssertNotNil(engine.nextTimeout)
        refuse.set(false)
        XCTAssertEqual(poll(&pfd, 1, 3000), 1)
        try engine.dispatch()
        XCTAssertFalse(engine.isDirty)
        XCTAssertNil(engine.nextTimeout)
        XCTAssertThrowsError(try RestorationEngine(archiveURL: nil).eventFileDescriptor())
    }
}

/// A value shared with callbacks on other threads.
final class LockedBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T
    init(_ v: T) { value = v }
    func get() -> T { lock.withLock { value } }
    func set(_ v: T) { lock.withLock { value = v } }
}

final class SaveListenerTests: XCTestCase {
    /// setSaveListener: `.call` for save() and a flush that saves (not a
    /// clean flush, not saveToData()), `.auto` for a dispatched autosave,
    /// the error of a failed save; the listener may mark dirty; nil removes it.
    func testSaveListenerHearsEachSaveAttempt() throws {
        let dir = try temporaryDirectory(self)
        var options = RestorationEngine.Options(archivePath: dir.path + "/l.rst")
        options.autosaveDelay = .milliseconds(20)
        let refuse = LockedBox(false)
        options.shouldSave = { !refuse.get() }
        let engine = try RestorationEngine(options: options)
        try engine.register(Probe("P"))
        let heard = LockedBox<[String]>([])
        let markOnce = LockedBox(false)
        engine.setSaveListener { [weak engine] trigger, error in
            heard.set(heard.get() + ["\(trigger) \(error?.statusName ?? "ok")"])
            if markOnce.get() { markOnce.set(false); engine?.markDirty() }
        }
        try engine.save()
        try engine.flush()                  // clean: nothing heard
        _ = try engine.saveToData()         // a buffer: nothing heard
        engine.markDirty()
        markOnce.set(true)
        try engine.flush()
        XCTAssertTrue(engine.isDirty)       // the listener's mark counts
        let fd = try engine.eventFileDescriptor()
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        XCTAssertEqual(poll(&pfd, 1, 3000), 1)
        try engine.dispatch()
        refuse.set(true)
        XCTAssertThrowsError(try engine.save())
        XCTAssertEqual(heard.get(), ["call ok", "call ok", "auto ok", "call RST_ERR_REJECTED"])
        engine.setSaveListener(nil)
        refuse.set(false)
        try engine.save()
        XCTAssertEqual(heard.get().count, 4)
    }
}

final class SignalDeadlineOptionTests: XCTestCase {
    /// signalDeadline: nil and positive durations are accepted; zero,
    /// negative and too long ones are invalid.
    func testSignalDeadlineOption() throws {
        let dir = try temporaryDirectory(self)
        var options = RestorationEngine.Options(archivePath: dir.path + "/d.rst")
        XCTAssertNoThrow(try RestorationEngine(options: options))
        options.signalDeadline = .milliseconds(300)
        XCTAssertNoThrow(try RestorationEngine(options: options))
        for bad: Duration in [.zero, .milliseconds(-5), .seconds(Int64(UInt32.max))] {
            options.signalDeadline = bad
            XCTAssertThrowsError(try RestorationEngine(options: options)) {
                XCTAssertEqual(($0 as? RestorationError)?.statusName, "RST_ERR_INVALID")
            }
        }
    }
}
