import RestorationArchive

/// Per-restore state the coder consults for references. Nodes are held
/// unretained: the engine owns them, and nothing can unregister during a
/// restore (unregister from a callback is refused; other threads wait).
@usableFromInline
final class RestoreSession {
    @usableFromInline enum RecordState: UInt8 { case pending, materialized, skipped }
    let count: Int
    @usableFromInline let state: UnsafeMutablePointer<RecordState>
    @usableFromInline let nodeRefs: UnsafeMutablePointer<NodeRef?>

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

    @inline(__always) func node(_ r: Int) -> ObjectNode? { nodeRefs[r]?.node }

    /// Record r's node without reference counting.
    @inline(__always) func unmanagedNode(_ r: Int) -> NodeRef? { nodeRefs[r] }

    /// The handle of record r's object when it is materialized.
    @inlinable @inline(__always) func handle(_ r: Int) -> UnsafeMutableRawPointer? {
        state[r] == .materialized ? nodeRefs[r]?.handle : nil
    }

    /// Records materialized so far.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private(set) var materializedCount = 0

    @inline(__always) func materialize(_ r: Int, _ n: NodeRef) {
        nodeRefs[r] = n
        state[r] = .materialized
        materializedCount &+= 1
    }
}

/// One restore from start to end (`RestorePass.run`), after the archive
/// was read and validated, as named steps:
///
///     crash guard → should_restore → loadPlugins → migrate → open sealed
///     → [quarantine, migration skips] → plan → materialize → decode
///     → report → carry collects → finish (→ deferred parks the marker)
///
/// Each feature that takes part is a step here or a room the pass calls:
/// the crash-loop guard and quarantine (`rooms.crashPolicy`), migrations
/// (`rooms.migrations`), sealed values (`rooms.sensitivity.openSealed`),
/// carry (`rooms.carry.collect`), deferred completion (`rooms.deferred`:
/// the record of each callback, the marker parked while tokens are open),
/// the report and skips (`rooms.outcomes`). Every factory is invoked by
/// `invoke(_:for:container:identifier:)` and every object called by
/// `ObjectNode.call`, whatever their kind.
///
/// What the steps share: the archive, the coder (set up to read it), the
/// per-record state, and the class factories looked up so far (once per
/// class name). Ends with `end()`, which resets the coder.
final class RestorePass {
    let reader: ArchiveReader
    let coder: Coder
    let session: RestoreSession
    /// The façade: the engine factories are given (its handle, or the
    /// `FactoryRequest`), its hooks (should_restore, did_finish_restoring,
    /// the class provider) and its log.
    unowned(unsafe) let owner: Engine
    private let registry: Registry
    let rooms: Rooms
    /// The crash-loop marker's watch of this restore (nil: no per-object naming).
    private let watch: MarkerWatch?
    /// The factories looked up so far, by class name.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var classFactories = ClassFactoryCache()
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var names: [UInt32: String] = [:]       // made on first use (class names, messages)
    /// Records whose decode callback reported failure.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    var failed = Set<Int>()
    /// Skips (docs/EVOLUTION.md): why records were not produced (Skips.swift).
    var notes: [Int: SkipNote] = [:]
    /// The archive as read, before its sealed values were opened: carried
    /// records are kept from it, so they are written back still sealed.
    var sealedSource: ArchiveReader?

    init(reader: ArchiveReader, coder: Coder, owner: Engine, registry: Registry, rooms: Rooms) {
        self.reader = reader
        self.coder = coder
        self.owner = owner
        self.registry = registry
        self.rooms = rooms
        watch = rooms.crashPolicy.watch
        session = RestoreSession(count: reader.recordCount)
        coder.decoding.reader = reader
        coder.decoding.session = session
        coder.keys.clear()
    }

    func end() {
        coder.decoding.reader = nil
        coder.decoding.session = nil
        coder.keys.clear()
    }

    deinit {
        identifierBuffer.deallocate()
    }

