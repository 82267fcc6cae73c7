// Timing, memory and the run schedule.
//
// Per (format, N): one warm-up run that is also the correctness check (the
// restored graph is compared with the generated one; a format whose restore
// is wrong is reported as FAILED and not timed), then one memory run, then
// the timed runs. Timed runs go round-robin over the formats (run 1 of every
// format, then run 2, ...), so the drift of a shared machine hits every
// format alike. Timed runs touch no /proc file and trim no heap.
//
// Memory: before each phase of the memory run the heap is trimmed
// (malloc_trim(0)), the peak is reset (writing "5" to /proc/self/clear_refs
// resets VmHWM) and VmRSS is read as the baseline; after the phase VmHWM is
// the peak. The reported figure is peak minus baseline. Where the reset does
// not work, a thread samples VmRSS every millisecond instead (reported).

import Foundation
#if canImport(Glibc)
import Glibc
#endif

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}

/// One thing that saves and restores the graph.
protocol Contestant: AnyObject {
    var key: String { get }
    var name: String { get }
    /// Untimed set-up before each save.
    func prepareSave() throws
    /// Timed. Returns the archive's size in bytes.
    func save() throws -> Int
    /// Untimed set-up before each restore (the engine pre-registers objects here).
    func prepareRestore() throws
    /// Timed. Keeps the restored graph until endRestore().
    func restore() throws
    /// Untimed: compares the kept graph with the generated one; nil when correct.
    func verifyRestore() -> String?
    /// Untimed: drops the restored graph.
    func endRestore()
}

extension Contestant {
    func prepareSave() throws {}
    func prepareRestore() throws {}
}

// MARK: - Clock

enum Clock {
    /// Monotonic seconds.
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }

    static func time(_ body: () throws -> Void) rethrows -> Double {
        let t0 = now()
        try body()
        return now() - t0
    }
}

// MARK: - Memory

enum Memory {
    enum Mode: String, Codable { case hwmReset = "VmHWM after clear_refs reset", sampled = "VmRSS sampled every 1 ms" }

    /// Decided once at start-up by `probe()`.
    nonisolated(unsafe) static var mode: Mode = .sampled

    /// ("VmRSS", "VmHWM") in bytes from /proc/self/status.
    static func status() -> (rss: Int, hwm: Int) {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return (0, 0) }
        var rss = 0, hwm = 0
        for line in text.split(separator: "\n") {
            if line.hasPrefix("VmRSS:") { rss = kib(line) } else if line.hasPrefix("VmHWM:") { hwm = kib(line) }
        }
        return (rss, hwm)
    }

    private static func kib(_ line: Substring) -> Int {
        let digits = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0"
        return (Int(digits) ?? 0) * 1024
    }

    @discardableResult
    static func resetPeak() -> Bool {
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return write(fd, "5", 1) == 1
    }

    /// Gives freed heap back to the kernel so the baseline RSS is honest.
    static func trim() {
        typealias TrimFn = @convention(c) (Int) -> Int32
        if let sym = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {   // RTLD_DEFAULT
            _ = unsafeBitCast(sym, to: TrimFn.self)(0)
        }
    }

    /// Checks that resetting VmHWM works here: touch 64 MiB, free it, reset,
    /// and see the peak fall back.
    static func probe() -> Mode {
        let size = 64 << 20
        let p = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 4096)
        var i = 0
        while i < size { p.storeBytes(of: 1, toByteOffset: i, as: UInt8.self); i += 4096 }
        let high = status().hwm
        p.deallocate()
        trim()
        guard resetPeak() else { return .sampled }
        let after = status()
        return (after.hwm < high - size / 2 && after.hwm <= after.rss + (1 << 20)) ? .hwmReset : .sampled
    }

    /// Runs `body` and returns (peak RSS − baseline RSS, peak RSS) in bytes.
    static func measure(_ body: () throws -> Void) rethrows -> (delta: Int, peak: Int) {
        trim()
        switch mode {
        case .hwmReset:
            resetPeak()
            let base = status().rss
            try body()
            let peak = status().hwm
            return (max(0, peak - base), peak)
        case .sampled:
            let base = status().rss
            let sampler = Sampler()
            sampler.start()
            try body()
            let peak = max(sampler.stop(), status().rss)
            return (max(0, peak - base), peak)
        }
    }

    /// Samples VmRSS on its own thread (the fallback).
    private final class Sampler: @unchecked Sendable {
        private let lock = NSLock()
        private var running = true
        private var peak = 0
        private var thread: Thread?
        private let done = DispatchSemaphore(value: 0)

        func start() {
            let t = Thread { [self] in
                while true {
                    let rss = Memory.status().rss
                    lock.lock()
                    peak = max(peak, rss)
                    let go = running
                    lock.unlock()
                    if !go { break }
                    usleep(1000)
                }
                done.signal()
            }
            thread = t
            t.start()
        }

        func stop() -> Int {
            lock.lock(); running = false; lock.unlock()
            done.wait()
            return peak
        }
    }
}

