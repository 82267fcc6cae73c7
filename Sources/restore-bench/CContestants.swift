// The C contestants: what a Linux C program would pick, in the same run, on
// the same graph, in the same interleaved harness as every other format.
//
//   c-engine  a C host calling the real librestoration.so through the C ABI
//             (c/bench_engine.c): what C users get, beside the Swift host's
//             in-process engine row.
//   gvariant  a C host storing one a{sv} per object with GLib's GVariant
//             (c/bench_gvariant.c), as GTK 4.22's save-state stores window state.
//   c-floor   the floor: the engine's own archive format written and read by
//             a straight C loop (c/bench_floor.c), the same keys, tags,
//             varints and CRC-32C, no registry, no callbacks, no validation
//             beyond the checksum: the physical limit of the format here.
//
// All are compiled once per benchmark run from Sources/restore-bench/c/
// (cc -O2 -shared -fPIC) into the run's temporary directory and loaded with
// dlopen(RTLD_NOW | RTLD_LOCAL). The graph goes to C as plain C arrays
// (CGraph). A contestant that cannot be built (no cc, no glib-2.0, no
// librestoration.so) is reported as unavailable with the reason; nothing
// here may end the benchmark.
//
// Binding: restore-bench links the engine's Swift modules statically but its
// dynamic symbol table holds no rst_* symbol (checked with `nm -D`), so the
// C host's rst_* references bind to librestoration.so; bench_c_open checks
// that with dladdr and refuses to run otherwise.

import Foundation
import RestorationArchive
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Helpers (also used by EngineCases.swift)

/// The repository root (for Include/), from this file's real location.
func repositoryRoot() -> URL {
    URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}

/// Runs a command; returns (status, combined output).
func runCommand(_ argv: [String]) throws -> (Int32, String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = argv
    let pipe = Pipe()
    p.standardOutput = pipe
    p.standardError = pipe
    try p.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: data, as: UTF8.self))
}

// MARK: - The graph as C arrays

/// struct bench_graph of c/bench_c.h: 19 words of 8 bytes, and the arrays
/// they point to. Freed when the last contestant of this N lets go.
final class CGraph {
    static let abi: UInt64 = 1
    static let words = 19
    let pointer: UnsafeMutablePointer<UInt64>
    private var blocks: [UnsafeMutableRawPointer] = []
    private var strings: [UnsafeMutablePointer<CChar>] = []

    init(graph: Graph) {
        pointer = .allocate(capacity: CGraph.words)
        let objects = graph.objects
        func array<T>(_ values: [T]) -> UInt64 {
            let p = UnsafeMutablePointer<T>.allocate(capacity: max(values.count, 1))
            p.initialize(from: values, count: values.count)
            blocks.append(UnsafeMutableRawPointer(p))
            return UInt64(UInt(bitPattern: p))
        }
        func cstrings(_ values: [String]) -> UInt64 {
            let made = values.map { strdup($0)! }
            strings.append(contentsOf: made)
            return array(made.map { Optional(UnsafePointer($0)) })
        }
        var blobs = [UInt8]()
        blobs.reserveCapacity(objects.count * 32)
        for o in objects { blobs.append(contentsOf: o.blob) }
        let words: [UInt64] = [
            CGraph.abi,
            UInt64(CGraph.words * 8),
            UInt64(objects.count),
            UInt64(Graph.classNames.count),
            cstrings(Graph.classNames),
            cstrings(objects.map(\.identifier)),
            array(objects.map { Int64($0.parent) }),
            array(objects.map { Int64($0.classIndex) }),
            array(objects.map { UInt8($0.flag ? 1 : 0) }),
            array(objects.map(\.number)),
            array(objects.map(\.ratio)),
            cstrings(objects.map(\.title)),
            array(blobs),
            array(objects.map { Int64($0.ref) }),
            cstrings(objects.map(\.noteText)),
            array(objects.map(\.noteCount)),
            array(objects.flatMap(\.rows)),
            32,
            4,
        ]
        precondition(words.count == CGraph.words)
        pointer.initialize(from: words, count: words.count)
    }

    deinit {
        strings.forEach { free($0) }
        blocks.forEach { $0.deallocate() }
        pointer.deallocate()
    }
}

// MARK: - A loaded contestant library

