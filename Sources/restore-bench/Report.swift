// The results, their Markdown tables and their JSON document, and the check
// of every target the issue sets.

import Foundation

// MARK: - Result types

/// The engine's per-N figures beyond save/restore.
struct EngineSizeExtras: Codable {
    var n: Int
    var preregistered: Int                 // objects registered before the restore
    var preregisteredFraction: Double
    var nsPerEncodedValue: Double?         // save median / (8 N)
    var nsPerDecodedValue: Double?         // restore median / (8 N)
    var fileSave: Stats?                   // rst_save to a file (temp file, fsync, rename, fsync dir)
    var fileBytes: Int?
    var problem: String?
    var hostSaveFloor: Stats? = nil        // the host's share of save, no engine (see hostFloor)
    var hostRestoreFloor: Stats? = nil     // the host's share of restore, no engine
    var budget: BudgetBench? = nil         // size budgets: what measuring costs (see BudgetBench)
}

/// Size budgets (docs/BUDGETS.md): every save measures every record. The
/// always-on part is the writer's bookkeeping (one offset per record, one
/// size computation); the attribution (own and subtree bytes, paths and
/// classes of every record) runs only when asked (rst_last_save_sizes) or
/// when a save is over its budget. Timed interleaved with the plain save.
struct BudgetBench: Codable {
    var save: Stats                        // rst_save_to_buffer, no budget
    var bookkeeping: Stats                 // N record offsets + one archive-size computation
    var attribution: Stats                 // rst_last_save_sizes after that save: every record's sizes, path, class
    var bookkeepingPercent: Double         // median bookkeeping / median save
    var attributionPercent: Double         // median attribution / median save
    var problem: String?
}

struct MicroResult: Codable {
    var calls: Int                         // encode_int / decode_int calls in one callback
    var layout: String
    var encodeNsPerCall: Stats             // inside the callback: the loop alone
    var decodeNsPerCall: Stats
    var saveNsPerValue: Stats              // whole rst_save_to_buffer / calls
    var restoreNsPerValue: Stats           // whole rst_restore_from_buffer / calls
    var archiveBytes: Int
    var problem: String?
}

struct PluginResult: Codable {
    var n: Int
    var pluginFiles: Int
    var neededClass: String
    var withPlugins: Stats                 // restore, plugin_dir with 100 fresh plugin files each run
    var withoutPlugins: Stats              // the same restore, no plugin_dir (that record is skipped)
    var overheadMs: Double                 // median with − median without
    var pluginsLoaded: Int
    var pluginsRejected: Int
    var compileSeconds: Double
    var problem: String?
}

struct ShapeResult: Codable {
    var name: String                       // "chain", "fan-out", "max-depth chain"
    var objects: Int
    var maxDepth: Int
    var save: Stats?
    var restore: Stats?
    var archiveBytes: Int
    var restored: Int
    var stackBytes: Int                    // stack of the thread it ran on
    var problem: String?
}

struct DepthLimitResult: Codable {
    var maxTreeDepth: Int                  // RST_MAX_TREE_DEPTH
    var atLimit: String                    // status registering at depth RST_MAX_TREE_DEPTH - 1 (the deepest allowed)
    var pastLimit: String                  // status registering at depth RST_MAX_TREE_DEPTH
    var firstRefusedDepth: Int?            // the first depth the engine refused
    var problem: String?
}

struct EngineExtras: Codable {
    var micro: MicroResult?
    var sealedMicro: MicroResult?          // the micro loop with every value sealed (ENCRYPTED)
    var plugin: PluginResult?
    var shapes: [ShapeResult] = []
    var depthLimit: DepthLimitResult?
    var problems: [String] = []
    var log: [String] = []                 // engine log lines at WARNING and above (first few)
}

/// The engine at 10,000 and 100,000 objects, runs interleaved.
struct GrowthResult: Codable {
    var smallN: Int
    var largeN: Int
    var runs: Int
    var smallSave: Stats
    var largeSave: Stats
    var smallRestore: Stats
    var largeRestore: Stats
    var saveRatio: Double
    var restoreRatio: Double
    var problem: String?
}

struct SizeResult: Codable {
    var n: Int
    var graph: String
    var formats: [FormatResult]
    var engine: EngineSizeExtras?
}

struct Check: Codable {
    var target: String
    var measured: String
    var verdict: String                    // PASS, MISS, n/a
}