// MARK: - Statistics

struct Stats: Codable {
    var samples: [Double]          // milliseconds, in run order
    var median: Double
    var min: Double
    var max: Double

    enum CodingKeys: String, CodingKey { case samples, median, min, max }

    /// median, min and max are null (not "nan") when there are no samples.
    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(samples, forKey: .samples)
        for (v, k) in [(median, CodingKeys.median), (min, .min), (max, .max)] {
            if v.isFinite { try c.encode(v, forKey: k) } else { try c.encodeNil(forKey: k) }
        }
    }

    init(ms samples: [Double]) {
        self.samples = samples
        let s = samples.sorted()
        median = s.isEmpty ? .nan : (s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2)
        min = s.first ?? .nan
        max = s.last ?? .nan
    }
}

/// One format at one N.
struct FormatResult: Codable {
    var key: String
    var name: String
    var n: Int
    var runs: Int
    var runsNote: String?
    var save: Stats?
    var restore: Stats?
    var archiveBytes: Int
    var bytesPerObject: Double
    var saveMemoryDeltaBytes: Int
    var restoreMemoryDeltaBytes: Int
    var peakRSSBytes: Int
    var verified: Bool
    var problem: String?
    /// baseline time / engine time (nil for the engine, or when either is missing).
    var saveRatio: Double?
    var restoreRatio: Double?
    /// Why the contestant could not run at all (no cc, no glib-2.0, no
    /// librestoration.so); nil when it ran. Such a row has `problem` too.
    var unavailable: String? = nil
    /// One line about the contestant (which library provides rst_*, GLib's version).
    var info: String? = nil
    /// This format over the Swift host's engine ("engine") and over the C
    /// host's engine ("c-engine"): time, archive size and memory.
    var versusEngine: Ratios? = nil
    var versusCHost: Ratios? = nil

    enum CodingKeys: String, CodingKey {
        case key, name, n, runs, runsNote, save, restore, archiveBytes, bytesPerObject, saveMemoryDeltaBytes,
             restoreMemoryDeltaBytes, peakRSSBytes, verified, problem, saveRatio, restoreRatio, unavailable, info,
             versusEngine, versusCHost
    }

    /// Every member is written, null when absent (schema "restore-bench/2").
    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(key, forKey: .key)
        try c.encode(name, forKey: .name)
        try c.encode(n, forKey: .n)
        try c.encode(runs, forKey: .runs)
        try c.encode(runsNote, forKey: .runsNote)
        try c.encode(save, forKey: .save)
        try c.encode(restore, forKey: .restore)
        try c.encode(archiveBytes, forKey: .archiveBytes)
        try c.encode(bytesPerObject.isFinite ? bytesPerObject : nil, forKey: .bytesPerObject)
        try c.encode(saveMemoryDeltaBytes, forKey: .saveMemoryDeltaBytes)
        try c.encode(restoreMemoryDeltaBytes, forKey: .restoreMemoryDeltaBytes)
        try c.encode(peakRSSBytes, forKey: .peakRSSBytes)
        try c.encode(verified, forKey: .verified)
        try c.encode(problem, forKey: .problem)
        try c.encode(saveRatio.flatMap { $0.isFinite ? $0 : nil }, forKey: .saveRatio)
        try c.encode(restoreRatio.flatMap { $0.isFinite ? $0 : nil }, forKey: .restoreRatio)
        try c.encode(unavailable, forKey: .unavailable)
        try c.encode(info, forKey: .info)
        try c.encode(versusEngine, forKey: .versusEngine)
        try c.encode(versusCHost, forKey: .versusCHost)
    }
}

