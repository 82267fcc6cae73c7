@testable import RestorationArchive
import XCTest

final class DocumentTests: XCTestCase {
    static func document() -> ArchiveDocument {
        ArchiveDocument(info: ArchiveInfo(appVersion: "3.0", systemVersion: "Linux", idiom: "kiosk", savedAtMs: 99), objects: [
            ArchiveObject(identifier: "Tabs", parent: nil, className: "TabController", entries: [
                ArchiveEntry(key: "selected", value: .int(2)),
                ArchiveEntry(key: "visible", value: .bool(true)),
                ArchiveEntry(key: "hidden", value: .bool(false)),
                ArchiveEntry(key: "ratio", value: .double(-0.5)),
                ArchiveEntry(key: "title", value: .string("Ünïcode ✓")),
                ArchiveEntry(key: "empty", value: .string("")),
                ArchiveEntry(key: "blob", value: .bytes([0, 1, 0xFF])),
                ArchiveEntry(key: "none", value: .bytes([])),
                ArchiveEntry(key: "current", value: .object(record: 2)),
                ArchiveEntry(key: "ids", value: .intArray([Int64.min, 0, Int64.max])),
                ArchiveEntry(key: "noIds", value: .intArray([])),
                ArchiveEntry(key: "tags", value: .stringArray(["a", "", "ß"])),
                ArchiveEntry(key: "noTags", value: .stringArray([])),
                ArchiveEntry(key: "layout", value: .record([
                    ArchiveEntry(key: "width", value: .int(300)),
                    ArchiveEntry(key: "inner", value: .record([ArchiveEntry(key: "width", value: .double(.infinity))])),
                    ArchiveEntry(key: "empty", value: .record([])),
                ])),
                ArchiveEntry(key: "future", value: .unknown(tag: 14, payload: [7, 7])),
            ]),
            ArchiveObject(identifier: "Nav", parent: 0, className: nil, entries: []),
            ArchiveObject(identifier: "List", parent: 1, className: "My/List", entries: [
                ArchiveEntry(key: "scroll", value: .double(12.5)),
                ArchiveEntry(key: "back", value: .object(record: 0)),
            ]),
            ArchiveObject(identifier: "List", parent: 0, className: nil, entries: []),
        ])
    }

    func testDocumentRoundTrip() throws {
        let doc = DocumentTests.document()
        let bytes = try doc.encode()
        let r = try ArchiveReader(bytes: bytes)
        let back = ArchiveDocument(reader: r)
        var expected = doc
        expected.info.objectCount = 4
        XCTAssertEqual(back, expected)
        XCTAssertEqual(try ArchiveDocument(bytes: bytes), expected)
        XCTAssertEqual(back.path(of: 2), "Tabs/Nav/List")
        XCTAssertEqual(back.path(of: 3), "Tabs/List")
        XCTAssertEqual(r.path(ofRecord: 2), "Tabs/Nav/List")
        // Encoding is deterministic and stable through a second round trip.
        XCTAssertEqual(try back.encode(), bytes)
    }

    func testNaNSurvives() throws {
        let doc = ArchiveDocument(info: ArchiveInfo(), objects: [
            ArchiveObject(identifier: "a", entries: [ArchiveEntry(key: "nan", value: .double(.nan))]),
        ])
        let back = try ArchiveDocument(bytes: try doc.encode())
        guard case .double(let d) = back.objects[0].entries[0].value else { return XCTFail() }
        XCTAssertTrue(d.isNaN)
        XCTAssertTrue(identical(back, ArchiveDocument(info: ArchiveInfo(objectCount: 1), objects: doc.objects)))
    }