struct Report: Codable {
    /// "restore-bench/2": changes only with an incompatible change of the
    /// stable members (docs/PERFORMANCE.md, "The --json schema").
    var schema = "restore-bench/2"
    var tool = "restore-bench"
    var date: String
    var machine: String
    var swift: String
    var build: String
    var options: [String: String]
    var memoryMethod: String
    var engineIncluded: Bool
    var engineNote: String?
    var notes: [String]
    var sizes: [SizeResult]
    var extras: EngineExtras?
    var growth: GrowthResult?
    var checks: [Check]                    // the Markdown table's rows (informational)
    var targets: [Target]                  // the verdicts, for scripts (stable)
    var totalSeconds: Double
}

// MARK: - Machine description

func machineDescription() -> String {
    var u = utsname()
    uname(&u)
    let release = withUnsafeBytes(of: &u.release) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
    let arch = withUnsafeBytes(of: &u.machine) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
    var cpu = "unknown CPU"
    if let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
       let line = text.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
       let colon = line.firstIndex(of: ":") {
        cpu = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    return "Linux \(release) \(arch), \(ProcessInfo.processInfo.activeProcessorCount) cores (\(cpu), L3 \(l3CacheSize() ?? "?"))"
}

/// The last-level cache's size from sysfs ("32768K" -> "32 MiB"), if readable.
func l3CacheSize() -> String? {
    guard let raw = try? String(contentsOfFile: "/sys/devices/system/cpu/cpu0/cache/index3/size", encoding: .utf8) else { return nil }
    let t = raw.trimmingCharacters(in: .whitespacesAndNewlines)
    if t.hasSuffix("K"), let k = Int(t.dropLast()) { return k % 1024 == 0 ? "\(k / 1024) MiB" : "\(k) KiB" }
    return t
}

var swiftVersionText: String {
    #if compiler(>=6.4)
    return "Swift ≥ 6.4"
    #elseif compiler(>=6.3)
    return "Swift 6.3"
    #elseif compiler(>=6.2)
    return "Swift 6.2"
    #else
    return "Swift < 6.2"
    #endif
}

// MARK: - Formatting helpers

func fmtMs(_ v: Double?) -> String {
    guard let v, v.isFinite else { return "–" }
    if v >= 1000 { return String(format: "%.0f", v).withThousands }
    if v >= 100 { return String(format: "%.0f", v) }
    if v >= 10 { return String(format: "%.1f", v) }
    if v >= 1 { return String(format: "%.2f", v) }
    return String(format: "%.3f", v)
}

func fmtStats(_ s: Stats?) -> String {
    guard let s, !s.samples.isEmpty else { return "–" }
    return "\(fmtMs(s.median)) [\(fmtMs(s.min))–\(fmtMs(s.max))]"
}

func fmtSigned(_ v: Double) -> String { v.isFinite ? (v < 0 ? "−" + fmtMs(-v) : "+" + fmtMs(v)) : "–" }

func fmtInt(_ v: Int) -> String { String(v).withThousands }

func fmtMiB(_ bytes: Int) -> String { String(format: "%.1f", Double(bytes) / 1_048_576) }

func fmtRatio(_ r: Double?) -> String {
    guard let r, r.isFinite else { return "–" }
    if r >= 100 { return String(format: "%.0f×", r).withThousands }
    if r >= 10 { return String(format: "%.1f×", r) }
    return String(format: "%.2f×", r)
}

extension String {
    /// "1234567" -> "1,234,567" (digits before any '.' or '×').
    var withThousands: String {
        var head = Substring(self), tail = Substring("")
        if let cut = firstIndex(where: { !$0.isNumber && $0 != "-" }) { head = self[..<cut]; tail = self[cut...] }
        let negative = head.hasPrefix("-")
        let digits = Array(negative ? head.dropFirst() : head)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return (negative ? "-" : "") + out + tail
    }
}

// MARK: - Checks

/// One target with its verdict, as `--json` gives it to scripts (schema
/// "restore-bench/2", docs/PERFORMANCE.md). Every member is always present:
/// `value` and `pass` are null when the target was not measured.
struct Target: Codable {
    var name: String                       // stable identifier: "save_ms_100k", "restore_ratio_gvariant", ...
    var description: String                // the sentence of the Markdown table
    var value: Double?                     // measured; null when not measured
    var limit: Double                      // the bound
    var op: String                         // "<=", ">=" or "==": pass is `value op limit`
    var unit: String                       // "ms", "x", "bytes/object", "x archive", "failures", "objects", "depth"
    var pass: Bool?                        // null when not measured
    var detail: String                     // what was measured, or why not

    enum CodingKeys: String, CodingKey { case name, description, value, limit, op, unit, pass, detail }

    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(description, forKey: .description)
        if let value, value.isFinite { try c.encode(value, forKey: .value) } else { try c.encodeNil(forKey: .value) }
        try c.encode(limit, forKey: .limit)
        try c.encode(op, forKey: .op)
        try c.encode(unit, forKey: .unit)
        if let pass { try c.encode(pass, forKey: .pass) } else { try c.encodeNil(forKey: .pass) }
        try c.encode(detail, forKey: .detail)
    }

    var check: Check { Check(target: description, measured: detail, verdict: pass.map { $0 ? "PASS" : "MISS" } ?? "n/a") }
}

