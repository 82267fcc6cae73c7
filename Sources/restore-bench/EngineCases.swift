// The engine's cases beyond the per-N table: the micro loop (1M encode/decode
// calls in one callback), the plugin directory, and the deep chain, wide
// fan-out and depth limit (run in a child process on a small stack, so a
// stack overflow is reported instead of ending the benchmark).
// The host object, its callbacks and the per-N contestant are in EngineBench.swift.

#if !BASELINES_ONLY
import Foundation
import CRestoration
import RestorationC
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Micro loop: 1M rst_encode_int / rst_decode_int in one callback

/// 16 nested records of 62,500 keys each: 1,000,000 calls in one callback
/// while keeping to the format's limits (keys unique per record, at most
/// RST_MAX_VALUES_PER_RECORD values per record).
enum Micro {
    /// 16; 2 for the sealed-values run (every value sealed costs more).
    static var records = 16
    static let perRecord = 62_500
    static var calls: Int { records * perRecord }
    static let keys: [UnsafePointer<CChar>] = (0..<perRecord).map { cString("k\($0)") }
    static let recordKeys: [UnsafePointer<CChar>] = (0..<16).map { cString("r\($0)") }
    static var seconds = 0.0
    static var sum: Int64 = 0
    static var expectedSum: Int64 { Int64(calls) * Int64(calls - 1) / 2 }
}

private let microEncode: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?) -> Void = { _, coder in
    Micro.keys.withUnsafeBufferPointer { keys in
        var bad = 0
        let t0 = Clock.now()
        for r in 0..<Micro.records {
            if rst_encode_begin_record(coder, Micro.recordKeys[r]) != RST_OK { bad += 1 }
            let base = Int64(r * Micro.perRecord)
            for j in 0..<Micro.perRecord where rst_encode_int(coder, keys[j], base + Int64(j)) != RST_OK { bad += 1 }
            if rst_encode_end_record(coder) != RST_OK { bad += 1 }
        }
        Micro.seconds = Clock.now() - t0
        if bad > 0 { Counters.fail("micro encode: \(bad) failed calls; \(String(cString: rst_last_error()))") }
    }
}

private let microDecode: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?) -> Void = { _, coder in
    Micro.keys.withUnsafeBufferPointer { keys in
        var bad = 0
        var sum: Int64 = 0
        var v: Int64 = 0
        let t0 = Clock.now()
        for r in 0..<Micro.records {
            if rst_decode_begin_record(coder, Micro.recordKeys[r]) != RST_OK { bad += 1 }
            for j in 0..<Micro.perRecord {
                if rst_decode_int(coder, keys[j], &v) == RST_OK { sum &+= v } else { bad += 1 }
            }
            if rst_decode_end_record(coder) != RST_OK { bad += 1 }
        }
        Micro.seconds = Clock.now() - t0
        Micro.sum = sum
        if bad > 0 { Counters.fail("micro decode: \(bad) failed calls; \(String(cString: rst_last_error()))") }
    }
}

private let microCallbacks: UnsafeMutablePointer<rst_object_callbacks> = {
    let p = UnsafeMutablePointer<rst_object_callbacks>.allocate(capacity: 1)
    p.initialize(to: rst_object_callbacks(encode: microEncode, decode: microDecode, finished: nil, release: nil))
    return p
}()

