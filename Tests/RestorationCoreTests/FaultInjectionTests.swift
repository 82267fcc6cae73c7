// Fault injection at every file-system call (SQLite's I/O-error loop): for
// a save, a restore, a restore that sets a crashed archive aside, and a discard, the calls are recorded once, then each
// run fails call N (N over every call) with ENOSPC, EIO, EROFS, EINTR, a
// short or a zero-length read/write — once, and persistently (that call and
// every later call of the same operation). After each run:
//   - a failure is RST_ERR_IO-like with a sentence naming a file and errno;
//   - the old archive is byte-identical, or the save succeeded durably (the
//     temporary fsynced after its last write and before the rename, the
//     directory fsynced after it), or it says the new archive is not durable;
//   - no temporary file is left;
//   - a new process (a fresh engine, this process's markers taken as a dead
//     one's) restores the old or the new state, never neither;
//   - the engine saves again, and the new state restores.
import XCTest
import Foundation
@testable import RestorationCore
#if canImport(Glibc)
import Glibc
#endif

final class FaultInjectionTests: XCTestCase {
    var dir: String!
    var path: String { dir + "/state.rst" }

    override func setUp() { dir = makeTempDir("faults") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    /// Figures of all the loops of this test class, printed at the end of each.
    nonisolated(unsafe) static var totals: [String: (calls: Int, runs: Int, faults: Int)] = [:]

    static let oldValue: Int64 = 111
    static let newValue: Int64 = 222

    /// Fresh directory content: the old archive (and, for discard, the files kept beside it).
    func prepare(_ op: Operation) throws -> [UInt8] {
        for f in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
            try FileManager.default.removeItem(atPath: dir + "/" + f)
        }
        if op == .saveRotating {
            // Generation 1 holds an older state: the rotation shifts it to 2.
            let (e, _) = try counterEngine(path, Self.olderValue, generations: 2)
            try e.save()
            e.destroy()
        }
        let (e, _) = try counterEngine(path, Self.oldValue, generations: op == .saveRotating ? 2 : 0)
        try e.save()
        e.destroy()
        let old = fileBytes(path)!
        switch op {
        case .discard:
            _ = FileManager.default.createFile(atPath: path + ".crashed-1700000000000", contents: Data("old".utf8))
            _ = FileManager.default.createFile(atPath: path + ".tmp-99999-1", contents: Data("half".utf8))
            _ = FileManager.default.createFile(atPath: path + ".restoring", contents: Data())
        case .save:
            // An emptied marker, which the save removes (so its unlink fails too).
            _ = FileManager.default.createFile(atPath: path + ".restoring", contents: Data())
        case .restoreAfterCrash:
            // A process died restoring this archive: the restore sets it aside.
            let m = CrashGuard.Marker(owner: .init(pid: 999999, start: 1, boot: SystemInfo.bootID),
                                      archive: old.withUnsafeBytes { CrashGuard.identity(of: $0) })
            _ = FileManager.default.createFile(atPath: FileStore.markerPath(path), contents: Data(CrashGuard.encode(m).utf8))
        case .restore, .saveRotating:
            break
        }
        return old
    }

    enum Operation: String { case save, restore, restoreAfterCrash = "restore after a crash", discard, saveRotating = "save keeping 2 generations" }
    static let olderValue: Int64 = 55

    /// Runs `op` once under `trace`; returns its failure, if any.
    func run(_ op: Operation, _ trace: IOTrace, log: LogBox) -> RestorationFailure? {
        do {
            let (e, c) = try counterEngine(path, op == .restore ? -1 : Self.newValue, log: log,
                                           generations: op == .saveRotating ? 2 : 0)
            defer { e.destroy() }
            try FileIO.withInterceptor(trace) {
                switch op {
                case .save, .saveRotating: try e.save()
                case .restore:
                    try e.restore()
                    XCTAssertEqual(c.value, Self.oldValue, "a restore that returned OK restored the wrong state")
                case .restoreAfterCrash:
                    try e.restore()
                case .discard: try e.discard()
                }
            }
            return nil
        } catch let f as RestorationFailure {
            return f
        } catch {
            XCTFail("unexpected error \(error)")
            return nil
        }
    }

