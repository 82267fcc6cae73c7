// The C face called as Swift, without the exported library: what each
// argument check says, the C spellings of the enumerators, and how
// rst_engine_options is read for each struct version.
import XCTest
import Foundation
import CRestoration
import RestorationCore
import RestorationCFace

private func lastError() -> String { CFace.last_error().map { String(cString: $0) } ?? "" }

final class SpellingTests: XCTestCase {
    /// rst_*_name answers from the one spelling table, and the core's cName
    /// (log lines, restorectl, the test-exit report) agrees with it.
    func testNameFunctionsAndCNameAgree() {
        let statuses: [(Status, String)] = [
            (.ok, "RST_OK"), (.invalid, "RST_ERR_INVALID"), (.notFound, "RST_ERR_NOT_FOUND"),
            (.duplicate, "RST_ERR_DUPLICATE"), (.type, "RST_ERR_TYPE"), (.corrupt, "RST_ERR_CORRUPT"),
            (.version, "RST_ERR_VERSION"), (.io, "RST_ERR_IO"), (.plugin, "RST_ERR_PLUGIN"),
            (.rejected, "RST_ERR_REJECTED"), (.noMemory, "RST_ERR_NOMEM"), (.state, "RST_ERR_STATE"),
            (.limit, "RST_ERR_LIMIT"), (.fenced, "RST_ERR_FENCED"),
            (.unavailable, "RST_ERR_UNAVAILABLE"),
        ]
        for (s, name) in statuses {
            XCTAssertEqual(String(cString: CFace.status_name(rst_status(rawValue: s.rawValue))), name)
            XCTAssertEqual(s.cName, name)
        }
        XCTAssertEqual(String(cString: CFace.status_name(rst_status(rawValue: 999))), "RST_ERR_UNKNOWN")

        let reasons: [(RestoreReason, String)] = [
            (.firstLaunch, "RST_REASON_FIRST_LAUNCH"), (.relaunch, "RST_REASON_RELAUNCH"),
            (.recover, "RST_REASON_RECOVER"), (.buffer, "RST_REASON_BUFFER"),
            (.fallback, "RST_REASON_FALLBACK"), (.reset, "RST_REASON_RESET"),
            (.handoff, "RST_REASON_HANDOFF"),
        ]
        for (r, name) in reasons {
            XCTAssertEqual(String(cString: CFace.restore_reason_name(rst_restore_reason(rawValue: r.rawValue))), name)
            XCTAssertEqual(r.cName, name)
        }
        XCTAssertEqual(String(cString: CFace.restore_reason_name(rst_restore_reason(rawValue: 99))), "RST_REASON_UNKNOWN")

        for r in SkipReason.allCases {
            let name = String(cString: CFace.skip_reason_name(rst_skip_reason(rawValue: r.rawValue)))
            XCTAssertTrue(name.hasPrefix("RST_SKIP_"), name)
            XCTAssertNotEqual(name, "RST_SKIP_UNKNOWN")
            XCTAssertEqual(r.cName, name)
        }
        XCTAssertEqual(String(cString: CFace.skip_reason_name(rst_skip_reason(rawValue: 0))), "RST_SKIP_UNKNOWN")
        XCTAssertEqual(SkipReason.expired.cName, "RST_SKIP_EXPIRED")
        XCTAssertEqual(SkipReason.declined.cName, "RST_SKIP_DECLINED")
    }

    /// The spellings are the header's: each one names a value of its enum.
    func testSpellingsAreTheHeadersEnumerators() throws {
        let header = try String(contentsOfFile: repoRoot + "/Include/restoration.h", encoding: .utf8)
        var names = Status.allKnown.map(\.cName) + SkipReason.allCases.map(\.cName)
        names += (0...5).compactMap { RestoreReason(rawValue: $0)?.cName }
        for n in names {
            XCTAssertTrue(header.contains(n), "\(n) is not in Include/restoration.h")
        }
    }
}

extension Status {
    static var allKnown: [Status] { (0...20).compactMap { Status(rawValue: $0) } }
}

