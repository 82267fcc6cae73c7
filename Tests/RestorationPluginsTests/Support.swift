// Test support: fixture plugins compiled at test time with cc, engines
// driven through the C ABI from Swift, log capture, archive building.
import CRestoration
import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

enum Paths {
    /// The repository root (Tests/RestorationPluginsTests/Support.swift → ../..).
    static let repo: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }()

    static var include: String { repo + "/Include" }

    /// The SwiftPM bin directory: where the test binary, the plugin products,
    /// librestoration.so and restorectl are.
    static let bin: String = {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: exe).resolvingSymlinksInPath().deletingLastPathComponent()
        // Inside an .xctest bundle directory (not the Linux layout, but be safe).
        if url.path.hasSuffix(".xctest") { url = url.deletingLastPathComponent() }
        // librestoration.so's SONAME is librestoration.so.1: the loader looks for that name.
        _ = try? FileManager.default.createSymbolicLink(atPath: url.path + "/librestoration.so.1",
                                                        withDestinationPath: "librestoration.so")
        return url.path
    }()

    static let compiler: String = {
        for c in ["/usr/bin/cc", "/usr/bin/gcc", "/usr/bin/clang"] where FileManager.default.isExecutableFile(atPath: c) {
            return c
        }
        return "cc"
    }()

    /// True under `swift test --sanitize=address` (make test-asan): fixture
    /// plugins are then built with the toolchain's clang and ASan too.
    static let underASan: Bool = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil

    /// The compiler and leading flags for fixture plugins: `compiler`, or clang with ASan.
    static let pluginCompiler: [String] = {
        guard underASan else { return [compiler] }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let clang = path.split(separator: ":").map { "\($0)/clang" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        return [clang ?? "/usr/bin/clang", "-fsanitize=address", "-fno-omit-frame-pointer"]
    }()
}

/// A temporary directory, removed at deinit.
final class TempDir {
    let path: String

    init(_ label: String = "rst-plugins") {
        var template = Array("\(NSTemporaryDirectory())/\(label).XXXXXX".utf8CString)
        let ok = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(ok != nil, "mkdtemp failed")
        let made = String(cString: template)
        // Canonical (NSTemporaryDirectory ends in '/'; the loader reports realpath'd paths).
        if let r = realpath(made, nil) {
            path = String(cString: r)
            free(r)
        } else {
            path = made
        }
        chmod(path, 0o755)
    }

    /// A subdirectory with mode 0755.
    func sub(_ name: String) -> String {
        let p = path + "/" + name
        mkdir(p, 0o755)
        chmod(p, 0o755)
        return p
    }

    deinit {
        // Restore write permission so everything can be removed.
        if let e = FileManager.default.enumerator(atPath: path) {
            for case let f as String in e { chmod(path + "/" + f, 0o755) }
        }
        try? FileManager.default.removeItem(atPath: path)
    }
}

struct ProcessResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs a program and collects its output (pipes drained before waiting).
func runProcess(_ exe: String, _ args: [String], environment: [String: String]? = nil) throws -> ProcessResult {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: exe)
    p.arguments = args
    var env = ProcessInfo.processInfo.environment
    for (k, v) in environment ?? [:] { env[k] = v }
    // Under ASan, leaks in a child (the Swift runtime's) must not fail it.
    env["ASAN_OPTIONS"] = (env["ASAN_OPTIONS"].map { $0 + ":" } ?? "") + "detect_leaks=0"
    p.environment = env
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try p.run()
    final class Box: @unchecked Sendable { var data = Data() }
    let errBox = Box()
    let done = DispatchSemaphore(value: 0)
    let errHandle = err.fileHandleForReading
    DispatchQueue.global().async {
        errBox.data = errHandle.readDataToEndOfFile()
        done.signal()
    }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    done.wait()
    p.waitUntilExit()
    return ProcessResult(status: p.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                         stderr: String(decoding: errBox.data, as: UTF8.self))
}

/// Writes a file with mode 0644.
func writeFile(_ path: String, _ data: Data) {
    XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: data), path)
    chmod(path, 0o644)
}

