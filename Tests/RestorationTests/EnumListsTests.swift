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

    /// Every RestorationError case (the switch fails to compile when a case
    /// is added and not listed here).
    static let errorCases: [RestorationError] = {
        let all: [RestorationError] = [.invalid(""), .notFound(""), .duplicate(""), .type(""), .corrupt(""), .version(""),
                                       .io(""), .plugin(""), .rejected(""), .noMemory(""), .state(""), .limit("")]
        for e in all {
            switch e {
            case .invalid, .notFound, .duplicate, .type, .corrupt, .version, .io, .plugin, .rejected, .noMemory, .state, .limit: break
            }
        }
        return all
    }()

    func testErrorCasesMatchTheHeaderAndTheCore() throws {
        var c = try enumerators("RST_ERR_")
        XCTAssertEqual(c.removeValue(forKey: "RST_ERR_UNKNOWN"), nil, "RST_ERR_UNKNOWN is a name, not an enumerator")
        let swift = Dictionary(uniqueKeysWithValues: Self.errorCases.map { ($0.statusName, $0.statusCode) })
        XCTAssertEqual(swift.count, Self.errorCases.count, "two RestorationError cases share a status")
        for (name, value) in c.sorted(by: { $0.value < $1.value }) {
            XCTAssertEqual(swift[name], value, "\(name) = \(value) (restoration.h) has no RestorationError case with that status")
            if let status = Status(rawValue: value) {
                XCTAssertEqual(RestorationError.make(status, "m").statusName, name, "the core's status \(value) becomes another RestorationError case")
            }
        }
        for (name, value) in swift where c[name] != value {
            XCTFail("RestorationError status \(name) = \(value) is not an enumerator of restoration.h")
        }
        XCTAssertEqual(coreValues { Status(rawValue: $0) != nil }.subtracting([0]), Set(swift.values),
                       "the core's failure statuses and RestorationError's cases differ")
    }
}
