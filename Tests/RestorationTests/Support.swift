import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import Restoration

/// A configurable restorable object for tests.
final class Probe: StateRestoring {
    var restorationIdentifier: String?
    weak var parent: StateRestoring?
    var restorationParent: StateRestoring? { parent }
    var className: String?
    var objectRestorationClass: RestorationClass? { className.map { RestorationClass($0) } }

    var onEncode: ((RestorationCoder) throws -> Void)?
    var onDecode: ((RestorationCoder) throws -> Void)?
    var decodeError: Error?
    var decodeCount = 0
    var finishedCount = 0
    var deinitHook: (() -> Void)?

    init(_ identifier: String?, parent: StateRestoring? = nil, className: String? = nil) {
        self.restorationIdentifier = identifier
        self.parent = parent
        self.className = className
    }

    deinit { deinitHook?() }

    func encodeRestorableState(with coder: RestorationCoder) throws {
        try onEncode?(coder)
    }

    func decodeRestorableState(with coder: RestorationCoder) throws {
        decodeCount += 1
        do {
            try onDecode?(coder)
        } catch {
            decodeError = error
            throw error
        }
    }

    func applicationFinishedRestoringState() { finishedCount += 1 }
}

/// Collects log lines.
final class LogBox: @unchecked Sendable {
    var lines: [(RestorationEngine.LogLevel, String)] = []
    func handler() -> (RestorationEngine.LogLevel, String) -> Void {
        { level, message in self.lines.append((level, message)) }
    }
    var warnings: [String] { lines.filter { $0.0 >= .warning }.map { $0.1 } }
}

/// Saves one object's encode and restores it into another's decode, in
/// memory: a save on one engine, a "relaunch" on a second.
func roundTrip(file: StaticString = #filePath, line: UInt = #line,
               encode: @escaping (RestorationCoder) throws -> Void,
               decode: @escaping (RestorationCoder) throws -> Void) throws {
    let a = try RestorationEngine()
    let source = Probe("P")
    source.onEncode = encode
    try a.register(source)
    let data = try a.saveToData()

    let b = try RestorationEngine()
    let logs = LogBox()
    b.log = logs.handler()
    let target = Probe("P")
    target.onDecode = decode
    try b.register(target)
    try b.restore(from: data)
    XCTAssertEqual(target.decodeCount, 1, "decode ran", file: file, line: line)
    if let e = target.decodeError { throw e }
}

/// A temporary directory, removed at the end of the test.
func temporaryDirectory(_ test: XCTestCase) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("restoration-swift-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    chmod(url.path, 0o755)
    test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
    return url
}

/// Where the test binary and the package's products live.
/// librestoration.so's SONAME is librestoration.so.1, so the loader is given
/// that name beside the file (as `make build` does).
let binDirectory: URL = {
    let url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    _ = try? FileManager.default.createSymbolicLink(atPath: url.path + "/librestoration.so.1",
                                                    withDestinationPath: "librestoration.so")
    return url
}()

/// The package root (Tests/RestorationTests/Support.swift → ../..).
var packageRoot: URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}

struct ProcessResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs a program, reading its output before waiting for it.
func runProcess(_ executable: String, _ arguments: [String]) throws -> ProcessResult {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: executable)
    p.arguments = arguments
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try p.run()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return ProcessResult(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
}

/// The first of these on PATH.
/// The C compiler and its leading flags for hosts linked against
/// librestoration.so: the first of cc, gcc, clang on PATH; under
/// `swift test --sanitize=address` (make test-asan) the toolchain's clang
/// with ASan, since the library then needs clang's ASan runtime.
func findCCompiler() -> [String]? {
    if dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil {
        return [findTool(["clang"]) ?? "/usr/bin/clang", "-fsanitize=address", "-fno-omit-frame-pointer"]
    }
    return findTool(["cc", "gcc", "clang"]).map { [$0] }
}

func findTool(_ names: [String]) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for name in names {
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
    }
    return nil
}
