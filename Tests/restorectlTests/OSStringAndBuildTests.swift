// OS strings in restorectl (shown escaped, read back by save --from to the
// same bytes) and restore/why for a given build (--classes, --plugins).
import Foundation
import RestorationArchive
import XCTest

final class OSStringAndBuildTests: XCTestCase {
    private let latin1: [UInt8] = [0x63, 0x61, 0x66, 0xE9]                 // caf\xe9
    private let odd: [UInt8] = Array("a\\b".utf8) + [0x01, 0xFF, 0x22]      // a\b, \x01, \xff, "

    private func osArchive() throws -> ArchiveDocument {
        ArchiveDocument(info: Archives.info, objects: [
            ArchiveObject(identifier: "Files", className: nil, entries: [
                ArchiveEntry(key: "name", value: .osString(latin1)),
                ArchiveEntry(key: "utf8", value: .osString(Array("café".utf8))),
                ArchiveEntry(key: "odd", value: .osString(odd)),
                ArchiveEntry(key: "plain", value: .string("caf\\xe9")),
            ]),
        ])
    }

    /// inspect shows text where the bytes are UTF-8 and escapes the rest.
    func testInspectShowsOSStringsEscaped() throws {
        let dir = TempDir("os-inspect")
        let a = dir.file("a.rst")
        Archives.write(try osArchive().encode(), to: a)
        let r = try expect(0, ["inspect", a])
        for s in [#"name: os_string = "caf\xe9""#, #"utf8: os_string = "café""#,
                  #"odd: os_string = "a\\b\x01\xff\x22""#, #"plain: string = "caf\\xe9""#] {
            XCTAssertTrue(r.stdout.contains(s), "inspect lacks \(s):\n\(r.stdout)")
        }
    }

