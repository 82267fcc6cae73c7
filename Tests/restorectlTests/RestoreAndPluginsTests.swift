// restore (a headless restore through the real engine) and plugins, with a
// C plugin compiled here against Include/restoration_plugin.h, and an archive
// saved by a C host through librestoration.so.
import Foundation
import RestorationArchive
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The text of C/<name>, next to this file: the C programs these tests
/// compile, kept as C files (excluded from the target in Package.swift).
private func cFixture(_ name: String) -> String {
    let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("C/" + name).path
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
        fatalError("the C fixture \(path) cannot be read")
    }
    return text
}

enum Fixtures {
    /// A plugin: TabBar (creates its object), CountryDetail (always declines),
    /// Broken (a missing factory symbol: that class alone is rejected).
    static let pluginSource = cFixture("testpanes_plugin.c")

    /// A host that saves a small tree through librestoration.so.
    static let hostSource = cFixture("small_tree_host.c")

    /// Compiles `source` with cc; nil (and the reason) when that is impossible here.
    static func compile(_ source: String, to output: String, in dir: TempDir, shared: Bool) throws -> String? {
        guard let cc = Ctl.cCompiler?.first, let ccFlags = Ctl.cCompiler?.dropFirst() else { throw XCTSkip("no C compiler") }
        let src = dir.file(shared ? "plugin.c" : "host.c")
        _ = FileManager.default.createFile(atPath: src, contents: Data(source.utf8))
        var args = ["-std=c11", "-Wall", "-Wextra", "-I", Ctl.repo + "/Include", src, "-o", output]
        if shared {
            args = ["-shared", "-fPIC", "-fvisibility=hidden"] + args
        } else {
            guard let bin = Ctl.bin, FileManager.default.fileExists(atPath: bin + "/librestoration.so") else {
                throw XCTSkip("librestoration.so is not built next to the tests")
            }
            args += ["-L", bin, "-lrestoration", "-Wl,-rpath," + bin]
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: cc)
        p.arguments = Array(ccFlags) + args
        let err = Pipe()
        p.standardError = err
        try p.run()
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, "cc failed: \(text)")
        return p.terminationStatus == 0 ? output : nil
    }

    /// DIR/plugins with the test plugin (0644) and a file that is not a plugin.
    static func pluginDirectory(_ dir: TempDir) throws -> String {
        let plugins = dir.file("plugins")
        try FileManager.default.createDirectory(atPath: plugins, withIntermediateDirectories: false)
        chmod(plugins, 0o755)
        guard try compile(pluginSource, to: plugins + "/libtestpanes.so", in: dir, shared: true) != nil else {
            throw XCTSkip("the test plugin did not compile")
        }
        chmod(plugins + "/libtestpanes.so", 0o644)
        return plugins
    }
}