final class CLibrary {
    typealias NameFn = @convention(c) () -> UnsafePointer<CChar>?
    typealias OpenFn = @convention(c) (UnsafeRawPointer?, UnsafeMutablePointer<CChar>?, Int) -> UnsafeMutableRawPointer?
    typealias IntFn = @convention(c) (UnsafeMutableRawPointer?) -> Int32
    typealias SaveFn = @convention(c) (UnsafeMutableRawPointer?) -> Int64
    typealias TextFn = @convention(c) (UnsafeMutableRawPointer?) -> UnsafePointer<CChar>?
    typealias VoidFn = @convention(c) (UnsafeMutableRawPointer?) -> Void

    let path: String
    let name: String
    let open: OpenFn
    let prepareSave: IntFn
    let save: SaveFn
    let prepareRestore: IntFn
    let restore: IntFn
    let verify: TextFn
    let endRestore: VoidFn
    let close: VoidFn
    let error: TextFn
    let info: TextFn
    /// The saved archive's bytes (optional: the floor exports it).
    typealias ArchiveFn = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<Int>?) -> UnsafeRawPointer?
    let archive: ArchiveFn?

    /// Loads `path`; never unloaded (librestoration.so carries its own Swift
    /// runtime, which is not made to be unloaded).
    init(path: String) throws {
        self.path = path
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            throw BenchError("dlopen \(path): \(dlerror().map { String(cString: $0) } ?? "failed")")
        }
        func sym<T>(_ name: String, _: T.Type) throws -> T {
            guard let p = dlsym(handle, name) else { throw BenchError("\(path) has no \(name)") }
            return unsafeBitCast(p, to: T.self)
        }
        name = try sym("bench_c_name", NameFn.self)().map { String(cString: $0) } ?? path
        open = try sym("bench_c_open", OpenFn.self)
        prepareSave = try sym("bench_c_prepare_save", IntFn.self)
        save = try sym("bench_c_save", SaveFn.self)
        prepareRestore = try sym("bench_c_prepare_restore", IntFn.self)
        restore = try sym("bench_c_restore", IntFn.self)
        verify = try sym("bench_c_verify", TextFn.self)
        endRestore = try sym("bench_c_end_restore", VoidFn.self)
        close = try sym("bench_c_close", VoidFn.self)
        error = try sym("bench_c_error", TextFn.self)
        info = try sym("bench_c_info", TextFn.self)
        archive = dlsym(handle, "bench_c_archive").map { unsafeBitCast($0, to: ArchiveFn.self) }
    }
}

// MARK: - The contestant

final class CContestant: Contestant {
    let key: String
    let name: String
    let lib: CLibrary
    let graph: CGraph
    private let ctx: UnsafeMutableRawPointer
    /// One line for the report (which library provides rst_*, GLib's version).
    let info: String

    init(key: String, lib: CLibrary, graph: CGraph) throws {
        self.key = key
        self.name = lib.name
        self.lib = lib
        self.graph = graph
        var err = [CChar](repeating: 0, count: 1024)
        guard let c = err.withUnsafeMutableBufferPointer({ lib.open(UnsafeRawPointer(graph.pointer), $0.baseAddress, $0.count) }) else {
            throw BenchError("bench_c_open: " + String(cString: err))
        }
        ctx = c
        info = lib.info(c).map { String(cString: $0) } ?? ""
    }

    deinit { lib.close(ctx) }

    private func failure(_ what: String) -> BenchError {
        BenchError("\(what): " + (lib.error(ctx).map { String(cString: $0) } ?? "?"))
    }

    func prepareSave() throws { guard lib.prepareSave(ctx) == 0 else { throw failure("prepare save") } }

    func save() throws -> Int {
        let n = lib.save(ctx)
        guard n >= 0 else { throw failure("save") }
        return Int(n)
    }

    func prepareRestore() throws { guard lib.prepareRestore(ctx) == 0 else { throw failure("prepare restore") } }

    func restore() throws { guard lib.restore(ctx) == 0 else { throw failure("restore") } }

    func verifyRestore() -> String? { lib.verify(ctx).map { String(cString: $0) } }

    func endRestore() { lib.endRestore(ctx) }

