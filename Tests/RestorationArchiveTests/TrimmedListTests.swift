import XCTest
@testable import RestorationArchive

/// The list of trimmed subtrees (size budgets; docs/FORMAT.md "Trimmed
/// subtrees"): untrusted input like the rest of an archive.
final class TrimmedListTests: XCTestCase {
    private func parse(_ b: [UInt8]) -> TrimmedList? { b.withUnsafeBytes { TrimmedList(payload: $0) } }

    /// Tag 13 must stay a future tag for readers (1.1 ones skip it): a new
    /// value type must take another.
    func testTagIsAFutureTag() {
        XCTAssertEqual(PayloadShape.of(rawTag: TrimmedList.rawTag), .future)
        XCTAssertNil(ValueTag(rawValue: TrimmedList.rawTag))
    }

    func testRoundTripAndByteLayout() {
        let l = TrimmedList(budget: 300, entries: [.init(path: "A/B", className: "Row"), .init(path: "C/D", className: "")])
        let p = l.payload()
        XCTAssertEqual(p, [0xAC, 0x02, 0x02, 0x03] + Array("A/B".utf8) + [0x03] + Array("Row".utf8) + [0x03] + Array("C/D".utf8) + [0x00])
        XCTAssertEqual(parse(p), l)
        XCTAssertEqual(l.fieldBytes(keyIndex: 0), 1 + 1 + p.count)
    }

    func testMalformedPayloadsAreRefused() {
        let good = TrimmedList(budget: 1, entries: [.init(path: "A/B", className: "C")]).payload()
        XCTAssertNotNil(parse(good))
        for cut in 0..<good.count { XCTAssertNil(parse(Array(good[..<cut])), "cut at \(cut)") }
        XCTAssertNil(parse(good + [0]), "trailing byte")
        XCTAssertNil(parse([0x01, 0xFF, 0xFF, 0xFF, 0x0F]), "a count the bytes cannot hold")
        XCTAssertNil(parse([0x01, 0x01, 0x00, 0x00]), "an empty path")
        XCTAssertNil(parse([0x01, 0x01, 0x01, 0xFF, 0x00]), "a path that is not UTF-8")
        XCTAssertNil(parse([0x01, 0x01, 0x01, 0x00, 0x00]), "a NUL in a path")
        XCTAssertNil(parse([0x01, 0x01, 0x01, 0x41, 0x05, 0x41]), "a class longer than the payload")
        XCTAssertNil(parse([]))
    }

    /// In an archive: found in record 0 under a key starting "rst.trimmed"
    /// with tag 13; the same tag elsewhere or under another key is an
    /// ordinary unknown value. Record sizes add up to the archive's size.
    func testFoundOnlyInRecordZero() throws {
        let list = TrimmedList(budget: 9, entries: [.init(path: "R/X", className: "")])
        func archive(_ record: Int, key: String) throws -> [UInt8] {
            var objects = [ArchiveObject(identifier: "R"), ArchiveObject(identifier: "S", parent: 0)]
            objects[record].entries = [ArchiveEntry(key: key, value: .unknown(tag: 13, payload: list.payload()))]
            return try ArchiveDocument(info: ArchiveInfo(), objects: objects).encode()
        }
        let yes = try ArchiveReader(bytes: try archive(0, key: "rst.trimmed.2"))
        XCTAssertEqual(TrimmedList(reader: yes), list)
        XCTAssertNil(TrimmedList(reader: try ArchiveReader(bytes: try archive(1, key: "rst.trimmed"))))
        XCTAssertNil(TrimmedList(reader: try ArchiveReader(bytes: try archive(0, key: "other"))))
        let sizes = RecordSizes(reader: yes)
        XCTAssertEqual(sizes.subtree[0] + sizes.overhead, UInt64(yes.byteCount))
        XCTAssertEqual(sizes.subtree[0], sizes.own[0] + sizes.own[1])
    }
}
