import Foundation
import XCTest
@testable import Restoration

final class RegistrationTests: XCTestCase {

    // MARK: weak registration

    func testADeallocatedObjectLeavesTheEngine() throws {
        let engine = try RestorationEngine()
        let keep = Probe("Keep")
        try engine.register(keep)
        weak var weakGone: Probe?
        var deinited = false
        do {
            let gone = Probe("Gone")
            gone.deinitHook = { deinited = true }
            gone.onEncode = { _ in XCTFail("a deallocated object is never encoded") }
            try engine.register(gone)
            weakGone = gone
            XCTAssertTrue(engine.isRegistered(gone))
            XCTAssertEqual(engine.path(of: gone), "Gone")
        }
        XCTAssertTrue(deinited, "the engine does not keep a registered object alive")
        XCTAssertNil(weakGone)
        XCTAssertEqual(engine.registeredObjects.map(\.path), ["Keep"])
        XCTAssertNil(engine.registeredObject(atPath: "Gone"))

        // The archive holds only the live object.
        let data = try engine.saveToData()
        XCTAssertEqual(try RestorationEngine.archiveInfo(from: data).objectCount, 1)
    }

    func testASaveSweepsDeadObjectsFirst() throws {
        let engine = try RestorationEngine()
        try engine.register(Probe("Keep"))   // dies at once
        var p: Probe? = Probe("Other")
        try engine.register(p!)
        p = nil
        let data = try engine.saveToData()
        XCTAssertEqual(try RestorationEngine.archiveInfo(from: data).objectCount, 0)
        XCTAssertEqual(engine.registry.count, 0)
    }

    func testANewObjectTakesTheDeadObjectsPath() throws {
        let engine = try RestorationEngine()
        var first: Probe? = Probe("Screen")
        try engine.register(first!)
        first = nil
        let second = Probe("Screen")
        try engine.register(second)   // no duplicate: the dead one is swept out of the way
        XCTAssertTrue(engine.object(atPath: "Screen") === second)
    }

    func testDescendantsLeaveWithADeadParent() throws {
        let engine = try RestorationEngine()
        var parent: Probe? = Probe("Parent")
        try engine.register(parent!)
        let child = Probe("Child", parent: parent)
        try engine.register(child)
        XCTAssertEqual(engine.path(of: child), "Parent/Child")
        parent = nil
        engine.removeDeallocatedObjects()
        XCTAssertFalse(engine.isRegistered(child))
        XCTAssertTrue(engine.registeredObjects.isEmpty)
    }

    func testRegistrationSweepsPeriodically() throws {
        let engine = try RestorationEngine()
        for i in 0..<500 { try engine.register(Probe("P\(i)")) }   // each dies at once
        XCTAssertLessThan(engine.registry.count, 200, "dead registrations are swept while registering")
    }

    func testADeallocatedObjectInsideACallbackLeavesAtTheNextOperation() throws {
        let engine = try RestorationEngine()
        var victim: Probe? = Probe("Victim")
        let killer = Probe("Killer")
        killer.onEncode = { _ in
            victim = nil
            // Unregistering is not allowed inside a save: the sweep waits.
            engine.removeDeallocatedObjects()
        }
        try engine.register(killer)
        try engine.register(victim!)
        let data = try engine.saveToData()
        XCTAssertEqual(try RestorationEngine.archiveInfo(from: data).objectCount, 2, "Killer, then Victim (an empty record)")
        XCTAssertEqual(engine.registeredObjects.map(\.path), ["Killer"])
    }

    // MARK: registration rules

    func testRegisterIsIdempotentAndUnregisterRemovesTheSubtree() throws {
        let engine = try RestorationEngine()
        let tabs = Probe("Tabs", className: "TabBar")
        let list = Probe("List", parent: tabs)
        try engine.register(tabs)
        try engine.register(tabs)   // again, same place: nothing happens
        try engine.register(list)
        XCTAssertEqual(engine.registeredObject(atPath: "Tabs")?.className, "TabBar")
        XCTAssertEqual(engine.registeredObjects.map(\.path), ["Tabs", "Tabs/List"])
        try engine.unregister(tabs)
        XCTAssertFalse(engine.isRegistered(list))
        XCTAssertThrowsError(try engine.unregister(tabs)) { e in
            guard case RestorationError.notFound? = e as? RestorationError else { return XCTFail("\(e)") }
        }
    }

