// The one table of the C enumerators' names (CSpelling.swift): every value
// has its own spelling with its enum's prefix, an unknown value the
// "_UNKNOWN" one, and the values' cName reads the table.
import XCTest
@testable import RestorationCore

final class CSpellingTests: XCTestCase {
    func testStatusSpellings() {
        let known = (0...64).compactMap { Status(rawValue: $0) }
        XCTAssertEqual(known.count, 15)
        XCTAssertEqual(Set(known.map(\.cName)).count, known.count, "two statuses share a spelling")
        for s in known {
            XCTAssertTrue(s == .ok ? s.cName == "RST_OK" : s.cName.hasPrefix("RST_ERR_"), s.cName)
            XCTAssertEqual(s.description, s.cName)
        }
        XCTAssertEqual(Status.noMemory.cName, "RST_ERR_NOMEM")
        XCTAssertEqual(CSpelling.status(rawValue: 15).description, "RST_ERR_UNKNOWN")
        XCTAssertEqual(RestorationFailure(.corrupt, "bad").description, "RST_ERR_CORRUPT: bad")
    }

    func testRestoreReasonSpellings() {
        let known = (0...64).compactMap { RestoreReason(rawValue: $0) }
        XCTAssertEqual(known.count, 7)
        XCTAssertEqual(Set(known.map(\.cName)).count, known.count)
        for r in known { XCTAssertTrue(r.cName.hasPrefix("RST_REASON_"), r.cName); XCTAssertEqual(r.description, r.cName) }
        XCTAssertEqual(RestoreReason.recover.cName, "RST_REASON_RECOVER")
        XCTAssertEqual(CSpelling.restoreReason(rawValue: 7).description, "RST_REASON_UNKNOWN")
    }

    func testSkipReasonSpellings() {
        XCTAssertEqual(Set(SkipReason.allCases.map(\.cName)).count, SkipReason.allCases.count)
        for r in SkipReason.allCases { XCTAssertTrue(r.cName.hasPrefix("RST_SKIP_"), r.cName) }
        XCTAssertEqual(SkipReason.trimmed.cName, "RST_SKIP_TRIMMED")
        XCTAssertEqual(CSpelling.skipReason(rawValue: 0).description, "RST_SKIP_UNKNOWN")
    }
}
