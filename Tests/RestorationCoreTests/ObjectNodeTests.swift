import XCTest
@testable import RestorationCore

/// ObjectNode.swift: one way to call an object, whichever kind of host.
final class ObjectNodeTests: XCTestCase {
    nonisolated(unsafe) static var calls: [String] = []

    func testACallbackTableIsCalledThroughTheSameEntryAsABehavior() throws {
        ObjectNodeTests.calls = []
        var table = ObjectCallbacks(
            encode: { inst, _ in ObjectNodeTests.calls.append("encode \(inst != nil)") },
            decode: nil,
            finished: { _ in ObjectNodeTests.calls.append("finished") },
            release: { _ in ObjectNodeTests.calls.append("release") })
        let e = Engine(configuration: .init())
        let instance = UnsafeMutableRawPointer(bitPattern: 0x1000)
        let h = try withUnsafePointer(to: &table) { t in
            try "Obj".withCString { (id) throws(RestorationFailure) in
                try e.register(cIdentifier: id, parent: nil, cClassName: nil, callbacks: t, instance: instance)
            }
        }
        let node = ObjectNode.from(handle: h)
        XCTAssertEqual(node.instance, instance)
        XCTAssertTrue(node.handles(.encode))
        XCTAssertFalse(node.handles(.decode))
        _ = try e.saveToBytes()
        XCTAssertEqual(ObjectNodeTests.calls, ["encode true"])
        // withUnsafePointer's pointer is only valid in its closure: unregister before it goes.
        try withUnsafePointer(to: &table) { _ in try e.unregister(node) }
        XCTAssertEqual(ObjectNodeTests.calls, ["encode true", "release"])
    }

    func testPathsChildrenAndLookup() throws {
        let e = Engine(configuration: .init())
        let tabs = try e.register(identifier: "Tabs", parent: nil, className: nil, behavior: nil)
        let nav = try e.register(identifier: "Nav", parent: tabs, className: "N", behavior: nil)
        let list = try e.register(identifier: "List", parent: nav, className: nil, behavior: nil)
        XCTAssertEqual(list.path, "Tabs/Nav/List")
        XCTAssertEqual(list.depth, 2)
        XCTAssertTrue(list.parent === nav)
        XCTAssertNil(tabs.parent)
        XCTAssertEqual(nav.className, "N")
        XCTAssertTrue(e.find(path: "Tabs/Nav/List") === list)
        XCTAssertNil(e.find(path: "Tabs//List"))
        // Wide nodes switch to a hash index; lookups still find every child.
        for i in 0..<40 { try e.register(identifier: "c\(i)", parent: tabs, className: nil, behavior: nil) }
        for i in 0..<40 { XCTAssertEqual(e.find(path: "Tabs/c\(i)")?.identifier, "c\(i)") }
        XCTAssertEqual(tabs.children.count, 41)
    }
}
