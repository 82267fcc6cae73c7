// CrashPolicy.swift: what a marker left by a restore that died means for
// the next one (restore, skip one record, set aside, refuse), and the acts
// that follow through a file store.
import XCTest
import Foundation
@testable import RestorationCore

final class CrashPolicyTests: XCTestCase {
    private var dir: String!

    override func setUp() {
        dir = NSTemporaryDirectory() + "rst-crashpolicy-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    override func tearDown() {
        CrashGuard.simulateNextProcess = false
        try? FileManager.default.removeItem(atPath: dir)
    }

    private func dead(record: Int?, attempt: Int = 1) -> CrashGuard.Verdict {
        .crashed(CrashGuard.Marker(owner: .init(pid: 4242, start: 1, boot: "b"), archive: "x", attempt: attempt, record: record, isVersion2: true))
    }

    func testDecisions() {
        guard case .restore(nil) = CrashPolicy.decide(.none, quarantine: true, recordCount: 3) else { return XCTFail("absent marker") }
        guard case .restore(let w?) = CrashPolicy.decide(.ignore("a torn marker"), quarantine: true, recordCount: 3) else { return XCTFail("ignored marker") }
        XCTAssertEqual(w, "a torn marker")
        guard case .refuse(let f) = CrashPolicy.decide(.unreadable(RestorationFailure(.io, "cannot read it")), quarantine: true, recordCount: 3) else { return XCTFail("unreadable marker") }
        XCTAssertEqual(f.status, .io)
        // A death inside record 2's callback, first attempt, quarantine on: skip that record only.
        guard case .skipRecord(2, pid: 4242) = CrashPolicy.decide(dead(record: 2), quarantine: true, recordCount: 3) else { return XCTFail("quarantine") }
        // Without quarantine, on a second attempt, or outside any callback: set aside.
        guard case .setAside(pid: 4242, named: false) = CrashPolicy.decide(dead(record: 2), quarantine: false, recordCount: 3) else { return XCTFail("no quarantine") }
        guard case .setAside(pid: 4242, named: false) = CrashPolicy.decide(dead(record: 2, attempt: 2), quarantine: true, recordCount: 3) else { return XCTFail("second attempt") }
        guard case .setAside(pid: 4242, named: false) = CrashPolicy.decide(dead(record: nil), quarantine: true, recordCount: 3) else { return XCTFail("no record") }
        // A record the archive does not hold: set aside, the quarantine left as it is.
        guard case .setAside(pid: 4242, named: true) = CrashPolicy.decide(dead(record: 3), quarantine: true, recordCount: 3) else { return XCTFail("record out of range") }
    }

    func testAttemptFollowsQuarantine() {
        let off = Engine(configuration: .init())
        XCTAssertNil(off.crashPolicy.attempt(quarantined: nil))
        var c = Engine.Configuration()
        c.quarantine = true
        let on = Engine(configuration: c)
        XCTAssertEqual(on.crashPolicy.attempt(quarantined: nil), 1)
        XCTAssertEqual(on.crashPolicy.attempt(quarantined: Quarantine.Entry(archive: "x", record: 1, path: "A/B", pid: 1)), 2)
    }

    /// Saves A and A/B, then leaves the marker of a restore that died in
    /// B's callback (or, `inRecord` false, outside any callback).
    private func deadRestore(inRecord: Bool) throws -> String {
        let path = dir + "/state.rst"
        let saver = Engine(configuration: .init(archivePath: path))
        let rec = Recorder()
        let a = try saver.register(identifier: "A", parent: nil, className: nil, behavior: RecordingBehavior(name: "A", recorder: rec))
        _ = try saver.register(identifier: "B", parent: a, className: nil, behavior: RecordingBehavior(name: "B", recorder: rec))
        try saver.save()
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let token = try bytes.withUnsafeBytes { try CrashGuard.begin(FileArchiveStore(path: path), bytes: $0, attempt: inRecord ? 1 : nil) }
        if inRecord {
            let watch = try XCTUnwrap(token.watch)
            watch.enter(1)
            watch.unmap()
        }
        CrashGuard.simulateNextProcess = true
        return path
    }

    private func restorer(_ path: String, quarantine: Bool, _ rec: Recorder) throws -> Engine {
        var c = Engine.Configuration(archivePath: path)
        c.quarantine = quarantine
        let e = Engine(configuration: c)
        let a = try e.register(identifier: "A", parent: nil, className: nil, behavior: RecordingBehavior(name: "A", recorder: rec))
        _ = try e.register(identifier: "B", parent: a, className: nil, behavior: RecordingBehavior(name: "B", recorder: rec))
        return e
    }

    func testDeathInARecordQuarantinesItAndRestoresTheRest() throws {
        let path = try deadRestore(inRecord: true)
        let rec = Recorder()
        let e = try restorer(path, quarantine: true, rec)
        try e.restore()
        XCTAssertEqual(rec.events.filter { $0.hasPrefix("decode") }, ["decode A"])
        XCTAssertEqual(e.lastRestoreSkips.map(\.reason), [.quarantined])
        XCTAssertEqual(e.lastRestoreSkips.map(\.path), ["A/B"])
        XCTAssertEqual(Quarantine.read(FileArchiveStore(path: path))?.record, 1)
    }

    func testDeathOutsideARecordSetsTheArchiveAside() throws {
        let path = try deadRestore(inRecord: false)
        let e = try restorer(path, quarantine: false, Recorder())
        XCTAssertThrowsError(try e.restore()) { err in
            let f = err as! RestorationFailure
            XCTAssertEqual(f.status, .rejected)
            XCTAssertTrue(f.message.contains("set aside"), f.message)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        let names = try FileManager.default.contentsOfDirectory(atPath: dir)
        XCTAssertTrue(names.contains { $0.hasPrefix("state.rst.crashed-") }, "\(names)")
    }
}
