// rst_engine_options read by struct version: a version 1 struct is read up
// to `log`, version 2 up to `carry_saves`, version 3 whole; what lies past
// the caller's version is never read.
import XCTest
import Foundation
import CRestoration
import RestorationCore
import RestorationCFace

final class OptionsReadingTests: XCTestCase {
    var dir: String!
    override func setUp() {
        dir = NSTemporaryDirectory() + "cface-options-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    /// Every member set; `version` then says how much of it counts.
    func create(version: UInt32) throws -> (OpaquePointer, Engine.Configuration) {
        let path = dir + "/v\(version).rst"
        return try path.withCString { p in
            let e = try makeEngine { o in
                o.version = version
                o.archive_path = p
                o.autosave_delay_ms = 50
                o.autosave_max_delay_ms = 500
                o.generations = 3
                o.carry_saves = 2
                o.size_budget = 1 << 20
                o.budget_policy = RST_BUDGET_TRIM
                o.signal_deadline_ms = 250
            }
            return (e, engine(e).configuration)
        }
    }

    func testVersion1ReadsNothingPastLog() throws {
        let (e, c) = try create(version: 1)
        defer { CFace.engine_destroy(e) }
        XCTAssertEqual(c.archivePath, dir + "/v1.rst")
        XCTAssertEqual(c.autosaveDelayMs, 0)
        XCTAssertEqual(c.autosaveMaxDelayMs, 0)
        XCTAssertEqual(c.generations, 0)
        XCTAssertEqual(c.carrySaves, 0)
        XCTAssertFalse(c.quarantine, "a 1.0 struct keeps 1.0's behaviour")
        XCTAssertEqual(c.sizeBudget, 0)
        XCTAssertEqual(c.budgetPolicy, .warn)
        XCTAssertEqual(c.signalDeadlineMs, 1000)
        XCTAssertTrue(c.crashGuard)
    }

    func testVersion2ReadsItsMembersNotVersion3s() throws {
        let (e, c) = try create(version: 2)
        defer { CFace.engine_destroy(e) }
        XCTAssertEqual(c.autosaveDelayMs, 50)
        XCTAssertEqual(c.autosaveMaxDelayMs, 500)
        XCTAssertEqual(c.generations, 3)
        XCTAssertEqual(c.carrySaves, 2)
        XCTAssertTrue(c.quarantine)
        XCTAssertEqual(c.sizeBudget, 0)
        XCTAssertEqual(c.budgetPolicy, .warn)
        XCTAssertEqual(c.signalDeadlineMs, 1000)
    }

    func testVersion3ReadsEverything() throws {
        let (e, c) = try create(version: 3)
        defer { CFace.engine_destroy(e) }
        XCTAssertEqual(c.autosaveDelayMs, 50)
        XCTAssertEqual(c.generations, 3)
        XCTAssertEqual(c.sizeBudget, 1 << 20)
        XCTAssertEqual(c.budgetPolicy, .trim)
        XCTAssertEqual(c.signalDeadlineMs, 250)
    }

    func testFlags() throws {
        let e = try makeEngine { $0.flags = UInt32(RST_ENGINE_NO_CRASH_GUARD) | UInt32(RST_ENGINE_NO_QUARANTINE) }
        defer { CFace.engine_destroy(e) }
        XCTAssertFalse(engine(e).configuration.crashGuard)
        XCTAssertFalse(engine(e).configuration.quarantine)
        var out: OpaquePointer?
        var o = rst_engine_options()
        _ = CFace.engine_options_init(&o, 1)
        o.flags = 0x8000_0000
        XCTAssertEqual(CFace.createEngine(&o, &out, attachPlugins: { _, _ in }), RST_ERR_INVALID)
        XCTAssertEqual(String(cString: CFace.last_error()), "rst_engine_create: opts->flags has unknown bits 0x80000000")
    }

    func testInvalidMembersAreNamed() {
        func failure(_ configure: (inout rst_engine_options) -> Void) -> (rst_status, String) {
            var o = rst_engine_options()
            _ = CFace.engine_options_init(&o, UInt32(RST_ENGINE_OPTIONS_VERSION))
            configure(&o)
            var out: OpaquePointer?
            let s = CFace.createEngine(&o, &out, attachPlugins: { _, _ in })
            if let out { CFace.engine_destroy(out) }
            return (s, String(cString: CFace.last_error()))
        }
        var (s, m) = failure { $0.budget_policy = 7 }
        XCTAssertEqual(s, RST_ERR_INVALID)
        XCTAssertTrue(m.hasPrefix("rst_engine_create: opts->budget_policy is 7"), m)
        (s, m) = failure { $0.generations = 99 }
        XCTAssertEqual(s, RST_ERR_INVALID)
        XCTAssertTrue(m.hasPrefix("rst_engine_create: opts->generations is 99"), m)
        (s, m) = failure { $0.autosave_delay_ms = 10 }
        XCTAssertEqual(s, RST_ERR_INVALID)
        XCTAssertTrue(m.contains("need an archive_path"), m)
        (s, m) = "".withCString { p in failure { $0.archive_path = p } }
        XCTAssertEqual(s, RST_ERR_INVALID)
        XCTAssertEqual(m, "rst_engine_create: opts->archive_path is empty")
        let long = String(repeating: "x", count: 5000)
        (s, m) = long.withCString { p in failure { $0.app_version = p } }
        XCTAssertEqual(s, RST_ERR_LIMIT)
        XCTAssertTrue(m.hasPrefix("rst_engine_create: opts->app_version is longer than"), m)
    }
}
