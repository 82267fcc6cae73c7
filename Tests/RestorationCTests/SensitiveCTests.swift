// Sensitive values and portable exports through a real C program
// (C/sensitive.c): SECRET never written (archive, generations, set-aside
// copy, buffer, export), ENCRYPTED sealed and bound to its record, LOCAL
// left out of portable exports. Each program prints "sensitive: ok N checks".
import Foundation
import XCTest

final class SensitiveCTests: XCTestCase {
    private func run(_ mode: String) throws {
        let dir = CTestDir("sensitive-\(mode)")
        try runC("sensitive", [mode, dir.path], timeout: 300)
    }

    /// A distinctive SECRET value is in no file or buffer the program makes;
    /// it decodes as not found (nested records too); the coder's own setting
    /// wins before the key and is RST_ERR_STATE after; argument checks.
    func testSecretValuesAreNeverWritten() throws { try run("secret") }

    /// Sealed values: the key asked once per save and per restore; a wrong
    /// key, a failing or missing callback, a flipped byte and a moved value
    /// each decode as not found with one WARNING, the rest restored; no key
    /// at save leaves the value out with one WARNING.
    func testSealedValuesOpenOnlyWithTheirKeyAndRecord() throws { try run("sealed") }

    /// rst_export: not a save; PORTABLE leaves out LOCAL and ENCRYPTED values.
    func testPortableExport() throws { try run("export") }

    /// A carried record is written without the keys the policy makes SECRET
    /// (even when an older build wrote them) and with its sealed values
    /// still sealed, so a build with the key opens them later.
    func testCarriedRecordsLeaveOutSecretsAndStaySealed() throws { try run("carry") }

    /// A migration sees a sealed value as RST_TYPE_SEALED; one it leaves in
    /// place opens afterwards, one it moves to another key does not.
    func testMigrationsSeeSealedValuesAndMovingOneBreaksIt() throws { try run("migrate") }

    /// The skip report of a restore whose archive held a sealed value names
    /// its records (path, class, detail) after the opened copy is wiped.
    func testSkipReportSurvivesTheWipeOfOpenedValues() throws { try run("skips") }
}