    func testParentMustBeRegisteredFirst() throws {
        let engine = try RestorationEngine()
        let tabs = Probe("Tabs")
        let list = Probe("List", parent: tabs)
        XCTAssertThrowsError(try engine.register(list)) { e in
            guard case RestorationError.invalid(let m)? = e as? RestorationError else { return XCTFail("\(e)") }
            XCTAssertTrue(m.contains("register the parent first"), m)
        }
        try engine.register(tabs)
        try engine.register(list)
        XCTAssertEqual(engine.path(of: list), "Tabs/List")
    }

    func testObjectRegisteredElsewhereIsADuplicate() throws {
        let engine = try RestorationEngine()
        let p = Probe("A")
        try engine.register(p)
        p.restorationIdentifier = "B"
        XCTAssertThrowsError(try engine.register(p)) { e in
            guard case RestorationError.duplicate(let m)? = e as? RestorationError else { return XCTFail("\(e)") }
            XCTAssertTrue(m.contains("'A'"), m)
        }
        let other = Probe("A")
        XCTAssertThrowsError(try engine.register(other)) { e in
            guard case RestorationError.duplicate? = e as? RestorationError else { return XCTFail("\(e)") }
        }
    }

    func testFinishedRunsOnEveryRestoredObjectThenDidFinish() throws {
        let a = try RestorationEngine()
        try a.register(Probe("X"))
        let keepA = Probe("Y")
        try a.register(keepA)
        let data = try a.saveToData()
        var events: [String] = []
        let b = try RestorationEngine(options: .init(didFinishRestoring: { events.append("did") }))
        let y = Probe("Y")
        y.onDecode = { _ in events.append("decode") }
        try b.register(y)
        try b.restore(from: data)
        XCTAssertEqual(y.finishedCount, 1)
        XCTAssertEqual(events, ["decode", "did"])
        XCTAssertEqual(b.lastRestoreReport, RestorationEngine.RestoreReport(archived: 1, restored: 1, skipped: 0))
    }

    // MARK: restoration classes

    final class Detail: StateRestoring {
        let restorationIdentifier: String?
        var country = ""
        var objectRestorationClass: RestorationClass? { .type(DetailRestorer.self) }
        static var created = 0
        init(_ id: String) { restorationIdentifier = id; Detail.created += 1 }
        func encodeRestorableState(with coder: RestorationCoder) throws { try coder.encode(country, forKey: "country") }
        func decodeRestorableState(with coder: RestorationCoder) throws { country = try coder.decode(String.self, forKey: "country") ?? "" }
    }

    enum DetailRestorer: ObjectRestoration {
        nonisolated(unsafe) static var paths: [[String]] = []
        static func object(withRestorationIdentifierPath path: [String], coder: RestorationCoder) -> StateRestoring? {
            paths.append(path)
            // The factory's coder is readable.
            guard (try? coder.decode(String.self, forKey: "country")) != nil else { return nil }
            return Detail(path.last!)
        }
    }

