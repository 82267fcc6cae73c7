import Foundation
import RestorationCore

// The Swift layer's bookkeeping over the core's object tree: which Swift
// object a node stands for (weakly), which ones the engine owns (created by
// restoration classes), and the sweep that lets deallocated objects leave.

/// The core behavior of a registered Swift object.
final class ObjectBox: ObjectBehavior {
    /// The registered object, held weakly (as UIKit does).
    weak var object: StateRestoring?
    /// Set for objects a restoration class created: the engine owns them
    /// until they are unregistered.
    var owned: StateRestoring?
    /// The node while registered.
    weak var node: ObjectNode?
    weak var registry: ObjectTable?
    let key: ObjectIdentifier
    let typeName: String
    /// Registered from the main actor: called on the main thread only.
    var mainActorBound = false

    /// Off the main thread for a main-actor object: the failure to report.
    private func offMainActor(_ node: ObjectNode, _ what: String) -> RestorationFailure? {
        guard mainActorBound, pthread_main_np_compat() == false else { return nil }
        return RestorationFailure(.state, "\(what) of '\(node.path)' (\(typeName)) was not run: it was registered from the main actor and this save or restore runs on another thread (save from the main actor, e.g. with autosaveOnMainQueue())")
    }

    init(object: StateRestoring, registry: ObjectTable) {
        self.object = object
        self.registry = registry
        self.key = ObjectIdentifier(object)
        self.typeName = String(describing: type(of: object))
    }

    var isDead: Bool { object == nil }

    func encode(_ node: ObjectNode, _ coder: Coder) {
        // A dead object (deallocated during the save, on another thread)
        // is written as an empty record; the next operation sweeps it.
        guard let object, let registry else { return }
        if let f = offMainActor(node, "encodeRestorableState") { coder.recordEncodeFailure(f); return }
        let c = RestorationCoder(coder: coder, registry: registry)
        defer { c.invalidate() }
        do {
            try object.encodeRestorableState(with: c)
        } catch let e as RestorationError {
            coder.recordEncodeFailure(e.failure)
        } catch {
            coder.recordEncodeFailure(RestorationFailure(.invalid, "encodeRestorableState of '\(node.path)' (\(typeName)) threw: \(error)"))
        }
    }

    func decode(_ node: ObjectNode, _ coder: Coder) {
        guard let object, let registry else { return }
        if let f = offMainActor(node, "decodeRestorableState") { try? coder.failCallback(f); return }
        let c = RestorationCoder(coder: coder, registry: registry)
        defer { c.invalidate() }
        do {
            try object.decodeRestorableState(with: c)
        } catch {
            // The one rule for a callback that fails (docs/ARCHITECTURE.md, "Errors").
            let f = (error as? RestorationError)?.failure ?? RestorationFailure(.invalid, "\(error)")
            // failCallback throws only outside a callback, and this is one.
            try? coder.failCallback(RestorationFailure(f.status, "decodeRestorableState (\(typeName)) threw: \(f.message)"))
        }
    }

    func finished(_ node: ObjectNode) {
        if offMainActor(node, "applicationFinishedRestoringState") != nil { return }
        object?.applicationFinishedRestoringState()
    }

    func released(_ node: ObjectNode) {
        registry?.released(self)
        self.node = nil
        owned = nil
    }

    var instance: UnsafeMutableRawPointer? {
        guard let object else { return nil }
        return Unmanaged.passUnretained(object as AnyObject).toOpaque()
    }
}

/// The Swift engine's state. Lock order: this lock, then the core's; every
/// public operation takes this one first, and core callbacks run on the
/// thread that holds it (it is recursive), so the two never invert.
final class ObjectTable {
    let core: Engine
    private let mutex = NSRecursiveLock()
    /// Registered Swift objects by identity. An entry whose object died may
    /// linger until the next sweep; `liveBox(of:)` checks identity.
    private var boxes: [ObjectIdentifier: ObjectBox] = [:]
    /// Dead boxes whose nodes could not be unregistered yet (a sweep from
    /// inside a callback, where unregister is not allowed).
    private var pending: [ObjectBox] = []
    /// Registrations before the next amortized sweep.
    private var sweepAt = 64
    /// Whether objects a restoration class or the fallback
    /// makes are owned (kept alive) by the engine (Evolution.swift).
    var ownsRestoredObjects = true

