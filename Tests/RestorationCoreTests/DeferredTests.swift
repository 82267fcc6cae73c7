// Deferred.swift: tokens of extended restorations — taken in a decode or
// finished callback, completed or expired, and did_finish_restoring once
// the last one is done.
import XCTest
@testable import RestorationCore

final class DeferredTests: XCTestCase {
    /// An engine with A registered whose decode takes a token with
    /// `deadlineMs`, restored from an archive of A; `finished` counts
    /// did_finish_restoring.
    private func extended(deadlineMs: UInt32, finished: @escaping () -> Void) throws -> (Engine, RestoreToken?) {
        let saver = Engine(configuration: .init())
        _ = try saver.register(identifier: "A", parent: nil, className: nil, behavior: nil)
        let bytes = try saver.saveToBytes()
        let e = Engine(configuration: .init())
        var token: RestoreToken?
        var body = RecordingBehavior(name: "A", recorder: Recorder())
        body.decodeBody = { _ in token = try? e.extendRestoration(deadlineMs: deadlineMs) }
        _ = try e.register(identifier: "A", parent: nil, className: nil, behavior: body)
        e.didFinishRestoring = finished
        try bytes.withUnsafeBytes { try e.restore(bytes: $0) }
        return (e, token)
    }

    func testExtendOutsideACallbackIsAStateError() {
        let e = Engine(configuration: .init())
        XCTAssertFalse(e.deferred.isOpen)
        XCTAssertThrowsError(try e.extendRestoration(deadlineMs: 0)) { err in
            XCTAssertEqual((err as! RestorationFailure).status, .state)
        }
    }

    func testLastCompletionRunsDidFinishOnce() throws {
        var finished = 0
        let (e, token) = try extended(deadlineMs: 0) { finished += 1 }
        let t = try XCTUnwrap(token)
        XCTAssertTrue(e.deferred.isOpen)
        XCTAssertEqual(finished, 0, "did_finish_restoring waits for the token")
        try e.completeRestoration(handle: t.handle)
        XCTAssertFalse(e.deferred.isOpen)
        XCTAssertEqual(finished, 1)
        XCTAssertThrowsError(try e.completeRestoration(handle: t.handle)) { err in
            XCTAssertEqual((err as! RestorationFailure).status, .state)
        }
        var other = 0
        XCTAssertThrowsError(try withUnsafePointer(to: &other) { try e.completeRestoration(handle: UnsafeRawPointer($0)) }) { err in
            XCTAssertEqual((err as! RestorationFailure).status, .invalid)
        }
        XCTAssertEqual(e.lastRestoreReport?.restored, 1)
    }

    func testExpiredTokenCountsAsSkipped() throws {
        var finished = 0
        let (e, token) = try extended(deadlineMs: 1) { finished += 1 }
        XCTAssertNotNil(token)
        usleep(5000)
        let report = try XCTUnwrap(e.lastRestoreReport)   // an entry point: the deadline is checked
        XCTAssertEqual(report.restored, 0)
        XCTAssertEqual(report.skipped, 1)
        XCTAssertEqual(e.lastRestoreSkips.map(\.reason), [.expired])
        XCTAssertEqual(finished, 1)
        XCTAssertFalse(e.deferred.isOpen)
    }
}
