// The crash-loop marker's text (CrashGuard.swift): versions 1 and 2 read
// back as written; anything torn or malformed is not a marker the guard may
// act on; an archive's identity is its size and stored checksum.
import XCTest
@testable import RestorationCore

final class CrashGuardTests: XCTestCase {
    let owner = CrashGuard.Owner(pid: 77, start: 12345, boot: "boot-1")

    func testVersion1RoundTrip() {
        let m = CrashGuard.Marker(owner: owner, archive: "100:0000abcd")
        let text = CrashGuard.encode(m)
        XCTAssertTrue(text.hasPrefix("restoration-crash-marker 1\n"))
        XCTAssertEqual(CrashGuard.parse(Array(text.utf8)), m)
    }

    func testVersion2RoundTripAndRecord() throws {
        let m = CrashGuard.Marker(owner: owner, archive: "100:0000abcd", attempt: 2, record: nil, isVersion2: true)
        let text = CrashGuard.encode(m)
        XCTAssertTrue(text.hasPrefix("restoration-crash-marker 2\n"))
        XCTAssertEqual(CrashGuard.parse(Array(text.utf8)), m)
        // The record slot rewritten in place while a callback runs.
        let inCallback = text.replacingOccurrences(of: "record=----------", with: "record=0000000042")
        XCTAssertEqual(CrashGuard.parse(Array(inCallback.utf8))?.record, 42)
        let bad = text.replacingOccurrences(of: "record=----------", with: "record=00000000x2")
        XCTAssertNil(CrashGuard.parse(Array(bad.utf8)))
    }

    func testMalformedMarkersAreNotMarkers() {
        let good = CrashGuard.encode(.init(owner: owner, archive: "1:00000000"))
        XCTAssertNil(CrashGuard.parse([]))
        XCTAssertNil(CrashGuard.parse(Array(good.utf8.dropLast())), "torn")
        XCTAssertNil(CrashGuard.parse(Array(good.replacingOccurrences(of: "pid=77", with: "pid=0").utf8)))
        XCTAssertNil(CrashGuard.parse(Array(good.replacingOccurrences(of: "archive=1:00000000", with: "archive=nocolon").utf8)))
        XCTAssertNil(CrashGuard.parse(Array(good.replacingOccurrences(of: "boot=boot-1", with: "boot=").utf8)))
    }

    func testIdentityIsSizeAndStoredChecksum() {
        let bytes: [UInt8] = [9, 9, 9, 0xde, 0xad, 0xbe, 0xef]
        bytes.withUnsafeBytes { XCTAssertEqual(CrashGuard.identity(of: $0), "7:deadbeef") }
        [UInt8]([1]).withUnsafeBytes { XCTAssertEqual(CrashGuard.identity(of: $0), "1:00000000") }
    }
}
