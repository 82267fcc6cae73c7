import XCTest
@testable import RestorationCore

final class PlannerTests: XCTestCase {
    /// Runs the planner over a graph given as parent and reference lists.
    private func order(_ parents: [Int?], _ refs: [[Int]], included: Set<Int>? = nil) -> [Int] {
        let flat = refs.map { $0.map(Int32.init) }
        let storage = flat.map { arr -> UnsafeMutableBufferPointer<Int32> in
            let b = UnsafeMutableBufferPointer<Int32>.allocate(capacity: max(arr.count, 1))
            _ = b.initialize(from: arr)
            return UnsafeMutableBufferPointer(rebasing: b[0..<arr.count])
        }
        defer { storage.forEach { UnsafeMutableBufferPointer(start: $0.baseAddress, count: 1).deallocate() } }
        let backward = refs.enumerated().allSatisfy { (i, r) in r.allSatisfy { $0 < i } }
        return Planner.decodeOrder(count: parents.count,
                                   included: { included?.contains($0) ?? true },
                                   parent: { parents[$0] },
                                   references: { UnsafeBufferPointer(storage[$0]) },
                                   referencesOnlyBackward: backward).map(Int.init)
    }

    func testArchiveOrderWhenReferencesPointBackward() {
        // 0 ─ 1 ─ 2, 0 ─ 3; 3 references 1.
        XCTAssertEqual(order([nil, 0, 1, 0], [[], [], [], [1]]), [0, 1, 2, 3])
    }

    func testReferencedObjectDecodesBeforeItsReferencer() {
        // Roots 0 and 1; 0 references 1, so 1 first, then 0; 2 (child of 0) after 0.
        XCTAssertEqual(order([nil, nil, 0], [[1], [], []]), [1, 0, 2])
    }

    func testForwardReferenceChain() {
        // 0 → 2 → 3 (references), all roots; 1 independent.
        // Ready at start: 1, 3. Earliest member first: 1, then 3, then 2, then 0.
        XCTAssertEqual(order([nil, nil, nil, nil], [[2], [], [3], []]), [1, 3, 2, 0])
    }

    func testCycleDecodesInArchiveOrderAfterItsDependencies() {
        // 0 and 2 reference each other (a cycle); 2 also references 3; 1 is free.
        // SCCs: {0,2} depends on {3}; {1}; {3}.
        // Ready: {1} (min 1), {3} (min 3) → 1; then 3; then {0,2} in archive order.
        XCTAssertEqual(order([nil, nil, nil, nil], [[2], [], [0, 3], []]), [1, 3, 0, 2])
    }

    func testSelfReferenceIsHarmless() {
        XCTAssertEqual(order([nil, 0], [[0], [1]]), [0, 1])
    }

    func testParentChildCycleThroughReference() {
        // Parent 0 references its child 1: a cycle {0,1}; decoded in archive order.
        XCTAssertEqual(order([nil, 0, nil], [[1], [], []]), [0, 1, 2])
    }

    func testExcludedRecordsAndTheirEdgesAreIgnored() {
        // 1 is skipped; 0 references 1 — the edge is ignored.
        XCTAssertEqual(order([nil, nil, 0], [[1], [], []], included: [0, 2]), [0, 2])
    }

    func testDeepChainAndWideFanOutDoNotRecurse() {
        let n = 100_000
        // A chain: each record's parent is the previous one, plus a forward reference from 0 to the last.
        var parents: [Int?] = [nil]
        for i in 1..<n { parents.append(i - 1) }
        var refs = [[Int]](repeating: [], count: n)
        refs[0] = [n - 1]   // forces the general path: one big SCC
        let chain = order(parents, refs)
        XCTAssertEqual(chain, Array(0..<n))
        // A fan-out with forward references between siblings.
        var fanParents: [Int?] = [nil]
        for _ in 1..<n { fanParents.append(0) }
        var fanRefs = [[Int]](repeating: [], count: n)
        fanRefs[1] = [n - 1]
        let fan = order(fanParents, fanRefs)
        XCTAssertEqual(fan.count, n)
        XCTAssertEqual(fan.first, 0)
        XCTAssertLessThan(fan.firstIndex(of: n - 1)!, fan.firstIndex(of: 1)!)
    }
}
