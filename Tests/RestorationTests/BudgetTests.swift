import Foundation
import XCTest
@testable import Restoration
import RestorationArchive

/// Size budgets in the Swift API (library 1.2; docs/BUDGETS.md).
final class BudgetTests: XCTestCase {
    private func tree(_ e: RestorationEngine) throws -> [String: Probe] {
        let root = Probe("Root")
        let a = Probe("A", parent: root, className: "Leaf")
        let b = Probe("B", parent: root, className: "Leaf")
        let c = Probe("C", parent: b, className: "Leaf")
        a.onEncode = { try $0.encode(String(repeating: "a", count: 400), forKey: "pad") }
        b.onEncode = { try $0.encode(String(repeating: "b", count: 1000), forKey: "pad") }
        c.onEncode = { try $0.encode(String(repeating: "c", count: 100), forKey: "pad") }
        for p in [root, a, b, c] { try e.register(p) }
        return ["Root": root, "A": a, "B": b, "C": c]
    }

    /// Sizes in archive order; subtree = own + children; roots + header and
    /// tables = the archive's size (checked through the archive module).
    func testLastSaveSizesAddUp() throws {
        let e = try RestorationEngine()
        XCTAssertEqual(e.lastSaveSizes, [])
        let probes = try tree(e)
        let data = try e.saveToData()
        withExtendedLifetime(probes) {}
        let sizes = e.lastSaveSizes
        XCTAssertEqual(sizes.map(\.path), ["Root", "Root/A", "Root/B", "Root/B/C"])
        XCTAssertEqual(sizes.map(\.className), ["", "Leaf", "Leaf", "Leaf"])
        XCTAssertEqual(sizes[2].subtreeBytes, sizes[2].ownBytes + sizes[3].ownBytes)
        XCTAssertEqual(sizes[0].subtreeBytes, sizes.reduce(0) { $0 + $1.ownBytes })
        let reader = try ArchiveReader(bytes: [UInt8](data))
        let measured = RecordSizes(reader: reader)
        XCTAssertEqual(measured.own, sizes.map(\.ownBytes))
        XCTAssertEqual(measured.subtree, sizes.map(\.subtreeBytes))
        XCTAssertEqual(sizes[0].subtreeBytes + measured.overhead, UInt64(data.count))
        XCTAssertFalse(sizes.contains { $0.trimmed })
    }

    /// TRIM with priorities: the low-priority subtree goes first even when
    /// it is smaller; the restore lists it as `.trimmed`.
    func testTrimByPriority() throws {
        var o = RestorationEngine.Options()
        let plain = try RestorationEngine(options: o)
        let plainProbes = try tree(plain)
        let total = try plain.saveToData().count
        withExtendedLifetime(plainProbes) {}
        o.sizeBudget = UInt64(total - 300)
        o.budgetPolicy = .trim
        let e = try RestorationEngine(options: o)
        let probes = try tree(e)
        try e.setPriority(-1, for: probes["A"]!)
        let data = try e.saveToData()
        withExtendedLifetime(probes) {}
        XCTAssertLessThanOrEqual(data.count, total - 300)
        XCTAssertEqual(e.lastSaveSizes.filter(\.trimmed).map(\.path), ["Root/A"])
        XCTAssertThrowsError(try e.setPriority(1, for: Probe("Loose")))

        let r = try RestorationEngine()
        r.log = { _, _ in }
        r.setFallbackFactory { path, _ in Probe(path.last!) }
        try r.restore(from: data)
        let skips = r.lastRestoreSkips
        XCTAssertEqual(skips.map(\.path), ["Root/A"])
        XCTAssertEqual(skips.first?.reason, .trimmed)
        XCTAssertTrue(skips.first?.detail.contains("size budget of \(total - 300) bytes") ?? false)
        XCTAssertEqual(r.lastRestoreReport?.skipped, 1)
    }

    /// FAIL: `.limit` naming the budget; WARN: saved, one warning.
    func testFailAndWarn() throws {
        var o = RestorationEngine.Options()
        o.sizeBudget = 100
        o.budgetPolicy = .fail
        let f = try RestorationEngine(options: o)
        let fProbes = try tree(f)
        XCTAssertThrowsError(try f.saveToData()) { error in
            guard case RestorationError.limit(let m) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(m.contains("size budget of 100 bytes"), m)
            XCTAssertTrue(m.contains("'Root/B' (class 'Leaf', "), m)
        }
        XCTAssertEqual(f.lastSaveSizes.count, 4)
        withExtendedLifetime(fProbes) {}
        o.budgetPolicy = .warn
        let logs = LogBox()
        o.log = logs.handler()
        let w = try RestorationEngine(options: o)
        let wProbes = try tree(w)
        XCTAssertNoThrow(try w.saveToData())
        withExtendedLifetime(wProbes) {}
        XCTAssertEqual(logs.warnings.filter { $0.contains("size budget of 100 bytes") }.count, 1, "\(logs.warnings)")
    }
}