    func testEncodeRejectsWhatTheReaderWould() {
        func failure(_ objects: [ArchiveObject]) -> String? {
            do {
                _ = try ArchiveDocument(info: ArchiveInfo(), objects: objects).encode()
                return nil
            } catch {
                switch error {
                case .state(let m), .limit(let m): return m
                case .duplicateKey: return "duplicateKey"
                }
            }
        }
        func check(_ objects: [ArchiveObject], _ parts: String..., line: UInt = #line) {
            guard let m = failure(objects) else { return XCTFail("accepted", line: line) }
            for p in parts { XCTAssertTrue(m.contains(p), "'\(m)' lacks '\(p)'", line: line) }
        }
        let a = ArchiveObject(identifier: "a")
        check([ArchiveObject(identifier: "a/b")], "object 0", "contains '/'")
        check([ArchiveObject(identifier: "")], "object 0", "identifier is empty")
        check([ArchiveObject(identifier: "x\u{0}y")], "NUL")
        check([ArchiveObject(identifier: String(repeating: "i", count: 256))], "256 bytes")
        check([a, ArchiveObject(identifier: "b", parent: 1)], "object 1", "parent 1 is not an earlier object")
        check([a, ArchiveObject(identifier: "b", parent: 5)], "parent 5")
        check([a, ArchiveObject(identifier: "a")], "object 1 (a)", "already has this path")
        check([a, ArchiveObject(identifier: "c", parent: 0), ArchiveObject(identifier: "c", parent: 0)], "object 2 (a/c)")
        check([ArchiveObject(identifier: "a", className: "")], "class name is empty")
        check([ArchiveObject(identifier: "a", entries: [ArchiveEntry(key: "r", value: .object(record: 1))])],
              "object 0 (a), key 'r'", "out of range")
        check([ArchiveObject(identifier: "a", entries: [ArchiveEntry(key: "k", value: .int(1)), ArchiveEntry(key: "k", value: .bool(true))])],
              "object 0 (a), key 'k'", "twice")
        check([ArchiveObject(identifier: "a", entries: [ArchiveEntry(key: "rec", value: .record([
            ArchiveEntry(key: "k", value: .int(1)), ArchiveEntry(key: "k", value: .int(2))]))])],
              "key 'rec.k'", "twice")
        check([ArchiveObject(identifier: "a", entries: [ArchiveEntry(key: "", value: .int(1))])], "key is empty")
        check([ArchiveObject(identifier: "a", entries: [ArchiveEntry(key: "s", value: .string("a\u{0}"))])], "key 's'", "NUL")
        check([ArchiveObject(identifier: "a", entries: [ArchiveEntry(key: "s", value: .stringArray(["ok", "\u{0}"]))])], "element 1")
        check([ArchiveObject(identifier: "a", entries: [ArchiveEntry(key: "u", value: .unknown(tag: 3, payload: []))])], "tag 3")
        var deep: [ArchiveEntry] = [ArchiveEntry(key: "v", value: .int(1))]
        for _ in 0..<33 { deep = [ArchiveEntry(key: "r", value: .record(deep))] }
        check([ArchiveObject(identifier: "a", entries: deep)], "deeper than 32")
        var ok: [ArchiveEntry] = [ArchiveEntry(key: "v", value: .int(1))]
        for _ in 0..<32 { ok = [ArchiveEntry(key: "r", value: .record(ok))] }
        XCTAssertNil(failure([ArchiveObject(identifier: "a", entries: ok)]))
    }
}

final class PrimitiveTests: XCTestCase {
    /// Bitwise CRC-32C, the definition.
    func referenceCRC(_ bytes: [UInt8], _ start: UInt32 = 0) -> UInt32 {
        var c = ~start
        for b in bytes {
            c ^= UInt32(b)
            for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
        }
        return ~c
    }

