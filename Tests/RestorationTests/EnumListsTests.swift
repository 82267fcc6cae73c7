// The Swift API's lists of restore reasons, skip reasons and error statuses
// against the C header's enumerators and the core's values, case by case:
// each C enumerator has a Swift case with its number and its name, each
// Swift case has its C enumerator, and the core knows exactly these values.
// A reason added to restoration.h without its Swift case fails here, naming it.
import Foundation
import XCTest
@testable import Restoration
import RestorationCore

final class EnumListsTests: XCTestCase {
    /// `PREFIX_NAME = N` enumerators of Include/restoration.h, name → value.
    func enumerators(_ prefix: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: UInt32] {
        let text = CAPICoverageTests.code(try CAPICoverageTests.header("restoration.h"))
        var out: [String: UInt32] = [:]
        for m in try CAPICoverageTests.matches(#"\b(\#(prefix)\w+)\s*=\s*(\d+)\s*[,}]"#, in: text) {
            out[m[0]] = UInt32(m[1])!
        }
        XCTAssertFalse(out.isEmpty, "no \(prefix)… = N enumerator found in Include/restoration.h", file: file, line: line)
        return out
    }

    /// Every value 0..<256 the core enumeration accepts.
    func coreValues(_ accepts: (UInt32) -> Bool) -> Set<UInt32> {
        Set((0..<256).filter(accepts))
    }

    func testRestoreReasonsMatchTheHeaderAndTheCore() throws {
        let c = try enumerators("RST_REASON_")
        let swift = Dictionary(uniqueKeysWithValues: RestorationEngine.RestoreReason.allCases.map { ($0.description, UInt32($0.rawValue)) })
        for (name, value) in c.sorted(by: { $0.value < $1.value }) {
            XCTAssertEqual(swift[name], value, "\(name) = \(value) (restoration.h) has no RestorationEngine.RestoreReason case with that name and value")
        }
        for (name, value) in swift where c[name] != value {
            XCTFail("RestorationEngine.RestoreReason \(name) = \(value) is not an enumerator of restoration.h")
        }
        XCTAssertEqual(coreValues { RestorationCore.RestoreReason(rawValue: $0) != nil }, Set(swift.values),
                       "the core's restore reasons and the Swift API's differ")
        XCTAssertEqual(RestorationEngine.RestoreReason.reset.description, "RST_REASON_RESET")
    }

    func testSkipReasonsMatchTheHeaderAndTheCore() throws {
        let c = try enumerators("RST_SKIP_")
        let swift = Dictionary(uniqueKeysWithValues: RestorationEngine.SkipReason.allCases.map { ($0.name, $0.rawValue) })
        for (name, value) in c.sorted(by: { $0.value < $1.value }) {
            XCTAssertEqual(swift[name], value, "\(name) = \(value) (restoration.h) has no RestorationEngine.SkipReason case with that name and value")
        }
        for (name, value) in swift where c[name] != value {
            XCTFail("RestorationEngine.SkipReason \(name) = \(value) is not an enumerator of restoration.h")
        }
        XCTAssertEqual(coreValues { RestorationCore.SkipReason(rawValue: $0) != nil }, Set(swift.values),
                       "the core's skip reasons and the Swift API's differ")
    }

    /// RestorationError has one case per failure status of the core (its
    /// `init(status:message:)` switches over them all), so the core's
    /// statuses list the Swift cases.
    func testErrorCasesMatchTheHeaderAndTheCore() throws {
        var c = try enumerators("RST_ERR_")
        XCTAssertEqual(c.removeValue(forKey: "RST_ERR_UNKNOWN"), nil, "RST_ERR_UNKNOWN is a name, not an enumerator")
        let statuses = coreValues { Status(rawValue: $0) != nil }.subtracting([0]).sorted()
        var swift: [String: UInt32] = [:]
        for value in statuses {
            let e = RestorationError.make(Status(rawValue: value)!, "m")
            XCTAssertEqual(e.statusCode, value, "the core's status \(value) becomes RestorationError \(e.statusName) (\(e.statusCode))")
            XCTAssertNil(swift.updateValue(value, forKey: e.statusName), "two statuses are RestorationError \(e.statusName)")
        }
        for (name, value) in c.sorted(by: { $0.value < $1.value }) {
            XCTAssertEqual(swift[name], value, "\(name) = \(value) (restoration.h) has no RestorationError case with that status")
        }
        for (name, value) in swift where c[name] != value {
            XCTFail("RestorationError status \(name) = \(value) is not an enumerator of restoration.h")
        }
        // Every case's name in Swift is the C enumerator's, spelled as C does.
        XCTAssertEqual(RestorationError.notFound("x").statusName, "RST_ERR_NOT_FOUND")
        XCTAssertEqual(RestorationError.limit("x").statusCode, 12)
    }
}
