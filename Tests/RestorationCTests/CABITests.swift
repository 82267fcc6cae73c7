// The C ABI through real C programs: each test compiles C/<program>.c with cc
// against Include/ and librestoration.so (see CProgramSupport.swift) and runs
// it in one or more processes. A program prints "<name>: ok N checks" on
// success; a failed check prints file:line and the engine's last error.
import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

final class CABITests: XCTestCase {
    /// A UIKit-like app (tab bar; navigation stack with a list whose scroll
    /// offset and selection are saved; a detail screen; a settings switch)
    /// saved in one process and restored in a new one, twice (restore leaves
    /// the archive in place).
    func testUIKitLikeAppSavedInOneProcessRestoredInAnother() throws {
        let dir = CTestDir("app")
        try runC("app", ["save", dir.path])
        try runC("app", ["restore", dir.path])
        try runC("app", ["restore", dir.path])
    }

    /// Each public header compiles on its own as C99 with every warning an
    /// error (-Wall -Wextra -pedantic -Werror), and as C++17; the options
    /// initializer expands warning-free in C.
    func testHeadersCompileAloneAsC99AndCxx17() throws {
        let dir = CTestDir("headers")
        let cc = CTestPaths.which("cc") ?? CTestPaths.which("gcc") ?? CTestPaths.which("clang")
        let cxx = CTestPaths.which("c++") ?? CTestPaths.which("g++") ?? CTestPaths.which("clang++")
        guard let cc else { throw XCTSkip("no C compiler") }
        for header in ["restoration.h", "restoration_plugin.h", "restoration_store.h"] {
            let c = dir.path + "/alone-\(header).c"
            try "#include <\(header)>\nint rst_header_test_dummy(void);\n".write(toFile: c, atomically: true, encoding: .utf8)
            let r = try runProgram(cc, ["-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-I", CTestPaths.include,
                                        "-c", c, "-o", dir.path + "/alone.o"])
            XCTAssertTrue(r.succeeded, "\(header) as C99:\n\(r)")
            if let cxx {
                let cpp = dir.path + "/alone-\(header).cpp"
                try "#include <\(header)>\nint rst_header_test_dummy();\n".write(toFile: cpp, atomically: true, encoding: .utf8)
                let r = try runProgram(cxx, ["-std=c++17", "-Wall", "-Wextra", "-pedantic", "-Werror", "-I", CTestPaths.include,
                                             "-c", cpp, "-o", dir.path + "/alone.o"])
                XCTAssertTrue(r.succeeded, "\(header) as C++17:\n\(r)")
            }
        }
        let use = CTestPaths.sources + "/headers/init_macros.c"
        let r = try runProgram(cc, ["-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-I", CTestPaths.include,
                                    "-c", use, "-o", dir.path + "/init.o"])
        XCTAssertTrue(r.succeeded, "RST_ENGINE_OPTIONS_INIT and the manifest macros in C99:\n\(r)")
    }

    /// Presence vs value, missing keys, wrong types, nested records, arrays,
    /// key rules, duplicate keys, coder use outside callbacks, encode_object
    /// misuse, failed encodes leaving the archive byte-identical, should_save.
    func testCoderValuesThroughTheABI() throws {
        let dir = CTestDir("values")
        try runC("values", [dir.path])
    }

    /// Versions, status names, options, identifier rules, duplicates, find,
    /// accessors, unregister, RST_ERR_STATE inside callbacks, NULL arguments
    /// to every function, thread-local rst_last_error, RST_MAX_TREE_DEPTH.
    func testRegistryRulesNullArgumentsAndLastError() throws {
        let dir = CTestDir("registry")
        try runC("registry", [dir.path])
    }

    /// The three passes and the exact decode order of a hand-built graph
    /// under the spec's SCC rule; skipped records; the report.
    func testThreePassesAndDecodeOrder() throws {
        try runC("passes", [])
    }

    /// Every truncation and a bit flip at every byte refused before any
    /// callback; foreign, empty, oversized (sparse) and missing archives;
    /// symlink, directory and FIFO targets; a read-only directory; leftover
    /// temporaries; rst_discard.
    func testValidationAndTheArchiveFiles() throws {
        let dir = CTestDir("files")
        try runC("files", [dir.path], timeout: 120)
    }

