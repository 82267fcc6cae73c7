import Foundation
import XCTest
@testable import Restoration

/// The text of C/<name>, next to this file: the C programs these tests
/// compile, kept as C files (excluded from the target in Package.swift).
private func cFixture(_ name: String) -> String {
    let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("C/" + name).path
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
        fatalError("the C fixture \(path) cannot be read")
    }
    return text
}

/// A C host built against librestoration.so and this Swift host read and
/// write the same archives: same paths, classes, keys and values.
final class CrossHostTests: XCTestCase {

    /// What either host prints after restoring the shared scenario, one line
    /// per object in decode order.
    static let expected = """
        Tabs selectedTab=2
        Tabs/Countries depth=2
        Tabs/Countries/List scrollOffset=412.5 selection=NO visibleRows=NL,NO,NZ blob=000102ff rowHeights=44,-1,9000000000
        Tabs/Countries/Detail country=NO source=Tabs/Countries/List visits=3
        Tabs/Countries/Detail/Map zoom=7.5 center=60.47,8.47 layers=terrain,borders
        Tabs/Settings metricUnits=1 prefs.units=metric prefs.recent=3,1,2 prefs.nested.ok=1
        report archived=6 restored=6 skipped=0

        """

    static let expectedObjects: [(String, String)] = [
        ("Tabs", "TabBar"), ("Tabs/Countries", "NavigationStack"), ("Tabs/Countries/List", "CountryList"),
        ("Tabs/Countries/Detail", "CountryDetail"), ("Tabs/Countries/Detail/Map", "MapPane"), ("Tabs/Settings", "Settings"),
    ]

    // MARK: the C host

    /// Saves ("save PATH") or restores and prints ("restore PATH") the
    /// scenario, through the public C ABI only.
    static let cHostSource = cFixture("xhost.c")

    /// Compiles the C host once per test run.
    nonisolated(unsafe) static var builtHost: String?

