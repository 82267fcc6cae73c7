// countries-swift: the demo host in Swift — the same app as the C demo
// (Examples/countries-c/countries.c), with the same paths, classes and keys,
// so either host restores the other's archive:
//
//   Tabs                      tab bar        TabBar          selectedTab (int)
//   Tabs/Countries            navigation     NavigationStack depth (int)
//   Tabs/Countries/List       country list   CountryList     scrollOffset (double), selection (string),
//                                                            visibleRows (string array)
//   Tabs/Countries/Detail     detail screen  CountryDetail   country (string), source (-> List), visits (int)
//                                                            [a C plugin class]
//   Tabs/Countries/Detail/Map map pane       MapPane         zoom (double), center {lat, lon}, layers
//                                                            [a Swift plugin class]
//   Tabs/Settings             settings       Settings        metricUnits (bool)
//
//   countries-swift DIR first     first launch: the user scrolls, picks Norway,
//                                 opens its detail screen and zooms the map;
//                                 the app saves its state and exits.
//   countries-swift DIR relaunch  a new process: registers only its static
//                                 screens and restores; the detail screen and
//                                 its map pane come back from the plugins in
//                                 DIR/plugins (libcountries_detail.so,
//                                 libCountriesPanesPlugin.so). Then it saves
//                                 again (now through the plugin objects).
//   countries-swift DIR demo-loop restores (or starts as "first" would), then
//                                 keeps scrolling the list and autosaving every
//                                 20 ms until killed (at most 60 s, then it
//                                 saves and exits): a program for
//                                 `restorectl test`.
//
// Run: swift run countries-swift DIR first && swift run countries-swift DIR relaunch
// (`make demo` copies the plugins into DIR/plugins for the C host; do the
// same for this one: DIR/plugins must not be group- or world-writable.)

import Foundation
import Restoration

setvbuf(stdout, nil, _IOLBF, 0)   // interleave with the C plugin's printf in order

func pad(_ s: String) -> String { s.padding(toLength: 27, withPad: " ", startingAt: 0) }

// MARK: - the app's data

/// The list's rows. On relaunch the app has fetched fresh data: two
/// countries appeared above Norway, so row numbers moved; the list restores
/// its selection by country code (model association), not by row.
func countryCodes(fresh: Bool) -> [String] {
    let base = ["DE", "DK", "FI", "IS", "NL", "NO", "NZ", "SE"]
    return fresh ? ["AT", "BE"] + base : base
}

// MARK: - host screens

final class TabBar: StateRestoring {
    let restorationIdentifier: String? = "Tabs"
    var objectRestorationClass: RestorationClass? { "TabBar" }
    var selectedTab = 0

    func encodeRestorableState(with coder: RestorationCoder) throws {
        try coder.encode(selectedTab, forKey: "selectedTab")
    }
    func decodeRestorableState(with coder: RestorationCoder) throws {
        if let t = try coder.decode(Int.self, forKey: "selectedTab") {
            selectedTab = t
            print("  decode   \(pad("Tabs"))selectedTab=\(t)")
        }
    }
    func applicationFinishedRestoringState() { print("  finished Tabs") }
}

final class NavigationStack: StateRestoring {
    let restorationIdentifier: String? = "Countries"
    unowned let tabs: TabBar
    var restorationParent: StateRestoring? { tabs }
    var objectRestorationClass: RestorationClass? { "NavigationStack" }
    var depth = 1

    init(tabs: TabBar) { self.tabs = tabs }

    func encodeRestorableState(with coder: RestorationCoder) throws {
        try coder.encode(depth, forKey: "depth")
    }
    func decodeRestorableState(with coder: RestorationCoder) throws {
        depth = try coder.decode(Int.self, forKey: "depth") ?? 1
        print("  decode   \(pad("Tabs/Countries"))stack depth=\(depth)")
    }
    func applicationFinishedRestoringState() { print("  finished Tabs/Countries") }
}

final class CountryList: StateRestoring {
    let restorationIdentifier: String? = "List"
    unowned let nav: NavigationStack
    var restorationParent: StateRestoring? { nav }
    var objectRestorationClass: RestorationClass? { "CountryList" }

    var rows: ModelAssociation
    var scrollOffset = 0.0
    var selectedRow: Int?
    var firstVisibleRow = 0
    let visibleCount = 3

    init(nav: NavigationStack, codes: [String]) {
        self.nav = nav
        self.rows = ModelAssociation(identifiers: codes)
    }

    var selection: String? { selectedRow.flatMap(rows.modelIdentifier(forElementAt:)) }

