// Sensitive values and portable exports from the Swift API: SECRET never
// in any data, ENCRYPTED sealed and opened only with the key, LOCAL left
// out of portable exports, the coder's own setting.
import Foundation
import XCTest
import Restoration

final class SensitivityTests: XCTestCase {
    private let secret = "Swift-SECRET-9b2e41"
    private let sealed = "Swift-SEALED-c77d10"
    private let local = "/home/bob/Swift-LOCAL"

    private func contains(_ d: Data, _ s: String) -> Bool { d.range(of: Data(s.utf8)) != nil }

    private func source(key: [UInt8]?) throws -> (RestorationEngine, Probe) {
        let e = try RestorationEngine()
        try e.setSensitivity(.secret, forKey: "password")
        try e.setSensitivity(.encrypted, forKey: "token", inClass: "Login")
        try e.setSensitivity(.local, forKey: "path")
        if let key { e.setEncryptionKey { key } }
        let p = Probe("login", className: "Login")
        p.onEncode = { [secret, sealed, local] c in
            try c.encode(secret, forKey: "password")
            try c.encode(sealed, forKey: "token")
            try c.encode(local, forKey: "path")
            try c.encode(5, forKey: "n")
            try c.encodeRecord(forKey: "nested") { try $0.encode(secret, forKey: "password") }
        }
        try e.register(p)
        return (e, p)
    }

    private func restore(_ data: Data, key: [UInt8]?, log: LogBox? = nil) throws -> [String: String] {
        var options = RestorationEngine.Options()
        options.log = log?.handler()
        let e = try RestorationEngine(options: options)
        if let key { e.setEncryptionKey { key } }
        let p = Probe("login", className: "Login")
        var got: [String: String] = [:]
        p.onDecode = { c in
            for k in ["password", "token", "path"] { if let v = try c.decode(String.self, forKey: k) { got[k] = v } }
            if let n = try c.decode(Int.self, forKey: "n") { got["n"] = String(n) }
        }
        try e.register(p)
        try e.restore(from: data)
        return got
    }

    func testSecretIsInNoDataAndEncryptedOpensWithTheKeyOnly() throws {
        let key = [UInt8](repeating: 7, count: 32)
        let (e, p) = try source(key: key)
        let saved = try e.saveToData()
        let exported = try e.export(portable: false)
        let portable = try e.export(portable: true)
        for d in [saved, exported, portable] {
            XCTAssertFalse(contains(d, secret))
            XCTAssertFalse(contains(d, sealed))
        }
        XCTAssertTrue(contains(saved, local))
        XCTAssertFalse(contains(portable, local))

        let opened = try restore(saved, key: key)
        XCTAssertEqual(opened["token"], sealed)
        XCTAssertNil(opened["password"])
        XCTAssertEqual(opened["path"], local)
        XCTAssertEqual(opened["n"], "5")

        let log = LogBox()
        let wrong = try restore(saved, key: [UInt8](repeating: 8, count: 32), log: log)
        XCTAssertNil(wrong["token"])
        XCTAssertEqual(wrong["n"], "5")
        XCTAssertEqual(log.warnings.filter { $0.contains("could not be opened") }.count, 1, "\(log.warnings)")

        let fromPortable = try restore(portable, key: key)
        XCTAssertNil(fromPortable["token"])
        XCTAssertNil(fromPortable["path"])
        XCTAssertEqual(fromPortable["n"], "5")
        withExtendedLifetime(p) {}
    }

    func testNoKeyAtSaveLeavesTheValueOutWithOneWarning() throws {
        var options = RestorationEngine.Options()
        let log = LogBox()
        options.log = log.handler()
        let e = try RestorationEngine(options: options)
        try e.setSensitivity(.encrypted, forKey: "token")
        let p = Probe("login")
        p.onEncode = { [sealed] c in
            try c.encode(sealed, forKey: "token")
            try c.encodeRecord(forKey: "r") { try $0.encode(sealed, forKey: "token") }
        }
        try e.register(p)
        let d = try e.saveToData()
        XCTAssertFalse(contains(d, sealed))
        XCTAssertEqual(log.warnings.filter { $0.contains("2 ENCRYPTED values were not written") }.count, 1, "\(log.warnings)")
        withExtendedLifetime(p) {}
    }

    func testCoderSettingWinsBeforeTheKeyAndFailsTheSaveAfter() throws {
        let e = try RestorationEngine()
        let p = Probe("p")
        var after: Error?
        p.onEncode = { [secret] c in
            try c.setSensitivity(.secret, forKey: "a")
            try c.encode(secret, forKey: "a")
            try c.encode("plain", forKey: "b")
            do { try c.setSensitivity(.secret, forKey: "b") } catch { after = error }
        }
        try e.register(p)
        // Too late for "b": the save fails (the value was written as it is).
        XCTAssertThrowsError(try e.saveToData()) { XCTAssertEqual(($0 as? RestorationError)?.statusName, "RST_ERR_STATE") }
        XCTAssertEqual((after as? RestorationError)?.statusName, "RST_ERR_STATE")
        p.onEncode = { [secret] c in
            try c.setSensitivity(.secret, forKey: "a")
            try c.encode(secret, forKey: "a")
            try c.encode("plain", forKey: "b")
        }
        let d = try e.saveToData()
        XCTAssertFalse(contains(d, secret))
        XCTAssertTrue(contains(d, "plain"))
        withExtendedLifetime(p) {}
    }

    /// The skip report of a restore whose archive held a sealed value names
    /// its records after the copy with the opened values is wiped (it read
    /// "\0\0\0\0\0\0" as the path before).
    func testSkipReportAfterARestoreWithSealedValues() throws {
        let key = [UInt8](repeating: 7, count: 32)
        let (e, p) = try source(key: key)
        let side = Probe("Sidebar", parent: p, className: "Panel")
        side.onEncode = { try $0.encode("wide", forKey: "mode") }
        try e.register(side)
        let saved = try e.saveToData()

        let r = try RestorationEngine()
        r.setEncryptionKey { key }
        let q = Probe("login", className: "Login")
        var token: String?
        q.onDecode = { token = try $0.decode(String.self, forKey: "token") }
        try r.register(q)
        try r.restore(from: saved)
        XCTAssertEqual(token, sealed)
        let skips = r.lastRestoreSkips
        XCTAssertEqual(skips.count, 1)
        XCTAssertEqual(skips.first?.path, "login/Sidebar")
        XCTAssertEqual(skips.first?.className, "Panel")
        XCTAssertEqual(skips.first?.reason, .noFactory)
        withExtendedLifetime((p, side, q)) {}
    }
}
