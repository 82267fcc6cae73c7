// Fault injection at the storage seam: the file store wrapped by a store
// that fails its N-th call (N over every store call of the operation), once
// and persistently, for a save, a save that rotates generations, a restore
// and a discard. (The file store's own system calls stay fault-tested by
// FaultInjectionTests and PowerLossTests through FileIO.) After each run:
//   - a failure names the store (its describe);
//   - the archive is the old one or the new one, never neither;
//   - every read was released and every lock unlocked;
//   - a new process restores the old or the new state;
//   - the engine saves again, and the new state restores.
import XCTest
import Foundation
@testable import RestorationCore

/// The file store, failing its `failAt`-th call (and, persistently, every
/// later one), counting holds and locks.
final class FaultyStore: ArchiveStore {
    let inner: FileArchiveStore
    var calls = 0
    var failAt = Int.max
    var persistent = false
    var reads = 0, releases = 0, locks = 0, unlocks = 0
    var describe: String { inner.describe }
    var isShared: Bool { true }
    var canLink: Bool { true }
    var canMap: Bool { true }
    init(_ path: String) { inner = FileArchiveStore(path: path) }

    private func step(_ what: String) throws(RestorationFailure) {
        calls += 1
        if calls == failAt || (persistent && calls > failAt) {
            throw RestorationFailure(.io, "\(describe): injected failure of \(what) (call \(calls))")
        }
    }
    func read(_ slot: StoreSlot, _ index: UInt64) throws(RestorationFailure) -> StoreBytes? {
        try step("read")
        guard let b = try inner.read(slot, index) else { return nil }
        reads += 1
        return StoreBytes(bytes: b.bytes, release: { [self] in releases += 1; b.release() })
    }
    func write(_ slot: StoreSlot, _ index: UInt64, _ bytes: UnsafeRawBufferPointer, whenDurable: (() -> Void)?) throws(RestorationFailure) {
        try step("write")
        try inner.write(slot, index, bytes, whenDurable: whenDurable)
    }
    func move(_ from: StoreSlot, _ fi: UInt64, to: StoreSlot, _ ti: UInt64) throws(RestorationFailure) {
        try step("move")
        try inner.move(from, fi, to: to, ti)
    }
    func link(_ from: StoreSlot, _ fi: UInt64, to: StoreSlot, _ ti: UInt64) throws(RestorationFailure) {
        try step("link")
        try inner.link(from, fi, to: to, ti)
    }
    func remove(_ slot: StoreSlot, _ index: UInt64) throws(RestorationFailure) {
        try step("remove")
        try inner.remove(slot, index)
    }
    func list(_ slot: StoreSlot) throws(RestorationFailure) -> [UInt64] {
        try step("list")
        return try inner.list(slot)
    }
    func lock() throws(RestorationFailure) {
        try step("lock")
        try inner.lock()
        locks += 1
    }
    func unlock() { unlocks += 1; inner.unlock() }
    func map(_ slot: StoreSlot, length: Int) throws(RestorationFailure) -> UnsafeMutableRawBufferPointer {
        try step("map")
        return try inner.map(slot, length: length)
    }
    func discardExtras() throws(RestorationFailure) { try inner.discardExtras() }
}

final class StoreFaultTests: XCTestCase {
    var dir: String!
    var path: String { dir + "/state.rst" }
    override func setUp() { dir = makeTempDir("store-faults") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    enum Op: String, CaseIterable { case save, saveRotating, restore, discard }

    private func engine(_ store: ArchiveStore, _ value: Int64, generations: Int) throws -> (Engine, Counter) {
        var config = Engine.Configuration(generations: generations)
        config.store = store
        let e = Engine(configuration: config)
        e.logHandler = { _, _ in }
        let c = Counter(value)
        _ = try e.register(identifier: "counter", parent: nil, className: nil, behavior: CounterBehavior(counter: c))
        return (e, c)
    }

    private func prepare(_ op: Op) throws {
        for f in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
            try FileManager.default.removeItem(atPath: dir + "/" + f)
        }
        let (e, _) = try counterEngine(path, 111, generations: op == .saveRotating ? 2 : 0)
        try e.save()
        e.destroy()
    }

    /// Runs `op` on a fresh engine over `store`; nil or the failure.
    private func run(_ op: Op, _ store: FaultyStore) -> RestorationFailure? {
        do {
            let (e, _) = try engine(store, 222, generations: op == .saveRotating ? 2 : 0)
            defer { e.destroy() }
            switch op {
            case .save, .saveRotating: try e.save()
            case .restore: try e.restore()
            case .discard: try e.discard()
            }
            return nil
        } catch let f as RestorationFailure { return f } catch { return RestorationFailure(.io, "\(error)") }
    }

    func testEveryStoreCallFails() throws {
        var cases = 0
        for op in Op.allCases {
            try prepare(op)
            let probe = FaultyStore(path)
            XCTAssertNil(run(op, probe), "\(op) without faults")
            let total = probe.calls
            XCTAssertGreaterThan(total, 0)
            for n in 1...total {
                for persistent in [false, true] {
                    try prepare(op)
                    let old = fileBytes(path)
                    let store = FaultyStore(path)
                    store.failAt = n
                    store.persistent = persistent
                    let failure = run(op, store)
                    let context = "\(op): store call \(n) of \(total) fails\(persistent ? " persistently" : " once")"
                    cases += 1
                    if let failure {
                        XCTAssertTrue(failure.message.contains(store.describe), "the failure does not name the store: \(failure): \(context)")
                    }
                    XCTAssertEqual(store.reads, store.releases, "reads not released: \(context)")
                    XCTAssertEqual(store.locks, store.unlocks, "locks not unlocked: \(context)")
                    let now = fileBytes(path)
                    switch op {
                    case .restore:
                        XCTAssertEqual(now, old, "a restore changed the archive: \(context)")
                    case .save, .saveRotating:
                        if failure != nil { XCTAssertEqual(now, old, "a failed save changed the archive: \(context)") }
                    case .discard:
                        if failure != nil { XCTAssertTrue(now == nil || now == old, context) }
                    }
                    switch restoreAsNextProcess(path) {
                    case .success(let v):
                        XCTAssertTrue([111, 222].contains(v), "a new process restored \(v): \(context)")
                    case .failure(let f):
                        // A store that fails every call from the marker's removal on cannot
                        // clear it (nor empty it): the next process takes the restore for a
                        // crash and sets the archive aside, intact (the warning says so).
                        let stuckMarker = op == .restore && persistent && f.status == .rejected
                        XCTAssertTrue((op == .discard && f.status == .notFound) || stuckMarker, "a new process cannot restore: \(f): \(context)")
                    }
                    let (e, _) = try counterEngine(path, 333)
                    try e.save()
                    e.destroy()
                    if case .success(let v) = restoreAsNextProcess(path) { XCTAssertEqual(v, 333, context) } else { XCTFail("cannot restore after saving again: \(context)") }
                }
            }
        }
        print("StoreFaultTests: \(cases) store-fault cases")
        XCTAssertGreaterThan(cases, 20)
    }
}
