// restore-bench: the Restoration engine against what a user would otherwise
// pick (NSKeyedArchiver, binary PropertyListEncoder, JSONEncoder, and for a C
// program GLib's GVariant), and a C host calling librestoration.so, on the
// same object graph, in one run on the same machine.
//
//   swift run -c release restore-bench [--quick] [--json] [--sizes 1000,10000] [--instructions]
//
// Files: Graph.swift (the generated graph and the host's objects),
// Baselines.swift (the Foundation formats), CContestants.swift and c/ (the C
// host through librestoration.so, GVariant), EngineBench.swift (the engine
// through its C ABI), EngineCases.swift (micro loop, plugins, deep chain,
// fan-out, depth limit), Harness.swift (timing, memory, schedule, options),
// Report.swift (tables, JSON, target checks), Instructions.swift (the
// instruction and memory targets, from Tests/perf/callgrind.sh).

import Foundation
#if canImport(Glibc)
import Glibc
#endif

setvbuf(stdout, nil, _IOFBF, 1 << 16)
let arguments = Array(CommandLine.arguments.dropFirst())

// The deep cases run in a child process (EngineCases.swift), so that a stack
// overflow there is reported instead of ending the whole benchmark.
if arguments.first == "--child-shapes" {
    let runs = arguments.count > 1 ? Int(arguments[1]) ?? 3 : 3
    let seed = arguments.count > 2 ? UInt64(arguments[2]) ?? 0 : 0
    let status = childShapesMain(runs: runs, seed: seed)
    fflush(stdout)
    exit(status)
}

if arguments.contains("-h") || arguments.contains("--help") {
    print(Options.usage)
    exit(0)
}

let options: Options
do {
    options = try Options.parse(arguments)
} catch {
    Log.say("restore-bench: \(error)")
    exit(64)
}

let started = Clock.now()
#if DEBUG
let buildKind = "debug"
Log.say("restore-bench: this is a DEBUG build; numbers are meaningless. Use: swift run -c release restore-bench")
#else
let buildKind = "release"
#endif

if ProcessInfo.processInfo.environment["RESTORE_BENCH_MEMORY"] == "sampled" {
    Memory.mode = .sampled      // forces the fallback (to test it)
} else {
    Memory.mode = Memory.probe()
}
Log.say("restore-bench: memory is measured by \(Memory.mode.rawValue)")

// A private temporary directory for archives and plugins, removed at the end.
var template = Array((NSTemporaryDirectory() + "/restore-bench.XXXXXX").utf8CString)
guard let madeDir = mkdtemp(&template) else {
    Log.say("restore-bench: mkdtemp failed: \(String(cString: strerror(errno)))")
    exit(1)
}
let workDir = URL(fileURLWithPath: String(cString: madeDir), isDirectory: true)

