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
    static let notes = #"""
    #define _POSIX_C_SOURCE 200809L
    #define RST_PLUGIN
    #include <restoration_plugin.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>

    #ifndef INIT_RESULT
    #define INIT_RESULT 0
    #endif

    RST_PLUGIN_DEFINE_API;

    /* 0 -> 1: "text" becomes "body". */
    static rst_status to1(rst_coder *c, uint32_t from, void *ctx) {
        (void)from; (void)ctx;
        return rst_coder_rename(c, "text", "body");
    }
    /* 1 -> 2: add "words", the number of words of "body". */
    static rst_status to2(rst_coder *c, uint32_t from, void *ctx) {
        (void)from; (void)ctx;
        const char *body = NULL;
        rst_status s = rst_decode_string(c, "body", &body, NULL);
        if (s != RST_OK) return s;
        int64_t words = *body ? 1 : 0;
        for (const char *p = body; *p; p++) if (*p == ' ') words++;
        return rst_encode_int(c, "words", words);
    }

    static int fx_init(rst_engine *e, void **ctx) {
        (void)ctx;
        if (!RST_HOST_API_HAS(rst_plugin_api__, coder_rename)) return 2;   /* a 1.0 host */
        if (rst_set_class_version(e, "Note", 2) != RST_OK) return 3;
        if (rst_register_migration(e, "Note", 0, to1, NULL) != RST_OK) return 4;
        if (rst_register_migration(e, "Note", 1, to2, NULL) != RST_OK) return 5;
        return INIT_RESULT;
    }

    static void desc_release(void *inst) { free(inst); }
    static const rst_object_callbacks desc_callbacks = { NULL, NULL, NULL, desc_release };

    RST_PLUGIN_EXPORT rst_object *make_note(rst_engine *e, rst_object *p, const char *i, rst_coder *c) {
        const char *body = "?";
        int64_t words = -1;
        rst_decode_string(c, "body", &body, NULL);
        rst_decode_int(c, "words", &words);
        char *desc = malloc(256);
        snprintf(desc, 256, "v%u body=%s words=%lld text=%d", (unsigned)rst_coder_class_version(c), body,
                 (long long)words, rst_coder_contains(c, "text"));
        rst_object *o = NULL;
        if (rst_register_object(e, i, p, "Note", &desc_callbacks, desc, &o) != RST_OK) { free(desc); return NULL; }
        return o;
    }

    static const rst_plugin_class classes[] = { { "Note", "make_note", "EPIC" } };
    static const rst_plugin_manifest manifest = {
        RST_PLUGIN_ABI_VERSION, "notes", "2.0", 1, classes, fx_init, NULL, RST_PLUGIN_MANIFEST_SIZE, 0, { 0 } };
    RST_PLUGIN_EXPORT const rst_plugin_manifest *rst_plugin_manifest_v1(const rst_host_api *api) {
        RST_PLUGIN_INIT(api);
        return &manifest;
    }
    """#

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