    func testCRC32C() {
        XCTAssertEqual(CRC32C.checksum(Array("123456789".utf8)), 0xE306_9283)
        XCTAssertEqual(CRC32C.checksum([]), 0)
        XCTAssertEqual(CRC32C.checksum([UInt8](repeating: 0, count: 32)), 0x8A91_36AA)
        XCTAssertEqual(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)), 0x62A8_AB43)
        var rng = SplitMix(state: 1)
        // Lengths around the 8-byte words and the three 8 KiB streams.
        for n in [1, 7, 8, 9, 15, 16, 17, 100, 24_575, 24_576, 24_577, 49_152, 50_000, 100_003] {
            let data = (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let expected = referenceCRC(data)
            XCTAssertEqual(CRC32C.checksum(data), expected, "length \(n)")
            // In two pieces.
            let cut = n / 3
            let first = CRC32C.checksum(Array(data[0..<cut]))
            XCTAssertEqual(CRC32C.checksum(Array(data[cut...]), continuing: first), expected, "length \(n) in pieces")
        }
    }

    /// The hardware path (when this CPU has one) and the software path agree
    /// with the bitwise reference, on lengths around the 8-byte words and the
    /// 3 × 4 KiB (hardware) and 3 × 8 KiB (software) stream blocks, whole and
    /// in pieces, and when copying.
    func testHardwareAndSoftwareCRC32CAgree() {
        var rng = SplitMix(state: 7)
        for n in [0, 1, 3, 8, 13, 12_287, 12_288, 12_289, 24_576, 36_871, 65_536, 200_001] {
            let data = (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let expected = referenceCRC(data)
            data.withUnsafeBytes { b in
                XCTAssertEqual(CRC32C.softwareChecksum(b), expected, "software, length \(n)")
                XCTAssertEqual(CRC32C.checksum(b), expected, "\(CRC32C.hardware ? "hardware" : "software"), length \(n)")
                let cut = n / 2
                let first = CRC32C.softwareChecksum(UnsafeRawBufferPointer(rebasing: b[0..<cut]))
                XCTAssertEqual(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[cut...]), continuing: first), expected,
                               "software then \(CRC32C.hardware ? "hardware" : "software"), length \(n)")
                if n > 0 {
                    let copy = UnsafeMutableRawPointer.allocate(byteCount: n, alignment: 8)
                    defer { copy.deallocate() }
                    XCTAssertEqual(CRC32C.copy(0, from: b.baseAddress!, to: copy, n), expected, "copy, length \(n)")
                    XCTAssertEqual(memcmp(copy, b.baseAddress!, n), 0, "copied bytes, length \(n)")
                }
            }
        }
        #if arch(x86_64)
        // Every x86-64 machine this project runs on has SSE4.2; if this fails
        // the detection is broken, not the machine.
        XCTAssertTrue(CRC32C.hardware, "the CRC-32C instruction was not detected on x86-64")
        #endif
    }

    func testUTF8ValidatorAgreesWithTheStandardLibrary() {
        var rng = SplitMix(state: 99)
        let interesting: [UInt8] = [0x00, 0x2F, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF,
                                    0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xF8, 0xFF]
        for round in 0..<20_000 {
            let n = Int(rng.next() % 12)
            var bytes: [UInt8] = []
            for _ in 0..<n {
                bytes.append(rng.next() % 3 == 0 ? UInt8(truncatingIfNeeded: rng.next())
                             : interesting[Int(rng.next() % UInt64(interesting.count))])
            }
            // Pad with ASCII on either side to exercise the 8-byte fast path.
            if round % 2 == 0 { bytes = Array("abcdefghij".utf8) + bytes + Array("klmnopqrstu".utf8) }
            let expected = String(validating: bytes, as: UTF8.self) != nil && !bytes.contains(0)
            let got = bytes.withUnsafeBytes { isValidArchiveText($0) }
            XCTAssertEqual(got, expected, "\(bytes)")
        }
        // Every code point boundary.
        for s in ["\u{7F}", "\u{80}", "\u{7FF}", "\u{800}", "\u{FFFF}", "\u{10000}", "\u{10FFFF}", "\u{D7FF}", "\u{E000}"] {
            XCTAssertTrue(Array(s.utf8).withUnsafeBytes { isValidArchiveText($0) }, s)
        }
        XCTAssertTrue([UInt8]().withUnsafeBytes { isValidArchiveText($0) })
    }
}
