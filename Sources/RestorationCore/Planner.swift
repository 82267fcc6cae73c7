import RestorationArchive
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The decode order of restore pass 2, as the ABI defines it: take the
/// strongly connected components of the graph of parent and reference edges;
/// repeatedly decode, among the components whose dependencies are all
/// decoded, the one whose earliest member comes first in archive order;
/// decode a component's members in archive order.
///
/// Iterative throughout: a 65,536-deep parent chain or a 100,000-wide
/// fan-out never recurses.
///
/// Fast paths, each giving exactly that order:
/// - every reference points backwards: archive order;
/// - no cycle (every component is one record): Kahn's algorithm on the
///   records themselves, taking the earliest ready record — an archive-order
///   scan plus a small heap for records that become ready behind the scan.
///   Only when that stalls (a cycle) does the general SCC path run.
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
        withoutActuallyEscaping(included) { inc in
            withoutActuallyEscaping(parent) { par in
                withoutActuallyEscaping(references) { refs in
                    plan(ClosureGraph(inc: inc, par: par, refs: refs), count: count, referencesOnlyBackward: referencesOnlyBackward)
                }
            }
        }
    }

    /// The engine's entry: records of `reader`, included when their state
    /// is `included` (`.materialized` after materialize; `.pending` before
    /// it, for the records materialize may produce: `DecodePlan`).
    static func decodeOrder(reader: ArchiveReader, state: UnsafePointer<RestoreSession.RecordState>,
                            included: RestoreSession.RecordState = .materialized) -> [Int32] {
        plan(ReaderGraph(reader: reader, state: state, includedState: included), count: reader.recordCount,
             referencesOnlyBackward: !reader.hasForwardReferences)
    }

    // MARK: implementation

    @inline(__always)
    static func plan<G: PlannerGraph>(_ g: G, count: Int, referencesOnlyBackward: Bool) -> [Int32] {
        if count <= 0 { return [] }
        if referencesOnlyBackward {
            // Every edge goes from a lower to a higher index, so the smallest
            // undecoded record always has its dependencies decoded.
            return [Int32](unsafeUninitializedCapacity: count) { buf, n in
                var k = 0
                for r in 0..<count where g.included(r) { buf[k] = Int32(truncatingIfNeeded: r); k &+= 1 }
                n = k
            }
        }
        if let order = acyclicOrder(g, count: count) { return order }
        let graph = DependentGraph(g, count: count)
        defer { graph.deallocate() }
        return generalOrder(graph, count: count)
    }

    /// Kahn's algorithm over records, earliest ready record first; nil when
    /// some included record never becomes ready (a cycle).
    ///
    /// Records are scanned in archive order. A scanned record whose
    /// dependencies are all decoded is the earliest ready one (unless the
    /// ready set holds one: records that became ready behind the scan, all
    /// earlier); a record still waiting is parked on the dependencies it
    /// waits for, and enters the ready set when the last of them is decoded.
    /// Only waiting records cost edges, so an archive whose references
    /// mostly point backwards costs little more than one pass.
    ///
    /// The scan runs only while the ready set is empty, so then every record
    /// behind it is decoded, parked (waiting for `pending[t] > 0`
    /// dependencies) or not included (pending 0: its edges are ignored
    /// anyway): a dependency t behind the scan is waited for exactly when
    /// `pending[t] > 0`, and no separate "decoded" array is kept.
    static func acyclicOrder<G: PlannerGraph>(_ g: G, count: Int) -> [Int32]? {
        // pending[r]: dependencies a parked record waits for (0 otherwise).
        let pending = UnsafeMutablePointer<Int32>.allocate(capacity: count)
        pending.initialize(repeating: 0, count: count)
        // Waiters of each record, as linked lists: head[t], then next[e]; who[e] waits.
        let head = UnsafeMutablePointer<Int32>.allocate(capacity: count)
        head.initialize(repeating: -1, count: count)
        var waiters = WaiterList()
        var ready = ReadySet(count: count)
        defer {
            pending.deallocate()
            head.deallocate()
            waiters.release()
            ready.release()
        }
        var parked = 0
        var emitted = 0
        let order = [Int32](unsafeUninitializedCapacity: count) { buf, n in
            var c = 0
            while true {
                let v: Int
                if !ready.isEmpty {
                    v = ready.removeFirst()
                } else {
                    // Scan for the first record that is ready; park the others.
                    var found = -1
                    while c < count {
                        let r = c
                        c &+= 1
                        guard g.included(r) else { continue }
                        var waits: Int32 = 0
                        let p = g.parent(r)
                        if p >= 0 && (p < r ? pending[p] > 0 : p < count && g.included(p)) {
                            waiters.add(r, waitingFor: p, head)
                            waits &+= 1
                        }
                        for t32 in g.references(r) {
                            let t = Int(t32)
                            // Behind the scan: waited for while parked. Ahead: until decoded, if included.
                            if t < r ? t >= 0 && pending[t] > 0 : t > r && t < count && g.included(t) {
                                waiters.add(r, waitingFor: t, head)
                                waits &+= 1
                            }
                        }
                        if waits == 0 { found = r; break }
                        pending[r] = waits
                        parked &+= 1
                    }
                    if found < 0 { break }
                    v = found
                }
                buf[emitted] = Int32(truncatingIfNeeded: v)
                emitted &+= 1
                var e = head[v]
                while e >= 0 {
                    let w = Int(waiters.who(e))
                    pending[w] &-= 1
                    if pending[w] == 0 {
                        parked &-= 1
                        ready.insert(w)
                    }
                    e = waiters.next(e)
                }
            }
            n = emitted
        }
        return parked == 0 ? order : nil
    }

    /// Tarjan's SCC (iterative), then Kahn's algorithm over the components,
    /// choosing the ready component with the earliest member.
    static func generalOrder(_ g: DependentGraph, count: Int) -> [Int32] {
        let included = g.included
        let (depStart, deps) = g.forward(count: count)

        let unvisited: Int32 = -1
        var index = [Int32](repeating: unvisited, count: count)
        var low = [Int32](repeating: 0, count: count)
        var onStack = [Bool](repeating: false, count: count)
        var comp = [Int32](repeating: -1, count: count)
        var stack: [Int32] = []
        var call: [(v: Int32, edge: Int32)] = []
        var next: Int32 = 0
        var compCount: Int32 = 0

        for root in 0..<count where included[root] != 0 && index[root] == unvisited {
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

        // Kahn's algorithm, choosing the ready component with the earliest
        // member (the heap holds earliest members; compOf maps one back).
        var compOf = [Int32](repeating: -1, count: count)
        for c in 0..<nc { compOf[Int(members[Int(memberStart[c])])] = Int32(c) }
        var heap = MinHeap()
        defer { heap.release() }
        for c in 0..<nc where indeg[c] == 0 { heap.push(members[Int(memberStart[c])]) }
        var order: [Int32] = []
        order.reserveCapacity(members.count)
        while heap.min != nil {
            let ci = Int(compOf[Int(heap.pop())])
            order.append(contentsOf: members[Int(memberStart[ci])..<Int(memberStart[ci + 1])])
            for e in Int(outStart[ci])..<Int(outStart[ci + 1]) {
                let d = Int(out[e])
                indeg[d] -= 1
                if indeg[d] == 0 { heap.push(members[Int(memberStart[d])]) }
            }
        }
        return order
    }
}