    /// The last save's archive, checked by the engine's own reader (which
    /// validates every byte of it): nil when it reads, else why not. For a
    /// contestant that hands out its archive (the floor).
    func archiveProblem(expectedRecords: Int) -> String? {
        guard let archive = lib.archive else { return "\(key) does not hand out its archive" }
        var len = 0
        guard let p = archive(ctx, &len), len > 0 else { return "no archive saved" }
        do throws(ArchiveFailure) {
            let r = try ArchiveReader(bytes: UnsafeRawBufferPointer(start: p, count: len))
            return r.recordCount == expectedRecords ? nil : "the engine's reader finds \(r.recordCount) records, not \(expectedRecords)"
        } catch {
            return "the engine's reader refuses it: \(error)"
        }
    }
}

// MARK: - Building the contestants

/// The outcome of building the C contestants once per run.
struct CBuild {
    /// key -> the loaded library, or why it is unavailable.
    var libraries: [String: Result<CLibrary, BenchError>] = [:]
    /// Lines for the report's notes (how each was built, or why not).
    var notes: [String] = []

    static let keys = ["c-engine", "c-floor", "gvariant"]
    static let names = ["c-engine": "C host, librestoration.so (C ABI)", "gvariant": "GLib GVariant a{sv} per object (C)",
                        "c-floor": "floor: the archive format by a straight C loop"]

    func contestant(_ key: String, graph: CGraph) -> Result<Contestant, BenchError> {
        switch libraries[key] {
        case .success(let lib)?:
            do { return .success(try CContestant(key: key, lib: lib, graph: graph)) } catch let e as BenchError {
                return .failure(BenchError("set-up failed: \(e.description)"))
            } catch { return .failure(BenchError("set-up failed: \(error)")) }
        case .failure(let e)?: return .failure(BenchError("unavailable: \(e.description)"))
        case nil: return .failure(BenchError("unavailable: not built"))
        }
    }

