// Every subcommand's exit codes, a corrupt file for each subcommand that
// reads one, and the one-line error on stderr.
import Foundation
import RestorationArchive
import XCTest
#if canImport(Glibc)
import Glibc
#endif

final class ExitCodeTests: XCTestCase {
    /// good.rst, corrupt variants, a future-version archive, a huge file.
    final class Fixture {
        let dir = TempDir("exit")
        var good: String { dir.file("good.rst") }
        var bitflip: String { dir.file("bitflip.rst") }
        var truncated: String { dir.file("truncated.rst") }
        var foreign: String { dir.file("foreign.rst") }
        var future: String { dir.file("future.rst") }
        var missing: String { dir.file("missing.rst") }
        let bytes: [UInt8]

        init() throws {
            bytes = try Archives.everyType()
            Archives.write(bytes, to: dir.file("good.rst"))
            var flipped = bytes
            flipped[bytes.count / 2] ^= 0x10
            Archives.write(flipped, to: dir.file("bitflip.rst"))
            Archives.write(Array(bytes.prefix(bytes.count - 9)), to: dir.file("truncated.rst"))
            Archives.write(Array("this is not an archive at all, just some text\n".utf8), to: dir.file("foreign.rst"))
            var v2 = bytes
            v2[8] = 2  // the format version (little-endian u16 after the magic)
            Archives.write(v2, to: dir.file("future.rst"))
        }
    }

    func testCorruptFileForEverySubcommandThatReadsOne() throws {
        let f = try Fixture()
        for bad in [f.bitflip, f.truncated, f.foreign] {
            for args in [["inspect", bad], ["inspect", "--json", bad], ["verify", bad], ["restore", bad],
                         ["diff", f.good, bad], ["diff", bad, f.good], ["graph", bad]] {
                let r = try expect(4, args)
                XCTAssertTrue(r.stderr.contains(bad), "the message names the file: \(r.stderr)")
                XCTAssertTrue(r.stderr.contains("corrupt"), r.stderr)
                XCTAssertEqual(r.stdout, "", "nothing is printed from a corrupt archive: \(r)")
            }
        }
        // The message says where validation failed.
        let r = try expect(4, ["verify", f.bitflip])
        XCTAssertTrue(r.stderr.contains("byte"), r.stderr)
        let t = try expect(4, ["verify", f.truncated])
        XCTAssertTrue(t.stderr.contains("byte"), t.stderr)
        // restore never writes a crash marker or sets the archive aside.
        XCTAssertFalse(FileManager.default.fileExists(atPath: f.bitflip + ".restoring"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: f.bitflip))
    }

    func testUnsupportedVersion() throws {
        let f = try Fixture()
        for args in [["verify", f.future], ["inspect", f.future], ["restore", f.future], ["graph", f.future], ["diff", f.good, f.future]] {
            let r = try expect(5, args)
            XCTAssertTrue(r.stderr.contains("version"), r.stderr)
        }
    }

    func testMissingFile() throws {
        let f = try Fixture()
        for args in [["verify", f.missing], ["inspect", f.missing], ["restore", f.missing], ["graph", f.missing],
                     ["diff", f.good, f.missing], ["discard", f.missing], ["save", "--from", f.missing, "--out", f.dir.file("o.rst")],
                     ["plugins", f.dir.file("no-such-dir")], ["restore", f.good, "--plugins", f.dir.file("no-such-dir")]] {
            let r = try expect(3, args)
            XCTAssertTrue(r.stderr.contains(f.dir.path), "the message names the file: \(r.stderr)")
        }
    }

    func testIOErrors() throws {
        let f = try Fixture()
        // A directory is not an archive.
        for args in [["verify", f.dir.path], ["inspect", f.dir.path], ["graph", f.dir.path]] {
            try expect(7, args)
        }
    }

