// The file store maps an archive read-only for a restore (no private copy):
// a save or a discard of the same archive while the restore runs from the
// mapping leaves its bytes as they were (the engine replaces an archive by
// rename, never in place), and a file under a page, or one that cannot be
// mapped, is read instead.
import XCTest
import Foundation
@testable import RestorationCore
#if canImport(Glibc)
import Glibc
#endif

/// A counter whose decode runs `during` once, before it decodes.
struct HookBehavior: ObjectBehavior {
    let counter: Counter
    let during: () -> Void
    func encode(_ node: ObjectNode, _ coder: Coder) {
        try? coder.encodeInt(key("value"), counter.value)
        let text = Array("a text long enough to make the archive span pages \(counter.value)".utf8)
        text.withUnsafeBytes { try? coder.encodeString(key("text"), $0) }
    }
    func decode(_ node: ObjectNode, _ coder: Coder) {
        during()
        if let v = try? coder.decodeInt(key("value")) { counter.value = v }
    }
    func finished(_ node: ObjectNode) {}
    func released(_ node: ObjectNode) {}
    var instance: UnsafeMutableRawPointer? { nil }
}

final class MappedArchiveTests: XCTestCase {
    var dir: String!
    var path: String { dir + "/state.rst" }
    let count = 200

    override func setUp() { dir = makeTempDir("mapped") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    /// An engine for `path` whose objects all hold `value`; the first decode runs `during`.
    func engine(_ value: Int64, during: @escaping () -> Void = {}) throws -> (Engine, [Counter]) {
        let e = Engine(configuration: .init(archivePath: path))
        var once = false
        let hook = { if !once { once = true; during() } }
        var counters: [Counter] = []
        for i in 0..<count {
            let c = Counter(value)
            counters.append(c)
            _ = try e.register(identifier: "object\(i)", parent: nil, className: nil, behavior: HookBehavior(counter: c, during: hook))
        }
        return (e, counters)
    }

    func saveValues(_ value: Int64) throws {
        let (e, _) = try engine(value)
        defer { e.destroy() }
        try e.save()
    }

    func testTheArchiveIsMappedAndSurvivesASaveDuringTheRestore() throws {
        try saveValues(1)
        let size = try XCTUnwrap(fileBytes(path)).count
        XCTAssertGreaterThanOrEqual(size, FileStore.pageSize, "the archive must span a page to be mapped")
        let held = try XCTUnwrap(FileArchiveStore(path: path).read(.archive, 0))
        XCTAssertTrue(held.isImmutable, "an archive of \(size) bytes was not mapped")
        held.release()

        var saved: RestorationFailure?
        let (r, counters) = try engine(-1) {
            // Another engine (as another process would) saves over the archive mid-restore.
            do {
                let (other, _) = try self.engine(2)
                defer { other.destroy() }
                try other.save()
            } catch { saved = error as? RestorationFailure ?? RestorationFailure(.io, "\(error)") }
        }
        defer { r.destroy() }
        try r.restore()
        XCTAssertNil(saved)
        XCTAssertEqual(Set(counters.map(\.value)), [1], "the restore decoded bytes the save wrote")
        let (next, later) = try engine(-1)
        defer { next.destroy() }
        try next.restore()
        XCTAssertEqual(Set(later.map(\.value)), [2], "the save during the restore was lost")
    }

    func testADiscardDuringTheRestoreLeavesTheMappingIntact() throws {
        try saveValues(3)
        var discarded: RestorationFailure?
        let (r, counters) = try engine(-1) {
            let other = Engine(configuration: .init(archivePath: self.path))
            defer { other.destroy() }
            do { try other.discard() } catch { discarded = error as? RestorationFailure ?? RestorationFailure(.io, "\(error)") }
        }
        defer { r.destroy() }
        try r.restore()
        XCTAssertNil(discarded)
        XCTAssertEqual(Set(counters.map(\.value)), [3], "the restore did not decode the mapped archive")
        XCTAssertNil(fileBytes(path), "the discard left the archive")
    }

    func testAFileUnderAPageOrOneThatCannotBeMappedIsRead() throws {
        try saveValues(4)
        let whole = try XCTUnwrap(fileBytes(path))
        // mmap refused (a file system that cannot map): read instead, same bytes.
        let noMap = RuleIO { c, _ in c.op == .mmap ? .fail(ENODEV) : nil }
        let held = try FileIO.withInterceptor(noMap) { try XCTUnwrap(FileStore.readHeld(path)) }
        XCTAssertFalse(held.isImmutable)
        XCTAssertEqual([UInt8](held.bytes), whole)
        held.release()
        XCTAssertTrue(noMap.seen.contains(.read), "\(noMap.seen)")

        let small = dir + "/small.rst"
        XCTAssertTrue(FileManager.default.createFile(atPath: small, contents: Data(whole.prefix(100))))
        let watch = RuleIO { _, _ in nil }
        let s = try FileIO.withInterceptor(watch) { try FileStore.readHeld(small) }
        XCTAssertFalse(s.isImmutable)
        XCTAssertEqual([UInt8](s.bytes), Array(whole.prefix(100)))
        s.release()
        XCTAssertFalse(watch.counts.keys.contains(.mmap), "a file under a page was mapped")
    }
}

extension MappedArchiveTests {
    /// A mapped archive that fails validation is released and set aside as
    /// an unmapped one is: the restore says it is corrupt, the file is moved
    /// to an invalid copy byte for byte, and the next save writes a new one.
    func testACorruptMappedArchiveIsSetAsideIntact() throws {
        try saveValues(5)
        var bytes = try XCTUnwrap(fileBytes(path))
        XCTAssertGreaterThanOrEqual(bytes.count, FileStore.pageSize)
        bytes[bytes.count / 2] ^= 0xFF
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        let (r, counters) = try engine(-1)
        defer { r.destroy() }
        var failure: RestorationFailure?
        do { try r.restore() } catch { failure = error }
        XCTAssertEqual(failure?.status, .corrupt, failure?.message ?? "the corrupt archive restored")
        XCTAssertEqual(Set(counters.map(\.value)), [-1])
        let invalid = FileStore.siblings(of: path, infix: FileStore.invalidInfix)
        XCTAssertEqual(invalid.count, 1, "\(invalid)")
        XCTAssertEqual(invalid.first.flatMap(fileBytes), bytes)
        try r.save()
        let (next, later) = try engine(-1)
        defer { next.destroy() }
        try next.restore()
        XCTAssertEqual(Set(later.map(\.value)), [-1])
    }
}
