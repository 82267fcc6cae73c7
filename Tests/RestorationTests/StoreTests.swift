// The Swift API's storage door: an engine on the memory store and on a
// host's own store (a dictionary), generations and fallback through it,
// the host's errors naming its place, and the checks of init(store:).
import Foundation
import XCTest
import Restoration

/// A host's store: slots in a dictionary, failing writes on request.
final class DictionaryStore: RestorationStore {
    var slots: [String: [UInt8]] = [:]
    var failWrites = false
    var locks = 0, unlocks = 0
    let storeDescription = "dictionary store 'test'"
    private func key(_ s: RestorationStoreSlot, _ i: UInt64) -> String { "\(s.rawValue)/\(i)" }
    func read(_ slot: RestorationStoreSlot, index: UInt64) throws(RestorationError) -> [UInt8]? { slots[key(slot, index)] }
    func write(_ slot: RestorationStoreSlot, index: UInt64, bytes: UnsafeRawBufferPointer) throws(RestorationError) {
        if failWrites { throw RestorationError.io("the disk of the dictionary is full") }
        slots[key(slot, index)] = Array(bytes)
    }
    func move(_ slot: RestorationStoreSlot, index: UInt64, to: RestorationStoreSlot, index toIndex: UInt64) throws(RestorationError) {
        guard let b = slots.removeValue(forKey: key(slot, index)) else { throw RestorationError.notFound("nothing at \(key(slot, index))") }
        slots[key(to, toIndex)] = b
    }
    func remove(_ slot: RestorationStoreSlot, index: UInt64) throws(RestorationError) { slots[key(slot, index)] = nil }
    func list(_ slot: RestorationStoreSlot) throws(RestorationError) -> [UInt64] {
        slots.keys.compactMap { k -> UInt64? in
            let parts = k.split(separator: "/")
            return parts[0] == "\(slot.rawValue)" ? UInt64(parts[1]) : nil
        }.sorted()
    }
    func lock() throws(RestorationError) { locks += 1 }
    func unlock() { unlocks += 1 }
}

final class StoreTests: XCTestCase {
    private func engine(_ store: RestorationStore, _ value: Int, generations: Int = 0) throws -> (RestorationEngine, Probe) {
        var o = RestorationEngine.Options()
        o.generations = generations
        let e = try RestorationEngine(store: store, options: o)
        let p = Probe("P")
        p.onEncode = { try $0.encode(value, forKey: "v") }
        try e.register(p)
        return (e, p)
    }

    private func restored(_ store: RestorationStore, generations: Int = 0) throws -> (Int, RestorationEngine.RestoreReason) {
        var o = RestorationEngine.Options()
        o.generations = generations
        let e = try RestorationEngine(store: store, options: o)
        let p = Probe("P")
        var got = -1
        p.onDecode = { got = try $0.decode(Int.self, forKey: "v") ?? -1 }
        try e.register(p)
        try e.restore()
        return (got, e.lastRestoreReason)
    }

    func testMemoryStoreRoundTrip() throws {
        let store = RestorationStores.memory()
        let (e, p) = try engine(store, 5)
        try e.save()
        XCTAssertEqual(try restored(store).0, 5)
        withExtendedLifetime(p) {}
    }

    func testHostStoreGenerationsFallbackAndErrors() throws {
        let store = DictionaryStore()
        for v in 1...3 {
            let (e, p) = try engine(store, v, generations: 2)
            try e.save()
            withExtendedLifetime(p) {}
        }
        XCTAssertEqual(try store.list(.generation), [1, 2])
        XCTAssertEqual(try restored(store).0, 3)
        // a corrupt archive: FALLBACK to generation 1, the archive set aside intact
        try store.write(.archive, index: 0, bytes: UnsafeRawBufferPointer(start: nil, count: 0))
        let (v, reason) = try restored(store, generations: 2)
        XCTAssertEqual(v, 2)
        XCTAssertEqual(reason, .fallback)
        XCTAssertEqual(try store.list(.invalid).count, 1)
        XCTAssertEqual(store.locks, store.unlocks)
        // a failing write: the host's sentence, naming its place
        store.failWrites = true
        let (e, p) = try engine(store, 9)
        XCTAssertThrowsError(try e.save()) { error in
            let m = (error as? RestorationError)?.message ?? ""
            XCTAssertTrue(m.contains("dictionary store 'test'") && m.contains("the disk of the dictionary is full"), m)
        }
        withExtendedLifetime(p) {}
    }

    func testStoreAndPathAreExclusiveAndPathsChecked() throws {
        XCTAssertThrowsError(try RestorationEngine(store: RestorationStores.memory(), options: .init(archivePath: "/tmp/x.rst")))
        XCTAssertThrowsError(try RestorationStores.file("/tmp/"))
        let dir = try temporaryDirectory(self)
        let store = try RestorationStores.file(dir.path + "/f.rst")
        let (e, p) = try engine(store, 4)
        try e.save()
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.path + "/f.rst"))
        XCTAssertEqual(try restored(RestorationStores.file(dir.path + "/f.rst")).0, 4)
        withExtendedLifetime(p) {}
    }
}
