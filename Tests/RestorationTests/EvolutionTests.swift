import Foundation
import XCTest
@testable import Restoration

/// docs/EVOLUTION.md in the Swift API.
final class EvolutionSkipsTests: XCTestCase {
    /// A `decodeRestorableState` that throws is reported as such: listed in
    /// the skips with `.decodeFailed` and the error's text, not counted as
    /// restored, no `applicationFinishedRestoringState`.
    func testThrowingDecodeIsAnExplainedSkip() throws {
        struct Broken: Error, CustomStringConvertible { var description: String { "the model is gone" } }
        let a = try RestorationEngine()
        let root = Probe("Root")
        root.onEncode = { try $0.encode(1, forKey: "v") }
        let child = Probe("Child", parent: root, className: "Gone")
        let grandchild = Probe("GC", parent: child)
        let other = Probe("Other", className: "Thing")
        for p in [root, child, grandchild, other] { try a.register(p) }
        let data = try a.saveToData()

        let b = try RestorationEngine()
        b.log = { _, _ in }
        let root2 = Probe("Root")
        root2.onDecode = { _ in throw Broken() }
        try b.register(root2)
        try b.registerRestorationClass(named: "Thing") { _, _ in nil }
        try b.restore(from: data)
        let report = try XCTUnwrap(b.lastRestoreReport)
        XCTAssertEqual(report.archived, 4)
        XCTAssertEqual(report.restored, 0)
        XCTAssertEqual(report.skipped, 4)
        XCTAssertEqual(root2.finishedCount, 0)
        let skips = b.lastRestoreSkips
        XCTAssertEqual(skips.count, report.skipped)
        XCTAssertEqual(skips.map(\.path), ["Root", "Root/Child", "Root/Child/GC", "Other"])
        XCTAssertEqual(skips.map(\.reason), [.decodeFailed, .noFactory, .parentSkipped, .declined])
        XCTAssertEqual(skips.map(\.className), ["", "Gone", "", "Thing"])
        XCTAssertTrue(skips[0].detail.contains("the model is gone"), skips[0].detail)
        XCTAssertTrue(skips[1].detail.contains("class 'Gone'"), skips[1].detail)
        XCTAssertTrue(skips[2].detail.contains("'Root/Child' was skipped"), skips[2].detail)
        XCTAssertEqual(RestorationEngine.SkipReason.declined.name, "RST_SKIP_DECLINED")

        // A clean restore: no skips.
        let c = try RestorationEngine()
        XCTAssertEqual(c.lastRestoreSkips, [])
        c.setFallbackFactory { path, _ in Probe(path.last!) }
        try c.restore(from: data)
        XCTAssertEqual(c.lastRestoreSkips, [])
        XCTAssertEqual(c.lastRestoreReport?.skipped, 0)
    }
}

final class EvolutionReferenceArrayTests: XCTestCase {
    /// A navigation stack of references: a cycle (the stack's screens refer
    /// back to it), decode order, a skipped element as nil, types, paths.
    func testReferenceArraysInCyclesWithSkippedElements() throws {
        let a = try RestorationEngine()
        let nav = Probe("Nav")
        let s1 = Probe("S1", className: "Screen")
        let s2 = Probe("S2", className: "Gone")
        let s3 = Probe("S3", className: "Screen")
        nav.onEncode = { try $0.encodeReferences([s3, s2, s1], forKey: "stack") }
        s1.onEncode = { try $0.encodeReferences([nav], forKey: "owner") }
        s3.onEncode = { try $0.encodeReferences(toPaths: ["Nav", "S1"], forKey: "back") }
        for p in [nav, s1, s2, s3] { try a.register(p) }
        let data = try a.saveToData()

        let b = try RestorationEngine()
        b.log = { _, _ in }
        var order: [String] = []
        var stack: [StateRestoring?]?
        var paths: [String?]?
        let nav2 = Probe("Nav")
        nav2.onDecode = { c in
            order.append("Nav")
            stack = try c.decodeReferences(forKey: "stack")
            paths = try c.decodeReferencePaths(forKey: "stack")
            XCTAssertNil(try c.decodeReferences(forKey: "absent"))
            XCTAssertThrowsError(try c.decodeReferences(Int.self, forKey: "stack"))
        }
        try b.register(nav2)
        try b.registerRestorationClass(named: "Screen") { ids, _ in
            let p = Probe(ids.last!)
            p.onDecode = { c in
                order.append(ids.last!)
                if ids.last == "S3" {
                    let back = try c.decodeReferences(Probe.self, forKey: "back")
                    XCTAssertEqual(back?.count, 2)
                    XCTAssertTrue(back?[0] === nav2)
                }
            }
            return p
        }
        try b.restore(from: data)
        // Nav -> S1 -> Nav is a cycle (archive order); S3 depends on Nav and S1.
        XCTAssertEqual(order, ["Nav", "S1", "S3"])
        XCTAssertEqual(paths ?? [], ["S3", nil, "S1"])
        XCTAssertEqual(stack?.count, 3)
        XCTAssertTrue(stack?[0] === b.object(atPath: "S3"))
        XCTAssertNil(stack?[1] ?? nil, "S2 was skipped")
        XCTAssertEqual(b.lastRestoreSkips.map(\.path), ["S2"])

        // Encoding an unregistered object throws and fails the save.
        let c = try RestorationEngine()
        let lone = Probe("Lone")
        lone.onEncode = { try $0.encodeReferences([Probe("Stranger")], forKey: "k") }
        try c.register(lone)
        XCTAssertThrowsError(try c.saveToData()) { e in
            guard case RestorationError.invalid(let m)? = e as? RestorationError else { return XCTFail("\(e)") }
            XCTAssertTrue(m.contains("element 0"), m)
        }
    }
}

