@testable import RestorationArchive
import XCTest

/// ArchiveRewriter (v1.1 migrations): records edited in place of the
/// archive's bytes, everything else copied byte for byte, new keys appended.
final class RewriterTests: XCTestCase {
    private func sample(carry: Bool = false, manyKeys: Bool = false) throws -> ArchiveReader {
        var objects = [
            ArchiveObject(identifier: "Root", className: "Win", entries: [
                ArchiveEntry(key: "title", value: .string("héllo")),
                ArchiveEntry(key: "link", value: .object(record: 2)),
            ]),
            ArchiveObject(identifier: "Pane", parent: 0, className: "Pane", entries: [
                ArchiveEntry(key: "number", value: .int(1 << 40)),
                ArchiveEntry(key: "ratio", value: .double(-0.0)),
                ArchiveEntry(key: "note", value: .record([
                    ArchiveEntry(key: "text", value: .string("inner")),
                    ArchiveEntry(key: "count", value: .int(7)),
                ])),
                ArchiveEntry(key: "rows", value: .intArray([1, -2, 3])),
                ArchiveEntry(key: "peers", value: .objectArray([0, 2])),
                ArchiveEntry(key: "gone", value: .bool(true)),
            ], version: 0),
            ArchiveObject(identifier: "List", parent: 1, className: "List", entries: [
                ArchiveEntry(key: "names", value: .stringArray(["a", "b"])),
                ArchiveEntry(key: "blob", value: .bytes([0, 255, 7])),
            ]),
        ]
        if manyKeys {
            objects[0].entries += (0..<20).map { ArchiveEntry(key: "k\($0)", value: .int(Int64($0))) }
        }
        if carry { objects[2].carry = 3 }
        let bytes = try ArchiveDocument(info: ArchiveInfo(appVersion: "1", systemVersion: "s", idiom: "i", savedAtMs: 5),
                                        objects: objects).encode()
        return try XCTUnwrap(accept(bytes))
    }

    private func key(_ r: ArchiveRewriter, _ s: String, intern: Bool = true) -> UInt32 {
        Array(s.utf8).withUnsafeBytes { intern ? r.internKey($0) : (r.keyIndex($0) ?? UInt32.max) }
    }

    /// An int the edit writes under key index `k`.
    private func scalarInt(_ k: UInt32, _ v: Int) -> EditedField {
        EditedField(key: k, rawTag: ValueTag.int.rawValue, source: .scalar, originalKey: k, payload: v, start: 0, end: 0)
    }