var notes: [String] = [
    "Graph: N objects in a 6-level tree (depth 0–5; fan-out the smallest f with 1+f+…+f⁵ ≥ N, levels filled breadth-first), "
        + "stored in depth-first pre-order; identifiers are short and scoped by the parent (\"row12\" occurs under many parents, "
        + "unique among siblings); one of \(Graph.classNames.count) class names; 8 keyed values: Bool, Int64 (0..<2³²), Double "
        + "(53 random mantissa bits), a 16-character ASCII String, 32 random bytes, a reference to another object, a record "
        + "{text: 12 characters, count: 0..<1000} and 4 Int64 (0..<10,000). Seed \(options.seed), identical for every format.",
    "The graph is acyclic for every format: each reference and each parent points to an EARLIER object in pre-order "
        + "(the root has no reference). corelibs NSKeyedUnarchiver recurses until the stack overflows on a cycle "
        + "(BASELINES.md point 4), so the shared graph cannot have one. The engine's cycle handling is not exercised here.",
    "NSKeyedArchiver: one NSSecureCoding subclass per class name, parent and reference as object references "
        + "(encode(_:forKey:) / decodeObject(of:forKey:)), the record as an NSSecureCoding object, requiresSecureCoding on both "
        + "sides, decoding with NSKeyedUnarchiver.unarchivedObject(ofClasses:from:); root object: an NSArray of all objects. "
        + "Linux workarounds a careful user would apply: the 4 Int64 as keyed Int64s \"rows.count\", \"rows.0\"…\"rows.3\" "
        + "(an NSArray per object makes the archiver O(N²): corelibs NSArray.hash is its count, BASELINES.md point 1); the "
        + "32 bytes with encodeBytes/withDecodedUnsafeBytes, and the archive written into an NSMutableData whose bytes are memcpy'd "
        + "(the NSData→Data bridge copies byte by byte, point 2)."
        + (options.naturalKeyed ? " --natural-nskeyed adds the unworked code ([Int64] as NSArray, Data as an NSData object, "
            + "archivedData(withRootObject:requiringSecureCoding:)) at N ≤ 1,000 only." : ""),
    "PropertyListEncoder (.binary) and JSONEncoder encode Codable structs converted from the host's objects (parent and "
        + "reference as pre-order indexes); their restore decodes and rebuilds the objects with parent and reference linked. "
        + "Encoders and decoders are created per call, with default options (JSON: Data as Base64).",
    "Every restore is checked once (first run) against the generated graph: every object, value, class, parent and "
        + "reference. A format that fails is reported FAILED and not timed.",
    "Schedule per N: warm-up + check, one untimed memory run, then the timed runs round-robin over the formats, so the "
        + "drift of a shared machine hits every format alike. Absolute times on these shared 2-core machines drift by up to "
        + "1.7× between runs (BASELINES.md); compare within one run.",
]
if EngineBench.included {
    notes.append("Engine save: all N objects registered beforehand (untimed); timed: rst_save_to_buffer, which calls every "
        + "encode callback through the C ABI and writes the archive to memory. Engine restore: a new engine per run with one "
        + "host class per class name (its factory allocates the host object and registers it) and the first ⌈N/2⌉ objects "
        + "in pre-order pre-registered (a pre-order prefix contains every member's parent), all untimed; timed: "
        + "rst_restore_from_buffer (validation, materialize, dependency-ordered decode, finished).")
    notes.append("Engine, every record migrated (docs/EVOLUTION.md): the same save (no class version set: every record at version 0); "
        + "the restore engine sets each class to version 1 and registers a one-step migration from 0 that renames \"number\" "
        + "to \"amount\" (rst_coder_rename), reads it and adds \"added\" = amount + 1 (rst_encode_int); the decode callbacks "
        + "read \"amount\" and \"added\". Set-up and timing as for the engine row, in the same round-robin; its restore "
        + "ratio is its median over the plain engine's (the cost of the migration path; target ≤ 2×). Verified like the "
        + "engine row, plus one migration per record and \"added\" = amount + 1 for every object.")
    notes.append("Linear growth is checked on interleaved runs of the engine at 10,000 and 100,000 objects (both sizes "
        + "under the same machine load); the per-N tables' ratio is shown beside it. The 10,000-object working set fits in "
        + "the L3 cache (\(l3CacheSize() ?? "size unknown") here) and the 100,000-object one does not, so part of the growth is memory latency that any "
        + "engine (and the host's own work, shown per N) pays.")
    notes.append("References are uniform over all earlier objects, so at 100,000 objects most references and their "
        + "resolution are cache misses, for every format alike.")
    notes.append("The deep chain, the fan-out, the depth limit and the max-depth chain run in a child process on a "
        + "512 KiB thread stack, so recursion over the tree depth would crash there (and be reported) "
        + "instead of passing on the 8 MiB main stack.")
}
if options.naturalKeyed && options.sizes.contains(where: { $0 > 1_000 }) {
    notes.append("--natural-nskeyed ran only at N ≤ 1,000: its encoder is O(N²) on Linux (6 s at 1k, > 60 s at 10k in BASELINES.md).")
}