    /// Room for one identifier and its NUL: what a factory is given.
    private let identifierBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: ArchiveLimits.maxIdentifierBytes + 1)

    /// `bytes` (an identifier of this archive: at most maxIdentifierBytes,
    /// no NUL), NUL-terminated; valid until the next call (one factory call).
    func identifierCString(_ bytes: UnsafeRawBufferPointer) -> UnsafePointer<CChar> {
        let n = min(bytes.count, ArchiveLimits.maxIdentifierBytes)
        if n > 0 { UnsafeMutableRawPointer(identifierBuffer).copyMemory(from: bytes.baseAddress!, byteCount: n) }
        identifierBuffer[n] = 0
        return UnsafePointer(identifierBuffer)
    }

    /// Name `i` of the archive as a String, made once.
    func name(_ i: UInt32) -> String {
        if let s = names[i] { return s }
        let s = reader.name(i)
        names[i] = s
        return s
    }

    /// The factory of record r's class: a host class, else a plugin class
    /// (asking the class provider once per name); nil without one.
    func classFactory(ofRecord r: Int) -> Unmanaged<ClassFactory>? {
        guard let ci = reader.className(ofRecord: r) else { return nil }
        if let f = classFactories.lookup(ci) { return f }
        return classFactories.store(ci, registry.factory(forClass: name(ci), provider: owner.classProvider))
    }

    /// The restore of `reader` (validated) from start to end; the engine
    /// has begun the operation. `markerStore`: where the crash-loop marker
    /// goes (nil: unguarded); `quarantined`: the record a quarantine skips.
    static func run(_ reader: ArchiveReader, markerIn markerStore: ArchiveStore?, quarantined: Quarantine.Entry?,
                    owner: Engine, registry: Registry, rooms: Rooms, coder: Coder) throws(RestorationFailure) {
        let crashPolicy = rooms.crashPolicy, deferred = rooms.deferred
        // A marker that cannot be written (a read-only directory) must not stop
        // the restore: it runs without the crash-loop guard, with a warning.
        var guarded: CrashGuard.Token?
        if let markerStore {
            // Quarantine: with it, a version-2 marker names each object callback's record;
            // attempt 2 (a quarantine in effect) makes any death set the archive aside.
            let attempt = crashPolicy.attempt(quarantined: quarantined)
            do { guarded = try CrashGuard.begin(markerStore, bytes: reader.archiveBytes, attempt: attempt) } catch {
                owner.log(.warning, "\(error.message); restoring without the crash-loop guard")
            }
            if let note = guarded?.note { owner.log(.warning, note) }
        }
        crashPolicy.watch = guarded?.watch
        defer {
            crashPolicy.watch = nil
            if deferred.isOpen {
                // Deferred completion: the marker stays, naming the record that extended.
                deferred.park(PendingFinish(guardToken: guarded, watch: guarded?.watch, reader: reader))
            } else if let guarded, let w = CrashGuard.end(guarded) {
                owner.log(.warning, w)
            }
        }

        if let shouldRestore = owner.shouldRestore, !shouldRestore(reader.info) {
            throw RestorationFailure(.rejected, "restore rejected: should_restore returned false; nothing was decoded")
        }
        // Plugins load, then migrations run, after validation, before any factory.
        loadPlugins(for: reader, registry: registry, provider: owner.classProvider)
        let (migrated, preSkips) = try rooms.migrations.migrate(reader, quarantined: quarantined?.record, coder: coder, watch: crashPolicy.watch,
                                                                   log: { owner.log($0, $1) })
        let opened = rooms.sensitivity.openSealed(migrated, engine: owner)   // sealed values: opened once, before any decode
        defer { if opened !== migrated { SensitivityRoom.wipe(opened) } }   // after run.end(): nothing reads it then
        let run = RestorePass(reader: opened, coder: coder, owner: owner, registry: registry, rooms: rooms)
        if opened !== migrated { run.sealedSource = migrated }
        defer { run.end() }
        for (r, note) in preSkips {
            run.session.state[r] = .skipped
            run.notes[r] = note
        }
        if let q = quarantined {
            run.session.state[q.record] = .skipped
            run.notes[q.record] = SkipNote(reason: .quarantined, detail: "a previous restore of this archive died in a callback of this record (pid \(q.pid)); it stays quarantined until the next save")
        }
        let plan = DecodePlan(reader: run.reader, state: run.session.state)
        run.materialize()
        let order = run.decode(plan)
        // Size budgets: the subtrees the save left out (as saved, before migrations).
        rooms.outcomes.record(run.report(decoded: order.count), run.explain(), trimmed: TrimmedList.skips(reader), reader: migrated)
        rooms.carry.collect(run)
        run.finish(order)
    }


    /// The `loadPlugins` step (before `migrate`): asks the class provider
    /// once for each class of the archive that no host class serves, so the
    /// plugins those classes need are loaded (and the migrations their
    /// `init` registers apply) before any migration or factory runs.
    private static func loadPlugins(for reader: ArchiveReader, registry: Registry, provider: ClassProvider?) {
        guard let provider else { return }
        var asked = Set<UInt32>()
        for r in 0..<reader.recordCount {
            guard let ci = reader.className(ofRecord: r), asked.insert(ci).inserted else { continue }
            let cls = reader.name(ci)
            if !registry.hasHostClass(cls) { _ = provider.factory(forClass: cls) }
        }
    }

    /// Pass 1, parents first (archive order is pre-order): each record gets
    /// the object registered at its path, else one from its class's factory
    /// (host classes, then plugin classes), else from the fallback; a record
    /// nothing produces is skipped with its descendants.
    private func materialize() {
        let reader = self.reader, session = self.session
        let rootRef = NodeRef(registry.root)
        let fallbackRef = registry.fallback.map { Unmanaged.passUnretained($0) }
        for r in 0..<reader.recordCount {
            if _slowPath(session.state[r] == .skipped) { continue }   // migrate (or quarantine) skipped it
            let containerRef: NodeRef
            if let p = reader.parent(ofRecord: r) {
                guard session.state[p] == .materialized, let pn = session.unmanagedNode(p) else {
                    session.state[r] = .skipped   // v1.1 explain: PARENT_SKIPPED
                    continue
                }
                containerRef = pn
            } else {
                containerRef = rootRef
            }
            let key = IdentifierKey(reader.nameBytes(reader.identifier(ofRecord: r)))
            if let existing = containerRef.with({ $0.childRef(key: key) }) {
                session.materialize(r, existing)
                continue
            }
            // v1.1: a quarantined record is skipped here, before any factory.
            // The container and the object made are the engine's (held by
            // its node table; nothing unregisters during a restore), so they
            // pass unretained.
            var made: NodeRef? = nil
            if let factory = classFactory(ofRecord: r) {
                made = factory._withUnsafeGuaranteedRef { invoke($0, for: r, container: containerRef, identifier: key) }
            }
            if made == nil, let fallback = fallbackRef {
                made = fallback._withUnsafeGuaranteedRef { invoke($0, for: r, container: containerRef, identifier: key) }
            }
            if let made {
                session.materialize(r, made)
            } else {
                if notes[r] == nil { noteUnproduced(r) }
                skip(r)
            }
        }
    }

    /// Marks record r skipped (its descendants follow in `materialize`).
    /// v1.1: carry keeps the record, explain records the reason.
    private func skip(_ r: Int) {
        session.state[r] = .skipped
        let cls = reader.className(ofRecord: r).map { "class '\(name($0))'" } ?? "no class"
        owner.log(.info, "record \(r) ('\(reader.path(ofRecord: r))', \(cls)): no registered object, factory or fallback produced it; skipped with its descendants")
    }

    /// The one way to invoke a factory, of either kind: the coder reads
    /// record r during the call, and the result counts only if it is the
    /// object now registered at the record's path (anything else is logged
    /// and treated as declined). nil: declined.
    private func invoke(_ factory: ClassFactory, for r: Int,
                        container containerRef: NodeRef, identifier key: IdentifierKey) -> NodeRef? {
        let container = containerRef.node
        let idBytes = key.bytes
        registry.freePath.set(containerRef, key)
        defer { registry.freePath.clear() }
                coder.beginDecoding(record: r, node: nil, factory: true)
        defer { coder.endDecoding() }
        let made: UnsafeRawPointer?
        watchEnter(r)
        defer { watchLeave() }
        switch factory.kind {
        case .function(let fn, let context):
            made = fn(OpaquePointer(owner.handle), container.isSentinel ? nil : OpaquePointer(container.handle),
                      identifierCString(idBytes), OpaquePointer(coder.handle), context).map { UnsafeRawPointer($0) }
        case .closure(let f):
                        let request = FactoryRequest(engine: owner, parent: container.isSentinel ? nil : container,
                                         identifier: name(reader.identifier(ofRecord: r)),
                                         identifierCString: identifierCString(idBytes),
                                         className: reader.className(ofRecord: r).map(name), record: r,
                                         depth: container.depth + 1, savedAtMs: reader.info.savedAtMs, coder: coder)
            made = f(request).map { UnsafeRawPointer($0.handle) }
        }
        if coder.hasCallbackFailure, let f = coder.takeCallbackFailure() {
            owner.log(.warning, "record \(r) ('\(reader.path(ofRecord: r))'): \(factory.what) failed (\(f.status.cName)): \(f.message)")
        }
        guard let made else {
            note(r, .declined, "\(factory.what) returned NULL (declined)")
            return nil
        }
        if let accepted = registry.acceptFactoryResult(made, container: containerRef, identifier: key) { return accepted }
        let path = reader.path(ofRecord: r)
        note(r, .factoryError, "\(factory.what) returned an object that is not the one registered at '\(path)'")
        owner.log(.warning, "record \(r) ('\(path)'): \(factory.what) returned an object that is not the one registered at '\(path)' (a factory must register its object with exactly the given parent and identifier); treated as declined")
        return nil   // v1.1 explain: FACTORY_ERROR
    }

    /// Pass 2: `decode` in the order `Planner` computes (planned before
    /// materialize: `DecodePlan`). Returns that order.
    private func decode(_ plan: consuming DecodePlan) -> [Int32] {
        let session = self.session, deferred = rooms.deferred
        let order = plan.order(reader: reader, state: session.state, materialized: session.materializedCount)
                if _slowPath(KillPoints.isArmed(.restoreDecoding)) { reachDecodingPoint(order) }
        for r32 in order {
            guard let u = session.unmanagedNode(Int(r32)) else { continue }
            u.with { n in
                guard n.handles(.decode) else { return }
                coder.beginDecoding(record: Int(r32), node: n, factory: false)
                watchEnter(Int(r32))
                deferred.callbackRecord = Int(r32)
                n.call(.decode, coder)
                deferred.callbackRecord = -1
                watchLeave()
                coder.endDecoding()
                if coder.hasCallbackFailure, let f = coder.takeCallbackFailure() { decodeFailed(Int(r32), f) }
            }
        }
        return order
    }

    /// A decode callback reported failure: logged; the object keeps what it
    /// decoded, is not counted as restored and gets no `finished`.
    private func decodeFailed(_ r: Int, _ f: RestorationFailure) {
        failed.insert(r)
        note(r, .decodeFailed, "its decode callback failed (\(f.status.cName)): \(f.message)")
        owner.log(.warning, "record \(r) ('\(reader.path(ofRecord: r))'): decode failed (\(f.status.cName)): \(f.message); the object keeps what it decoded, is not counted as restored and is not told that restoration finished")
    }

    /// The report of this restore (`lastRestoreReport`).
    private func report(decoded: Int) -> RestoreCounts {
        var report = RestoreCounts()
        report.archived = UInt64(reader.recordCount)
        report.restored = UInt64(decoded - failed.count)
        report.skipped = UInt64(reader.recordCount) - report.restored
        report.pluginsLoaded = UInt64(owner.classProvider?.loadedCount ?? 0)
        report.pluginsRejected = UInt64(owner.classProvider?.rejectedCount ?? 0)
        return report
    }

    /// Pass 3: `finished` in decode order, then `didFinishRestoring`.
    private func finish(_ order: [Int32]) {
        let session = self.session, coder = self.coder, deferred = rooms.deferred
        let failed = self.failed
        for r32 in order {
            guard let u = session.unmanagedNode(Int(r32)) else { continue }
            if !failed.isEmpty && failed.contains(Int(r32)) { continue }
            // No `finished` to call: no host code runs, so there is nothing
            // for the marker to name or a deferral to attach to.
            guard u.with({ $0.handles(.finished) }) else { continue }
            watchEnter(Int(r32))
            deferred.callbackRecord = Int(r32)
            u.with { $0.call(.finished, coder) }
            deferred.callbackRecord = -1
            watchLeave()
        }
        // Deferred completion: with tokens open, the last completion (or expiry) calls it.
        if !deferred.isOpen { owner.didFinishRestoring?() }
    }

    /// Records the restore's marker watch (nil: no per-object naming).
    @inline(__always) func watchEnter(_ r: Int) { if let w = watch { w.enter(r) } }
    @inline(__always) func watchLeave() { if let w = watch { w.leave() } }
}

