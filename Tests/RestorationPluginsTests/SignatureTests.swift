import CRestoration
import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Factories called through libffi: every signature letter, mixed orders,
/// non-pointer arguments (D as uint32_t, T as int64_t) with checked values,
/// declining and misbehaving factories, plugin objects under plugin objects,
/// init/fini and the plugin context.
final class SignatureTests: XCTestCase {
    /// (path, class, v) of the archive the signature fixture restores.
    static let records: [(String, String?, Int64)] = [
        ("Root", nil, 0),
        ("Root/Mid", nil, 0),
        ("Root/EPIC", "EPIC", 1),
        ("Root/All", "All", 2),
        ("Root/Mid/Reverse", "Reverse", 3),
        ("Root/DTMix", "DTMix", 4),
        ("Root/Mid/PathTime", "PathTime", 5),
        ("Root/Empty", "Empty", 6),
        ("Root/All/XD", "XDCTIPE", 7),       // a plugin object under a plugin object
        ("Root/All/XD/Leaf", "EPIC", 8),     // and one more level
        ("Root/Mid/TDX", "TDX", 9),
        ("Root/Decline", "Decline", 10),     // declines: skipped with its child
        ("Root/Decline/Kid", "EPIC", 11),
        ("Root/Elsewhere", "Elsewhere", 12), // registers another path: skipped, explained
        ("Root/RetParent", "ReturnsParent", 13),
        ("Root/Garbage", "Garbage", 14),     // returns a non-object pointer: never dereferenced
    ]

    /// Saves the archive with host objects and returns (bytes, saved_at_ms).
    static func makeArchive(in dir: TempDir) -> ([UInt8], Int64) {
        let e = createEngine(pluginDir: nil)
        defer { rst_engine_destroy(e) }
        let host = HostObjects()
        for (path, cls, v) in records {
            host.register(e, path, className: cls, state: HostState(ints: ["v": v]))
        }
        let bytes = saveToBytes(e)
        let file = dir.path + "/archive.rst"
        writeFile(file, Data(bytes))
        var info: UnsafeMutablePointer<rst_archive_info>?
        XCTAssertEqual(rst_read_archive_info(file, &info), RST_OK, String(cString: rst_last_error()))
        defer { rst_free(info) }
        return (bytes, info?.pointee.saved_at_ms ?? -1)
    }

    func testEverySignatureLetterAndMixedOrders() throws {
        let tmp = TempDir()
        let plugins = tmp.sub("plugins")
        let so = plugins + "/signatures.so"
        try compilePlugin(Fixtures.signatures, to: so)
        let (bytes, savedAt) = Self.makeArchive(in: tmp)
        XCTAssertGreaterThan(savedAt, 0)

        let log = LogSink()
        let e = createEngine(pluginDir: plugins, log: log)
        let host = HostObjects()
        let root = host.register(e, "Root")
        let mid = host.register(e, "Root/Mid")
        restore(e, bytes)

        let r = report(e)
        XCTAssertEqual(r.archived, UInt64(Self.records.count))
        XCTAssertEqual(r.skipped, 5, "Decline (+Kid), Elsewhere, RetParent, Garbage")
        XCTAssertEqual(r.restored, UInt64(Self.records.count - 5))
        XCTAssertEqual(r.plugins_loaded, 1)
        XCTAssertEqual(r.plugins_rejected, 0)

        let E = hex(UnsafeRawPointer(e))
        func check(_ path: String, _ expected: [String: String], file: StaticString = #filePath, line: UInt = #line) {
            guard let text = instanceText(e, path) else {
                XCTFail("no object at \(path); log: \(log.messages(atLeast: 0))", file: file, line: line)
                return
            }
            let f = fields(text)
            for (k, v) in expected {
                XCTAssertEqual(f[k], v, "\(path): \(k) in '\(text)'", file: file, line: line)
            }
            if let x = f["X"], x != "-" {
                XCTAssertEqual(x, f["Xinit"], "\(path): X is the context init returned", file: file, line: line)
                XCTAssertNotEqual(x, "(nil)", file: file, line: line)
            }
        }
        let T = String(savedAt)
        check("Root/EPIC", ["sig": "EPIC", "E": E, "P": hex(UnsafeRawPointer(root)), "I": "EPIC", "R": "-", "C": "1", "X": "-", "D": "-", "T": "-"])
        check("Root/All", ["sig": "EPIRCXDT", "E": E, "P": hex(UnsafeRawPointer(root)), "I": "All", "R": "Root/All", "C": "2", "D": "1", "T": T])
        check("Root/Mid/Reverse", ["sig": "TDXCRIPE", "E": E, "P": hex(UnsafeRawPointer(mid)), "I": "Reverse", "R": "Root/Mid/Reverse", "C": "3", "D": "2", "T": T])
        check("Root/DTMix", ["sig": "DEPTI", "E": E, "P": hex(UnsafeRawPointer(root)), "I": "DTMix", "R": "-", "C": "-", "X": "-", "D": "1", "T": T])
        check("Root/Mid/PathTime", ["sig": "RT", "E": "-", "P": "-", "I": "-", "R": "Root/Mid/PathTime", "C": "-", "X": "-", "D": "-", "T": T])
        check("Root/Empty", ["sig": "(none)", "E": "-", "P": "-", "I": "-", "R": "-", "C": "-", "X": "-", "D": "-", "T": "-"])
        let all = rst_find_object(e, "Root/All")
        XCTAssertNotNil(all)
        check("Root/All/XD", ["sig": "XDCTIPE", "E": E, "P": hex(UnsafeRawPointer(all)), "I": "XD", "R": "-", "C": "7", "D": "2", "T": T])
        check("Root/All/XD/Leaf", ["sig": "EPIC", "E": E, "P": hex(UnsafeRawPointer(rst_find_object(e, "Root/All/XD"))), "I": "Leaf", "C": "8"])
        check("Root/Mid/TDX", ["sig": "TDX", "E": "-", "P": "-", "I": "-", "D": "2", "T": T])
        XCTAssertEqual(rst_object_class_name(rst_find_object(e, "Root/All/XD")).map { String(cString: $0) }, "XDCTIPE")

        // Declined and misbehaving factories: skipped, the last three explained at ERROR.
        XCTAssertNil(rst_find_object(e, "Root/Decline"))
        XCTAssertNil(rst_find_object(e, "Root/Decline/Kid"))
        XCTAssertNil(rst_find_object(e, "Root/Elsewhere"))
        XCTAssertNil(rst_find_object(e, "Root/RetParent"))
        XCTAssertNil(rst_find_object(e, "Root/Garbage"))
        XCTAssertNotNil(rst_find_object(e, "Root/Elsewhere-elsewhere"), "what the factory registered stays its business")
        let errors = log.messages(atLeast: Int32(RST_LOG_ERROR))
        XCTAssertTrue(errors.contains { $0.contains("f_elsewhere") && $0.contains("Root/Elsewhere") && $0.contains("nothing is registered there") }, "\(errors)")
        XCTAssertTrue(errors.contains { $0.contains("f_parent") && $0.contains("Root/RetParent") }, "\(errors)")
        XCTAssertTrue(errors.contains { $0.contains("f_garbage") && $0.contains("Root/Garbage") }, "\(errors)")
        XCTAssertFalse(errors.contains { $0.contains("f_decline") }, "declining is not an error")

        // init ran once with this engine; fini runs at destroy, with its context.
        XCTAssertEqual(fixtureCounter(so, "fixture_init_calls"), 1)
        XCTAssertEqual(fixtureCounter(so, "fixture_fini_calls"), 0)
        rst_engine_destroy(e)
        XCTAssertEqual(fixtureCounter(so, "fixture_fini_calls"), 1)
        XCTAssertEqual(fixtureCounter(so, "fixture_fini_ctx_ok"), 1)
        XCTAssertTrue(isLoaded(so), "plugins stay resident after the engine is gone")
    }

