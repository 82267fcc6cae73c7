import CRestoration
import RestorationArchive
import RestorationCore

// rst_engine_options, read once: `readOptions` copies the members the
// caller's struct version has, checks them (the checks the Swift API makes
// too are Engine.Configuration.validate; the C-only ones are here) and
// returns a complete Engine.Configuration. The callbacks are adapted by
// `createEngine` (EngineABI.swift), the only part that needs the engine.

/// The size of `rst_engine_options` as a caller of `version` knows it: a
/// version 1 struct ends at `log`, a version 2 one at `carry_saves`.
func optionsSize(version: UInt32) -> Int {
    switch version {
    case ...1: return MemoryLayout<rst_engine_options>.offset(of: \rst_engine_options.autosave_delay_ms)!
    case 2: return MemoryLayout<rst_engine_options>.offset(of: \rst_engine_options.size_budget)!
    default: return MemoryLayout<rst_engine_options>.size
    }
}

/// The engine flags of crash quarantine (RST_ENGINE_NO_QUARANTINE, RST_ENGINE_QUARANTINE).
let evolutionEngineFlags: UInt32 = UInt32(RST_ENGINE_NO_QUARANTINE) | UInt32(RST_ENGINE_QUARANTINE)

/// Whether an engine created with these options quarantines: an options
/// struct of version 2 or later unless RST_ENGINE_NO_QUARANTINE; version 1
/// (a 1.0 binary) keeps 1.0's behaviour unless it opts in with
/// RST_ENGINE_QUARANTINE. NO_QUARANTINE wins over QUARANTINE.
func quarantineEnabled(version: UInt32, flags: UInt32) -> Bool {
    if flags & UInt32(RST_ENGINE_NO_QUARANTINE) != 0 { return false }
    return version >= 2 || flags & UInt32(RST_ENGINE_QUARANTINE) != 0
}

/// The options' members as the C face names them in messages.
let cOptionNames = Engine.Configuration.OptionNames(
    archivePath: "opts->archive_path", appVersion: "opts->app_version", idiom: "opts->idiom",
    autosaveDelay: "opts->autosave_delay_ms", autosaveMaxDelay: "opts->autosave_max_delay_ms",
    generations: "opts->generations", anArchivePath: "an archive_path")

extension CFace {
    /// The caller's options (any version this library knows) as a complete
    /// configuration, plus the members as read (zero past the caller's
    /// version), whose callbacks `createEngine` adapts. Messages do not name
    /// the C function: the caller prefixes it (`fail(_:in:)`).
    public static func readOptions(_ opts: UnsafePointer<rst_engine_options>, store: ArchiveStore?)
        -> Result<(Engine.Configuration, rst_engine_options), RestorationFailure> {
        // Only the members the caller's version has are read (a version 1
        // struct may end at `log`): copied into a zeroed struct.
        let version = UnsafeRawPointer(opts).load(as: UInt32.self)
        guard version >= 1, version <= UInt32(RST_ENGINE_OPTIONS_VERSION) else {
            return .failure(RestorationFailure(.version, "opts->version is \(version); this library accepts 1 to \(RST_ENGINE_OPTIONS_VERSION) (initialize with RST_ENGINE_OPTIONS_INIT)"))
        }
        var o = rst_engine_options()
        withUnsafeMutableBytes(of: &o) { $0.copyMemory(from: UnsafeRawBufferPointer(start: UnsafeRawPointer(opts), count: optionsSize(version: version))) }
        func text(_ p: UnsafePointer<CChar>?, _ field: String) throws(RestorationFailure) -> String? {
            guard let p else { return nil }
            guard let s = String(validatingCString: p) else { throw RestorationFailure(.invalid, "opts->\(field) is not valid UTF-8") }
            return s
        }
        do throws(RestorationFailure) {
            let archive = try text(o.archive_path, "archive_path"), pluginDir = try text(o.plugin_dir, "plugin_dir")
            let app = try text(o.app_version, "app_version"), idiom = try text(o.idiom, "idiom")
            if store != nil && archive != nil {
                throw RestorationFailure(.invalid, "opts->archive_path must be NULL (the store says where the archive lives)")
            }
            let known: UInt32 = UInt32(RST_ENGINE_NO_CRASH_GUARD) | evolutionEngineFlags
            if o.flags & ~known != 0 {
                throw RestorationFailure(.invalid, "opts->flags has unknown bits 0x\(String(o.flags & ~known, radix: 16))")
            }
            guard o.budget_policy <= RST_BUDGET_FAIL, let policy = Engine.BudgetPolicy(rawValue: o.budget_policy) else {
                throw RestorationFailure(.invalid, "opts->budget_policy is \(o.budget_policy); it must be RST_BUDGET_WARN (0), RST_BUDGET_TRIM (1) or RST_BUDGET_FAIL (2)")
            }
            let config = Engine.Configuration(
                archivePath: archive, pluginDirectory: pluginDir, appVersion: app ?? "", idiom: idiom ?? "",
                crashGuard: o.flags & UInt32(RST_ENGINE_NO_CRASH_GUARD) == 0,
                autosaveDelayMs: o.autosave_delay_ms, autosaveMaxDelayMs: o.autosave_max_delay_ms,
                generations: Int(o.generations),
                quarantine: quarantineEnabled(version: o.version, flags: o.flags),
                carrySaves: o.carry_saves,   // 0 none, UINT32_MAX always
                sizeBudget: o.size_budget, budgetPolicy: policy,
                signalDeadlineMs: o.signal_deadline_ms == 0 ? 1000 : o.signal_deadline_ms,
                store: store)
            try config.validate(naming: cOptionNames)
            if let archive, let why = FileArchiveStore.check(archive, subject: "archive_path") { throw RestorationFailure(.invalid, why) }
            return .success((config, o))
        } catch {
            return .failure(error)
        }
    }
}
