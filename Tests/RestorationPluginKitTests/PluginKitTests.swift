import CRestoration
import RestorationCFace
@testable import RestorationPlugins
import RestorationPluginKit
import XCTest

/// RestorationPluginKit against the real host table (the one the loader
/// gives plugins), in process: the typed coder, object registration, and
/// the error rule (a throwing encode fails the save; a throwing decode
/// fails only that object).
final class PluginKitTests: XCTestCase {
    final class Note: PluginRestorable {
        var text = ""
        var count: Int64 = 0
        var tags: [String] = []
        var failEncode = false
        var failDecode = false
        var finished = 0
        func encode(to coder: PluginCoder) throws(PluginError) {
            if failEncode { throw PluginError(RST_ERR_IO, "the note's file is gone") }
            try coder.encode(text, forKey: "text")
            try coder.encode(count, forKey: "count")
            try coder.encode(tags, forKey: "tags")
            try coder.encodeRecord("meta") { (c) throws(PluginError) in try c.encode(true, forKey: "pinned") }
        }
        func decode(from coder: PluginCoder) throws(PluginError) {
            if failDecode { throw PluginError(RST_ERR_TYPE, "not a note") }
            text = try coder.decodeString(forKey: "text")
            count = try coder.decodeInt(forKey: "count")
            tags = try coder.decodeStringArray(forKey: "tags")
            XCTAssertTrue(try coder.decodeRecord("meta") { (c) throws(PluginError) in try c.decodeBool(forKey: "pinned") })
        }
        func finishedRestoring() { finished += 1 }
    }

    override func setUp() {
        XCTAssertTrue(PluginHost.install(restorationHostAPI))
    }

    private func engine() -> PluginEngine {
        var opts = rst_engine_options()
        XCTAssertEqual(PluginHost.api.pointee.engine_options_init(&opts, UInt32(RST_ENGINE_OPTIONS_VERSION)), RST_OK)
        var e: OpaquePointer?
        XCTAssertEqual(PluginHost.api.pointee.engine_create(&opts, &e), RST_OK)
        return PluginEngine(e!)
    }

    private func save(_ e: PluginEngine) -> (rst_status, [UInt8]) {
        var p: UnsafeMutableRawPointer?
        var n = 0
        let s = PluginHost.api.pointee.save_to_buffer(e.raw, &p, &n)
        defer { PluginHost.api.pointee.mem_free(p) }
        return (s, p.map { Array(UnsafeRawBufferPointer(start: $0, count: n)) } ?? [])
    }

    private func restore(_ e: PluginEngine, _ bytes: [UInt8]) -> rst_status {
        bytes.withUnsafeBytes { PluginHost.api.pointee.restore_from_buffer(e.raw, $0.baseAddress, $0.count) }
    }

    private func report(_ e: PluginEngine) -> rst_restore_report {
        var r = rst_restore_report()
        XCTAssertEqual(PluginHost.api.pointee.last_restore_report(e.raw, &r), RST_OK)
        return r
    }

    /// The C face keeps a host's rst_object_callbacks by address as the
    /// core's ObjectCallbacks: the layouts must be one.
    func testCallbackTableLayoutsMatch() {
        XCTAssertTrue(callbackLayoutsMatch)
    }

    func testValuesRoundTripThroughTheHostTable() throws {
        let a = engine()
        defer { PluginHost.api.pointee.engine_destroy(a.raw) }
        let n = Note()
        n.text = "caf\u{e9}"; n.count = -7; n.tags = ["a", "b"]
        let ref = try a.register(n, identifier: "Note", parent: nil, className: nil)
        XCTAssertEqual(ref.identifier, "Note")
        let (s, bytes) = save(a)
        XCTAssertEqual(s, RST_OK, PluginHost.lastError)

        let b = engine()
        defer { PluginHost.api.pointee.engine_destroy(b.raw) }
        let m = Note()
        try b.register(m, identifier: "Note", parent: nil, className: nil)
        XCTAssertEqual(restore(b, bytes), RST_OK, PluginHost.lastError)
        XCTAssertEqual(m.text, "caf\u{e9}")
        XCTAssertEqual(m.count, -7)
        XCTAssertEqual(m.tags, ["a", "b"])
        XCTAssertEqual(m.finished, 1)
    }

    func testAThrowingEncodeFailsTheSave() throws {
        let a = engine()
        defer { PluginHost.api.pointee.engine_destroy(a.raw) }
        let n = Note()
        n.failEncode = true
        try a.register(n, identifier: "Note", parent: nil, className: nil)
        let (s, _) = save(a)
        XCTAssertEqual(s, RST_ERR_IO)
        XCTAssertTrue(PluginHost.lastError.contains("the note's file is gone"), PluginHost.lastError)
    }

    func testAThrowingDecodeFailsOnlyThatObject() throws {
        let a = engine()
        defer { PluginHost.api.pointee.engine_destroy(a.raw) }
        try a.register(Note(), identifier: "Bad", parent: nil, className: nil)
        try a.register(Note(), identifier: "Good", parent: nil, className: nil)
        let (s, bytes) = save(a)
        XCTAssertEqual(s, RST_OK)

        let b = engine()
        defer { PluginHost.api.pointee.engine_destroy(b.raw) }
        let bad = Note(), good = Note()
        bad.failDecode = true
        try b.register(bad, identifier: "Bad", parent: nil, className: nil)
        try b.register(good, identifier: "Good", parent: nil, className: nil)
        XCTAssertEqual(restore(b, bytes), RST_OK, "one object's failure is not the restore's")
        XCTAssertEqual(bad.finished, 0)
        XCTAssertEqual(good.finished, 1)
        let r = report(b)
        XCTAssertEqual(r.restored, 1)
        XCTAssertEqual(r.skipped, 1)
    }

    func testCoderErrorsCarryTheHostsStatusAndMessage() throws {
        let a = engine()
        defer { PluginHost.api.pointee.engine_destroy(a.raw) }
        try a.register(Note(), identifier: "N", parent: nil, className: nil)
        let (_, bytes) = save(a)
        final class Probe: PluginRestorable {
            var error: PluginError?
            func decode(from coder: PluginCoder) throws(PluginError) {
                do { _ = try coder.decodeInt(forKey: "absent") } catch { self.error = error }
            }
        }
        let b = engine()
        defer { PluginHost.api.pointee.engine_destroy(b.raw) }
        let p = Probe()
        try b.register(p, identifier: "N", parent: nil, className: nil)
        XCTAssertEqual(restore(b, bytes), RST_OK)
        XCTAssertEqual(p.error?.status, RST_ERR_NOT_FOUND)
        XCTAssertTrue(p.error?.message.contains("rst_decode_int") ?? false, p.error?.message ?? "")
    }
}
