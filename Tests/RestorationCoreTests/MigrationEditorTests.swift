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
    /// Every rewriter made, held for the test: an editor does not retain
    /// its rewriter (Engine.migrate holds it).
    private var rewriters: [ArchiveRewriter] = []

    private func editor() throws -> MigrationEditor {
        let bytes = try ArchiveDocument(info: ArchiveInfo(appVersion: "1", systemVersion: "s", idiom: "i", savedAtMs: 5), objects: [
            ArchiveObject(identifier: "Root", className: "Win", entries: [
                ArchiveEntry(key: "count", value: .int(3)),
                ArchiveEntry(key: "title", value: .string("hello")),
                ArchiveEntry(key: "note", value: .record([ArchiveEntry(key: "text", value: .string("inner"))])),
            ], version: 0),
        ]).encode()
        rewriter = ArchiveRewriter(reader: try ArchiveReader(bytes: bytes))
        rewriters.append(rewriter)
        let e = MigrationEditor(rewriter: rewriter)
        e.begin(record: 0)
        return e
    }

    private func withKey<T>(_ s: String, _ body: (KeyBytes) throws -> T) rethrows -> T {
        try Array(s.utf8).withUnsafeBytes { try body(KeyBytes($0)) }
    }

    /// Record 1, "Pane", has a field of every kind a step meets — ints, a
    /// reference, a string, a nested record, a double, an object array —
    /// and `d` last.
    private func paneArchive(d: ArchiveValue) throws -> ArchiveReader {
        let objects = [
            ArchiveObject(identifier: "Root", className: "Win", entries: [ArchiveEntry(key: "elsewhere", value: .int(0))]),
            ArchiveObject(identifier: "Pane", parent: 0, className: "Pane", entries: [
                ArchiveEntry(key: "a", value: .int(1)),
                ArchiveEntry(key: "link", value: .object(record: 0)),
                ArchiveEntry(key: "b", value: .string("two")),
                ArchiveEntry(key: "note", value: .record([ArchiveEntry(key: "peer", value: .object(record: 1))])),
                ArchiveEntry(key: "c", value: .double(3)),
                ArchiveEntry(key: "peers", value: .objectArray([1, 0])),
                ArchiveEntry(key: "d", value: d),
            ], version: 0),
        ]
        let bytes = try ArchiveDocument(info: ArchiveInfo(appVersion: "1", systemVersion: "s", idiom: "i", savedAtMs: 5), objects: objects).encode()
        return try ArchiveReader(bytes: bytes)
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

    /// The editor parses a record's fields only as far as a step looks and
    /// writes the rest back as one copy: whatever a step does, the rebuilt
    /// record is the one a fully parsed edit gives (same entries, order,
    /// references), and lookups past the parsed part still find their keys.
    func testFieldsParsedOnlyAsFarAsNeededAgreeWithAFullParse() throws {
        let reader = try paneArchive(d: .bool(true))
        let steps: [(String, (MigrationEditor) throws -> Void)] = [
            ("nothing", { _ in }),
            ("rename the first", { e in try self.withKey("a") { f in try self.withKey("z") { try e.rename(f, to: $0) } } }),
            ("add a key", { e in try self.withKey("added") { try e.writeScalar($0, .int, bits: 7) } }),
            ("add, then replace a late one", { e in
                try self.withKey("added") { try e.writeScalar($0, .int, bits: 7) }
                try self.withKey("d") { try e.writeScalar($0, .boolFalse, bits: 0) } }),
            ("remove a reference", { e in try self.withKey("link") { try e.remove($0) } }),
            ("remove the last, add one", { e in
                try self.withKey("d") { try e.remove($0) }
                try self.withKey("e") { k in try Array("five".utf8).withUnsafeBytes { try e.writeString(k, $0) } } }),
            ("look up a key of another record", { e in XCTAssertFalse(self.withKey("elsewhere") { e.contains($0) }) }),
            ("read a late one", { e in XCTAssertEqual(try self.withKey("c") { try e.double($0) }, 3) }),
            ("list the keys", { e in XCTAssertEqual(e.keys(), ["a", "link", "b", "note", "c", "peers", "d"]) }),
            ("edit the nested record", { e in
                try self.withKey("note") { try e.beginRecord($0, create: false) }
                try self.withKey("inner") { try e.writeScalar($0, .int, bits: 1) }
                try e.endRecord() }),
        ]
        for (name, step) in steps {
            var results: [ArchiveReader] = []
            for lazily in [true, false] {
                let rw = ArchiveRewriter(reader: reader)
                let e = MigrationEditor(rewriter: rw)
                e.begin(record: 1)
                if !lazily { e.parseAll() }
                try step(e)
                try rw.replace(record: 1, editing: &e.edit, version: 1)
                results.append(try rw.rebuiltReader(verify: true))
            }
            XCTAssertEqual(ArchiveDocument(reader: results[0]).objects, ArchiveDocument(reader: results[1]).objects, name)
            XCTAssertNil(results[0].indexDifference(results[1]), name)
        }
        // A rename onto a key that only the unparsed fields hold is a duplicate.
        // (The rewriter is held here, as Engine.migrate holds it: the editor
        // does not retain it, and a temporary one was freed at once.)
        let rw = ArchiveRewriter(reader: reader)
        let e = MigrationEditor(rewriter: rw)
        e.begin(record: 1)
        XCTAssertThrowsError(try withKey("a") { f in try withKey("d") { try e.rename(f, to: $0) } }) { error in
            XCTAssertEqual((error as? RestorationFailure)?.status, .duplicate)
        }
        withExtendedLifetime(rw) {}
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

    /// The step's lanes (`laneInt`, `laneWriteScalar`) answer only what the
    /// checked calls would answer the same: a lane's int is the checked
    /// `int`'s, and a nil is a key the checked call refuses (missing,
    /// another type) or a value it reads another way; a lane's write leaves
    /// the record the checked `writeScalar` leaves, and a declined one
    /// (a new key, a record at the value limit) changes nothing.
    func testTheStepLanesAgreeWithTheCheckedCalls() throws {
        func checkedInt(_ e: MigrationEditor, _ k: String) -> Int64? { try? withKey(k) { try e.int($0) } }
        func level0(_ e: MigrationEditor) -> [String] { e.edit.levels[0].map { "\($0)" } }
        // Reads: an archive int, a scalar the step wrote, a value the step
        // wrote, another type, a missing key, a key inside a nested record,
        // a key of the archive not parsed yet, each by length and as a C key.
        let e = try editor()
        try withKey("written") { try e.writeScalar($0, .int, bits: UInt64(bitPattern: -5)) }
        try withKey("value") { try e.write($0, .int(77)) }
        for k in ["count", "written", "value", "title", "note", "gone", "text", ""] {
            let lane = withKey(k) { e.laneInt($0) }
            let cLane = k.withCString { e.laneInt(KeyBytes(cString: $0)) }
            XCTAssertEqual(lane, cLane, k)
            if let lane { XCTAssertEqual(lane, checkedInt(e, k), k) }
            else { XCTAssertTrue(checkedInt(e, k) == nil || k == "value", k) }
        }
        XCTAssertEqual(withKey("count") { e.laneInt($0) }, 3)
        XCTAssertEqual(withKey("written") { e.laneInt($0) }, -5)
        XCTAssertNil(withKey("value") { e.laneInt($0) }, "a value of the edit: the checked call reads it")
        XCTAssertEqual(checkedInt(e, "value"), 77)
        // Lazily begun: the lane parses on to a late key as `int` does.
        let lazy = try editor()
        XCTAssertEqual(lazy.edit.levels[0].count, 0)
        XCTAssertNil(withKey("title") { lazy.laneInt($0) })
        XCTAssertEqual(lazy.edit.levels[0].count, 2)
        try withKey("note") { try lazy.beginRecord($0, create: false) }
        XCTAssertNil(withKey("count") { lazy.laneInt($0) }, "not in the nested record")
        try lazy.endRecord()

        // Writes: the same steps through the lane (then the checked call when
        // it declines) and through the checked call alone leave the same edit.
        let steps: [(String, Int64)] = [("count", 1), ("added", 2), ("added", 3), ("title", 4), ("count", 5), ("more", 6)]
        let viaLane = try editor(), viaChecked = try editor()
        for (k, v) in steps {
            let before = level0(viaLane)
            let took = withKey(k) { viaLane.laneWriteScalar($0, ValueTag.int.rawValue, bits: UInt64(bitPattern: v)) }
            if !took {
                XCTAssertEqual(level0(viaLane), before, "\(k): declined, nothing changed")
                try withKey(k) { try viaLane.writeScalar($0, .int, bits: UInt64(bitPattern: v)) }
            }
            try withKey(k) { try viaChecked.writeScalar($0, .int, bits: UInt64(bitPattern: v)) }
            XCTAssertEqual(level0(viaLane), level0(viaChecked), k)
            XCTAssertEqual(viaLane.keys(), viaChecked.keys(), k)
            XCTAssertEqual(checkedInt(viaLane, k), v, k)
        }
        XCTAssertFalse(withKey("never") { viaLane.laneWriteScalar($0, ValueTag.int.rawValue, bits: 0) }, "a new key: checked and added by the checked call")
        // A nested record entered: written there, as the checked call does.
        try withKey("note") { try viaLane.beginRecord($0, create: false) }
        XCTAssertTrue(withKey("count") { viaLane.laneWriteScalar($0, ValueTag.int.rawValue, bits: 9) })
        XCTAssertEqual(viaLane.keys(), ["text", "count"])
        try viaLane.endRecord()
        // At the value limit: the lane declines, the checked call fails.
        let full = try editor()
        full.parseAll()
        let filler = EditedField(key: 0, rawTag: ValueTag.int.rawValue, source: .scalar, originalKey: 0, payload: 0, start: 0, end: 0)
        while full.edit.levels[0].count < ArchiveLimits.maxValuesPerRecord { full.edit.levels[0].append(filler) }
        let atLimit = level0(full)
        XCTAssertFalse(withKey("text") { full.laneWriteScalar($0, ValueTag.int.rawValue, bits: 1) }, "a key of the archive's table, no room")
        XCTAssertEqual(level0(full), atLimit)
        XCTAssertThrowsError(try withKey("text") { try full.writeScalar($0, .int, bits: 1) }) { error in
            XCTAssertEqual((error as? RestorationFailure)?.status, .limit)
        }
        XCTAssertTrue(withKey("title") { full.laneWriteScalar($0, ValueTag.int.rawValue, bits: 1) }, "a replacement needs no room")
    }

    /// `laneRename` renames only where `rename` would, and leaves the same
    /// record: a field not parsed yet is parsed with its new key, one
    /// already parsed gets it; everything `rename` refuses or treats
    /// specially (a new key, a duplicate parsed or not, the same key, a
    /// missing key) is declined and then decided by `rename`, with its
    /// status. Each case is run both ways and rebuilt: the same edit, keys
    /// and archive.
    func testTheRenameLaneAgreesWithRename() throws {
        func level0(_ e: MigrationEditor) -> [String] { e.edit.levels[0].map { "\($0)" } }
        // (from, to, what the step did before)
        // ("intern": the step added amount and removed it, so that the key
        // is in the rebuilt table but on no field: the lane's usual case.)
        let cases: [(String, String, String)] = [
            ("count", "amount", "intern"), ("title", "amount", "intern"), ("note", "amount", "intern"),
            ("count", "amount", ""), ("title", "amount", "add amount"), ("title", "amount", "add other"),
            ("count", "amount", "intern+parse all"), ("title", "amount", "intern+look at count"),
            ("note", "amount", "intern+look at count"), ("title", "amount", "intern+add other"),
            ("count", "title", ""), ("count", "title", "parse all"), ("title", "count", "look at count"),
            ("note", "count", "intern"), ("count", "count", ""), ("count", "count", "parse all"),
            ("gone", "amount", "add amount"), ("gone", "amount", "intern"), ("gone", "amount", ""),
            ("count", "bad\u{0}", ""), ("amount", "count", "add amount"), ("amount", "other", "add amount+add other"),
            ("amount", "added", "add amount+intern added"),
            ("text", "amount", "intern+enter note"), ("text", "count", "enter note"), ("count", "amount", "intern+enter note"),
        ]
        var taken = 0
        for (from, to, before) in cases {
            let name = "\(from) -> \(to) after '\(before)'"
            var outcomes: [(status: Status?, level: [String], keys: [String], archive: [ArchiveObject])] = []
            for lane in [true, false] {
                let e = try editor()
                for action in before.split(separator: "+") {
                    switch action {
                    case "intern":
                        try withKey("amount") { try e.writeScalar($0, .int, bits: 1) }
                        try withKey("amount") { try e.remove($0) }
                    case "intern added":
                        try withKey("added") { try e.writeScalar($0, .int, bits: 1) }
                        try withKey("added") { try e.remove($0) }
                    case "add amount": try withKey("amount") { try e.writeScalar($0, .int, bits: 1) }
                    case "add other": try withKey("other") { try e.writeScalar($0, .int, bits: 1) }
                    case "parse all": e.parseAll()
                    case "look at count": _ = withKey("count") { e.contains($0) }
                    case "enter note": try withKey("note") { try e.beginRecord($0, create: false) }
                    default: XCTFail("no action \(action)")
                    }
                }
                var status: Status? = nil
                let took = lane ? withKey(from) { f in withKey(to) { e.laneRename(f, to: $0) } } : false
                if !took {
                    do { try withKey(from) { f in try withKey(to) { try e.rename(f, to: $0) } } }
                    catch { status = (error as? RestorationFailure)?.status ?? .state }
                } else {
                    taken += 1
                    XCTAssertFalse(from.withCString { f in to.withCString { t in e.laneRename(KeyBytes(cString: f), to: KeyBytes(cString: t)) } },
                                   "\(name): the key renamed is gone, the new one taken")
                }
                let keys = e.keys()
                if before.hasSuffix("enter note") { try e.endRecord() }
                try rewriter.replace(record: 0, editing: &e.edit, version: 1)
                let rebuilt = try rewriter.rebuiltReader(verify: true)
                outcomes.append((status, level0(e), keys, ArchiveDocument(reader: rebuilt).objects))
            }
            XCTAssertEqual(outcomes[0].status, outcomes[1].status, name)
            XCTAssertEqual(outcomes[0].level, outcomes[1].level, name)
            XCTAssertEqual(outcomes[0].keys, outcomes[1].keys, name)
            XCTAssertEqual(outcomes[0].archive, outcomes[1].archive, name)
        }
        XCTAssertEqual(taken, 10, "the cases the lane renames itself")
        // The lane took the usual rename (a field not parsed yet, onto a key
        // the step's table has), parsing only as far as the field.
        let e = try editor()
        try withKey("amount") { try e.writeScalar($0, .int, bits: 1) }
        try withKey("amount") { try e.remove($0) }
        XCTAssertTrue(withKey("title") { f in withKey("amount") { e.laneRename(f, to: $0) } })
        XCTAssertEqual(e.edit.levels[0].count, 0, "nothing parsed: the rename is held among the unparsed fields")
        XCTAssertGreaterThan(e.edit.unparsed.renamedAt, 0)
        XCTAssertEqual(withKey("amount") { e.valueType($0) }, .some(.string))
        XCTAssertEqual(e.keys(), ["count", "amount", "note"])
    }

    /// A rename the lane holds among the unparsed fields (nothing parsed)
    /// is the rename `rename` makes on parsed fields: every operation a step
    /// can make after it — reads of the new key, the old one and the
    /// others, writes to either key, removal, renaming again, a second
    /// rename, listing, entering a nested record — gives the same answers,
    /// the same keys and the same rebuilt archive, for a field at the
    /// record's start, middle and end, holding a reference or a record.
    func testAHeldRenameAgreesWithARenameOfParsedFields() throws {
        let reader = try paneArchive(d: .int(4))
        func status(_ body: () throws -> Void) -> String {
            do { try body(); return "ok" } catch { return "\((error as? RestorationFailure)?.status ?? .state)" }
        }
        typealias Step = (MigrationEditor, String) -> [String]      // the renamed key's old name
        let after: [(String, Step)] = [
            ("nothing", { _, _ in [] }),
            ("read the new key", { e, _ in [self.withKey("new") { "\(e.valueType($0) as Any)" },
                                             status { _ = try self.withKey("new") { try e.read($0, .int) } },
                                             "\(self.withKey("new") { e.laneInt($0) } as Any)"] }),
            ("read the new key's value", { e, old in
                let tag: ValueTag = ["a": .int, "d": .int, "b": .string, "c": .double, "link": .object, "note": .record, "peers": .objectArray][old]!
                return [status { _ = try self.withKey("new") { try e.read($0, tag) } },
                        "\((try? self.withKey("new") { try e.read($0, tag) }) as Any)"] }),
            ("read the old key", { e, old in [status { _ = try self.withKey(old) { try e.read($0, .int) } },
                                               "\(self.withKey(old) { e.laneInt($0) } as Any)", "\(self.withKey(old) { e.contains($0) })"] }),
            ("read the others", { e, _ in ["a", "d", "c", "b"].map { k in "\((try? self.withKey(k) { try e.read($0, .int) }) as Any) \(self.withKey(k) { e.laneInt($0) } as Any)" } }),
            ("write the new key", { e, _ in [status { try self.withKey("new") { try e.writeScalar($0, .int, bits: 9) } }] }),
            ("write the new key through the lane", { e, _ in ["\(self.withKey("new") { e.laneWriteScalar($0, ValueTag.int.rawValue, bits: 9) })"] }),
            ("write the old key", { e, old in [status { try self.withKey(old) { try e.writeScalar($0, .int, bits: 8) } }] }),
            ("write another key", { e, _ in ["\(self.withKey("other") { e.laneWriteScalar($0, ValueTag.int.rawValue, bits: 7) })"] }),
            ("remove the new key", { e, _ in [status { try self.withKey("new") { try e.remove($0) } }] }),
            ("remove the old key", { e, old in [status { try self.withKey(old) { try e.remove($0) } }] }),
            ("rename again", { e, _ in ["\(self.withKey("new") { f in self.withKey("other") { e.laneRename(f, to: $0) } })",
                                        status { try self.withKey("other") { f in try self.withKey("new") { try e.rename(f, to: $0) } } }] }),
            ("rename onto the new key", { e, _ in [status { try self.withKey("d") { f in try self.withKey("new") { try e.rename(f, to: $0) } } }] }),
            ("a second rename", { e, old in
                let second = old == "peers" ? "a" : "peers"
                return ["\(self.withKey(second) { f in self.withKey("other") { e.laneRename(f, to: $0) } })"] }),
            ("list the keys", { e, _ in e.keys() }),
            ("enter the nested record", { e, _ in [status {
                try self.withKey(e.keys().contains("note") ? "note" : "new") { try e.beginRecord($0, create: false) }
                try self.withKey("inner") { try e.writeScalar($0, .int, bits: 1) }
                try e.endRecord() }] }),
        ]
        var held = 0
        for old in ["a", "link", "b", "note", "c", "peers", "d"] {
            for (name, step) in after {
                var outcomes: [(answers: [String], keys: [String], archive: [ArchiveObject])] = []
                for parsedFirst in [false, true] {
                    let rw = ArchiveRewriter(reader: reader)
                    let e = MigrationEditor(rewriter: rw)
                    for k in ["new", "other"] {                  // keys the step's table has (a step's usual case)
                        _ = withKey(k) { rw.internKey($0.bytes) }
                    }
                    e.begin(record: 1)
                    if parsedFirst { e.parseAll() }
                    XCTAssertTrue(withKey(old) { f in withKey("new") { e.laneRename(f, to: $0) } }, "\(old): \(name)")
                    if !parsedFirst {
                        XCTAssertEqual(e.edit.levels[0].count, 0, "\(old): held, nothing parsed")
                        held += 1
                    }
                    let answers = step(e, old)
                    let keys = e.keys()
                    try rw.replace(record: 1, editing: &e.edit, version: 1)
                    let rebuilt = try rw.rebuiltReader(verify: true)
                    outcomes.append((answers, keys, ArchiveDocument(reader: rebuilt).objects))
                }
                XCTAssertEqual(outcomes[0].answers, outcomes[1].answers, "\(old): \(name)")
                XCTAssertEqual(outcomes[0].keys, outcomes[1].keys, "\(old): \(name)")
                XCTAssertEqual(outcomes[0].archive, outcomes[1].archive, "\(old): \(name)")
            }
        }
        XCTAssertEqual(held, 7 * after.count)
    }

    /// MigrationJobs (Engine.migrate's plan) keeps every job in order
    /// whatever room it is told is left: sized at the first job, grown when
    /// told too little, and released.
    func testMigrationJobsKeepEveryJobInOrder() {
        for (n, room) in [(0, 5), (1, 1), (5, 5), (40, 40), (40, 1), (40, 0), (100, 7)] {
            var jobs = MigrationJobs()
            XCTAssertTrue(jobs.isEmpty)
            for r in 0..<n {
                jobs.append(MigrationJob(record: r, from: UInt32(r % 3), to: 3, chain: r % 2), room: max(room - r, 0))
            }
            XCTAssertEqual(jobs.count, n)
            XCTAssertEqual(jobs.isEmpty, n == 0)
            XCTAssertEqual(jobs.jobs.map(\.record), Array(0..<n), "\(n), room \(room)")
            XCTAssertEqual(jobs.jobs.map(\.from), (0..<n).map { UInt32($0 % 3) })
            XCTAssertEqual(jobs.jobs.map(\.chain), (0..<n).map { $0 % 2 })
            XCTAssertTrue(jobs.jobs.allSatisfy { $0.to == 3 })
            jobs.release()
            XCTAssertTrue(jobs.isEmpty)
            XCTAssertEqual(jobs.jobs.count, 0)
        }
    }

    /// MigrationLimits.check decides the usual record (its own level only,
    /// within the limit) inline: it agrees with the loop over every level
    /// at and around the limit, with and without nested levels.
    func testTheInlineLimitCheckAgreesWithTheLoop() {
        let max = ArchiveLimits.maxValuesPerRecord
        let field = EditedField(key: 0, rawTag: ValueTag.int.rawValue, source: .scalar, originalKey: 0, payload: 1, start: 0, end: 0)
        var checked = 0
        for own in [0, 1, max - 1, max, max + 1] {
            for nested in [nil, 0, max, max + 1] as [Int?] {
                var edit = RecordEdit()
                edit.levels[0] = Array(repeating: field, count: own)
                if let nested {
                    let l = edit.addLevel()
                    edit.levels[l] = Array(repeating: field, count: nested)
                }
                let inline = MigrationLimits.check(&edit), loop = MigrationLimits.checkLevels(&edit)
                XCTAssertEqual(inline, loop, "\(own) values, nested \(String(describing: nested))")
                XCTAssertEqual(inline != nil, own > max || (nested ?? 0) > max)
                checked += 1
            }
        }
        XCTAssertEqual(checked, 20)
    }
}
