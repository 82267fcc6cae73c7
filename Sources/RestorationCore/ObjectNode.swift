#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value-type `ObjectBehavior`, held by reference (`ObjectNode.classBound`).
final class BehaviorBox: ObjectBehavior {
    let behavior: any ObjectBehavior
    init(_ behavior: any ObjectBehavior) { self.behavior = behavior }
    func encode(_ node: ObjectNode, _ coder: Coder) { behavior.encode(node, coder) }
    func decode(_ node: ObjectNode, _ coder: Coder) { behavior.decode(node, coder) }
    func finished(_ node: ObjectNode) { behavior.finished(node) }
    func released(_ node: ObjectNode) { behavior.released(node) }
    var instance: UnsafeMutableRawPointer? { behavior.instance }
}

/// How the engine talks to a registered object's host through Swift: the
/// Swift API adapts `StateRestoring` to it, tools (restorectl) implement it.
public protocol ObjectBehavior {
    /// At save, in archive order.
    func encode(_ node: ObjectNode, _ coder: Coder)
    /// At restore, pass 2, in dependency order.
    func decode(_ node: ObjectNode, _ coder: Coder)
    /// At restore, pass 3.
    func finished(_ node: ObjectNode)
    /// Once, when the object leaves the engine.
    func released(_ node: ObjectNode)
    /// The host's instance pointer, if any.
    var instance: UnsafeMutableRawPointer? { get }
}

/// The other way to be called: four optional plain functions of an
/// instance pointer, kept in a table the host owns (the engine keeps the
/// table's address, so a host may share one static table between all its
/// objects). Calling through it costs no existential and no reference
/// counting, which is why the C face adapts `rst_object_callbacks` to it
/// (same members, same order: it checks the layouts match).
public struct ObjectCallbacks {
    /// (instance, the coder's handle).
    public typealias CoderFunction = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?) -> Void
    public typealias InstanceFunction = @convention(c) (UnsafeMutableRawPointer?) -> Void

    public var encode: CoderFunction?
    public var decode: CoderFunction?
    public var finished: InstanceFunction?
    public var release: InstanceFunction?

    public init(encode: CoderFunction? = nil, decode: CoderFunction? = nil,
                finished: InstanceFunction? = nil, release: InstanceFunction? = nil) {
        self.encode = encode
        self.decode = decode
        self.finished = finished
        self.release = release
    }
}

/// What the engine tells an object (`ObjectNode.call`).
@usableFromInline
enum ObjectEvent { case encode, decode, finished, released }

/// A registered object (`rst_object`). Owned by its engine: the engine keeps
/// the only strong reference, so a node lives exactly while registered.
/// Tree links are unowned so that no chain of strong references (a 100,000
/// wide sibling list, a 65,536 deep parent chain) can recurse on release.
public final class ObjectNode {
    // Stored properties are declared in the order of their use, so that the
    // hot ones share the object's first cache lines: a reference's checks
    // (engine, registered, save index), a sibling scan (identifier length,
    // prefix, next sibling), a pass's callbacks (host).

