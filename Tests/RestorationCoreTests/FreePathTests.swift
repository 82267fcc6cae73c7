import XCTest
@testable import RestorationCore

/// `FreePath` (the path materialize found free, for the factory it invokes)
/// says "free" only where the container's search would find nothing.
final class FreePathTests: XCTestCase {
    struct Plain: ObjectBehavior {
        func encode(_ node: ObjectNode, _ coder: Coder) {}
        func decode(_ node: ObjectNode, _ coder: Coder) {}
        func finished(_ node: ObjectNode) {}
        func released(_ node: ObjectNode) {}
        var instance: UnsafeMutableRawPointer? { nil }
    }

    static let names: [String] = ["", "a", "b", "ab", "o1", "o12", "o123", "abcdefg", "abcdefgh", "abcdefgh1", "abcdefgh2",
                                  "abcdefghijklmnopq", "abcdefghijklmnopr", "é", "e\u{301}", "café", "cafe\u{301}", "ﬁ", "ÅÅÅÅÅÅÅÅÅ"]

    func withKey<T>(_ s: String, _ body: (IdentifierKey) -> T) -> T {
        var s = s
        return s.withUTF8 { body(IdentifierKey(UnsafeRawBufferPointer($0))) }
    }

    func testFreeOnlyWhereTheSearchFindsNothing() throws {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<60 {
            let engine = Engine(configuration: .init())
            let parent = try engine.register(identifier: "p", parent: nil, className: nil, behavior: Plain())
            let other = try engine.register(identifier: "q", parent: nil, className: nil, behavior: Plain())
            let c = NodeRef(parent)
            // Some children first (more than 8 at times: the container's index).
            for n in FreePathTests.names.shuffled(using: &rng).prefix(Int.random(in: 0...12, using: &rng)) where !n.isEmpty {
                _ = try? engine.register(identifier: n, parent: parent, className: nil, behavior: Plain())
            }
            let free = FreePathTests.names.filter { !$0.isEmpty && parent.child(named: $0) == nil }
            guard let name = free.randomElement(using: &rng) else { continue }
            // The remembered key's bytes live until `clear` (in a restore: the archive's name table).
            let stored = UnsafeMutableRawBufferPointer.allocate(byteCount: name.utf8.count, alignment: 1)
            defer { stored.deallocate() }
            _ = stored.initializeMemory(as: UInt8.self, from: name.utf8)
            let k = IdentifierKey(UnsafeRawBufferPointer(stored))
            XCTAssertNil(parent.childRef(key: k))
            engine.registry.freePath.set(c, k)
            XCTAssertTrue(engine.registry.freePath.isFree(k, in: c), name)
            XCTAssertFalse(engine.registry.freePath.isFree(k, in: NodeRef(other)), name)
            // Then 0 to 2 more children, the free name among them at times.
            for _ in 0..<Int.random(in: 0...2, using: &rng) {
                let n = Bool.random(using: &rng) ? name : FreePathTests.names.randomElement(using: &rng)!
                _ = try? engine.register(identifier: n, parent: parent, className: nil, behavior: Plain())
            }
            for n in FreePathTests.names {
                withKey(n) { k in
                    if engine.registry.freePath.isFree(k, in: c) {
                        XCTAssertEqual(n, name)
                        XCTAssertNil(parent.childRef(key: k), n)
                    }
                }
            }
            engine.registry.freePath.clear()
            withKey(name) { k in XCTAssertFalse(engine.registry.freePath.isFree(k, in: c)) }
        }
    }

    /// A factory that registers its object twice, or a sibling of the same
    /// name first, is refused as before.
    func testFactoryDuplicatesAreRefused() throws {
        let saver = Engine(configuration: .init())
        let a = try saver.register(identifier: "A", parent: nil, className: "Host", behavior: Plain())
        _ = try saver.register(identifier: "B", parent: a, className: "Made", behavior: Plain())
        _ = try saver.register(identifier: "C", parent: a, className: "Made", behavior: Plain())
        let bytes = try saver.saveToBytes()

        let restorer = Engine(configuration: .init())
        _ = try restorer.register(identifier: "A", parent: nil, className: "Host", behavior: Plain())
        var messages: [String] = []
        try restorer.registerClass("Made") { req in
            do throws(RestorationFailure) {
                if req.identifier == "C" {
                    _ = try req.engine.register(identifier: "X", parent: req.parent, className: nil, behavior: Plain())
                }
                let n = try req.engine.register(identifier: req.identifier, parent: req.parent, className: "Made", behavior: Plain())
                _ = try req.engine.register(identifier: req.identifier, parent: req.parent, className: "Made", behavior: Plain())
                return n
            } catch {
                messages.append(error.message)
                return req.parent?.child(named: req.identifier)
            }
        }
        try bytes.withUnsafeBytes { try restorer.restore(bytes: $0) }
        XCTAssertEqual(messages, ["the path 'A/B' is already registered", "the path 'A/C' is already registered"])
        XCTAssertEqual(restorer.lastRestoreReport?.restored, 3)
    }
}
