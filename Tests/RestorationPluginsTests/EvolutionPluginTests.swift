import CRestoration
import RestorationCore
import RestorationPlugins
import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Class versions and skips (docs/EVOLUTION.md) from plugins: a plugin that versions its
/// class and registers migrations from `init`, through the appended host
/// table members; a rejected plugin's class explained as PLUGIN_REJECTED.
final class EvolutionPluginTests: XCTestCase {
    static let notes = cFixture("evolution_notes.c")

    func testAPluginVersionsItsClassAndMigratesFromInit() throws {
        let tmp = TempDir()
        let plugins = tmp.sub("plugins")
        try compilePlugin(Self.notes, to: plugins + "/notes.so")
        // Saved by the 1.0 app: class Note, no version, "text".
        let saver = createEngine(pluginDir: nil)
        let host = HostObjects()
        host.register(saver, "Root")
        host.register(saver, "Root/N", className: "Note", state: HostState(strings: ["text": "three small words"]))
        let bytes = saveToBytes(saver)
        rst_engine_destroy(saver)

        let log = LogSink()
        let e = createEngine(pluginDir: plugins, log: log)
        defer { rst_engine_destroy(e); _ = log }
        let host2 = HostObjects()
        host2.register(e, "Root")
        restore(e, bytes)
        XCTAssertEqual(instanceText(e, "Root/N"), "v2 body=three small words words=3 text=0",
                       log.messages(atLeast: 0).joined(separator: "\n"))
        XCTAssertEqual(report(e).skipped, 0)
        // The next save stores version 2.
        let again = saveToBytes(e)
        XCTAssertEqual(again[10], 1, "header flag 1: record versions")
    }

    func testARejectedPluginsClassIsExplained() throws {
        let tmp = TempDir()
        let plugins = tmp.sub("plugins")
        try compilePlugin(Self.notes, to: plugins + "/notes.so", defines: ["INIT_RESULT=7"])
        let saver = createEngine(pluginDir: nil)
        let host = HostObjects()
        host.register(saver, "N", className: "Note", state: HostState(strings: ["text": "x"]))
        host.register(saver, "N/Child")
        let bytes = saveToBytes(saver)
        rst_engine_destroy(saver)

        let log = LogSink()
        let e = createEngine(pluginDir: plugins, log: log)
        defer { rst_engine_destroy(e); _ = log }
        restore(e, bytes)
        var out: UnsafeMutablePointer<rst_skipped_record>?
        var n = 0
        XCTAssertEqual(rst_last_restore_skips(e, &out, &n), RST_OK)
        defer { rst_free(out) }
        XCTAssertEqual(n, 2)
        XCTAssertEqual(UInt64(n), report(e).skipped)
        guard let out, n == 2 else { return }
        XCTAssertEqual(String(cString: out[0].path), "N")
        XCTAssertEqual(out[0].reason, RST_SKIP_PLUGIN_REJECTED.rawValue)
        XCTAssertTrue(String(cString: out[0].detail).contains("notes.so"), String(cString: out[0].detail))
        XCTAssertEqual(out[1].reason, RST_SKIP_PARENT_SKIPPED.rawValue)
    }

    /// Carried records with a real plugin: uninstalled, its records are carried through
    /// the saves; reinstalled, they come back (and migrate).
    func testRecordsOfAnUninstalledPluginAreCarriedAndComeBack() throws {
        let tmp = TempDir()
        let plugins = tmp.sub("plugins")
        let none = tmp.sub("none")
        try compilePlugin(Self.notes, to: plugins + "/notes.so")
        let saver = createEngine(pluginDir: nil)
        let host = HostObjects()
        host.register(saver, "Root")
        host.register(saver, "Root/N", className: "Note", state: HostState(strings: ["text": "carried all along"]))
        let v0 = saveToBytes(saver)
        rst_engine_destroy(saver)

        // The plugin is gone: a core engine carrying for 2 saves.
        var config = Engine.Configuration(pluginDirectory: none, crashGuard: false)
        config.carrySaves = 2
        let e = Engine(configuration: config)
        PluginLoader.attach(to: e, directory: none)
        defer { e.destroy() }
        _ = try e.register(identifier: "Root", parent: nil, className: nil, behavior: nil)
        try v0.withUnsafeBytes { b in try e.restore(bytes: b) }
        XCTAssertEqual(e.lastRestoreSkips.map(\.reason), [.noFactory])
        let s1 = try e.saveToBytes()
        XCTAssertEqual(try ArchiveReaderCount.records(s1), 2, "carried")

        // Reinstalled: restored normally, migrated by the plugin.
        let log = LogSink()
        let back = createEngine(pluginDir: plugins, log: log)
        defer { rst_engine_destroy(back); _ = log }
        let host2 = HostObjects()
        host2.register(back, "Root")
        restore(back, s1)
        XCTAssertEqual(instanceText(back, "Root/N"), "v2 body=carried all along words=3 text=0")
        XCTAssertEqual(report(back).skipped, 0)
    }
}

/// Record counts through the C ABI (this target does not import the archive module).
enum ArchiveReaderCount {
    static func records(_ bytes: [UInt8]) throws -> Int {
        let e = createEngine(pluginDir: nil)
        defer { rst_engine_destroy(e) }
        _ = bytes.withUnsafeBytes { rst_restore_from_buffer(e, $0.baseAddress, $0.count) }
        var r = rst_restore_report()
        _ = rst_last_restore_report(e, &r)
        return Int(r.archived)
    }
}
