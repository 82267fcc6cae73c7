// The object graph every format in the benchmark saves and restores.
//
// One generator, one seed: N objects in a tree, stored in depth-first
// pre-order (the engine's archive order), each with an identifier that is
// unique among its siblings, a parent, one of 20 class names and 8 keyed
// values. Every reference points to an EARLIER object in pre-order, and so
// does every parent: the graph of parent and reference edges is acyclic.
// That is forced by the baseline, not by the engine: corelibs
// NSKeyedUnarchiver recurses forever on a cycle (BASELINES.md point 4).

import Foundation

/// SplitMix64: small, fast, and the same sequence on every machine.
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// Uniform in 0..<bound (bound > 0); the modulo bias is irrelevant here.
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}

/// The values of one object, independent of any format.
struct GraphObject {
    var identifier: String       // unique among siblings, e.g. "row12"
    var parent: Int              // pre-order index of the parent, -1 at a root
    var depth: Int               // 0 at a root
    var classIndex: Int          // into Graph.classNames
    // The 8 keyed values.
    var flag: Bool               // Bool
    var number: Int64            // Int64
    var ratio: Double            // Double
    var title: String            // 16-character ASCII String
    var blob: Data               // 32 bytes
    var ref: Int                 // reference to an earlier object; -1 only at index 0
    var noteText: String         // nested record {text, count}
    var noteCount: Int64
    var rows: [Int64]            // 4 Int64
}

struct Graph {
    enum Shape: String { case tree, chain, fan }

    /// About 20 restoration class names, UIKit-flavoured. The NSKeyedArchiver
    /// baseline has one NSSecureCoding class per name (Baselines.swift).
    static let classNames: [String] = [
        "AppRootController", "TabBarController", "NavigationController", "SplitController",
        "ListController", "DetailController", "SectionView", "RowView",
        "CellView", "HeaderView", "FooterView", "ToolbarView",
        "SearchController", "FilterPanel", "EditorController", "PreviewPane",
        "InspectorPane", "SettingsController", "MediaView", "MapPane",
    ]
    /// Identifier prefixes by depth: "root", "tab3", "nav1", "list0", "section7", "row12".
    static let prefixes = ["root", "tab", "nav", "list", "section", "row", "item"]

    let shape: Shape
    let seed: UInt64
    /// Children per inner node (tree), 1 (chain) or the width (fan).
    let fanout: Int
    var objects: [GraphObject]

    var count: Int { objects.count }
    var maxDepth: Int { objects.reduce(0) { max($0, $1.depth) } }

    /// Pre-order index of the last object: always a leaf, and referenced by
    /// nobody (references point backwards), which makes it the one object
    /// the plugin case can move to a plugin class without changing anything else.
    var lastLeaf: Int { objects.count - 1 }

    // MARK: shapes

    /// The benchmark tree: N objects, 6 levels (depth 0...5). The fan-out is the
    /// smallest f with 1 + f + ... + f^5 >= N, and nodes fill the levels
    /// breadth-first (as in a heap: node k's parent is (k-1)/f), so every level
    /// but the last is full. 1,000 -> f=4, 10,000 -> f=7, 100,000 -> f=10.
    static func tree(count n: Int, seed: UInt64) -> Graph {
        precondition(n >= 1)
        var f = 1
        while f < n {
            var total = 0, level = 1
            for _ in 0...5 { total += level; level *= f }
            if total >= n { break }
            f += 1
        }
        f = max(f, 2)
        // Breadth-first parents, then a depth-first pre-order walk.
        var children = [[Int]](repeating: [], count: n)
        for k in 1..<max(n, 1) { children[(k - 1) / f].append(k) }
        var order: [Int] = []
        order.reserveCapacity(n)
        var stack = [0]
        while let k = stack.popLast() {
            order.append(k)
            stack.append(contentsOf: children[k].reversed())
        }
        var preIndex = [Int](repeating: 0, count: n)
        for (i, k) in order.enumerated() { preIndex[k] = i }
        var parents = [Int](repeating: -1, count: n)
        var siblingIndex = [Int](repeating: 0, count: n)
        for (i, k) in order.enumerated() where k != 0 {
            let pk = (k - 1) / f
            parents[i] = preIndex[pk]
            siblingIndex[i] = (k - 1) % f
        }
        return build(shape: .tree, seed: seed, fanout: f, parents: parents, siblingIndex: siblingIndex)
    }