// The C contestants (CContestants.swift): compiled and loaded once, untimed.
let cBuild: CBuild
if options.formats.contains("c-engine") || options.formats.contains("c-floor") || options.formats.contains("gvariant") {
    Log.say("C contestants: building")
    cBuild = CBuild.build(keys: options.formats, workDir: workDir, release: buildKind == "release")
    notes.append(contentsOf: cBuild.notes)
} else {
    cBuild = CBuild()
}
if options.formats.contains("c-engine") {
    notes.append("C host through the C ABI (c/bench_engine.c): C code linked against the real librestoration.so (-lrestoration, "
        + "rpath to restore-bench's bin folder), doing what the Swift host's engine row does call for call: all N objects "
        + "registered (untimed), rst_save_to_buffer timed; a new engine per restore with one host class per class name (the "
        + "factory mallocs a C struct and registers it) and the first ⌈N/2⌉ objects pre-registered (untimed), then "
        + "rst_restore_from_buffer timed, decoding into C structs (strings malloc'd, blob and rows inline). Verified like the "
        + "engine row: every object found at its path, every value, class, parent and reference identity, `finished`, the "
        + "restore report's counts. restore-bench exports no rst_* symbol (nm -D), and the C host checks with dladdr that its "
        + "rst_* calls bind to librestoration.so, not to the engine copy inside restore-bench.")
}
if options.formats.contains("c-floor") {
    notes.append("The floor (c/bench_floor.c): the engine's archive format written and read by a straight C loop for the C "
        + "host's objects: the same header, info, key and name tables (names interned in an open-addressing table), "
        + "records, field headers, tags, LEB128 varints, zigzag and CRC-32C (SSE 4.2), with no registry, no callbacks, no "
        + "key lookup by name and no validation beyond the checksum. Restore makes the same malloc'd C structs as the C "
        + "host's factories (strings copied), links parents and references, and is verified like the C host's. Its "
        + "archive is read back, untimed, by the engine's own validating reader after the runs. The engine's time over "
        + "the floor's is printed for the C host and the Swift host (target: the C host ≤ 2× on save and on restore at "
        + "N = 100,000).")
}
if options.formats.contains("gvariant") {
    notes.append("GLib GVariant (c/bench_gvariant.c), as GTK 4.22 stores window state: one a{sv} per object, the archive an "
        + "a(ssia{sv}) of (identifier, class name, parent index, values) in pre-order; values flag b, number x, ratio d, "
        + "title s, blob ay, link i (the referenced object's pre-order index, absent at the root), note a{sv} {text s, "
        + "count x}, rows ax. Parent and reference are indexes (int32), as a program serializing its own array writes them "
        + "and as the Codable baselines do: the cheapest form to write and to resolve (a path would cost a string build per "
        + "object at save and a lookup at restore). Save: GVariantBuilders over the same C structs as the C host, "
        + "g_variant_builder_end, g_variant_get_data/g_variant_get_size (the serialization); the archive is the variant's "
        + "own buffer, not copied. Restore: the bytes copied to a fresh buffer (untimed, as a file read), then timed "
        + "g_variant_new_from_data(trusted = FALSE, as for a file), g_variant_get_child_value and g_variant_get "
        + "\"(&s&si@a{sv})\" per object, g_variant_lookup/g_variant_lookup_value per value, a malloc'd C struct per object "
        + "(strings copied, class name to index through a GHashTable made once), parents linked, references linked in a "
        + "second pass. Verified value by value, parent and reference identity.")
}

var sizeResults: [SizeResult] = []
var keptEngines: [Int: Contestant] = [:]
for n in options.sizes {
    Log.say("N = \(fmtInt(n)): generating the graph")
    let graph = Graph.tree(count: n, seed: options.seed)
    if let problem = graph.validate() {
        Log.say("restore-bench: generated graph is invalid: \(problem)")
        exit(1)
    }
    let live = graph.liveNodes()
    var contestants: [Contestant] = []
    var engineFailure: FormatResult?
    var unavailableFailures: [FormatResult] = []
    if EngineBench.included && options.formats.contains("engine") {
        do {
            contestants.append(try EngineBench.contestant(graph: graph, live: live, workDir: workDir))
        } catch {
            engineFailure = FormatResult(key: "engine", name: "Restoration engine (C ABI)", n: n, runs: 0, runsNote: nil,
                                         save: nil, restore: nil, archiveBytes: 0, bytesPerObject: 0,
                                         saveMemoryDeltaBytes: 0, restoreMemoryDeltaBytes: 0, peakRSSBytes: 0,
                                         verified: false, problem: "set-up failed: \(error)", saveRatio: nil, restoreRatio: nil)
        }
    }
    if EngineBench.included && options.formats.contains("engine-migrate") {
        do {
            contestants.append(try EngineBench.migrateContestant(graph: graph))
        } catch {
            Log.say("  engine-migrate @ \(n): set-up failed: \(error)")
            unavailableFailures.append(FormatResult(key: "engine-migrate", name: "Restoration engine, every record migrated (C ABI)",
                                                    n: n, runs: 0, runsNote: nil, save: nil, restore: nil, archiveBytes: 0,
                                                    bytesPerObject: 0, saveMemoryDeltaBytes: 0, restoreMemoryDeltaBytes: 0,
                                                    peakRSSBytes: 0, verified: false, problem: "set-up failed: \(error)",
                                                    saveRatio: nil, restoreRatio: nil))
        }
    }
    var unavailableRows: [FormatResult] = unavailableFailures
    let cKeys = CBuild.keys.filter(options.formats.contains)
    if !cKeys.isEmpty {
        let cGraph = CGraph(graph: graph)
        for key in cKeys {
            switch cBuild.contestant(key, graph: cGraph) {
            case .success(let c): contestants.append(c)
            case .failure(let e):
                var row = FormatResult(key: key, name: CBuild.names[key] ?? key, n: n, runs: 0, runsNote: nil,
                                       save: nil, restore: nil, archiveBytes: 0, bytesPerObject: 0,
                                       saveMemoryDeltaBytes: 0, restoreMemoryDeltaBytes: 0, peakRSSBytes: 0,
                                       verified: false, problem: e.description, saveRatio: nil, restoreRatio: nil)
                if e.description.hasPrefix("unavailable: ") { row.unavailable = String(e.description.dropFirst(13)) }
                unavailableRows.append(row)
            }
        }
    }
    if options.formats.contains("nskeyed") {
        contestants.append(KeyedArchiverContestant(graph: graph, natural: false))
    }
    if options.naturalKeyed && n <= 1_000 {
        contestants.append(KeyedArchiverContestant(graph: graph, natural: true))
    }
    if options.formats.contains("plist") {
        contestants.append(CodableContestant(graph: graph, live: live, kind: .binaryPlist))
    }
    if options.formats.contains("json") {
        contestants.append(CodableContestant(graph: graph, live: live, kind: .json))
    }

    var formats = runContestants(contestants, n: n, options: options)
    if let f = engineFailure { formats.insert(f, at: 0) }
    formats.append(contentsOf: unavailableRows)
    let order = Options.formatKeys + ["nskeyed-natural"]
    formats.sort { (order.firstIndex(of: $0.key) ?? order.count) < (order.firstIndex(of: $1.key) ?? order.count) }
    for i in formats.indices {
        if let c = contestants.first(where: { $0.key == formats[i].key }) as? CContestant { formats[i].info = c.info }
    }
    // The floor's archive must be the format, read by the engine's own reader.
    if let i = formats.firstIndex(where: { $0.key == "c-floor" && $0.problem == nil && $0.verified }),
       let floor = contestants.first(where: { $0.key == "c-floor" }) as? CContestant {
        if let problem = floor.archiveProblem(expectedRecords: n) {
            formats[i].problem = "its archive is not the engine's format: " + problem
            formats[i].verified = false
            formats[i].versusEngine = nil
            formats[i].versusCHost = nil
        } else {
            formats[i].info = (formats[i].info.map { $0 + "; " } ?? "") + "its archive read back by the engine's validating reader"
        }
    }
    var engineExtras: EngineSizeExtras?
    if let engine = contestants.first(where: { $0.key == "engine" }) {
        Log.say("  engine @ \(n): rst_save to a file")
        let result = formats.first { $0.key == "engine" }
        engineExtras = EngineBench.sizeExtras(engine, result: result, runs: options.runs)
        if (n == 10_000 || n == 100_000) && result?.verified == true && result?.problem == nil {
            keptEngines[n] = engine            // for the interleaved growth runs
        } else {
            EngineBench.close(engine)
        }
    }
    sizeResults.append(SizeResult(n: n, graph: graph.summary, formats: formats, engine: engineExtras))
    contestants.removeAll()
}