    /// The engine that owns this node (valid while registered).
    public unowned(unsafe) let engine: Engine
    /// Archive index during a save (valid when `saveGeneration` matches).
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    @usableFromInline var saveGeneration = 0
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    @usableFromInline var saveIndex = 0
    /// Size budgets (Budget.swift): RST_BUDGET_TRIM leaves out the subtrees
    /// of the lowest priorities first. Default 0.
    public var priority: Int32 = 0
    // Counts, numbers and flags are stored in 32 bits or less, two or more
    // to a word (identifiers are at most 255 bytes, as every registration
    // checks; depths below 65,536; class numbers, slots and child counts
    // below the objects an engine can hold), each read as an Int: a node is
    // 40 bytes smaller, which a restore of many objects pays once per
    // object it makes.
    /// ChildIndex.hash of the identifier, its low 32 bits (set when the
    /// node enters an index; the index compares and places by them).
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    var identifierHash: UInt32 = 0
    /// The identifier's UTF-8 length, and its first 8 bytes (zero padded):
    /// sibling lookups compare these before any bytes.
    @inline(__always) var identifierCount: Int { Int(storedIdentifierCount) }
    let identifierPrefix: UInt64
    // Tree links (the engine's lock guards them), unretained: loops over
    // them (sibling scans, archive order) do no reference counting.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    var nextSiblingRef: NodeRef?
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    public internal(set) var isRegistered = true
    /// Pure ASCII: identifiers match by bytes alone. Otherwise they match as
    /// Strings do (canonical equivalence), as they always have.
    let identifierIsASCII: Bool
    let isSentinel: Bool
    /// At most 255 (`ArgumentRules.identifier`), beside the flags.
    private let storedIdentifierCount: UInt8
    /// The engine's number for the class name (-1: none); beside the flags.
    private let storedClassID: Int32
    /// A callback table's host (`table`, `tableInstance`), else a Swift
    /// host's behavior (`swiftBehavior`); see `call(_:_:)`.
    let table: UnsafePointer<ObjectCallbacks>?
    let tableInstance: UnsafeMutableRawPointer?
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    var containerRef: NodeRef?
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    var firstChildRef: NodeRef?
    /// NUL-terminated copies handed to C; valid while the node lives.
    public let cIdentifier: UnsafeMutablePointer<CChar>
    /// Shared by every node of the class; owned by the engine.
    public let cClassName: UnsafePointer<CChar>?
    /// The engine's number for the class name (-1: none).
    @inline(__always) var classID: Int { Int(storedClassID) }
    /// 0 at a root.
    private let storedDepth: Int32
    /// Slot in the engine's node table.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var storedSlot: Int32 = -1
    /// 0 at a root.
    @inline(__always) public var depth: Int { Int(storedDepth) }
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    var lastChildRef: NodeRef?
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    var prevSiblingRef: NodeRef?
    /// A Swift host's behavior, class-bound so that it takes two words in
    /// every node, not five (a value-type behavior is boxed at registration).
    let swiftBehavior: (any ObjectBehavior & AnyObject)?
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var storedChildCount: Int32 = 0
    /// Children whose identifier is not ASCII (their lookups compare Strings).
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var storedNonASCIIChildren: Int32 = 0
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    var childIndex: ChildIndex?

    @inline(__always) var childCount: Int {
        get { Int(storedChildCount) }
        set { storedChildCount = Int32(truncatingIfNeeded: newValue) }
    }
    @inline(__always) var nonASCIIChildren: Int {
        get { Int(storedNonASCIIChildren) }
        set { storedNonASCIIChildren = Int32(truncatingIfNeeded: newValue) }
    }
    /// Slot in the engine's node table (-1: none).
    @inline(__always) var slot: Int {
        get { Int(storedSlot) }
        set { storedSlot = Int32(truncatingIfNeeded: newValue) }
    }

    /// The identifier (made from `cIdentifier`'s bytes on each use).
    public var identifier: String { String(decoding: identifierBytes, as: UTF8.self) }

    /// A Swift host's behavior (nil for an object called through a callback table).
    public var behavior: ObjectBehavior? {
        if let box = swiftBehavior as? BehaviorBox { return box.behavior }
        return swiftBehavior
    }

    /// The class name (made from `cClassName`, which the engine keeps for
    /// the class, on each use: the node stores no String of its own).
    public var className: String? { cClassName.map { String(cString: $0) } }

    /// The host's instance pointer (`rst_object_instance`), if any.
    public var instance: UnsafeMutableRawPointer? {
        if table != nil || tableInstance != nil { return tableInstance }
        return swiftBehavior?.instance
    }

    /// Whether the host has something to do at `event` (so the engine can
    /// skip preparing the coder for an object without a decode).
    @inline(__always)
    func handles(_ event: ObjectEvent) -> Bool {
        if let t = table {
            switch event {
            case .encode: return t.pointee.encode != nil
            case .decode: return t.pointee.decode != nil
            case .finished: return t.pointee.finished != nil
            case .released: return t.pointee.release != nil
            }
        }
        return swiftBehavior != nil
    }

