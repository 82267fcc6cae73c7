import CRestoration
import RestorationCFace
@testable import RestorationPlugins
import RestorationPluginKit
import XCTest

/// OS strings through RestorationPluginKit and the host table's
/// encode_os_string, decode_os_string and decode_string_copy.
final class OSStringPluginKitTests: XCTestCase {
    final class Folder: PluginRestorable {
        var name: [UInt8] = []
        var nulFailure: PluginError?
        var copied = ""
        func encode(to coder: PluginCoder) throws(PluginError) {
            try coder.encode(osString: name, forKey: "name")
            do { try coder.encode(osString: [0x61, 0, 0x62], forKey: "bad") } catch { nulFailure = error }
        }
        func decode(from coder: PluginCoder) throws(PluginError) {
            name = try coder.decodeOSString(forKey: "name")
            var buf = [CChar](repeating: 1, count: 8)
            var len = 0
            let s = PluginHost.api.pointee.decode_string_copy(coder.raw, "name", &buf, 3, &len)
            XCTAssertEqual(s, RST_ERR_LIMIT)
            XCTAssertEqual(len, 4)
            XCTAssertEqual(buf[0], 0)
            XCTAssertEqual(PluginHost.api.pointee.decode_string_copy(coder.raw, "name", &buf, 5, &len), RST_OK)
            copied = String(decoding: buf.prefix(len).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    override func setUp() {
        XCTAssertTrue(PluginHost.install(restorationHostAPI))
        XCTAssertTrue(PluginHost.has(\rst_host_api.encode_os_string))
        XCTAssertTrue(PluginHost.has(\rst_host_api.decode_string_copy))
    }

    private func engine() -> PluginEngine {
        var opts = rst_engine_options()
        XCTAssertEqual(PluginHost.api.pointee.engine_options_init(&opts, UInt32(RST_ENGINE_OPTIONS_VERSION)), RST_OK)
        var e: OpaquePointer?
        XCTAssertEqual(PluginHost.api.pointee.engine_create(&opts, &e), RST_OK)
        return PluginEngine(e!)
    }

    func testOSStringsRoundTripThroughTheHostTable() throws {
        let latin1: [UInt8] = [0x63, 0x61, 0x66, 0xE9]
        let a = engine()
        defer { PluginHost.api.pointee.engine_destroy(a.raw) }
        let f = Folder()
        f.name = latin1
        try a.register(f, identifier: "F", parent: nil, className: nil)
        var p: UnsafeMutableRawPointer?
        var n = 0
        XCTAssertEqual(PluginHost.api.pointee.save_to_buffer(a.raw, &p, &n), RST_OK, PluginHost.lastError)
        defer { PluginHost.api.pointee.mem_free(p) }
        XCTAssertEqual(f.nulFailure?.status, RST_ERR_INVALID, "a NUL is refused before the host sees the bytes")

        let b = engine()
        defer { PluginHost.api.pointee.engine_destroy(b.raw) }
        let g = Folder()
        try b.register(g, identifier: "F", parent: nil, className: nil)
        XCTAssertEqual(PluginHost.api.pointee.restore_from_buffer(b.raw, p, n), RST_OK, PluginHost.lastError)
        XCTAssertEqual(g.name, latin1)
        XCTAssertEqual(Array(g.copied.utf8.prefix(3)), [0x63, 0x61, 0x66])
    }
}
