import RestorationArchive
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A registered node, borrowed: the one type through which the core holds a
/// node without owning it (tree links, child indexes, the save order, a
/// restore's per-record nodes, the path a factory may take).
///
/// The registry's node table holds the only strong reference to every node
/// (`Registry.link` moves the caller's reference into it); a node leaves
/// that table only in `Registry.detach`, which `unregister` and `destroy`
/// run, and both are refused while a save or restore of the engine runs and
/// wait for the engine's lock otherwise. So a `NodeRef` taken under the lock
/// is valid until the lock is released or the node is unregistered, and it
/// does no reference counting: `with` lends the node for the length of one
/// closure, `node` hands it out as a strong reference (one retain), `handle`
/// is the address C sees (`rst_object *`).
@usableFromInline
struct NodeRef: Equatable {
    @usableFromInline let ref: Unmanaged<ObjectNode>

    @inlinable @inline(__always) init(_ node: ObjectNode) { ref = .passUnretained(node) }

    /// The node at a handle, which must be a registered node's address.
    @inlinable @inline(__always) init(handle: UnsafeRawPointer) { ref = .fromOpaque(handle) }

    /// The node as a strong reference.
    @inlinable @inline(__always) var node: ObjectNode { ref.takeUnretainedValue() }

    /// The node's address (`rst_object *`).
    @inlinable @inline(__always) var handle: UnsafeMutableRawPointer { ref.toOpaque() }

    /// Lends the node to `body` without retaining it.
    @inlinable @inline(__always) func with<R>(_ body: (ObjectNode) throws -> R) rethrows -> R {
        try ref._withUnsafeGuaranteedRef(body)
    }

    @inlinable @inline(__always) static func == (a: NodeRef, b: NodeRef) -> Bool { a.handle == b.handle }
}

/// The registry: the engine's objects and classes.
///
/// It holds the node table (the only strong reference to every registered
/// node, with the slots freed by unregistration), the sentinel root whose
/// children are the roots, the class names registered objects used (one
/// NUL-terminated copy per name, shared by its nodes) and the class
/// factories (the host's and the fallback). It places a new object
/// (`placement`: checks, container, depth), links it (`link`), unlinks a
/// subtree (`detach`), finds an object by path and lists every object in
/// archive order (depth-first pre-order, registration order among
/// siblings). The engine calls it with its lock held; it takes no lock.
final class Registry {
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var nodes: [ObjectNode?] = []
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var freeSlots: [Int] = []
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private(set) var objectCount = 0
    /// The handle of the most recently registered object (nil once it
    /// leaves): a factory's result is usually this one, which spares a lookup.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private(set) var lastRegistered: UnsafeMutableRawPointer?
    /// The path materialize found free, for the factory it invokes (`FreePath`).
    var freePath = FreePath()
    /// Every class name registered objects used: a NUL-terminated copy shared
    /// by its nodes, and its number (`classIDs`).
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private(set) var classTable: [(name: String, c: UnsafeMutablePointer<CChar>)] = []
    /// Keyed by the exact bytes: each node keeps the class name it was given.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var classIDs: [[UInt8]: Int] = [:]
    /// C class-name address → class number, for names that passed every check:
    /// hosts register many objects of one class with the same literal.
    private let classNameCache = KeyCache()
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var hostClasses: [String: ClassFactory] = [:]
    /// The factory asked when a record's class has none (or declines).
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    var fallback: ClassFactory?
    /// Set by `close`: no object is placed from then on.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private(set) var isClosed = false
    // The sentinel refers to the engine, which creates it once its own
    // stored properties are set (`adopt(root:)`).
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var rootStorage: ObjectNode?
    /// The number of the last save: each save stamps its records with a new
    /// one (`ObjectNode.saveGeneration`), so a save index left by an earlier
    /// save is never taken for the current one's.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var saveGeneration = 0

    init() {}

    deinit {
        for c in classTable { free(c.c) }
        classNameCache.destroy()
    }

