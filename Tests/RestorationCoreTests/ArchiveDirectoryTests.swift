// A save into a folder that does not exist creates it (FileStore.
// createArchiveDirectory), and every call of that goes through FileIO: each
// one is failed in turn, once and persistently, with the faults of the
// fault-injection loop. After each run: a failed save says so with the path
// and an errno, leaves no archive and no temporary file, and the next save
// succeeds and restores.
import XCTest
import Foundation
@testable import RestorationCore
#if canImport(Glibc)
import Glibc
#endif

final class ArchiveDirectoryTests: XCTestCase {
    var dir: String!
    override func setUp() { dir = makeTempDir("folder") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func testCreatesMissingFoldersDurablyWithMode0700() throws {
        let path = dir + "/state/app/state.rst"
        let (e, _) = try counterEngine(path, 7)
        defer { e.destroy() }
        let trace = IOTrace()
        try FileIO.withInterceptor(trace) { try e.save() }
        for folder in [dir + "/state", dir + "/state/app"] {
            var st = stat()
            XCTAssertEqual(stat(folder, &st), 0, folder)
            XCTAssertEqual(st.st_mode & 0o7777, 0o700, folder)
        }
        // Each folder is made durable in its parent before the archive is written.
        let ops = trace.calls.map { $0.call.op }
        let firstMkdir = try XCTUnwrap(ops.firstIndex(of: .mkdir))
        let firstWrite = try XCTUnwrap(ops.firstIndex(of: .write))
        XCTAssertEqual(ops[..<firstWrite].filter { $0 == .mkdir }.count, 2)
        XCTAssertEqual(ops[firstMkdir..<firstWrite].filter { $0 == .fsync }.count, 2)
        if case .success(let v) = restoreAsNextProcess(path) { XCTAssertEqual(v, 7) } else { XCTFail("no restore") }
    }

    func testAnAncestorThatIsAFileIsNamed() throws {
        _ = FileManager.default.createFile(atPath: dir + "/blocker", contents: Data("x".utf8))
        let (e, _) = try counterEngine(dir + "/blocker/sub/state.rst", 1)
        defer { e.destroy() }
        XCTAssertThrowsError(try e.save()) { error in
            let f = error as? RestorationFailure
            XCTAssertEqual(f?.status, .io)
            XCTAssertTrue(f?.message.contains("'\(self.dir!)/blocker' exists and is not a directory") ?? false, f?.message ?? "")
        }
    }

    func testEveryCallOfFolderCreationFailsCleanly() throws {
        let path = dir + "/a/b/state.rst"
        func reset() { try? FileManager.default.removeItem(atPath: dir + "/a") }
        reset()
        let (clean, _) = try counterEngine(path, 5)
        let cleanTrace = IOTrace()
        try FileIO.withInterceptor(cleanTrace) { try clean.save() }
        clean.destroy()
        // Only the calls up to the first write of the archive belong to the folders.
        let calls = cleanTrace.calls.prefix { $0.call.op != .write }.count
        var runs = 0
        for n in 0..<calls {
            let op = cleanTrace.calls[n].call.op
            for fault in Fault.allCases where fault.applies(to: op) {
                for persistent in [false, true] {
                    reset()
                    let (e, _) = try counterEngine(path, 5)
                    let trace = IOTrace(failAt: n, fault: fault, persistent: persistent)
                    let label = "call \(n) (\(op)) fails with \(fault)\(persistent ? " persistently" : " once")"
                    var failure: RestorationFailure?
                    do { try FileIO.withInterceptor(trace) { try e.save() } } catch let f as RestorationFailure { failure = f }
                    runs += 1
                    if let failure {
                        XCTAssertEqual(failure.status, .io, label)
                        XCTAssertTrue(failure.message.contains(path) && failure.message.contains("errno"), "\(label): \(failure.message)")
                        XCTAssertNil(fileBytes(path), "\(label): a failed save left an archive")
                    } else if case .success(let v) = restoreAsNextProcess(path) {
                        XCTAssertEqual(v, 5, label)      // EINTR retried, or a fault that did not matter
                    } else {
                        XCTFail("\(label): the save said OK but nothing restores")
                    }
                    let leftovers = ((try? FileManager.default.contentsOfDirectory(atPath: dir + "/a/b")) ?? []).filter { $0.contains(".tmp-") }
                    XCTAssertEqual(leftovers, [], label)
                    // The engine saves again and the state restores.
                    XCTAssertNoThrow(try e.save(), label)
                    if case .success(let v) = restoreAsNextProcess(path) { XCTAssertEqual(v, 5, label) } else { XCTFail("\(label): no restore after the retry") }
                    e.destroy()
                }
            }
        }
        XCTAssertGreaterThan(runs, 20)
        print("fault injection: save into missing folders: \(calls) calls before the first write, \(runs) runs")
    }
}
