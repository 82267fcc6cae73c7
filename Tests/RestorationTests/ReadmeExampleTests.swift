// The README's Swift example is Examples/readme-swift, verbatim, and it ends
// its session cleanly: run twice, the second run restores with
// RST_REASON_RELAUNCH (a top-level `let engine` is never deinitialized, so
// without `engine.closeSession()` it would read RST_REASON_RECOVER).
import Foundation
import XCTest

final class ReadmeExampleTests: XCTestCase {
    /// The ```swift block under "## Swift hosts" in README.md.
    func readmeExample() throws -> String {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        guard let section = readme.range(of: "\n## Swift hosts\n") else { throw XCTSkip("README.md has no '## Swift hosts' section") }
        guard let open = readme.range(of: "```swift\n", range: section.upperBound..<readme.endIndex),
              let close = readme.range(of: "\n```\n", range: open.upperBound..<readme.endIndex) else {
            XCTFail("README.md: no ```swift block under '## Swift hosts'")
            return ""
        }
        return String(readme[open.upperBound..<close.lowerBound]) + "\n"
    }

    func testTheReadmeExampleIsExamplesReadmeSwift() throws {
        let file = try String(contentsOf: packageRoot.appendingPathComponent("Examples/readme-swift/main.swift"), encoding: .utf8)
        XCTAssertEqual(try readmeExample(), file, "README.md's Swift example and Examples/readme-swift/main.swift differ: keep them the same")
    }

    func testRunTwiceTheSecondRunIsARelaunch() throws {
        let app = binDirectory.appendingPathComponent("readme-swift").path
        guard FileManager.default.isExecutableFile(atPath: app) else {
            throw XCTSkip("readme-swift is not built next to the tests (\(binDirectory.path)); run `swift build --build-tests`")
        }
        let archive = try temporaryDirectory(self).appendingPathComponent("myapp-state/state.rst").path
        let first = try runChild(app, [archive], timeout: 60)
        XCTAssertTrue(!first.signaled && first.status == 0 && first.stdout == "first launch\n", first.summary)
        let second = try runChild(app, [archive], timeout: 60)
        XCTAssertTrue(!second.signaled && second.status == 0, second.summary)
        XCTAssertEqual(second.stdout, "restored (RST_REASON_RELAUNCH): metricUnits true\n", second.summary)
        XCTAssertEqual(second.stderr, "", "a clean relaunch logs nothing")
    }
}
