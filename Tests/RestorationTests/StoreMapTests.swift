// A store written in Swift with `map` and `link` keeps per-object
// quarantine across a real death (a child process killed by SIGKILL inside
// one record's decode); the same store without `map` loses it (the archive
// is set aside, the relaunch starts over). A Swift store's sentence reaches
// the engine's error, status and words intact.
import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import Restoration

/// A store keeping each slot in a file of a directory (`archive-0`,
/// `generation-1`, …): writes through a temporary and a rename, `link` as a
/// copy, `map` as a shared mapping of the slot's file (blocks reserved with
/// posix_fallocate first), or no `map` at all.
final class DirectoryStore: RestorationStore {
    let dir: String
    let maps: Bool
    var links = 0, mapped: [RestorationStoreSlot] = []
    private var regions: [String: UnsafeMutableRawBufferPointer] = [:]
    private let mutex = NSLock()        // regions, mapped
    private let storeLock = NSLock()    // lock(), unlock()

    init(_ dir: String, maps: Bool) {
        self.dir = dir
        self.maps = maps
    }
    deinit { for r in regions.values { munmap(r.baseAddress, r.count) } }

    var storeDescription: String { "directory store '\(dir)'" }
    private func file(_ s: RestorationStoreSlot, _ i: UInt64) -> String { "\(dir)/\(s)-\(i)" }
    private func errno(_ what: String) -> RestorationError { .io("\(storeDescription): \(what): \(String(cString: strerror(Glibc.errno)))") }

    func read(_ slot: RestorationStoreSlot, index: UInt64) throws(RestorationError) -> [UInt8]? {
        guard let d = FileManager.default.contents(atPath: file(slot, index)) else {
            if access(file(slot, index), F_OK) == 0 { throw errno("cannot read \(file(slot, index))") }
            return nil
        }
        return [UInt8](d)
    }
    func write(_ slot: RestorationStoreSlot, index: UInt64, bytes: UnsafeRawBufferPointer) throws(RestorationError) {
        let tmp = file(slot, index) + ".tmp"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw errno("cannot create \(tmp)") }
        defer { close(fd) }
        if bytes.count > 0, Glibc.write(fd, bytes.baseAddress, bytes.count) != bytes.count { throw errno("cannot write \(tmp)") }
        guard fsync(fd) == 0, rename(tmp, file(slot, index)) == 0 else { throw errno("cannot replace \(file(slot, index))") }
    }
    func move(_ slot: RestorationStoreSlot, index: UInt64, to: RestorationStoreSlot, index toIndex: UInt64) throws(RestorationError) {
        guard rename(file(slot, index), file(to, toIndex)) == 0 else {
            if Glibc.errno == ENOENT { throw .notFound("\(storeDescription): slot \(slot) \(index) is empty") }
            throw errno("cannot move \(slot) \(index)")
        }
    }
    var canLink: Bool { true }
    func link(_ slot: RestorationStoreSlot, index: UInt64, to: RestorationStoreSlot, index toIndex: UInt64) throws(RestorationError) {
        guard let bytes = try read(slot, index: index) else { throw .notFound("\(storeDescription): slot \(slot) \(index) is empty") }
        let failure: RestorationError? = bytes.withUnsafeBytes { b in
            do throws(RestorationError) { try write(to, index: toIndex, bytes: b); return nil } catch { return error }
        }
        if let failure { throw failure }
        links += 1
    }
    func remove(_ slot: RestorationStoreSlot, index: UInt64) throws(RestorationError) {
        if let r = mutex.withLock({ regions.removeValue(forKey: file(slot, index)) }) { munmap(r.baseAddress, r.count) }
        if unlink(file(slot, index)) != 0 && Glibc.errno != ENOENT { throw errno("cannot remove \(file(slot, index))") }
    }
    func list(_ slot: RestorationStoreSlot) throws(RestorationError) -> [UInt64] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return names.compactMap { n -> UInt64? in n.hasPrefix("\(slot)-") ? UInt64(n.dropFirst("\(slot)-".count)) : nil }.sorted()
    }
    func lock() throws(RestorationError) { storeLock.lock() }
    func unlock() { storeLock.unlock() }

    var canMap: Bool { maps }
    func map(_ slot: RestorationStoreSlot, length: Int) throws(RestorationError) -> UnsafeMutableRawBufferPointer {
        let path = file(slot, 0)
        let fd = open(path, O_RDWR | O_CREAT, 0o600)
        guard fd >= 0 else { throw errno("cannot open \(path)") }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw errno("cannot stat \(path)") }
        if Int(st.st_size) < length {
            let rc = posix_fallocate(fd, 0, off_t(length))
            guard rc == 0 else { throw .io("\(storeDescription): cannot reserve \(length) bytes for \(path): \(String(cString: strerror(rc)))") }
        }
        guard let p = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), p != MAP_FAILED else { throw errno("cannot map \(path)") }
        let r = UnsafeMutableRawBufferPointer(start: p, count: length)
        mutex.withLock {
            if let old = regions.updateValue(r, forKey: path) { munmap(old.baseAddress, old.count) }
            mapped.append(slot)
        }
        return r
    }
}

