// RestoreOutcomes.swift: the reason, generation, counts and skips of the
// restore in progress or last done.
import XCTest
@testable import RestorationCore
import RestorationArchive

final class RestoreOutcomesTests: XCTestCase {
    /// A validated archive of two records, A and A/B.
    private func reader() throws -> ArchiveReader {
        let e = Engine(configuration: .init())
        let a = try e.register(identifier: "A", parent: nil, className: "Host", behavior: nil)
        _ = try e.register(identifier: "B", parent: a, className: "Gone", behavior: nil)
        let bytes = try e.saveToBytes()
        return try bytes.withUnsafeBytes { try Engine.validate($0, source: "the test archive") }
    }

    func testBeginSetsReasonAndGeneration() {
        let o = RestoreOutcomes()
        XCTAssertEqual(o.reason, .firstLaunch)
        XCTAssertNil(o.counts)
        o.begin(.fallback, generation: 3)
        XCTAssertEqual(o.reason, .fallback)
        XCTAssertEqual(o.generation, 3)
        o.begin(.reset, generation: nil)   // RESET keeps the generation the failed attempt read
        XCTAssertEqual(o.reason, .reset)
        XCTAssertEqual(o.generation, 3)
        o.begin(.buffer, generation: 0)
        XCTAssertEqual(o.generation, 0)
    }

    func testRecordCountsTrimmedSubtreesAsSkipped() throws {
        let r = try reader()
        let o = RestoreOutcomes()
        var counts = RestoreCounts()
        counts.archived = 2
        counts.restored = 1
        counts.skipped = 1
        let ledger = SkipLedger(reader: r, entries: [(1, .noFactory, nil)])
        let trimmed = SkippedRecord(record: -1, path: "A/Big", className: "", reason: .trimmed, version: 0, detail: "left out by the size budget")
        o.record(counts, ledger, trimmed: [trimmed], reader: r)
        XCTAssertEqual(o.counts?.skipped, 2)
        XCTAssertEqual(o.counts?.restored, 1)
        XCTAssertEqual(o.skips.records.map(\.path), ["A/B", "A/Big"])
        XCTAssertEqual(o.skips.records.map(\.reason), [.noFactory, .trimmed])
    }

    func testUnrestoreMovesARecordFromRestoredToSkipped() throws {
        let r = try reader()
        let o = RestoreOutcomes()
        o.unrestore(record: 1, reason: .expired, detail: "late", reader: r)
        XCTAssertNil(o.counts, "no counts before a restore reached its report")
        var counts = RestoreCounts()
        counts.archived = 2
        counts.restored = 2
        o.record(counts, .empty, trimmed: [], reader: r)
        o.unrestore(record: 1, reason: .expired, detail: "its deadline passed", reader: r)
        XCTAssertEqual(o.counts?.restored, 1)
        XCTAssertEqual(o.counts?.skipped, 1)
        XCTAssertEqual(o.skips.records.map(\.path), ["A/B"])
        XCTAssertEqual(o.skips.records.first?.reason, .expired)
        XCTAssertEqual(o.skips.records.first?.detail, "its deadline passed")
    }
}