    func loop(_ op: Operation) throws {
        // The calls of a clean run.
        _ = try prepare(op)
        let clean = IOTrace()
        let cleanFailure = run(op, clean, log: LogBox())
        if op == .restoreAfterCrash {
            XCTAssertEqual(cleanFailure?.status, .rejected, "the clean \(op) did not set the archive aside:\n\(clean.summary)")
        } else {
            XCTAssertNil(cleanFailure, "the clean \(op) failed:\n\(clean.summary)")
        }
        let callCount = clean.calls.count
        XCTAssertGreaterThan(callCount, 3)

        var runs = 0, faults = 0
        for n in 0..<callCount {
            let opAtN = clean.calls[n].call.op
            for fault in Fault.allCases where fault.applies(to: opAtN) {
                for persistent in [false, true] {
                    let old = try prepare(op)
                    let trace = IOTrace(failAt: n, fault: fault, persistent: persistent)
                    let log = LogBox()
                    let failure = run(op, trace, log: log)
                    runs += 1
                    faults += trace.injected
                    let label = "\(op): call \(n) (\(opAtN)) fails with \(fault)\(persistent ? " persistently" : " once")"
                    check(op, label, failure, trace, old: old, log: log)
                }
            }
        }
        Self.totals[op.rawValue] = (callCount, runs, faults)
        print("fault injection: \(op): \(callCount) calls in a clean run, \(runs) runs, \(faults) faults injected")
    }

    func check(_ op: Operation, _ label: String, _ failure: RestorationFailure?, _ trace: IOTrace, old: [UInt8], log: LogBox) {
        let context = "\(label)\n\(failure.map { "error: \($0)" } ?? "returned OK")\nlog: \(log.lines)\ntrace:\n\(trace.summary)"
        // A clear error: a sentence naming a file of the archive's directory and the errno.
        if let f = failure, !(op == .restoreAfterCrash && f.status == .rejected) {
            XCTAssertTrue([.io, .notFound].contains(f.status), "status \(f.status): \(context)")
            XCTAssertTrue(f.message.contains(dir), "the error names no file: \(context)")
            XCTAssertTrue(f.message.contains("errno") || f.message.contains("shrank"), "the error names no errno: \(context)")
        }
        // Warnings name the file and the errno too.
        for l in log.lines where l.hasPrefix("[warning]") && !l.contains("ignoring crash-loop marker") {
            XCTAssertTrue(l.contains(dir) && l.contains("errno"), "warning without file or errno: \(l)\n\(context)")
        }
        let now = fileBytes(path)
        switch op {
        case .save, .saveRotating:
            if op == .saveRotating { checkGenerations(failure, context) }
            if now != old {
                // Replaced: only by a save that succeeded durably, or that says it is not durable.
                XCTAssertTrue(failure == nil || failure!.message.contains("not durable"), "archive changed by a failed save: \(context)")
                if failure == nil { checkDurable(trace, context) }
            } else {
                XCTAssertNotNil(failure, "the save returned OK but the archive is the old one: \(context)")
            }
        case .restore:
            XCTAssertEqual(now, old, "a restore changed the archive: \(context)")
        case .restoreAfterCrash:
            // Refused and set aside intact, or (the rename failed) left in place intact.
            let aside = FileStore.siblings(of: path, infix: ".crashed-")
            if failure?.status == .rejected {
                XCTAssertNil(now, "set aside, yet still in place: \(context)")
                XCTAssertEqual(aside.count, 1, context)
                XCTAssertEqual(aside.first.flatMap(fileBytes), old, "the set-aside copy differs: \(context)")
            } else {
                XCTAssertNotNil(failure, "a restore of a crashed archive returned OK: \(context)")
                XCTAssertEqual(now, old, "the crashed archive was neither kept nor set aside: \(context)")
                XCTAssertEqual(aside, [], context)
            }
        case .discard:
            if failure == nil {
                XCTAssertEqual(FileStore.stateFiles(of: path), [], "discard returned OK and left files: \(context)")
            } else {
                XCTAssertTrue(now == nil || now! == old, "a failed discard changed the archive: \(context)")
            }
        }
        // (A failed discard may leave the stale temporary it was given; the next save removes it.)
        if op != .discard || failure == nil {
            XCTAssertEqual(FileStore.siblings(of: path, infix: ".tmp-"), [], "a temporary file was left: \(context)")
        }
        if op != .restoreAfterCrash {
            XCTAssertEqual(FileStore.siblings(of: path, infix: ".crashed-").filter { !$0.hasSuffix("1700000000000") }, [],
                           "a good archive was set aside: \(context)")
            // A new process restores the old or the new state, never neither.
            let expected: Set<Int64> = op == .save || op == .saveRotating ? [Self.oldValue, Self.newValue] : [Self.oldValue]
            switch restoreAsNextProcess(path) {
            case .success(let v):
                XCTAssertTrue(expected.contains(v), "a new process restored \(v): \(context)")
            case .failure(let f):
                let discarded = op == .discard && f.status == .notFound
                XCTAssertTrue(discarded, "a new process cannot restore: \(f): \(context)")
            }
        } else {
            // The crashed archive is never restored: set aside now, or by the next process.
            switch restoreAsNextProcess(path) {
            case .success(let v): XCTFail("a new process restored the crashed archive (\(v)): \(context)")
            case .failure(let f): XCTAssertTrue([.rejected, .notFound].contains(f.status), "\(f): \(context)")
            }
        }
        // The engine saves again; the new state restores; no temporary is left.
        do {
            let (e, _) = try counterEngine(path, Self.newValue + 1)
            try e.save()
            e.destroy()
        } catch {
            XCTFail("cannot save again: \(error): \(context)")
        }
        if case .success(let v) = restoreAsNextProcess(path) {
            XCTAssertEqual(v, Self.newValue + 1, context)
        } else {
            XCTFail("the state saved again does not restore: \(context)")
        }
        XCTAssertEqual(FileStore.siblings(of: path, infix: ".tmp-"), [], "a temporary file was left after saving again: \(context)")
    }

