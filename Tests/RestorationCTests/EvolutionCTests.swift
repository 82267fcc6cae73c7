// docs/EVOLUTION.md through real C programs (see CProgramSupport.swift).
import XCTest

final class EvolutionCTests: XCTestCase {
    /// Every skip explained (each reason a C host can cause, the count
    /// equal to the report's, one rst_free) and arrays of references
    /// (decode order with cycles, skipped elements as NULL, misuse).
    func testSkipsExplainedAndObjectArrays() throws {
        try runC("skips", [])
    }
}

final class EvolutionMigrationCTests: XCTestCase {
    /// Migrations: a chain of three migrations over a nested record (rename, nested
    /// edits, a new nested record, removal, replacement), seen by the factory
    /// and decode; the version stored at the next save; no migration for a
    /// current record; a missing step, a failing step, a too-new record, each
    /// skipping the record with its descendants; registration rules.
    func testMigrationChainsThroughTheABI() throws {
        try runC("migrate", [])
    }
}

final class EvolutionQuarantineCTests: XCTestCase {
    /// Quarantine: a child killed by SIGKILL inside one object's decode, then the
    /// partial restore (QUARANTINED, PARENT_SKIPPED, RST_OK, the archive in
    /// place); a second death, a death outside object callbacks and a 1.0
    /// engine set the archive aside; a save ends the quarantine.
    func testPerObjectCrashQuarantine() throws {
        let dir = CTestDir("quarantine")
        try runC("quarantine", [dir.path])
    }
}

final class EvolutionDeferredCTests: XCTestCase {
    /// Restoration that finishes later: a token completed from another thread (did_finish_restoring runs
    /// there), an expired token (RST_SKIP_EXPIRED, the report adjusted), the
    /// marker kept while a token is open, completing twice, misuse.
    func testRestorationThatFinishesLater() throws {
        let dir = CTestDir("deferred")
        try runC("deferred", [dir.path])
    }
}

final class EvolutionCarryCTests: XCTestCase {
    /// Carried records judged record by record: a live object that now holds a
    /// carried record's path replaces that record alone; the carried
    /// descendants are written under the live object; paths held by live
    /// objects are written once.
    func testCarriedRecordsAreJudgedRecordByRecord() throws {
        try runC("carry", [])
    }
}
