import XCTest
@testable import RestorationArchive

/// The one writer of value trees and the string pinning it shares with the
/// Swift API and restorectl.
final class ValueTreeWriterTests: XCTestCase {
    static let tree: [ArchiveEntry] = [
        ArchiveEntry(key: "b", value: .bool(true)),
        ArchiveEntry(key: "i", value: .int(-7)),
        ArchiveEntry(key: "d", value: .double(2.5)),
        ArchiveEntry(key: "s", value: .string("ü")),
        ArchiveEntry(key: "y", value: .bytes([0, 1])),
        ArchiveEntry(key: "o", value: .osString([0xFF])),
        ArchiveEntry(key: "ref", value: .object(record: 0)),
        ArchiveEntry(key: "refs", value: .objectArray([1, 0, 1])),
        ArchiveEntry(key: "ints", value: .intArray([1, -1])),
        ArchiveEntry(key: "strs", value: .stringArray(["a", "", "日本"])),
        ArchiveEntry(key: "rec", value: .record([
            ArchiveEntry(key: "inner", value: .stringArray([])),
            ArchiveEntry(key: "deeper", value: .record([ArchiveEntry(key: "x", value: .int(1))])),
        ])),
        ArchiveEntry(key: "u", value: .unknown(tag: 15, payload: [9])),
    ]

    struct Plain: ValueTreePolicy {}

    /// Record 1 is not written: references to it are left out.
    struct DropOne: ValueTreePolicy {
        func record(forReference r: Int) -> Int? { r == 1 ? nil : r }
    }

    func archive<P: ValueTreePolicy>(_ policy: P, objects: Int) throws -> [ArchiveEntry] {
        var w = ArchiveWriter()
        for o in 0..<objects {
            let name = Array("o\(o)".utf8).withUnsafeBytes { w.name($0) }
            w.beginObject(identifier: name, parent: nil, className: nil)
            if o == 0 { try ValueTreeWriter(policy).write(Self.tree, &w) }
            try w.endObject()
        }
        let doc = try ArchiveDocument(bytes: try w.finish(info: ArchiveInfo()))
        return doc.objects[0].entries
    }

    func testWritesTheTreeAsTheDocumentDoes() throws {
        XCTAssertEqual(try archive(Plain(), objects: 2), Self.tree)
        let doc = ArchiveDocument(info: ArchiveInfo(), objects: [
            ArchiveObject(identifier: "o0", entries: Self.tree), ArchiveObject(identifier: "o1", entries: []),
        ])
        var w = ArchiveWriter()
        for (o, obj) in doc.objects.enumerated() {
            let name = Array("o\(o)".utf8).withUnsafeBytes { w.name($0) }
            w.beginObject(identifier: name, parent: nil, className: nil)
            try ValueTreeWriter(Plain()).write(obj.entries, &w)
            try w.endObject()
        }
        XCTAssertEqual(try w.finish(info: ArchiveInfo()), try doc.encode(), "byte-identical to ArchiveDocument's encoding")
    }

    func testThePolicyMapsReferences() throws {
        let back = try archive(DropOne(), objects: 1)
        XCTAssertEqual(back.first { $0.key == "refs" }?.value, .objectArray([0]), "the references to record 1 are left out")
        XCTAssertEqual(back.first { $0.key == "ref" }?.value, .object(record: 0))
        XCTAssertEqual(back.count, Self.tree.count)
    }

    func testPinnedStrings() {
        let strings = ["", "a", "ünï", "", "日本語"]
        let seen: [String] = withPinnedStrings(strings) { bufs in bufs.map { String(decoding: $0, as: UTF8.self) } }
        XCTAssertEqual(seen, strings)
        XCTAssertEqual(withPinnedStrings([String]()) { $0.count }, 0)
        struct Stop: Error {}
        XCTAssertThrowsError(try withPinnedStrings(["x"]) { (_) throws(Stop) in throw Stop() }) { XCTAssertTrue($0 is Stop) }
    }
}
