import XCTest
@testable import RestorationCore

/// A behavior that records what the engine asked of it.
final class Recorder {
    var events: [String] = []
}

struct RecordingBehavior: ObjectBehavior {
    let name: String
    let recorder: Recorder
    var encodeBody: ((Coder) -> Void)? = nil
    var decodeBody: ((Coder) -> Void)? = nil
    func encode(_ node: ObjectNode, _ coder: Coder) { recorder.events.append("encode \(name)"); encodeBody?(coder) }
    func decode(_ node: ObjectNode, _ coder: Coder) { recorder.events.append("decode \(name)"); decodeBody?(coder) }
    func finished(_ node: ObjectNode) { recorder.events.append("finished \(name)") }
    func released(_ node: ObjectNode) { recorder.events.append("release \(name)") }
    var instance: UnsafeMutableRawPointer? { nil }
}

func key(_ s: StaticString) -> KeyBytes {
    KeyBytes(UnsafeRawBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
}

final class RegistryTests: XCTestCase {
    func testPathsAreUniqueAndFindable() throws {
        let e = Engine(configuration: .init())
        let tabs = try e.register(identifier: "Tabs", parent: nil, className: "TabBar", behavior: nil)
        let nav = try e.register(identifier: "Nav", parent: tabs, className: nil, behavior: nil)
        _ = try e.register(identifier: "List", parent: nav, className: nil, behavior: nil)
        XCTAssertEqual(e.find(path: "Tabs/Nav/List")?.path, "Tabs/Nav/List")
        XCTAssertNil(e.find(path: "Tabs/Nav/Nope"))
        XCTAssertNil(e.find(path: "Tabs//Nav"))
        XCTAssertNil(e.find(path: ""))
        XCTAssertThrowsError(try e.register(identifier: "Nav", parent: tabs, className: nil, behavior: nil)) { err in
            let f = err as! RestorationFailure
            XCTAssertEqual(f.status, .duplicate)
            XCTAssertTrue(f.message.contains("Tabs/Nav"), f.message)
        }
        // The same identifier under another parent is fine.
        XCTAssertNoThrow(try e.register(identifier: "Nav", parent: nil, className: nil, behavior: nil))
    }

    func testIdentifierRules() {
        let e = Engine(configuration: .init())
        for bad in ["", "a/b"] {
            XCTAssertThrowsError(try e.register(identifier: bad, parent: nil, className: nil, behavior: nil)) { err in
                XCTAssertEqual((err as! RestorationFailure).status, .invalid)
            }
        }
        // Over the limit: RST_ERR_LIMIT, as restorectl save and the archive reader say.
        XCTAssertThrowsError(try e.register(identifier: String(repeating: "x", count: 256), parent: nil, className: nil, behavior: nil)) { err in
            XCTAssertEqual((err as! RestorationFailure).status, .limit)
        }
        XCTAssertNoThrow(try e.register(identifier: String(repeating: "x", count: 255), parent: nil, className: nil, behavior: nil))
        XCTAssertNoThrow(try e.register(identifier: "Ünïcødé ✓", parent: nil, className: nil, behavior: nil))
    }

    func testUnregisterReleasesDescendantsChildrenFirst() throws {
        let rec = Recorder()
        let e = Engine(configuration: .init())
        let a = try e.register(identifier: "A", parent: nil, className: nil, behavior: RecordingBehavior(name: "A", recorder: rec))
        let b = try e.register(identifier: "B", parent: a, className: nil, behavior: RecordingBehavior(name: "B", recorder: rec))
        _ = try e.register(identifier: "C", parent: b, className: nil, behavior: RecordingBehavior(name: "C", recorder: rec))
        _ = try e.register(identifier: "D", parent: a, className: nil, behavior: RecordingBehavior(name: "D", recorder: rec))
        try e.unregister(a)
        XCTAssertEqual(rec.events.count, 4)
        XCTAssertEqual(rec.events.last, "release A")
        XCTAssertLessThan(rec.events.firstIndex(of: "release C")!, rec.events.firstIndex(of: "release B")!)
        XCTAssertEqual(e.objectCount, 0)
        XCTAssertNil(e.find(path: "A/B"))
        // The path is free again.
        XCTAssertNoThrow(try e.register(identifier: "A", parent: nil, className: nil, behavior: nil))
    }

    func testArchiveOrderIsPreorderInRegistrationOrder() throws {
        let e = Engine(configuration: .init())
        let r1 = try e.register(identifier: "R1", parent: nil, className: nil, behavior: nil)
        let r2 = try e.register(identifier: "R2", parent: nil, className: nil, behavior: nil)
        _ = try e.register(identifier: "X", parent: r2, className: nil, behavior: nil)
        let y = try e.register(identifier: "Y", parent: r1, className: nil, behavior: nil)
        _ = try e.register(identifier: "Z", parent: y, className: nil, behavior: nil)
        _ = try e.register(identifier: "W", parent: r1, className: nil, behavior: nil)
        XCTAssertEqual(e.archiveOrder().map(\.path), ["R1", "R1/Y", "R1/Y/Z", "R1/W", "R2", "R2/X"])
    }

    func testWideFanOutUsesAnIndexAndUnregistersQuickly() throws {
        let e = Engine(configuration: .init())
        let root = try e.register(identifier: "root", parent: nil, className: nil, behavior: nil)
        var kids: [ObjectNode] = []
        for i in 0..<20_000 { kids.append(try e.register(identifier: "c\(i)", parent: root, className: nil, behavior: nil)) }
        XCTAssertEqual(e.find(path: "root/c19999")?.identifier, "c19999")
        for k in kids.reversed() where k.identifier.hasSuffix("7") { try e.unregister(k) }
        XCTAssertNil(e.find(path: "root/c17"))
        XCTAssertNotNil(e.find(path: "root/c18"))
        try e.unregister(root)
        XCTAssertEqual(e.objectCount, 0)
    }

    func testDepthLimit() throws {
        let e = Engine(configuration: .init())
        var parent: ObjectNode? = nil
        for i in 0..<RestorationLimits.maxTreeDepth {
            parent = try e.register(identifier: "n\(i)", parent: parent, className: nil, behavior: nil)
        }
        XCTAssertThrowsError(try e.register(identifier: "deeper", parent: parent, className: nil, behavior: nil)) { err in
            XCTAssertEqual((err as! RestorationFailure).status, .limit)
        }
        // Destroying a 65,536-deep chain must not recurse.
        e.destroy()
        XCTAssertEqual(e.objectCount, 0)
    }
}