    func testLimitExceeded() throws {
        let f = try Fixture()
        // A (sparse) file above RST_MAX_ARCHIVE_BYTES is refused before it is read.
        let huge = f.dir.file("huge.rst")
        _ = FileManager.default.createFile(atPath: huge, contents: nil)
        XCTAssertEqual(truncate(huge, off_t(ArchiveLimits.maxArchiveBytes + 1)), 0)
        for args in [["verify", huge], ["inspect", huge], ["restore", huge]] {
            let r = try expect(6, args)
            XCTAssertTrue(r.stderr.contains("limit"), r.stderr)
        }
    }

    func testUsageErrorsExit2() throws {
        let f = try Fixture()
        for args in [["inspect"], ["verify"], ["frobnicate"], ["inspect", "--bogus", f.good], ["diff", f.good],
                     ["save", "--from", "x.json"], ["graph", "--format", "png", f.good], ["verify", f.good, f.good]] {
            try expect(2, args)
        }
    }

    func testHelpHasAnExampleAndTheExitCodes() throws {
        for sub in ["", "inspect", "verify", "save", "restore", "plugins", "diff", "graph", "discard"] {
            let args = sub.isEmpty ? ["--help"] : [sub, "--help"]
            let r = try expect(0, args)
            XCTAssertTrue(r.stdout.contains("EXAMPLES"), "\(sub) --help has no example")
            XCTAssertTrue(r.stdout.contains("restorectl \(sub)"), "\(sub) --help shows no command line")
            XCTAssertTrue(r.stdout.contains("EXIT CODES"), "\(sub) --help does not document the exit codes")
            for code in ["0  ok", "2  usage", "3  not found", "4  corrupt", "5  unsupported version", "6  limit", "7  I/O", "8  plugin", "9  rejected"] {
                XCTAssertTrue(r.stdout.contains(code), "\(sub) --help lacks exit code '\(code)'")
            }
        }
        XCTAssertTrue(try expect(0, ["inspect", "--help"]).stdout.contains("\"format_version\""), "inspect --help documents the JSON schema")
        try expect(0, ["--version"])
    }

    func testInspectAndVerifySucceed() throws {
        let f = try Fixture()
        let v = try expect(0, ["verify", f.good])
        XCTAssertTrue(v.stdout.contains("is valid"))
        XCTAssertEqual(try expect(0, ["verify", "--quiet", f.good]).stdout, "")
        let r = try expect(0, ["inspect", f.good])
        for s in ["format version  1", "app version     \"2.5 (build 77)\"", "idiom           \"desktop\"", "objects         5",
                  "Tabs/Detail/Map  class MapPane", "Settings  (no class)", "selectedTab: int = 2",
                  "i_max: int = 9223372036854775807", "d_nan: double = nan", "current: object -> Tabs/Detail",
                  "center: record {", "owner: object -> Tabs/Detail/Map", "future: unknown (tag 13) [4] = deadbeef",
                  "rows: string_array[4] = [\"NL\", \"NO\", \"\", \"NZ \\\"quoted\\\" \\\\ back\"]"] {
            XCTAssertTrue(r.stdout.contains(s), "inspect lacks \(s):\n\(r.stdout)")
        }
        // Long bytes are shortened unless --full.
        XCTAssertTrue(r.stdout.contains("blob: bytes[200] = 000102"), r.stdout)
        XCTAssertTrue(r.stdout.contains("--full shows all"), r.stdout)
        let full = try expect(0, ["inspect", "--full", f.good])
        XCTAssertTrue(full.stdout.contains("c4c5c6c7"), "--full shows every byte")
    }

