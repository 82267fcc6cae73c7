// Restoration that finishes later (Deferred.swift), outside a restore: the
// calls are refused with a status and a sentence that names no C function.
import XCTest
@testable import RestorationCore

final class DeferredRefusalTests: XCTestCase {
    func testExtendOutsideACallbackIsAStateError() {
        let e = Engine(configuration: .init(crashGuard: false))
        defer { e.destroy() }
        XCTAssertThrowsError(try e.extendRestoration(deadlineMs: 0)) { error in
            let f = error as! RestorationFailure
            XCTAssertEqual(f.status, .state)
            XCTAssertFalse(f.message.contains("rst_"), f.message)
            XCTAssertTrue(f.message.contains("decode or finished callback"), f.message)
        }
    }

    func testCompletingAStrangersTokenIsInvalid() {
        let e = Engine(configuration: .init(crashGuard: false))
        defer { e.destroy() }
        let stray = UnsafeMutableRawPointer.allocate(byteCount: 8, alignment: 8)
        defer { stray.deallocate() }
        XCTAssertThrowsError(try e.completeRestoration(handle: UnsafeRawPointer(stray))) { error in
            let f = error as! RestorationFailure
            XCTAssertEqual(f.status, .invalid)
            XCTAssertEqual(f.message, "the token is not one of this engine's")
        }
    }
}
