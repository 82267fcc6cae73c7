// The engine's recursive lock (Lock.swift): re-entered by the thread that
// holds it, exclusive between threads.
import XCTest
import Foundation
@testable import RestorationCore

final class LockTests: XCTestCase {
    func testReentrantOnOneThread() {
        let l = RecursiveLock()
        let v = l.withLock { l.withLock { 42 } }
        XCTAssertEqual(v, 42)
    }

    func testExclusiveBetweenThreads() {
        final class Box: @unchecked Sendable { var n = 0 }
        let l = RecursiveLock(), box = Box()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<1000 { l.withLock { box.n += 1 } }
        }
        XCTAssertEqual(box.n, 8000)
    }
}