    func testListShowsClassesAndSignatures() throws {
        let tmp = TempDir()
        let plugins = tmp.sub("plugins")
        try compilePlugin(Fixtures.signatures, to: plugins + "/signatures.so")
        let e = createEngine(pluginDir: plugins)
        defer { rst_engine_destroy(e) }
        XCTAssertEqual(rst_load_plugins(e), RST_OK, String(cString: rst_last_error()))
        XCTAssertEqual(rst_load_plugins(e), RST_OK, "a second call is a no-op")
        let list = listPlugins(e)
        XCTAssertEqual(list.count, 1)
        XCTAssertEqual(list.first?.state, RST_PLUGIN_LOADED)
        XCTAssertEqual(list.first?.name, "signatures")
        XCTAssertEqual(list.first?.version, "1.0")
        XCTAssertEqual(list.first?.path, plugins + "/signatures.so")
        XCTAssertEqual(list.first?.classes.count, 12)
        let reverse = list.first?.classes.first { $0.name == "Reverse" }
        XCTAssertEqual(reverse?.signature, "TDXCRIPE")
        XCTAssertEqual(reverse?.symbol, "f_reverse")
        XCTAssertEqual(reverse?.usable, true)
        XCTAssertEqual(reverse?.reason, "")
        XCTAssertEqual(list.first?.classes.first { $0.name == "Empty" }?.signature, "")
    }

    func testEachEngineGetsItsOwnInitAndContext() throws {
        let tmp = TempDir()
        let plugins = tmp.sub("plugins")
        let so = plugins + "/signatures.so"
        try compilePlugin(Fixtures.signatures, to: so)
        let (bytes, _) = Self.makeArchive(in: tmp)
        var engines: [OpaquePointer] = []
        var hosts: [HostObjects] = []
        let log = LogSink()
        for _ in 0..<2 {
            let e = createEngine(pluginDir: plugins, log: log)
            let host = HostObjects()
            host.register(e, "Root")
            host.register(e, "Root/Mid")
            restore(e, bytes)
            engines.append(e)
            hosts.append(host)
            XCTAssertEqual(report(e).plugins_loaded, 1)
        }
        XCTAssertEqual(fixtureCounter(so, "fixture_init_calls"), 2, "init once per engine")
        let a = fields(instanceText(engines[0], "Root/All") ?? "")
        let b = fields(instanceText(engines[1], "Root/All") ?? "")
        XCTAssertEqual(a["E"], hex(UnsafeRawPointer(engines[0])))
        XCTAssertEqual(b["E"], hex(UnsafeRawPointer(engines[1])))
        XCTAssertNotEqual(a["X"], b["X"], "each engine has its own plugin context")
        rst_engine_destroy(engines[0])
        XCTAssertEqual(fixtureCounter(so, "fixture_fini_calls"), 1)
        rst_engine_destroy(engines[1])
        XCTAssertEqual(fixtureCounter(so, "fixture_fini_calls"), 2)
    }
}
