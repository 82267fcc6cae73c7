import XCTest
@testable import RestorationCore
import RestorationArchive

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

    /// The planner's fast paths (archive order, acyclic Kahn, general SCC)
    /// agree with a direct transcription of the definition on random graphs.
    func testMatchesDefinitionOnRandomGraphs() {
        var rng = SplitMix(seed: 0x5EED)
        for round in 0..<400 {
            let n = 1 + Int(rng.next() % 40)
            var parents: [Int?] = []
            var refs: [[Int]] = []
            for i in 0..<n {
                parents.append(i == 0 || rng.next() % 4 == 0 ? nil : Int(rng.next() % UInt64(i)))
                var r: [Int] = []
                let k = Int(rng.next() % 4)
                for _ in 0..<k {
                    // Mostly backward, some forward, a few out of range or self.
                    switch rng.next() % 10 {
                    case 0: r.append(n + Int(rng.next() % 3))
                    case 1: r.append(i)
                    case 2...4: r.append(Int(rng.next() % UInt64(n)))
                    default: r.append(i == 0 ? 0 : Int(rng.next() % UInt64(i)))
                    }
                }
                refs.append(r)
            }
            let inc: Set<Int>? = round % 3 == 0 ? Set((0..<n).filter { _ in rng.next() % 5 != 0 }) : nil
            XCTAssertEqual(order(parents, refs, included: inc), definition(parents, refs, included: inc), "round \(round)")
        }
    }

    /// `DecodePlan`: the order planned before materialize, from the records
    /// it may produce, is the order planned after it from the records it
    /// produced — reused when materialize produced all of them, planned
    /// again when it skipped some — on random archives with forward
    /// references, cycles, records skipped before and during materialize.
    func testAPlanMadeBeforeMaterializeAgreesWithOneMadeAfter() throws {
        let e = Engine(configuration: .init())
        let node = NodeRef(try e.register(identifier: "N", parent: nil, className: nil, behavior: nil))
        var rng = SplitMix(seed: 0xD3C0DE)
        for round in 0..<300 {
            let n = 1 + Int(rng.next() % 40)
            var w = ArchiveWriter()
            var parents: [Int?] = []
            for i in 0..<n {
                let parent: Int? = i == 0 || rng.next() % 4 == 0 ? nil : Int(rng.next() % UInt64(i))
                parents.append(parent)
                var id = "r\(i)"
                let ident = id.withUTF8 { w.name(UnsafeRawBufferPointer($0)) }
                w.beginObject(identifier: ident, parent: parent, className: nil)
                for k in 0..<Int(rng.next() % 4) {
                    // Mostly backward, some forward, some to itself.
                    let t: Int
                    switch rng.next() % 10 {
                    case 0: t = i
                    case 1...4: t = Int(rng.next() % UInt64(n))
                    default: t = i == 0 ? 0 : Int(rng.next() % UInt64(i))
                    }
                    var name = "k\(k)"
                    let key = name.withUTF8 { w.key(UnsafeRawBufferPointer($0)) }
                    try w.writeObject(key, record: t)
                }
                try w.endObject()
            }
            let reader = try ArchiveReader(bytes: w.finish(info: ArchiveInfo(objectCount: UInt64(n))))
            let session = RestoreSession(count: n)
            // Skipped before materialize (migrate, quarantine).
            for r in 0..<n where rng.next() % 8 == 0 { session.state[r] = .skipped }
            let plan = DecodePlan(reader: reader, state: session.state)
            // Materialize: parents first; a record whose parent was skipped is
            // skipped; in every other round some records are declined.
            let declines = round % 2 == 1
            for r in 0..<n where session.state[r] != .skipped {
                if let p = parents[r], session.state[p] != .materialized {
                    session.state[r] = .skipped
                } else if declines && rng.next() % 6 == 0 {
                    session.state[r] = .skipped
                } else {
                    session.materialize(r, node)
                }
            }
            let got = plan.order(reader: reader, state: session.state, materialized: session.materializedCount)
            XCTAssertEqual(got, Planner.decodeOrder(reader: reader, state: session.state), "round \(round)")
            XCTAssertEqual(got.count, session.materializedCount, "round \(round)")
        }
    }

    /// The acyclic path's ready set gives the smallest member first, as a
    /// sorted set does, at every size of level (one word to four levels).
    func testReadySetAgreesWithASortedSet() {
        var rng = SplitMix(seed: 0xB175)
        for count in [1, 2, 63, 64, 65, 4_095, 4_096, 4_097, 262_144, 262_145, 300_000] {
            var set = ReadySet(count: count)
            defer { set.release() }
            var model = Set<Int>()
            for step in 0..<3_000 {
                if model.isEmpty || rng.next() % 3 != 0 {
                    // Mostly small and edge values, some anywhere.
                    let r: Int
                    switch rng.next() % 4 {
                    case 0: r = count - 1 - Int(rng.next() % UInt64(min(count, 70)))
                    case 1: r = Int(rng.next() % UInt64(min(count, 70)))
                    default: r = Int(rng.next() % UInt64(count))
                    }
                    if model.insert(r).inserted { set.insert(r) }
                } else {
                    XCTAssertEqual(set.removeFirst(), model.min()!, "count \(count), step \(step)")
                    model.remove(model.min()!)
                }
                XCTAssertEqual(set.isEmpty, model.isEmpty)
            }
            while let m = model.min() { XCTAssertEqual(set.removeFirst(), m); model.remove(m) }
            XCTAssertTrue(set.isEmpty)
        }
    }

    /// On a large acyclic graph where almost every record waits (the
    /// benchmark's shape: a tree of fan-out 8 in archive order, each record
    /// referencing a random one), the acyclic path gives the general path's order.
    func testAcyclicPathAgreesWithTheGeneralPathWhenMostRecordsWait() {
        let n = 20_000
        var rng = SplitMix(seed: 0xFA17)
        // Fan-out 8 in breadth-first numbering, then renumbered in pre-order (archive order).
        var kids = [[Int]](repeating: [], count: n)
        for i in 1..<n { kids[(i - 1) / 8].append(i) }
        var pre: [Int] = [], stack = [0]
        while let v = stack.popLast() { pre.append(v); stack.append(contentsOf: kids[v].reversed()) }
        var pos = [Int](repeating: 0, count: n)
        for (k, v) in pre.enumerated() { pos[v] = k }
        var parents = [Int?](repeating: nil, count: n)
        // One reference each (none for the root), as a flat buffer.
        let flat = UnsafeMutablePointer<Int32>.allocate(capacity: n)
        defer { flat.deallocate() }
        flat[0] = 0
        for v in 1..<n {
            parents[pos[v]] = pos[(v - 1) / 8]
            flat[pos[v]] = Int32(pos[Int(rng.next() % UInt64(v))])
        }
        let root = pos[0]
        let included = (0..<n).map { $0 % 97 != 5 }
        let g = ClosureGraph(inc: { included[$0] }, par: { parents[$0] },
                             refs: { UnsafeBufferPointer(start: flat + $0, count: $0 == root ? 0 : 1) })
        let fast = Planner.acyclicOrder(g, count: n)
        let graph = DependentGraph(g, count: n)
        defer { graph.deallocate() }
        XCTAssertNotNil(fast)
        XCTAssertEqual(fast, Planner.generalOrder(graph, count: n))
    }

    /// Components by mutual reachability; then repeatedly the ready component
    /// with the earliest member, its members in archive order. O(n^3), small n.
    private func definition(_ parents: [Int?], _ refs: [[Int]], included: Set<Int>?) -> [Int] {
        let n = parents.count
        let inc = (0..<n).map { included?.contains($0) ?? true }
        var deps = [[Int]](repeating: [], count: n)
        for v in 0..<n where inc[v] {
            if let p = parents[v], inc[p] { deps[v].append(p) }
            for t in refs[v] where t >= 0 && t < n && t != v && inc[t] { deps[v].append(t) }
        }
        // reach[a][b]: b reachable from a along dependency edges.
        var reach = [[Bool]](repeating: [Bool](repeating: false, count: n), count: n)
        for v in 0..<n { reach[v][v] = true; for d in deps[v] { reach[v][d] = true } }
        for k in 0..<n { for a in 0..<n where reach[a][k] { for b in 0..<n where reach[k][b] { reach[a][b] = true } } }
        var comp = [Int](repeating: -1, count: n)
        var comps: [[Int]] = []
        for v in 0..<n where inc[v] && comp[v] < 0 {
            let members = (0..<n).filter { inc[$0] && reach[v][$0] && reach[$0][v] }
            for m in members { comp[m] = comps.count }
            comps.append(members)
        }
        var done = [Bool](repeating: false, count: comps.count)
        var out: [Int] = []
        while out.count < inc.filter({ $0 }).count {
            var best: Int? = nil
            for c in 0..<comps.count where !done[c] {
                let ready = comps[c].allSatisfy { m in deps[m].allSatisfy { comp[$0] == c || done[comp[$0]] } }
                if ready && (best == nil || comps[c][0] < comps[best!][0]) { best = c }
            }
            guard let b = best else { XCTFail("no ready component"); return out }
            done[b] = true
            out += comps[b]
        }
        return out
    }
}

private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
