// restorectl and surviving change (docs/EVOLUTION.md): object arrays (show, JSON edit, diff,
// restore), class versions (inspect, JSON, diff), explained skips
// (restore --explain, why).
import Foundation
import RestorationArchive
import XCTest

final class RestorectlEvolutionTests: XCTestCase {
    /// Nav (class Nav, version 2) holds stack = [List, Gone]; Gone/Child under
    /// a class nothing provides.
    static func archive() throws -> [UInt8] {
        var doc = ArchiveDocument(info: ArchiveInfo(appVersion: "2.0", savedAtMs: 1), objects: [
            ArchiveObject(identifier: "Nav", className: "Nav",
                          entries: [ArchiveEntry(key: "stack", value: .objectArray([1, 2]))], version: 2),
            ArchiveObject(identifier: "List", parent: 0, className: nil,
                          entries: [ArchiveEntry(key: "back", value: .objectArray([0]))]),
            ArchiveObject(identifier: "Gone", parent: 0, className: "Gone", entries: []),
        ])
        doc.objects[2].version = 0
        return try doc.encode()
    }

    func testObjectArraysAndVersionsInInspectJSONAndDiff() throws {
        let dir = TempDir("evo")
        let a = dir.file("a.rst")
        Archives.write(try Self.archive(), to: a)
        let r = try expect(0, ["inspect", a])
        XCTAssertTrue(r.stdout.contains("Nav  class Nav v2"), r.stdout)
        XCTAssertTrue(r.stdout.contains("stack: object_array[2] -> [Nav/List, Nav/Gone]"), r.stdout)
        let j = try expect(0, ["inspect", "--json", a])
        XCTAssertTrue(j.stdout.contains("\"version\": 2") || j.stdout.contains("\"version\":2"), j.stdout)
        XCTAssertTrue(j.stdout.contains("object_array"), j.stdout)
        // Edit through JSON: reverse the stack and bump the version.
        var edited = j.stdout.replacingOccurrences(of: "\"Nav/List\", \"Nav/Gone\"", with: "\"Nav/Gone\", \"Nav/List\"")
        edited = edited.replacingOccurrences(of: "\"Nav/List\",\"Nav/Gone\"", with: "\"Nav/Gone\",\"Nav/List\"")
        XCTAssertNotEqual(edited, j.stdout, "the JSON lists the stack's paths")
        edited = edited.replacingOccurrences(of: "\"version\": 2", with: "\"version\": 3")
        let b = dir.file("b.rst")
        try expect(0, ["save", "--from", "-", "--out", b], stdin: Array(edited.utf8))
        let doc = try ArchiveDocument(bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: b))))
        XCTAssertEqual(doc.objects[0].entries[0].value, .objectArray([2, 1]))
        XCTAssertEqual(doc.objects[0].version, 3)
        let d = try expect(1, ["diff", a, b])
        XCTAssertTrue(d.stdout.contains("version: 2 -> 3"), d.stdout)
        XCTAssertTrue(d.stdout.contains("stack"), d.stdout)
        // A path that does not exist is a schema error.
        let bad = edited.replacingOccurrences(of: "\"Nav/Gone\", \"Nav/List\"", with: "\"Nope\", \"Nav/List\"")
            .replacingOccurrences(of: "\"Nav/Gone\",\"Nav/List\"", with: "\"Nope\",\"Nav/List\"")
        let e = try ctl(["save", "--from", "-", "--out", dir.file("c.rst")], stdin: Array(bad.utf8))
        XCTAssertNotEqual(e.code, 0)
        XCTAssertTrue(e.stderr.contains("Nope"), e.stderr)
    }

    func testCarriedRecordsAreMarked() throws {
        let dir = TempDir("evo-carry")
        var doc = try ArchiveDocument(bytes: try Self.archive())
        doc.objects[2].carry = 3
        let a = dir.file("a.rst")
        Archives.write(try doc.encode(), to: a)
        let r = try expect(0, ["inspect", a])
        XCTAssertTrue(r.stdout.contains("Nav/Gone  class Gone  [carried, 2 more saves]"), r.stdout)
        let j = try expect(0, ["inspect", "--json", a])
        XCTAssertTrue(j.stdout.contains("\"carry\": 3") || j.stdout.contains("\"carry\":3"), j.stdout)
        let b = dir.file("b.rst")
        try expect(0, ["save", "--from", "-", "--out", b], stdin: Array(j.stdout.utf8))
        XCTAssertEqual(try ArchiveDocument(bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: b)))).objects[2].carry, 3)
    }

    func testRestoreExplainAndWhy() throws {
        let dir = TempDir("evo-why")
        let a = dir.file("a.rst")
        Archives.write(try Self.archive(), to: a)
        // Without plugins every record gets a stand-in: nothing is skipped.
        let r = try expect(0, ["restore", "--explain", a])
        XCTAssertTrue(r.stdout.contains("why (the engine's rst_last_restore_skips"), r.stdout)
        XCTAssertTrue(r.stdout.contains("nothing was skipped"), r.stdout)
        XCTAssertTrue(r.stdout.contains("stack: object_array[2]"), r.stdout)
        let j = try expect(0, ["restore", "--explain", "--json", a])
        XCTAssertTrue(j.stdout.contains("\"skips\""), j.stdout)
        let w = try expect(0, ["why", a, "Nav/Gone"])
        XCTAssertTrue(w.stdout.contains("Nav/Gone: restored: stand-in"), w.stdout)
        XCTAssertTrue(w.stdout.contains("RST_SKIP_NO_FACTORY"), w.stdout)
        let wv = try expect(0, ["why", a, "Nav"])
        XCTAssertTrue(wv.stdout.contains("version 2"), wv.stdout)
        try expect(3, ["why", a, "Nav/Nope"])
    }
}

final class RestorectlQuarantineTests: XCTestCase {
    func testShowAndClearAQuarantine() throws {
        let dir = TempDir("evo-q")
        let a = dir.file("state.rst")
        let bytes = try RestorectlEvolutionTests.archive()
        Archives.write(bytes, to: a)
        try expect(3, ["quarantine", a])
        let n = bytes.count
        let crc = String(format: "%02x%02x%02x%02x", bytes[n - 4], bytes[n - 3], bytes[n - 2], bytes[n - 1])
        let q = "restoration-quarantine 1\narchive=\(n):\(crc)\nrecord=1\npath=Nav/List\npid=4242\nend\n"
        Archives.write(Array(q.utf8), to: a + ".quarantine")
        let r = try expect(0, ["quarantine", a])
        XCTAssertTrue(r.stdout.contains("record   1 Nav/List"), r.stdout)
        XCTAssertTrue(r.stdout.contains("process 4242 died"), r.stdout)
        XCTAssertTrue(r.stdout.contains("applies  yes"), r.stdout)
        let d = try expect(0, ["discard", "--dry-run", a])
        XCTAssertTrue(d.stdout.contains("state.rst.quarantine"), d.stdout)
        let c = try expect(0, ["quarantine", "--clear", a])
        XCTAssertTrue(c.stdout.contains("cleared"), c.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: a + ".quarantine"))
        try expect(3, ["quarantine", a])
    }
}
