import RestorationArchive
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What a factory is asked to create (pass 1 of a restore).
public struct FactoryRequest {
    public let engine: Engine
    /// nil at a root.
    public let parent: ObjectNode?
    public let identifier: String
    /// NUL-terminated; valid during the factory call.
    public let identifierCString: UnsafePointer<CChar>
    public let className: String?
    public let record: Int
    /// 0 at a root.
    public let depth: Int
    public let savedAtMs: Int64
    /// Readable (decode calls) during the factory call.
    public let coder: Coder

    /// The record's whole path, "A/B/C".
    public var path: String { coder.reader?.path(ofRecord: record) ?? identifier }

    /// The path, NUL-terminated, valid during the factory call.
    public func pathCString() -> UnsafePointer<CChar> {
        var p = path
        return p.withUTF8 { coder.arena.copy(UnsafeRawBufferPointer($0)) }
    }
}

/// Creates the object for a record, registered with exactly the requested
/// parent and identifier; nil declines.
public typealias Factory = (FactoryRequest) -> ObjectNode?

/// Supplies restoration classes no host registered (the plugin loader).
public protocol ClassProvider: AnyObject {
    /// The factory for `className`, loading plugins on first need; nil when none provides it.
    func factory(forClass className: String) -> Factory?
    /// Plugins loaded and rejected so far.
    var loadedCount: Int { get }
    var rejectedCount: Int { get }
    /// Engine destroy: run the plugins' fini.
    func shutdown()
}

/// What the last restore did (`rst_restore_report`).
public struct RestoreReport: Equatable, Sendable {
    public var archived: UInt64 = 0
    public var restored: UInt64 = 0
    public var skipped: UInt64 = 0
    public var pluginsLoaded: UInt64 = 0
    public var pluginsRejected: UInt64 = 0
    public init() {}
}

/// Per-restore state the coder consults for references. Nodes are held
/// unretained: the engine owns them, and nothing can unregister during a
/// restore (unregister from a callback is refused; other threads wait).
final class RestoreSession {
    enum RecordState: UInt8 { case pending, materialized, skipped }
    let count: Int
    let state: UnsafeMutablePointer<RecordState>
    private let nodeRefs: UnsafeMutablePointer<Unmanaged<ObjectNode>?>

    init(count: Int) {
        self.count = count
        state = .allocate(capacity: max(count, 1))
        state.initialize(repeating: .pending, count: count)
        nodeRefs = .allocate(capacity: max(count, 1))
        nodeRefs.initialize(repeating: nil, count: count)
    }

    deinit {
        state.deallocate()
        nodeRefs.deallocate()
    }

    @inline(__always) func node(_ r: Int) -> ObjectNode? { nodeRefs[r]?.takeUnretainedValue() }

    @inline(__always) func materialize(_ r: Int, _ n: ObjectNode) {
        nodeRefs[r] = Unmanaged.passUnretained(n)
        state[r] = .materialized
    }
}

/// One archive's restoration machinery (`rst_engine`). Every public method
/// may be called from any thread; save, restore, register and unregister are
/// serialized by one recursive lock, and callbacks run with it held on the
/// calling thread (so they may register and find objects).
public final class Engine {
    public struct Configuration {
        public var archivePath: String?
        public var pluginDirectory: String?
        public var appVersion: String
        public var idiom: String
        /// false: restore neither checks nor writes the crash-loop marker.
        public var crashGuard: Bool

        public init(archivePath: String? = nil, pluginDirectory: String? = nil, appVersion: String = "", idiom: String = "", crashGuard: Bool = true) {
            self.archivePath = archivePath
            self.pluginDirectory = pluginDirectory
            self.appVersion = appVersion
            self.idiom = idiom
            self.crashGuard = crashGuard
        }
    }

    public let configuration: Configuration
    /// Asked at every save; false rejects it.
    public var shouldSave: (() -> Bool)?
    /// Asked after validation, before pass 1; false rejects the restore.
    public var shouldRestore: ((ArchiveInfo) -> Bool)?
    public var didFinishRestoring: (() -> Void)?
    /// Diagnostics; nil sends warnings and errors to stderr.
    public var logHandler: ((LogLevel, String) -> Void)?
    /// Plugin classes (set by the edge that owns the plugin loader).
    public var classProvider: ClassProvider?

