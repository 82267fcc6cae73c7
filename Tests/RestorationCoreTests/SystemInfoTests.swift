// What the engine reads about the system (SystemInfo.swift): the clock,
// the recorded system version, a process's start time, the boot id.
import XCTest
import Foundation
@testable import RestorationCore
#if canImport(Glibc)
import Glibc
#endif

final class SystemInfoTests: XCTestCase {
    func testClockAndSystemVersion() {
        let a = SystemInfo.nowMs()
        XCTAssertGreaterThan(a, 1_600_000_000_000, "milliseconds since 1970")
        XCTAssertGreaterThanOrEqual(SystemInfo.nowMs(), a)
        XCTAssertFalse(SystemInfo.systemVersion.isEmpty)
    }

    func testStartTimeIdentifiesALiveProcess() throws {
        guard FileManager.default.fileExists(atPath: "/proc/self/stat") else { throw XCTSkip("no /proc") }
        XCTAssertNotNil(SystemInfo.startTime(of: getpid()))
        XCTAssertEqual(SystemInfo.startTime(of: getpid()), SystemInfo.startTime(of: getpid()))
        XCTAssertNil(SystemInfo.startTime(of: Int32.max), "no such process")
        XCTAssertNotEqual(SystemInfo.bootID, "")
    }

    func testReadSmallFileIsBounded() throws {
        let path = NSTemporaryDirectory() + "sysinfo-\(getpid())"
        defer { unlink(path) }
        try String(repeating: "x", count: 100).write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertEqual(SystemInfo.readSmallFile(path)?.count, 100)
        XCTAssertNil(SystemInfo.readSmallFile(path + ".missing"))
    }
}