    /// inspect --json marks the type; save --from reads it back to the same
    /// bytes (and the same archive).
    func testJSONRoundTripGivesIdenticalBytes() throws {
        let dir = TempDir("os-json")
        let a = dir.file("a.rst"), b = dir.file("b.rst")
        let doc = try osArchive()
        Archives.write(try doc.encode(), to: a)
        let j = try expect(0, ["inspect", "--json", a])
        for s in [#"{"key": "name", "type": "os_string", "value": "caf\\xe9"}"#,
                  #"{"key": "utf8", "type": "os_string", "value": "café"}"#,
                  #"{"key": "odd", "type": "os_string", "value": "a\\\\b\\x01\\xff\""}"#] {
            XCTAssertTrue(j.stdout.contains(s), "inspect --json lacks \(s):\n\(j.stdout)")
        }
        try expect(0, ["save", "--from", "-", "--out", b], stdin: Array(j.stdout.utf8))
        let back = try ArchiveDocument(bytes: [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: b))))
        XCTAssertEqual(back.objects[0].entries, doc.objects[0].entries)
        // Upper-case hex and literal bytes read too.
        let edited = j.stdout.replacingOccurrences(of: #""caf\\xe9""#, with: #""caf\\xE9\\x41""#)
        try expect(0, ["save", "--from", "-", "--out", b], stdin: Array(edited.utf8))
        let e = try ArchiveDocument(bytes: [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: b))))
        XCTAssertEqual(e.objects[0].entries[0].value, .osString(latin1 + [0x41]))
    }

    /// What a 1.1 restorectl printed for an OS string (an unknown value of
    /// tag 11, hex) reads back as that OS string.
    func testOlderJSONWithTag11ReadsAsAnOSString() throws {
        let dir = TempDir("os-old-json")
        let json = """
            {"format_version": 1, "app_version": "", "system_version": "", "idiom": "", "saved_at_ms": 1,
             "objects": [{"path": "F", "class": null, "values": [{"key": "n", "type": "unknown", "tag": 11, "value": "636166e9"}]}]}
            """
        try expect(0, ["save", "--from", "-", "--out", dir.file("x.rst")], stdin: Array(json.utf8))
        let doc = try ArchiveDocument(bytes: [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: dir.file("x.rst")))))
        XCTAssertEqual(doc.objects[0].entries[0].value, .osString(latin1))
        let bad = json.replacingOccurrences(of: "636166e9", with: "610062")
        let r = try ctl(["save", "--from", "-", "--out", dir.file("y.rst")], stdin: Array(bad.utf8))
        XCTAssertNotEqual(r.code, 0, r.description)
        XCTAssertTrue(r.stderr.contains("NUL"), r.description)
    }

    /// A malformed escape or a NUL is refused with where it is.
    func testBadEscapesAreRefused() throws {
        let dir = TempDir("os-bad")
        for (value, fragment) in [(#"a\\q"#, "neither"), (#"a\\x4"#, "neither"), (#"a\\"#, "ends the text"),
                                  (#"a\\x00"#, "NUL"), (#"a\u0000b"#, "NUL")] {
            let json = """
                {"format_version": 1, "app_version": "", "system_version": "", "idiom": "", "saved_at_ms": 1,
                 "objects": [{"path": "F", "class": null, "values": [{"key": "n", "type": "os_string", "value": "\(value)"}]}]}
                """
            let r = try ctl(["save", "--from", "-", "--out", dir.file("x.rst")], stdin: Array(json.utf8))
            XCTAssertNotEqual(r.code, 0, r.description)
            XCTAssertTrue(r.stderr.contains(fragment) && r.stderr.contains("values[0].value"), "\(value): \(r)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file("x.rst")))
        }
    }

    /// A headless restore decodes OS strings through the engine and saves
    /// them again unchanged; diff shows a changed one escaped.
    func testRestoreAndDiff() throws {
        let dir = TempDir("os-restore")
        let a = dir.file("a.rst"), b = dir.file("b.rst"), c = dir.file("c.rst")
        Archives.write(try osArchive().encode(), to: a)
        let r = try expect(0, ["restore", a, "--save-to", b])
        XCTAssertTrue(r.stdout.contains(#"name: os_string = "caf\xe9""#), r.stdout)
        let back = try ArchiveDocument(bytes: [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: b))))
        XCTAssertEqual(back.objects[0].entries, try osArchive().objects[0].entries)
        var changed = try osArchive()
        changed.objects[0].entries[0].value = .osString([0x78, 0xE8])
        Archives.write(try changed.encode(), to: c)
        let d = try ctl(["diff", a, c])
        XCTAssertEqual(d.code, 1, d.description)
        XCTAssertTrue(d.stdout.contains(#""caf\xe9""#) && d.stdout.contains(#""x\xe8""#), d.stdout)
    }

    // MARK: - a given build

    /// Tabs (TabBar) / Detail (CountryDetail) / Map (MapPane); Settings (no
    /// class) / Pane (Pref); Other (Gone).
    private func buildArchive(_ dir: TempDir) throws -> String {
        let a = dir.file("a.rst")
        let doc = ArchiveDocument(info: Archives.info, objects: [
            ArchiveObject(identifier: "Tabs", className: "TabBar", entries: [ArchiveEntry(key: "selectedTab", value: .int(4))]),
            ArchiveObject(identifier: "Detail", parent: 0, className: "CountryDetail"),
            ArchiveObject(identifier: "Map", parent: 1, className: "MapPane"),
            ArchiveObject(identifier: "Settings", className: nil, entries: [ArchiveEntry(key: "theme", value: .string("dark"))]),
            ArchiveObject(identifier: "Pane", parent: 3, className: "Pref"),
            ArchiveObject(identifier: "Other", className: "Gone"),
        ])
        Archives.write(try doc.encode(), to: a)
        return a
    }

    /// Without --classes every record has an owner, and the answer says so
    /// and how to ask for a build.
    func testWithoutClassesTheAssumptionIsStated() throws {
        let dir = TempDir("build-none")
        let a = try buildArchive(dir)
        let w = try expect(0, ["why", a, "Other"])
        XCTAssertTrue(w.stdout.contains("Other: restored: stand-in (class Gone not provided)"), w.stdout)
        XCTAssertTrue(w.stdout.contains("assumes every record has an owner") && w.stdout.contains("--classes"), w.stdout)
        let r = try expect(0, ["restore", a, "--explain"])
        XCTAssertTrue(r.stdout.contains("assumes every record has an owner"), r.stdout)
        XCTAssertTrue(r.stdout.contains("5. Settings  [stand-in (no class)]") || r.stdout.contains("Settings  [stand-in (no class)]"), r.stdout)
        let j = try expect(0, ["why", "--json", a, "Other"])
        XCTAssertTrue(j.stdout.contains(#""classes": null"#) && j.stdout.contains("assumes every record has an owner"), j.stdout)
    }

    /// With --classes: the build's classes produce records, records without
    /// a class go to the objects the build registers, the rest are skipped
    /// with the engine's reason (descendants too).
    func testClassesSayWhatThatBuildRestoresAndSkips() throws {
        let dir = TempDir("build-classes")
        let a = try buildArchive(dir)
        let r = try expect(0, ["restore", a, "--explain", "--classes", "TabBar, CountryDetail,MapPane"])
        for s in ["Tabs  [class TabBar, registered by the build (--classes)]",
                  "Tabs/Detail/Map  [class MapPane, registered by the build (--classes)]",
                  "Settings  [the object the build registers at this path",
                  "build classes   TabBar, CountryDetail, MapPane (--classes)",
                  "report: archived 6, restored 4, skipped 2",
                  "  Settings/Pane  RST_SKIP_NO_FACTORY (class Pref): ",
                  "  Other  RST_SKIP_NO_FACTORY (class Gone): "] {
            XCTAssertTrue(r.stdout.contains(s), "restore --classes lacks \(s):\n\(r.stdout)")
        }
        XCTAssertFalse(r.stdout.contains("stand-in (no class)"), r.stdout)
        XCTAssertFalse(r.stdout.contains("assumes every record has an owner"), r.stdout)

        let w = try expect(0, ["why", a, "Other", "--classes", "TabBar"])
        XCTAssertTrue(w.stdout.contains("Other: skipped: RST_SKIP_NO_FACTORY"), w.stdout)
        XCTAssertTrue(w.stdout.contains("no host or plugin provides class 'Gone'"), w.stdout)
        let d = try expect(0, ["why", a, "Tabs/Detail", "--classes", "TabBar"])
        XCTAssertTrue(d.stdout.contains("Tabs/Detail: skipped: RST_SKIP_NO_FACTORY"), d.stdout)
        let m = try expect(0, ["why", a, "Tabs/Detail/Map", "--classes", "TabBar"])
        XCTAssertTrue(m.stdout.contains("skipped: RST_SKIP_PARENT_SKIPPED"), m.stdout)
        let s = try expect(0, ["why", a, "Settings", "--classes", "TabBar"])
        XCTAssertTrue(s.stdout.contains("Settings: restored: the object the build registers at this path"), s.stdout)
        let j = try expect(0, ["why", "--json", a, "Tabs", "--classes", "TabBar"])
        XCTAssertTrue(j.stdout.contains(#""outcome": "build class""#) && j.stdout.contains(#""classes": ["TabBar"]"#), j.stdout)
        // A build without TabBar skips Tabs.
        let none = try expect(0, ["why", a, "Tabs", "--classes", "X"])
        XCTAssertTrue(none.stdout.contains("Tabs: skipped: RST_SKIP_NO_FACTORY"), none.stdout)
    }

    /// --plugins adds the plugins' classes to the build's; a plugin that
    /// declines skips as in the app; a build class hides a plugin class.
    func testClassesWithPlugins() throws {
        let dir = TempDir("build-plugins")
        let plugins = try Fixtures.pluginDirectory(dir)
        let a = try buildArchive(dir)
        let r = try expect(0, ["restore", a, "--explain", "--classes", "MapPane", "--plugins", plugins])
        for s in ["Tabs  [plugin libtestpanes.so: class TabBar]",
                  "  Tabs/Detail  RST_SKIP_DECLINED (class CountryDetail)",
                  "  Tabs/Detail/Map  RST_SKIP_PARENT_SKIPPED"] {
            XCTAssertTrue(r.stdout.contains(s), "restore lacks \(s):\n\(r.stdout)")
        }
        let h = try expect(0, ["restore", a, "--classes", "TabBar", "--plugins", plugins])
        XCTAssertTrue(h.stdout.contains("Tabs  [class TabBar, registered by the build (--classes)]"), h.stdout)
    }

    /// A malformed list is a usage error naming the name.
    func testBadClassLists() throws {
        let dir = TempDir("build-bad")
        let a = try buildArchive(dir)
        for list in ["A,,B", "", " , A", "A,"] {
            let r = try ctl(["why", a, "Tabs", "--classes", list])
            XCTAssertEqual(r.code, 2, r.description)
            XCTAssertTrue(r.stderr.contains("--classes"), r.description)
        }
    }
}