    /// B7.4: archive strings never reach the terminal raw.
    func testControlCharactersAreEscaped() throws {
        let f = try Fixture()
        for args in [["inspect", f.good], ["inspect", "--json", f.good], ["restore", f.good], ["restore", "--json", f.good], ["graph", f.good]] {
            let r = try expect(0, args)
            XCTAssertFalse(r.stdoutBytes.contains(byte: 0x1B), "ESC reached stdout: \(args)")
            XCTAssertFalse(r.stdoutBytes.contains(byte: 0x07), "BEL reached stdout: \(args)")
            XCTAssertFalse(r.stdoutBytes.contains(byte: 0x0D), "CR reached stdout: \(args)")
            XCTAssertFalse(r.stdout.contains("\u{202E}"), "a bidi override reached stdout: \(args)")
        }
        let r = try expect(0, ["inspect", f.good])
        XCTAssertTrue(r.stdout.contains(#"hostile: string = "\u{1B}]0;pwned\u{7}\u{1B}[2J\r\u{202E}evil""#), r.stdout)
        // Hostile names in error messages too.
        let evil = f.dir.file("evil\u{1B}[31m.rst")
        let e = try expect(3, ["verify", evil])
        XCTAssertFalse(e.stderr.contains("\u{1B}"))
    }

    func testDiff() throws {
        let dir = TempDir("diff")
        let a = dir.file("a.rst"), b = dir.file("b.rst"), c = dir.file("c.rst")
        Archives.write(try Archives.small(), to: a)
        Archives.write(try Archives.small(), to: c)
        Archives.write(try Archives.small(app: "1.1", tab: 3, extra: true), to: b)
        XCTAssertTrue(try expect(0, ["diff", a, c]).stdout.contains("no differences"))
        let r = try expect(1, ["diff", a, b])
        XCTAssertEqual(r.stderr, "")
        for s in ["~ info app version: \"1.0\" -> \"1.1\"", "+ Tabs/Extra  class Pane", "~ Tabs", "~ selectedTab: int = 1 -> int = 3"] {
            XCTAssertTrue(r.stdout.contains(s), "diff lacks \(s):\n\(r.stdout)")
        }
        let back = try expect(1, ["diff", b, a])
        XCTAssertTrue(back.stdout.contains("- Tabs/Extra  class Pane"), back.stdout)

        // Re-classed objects, removed and changed keys, nested records by key path.
        let x = try ArchiveDocument(info: Archives.info, objects: [
            ArchiveObject(identifier: "R", className: "Old", entries: [
                ArchiveEntry(key: "gone", value: .bool(true)),
                ArchiveEntry(key: "rec", value: .record([ArchiveEntry(key: "n", value: .double(1))]))])]).encode()
        let y = try ArchiveDocument(info: Archives.info, objects: [
            ArchiveObject(identifier: "R", className: "New", entries: [
                ArchiveEntry(key: "rec", value: .record([ArchiveEntry(key: "n", value: .double(2))])),
                ArchiveEntry(key: "new", value: .string("hi"))])]).encode()
        Archives.write(x, to: dir.file("x.rst"))
        Archives.write(y, to: dir.file("y.rst"))
        let d = try expect(1, ["diff", dir.file("x.rst"), dir.file("y.rst")])
        for s in ["class: Old -> New", "- gone: bool = true", "~ rec.n: double = 1.0 -> double = 2.0", "+ new: string = \"hi\""] {
            XCTAssertTrue(d.stdout.contains(s), "diff lacks \(s):\n\(d.stdout)")
        }
    }

    func testGraph() throws {
        let f = try Fixture()
        let r = try expect(0, ["graph", f.good])
        XCTAssertTrue(r.stdout.hasPrefix("digraph restoration {"), r.stdout)
        XCTAssertTrue(r.stdout.contains("r0 -> r1;"), "parent edge: \(r.stdout)")
        XCTAssertTrue(r.stdout.contains("r2 -> r1 [style=dashed, label=\"source\""), "reference edge: \(r.stdout)")
        XCTAssertTrue(r.stdout.contains("r2 -> r3 [style=dashed, label=\"center.meta.owner\""), "nested reference edge: \(r.stdout)")
        XCTAssertTrue(r.stdout.contains("label=\"1. Tabs\\nTabBar\""), r.stdout)
        // Decode order: Tabs references Detail (its child), Detail references
        // Numbers and Map, Map references Detail: one strongly connected
        // component, decoded in archive order; Settings last.
        XCTAssertTrue(r.stdout.contains("label=\"2. Numbers\\nNumberPane\""), r.stdout)
        XCTAssertTrue(r.stdout.contains("label=\"3. Detail\\nCountryDetail\""), r.stdout)
        XCTAssertTrue(r.stdout.contains("label=\"4. Map\\nMapPane\""), r.stdout)
        XCTAssertTrue(r.stdout.hasSuffix("}\n"))
        if Ctl.hasDot {
            let svg = try expect(0, ["graph", "--format", "svg", f.good])
            XCTAssertTrue(svg.stdout.contains("<svg"), svg.stdout)
        } else {
            let e = try expect(7, ["graph", "--format", "svg", f.good])
            XCTAssertTrue(e.stderr.contains("graphviz 'dot' is not installed; use --format dot"), e.stderr)
        }
        // Without dot on PATH at all.
        let p = Process()
        let dir = TempDir("nodot")
        p.executableURL = URL(fileURLWithPath: try Ctl.binary())
        p.arguments = ["graph", "--format", "svg", f.good]
        // Keep the sanitizer settings (make test-asan's LSan suppressions); none otherwise.
        p.environment = ProcessInfo.processInfo.environment.filter { $0.key.hasSuffix("SAN_OPTIONS") }
            .merging(["PATH": dir.path]) { _, new in new }
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 7)
    }

    func testDiscard() throws {
        let dir = TempDir("discard")
        let a = dir.file("state.rst")
        Archives.write(try Archives.small(), to: a)
        let beside = [a + ".crashed-1732255140123", a + ".restoring", a + ".lock", a + ".tmp-99-1"]
        for p in beside { _ = FileManager.default.createFile(atPath: p, contents: Data("x".utf8)) }
        let other = dir.file("state.rst-unrelated")
        _ = FileManager.default.createFile(atPath: other, contents: nil)
        let dry = try expect(0, ["discard", "--dry-run", a])
        for p in [a] + beside { XCTAssertTrue(dry.stdout.contains(p), "not listed: \(p)\n\(dry.stdout)") }
        for p in [a] + beside { XCTAssertTrue(FileManager.default.fileExists(atPath: p), "--dry-run removed \(p)") }
        let r = try expect(0, ["discard", a])
        XCTAssertTrue(r.stdout.contains(beside[0]))
        for p in [a] + beside { XCTAssertFalse(FileManager.default.fileExists(atPath: p), "not removed: \(p)") }
        XCTAssertTrue(FileManager.default.fileExists(atPath: other), "an unrelated file was removed")
        try expect(3, ["discard", a])
        // A set-aside copy alone is still discarded.
        _ = FileManager.default.createFile(atPath: beside[0], contents: nil)
        try expect(0, ["discard", a])
        XCTAssertFalse(FileManager.default.fileExists(atPath: beside[0]))
    }

    /// B7.3: save and restore never go through a symbolic link.
    func testSymlinksAreRefused() throws {
        let f = try Fixture()
        let link = f.dir.file("link.rst")
        XCTAssertEqual(symlink(f.good, link), 0)
        try expect(9, ["restore", link])
        let json = try expect(0, ["inspect", "--json", f.good])
        try expect(9, ["save", "--from", "-", "--out", link], stdin: json.stdoutBytes)
        try expect(9, ["restore", f.good, "--save-to", link])
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: link), f.good, "the link was replaced")
        // inspect and verify may read through a link.
        try expect(0, ["verify", link])
    }

    func testSaveFailuresLeaveTheOldArchive() throws {
        let f = try Fixture()
        let before = FileManager.default.contents(atPath: f.good)
        try expect(4, ["save", "--from", "-", "--out", f.good], stdin: Array("{\"objects\": 3}".utf8))
        XCTAssertEqual(FileManager.default.contents(atPath: f.good), before)
        try expect(7, ["save", "--from", "-", "--out", f.dir.file("no/such/dir/x.rst")], stdin: Array("{\"objects\": []}".utf8))
    }
}