    /// The one way the engine calls an object, whichever kind of host it
    /// has. `coder` is the engine's, prepared by the caller for encode and
    /// decode.
    @inline(__always)
    func call(_ event: ObjectEvent, _ coder: Coder) {
        if let t = table {
            let inst = tableInstance
            switch event {
            case .encode: t.pointee.encode?(inst, OpaquePointer(coder.handle))
            case .decode: t.pointee.decode?(inst, OpaquePointer(coder.handle))
            case .finished: t.pointee.finished?(inst)
            case .released: t.pointee.release?(inst)
            }
        } else if let b = swiftBehavior {
            switch event {
            case .encode: b.encode(self, coder)
            case .decode: b.decode(self, coder)
            case .finished: b.finished(self)
            case .released: b.released(self)
            }
        }
    }

    /// The parent's handle, nil at a root (no reference counting).
    public var parentHandle: UnsafeMutableRawPointer? {
        guard let c = containerRef else { return nil }
        return c.with { $0.isSentinel } ? nil : c.handle
    }

    /// The parent, nil at a root.
    public var parent: ObjectNode? { container.isSentinel ? nil : container }

    var container: ObjectNode! {
        get { containerRef?.node }
        set { containerRef = newValue.map { NodeRef($0) } }
    }
    var firstChild: ObjectNode? {
        get { firstChildRef?.node }
        set { firstChildRef = newValue.map { NodeRef($0) } }
    }
    var lastChild: ObjectNode? {
        get { lastChildRef?.node }
        set { lastChildRef = newValue.map { NodeRef($0) } }
    }
    var nextSibling: ObjectNode? {
        get { nextSiblingRef?.node }
        set { nextSiblingRef = newValue.map { NodeRef($0) } }
    }
    var prevSibling: ObjectNode? {
        get { prevSiblingRef?.node }
        set { prevSiblingRef = newValue.map { NodeRef($0) } }
    }

    /// A new node; `utf8` is the identifier (validated by the caller). The
    /// host is a callback table (`table`, `instance`) or a `behavior`.
    convenience init(engine: Engine, utf8: UnsafeRawBufferPointer, cClassName: UnsafePointer<CChar>?,
                     classID: Int, container: NodeRef, depth: Int,
                     table: UnsafePointer<ObjectCallbacks>?, instance: UnsafeMutableRawPointer?, behavior: (any ObjectBehavior & AnyObject)?) {
        self.init(engine: engine, key: IdentifierKey(utf8), cClassName: cClassName, classID: classID, container: container,
                  depth: depth, table: table, instance: instance, behavior: behavior)
    }

    /// `key`: the identifier's bytes with their prefix and ASCII flag, as
    /// the caller computed them for its search of the container.
    init(engine: Engine, key: IdentifierKey, cClassName: UnsafePointer<CChar>?,
         classID: Int, container: NodeRef, depth: Int,
         table: UnsafePointer<ObjectCallbacks>?, instance: UnsafeMutableRawPointer?, behavior: (any ObjectBehavior & AnyObject)?) {
        let utf8 = key.bytes
        self.storedClassID = Int32(truncatingIfNeeded: classID)
        self.engine = engine
        let n = utf8.count
        guard let c = malloc(n + 1) else { fatalError("out of memory") }
        if n > 0 { c.copyMemory(from: utf8.baseAddress.unsafelyUnwrapped, byteCount: n) }
        c.storeBytes(of: 0, toByteOffset: n, as: UInt8.self)
        self.cIdentifier = c.assumingMemoryBound(to: CChar.self)
        self.storedIdentifierCount = UInt8(n)   // checked by every registration: traps only if that broke
        self.identifierPrefix = key.prefix
        self.identifierIsASCII = key.isASCII
        self.cClassName = cClassName
        self.containerRef = container
        self.storedDepth = Int32(truncatingIfNeeded: depth)
        self.table = table
        self.tableInstance = instance
        self.swiftBehavior = behavior
        self.isSentinel = false
    }