    init(core: Engine) {
        self.core = core
    }

    @inline(__always)
    func locked<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        mutex.lock()
        defer { mutex.unlock() }
        return try body()
    }

    var count: Int { locked { boxes.count } }

    /// The box of a live registered object.
    func liveBox(of object: StateRestoring) -> ObjectBox? {
        guard let b = boxes[ObjectIdentifier(object)], b.object === object, b.node?.isRegistered == true else { return nil }
        return b
    }

    func liveNode(of object: StateRestoring) -> ObjectNode? { liveBox(of: object)?.node }

    func released(_ box: ObjectBox) {
        locked {
            if boxes[box.key] === box { boxes[box.key] = nil }
            if let i = pending.firstIndex(where: { $0 === box }) { pending.remove(at: i) }
        }
    }

    // MARK: weak registration

    /// Unregisters every registration whose object deallocated (with its
    /// descendants). From inside a callback the core refuses (.state): the
    /// dead boxes wait in `pending` for the next operation.
    func sweep() {
        locked {
            var dead = pending
            for b in boxes.values where b.isDead { dead.append(b) }
            for b in dead { retire(b) }
            sweepAt = max(64, boxes.count * 2)
        }
    }

    /// Sweeps now and then during registration, so a long-running program
    /// that only registers still drops its dead objects (amortized O(1)).
    private func sweepIfDue() {
        if boxes.count >= sweepAt { sweep() }
    }

    /// Unregisters a dead box's node, or parks it in `pending`.
    private func retire(_ b: ObjectBox) {
        guard let n = b.node, n.isRegistered else {
            released(b)
            return
        }
        do {
            try core.unregister(n)   // released(b) runs from the core
        } catch {
            if boxes[b.key] === b { boxes[b.key] = nil }
            if !pending.contains(where: { $0 === b }) { pending.append(b) }
        }
    }

    // MARK: registration

    func describe(_ object: StateRestoring) -> String {
        "\(type(of: object)) '\(object.restorationIdentifier ?? "<nil>")'"
    }

    func parentNode(of object: StateRestoring, _ identifier: String) throws(RestorationError) -> ObjectNode? {
        guard let parent = object.restorationParent else { return nil }
        guard let n = liveNode(of: parent) else {
            throw RestorationError.invalid("register: the restorationParent of '\(identifier)' (\(describe(parent))) is not registered with this engine; register the parent first")
        }
        return n
    }

    @discardableResult
    func register(_ object: StateRestoring, mainActorBound: Bool = false) throws(RestorationError) -> ObjectNode {
        try locked { () throws(RestorationError) -> ObjectNode in
            guard let identifier = object.restorationIdentifier else {
                throw RestorationError.invalid("register: the \(type(of: object)) has no restorationIdentifier (it is nil)")
            }
            sweepIfDue()
            if let b = boxes[ObjectIdentifier(object)] {
                if b.object === object, let n = b.node, n.isRegistered {
                    let parent = try parentNode(of: object, identifier)
                    if n.identifier == identifier && n.parent === parent { return n }   // already there
                    throw RestorationError.duplicate("register: \(describe(object)) is already registered at '\(n.path)'; unregister it before registering it elsewhere")
                }
                retire(b)   // a dead object whose address was reused
                if boxes[ObjectIdentifier(object)] === b { boxes[ObjectIdentifier(object)] = nil }
            }
            let parent = try parentNode(of: object, identifier)
            let box = ObjectBox(object: object, registry: self)
            box.mainActorBound = mainActorBound
            let node = try registerNode(identifier: identifier, parent: parent,
                                        className: object.objectRestorationClass?.name, box: box)
            box.node = node
            boxes[box.key] = box
            return node
        }
    }

    /// Registers in the core; a dead object still at the path is swept out
    /// of the way first.
    private func registerNode(identifier: String, parent: ObjectNode?, className: String?, box: ObjectBox) throws(RestorationError) -> ObjectNode {
        do {
            return try core.register(identifier: identifier, parent: parent, className: className, behavior: box)
        } catch {
            guard error.status == .duplicate,
                  let existing = core.child(of: parent, named: identifier),
                  let old = existing.behavior as? ObjectBox, old.isDead else {
                throw RestorationError(error)
            }
            retire(old)
            return try RestorationError.wrap { () throws(RestorationFailure) in
                try core.register(identifier: identifier, parent: parent, className: className, behavior: box)
            }
        }
    }

    func unregister(_ object: StateRestoring) throws(RestorationError) {
        try locked { () throws(RestorationError) in
            guard let b = liveBox(of: object), let n = b.node else {
                throw RestorationError.notFound("unregister: \(describe(object)) is not registered with this engine")
            }
            try RestorationError.wrap { () throws(RestorationFailure) in try core.unregister(n) }
        }
    }

    // MARK: restoration classes

    typealias MakeObject = (_ identifierComponents: [String], _ coder: RestorationCoder) -> StateRestoring?

    /// A core factory over a Swift one: asks `make`, then registers what it
    /// returned at exactly the requested parent and identifier, owned.
    func factory(_ make: @escaping MakeObject, what: String) -> Factory {
        return { [weak self] req in
            guard let self else { return nil }
            let components = req.path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            let coder = RestorationCoder(coder: req.coder, registry: self)
            let made = make(components, coder)
            coder.invalidate()
            guard let made else { return nil }
            return self.adopt(made, for: req, what: what)
        }
    }

    private func adopt(_ object: StateRestoring, for req: FactoryRequest, what: String) -> ObjectNode? {
        locked { () -> ObjectNode? in
            guard object.restorationIdentifier == req.identifier else {
                core.log(.warning, "record \(req.record) ('\(req.path)'): \(what) returned a \(type(of: object)) whose restorationIdentifier is \(object.restorationIdentifier.map { "'\($0)'" } ?? "nil"), not '\(req.identifier)'; treated as declined")
                return nil
            }
            if let b = liveBox(of: object), let n = b.node {
                if req.object(at: UnsafeRawPointer(n.handle)) === n { return n }
                core.log(.warning, "record \(req.record) ('\(req.path)'): \(what) returned \(describe(object)), which is already registered at '\(n.path)'; treated as declined")
                return nil
            }
            if let stale = boxes[ObjectIdentifier(object)] {
                retire(stale)
                if boxes[stale.key] === stale { boxes[stale.key] = nil }
            }
            let box = ObjectBox(object: object, registry: self)
            if ownsRestoredObjects { box.owned = object }
            do throws(RestorationFailure) {
                let node = try core.register(identifier: req.identifier, parent: req.parent,
                                             className: object.objectRestorationClass?.name ?? req.className, behavior: box)
                box.node = node
                boxes[box.key] = box
                return node
            } catch {
                box.owned = nil
                core.log(.warning, "record \(req.record) ('\(req.path)'): the object \(what) returned could not be registered: \(error.message); treated as declined")
                return nil
            }
        }
    }

    // MARK: lookup

    func object(of node: ObjectNode) -> StateRestoring? {
        (node.behavior as? ObjectBox)?.object
    }

    func isOwned(_ object: StateRestoring) -> Bool {
        locked { liveBox(of: object)?.owned != nil }
    }

    /// The engine stops owning `object`: its registration lasts while the
    /// app keeps it alive.
    func relinquish(_ object: StateRestoring) throws(RestorationError) {
        try locked { () throws(RestorationError) in
            guard let b = liveBox(of: object) else {
                throw RestorationError.notFound("relinquish: \(describe(object)) is not registered with this engine")
            }
            b.owned = nil
        }
    }
}

extension RestorationError {
    /// Runs a core call, converting its typed failure.
    @inline(__always)
    static func wrap<T>(_ body: () throws(RestorationFailure) -> T) throws(RestorationError) -> T {
        do {
            return try body()
        } catch {
            throw RestorationError(error)
        }
    }
}

/// True on the process's main thread (the main actor's thread).
func pthread_main_np_compat() -> Bool { Thread.isMainThread }