    func encodeRestorableState(with coder: RestorationCoder) throws {
        // The C demo's keys: the selection and the visible rows by country
        // code (model identifiers), never by row number.
        let state = ListRestorationState(selectedRows: selectedRow.map { [$0] } ?? [],
                                         visibleRows: firstVisibleRow..<(firstVisibleRow + visibleCount), in: rows)
        try coder.encode(scrollOffset, forKey: "scrollOffset")
        try coder.encode(state.selectedIdentifier ?? "", forKey: "selection")
        try coder.encode(state.visible, forKey: "visibleRows")
    }

    func decodeRestorableState(with coder: RestorationCoder) throws {
        scrollOffset = try coder.decode(Double.self, forKey: "scrollOffset") ?? 0
        let state = ListRestorationState(selection: (try coder.decode(String.self, forKey: "selection")).map { [$0] } ?? [],
                                         visible: try coder.decode([String].self, forKey: "visibleRows") ?? [])
        selectedRow = state.selectedRows(in: rows).first
        firstVisibleRow = state.firstVisibleRow(in: rows) ?? 0
        print("  decode   \(pad("Tabs/Countries/List"))scrollOffset=\(String(format: "%.1f", scrollOffset)) selection=\(state.selectedIdentifier ?? "") visibleRows=\(state.visible.count) (first \(state.firstVisibleIdentifier ?? "-"))")
        print("           model association: \(state.selectedIdentifier ?? "-") is row \(selectedRow.map(String.init) ?? "-") of \(rows.identifiers.count) now, first visible row \(firstVisibleRow) (\(rows.modelIdentifier(forElementAt: firstVisibleRow) ?? "-"))")
    }
    func applicationFinishedRestoringState() { print("  finished Tabs/Countries/List") }
}

final class SettingsScreen: StateRestoring {
    let restorationIdentifier: String? = "Settings"
    unowned let tabs: TabBar
    var restorationParent: StateRestoring? { tabs }
    var objectRestorationClass: RestorationClass? { "Settings" }
    var metricUnits = false

    init(tabs: TabBar) { self.tabs = tabs }

    func encodeRestorableState(with coder: RestorationCoder) throws {
        try coder.encode(metricUnits, forKey: "metricUnits")
    }
    func decodeRestorableState(with coder: RestorationCoder) throws {
        if let m = try coder.decode(Bool.self, forKey: "metricUnits") {
            metricUnits = m
            print("  decode   \(pad("Tabs/Settings"))metricUnits=\(m ? "on" : "off")")
        }
    }
    func applicationFinishedRestoringState() { print("  finished Tabs/Settings") }
}

// First launch only: the detail screen and map pane as the app first showed
// them. They encode the keys the plugin classes read back (a C plugin for
// CountryDetail, a Swift one for MapPane).

final class CountryDetail: StateRestoring {
    let restorationIdentifier: String? = "Detail"
    unowned let nav: NavigationStack
    unowned let source: CountryList
    var restorationParent: StateRestoring? { nav }
    var objectRestorationClass: RestorationClass? { "CountryDetail" }
    let country: String
    var visits = 0

    init(nav: NavigationStack, source: CountryList, country: String) {
        self.nav = nav
        self.source = source
        self.country = country
    }

    func encodeRestorableState(with coder: RestorationCoder) throws {
        try coder.encode(country, forKey: "country")
        try coder.encodeReference(source, forKey: "source")
        try coder.encode(visits, forKey: "visits")
    }
}

final class MapPane: StateRestoring {
    /// Stored as the nested record "center" {lat, lon}.
    struct Center: Codable { var lat: Double; var lon: Double }

    let restorationIdentifier: String? = "Map"
    unowned let detail: CountryDetail
    var restorationParent: StateRestoring? { detail }
    var objectRestorationClass: RestorationClass? { "MapPane" }
    var zoom = 1.0
    var center = Center(lat: 0, lon: 0)
    var layers = ["terrain", "borders"]

    init(detail: CountryDetail) { self.detail = detail }

    func encodeRestorableState(with coder: RestorationCoder) throws {
        try coder.encode(zoom, forKey: "zoom")
        try coder.encode(center, forKey: "center")
        try coder.encode(layers, forKey: "layers")
    }
}

// MARK: - main

let args = CommandLine.arguments
guard args.count == 3, ["first", "relaunch", "demo-loop"].contains(args[2]) else {
    FileHandle.standardError.write("usage: countries-swift DIR first|relaunch|demo-loop\n".data(using: .utf8)!)
    exit(2)
}
let dir = args[1]
let first = args[2] == "first"
let demo = args[2] == "demo-loop"
let archive = "\(dir)/countries.rst"

func fail(_ what: String, _ error: Error) -> Never {
    FileHandle.standardError.write("countries-swift: \(what) failed: \(error)\n".data(using: .utf8)!)
    exit(1)
}

