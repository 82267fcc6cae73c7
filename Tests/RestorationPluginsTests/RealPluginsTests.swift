import CRestoration
import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The package's real plugins (Plugins/countries-detail in C,
/// Plugins/countries-panes in Swift), as SwiftPM built them: one plugin file
/// loaded by a Swift host (this process, which carries the core statically),
/// by a C host linked against librestoration.so, and by restorectl.
final class RealPluginsTests: XCTestCase {
    static let pluginFiles = ["libcountries_detail.so", "libCountriesPanesPlugin.so"]

    /// Copies the built plugins into a fresh plugin_dir (0755 dir, 0644 files).
    static func pluginDir(in tmp: TempDir) throws -> String {
        let dir = tmp.sub("plugins")
        for f in pluginFiles {
            let src = Paths.bin + "/" + f
            guard FileManager.default.fileExists(atPath: src) else {
                throw XCTSkip("\(src) is not built (swift build builds every product; run the tests with swift test)")
            }
            try FileManager.default.copyItem(atPath: src, toPath: dir + "/" + f)
            chmod(dir + "/" + f, 0o644)
        }
        return dir
    }

    /// The demo's first launch: host objects that encode what the plugin
    /// classes read back. Saved to `archive`.
    static func saveFirstLaunch(to archive: String) {
        let e = createEngine(pluginDir: nil, archive: archive)
        defer { rst_engine_destroy(e) }
        let host = HostObjects()
        host.register(e, "Tabs")
        host.register(e, "Tabs/Countries")
        let list = host.register(e, "Tabs/Countries/List")
        let detail = HostState(ints: ["visits": 3], strings: ["country": "NO"])
        detail.objects["source"] = list
        host.register(e, "Tabs/Countries/Detail", className: "CountryDetail", state: detail)
        host.register(e, "Tabs/Countries/Detail/Map", className: "MapPane",
                      state: HostState(doubles: ["zoom": 7.5], stringArrays: ["layers": ["terrain", "borders"]],
                                       records: ["center": ["lat": 60.47, "lon": 8.47]]))
        host.register(e, "Tabs/Countries/Detail/Notes", className: "CountryNotes", state: HostState(strings: ["text": "fjords"]))
        XCTAssertEqual(rst_save(e), RST_OK, String(cString: rst_last_error()))
    }

    func testSwiftHostRestoresThroughBothPlugins() throws {
        let tmp = TempDir()
        let plugins = try Self.pluginDir(in: tmp)
        let archive = tmp.path + "/countries.rst"
        Self.saveFirstLaunch(to: archive)

        // Relaunch: only the static screens are registered.
        let log = LogSink()
        let e = createEngine(pluginDir: plugins, archive: archive, log: log)
        let host = HostObjects()
        host.register(e, "Tabs")
        host.register(e, "Tabs/Countries")
        host.register(e, "Tabs/Countries/List")
        XCTAssertEqual(rst_restore(e), RST_OK, String(cString: rst_last_error()))
        let r = report(e)
        XCTAssertEqual(r.plugins_loaded, 2, "\(log.messages(atLeast: 0))")
        XCTAssertEqual(r.plugins_rejected, 0)
        XCTAssertEqual(r.skipped, 0, "\(log.messages(atLeast: 0))")
        for (path, cls) in [("Tabs/Countries/Detail", "CountryDetail"), ("Tabs/Countries/Detail/Map", "MapPane"),
                            ("Tabs/Countries/Detail/Notes", "CountryNotes")] {
            let o = rst_find_object(e, path)
            XCTAssertNotNil(o, path)
            XCTAssertEqual(rst_object_class_name(o).map { String(cString: $0) }, cls)
        }
        let list = listPlugins(e)
        XCTAssertEqual(list.map(\.fileName), ["libCountriesPanesPlugin.so", "libcountries_detail.so"], "byte-wise name order")
        XCTAssertEqual(Set(list.map(\.name)), ["countries-detail", "countries-panes"])
        XCTAssertTrue(list.allSatisfy { $0.state == RST_PLUGIN_LOADED })
        let detail = list.first { $0.name == "countries-detail" }
        XCTAssertEqual(detail?.classes.map(\.name), ["CountryDetail", "CountryNotes"])
        XCTAssertEqual(detail?.classes.map(\.signature), ["EPIRCT", "XDCTIPE"])
        XCTAssertEqual(list.first { $0.name == "countries-panes" }?.classes.map(\.signature), ["EPIRDX"])

        // Save again: now the plugin objects encode themselves. Read it back
        // with host objects to check what the plugins decoded and re-encoded.
        let bytes = saveToBytes(e)
        rst_engine_destroy(e)

        let check = createEngine(pluginDir: nil)
        defer { rst_engine_destroy(check) }
        let readers = HostObjects()
        for p in ["Tabs", "Tabs/Countries", "Tabs/Countries/List", "Tabs/Countries/Detail",
                  "Tabs/Countries/Detail/Map", "Tabs/Countries/Detail/Notes"] {
            readers.register(check, p)
        }
        restore(check, bytes)
        let d = readers.states["Tabs/Countries/Detail"]!
        XCTAssertEqual(d.decoded["country"], "NO")
        XCTAssertEqual(d.decoded["visits"], "3")
        XCTAssertEqual(d.decodedObjects["source"], "Tabs/Countries/List")
        let m = readers.states["Tabs/Countries/Detail/Map"]!
        XCTAssertEqual(m.decoded["zoom"], "7.5")
        XCTAssertEqual(m.decoded["center"], "60.47,8.47")
        XCTAssertEqual(m.decoded["layers"], "terrain,borders")
        XCTAssertEqual(readers.states["Tabs/Countries/Detail/Notes"]!.decoded["text"], "fjords")
    }

