import XCTest
import Foundation
@testable import RestorationCore

/// A tiny model object whose behavior encodes one int and one reference.
final class Model {
    var value: Int64
    var ref: ObjectNode?
    var decodedRef: String?
    init(_ v: Int64) { value = v }
}

struct ModelBehavior: ObjectBehavior {
    let model: Model
    let recorder: Recorder
    let name: String
    func encode(_ node: ObjectNode, _ coder: Coder) {
        try? coder.encodeInt(key("value"), model.value)
        if let r = model.ref { try? coder.encodeObject(key("ref"), r) }
    }
    func decode(_ node: ObjectNode, _ coder: Coder) {
        recorder.events.append("decode \(name)")
        if let v = try? coder.decodeInt(key("value")) { model.value = v }
        if let r = try? coder.decodeObject(key("ref")) { model.decodedRef = r.path }
    }
    func finished(_ node: ObjectNode) { recorder.events.append("finished \(name)") }
    func released(_ node: ObjectNode) {}
    var instance: UnsafeMutableRawPointer? { nil }
}

final class EngineTests: XCTestCase {
    var dir: String!

    override func setUp() {
        dir = NSTemporaryDirectory() + "rst-core-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: dir)
    }

    func testRoundTripThroughBytesWithMatchingFactoryAndFallback() throws {
        let rec = Recorder()
        let saver = Engine(configuration: .init())
        let a = Model(1), b = Model(2), c = Model(3)
        let na = try saver.register(identifier: "A", parent: nil, className: "Host", behavior: ModelBehavior(model: a, recorder: rec, name: "A"))
        let nb = try saver.register(identifier: "B", parent: na, className: "Made", behavior: ModelBehavior(model: b, recorder: rec, name: "B"))
        _ = try saver.register(identifier: "C", parent: nb, className: "Unknown", behavior: ModelBehavior(model: c, recorder: rec, name: "C"))
        a.ref = nb
        let bytes = try saver.saveToBytes()

        let rec2 = Recorder()
        let restorer = Engine(configuration: .init())
        let a2 = Model(0)
        _ = try restorer.register(identifier: "A", parent: nil, className: "Host", behavior: ModelBehavior(model: a2, recorder: rec2, name: "A"))
        var made: [Model] = []
        try restorer.registerClass("Made") { req in
            let m = Model(0); made.append(m)
            return try? req.engine.register(identifier: req.identifier, parent: req.parent, className: "Made",
                                            behavior: ModelBehavior(model: m, recorder: rec2, name: req.identifier))
        }
        restorer.setFallbackFactory { req in
            let m = Model(0); made.append(m)
            return try? req.engine.register(identifier: req.identifier, parent: req.parent, className: nil,
                                            behavior: ModelBehavior(model: m, recorder: rec2, name: "fallback " + req.identifier))
        }
        try bytes.withUnsafeBytes { try restorer.restore(bytes: $0) }
        XCTAssertEqual(a2.value, 1)
        XCTAssertEqual(a2.decodedRef, "A/B")
        XCTAssertEqual(made.map(\.value), [2, 3])
        // A references its own child B: a cycle {A, B}, decoded in archive order; then C, B's child.
        XCTAssertEqual(rec2.events.filter { $0.hasPrefix("decode") }, ["decode A", "decode B", "decode fallback C"])
        XCTAssertEqual(rec2.events.filter { $0.hasPrefix("finished") }.count, 3)
        XCTAssertEqual(restorer.lastRestoreReport?.restored, 3)
        XCTAssertEqual(restorer.lastRestoreReport?.skipped, 0)
    }

