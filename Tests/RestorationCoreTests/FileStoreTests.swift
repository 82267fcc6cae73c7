// One test per reliability defect (docs/RELIABILITY.md) that an injected fault reproduces
// (the others are C programs: Tests/RestorationCTests/C/reliability.c).
import XCTest
import Foundation
@testable import RestorationCore
#if canImport(Glibc)
import Glibc
#endif

/// Fails the calls `rule` picks (by call and by how many calls of that kind came before).
final class RuleIO: IOInterceptor {
    let rule: (IOCall, Int) -> IOAction?
    var counts: [IOOp: Int] = [:]
    var seen: [IOOp] = []
    init(_ rule: @escaping (IOCall, Int) -> IOAction?) { self.rule = rule }
    func before(_ call: IOCall) -> IOAction {
        let n = counts[call.op, default: 0]
        counts[call.op] = n + 1
        return rule(call, n) ?? .proceed
    }
    func after(_ call: IOCall, result: Int, data: UnsafeRawBufferPointer?) { if result >= 0 { seen.append(call.op) } }
}

final class FileStoreTests: XCTestCase {
    var dir: String!
    var path: String { dir + "/state.rst" }

    override func setUp() { dir = makeTempDir("filestore") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func saved(_ value: Int64) throws -> [UInt8] {
        let (e, _) = try counterEngine(path, value)
        try e.save()
        e.destroy()
        return fileBytes(path)!
    }

    func save(_ value: Int64, _ io: IOInterceptor, log: LogBox = LogBox()) -> RestorationFailure? {
        do {
            let (e, _) = try counterEngine(path, value, log: log)
            defer { e.destroy() }
            try FileIO.withInterceptor(io) { try e.save() }
            return nil
        } catch {
            return (error as! RestorationFailure)
        }
    }

    // 1. The directory cannot be opened after the rename (EACCES: mode 0333):
    //    the rename is made durable through syncfs; when that fails too, the
    //    save says the new archive is in place but not durable. (Before: RST_OK, no sync.)
    func testDirectoryThatCannotBeOpenedAfterTheRename() throws {
        _ = try saved(1)
        let fallback = RuleIO { c, _ in c.op == .open && c.path == self.dir ? .fail(EACCES) : nil }
        XCTAssertNil(save(2, fallback))
        XCTAssertTrue(fallback.seen.contains(.syncfs), "no syncfs after the directory could not be opened: \(fallback.seen)")

        let neither = RuleIO { c, _ in
            (c.op == .open && c.path == self.dir) ? .fail(EACCES) : c.op == .syncfs ? .fail(EIO) : nil
        }
        let f = try XCTUnwrap(save(3, neither), "a save whose rename was never made durable returned RST_OK")
        XCTAssertEqual(f.status, .io)
        XCTAssertTrue(f.message.contains("in place but not durable") && f.message.contains(dir) && f.message.contains("errno 13"), f.message)
        XCTAssertEqual(try? restoreAsNextProcess(path).get(), 3)
    }

    // 7. A write that returns 0 forever ends the save with a full-disk error. (Before: an endless loop.)
    func testWriteThatReturnsZeroForever() throws {
        let old = try saved(1)
        let zero = RuleIO { c, _ in c.op == .write ? .limit(0) : nil }
        let t0 = Date()
        let f = try XCTUnwrap(save(2, zero))
        XCTAssertLessThan(Date().timeIntervalSince(t0), 10)
        XCTAssertTrue(f.message.contains("made no progress") && f.message.contains("errno 28") && f.message.contains(".tmp-"), f.message)
        XCTAssertEqual(fileBytes(path), old)
        XCTAssertEqual(FileStore.siblings(of: path, infix: ".tmp-"), [])
        // EINTR forever is bounded too.
        let eintr = RuleIO { c, _ in c.op == .write ? .fail(EINTR) : nil }
        let g = try XCTUnwrap(save(2, eintr))
        XCTAssertTrue(g.message.contains("errno 4"), g.message)
        XCTAssertEqual(fileBytes(path), old)
    }

    // 2. Removing the marker after a good restore fails (once: retried; for
    //    good: emptied through its descriptor, with a warning naming file and
    //    errno); the next process restores the archive. (Before: it set it aside.)
    func testMarkerThatCannotBeRemovedAfterTheRestore() throws {
        for persistent in [false, true] {
            _ = try saved(5)
            let marker = FileStore.markerPath(path)
            let io = RuleIO { c, n in c.op == .unlink && c.path == marker && (persistent || n == 0) ? .fail(EROFS) : nil }
            let log = LogBox()
            let (e, c) = try counterEngine(path, 0, log: log)
            try FileIO.withInterceptor(io) { try e.restore() }
            e.destroy()
            XCTAssertEqual(c.value, 5)
            if persistent {
                XCTAssertTrue(log.lines.contains { $0.contains(marker) && $0.contains("errno 30") && $0.contains("emptied") }, "\(log.lines)")
                XCTAssertEqual(fileBytes(marker), [], "the marker was not emptied")
            } else {
                XCTAssertFalse(FileManager.default.fileExists(atPath: marker), "the failed unlink was not retried")
            }
            XCTAssertEqual(try? restoreAsNextProcess(path).get(), 5, persistent ? "persistent" : "once")
            XCTAssertEqual(FileStore.siblings(of: path, infix: ".crashed-"), [])
        }
    }

    // 3. A short write of the marker: the partial marker is removed, the
    //    warning quotes the write's own errno (before: a stale one), and a
    //    partial marker left anyway condemns nothing.
    func testMarkerShortWrite() throws {
        _ = try saved(6)
        let marker = FileStore.markerPath(path)
        // The first write gives 10 bytes, the next fails with ENOSPC.
        let io = RuleIO { c, n in c.op == .write ? (n == 0 ? .limit(10) : .fail(ENOSPC)) : nil }
        let log = LogBox()
        let (e, c) = try counterEngine(path, 0, log: log)
        // The engine's session file is written at its first restore: open it
        // first, so the writes counted below are the marker's.
        try e.restore()
        log.lines.removeAll()
        errno = EBADF   // a stale errno the warning must not quote
        try FileIO.withInterceptor(io) { try e.restore() }
        e.destroy()
        XCTAssertEqual(c.value, 6, "the restore runs without the guard")
        let warning = log.lines.first { $0.contains("crash-loop marker") } ?? ""
        XCTAssertTrue(warning.contains(marker) && warning.contains("after 10 of") && warning.contains("errno 28"), "\(log.lines)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker), "the partial marker was left")
        // Every torn prefix of a real marker, left by a crash, condemns nothing.
        let bytes = fileBytes(path)!
        let full = Array(CrashGuard.encode(.init(owner: .init(pid: 999999, start: 1, boot: SystemInfo.bootID),
                                                  archive: bytes.withUnsafeBytes { CrashGuard.identity(of: $0) })).utf8)
        for cut in 0..<full.count {
            _ = FileManager.default.createFile(atPath: marker, contents: Data(full[0..<cut]))
            XCTAssertEqual(try? restoreAsNextProcess(path).get(), 6, "a marker torn at \(cut) of \(full.count) bytes")
        }
        _ = FileManager.default.createFile(atPath: marker, contents: Data(full))
        guard case .failure(let f) = restoreAsNextProcess(path) else { return XCTFail("the complete marker was ignored") }
        XCTAssertEqual(f.status, .rejected)
    }

    // 5. A discard waits for a save in progress (the lock) and never removes
    //    its temporary file; savers waiting on a lock file the discard removed
    //    lock the new one. (Before: "rename … No such file or directory".)
    func testDiscardDoesNotBreakConcurrentSaves() throws {
        let rounds = 150
        let failures = LockedList()
        DispatchQueue.concurrentPerform(iterations: 3) { k in
            do {
                let (e, _) = try counterEngine(path, Int64(k))
                defer { e.destroy() }
                for _ in 0..<rounds {
                    do { if k == 2 { try e.discard() } else { try e.save() } } catch { failures.append("\(k): \(error)") }
                }
            } catch { failures.append("\(error)") }
        }
        XCTAssertEqual(failures.items, [], "\(failures.items.count) of \(3 * rounds) operations failed")
        XCTAssertEqual(FileStore.siblings(of: path, infix: ".tmp-"), [])
    }
}

final class LockedList: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func append(_ s: String) { lock.lock(); list.append(s); lock.unlock() }
    var items: [String] { lock.lock(); defer { lock.unlock() }; return list }
}