    /// Renames, adds a scalar and a string, edits the nested record, removes
    /// a key: the result validates, the edited record reads as expected and
    /// the others are the same records, their fields the same bytes.
    func testAnEditedRecordAndUntouchedOnes() throws {
        let reader = try sample()
        let rw = ArchiveRewriter(reader: reader)
        var edit = RecordEdit()
        rw.begin(record: 1, &edit)
        XCTAssertEqual(edit.levels[0].count, 6)
        let number = key(rw, "number"), amount = key(rw, "amount"), added = key(rw, "added")
        XCTAssertEqual(amount, UInt32(reader.keyCount), "a new key is appended to the table")
        XCTAssertEqual(added, UInt32(reader.keyCount + 1))
        XCTAssertEqual(key(rw, "amount"), amount, "a key is added once")
        let i = try XCTUnwrap(edit.levels[0].firstIndex { $0.key == number })
        XCTAssertEqual(rw.int(edit.levels[0][i], edit), 1 << 40)
        edit.levels[0][i].key = amount                                     // rename
        edit.levels[0].append(EditedField(key: added, rawTag: ValueTag.int.rawValue, source: .scalar, originalKey: added,
                                          payload: Int(-5), start: 0, end: 0))
        let label = key(rw, "label")
        edit.values.append(.string("x✓"))
        edit.levels[0].append(EditedField(key: label, rawTag: ValueTag.string.rawValue, source: .value, originalKey: label,
                                          payload: 0, start: 0, end: 0))
        let noteAt = try XCTUnwrap(edit.levels[0].firstIndex { $0.key == key(rw, "note") })
        let level = rw.enter(edit.levels[0][noteAt], &edit)
        edit.levels[0][noteAt] = EditedField(key: edit.levels[0][noteAt].key, rawTag: ValueTag.record.rawValue, source: .level,
                                             originalKey: edit.levels[0][noteAt].key, payload: level, start: 0, end: 0)
        edit.levels[level].removeAll { $0.key == key(rw, "count") }
        edit.levels[0].removeAll { $0.key == key(rw, "gone") }
        XCTAssertEqual(rw.value(edit.levels[0][noteAt], edit), .record([ArchiveEntry(key: "text", value: .string("inner"))]))
        try rw.replace(record: 1, with: edit, version: 4)

        let out = try ArchiveReader(adopting: try rw.encode())
        XCTAssertEqual(out.archiveBytes[10] & 1, 1, "flag 1: record versions")
        XCTAssertEqual(out.keyCount, reader.keyCount + 3)
        XCTAssertEqual((0..<3).map { out.version(ofRecord: $0) }, [0, 4, 0])
        let before = ArchiveDocument(reader: reader), after = ArchiveDocument(reader: out)
        XCTAssertEqual(after.info, before.info)
        XCTAssertEqual(after.objects[0], before.objects[0])
        XCTAssertEqual(after.objects[2], before.objects[2])
        XCTAssertEqual(after.objects[1].entries, [
            ArchiveEntry(key: "amount", value: .int(1 << 40)),
            ArchiveEntry(key: "ratio", value: .double(-0.0)),
            ArchiveEntry(key: "note", value: .record([ArchiveEntry(key: "text", value: .string("inner"))])),
            ArchiveEntry(key: "rows", value: .intArray([1, -2, 3])),
            ArchiveEntry(key: "peers", value: .objectArray([0, 2])),
            ArchiveEntry(key: "added", value: .int(-5)),
            ArchiveEntry(key: "label", value: .string("x✓")),
        ])
        XCTAssertEqual(after.objects[1].version, 4)
        XCTAssertEqual(Array(out.references(ofRecord: 1)), [0, 2], "references of an edited record are kept")
        let derived = try rw.rebuiltReader(verify: true)
        XCTAssertNil(derived.contentDifference(out), "the rebuilt reader reads what the archive written from its edits holds")
        XCTAssertThrowsError(try ArchiveReader(bytes: derived.archiveBytes), "the loose layout is read through the index, not as an archive")
        // The fields the edit added at the record's end: where they start.
        XCTAssertNil(derived.misplacedAddedTail())
        let tail = try XCTUnwrap(derived.addedTail(ofRecord: 1))
        XCTAssertEqual(derived.field(at: tail, before: derived.fields(ofRecord: 1).end)?.key, added, "the tail starts at the first added field")
        XCTAssertNil(derived.addedTail(ofRecord: 0), "an untouched record has none")
        XCTAssertNil(derived.addedTail(ofRecord: 2))
        XCTAssertNil(out.addedTail(ofRecord: 1), "an archive read from bytes has none")
        for r in [0, 2] {
            let a = reader.fields(ofRecord: r), b = out.fields(ofRecord: r)
            XCTAssertEqual(Array(reader.archiveBytes[a.start..<a.end]), Array(out.archiveBytes[b.start..<b.end]),
                           "record \(r): the same field bytes")
        }
    }

