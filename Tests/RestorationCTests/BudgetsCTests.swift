// Size budgets through a real C program (C/budgets.c): exact attribution,
// WARN, FAIL, TRIM and the trimmed subtrees at the next restore. Each mode
// prints "budgets: ok N checks"; a failed check prints file:line and the
// engine's last error.
import Foundation
import XCTest

final class BudgetsCTests: XCTestCase {
    private func run(_ mode: String) throws {
        let dir = CTestDir("budgets-\(mode)")
        try runC("budgets", [mode, dir.path], timeout: 120)
    }

    /// rst_last_save_sizes before any save (RST_OK, 0), NULL arguments;
    /// buffer and file saves measured in archive order; each subtree is own
    /// plus its children's; the roots' subtrees plus the header, tables and
    /// checksum are the archive's size exactly (read from the bytes).
    func testSizesAreExact() throws { try run("sizes") }

    /// WARN: saved, one WARNING with the budget, the size and the three
    /// largest non-root subtrees in order; none under the budget.
    func testWarnLogsOneWarning() throws { try run("warn") }

    /// FAIL: RST_ERR_LIMIT naming budget, size and the three largest
    /// subtrees; the old archive byte for byte; the failed save's sizes
    /// listed; buffer saves fail the same way.
    func testFailKeepsTheOldArchive() throws { try run("fail") }

    /// TRIM: lowest priority first, then the largest; descendants trimmed
    /// with their top; the archive within budget and exactly attributed;
    /// the next restore reports the tops as RST_SKIP_TRIMMED with the budget
    /// in the detail (not their descendants), references to them dropped.
    func testTrimByPriorityThenSize() throws { try run("trim") }

    /// TRIM that cannot fit with only the roots left: as FAIL.
    func testTrimThatCannotFitFails() throws { try run("trimfail") }

    /// A trimmed archive's first record, carried by a build that cannot
    /// restore it, does not carry the old list of trimmed paths along.
    func testCarriedRecordDropsTheOldList() throws { try run("carry") }
}
