import XCTest
@testable import RestorationCore

/// glibc's malloc_usable_size (not in the Glibc module): the node's chunk.
@_silgen_name("malloc_usable_size") private func mallocUsableSize(_ p: UnsafeMutableRawPointer?) -> Int

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

    /// The node's counts and numbers are stored in 32 bits: depths down a
    /// long chain, slots reused after an unregister, child counts and the
    /// wide-node index (32-bit hashes) through inserts and removals, ASCII
    /// and not; and the node stays one malloc chunk size smaller.
    func testNarrowFieldsKeepTheirValues() throws {
        let e = Engine(configuration: .init())
        var parent = try e.register(identifier: "top", parent: nil, className: "K", behavior: nil)
        XCTAssertLessThanOrEqual(mallocUsableSize(parent.handle), 184)
        for d in 1...300 {
            parent = try e.register(identifier: "d\(d)", parent: parent, className: nil, behavior: nil)
            XCTAssertEqual(parent.depth, d)
        }
        XCTAssertEqual(parent.classID, -1)
        XCTAssertEqual(e.find(path: "top")?.classID, 0)
        let wide = try e.register(identifier: "wide", parent: nil, className: nil, behavior: nil)
        var kids: [ObjectNode] = []
        for i in 0..<2_000 {
            kids.append(try e.register(identifier: i % 3 == 0 ? "é\(i)" : "c\(i)", parent: wide, className: nil, behavior: nil))
        }
        XCTAssertEqual(wide.childCount, 2_000)
        XCTAssertEqual(wide.nonASCIIChildren, 667)
        let freed = Set(stride(from: 0, to: 2_000, by: 2).map { kids[$0].slot })
        for i in stride(from: 0, to: 2_000, by: 2) { try e.unregister(kids[i]) }
        XCTAssertEqual(wide.childCount, 1_000)
        XCTAssertEqual(wide.nonASCIIChildren, 333)
        XCTAssertEqual(kids[10].slot, -1)
        for i in 0..<2_000 {
            let id = i % 3 == 0 ? "é\(i)" : "c\(i)"
            XCTAssertEqual(e.find(path: "wide/" + id) === kids[i], i % 2 == 1, id)
        }
        let again = try e.register(identifier: "again", parent: nil, className: nil, behavior: nil)
        XCTAssertTrue(freed.contains(again.slot))
        XCTAssertEqual(again.identifierCount, 5)
        // The longest identifier: its length still fits.
        let longest = String(repeating: "x", count: RestorationLimits.maxIdentifierBytes)
        let long = try e.register(identifier: longest, parent: wide, className: nil, behavior: nil)
        XCTAssertEqual(long.identifierCount, 255)
        XCTAssertTrue(e.find(path: "wide/" + longest) === long)
        XCTAssertThrowsError(try e.register(identifier: longest + "x", parent: wide, className: nil, behavior: nil))
    }
}