    /// The invisible parent of the roots.
    init(sentinelOf engine: Engine) {
        self.engine = engine
        self.cIdentifier = strdup("")!
        self.storedIdentifierCount = 0
        self.identifierPrefix = 0
        self.identifierIsASCII = true
        self.cClassName = nil
        self.storedClassID = -1
        self.containerRef = nil
        self.storedDepth = -1
        self.table = nil
        self.tableInstance = nil
        self.swiftBehavior = nil
        self.isSentinel = true
    }

    deinit {
        free(cIdentifier)
    }

    /// `b` itself when it is a class instance (every behavior the Swift API,
    /// the plugin loader and restorectl make), else `b` in a box.
    static func classBound(_ b: any ObjectBehavior) -> any ObjectBehavior & AnyObject {
        if let o = b as? any ObjectBehavior & AnyObject { return o }
        return BehaviorBox(b)
    }

    /// The first 8 bytes of `b`, zero padded, little-endian (loads stay
    /// inside `b`).
    @inlinable @inline(__always)
    static func prefix(_ b: UnsafeRawBufferPointer) -> UInt64 {
        let n = b.count
        guard let p = b.baseAddress else { return 0 }
        if n >= 8 { return p.loadUnaligned(as: UInt64.self) }
        // Two overlapping loads inside the bytes: the overlap holds the same bytes.
        if n >= 4 {
            let lo = UInt64(p.loadUnaligned(as: UInt32.self))
            let hi = UInt64(p.loadUnaligned(fromByteOffset: n &- 4, as: UInt32.self))
            return lo | hi << (UInt64(n &- 4) &* 8)
        }
        if n >= 2 {
            let lo = UInt64(p.loadUnaligned(as: UInt16.self))
            let hi = UInt64(p.loadUnaligned(fromByteOffset: n &- 2, as: UInt16.self))
            return lo | hi << (UInt64(n &- 2) &* 8)
        }
        return n == 1 ? UInt64(p.load(as: UInt8.self)) : 0
    }

    /// Whether the identifier is `k`: the same bytes, or (when either is
    /// not ASCII) canonically equivalent Strings, as `==` on the identifiers.
    @inline(__always)
    func hasIdentifier(_ k: IdentifierKey) -> Bool {
        if hasIdentifierBytes(k) { return true }
        if identifierIsASCII && k.isASCII { return false }
        return hasIdentifierCanonically(k.bytes)
    }

    /// Whether the identifier is exactly `k`'s bytes.
    @inline(__always)
    func hasIdentifierBytes(_ k: IdentifierKey) -> Bool {
        let b = k.bytes
        return identifierCount == b.count && identifierPrefix == k.prefix
            && (b.count <= 8 || memcmp(cIdentifier + 8, b.baseAddress.unsafelyUnwrapped + 8, b.count - 8) == 0)
    }

    @inline(never)
    func hasIdentifierCanonically(_ b: UnsafeRawBufferPointer) -> Bool {
        identifier == String(decoding: b, as: UTF8.self)
    }

