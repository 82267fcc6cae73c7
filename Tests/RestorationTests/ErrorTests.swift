import Foundation
import XCTest
import RestorationCore
@testable import Restoration

final class ErrorTests: XCTestCase {

    func testEveryStatusMapsToItsCaseWithItsMessage() {
        let table: [(Status, RestorationError, String)] = [
            (.invalid, .invalid("m1"), "RST_ERR_INVALID"),
            (.notFound, .notFound("m2"), "RST_ERR_NOT_FOUND"),
            (.duplicate, .duplicate("m3"), "RST_ERR_DUPLICATE"),
            (.type, .type("m4"), "RST_ERR_TYPE"),
            (.corrupt, .corrupt("m5"), "RST_ERR_CORRUPT"),
            (.version, .version("m6"), "RST_ERR_VERSION"),
            (.io, .io("m7"), "RST_ERR_IO"),
            (.plugin, .plugin("m8"), "RST_ERR_PLUGIN"),
            (.rejected, .rejected("m9"), "RST_ERR_REJECTED"),
            (.noMemory, .noMemory("m10"), "RST_ERR_NOMEM"),
            (.state, .state("m11"), "RST_ERR_STATE"),
            (.limit, .limit("m12"), "RST_ERR_LIMIT"),
            (.fenced, .fenced("m13"), "RST_ERR_FENCED"),
            (.unavailable, .unavailable("m14"), "RST_ERR_UNAVAILABLE"),
        ]
        for (i, (status, expected, name)) in table.enumerated() {
            let message = "m\(i + 1)"
            let e = RestorationError(RestorationFailure(status, message))
            XCTAssertEqual(e, expected)
            XCTAssertEqual(e.message, message)
            XCTAssertEqual(e.statusCode, status.rawValue)
            XCTAssertEqual(e.statusCode, UInt32(i + 1))
            XCTAssertEqual(e.statusName, name)
            XCTAssertEqual(e.description, "\(name): \(message)")
            XCTAssertEqual(e.localizedDescription, message)
            XCTAssertEqual(e.failureReason, name)
            XCTAssertEqual(e.failure.status, status)
        }
    }

    func testEngineFailuresCarryTheCoresMessages() throws {
        let dir = try temporaryDirectory(self)
        let url = dir.appendingPathComponent("state.rst")
        let engine = try RestorationEngine(archiveURL: url, appVersion: "1.0", idiom: "desktop")

        // First launch: no archive.
        XCTAssertThrowsError(try engine.restore()) { e in
            guard case RestorationError.notFound(let m)? = e as? RestorationError else { return XCTFail("\(e)") }
            XCTAssertTrue(m.contains(url.path), m)
        }

        // A bad identifier.
        XCTAssertThrowsError(try engine.register(Probe("a/b"))) { e in
            guard case RestorationError.invalid? = e as? RestorationError else { return XCTFail("\(e)") }
        }
        XCTAssertThrowsError(try engine.register(Probe(""))) { e in
            guard case RestorationError.invalid? = e as? RestorationError else { return XCTFail("\(e)") }
        }
        XCTAssertThrowsError(try engine.register(Probe(nil))) { e in
            guard case RestorationError.invalid(let m)? = e as? RestorationError else { return XCTFail("\(e)") }
            XCTAssertTrue(m.contains("restorationIdentifier"), m)
        }

        // shouldSave says no.
        let p = Probe("P")
        p.onEncode = { try $0.encode(1, forKey: "v") }
        try engine.register(p)
        engine.shouldSave = { false }
        XCTAssertThrowsError(try engine.save()) { e in
            guard case RestorationError.rejected(let m)? = e as? RestorationError else { return XCTFail("\(e)") }
            XCTAssertTrue(m.contains("should_save"), m)
        }
        engine.shouldSave = nil
        try engine.save()

        // shouldRestore sees the info and says no.
        var seen: RestorationEngine.ArchiveInfo?
        engine.shouldRestore = { info in seen = info; return false }
        XCTAssertThrowsError(try engine.restore()) { e in
            guard case RestorationError.rejected? = e as? RestorationError else { return XCTFail("\(e)") }
        }
        XCTAssertEqual(seen?.appVersion, "1.0")
        XCTAssertEqual(seen?.idiom, "desktop")
        XCTAssertEqual(seen?.objectCount, 1)
        XCTAssertEqual(seen?.formatVersion, 1)
        XCTAssertLessThan(abs(seen!.savedAt.timeIntervalSinceNow), 600)
        // What the file says; the restore also says why it restores (1.1).
        XCTAssertEqual(seen?.restoreReason, .relaunch)
        seen?.restoreReason = .firstLaunch
        XCTAssertEqual(try RestorationEngine.archiveInfo(at: url), seen)
        engine.shouldRestore = nil
        try engine.restore()

        // Unregister inside a callback: .state.
        var inner: RestorationError?
        p.onDecode = { _ in
            do { try engine.unregister(p) } catch let e as RestorationError { inner = e }
        }
        try engine.restore()
        guard case .state(let m)? = inner else { return XCTFail("\(String(describing: inner))") }
        XCTAssertTrue(m.contains("'P'"), m)

        // Discard, then restore: not found again.
        try engine.discard()
        try engine.discard()   // nothing left: still fine
        XCTAssertThrowsError(try engine.restore()) { e in
            guard case RestorationError.notFound? = e as? RestorationError else { return XCTFail("\(e)") }
        }
    }

