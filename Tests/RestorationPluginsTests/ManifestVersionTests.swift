import CRestoration
import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The manifest grows without another ABI version: manifests of ABI version
/// 1 (built against the 1.0 header) and 2 (with manifest_size) both load,
/// and a manifest_size too small for version 2 is rejected.
final class ManifestVersionTests: XCTestCase {
    func testVersionOneAndTwoManifestsLoad() throws {
        let tmp = TempDir()
        let plugins = tmp.sub("plugins")
        try compilePlugin(Fixtures.simple, to: plugins + "/a-v1-struct.so",
                          defines: ["V1_STRUCT", "TAG=\"v1\"", "CLASS1=\"V1a\"", "CLASS2=\"V1b\""])
        try compilePlugin(Fixtures.simple, to: plugins + "/b-v2-unsized.so",
                          defines: ["TAG=\"v2zero\"", "CLASS1=\"V2a\"", "CLASS2=\"V2b\""])
        try compilePlugin(Fixtures.simple, to: plugins + "/c-v2-sized.so",
                          defines: ["SIZED=RST_PLUGIN_MANIFEST_SIZE", "TAG=\"v2\"", "CLASS1=\"V3a\"", "CLASS2=\"V3b\""])
        try compilePlugin(Fixtures.simple, to: plugins + "/d-v2-too-small.so",
                          defines: ["SIZED=8", "TAG=\"small\"", "CLASS1=\"V4a\"", "CLASS2=\"V4b\""])
        let bytes = RejectionTests.archive(classes: ["V1a", "V2b", "V3a", "V4a"])
        let log = LogSink()
        let (e, host) = RejectionTests.restoreWith(plugins, bytes, log: log)
        defer { rst_engine_destroy(e); _ = host }

        XCTAssertEqual(instanceText(e, "Root/Obj0"), "v1:V1a")
        XCTAssertEqual(instanceText(e, "Root/Obj1"), "v2zero:V2b")
        XCTAssertEqual(instanceText(e, "Root/Obj2"), "v2:V3a")
        XCTAssertNil(rst_find_object(e, "Root/Obj3"))
        let byName = Dictionary(uniqueKeysWithValues: listPlugins(e).map { ($0.fileName, $0) })
        XCTAssertEqual(byName["a-v1-struct.so"]?.state, RST_PLUGIN_LOADED)
        XCTAssertEqual(byName["b-v2-unsized.so"]?.state, RST_PLUGIN_LOADED)
        XCTAssertEqual(byName["c-v2-sized.so"]?.state, RST_PLUGIN_LOADED)
        XCTAssertEqual(byName["d-v2-too-small.so"]?.state, RST_PLUGIN_REJECTED)
        XCTAssertTrue(byName["d-v2-too-small.so"]?.reason.contains("manifest_size is 8 bytes") ?? false,
                      byName["d-v2-too-small.so"]?.reason ?? "")
        XCTAssertEqual(fixtureCounter(plugins + "/a-v1-struct.so", "fixture_init_calls"), 1)
    }
}
