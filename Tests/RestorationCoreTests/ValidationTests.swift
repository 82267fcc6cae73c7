import XCTest
@testable import RestorationCore

/// Validation.swift: the argument rules every edge shares. Over a limit is
/// `.limit` (RST_ERR_LIMIT), anything else malformed `.invalid`; messages
/// name no C function.
final class ValidationTests: XCTestCase {
    private func status(_ body: () throws(RestorationFailure) -> Void) -> Status? {
        do { try body(); return nil } catch { XCTAssertFalse(error.message.contains("rst_"), error.message); return error.status }
    }

    func testText() {
        for ok in ["", "abc", "caf\u{e9}", "\u{1F600}", String(repeating: "x", count: 100)] {
            XCTAssertTrue(ok.utf8.withContiguousStorageIfAvailable { Validation.isText(UnsafeRawBufferPointer($0)) } ?? false, ok)
        }
        for bad: [UInt8] in [[0], [0x61, 0], [0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xC3]] {
            XCTAssertFalse(bad.withUnsafeBytes { Validation.isText($0) }, "\(bad)")
        }
    }

    func testIdentifiers() {
        XCTAssertNil(status { () throws(RestorationFailure) in try Validation.identifier("Tabs") })
        XCTAssertNil(status { () throws(RestorationFailure) in try Validation.identifier(String(repeating: "i", count: 255)) })
        XCTAssertEqual(status { () throws(RestorationFailure) in try Validation.identifier("") }, .invalid)
        XCTAssertEqual(status { () throws(RestorationFailure) in try Validation.identifier("a/b") }, .invalid)
        XCTAssertEqual(status { () throws(RestorationFailure) in try Validation.identifier("a\u{0}b") }, .invalid)
        XCTAssertEqual(status { () throws(RestorationFailure) in try Validation.identifier(String(repeating: "i", count: 256)) }, .limit)
        XCTAssertEqual(status { () throws(RestorationFailure) in try Validation.identifier(String(repeating: "\u{e9}", count: 128)) }, .limit)
    }

    func testClassNamesAndKeys() {
        XCTAssertNil(status { () throws(RestorationFailure) in try Validation.className("Some.Class/With/Slashes") })
        XCTAssertEqual(status { () throws(RestorationFailure) in try Validation.className("") }, .invalid)
        XCTAssertEqual(status { () throws(RestorationFailure) in try Validation.className(String(repeating: "c", count: 256)) }, .limit)
        let long = UnsafeMutableRawBufferPointer.allocate(byteCount: 256, alignment: 1)
        defer { long.deallocate() }
        long.initializeMemory(as: UInt8.self, repeating: 0x6B)
        XCTAssertEqual(status { () throws(RestorationFailure) in try Validation.key(UnsafeRawBufferPointer(long), location: "here") }, .limit)
        XCTAssertEqual(status { () throws(RestorationFailure) in
            try Validation.key(UnsafeRawBufferPointer(start: nil, count: 0), location: "here")
        }, .invalid)
    }
}
