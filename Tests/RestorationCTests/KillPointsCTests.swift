// Process-death testing from inside a program (C/killpoints.c):
// RESTORATION_KILL_AT at every point, and RESTORATION_TEST_EXIT's report.
// Each program prints "killpoints: ok N checks"; a failed check prints
// file:line and the engine's last error.
import Foundation
import XCTest

final class KillPointsCTests: XCTestCase {
    /// Each kill point ends the process by SIGKILL where it should: the
    /// archive afterwards is the old one (the new one after save-replaced),
    /// the next restore reads RECOVER; ":N" counts; restore-decoding leaves a
    /// quarantine, restore-finished nothing; buffers reach no point; an
    /// invalid value is logged once and ignored.
    func testKillPoints() throws {
        let dir = CTestDir("killpoints")
        try runC("killpoints", ["points", dir.path], timeout: 120)
    }

    /// The report's fields, exit 0 inside the first file restore, a restore
    /// that found nothing, no report file (one warning, the program goes on),
    /// roundtrip's <report>.rst, a buffer restore fires nothing.
    func testTestExits() throws {
        let dir = CTestDir("testexits")
        try runC("killpoints", ["exits", dir.path], timeout: 120)
    }
}
