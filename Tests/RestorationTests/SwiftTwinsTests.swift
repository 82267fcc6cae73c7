// The Swift members added so that the Swift API reaches every C function:
// the library version, an object's parent, the plugin directory's list and
// load, and the session's end (see CAPICoverageTests for the whole table).
import Foundation
import XCTest
@testable import Restoration

final class SwiftTwinsTests: XCTestCase {
    func testLibraryVersionIsTheHeaders() throws {
        let header = try CAPICoverageTests.header("restoration.h")
        let m = try CAPICoverageTests.matches(#"#define RST_VERSION_STRING "([^"]+)""#, in: header)
        XCTAssertEqual(RestorationEngine.libraryVersion, m.first?.first)
    }

    func testRegisteredObjectsNameTheirParent() throws {
        let e = try RestorationEngine()
        let tabs = Probe("Tabs"), list = Probe("List", parent: nil)
        let detail = Probe("Detail", parent: tabs)
        try e.register(tabs)
        try e.register(detail)
        try e.register(list)
        XCTAssertEqual(e.registeredObject(atPath: "Tabs/Detail")?.parentPath, "Tabs")
        XCTAssertEqual(e.registeredObject(atPath: "Tabs/Detail")?.identifier, "Detail")
        XCTAssertNil(e.registeredObject(atPath: "Tabs")?.parentPath)
        XCTAssertEqual(e.registeredObjects.map(\.parentPath), [nil, "Tabs", nil])
    }

    func testPluginsAreListedThenLoaded() throws {
        let dir = try temporaryDirectory(self).appendingPathComponent("plugins")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        chmod(dir.path, 0o755)
        let lib = binDirectory.appendingPathComponent("libCountriesPanesPlugin.so").path
        guard FileManager.default.fileExists(atPath: lib) else { throw XCTSkip("libCountriesPanesPlugin.so is not built next to the tests") }
        let to = dir.appendingPathComponent("libCountriesPanesPlugin.so").path
        try FileManager.default.copyItem(atPath: lib, toPath: to)
        chmod(to, 0o644)

        let e = try RestorationEngine(options: .init(pluginDirectory: dir.path))
        let before = try e.plugins()
        XCTAssertEqual(before.map(\.path), [to])
        XCTAssertEqual(before.first?.state, .discovered, "listing loads nothing")
        try e.loadPlugins()
        let after = try e.plugins()
        XCTAssertEqual(after.first?.state, .loaded, "\(after)")
        XCTAssertEqual(after.first?.name, "countries-panes")
        XCTAssertTrue(after.first?.classes.contains { $0.className == "MapPane" && $0.usable } == true, "\(after)")
        try e.loadPlugins()   // once per engine: a second call returns at once

        let none = try RestorationEngine()
        XCTAssertThrowsError(try none.plugins()) { XCTAssertEqual(($0 as? RestorationError)?.statusName, "RST_ERR_INVALID") }
        XCTAssertThrowsError(try none.loadPlugins()) {
            XCTAssertTrue(($0 as? RestorationError)?.message.contains("without a plugin directory") == true, "\($0)")
        }
    }

    func testCloseSessionIsHarmlessTwiceAndWithoutAnArchive() throws {
        try RestorationEngine().closeSession()
        let dir = try temporaryDirectory(self)
        let e = try RestorationEngine(archivePath: dir.path + "/s.rst")
        e.closeSession()   // before any save or restore: nothing
        let p = Probe("P")
        try e.register(p)
        try e.save()
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.path + "/s.rst.session"))
        e.closeSession()
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path + "/s.rst.session"), "the session ended")
        e.closeSession()
        try e.save()      // a later save records it again
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.path + "/s.rst.session"))
        withExtendedLifetime(p) {}
    }
}