final class RestoreAndPluginsTests: XCTestCase {
    func testRestoreWithoutPluginsUsesStandIns() throws {
        let dir = TempDir("restore")
        let a = dir.file("a.rst")
        Archives.write(try Archives.everyType(), to: a)
        let r = try expect(0, ["restore", a])
        for s in ["1. Tabs  [stand-in (class TabBar not provided)]",
                  "2. Tabs/Numbers  [stand-in (class NumberPane not provided)]",
                  "3. Tabs/Detail  [stand-in (class CountryDetail not provided)]",
                  "4. Tabs/Detail/Map  [stand-in (class MapPane not provided)]",
                  "5. Settings  [stand-in (no class)]",
                  "i_min: int = -9223372036854775808", "owner: object -> Tabs/Detail/Map",
                  "report: archived 5, restored 5, skipped 0",
                  "did_finish_restoring called"] {
            XCTAssertTrue(r.stdout.contains(s), "restore lacks \(s):\n\(r.stdout)")
        }
        XCTAssertFalse(r.stdout.contains("finished was not called"), r.stdout)
        // The archive is left as it was, and no marker is left beside it.
        XCTAssertEqual([UInt8](FileManager.default.contents(atPath: a)!), try Archives.everyType())
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["a.rst"])
    }

    func testRestoreJSON() throws {
        let dir = TempDir("restore-json")
        let a = dir.file("a.rst")
        Archives.write(try Archives.small(extra: true), to: a)
        let r = try expect(0, ["restore", "--json", a])
        for s in ["\"outcome\": \"stand-in\"", "\"decode_index\": 0", "\"restored\": 3", "\"skipped\": []",
                  "{\"key\": \"list\", \"type\": \"object\", \"value\": \"Tabs/List\"}"] {
            XCTAssertTrue(r.stdout.contains(s), "restore --json lacks \(s):\n\(r.stdout)")
        }
    }

    func testRestoreThroughPlugins() throws {
        let dir = TempDir("restore-plugins")
        let plugins = try Fixtures.pluginDirectory(dir)
        let a = dir.file("a.rst")
        // Tabs (TabBar: the plugin makes it), Tabs/Detail (CountryDetail: the
        // plugin declines), Tabs/Detail/Map (parent skipped), Settings (stand-in).
        let doc = ArchiveDocument(info: Archives.info, objects: [
            ArchiveObject(identifier: "Tabs", className: "TabBar", entries: [
                ArchiveEntry(key: "selectedTab", value: .int(4)),
                ArchiveEntry(key: "detail", value: .object(record: 1))]),
            ArchiveObject(identifier: "Detail", parent: 0, className: "CountryDetail",
                          entries: [ArchiveEntry(key: "country", value: .string("NO"))]),
            ArchiveObject(identifier: "Map", parent: 1, className: "MapPane"),
            ArchiveObject(identifier: "Settings", className: nil, entries: [
                ArchiveEntry(key: "tabs", value: .object(record: 0)),
                ArchiveEntry(key: "detail", value: .object(record: 1))]),
        ])
        Archives.write(try doc.encode(), to: a)
        let resaved = dir.file("resaved.rst")
        let r = try expect(0, ["restore", a, "--plugins", plugins, "--save-to", resaved])
        for s in ["1. Tabs  [plugin libtestpanes.so: class TabBar]",
                  "(values as archived; the plugin decoded them)",
                  "2. Settings  [stand-in (no class)]",
                  "tabs: object -> Tabs", "detail: object -> Tabs/Detail (skipped)",
                  "Tabs/Detail  (class CountryDetail)  [skipped: plugin factory declined]",
                  "Tabs/Detail/Map  (class MapPane)  [skipped: parent skipped]",
                  "report: archived 4, restored 2, skipped 2, plugins loaded 1, plugins rejected 0",
                  "factory symbol 'no_such_symbol'"] {
            XCTAssertTrue(r.stdout.contains(s), "restore lacks \(s):\n\(r.stdout)")
        }
        // The engine saved the plugin's object through the plugin's encode.
        let saved = try ArchiveDocument(bytes: [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: resaved))))
        XCTAssertEqual(saved.objects.map(\.identifier), ["Tabs", "Settings"])
        XCTAssertEqual(saved.objects[0].entries, [ArchiveEntry(key: "madeBy", value: .string("plugin"))])
        XCTAssertEqual(saved.objects[1].entries, [ArchiveEntry(key: "tabs", value: .object(record: 0))])

        let j = try expect(0, ["restore", "--json", a, "--plugins", plugins])
        for s in ["\"outcome\": \"plugin\"", "\"reason\": \"plugin factory declined\"", "\"reason\": \"parent skipped\"", "\"plugins_loaded\": 1"] {
            XCTAssertTrue(j.stdout.contains(s), "restore --json lacks \(s):\n\(j.stdout)")
        }
    }

    func testPluginsSubcommand() throws {
        let dir = TempDir("plugins")
        let plugins = try Fixtures.pluginDirectory(dir)
        let r = try expect(0, ["plugins", plugins])
        for s in ["1 loaded, 0 rejected", "libtestpanes.so", "\"testpanes\" version \"1.0\"", "state    loaded",
                  "class    TabBar  factory make_tabs  signature \"EPIC\"  usable",
                  "class    CountryDetail  factory decline  signature \"R\"  usable",
                  "class    Broken  factory no_such_symbol  signature \"E\"  not usable:"] {
            XCTAssertTrue(r.stdout.contains(s), "plugins lacks \(s):\n\(r.stdout)")
        }
        let j = try expect(0, ["plugins", "--json", plugins])
        XCTAssertTrue(j.stdout.contains("\"state\": \"loaded\""), j.stdout)

        // A file that is not a shared object is rejected, with the reason: exit 8.
        let junk = plugins + "/libjunk.so"
        _ = FileManager.default.createFile(atPath: junk, contents: Data("not an ELF file".utf8))
        chmod(junk, 0o644)
        let bad = try ctl(["plugins", plugins])
        XCTAssertEqual(bad.code, 8, "\(bad)")
        XCTAssertTrue(bad.stdout.contains("libjunk.so"), bad.stdout)
        XCTAssertTrue(bad.stdout.contains("REJECTED:"), bad.stdout)
        // A world-writable plugin is rejected too.
        unlink(junk)
        chmod(plugins + "/libtestpanes.so", 0o666)
        let ww = try ctl(["plugins", plugins])
        XCTAssertEqual(ww.code, 8, "\(ww)")
        chmod(plugins + "/libtestpanes.so", 0o644)
        // Not a directory: exit 8.
        try expect(8, ["plugins", plugins + "/libtestpanes.so"])
        try expect(8, ["restore", dir.file("x.rst"), "--plugins", plugins + "/libtestpanes.so"])
    }

    /// An archive written by a C host through librestoration.so's rst_save.
    func testArchiveSavedByACHost() throws {
        let dir = TempDir("chost")
        guard let host = try Fixtures.compile(Fixtures.hostSource, to: dir.file("host"), in: dir, shared: false) else { return }
        let a = dir.file("host.rst")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: host)
        p.arguments = [a]
        try p.run()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
        try expect(0, ["verify", a])
        let r = try expect(0, ["inspect", a])
        for s in ["app version     \"9.9\"", "idiom           \"kiosk\"", "Tabs  class TabBar", "Tabs/Detail  class CountryDetail",
                  "Settings  (no class)", "current: object -> Tabs/Detail", "big: int = -9223372036854775808",
                  "ids: int_array[3] = [1, -2, 9007199254740993]", "raw: bytes[3] = 0102ff", "lat: double = 59.91",
                  "zoom: double = 0.1", "pinned: bool = false"] {
            XCTAssertTrue(r.stdout.contains(s), "inspect lacks \(s):\n\(r.stdout)")
        }
        // The round trip, byte for byte on values.
        let json = try expect(0, ["inspect", "--json", a])
        let b = dir.file("copy.rst")
        try expect(0, ["save", "--from", "-", "--out", b], stdin: json.stdoutBytes)
        XCTAssertEqual(try expect(0, ["inspect", "--json", b]).stdout, json.stdout)
        let x = try ArchiveDocument(bytes: [UInt8](FileManager.default.contents(atPath: a)!))
        let y = try ArchiveDocument(bytes: [UInt8](FileManager.default.contents(atPath: b)!))
        XCTAssertEqual(x.objects, y.objects)
        XCTAssertEqual(x.info, y.info)
        try expect(0, ["diff", a, b])
        try expect(0, ["restore", a])
        // discard removes what the engine keeps (the save lock) as well.
        let d = try expect(0, ["discard", a])
        XCTAssertTrue(d.stdout.contains(a))
        XCTAssertFalse(FileManager.default.fileExists(atPath: a))
        XCTAssertFalse(FileManager.default.fileExists(atPath: a + ".lock"))
    }
}