final class StoreMapTests: XCTestCase {
    // Archive order: A, B, B/C, D. A death in B's decode.
    final class Tree {
        let a = Probe("A"), b = Probe("B"), d = Probe("D")
        let c: Probe
        init() {
            c = Probe("C", parent: b)
            for p in [a, b, c, d] {
                let id = p.restorationIdentifier!
                p.onEncode = { try $0.encode(id, forKey: "id") }
            }
        }
        var all: [Probe] { [a, b, c, d] }
        func register(_ e: RestorationEngine) throws { for p in all { try e.register(p) } }
    }

    /// Generations are kept by a store that maps (so its `link` is used), not by one that does not.
    static func engine(_ dir: String, maps: Bool, logs: LogBox? = nil) throws -> (RestorationEngine, DirectoryStore) {
        let store = DirectoryStore(dir, maps: maps)
        var o = RestorationEngine.Options()
        o.crashQuarantine = true
        o.generations = maps ? 2 : 0
        o.log = logs?.handler() ?? { _, _ in }
        return (try RestorationEngine(store: store, options: o), store)
    }

    /// The child: restores the directory's archive and dies by SIGKILL in B's decode.
    func testChildDiesInARecord() throws {
        guard let dir = ProcessInfo.processInfo.environment["RESTORATION_TEST_STORE_DIR"] else {
            throw XCTSkip("runs as the child process of StoreMapTests.testPerObjectQuarantine…")
        }
        let maps = ProcessInfo.processInfo.environment["RESTORATION_TEST_STORE_MAPS"] == "1"
        let (e, _) = try Self.engine(dir, maps: maps)
        let tree = Tree()
        tree.b.onDecode = { _ in
            fflush(stdout)
            _ = raise(SIGKILL)
        }
        try tree.register(e)
        try e.restore()
        XCTFail("the child did not die in B's decode")
    }

    /// Saves the tree into a new directory, then restores it in a child that dies in B.
    func saveAndDie(maps: Bool) throws -> String {
        let dir = try temporaryDirectory(self).path
        do {
            let (e, store) = try Self.engine(dir, maps: maps)
            let tree = Tree()
            try tree.register(e)
            try e.save()
            tree.a.onEncode = { try $0.encode("A2", forKey: "id") }
            try e.save()   // a second save: with generations, the rotation goes through link
            XCTAssertEqual(store.links, maps ? 1 : 0, "the archive became generation 1 through the store's link")
            e.closeSession()
        }
        let r = try runSelf("StoreMapTests/testChildDiesInARecord",
                            environment: ["RESTORATION_TEST_STORE_DIR": dir, "RESTORATION_TEST_STORE_MAPS": maps ? "1" : "0"])
        XCTAssertTrue(r.signaled && r.status == SIGKILL, "the child should die by SIGKILL: \(r.summary)")
        return dir
    }

    func testPerObjectQuarantineWithAStoreThatMaps() throws {
        let dir = try saveAndDie(maps: true)
        let logs = LogBox()
        let (e, store) = try Self.engine(dir, maps: true, logs: logs)
        let tree = Tree()
        try tree.register(e)
        try e.restore()   // a partial restore, not a set-aside
        XCTAssertEqual(e.lastRestoreReason, .recover, "the child died: its session was open")
        XCTAssertEqual(tree.a.decodeCount, 1)
        XCTAssertEqual(tree.d.decodeCount, 1)
        XCTAssertEqual(tree.b.decodeCount, 0, "B, where the last restore died, is quarantined")
        XCTAssertEqual(tree.c.decodeCount, 0)
        XCTAssertEqual(e.lastRestoreSkips.map(\.path), ["B", "B/C"])
        XCTAssertEqual(e.lastRestoreSkips.map(\.reason), [.quarantined, .parentSkipped])
        XCTAssertNotNil(try store.read(.archive, index: 0), "the archive stays in place")
        XCTAssertEqual(try store.list(.crashed), [], "nothing was set aside")
        XCTAssertNotNil(try store.read(.quarantine, index: 0), "the quarantine is kept in the store")
        XCTAssertTrue(store.mapped.contains(.marker), "the crash-loop marker went through map: \(store.mapped)")
        XCTAssertTrue(logs.warnings.contains { $0.contains("quarantined") }, "\(logs.warnings)")
    }

    func testWithoutMapADeathInOneRecordSetsTheArchiveAside() throws {
        let dir = try saveAndDie(maps: false)
        let (e, store) = try Self.engine(dir, maps: false)
        let tree = Tree()
        try tree.register(e)
        XCTAssertThrowsError(try e.restore()) { error in
            guard case .rejected(let m) = error as? RestorationError else { return XCTFail("\(error)") }
            XCTAssertTrue(m.contains("directory store"), m)
        }
        XCTAssertEqual(tree.all.map(\.decodeCount), [0, 0, 0, 0], "nothing restored")
        XCTAssertNil(try store.read(.archive, index: 0), "the archive was set aside")
        XCTAssertEqual(try store.list(.crashed).count, 1)
        XCTAssertEqual(store.mapped, [])
        // The next launch finds no archive (and no generation): a first launch.
        let (f, _) = try Self.engine(dir, maps: false)
        let again = Tree()
        try again.register(f)
        XCTAssertThrowsError(try f.restore()) { XCTAssertEqual(($0 as? RestorationError)?.statusName, "RST_ERR_NOT_FOUND", "\($0)") }
        XCTAssertEqual(f.lastRestoreReason, .firstLaunch)
    }

