/// The decode order of restore pass 2, as the ABI defines it: take the
/// strongly connected components of the graph of parent and reference edges;
/// repeatedly decode, among the components whose dependencies are all
/// decoded, the one whose earliest member comes first in archive order;
/// decode a component's members in archive order.
///
/// Iterative throughout: a 65,536-deep parent chain or a 100,000-wide
/// fan-out never recurses.
public enum Planner {
    /// - Parameters:
    ///   - count: records, in archive order.
    ///   - included: whether record r takes part (materialized); others and
    ///     edges to them are ignored.
    ///   - parent: record r's parent record (always < r).
    ///   - references: the records r references (its dependencies).
    ///   - referencesOnlyBackward: true when every reference points to an
    ///     earlier record; then archive order already is the answer.
    public static func decodeOrder(count: Int,
                                   included: (Int) -> Bool,
                                   parent: (Int) -> Int?,
                                   references: (Int) -> UnsafeBufferPointer<Int32>,
                                   referencesOnlyBackward: Bool) -> [Int32] {
        if referencesOnlyBackward {
            // Every edge goes from a lower to a higher index, so the smallest
            // undecoded record always has its dependencies decoded.
            var out: [Int32] = []
            out.reserveCapacity(count)
            for r in 0..<count where included(r) { out.append(Int32(r)) }
            return out
        }

        // Dependencies of v, as a flat CSR list (parent first, then references).
        var depStart = [Int32](repeating: 0, count: count + 1)
        var deps: [Int32] = []
        deps.reserveCapacity(count * 2)
        for v in 0..<count {
            depStart[v] = Int32(deps.count)
            guard included(v) else { continue }
            if let p = parent(v), included(p) { deps.append(Int32(p)) }
            for t in references(v) where t >= 0 && Int(t) < count && included(Int(t)) && Int(t) != v {
                deps.append(t)
            }
        }
        depStart[count] = Int32(deps.count)

        // Tarjan's SCC, iterative.
        let unvisited: Int32 = -1
        var index = [Int32](repeating: unvisited, count: count)
        var low = [Int32](repeating: 0, count: count)
        var onStack = [Bool](repeating: false, count: count)
        var comp = [Int32](repeating: -1, count: count)
        var stack: [Int32] = []
        var call: [(v: Int32, edge: Int32)] = []
        var next: Int32 = 0
        var compCount: Int32 = 0

        for root in 0..<count where included(root) && index[root] == unvisited {
            call.append((Int32(root), depStart[root]))
            index[root] = next; low[root] = next; next += 1
            stack.append(Int32(root)); onStack[root] = true
            while let top = call.last {
                let v = Int(top.v)
                if top.edge < depStart[v + 1] {
                    let w = Int(deps[Int(top.edge)])
                    call[call.count - 1].edge += 1
                    if index[w] == unvisited {
                        index[w] = next; low[w] = next; next += 1
                        stack.append(Int32(w)); onStack[w] = true
                        call.append((Int32(w), depStart[w]))
                    } else if onStack[w] {
                        low[v] = min(low[v], index[w])
                    }
                } else {
                    call.removeLast()
                    if let caller = call.last {
                        let u = Int(caller.v)
                        low[u] = min(low[u], low[v])
                    }
                    if low[v] == index[v] {
                        while let w = stack.popLast() {
                            onStack[Int(w)] = false
                            comp[Int(w)] = compCount
                            if Int(w) == v { break }
                        }
                        compCount += 1
                    }
                }
            }
        }

        // Members per component, in archive order (records visited ascending).
        let nc = Int(compCount)
        var memberStart = [Int32](repeating: 0, count: nc + 1)
        for v in 0..<count where comp[v] >= 0 { memberStart[Int(comp[v]) + 1] += 1 }
        for c in 0..<nc { memberStart[c + 1] += memberStart[c] }
        var fill = memberStart
        var members = [Int32](repeating: 0, count: Int(memberStart[nc]))
        for v in 0..<count where comp[v] >= 0 {
            let c = Int(comp[v])
            members[Int(fill[c])] = Int32(v)
            fill[c] += 1
        }

        // Condensation: dependents of each component, and in-degrees.
        var indeg = [Int32](repeating: 0, count: nc)
        var outStart = [Int32](repeating: 0, count: nc + 1)
        for v in 0..<count where comp[v] >= 0 {
            for e in Int(depStart[v])..<Int(depStart[v + 1]) {
                let u = Int(deps[e])
                if comp[u] != comp[v] { outStart[Int(comp[u]) + 1] += 1; indeg[Int(comp[v])] += 1 }
            }
        }
        for c in 0..<nc { outStart[c + 1] += outStart[c] }
        var outFill = outStart
        var out = [Int32](repeating: 0, count: Int(outStart[nc]))
        for v in 0..<count where comp[v] >= 0 {
            for e in Int(depStart[v])..<Int(depStart[v + 1]) {
                let u = Int(deps[e])
                let cu = Int(comp[u]), cv = comp[v]
                if cu != Int(cv) { out[Int(outFill[cu])] = cv; outFill[cu] += 1 }
            }
        }

        // Kahn's algorithm, choosing the ready component with the earliest member.
        var heap = MinHeap()
        for c in 0..<nc where indeg[c] == 0 { heap.push(key: members[Int(memberStart[c])], value: Int32(c)) }
        var order: [Int32] = []
        order.reserveCapacity(members.count)
        while let c = heap.pop() {
            let ci = Int(c)
            order.append(contentsOf: members[Int(memberStart[ci])..<Int(memberStart[ci + 1])])
            for e in Int(outStart[ci])..<Int(outStart[ci + 1]) {
                let d = Int(out[e])
                indeg[d] -= 1
                if indeg[d] == 0 { heap.push(key: members[Int(memberStart[d])], value: Int32(d)) }
            }
        }
        return order
    }
}

/// A binary min-heap of (key, value) pairs ordered by key.
struct MinHeap {
    private var items: [(key: Int32, value: Int32)] = []

    mutating func push(key: Int32, value: Int32) {
        items.append((key, value))
        var i = items.count - 1
        while i > 0 {
            let p = (i - 1) / 2
            if items[p].key <= items[i].key { break }
            items.swapAt(p, i)
            i = p
        }
    }

    mutating func pop() -> Int32? {
        guard let first = items.first else { return nil }
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var m = i
                if l < items.count && items[l].key < items[m].key { m = l }
                if r < items.count && items[r].key < items[m].key { m = r }
                if m == i { break }
                items.swapAt(i, m)
                i = m
            }
        }
        return first.value
    }
}
