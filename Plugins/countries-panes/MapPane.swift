// countries-panes: the demo's Swift plugin (libCountriesPanesPlugin.so).
//
// Class MapPane: the map pane inside the country detail screen
// (Tabs/Countries/Detail/Map). State:
//   "zoom"    double
//   "center"  nested record { "lat" double, "lon" double }
//   "layers"  string array
// Its factory, countries_panes_make_map, has the signature "EPIRDX": engine,
// parent, identifier, path, depth, and the plugin context (a PanesContext
// that RestorationPluginKit creates per engine from `initialize` and drops
// at the engine's destroy).
//
// The plugin depends on the C headers and RestorationPluginKit only, and
// reaches the engine only through the host's rst_host_api table, so the same
// file loads in a C host, in restorectl and in a Swift host.

import CRestoration
import RestorationPluginKit
#if canImport(Glibc)
import Glibc
#endif

/// The map pane. Created by the factory at restore time (and then owned by
/// the engine until it leaves it).
/// Per-engine plugin state (the `X` argument).
final class PanesContext {
    var panesCreated = 0
}

final class MapPane: PluginRestorable {
    let path: String
    let depth: UInt32
    /// Which pane of its engine this is (1 for the first).
    var serial = 0
    var zoom = 1.0
    var center = (lat: 0.0, lon: 0.0)
    var layers: [String] = []

    init(path: String, depth: UInt32) {
        self.path = path
        self.depth = depth
    }

    func encode(to coder: PluginCoder) throws(PluginError) {
        try coder.encode(zoom, forKey: "zoom")
        try coder.encodeRecord("center") { (c: PluginCoder) throws(PluginError) in
            try c.encode(center.lat, forKey: "lat")
            try c.encode(center.lon, forKey: "lon")
        }
        try coder.encode(layers, forKey: "layers")
    }

    func decode(from coder: PluginCoder) throws(PluginError) {
        // Each key on its own: a missing one keeps its default.
        if let z = try? coder.decodeDouble(forKey: "zoom") { zoom = z }
        if let c = try? coder.decodeRecord("center", { (c: PluginCoder) throws(PluginError) in
            (try c.decodeDouble(forKey: "lat"), try c.decodeDouble(forKey: "lon"))
        }) {
            center = (lat: c.0, lon: c.1)
        }
        if let l = try? coder.decodeStringArray(forKey: "layers") { layers = l }
    }

    func finishedRestoring() {
        let line = "[countries-panes] restored MapPane at \(path): zoom=\(zoom) center=\(center.lat),\(center.lon) layers=\(layers.joined(separator: ",")) pane=\(serial)\n"
        fputs(line, stdout)
        fflush(stdout)
    }
}

let countriesPanes = PluginDefinition(
    name: "countries-panes", version: "1.0.0",
    classes: [PluginClass("MapPane", factory: "countries_panes_make_map", signature: "EPIRDX")],
    initialize: { _ in PanesContext() })

@_cdecl("rst_plugin_manifest_v1")
public func countriesPanesManifest(_ api: UnsafePointer<rst_host_api>?) -> UnsafePointer<rst_plugin_manifest>? {
    countriesPanes.manifest(api)
}

/// Factory of MapPane ("EPIRDX"): registers a new pane with exactly the
/// given parent and identifier and returns it.
@_cdecl("countries_panes_make_map")
public func countriesPanesMakeMap(_ engine: OpaquePointer?, _ parent: OpaquePointer?,
                                  _ identifier: UnsafePointer<CChar>?, _ path: UnsafePointer<CChar>?,
                                  _ depth: UInt32, _ context: UnsafeMutableRawPointer?) -> OpaquePointer? {
    guard let engine, let identifier, let ctx = PluginDefinition.context(context, as: PanesContext.self) else { return nil }
    let pane = MapPane(path: path.map { String(cString: $0) } ?? String(cString: identifier), depth: depth)
    ctx.panesCreated += 1
    pane.serial = ctx.panesCreated
    do {
        return try PluginEngine(engine).register(pane, identifier: String(cString: identifier),
                                                 parent: parent.map(PluginObjectRef.init), className: "MapPane").raw
    } catch {
        fputs("[countries-panes] cannot register MapPane at \(pane.path): \(error)\n", stderr)
        return nil
    }
}