    func testUnproducibleRecordIsSkippedWithDescendantsAndReferencesAreNotFound() throws {
        let rec = Recorder()
        let saver = Engine(configuration: .init())
        let a = Model(1)
        let na = try saver.register(identifier: "A", parent: nil, className: nil, behavior: ModelBehavior(model: a, recorder: rec, name: "A"))
        let ghost = try saver.register(identifier: "Ghost", parent: nil, className: "Nobody", behavior: nil)
        _ = try saver.register(identifier: "Child", parent: ghost, className: nil, behavior: nil)
        a.ref = ghost
        _ = na
        let bytes = try saver.saveToBytes()

        let restorer = Engine(configuration: .init())
        let a2 = Model(0)
        var refError: Status?
        struct Probe: ObjectBehavior {
            let onDecode: (Coder) -> Void
            func encode(_ node: ObjectNode, _ coder: Coder) {}
            func decode(_ node: ObjectNode, _ coder: Coder) { onDecode(coder) }
            func finished(_ node: ObjectNode) {}
            func released(_ node: ObjectNode) {}
            var instance: UnsafeMutableRawPointer? { nil }
        }
        _ = try restorer.register(identifier: "A", parent: nil, className: nil, behavior: Probe { coder in
            a2.value = (try? coder.decodeInt(key("value"))) ?? -1
            do { _ = try coder.decodeObject(key("ref")) } catch let f as RestorationFailure { refError = f.status } catch {}
        })
        try bytes.withUnsafeBytes { try restorer.restore(bytes: $0) }
        XCTAssertEqual(a2.value, 1)
        XCTAssertEqual(refError, .notFound)
        XCTAssertEqual(restorer.lastRestoreReport?.skipped, 2)
        XCTAssertEqual(restorer.lastRestoreReport?.restored, 1)
    }

    func testFileSaveIsPrivateAndRestoreLeavesArchiveInPlace() throws {
        let path = dir + "/state.rst"
        let e = Engine(configuration: .init(archivePath: path))
        _ = try e.register(identifier: "A", parent: nil, className: nil, behavior: nil)
        try e.save()
        let attrs = try FileManager.default.attributesOfItem(atPath: path)
        XCTAssertEqual((attrs[.posixPermissions] as! NSNumber).intValue & 0o777, 0o600)
        try e.restore()
        try e.restore()
        XCTAssertTrue(FileManager.default.fileExists(atPath: path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: FileStore.markerPath(path)))
    }