    let lock = RecursiveLock()
    private var nodes: [ObjectNode?] = []
    private var freeSlots: [Int] = []
    public private(set) var objectCount = 0
    private var hostClasses: [String: Factory] = [:]
    private var fallback: Factory?
    private var saveGeneration = 0
    /// The handle of the most recently registered object (nil once it
    /// leaves): a factory's result is usually this one, which spares a lookup.
    public private(set) var lastRegistered: UnsafeMutableRawPointer?
    /// The last class name converted from C (address, its bytes, the String):
    /// hosts register many objects of one class with the same literal.
    private var lastClassName: (address: UnsafeRawPointer, bytes: [UInt8], name: String)?

    /// A C class name as a String (nil: not valid UTF-8), cached by address
    /// and confirmed by content.
    public func className(fromC p: UnsafePointer<CChar>) -> String? {
        let n = strlen(p)
        return lock.withLock {
            if let last = lastClassName, last.address == UnsafeRawPointer(p), last.bytes.count == n,
               last.bytes.withUnsafeBytes({ memcmp($0.baseAddress!, p, n) == 0 }) {
                return last.name
            }
            guard let name = String(validatingCString: p) else { return nil }
            lastClassName = (UnsafeRawPointer(p), Array(UnsafeRawBufferPointer(start: p, count: n)), name)
            return name
        }
    }

    /// One NUL-terminated copy per class name, shared by its nodes.
    private var classNames: [String: UnsafeMutablePointer<CChar>] = [:]

    private func internClassName(_ name: String) -> UnsafePointer<CChar> {
        if let p = classNames[name] { return UnsafePointer(p) }
        let p = strdup(name)!
        classNames[name] = p
        return UnsafePointer(p)
    }
    private var lastReport: RestoreReport?
    private var destroyed = false

    enum Operation { case saving, restoring }
    /// The save or restore in progress (its callbacks are running).
    private var operation: Operation?

    public init(configuration: Configuration) {
        self.configuration = configuration
        // Two-phase init: the sentinel and the coder refer back to self.
        sentinelStorage = ObjectNode(sentinelOf: self)
        coderStorage = Coder(engine: self)
    }

    // `let` would need self during init; these hold the real instances.
    private var sentinelStorage: ObjectNode?
    private var coderStorage: Coder?
    @inline(__always) var root: ObjectNode { sentinelStorage.unsafelyUnwrapped }
    @inline(__always) var theCoder: Coder { coderStorage.unsafelyUnwrapped }

    /// The opaque handle C sees (`rst_engine *`).
    @inline(__always) public var handle: UnsafeMutableRawPointer {
        Unmanaged.passUnretained(self).toOpaque()
    }

    @inline(__always) public static func from(handle: UnsafeRawPointer) -> Engine {
        Unmanaged<Engine>.fromOpaque(handle).takeUnretainedValue()
    }

    // MARK: logging