var options = RestorationEngine.Options(archivePath: archive, pluginDirectory: "\(dir)/plugins",
                                        appVersion: "countries 1.0", idiom: "desktop")
options.shouldRestore = { info in
    print("archive: format \(info.formatVersion), app \(info.appVersion), \(info.systemVersion), idiom \(info.idiom), \(info.objectCount) objects")
    return true
}
options.didFinishRestoring = { print("did_finish_restoring") }
options.log = { level, message in
    if level >= .info { print("  log[\(level)] \(message)") }
}

if demo {
    options.autosaveDelay = .milliseconds(20)
    options.generations = 2
    options.crashQuarantine = true
}
let engine: RestorationEngine
do { engine = try RestorationEngine(options: options) } catch { fail("RestorationEngine(options:)", error) }

let tabs = TabBar()
let nav = NavigationStack(tabs: tabs)
let list = CountryList(nav: nav, codes: countryCodes(fresh: !first && !demo))
let settings = SettingsScreen(tabs: tabs)
do {
    try engine.register(tabs)
    try engine.register(nav)
    try engine.register(list)
    try engine.register(settings)
} catch { fail("register", error) }

if demo {
    print("== demo loop (pid \(getpid())): restore, then scroll and autosave until killed")
    do { try engine.restore() } catch { print("no state restored (\(error)): starting as a first launch") }
    var opened: (CountryDetail, MapPane)? = nil
    if engine.registeredObject(atPath: "Tabs/Countries/Detail") == nil {
        list.scrollOffset = 412.5
        list.firstVisibleRow = 4
        list.selectedRow = list.rows.index(forElementWithModelIdentifier: "NO")
        settings.metricUnits = true
        nav.depth = 2
        let detail = CountryDetail(nav: nav, source: list, country: "NO")
        detail.visits = 3
        let map = MapPane(detail: detail)
        map.zoom = 7.5
        map.center = .init(lat: 60.47, lon: 8.47)
        do {
            try engine.register(detail)
            try engine.register(map)
        } catch { fail("register", error) }
        opened = (detail, map)
    }
    for _ in 0..<3000 {   // 60 s
        list.scrollOffset += 1
        engine.markDirty()
        usleep(20_000)
        do { try engine.dispatch() } catch { print("autosave: \(error)") }
    }
    do { try engine.save() } catch { fail("save", error) }
    withExtendedLifetime(opened) {}
} else if first {
    print("== first launch (pid \(getpid())): the user navigates")
    tabs.selectedTab = 0
    nav.depth = 2
    list.scrollOffset = 412.5
    list.firstVisibleRow = 4                                    // NL, NO, NZ
    list.selectedRow = list.rows.index(forElementWithModelIdentifier: "NO")
    settings.metricUnits = true
    let detail = CountryDetail(nav: nav, source: list, country: "NO")
    detail.visits = 3
    let map = MapPane(detail: detail)
    map.zoom = 7.5
    map.center = .init(lat: 60.47, lon: 8.47)
    do {
        try engine.register(detail)
        try engine.register(map)
    } catch { fail("register", error) }
    print("  list scrolled to 412.5, Norway selected, detail screen open, map zoomed to 7.5, metric units on")
    do { try engine.save() } catch { fail("save", error) }
    print("saved \(archive); exiting")
    withExtendedLifetime((detail, map)) {}
} else {
    print("== relaunch (pid \(getpid())): restoring")
    do {
        try engine.restore()
        guard let r = engine.lastRestoreReport else { fail("lastRestoreReport", RestorationError.state("no report")) }
        print("report: \(r.archived) archived, \(r.restored) restored, \(r.skipped) skipped, \(r.pluginsLoaded) plugins loaded, \(r.pluginsRejected) rejected")
        let d = engine.registeredObject(atPath: "Tabs/Countries/Detail")
        let m = engine.registeredObject(atPath: "Tabs/Countries/Detail/Map")
        print("detail screen \(d != nil ? "restored" : "missing") (class \(d?.className ?? "-")), map pane \(m != nil ? "restored" : "missing") (class \(m?.className ?? "-"))")
        do { try engine.save() } catch { fail("save", error) }
        print("saved again through the plugin objects")
        if d == nil || m == nil { exit(1) }
    } catch .notFound(let message) {
        print("no saved state: starting fresh (\(message))")
    } catch {
        fail("restore", error)
    }
}
withExtendedLifetime((tabs, nav, list, settings)) {}
// A clean end: `engine` is a global, which Swift never deinitializes, so the
// session is closed here (else the next launch would read RST_REASON_RECOVER).
engine.closeSession()