    /// A new save's number (`saveGeneration`).
    func nextSaveGeneration() -> Int {
        saveGeneration += 1
        return saveGeneration
    }

    /// Takes the sentinel (once, at the engine's init).
    func adopt(root: ObjectNode) { rootStorage = root }

    /// The sentinel: the container of every root.
    @inline(__always) var root: ObjectNode { rootStorage.unsafelyUnwrapped }

    // MARK: objects

    /// Registers an object with a Swift behavior for `owner` (see
    /// `rst_register_object`): checks, placement, link.
    func register(identifier: String, parent: ObjectNode?, className: String?, behavior: ObjectBehavior?, owner: Engine) throws(RestorationFailure) -> ObjectNode {
        let classID = className.map(internClassName)
        var id = identifier
        return try id.withUTF8 { utf8 in
            Result { () throws(RestorationFailure) in
                let key = IdentifierKey(UnsafeRawBufferPointer(utf8))
                let (container, depth) = try placement(key: key, parent: parent.map { NodeRef($0) }, owner: owner)
                let cls = classID.map { classTable[$0] }
                let node = ObjectNode(engine: owner, key: key, cClassName: cls.map { UnsafePointer($0.c) },
                                      classID: classID ?? -1, container: container, depth: depth,
                                      table: nil, instance: nil, behavior: behavior.map(ObjectNode.classBound))
                link(node, into: container)
                return node
            }
        }.get()
    }

    /// Registers an object called through a callback table: the identifier
    /// and class name are NUL-terminated UTF-8 (checked here, in the order
    /// the checks of `register(identifier:...)` run; literals seen before
    /// are recognized by address); returns the object's handle.
    func register(cIdentifier: UnsafePointer<CChar>, parent: UnsafeRawPointer?, cClassName: UnsafePointer<CChar>?,
                  callbacks: UnsafePointer<ObjectCallbacks>?, instance: UnsafeMutableRawPointer?, owner: Engine) throws(RestorationFailure) -> UnsafeMutableRawPointer {
        let utf8 = UnsafeRawBufferPointer(start: cIdentifier, count: strlen(cIdentifier))
        let key = IdentifierKey(utf8)
        // The usual identifier passes both checks (text, identifier rules) at a glance.
        let plain = ArgumentRules.isPlainShortCIdentifier(key)
        guard plain || ArgumentRules.isText(utf8) else {
            throw RestorationFailure(.invalid, "the identifier is not valid UTF-8")
        }
        // The class name: a literal seen before (it passed every check), or checked now.
        var classID: Int? = nil
        var newClass: UnsafeRawBufferPointer? = nil
        if let cClassName {
            if let c = classNameCache.lookup(cString: UnsafeRawPointer(cClassName)) {
                classID = Int(c)
            } else {
                let b = UnsafeRawBufferPointer(start: cClassName, count: strlen(cClassName))
                if let c = classNameCache.lookup(b) {
                    classID = Int(c)
                } else {
                    guard ArgumentRules.isText(b) else {
                        throw RestorationFailure(.invalid, "the class name of '\(String(decoding: utf8, as: UTF8.self))' is not valid UTF-8")
                    }
                    newClass = b
                }
            }
        }
        if !plain { try ArgumentRules.identifier(utf8) }
        if let b = newClass {
            let name = String(decoding: b, as: UTF8.self)
            try ArgumentRules.className(name)
            let id = internClassName(name)
            classNameCache.store(cKey: b, UInt32(id))
            classID = id
        }
        let (container, depth) = try placement(key: key, parent: parent.map { NodeRef(handle: $0) }, owner: owner)
        let node: ObjectNode
        if let classID {
            let c = classTable[classID].c
            node = ObjectNode(engine: owner, key: key, cClassName: UnsafePointer(c), classID: classID,
                              container: container, depth: depth, table: callbacks, instance: instance, behavior: nil)
        } else {
            node = ObjectNode(engine: owner, key: key, cClassName: nil, classID: -1,
                              container: container, depth: depth, table: callbacks, instance: instance, behavior: nil)
        }
        let handle = node.handle
        link(consume node, into: container)
        return handle
    }

