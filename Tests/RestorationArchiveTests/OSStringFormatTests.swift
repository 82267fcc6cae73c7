@testable import RestorationArchive
import XCTest

/// OS strings (tag 11): any bytes but NUL, laid out as `varint len` + the
/// bytes, so a reader that takes 11 for a future tag skips them.
final class OSStringFormatTests: XCTestCase {
    private let fileName: [UInt8] = [0x63, 0x61, 0x66, 0xE9]          // "caf\xe9"

    private func archive(_ value: ArchiveValue) throws -> [UInt8] {
        try ArchiveDocument(info: ArchiveInfo(appVersion: "1"), objects: [
            ArchiveObject(identifier: "Files", entries: [
                ArchiveEntry(key: "name", value: value),
                ArchiveEntry(key: "n", value: .int(1)),
            ]),
        ]).encode()
    }

    /// The field is the header byte (key 0, tag 11), the length, the bytes;
    /// the document reads back the same bytes.
    func testLayoutAndRoundTrip() throws {
        let bytes = try archive(.osString(fileName))
        let field: [UInt8] = [0x0B, 4] + fileName
        XCTAssertNotNil(bytes.firstRange(of: field), "tag 11, varint length, raw bytes")
        let reader = try XCTUnwrap(accept(bytes))
        let f = try XCTUnwrap(reader.field(0, "name"))
        XCTAssertEqual(f.tag, .osString)
        XCTAssertEqual(Array(reader.bytes(f)), fileName)
        let doc = ArchiveDocument(reader: reader)
        XCTAssertEqual(doc.objects[0].entries[0].value, .osString(fileName))
        XCTAssertEqual(try doc.encode(), bytes, "document -> bytes -> document is the identity")
        // Empty and any non-NUL byte.
        let all = (1...255).map { UInt8($0) }
        for v in [[], all] {
            let r = try XCTUnwrap(accept(try archive(.osString(v))))
            XCTAssertEqual(ArchiveDocument(reader: r).objects[0].entries[0].value, .osString(v))
        }
    }

    /// A 1.1 reader treats tag 11 as a future tag: the same bytes with the
    /// tag read as a future one are a valid archive whose value is skipped
    /// (kept as an unknown payload) and whose next field reads.
    func testOlderReadersSkipIt() throws {
        var bytes = try archive(.osString(fileName))
        let at = try XCTUnwrap(bytes.firstRange(of: [0x0B, 4] + fileName)).lowerBound
        bytes[at] = 0x0C                                               // tag 12: still unknown here
        fixChecksum(&bytes)
        let reader = try XCTUnwrap(accept(bytes))
        let doc = ArchiveDocument(reader: reader)
        XCTAssertEqual(doc.objects[0].entries[0].value, .unknown(tag: 12, payload: fileName))
        XCTAssertEqual(doc.objects[0].entries[1].value, .int(1))
    }

    /// A NUL inside is corrupt, with its offset; so is a length past the record.
    func testNULIsCorrupt() throws {
        var bytes = try archive(.osString([0x61, 0x62, 0x63]))
        let at = try XCTUnwrap(bytes.firstRange(of: [0x0B, 3, 0x61, 0x62, 0x63])).lowerBound
        bytes[at + 3] = 0
        fixChecksum(&bytes)
        expectFailure(bytes, "corrupt", "OS string contains a NUL byte", "at byte \(at + 3)")
        var cut = try archive(.osString([0x61, 0x62, 0x63]))
        cut[at + 1] = 90
        fixChecksum(&cut)
        expectFailure(cut, "corrupt")
    }

    /// The document refuses to write a NUL; the writer writes what it is given.
    func testDocumentRefusesNUL() {
        XCTAssertThrowsError(try archive(.osString([0x61, 0, 0x62]))) { e in
            XCTAssertTrue("\(e)".contains("NUL"), "\(e)")
        }
    }

    /// A migration's rewriter keeps an OS string it does not touch, renamed
    /// or not, and writes one a step added.
    func testRewriterKeepsAndWritesOSStrings() throws {
        let reader = try XCTUnwrap(accept(try archive(.osString(fileName))))
        let rw = ArchiveRewriter(reader: reader)
        var edit = RecordEdit()
        rw.begin(record: 0, &edit)
        let k = Array("name".utf8).withUnsafeBytes { rw.internKey($0) }
        let file = Array("file".utf8).withUnsafeBytes { rw.internKey($0) }
        let added = Array("added".utf8).withUnsafeBytes { rw.internKey($0) }
        let i = try XCTUnwrap(edit.levels[0].firstIndex { $0.key == k })
        XCTAssertEqual(rw.value(edit.levels[0][i], edit), .osString(fileName))
        edit.levels[0][i].key = file
        edit.values.append(.osString([0xFF, 0xFE]))
        edit.levels[0].append(EditedField(key: added, rawTag: ValueTag.osString.rawValue, source: .value, originalKey: added,
                                          payload: 0, start: 0, end: 0))
        try rw.replace(record: 0, with: edit, version: 1)
        let out = try ArchiveReader(adopting: try rw.encode())
        XCTAssertEqual(ArchiveDocument(reader: out).objects[0].entries, [
            ArchiveEntry(key: "file", value: .osString(fileName)),
            ArchiveEntry(key: "n", value: .int(1)),
            ArchiveEntry(key: "added", value: .osString([0xFF, 0xFE])),
        ])
    }
}
