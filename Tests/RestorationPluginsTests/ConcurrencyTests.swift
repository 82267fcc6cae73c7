import CRestoration
import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// rst_list_plugins / rst_load_plugins from other threads while a restore
/// loads plugins; several engines loading one plugin file at once.
final class ConcurrencyTests: XCTestCase {
    func testListAndLoadFromOtherThreadsDuringARestore() throws {
        let tmp = TempDir()
        let plugins = tmp.sub("plugins")
        let so = plugins + "/signatures.so"
        try compilePlugin(Fixtures.signatures, to: so)
        try compilePlugin(Fixtures.simple, to: plugins + "/simple.so")
        let (bytes, _) = SignatureTests.makeArchive(in: tmp)

        for _ in 0..<10 {
            let log = LogSink()
            let e = createEngine(pluginDir: plugins, log: log)
            let host = HostObjects()
            host.register(e, "Root")
            host.register(e, "Root/Mid")
            let engineBits = UInt(bitPattern: UnsafeRawPointer(e))
            let group = DispatchGroup()
            for k in 0..<3 {
                DispatchQueue.global().async(group: group) {
                    let e = OpaquePointer(bitPattern: engineBits)!
                    for _ in 0..<20 {
                        if k == 0 {
                            _ = rst_load_plugins(e)
                        } else {
                            var out: UnsafeMutablePointer<rst_plugin_info>?
                            var count = 0
                            if rst_list_plugins(e, &out, &count) == RST_OK {
                                precondition(count == 2)
                                rst_free(out)
                            }
                        }
                    }
                }
            }
            restore(e, bytes)
            group.wait()
            let r = report(e)
            XCTAssertEqual(r.plugins_loaded, 2)
            XCTAssertEqual(r.skipped, 5)
            XCTAssertEqual(listPlugins(e).map(\.state), [RST_PLUGIN_LOADED, RST_PLUGIN_LOADED])
            rst_engine_destroy(e)
        }
        XCTAssertEqual(fixtureCounter(so, "fixture_init_calls"), 10)
        XCTAssertEqual(fixtureCounter(so, "fixture_fini_calls"), 10)
    }

    func testManyEnginesLoadOnePluginAtOnce() throws {
        let tmp = TempDir()
        let plugins = tmp.sub("plugins")
        let so = plugins + "/simple.so"
        try compilePlugin(Fixtures.simple, to: so)
        let bytes = RejectionTests.archive(classes: ["Simple1", "Simple2", "Simple1"])
        let group = DispatchGroup()
        let failures = LogSink()
        for _ in 0..<4 {
            DispatchQueue.global().async(group: group) {
                for _ in 0..<5 {
                    let log = LogSink()
                    let e = createEngine(pluginDir: plugins, log: log)
                    let host = HostObjects()
                    host.register(e, "Root")
                    let s = bytes.withUnsafeBytes { rst_restore_from_buffer(e, $0.baseAddress, $0.count) }
                    var r = rst_restore_report()
                    _ = rst_last_restore_report(e, &r)
                    if s != RST_OK || r.plugins_loaded != 1 || r.skipped != 0 || instanceText(e, "Root/Obj1") != "simple:Simple2" {
                        failures.append(3, "status \(s.rawValue) loaded \(r.plugins_loaded) skipped \(r.skipped)")
                    }
                    rst_engine_destroy(e)
                }
            }
        }
        group.wait()
        XCTAssertEqual(failures.messages(atLeast: 0), [])
        XCTAssertEqual(fixtureCounter(so, "fixture_init_calls"), 20)
        XCTAssertEqual(fixtureCounter(so, "fixture_fini_calls"), 20)
    }
}