    /// The identifier's bytes (without the NUL).
    @inline(__always) var identifierBytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: cIdentifier, count: identifierCount)
    }

    /// The opaque handle C sees (`rst_object *`).
    @inline(__always) public var handle: UnsafeMutableRawPointer {
        NodeRef(self).handle
    }

    /// The node behind a handle. The handle must be a live node's.
    @inline(__always) public static func from(handle: UnsafeRawPointer) -> ObjectNode {
        NodeRef(handle: handle).node
    }

    /// Identifiers from the root down, joined by "/".
    public var path: String {
        var parts: [String] = []
        var n: ObjectNode? = self
        while let cur = n, !cur.isSentinel {
            parts.append(cur.identifier)
            n = cur.container
        }
        return parts.reversed().joined(separator: "/")
    }

    /// The registered children, in registration order.
    public var children: [ObjectNode] {
        var out: [ObjectNode] = []
        var c = firstChild
        while let cur = c { out.append(cur); c = cur.nextSibling }
        return out
    }

    func child(named id: String) -> ObjectNode? {
        var s = id
        return s.withUTF8 { child(named: UnsafeRawBufferPointer($0)) }
    }

    /// The child whose identifier is `b`, if any.
    func child(named b: UnsafeRawBufferPointer) -> ObjectNode? {
        childRef(named: b)?.node
    }

    /// The child whose identifier is `b`, if any, unretained.
    @inline(__always)
    func childRef(named b: UnsafeRawBufferPointer) -> NodeRef? {
        childRef(key: IdentifierKey(b))
    }

    /// `childRef(named:)` with the key computed.
    @inline(__always)
    func childRef(key k: IdentifierKey) -> NodeRef? {
        if let index = childIndex { return index.find(k) }
        var c = firstChildRef
        while let u = c {
            if u.with({ $0.hasIdentifierBytes(k) }) { return u }
            c = u.with { $0.nextSiblingRef }
        }
        if k.isASCII && nonASCIIChildren == 0 { return nil }
        return childCanonically(k)
    }

    /// The child whose identifier `==` the String of `k` (not byte-equal).
    @inline(never)
    private func childCanonically(_ k: IdentifierKey) -> NodeRef? {
        var c = firstChildRef
        while let u = c {
            if u.with({ $0.hasIdentifier(k) }) { return u }
            c = u.with { $0.nextSiblingRef }
        }
        return nil
    }

    func append(child: ObjectNode) {
        append(child: NodeRef(child))
    }

    func append(child c: NodeRef) {
        c.with {
            $0.prevSiblingRef = lastChildRef
            $0.nextSiblingRef = nil
        }
        if let last = lastChildRef { last.with { $0.nextSiblingRef = c } } else { firstChildRef = c }
        lastChildRef = c
        childCount += 1
        if !c.with({ $0.identifierIsASCII }) { nonASCIIChildren += 1 }
        if let index = childIndex {
            c.with { index.insert($0) }
        } else if childCount > 8 {
            let index = ChildIndex(capacityFor: 16)
            var c = firstChild
            while let cur = c { index.insert(cur); c = cur.nextSibling }
            childIndex = index
        }
    }

    func remove(child: ObjectNode) {
        if let p = child.prevSibling { p.nextSibling = child.nextSibling } else { firstChild = child.nextSibling }
        if let n = child.nextSibling { n.prevSibling = child.prevSibling } else { lastChild = child.prevSibling }
        child.prevSibling = nil
        child.nextSibling = nil
        childCount -= 1
        if !child.identifierIsASCII { nonASCIIChildren -= 1 }
        childIndex?.remove(child)
    }
}

/// An identifier to look up: its bytes, their first 8 (zero padded), and
/// whether they are all ASCII.
struct IdentifierKey {
    let bytes: UnsafeRawBufferPointer
    let prefix: UInt64
    let isASCII: Bool

    @inline(__always) init(_ b: UnsafeRawBufferPointer) {
        bytes = b
        prefix = ObjectNode.prefix(b)
        isASCII = IdentifierKey.isASCII(b, prefix: prefix)
    }

    /// Whether every byte of `b` (whose `ObjectNode.prefix` is `prefix`) is ASCII.
    @inline(__always)
    static func isASCII(_ b: UnsafeRawBufferPointer, prefix: UInt64) -> Bool {
        let n = b.count
        var or = prefix
        if n > 8, let p = b.baseAddress {
            var i = 8
            while i &+ 8 <= n {
                or |= p.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                i &+= 8
            }
            if i < n { or |= p.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self) }
        }
        return or & 0x8080_8080_8080_8080 == 0
    }
}

/// The children of a wide node by identifier: open addressing with linear
/// probing over unowned node references (the engine owns the nodes), keyed
/// by a hash of the identifier's bytes seeded per process (archives are
/// untrusted: colliding identifiers cannot be prepared in advance).
///
/// Bytes decide only between ASCII identifiers. Once a non-ASCII
/// identifier is involved (a child, or a query), lookups go through a
/// String-keyed dictionary, so canonically equivalent identifiers match as
/// `String ==` says, exactly as before.
final class ChildIndex {
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var slots: UnsafeMutablePointer<NodeRef?>
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var mask: Int
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var count = 0
    /// Children whose identifier is not ASCII.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var nonASCII = 0
    /// Every child by identifier String; built on the first lookup that needs it.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var strings: [String: NodeRef]?