/// Every target of the issue, at N = 100,000, with its verdict.
func evaluateTargets(sizes: [SizeResult], extras: EngineExtras?, growth: GrowthResult?, engineIncluded: Bool,
                     engineAbsence: String = "engine not in this build", instructions: InstructionResult? = nil) -> [Target] {
    var targets: [Target] = []
    /// Adds a target; `value` nil means not measured (pass null), unless `failed` says the measurement failed (pass false).
    func add(_ name: String, _ description: String, value: Double?, limit: Double, op: String, unit: String,
             detail: String, failed: Bool = false) {
        var pass: Bool?
        if let v = value, v.isFinite {
            switch op {
            case "<=": pass = v <= limit
            case ">=": pass = v >= limit
            default: pass = v == limit
            }
        } else if failed {
            pass = false
        }
        targets.append(Target(name: name, description: description, value: value.flatMap { $0.isFinite ? $0 : nil },
                              limit: limit, op: op, unit: unit, pass: pass, detail: detail))
    }
    let big = sizes.first { $0.n == 100_000 }
    let ten = sizes.first { $0.n == 10_000 }
    func format(_ s: SizeResult?, _ key: String) -> FormatResult? {
        s?.formats.first { $0.key == key && $0.problem == nil && $0.verified }
    }
    func row(_ s: SizeResult?, _ key: String) -> FormatResult? { s?.formats.first { $0.key == key } }
    let why = !engineIncluded ? engineAbsence : (big == nil ? "N = 100,000 not run" : nil)
    let engine = format(big, "engine")
    let engineFailed = engineIncluded && big != nil && engine == nil
    /// A target that needs the engine at N = 100,000 and could not be measured.
    func na(_ name: String, _ description: String, limit: Double, op: String, unit: String) {
        add(name, description, value: nil, limit: limit, op: op, unit: unit,
            detail: why ?? (engineFailed ? "engine failed at N = 100,000" : "not measured"), failed: engineFailed)
    }

    let saveT = "save ≤ 35 ms (N = 100,000)", restoreT = "restore ≤ 60 ms (N = 100,000)", sizeT = "archive ≤ 120 bytes per object"
    if let s = engine?.save?.median { add("save_ms_100k", saveT, value: s, limit: 35, op: "<=", unit: "ms", detail: "\(fmtMs(s)) ms") }
    else { na("save_ms_100k", saveT, limit: 35, op: "<=", unit: "ms") }
    if let r = engine?.restore?.median { add("restore_ms_100k", restoreT, value: r, limit: 60, op: "<=", unit: "ms", detail: "\(fmtMs(r)) ms") }
    else { na("restore_ms_100k", restoreT, limit: 60, op: "<=", unit: "ms") }
    if let e = engine { add("archive_bytes_per_object", sizeT, value: e.bytesPerObject, limit: 120, op: "<=", unit: "bytes/object",
                            detail: String(format: "%.1f bytes/object", e.bytesPerObject)) }
    else { na("archive_bytes_per_object", sizeT, limit: 120, op: "<=", unit: "bytes/object") }

    // Speed ratios over the Swift host's engine, as for every baseline.
    let baselines: [(String, String, Double, Double)] = [
        ("nskeyed", "NSKeyedArchiver", 200, 100), ("plist", "binary PropertyList", 40, 25), ("json", "JSON", 15, 10),
        ("gvariant", "GVariant", 30, 30),
    ]
    for (key, label, s, r) in baselines {
        let b = format(big, key)
        for (phase, limit, ratio) in [("save", s, b?.saveRatio), ("restore", r, b?.restoreRatio)] {
            let name = "\(phase)_ratio_\(key)", description = "\(phase) ≥ \(Int(limit))× faster than \(label)"
            if let ratio {
                add(name, description, value: ratio, limit: limit, op: ">=", unit: "x", detail: fmtRatio(ratio))
            } else if engine != nil {
                let r = row(big, key)
                let detail = r?.unavailable.map { "\(label) unavailable: \($0)" }
                    ?? (r?.problem.map { "\(label) failed: \($0)" } ?? "\(label) not measured at N = 100,000")
                add(name, description, value: nil, limit: limit, op: ">=", unit: "x", detail: brief(detail),
                    failed: r?.problem != nil && r?.unavailable == nil)
            } else { na(name, description, limit: limit, op: ">=", unit: "x") }
        }
    }
    // The same GVariant target, like for like: both hosts in C, the same structs.
    let cHost = format(big, "c-engine")
    for (phase, limit) in [("save", 30.0), ("restore", 30.0)] {
        let name = "c_host_\(phase)_ratio_gvariant"
        let description = "C host through the C ABI: \(phase) ≥ \(Int(limit))× faster than GVariant (both in C)"
        let ratio = format(big, "gvariant").flatMap { phase == "save" ? $0.versusCHost?.save : $0.versusCHost?.restore }
        if let ratio, cHost != nil {
            add(name, description, value: ratio, limit: limit, op: ">=", unit: "x", detail: fmtRatio(ratio))
        } else {
            var detail = big == nil ? "N = 100,000 not run" : "not measured"
            for (key, label) in [("c-engine", "C host"), ("gvariant", "GVariant")] {
                if let r = row(big, key), let p = r.unavailable ?? r.problem { detail = "\(label): \(p)" }
            }
            add(name, description, value: nil, limit: limit, op: ">=", unit: "x", detail: brief(detail),
                failed: [row(big, "c-engine"), row(big, "gvariant")].contains { $0?.problem != nil && $0?.unavailable == nil })
        }
    }

    // The floor: the C host's time over the format's own limit, in one run.
    for (phase, index) in [("save", 0), ("restore", 1)] {
        let name = "c_host_\(phase)_over_floor"
        let description = "C host through the C ABI: \(phase) ≤ 2× the floor (the archive format by a straight C loop, N = 100,000)"
        let r = floorRatios(big)
        let v = r.flatMap { index == 0 ? $0.cSave : $0.cRestore }
        if let v {
            add(name, description, value: v, limit: 2, op: "<=", unit: "x", detail: String(format: "%.2f×", v))
        } else {
            var detail = big == nil ? "N = 100,000 not run" : "not measured"
            for (key, label) in [("c-engine", "C host"), ("c-floor", "floor")] {
                if big != nil && row(big, key) == nil { detail = "\(label) not run (--formats)" }
                if let r = row(big, key), let p = r.unavailable ?? r.problem { detail = "\(label): \(p)" }
            }
            add(name, description, value: nil, limit: 2, op: "<=", unit: "x", detail: brief(detail),
                failed: [row(big, "c-engine"), row(big, "c-floor")].contains { $0?.problem != nil && $0?.unavailable == nil })
        }
    }

    // The migration path (docs/EVOLUTION.md): every record migrated, over the plain
    // restore of the same run, at 100,000 and at 10,000.
    for (size, label, suffix) in [(big, "100,000", ""), (ten, "10,000", "_10k")] {
        let name = "migration_restore_ratio" + suffix
        let description = "restore with every record migrated ≤ 2× the plain restore (N = \(label))"
        let plain = format(size, "engine"), migrated = format(size, "engine-migrate")
        if let m = migrated, let p = plain, let ratio = m.versusEngine?.restore,
           let a = m.restore?.median, let b = p.restore?.median {
            add(name, description, value: ratio, limit: 2, op: "<=", unit: "x",
                detail: String(format: "%.2f×", ratio) + " (\(fmtMs(a)) vs \(fmtMs(b)) ms)")
        } else {
            var detail = size == nil ? "N = \(label) not run" : "not measured"
            for (key, what) in [("engine", "engine"), ("engine-migrate", "engine-migrate")] {
                if size != nil && row(size, key) == nil { detail = "\(what) not run (--formats)" }
                if let r = row(size, key), let p = r.unavailable ?? r.problem { detail = "\(what): \(p)" }
            }
            add(name, description, value: nil, limit: 2, op: "<=", unit: "x", detail: brief(detail),
                failed: [row(size, "engine"), row(size, "engine-migrate")].contains { $0?.problem != nil && $0?.unavailable == nil })
        }
    }

    // Retired in schema 2 (docs/PERFORMANCE.md): the growth 100,000 / 10,000
    // (the 100,000-object working set leaves the cache, so the host's own loops
    // grow more than 12× too: it measures the machine, not the engine; the
    // interleaved runs stay in the report) and the restore's peak memory over
    // the archive (it counted the host's own new objects; the engine's heap is
    // the instruction run's restore_engine_heap_over_archive).

    // Instructions and the engine's own heap (--instructions: Tests/perf/callgrind.sh, MASSIF=1).
    let instructionTargets: [(String, String, KeyPath<InstructionResult, Int?>, Double)] = [
        ("save_instructions_per_object", "save ≤ 2,500 instructions per object (callgrind, N = 20,000, C host)", \.save, 2_500),
        ("restore_instructions_per_object", "restore from a buffer ≤ 4,500 instructions per object (callgrind, N = 20,000, C host)", \.restoreBuffer, 4_500),
        ("restore_file_instructions_per_object", "restore from a file ≤ 4,800 instructions per object (callgrind, N = 20,000, C host)", \.restoreFile, 4_800),
    ]
    let notRun = "not measured (--instructions not given)"
    for (name, description, path, limit) in instructionTargets {
        let v = instructions.flatMap { $0[keyPath: path] }
        add(name, description, value: v.map(Double.init), limit: limit, op: "<=", unit: "instructions/object",
            detail: v.map { "\(fmtInt($0)) per object" } ?? (instructions?.problem.map(brief) ?? notRun),
            failed: instructions?.problem != nil)
    }
    let migT = "restore with every record migrated ≤ 1.5× the plain restore, in instructions (callgrind, N = 20,000)"
    if let m = instructions?.migrated, let p = instructions?.restoreBuffer, p > 0 {
        let ratio = Double(m) / Double(p)
        add("migration_instructions_ratio", migT, value: ratio, limit: 1.5, op: "<=", unit: "x",
            detail: String(format: "%.2f×", ratio) + " (\(fmtInt(m)) vs \(fmtInt(p)) per object)")
    } else {
        add("migration_instructions_ratio", migT, value: nil, limit: 1.5, op: "<=", unit: "x",
            detail: instructions?.problem.map(brief) ?? notRun, failed: instructions?.problem != nil)
    }
    let heapT = "the engine's own heap in a 100,000-object file restore ≤ 1.5× the archive (massif, C host, host objects excluded)"
    add("restore_engine_heap_over_archive", heapT, value: instructions?.heapOverArchive, limit: 1.5, op: "<=", unit: "x archive",
        detail: instructions?.heapOverArchive.map { String(format: "%.2f×", $0) } ?? (instructions?.problem.map(brief) ?? notRun),
        failed: instructions?.problem != nil)

    let pluginT = "100-plugin restore ≤ 25 ms more than without plugin_dir"
    if let p = extras?.plugin, p.problem == nil {
        add("plugin_overhead_ms", pluginT, value: p.overheadMs, limit: 25, op: "<=", unit: "ms",
            detail: "\(fmtSigned(p.overheadMs)) ms (\(fmtMs(p.withPlugins.median)) vs \(fmtMs(p.withoutPlugins.median)) ms, N = \(fmtInt(p.n)))")
    } else if let p = extras?.plugin {
        add("plugin_overhead_ms", pluginT, value: nil, limit: 25, op: "<=", unit: "ms", detail: p.problem ?? "failed", failed: true)
    } else {
        add("plugin_overhead_ms", pluginT, value: nil, limit: 25, op: "<=", unit: "ms",
            detail: engineIncluded ? "not run (--no-extras)" : engineAbsence)
    }

    // Correctness (not timing targets, but a benchmark of a broken restore is worthless).
    for (key, name, description) in [("engine", "engine_restore_verified", "engine restore verified (every object, value and link)"),
                                      ("engine-migrate", "engine_migrate_restore_verified", "engine restore with every record migrated verified (every object, value, link and migration)"),
                                      ("c-engine", "c_host_restore_verified", "C host restore through librestoration.so verified (every object, value and link)")] {
        let rows = sizes.compactMap { s -> (Int, FormatResult)? in s.formats.first { $0.key == key }.map { (s.n, $0) } }
        let ran = rows.filter { $0.1.unavailable == nil }
        let bad = ran.filter { !$0.1.verified || $0.1.problem != nil }
        if ran.isEmpty {
            let reason = rows.first?.1.unavailable.map { "unavailable: \($0)" } ?? (key == "engine" && !engineIncluded ? engineAbsence : "not run")
            add(name, description, value: nil, limit: 0, op: "<=", unit: "failures", detail: brief(reason))
        } else {
            add(name, description, value: Double(bad.count), limit: 0, op: "<=", unit: "failures",
                detail: bad.isEmpty ? "verified at N = " + ran.map { fmtInt($0.0) }.joined(separator: ", ")
                                    : "failed at N = " + bad.map { fmtInt($0.0) }.joined(separator: ", ")
                                      + ": " + brief(bad[0].1.problem ?? "not verified"))
        }
    }
    if engineIncluded {
        for shape in extras?.shapes ?? [] {
            let slug = shape.name.lowercased().map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined()
                .split(separator: "_").filter { !$0.isEmpty }.joined(separator: "_")
            add("shape_\(slug)", "\(shape.name): \(fmtInt(shape.objects)) objects saved and restored, no stack overflow on a \(shape.stackBytes / 1024) KiB stack",
                value: shape.problem == nil ? Double(shape.restored) : nil, limit: Double(shape.objects), op: ">=", unit: "objects",
                detail: shape.problem ?? "restored \(fmtInt(shape.restored))", failed: shape.problem != nil)
        }
        if let d = extras?.depthLimit {
            add("depth_limit", "depth \(fmtInt(d.maxTreeDepth - 1)) registers (a chain of RST_MAX_TREE_DEPTH objects), depth \(fmtInt(d.maxTreeDepth)) is RST_ERR_LIMIT",
                value: d.problem == nil ? d.firstRefusedDepth.map(Double.init) : nil, limit: Double(d.maxTreeDepth), op: "==", unit: "depth",
                detail: d.problem ?? "\(d.atLimit) / \(d.pastLimit)", failed: d.problem != nil)
        }
    }
    return targets
}