    func testSaveRefusesSymlinkAndDirectory() throws {
        let target = dir + "/target"
        _ = FileManager.default.createFile(atPath: target, contents: Data("keep".utf8))
        let link = dir + "/link.rst"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let e = Engine(configuration: .init(archivePath: link))
        XCTAssertThrowsError(try e.save()) { XCTAssertEqual(($0 as! RestorationFailure).status, .io) }
        XCTAssertEqual(try String(contentsOfFile: target, encoding: .utf8), "keep")
        let d = dir + "/adir"
        try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: false)
        let e2 = Engine(configuration: .init(archivePath: d))
        XCTAssertThrowsError(try e2.save()) { XCTAssertEqual(($0 as! RestorationFailure).status, .io) }
    }

    func testCrashGuardSetsAsideArchiveOfDeadRestorer() throws {
        let path = dir + "/state.rst"
        let e = Engine(configuration: .init(archivePath: path))
        _ = try e.register(identifier: "A", parent: nil, className: nil, behavior: nil)
        try e.save()
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        // A marker left by a process that no longer exists.
        let dead = CrashGuard.Marker(owner: .init(pid: 999999, start: 1, boot: SystemInfo.bootID),
                                     archive: original.withUnsafeBytes { CrashGuard.identity(of: $0) })
        try CrashGuard.encode(dead).write(toFile: FileStore.markerPath(path), atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try e.restore()) { err in
            let f = err as! RestorationFailure
            XCTAssertEqual(f.status, .rejected)
            XCTAssertTrue(f.message.contains(".crashed-"), f.message)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        let aside = FileStore.siblings(of: path, infix: ".crashed-")
        XCTAssertEqual(aside.count, 1)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: aside[0])), original)
        // Saving and restoring work again; discard removes everything.
        try e.save()
        XCTAssertNoThrow(try e.restore())
        try e.discard()
        XCTAssertEqual(FileStore.stateFiles(of: path), [])
        XCTAssertThrowsError(try e.restore()) { XCTAssertEqual(($0 as! RestorationFailure).status, .notFound) }
    }

    func testMarkerOfALiveProcessIsNotACrash() throws {
        let path = dir + "/state.rst"
        let e = Engine(configuration: .init(archivePath: path))
        _ = try e.register(identifier: "A", parent: nil, className: nil, behavior: nil)
        try e.save()
        let me = CrashGuard.current
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let live = CrashGuard.Marker(owner: me, archive: bytes.withUnsafeBytes { CrashGuard.identity(of: $0) })
        try CrashGuard.encode(live).write(toFile: FileStore.markerPath(path), atomically: true, encoding: .utf8)
        XCTAssertNoThrow(try e.restore())
    }

    func testCallbacksMayRegisterButNotUnregister() throws {
        let saver = Engine(configuration: .init())
        var unregisterStatus: Status?
        struct Hook: ObjectBehavior {
            let body: (ObjectNode, Coder) -> Void
            func encode(_ node: ObjectNode, _ coder: Coder) { body(node, coder) }
            func decode(_ node: ObjectNode, _ coder: Coder) {}
            func finished(_ node: ObjectNode) {}
            func released(_ node: ObjectNode) {}
            var instance: UnsafeMutableRawPointer? { nil }
        }
        let other = try saver.register(identifier: "Other", parent: nil, className: nil, behavior: nil)
        _ = try saver.register(identifier: "A", parent: nil, className: nil, behavior: Hook { node, coder in
            do { try saver.unregister(other) } catch let f as RestorationFailure { unregisterStatus = f.status } catch {}
            _ = try? saver.register(identifier: "Late", parent: nil, className: nil, behavior: nil)
            XCTAssertNotNil(saver.find(path: "Other"))
        })
        _ = try saver.saveToBytes()
        XCTAssertEqual(unregisterStatus, .state)
        XCTAssertNotNil(saver.find(path: "Late"))
    }

    func testEncodeErrorFailsTheSaveAndCoderIsDeadAfterCallback() throws {
        let e = Engine(configuration: .init())
        var kept: Coder?
        struct Enc: ObjectBehavior {
            let body: (Coder) -> Void
            func encode(_ node: ObjectNode, _ coder: Coder) { body(coder) }
            func decode(_ node: ObjectNode, _ coder: Coder) {}
            func finished(_ node: ObjectNode) {}
            func released(_ node: ObjectNode) {}
            var instance: UnsafeMutableRawPointer? { nil }
        }
        _ = try e.register(identifier: "A", parent: nil, className: nil, behavior: Enc { coder in
            kept = coder
            try? coder.encodeInt(key("k"), 1)
            try? coder.encodeInt(key("k"), 2)   // duplicate: fails the save even though ignored
        })
        XCTAssertThrowsError(try e.saveToBytes()) { err in
            let f = err as! RestorationFailure
            XCTAssertEqual(f.status, .duplicate)
            XCTAssertTrue(f.message.contains("'k'") && f.message.contains("'A'"), f.message)
        }
        XCTAssertThrowsError(try kept!.encodeInt(key("x"), 1)) { XCTAssertEqual(($0 as! RestorationFailure).status, .state) }
    }

    /// `ClassFactoryCache`: nothing before a class is stored, then its
    /// answer (a factory, or none), whichever class was asked last.
    func testClassFactoryCacheAnswersEachClassAsStored() {
        var cache = ClassFactoryCache()
        let a = ClassFactory(.closure({ _ in nil }), what: "a")
        let b = ClassFactory(.closure({ _ in nil }), what: "b")
        XCTAssertNil(cache.lookup(7))
        XCTAssertTrue(cache.store(7, a)?.takeUnretainedValue() === a)
        XCTAssertNil(cache.lookup(0))
        XCTAssertNil(cache.store(0, nil))
        XCTAssertTrue(cache.store(UInt32.max - 1, b)?.takeUnretainedValue() === b)
        for ci: UInt32 in [7, 7, 0, 7, UInt32.max - 1, 0, 0, 7] {
            guard let answer = cache.lookup(ci) else { XCTFail("class \(ci) was stored"); continue }
            switch ci {
            case 7: XCTAssertTrue(answer?.takeUnretainedValue() === a)
            case 0: XCTAssertNil(answer)
            default: XCTAssertTrue(answer?.takeUnretainedValue() === b)
            }
        }
        XCTAssertNil(cache.lookup(8))
        XCTAssertNil(cache.lookup(UInt32.max))   // the "no class yet" mark answers nothing
    }
}