    /// Compiles and loads the contestants in `keys` into `workDir`.
    static func build(keys wanted: Set<String>, workDir: URL, release: Bool) -> CBuild {
        var b = CBuild()
        let keys = CBuild.keys.filter(wanted.contains)
        guard !keys.isEmpty else { return b }
        let root = repositoryRoot()
        let cdir = root.appendingPathComponent("Sources/restore-bench/c")
        let include = root.appendingPathComponent("Include")
        func unavailable(_ key: String, _ why: String) {
            b.libraries[key] = .failure(BenchError(why))
            Log.say("  \(key): unavailable: \(why)")
        }
        guard FileManager.default.fileExists(atPath: cdir.appendingPathComponent("bench_c.h").path) else {
            keys.forEach { unavailable($0, "the C sources are not at \(cdir.path) (restore-bench finds them from its source tree)") }
            return b
        }
        guard let (ccStatus, ccOut) = try? runCommand(["cc", "--version"]), ccStatus == 0 else {
            keys.forEach { unavailable($0, "no C compiler: `cc --version` failed") }
            return b
        }
        let ccVersion = ccOut.split(separator: "\n").first.map(String.init) ?? "cc"
        let common = ["cc", "-O2", "-std=c11", "-Wall", "-shared", "-fPIC", "-fvisibility=hidden", "-I", cdir.path]

        func compile(_ key: String, _ args: [String]) {
            let t0 = Clock.now()
            do {
                let (status, output) = try runCommand(args)
                guard status == 0 else {
                    unavailable(key, "cc failed (\(status)): " + String(output.prefix(1500)))
                    return
                }
                let lib = try CLibrary(path: args[args.firstIndex(of: "-o")! + 1])
                b.libraries[key] = .success(lib)
                b.notes.append("\(lib.name): compiled in \(String(format: "%.2f", Clock.now() - t0)) s (untimed) with `"
                               + args.map { $0.contains(" ") ? "'\($0)'" : $0 }.joined(separator: " ")
                                   .replacingOccurrences(of: root.path + "/", with: "")
                                   .replacingOccurrences(of: workDir.path + "/", with: "$TMP/") + "` (\(ccVersion)), loaded with dlopen.")
            } catch let e as BenchError {
                unavailable(key, e.description)
            } catch {
                unavailable(key, "\(error)")
            }
        }

        if keys.contains("gvariant") {
            // GLib >= 2.76 (any GLib GTK 4.22 builds against) allocates GVariants
            // with malloc: GSlice is a wrapper. This machine's 2.74 still has
            // GSlice magazines, which keep freed blocks resident, so the memory
            // run would see the warm-up's blocks reused and report almost no
            // memory. always-malloc gives 2.74 the newer behaviour (set before
            // GLib is loaded; a G_SLICE already in the environment is kept).
            setenv("G_SLICE", "always-malloc", 0)
            b.notes.append("GVariant: G_SLICE=" + (ProcessInfo.processInfo.environment["G_SLICE"] ?? "?")
                + " (GLib ≥ 2.76, which GTK 4.22 needs, always uses malloc; an older GLib's GSlice magazines would "
                + "keep the warm-up's memory and hide the memory run's growth).")
            if let (st, flags) = try? runCommand(["pkg-config", "--cflags", "--libs", "glib-2.0"]), st == 0 {
                let version = (try? runCommand(["pkg-config", "--modversion", "glib-2.0"]))?.1
                    .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
                let split = flags.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
                compile("gvariant", common + ["-o", workDir.appendingPathComponent("bench_gvariant.so").path,
                                              cdir.appendingPathComponent("bench_gvariant.c").path] + split)
                if case .success? = b.libraries["gvariant"] { b.notes.append("GVariant: glib-2.0 \(version) (pkg-config).") }
            } else {
                unavailable("gvariant", "glib-2.0 not found by pkg-config (Debian: libglib2.0-dev; `make deps` installs it)")
            }
        }

        if keys.contains("c-floor") {
            compile("c-floor", common + ["-o", workDir.appendingPathComponent("bench_floor.so").path,
                                         cdir.appendingPathComponent("bench_floor.c").path])
        }

        if keys.contains("c-engine") {
            let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            let bin = exe.deletingLastPathComponent()
            let so = bin.appendingPathComponent("librestoration.so")
            // The same sources as this restore-bench: `swift build --product
            // restoration` into the same build folder (a no-op when it is up
            // to date). Skipped with RESTORE_BENCH_NO_BUILD=1.
            if ProcessInfo.processInfo.environment["RESTORE_BENCH_NO_BUILD"] != "1",
               FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path) {
                let scratch = bin.deletingLastPathComponent().deletingLastPathComponent()
                Log.say("  c-engine: swift build -c \(release ? "release" : "debug") --product restoration")
                let t0 = Clock.now()
                let r = try? runCommand(["swift", "build", "-c", release ? "release" : "debug", "--product", "restoration",
                                         "--package-path", root.path, "--scratch-path", scratch.path])
                if let r, r.0 == 0 {
                    b.notes.append("C host: librestoration.so brought up to date with `swift build -c \(release ? "release" : "debug") --product restoration` "
                                   + "in the same build folder (\(String(format: "%.1f", Clock.now() - t0)) s, untimed).")
                } else {
                    b.notes.append("C host: `swift build --product restoration` failed"
                                   + (r.map { " (\($0.0)): " + String($0.1.suffix(300)) } ?? "") + "; using the librestoration.so found, which may be stale.")
                }
            }
            let link = bin.appendingPathComponent("librestoration.so.1")
            if !FileManager.default.fileExists(atPath: so.path) {
                unavailable("c-engine", "no librestoration.so in \(bin.path): build it with `swift build -c \(release ? "release" : "debug") --product restoration` (or `make build`)")
            } else {
                // The SONAME is librestoration.so.1: the bin folder needs that name (as `make build` makes it).
                if (try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)) != "librestoration.so" {
                    try? FileManager.default.removeItem(at: link)
                    try? FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "librestoration.so")
                }
                let exeDate = (try? FileManager.default.attributesOfItem(atPath: exe.path)[.modificationDate] as? Date) ?? nil
                let soDate = (try? FileManager.default.attributesOfItem(atPath: so.path)[.modificationDate] as? Date) ?? nil
                if let e = exeDate, let s = soDate, s < e.addingTimeInterval(-600) {
                    b.notes.append("C host: librestoration.so is older than restore-bench by more than 10 minutes: it may not be built from the same sources.")
                }
                compile("c-engine", common + ["-I", include.path, "-o", workDir.appendingPathComponent("bench_engine.so").path,
                                              cdir.appendingPathComponent("bench_engine.c").path,
                                              "-L", bin.path, "-lrestoration", "-Wl,-rpath," + bin.path, "-ldl"])
            }
        }
        return b
    }
}
