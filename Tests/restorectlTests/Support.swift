// Support for the restorectl tests: they run the built binary (next to the
// test bundle) as a separate process, on archives made by the core's writer,
// by ArchiveDocument, and by the real engine (restorectl restore --save-to,
// and a C host linked against librestoration.so when it is built).
import Foundation
import RestorationArchive
import XCTest
#if canImport(Glibc)
import Glibc
#endif

enum Ctl {
    /// The repository root (Tests/restorectlTests/Support.swift -> ../..).
    static let repo: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// The directory of the test binary and the package's products.
    static let bin: String? = {
        if let dir = ProcessInfo.processInfo.environment["RESTORECTL_BIN_DIR"] { return dir }
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: exe).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<3 {
            if FileManager.default.isExecutableFile(atPath: url.path + "/restorectl") {
                // librestoration.so's SONAME is librestoration.so.1: the loader looks for that name.
                _ = try? FileManager.default.createSymbolicLink(atPath: url.path + "/librestoration.so.1",
                                                                withDestinationPath: "librestoration.so")
                return url.path
            }
            url = url.deletingLastPathComponent()
        }
        return nil
    }()

    static func binary() throws -> String {
        guard let bin else {
            XCTFail("the restorectl binary was not found next to the test bundle (build it: swift build --product restorectl)")
            throw XCTSkip("no restorectl binary")
        }
        return bin + "/restorectl"
    }

    static let compiler: String? = {
        for c in ["/usr/bin/cc", "/usr/bin/gcc", "/usr/bin/clang"] where FileManager.default.isExecutableFile(atPath: c) {
            return c
        }
        return nil
    }()

    /// True under `swift test --sanitize=address` (make test-asan): C code
    /// linked against librestoration.so or loaded by restorectl is then built
    /// with the toolchain's clang and ASan.
    static let underASan: Bool = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil

    /// The compiler and leading flags for C code: `compiler`, or clang with ASan.
    static let cCompiler: [String]? = {
        guard underASan else { return compiler.map { [$0] } }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let clang = path.split(separator: ":").map { "\($0)/clang" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        return [clang ?? "/usr/bin/clang", "-fsanitize=address", "-fno-omit-frame-pointer"]
    }()

    /// True when graphviz's dot is on PATH.
    static let hasDot: Bool = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/dot") }
    }()
}

/// How one run ended.
struct Run: CustomStringConvertible {
    var args: [String]
    var code: Int32
    var stdout: String
    var stderr: String
    var stdoutBytes: [UInt8]

    var description: String {
        "restorectl \(args.joined(separator: " ")) exited \(code)\n--- stdout\n\(stdout)--- stderr\n\(stderr)---"
    }
}

/// A temporary directory (mode 0755), removed at deinit.
final class TempDir {
    let path: String