    /// The C host: built with cc against Include/ and librestoration.so.
    static func buildCHost(in tmp: TempDir) throws -> String {
        let lib = Paths.bin + "/librestoration.so"
        guard FileManager.default.fileExists(atPath: lib) else {
            throw XCTSkip("\(lib) is not built (the 'restoration' product; swift test builds it)")
        }
        let src = tmp.path + "/host.c"
        try Fixtures.cHost.write(toFile: src, atomically: true, encoding: .utf8)
        let exe = tmp.path + "/host"
        // Under `swift test --sanitize=address` librestoration.so needs clang's ASan runtime.
        let asan = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil
        let compiler = asan ? "/usr/bin/env" : Paths.compiler
        let prefix = asan ? ["clang", "-fsanitize=address"] : []
        let r = try runProcess(compiler, prefix + ["-std=c11", "-Wall", "-Werror", "-I", Paths.include, src,
                                                   "-L", Paths.bin, "-lrestoration", "-Wl,-rpath," + Paths.bin, "-o", exe])
        XCTAssertEqual(r.status, 0, r.stderr)
        return exe
    }

    func testCHostRestoresThroughTheSamePluginFiles() throws {
        let tmp = TempDir()
        let plugins = try Self.pluginDir(in: tmp)
        let archive = tmp.path + "/countries.rst"
        Self.saveFirstLaunch(to: archive)
        let exe = try Self.buildCHost(in: tmp)

        let r = try runProcess(exe, [plugins, archive], environment: ["RESTORATION_DEBUG_PLUGINS": "0"])
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        XCTAssertTrue(r.stdout.contains("[countries-detail] restored CountryDetail at Tabs/Countries/Detail: country=NO"), r.stdout)
        XCTAssertTrue(r.stdout.contains("[countries-panes] restored MapPane at Tabs/Countries/Detail/Map: zoom=7.5"), r.stdout)
        XCTAssertTrue(r.stdout.contains("layers=terrain,borders pane=1"), "the Swift plugin's per-engine context (X): \(r.stdout)")
        XCTAssertTrue(r.stdout.contains("[countries-detail] restored CountryNotes at Tabs/Countries/Detail/Notes: text=\"fjords\" depth=3"), r.stdout)
        XCTAssertTrue(r.stdout.contains("report archived=6 restored=6 skipped=0 loaded=2 rejected=0"), r.stdout)
        XCTAssertTrue(r.stdout.contains("object Tabs/Countries/Detail/Map MapPane"), r.stdout)
        XCTAssertTrue(r.stdout.contains("saved again"), r.stdout)
        XCTAssertFalse(r.stderr.contains("restoration-plugins:"), "no trace unless asked: \(r.stderr)")
    }

    func testDebugEnvironmentTracesEveryDecision() throws {
        let tmp = TempDir()
        let plugins = try Self.pluginDir(in: tmp)
        // Something to reject, too.
        writeFile(plugins + "/zz-not-elf.so", Data("text".utf8))
        chmod(plugins + "/zz-not-elf.so", 0o644)
        let archive = tmp.path + "/countries.rst"
        Self.saveFirstLaunch(to: archive)
        let exe = try Self.buildCHost(in: tmp)

        let r = try runProcess(exe, [plugins, archive], environment: ["RESTORATION_DEBUG_PLUGINS": "1"])
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        let trace = r.stderr.split(separator: "\n").filter { $0.hasPrefix("restoration-plugins: ") }
        let text = trace.joined(separator: "\n")
        for needle in ["scanning plugin_dir", "found libcountries_detail.so: a candidate",
                       "loading plugins: a restore needs class",
                       "dlopen('\(plugins)/libCountriesPanesPlugin.so', RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)",
                       "calling rst_plugin_manifest_v1", "manifest 'countries-detail' version '1.0.0'",
                       "class 'CountryNotes' -> countries_notes_make(XDCTIPE): ffi_cif prepared",
                       "libcountries_detail.so: calling init", "LOADED 'countries-panes'",
                       "zz-not-elf.so: REJECTED: ", "calling countries_panes_make_map for class 'MapPane' at 'Tabs/Countries/Detail/Map'",
                       "countries_detail_make created 'Tabs/Countries/Detail'",
                       "libCountriesPanesPlugin.so: calling init", "libCountriesPanesPlugin.so: calling fini",
                       "libcountries_detail.so: calling fini"] {
            XCTAssertTrue(text.contains(needle), "trace lacks '\(needle)':\n\(text)")
        }
        XCTAssertTrue(r.stdout.contains("loaded=2 rejected=1"), r.stdout)
    }

    func testRestorectlListsTheSamePluginFiles() throws {
        let tool = Paths.bin + "/restorectl"
        guard FileManager.default.isExecutableFile(atPath: tool) else {
            throw XCTSkip("restorectl is not built in \(Paths.bin); the restorectl part of 'one plugin file in three hosts' is skipped")
        }
        let tmp = TempDir()
        let plugins = try Self.pluginDir(in: tmp)
        let r = try runProcess(tool, ["plugins", plugins])
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        XCTAssertTrue(r.stdout.contains("libcountries_detail.so"), r.stdout)
        XCTAssertTrue(r.stdout.contains("libCountriesPanesPlugin.so"), r.stdout)
        XCTAssertTrue(r.stdout.contains("CountryDetail"), "restorectl loads the plugins to show their classes: \(r.stdout)")
        XCTAssertTrue(r.stdout.contains("MapPane"), r.stdout)
    }
}
