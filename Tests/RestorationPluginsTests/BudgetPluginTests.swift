import CRestoration
import RestorationCore
import RestorationPlugins
import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Size budgets from a plugin (library 1.2): the host table's
/// set_object_priority and last_save_sizes members.
final class BudgetPluginTests: XCTestCase {
    static let source = cFixture("budget_views.c")

    func testPriorityAndSizesThroughTheHostTable() throws {
        let tmp = TempDir()
        let plugins = tmp.sub("plugins")
        try compilePlugin(Self.source, to: plugins + "/views.so")
        let saver = createEngine(pluginDir: nil)
        let host = HostObjects()
        host.register(saver, "Root")
        host.register(saver, "Root/V", className: "View")
        let bytes = saveToBytes(saver)
        rst_engine_destroy(saver)

        let log = LogSink()
        let e = createEngine(pluginDir: plugins, log: log)
        defer { rst_engine_destroy(e); _ = log }
        let host2 = HostObjects()
        host2.register(e, "Root")
        restore(e, bytes)
        XCTAssertEqual(instanceText(e, "Root/V"), "priority=0 null=\(RST_ERR_INVALID.rawValue) sizes=0 n=0 out=NULL",
                       log.messages(atLeast: 0).joined(separator: "\n"))
        // After a save, the host sees both records.
        _ = saveToBytes(e)
        var out: UnsafeMutablePointer<rst_size_entry>?
        var n = 0
        XCTAssertEqual(rst_last_save_sizes(e, &out, &n), RST_OK)
        defer { rst_free(out) }
        XCTAssertEqual(n, 2)
        if let out, n == 2 {
            XCTAssertEqual(String(cString: out[1].path), "Root/V")
            XCTAssertEqual(String(cString: out[1].class_name), "View")
            XCTAssertEqual(out[0].subtree_bytes, out[0].own_bytes + out[1].own_bytes)
        }
    }
}