    func testRestorationClassesCreateOwnedObjects() throws {
        let a = try RestorationEngine()
        let nav = Probe("Nav")
        try a.register(nav)
        let detailParent = Probe("Inner", parent: nav, className: "Inner")   // no class registered for it
        try a.register(detailParent)
        // The first launch's detail screen, under Nav, of class DetailRestorer.
        final class Placed: StateRestoring {
            let restorationIdentifier: String? = "Detail"
            weak var parent: StateRestoring?
            var restorationParent: StateRestoring? { parent }
            var objectRestorationClass: RestorationClass? { .type(DetailRestorer.self) }
            func encodeRestorableState(with coder: RestorationCoder) throws { try coder.encode("NO", forKey: "country") }
        }
        let placed = Placed()
        placed.parent = nav
        try a.register(placed)
        let data = try a.saveToData()
        XCTAssertEqual(DetailRestorer.restorationClassName, "DetailRestorer")

        let b = try RestorationEngine()
        let logs = LogBox()
        b.log = logs.handler()
        try b.registerRestorationClass(DetailRestorer.self)
        XCTAssertThrowsError(try b.registerRestorationClass(DetailRestorer.self)) { e in
            guard case RestorationError.duplicate? = e as? RestorationError else { return XCTFail("\(e)") }
        }
        let nav2 = Probe("Nav")
        try b.register(nav2)
        DetailRestorer.paths = []
        try b.restore(from: data)
        XCTAssertEqual(DetailRestorer.paths, [["Nav", "Detail"]])
        let report = try XCTUnwrap(b.lastRestoreReport)
        XCTAssertEqual(report.archived, 3)
        XCTAssertEqual(report.restored, 2)
        XCTAssertEqual(report.skipped, 1, "Nav/Inner has a class nobody provides")

        // The engine owns what the factory made: nothing else holds it.
        weak let restored = engine(b, object: "Nav/Detail") as? Detail
        XCTAssertNotNil(restored)
        XCTAssertEqual(restored?.country, "NO")
        XCTAssertEqual(b.registeredObject(atPath: "Nav/Detail")?.className, "DetailRestorer")
        XCTAssertTrue(b.registry.isOwned(restored!))
        // Unregistering it ends the engine's ownership.
        try b.unregister(restored!)
        XCTAssertNil(restored)
    }

    private func engine(_ e: RestorationEngine, object path: String) -> StateRestoring? { e.object(atPath: path) }

    func testFactoryObjectWithTheWrongIdentifierIsDeclined() throws {
        let a = try RestorationEngine()
        let root = Probe("Root", className: "Thing")
        try a.register(root)
        let data = try a.saveToData()

        let b = try RestorationEngine()
        let logs = LogBox()
        b.log = logs.handler()
        try b.registerRestorationClass(named: "Thing") { _, _ in Probe("NotRoot") }
        var fallbackAsked: [String] = []
        b.setFallbackFactory { path, _ in
            fallbackAsked = path
            return Probe(path.last!)
        }
        try b.restore(from: data)
        XCTAssertTrue(logs.warnings.contains { $0.contains("'NotRoot'") && $0.contains("declined") }, "\(logs.warnings)")
        XCTAssertEqual(fallbackAsked, ["Root"], "the fallback is asked next")
        XCTAssertNotNil(b.object(atPath: "Root"))
        XCTAssertEqual(b.registeredObject(atPath: "Root")?.className, "Thing", "the archived class is kept")

        // Without a fallback the record is skipped.
        let c = try RestorationEngine()
        c.log = { _, _ in }
        try c.registerRestorationClass(named: "Thing") { _, _ in Probe("Wrong") }
        try c.restore(from: data)
        XCTAssertEqual(c.lastRestoreReport?.skipped, 1)
        XCTAssertNil(c.object(atPath: "Root"))
    }
}

final class ThreadingTests: XCTestCase {
    /// Registrations, saves and restores from several threads at once
    /// neither deadlock nor lose objects.
    func testConcurrentUse() throws {
        let engine = try RestorationEngine()
        let root = Probe("Root")
        try engine.register(root)
        let lock = NSLock()
        var kept: [Probe] = []
        var failures: [Error] = []
        DispatchQueue.concurrentPerform(iterations: 8) { t in
            do {
                for i in 0..<50 {
                    let p = Probe("T\(t)-\(i)", parent: root)
                    p.onEncode = { try $0.encode(i, forKey: "i") }
                    try engine.register(p)
                    if i % 2 == 0 { lock.lock(); kept.append(p); lock.unlock() }
                    if i % 10 == 0 {
                        let data = try engine.saveToData()
                        try engine.restore(from: data)
                    }
                }
            } catch {
                lock.lock(); failures.append(error); lock.unlock()
            }
        }
        XCTAssertTrue(failures.isEmpty, "\(failures)")
        let data = try engine.saveToData()
        XCTAssertEqual(try RestorationEngine.archiveInfo(from: data).objectCount, 1 + 8 * 25, "the odd ones deallocated")
        XCTAssertEqual(kept.count, 200)
    }
}