/// `sealed`: the same loop with every value sealed — each nested record's
/// key is ENCRYPTED for class Micro, so all its values are sealed with
/// XChaCha20-Poly1305 at save and opened at restore (2 records, 125,000 values).
func runMicro(runs: Int, sealed: Bool = false) -> MicroResult {
    Micro.records = sealed ? 2 : 16
    defer { Micro.records = 16 }
    let layout = "\(Micro.records) nested records × \(fmtInt(Micro.perRecord)) keys = \(fmtInt(Micro.calls)) calls in one callback"
        + (sealed ? ", every value sealed" : "")
    func sealing(_ e: OpaquePointer) {
        guard sealed else { return }
        for r in 0..<Micro.records { _ = rst_set_key_sensitivity(e, "Micro", Micro.recordKeys[r], RST_SENSITIVITY_ENCRYPTED) }
    }
    var enc: [Double] = [], dec: [Double] = [], save: [Double] = [], rest: [Double] = []
    var bytes = 0
    var problem: String?
    do {
        let saver = try makeEngine(encryptionKey: sealed)
        defer { rst_engine_destroy(saver) }
        sealing(saver)
        var st = rst_register_object(saver, "micro", nil, "Micro", microCallbacks, nil, nil)
        guard st == RST_OK else { throw BenchError("register: \(statusText(st))") }
        for run in 0...runs {
            Counters.reset()
            var out: UnsafeMutableRawPointer?
            var length = 0
            let ts = Clock.time { st = rst_save_to_buffer(saver, &out, &length) }
            guard st == RST_OK, let out else { throw BenchError("rst_save_to_buffer: \(statusText(st))") }
            defer { rst_free(out) }
            if let f = Counters.firstFailure { throw BenchError(f) }
            let encodeLoop = Micro.seconds
            bytes = length

            let restorer = try makeEngine(encryptionKey: sealed)
            defer { rst_engine_destroy(restorer) }
            sealing(restorer)
            st = rst_register_object(restorer, "micro", nil, "Micro", microCallbacks, nil, nil)
            guard st == RST_OK else { throw BenchError("register: \(statusText(st))") }
            Micro.sum = 0
            let tr = Clock.time { st = rst_restore_from_buffer(restorer, out, length) }
            guard st == RST_OK else { throw BenchError("rst_restore_from_buffer: \(statusText(st))") }
            if let f = Counters.firstFailure { throw BenchError(f) }
            if Micro.sum != Micro.expectedSum { throw BenchError("decoded values differ (sum \(Micro.sum), expected \(Micro.expectedSum))") }
            if run > 0 {
                let c = Double(Micro.calls)
                enc.append(encodeLoop * 1e9 / c)
                dec.append(Micro.seconds * 1e9 / c)
                save.append(ts * 1e9 / c)
                rest.append(tr * 1e9 / c)
            }
        }
    } catch {
        problem = "micro loop failed: \(error)"
    }
    return MicroResult(calls: Micro.calls, layout: layout, encodeNsPerCall: Stats(ms: enc), decodeNsPerCall: Stats(ms: dec),
                       saveNsPerValue: Stats(ms: save), restoreNsPerValue: Stats(ms: rest), archiveBytes: bytes, problem: problem)
}

// MARK: - Plugins

let pluginMagic: Int64 = 0x5253_5442_4E43_4850   // "RSTBNCHP"

/// The tiny plugin: one class whose name comes from the file's name
/// (bench_plugin_042.so offers BenchPlugin042), so 100 copies of one build
/// offer 100 distinct classes. Its object reads all 8 values in decode.
let pluginSource = #"""
/* restore-bench's test plugin: compiled once, copied 100 times. */
#define _GNU_SOURCE
#define RST_PLUGIN
#include "restoration_plugin.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

RST_PLUGIN_DEFINE_API;

/* fields[0] magic, [1] values decoded, [2] finished; read by the bench. */
typedef struct bench_plugin_object { int64_t fields[4]; } bench_plugin_object;

static char class_name[64];
static char plugin_name[64];

static void bench_decode(void *instance, rst_coder *c) {
    bench_plugin_object *o = instance;
    bool b; int64_t i; double d; const char *s; size_t n; const void *p; rst_object *ref = NULL;
    int64_t rows[4]; size_t count = 0; int64_t ok = 0;
    if (rst_decode_bool(c, "flag", &b) == RST_OK) ok++;
    if (rst_decode_int(c, "number", &i) == RST_OK) ok++;
    if (rst_decode_double(c, "ratio", &d) == RST_OK) ok++;
    if (rst_decode_string(c, "title", &s, &n) == RST_OK && n == 16) ok++;
    if (rst_decode_bytes(c, "blob", &p, &n) == RST_OK && n == 32) ok++;
    if (rst_decode_object(c, "link", &ref) == RST_OK && ref != NULL) ok++;
    if (rst_decode_begin_record(c, "note") == RST_OK) {
        if (rst_decode_string(c, "text", &s, &n) == RST_OK && rst_decode_int(c, "count", &i) == RST_OK) ok++;
        rst_decode_end_record(c);
    }
    if (rst_decode_int_array(c, "rows", rows, 4, &count) == RST_OK && count == 4) ok++;
    o->fields[1] = ok;
}

static void bench_finished(void *instance) { ((bench_plugin_object *)instance)->fields[2] = 1; }
static void bench_release(void *instance) { free(instance); }