/// One format's figures divided by another's (above 1: the other is faster,
/// smaller or leaner). nil where either side is missing or zero.
struct Ratios: Codable {
    var against: String              // the key of the denominator
    var save: Double?
    var restore: Double?
    var archiveBytes: Double?
    var saveMemory: Double?
    var restoreMemory: Double?

    enum CodingKeys: String, CodingKey { case against, save, restore, archiveBytes, saveMemory, restoreMemory }

    /// Every member is written, null when absent.
    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(against, forKey: .against)
        try c.encode(save, forKey: .save)
        try c.encode(restore, forKey: .restore)
        try c.encode(archiveBytes, forKey: .archiveBytes)
        try c.encode(saveMemory, forKey: .saveMemory)
        try c.encode(restoreMemory, forKey: .restoreMemory)
    }

    init(_ f: FormatResult, over d: FormatResult) {
        against = d.key
        func div(_ a: Double?, _ b: Double?) -> Double? {
            guard let a, let b, a.isFinite, b.isFinite, b > 0 else { return nil }
            return a / b
        }
        save = div(f.save?.median, d.save?.median)
        restore = div(f.restore?.median, d.restore?.median)
        archiveBytes = div(Double(f.archiveBytes), Double(d.archiveBytes))
        saveMemory = div(Double(f.saveMemoryDeltaBytes), Double(d.saveMemoryDeltaBytes))
        restoreMemory = div(Double(f.restoreMemoryDeltaBytes), Double(d.restoreMemoryDeltaBytes))
    }
}

// MARK: - Options

struct Options {
    var sizes: [Int] = [1_000, 10_000, 100_000]
    var runs = 5
    var quick = false
    var json = false
    var naturalKeyed = false
    var seed: UInt64 = 0x5EED_2026
    var extras = true
    /// --instructions: the instruction and memory targets from valgrind.
    var instructions = false
    /// Contestant keys to run (nskeyed-natural via --natural-nskeyed).
    var formats: Set<String> = Set(formatKeys)
    static let formatKeys = ["engine", "engine-migrate", "c-engine", "c-floor", "gvariant", "nskeyed", "plist", "json"]

    static let usage = """
    usage: restore-bench [--quick] [--json] [--sizes 1000,10000] [--runs K]
                         [--formats engine,engine-migrate,c-engine,c-floor,
                                    gvariant,nskeyed,plist,json]
                         [--natural-nskeyed] [--no-extras] [--seed S]
                         [--instructions]

      --quick            N = 1,000 and 10,000 with 3 timed runs (about a minute)
      --json             one JSON document on stdout instead of Markdown
      --sizes a,b,...    object counts to run (default 1000,10000,100000)
      --runs K           timed runs per format and N (default 5; at least 1)
      --natural-nskeyed  also run NSKeyedArchiver with natural (unworked) code,
                         only at N <= 1,000 (it is O(N^2) on Linux)
      --no-extras        skip the engine's extra cases (micro loop, plugins,
                         deep chain, fan-out, depth limit); the per-N file
                         save still runs
      --formats a,b,...  only these of engine,engine-migrate,c-engine,c-floor,
                         gvariant,nskeyed,plist,json (default all; a ratio needs both
                         of its formats)
      --seed S           graph seed (default \(0x5EED_2026))
      --instructions     also run Tests/perf/callgrind.sh with MASSIF=1
                         (valgrind, a few minutes) against the
                         librestoration.so beside restore-bench, for the
                         instruction and memory targets (else they are n/a)

    Formats: engine (the Swift host, engine in process, through the C ABI),
    engine-migrate (the same, every record migrated at restore: each class at
    version 1 with a one-step migration from 0 that renames one key and adds
    one value; its ratios are over the engine row, so its restore ratio is the
    slowdown of the migration path, target <= 2), c-engine (a C host linked
    against librestoration.so), c-floor (the floor: the engine's archive
    format written and read by a straight C loop, no registry, no callbacks,
    no validation beyond the checksum; the C host's time over it is a target,
    <= 2 at N = 100,000), gvariant (a C host,
    GLib GVariant a{sv} per object), nskeyed, plist, json. The C ones are
    compiled at run time with cc (gvariant needs pkg-config glib-2.0; c-engine
    runs `swift build --product restoration` into restore-bench's own build
    folder first, skipped with RESTORE_BENCH_NO_BUILD=1); one that cannot be
    built is reported unavailable, with the reason.

    --json prints one document (schema "restore-bench/2", documented in
    docs/PERFORMANCE.md). Stable for scripts:
      schema          "restore-bench/2"; a new number for any incompatible change
      targets         [{name, description, value, limit, op, unit, pass, detail}],
                      every member always present:
        name          stable identifier, e.g. "save_ms_100k", "restore_ratio_gvariant",
                      "migration_restore_ratio" (engine-migrate over engine at
                      N = 100,000; "migration_restore_ratio_10k" at 10,000)
        value         the measured number, or null when not measured
        limit, op     the bound and the test: pass is `value op limit`, op one
                      of "<=", ">=", "=="
        unit          "ms", "x", "x archive", "bytes/object", "failures", ...
        pass          true or false; null when not measured (value null); false
                      with value null when the measurement itself failed
      sizes[].n, sizes[].formats[]: {key, name, n, save, restore ({samples,
                      median, min, max} in ms, null when not timed), archiveBytes,
                      saveMemoryDeltaBytes, restoreMemoryDeltaBytes, verified,
                      problem, unavailable, saveRatio, restoreRatio, versusEngine,
                      versusCHost ({against, save, restore, archiveBytes,
                      saveMemory, restoreMemory}: this format over that one)};
                      every member present, null when absent
    Every other member is informational and may change.
    Exit status: 0 when the run completed (MISS verdicts included).

    Progress goes to stderr. Build with -c release. RESTORE_BENCH_MEMORY=sampled
    makes it sample VmRSS instead of resetting VmHWM.
    """