    init(_ label: String) {
        var template = Array("\(NSTemporaryDirectory())/restorectl-\(label).XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        path = String(cString: template)
        chmod(path, 0o755)
    }

    func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Runs restorectl with `args` (and `stdin`), waiting at most 120 s.
func ctl(_ args: [String], stdin: [UInt8]? = nil, in dir: TempDir? = nil, file: StaticString = #filePath, line: UInt = #line) throws -> Run {
    let exe = try Ctl.binary()
    let scratch = TempDir("run")
    let outPath = scratch.file("stdout"), errPath = scratch.file("stderr"), inPath = scratch.file("stdin")
    _ = FileManager.default.createFile(atPath: outPath, contents: nil)
    _ = FileManager.default.createFile(atPath: errPath, contents: nil)
    _ = FileManager.default.createFile(atPath: inPath, contents: Data(stdin ?? []))
    let p = Process()
    p.executableURL = URL(fileURLWithPath: exe)
    p.arguments = args
    if let dir { p.currentDirectoryURL = URL(fileURLWithPath: dir.path) }
    p.standardInput = FileHandle(forReadingAtPath: inPath)
    p.standardOutput = FileHandle(forWritingAtPath: outPath)
    p.standardError = FileHandle(forWritingAtPath: errPath)
    try p.run()
    let deadline = Date().addingTimeInterval(120)
    while p.isRunning && Date() < deadline { usleep(2000) }
    if p.isRunning {
        p.terminate()
        p.waitUntilExit()
        XCTFail("restorectl \(args.joined(separator: " ")) timed out", file: file, line: line)
    }
    p.waitUntilExit()
    let out = FileManager.default.contents(atPath: outPath) ?? Data()
    let err = FileManager.default.contents(atPath: errPath) ?? Data()
    XCTAssertEqual(p.terminationReason, .exit, "restorectl was killed by a signal", file: file, line: line)
    return Run(args: args, code: p.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
               stderr: String(decoding: err, as: UTF8.self), stdoutBytes: [UInt8](out))
}

/// Asserts the exit code, and for failures that stderr is exactly one line
/// starting with "restorectl: " (no stack trace).
@discardableResult
func expect(_ code: Int32, _ args: [String], stdin: [UInt8]? = nil, in dir: TempDir? = nil,
            file: StaticString = #filePath, line: UInt = #line) throws -> Run {
    let r = try ctl(args, stdin: stdin, in: dir, file: file, line: line)
    XCTAssertEqual(r.code, code, "\(r)", file: file, line: line)
    if code != 0 && !(code == 1 && args.first == "diff") {
        let lines = r.stderr.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.isEmpty }
        XCTAssertEqual(lines.count, 1, "stderr is not one line: \(r)", file: file, line: line)
        XCTAssertTrue(r.stderr.hasPrefix("restorectl: "), "\(r)", file: file, line: line)
    }
    return r
}

// MARK: - Archives

enum Archives {
    static func write(_ bytes: [UInt8], to path: String) {
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
    }

    static let info = ArchiveInfo(appVersion: "2.5 (build 77)", systemVersion: "Linux 6.1.0-test",
                                  idiom: "desktop", savedAtMs: 1_732_255_140_123)

    /// Doubles whose exact bits must survive JSON.
    static let doubles: [(String, Double)] = [
        ("zero", 0.0), ("negzero", -0.0), ("tenth", 0.1), ("third", 1.0 / 3.0),
        ("tiny", Double.leastNonzeroMagnitude), ("huge", Double.greatestFiniteMagnitude),
        ("minnormal", Double.leastNormalMagnitude), ("big", 1e300), ("pi", Double.pi),
        ("inf", Double.infinity), ("neginf", -Double.infinity), ("nan", Double.nan),
        ("payloadnan", Double(bitPattern: 0x7FF0_0000_0000_0001)), ("negnan", Double(bitPattern: 0xFFF8_0000_0000_0000)),
        ("int53", 9_007_199_254_740_993.0),
    ]

    static let ints: [(String, Int64)] = [
        ("max", Int64.max), ("min", Int64.min), ("zero", 0), ("minus1", -1),
        ("p53", 9_007_199_254_740_993), ("n53", -9_007_199_254_740_993),
    ]