final class EvolutionMigrationTests: XCTestCase {
    /// Three Swift migrations over a nested record; the factory and decode see
    /// the result; a throwing migration skips the record with its children.
    func testMigrationChainInSwift() throws {
        let a = try RestorationEngine()
        let doc = Probe("Doc", className: "Doc")
        doc.onEncode = { c in
            try c.encode("Q3", forKey: "title")
            try c.encodeRecord(forKey: "frame") { r in
                try r.encode(2.0, forKey: "w")
                try r.encode(3.0, forKey: "h")
            }
        }
        let child = Probe("Child", parent: doc)
        try a.register(doc)
        try a.register(child)
        let v0 = try a.saveToData()

        func engine(failing: Bool) throws -> (RestorationEngine, Probe) {
            let b = try RestorationEngine()
            b.log = { _, _ in }
            try b.setClassVersion(3, forClass: "Doc")
            try b.registerMigration(forClass: "Doc", from: 0) { c, from in
                XCTAssertEqual(from, 0)
                XCTAssertEqual(c.classVersion, 0)
                try c.renameKey("title", to: "name")
            }
            try b.registerMigration(forClass: "Doc", from: 1) { c, _ in
                if failing { throw RestorationError.invalid("no frame conversion") }
                _ = try c.decodeRecord(forKey: "frame") { r in
                    let w = try r.decode(Double.self, forKey: "w") ?? 0
                    let h = try r.decode(Double.self, forKey: "h") ?? 0
                    try r.encode(w * h, forKey: "area")
                    try r.removeValue(forKey: "w")
                    try r.removeValue(forKey: "h")
                }
            }
            try b.registerMigration(forClass: "Doc", from: 2) { c, _ in
                XCTAssertEqual(c.allKeys, ["name", "frame"])
                try c.encodeRecord(forKey: "meta") { try $0.encode(true, forKey: "migrated") }
                XCTAssertThrowsError(try c.removeValue(forKey: "nope"))
            }
            XCTAssertThrowsError(try b.registerMigration(forClass: "Doc", from: 0) { _, _ in })
            let made = Probe("Doc")
            try b.registerRestorationClass(named: "Doc") { _, coder in
                XCTAssertEqual(coder.classVersion, 3)
                return made
            }
            b.setFallbackFactory { ids, _ in Probe(ids.last!, parent: made) }
            return (b, made)
        }

        let (b, made) = try engine(failing: false)
        var seen: [String] = []
        made.onDecode = { c in
            XCTAssertEqual(c.classVersion, 3)
            seen = c.allKeys
            XCTAssertEqual(try c.decode(String.self, forKey: "name"), "Q3")
            XCTAssertNil(try c.decode(String.self, forKey: "title"))
            let area = try c.decodeRecord(forKey: "frame") { try $0.decode(Double.self, forKey: "area") }
            XCTAssertEqual(area ?? nil, 6.0)
            let migrated = try c.decodeRecord(forKey: "meta") { try $0.decode(Bool.self, forKey: "migrated") }
            XCTAssertEqual(migrated ?? nil, true)
        }
        try b.restore(from: v0)
        XCTAssertEqual(seen, ["name", "frame", "meta"])
        XCTAssertEqual(b.lastRestoreReport?.skipped, 0)

        let (c, _) = try engine(failing: true)
        try c.restore(from: v0)
        XCTAssertEqual(c.lastRestoreSkips.map(\.reason), [.migrationFailed, .parentSkipped])
        XCTAssertTrue(c.lastRestoreSkips[0].detail.contains("no frame conversion"), c.lastRestoreSkips[0].detail)
    }
}