    static func parse(_ args: [String]) throws -> Options {
        var o = Options()
        var sizesGiven = false, runsGiven = false
        var i = 0
        func value() throws -> String {
            i += 1
            guard i < args.count else { throw BenchError("\(args[i - 1]) needs a value\n\n\(usage)") }
            return args[i]
        }
        while i < args.count {
            let a = args[i]
            switch a {
            case "--quick": o.quick = true
            case "--json": o.json = true
            case "--instructions": o.instructions = true
            case "--natural-nskeyed": o.naturalKeyed = true
            case "--no-extras": o.extras = false
            case "--sizes":
                let list = try value().split(separator: ",").map { s -> Int in
                    guard let v = Int(s.replacingOccurrences(of: "_", with: "")), v >= 1, v <= 2_000_000 else {
                        throw BenchError("--sizes: \(s) is not a count between 1 and 2,000,000")
                    }
                    return v
                }
                guard !list.isEmpty else { throw BenchError("--sizes: empty list") }
                o.sizes = Array(Set(list)).sorted()
                sizesGiven = true
            case "--runs":
                guard let r = Int(try value()), r >= 1, r <= 1000 else { throw BenchError("--runs: expected 1...1000") }
                o.runs = r
                runsGiven = true
            case "--formats":
                let list = try value().split(separator: ",").map(String.init)
                for f in list where !formatKeys.contains(f) {
                    throw BenchError("--formats: \(f) is not one of \(formatKeys.joined(separator: ", "))")
                }
                guard !list.isEmpty else { throw BenchError("--formats: empty list") }
                o.formats = Set(list)
            case "--seed":
                guard let s = UInt64(try value()) else { throw BenchError("--seed: expected an unsigned integer") }
                o.seed = s
            case "-h", "--help": throw BenchError(usage)
            default: throw BenchError("unknown argument \(a)\n\n\(usage)")
            }
            i += 1
        }
        if o.quick {
            if !sizesGiven { o.sizes = [1_000, 10_000] }
            if !runsGiven { o.runs = 3 }
        }
        return o
    }
}

// MARK: - Progress

enum Log {
    static func say(_ s: String) {
        FileHandle.standardError.write((s + "\n").data(using: .utf8)!)
    }
}

// MARK: - The schedule

/// NSKeyedArchiver at 100k costs ~25 s per save+restore here. If its warm-up
/// says the timed runs would pass this budget, it gets fewer runs (never
/// fewer than 3), and the report says so.
let slowFormatBudgetSeconds = 200.0