    /// closeSession() through a mapped session slot: the next restore reads RELAUNCH.
    func testCloseSessionThroughAMappedSession() throws {
        let dir = try temporaryDirectory(self).path
        let (e, store) = try Self.engine(dir, maps: true)
        let p = Probe("P")
        try e.register(p)
        try e.save()
        XCTAssertTrue(store.mapped.contains(.session), "\(store.mapped)")
        e.closeSession()
        let (f, _) = try Self.engine(dir, maps: true)
        try f.register(Probe("P"))
        try f.restore()
        XCTAssertEqual(f.lastRestoreReason, .relaunch)
        withExtendedLifetime(e) {}
    }
}

/// A store that fails on request with its own sentence and status.
final class FailingStore: RestorationStore {
    let inner = RestorationStores.memory(name: "inner")
    var failing: [String: RestorationError] = [:]
    var storeDescription: String { "settings database 'app.db'" }
    private func check(_ op: String) throws(RestorationError) { if let e = failing[op] { throw e } }
    func read(_ slot: RestorationStoreSlot, index: UInt64) throws(RestorationError) -> [UInt8]? {
        try check("read \(slot)")
        return try inner.read(slot, index: index)
    }
    func write(_ slot: RestorationStoreSlot, index: UInt64, bytes: UnsafeRawBufferPointer) throws(RestorationError) {
        try check("write \(slot)")
        try inner.write(slot, index: index, bytes: bytes)
    }
    func move(_ slot: RestorationStoreSlot, index: UInt64, to: RestorationStoreSlot, index toIndex: UInt64) throws(RestorationError) {
        try inner.move(slot, index: index, to: to, index: toIndex)
    }
    func remove(_ slot: RestorationStoreSlot, index: UInt64) throws(RestorationError) {
        try check("remove \(slot)")
        try inner.remove(slot, index: index)
    }
    func list(_ slot: RestorationStoreSlot) throws(RestorationError) -> [UInt64] { try inner.list(slot) }
    func lock() throws(RestorationError) { try check("lock") }
    func unlock() {}
}

final class StoreSentenceTests: XCTestCase {
    func testAStoresSentenceReachesTheEnginesError() throws {
        let store = FailingStore()
        let e = try RestorationEngine(store: store, options: .init(log: { _, _ in }))
        let p = Probe("P")
        p.onEncode = { try $0.encode(1, forKey: "v") }
        try e.register(p)

        // A write: the status and the sentence, with the place named.
        store.failing["write archive"] = .rejected("the table 'state' is read-only for user 'kiosk'")
        XCTAssertThrowsError(try e.save()) { error in
            let err = error as? RestorationError
            XCTAssertEqual(err?.statusName, "RST_ERR_REJECTED", "\(error)")
            XCTAssertTrue(err?.message.contains("the table 'state' is read-only for user 'kiosk'") == true, "\(error)")
            XCTAssertTrue(err?.message.contains("settings database 'app.db'") == true, "\(error)")
        }
        store.failing = [:]
        try e.save()

        // A sentence that names the place already is kept as it is.
        store.failing["read archive"] = .io("settings database 'app.db': disk I/O error reading row 'archive'")
        let f = try RestorationEngine(store: store, options: .init(log: { _, _ in }))
        try f.register(Probe("P"))
        XCTAssertThrowsError(try f.restore()) { error in
            let err = error as? RestorationError
            XCTAssertEqual(err?.statusName, "RST_ERR_IO", "\(error)")
            XCTAssertTrue(err?.message.contains("settings database 'app.db': disk I/O error reading row 'archive'") == true, "\(error)")
            XCTAssertFalse(err?.message.contains("settings database 'app.db': settings database") == true, "the place is named once: \(error)")
        }
        store.failing = [:]

        // The lock, through a discard.
        store.failing["lock"] = .limit("too many connections to 'app.db' (64)")
        XCTAssertThrowsError(try e.discard()) { error in
            XCTAssertEqual((error as? RestorationError)?.statusName, "RST_ERR_LIMIT", "\(error)")
            XCTAssertTrue((error as? RestorationError)?.message.contains("too many connections to 'app.db' (64)") == true, "\(error)")
        }
        store.failing = [:]

        // notFound from remove is an empty slot: success, as RST_ERR_NOT_FOUND in C.
        store.failing["remove archive"] = .notFound("no row 'archive'")
        XCTAssertNoThrow(try e.discard())
        withExtendedLifetime(p) {}
    }
}
