import CRestoration
import RestorationCFace
@testable import RestorationPlugins
import RestorationPluginKit
import XCTest

/// Sensitive values from a plugin: the host's policy covers what a plugin
/// encodes, and a plugin marks its own keys through the host table
/// (coder_set_sensitivity; set_key_sensitivity and export_state are there too).
final class SensitivityPluginKitTests: XCTestCase {
    static let secret = "plugin-SECRET-0c4f"

    final class Login: PluginRestorable {
        var user = "alice", password = SensitivityPluginKitTests.secret, pin = SensitivityPluginKitTests.secret + "-pin"
        var got: [String: String] = [:]
        func encode(to coder: PluginCoder) throws(PluginError) {
            try coder.encode(user, forKey: "user")
            try coder.encode(password, forKey: "password")               // the host's policy: SECRET
            try coder.setSensitivity(RST_SENSITIVITY_SECRET, forKey: "pin")  // the plugin's own
            try coder.encode(pin, forKey: "pin")
        }
        func decode(from coder: PluginCoder) throws(PluginError) {
            for k in ["user", "password", "pin"] { if let v = try? coder.decodeString(forKey: k) { got[k] = v } }
        }
    }

    override func setUp() {
        XCTAssertTrue(PluginHost.install(restorationHostAPI))
        XCTAssertTrue(PluginHost.has(\rst_host_api.coder_set_sensitivity))
        XCTAssertTrue(PluginHost.has(\rst_host_api.set_key_sensitivity))
        XCTAssertTrue(PluginHost.has(\rst_host_api.export_state))
    }

    private func engine() -> PluginEngine {
        var opts = rst_engine_options()
        XCTAssertEqual(PluginHost.api.pointee.engine_options_init(&opts, UInt32(RST_ENGINE_OPTIONS_VERSION)), RST_OK)
        var e: OpaquePointer?
        XCTAssertEqual(PluginHost.api.pointee.engine_create(&opts, &e), RST_OK)
        XCTAssertEqual(PluginHost.api.pointee.set_key_sensitivity(e, nil, "password", RST_SENSITIVITY_SECRET), RST_OK)
        return PluginEngine(e!)
    }

    func testAPluginsSecretsAreNeverWritten() throws {
        let a = engine()
        defer { PluginHost.api.pointee.engine_destroy(a.raw) }
        let l = Login()
        try a.register(l, identifier: "L", parent: nil, className: nil)
        for flags in [nil, 0, UInt32(RST_EXPORT_PORTABLE)] as [UInt32?] {
            var p: UnsafeMutableRawPointer?
            var n = 0
            let st = flags.map { PluginHost.api.pointee.export_state(a.raw, $0, &p, &n) } ?? PluginHost.api.pointee.save_to_buffer(a.raw, &p, &n)
            XCTAssertEqual(st, RST_OK, PluginHost.lastError)
            let bytes = Array(UnsafeRawBufferPointer(start: p, count: n))
            XCTAssertNil(bytes.firstRange(of: Array(SensitivityPluginKitTests.secret.utf8)), "flags \(String(describing: flags))")
            if flags == nil {
                let b = engine()
                defer { PluginHost.api.pointee.engine_destroy(b.raw) }
                let m = Login()
                try b.register(m, identifier: "L", parent: nil, className: nil)
                XCTAssertEqual(PluginHost.api.pointee.restore_from_buffer(b.raw, p, n), RST_OK, PluginHost.lastError)
                XCTAssertEqual(m.got, ["user": "alice"])
            }
            PluginHost.api.pointee.mem_free(p)
        }
    }
}