/// Runs every contestant at one N and returns their results (engine first if present).
func runContestants(_ contestants: [Contestant], n: Int, options: Options) -> [FormatResult] {
    var results: [String: FormatResult] = [:]
    var active: [Contestant] = []
    var runsFor: [String: Int] = [:]

    // 1. Warm-up and correctness; 2. the memory run.
    for c in contestants {
        var r = FormatResult(key: c.key, name: c.name, n: n, runs: 0, runsNote: nil, save: nil, restore: nil,
                             archiveBytes: 0, bytesPerObject: 0, saveMemoryDeltaBytes: 0, restoreMemoryDeltaBytes: 0,
                             peakRSSBytes: 0, verified: false, problem: nil, saveRatio: nil, restoreRatio: nil)
        Log.say("  \(c.name) @ \(n): warm-up and check")
        do {
            let t0 = Clock.now()
            try c.prepareSave()
            r.archiveBytes = try c.save()
            try c.prepareRestore()
            try c.restore()
            let warm = Clock.now() - t0
            if let problem = c.verifyRestore() {
                r.problem = "restore verification failed: \(problem)"
                c.endRestore()
                results[c.key] = r
                Log.say("    FAILED: \(problem)")
                continue
            }
            c.endRestore()
            r.verified = true
            r.bytesPerObject = Double(r.archiveBytes) / Double(n)

            Log.say("  \(c.name) @ \(n): memory run")
            try c.prepareSave()
            let ms = try Memory.measure { _ = try c.save() }
            try c.prepareRestore()
            let mr = try Memory.measure { try c.restore() }
            c.endRestore()
            r.saveMemoryDeltaBytes = ms.delta
            r.restoreMemoryDeltaBytes = mr.delta
            r.peakRSSBytes = max(ms.peak, mr.peak)

            var runs = options.runs
            let projected = warm * Double(runs)
            if projected > slowFormatBudgetSeconds && runs > 3 {
                runs = max(3, Int(slowFormatBudgetSeconds / warm))
                r.runsNote = "\(runs) timed runs instead of \(options.runs): one save+restore took \(String(format: "%.1f", warm)) s"
            }
            runsFor[c.key] = runs
            r.runs = runs
            active.append(c)
        } catch {
            r.problem = "failed: \(error)"
            Log.say("    FAILED: \(error)")
            c.endRestore()
        }
        results[c.key] = r
    }

    // 3. Timed runs, round-robin.
    var saves: [String: [Double]] = [:], restores: [String: [Double]] = [:]
    let maxRuns = active.map { runsFor[$0.key] ?? 0 }.max() ?? 0
    for run in 0..<maxRuns {
        Log.say("  N=\(n): timed run \(run + 1)/\(maxRuns)")
        for c in active where run < (runsFor[c.key] ?? 0) && results[c.key]?.problem == nil {
            do {
                try c.prepareSave()
                var bytes = 0
                let ts = try Clock.time { bytes = try c.save() }
                try c.prepareRestore()
                let tr = try Clock.time { try c.restore() }
                c.endRestore()
                saves[c.key, default: []].append(ts * 1000)
                restores[c.key, default: []].append(tr * 1000)
                if bytes != results[c.key]?.archiveBytes {
                    results[c.key]?.problem = "archive size changed between runs (\(bytes) bytes)"
                }
            } catch {
                results[c.key]?.problem = "failed in timed run \(run + 1): \(error)"
                c.endRestore()
            }
        }
    }
    for c in active {
        results[c.key]?.save = Stats(ms: saves[c.key] ?? [])
        results[c.key]?.restore = Stats(ms: restores[c.key] ?? [])
    }

    var ordered = contestants.compactMap { results[$0.key] }
    addRatios(&ordered)
    return ordered
}

/// Ratios against the Swift host's engine ("engine": saveRatio, restoreRatio,
/// versusEngine) and against the C host's engine ("c-engine": versusCHost),
/// for every format that ran correctly.
func addRatios(_ formats: inout [FormatResult]) {
    func good(_ key: String) -> FormatResult? {
        formats.first { $0.key == key && $0.problem == nil && $0.verified && $0.save != nil }
    }
    let engine = good("engine"), cHost = good("c-engine")
    for i in formats.indices where formats[i].problem == nil && formats[i].verified {
        if let e = engine, formats[i].key != "engine" {
            let r = Ratios(formats[i], over: e)
            formats[i].versusEngine = r
            formats[i].saveRatio = r.save
            formats[i].restoreRatio = r.restore
        }
        if let c = cHost, formats[i].key != "c-engine" {
            formats[i].versusCHost = Ratios(formats[i], over: c)
        }
    }
}
