import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import RestorationArchive
@testable import RestorationCore

/// MigrationEditor.swift: the coder's migrating role, on its own — the
/// record a step edits and every operation on it, without an engine.
final class MigrationEditorTests: XCTestCase {
    private var rewriter: ArchiveRewriter!

    private func editor() throws -> MigrationEditor {
        let bytes = try ArchiveDocument(info: ArchiveInfo(appVersion: "1", systemVersion: "s", idiom: "i", savedAtMs: 5), objects: [
            ArchiveObject(identifier: "Root", className: "Win", entries: [
                ArchiveEntry(key: "count", value: .int(3)),
                ArchiveEntry(key: "title", value: .string("hello")),
                ArchiveEntry(key: "note", value: .record([ArchiveEntry(key: "text", value: .string("inner"))])),
            ], version: 0),
        ]).encode()
        rewriter = ArchiveRewriter(reader: try ArchiveReader(bytes: bytes))
        let e = MigrationEditor(rewriter: rewriter)
        e.begin(record: 0)
        return e
    }

    private func withKey<T>(_ s: String, _ body: (KeyBytes) throws -> T) rethrows -> T {
        try Array(s.utf8).withUnsafeBytes { try body(KeyBytes($0)) }
    }

    func testReadsTheRecordAsItStands() throws {
        let e = try editor()
        XCTAssertEqual(e.keys(), ["count", "title", "note"])
        XCTAssertEqual(try withKey("count") { try e.int($0) }, 3)
        XCTAssertEqual(try withKey("title") { String(decoding: try e.text($0), as: UTF8.self) }, "hello")
        XCTAssertTrue(withKey("note") { e.contains($0) })
        XCTAssertEqual(withKey("note") { e.valueType($0) }, .some(.record))
        XCTAssertEqual(withKey("gone") { e.valueType($0) }, .none)
    }

    func testWritesRemovesAndRenamesInPlace() throws {
        let e = try editor()
        try withKey("count") { try e.writeScalar($0, .int, bits: 9) }                  // replaced: its place kept
        try withKey("added") { k in try Array("new".utf8).withUnsafeBytes { try e.writeString(k, $0) } }
        try withKey("title") { f in try withKey("name") { try e.rename(f, to: $0) } }
        try withKey("note") { try e.remove($0) }
        XCTAssertEqual(e.keys(), ["count", "name", "added"])
        XCTAssertEqual(try withKey("count") { try e.int($0) }, 9)
        XCTAssertEqual(try withKey("added") { String(decoding: try e.text($0), as: UTF8.self) }, "new")
    }

    /// Keys are looked up by their address (KeyCache): a C buffer reused for
    /// another key, or a shorter key at the same address, is never taken
    /// for the key cached there.
    func testAReusedKeyBufferIsNotMistakenForTheCachedOne() throws {
        let e = try editor()
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: 16)
        defer { buffer.deallocate() }
        func put(_ s: String) { _ = s.withCString { strcpy(buffer, $0) } }
        put("count")
        XCTAssertEqual(try e.int(KeyBytes(cString: buffer)), 3)
        XCTAssertEqual(try e.int(KeyBytes(cString: buffer)), 3, "a hit")
        put("title")
        XCTAssertEqual(e.valueType(KeyBytes(cString: buffer)), .some(.string))
        put("cou")
        XCTAssertFalse(e.contains(KeyBytes(cString: buffer)))
        put("counts")
        XCTAssertFalse(e.contains(KeyBytes(cString: buffer)))
        XCTAssertEqual(try e.int(KeyBytes(UnsafeRawBufferPointer(start: buffer, count: 5))), 3, "a key with its length")
        XCTAssertFalse(e.contains(KeyBytes(UnsafeRawBufferPointer(start: buffer, count: 4))))
        put("added")
        try e.writeScalar(KeyBytes(cString: buffer), .int, bits: 5)     // a new key, then found by address
        XCTAssertEqual(try e.int(KeyBytes(cString: buffer)), 5)
        put("count")
        XCTAssertEqual(try e.int(KeyBytes(cString: buffer)), 3)
    }

    func testNestedRecordsAreEnteredAndLeft() throws {
        let e = try editor()
        try withKey("note") { try e.beginRecord($0, create: false) }
        XCTAssertEqual(e.keys(), ["text"])
        try withKey("inner") { try e.writeScalar($0, .boolTrue, bits: 0) }
        XCTAssertTrue(try withKey("inner") { try e.bool($0) })
        try e.endRecord()
        XCTAssertEqual(e.keys(), ["count", "title", "note"])
        XCTAssertThrowsError(try e.endRecord()) { error in
            XCTAssertEqual((error as? RestorationFailure)?.status, .state)
            XCTAssertEqual((error as? RestorationFailure)?.message, "record 0 is at its top level (no record was begun)")
        }
    }

    /// Failures name the record and the key, as the coder's do.
    func testFailuresNameTheRecordAndKey() throws {
        let e = try editor()
        XCTAssertThrowsError(try withKey("title") { try e.int($0) }) { error in
            XCTAssertEqual((error as? RestorationFailure)?.status, .type)
            XCTAssertEqual((error as? RestorationFailure)?.message, "record 0, key 'title' holds a string, not an int")
        }
        XCTAssertThrowsError(try withKey("gone") { try e.remove($0) }) { error in
            XCTAssertEqual((error as? RestorationFailure)?.status, .notFound)
            XCTAssertEqual((error as? RestorationFailure)?.message, "record 0 has no key 'gone' to remove")
        }
        XCTAssertThrowsError(try withKey("count") { f in try withKey("title") { try e.rename(f, to: $0) } }) { error in
            XCTAssertEqual((error as? RestorationFailure)?.status, .duplicate)
        }
        XCTAssertThrowsError(try withKey("bad") { k in try Array([0xFF]).withUnsafeBytes { try e.writeString(k, $0) } }) { error in
            XCTAssertEqual((error as? RestorationFailure)?.status, .invalid)
        }
    }
}