    /// `begin` parses a record's fields a batch at a time: across batch
    /// boundaries (0 to 100 fields) it agrees with the reader's field walk,
    /// counts the fields that can hold references, and a record written back
    /// unchanged, or with one field renamed, validates with the same references.
    func testBeginAgreesWithTheFieldWalkAcrossBatches() throws {
        for count in [0, 1, 31, 32, 33, 64, 65, 100] {
            var entries: [ArchiveEntry] = []
            for i in 0..<count {
                switch i % 5 {
                case 0: entries.append(ArchiveEntry(key: "i\(i)", value: .int(Int64(i) << 33)))
                case 1: entries.append(ArchiveEntry(key: "o\(i)", value: .object(record: 0)))
                case 2: entries.append(ArchiveEntry(key: "s\(i)", value: .string(String(repeating: "x", count: i))))
                case 3: entries.append(ArchiveEntry(key: "r\(i)", value: .record([ArchiveEntry(key: "p", value: .objectArray([0, 1]))])))
                default: entries.append(ArchiveEntry(key: "b\(i)", value: .bool(i % 2 == 0)))
                }
            }
            let bytes = try ArchiveDocument(info: ArchiveInfo(appVersion: "1", systemVersion: "s", idiom: "i", savedAtMs: 5), objects: [
                ArchiveObject(identifier: "Root", className: "Win", entries: []),
                ArchiveObject(identifier: "Many", parent: 0, className: "Pane", entries: entries),
            ]).encode()
            let reader = try XCTUnwrap(accept(bytes))
            var walked: [EditedField] = []
            var pos = reader.fields(ofRecord: 1).start
            reader.forEachField(in: reader.fields(ofRecord: 1)) { f in
                walked.append(EditedField(key: f.key, rawTag: f.rawTag, source: .archive, originalKey: f.key,
                                          payload: f.payload, start: pos, end: f.end))
                pos = f.end
            }
            for renamed in [false, true] where !(renamed && count == 0) {
                let rw = ArchiveRewriter(reader: reader)
                var edit = RecordEdit()
                rw.begin(record: 1, &edit)
                XCTAssertEqual(edit.levels[0].count, count)
                for (a, b) in zip(edit.levels[0], walked) {
                    XCTAssertEqual([a.key, a.originalKey, UInt32(a.rawTag)], [b.key, b.originalKey, UInt32(b.rawTag)])
                    XCTAssertEqual([a.payload, a.start, a.end], [b.payload, b.start, b.end])
                    XCTAssertEqual(a.source, .archive)
                }
                XCTAssertEqual(edit.referenceFields, walked.filter { EditedField.mayHoldReferences($0.rawTag) }.count)
                if renamed { edit.levels[0][count - 1].key = key(rw, "renamed") }
                try rw.replace(record: 1, with: edit, version: 1)
                let out = try rw.rebuiltReader(verify: true)
                XCTAssertEqual(Array(out.references(ofRecord: 1)), Array(reader.references(ofRecord: 1)))
                XCTAssertEqual(ArchiveDocument(reader: out).objects[1].entries.count, count)
            }
        }
    }