let repoRoot: String = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path

final class ArgumentCheckTests: XCTestCase {
    /// A NULL argument is RST_ERR_INVALID with a sentence naming the C
    /// function and the argument.
    func testNullArgumentsNameFunctionAndArgument() {
        XCTAssertEqual(CFace.engine_options_init(nil, 3), RST_ERR_INVALID)
        XCTAssertEqual(lastError(), "rst_engine_options_init: opts is NULL")

        var out: OpaquePointer?
        XCTAssertEqual(CFace.createEngine(nil, &out, attachPlugins: { _, _ in }), RST_ERR_INVALID)
        XCTAssertTrue(lastError().hasPrefix("rst_engine_create: opts is NULL"), lastError())

        var o = rst_engine_options()
        XCTAssertEqual(CFace.engine_options_init(&o, UInt32(RST_ENGINE_OPTIONS_VERSION)), RST_OK)
        XCTAssertEqual(CFace.createEngine(&o, nil, attachPlugins: { _, _ in }), RST_ERR_INVALID)
        XCTAssertEqual(lastError(), "rst_engine_create: out is NULL")

        XCTAssertEqual(CFace.extend_restoration(nil, 0, nil), RST_ERR_INVALID)
        XCTAssertEqual(lastError(), "rst_extend_restoration: engine is NULL")
        XCTAssertEqual(CFace.complete_restoration(nil, nil), RST_ERR_INVALID)
        XCTAssertEqual(lastError(), "rst_complete_restoration: engine is NULL")
        XCTAssertEqual(CFace.register_class(nil, nil, nil, nil), RST_ERR_INVALID)
        XCTAssertTrue(lastError().hasPrefix("rst_register_class: "), lastError())
    }

    /// A failure of the core gets the C function's name in front; the
    /// core's own sentence names none.
    func testCoreFailuresArePrefixedWithTheCFunction() throws {
        let e = try makeEngine()
        defer { CFace.engine_destroy(e) }
        var token: OpaquePointer?
        XCTAssertEqual(CFace.extend_restoration(e, 0, &token), RST_ERR_STATE)
        let message = lastError()
        XCTAssertTrue(message.hasPrefix("rst_extend_restoration: "), message)
        XCTAssertEqual(message.components(separatedBy: "rst_").count, 2, "one C name: \(message)")

        let stray = UnsafeMutableRawPointer.allocate(byteCount: 8, alignment: 8)
        defer { stray.deallocate() }
        XCTAssertEqual(CFace.complete_restoration(e, OpaquePointer(stray)), RST_ERR_INVALID)
        XCTAssertEqual(lastError(), "rst_complete_restoration: the token is not one of this engine's")
    }

    func testOptionsVersionOutOfRange() {
        var o = rst_engine_options()
        XCTAssertEqual(CFace.engine_options_init(&o, 0), RST_ERR_VERSION)
        XCTAssertEqual(CFace.engine_options_init(&o, UInt32(RST_ENGINE_OPTIONS_VERSION) + 1), RST_ERR_VERSION)
        o.version = UInt32(RST_ENGINE_OPTIONS_VERSION) + 1
        var out: OpaquePointer?
        XCTAssertEqual(CFace.createEngine(&o, &out, attachPlugins: { _, _ in }), RST_ERR_VERSION)
        XCTAssertNil(out)
        XCTAssertTrue(lastError().contains("opts->version is \(RST_ENGINE_OPTIONS_VERSION + 1)"), lastError())
    }
}

func makeEngine(_ configure: (inout rst_engine_options) -> Void = { _ in }) throws -> OpaquePointer {
    var o = rst_engine_options()
    _ = CFace.engine_options_init(&o, UInt32(RST_ENGINE_OPTIONS_VERSION))
    configure(&o)
    var out: OpaquePointer?
    let s = CFace.createEngine(&o, &out, attachPlugins: { _, _ in })
    guard s == RST_OK, let out else { throw NSError(domain: lastError(), code: Int(s.rawValue)) }
    return out
}