/// What the planner asks of a restore's records.
protocol PlannerGraph {
    func included(_ r: Int) -> Bool
    /// -1 for a root.
    func parent(_ r: Int) -> Int
    func references(_ r: Int) -> UnsafeBufferPointer<Int32>
}

struct ClosureGraph: PlannerGraph {
    let inc: (Int) -> Bool
    let par: (Int) -> Int?
    let refs: (Int) -> UnsafeBufferPointer<Int32>
    @inline(__always) func included(_ r: Int) -> Bool { inc(r) }
    @inline(__always) func parent(_ r: Int) -> Int { par(r) ?? -1 }
    @inline(__always) func references(_ r: Int) -> UnsafeBufferPointer<Int32> { refs(r) }
}

struct ReaderGraph: PlannerGraph {
    /// Unretained: the restore holds the reader.
    let reader: Unmanaged<ArchiveReader>
    let state: UnsafePointer<RestoreSession.RecordState>
    let includedState: RestoreSession.RecordState
    init(reader: ArchiveReader, state: UnsafePointer<RestoreSession.RecordState>, includedState: RestoreSession.RecordState) {
        self.reader = Unmanaged.passUnretained(reader)
        self.state = state
        self.includedState = includedState
    }
    @inline(__always) func included(_ r: Int) -> Bool { state[r] == includedState }
    @inline(__always) func parent(_ r: Int) -> Int { reader._withUnsafeGuaranteedRef { $0.parent(ofRecord: r) ?? -1 } }
    @inline(__always) func references(_ r: Int) -> UnsafeBufferPointer<Int32> { reader._withUnsafeGuaranteedRef { $0.references(ofRecord: r) } }
}

