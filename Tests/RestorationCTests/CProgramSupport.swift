// Support for the C ABI tests: the C programs in C/ are compiled once per
// test run with `cc` against Include/ and the built librestoration.so, then
// run as separate processes (Foundation.Process).
import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

enum CTestPaths {
    /// The repository root (Tests/RestorationCTests/CProgramSupport.swift -> ../..).
    static let repo: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    static var include: String { repo + "/Include" }
    static var sources: String { repo + "/Tests/RestorationCTests/C" }

    /// The directory that holds librestoration.so: next to the test binary
    /// (.build/<triple>/debug/RestorationPackageTests.xctest on Linux is a file).
    static let bin: String? = {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: exe).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<3 {
            if FileManager.default.fileExists(atPath: url.path + "/librestoration.so") {
                // The SONAME is librestoration.so.1: the loader looks for that name.
                _ = try? FileManager.default.createSymbolicLink(atPath: url.path + "/librestoration.so.1",
                                                                withDestinationPath: "librestoration.so")
                return url.path
            }
            url = url.deletingLastPathComponent()
        }
        return nil
    }()

    /// True when the test binary runs under AddressSanitizer (swift test --sanitize=address):
    /// the programs must then be built with clang's ASan runtime, not gcc's.
    static let underASan: Bool = dlsym(nil, "__asan_init") != nil

    /// The C compiler command (an absolute path first): cc, or clang with ASan.
    static let compiler: [String] = {
        if underASan { return [which("clang") ?? "/usr/bin/clang", "-fsanitize=address", "-fno-omit-frame-pointer"] }
        return [which("cc") ?? which("gcc") ?? which("clang") ?? "/usr/bin/cc"]
    }()

    /// `name` looked up in $PATH.
    static func which(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") where !dir.isEmpty {
            let candidate = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}

/// A temporary directory, removed (permissions restored first) at deinit.
final class CTestDir {
    let path: String

    init(_ label: String) {
        var template = Array("\(NSTemporaryDirectory())/rst-ctests-\(label).XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        path = String(cString: template)
    }

    deinit {
        chmod(path, 0o700)
        if let e = FileManager.default.enumerator(atPath: path) {
            for case let f as String in e { chmod(path + "/" + f, 0o700) }
        }
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// How a program ended.
struct CRun: CustomStringConvertible {
    var command: String
    var exited: Bool          // false: killed by a signal (or timed out)
    var code: Int32           // exit status, or the signal number
    var timedOut: Bool
    var stdout: String
    var stderr: String

    var succeeded: Bool { exited && code == 0 && !timedOut }

    var description: String {
        let how = timedOut ? "timed out" : exited ? "exited with \(code)" : "was killed by signal \(code)"
        return "\(command) \(how)\n--- stdout\n\(stdout)--- stderr\n\(stderr)---"
    }
}

/// The environment for the C programs.
func cProgramEnvironment() -> [String: String] {
    var env = ProcessInfo.processInfo.environment
    // A crash inside a callback must not start swift-backtrace (it can hold the pipes open).
    env["SWIFT_BACKTRACE"] = "enable=no"
    if CTestPaths.underASan && env["RST_CTESTS_LEAKS"] == nil {
        // The programs keep some test scaffolding allocated until exit.
        env["ASAN_OPTIONS"] = "detect_leaks=0"
    }
    return env
}

/// Compiles each program of C/ once per test run.
enum CPrograms {
    private static let lock = NSLock()
    private static var built: [String: String] = [:]
    /// Beside librestoration.so (inside the scratch build directory), so
    /// nothing is left in /tmp; overwritten by every run.
    private static let outDir: String = {
        let dir = (CTestPaths.bin ?? NSTemporaryDirectory()) + "/RestorationCTests-programs"
        mkdir(dir, 0o755)
        return dir
    }()

    /// The path of the compiled program `name` (C/<name>.c); fails the test when it cannot be built.
    static func path(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        lock.lock()
        defer { lock.unlock() }
        if let p = built[name] { return p }
        guard let bin = CTestPaths.bin else {
            XCTFail("librestoration.so was not found next to the test binary (\(CommandLine.arguments[0])); build the 'restoration' product", file: file, line: line)
            throw XCTSkip("no librestoration.so")
        }
        let out = outDir + "/" + name
        unlink(out)
        let args = CTestPaths.compiler.dropFirst() + [
            "-std=c11", "-Wall", "-Wextra", "-Werror", "-g",
            "-I", CTestPaths.include,
            "\(CTestPaths.sources)/\(name).c",
            "-L", bin, "-lrestoration", "-Wl,-rpath,\(bin)", "-lpthread", "-lm",
            "-o", out,
        ]
        let r = try runProgram(CTestPaths.compiler[0], Array(args), timeout: 120)
        guard r.succeeded else {
            XCTFail("cannot compile C/\(name).c:\n\(r)", file: file, line: line)
            throw XCTSkip("C/\(name).c did not compile")
        }
        built[name] = out
        return out
    }
}

/// Runs a program to completion (or kills it after `timeout` seconds). Output
/// goes to files, so no pipe can fill up and block the child.
func runProgram(_ exe: String, _ args: [String], timeout: Double = 60) throws -> CRun {
    let scratch = CTestDir("run")
    let outPath = scratch.path + "/stdout", errPath = scratch.path + "/stderr"
    _ = FileManager.default.createFile(atPath: outPath, contents: nil)
    _ = FileManager.default.createFile(atPath: errPath, contents: nil)
    let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
    let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
    let p = Process()
    p.executableURL = URL(fileURLWithPath: exe)
    p.arguments = args
    p.environment = cProgramEnvironment()
    p.standardOutput = out
    p.standardError = err
    p.standardInput = FileHandle.nullDevice
    try p.run()
    let deadline = Date().addingTimeInterval(timeout)
    var timedOut = false
    while p.isRunning {
        if Date() > deadline {
            timedOut = true
            kill(p.processIdentifier, SIGKILL)
            break
        }
        usleep(2000)
    }
    p.waitUntilExit()
    try? out.close()
    try? err.close()
    let stdout = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
    let stderr = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
    let name = URL(fileURLWithPath: exe).lastPathComponent
    return CRun(command: ([name] + args).joined(separator: " "), exited: p.terminationReason == .exit,
                code: p.terminationStatus, timedOut: timedOut, stdout: stdout, stderr: stderr)
}

/// Runs C/<name>.c's program with `args` and asserts it succeeded; returns its run.
@discardableResult
func runC(_ name: String, _ args: [String], timeout: Double = 60, file: StaticString = #filePath, line: UInt = #line) throws -> CRun {
    let r = try runProgram(try CPrograms.path(name, file: file, line: line), args, timeout: timeout)
    XCTAssertTrue(r.succeeded, "\(r)", file: file, line: line)
    if r.succeeded {
        XCTAssertTrue(r.stdout.contains(" ok "), "no final 'ok N checks' line:\n\(r)", file: file, line: line)
    }
    return r
}

/// SplitMix64: a seeded generator, so a failing kill schedule can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