    /// The crash-loop guard: a process dies (abort) inside a decode callback;
    /// the next restore is refused and the archive set aside intact.
    func testCrashLoopGuardAfterAbort() throws {
        try crashLoop(mode: "abort", signal: SIGABRT)
    }

    /// The same with SIGKILL (no handler can run).
    func testCrashLoopGuardAfterSIGKILL() throws {
        try crashLoop(mode: "kill", signal: SIGKILL)
    }

    private func crashLoop(mode: String, signal: Int32) throws {
        let dir = CTestDir("crash-\(mode)")
        try runC("crashloop", ["save", dir.path])
        let crash = try runProgram(try CPrograms.path("crashloop"), ["crash", dir.path, mode], timeout: 30)
        XCTAssertFalse(crash.exited, "the restore was supposed to die:\n\(crash)")
        XCTAssertEqual(crash.code, signal, "\(crash)")
        try runC("crashloop", ["check", dir.path])
    }

    /// kill -9 at random moments during repeated saves never leaves an
    /// unrestorable archive or a mix of two saves, never goes back to an
    /// older generation than one already seen, and leftover temporaries are
    /// removed by the next save.
    func testKill9DuringRepeatedSaves() throws {
        let dir = CTestDir("kill9")
        let logs = CTestDir("kill9-logs")
        let program = try CPrograms.path("killsave")
        try runC("killsave", ["once", dir.path])
        var rng = SeededGenerator(seed: 0x5245_5354_4F52_4531)
        var minGeneration = 1
        var kills = 0, leftovers = 0
        let deadline = Date().addingTimeInterval(12)
        while kills < 30 && Date() < deadline {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: program)
            p.arguments = ["loop", dir.path]
            p.environment = cProgramEnvironment()
            let out = Pipe()
            let errFile = logs.path + "/loop-stderr"
            _ = FileManager.default.createFile(atPath: errFile, contents: nil)
            let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errFile))
            p.standardOutput = out
            p.standardError = err
            try p.run()
            // Wait for its first save ("ready"), then kill it a random 0-20 ms later.
            var seen = Data()
            while !String(decoding: seen, as: UTF8.self).contains("ready\n") {
                let chunk = out.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                seen.append(chunk)
            }
            let ready = String(decoding: seen, as: UTF8.self).contains("ready\n")
            usleep(UInt32.random(in: 0...20_000, using: &rng))
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            try? err.close()
            let stderr = (try? String(contentsOfFile: errFile, encoding: .utf8)) ?? ""
            unlink(errFile)
            guard ready, p.terminationReason == .uncaughtSignal, p.terminationStatus == SIGKILL else {
                XCTFail("the saving loop ended by itself before kill \(kills + 1) (ready: \(ready), status \(p.terminationStatus)):\n\(stderr)")
                return
            }
            kills += 1
            leftovers += ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter { $0.contains(".tmp-") }.count
            let verify = try runC("killsave", ["verify", dir.path, String(minGeneration)])
            guard verify.succeeded else {
                XCTFail("after kill \(kills)")
                return
            }
            if let line = verify.stdout.split(separator: "\n").first(where: { $0.hasPrefix("generation ") }),
               let g = Int(line.dropFirst("generation ".count)) {
                minGeneration = g
            }
        }
        XCTAssertGreaterThanOrEqual(kills, 10, "too few kills in the time budget")
        // The next save removes every leftover temporary file ("once" checks it).
        try runC("killsave", ["once", dir.path])
        print("kill -9 test: \(kills) kills, \(leftovers) leftover temporaries seen, last generation \(minGeneration)")
    }

    /// 4 threads register and unregister their own subtrees while the main
    /// thread saves and restores; factories and decode callbacks register and
    /// find objects; a second engine saves the same archive path.
    func testThreadsRegisterAndUnregisterWhileSaving() throws {
        let dir = CTestDir("threads")
        let r = try runC("threads", [dir.path, "1.5"], timeout: 60)
        if let summary = r.stdout.split(separator: "\n").first { print(summary) }
    }
}