/// The dependency edges of the included records as flat CSR arrays:
/// out[outStart[u]..<outStart[u+1]] are the records that depend on u (its
/// children and its referencers), depCount[v] is how many dependencies v
/// has. Only the general (cyclic) path needs the forward lists, so they are
/// built on demand (`forward`).
struct DependentGraph {
    let included: UnsafeMutablePointer<UInt8>
    let depCount: UnsafeMutablePointer<Int32>
    let outStart: UnsafeMutablePointer<Int32>
    let out: UnsafeMutablePointer<Int32>
    let edgeCount: Int

    init<G: PlannerGraph>(_ g: G, count: Int) {
        included = .allocate(capacity: count)
        for v in 0..<count { included[v] = g.included(v) ? 1 : 0 }
        // Edges first counted, then written.
        depCount = .allocate(capacity: count)
        outStart = .allocate(capacity: count + 1)
        outStart.initialize(repeating: 0, count: count + 1)
        var total = 0
        for v in 0..<count {
            var k: Int32 = 0
            if included[v] != 0 {
                let p = g.parent(v)
                if p >= 0 && included[p] != 0 { k &+= 1; outStart[p &+ 1] &+= 1 }
                for t in g.references(v) where t >= 0 && Int(t) < count && Int(t) != v && included[Int(t)] != 0 {
                    k &+= 1
                    outStart[Int(t) &+ 1] &+= 1
                }
            }
            depCount[v] = k
            total &+= Int(k)
        }
        edgeCount = total
        for u in 0..<count { outStart[u &+ 1] &+= outStart[u] }
        out = .allocate(capacity: max(total, 1))
        let outFill = UnsafeMutablePointer<Int32>.allocate(capacity: count)
        outFill.initialize(from: outStart, count: count)
        defer { outFill.deallocate() }
        for v in 0..<count where depCount[v] != 0 {
            let p = g.parent(v)
            if p >= 0 && included[p] != 0 {
                out[Int(outFill[p])] = Int32(truncatingIfNeeded: v); outFill[p] &+= 1
            }
            for t in g.references(v) where t >= 0 && Int(t) < count && Int(t) != v && included[Int(t)] != 0 {
                out[Int(outFill[Int(t)])] = Int32(truncatingIfNeeded: v); outFill[Int(t)] &+= 1
            }
        }
    }

    /// The dependencies of each record (depStart has count + 1 entries):
    /// the transpose of `out`, so within a record they are in ascending order.
    func forward(count: Int) -> (depStart: [Int32], deps: [Int32]) {
        var depStart = [Int32](repeating: 0, count: count + 1)
        for v in 0..<count { depStart[v + 1] = depStart[v] &+ depCount[v] }
        var fill = depStart
        var deps = [Int32](repeating: 0, count: edgeCount)
        for u in 0..<count {
            for e in Int(outStart[u])..<Int(outStart[u + 1]) {
                let v = Int(out[e])
                deps[Int(fill[v])] = Int32(truncatingIfNeeded: u)
                fill[v] &+= 1
            }
        }
        return (depStart, deps)
    }

    func deallocate() {
        included.deallocate()
        depCount.deallocate()
        outStart.deallocate()
        out.deallocate()
    }
}

/// Records below `count`, smallest first: a bitmap with one summary bit
/// per nonzero word of the level below, levels up to a single word (four
/// for the largest archive), so that inserting and removing the smallest
/// take one bit operation per level instead of a binary heap's log n moves.
/// `release()` frees it.
struct ReadySet {
    /// Where each level starts (lowest first, one bit per record), all in
    /// one allocation after this table; the last level is one word.
    private let levelWords: UnsafeMutablePointer<UnsafeMutablePointer<UInt64>>
    private let levels: Int
    private var count = 0

    init(count: Int) {
        var sizes: [Int] = []
        var n = Swift.max(count, 1)
        repeat {
            n = (n &+ 63) >> 6
            sizes.append(n)
        } while n > 1
        levels = sizes.count
        let total = sizes.reduce(0, +)
        let raw = UnsafeMutableRawPointer.allocate(byteCount: (levels + total) * 8, alignment: 8)
        levelWords = raw.bindMemory(to: UnsafeMutablePointer<UInt64>.self, capacity: levels)
        let words = (raw + levels * 8).bindMemory(to: UInt64.self, capacity: total)
        words.initialize(repeating: 0, count: total)
        var at = 0
        for (l, size) in sizes.enumerated() { (levelWords + l).initialize(to: words + at); at &+= size }
    }

