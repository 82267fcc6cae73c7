// File names are bytes: OS strings through a real C program
// (C/osstrings.c). It prints "osstrings: ok N checks"; a failed check
// prints file:line and the engine's last error.
import Foundation
import XCTest

final class OSStringCTests: XCTestCase {
    /// "caf\xe9" saved to a file and restored: RST_TYPE_OS_STRING, the same
    /// bytes from rst_decode_os_string and rst_decode_bytes, RST_ERR_TYPE
    /// from rst_decode_string (a UTF-8 one reads as a string), a string read
    /// as an OS string, rst_decode_string_copy (fits, RST_ERR_LIMIT with
    /// buf[0] NUL, cap 0 writes nothing, missing and wrong type set len 0),
    /// NULL arguments.
    func testNonUTF8NameRoundTripsThroughAFile() throws {
        let dir = CTestDir("osstrings-roundtrip")
        try runC("osstrings", ["roundtrip", dir.path])
    }

    /// A migration step reads an OS string (as an OS string, bytes and a
    /// copy; not as a string), renames one, removes one and writes a new
    /// one; the migrated record holds them with their type.
    func testMigrationKeepsOSStrings() throws {
        try runC("osstrings", ["migrate"])
    }

    /// A NULL value is RST_ERR_INVALID and fails the save; the old archive
    /// stays as it was and restores.
    func testNullValueFailsTheSaveAndKeepsTheArchive() throws {
        let dir = CTestDir("osstrings-misuse")
        try runC("osstrings", ["misuse", dir.path])
    }
}