    /// A renamed archive field is written as its new key followed by its
    /// payload, which opens the run of untouched bytes after it (with the
    /// fields after it, or the fields never parsed): for every kind of
    /// value, renamed first, in the middle, last, two in a row, parsed
    /// fully or lazily, the record reads as the original with the key
    /// renamed, validates, and keeps its references. `RecordEdit.reset`
    /// empties a level of any size (dropped one by one up to 8).
    func testRenamedFieldsStartARunAndAgreeWithTheOriginal() throws {
        let kinds: [ArchiveValue] = [.bool(true), .int(-1 << 40), .int(3), .double(2.5), .string("héllo"), .bytes([0, 255]),
                                     .intArray([1, -2]), .stringArray(["a", ""]), .object(record: 0), .objectArray([0, 1]),
                                     .record([ArchiveEntry(key: "p", value: .object(record: 0))])]
        for kind in kinds {
            let entries = [ArchiveEntry(key: "a", value: .int(1)), ArchiveEntry(key: "b", value: kind),
                           ArchiveEntry(key: "c", value: .string("after")), ArchiveEntry(key: "d", value: .object(record: 0))]
            let bytes = try ArchiveDocument(info: ArchiveInfo(appVersion: "1", systemVersion: "s", idiom: "i", savedAtMs: 5), objects: [
                ArchiveObject(identifier: "Root", className: "Win", entries: []),
                ArchiveObject(identifier: "One", parent: 0, className: "Pane", entries: entries),
            ]).encode()
            let reader = try XCTUnwrap(accept(bytes))
            for renamed in [[0], [1], [3], [1, 2], [0, 1, 2, 3]] {
                for lazily in [false, true] {
                    let rw = ArchiveRewriter(reader: reader)
                    var edit = RecordEdit()
                    if lazily {
                        rw.beginLazily(record: 1, &edit)
                        let last = try XCTUnwrap(renamed.last)
                        XCTAssertEqual(rw.parseUnparsed(&edit, until: key(rw, entries[last].key, intern: false)), last)
                    } else {
                        rw.begin(record: 1, &edit)
                    }
                    var expected = entries
                    for i in renamed {
                        edit.levels[0][i].key = key(rw, "new" + entries[i].key)
                        expected[i].key = "new" + entries[i].key
                    }
                    try rw.replace(record: 1, with: edit, version: 1)
                    let out = try rw.rebuiltReader(verify: true)
                    XCTAssertEqual(ArchiveDocument(reader: out).objects[1].entries, expected, "\(kind), renamed \(renamed), lazily \(lazily)")
                    XCTAssertEqual(Array(out.references(ofRecord: 1)), Array(reader.references(ofRecord: 1)))
                    XCTAssertNil(out.addedTail(ofRecord: 1), "renamed fields only: nothing was added")
                }
            }
        }
        for count in [0, 1, 8, 9, 40] {
            var edit = RecordEdit()
            edit.levels[0] = Array(repeating: EditedField(key: 1, rawTag: ValueTag.int.rawValue, source: .scalar, originalKey: 1,
                                                          payload: 0, start: 0, end: 0), count: count)
            let capacity = edit.levels[0].capacity
            edit.reset()
            XCTAssertTrue(edit.levels[0].isEmpty)
            XCTAssertEqual(edit.levels[0].capacity, capacity, "the buffer is kept")
        }
    }

    /// The rebuilt archive places the key and name tables by where the
    /// reader's last key and last name end: an archive without keys, and
    /// one with many names and keys of long lengths, rebuilt with a key
    /// added, validates from scratch and reads as the original plus the edit.
    func testTheTablesAreFoundFromTheReadersLastStrings() throws {
        for (objects, keys) in [(1, 0), (2, 0), (300, 1), (40, 130)] {
            var list: [ArchiveObject] = []
            for i in 0..<objects {
                let entries = (0..<keys).map { ArchiveEntry(key: "key\($0)" + String(repeating: "k", count: $0), value: .int(Int64($0))) }
                list.append(ArchiveObject(identifier: "o\(i)" + String(repeating: "n", count: i % 200), parent: i == 0 ? nil : 0,
                                          className: "C\(i % 3)", entries: i == objects - 1 ? entries : []))
            }
            let bytes = try ArchiveDocument(info: ArchiveInfo(appVersion: "1", systemVersion: "s", idiom: "i", savedAtMs: 5), objects: list).encode()
            let reader = try XCTUnwrap(accept(bytes))
            XCTAssertEqual(reader.keyCount, keys)
            let rw = ArchiveRewriter(reader: reader)
            var edit = RecordEdit()
            rw.beginLazily(record: objects - 1, &edit)
            rw.parseUnparsed(&edit, until: nil)
            let added = key(rw, "added")
            edit.levels[0].append(EditedField(key: added, rawTag: ValueTag.int.rawValue, source: .scalar, originalKey: added,
                                              payload: 9, start: 0, end: 0))
            try rw.replace(record: objects - 1, with: edit, version: 2)
            let out = try rw.rebuiltReader(verify: true)
            var expected = ArchiveDocument(reader: reader).objects
            expected[objects - 1].entries.append(ArchiveEntry(key: "added", value: .int(9)))
            expected[objects - 1].version = 2
            XCTAssertEqual(ArchiveDocument(reader: out).objects, expected, "\(objects) objects, \(keys) keys")
        }
    }

