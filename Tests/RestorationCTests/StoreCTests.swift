// The storage door through real C programs (C/store.c, C/store_contract.h):
// the store contract on the file and memory stores, engines on stores,
// crash verdicts, corrupt archives set aside (RESET), unchanged state not
// written again. Each program prints "store: ok N checks"; a failed check
// prints file:line and the engine's last error.
import Foundation
import XCTest

final class StoreCTests: XCTestCase {
    private func run(_ mode: String, timeout: Double = 120) throws {
        let dir = CTestDir("store-\(mode)")
        try runC("store", [mode, dir.path], timeout: timeout)
    }

    /// Atomic write and move, move replacing, remove of an empty slot, list
    /// ascending with *count beyond cap, a hold unchanged across a
    /// replacement, link and map when present, the 1.1 file names; on the
    /// file store, the memory store and a counting wrapper.
    func testStoreContract() throws { try run("contract") }

    /// An engine on the memory store (wrapped to count): save, restore,
    /// generations, restore_generation, FALLBACK with the invalid archive set
    /// aside, discard empties every slot, reads released and locks unlocked,
    /// no lock held in should_save/should_restore, destroy exactly once.
    func testEngineOnMemoryStore() throws { try run("memory") }

    /// The same on a wrapped file store in a folder that does not exist yet,
    /// RECOVER after a SIGKILL in a forked child, and the unwrapped file
    /// store making 1.1's files.
    func testEngineOnWrappedFileStore() throws { try run("file") }

    /// A store table declared with RST_STORE_OPS_INIT (members by name):
    /// its version is RST_STORE_VERSION and the members it leaves out
    /// (link, map, flags) are 0; it passes the store contract, and an
    /// engine saves, restores (a generation too) and is destroyed through it.
    func testStoreTableFromOpsInit() throws { try run("opsinit") }

    /// rst_engine_create_with_store: archive_path set, a NULL member,
    /// unknown flags, another version, bad options, NULL out: refused, and
    /// destroy called exactly once in every case.
    func testCreateWithStoreChecks() throws { try run("create") }

    /// A store failure without a sentence names describe(); a store's
    /// rst_store_set_error sentence is kept; RST_OK without *data is
    /// RST_ERR_IO; bytes that fail validation are an invalid archive.
    func testStoreErrorSentences() throws { try run("errors") }

    /// A crash in the first session of a new install reads RECOVER; a
    /// zombie is dead; rst_close_session makes the next restore RELAUNCH
    /// (file store, and a store that maps).
    func testCrashVerdicts() throws { try run("verdicts") }

    /// A corrupt archive with 0 and with 2 generations; every copy bad; a
    /// missing archive with corrupt generations: RESET, each invalid copy set
    /// aside intact, FIRST_LAUNCH next; FALLBACK leaves passed-over ones.
    func testCorruptArchiveNeverLostOrHidden() throws { try run("reset") }

    /// Two identical saves leave the inode and mtime alone and rotate no
    /// generation; a changed value or app_version writes; so does a save
    /// after another process replaced the archive.
    func testUnchangedStateIsNotWrittenAgain() throws { try run("unchanged") }

    /// RESTORATION_KILL_AT=save-written:2 kills the second save with the new
    /// archive durable but not in place (the old one restores, RECOVER, the
    /// temporary removed by the next save); save-replaced:2 right after it is
    /// in place (the new one restores, the old one is generation 1); buffer
    /// saves reach neither.
    func testSaveKillPoints() throws { try run("killpoints") }

    /// A child SIGKILLed in one object's decode, through a wrapped file
    /// store: with `map`, the next restore quarantines that record and
    /// restores the rest; without `map`, it sets the archive aside.
    func testQuarantineWithAndWithoutMap() throws { try run("quarantine") }

    /// Carried records through a store: a build without a class keeps its
    /// record through a save; a build with it again restores it.
    func testCarriedRecordsThroughAStore() throws { try run("carry") }
}