    /// The number of class `name`, interned on first use.
    private func internClassName(_ name: String) -> Int {
        let key = Array(name.utf8)
        if let id = classIDs[key] { return id }
        let id = classTable.count
        classTable.append((name, strdup(name)!))
        classIDs[key] = id
        return id
    }

    /// Where a new object named `key` goes under `parent` (nil: a root) of
    /// `owner`: its container and depth. Throws when the registry is
    /// closed, the parent is not `owner`'s, the tree would grow too deep, or
    /// the path is taken.
    private func placement(key: IdentifierKey, parent: NodeRef?, owner: Engine) throws(RestorationFailure) -> (NodeRef, Int) {
        let utf8 = key.bytes
        guard !isClosed else { throw RestorationFailure(.state, "the engine is being destroyed") }
        let container: NodeRef
        if let parent {
            guard parent.with({ $0.engine === owner && $0.isRegistered }) else {
                throw RestorationFailure(.invalid, "the parent of '\(String(decoding: utf8, as: UTF8.self))' is not an object of this engine (unregistered, or another engine's)")
            }
            container = parent
        } else {
            container = NodeRef(root)
        }
        let depth = container.with { $0.depth } + 1
        if depth >= RestorationLimits.maxTreeDepth {
            throw RestorationFailure(.limit, "'\(String(decoding: utf8, as: UTF8.self))' would be at depth \(depth); the object tree is at most \(RestorationLimits.maxTreeDepth) levels deep (RST_MAX_TREE_DEPTH)")
        }
        if !freePath.isFree(key, in: container), let existing = container.with({ $0.childRef(key: key) }) {
            throw RestorationFailure(.duplicate, "the path '\(existing.node.path)' is already registered")
        }
        return (container, depth)
    }

    /// Makes a new node registered: its place among its siblings, its slot
    /// (the table takes the caller's reference).
    @inline(__always)
    private func link(_ node: __owned ObjectNode, into container: NodeRef) {
        let ref = NodeRef(node)
        container.with { $0.append(child: ref) }
        objectCount += 1
        lastRegistered = ref.handle
        // The caller's reference moves into the table (no retain/release pair).
        if !freeSlots.isEmpty, let slot = freeSlots.popLast() {   // (no call when there is none)
            ref.with { $0.slot = slot }
            nodes[slot] = consume node
        } else {
            ref.with { $0.slot = nodes.count }
            nodes.append(consume node)
        }
    }

    /// Unlinks a subtree; returns it children-first (the caller holds the
    /// nodes from here on and tells them they were released). Iterative.
    func detach(_ top: ObjectNode) -> [ObjectNode] {
        var pre: [ObjectNode] = []
        var stack: [ObjectNode] = [top]
        while let n = stack.popLast() {
            pre.append(n)
            var c = n.firstChild
            while let cur = c { stack.append(cur); c = cur.nextSibling }
        }
        top.container.remove(child: top)
        for n in pre {
            if lastRegistered == n.handle { lastRegistered = nil }
            n.isRegistered = false
            if n.slot >= 0 {
                nodes[n.slot] = nil
                freeSlots.append(n.slot)
                n.slot = -1
            }
            n.firstChild = nil
            n.lastChild = nil
            n.childIndex = nil
            n.childCount = 0
            n.nonASCIIChildren = 0
        }
        objectCount -= pre.count
        return pre.reversed()
    }

    /// Closes the registry (the engine's destroy): every subtree unlinked,
    /// returned children-first; nothing is placed from then on.
    func close() -> [ObjectNode] {
        var all: [ObjectNode] = []
        var c = root.firstChild
        var roots: [ObjectNode] = []
        while let cur = c { roots.append(cur); c = cur.nextSibling }
        for r in roots { all += detach(r) }
        isClosed = true
        return all
    }

    /// The object at "A/B/C", or nil.
    func find(path: String) -> ObjectNode? {
        guard !path.isEmpty else { return nil }
        var cur = root
        for part in path.split(separator: "/", omittingEmptySubsequences: false) {
            guard !part.isEmpty, let next = cur.child(named: String(part)) else { return nil }
            cur = next
        }
        return cur
    }