final class EvolutionDeferredTests: XCTestCase {
    func testATokenCompletedFromAnotherThreadAndAnExpiredOne() throws {
        let a = try RestorationEngine()
        let saved = [Probe("A"), Probe("B")]
        for p in saved { try a.register(p) }
        let data = try a.saveToData()

        let b = try RestorationEngine()
        b.log = { _, _ in }
        var finishedOn: Thread?
        var finishCount = 0
        b.didFinishRestoring = { finishCount += 1; finishedOn = Thread.current }
        var tokenA: RestorationToken?
        var tokenB: RestorationToken?
        let pa = Probe("A"), pb = Probe("B")
        pa.onDecode = { _ in tokenA = try b.extendRestoration(deadlineMilliseconds: 0) }
        pb.onDecode = { _ in tokenB = try b.extendRestoration(deadlineMilliseconds: 30) }
        try b.register(pa)
        try b.register(pb)
        XCTAssertThrowsError(try b.extendRestoration(deadlineMilliseconds: 0)) { e in
            guard case RestorationError.state? = e as? RestorationError else { return XCTFail("\(e)") }
        }
        try b.restore(from: data)
        XCTAssertEqual(finishCount, 0)
        let done = expectation(description: "completed on another thread")
        let t = tokenA
        let worker = Thread {
            do { try t?.complete() } catch { XCTFail("\(error)") }
            done.fulfill()
        }
        worker.start()
        wait(for: [done], timeout: 10)
        XCTAssertEqual(finishCount, 0, "B's token is still open")
        usleep(80_000)
        XCTAssertEqual(b.lastRestoreSkips.map(\.reason), [.expired])
        XCTAssertEqual(b.lastRestoreSkips.first?.path, "B")
        XCTAssertEqual(finishCount, 1)
        XCTAssertTrue(finishedOn === Thread.current)
        XCTAssertEqual(b.lastRestoreReport?.restored, 1)
        XCTAssertEqual(b.lastRestoreReport?.skipped, 1)
        XCTAssertThrowsError(try tokenB?.complete())
        XCTAssertThrowsError(try tokenA?.complete())
    }
}

final class EvolutionFrictionTests: XCTestCase {
    /// Item 7: a restored object the app takes over is handed back with
    /// relinquish(_:) and leaves the archive once the app drops it; with
    /// ownsRestoredObjects false that is the rule from the start.
    func testRestoredObjectsCanBeHandedBackToTheApp() throws {
        let a = try RestorationEngine()
        let detail = Probe("Detail", className: "Detail")
        try a.register(detail)
        let data = try a.saveToData()

        let b = try RestorationEngine()
        var gone = false
        try b.registerRestorationClass(named: "Detail") { ids, _ in
            let p = Probe(ids.last!)
            p.deinitHook = { gone = true }
            return p
        }
        try b.restore(from: data)
        var made = b.object(atPath: "Detail")
        XCTAssertNotNil(made)
        XCTAssertTrue(b.ownsObject(made!))
        try b.relinquish(made!)
        XCTAssertFalse(b.ownsObject(made!))
        XCTAssertTrue(b.isRegistered(made!), "still registered while the app holds it")
        made = nil
        XCTAssertTrue(gone)
        let saved = try RestorationEngine.archiveInfo(from: try b.saveToData())
        XCTAssertEqual(saved.objectCount, 0, "dropped by the app: gone from the archive")
        XCTAssertThrowsError(try b.relinquish(Probe("Stranger")))

        var options = RestorationEngine.Options()
        options.ownsRestoredObjects = false
        let c = try RestorationEngine(options: options)
        var kept: [Probe] = []
        try c.registerRestorationClass(named: "Detail") { ids, _ in
            let p = Probe(ids.last!)
            kept.append(p)   // the app's own owner
            return p
        }
        try c.restore(from: data)
        XCTAssertFalse(c.ownsObject(try XCTUnwrap(c.object(atPath: "Detail"))))
        XCTAssertEqual(try RestorationEngine.archiveInfo(from: try c.saveToData()).objectCount, 1)
        kept.removeAll()
        XCTAssertEqual(try RestorationEngine.archiveInfo(from: try c.saveToData()).objectCount, 0)
    }

    /// Item 7: the Codable coder methods throw RestorationError, as the
    /// typed ones do; an error of the value's own coding becomes .invalid.
    func testCodableMethodsThrowRestorationError() throws {
        struct Bad: Codable {
            struct Nope: Error {}
            init() {}
            init(from decoder: Decoder) throws { throw Nope() }
            func encode(to encoder: Encoder) throws { throw Nope() }
        }
        var encodeError: RestorationError?
        var decodeError: RestorationError?
        try roundTrip(encode: { c in
            do throws(RestorationError) { try c.encode(Bad(), forKey: "bad") } catch { encodeError = error }   // typed: no cast
            try c.encode([1, 2], forKey: "ints")
        }, decode: { c in
            do throws(RestorationError) { _ = try c.decode(Bad.self, forKey: "ints") } catch { decodeError = error }
        })
        guard case .invalid(let m)? = encodeError else { return XCTFail("\(String(describing: encodeError))") }
        XCTAssertTrue(m.contains("Bad.encode(to:) threw"), m)
        XCTAssertNotNil(decodeError)
    }
}

