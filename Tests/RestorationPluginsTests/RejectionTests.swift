import CRestoration
import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Discovery, validation and every rejection: explained (rst_list_plugins
/// and a WARNING log), counted, never a crash; conflicts; laziness.
final class RejectionTests: XCTestCase {
    /// An archive with one record of `className` under a host root "Root".
    static func archive(classes: [String]) -> [UInt8] {
        let e = createEngine(pluginDir: nil)
        defer { rst_engine_destroy(e) }
        let host = HostObjects()
        host.register(e, "Root")
        for (i, c) in classes.enumerated() { host.register(e, "Root/Obj\(i)", className: c) }
        return saveToBytes(e)
    }

    /// Restores `bytes` into a new engine over `plugins` (Root pre-registered).
    static func restoreWith(_ plugins: String, _ bytes: [UInt8], log: LogSink) -> (OpaquePointer, HostObjects) {
        let e = createEngine(pluginDir: plugins, log: log)
        let host = HostObjects()
        host.register(e, "Root")
        restore(e, bytes)
        return (e, host)
    }

    func testEveryKindOfBadFileIsRejectedExplainedAndCounted() throws {
        let tmp = TempDir()
        let plugins = tmp.sub("plugins")
        // A good plugin, so we can see the others do not stop it.
        try compilePlugin(Fixtures.simple, to: plugins + "/m-good.so", defines: ["TAG=\"good\""])
        // Not a loadable object at all.
        writeFile(plugins + "/a-not-elf.so", Data("hello, I am text\n".utf8))
        chmod(plugins + "/a-not-elf.so", 0o644)
        // Truncated ELF.
        let good = try Data(contentsOf: URL(fileURLWithPath: plugins + "/m-good.so"))
        writeFile(plugins + "/b-truncated.so", good.prefix(700))
        chmod(plugins + "/b-truncated.so", 0o644)
        // An ELF shared object for another machine.
        var foreign = good
        foreign[18] = 183  // EM_AARCH64 (or, on arm64, anything else)
        foreign[19] = 0
        #if arch(arm64)
        foreign[18] = 62
        #endif
        writeFile(plugins + "/b-foreign-machine.so", foreign)
        // No manifest symbol; NULL manifest; another ABI version; init fails.
        try compilePlugin(Fixtures.simple, to: plugins + "/c-no-manifest.so", defines: ["NO_MANIFEST", "TAG=\"nomanifest\"", "CLASS1=\"X1\"", "CLASS2=\"X2\""])
        try compilePlugin(Fixtures.simple, to: plugins + "/d-null-manifest.so", defines: ["NULL_MANIFEST", "TAG=\"nullmanifest\"", "CLASS1=\"X1\"", "CLASS2=\"X2\""])
        try compilePlugin(Fixtures.simple, to: plugins + "/e-abi3.so", defines: ["ABI=3", "TAG=\"abi3\"", "CLASS1=\"X1\"", "CLASS2=\"X2\""])
        try compilePlugin(Fixtures.simple, to: plugins + "/f-init-fails.so", defines: ["INIT_RESULT=7", "TAG=\"initfails\"", "CLASS1=\"X1\"", "CLASS2=\"X2\""])
        // Writable by group; writable by others.
        try compilePlugin(Fixtures.simple, to: plugins + "/g-group-writable.so", defines: ["TAG=\"gw\"", "CLASS1=\"X1\"", "CLASS2=\"X2\""])
        chmod(plugins + "/g-group-writable.so", 0o664)
        try compilePlugin(Fixtures.simple, to: plugins + "/h-world-writable.so", defines: ["TAG=\"ww\"", "CLASS1=\"X1\"", "CLASS2=\"X2\""])
        chmod(plugins + "/h-world-writable.so", 0o646)
        // Owned by someone else (only root can arrange that).
        let canChown = geteuid() == 0
        if canChown {
            try compilePlugin(Fixtures.simple, to: plugins + "/i-other-owner.so", defines: ["TAG=\"other\"", "CLASS1=\"X1\"", "CLASS2=\"X2\""])
            XCTAssertEqual(chown(plugins + "/i-other-owner.so", 4242, 4242), 0)
        }
        // A symlink to a good plugin (rejected), and a directory named like a plugin (not a plugin: skipped).
        XCTAssertEqual(symlink(plugins + "/m-good.so", plugins + "/j-symlink.so"), 0)
        mkdir(plugins + "/k-directory.so", 0o755)
        // A hard link: one file under two names loads once.
        XCTAssertEqual(link(plugins + "/m-good.so", plugins + "/n-hard-link.so"), 0)
        // Ignored entirely: hidden files, other names, subdirectories.
        try compilePlugin(Fixtures.simple, to: plugins + "/.hidden.so", defines: ["TAG=\"hidden\"", "CLASS1=\"X1\"", "CLASS2=\"X2\""])
        writeFile(plugins + "/README.txt", Data("x".utf8))
        writeFile(plugins + "/libfoo.so.1", Data("x".utf8))
        let nested = plugins + "/nested"
        mkdir(nested, 0o755)
        try compilePlugin(Fixtures.simple, to: nested + "/deep.so", defines: ["TAG=\"deep\"", "CLASS1=\"X1\"", "CLASS2=\"X2\""])

        let log = LogSink()
        let (e, _) = Self.restoreWith(plugins, Self.archive(classes: ["Simple1", "X1"]), log: log)
        defer { rst_engine_destroy(e) }

        let list = listPlugins(e)
        let byName = Dictionary(uniqueKeysWithValues: list.map { ($0.fileName, $0) })
        var expected = ["a-not-elf.so", "b-foreign-machine.so", "b-truncated.so", "c-no-manifest.so", "d-null-manifest.so", "e-abi3.so",
                        "f-init-fails.so", "g-group-writable.so", "h-world-writable.so", "j-symlink.so",
                        "m-good.so", "n-hard-link.so"]
        if canChown { expected.append("i-other-owner.so") }
        XCTAssertEqual(list.map(\.fileName), expected.sorted(), "sorted, *.so only, no dot-files, no recursion")

        func rejected(_ file: String, _ needle: String, line: UInt = #line) {
            guard let p = byName[file] else { return XCTFail("\(file) not listed", line: line) }
            XCTAssertEqual(p.state, RST_PLUGIN_REJECTED, "\(file): \(p.reason)", line: line)
            XCTAssertTrue(p.reason.contains(needle), "\(file): reason '\(p.reason)' lacks '\(needle)'", line: line)
            XCTAssertTrue(log.messages(atLeast: Int32(RST_LOG_WARNING)).contains { $0.contains(p.path) && $0.contains(needle) },
                          "\(file): no WARNING log with the reason", line: line)
        }
        rejected("a-not-elf.so", "not a loadable shared object")
        rejected("b-truncated.so", "truncated ELF")
        rejected("b-foreign-machine.so", "another machine")
        rejected("c-no-manifest.so", "does not export rst_plugin_manifest_v1")
        rejected("d-null-manifest.so", "returned NULL")
        rejected("e-abi3.so", "plugin ABI version 3")
        rejected("f-init-fails.so", "init returned 7")
        rejected("g-group-writable.so", "writable by group")
        rejected("h-world-writable.so", "writable by others")
        if canChown { rejected("i-other-owner.so", "owned by uid 4242") }
        rejected("j-symlink.so", "symbolic link")
        XCTAssertNil(byName["k-directory.so"], "a directory named *.so is not a plugin: neither listed nor counted as rejected")
        rejected("n-hard-link.so", "same file as 'm-good.so'")
        XCTAssertEqual(byName["m-good.so"]?.state, RST_PLUGIN_LOADED)
        XCTAssertEqual(byName["e-abi3.so"]?.name, "", "nothing of a rejected manifest is trusted")
        XCTAssertEqual(byName["f-init-fails.so"]?.name, "initfails", "the manifest was read before init failed")
        XCTAssertEqual(byName["f-init-fails.so"]?.classes.allSatisfy { !$0.usable }, true)

        let r = report(e)
        XCTAssertEqual(r.plugins_loaded, 1)
        XCTAssertEqual(r.plugins_rejected, UInt64(expected.count - 1))
        XCTAssertEqual(instanceText(e, "Root/Obj0"), "good:Simple1")
        XCTAssertNil(rst_find_object(e, "Root/Obj1"), "X1 is only offered by rejected plugins")

        // init failed: its fini never runs, not even at destroy.
        XCTAssertEqual(fixtureCounter(plugins + "/f-init-fails.so", "fixture_init_calls"), 1)
        XCTAssertEqual(fixtureCounter(plugins + "/f-init-fails.so", "fixture_fini_calls"), 0)
        // Files rejected before dlopen were never mapped.
        XCTAssertFalse(isLoaded(plugins + "/g-group-writable.so"))
        XCTAssertFalse(isLoaded(plugins + "/h-world-writable.so"))
        XCTAssertFalse(isLoaded(nested + "/deep.so"))
        XCTAssertFalse(isLoaded(plugins + "/.hidden.so"))
    }

    func testInitFailureRunsNoFini() throws {
        let tmp = TempDir()
        let plugins = tmp.sub("plugins")
        let so = plugins + "/init-fails.so"
        try compilePlugin(Fixtures.signatures, to: so, defines: ["INIT_RESULT=1"])
        let log = LogSink()
        let (e, _) = Self.restoreWith(plugins, Self.archive(classes: ["EPIC"]), log: log)
        let r = report(e)
        XCTAssertEqual(r.plugins_loaded, 0)
        XCTAssertEqual(r.plugins_rejected, 1)
        XCTAssertEqual(r.skipped, 1)
        XCTAssertTrue(log.contains("init returned 1", level: Int32(RST_LOG_WARNING)))
        rst_engine_destroy(e)
        XCTAssertEqual(fixtureCounter(so, "fixture_init_calls"), 1)
        XCTAssertEqual(fixtureCounter(so, "fixture_fini_calls"), 0)
    }

    func testGroupWritablePluginDirRejectsEverything() throws {
        let tmp = TempDir()
        let plugins = tmp.sub("plugins")
        try compilePlugin(Fixtures.simple, to: plugins + "/ok.so")
        chmod(plugins, 0o775)
        let log = LogSink()
        let (e, _) = Self.restoreWith(plugins, Self.archive(classes: ["Simple1"]), log: log)
        defer { rst_engine_destroy(e) }
        let list = listPlugins(e)
        XCTAssertEqual(list.count, 1)
        XCTAssertEqual(list.first?.state, RST_PLUGIN_REJECTED)
        XCTAssertTrue(list.first?.reason.contains("plugin_dir") == true && list.first?.reason.contains("writable by group") == true, list.first?.reason ?? "")
        XCTAssertEqual(report(e).plugins_rejected, 1)
        XCTAssertEqual(report(e).plugins_loaded, 0)
        XCTAssertFalse(isLoaded(plugins + "/ok.so"))
        XCTAssertTrue(log.contains("writable by group", level: Int32(RST_LOG_WARNING)))
    }

    func testBadClassesRejectOnlyThemselves() throws {
        let tmp = TempDir()
        let plugins = tmp.sub("plugins")
        try compilePlugin(Fixtures.badClasses, to: plugins + "/bad-classes.so")
        let log = LogSink()
        let (e, _) = Self.restoreWith(plugins, Self.archive(classes: ["Good", "BadLetter", "Repeated", "MissingSymbol"]), log: log)
        defer { rst_engine_destroy(e) }
        let p = listPlugins(e).first
        XCTAssertEqual(p?.state, RST_PLUGIN_LOADED, p?.reason ?? "")
        func cls(_ name: String) -> (usable: Bool, reason: String)? {
            p?.classes.first { $0.name == name }.map { ($0.usable, $0.reason) }
        }
        XCTAssertEqual(cls("Good")?.usable, true)
        XCTAssertEqual(cls("BadLetter")?.usable, false)
        XCTAssertTrue(cls("BadLetter")?.reason.contains("'Q'") == true, cls("BadLetter")?.reason ?? "")
        XCTAssertEqual(cls("Repeated")?.usable, false)
        XCTAssertTrue(cls("Repeated")?.reason.contains("repeats 'E'") == true, cls("Repeated")?.reason ?? "")
        XCTAssertEqual(cls("MissingSymbol")?.usable, false)
        XCTAssertTrue(cls("MissingSymbol")?.reason.contains("no_such_factory") == true, cls("MissingSymbol")?.reason ?? "")
        XCTAssertEqual(cls("NullSignature")?.usable, false)
        XCTAssertTrue(cls("NullSignature")?.reason.contains("NULL signature") == true, cls("NullSignature")?.reason ?? "")
        XCTAssertEqual(p?.classes.filter { $0.name == "Good" }.map(\.usable), [true, false], "a duplicate declaration loses")
        XCTAssertEqual(p?.classes.last?.usable, false, "an empty class name is invalid")
        XCTAssertTrue(p?.classes.last?.reason.contains("empty") == true)
        for needle in ["'Q'", "repeats 'E'", "no_such_factory"] {
            XCTAssertTrue(log.contains(needle, level: Int32(RST_LOG_WARNING)), "no WARNING with \(needle)")
        }
        XCTAssertEqual(instanceText(e, "Root/Obj0"), "bad-classes:Good")
        XCTAssertNil(rst_find_object(e, "Root/Obj1"))
        XCTAssertNil(rst_find_object(e, "Root/Obj2"))
        XCTAssertNil(rst_find_object(e, "Root/Obj3"))
        let r = report(e)
        XCTAssertEqual(r.plugins_loaded, 1)
        XCTAssertEqual(r.plugins_rejected, 0, "class rejections do not reject the plugin")
        XCTAssertEqual(r.skipped, 3)
    }

    func testTwoPluginsOneClassFirstFileByNameWins() throws {
        let tmp = TempDir()
        let plugins = tmp.sub("plugins")
        // Written in reverse order so readdir order is unlikely to help.
        try compilePlugin(Fixtures.simple, to: plugins + "/b-second.so", defines: ["TAG=\"b\"", "CLASS1=\"Shared\"", "CLASS2=\"OnlyB\""])
        try compilePlugin(Fixtures.simple, to: plugins + "/a-first.so", defines: ["TAG=\"a\"", "CLASS1=\"Shared\"", "CLASS2=\"OnlyA\""])
        let log = LogSink()
        let (e, _) = Self.restoreWith(plugins, Self.archive(classes: ["Shared", "OnlyA", "OnlyB"]), log: log)
        defer { rst_engine_destroy(e) }
        XCTAssertEqual(instanceText(e, "Root/Obj0"), "a:Shared", "the file whose name sorts first wins")
        XCTAssertEqual(instanceText(e, "Root/Obj1"), "a:OnlyA")
        XCTAssertEqual(instanceText(e, "Root/Obj2"), "b:OnlyB", "the loser keeps its other classes")
        let list = listPlugins(e)
        XCTAssertEqual(list.map(\.state), [RST_PLUGIN_LOADED, RST_PLUGIN_LOADED])
        let loser = list[1].classes.first { $0.name == "Shared" }
        XCTAssertEqual(loser?.usable, false)
        XCTAssertTrue(loser?.reason.contains("a-first.so") == true, loser?.reason ?? "")
        XCTAssertEqual(list[0].classes.first { $0.name == "Shared" }?.usable, true)
        XCTAssertTrue(log.messages(atLeast: Int32(RST_LOG_WARNING)).contains { $0.contains("b-second.so") && $0.contains("Shared") && $0.contains("already provided") })
        let r = report(e)
        XCTAssertEqual(r.plugins_loaded, 2)
        XCTAssertEqual(r.plugins_rejected, 0)
    }

    func testARejectedFirstPluginLeavesItsClassesToTheNext() throws {
        let tmp = TempDir()
        let plugins = tmp.sub("plugins")
        try compilePlugin(Fixtures.simple, to: plugins + "/a-broken.so", defines: ["INIT_RESULT=3", "TAG=\"a\"", "CLASS1=\"Shared\""])
        try compilePlugin(Fixtures.simple, to: plugins + "/b-works.so", defines: ["TAG=\"b\"", "CLASS1=\"Shared\""])
        let log = LogSink()
        let (e, _) = Self.restoreWith(plugins, Self.archive(classes: ["Shared"]), log: log)
        defer { rst_engine_destroy(e) }
        XCTAssertEqual(instanceText(e, "Root/Obj0"), "b:Shared")
    }

    func testARestoreThatNeedsNoPluginLoadsNone() throws {
        let tmp = TempDir()
        let plugins = tmp.sub("plugins")
        let so = plugins + "/lazy.so"
        try compilePlugin(Fixtures.simple, to: so, defines: ["CLASS1=\"Hosted\""])
        // The archive names a class the restoring host registers itself, and
        // objects the host pre-registers.
        let bytes = Self.archive(classes: ["Hosted"])
        let log = LogSink()
        let e = createEngine(pluginDir: plugins, log: log)
        defer { rst_engine_destroy(e) }
        let host = HostObjects()
        host.register(e, "Root")
        let factory: rst_factory_fn = { e, parent, identifier, _, _ in
            var out: OpaquePointer?
            _ = rst_register_object(e, identifier, parent, "Hosted", nil, nil, &out)
            return out
        }
        XCTAssertEqual(rst_register_class(e, "Hosted", factory, nil), RST_OK)
        restore(e, bytes)
        XCTAssertNotNil(rst_find_object(e, "Root/Obj0"))
        let r = report(e)
        XCTAssertEqual(r.plugins_loaded, 0)
        XCTAssertEqual(r.plugins_rejected, 0)
        let list = listPlugins(e)
        XCTAssertEqual(list.map(\.state), [RST_PLUGIN_DISCOVERED])
        XCTAssertEqual(list.first?.name, "")
        XCTAssertFalse(isLoaded(so), "the plugin was never dlopen'ed")
        // Listing loaded nothing either; an explicit load does.
        XCTAssertEqual(rst_load_plugins(e), RST_OK)
        XCTAssertEqual(listPlugins(e).map(\.state), [RST_PLUGIN_LOADED])
        XCTAssertEqual(report(e).plugins_loaded, 1)
    }

    func testNoPluginDirectoryIsAnIOErrorNotACrash() throws {
        let tmp = TempDir()
        let log = LogSink()
        let e = createEngine(pluginDir: tmp.path + "/does-not-exist", log: log)
        defer { rst_engine_destroy(e) }
        var out: UnsafeMutablePointer<rst_plugin_info>?
        var count = 0
        XCTAssertEqual(rst_list_plugins(e, &out, &count), RST_ERR_IO)
        XCTAssertTrue(String(cString: rst_last_error()).contains("does-not-exist"))
        XCTAssertEqual(rst_load_plugins(e), RST_ERR_IO)
        // A restore that needs a plugin class still succeeds, skipping the record.
        let host = HostObjects()
        host.register(e, "Root")
        restore(e, Self.archive(classes: ["Unknown"]))
        XCTAssertEqual(report(e).skipped, 1)
    }

    func testEmptyPluginDirectory() throws {
        let tmp = TempDir()
        let plugins = tmp.sub("plugins")
        let e = createEngine(pluginDir: plugins)
        defer { rst_engine_destroy(e) }
        var out: UnsafeMutablePointer<rst_plugin_info>?
        var count = 7
        XCTAssertEqual(rst_list_plugins(e, &out, &count), RST_OK)
        XCTAssertNil(out)
        XCTAssertEqual(count, 0)
        XCTAssertEqual(rst_load_plugins(e), RST_OK)
    }
}