// MARK: - The floor

/// The engine's time over the floor's (c-floor: the archive format by a
/// straight C loop) at one N: (C host save, C host restore, Swift host
/// save, Swift host restore); nil members when a row is missing.
func floorRatios(_ s: SizeResult?) -> (cSave: Double?, cRestore: Double?, swiftSave: Double?, swiftRestore: Double?)? {
    guard let floor = s?.formats.first(where: { $0.key == "c-floor" && $0.problem == nil && $0.verified }) else { return nil }
    func over(_ r: Double?) -> Double? { r.flatMap { $0 > 0 && $0.isFinite ? 1 / $0 : nil } }
    return (over(floor.versusCHost?.save), over(floor.versusCHost?.restore),
            over(floor.versusEngine?.save), over(floor.versusEngine?.restore))
}

/// One line for every run: how far each host is from the floor.
func floorLine(_ s: SizeResult) -> String? {
    guard let r = floorRatios(s) else { return nil }
    func x(_ v: Double?) -> String { v.map { String(format: "%.2f×", $0) } ?? "–" }
    return "Floor (the archive format by a straight C loop): the C host takes \(x(r.cSave)) the floor's save time and "
        + "\(x(r.cRestore)) its restore time (target ≤ 2× at N = 100,000); the Swift host \(x(r.swiftSave)) and \(x(r.swiftRestore))."
}