/// A restore's class factories by class name index, each looked up once.
/// An archive has few classes and many names (every identifier is one), so
/// a dictionary of the classes met, with the last answer at hand (records of
/// one class tend to follow each other), instead of two arrays over every
/// name.
struct ClassFactoryCache {
    /// The factories found (kept alive here); nil values: no factory.
    private var byName: [UInt32: ClassFactory?] = [:]
    /// The last class answered (UInt32.max: none; never a name index, since
    /// an archive holds far fewer names) and its answer.
    private var lastName = UInt32.max
    private var last: Unmanaged<ClassFactory>? = nil

    /// The answer for class name `ci`: .some(factory or nil) once looked up,
    /// nil before.
    @inline(__always)
    mutating func lookup(_ ci: UInt32) -> Unmanaged<ClassFactory>?? {
        if ci == lastName { return .some(last) }
        guard let f = byName[ci] else { return nil }
        lastName = ci
        last = f.map { Unmanaged.passUnretained($0) }
        return .some(last)
    }

    /// Keeps the answer for `ci`; returns it.
    mutating func store(_ ci: UInt32, _ f: ClassFactory?) -> Unmanaged<ClassFactory>? {
        byName[ci] = .some(f)
        lastName = ci
        last = f.map { Unmanaged.passUnretained($0) }
        return last
    }
}