    /// An archive written call by call with ArchiveWriter, as the engine's
    /// save does: every value type, edge values, nested records, forward and
    /// backward references, a reference cycle, and a value of a future type.
    static func everyType() throws -> [UInt8] {
        var w = ArchiveWriter()
        func k(_ s: String) -> UInt32 { var s = s; return s.withUTF8 { w.key(UnsafeRawBufferPointer($0)) } }
        func n(_ s: String) -> UInt32 { var s = s; return s.withUTF8 { w.name(UnsafeRawBufferPointer($0)) } }
        func str(_ key: String, _ s: String) throws {
            var s = s
            let kk = k(key)
            try s.withUTF8 { u in try w.writeString(kk, UnsafeRawBufferPointer(u)) }
        }
        // 0: Tabs
        w.beginObject(identifier: n("Tabs"), parent: nil, className: n("TabBar"))
        try w.writeInt(k("selectedTab"), 2)
        try w.writeObject(k("current"), record: 2)          // forward reference
        try w.endObject()
        // 1: Tabs/Numbers
        w.beginObject(identifier: n("Numbers"), parent: 0, className: n("NumberPane"))
        for (key, v) in ints { try w.writeInt(k("i_" + key), v) }
        for (key, v) in doubles { try w.writeDouble(k("d_" + key), v) }
        try w.writeBool(k("yes"), true)
        try w.writeBool(k("no"), false)
        let ia: [Int64] = [Int64.min, -1, 0, 1, Int64.max]
        try ia.withUnsafeBufferPointer { try w.writeIntArray(k("ints"), $0) }
        try [Int64]().withUnsafeBufferPointer { try w.writeIntArray(k("noInts"), $0) }
        try w.endObject()
        // 2: Tabs/Detail
        w.beginObject(identifier: n("Detail"), parent: 0, className: n("CountryDetail"))
        try str("country", "NO")
        try str("empty", "")
        try str("unicode", "Tromsø — 北极 👩‍👩‍👧")
        try str("hostile", "\u{1B}]0;pwned\u{07}\u{1B}[2J\r\u{202E}evil")
        let blob: [UInt8] = (0..<200).map { UInt8($0 & 0xFF) }
        try blob.withUnsafeBytes { try w.writeBytes(k("blob"), $0) }
        try [UInt8]().withUnsafeBytes { try w.writeBytes(k("noBytes"), $0) }
        let rows = ["NL", "NO", "", "NZ \"quoted\" \\ back"].map { Array($0.utf8) }
        var buffers: [UnsafeRawBufferPointer] = []
        let flat = rows.flatMap { $0 }
        try flat.withUnsafeBytes { all in
            var off = 0
            for r in rows { buffers.append(UnsafeRawBufferPointer(rebasing: all[off..<(off + r.count)])); off += r.count }
            try w.writeStringArray(k("rows"), buffers)
        }
        try w.writeObject(k("source"), record: 1)           // backward reference
        try w.beginRecord(k("center"))
        try w.writeDouble(k("lat"), 69.6496)
        try w.writeDouble(k("lon"), 18.956)
        try w.beginRecord(k("meta"))
        try w.writeObject(k("owner"), record: 3)
        try w.endRecord()
        try w.endRecord()
        try [UInt8]([0xDE, 0xAD, 0xBE, 0xEF]).withUnsafeBytes { try w.writeUnknown(k("future"), tag: 13, payload: $0) }
        try w.endObject()
        // 3: Tabs/Detail/Map (cycle with Detail: Map -> Detail -> (meta.owner) Map)
        w.beginObject(identifier: n("Map"), parent: 2, className: n("MapPane"))
        try w.writeDouble(k("zoom"), 11.5)
        try w.writeObject(k("detail"), record: 2)
        try w.endObject()
        // 4: Settings (a second root, no class)
        w.beginObject(identifier: n("Settings"), parent: nil, className: nil)
        try w.writeBool(k("metricUnits"), true)
        try w.endObject()
        return try w.finish(info: info)
    }

    /// A small document, encoded by ArchiveDocument.
    static func small(app: String = "1.0", tab: Int64 = 1, extra: Bool = false) throws -> [UInt8] {
        var objects = [
            ArchiveObject(identifier: "Tabs", parent: nil, className: "TabBar",
                          entries: [ArchiveEntry(key: "selectedTab", value: .int(tab)),
                                    ArchiveEntry(key: "title", value: .string("Countries"))]),
            ArchiveObject(identifier: "List", parent: 0, className: "CountryList",
                          entries: [ArchiveEntry(key: "offset", value: .double(120.5)),
                                    ArchiveEntry(key: "frame", value: .record([ArchiveEntry(key: "w", value: .int(300))]))]),
        ]
        if extra {
            objects.append(ArchiveObject(identifier: "Extra", parent: 0, className: "Pane",
                                         entries: [ArchiveEntry(key: "list", value: .object(record: 1))]))
        }
        var i = info
        i.appVersion = app
        return try ArchiveDocument(info: i, objects: objects).encode()
    }
}

extension Array where Element == UInt8 {
    func contains(byte: UInt8) -> Bool { self.firstIndex(of: byte) != nil }
}