/// Compiles a C fixture into a shared object at `output` with mode 0644.
func compilePlugin(_ source: String, to output: String, defines: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws {
    let dir = URL(fileURLWithPath: output).deletingLastPathComponent().path
    let src = dir + "/.src-\(URL(fileURLWithPath: output).lastPathComponent).c"
    try source.write(toFile: src, atomically: true, encoding: .utf8)
    defer { unlink(src) }
    let args = ["-shared", "-fPIC", "-std=c11", "-Wall", "-Werror", "-I", Paths.include] + defines.map { "-D" + $0 } + [src, "-o", output]
    let r = try runProcess(Paths.pluginCompiler[0], Array(Paths.pluginCompiler.dropFirst()) + args)
    guard r.status == 0 else {
        XCTFail("\(Paths.pluginCompiler[0]) failed for \(output): \(r.stderr)", file: file, line: line)
        throw XCTSkip("fixture did not compile")
    }
    chmod(output, 0o644)
}

/// Engine log messages, captured through rst_engine_options.log.
final class LogSink {
    private(set) var entries: [(level: Int32, message: String)] = []
    private let lock = NSLock()

    func append(_ level: Int32, _ message: String) {
        lock.lock()
        entries.append((level, message))
        lock.unlock()
    }

    func messages(atLeast level: Int32) -> [String] {
        lock.lock()
        defer { lock.unlock() }
        return entries.filter { $0.level >= level }.map(\.message)
    }

    func contains(_ text: String, level: Int32) -> Bool {
        messages(atLeast: level).contains { $0.contains(text) }
    }

    var pointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
}

let logToSink: @convention(c) (OpaquePointer?, Int32, UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void = { _, level, message, ctx in
    guard let ctx, let message else { return }
    Unmanaged<LogSink>.fromOpaque(ctx).takeUnretainedValue().append(level, String(cString: message))
}

/// Creates an engine through the C ABI.
func createEngine(pluginDir: String?, archive: String? = nil, log: LogSink? = nil,
                  file: StaticString = #filePath, line: UInt = #line) -> OpaquePointer {
    var opts = rst_engine_options()
    opts.version = UInt32(RST_ENGINE_OPTIONS_VERSION)
    opts.flags = UInt32(RST_ENGINE_NO_CRASH_GUARD)
    if let log {
        opts.log = logToSink
        opts.ctx = log.pointer
    }
    var e: OpaquePointer?
    let pd = pluginDir.flatMap { strdup($0) }
    let ap = archive.flatMap { strdup($0) }
    defer { free(pd); free(ap) }
    opts.plugin_dir = UnsafePointer(pd)
    opts.archive_path = UnsafePointer(ap)
    let s = rst_engine_create(&opts, &e)
    XCTAssertEqual(s, RST_OK, String(cString: rst_last_error()), file: file, line: line)
    return e!
}

/// Values a host object writes at save time and reads back at restore.
final class HostState {
    var ints: [String: Int64] = [:]
    var doubles: [String: Double] = [:]
    var strings: [String: String] = [:]
    var stringArrays: [String: [String]] = [:]
    var objects: [String: OpaquePointer] = [:]
    var records: [String: [String: Double]] = [:]
    /// Filled by decode: every key read back, as text.
    var decoded: [String: String] = [:]
    var decodedObjects: [String: String] = [:]
    var finished = 0

    init(ints: [String: Int64] = [:], doubles: [String: Double] = [:], strings: [String: String] = [:],
         stringArrays: [String: [String]] = [:], records: [String: [String: Double]] = [:]) {
        self.ints = ints
        self.doubles = doubles
        self.strings = strings
        self.stringArrays = stringArrays
        self.records = records
    }

    static func from(_ p: UnsafeMutableRawPointer?) -> HostState {
        Unmanaged<HostState>.fromOpaque(p!).takeUnretainedValue()
    }
}

/// Host callbacks that encode a HostState and decode every key they can.
let hostCallbacks: UnsafePointer<rst_object_callbacks> = {
    var c = rst_object_callbacks()
    c.encode = { inst, coder in
        let s = HostState.from(inst)
        for (k, v) in s.ints.sorted(by: { $0.key < $1.key }) { _ = rst_encode_int(coder, k, v) }
        for (k, v) in s.doubles.sorted(by: { $0.key < $1.key }) { _ = rst_encode_double(coder, k, v) }
        for (k, v) in s.strings.sorted(by: { $0.key < $1.key }) { _ = rst_encode_string(coder, k, v) }
        for (k, v) in s.objects.sorted(by: { $0.key < $1.key }) { _ = rst_encode_object(coder, k, v) }
        for (k, arr) in s.stringArrays.sorted(by: { $0.key < $1.key }) {
            let copies = arr.map { UnsafePointer(strdup($0)) }
            _ = copies.withUnsafeBufferPointer { rst_encode_string_array(coder, k, $0.baseAddress, $0.count) }
            for c in copies { free(UnsafeMutablePointer(mutating: c)) }
        }
        for (k, rec) in s.records.sorted(by: { $0.key < $1.key }) {
            _ = rst_encode_begin_record(coder, k)
            for (rk, rv) in rec.sorted(by: { $0.key < $1.key }) { _ = rst_encode_double(coder, rk, rv) }
            _ = rst_encode_end_record(coder)
        }
    }
    c.decode = { inst, coder in
        let s = HostState.from(inst)
        for key in ["v", "visits", "selectedTab"] {
            var i: Int64 = 0
            if rst_decode_int(coder, key, &i) == RST_OK { s.decoded[key] = String(i) }
        }
        for key in ["zoom", "scrollOffset"] {
            var d = 0.0
            if rst_decode_double(coder, key, &d) == RST_OK { s.decoded[key] = String(d) }
        }
        for key in ["country", "text", "selection"] {
            var p: UnsafePointer<CChar>?
            if rst_decode_string(coder, key, &p, nil) == RST_OK, let p { s.decoded[key] = String(cString: p) }
        }
        var o: OpaquePointer?
        if rst_decode_object(coder, "source", &o) == RST_OK, let o {
            var path: UnsafeMutablePointer<CChar>?
            if rst_object_path(o, &path) == RST_OK, let path {
                s.decodedObjects["source"] = String(cString: path)
                rst_free(path)
            }
        }
        if rst_decode_begin_record(coder, "center") == RST_OK {
            var lat = 0.0, lon = 0.0
            _ = rst_decode_double(coder, "lat", &lat)
            _ = rst_decode_double(coder, "lon", &lon)
            s.decoded["center"] = "\(lat),\(lon)"
            _ = rst_decode_end_record(coder)
        }
        var count = 0
        var first: UnsafePointer<CChar>?
        if rst_decode_string_array(coder, "layers", 0, &first, nil, &count) == RST_OK {
            var all: [String] = []
            for i in 0..<count {
                var p: UnsafePointer<CChar>?
                if rst_decode_string_array(coder, "layers", i, &p, nil, nil) == RST_OK, let p { all.append(String(cString: p)) }
            }
            s.decoded["layers"] = all.joined(separator: ",")
        }
    }
    c.finished = { inst in HostState.from(inst).finished += 1 }
    let p = UnsafeMutablePointer<rst_object_callbacks>.allocate(capacity: 1)
    p.initialize(to: c)
    return UnsafePointer(p)
}()

/// Host objects of one engine, kept alive with it.
final class HostObjects {
    var states: [String: HostState] = [:]
    var objects: [String: OpaquePointer] = [:]

    /// Registers `path` (its parent must be registered already).
    @discardableResult
    func register(_ e: OpaquePointer, _ path: String, className: String? = nil, state: HostState = HostState(),
                  file: StaticString = #filePath, line: UInt = #line) -> OpaquePointer? {
        let parts = path.split(separator: "/").map(String.init)
        let parentPath = parts.dropLast().joined(separator: "/")
        let parent = parentPath.isEmpty ? nil : objects[parentPath]
        var out: OpaquePointer?
        let s: rst_status
        if let className {
            s = rst_register_object(e, parts.last!, parent, className, hostCallbacks, Unmanaged.passUnretained(state).toOpaque(), &out)
        } else {
            s = rst_register_object(e, parts.last!, parent, nil, hostCallbacks, Unmanaged.passUnretained(state).toOpaque(), &out)
        }
        XCTAssertEqual(s, RST_OK, "register \(path): \(String(cString: rst_last_error()))", file: file, line: line)
        states[path] = state
        objects[path] = out
        return out
    }
}

/// What rst_list_plugins says, as Swift values.
struct ListedPlugin {
    var path: String
    var name: String
    var version: String
    var state: rst_plugin_state
    var reason: String
    var classes: [(name: String, symbol: String, signature: String, usable: Bool, reason: String)]
    var fileName: String { URL(fileURLWithPath: path).lastPathComponent }
}

func listPlugins(_ e: OpaquePointer, file: StaticString = #filePath, line: UInt = #line) -> [ListedPlugin] {
    var out: UnsafeMutablePointer<rst_plugin_info>?
    var count = 0
    let s = rst_list_plugins(e, &out, &count)
    XCTAssertEqual(s, RST_OK, String(cString: rst_last_error()), file: file, line: line)
    defer { rst_free(out) }
    guard let out else { return [] }
    return (0..<count).map { i in
        let p = out[i]
        let classes = (0..<p.class_count).map { j -> (String, String, String, Bool, String) in
            let c = p.classes[j]
            return (String(cString: c.class_name), String(cString: c.factory_symbol), String(cString: c.signature), c.usable, String(cString: c.reason))
        }
        return ListedPlugin(path: String(cString: p.path), name: String(cString: p.name), version: String(cString: p.version),
                            state: p.state, reason: String(cString: p.reason),
                            classes: classes.map { (name: $0.0, symbol: $0.1, signature: $0.2, usable: $0.3, reason: $0.4) })
    }
}

func report(_ e: OpaquePointer, file: StaticString = #filePath, line: UInt = #line) -> rst_restore_report {
    var r = rst_restore_report()
    XCTAssertEqual(rst_last_restore_report(e, &r), RST_OK, String(cString: rst_last_error()), file: file, line: line)
    return r
}

/// Saves an engine to bytes.
func saveToBytes(_ e: OpaquePointer, file: StaticString = #filePath, line: UInt = #line) -> [UInt8] {
    var p: UnsafeMutableRawPointer?
    var n = 0
    XCTAssertEqual(rst_save_to_buffer(e, &p, &n), RST_OK, String(cString: rst_last_error()), file: file, line: line)
    defer { rst_free(p) }
    guard let p else { return [] }
    return Array(UnsafeRawBufferPointer(start: p, count: n))
}

@discardableResult
func restore(_ e: OpaquePointer, _ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> rst_status {
    let s = bytes.withUnsafeBytes { rst_restore_from_buffer(e, $0.baseAddress, $0.count) }
    XCTAssertEqual(s, RST_OK, String(cString: rst_last_error()), file: file, line: line)
    return s
}

/// The instance of the object at `path` as a C string (fixture objects keep
/// a description of their factory's arguments there).
func instanceText(_ e: OpaquePointer, _ path: String) -> String? {
    guard let o = rst_find_object(e, path), let inst = rst_object_instance(o) else { return nil }
    return String(cString: inst.assumingMemoryBound(to: CChar.self))
}

/// Parses "K=V K=V ..." into a dictionary.
func fields(_ text: String) -> [String: String] {
    var d: [String: String] = [:]
    for part in text.split(separator: " ") {
        guard let eq = part.firstIndex(of: "=") else { continue }
        d[String(part[..<eq])] = String(part[part.index(after: eq)...])
    }
    return d
}

/// "%p" of a pointer, as glibc prints it.
func hex(_ p: UnsafeRawPointer?) -> String {
    guard let p else { return "(nil)" }
    return "0x" + String(UInt(bitPattern: p), radix: 16)
}

/// Calls an exported `int name(void)` of an already-loaded plugin file
/// (RTLD_NOLOAD: nil when the engine never loaded it).
func fixtureCounter(_ path: String, _ symbol: String) -> Int32? {
    guard let h = dlopen(path, RTLD_NOW | RTLD_NOLOAD) else { return nil }
    guard let sym = dlsym(h, symbol) else { return nil }
    return unsafeBitCast(sym, to: (@convention(c) () -> Int32).self)()
}

func isLoaded(_ path: String) -> Bool {
    dlopen(path, RTLD_NOW | RTLD_NOLOAD) != nil
}