    /// A chain: object i's parent is object i-1 (depth i). Each has one
    /// child, so every identifier is "level" (unique among its siblings).
    static func chain(count n: Int, seed: UInt64) -> Graph {
        let parents = (0..<n).map { $0 - 1 }
        return build(shape: .chain, seed: seed, fanout: 1, parents: parents,
                     siblingIndex: [Int](repeating: 0, count: n), identifiers: { i, _ in i == 0 ? "root" : "level" })
    }

    /// A root with `width` children: "item0" ... "item99999".
    static func fan(width: Int, seed: UInt64) -> Graph {
        let parents = (0...width).map { $0 == 0 ? -1 : 0 }
        let sibling = (0...width).map { max($0 - 1, 0) }
        return build(shape: .fan, seed: seed, fanout: width, parents: parents, siblingIndex: sibling,
                     identifiers: { i, s in i == 0 ? "root" : "item\(s)" })
    }

    private static func build(shape: Shape, seed: UInt64, fanout: Int, parents: [Int], siblingIndex: [Int],
                              identifiers: ((Int, Int) -> String)? = nil) -> Graph {
        let n = parents.count
        var rng = SplitMix64(seed: seed ^ (UInt64(n) &* 0x1000_0000_01B3) ^ UInt64(shape.hashSeed))
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)
        func text(_ length: Int) -> String {
            var bytes = [UInt8](repeating: 0, count: length)
            for j in 0..<length { bytes[j] = letters[rng.below(letters.count)] }
            return String(decoding: bytes, as: UTF8.self)
        }
        var objects: [GraphObject] = []
        objects.reserveCapacity(n)
        var depth = [Int](repeating: 0, count: n)
        for i in 0..<n {
            let p = parents[i]
            precondition(p < i, "parents must come first in pre-order")
            depth[i] = p < 0 ? 0 : depth[p] + 1
            let identifier = identifiers?(i, siblingIndex[i])
                ?? (p < 0 ? "root" : prefixes[min(depth[i], prefixes.count - 1)] + String(siblingIndex[i]))
            var blob = Data(count: 32)
            blob.withUnsafeMutableBytes { raw in
                for w in 0..<4 { raw.storeBytes(of: rng.next(), toByteOffset: w * 8, as: UInt64.self) }
            }
            objects.append(GraphObject(
                identifier: identifier,
                parent: p,
                depth: depth[i],
                classIndex: rng.below(classNames.count),
                flag: rng.next() & 1 == 1,
                number: Int64(rng.next() >> 32),                   // 0 ..< 2^32: ids, offsets, counters
                ratio: Double(rng.next() >> 11) / Double(1 << 53) * 1000.0,  // full 53-bit mantissa
                title: text(16),
                blob: blob,
                ref: i == 0 ? -1 : rng.below(i),                   // an earlier object, uniformly
                noteText: text(12),
                noteCount: Int64(rng.below(1000)),
                rows: (0..<4).map { _ in Int64(rng.below(10_000)) }))
        }
        return Graph(shape: shape, seed: seed, fanout: fanout, objects: objects)
    }

    /// Paths "root/tab3/nav1" for every object (for lookups when verifying).
    func paths() -> [String] {
        var result: [String] = []
        result.reserveCapacity(objects.count)
        for o in objects {
            result.append(o.parent < 0 ? o.identifier : result[o.parent] + "/" + o.identifier)
        }
        return result
    }

    /// The path of one object, walking its parents (O(depth); for deep chains,
    /// where paths() would be quadratic).
    func path(of index: Int) -> String {
        var parts: [String] = []
        var i = index
        while i >= 0 { parts.append(objects[i].identifier); i = objects[i].parent }
        return parts.reversed().joined(separator: "/")
    }

    /// The path for messages: deep paths are abbreviated ("root/level/…/level, depth 65536").
    func shortPath(of index: Int) -> String {
        let depth = objects[index].depth
        guard depth > 8 else { return path(of: index) }
        var tail: [String] = []
        var i = index
        while tail.count < 2 { tail.append(objects[i].identifier); i = objects[i].parent }
        var head: [String] = []
        i = index
        while i >= 0 { if objects[i].depth < 2 { head.append(objects[i].identifier) }; i = objects[i].parent }
        return (head.reversed() + ["…"] + tail.reversed()).joined(separator: "/") + ", depth \(depth)"
    }

    /// Checks the invariants the benchmark relies on; returns a problem or nil.
    func validate() -> String? {
        var seen = Set<String>()
        for (i, o) in objects.enumerated() {
            if o.parent >= i { return "object \(i): parent \(o.parent) is not earlier" }
            if i > 0 && !(0..<i).contains(o.ref) { return "object \(i): reference \(o.ref) is not earlier" }
            if !seen.insert("\(o.parent)/\(o.identifier)").inserted { return "object \(i): duplicate sibling identifier \(o.identifier)" }
            if o.title.utf8.count != 16 || o.blob.count != 32 || o.rows.count != 4 { return "object \(i): wrong value shape" }
        }
        return nil
    }

    /// One line for the report.
    var summary: String {
        let d = maxDepth
        switch shape {
        case .tree: return "tree of \(fmtInt(count)) objects, fan-out \(fanout), depth 0–\(d) (\(d + 1) level\(d == 0 ? "" : "s")), pre-order"
        case .chain: return "chain of \(fmtInt(count)) objects (depth 0–\(d))"
        case .fan: return "one root with \(fmtInt(count - 1)) children"
        }
    }
}