    public func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        if let h = logHandler {
            h(level, message())
        } else if level >= .warning {
            let line = "restoration: \(level.name): \(message())\n"
            fputs(line, stderr)
        }
    }

    // MARK: registry

    /// Registers an object (see `rst_register_object`).
    @discardableResult
    public func register(identifier: String, parent: ObjectNode?, className: String?, behavior: ObjectBehavior?) throws(RestorationFailure) -> ObjectNode {
        try Validation.identifier(identifier, what: "rst_register_object")
        if let className { try Validation.className(className, what: "rst_register_object") }
        lock.lock()
        defer { lock.unlock() }
        guard !destroyed else { throw RestorationFailure(.state, "rst_register_object: the engine is being destroyed") }
        let container: ObjectNode
        if let parent {
            guard parent.engine === self, parent.isRegistered else {
                throw RestorationFailure(.invalid, "rst_register_object: the parent of '\(identifier)' is not an object of this engine (unregistered, or another engine's)")
            }
            container = parent
        } else {
            container = root
        }
        let depth = container.depth + 1
        if depth >= RestorationLimits.maxTreeDepth {
            throw RestorationFailure(.limit, "rst_register_object: '\(identifier)' would be at depth \(depth); the object tree is at most \(RestorationLimits.maxTreeDepth) levels deep (RST_MAX_TREE_DEPTH)")
        }
        if let existing = container.child(named: identifier) {
            throw RestorationFailure(.duplicate, "rst_register_object: the path '\(existing.path)' is already registered")
        }
        let node = ObjectNode(engine: self, identifier: identifier, className: className,
                              cClassName: className.map(internClassName), container: container, depth: depth, behavior: behavior)
        if let slot = freeSlots.popLast() {
            node.slot = slot
            nodes[slot] = node
        } else {
            node.slot = nodes.count
            nodes.append(node)
        }
        container.append(child: node)
        objectCount += 1
        lastRegistered = node.handle
        return node
    }

    /// Unregisters an object and its descendants; their `released` runs
    /// children first, after the whole subtree has left the engine.
    public func unregister(_ node: ObjectNode) throws(RestorationFailure) {
        lock.lock()
        defer { lock.unlock() }
        if operation != nil {
            throw RestorationFailure(.state, "rst_unregister_object: '\(node.path)' cannot be unregistered from inside a \(operation == .saving ? "save" : "restore") callback")
        }
        guard node.engine === self, node.isRegistered, !node.isSentinel else {
            throw RestorationFailure(.invalid, "rst_unregister_object: the object is not registered with this engine")
        }
        let gone = detach(node)
        for n in gone { n.behavior?.released(n) }
    }

    /// Unlinks a subtree; returns it children-first. Iterative.
    private func detach(_ top: ObjectNode) -> [ObjectNode] {
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
        }
        objectCount -= pre.count
        return pre.reversed()
    }

    /// The object at "A/B/C", or nil.
    public func find(path: String) -> ObjectNode? {
        lock.lock()
        defer { lock.unlock() }
        guard !path.isEmpty else { return nil }
        var cur = root
        for part in path.split(separator: "/", omittingEmptySubsequences: false) {
            guard !part.isEmpty, let next = cur.child(named: String(part)) else { return nil }
            cur = next
        }
        return cur
    }

    /// The roots, in registration order.
    public var roots: [ObjectNode] {
        lock.withLock { root.children }
    }

    /// Every object in archive order (depth-first pre-order, registration order).
    public func archiveOrder() -> [ObjectNode] {
        lock.withLock { preorder() }
    }

    private func preorder() -> [ObjectNode] {
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

    // MARK: classes

    public func registerClass(_ name: String, factory: @escaping Factory) throws(RestorationFailure) {
        try Validation.className(name, what: "rst_register_class")
        try lock.withLock { () throws(RestorationFailure) in
            if hostClasses[name] != nil {
                throw RestorationFailure(.duplicate, "rst_register_class: class '\(name)' is already registered")
            }
            hostClasses[name] = factory
        }
    }

    public func setFallbackFactory(_ factory: Factory?) {
        lock.withLock { fallback = factory }
    }

    // MARK: save

    private func beginOperation(_ op: Operation, _ what: String) throws(RestorationFailure) {
        if destroyed { throw RestorationFailure(.state, "\(what): the engine is being destroyed") }
        if let current = operation {
            throw RestorationFailure(.state, "\(what): not allowed while a \(current == .saving ? "save" : "restore") of this engine is running (called from one of its callbacks)")
        }
        operation = op
    }

    /// Encodes every object into archive bytes (should_save is asked first).
    public func saveToBytes() throws(RestorationFailure) -> [UInt8] {
        lock.lock()
        defer { lock.unlock() }
        try beginOperation(.saving, "save")
        defer { operation = nil }
        if let shouldSave, !shouldSave() {
            throw RestorationFailure(.rejected, "save rejected: should_save returned false; the old archive is untouched")
        }
        let order = preorder()
        if order.count > RestorationLimits.maxObjects {
            throw RestorationFailure(.limit, "save: \(order.count) objects are registered; an archive holds at most \(RestorationLimits.maxObjects) (RST_MAX_OBJECTS)")
        }
        saveGeneration += 1
        let gen = saveGeneration
        for (i, n) in order.enumerated() {
            n.saveGeneration = gen
            n.saveIndex = i
        }
        let coder = theCoder
        coder.writer = ArchiveWriter(estimatedObjects: order.count)
        coder.encodeFailure = nil
        coder.saveGeneration = gen
        coder.keys.clear()
        defer {
            coder.writer = ArchiveWriter()
            coder.keys.clear()
        }

        for n in order {
            var id = n.identifier
            let idIndex = id.withUTF8 { coder.writer.name(UnsafeRawBufferPointer($0)) }
            var classIndex: UInt32? = nil
            if var cn = n.className {
                classIndex = cn.withUTF8 { coder.writer.name(UnsafeRawBufferPointer($0)) }
            }
            let parentIndex: Int? = n.container.isSentinel ? nil : n.container.saveIndex
            coder.writer.beginObject(identifier: idIndex, parent: parentIndex, className: classIndex)
            if let b = n.behavior {
                coder.beginEncoding(n)
                b.encode(n, coder)
                coder.endEncoding()
                if let f = coder.encodeFailure {
                    throw RestorationFailure(f.status, "save failed, the old archive is untouched: \(f.message)")
                }
            }
            do {
                try coder.writer.endObject()
            } catch {
                throw RestorationFailure(.state, "save failed, the old archive is untouched: the encode callback of '\(n.path)' left a nested record open (rst_encode_begin_record without rst_encode_end_record)")
            }
        }
        let info = ArchiveInfo(formatVersion: 1, appVersion: configuration.appVersion,
                               systemVersion: SystemInfo.systemVersion, idiom: configuration.idiom,
                               savedAtMs: SystemInfo.nowMs(), objectCount: UInt64(order.count))
        do {
            return try coder.writer.finish(info: info)
        } catch {
            switch error {
            case .limit(let m): throw RestorationFailure(.limit, "save failed: \(m)")
            case .duplicateKey: throw RestorationFailure(.duplicate, "save failed: duplicate key")
            case .state(let m): throw RestorationFailure(.state, "save failed: \(m)")
            }
        }
    }

    /// Saves to the archive file, atomically and durably; clears the crash marker.
    public func save() throws(RestorationFailure) {
        lock.lock()
        defer { lock.unlock() }
        guard let path = configuration.archivePath else {
            throw RestorationFailure(.invalid, "rst_save: the engine has no archive_path (use rst_save_to_buffer)")
        }
        let bytes = try saveToBytes()
        try bytes.withUnsafeBytes { b in
            Result { () throws(RestorationFailure) in try FileStore.atomicWrite(b, to: path) }
        }.get()
        CrashGuard.clear(path)
    }

    // MARK: restore

    /// Restores from the archive file, with the crash-loop guard.
    public func restore() throws(RestorationFailure) {
        lock.lock()
        defer { lock.unlock() }
        guard let path = configuration.archivePath else {
            throw RestorationFailure(.invalid, "rst_restore: the engine has no archive_path (use rst_restore_from_buffer)")
        }
        if operation != nil { try beginOperation(.restoring, "rst_restore") }
        let bytes = try FileStore.read(path)
        if configuration.crashGuard, let owner = CrashGuard.read(path), !CrashGuard.isAlive(owner) {
            let aside = try FileStore.setAside(path, nowMs: SystemInfo.nowMs())
            CrashGuard.clear(path)
            let msg = "a process (pid \(owner.pid)) died while restoring '\(path)'; the archive was set aside as '\(aside)' and will not be restored again"
            log(.error, msg)
            throw RestorationFailure(.rejected, msg)
        }
        let reader = try validate(bytes, source: "archive '\(path)'")
        try runRestore(reader, markerFor: configuration.crashGuard ? path : nil)
    }

    /// Restores from archive bytes (no crash-loop guard).
    public func restore(bytes: UnsafeRawBufferPointer) throws(RestorationFailure) {
        lock.lock()
        defer { lock.unlock() }
        if operation != nil { try beginOperation(.restoring, "rst_restore_from_buffer") }
        if bytes.count > RestorationLimits.maxArchiveBytes {
            throw RestorationFailure(.limit, "the buffer is \(bytes.count) bytes; the limit is \(RestorationLimits.maxArchiveBytes) bytes (RST_MAX_ARCHIVE_BYTES)")
        }
        let reader = try Engine.validate(bytes, source: "the buffer")
        try runRestore(reader, markerFor: nil)
    }

    private func validate(_ bytes: [UInt8], source: String) throws(RestorationFailure) -> ArchiveReader {
        try bytes.withUnsafeBytes { b in
            Result { () throws(RestorationFailure) in try Engine.validate(b, source: source) }
        }.get()
    }

    /// Validates archive bytes completely, mapping codec failures to statuses.
    public static func validate(_ bytes: UnsafeRawBufferPointer, source: String) throws(RestorationFailure) -> ArchiveReader {
        do {
            return try ArchiveReader(bytes: bytes)
        } catch {
            switch error {
            case .corrupt(let m): throw RestorationFailure(.corrupt, "\(source) is corrupt: \(m)")
            case .version(let m): throw RestorationFailure(.version, "\(source) is not supported: \(m)")
            case .limit(let m): throw RestorationFailure(.limit, "\(source) exceeds a limit: \(m)")
            }
        }
    }

    private func runRestore(_ reader: ArchiveReader, markerFor markerPath: String?) throws(RestorationFailure) {
        try beginOperation(.restoring, "restore")
        defer { operation = nil }
        // A marker that cannot be written (a read-only directory) must not stop
        // the restore: it runs without the crash-loop guard, with a warning.
        var guarded = markerPath
        if let markerPath {
            do { try CrashGuard.write(markerPath) } catch {
                log(.warning, "\(error.message); restoring without the crash-loop guard")
                guarded = nil
            }
        }
        defer { if let guarded { CrashGuard.clear(guarded) } }

        if let shouldRestore, !shouldRestore(reader.info) {
            throw RestorationFailure(.rejected, "restore rejected: should_restore returned false; nothing was decoded")
        }
        let count = reader.recordCount
        let session = RestoreSession(count: count)
        let coder = theCoder
        coder.reader = reader
        coder.session = session
        coder.keys.clear()
        defer {
            coder.reader = nil
            coder.session = nil
            coder.keys.clear()
        }
        var report = RestoreReport()
        report.archived = UInt64(count)

        // Pass 1: materialize, parents first (archive order is pre-order).
        var names = [String?](repeating: nil, count: reader.nameCount)
        func name(_ i: UInt32) -> String {
            if let s = names[Int(i)] { return s }
            let s = reader.name(i)
            names[Int(i)] = s
            return s
        }
        var classCache: [UInt32: [Factory]] = [:]
        for r in 0..<count {
            let container: ObjectNode
            if let p = reader.parent(ofRecord: r) {
                guard session.state[p] == .materialized, let pn = session.node(p) else {
                    session.state[r] = .skipped
                    continue
                }
                container = pn
            } else {
                container = root
            }
            let idIndex = reader.identifier(ofRecord: r)
            let identifier = name(idIndex)
            if let existing = container.child(named: identifier) {
                session.materialize(r, existing)
                continue
            }
            let classIndex = reader.className(ofRecord: r)
            let candidates: [Factory]
            if let ci = classIndex, let cached = classCache[ci] {
                candidates = cached
            } else {
                var list: [Factory] = []
                if let ci = classIndex {
                    let cn = name(ci)
                    if let f = hostClasses[cn] {
                        list.append(f)
                    } else if let f = classProvider?.factory(forClass: cn) {
                        list.append(f)
                    }
                }
                if let classIndex { classCache[classIndex] = list }
                candidates = list
            }
            var made: ObjectNode?
            let total = candidates.count + (fallback == nil ? 0 : 1)
            if total > 0 {
                let idC = reader.nameBytes(idIndex)
                for k in 0..<total {
                    let factory = k < candidates.count ? candidates[k] : fallback.unsafelyUnwrapped
                    coder.beginDecoding(record: r, node: nil, factory: true)
                    let request = FactoryRequest(engine: self, parent: container.isSentinel ? nil : container,
                                                 identifier: identifier, identifierCString: coder.arena.copy(idC),
                                                 className: classIndex.map(name), record: r, depth: container.depth + 1,
                                                 savedAtMs: reader.info.savedAtMs, coder: coder)
                    let result = factory(request)
                    coder.endDecoding()
                    guard let result else { continue }
                    if result.engine === self, result.isRegistered, result.container === container, result.identifier == identifier {
                        made = result
                        break
                    }
                    let which = k == candidates.count ? "the fallback factory" : "the factory of class '\(classIndex.map(name) ?? "")'"
                    log(.warning, "record \(r) ('\(reader.path(ofRecord: r))'): \(which) returned an object at '\(result.isRegistered ? result.path : "(unregistered)")' instead of one registered at '\(reader.path(ofRecord: r))'; treated as declined")
                }
            }
            if let made {
                session.materialize(r, made)
            } else {
                session.state[r] = .skipped
                let cls = classIndex.map { "class '\(name($0))'" } ?? "no class"
                log(.info, "record \(r) ('\(reader.path(ofRecord: r))', \(cls)): no registered object, factory or fallback produced it; skipped with its descendants")
            }
        }

        // Pass 2: decode in dependency order.
        let order = Planner.decodeOrder(count: count,
                                        included: { session.state[$0] == .materialized },
                                        parent: { reader.parent(ofRecord: $0) },
                                        references: { reader.references(ofRecord: $0) },
                                        referencesOnlyBackward: !reader.hasForwardReferences)
        for r32 in order {
            let r = Int(r32)
            guard let n = session.node(r) else { continue }
            if let b = n.behavior {
                coder.beginDecoding(record: r, node: n, factory: false)
                b.decode(n, coder)
                coder.endDecoding()
            }
        }
        report.restored = UInt64(order.count)
        report.skipped = UInt64(count - order.count)
        report.pluginsLoaded = UInt64(classProvider?.loadedCount ?? 0)
        report.pluginsRejected = UInt64(classProvider?.rejectedCount ?? 0)
        lastReport = report

        // Pass 3: finish.
        for r32 in order {
            guard let n = session.node(Int(r32)) else { continue }
            n.behavior?.finished(n)
        }
        didFinishRestoring?()
    }

    /// The last restore's report; nil before any restore reached pass 1.
    public var lastRestoreReport: RestoreReport? {
        lock.withLock {
            guard var r = lastReport else { return nil }
            r.pluginsLoaded = UInt64(classProvider?.loadedCount ?? 0)
            r.pluginsRejected = UInt64(classProvider?.rejectedCount ?? 0)
            return r
        }
    }

    // MARK: discard and teardown

    /// Deletes the archive, its set-aside copies, temporaries and markers.
    public func discard() throws(RestorationFailure) {
        lock.lock()
        defer { lock.unlock() }
        guard let path = configuration.archivePath else {
            throw RestorationFailure(.invalid, "rst_discard: the engine has no archive_path")
        }
        if operation != nil { try beginOperation(.saving, "rst_discard") }
        try FileStore.discard(path)
    }

    /// Releases every object (children first) and shuts the class provider
    /// down. Returns false (and does nothing) when called from a callback.
    @discardableResult
    public func destroy() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if operation != nil {
            log(.error, "rst_engine_destroy called from inside a save or restore callback; ignored")
            return false
        }
        if destroyed { return true }
        var all: [ObjectNode] = []
        var c = root.firstChild
        var roots: [ObjectNode] = []
        while let cur = c { roots.append(cur); c = cur.nextSibling }
        for r in roots { all += detach(r) }
        destroyed = true
        for n in all { n.behavior?.released(n) }
        classProvider?.shutdown()
        classProvider = nil
        return true
    }

    deinit {
        if !destroyed { _ = destroy() }
        for p in classNames.values { free(p) }
    }
}

extension Engine {
    /// The object a factory returned, if it is the one registered at
    /// `identifier` under `parent` (nil: a root); compares the handle before
    /// touching the object, so a bogus pointer is never dereferenced.
    public func factoryResult(_ made: UnsafeRawPointer, parent: ObjectNode?, identifier: String) -> ObjectNode? {
        lock.withLock {
            if let last = lastRegistered, UnsafeRawPointer(last) == made {
                let n = ObjectNode.from(handle: made)
                return n.isRegistered && n.container === (parent ?? root) && n.identifier == identifier ? n : nil
            }
            guard let expected = child(of: parent, named: identifier), UnsafeRawPointer(expected.handle) == made else { return nil }
            return expected
        }
    }

    /// Runs `body` under the engine's lock (the order every component uses:
    /// the engine's lock first, then its own).
    public func serialized<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        try lock.withLock(body)
    }

    /// The registered child of `parent` (nil: a root) named `identifier`.
    public func child(of parent: ObjectNode?, named identifier: String) -> ObjectNode? {
        lock.withLock {
            guard let p = parent ?? Optional(root), p.isSentinel || (p.engine === self && p.isRegistered) else { return nil }
            return p.child(named: identifier)
        }
    }
}