    /// The temporary was fsynced after its last write and before the rename;
    /// the directory (or the file system) was synced after the rename.
    func checkDurable(_ trace: IOTrace, _ context: String) {
        let calls = trace.calls
        guard let rename = calls.lastIndex(where: { $0.call.op == .rename && $0.result == 0 }),
              let tmp = calls[rename].call.path else {
            return XCTFail("a successful save without a rename: \(context)")
        }
        let lastWrite = calls.lastIndex { $0.call.op == .write && $0.fdPath == tmp && $0.result > 0 } ?? -1
        let fsync = calls.lastIndex { $0.call.op == .fsync && $0.fdPath == tmp && $0.result == 0 } ?? -1
        XCTAssertTrue(fsync > lastWrite && fsync < rename, "the temporary was not fsynced between its last write and the rename: \(context)")
        let dirSynced = calls[(rename + 1)...].contains {
            ($0.call.op == .fsync && $0.result == 0 && $0.fdPath == dir) || ($0.call.op == .syncfs && $0.result == 0)
        }
        XCTAssertTrue(dirSynced, "no directory fsync after the rename: \(context)")
    }

    /// A save that keeps generations: whatever call fails, every generation
    /// left is a whole earlier archive, newest first; a save that succeeded
    /// kept the archive it replaced as generation 1; a failed one lost none
    /// but (at worst) the oldest.
    func checkGenerations(_ failure: RestorationFailure?, _ context: String) {
        let e = Engine(configuration: .init(archivePath: path, crashGuard: false))
        defer { e.destroy() }
        let c = Counter(-1)
        _ = try? e.register(identifier: "counter", parent: nil, className: nil, behavior: CounterBehavior(counter: c))
        var values: [Int64] = []
        for k in 1...3 where FileManager.default.fileExists(atPath: FileStore.generationPath(path, k)) {
            c.value = -1
            do { try e.restore(generation: UInt32(k)) } catch { XCTFail("generation \(k) does not restore: \(error): \(context)") }
            values.append(c.value)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: FileStore.generationPath(path, 3)), "a third generation: \(context)")
        XCTAssertTrue(values.allSatisfy { [Self.oldValue, Self.olderValue].contains($0) }, "generations \(values): \(context)")
        XCTAssertEqual(values, values.sorted(by: >), "generations out of order \(values): \(context)")
        if failure == nil { XCTAssertEqual(values.first, Self.oldValue, "the replaced archive was not kept: \(context)") }
        else { XCTAssertTrue(values.contains(Self.oldValue) || values.isEmpty || values == [Self.olderValue], context) }
    }

    func testEveryCallOfASaveKeepingGenerationsFails() throws { try loop(.saveRotating) }
    func testEveryCallOfASaveFails() throws { try loop(.save) }
    func testEveryCallOfARestoreFails() throws { try loop(.restore) }
    func testEveryCallOfADiscardFails() throws { try loop(.discard) }
    func testEveryCallOfARestoreOfACrashedArchiveFails() throws { try loop(.restoreAfterCrash) }
}