    /// References collected for some edited records only: the records
    /// before the first one collected, between and after them keep the
    /// original's (kept, or none to keep), and the derived tables agree
    /// with the validated ones.
    func testCollectedReferencesAmongKeptOnes() throws {
        for dropAt in [[], [0], [1], [3], [1, 3], [0, 1, 3]] {
            let objects = (0..<4).map { i in
                ArchiveObject(identifier: "o\(i)", parent: i == 0 ? nil : 0, className: "C", entries: [
                    ArchiveEntry(key: "n", value: .int(Int64(i))),
                    ArchiveEntry(key: "link", value: .object(record: (i + 1) % 4)),
                    ArchiveEntry(key: "peers", value: .objectArray([0, i])),
                ])
            }
            let bytes = try ArchiveDocument(info: ArchiveInfo(appVersion: "1", systemVersion: "s", idiom: "i", savedAtMs: 5), objects: objects).encode()
            let reader = try XCTUnwrap(accept(bytes))
            let rw = ArchiveRewriter(reader: reader)
            for r in [0, 1, 3] {                       // record 2 is not edited
                var edit = RecordEdit()
                rw.begin(record: r, &edit)
                if dropAt.contains(r) { edit.levels[0].removeAll { $0.key == key(rw, "link", intern: false) } }
                try rw.replace(record: r, with: edit, version: 1)
            }
            let out = try rw.rebuiltReader(verify: true)
            for r in 0..<4 {
                let expected: [Int32] = dropAt.contains(r) ? [0, Int32(r)] : [Int32((r + 1) % 4), 0, Int32(r)]
                XCTAssertEqual(Array(out.references(ofRecord: r)), expected, "dropped at \(dropAt), record \(r)")
            }
        }
    }

