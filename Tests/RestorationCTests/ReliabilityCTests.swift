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