    func testCorruptAndForeignArchives() throws {
        let engine = try RestorationEngine()
        XCTAssertThrowsError(try engine.restore(from: Data("not an archive at all, just some text".utf8))) { e in
            guard let r = e as? RestorationError else { return XCTFail("\(e)") }
            switch r {
            case .corrupt(let m), .version(let m): XCTAssertTrue(m.contains("the buffer"), m)
            default: XCTFail("\(r)")
            }
        }
        // A valid archive with one byte flipped: corrupt, and nothing ran.
        let a = try RestorationEngine()
        let p = Probe("P")
        p.onEncode = { try $0.encode("some state worth keeping", forKey: "k") }
        try a.register(p)
        var data = try a.saveToData()
        data[data.count / 2] ^= 0x40
        let target = Probe("P")
        try engine.register(target)
        var asked = false
        engine.shouldRestore = { _ in asked = true; return true }
        XCTAssertThrowsError(try engine.restore(from: data)) { e in
            guard case RestorationError.corrupt(let m)? = e as? RestorationError else { return XCTFail("\(e)") }
            XCTAssertFalse(m.isEmpty)
        }
        XCTAssertFalse(asked, "validation runs before any callback")
        XCTAssertEqual(target.decodeCount, 0)
        XCTAssertNil(engine.lastRestoreReport)
        XCTAssertThrowsError(try RestorationEngine.archiveInfo(from: data))
    }

    func testBuffersOnlyEngineAndBadOptions() throws {
        let engine = try RestorationEngine()
        XCTAssertThrowsError(try engine.save()) { e in
            guard case RestorationError.invalid(let m)? = e as? RestorationError else { return XCTFail("\(e)") }
            XCTAssertTrue(m.contains("archive path") && !m.contains("rst_"), m)
        }
        XCTAssertThrowsError(try engine.restore()) { e in
            guard case RestorationError.invalid? = e as? RestorationError else { return XCTFail("\(e)") }
        }
        XCTAssertThrowsError(try engine.discard())
        XCTAssertThrowsError(try RestorationEngine(archivePath: "")) { e in
            guard case RestorationError.invalid? = e as? RestorationError else { return XCTFail("\(e)") }
        }
        XCTAssertThrowsError(try RestorationEngine(archiveURL: URL(string: "https://example.com/state.rst")!)) { e in
            guard case RestorationError.invalid(let m)? = e as? RestorationError else { return XCTFail("\(e)") }
            XCTAssertTrue(m.contains("not a file URL"), m)
        }
        XCTAssertThrowsError(try RestorationEngine(archivePath: "/tmp/x.rst", appVersion: String(repeating: "v", count: 5000))) { e in
            guard case RestorationError.limit? = e as? RestorationError else { return XCTFail("\(e)") }
        }
    }

