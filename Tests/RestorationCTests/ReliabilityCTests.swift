// Reliability defects (docs/RELIABILITY.md) that need processes of their own (C/reliability.c);
// the others are reproduced by injected faults in
// Tests/RestorationCoreTests/FileStoreTests.swift and FaultInjectionTests.swift.
import Foundation
import XCTest

final class ReliabilityCTests: XCTestCase {
    /// Defect 5: two processes save while a third discards in a loop; every save succeeds.
    func testDiscardDoesNotBreakSavesOfOtherProcesses() throws {
        let dir = CTestDir("discard-race")
        let r = try runC("reliability", ["discard-race", dir.path], timeout: 120)
        if let summary = r.stdout.split(separator: "\n").first { print(summary) }
    }

    /// Defect 6: a path that is not UTF-8 is refused by rst_read_archive_info as by rst_engine_create.
    func testNonUTF8PathsAreRefusedEverywhere() throws {
        let dir = CTestDir("paths")
        try runC("reliability", ["paths", dir.path])
    }

    /// Defect 8: stdio closed, no descriptor free above 2: the temporary is removed and the error says why.
    func testTemporaryThatCannotLeaveStdioDescriptorsIsRemoved() throws {
        let dir = CTestDir("stdio")
        try runC("reliability", ["stdio", dir.path])
    }
}

final class FullDiskCTests: XCTestCase {
    /// A restore on a full file system: a 512 KiB tmpfs, mounted in a mount
    /// namespace of the test's own (so nothing outlives it), holds the
    /// archive and is then filled to its last block. The crash-loop marker
    /// and the session are mapped slots: without their pages reserved, the
    /// first store into them raised SIGBUS at every launch. Now both
    /// launches restore (the marker and the session fall back to a plain
    /// write, which fails with ENOSPC and is logged).
    func testRestoreOnAFullFileSystemDoesNotDie() throws {
        guard let unshare = CTestPaths.which("unshare") else { throw XCTSkip("unshare (util-linux) is not installed") }
        let prog = try CPrograms.path("fulldisk")
        let dir = CTestDir("fulldisk")
        let mnt = dir.path + "/mnt"
        mkdir(mnt, 0o755)
        // As root a private mount namespace; otherwise a user namespace that maps us to root.
        let userns = getuid() == 0 ? [] : ["-r"]
        let script = """
            set -u
            mount -t tmpfs -o size=512k tmpfs "$1" || { echo "cannot mount a tmpfs"; exit 77; }
            "$2" save "$1" || exit 1
            dd if=/dev/zero of="$1/fill" bs=4096 2>/dev/null
            dd if=/dev/zero of="$1/fill2" bs=1 2>/dev/null
            echo "free blocks: $(stat -f -c %a "$1")"
            "$2" restore "$1"; echo "first launch exit $?"
            "$2" restore "$1"; echo "second launch exit $?"
            """
        let r = try runProgram(unshare, userns + ["-m", "--propagation", "private", "sh", "-c", script, "sh", mnt, prog], timeout: 120)
        if r.code == 77 { throw XCTSkip("no tmpfs could be mounted here: \(r.stdout)") }
        XCTAssertTrue(r.stdout.contains("free blocks: 0"), "the tmpfs was not filled:\n\(r)")
        XCTAssertTrue(r.stdout.contains("first launch exit 0"), "the first restore on a full disk failed or died:\n\(r)")
        XCTAssertTrue(r.stdout.contains("second launch exit 0"), "the second restore on a full disk failed or died:\n\(r)")
        XCTAssertFalse(r.stdout.contains("exit 135"), "SIGBUS:\n\(r)")
    }
}

final class UnchangedStateCTests: XCTestCase {
    /// A second engine on one path (or a tool that only saves) compares
    /// with the archive in the store: the same state writes nothing and
    /// rotates no generation.
    func testAnEngineThatNeverRestoredDoesNotRewriteTheSameState() throws {
        try runC("unchanged", ["second-engine", CTestDir("unchanged").path])
    }

    /// After a FALLBACK the engine is dirty, so an idle host's flush fills
    /// the archive slot and the next launch is RELAUNCH, not FALLBACK again.
    func testAFallbackIsFollowedByASave() throws {
        try runC("unchanged", ["fallback", CTestDir("fallback").path])
    }
}

final class MachinesCTests: XCTestCase {
    /// Two "machines" on one host: a session recorded on the other one is
    /// RECOVER (not judged by its live pid) with a WARNING naming it; an
    /// invalid RESTORATION_MACHINE_ID is ignored with a WARNING.
    func testSessionsNameTheirMachine() throws {
        try runC("machines", [CTestDir("machines").path])
    }
}
