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

    /// The short plain C identifier check agrees with `isText` and
    /// `identifier(_:)`: whatever it passes they accept, and it passes every
    /// identifier of 1 to 8 ASCII bytes without '/' (no NUL: C strings).
    func testPlainShortCIdentifiersAgreeWithTheFullChecks() {
        let alphabet: [UInt8] = [0x61, 0x2F, 0x7F, 0x80, 0xC3, 0xA9, 0x20, 0x30, 0x2E, 0xFF, 0x01]
        var rng = SystemRandomNumberGenerator()
        func check(_ bytes: [UInt8]) {
            bytes.withUnsafeBytes { b in
                let plain = ArgumentRules.isPlainShortCIdentifier(IdentifierKey(b))
                var full = ArgumentRules.isText(b)
                if full { do throws(RestorationFailure) { try ArgumentRules.identifier(b) } catch { full = false } }
                if plain { XCTAssertTrue(full, "\(bytes)") }
                let expected = (1...8).contains(bytes.count) && bytes.allSatisfy { $0 < 0x80 && $0 != 0x2F }
                XCTAssertEqual(plain, expected, "\(bytes)")
            }
        }
        // Every string of up to 3 bytes over the alphabet, then random ones up to 12.
        check([])
        for a in alphabet { check([a]); for b in alphabet { check([a, b]); for c in alphabet { check([a, b, c]) } } }
        for _ in 0..<20_000 {
            let n = Int.random(in: 1...12, using: &rng)
            var bytes = (0..<n).map { _ in UInt8.random(in: 0x20...0x7E, using: &rng) }
            if Bool.random(using: &rng) { bytes[Int.random(in: 0..<n, using: &rng)] = alphabet.randomElement(using: &rng)! }
            check(bytes)
        }
    }
}