// MARK: - Markdown

/// A problem cut to a table-friendly length.
func brief(_ s: String) -> String { s.count > 400 ? String(s.prefix(340)) + " … " + String(s.suffix(50)) : s }

func renderMarkdown(_ r: Report) -> String {
    var out = "# restore-bench\n\n"
    out += "\(r.date) · \(r.machine) · \(r.swift) · \(r.build) build · total \(String(format: "%.0f", r.totalSeconds)) s\n\n"
    out += "Options: " + r.options.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ") + "\n\n"
    if let note = r.engineNote { out += "**Engine:** \(note)\n\n" }
    out += "Times are milliseconds: median [min–max] of the timed runs. Ratios are the baseline's median over the engine's "
    out += "(above 1: the engine is faster); for the row with every record migrated it is that row's median over the plain "
    out += "engine's, so its restore ratio is what the migration path costs. Memory is the peak RSS above the RSS just before the phase (\(r.memoryMethod)), "
    out += "from a separate untimed run.\n\n"

    for s in r.sizes {
        out += "## N = \(fmtInt(s.n))\n\n\(s.graph)\n\n"
        out += "| format | save ms | restore ms | archive bytes | bytes/object | save +MiB | restore +MiB | peak RSS MiB | save ratio | restore ratio | runs |\n"
        out += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n"
        for f in s.formats {
            if let p = f.problem, !f.verified || f.save == nil {
                out += "| \(f.name) | **\(brief(p))** | | | | | | | | | |\n"
                continue
            }
            let runs = "\(f.runs)" + (f.runsNote.map { " (\($0))" } ?? "")
            out += "| \(f.name) | \(fmtStats(f.save)) | \(fmtStats(f.restore)) | \(fmtInt(f.archiveBytes)) | "
            out += String(format: "%.1f", f.bytesPerObject)
            out += " | \(fmtMiB(f.saveMemoryDeltaBytes)) | \(fmtMiB(f.restoreMemoryDeltaBytes)) | \(fmtMiB(f.peakRSSBytes)) | "
            out += f.key == "engine" ? "1× | 1× | " : "\(fmtRatio(f.saveRatio)) | \(fmtRatio(f.restoreRatio)) | "
            out += runs + " |\n"
            if let p = f.problem { out += "| ↳ \(f.name) | **\(brief(p))** | | | | | | | | | |\n" }
        }
        let ratioRows = s.formats.filter { $0.versusEngine != nil || $0.versusCHost != nil }
        if !ratioRows.isEmpty {
            out += "\nRatios (this format's figure over the engine's; above 1: the engine is faster or smaller; memory is the "
            out += "peak above baseline of the memory run). \"engine\" is the Swift host with the engine in process, \"C host\" "
            out += "the C host calling librestoration.so:\n\n"
            out += "| format | save ÷ engine | restore ÷ engine | size ÷ engine | save mem ÷ engine | restore mem ÷ engine "
            out += "| save ÷ C host | restore ÷ C host | size ÷ C host | save mem ÷ C host | restore mem ÷ C host |\n"
            out += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
            func cells(_ r: Ratios?) -> String {
                guard let r else { return " – | – | – | – | – |" }
                return " \(fmtRatio(r.save)) | \(fmtRatio(r.restore)) | \(fmtRatio(r.archiveBytes)) | "
                    + "\(fmtRatio(r.saveMemory)) | \(fmtRatio(r.restoreMemory)) |"
            }
            for f in ratioRows { out += "| \(f.name) |" + cells(f.versusEngine) + cells(f.versusCHost) + "\n" }
        }
        if let line = floorLine(s) { out += "\n" + line + "\n" }
        for f in s.formats { if let i = f.info, !i.isEmpty { out += "\n\(f.name): \(i)." } }
        if s.formats.contains(where: { $0.info?.isEmpty == false }) { out += "\n" }
        if let e = s.engine {
            out += "\nEngine: \(fmtInt(e.preregistered)) of \(fmtInt(s.n)) objects pre-registered ("
            out += String(format: "%.1f%%", e.preregisteredFraction * 100) + "), the rest re-created by host-class factories. "
            out += "Per value through the C ABI (phase median / 8N): "
            out += "encode \(e.nsPerEncodedValue.map { String(format: "%.1f ns", $0) } ?? "–"), "
            out += "decode \(e.nsPerDecodedValue.map { String(format: "%.1f ns", $0) } ?? "–") "
            out += "(decode includes validation, materialize and finish). "
            if e.hostSaveFloor != nil || e.hostRestoreFloor != nil {
                out += "Inside those times, the host's own work without any engine (reading every value the encode callback "
                out += "reads / allocating and filling the restored objects as the factories and decode callbacks do): "
                out += "\(fmtStats(e.hostSaveFloor)) ms / \(fmtStats(e.hostRestoreFloor)) ms. "
            }
            out += "`rst_save` to a file with fsync: \(fmtStats(e.fileSave)) ms"
            if let b = e.fileBytes { out += " (\(fmtInt(b)) bytes)" }
            out += "."
            if let b = e.budget {
                out += " Size budgets: every save measures every record; the always-on bookkeeping (an offset per record, "
                out += "one size computation) takes \(fmtStats(b.bookkeeping)) ms ("
                out += String(format: "%.2f%%", b.bookkeepingPercent) + " of the \(fmtStats(b.save)) ms save); the full "
                out += "attribution of every record (`rst_last_save_sizes`: own and subtree bytes, path, class) "
                out += "\(fmtStats(b.attribution)) ms (" + String(format: "%.1f%%", b.attributionPercent) + ", only when asked "
                out += "or over budget)."
                if let p = b.problem { out += " **\(p)**" }
            }
            if let p = e.problem { out += " **\(p)**" }
            out += "\n"
        }
        out += "\n"
    }

    if let x = r.extras {
        out += "## Engine: other cases\n\n"
        if let m = x.micro {
            out += "**Micro loop** (\(m.layout)): "
            if let p = m.problem { out += "**\(p)**\n\n" } else {
                out += "rst_encode_int \(fmtNs(m.encodeNsPerCall)) ns per call, rst_decode_int \(fmtNs(m.decodeNsPerCall)) ns per call "
                out += "(timed inside the callback); whole rst_save_to_buffer \(fmtNs(m.saveNsPerValue)) ns and "
                out += "rst_restore_from_buffer \(fmtNs(m.restoreNsPerValue)) ns per value; archive \(fmtInt(m.archiveBytes)) bytes.\n\n"
            }
        }
        if let m = x.sealedMicro {
            out += "**Sealed values** (\(m.layout)): "
            if let p = m.problem { out += "**\(p)**\n\n" } else {
                out += "whole rst_save_to_buffer \(fmtNs(m.saveNsPerValue)) ns and rst_restore_from_buffer \(fmtNs(m.restoreNsPerValue)) ns "
                out += "per sealed value (each sealed with a fresh nonce at save, opened once at restore); archive \(fmtInt(m.archiveBytes)) bytes.\n\n"
            }
        }
        if let p = x.plugin {
            out += "**Plugins** (N = \(fmtInt(p.n)), \(p.pluginFiles) plugin files, the archive's last object needs class `\(p.neededClass)`): "
            if let problem = p.problem { out += "**\(problem)**\n\n" } else {
                out += "restore \(fmtStats(p.withPlugins)) ms with the plugin directory vs \(fmtStats(p.withoutPlugins)) ms without "
                out += "(that one record skipped): **\(fmtSigned(p.overheadMs)) ms**. Loaded \(p.pluginsLoaded), rejected \(p.pluginsRejected). "
                out += "Each run used a fresh directory of copies, so every dlopen was a first load, as at app launch "
                out += "(compiling the plugin took \(String(format: "%.2f", p.compileSeconds)) s, untimed).\n\n"
            }
        }
        if !x.shapes.isEmpty {
            out += "| case | objects | max depth | save ms | restore ms | archive bytes | restored | stack | result |\n"
            out += "|---|---:|---:|---:|---:|---:|---:|---:|---|\n"
            for s in x.shapes {
                out += "| \(s.name) | \(fmtInt(s.objects)) | \(fmtInt(s.maxDepth)) | \(fmtStats(s.save)) | \(fmtStats(s.restore)) | "
                out += "\(fmtInt(s.archiveBytes)) | \(fmtInt(s.restored)) | \(s.stackBytes / 1024) KiB | \(s.problem.map { "**\(brief($0))**" } ?? "ok") |\n"
            }
            out += "\n"
        }
        if let d = x.depthLimit {
            out += "**Depth limit:** RST_MAX_TREE_DEPTH = \(fmtInt(d.maxTreeDepth)) objects in one parent chain (depths 0 to \(fmtInt(d.maxTreeDepth - 1))). Registering at depth "
            out += "\(fmtInt(d.maxTreeDepth - 1)): \(d.atLimit); at depth \(fmtInt(d.maxTreeDepth)): \(d.pastLimit)"
            out += d.firstRefusedDepth.map { "; first refused depth: \(fmtInt($0))." } ?? "."
            if let p = d.problem { out += " **\(p)**" }
            out += "\n\n"
        }
        for p in x.problems { out += "- **\(brief(p))**\n" }
        if !x.log.isEmpty {
            out += "Engine log (WARNING and above, first \(x.log.count); the plugin case's restore without plugin_dir "
            out += "skips one record by design):\n\n"
            for l in x.log { out += "    \(l)\n" }
            out += "\n"
        }
    }

    if let g = r.growth {
        out += "## Engine growth, interleaved\n\n"
        out += "N = \(fmtInt(g.smallN)) and \(fmtInt(g.largeN)) alternating, \(g.runs) runs each: save \(fmtStats(g.smallSave)) vs "
        out += "\(fmtStats(g.largeSave)) ms (×" + String(format: "%.1f", g.saveRatio) + "), restore \(fmtStats(g.smallRestore)) vs "
        out += "\(fmtStats(g.largeRestore)) ms (×" + String(format: "%.1f", g.restoreRatio) + ")."
        if let p = g.problem { out += " **\(brief(p))**" }
        out += "\n\n"
    }
    out += "## Targets (N = 100,000)\n\n"
    if !r.sizes.contains(where: { $0.n == 100_000 }) {
        out += "N = 100,000 was not run (--quick or --sizes), so the targets set at that size are n/a.\n\n"
    }
    out += "| target | measured | result |\n|---|---|---|\n"
    for c in r.checks { out += "| \(c.target) | \(brief(c.measured)) | \(c.verdict) |\n" }
    out += "\n## Notes\n\n"
    for n in r.notes { out += "- \(n)\n" }
    return out
}

private func fmtNs(_ s: Stats) -> String {
    guard !s.samples.isEmpty else { return "–" }
    return String(format: "%.1f [%.1f–%.1f]", s.median, s.min, s.max)
}

func renderJSON(_ r: Report) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
    return String(decoding: try encoder.encode(r), as: UTF8.self)
}