    init(capacityFor n: Int) {
        var cap = 16
        while cap < n * 2 { cap <<= 1 }
        slots = .allocate(capacity: cap)
        slots.initialize(repeating: nil, count: cap)
        mask = cap - 1
    }

    deinit { slots.deallocate() }

    private static let seed: UInt64 = UInt64.random(in: UInt64.min...UInt64.max)

    @inline(__always)
    private static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let m = a.multipliedFullWidth(by: b)
        return m.high ^ m.low
    }

    static func hash(_ b: UnsafeRawBufferPointer) -> UInt64 {
        let n = b.count
        var h = seed ^ (UInt64(n) &* 0x9E37_79B9_7F4A_7C15)
        guard let p = b.baseAddress else { return mix(h, 0x8EBC_6AF0_9C88_C6E3) }
        var i = 0
        while i &+ 8 <= n {
            h = mix(h ^ p.loadUnaligned(fromByteOffset: i, as: UInt64.self), 0xA076_1D64_78BD_642F)
            i &+= 8
        }
        if i < n {
            var t: UInt64 = 0
            var s: UInt64 = 0
            while i < n {
                t |= UInt64(p.load(fromByteOffset: i, as: UInt8.self)) << s
                s &+= 8
                i &+= 1
            }
            h = mix(h ^ t, 0xE703_7ED1_A0B4_28DB)
        }
        return mix(h, 0x8EBC_6AF0_9C88_C6E3)
    }

    func find(_ k: IdentifierKey) -> NodeRef? {
        guard nonASCII == 0 && k.isASCII else { return findCanonically(k) }
        let h = UInt32(truncatingIfNeeded: ChildIndex.hash(k.bytes))
        var i = Int(h) & mask
        while let u = slots[i] {
            if u.with({ $0.identifierHash == h && $0.hasIdentifier(k) }) { return u }
            i = (i &+ 1) & mask
        }
        return nil
    }

    @inline(never)
    private func findCanonically(_ k: IdentifierKey) -> NodeRef? {
        if strings == nil {
            var d: [String: NodeRef] = [:]
            d.reserveCapacity(count)
            for i in 0...mask { if let u = slots[i] { d[u.node.identifier] = u } }
            strings = d
        }
        return strings.unsafelyUnwrapped[String(decoding: k.bytes, as: UTF8.self)]
    }

    func insert(_ node: ObjectNode) {
        if (count + 1) * 2 > mask + 1 { grow() }
        node.identifierHash = UInt32(truncatingIfNeeded: ChildIndex.hash(node.identifierBytes))
        place(node)
        count += 1
        if !node.identifierIsASCII { nonASCII += 1 }
        if strings != nil { strings![node.identifier] = NodeRef(node) }
    }

    private func place(_ node: ObjectNode) {
        var i = Int(node.identifierHash) & mask
        while slots[i] != nil { i = (i &+ 1) & mask }
        slots[i] = NodeRef(node)
    }

    private func grow() {
        let old = slots, oldCap = mask + 1
        let cap = oldCap * 2
        slots = .allocate(capacity: cap)
        slots.initialize(repeating: nil, count: cap)
        mask = cap - 1
        for i in 0..<oldCap { if let u = old[i] { place(u.node) } }
        old.deallocate()
    }

    /// Removes `node` (backward-shift deletion: no tombstones).
    func remove(_ node: ObjectNode) {
        var i = Int(node.identifierHash) & mask
        while let u = slots[i] {
            if u.handle == node.handle { break }
            i = (i &+ 1) & mask
        }
        guard slots[i] != nil else { return }
        slots[i] = nil
        count -= 1
        if !node.identifierIsASCII { nonASCII -= 1 }
        if strings != nil { strings![node.identifier] = nil }
        var j = i
        while true {
            j = (j &+ 1) & mask
            guard let u = slots[j] else { return }
            let home = Int(u.node.identifierHash) & mask
            // Move u into the hole at i unless its home lies cyclically in (i, j].
            let inRange = i <= j ? (home > i && home <= j) : (home > i || home <= j)
            if !inRange {
                slots[i] = u
                slots[j] = nil
                i = j
            }
        }
    }
}
