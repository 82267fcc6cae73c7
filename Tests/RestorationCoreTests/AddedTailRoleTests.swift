// The decoding role's added tail (`DecodingRole.tail`): set from the
// rebuilt archive when a record is opened, read by `next…(atTail: true)`
// and by `find` before its scan, moved past what they read; the hint stays.

import XCTest
import RestorationArchive
@testable import RestorationCore

final class AddedTailRoleTests: XCTestCase {
    func key(_ r: ArchiveReader, _ s: String) throws -> UInt32 {
        try XCTUnwrap(Array(s.utf8).withUnsafeBytes { r.keyIndex($0) }, s)
    }

    /// Record 1 ("a" 1, "b" "bee", "z" 3) with "n1" 10 and "s1" "hello"
    /// added by an edit begun lazily; record 0 untouched.
    func migrated() throws -> ArchiveReader {
        let bytes = try ArchiveDocument(info: ArchiveInfo(appVersion: "1", systemVersion: "s", idiom: "i", savedAtMs: 5), objects: [
            ArchiveObject(identifier: "Root", className: "C", entries: [ArchiveEntry(key: "a", value: .int(7))]),
            ArchiveObject(identifier: "One", parent: 0, className: "C", entries: [
                ArchiveEntry(key: "a", value: .int(1)), ArchiveEntry(key: "b", value: .string("bee")), ArchiveEntry(key: "z", value: .int(3)),
            ]),
        ]).encode()
        let reader = try ArchiveReader(bytes: bytes)
        let rw = ArchiveRewriter(reader: reader)
        var edit = RecordEdit()
        rw.beginLazily(record: 1, &edit)
        let n1 = Array("n1".utf8).withUnsafeBytes { rw.internKey($0) }, s1 = Array("s1".utf8).withUnsafeBytes { rw.internKey($0) }
        edit.levels[0].append(EditedField(key: n1, rawTag: ValueTag.int.rawValue, source: .scalar, originalKey: n1, payload: 10, start: 0, end: 0))
        edit.values.append(.string("hello"))
        edit.levels[0].append(EditedField(key: s1, rawTag: ValueTag.string.rawValue, source: .value, originalKey: s1, payload: 0, start: 0, end: 0))
        try rw.replace(record: 1, editing: &edit, version: 1)
        return try rw.rebuiltReader(verify: true)
    }

    func testTheTailIsReadWhereTheHintMissesAndLeavesTheHint() throws {
        let out = try migrated()
        var role = DecodingRole()
        defer { role.deallocate() }
        role.reader = out
        let a = try key(out, "a"), b = try key(out, "b"), z = try key(out, "z"), n1 = try key(out, "n1"), s1 = try key(out, "s1")
        let range = out.fields(ofRecord: 1)

        XCTAssertTrue(role.begin(record: 0))
        XCTAssertEqual(role.tail.pointee, out.fields(ofRecord: 0).end, "no tail: the record's end")
        XCTAssertNil(role.nextInt(a, atTail: true), "nothing to read at no tail")

        XCTAssertTrue(role.begin(record: 1))
        XCTAssertEqual(role.tail.pointee, out.addedTail(ofRecord: 1))
        XCTAssertEqual(role.nextInt(a), 1, "at the hint")
        let hint = role.hints[0]
        XCTAssertNil(role.nextInt(n1), "not at the hint")
        XCTAssertNil(role.nextInt(s1, atTail: true), "not the tail's next field")
        XCTAssertNil(role.next(n1, ValueTag.string.rawValue, atTail: true), "another type: declined")
        XCTAssertEqual(role.nextInt(n1, atTail: true), 10)
        XCTAssertEqual(role.hints[0], hint, "the hint stays for the keys in save order")
        let s = try XCTUnwrap(role.next(s1, ValueTag.string.rawValue, atTail: true))
        XCTAssertEqual(String(decoding: out.bytes(s), as: UTF8.self), "hello")
        XCTAssertEqual(role.tail.pointee, range.end, "the tail is read")
        XCTAssertNil(role.nextInt(n1, atTail: true))
        XCTAssertEqual(role.next(b, ValueTag.string.rawValue).map { String(decoding: out.bytes($0), as: UTF8.self) }, "bee")
        XCTAssertEqual(role.nextInt(z), 3)

        // `find` looks at the tail before its scan; any key is still found.
        XCTAssertTrue(role.begin(record: 1))
        XCTAssertEqual(role.find(n1).map { out.int($0) }, 10)
        XCTAssertEqual(role.hints[0], range.start, "found at the tail: the hint stays")
        XCTAssertEqual(role.find(s1).map { String(decoding: out.bytes($0), as: UTF8.self) }, "hello")
        XCTAssertEqual(role.find(z).map { out.int($0) }, 3)
        XCTAssertEqual(role.find(n1).map { out.int($0) }, 10, "read again, by the scan")
        XCTAssertNil(role.find(UInt32(out.keyCount)), "absent")
    }
}