static const rst_object_callbacks bench_callbacks = { NULL, bench_decode, bench_finished, bench_release };

RST_PLUGIN_EXPORT rst_object *bench_plugin_make(rst_engine *e, rst_object *parent, const char *id, rst_coder *c) {
    (void)c;
    bench_plugin_object *o = calloc(1, sizeof *o);
    rst_object *out = NULL;
    if (o == NULL) return NULL;
    o->fields[0] = BENCH_PLUGIN_MAGIC;
    if (rst_register_object(e, id, parent, class_name, &bench_callbacks, o, &out) != RST_OK) { free(o); return NULL; }
    return out;
}

static rst_plugin_class classes[1] = { { class_name, "bench_plugin_make", "EPIC" } };
static rst_plugin_manifest manifest = { RST_PLUGIN_ABI_VERSION, plugin_name, "1.0", 1, classes, NULL, NULL };

RST_PLUGIN_EXPORT const rst_plugin_manifest *rst_plugin_manifest_v1(const rst_host_api *api) {
    Dl_info info;
    const char *base;
    unsigned number = 0;
    RST_PLUGIN_INIT(api);
    if (dladdr((void *)&bench_plugin_make, &info) == 0 || info.dli_fname == NULL) return NULL;
    base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    if (sscanf(base, "bench_plugin_%u.so", &number) != 1) return NULL;
    snprintf(class_name, sizeof class_name, "BenchPlugin%03u", number);
    snprintf(plugin_name, sizeof plugin_name, "bench_plugin_%03u", number);
    return &manifest;
}
"""#

let pluginFiles = 100
let neededPlugin = 42

func runPluginCase(n: Int, runs: Int, seed: UInt64, workDir: URL) -> PluginResult {
    let neededClass = String(format: "BenchPlugin%03d", neededPlugin)
    var result = PluginResult(n: n, pluginFiles: pluginFiles, neededClass: neededClass, withPlugins: Stats(ms: []),
                              withoutPlugins: Stats(ms: []), overheadMs: .nan, pluginsLoaded: 0, pluginsRejected: 0,
                              compileSeconds: 0, problem: nil)
    do {
        let fm = FileManager.default
        let src = workDir.appendingPathComponent("bench_plugin.c")
        let built = workDir.appendingPathComponent("bench_plugin.so")
        try pluginSource.write(to: src, atomically: true, encoding: .utf8)
        let include = repositoryRoot().appendingPathComponent("Include")
        guard fm.fileExists(atPath: include.appendingPathComponent("restoration_plugin.h").path) else {
            throw BenchError("restoration_plugin.h not found under \(include.path)")
        }
        let t0 = Clock.now()
        let (status, output) = try runCommand(["cc", "-shared", "-fPIC", "-O2", "-std=c11", "-Wall",
                                               "-DBENCH_PLUGIN_MAGIC=\(pluginMagic)LL", "-I", include.path,
                                               "-o", built.path, src.path, "-ldl"])
        result.compileSeconds = Clock.now() - t0
        guard status == 0 else { throw BenchError("cc failed (\(status)): \(output.prefix(2000))") }

        let graph = Graph.tree(count: n, seed: seed)
        let c = try EngineContestant(graph: graph, live: graph.liveNodes(), pluginClass: neededClass)
        defer { c.close() }
        try c.prepareSave()
        _ = try c.save()

        /// A fresh directory of 100 copies for every run: each dlopen is a first load.
        func freshPluginDir(_ k: Int) throws -> String {
            let dir = workDir.appendingPathComponent("plugins-\(k)")
            try fm.createDirectory(at: dir, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            for i in 0..<pluginFiles {
                let dst = dir.appendingPathComponent(String(format: "bench_plugin_%03d.so", i))
                try fm.copyItem(at: built, to: dst)
                try fm.setAttributes([.posixPermissions: 0o644], ofItemAtPath: dst.path)
            }
            return dir.path
        }

        var with: [Double] = [], without: [Double] = []
        for run in 0...runs {
            // With the plugin directory.
            c.pluginDir = try freshPluginDir(run)
            try c.prepareRestore()
            let tw = try Clock.time { try c.restore() }
            if run == 0, let problem = c.verifyRestore() { throw BenchError("with plugins: \(problem)") }
            if run == 0 {
                result.pluginsLoaded = Int(c.lastReport.plugins_loaded)
                result.pluginsRejected = Int(c.lastReport.plugins_rejected)
            }
            c.endRestore()
            // Without: the same archive and set-up, no plugin_dir.
            c.pluginDir = nil
            try c.prepareRestore()
            let to = try Clock.time { try c.restore() }
            if run == 0, let problem = c.verifyRestore() { throw BenchError("without plugins: \(problem)") }
            c.endRestore()
            if run > 0 { with.append(tw * 1000); without.append(to * 1000) }
        }
        result.withPlugins = Stats(ms: with)
        result.withoutPlugins = Stats(ms: without)
        result.overheadMs = result.withPlugins.median - result.withoutPlugins.median
        if result.pluginsRejected > 0 { result.problem = "\(result.pluginsRejected) plugin files were rejected" }
    } catch {
        result.problem = "plugin case failed: \(error)"
    }
    return result
}

// MARK: - Deep chain, wide fan-out, depth limit (run in a child process)

/// Stack of the thread the deep cases run on: far below the 8 MiB main
/// thread, so recursion over the tree depth would show up as a crash.
let smallStackBytes = 512 * 1024

private final class ThreadBody {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}

/// Runs `body` on a new thread with a `stackBytes` stack and waits for it.
func runOnThread(stackBytes: Int, _ body: @escaping () -> Void) -> Bool {
    var attr = pthread_attr_t()
    pthread_attr_init(&attr)
    defer { pthread_attr_destroy(&attr) }
    guard pthread_attr_setstacksize(&attr, stackBytes) == 0 else { return false }
    let box = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
    var thread = pthread_t()
    let rc = pthread_create(&thread, &attr, { arg in
        Unmanaged<ThreadBody>.fromOpaque(arg!).takeRetainedValue().body()
        return nil
    }, box)
    guard rc == 0 else { Unmanaged<ThreadBody>.fromOpaque(box).release(); return false }
    pthread_join(thread, nil)
    return true
}

/// Saves and restores one graph (first run verified), `runs` timed runs.
func runShape(name: String, graph: Graph, runs: Int) -> ShapeResult {
    var r = ShapeResult(name: name, objects: graph.count, maxDepth: graph.maxDepth, save: nil, restore: nil,
                        archiveBytes: 0, restored: 0, stackBytes: smallStackBytes, problem: nil)
    do {
        let c = try EngineContestant(graph: graph, live: graph.liveNodes())
        defer { c.close() }
        var saves: [Double] = [], restores: [Double] = []
        for run in 0...runs {
            try c.prepareSave()
            var bytes = 0
            let ts = try Clock.time { bytes = try c.save() }
            try c.prepareRestore()
            let tr = try Clock.time { try c.restore() }
            if run == 0 {
                if let problem = c.verifyRestore() { throw BenchError(problem) }
                r.archiveBytes = bytes
                r.restored = Int(c.lastReport.restored)
            } else {
                saves.append(ts * 1000)
                restores.append(tr * 1000)
            }
            c.endRestore()
        }
        r.save = Stats(ms: saves)
        r.restore = Stats(ms: restores)
    } catch {
        r.problem = "\(error)"
    }
    return r
}

/// Registers a chain one level at a time until the engine refuses. The
/// header allows RST_MAX_TREE_DEPTH objects in one parent chain (depths 0 to
/// RST_MAX_TREE_DEPTH - 1): the deepest must register and the next must be
/// RST_ERR_LIMIT.
func runDepthLimit() -> DepthLimitResult {
    let limit = Int(RST_MAX_TREE_DEPTH)
    var r = DepthLimitResult(maxTreeDepth: limit, atLimit: "not reached", pastLimit: "not reached",
                             firstRefusedDepth: nil, problem: nil)
    do {
        let e = try makeEngine()
        defer { rst_engine_destroy(e) }
        var parent: OpaquePointer?
        for depth in 0...limit {
            var out: OpaquePointer?
            let st = rst_register_object(e, depth == 0 ? "root" : "d", parent, nil, nil, nil, &out)
            if depth == limit - 1 { r.atLimit = String(cString: rst_status_name(st)) }
            if depth == limit { r.pastLimit = String(cString: rst_status_name(st)) }
            guard st == RST_OK, let out else {
                r.firstRefusedDepth = depth
                if depth == limit && st == RST_ERR_LIMIT { return r }
                r.problem = "registering at depth \(fmtInt(depth)) failed: \(statusText(st))"
                return r
            }
            parent = out
        }
        r.problem = "depth \(fmtInt(limit)) registered: no RST_ERR_LIMIT"
    } catch {
        r.problem = "\(error)"
    }
    return r
}

/// One line of the child's output.
struct ChildLine: Codable {
    var shape: ShapeResult?
    var depthLimit: DepthLimitResult?
    var log: [String]?
}

/// The cases of the child process, in order (for naming the one that crashed).
let childCases = ["chain (10,000 deep)", "fan-out (100,000 wide)", "depth limit", "max-depth chain"]

/// `restore-bench --child-shapes RUNS SEED`: runs the deep cases on a small
/// stack, one JSON line per case on stdout. Returns the exit status.
func childShapesMain(runs: Int, seed: UInt64) -> Int32 {
    func emit(_ line: ChildLine) {
        let data = try! JSONEncoder().encode(line)
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }
    let ok = runOnThread(stackBytes: smallStackBytes) {
        Log.say("  chain: 10,000 deep")
        emit(ChildLine(shape: runShape(name: childCases[0], graph: .chain(count: 10_000, seed: seed), runs: runs)))
        Log.say("  fan-out: 100,000 wide")
        emit(ChildLine(shape: runShape(name: childCases[1], graph: .fan(width: 100_000, seed: seed), runs: runs)))
        Log.say("  depth limit: \(RST_MAX_TREE_DEPTH)")
        let limit = runDepthLimit()
        emit(ChildLine(depthLimit: limit))
        // The deepest chain the engine accepts: to depth RST_MAX_TREE_DEPTH, or
        // one level less if the engine refuses that depth (reported above).
        let deepest = min(Int(RST_MAX_TREE_DEPTH), max(0, (limit.firstRefusedDepth ?? Int(RST_MAX_TREE_DEPTH) + 1) - 1))
        Log.say("  max-depth chain: \(deepest + 1) objects")
        emit(ChildLine(shape: runShape(name: childCases[3], graph: .chain(count: deepest + 1, seed: seed), runs: min(runs, 3))))
        emit(ChildLine(log: Counters.log))
    }
    return ok ? 0 : 2
}

/// Runs the child and collects its lines; a crash names the case it hit.
func runShapesInChild(runs: Int, seed: UInt64, into extras: inout EngineExtras) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    p.arguments = ["--child-shapes", String(runs), String(seed)]
    var env = ProcessInfo.processInfo.environment
    env["SWIFT_BACKTRACE"] = "enable=no"     // a crash must not leave a backtracer holding the pipe
    p.environment = env
    let pipe = Pipe()
    p.standardOutput = pipe
    var lines: [ChildLine] = []
    do {
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        for line in data.split(separator: UInt8(ascii: "\n")) {
            if let l = try? JSONDecoder().decode(ChildLine.self, from: Data(line)) { lines.append(l) }
        }
    } catch {
        extras.problems.append("could not start the child process for the deep cases: \(error)")
        return
    }
    for l in lines {
        if let s = l.shape { extras.shapes.append(s) }
        if let d = l.depthLimit { extras.depthLimit = d }
        if let log = l.log { extras.log.append(contentsOf: log) }
    }
    let reported = extras.shapes.count + (extras.depthLimit == nil ? 0 : 1)
    if p.terminationReason == .uncaughtSignal || p.terminationStatus != 0 {
        let how = p.terminationReason == .uncaughtSignal ? "signal \(p.terminationStatus)" : "status \(p.terminationStatus)"
        for (k, name) in childCases.enumerated() where k >= reported {
            let problem = k == reported ? "the process died (\(how)) in this case: a stack overflow on the \(smallStackBytes / 1024) KiB stack?"
                                        : "not run: the process died in an earlier case"
            if name == "depth limit" {
                extras.depthLimit = DepthLimitResult(maxTreeDepth: Int(RST_MAX_TREE_DEPTH), atLimit: "–", pastLimit: "–",
                                                     firstRefusedDepth: nil, problem: problem)
            } else {
                extras.shapes.append(ShapeResult(name: name, objects: 0, maxDepth: 0, save: nil, restore: nil, archiveBytes: 0,
                                                 restored: 0, stackBytes: smallStackBytes, problem: problem))
            }
        }
    }
}
#endif