    var isEmpty: Bool { @inline(__always) get { count == 0 } }

    /// Adds `r` (not in the set, 0 ≤ r < count).
    @inline(__always)
    mutating func insert(_ r: Int) {
        count &+= 1
        var i = r
        var l = 0
        repeat {
            let w = levelWords[l] + (i &>> 6)
            let before = w.pointee
            w.pointee = before | (1 &<< UInt64(i & 63))
            if before != 0 { return }   // the levels above already say so
            i &>>= 6
            l &+= 1
        } while l < levels
    }

    /// Removes and returns the smallest member; the set must not be empty.
    @inline(__always)
    mutating func removeFirst() -> Int {
        count &-= 1
        var i = 0
        var l = levels
        repeat {
            l &-= 1
            i = i &<< 6 | levelWords[l][i].trailingZeroBitCount
        } while l > 0
        // Clear it, and each summary bit whose word became empty.
        var j = i
        repeat {
            let w = levelWords[l] + (j &>> 6)
            let after = w.pointee & (w.pointee &- 1)   // j is its lowest bit
            w.pointee = after
            if after != 0 { break }
            j &>>= 6
            l &+= 1
        } while l < levels
        return i
    }

    func release() {
        UnsafeMutableRawPointer(levelWords).deallocate()
    }
}

/// Records parked on the records they wait for (singly linked lists in one
/// growable buffer); `release()` frees it.
struct WaiterList {
    private var items = PlainBuffer<(who: Int32, next: Int32)>()

    @inline(__always) func who(_ e: Int32) -> Int32 { items[Int(e)].who }
    @inline(__always) func next(_ e: Int32) -> Int32 { items[Int(e)].next }

    @inline(__always)
    mutating func add(_ who: Int, waitingFor t: Int, _ head: UnsafeMutablePointer<Int32>) {
        let e = Int32(truncatingIfNeeded: items.count)
        items.append((Int32(truncatingIfNeeded: who), head[t]), minimumCapacity: 64)
        head[t] = e
    }

    mutating func release() { items.release() }
}

/// A binary min-heap of Int32; `release()` frees its memory.
struct MinHeap {
    private var items = PlainBuffer<Int32>()

    var min: Int32? { items.isEmpty ? nil : items[0] }

    mutating func release() { items.release() }

    mutating func push(_ key: Int32) {
        items.append(key, minimumCapacity: 16)
        var i = items.count &- 1
        while i > 0 {
            let p = (i &- 1) >> 1
            if items[p] <= key { break }
            items[i] = items[p]
            i = p
        }
        items[i] = key
    }

    /// The smallest key; the heap must not be empty.
    mutating func pop() -> Int32 {
        let first = items[0]
        let last = items.removeLast()
        let count = items.count
        if count == 0 { return first }
        var i = 0
        while true {
            let l = 2 &* i &+ 1
            if l >= count { break }
            let r = l &+ 1
            let m = r < count && items[r] < items[l] ? r : l
            if items[m] >= last { break }
            items[i] = items[m]
            i = m
        }
        items[i] = last
        return first
    }
}

/// The decode order, planned before materialize makes any node: from the
/// records it may produce (every record not already skipped). The order
/// depends only on which records take part, so when materialize produces
/// all of them it is the order planning afterwards gives; when it skips
/// one, the order is planned again from the records it produced. Planning
/// first frees the planner's work lists before the nodes exist, so the two
/// never add up in a restore's peak heap.
struct DecodePlan {
    private var order: [Int32]

    /// Before materialize: `state` marks the records already skipped.
    init(reader: ArchiveReader, state: UnsafePointer<RestoreSession.RecordState>) {
        order = Planner.decodeOrder(reader: reader, state: state, included: .pending)
    }

    /// After materialize, which produced `materialized` records: the order
    /// of those records.
    consuming func order(reader: ArchiveReader, state: UnsafePointer<RestoreSession.RecordState>, materialized: Int) -> [Int32] {
        // Every record planned is materialized exactly when as many were
        // materialized as planned (materialize only turns pending records
        // into materialized or skipped ones).
        if materialized == order.count { return order }
        order = []   // freed before planning again
        return Planner.decodeOrder(reader: reader, state: state)
    }
}
