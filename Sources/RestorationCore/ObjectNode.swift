#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How the engine talks to a registered object's host: the C layer adapts
/// `rst_object_callbacks`, the Swift API adapts `StateRestoring`.
public protocol ObjectBehavior {
    /// At save, in archive order.
    func encode(_ node: ObjectNode, _ coder: Coder)
    /// At restore, pass 2, in dependency order.
    func decode(_ node: ObjectNode, _ coder: Coder)
    /// At restore, pass 3.
    func finished(_ node: ObjectNode)
    /// Once, when the object leaves the engine.
    func released(_ node: ObjectNode)
    /// The host's instance pointer (`rst_object_instance`), if any.
    var instance: UnsafeMutableRawPointer? { get }
}

/// A registered object (`rst_object`). Owned by its engine: the engine keeps
/// the only strong reference, so a node lives exactly while registered.
/// Tree links are unowned so that no chain of strong references (a 100,000
/// wide sibling list, a 65,536 deep parent chain) can recurse on release.
public final class ObjectNode {
    public let identifier: String
    public let className: String?
    /// NUL-terminated copies handed to C; valid while the node lives.
    public let cIdentifier: UnsafeMutablePointer<CChar>
    /// Shared by every node of the class; owned by the engine.
    public let cClassName: UnsafePointer<CChar>?
    /// 0 at a root.
    public let depth: Int
    public internal(set) var behavior: ObjectBehavior?
    public internal(set) var isRegistered = true

    /// The engine that owns this node (valid while registered).
    public unowned(unsafe) let engine: Engine
    /// The parent, nil at a root.
    public var parent: ObjectNode? { container.isSentinel ? nil : container }

    // Tree links (the engine's lock guards them).
    unowned(unsafe) var container: ObjectNode!
    unowned(unsafe) var firstChild: ObjectNode?
    unowned(unsafe) var lastChild: ObjectNode?
    unowned(unsafe) var nextSibling: ObjectNode?
    unowned(unsafe) var prevSibling: ObjectNode?
    var childCount = 0
    var childIndex: [String: ObjectNode]?
    let isSentinel: Bool
    /// Slot in the engine's node table.
    var slot = -1
    /// Archive index during a save (valid when `saveGeneration` matches).
    var saveGeneration = 0
    var saveIndex = 0

    init(engine: Engine, identifier: String, className: String?, cClassName: UnsafePointer<CChar>?, container: ObjectNode?, depth: Int, behavior: ObjectBehavior?) {
        self.engine = engine
        self.identifier = identifier
        self.className = className
        self.cIdentifier = strdup(identifier)
        self.cClassName = cClassName
        self.container = container
        self.depth = depth
        self.behavior = behavior
        self.isSentinel = false
    }

    /// The invisible parent of the roots.
    init(sentinelOf engine: Engine) {
        self.engine = engine
        self.identifier = ""
        self.className = nil
        self.cIdentifier = strdup("")
        self.cClassName = nil
        self.container = nil
        self.depth = -1
        self.behavior = nil
        self.isSentinel = true
    }

    deinit {
        free(cIdentifier)
    }

    /// The opaque handle C sees (`rst_object *`).
    @inline(__always) public var handle: UnsafeMutableRawPointer {
        Unmanaged.passUnretained(self).toOpaque()
    }

    /// The node behind a handle. The handle must be a live node's.
    @inline(__always) public static func from(handle: UnsafeRawPointer) -> ObjectNode {
        Unmanaged<ObjectNode>.fromOpaque(handle).takeUnretainedValue()
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
        if let index = childIndex { return index[id] }
        var c = firstChild
        while let cur = c {
            if cur.identifier == id { return cur }
            c = cur.nextSibling
        }
        return nil
    }

    func append(child: ObjectNode) {
        child.prevSibling = lastChild
        child.nextSibling = nil
        if let last = lastChild { last.nextSibling = child } else { firstChild = child }
        lastChild = child
        childCount += 1
        if childIndex != nil {
            childIndex![child.identifier] = child
        } else if childCount > 8 {
            var index: [String: ObjectNode] = [:]
            index.reserveCapacity(16)
            var c = firstChild
            while let cur = c { index[cur.identifier] = cur; c = cur.nextSibling }
            childIndex = index
        }
    }

    func remove(child: ObjectNode) {
        if let p = child.prevSibling { p.nextSibling = child.nextSibling } else { firstChild = child.nextSibling }
        if let n = child.nextSibling { n.prevSibling = child.prevSibling } else { lastChild = child.prevSibling }
        child.prevSibling = nil
        child.nextSibling = nil
        childCount -= 1
        childIndex?[child.identifier] = nil
    }
}