private extension Graph.Shape {
    var hashSeed: Int {
        switch self { case .tree: return 1; case .chain: return 2; case .fan: return 3 }
    }
}

// MARK: - The host's live objects

/// The host application's object, as a Swift program would have it: a class
/// with a parent link and a reference to another object. The Codable
/// baselines save from and restore into these; the engine passes them to its
/// callbacks as `void *instance`. (The NSKeyedArchiver baseline needs
/// NSObject subclasses instead: KeyedNode in Baselines.swift.)
final class Node {
    var identifier: String
    var className: String
    /// Links are unowned(unsafe): the array or the engine owns every object,
    /// as a UI tree owns its nodes. (Strong links would also release a
    /// 65,536-deep chain recursively, one deinit inside the other.)
    unowned(unsafe) var parent: Node?
    var index: Int                 // pre-order index on the save side; -1 when restored by a factory
    var flag = false
    var number: Int64 = 0
    var ratio = 0.0
    var title = ""
    var blob = Data()
    unowned(unsafe) var ref: Node?
    var noteText = ""
    var noteCount: Int64 = 0
    var rows: [Int64] = []
    var finished = false           // set by the engine's `finished` callback
    var object: OpaquePointer?     // the engine's rst_object * (engine half only)

    init(identifier: String, className: String, parent: Node?, index: Int) {
        self.identifier = identifier
        self.className = className
        self.parent = parent
        self.index = index
    }

    /// Copies the values of `o` (not the links).
    func assign(_ o: GraphObject) {
        flag = o.flag; number = o.number; ratio = o.ratio; title = o.title; blob = o.blob
        noteText = o.noteText; noteCount = o.noteCount; rows = o.rows
    }

    /// The first value that differs from `o` (identifier and class included), or nil.
    func mismatch(_ o: GraphObject) -> String? {
        if identifier != o.identifier { return "identifier \(identifier) != \(o.identifier)" }
        if className != Graph.classNames[o.classIndex] { return "class \(className) != \(Graph.classNames[o.classIndex])" }
        if flag != o.flag { return "flag" }
        if number != o.number { return "number \(number) != \(o.number)" }
        if ratio.bitPattern != o.ratio.bitPattern { return "ratio \(ratio) != \(o.ratio)" }
        if title != o.title { return "title \(title) != \(o.title)" }
        if blob != o.blob { return "blob" }
        if noteText != o.noteText || noteCount != o.noteCount { return "note" }
        if rows != o.rows { return "rows \(rows) != \(o.rows)" }
        return nil
    }
}

extension Graph {
    /// The host's live objects for this graph, links set, in pre-order.
    func liveNodes() -> [Node] {
        var nodes: [Node] = []
        nodes.reserveCapacity(count)
        for (i, o) in objects.enumerated() {
            let n = Node(identifier: o.identifier, className: Graph.classNames[o.classIndex],
                         parent: o.parent < 0 ? nil : nodes[o.parent], index: i)
            n.assign(o)
            if o.ref >= 0 { n.ref = nodes[o.ref] }
            nodes.append(n)
        }
        return nodes
    }

    /// Checks a restored graph given in pre-order: values, parent and reference
    /// identity. Returns the first problem, or nil.
    func verify(restored nodes: [Node]) -> String? {
        guard nodes.count == count else { return "restored \(nodes.count) objects, expected \(count)" }
        for (i, o) in objects.enumerated() {
            let n = nodes[i]
            if let m = n.mismatch(o) { return "object \(i): \(m)" }
            if o.parent < 0 ? n.parent != nil : n.parent !== nodes[o.parent] { return "object \(i): wrong parent" }
            if o.ref < 0 ? n.ref != nil : n.ref !== nodes[o.ref] { return "object \(i): wrong reference" }
        }
        return nil
    }
}
