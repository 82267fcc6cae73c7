import XCTest
@testable import RestorationCore

/// ArgumentRules.swift: the argument rules every edge shares. Over a limit is
/// `.limit` (RST_ERR_LIMIT), anything else malformed `.invalid`; messages
/// name no C function.
final class ArgumentRulesTests: XCTestCase {
    private func status(_ body: () throws(RestorationFailure) -> Void) -> Status? {
        do { try body(); return nil } catch { XCTAssertFalse(error.message.contains("rst_"), error.message); return error.status }
    }

    func testText() {
        for ok in ["", "abc", "caf\u{e9}", "\u{1F600}", String(repeating: "x", count: 100)] {
            XCTAssertTrue(ok.utf8.withContiguousStorageIfAvailable { ArgumentRules.isText(UnsafeRawBufferPointer($0)) } ?? false, ok)
        }
        for bad: [UInt8] in [[0], [0x61, 0], [0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xC3]] {
            XCTAssertFalse(bad.withUnsafeBytes { ArgumentRules.isText($0) }, "\(bad)")
        }
    }

    func testIdentifiers() {
        XCTAssertNil(status { () throws(RestorationFailure) in try ArgumentRules.identifier("Tabs") })
        XCTAssertNil(status { () throws(RestorationFailure) in try ArgumentRules.identifier(String(repeating: "i", count: 255)) })
        XCTAssertEqual(status { () throws(RestorationFailure) in try ArgumentRules.identifier("") }, .invalid)
        XCTAssertEqual(status { () throws(RestorationFailure) in try ArgumentRules.identifier("a/b") }, .invalid)
        XCTAssertEqual(status { () throws(RestorationFailure) in try ArgumentRules.identifier("a\u{0}b") }, .invalid)
        XCTAssertEqual(status { () throws(RestorationFailure) in try ArgumentRules.identifier(String(repeating: "i", count: 256)) }, .limit)
        XCTAssertEqual(status { () throws(RestorationFailure) in try ArgumentRules.identifier(String(repeating: "\u{e9}", count: 128)) }, .limit)
    }

    func testClassNamesAndKeys() {
        XCTAssertNil(status { () throws(RestorationFailure) in try ArgumentRules.className("Some.Class/With/Slashes") })
        XCTAssertEqual(status { () throws(RestorationFailure) in try ArgumentRules.className("") }, .invalid)
        XCTAssertEqual(status { () throws(RestorationFailure) in try ArgumentRules.className(String(repeating: "c", count: 256)) }, .limit)
        let long = UnsafeMutableRawBufferPointer.allocate(byteCount: 256, alignment: 1)
        defer { long.deallocate() }
        long.initializeMemory(as: UInt8.self, repeating: 0x6B)
        XCTAssertEqual(status { () throws(RestorationFailure) in try ArgumentRules.key(UnsafeRawBufferPointer(long), location: "here") }, .limit)
        XCTAssertEqual(status { () throws(RestorationFailure) in
            try ArgumentRules.key(UnsafeRawBufferPointer(start: nil, count: 0), location: "here")
        }, .invalid)
    }
}
