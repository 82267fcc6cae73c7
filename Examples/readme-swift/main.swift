import Restoration

final class SettingsScreen: StateRestoring {
    let restorationIdentifier: String? = "Settings"
    var objectRestorationClass: RestorationClass? { "Settings" }
    var metricUnits = false

    func encodeRestorableState(with coder: RestorationCoder) throws {
        try coder.encode(metricUnits, forKey: "metricUnits")
    }
    func decodeRestorableState(with coder: RestorationCoder) throws {
        metricUnits = try coder.decode(Bool.self, forKey: "metricUnits") ?? false   // nil: key absent
    }
}

// A missing folder is created at the first save (mode 0700, as XDG asks).
let path = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "myapp-state/state.rst"
let engine = try RestorationEngine(archivePath: path)
let settings = SettingsScreen()
try engine.register(settings)          // held weakly, as UIKit does
do {
    try engine.restore()               // at launch
    print("restored (\(engine.lastRestoreReason)): metricUnits \(settings.metricUnits)")
} catch .notFound {
    print("first launch")              // nothing saved yet
} catch {
    print("starting fresh: \(error)")  // RST_ERR_CORRUPT: … (a bad archive is set aside, never deleted)
}

settings.metricUnits = true            // ... the app runs ...
try engine.save()                      // or engine.markDirty() with autosave (docs/LIFECYCLE.md)
engine.closeSession()                  // a clean exit: `engine` is a global, never deinitialized