    /// The rewriter's byte sink writes what appending to an array writes,
    /// across growth, and drops a failed record's bytes.
    func testByteSinkAgreesWithAnArray() {
        var sink = ByteSink()
        defer { sink.release() }
        var expected: [UInt8] = []
        var rng = SystemRandomNumberGenerator()
        for round in 0..<2_000 {
            switch round % 3 {
            case 0:
                let b = UInt8.random(in: 0...255, using: &rng)
                sink.byte(b); expected.append(b)
            case 1:
                let v = UInt64.random(in: 0...UInt64.max, using: &rng) >> UInt64.random(in: 0...63, using: &rng)
                sink.varint(v)
                var x = v
                while x >= 0x80 { expected.append(UInt8(truncatingIfNeeded: x) | 0x80); x >>= 7 }
                expected.append(UInt8(x))
            default:
                let chunk = (0..<Int.random(in: 0...700, using: &rng)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
                chunk.withUnsafeBytes { sink.bytes($0) }
                expected += chunk
            }
        }
        XCTAssertEqual(Array(sink.written), expected)
        sink.truncate(to: 10)
        sink.bytes(UnsafeRawBufferPointer(start: nil, count: 0))
        XCTAssertEqual(Array(sink.written), Array(expected[0..<10]))
    }

    /// A key index past 14 takes the header's key extension; the carry flag
    /// and the carried counts survive; nothing replaced means isEmpty.
    func testKeyExtensionCarryAndNothingReplaced() throws {
        let reader = try sample(carry: true, manyKeys: true)
        XCTAssertGreaterThan(reader.keyCount, 15)
        let rw = ArchiveRewriter(reader: reader)
        XCTAssertTrue(rw.isEmpty)
        var edit = RecordEdit()
        rw.begin(record: 2, &edit)
        let k = key(rw, "fresh")
        XCTAssertGreaterThanOrEqual(k, 15)
        edit.levels[0].append(EditedField(key: k, rawTag: ValueTag.double.rawValue, source: .scalar, originalKey: k,
                                          payload: Int(bitPattern: UInt(Double.pi.bitPattern)), start: 0, end: 0))
        edit.levels[0].append(EditedField(key: key(rw, "yes"), rawTag: ValueTag.boolTrue.rawValue, source: .scalar,
                                          originalKey: key(rw, "yes"), payload: 0, start: 0, end: 0))
        try rw.replace(record: 2, with: edit, version: 1)
        XCTAssertFalse(rw.isEmpty)
        let out = try ArchiveReader(adopting: try rw.encode())
        XCTAssertEqual(out.archiveBytes[10], 3, "flags 1 and 2")
        XCTAssertEqual(out.carry(ofRecord: 2), 3)
        let entries = ArchiveDocument(reader: out).objects[2].entries
        XCTAssertEqual(entries.suffix(2), [ArchiveEntry(key: "fresh", value: .double(.pi)), ArchiveEntry(key: "yes", value: .bool(true))])
        XCTAssertEqual(ArchiveDocument(reader: out).objects[0], ArchiveDocument(reader: reader).objects[0])
        XCTAssertNil(try rw.rebuiltReader(verify: true).contentDifference(out))
    }

    /// The derived reader of an archive whose edits drop references: the
    /// references and the forward flag follow the edit.
    func testDerivedIndexesFollowDroppedReferences() throws {
        let reader = try sample(carry: true, manyKeys: true)
        XCTAssertTrue(reader.hasForwardReferences, "Root links to List, a later record")
        let rw = ArchiveRewriter(reader: reader)
        var edit = RecordEdit()
        rw.begin(record: 0, &edit)
        edit.levels[0].removeAll { $0.key == key(rw, "link") }
        try rw.replace(record: 0, with: edit, version: 2)
        rw.begin(record: 1, &edit)
        let noteAt = try XCTUnwrap(edit.levels[0].firstIndex { $0.key == key(rw, "note") })
        let level = rw.enter(edit.levels[0][noteAt], &edit)
        edit.levels[0][noteAt] = EditedField(key: edit.levels[0][noteAt].key, rawTag: ValueTag.record.rawValue, source: .level,
                                             originalKey: edit.levels[0][noteAt].key, payload: level, start: 0, end: 0)
        edit.levels[level].append(EditedField(key: key(rw, "deep"), rawTag: ValueTag.int.rawValue, source: .scalar,
                                              originalKey: key(rw, "deep"), payload: 9, start: 0, end: 0))
        try rw.replace(record: 1, with: edit, version: 2)
        let derived = try rw.rebuiltReader(verify: true)
        XCTAssertEqual(Array(derived.references(ofRecord: 0)), [])
        XCTAssertEqual(Array(derived.references(ofRecord: 1)), [0, 2])
        XCTAssertTrue(derived.hasForwardReferences, "Pane still names List")
        let validated = try ArchiveReader(adopting: try ArchiveRewriter(reader: derived).encode())
        XCTAssertNil(derived.contentDifference(validated))
        XCTAssertEqual(ArchiveDocument(reader: derived), ArchiveDocument(reader: validated))
    }

    /// The loose layout copies the records no edit replaced in runs: with
    /// every pattern of replaced records among 40 (none, all, every other,
    /// every third, the first and the last), small records and records of
    /// 100 bytes and more between them, the rebuilt reader reads what the
    /// archive written from it holds (`verify`) and what each record held
    /// or was given.
    func testLooseRunsAmongReplacedRecords() throws {
        var objects = [ArchiveObject(identifier: "R", className: "C", entries: [ArchiveEntry(key: "v", value: .int(0))])]
        for i in 1..<40 {
            let big = String(repeating: "x", count: i % 5 == 0 ? 120 : 1)
            objects.append(ArchiveObject(identifier: "o\(i)", parent: 0, className: "C",
                                         entries: [ArchiveEntry(key: "v", value: .int(Int64(i))), ArchiveEntry(key: "s", value: .string(big))]))
        }
        let bytes = try ArchiveDocument(info: ArchiveInfo(appVersion: "1", systemVersion: "s", idiom: "i", savedAtMs: 5), objects: objects).encode()
        let reader = try XCTUnwrap(accept(bytes))
        let patterns: [(String, (Int) -> Bool)] = [("none", { _ in false }), ("all", { _ in true }), ("every other", { $0 % 2 == 0 }),
                                                    ("every third", { $0 % 3 == 1 }), ("first and last", { $0 == 0 || $0 == 39 })]
        for (name, replaced) in patterns {
            let rw = ArchiveRewriter(reader: reader)
            var edit = RecordEdit()
            for r in 0..<40 where replaced(r) {
                rw.begin(record: r, &edit)
                let k = key(rw, "w")
                edit.levels[0].append(scalarInt(k, 1000 + r))
                try rw.replace(record: r, with: edit, version: 2)
            }
            if rw.isEmpty { continue }
            let out = try rw.rebuiltReader(verify: true)
            let doc = ArchiveDocument(reader: out)
            for r in 0..<40 {
                var expected = objects[r].entries
                if replaced(r) { expected.append(ArchiveEntry(key: "w", value: .int(Int64(1000 + r)))) }
                XCTAssertEqual(doc.objects[r].entries, expected, "\(name), record \(r)")
                XCTAssertEqual(out.version(ofRecord: r), replaced(r) ? 2 : 0, "\(name), record \(r)")
            }
        }
    }

    /// A rebuilt reader (the loose layout) rewritten again, as the sealed
    /// values' opening after migrations does: the second rebuild reads what
    /// the same edit of the archive written from the first gives.
    func testARebuiltReaderRewrittenAgain() throws {
        let reader = try sample(carry: true, manyKeys: true)
        let rw = ArchiveRewriter(reader: reader)
        var edit = RecordEdit()
        rw.begin(record: 1, &edit)
        let added = key(rw, "added")
        edit.levels[0].append(scalarInt(added, 7))
        try rw.replace(record: 1, with: edit, version: 2)
        let first = try rw.rebuiltReader(verify: true)
        func again(_ r: ArchiveReader) throws -> ArchiveReader {
            let rw2 = ArchiveRewriter(reader: r)
            var e = RecordEdit()
            rw2.begin(record: 2, &e)
            let k = key(rw2, "again")
            e.levels[0].append(scalarInt(k, 8))
            e.levels[0].removeFirst()
            try rw2.replace(record: 2, with: e, version: 3)
            return try rw2.rebuiltReader(verify: true)
        }
        let viaLoose = try again(first)
        let viaArchive = try again(try ArchiveReader(adopting: try ArchiveRewriter(reader: first).encode()))
        XCTAssertNil(viaLoose.contentDifference(viaArchive))
        XCTAssertEqual(ArchiveDocument(reader: viaLoose), ArchiveDocument(reader: viaArchive))
        XCTAssertEqual(ArchiveDocument(reader: viaLoose).objects[1].entries.last, ArchiveEntry(key: "added", value: .int(7)))
        XCTAssertEqual(viaLoose.version(ofRecord: 1), 2)
        XCTAssertEqual(viaLoose.version(ofRecord: 2), 3)
    }

    func testMisuseIsAStateFailure() throws {
        let reader = try sample()
        let rw = ArchiveRewriter(reader: reader)
        var edit = RecordEdit()
        rw.begin(record: 1, &edit)
        try rw.replace(record: 1, with: edit, version: 1)
        XCTAssertThrowsError(try rw.replace(record: 1, with: edit, version: 1), "each record once") { e in
            guard case WriteFailure.state = e else { return XCTFail("\(e)") }
        }
        XCTAssertThrowsError(try rw.replace(record: 0, with: edit, version: 1), "in increasing order")
        rw.begin(record: 2, &edit)
        edit.values.append(.object(record: 0))
        edit.levels[0].append(EditedField(key: 0, rawTag: ValueTag.object.rawValue, source: .value, originalKey: 0,
                                          payload: 0, start: 0, end: 0))
        XCTAssertThrowsError(try rw.replace(record: 2, with: edit, version: 1), "an edit writes no reference") { e in
            guard case WriteFailure.state(let m) = e else { return XCTFail("\(e)") }
            XCTAssertTrue(m.contains("cannot write"), m)
        }
        // The failed replace left nothing behind: the archive still validates.
        XCTAssertNoThrow(try ArchiveReader(adopting: try rw.encode()))
    }
}