    func cHost() throws -> String {
        if let h = Self.builtHost { return h }
        let lib = binDirectory.appendingPathComponent("librestoration.so")
        guard FileManager.default.fileExists(atPath: lib.path) else {
            throw XCTSkip("librestoration.so is not built next to the tests (\(binDirectory.path)); run `swift test` or build the `restoration` product")
        }
        guard let ccCommand = findCCompiler(), let cc = ccCommand.first else { throw XCTSkip("no C compiler on PATH") }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("restoration-xhost-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let src = dir.appendingPathComponent("xhost.c")
        try Self.cHostSource.write(to: src, atomically: true, encoding: .utf8)
        let exe = dir.appendingPathComponent("xhost").path
        let r = try runProcess(cc, Array(ccCommand.dropFirst()) + ["-std=c11", "-Wall", "-Wextra", "-Werror", "-I\(packageRoot.appendingPathComponent("Include").path)",
                             src.path, "-L\(binDirectory.path)", "-lrestoration", "-Wl,-rpath,\(binDirectory.path)", "-o", exe])
        XCTAssertEqual(r.status, 0, "cc failed:\n\(r.stderr)")
        guard r.status == 0 else { throw RestorationError.invalid("the C host did not compile") }
        Self.builtHost = exe
        return exe
    }

    // MARK: the Swift host

    struct Center: Codable, Equatable { var lat: Double; var lon: Double }
    struct Prefs: Codable, Equatable {
        struct Nested: Codable, Equatable { var ok: Bool }
        var units: String
        var recent: [Int]
        var nested: Nested
    }

    static func g(_ d: Double?) -> String { String(format: "%g", d ?? .nan) }

    /// The Swift objects of the scenario; `lines` collects what decoding saw,
    /// in the C host's format.
    final class SwiftHost {
        let engine: RestorationEngine
        var lines: [String] = []
        let tabs = Probe("Tabs", className: "TabBar")
        let nav: Probe
        let list: Probe
        let settings: Probe
        var detail: Probe?
        var map: Probe?

        init(archive: URL) throws {
            engine = try RestorationEngine(archiveURL: archive, appVersion: "swift 1.0", idiom: "test")
            nav = Probe("Countries", parent: tabs, className: "NavigationStack")
            list = Probe("List", parent: nav, className: "CountryList")
            settings = Probe("Settings", parent: tabs, className: "Settings")
        }

        /// First launch: every screen open, the scenario's values.
        func saveFirstLaunch() throws {
            tabs.onEncode = { try $0.encode(2, forKey: "selectedTab") }
            nav.onEncode = { try $0.encode(2, forKey: "depth") }
            list.onEncode = { c in
                try c.encode(412.5, forKey: "scrollOffset")
                try c.encode("NO", forKey: "selection")
                try c.encode(["NL", "NO", "NZ"], forKey: "visibleRows")
                try c.encode(Data([0, 1, 2, 255]), forKey: "blob")
                try c.encode([44, -1, 9_000_000_000], forKey: "rowHeights")
            }
            settings.onEncode = { c in
                try c.encode(true, forKey: "metricUnits")
                try c.encode(Prefs(units: "metric", recent: [3, 1, 2], nested: .init(ok: true)), forKey: "prefs")
            }
            let d = Probe("Detail", parent: nav, className: "CountryDetail")
            d.onEncode = { [list] c in
                try c.encode("NO", forKey: "country")
                try c.encodeReference(list, forKey: "source")
                try c.encode(3, forKey: "visits")
            }
            let m = Probe("Map", parent: d, className: "MapPane")
            m.onEncode = { c in
                try c.encode(7.5, forKey: "zoom")
                try c.encode(Center(lat: 60.47, lon: 8.47), forKey: "center")
                try c.encode(["terrain", "borders"], forKey: "layers")
            }
            detail = d
            map = m
            for o in [tabs, nav, list, d, m, settings] { try engine.register(o) }
            try engine.save()
        }

        /// Relaunch: static screens registered, Detail and Map re-created by
        /// Swift restoration classes; every value decoded into `lines`.
        func restore() throws {
            tabs.onDecode = { [unowned self] c in lines.append("Tabs selectedTab=\(try c.decode(Int.self, forKey: "selectedTab")!)") }
            nav.onDecode = { [unowned self] c in lines.append("Tabs/Countries depth=\(try c.decode(Int.self, forKey: "depth")!)") }
            list.onDecode = { [unowned self] c in
                let blob = try c.decode(Data.self, forKey: "blob")!.map { String(format: "%02x", $0) }.joined()
                lines.append("Tabs/Countries/List scrollOffset=\(g(try c.decode(Double.self, forKey: "scrollOffset"))) selection=\(try c.decode(String.self, forKey: "selection")!) visibleRows=\(try c.decode([String].self, forKey: "visibleRows")!.joined(separator: ",")) blob=\(blob) rowHeights=\(try c.decode([Int].self, forKey: "rowHeights")!.map(String.init).joined(separator: ","))")
            }
            settings.onDecode = { [unowned self] c in
                let p = try c.decode(Prefs.self, forKey: "prefs")!
                lines.append("Tabs/Settings metricUnits=\(try c.decode(Bool.self, forKey: "metricUnits")! ? 1 : 0) prefs.units=\(p.units) prefs.recent=\(p.recent.map(String.init).joined(separator: ",")) prefs.nested.ok=\(p.nested.ok ? 1 : 0)")
            }
            for o in [tabs, nav, list, settings] { try engine.register(o) }
            try engine.registerRestorationClass(named: "CountryDetail") { [unowned self] path, coder in
                XCTAssertEqual(path, ["Tabs", "Countries", "Detail"])
                XCTAssertEqual(try? coder.decode(String.self, forKey: "country"), "NO", "a factory reads its record")
                let d = Probe(path.last!)
                d.onDecode = { [unowned self] c in
                    XCTAssertTrue(try c.decodeReference(forKey: "source") === list, "the reference is the restored List")
                    lines.append("\(path.joined(separator: "/")) country=\(try c.decode(String.self, forKey: "country")!) source=\(try c.decodeReferencePath(forKey: "source")!) visits=\(try c.decode(Int.self, forKey: "visits")!)")
                }
                detail = d
                return d
            }
            try engine.registerRestorationClass(named: "MapPane") { [unowned self] path, _ in
                let m = Probe(path.last!)
                m.onDecode = { [unowned self] c in
                    let center = try c.decode(Center.self, forKey: "center")!
                    lines.append("\(path.joined(separator: "/")) zoom=\(g(try c.decode(Double.self, forKey: "zoom"))) center=\(g(center.lat)),\(g(center.lon)) layers=\(try c.decode([String].self, forKey: "layers")!.joined(separator: ","))")
                }
                map = m
                return m
            }
            try engine.restore()
            let r = try XCTUnwrap(engine.lastRestoreReport)
            lines.append("report archived=\(r.archived) restored=\(r.restored) skipped=\(r.skipped)")
            for o in [tabs, nav, list, settings, detail, map] { XCTAssertNil(o?.decodeError) }
        }

        var output: String { lines.joined(separator: "\n") + "\n" }
    }

    // MARK: tests

    func testACHostedArchiveRestoresInTheSwiftHost() throws {
        let host = try cHost()
        let dir = try temporaryDirectory(self)
        let archive = dir.appendingPathComponent("from-c.rst")
        let saved = try runProcess(host, ["save", archive.path])
        XCTAssertEqual(saved.status, 0, saved.stderr)

        let info = try RestorationEngine.archiveInfo(at: archive)
        XCTAssertEqual(info.appVersion, "xhost 1.0")
        XCTAssertEqual(info.objectCount, 6)

        let swift = try SwiftHost(archive: archive)
        try swift.restore()
        XCTAssertEqual(swift.output, Self.expected)
        let objects = swift.engine.registeredObjects
        XCTAssertEqual(objects.map(\.path), Self.expectedObjects.map(\.0))
        XCTAssertEqual(objects.map(\.className), Self.expectedObjects.map(\.1))
        XCTAssertTrue(swift.engine.object(atPath: "Tabs/Countries/Detail") === swift.detail)
        XCTAssertTrue(swift.engine.object(atPath: "Tabs/Countries/Detail/Map") === swift.map)
    }

    func testASwiftHostedArchiveRestoresInTheCHost() throws {
        let host = try cHost()
        let dir = try temporaryDirectory(self)
        let archive = dir.appendingPathComponent("from-swift.rst")
        let swift = try SwiftHost(archive: archive)
        try swift.saveFirstLaunch()
        XCTAssertEqual(swift.engine.registeredObjects.map(\.path), Self.expectedObjects.map(\.0))

        let restored = try runProcess(host, ["restore", archive.path])
        XCTAssertEqual(restored.status, 0, restored.stderr)
        XCTAssertEqual(restored.stdout, Self.expected)
    }

    func testBothHostsRoundTripThroughEachOther() throws {
        // Swift saves, C restores and saves again, Swift restores.
        let host = try cHost()
        let dir = try temporaryDirectory(self)
        let archive = dir.appendingPathComponent("both.rst")
        try SwiftHost(archive: archive).saveFirstLaunch()
        // The C host re-saves only after registering its static screens and
        // re-creating the others; "save" mode registers all of them afresh.
        let resaved = try runProcess(host, ["save", archive.path])
        XCTAssertEqual(resaved.status, 0, resaved.stderr)
        let swift = try SwiftHost(archive: archive)
        try swift.restore()
        XCTAssertEqual(swift.output, Self.expected)
    }
}