    /// The registered child of `parent` (nil: a root) named `identifier`,
    /// if `parent` is registered with `owner`.
    func child(of parent: ObjectNode?, named identifier: String, owner: Engine) -> ObjectNode? {
        guard let p = parent ?? Optional(root), p.isSentinel || (p.engine === owner && p.isRegistered) else { return nil }
        return p.child(named: identifier)
    }

    /// Every object in archive order, borrowed (nothing can unregister
    /// during a save).
    func preorderRefs() -> [NodeRef] {
        let rootRef = NodeRef(root)
        return [NodeRef](unsafeUninitializedCapacity: objectCount) { buf, count in
            var k = 0
            var n = root.firstChildRef
            while let cur = n {
                if k == buf.count { break }   // never: objectCount counts every node
                buf[k] = cur
                k &+= 1
                if let c = cur.with({ $0.firstChildRef }) { n = c; continue }
                var up = cur
                n = nil
                while true {
                    if let s = up.with({ $0.nextSiblingRef }) { n = s; break }
                    guard let p = up.with({ $0.containerRef }), p != rootRef else { break }
                    up = p
                }
            }
            count = k
        }
    }

    /// Every object in archive order.
    func preorder() -> [ObjectNode] {
        var out: [ObjectNode] = []
        out.reserveCapacity(objectCount)
        var n = root.firstChild
        while let cur = n {
            out.append(cur)
            if let c = cur.firstChild { n = c; continue }
            var up = cur
            n = nil
            while true {
                if let s = up.nextSibling { n = s; break }
                guard let p = up.container, !p.isSentinel else { break }
                up = p
            }
        }
        return out
    }

    /// The object at `made` if it is the one registered at `identifier`
    /// under `parent` (nil: a root) of `owner`, else nil.
    func acceptFactoryResult(_ made: UnsafeRawPointer, parent: ObjectNode?, identifier: String, owner: Engine) -> ObjectNode? {
        guard let p = parent ?? Optional(root), p.isSentinel || (p.engine === owner && p.isRegistered) else { return nil }
        var id = identifier
        return id.withUTF8 { acceptFactoryResult(made, container: NodeRef(p), identifier: IdentifierKey(UnsafeRawBufferPointer($0))) }?.node
    }

    /// The node at `made` if it is the child of `container` named
    /// `identifier`; never dereferences a bogus pointer.
    func acceptFactoryResult(_ made: UnsafeRawPointer, container: NodeRef, identifier key: IdentifierKey) -> NodeRef? {
        if let last = lastRegistered, UnsafeRawPointer(last) == made {
            // The node registered last is alive (the node table holds it).
            let u = NodeRef(handle: made)
            return u.with {
                $0.isRegistered && $0.containerRef == container && $0.hasIdentifier(key)
            } ? u : nil
        }
        guard let expected = container.with({ $0.childRef(key: key) }), UnsafeRawPointer(expected.handle) == made else { return nil }
        return expected
    }

    // MARK: classes

    /// Registers the host's factory of class `name` (checked by the caller).
    func registerClass(_ name: String, _ kind: ClassFactory.Kind) throws(RestorationFailure) {
        if hostClasses[name] != nil {
            throw RestorationFailure(.duplicate, "class '\(name)' is already registered")
        }
        hostClasses[name] = ClassFactory(kind, what: "the factory of class '\(name)'")
    }

    /// Whether the host registered class `name` (no plugin is asked).
    func hasHostClass(_ name: String) -> Bool { hostClasses[name] != nil }

    /// The factory of a class: the host's, else `provider`'s (plugins).
    func factory(forClass name: String, provider: ClassProvider?) -> ClassFactory? {
        if let f = hostClasses[name] { return f }
        if let pf = provider?.factory(forClass: name) { return ClassFactory(.closure(pf), what: "the factory of class '\(name)'") }
        return nil
    }
}