    func testIOErrors() throws {
        // The archive's folder would have to be inside a regular file.
        let dir = try temporaryDirectory(self)
        let file = dir.appendingPathComponent("not-a-folder")
        XCTAssertTrue(FileManager.default.createFile(atPath: file.path, contents: Data("x".utf8)))
        let engine = try RestorationEngine(archivePath: file.path + "/sub/state.rst")
        try engine.register(Probe("P"))
        XCTAssertThrowsError(try engine.save()) { e in
            guard case .io(let m)? = e as? RestorationError else { return XCTFail("\(e)") }
            XCTAssertTrue(m.contains("not-a-folder") && m.contains("not a directory"), m)
        }
    }

    /// A missing archive folder is created (mode 0700, as XDG asks), parents included.
    func testSaveCreatesTheMissingArchiveFolder() throws {
        let dir = try temporaryDirectory(self)
        let path = dir.appendingPathComponent("state/myapp/state.rst").path
        let engine = try RestorationEngine(archivePath: path)
        try engine.register(Probe("P"))
        try engine.save()
        XCTAssertTrue(FileManager.default.fileExists(atPath: path))
        for folder in [dir.appendingPathComponent("state").path, dir.appendingPathComponent("state/myapp").path] {
            let attrs = try FileManager.default.attributesOfItem(atPath: folder)
            XCTAssertEqual((attrs[.posixPermissions] as? NSNumber)?.intValue, 0o700, folder)
        }
    }

    func testCrashLoopGuardRefusesAndSetsTheArchiveAside() throws {
        let dir = try temporaryDirectory(self)
        let url = dir.appendingPathComponent("state.rst")
        let a = try RestorationEngine(archiveURL: url)
        let p = Probe("P")
        try a.register(p)
        try a.save()
        XCTAssertTrue(a.options.crashGuard)

        // Without the guard, a restore neither checks nor writes the marker.
        let b = try RestorationEngine(options: .init(archivePath: url.path, crashGuard: false))
        let bp = Probe("P")
        try b.register(bp)
        try b.restore()
        XCTAssertEqual(b.lastRestoreReport?.restored, 1)

        // A process that died while restoring left its marker behind.
        // (The marker format: RestorationCore/CrashGuard.swift; it names this boot and these archive bytes.)
        let bytes = [UInt8](try Data(contentsOf: url))
        let boot = (try String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)).trimmingCharacters(in: .whitespacesAndNewlines)
        let crc = bytes.suffix(4).map { String(format: "%02x", $0) }.joined()
        try "restoration-crash-marker 1\npid=2147483000\nstart=1\nboot=\(boot)\narchive=\(bytes.count):\(crc)\nend\n"
            .write(toFile: url.path + ".restoring", atomically: false, encoding: .utf8)
        let logs = LogBox()
        a.log = logs.handler()
        XCTAssertThrowsError(try a.restore()) { e in
            guard case RestorationError.rejected(let m)? = e as? RestorationError else { return XCTFail("\(e)") }
            XCTAssertTrue(m.contains(".crashed-"), m)
        }
        XCTAssertTrue(logs.lines.contains { $0.0 == .error && $0.1.contains(".crashed-") }, "\(logs.lines)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: url.path), "set aside, not restored again")
        let aside = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("state.rst.crashed-") }
        XCTAssertEqual(aside.count, 1)
        XCTAssertThrowsError(try a.restore()) { e in
            guard case RestorationError.notFound? = e as? RestorationError else { return XCTFail("\(e)") }
        }
        try a.discard()
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty, "discard removes set-aside copies")
    }
}