var growth: GrowthResult?
if let small = keptEngines[10_000], let large = keptEngines[100_000] {
    Log.say("engine: 10,000 and 100,000 interleaved (linear growth)")
    growth = EngineBench.growth(small: small, large: large, runs: max(options.runs, 5))
}
keptEngines.values.forEach(EngineBench.close)
keptEngines.removeAll()

var extras: EngineExtras?
if EngineBench.included && options.extras && options.formats.contains("engine") {
    extras = EngineBench.extras(options: options, workDir: workDir)
}

let engineRun = EngineBench.included && options.formats.contains("engine")
let instructions = options.instructions ? InstructionResult.measure() : nil
let targets = evaluateTargets(sizes: sizeResults, extras: extras, growth: growth, engineIncluded: engineRun,
                              engineAbsence: EngineBench.included ? "engine not selected (--formats)" : "engine not in this build",
                              instructions: instructions)
let checks = targets.map(\.check)
let report = Report(
    date: ISO8601DateFormatter().string(from: Date()),
    machine: machineDescription(),
    swift: swiftVersionText,
    build: buildKind,
    options: ["sizes": options.sizes.map(String.init).joined(separator: ","), "runs": String(options.runs),
              "quick": String(options.quick), "natural-nskeyed": String(options.naturalKeyed),
              "extras": String(options.extras), "seed": String(options.seed),
              "formats": Options.formatKeys.filter(options.formats.contains).joined(separator: ",")],
    memoryMethod: Memory.mode.rawValue,
    engineIncluded: engineRun,
    engineNote: EngineBench.note,
    notes: notes,
    sizes: sizeResults,
    extras: extras,
    growth: growth,
    checks: checks,
    targets: targets,
    totalSeconds: Clock.now() - started)

if options.json {
    do { print(try renderJSON(report)) } catch {
        Log.say("restore-bench: JSON encoding failed: \(error)")
        exit(1)
    }
} else {
    print(renderMarkdown(report))
}
fflush(stdout)
try? FileManager.default.removeItem(at: workDir)
Log.say("restore-bench: done in \(String(format: "%.0f", Clock.now() - started)) s")
