@testable import RestorationArchive
import XCTest

/// v1.1 format additions (docs/FORMAT.md): per-record class versions behind
/// header flag 1, and arrays of object references (tag 10).
final class EvolutionFormatTests: XCTestCase {
    // MARK: record versions

    func testArchivesWithoutVersionsStayVersion1Bytes() throws {
        var w = ArchiveWriter()
        w.beginObject(identifier: w.name("A"), parent: nil, className: w.name("C"))
        try w.endObject()
        let bytes = try w.finish(info: ArchiveInfo())
        XCTAssertEqual(bytes[10], 0)
        XCTAssertEqual(bytes[11], 0)
        let r = try XCTUnwrap(accept(bytes))
        XCTAssertEqual(r.version(ofRecord: 0), 0)
    }

    func testVersionedRecordsRoundTrip() throws {
        var w = ArchiveWriter()
        w.recordVersions = true
        w.beginObject(identifier: w.name("A"), parent: nil, className: w.name("C"), version: 3)
        try w.writeInt(w.key("x"), 1)
        try w.endObject()
        w.beginObject(identifier: w.name("B"), parent: 0, className: nil, version: 0)
        try w.endObject()
        w.beginObject(identifier: w.name("D"), parent: nil, className: w.name("C"), version: UInt32.max)
        try w.endObject()
        let bytes = try w.finish(info: ArchiveInfo())
        XCTAssertEqual(bytes[10], 1, "flag 1: record versions")
        let r = try XCTUnwrap(accept(bytes))
        XCTAssertEqual((0..<3).map { r.version(ofRecord: $0) }, [3, 0, UInt32.max])
        let doc = ArchiveDocument(reader: r)
        XCTAssertEqual(doc.objects.map(\.version), [3, 0, UInt32.max])
        XCTAssertEqual(ArchiveDocument(reader: try XCTUnwrap(accept(try doc.encode()))).objects, doc.objects, "the document writes the same records")
        // A document without versions writes flag 0.
        var plain = doc
        for i in plain.objects.indices { plain.objects[i].version = 0 }
        let pb = try plain.encode()
        XCTAssertEqual(pb[10], 0)
    }

    func testAVersionWithoutTheFlagIsAWriterError() throws {
        var w = ArchiveWriter()
        w.beginObject(identifier: w.name("A"), parent: nil, className: nil, version: 2)
        try w.endObject()
        XCTAssertThrowsError(try w.finish(info: ArchiveInfo()))
    }

    func testHandBuiltVersionedRecordsAndBadVersions() throws {
        // identifier, parent_delta, class, version, fields_len
        var a = RawArchive(keys: [], names: ["A", "C"], records: [varint(0) + varint(0) + varint(2) + varint(7) + varint(0)])
        a.flags = 1
        let r = try XCTUnwrap(accept(a.bytes))
        XCTAssertEqual(r.version(ofRecord: 0), 7)
        // A version past 32 bits is corrupt.
        a.records = [varint(0) + varint(0) + varint(2) + varint(UInt64(UInt32.max) + 1) + varint(0)]
        expectFailure(a.bytes, "corrupt", "class version", "32 bits")
        // Unknown flags are still a VERSION failure.
        a.flags = 4
        a.records = [record(ident: 0, fields: [])]
        expectFailure(a.bytes, "version", "unknown flags 0x4")
    }

    // MARK: object arrays

    func testObjectArraysRoundTripAndAreReferences() throws {
        var w = ArchiveWriter()
        w.beginObject(identifier: w.name("A"), parent: nil, className: nil)
        try [2, 1, 0].withUnsafeBufferPointer { try w.writeObjectArray(w.key("stack"), records: $0) }
        try [Int]().withUnsafeBufferPointer { try w.writeObjectArray(w.key("empty"), records: $0) }
        try w.endObject()
        w.beginObject(identifier: w.name("B"), parent: nil, className: nil)
        try w.endObject()
        w.beginObject(identifier: w.name("C"), parent: nil, className: nil)
        try w.writeObject(w.key("one"), record: 1)
        try w.endObject()
        XCTAssertEqual(w.tag(ofKey: w.key("stack")), nil, "the writer's current record is C")
        let bytes = try w.finish(info: ArchiveInfo())
        let r = try XCTUnwrap(accept(bytes))
        XCTAssertTrue(r.hasForwardReferences)
        XCTAssertEqual(Array(r.references(ofRecord: 0)), [2, 1, 0], "each element is a dependency edge")
        XCTAssertEqual(Array(r.references(ofRecord: 2)), [1])
        let f = try XCTUnwrap(r.field(0, "stack"))
        XCTAssertEqual(f.tag, .objectArray)
        XCTAssertEqual(r.objectArrayCount(f), 3)
        XCTAssertEqual(r.objectArrayElement(f, at: 0), 2)
        XCTAssertEqual(r.objectArrayElement(f, at: 2), 0)
        XCTAssertNil(r.objectArrayElement(f, at: 3))
        XCTAssertNil(r.objectArrayElement(f, at: -1))
        let doc = ArchiveDocument(reader: r)
        XCTAssertEqual(doc.objects[0].entries[0].value, .objectArray([2, 1, 0]))
        XCTAssertEqual(doc.objects[0].entries[1].value, .objectArray([]))
        XCTAssertEqual(try doc.encode(), bytes)
        // An element out of range in a document is refused before writing.
        var bad = doc
        bad.objects[0].entries[0].value = .objectArray([0, 3])
        XCTAssertThrowsError(try bad.encode())
        // And by the writer at finish.
        var w2 = ArchiveWriter()
        w2.beginObject(identifier: w2.name("A"), parent: nil, className: nil)
        try [5].withUnsafeBufferPointer { try w2.writeObjectArray(w2.key("s"), records: $0) }
        try w2.endObject()
        XCTAssertThrowsError(try w2.finish(info: ArchiveInfo()))
    }

    func testHostileObjectArrays() {
        func arch(_ payload: [UInt8]) -> [UInt8] {
            RawArchive(keys: ["s"], names: ["A", "B"],
                       records: [record(ident: 0, fields: field(0, 10, lenPrefixed(payload))),
                                 record(ident: 1, fields: [])]).bytes
        }
        XCTAssertNotNil(accept(arch(varint(2) + varint(1) + varint(0))))
        expectFailure(arch(varint(1) + varint(2)), "corrupt", "object array element refers to record 2", "key 's'")
        expectFailure(arch(varint(5) + varint(0)), "corrupt", "object array count 5 cannot fit")
        expectFailure(arch(varint(1) + varint(0) + [0]), "corrupt", "stray bytes")
        expectFailure(arch(varint(2) + varint(0) + [0x80]), "corrupt", "object array element")
    }
}
