import Foundation
import XCTest

/// The countries example (Examples/countries-swift) against the C demo
/// (Examples/countries-c): each relaunch restores the other's archive,
/// through the package's two plugins.
final class ExampleTests: XCTestCase {

    func product(_ name: String) throws -> String {
        let path = binDirectory.appendingPathComponent(name).path
        guard FileManager.default.fileExists(atPath: path) else {
            throw XCTSkip("\(name) is not built next to the tests (\(binDirectory.path)); run `swift test`, which builds every product")
        }
        return path
    }

    /// DIR with DIR/plugins holding the demo plugins (mode 644, dirs 755:
    /// the loader rejects group- or world-writable plugins).
    func demoDirectory() throws -> URL {
        let dir = try temporaryDirectory(self)
        let plugins = dir.appendingPathComponent("plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        chmod(plugins.path, 0o755)
        for lib in ["libcountries_detail.so", "libCountriesPanesPlugin.so"] {
            let to = plugins.appendingPathComponent(lib)
            try FileManager.default.copyItem(atPath: try product(lib), toPath: to.path)
            chmod(to.path, 0o644)
        }
        return dir
    }

    static let restoredLines = [
        "  decode   Tabs                       selectedTab=0",
        "  decode   Tabs/Countries             stack depth=2",
        "  decode   Tabs/Countries/List        scrollOffset=412.5 selection=NO visibleRows=3 (first NL)",
        "  decode   Tabs/Settings              metricUnits=on",
        "[countries-detail] restored CountryDetail at Tabs/Countries/Detail: country=NO visits=3 source=Tabs/Countries/List",
        "[countries-panes] restored MapPane at Tabs/Countries/Detail/Map: zoom=7.5 center=60.47,8.47 layers=terrain,borders",
        "did_finish_restoring",
        "report: 6 archived, 6 restored, 0 skipped, 2 plugins loaded, 0 rejected",
        "detail screen restored (class CountryDetail), map pane restored (class MapPane)",
        "saved again through the plugin objects",
    ]

    func assertRestored(_ r: ProcessResult, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(r.status, 0, r.stderr, file: file, line: line)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        for expected in Self.restoredLines {
            // The plugins may add details after what is listed here.
            XCTAssertTrue(lines.contains { $0 == expected || ($0.hasPrefix("[") && $0.hasPrefix(expected + " ")) }, "missing line: \(expected)\n--- output:\n\(r.stdout)", file: file, line: line)
        }
    }

    func testSwiftFirstLaunchThenSwiftRelaunch() throws {
        let app = try product("countries-swift")
        let dir = try demoDirectory()
        let first = try runProcess(app, [dir.path, "first"])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertTrue(first.stdout.contains("saved \(dir.path)/countries.rst; exiting"), first.stdout)
        let relaunch = try runProcess(app, [dir.path, "relaunch"])
        assertRestored(relaunch)
        // Model association: two countries were inserted above Norway.
        XCTAssertTrue(relaunch.stdout.contains("model association: NO is row 7 of 10 now, first visible row 6 (NL)"), relaunch.stdout)
        // And the plugin objects save again: a second relaunch restores them.
        assertRestored(try runProcess(app, [dir.path, "relaunch"]))
    }

    func testNoSavedStateStartsFresh() throws {
        let app = try product("countries-swift")
        let dir = try temporaryDirectory(self)
        let r = try runProcess(app, [dir.path, "relaunch"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("no saved state: starting fresh"), r.stdout)
        XCTAssertEqual(try runProcess(app, [dir.path]).status, 2, "usage")
    }

    func testTheCDemoAndTheSwiftDemoRestoreEachOther() throws {
        let app = try product("countries-swift")
        _ = try product("librestoration.so")
        guard let ccCommand = findCCompiler(), let cc = ccCommand.first else { throw XCTSkip("no C compiler on PATH") }
        let dir = try demoDirectory()
        let cDemo = dir.appendingPathComponent("countries").path
        let built = try runProcess(cc, Array(ccCommand.dropFirst()) + ["-std=c11", "-Wall", "-Wextra", "-Werror", "-I\(packageRoot.appendingPathComponent("Include").path)",
                                        packageRoot.appendingPathComponent("Examples/countries-c/countries.c").path,
                                        "-L\(binDirectory.path)", "-lrestoration", "-Wl,-rpath,\(binDirectory.path)", "-o", cDemo])
        XCTAssertEqual(built.status, 0, built.stderr)

        // C first launch, Swift relaunch.
        XCTAssertEqual(try runProcess(cDemo, [dir.path, "first"]).status, 0)
        assertRestored(try runProcess(app, [dir.path, "relaunch"]))
        // Swift first launch, C relaunch.
        XCTAssertEqual(try runProcess(app, [dir.path, "first"]).status, 0)
        assertRestored(try runProcess(cDemo, [dir.path, "relaunch"]))
    }
}