final class EvolutionCarryTests: XCTestCase {
    /// Carried records: records whose class is gone are carried through 3 saves (count
    /// kept across relaunches), with their descendants and references, and
    /// restored normally when the class returns.
    func testCarriedRecordsAcrossThreeSaves() throws {
        let a = try RestorationEngine()
        let root = Probe("Root")
        let card = Probe("Card", parent: root, className: "Card")
        let sub = Probe("Sub", parent: card, className: "Card")
        card.onEncode = { c in
            try c.encode("Q3", forKey: "title")
            try c.encodeReference(root, forKey: "owner")
            try c.encodeReferences([sub, root], forKey: "stack")
        }
        sub.onEncode = { c in try c.encodeReference(card, forKey: "up") }
        for p in [root, card, sub] { try a.register(p) }
        let v0 = try a.saveToData()

        var keep: [Probe] = []
        func engine(carry: UInt32, withClass: Bool) throws -> (RestorationEngine, Probe) {
            var o = RestorationEngine.Options()
            o.carrySaves = carry
            o.log = { _, _ in }
            let e = try RestorationEngine(options: o)
            let r = Probe("Root")
            keep.append(r)
            try e.register(r)
            if withClass {
                try e.registerRestorationClass(named: "Card") { ids, _ in Probe(ids.last!) }
            }
            return (e, r)
        }
        func count(_ d: Data) throws -> Int { try RestorationEngine.archiveInfo(from: d).objectCount }

        // The class is gone: carried through exactly 3 saves.
        let (b, _) = try engine(carry: 3, withClass: false)
        try b.restore(from: v0)
        XCTAssertEqual(b.lastRestoreSkips.map(\.reason), [.noFactory, .parentSkipped])
        XCTAssertEqual(b.core.carriedRecords.map(\.path), ["Root/Card", "Root/Card/Sub"])
        let s1 = try b.saveToData(), s2 = try b.saveToData(), s3 = try b.saveToData(), s4 = try b.saveToData()
        XCTAssertEqual(try [s1, s2, s3, s4].map(count), [3, 3, 3, 1])
        XCTAssertEqual(b.core.carriedRecords.count, 0)

        // Without carrying (1.0): dropped at the next save.
        let (plain, _) = try engine(carry: 0, withClass: false)
        try plain.restore(from: v0)
        XCTAssertEqual(try count(try plain.saveToData()), 1)

        // A relaunch continues the count: s2 has one save left.
        let (c, _) = try engine(carry: 3, withClass: false)
        try c.restore(from: s2)
        XCTAssertEqual(c.core.carriedRecords.map(\.savesLeft), [1, 1])
        let t1 = try c.saveToData()
        XCTAssertEqual(try count(t1), 3)
        let (c2, _) = try engine(carry: 3, withClass: false)
        try c2.restore(from: t1)
        XCTAssertEqual(c2.core.carriedRecords.count, 0)
        XCTAssertEqual(try count(try c2.saveToData()), 1)

        // The class returns: the carried records restore normally, with their values and references.
        let (d, droot) = try engine(carry: 3, withClass: true)
        var title: String?
        var owner: StateRestoring?
        var stack: [String?]?
        var up: String?
        try d.registerRestorationClass(named: "Probe") { _, _ in nil }
        try d.restore(from: s3)
        XCTAssertEqual(d.lastRestoreSkips, [])
        // Read back through a second restore into objects whose decode we control.
        let (e, eroot) = try engine(carry: 0, withClass: false)
        let ecard = Probe("Card", parent: eroot, className: "Card")
        let esub = Probe("Sub", parent: ecard, className: "Card")
        ecard.onDecode = { cd in
            title = try cd.decode(String.self, forKey: "title")
            owner = try cd.decodeReference(forKey: "owner")
            stack = try cd.decodeReferencePaths(forKey: "stack")
        }
        esub.onDecode = { cd in up = try cd.decodeReferencePath(forKey: "up") }
        try e.register(ecard)
        try e.register(esub)
        try e.restore(from: s3)
        XCTAssertEqual(title, "Q3")
        XCTAssertTrue(owner === eroot)
        XCTAssertEqual(stack ?? [], ["Root/Card/Sub", "Root"])
        XCTAssertEqual(up, "Root/Card")
        _ = droot
        _ = keep
    }
}
