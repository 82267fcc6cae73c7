import RestorationArchive
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One archive's restoration machinery (`rst_engine`). Every public method
/// may be called from any thread; save, restore, register and unregister are
/// serialized by one recursive lock, and callbacks run with it held on the
/// calling thread (so they may register and find objects).
public final class Engine {
    public let configuration: Configuration
    /// Asked at every save; false rejects it.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    public var shouldSave: (() -> Bool)?
    /// Asked after validation, before pass 1; false rejects the restore.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    public var shouldRestore: ((ArchiveInfo) -> Bool)?
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    public var didFinishRestoring: (() -> Void)?
    /// Diagnostics; nil sends warnings and errors to stderr.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    public var logHandler: ((LogLevel, String) -> Void)?
    /// Plugin classes (set by the edge that owns the plugin loader).
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    public var classProvider: ClassProvider?

    let lock = RecursiveLock()
    /// The objects and classes (Registry.swift).
    let registry = Registry()
    /// The number of registered objects.
    public var objectCount: Int { registry.objectCount }
    /// The handle of the most recently registered object (nil once it leaves).
    public var lastRegistered: UnsafeMutableRawPointer? { registry.lastRegistered }
    /// The reason, generation, counts and skips of the restore in progress
    /// or last done (RestoreOutcomes.swift).
    var outcomes: RestoreOutcomes { rooms.unsafelyUnwrapped.outcomes }
    /// Class versions and migration steps (Migrations.swift).
    @inline(__always) var migrations: MigrationRoom { rooms.unsafelyUnwrapped.migrations }
    /// Size budgets (Budget.swift): the measurement of the last save. Under `lock`.
    var budget: Budget { rooms.unsafelyUnwrapped.budget }

    enum Operation { case saving, restoring }
    /// The save or restore in progress (its callbacks are running).
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var operation: Operation?

    public init(configuration: Configuration) {
        self.configuration = configuration
        // Two-phase init: the sentinel and the coder refer back to self.
        registry.adopt(root: ObjectNode(sentinelOf: self))
        coderStorage = Coder(engine: self)
        lifecycleStorage = Lifecycle(engine: self, delayMs: configuration.autosaveDelayMs,
                                     maxDelayMs: configuration.autosaveMaxDelayMs)
        rooms = Rooms(crashPolicy: CrashPolicy(engine: self, guarded: configuration.crashGuard, quarantine: configuration.quarantine),
                      deferred: Deferred(engine: self), carry: Carry(engine: self),
                      sensitivity: SensitivityRoom(), budget: Budget(), outcomes: RestoreOutcomes(),
                      migrations: MigrationRoom(),
                      storage: (configuration.store ?? configuration.archivePath.map { FileArchiveStore(path: $0) }).map(Storage.init(store:)))
        storage?.log = { [unowned self] level, message in self.log(level, message) }
        KillPoints.load()   // RESTORATION_KILL_AT is read once per process (docs/TESTING.md)
    }

    /// Sensitive values: the policy, the encryption key's source, and what
    /// one save, export or restore does with them (Sensitivity.swift).
    public var sensitivity: SensitivityRoom { rooms.unsafelyUnwrapped.sensitivity }
    private var lifecycleStorage: Lifecycle?
    /// Dirty tracking, autosave, dispatch, signals (docs/LIFECYCLE.md; Lifecycle.swift).
    public var lifecycle: Lifecycle { lifecycleStorage.unsafelyUnwrapped }
    /// The store and what the engine keeps about it (sessions, the last
    /// archive; Storage.swift); nil without a store or archive path.
    @inline(__always) var storage: Storage? { rooms.unsafelyUnwrapped.storage }
    /// Whether the engine has a store (an archive path or a host's store).
    public var hasStore: Bool { storage != nil }
    /// The reason and generation of the restore in progress or last done.
    public var restoreReason: RestoreReason { outcomes.reason }
    public var restoreGeneration: UInt32 { outcomes.generation }

    // `let` would need self during init; these hold the real instances.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var coderStorage: Coder?
    @inline(__always) var root: ObjectNode { registry.root }

    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    var rooms: Rooms?
    @inline(__always) var crashPolicy: CrashPolicy { rooms.unsafelyUnwrapped.crashPolicy }
    @inline(__always) var deferred: Deferred { rooms.unsafelyUnwrapped.deferred }
    @inline(__always) var carry: Carry { rooms.unsafelyUnwrapped.carry }
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
        try ArgumentRules.identifier(identifier)
        if let className { try ArgumentRules.className(className) }
        lock.lock()
        defer { lock.unlock() }
        return try registry.register(identifier: identifier, parent: parent, className: className, behavior: behavior, owner: self)
    }

    /// Registers an object called through a callback table: the identifier
    /// and class name are NUL-terminated UTF-8; returns the object's handle.
    /// The C face's `rst_register_object`.
    public func register(cIdentifier: UnsafePointer<CChar>, parent: UnsafeRawPointer?, cClassName: UnsafePointer<CChar>?,
                         callbacks: UnsafePointer<ObjectCallbacks>?, instance: UnsafeMutableRawPointer?) throws(RestorationFailure) -> UnsafeMutableRawPointer {
        lock.lock()
        defer { lock.unlock() }
        return try registry.register(cIdentifier: cIdentifier, parent: parent, cClassName: cClassName,
                                     callbacks: callbacks, instance: instance, owner: self)
    }

    /// Unregisters an object and its descendants; their `released` runs
    /// children first, after the whole subtree has left the engine.
    public func unregister(_ node: ObjectNode) throws(RestorationFailure) {
        lock.lock()
        defer { lock.unlock() }
        if operation != nil {
            throw RestorationFailure(.state, "'\(node.path)' cannot be unregistered from inside a \(operation == .saving ? "save" : "restore") callback")
        }
        guard node.engine === self, node.isRegistered, !node.isSentinel else {
            throw RestorationFailure(.invalid, "the object is not registered with this engine")
        }
        let gone = registry.detach(node)
        for n in gone { n.call(.released, theCoder) }
    }

    /// The object at "A/B/C", or nil.
    public func find(path: String) -> ObjectNode? {
        lock.withLock { registry.find(path: path) }
    }

    /// Every object in archive order (depth-first pre-order, registration order).
    public func archiveOrder() -> [ObjectNode] {
        lock.withLock { registry.preorder() }
    }

    // MARK: classes

    public func registerClass(_ name: String, factory: @escaping Factory) throws(RestorationFailure) {
        try ArgumentRules.className(name)
        try lock.withLock { () throws(RestorationFailure) in try registry.registerClass(name, .closure(factory)) }
    }

    /// Registers a class whose factory is a plain function (the C face's
    /// `rst_register_class`).
    public func registerClass(_ name: String, function: @escaping FactoryFunction, context: UnsafeMutableRawPointer?) throws(RestorationFailure) {
        try ArgumentRules.className(name)
        try lock.withLock { () throws(RestorationFailure) in try registry.registerClass(name, .function(function, context: context)) }
    }

    public func setFallbackFactory(_ factory: Factory?) {
        lock.withLock { registry.fallback = factory.map { ClassFactory(.closure($0), what: "the fallback factory") } }
    }

    /// Sets (nil: clears) a fallback factory that is a plain function (the
    /// C face's `rst_set_fallback_factory`).
    public func setFallbackFactory(function: FactoryFunction?, context: UnsafeMutableRawPointer?) {
        lock.withLock { registry.fallback = function.map { ClassFactory(.function($0, context: context), what: "the fallback factory") } }
    }

    // MARK: save

    private func beginOperation(_ op: Operation) throws(RestorationFailure) {
        if registry.isClosed { throw RestorationFailure(.state, "the engine is being destroyed") }
        if let current = operation {
            throw RestorationFailure(.state, "not allowed while a \(current == .saving ? "save" : "restore") of this engine is running (called from one of its callbacks)")
        }
        operation = op
    }

    /// Encodes every object into archive bytes (should_save is asked first).
    public func saveToBytes() throws(RestorationFailure) -> [UInt8] {
        try save { (w: inout ArchiveWriter, info: ArchiveInfo) throws(WriteFailure) -> [UInt8] in
            try w.finish(info: info)
        }
    }

    /// Like `saveToBytes`, but the archive is written straight into memory
    /// from `allocate` (called once, with the archive's size; e.g. `malloc`),
    /// with no intermediate array. Returns the buffer (owned by the caller)
    /// and its length, or nil if `allocate` returned nil.
    public func saveToBuffer(allocate: (Int) -> UnsafeMutableRawPointer?) throws(RestorationFailure) -> (bytes: UnsafeMutableRawPointer, count: Int)? {
        try save { (w: inout ArchiveWriter, info: ArchiveInfo) throws(WriteFailure) -> (bytes: UnsafeMutableRawPointer, count: Int)? in
            try w.finish(info: info, into: allocate)
        }
    }

    /// Writes the state to a new buffer from `allocate`, as `saveToBuffer`
    /// does, but it is not a save: no should_save, no carry count, no
    /// WARNING about the values it leaves out. `portable`: LOCAL and
    /// ENCRYPTED values are left out too (SECRET ones always are).
    public func export(portable: Bool, allocate: (Int) -> UnsafeMutableRawPointer?) throws(RestorationFailure) -> (bytes: UnsafeMutableRawPointer, count: Int)? {
        try save(mode: portable ? .portableExport : .export) { (w: inout ArchiveWriter, info: ArchiveInfo) throws(WriteFailure) -> (bytes: UnsafeMutableRawPointer, count: Int)? in
            try w.finish(info: info, into: allocate)
        }
    }

    /// One save or export, under the lock, as a `SavePass` (SavePass.swift).
    private func save<R>(mode: SensitivityRoom.WriteMode = .save, _ finish: (inout ArchiveWriter, ArchiveInfo) throws(WriteFailure) -> R) throws(RestorationFailure) -> R {
        lock.lock()
        defer { lock.unlock() }
        if operation == nil { deferred.checkDeadlines() }   // deferred completion: before the save begins (did_finish_restoring may save)
        try beginOperation(.saving)
        defer { operation = nil }
        let pass = SavePass(mode: mode, owner: self, registry: registry, rooms: rooms.unsafelyUnwrapped, coder: theCoder,
                            configuration: configuration, classVersions: migrations.classVersions)
        return try pass.run(shouldSave: mode == .save ? shouldSave : nil, finish)
    }

    /// Saves to the store, atomically and durably (unchanged state writes
    /// nothing); clears the crash marker and the quarantine.
    public func save() throws(RestorationFailure) {
        lock.lock()
        defer { lock.unlock() }
        guard let s = storage else {
            throw RestorationFailure(.invalid, "the engine has no archive path (save to a buffer instead)")
        }
        KillPoints.reach(.saveBegin)
        let token = lifecycle.saveBegan()
        carry.commitAfterWrite = true
        let bytes: [UInt8]
        do {
            defer { carry.commitAfterWrite = false }
            bytes = try saveToBytes()
        }
        KillPoints.reach(.saveEncoded)
        // The session is recorded as soon as the archive's place exists:
        // before the write when it does, else right after the write made it.
        let recorded = s.openSession(quiet: true)
        let wrote = try s.writeArchive(bytes, generations: configuration.generations)
        if recorded == .notFound { s.openSession() }   // the write made the folder
        lifecycle.saveSucceeded(token)
        guard wrote else {
            carry.uncommit()   // nothing written: the store holds the same records
            return
        }
        if let w = CrashGuard.clear(s.store) { log(.warning, w) }
        if let w = Quarantine.clear(s.store) { log(.warning, w) }   // a save ends a quarantine
        carry.commit()   // the store holds the carried records now
    }

    // MARK: restore

    /// Restores from the store, with the crash-loop guard; a missing or
    /// invalid archive falls back to the newest valid generation
    /// (StorageRoom.swift, `Storage.restoreWithFallback`).
    public func restore() throws(RestorationFailure) {
        lock.lock()
        defer { lock.unlock() }
        guard let s = storage else {
            throw RestorationFailure(.invalid, "the engine has no archive path (restore from a buffer instead)")
        }
        if operation != nil { try beginOperation(.restoring) }
        KillPoints.reach(.restoreBegin)
        try TestExits.fileRestore(self) { () throws(RestorationFailure) in
            try s.restoreWithFallback(generations: configuration.generations, outcomes: outcomes, restore: { (slot, index, reader, reason) throws(RestorationFailure) in
                try restoreSlot(s, slot, index, reader: reader, reason: reason)
            })
        }
    }

    /// Restores the store's `slot` (the archive, or one of its generations)
    /// with the crash-loop guard; `reader` validated from its bytes.
    func restoreSlot(_ s: Storage, _ slot: StoreSlot, _ index: UInt64, reader: ArchiveReader, reason: RestoreReason) throws(RestorationFailure) {
        let bytes = reader.archiveBytes
        let name = s.source(slot, index)
        let quarantined = try crashPolicy.admit(s, slot, index, name: name, reader: reader)
        outcomes.begin(reason, generation: UInt32(index))
        // What the archive slot holds now, for the next save to compare with.
        s.lastArchiveKey = slot == .archive ? Storage.key(bytes) : nil
        try runRestore(reader, markerIn: crashPolicy.guarded ? s.store : nil, quarantined: quarantined)
        // FALLBACK: the archive slot is empty or set aside, and the state came
        // from a generation. Dirty, so a host that saves only when dirty
        // (autosave, the toolkits) fills the slot at its next save or flush.
        if reason == .fallback { lifecycle.markDirty() }
    }

    /// Restores from archive bytes (no crash-loop guard).
    public func restore(bytes: UnsafeRawBufferPointer) throws(RestorationFailure) {
        lock.lock()
        defer { lock.unlock() }
        if operation != nil { try beginOperation(.restoring) }
        if bytes.count > RestorationLimits.maxArchiveBytes {
            throw RestorationFailure(.limit, "the buffer is \(bytes.count) bytes; the limit is \(RestorationLimits.maxArchiveBytes) bytes (RST_MAX_ARCHIVE_BYTES)")
        }
        let reader = try Engine.validate(bytes, source: "the buffer")
        outcomes.begin(.buffer, generation: 0)
        try runRestore(reader, markerIn: nil)
    }

    /// A restore of a validated archive (`RestorePass`): previous
    /// extended restorations end, the operation begins, the pass runs.
    private func runRestore(_ reader: ArchiveReader, markerIn markerStore: ArchiveStore?, quarantined: Quarantine.Entry? = nil) throws(RestorationFailure) {
        // Deferred completion: tokens of the previous restore end here, before this one begins.
        if operation == nil {
            deferred.checkDeadlines()
            deferred.expireAll("a new restore began before its extended restoration completed")
        }
        try beginOperation(.restoring)
        defer { operation = nil }
        lifecycle.restoring(true)   // its own marks are ignored (a restore never dirties)
        defer { lifecycle.restoring(false) }
        try RestorePass.run(reader, markerIn: markerStore, quarantined: quarantined,
                            owner: self, registry: registry, rooms: rooms.unsafelyUnwrapped, coder: theCoder)
    }

    /// `rst_dispatch`'s part of deferred completion: expires the tokens whose
    /// deadline passed (did_finish_restoring then runs on the dispatching thread).
    func expireDueTokens() {
        lock.withLock { deferred.checkDeadlines() }
    }

    /// The last restore's report; nil before any restore reached pass 1.
    public var lastRestoreReport: RestoreCounts? {
        lock.withLock {
            deferred.checkDeadlines()
            guard var r = outcomes.counts else { return nil }
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
        guard let s = storage else {
            throw RestorationFailure(.invalid, "the engine has no archive path")
        }
        if operation != nil { try beginOperation(.saving) }
        deferred.checkDeadlines()
        try s.discard()
    }

    /// Releases every object (children first) and shuts the class provider
    /// down. Returns false (and does nothing) when called from one of the
    /// engine's save or restore callbacks.
    @discardableResult
    public func destroy() -> Bool {
        // The lifecycle first, without the lock: its thread may be waiting for it.
        let refused = lock.withLock { operation != nil }
        if refused { return false }
        lifecycle.shutdown()
        lock.lock()
        defer { lock.unlock() }
        // Refused from inside a callback; the face that was asked logs it in its terms.
        if operation != nil { return false }
        if registry.isClosed { return true }
        deferred.expireAll("the engine was destroyed before its extended restoration completed", callDidFinish: false)
        closeSession()
        storage?.removeClosedSession()
        let all = registry.close()
        for n in all { n.call(.released, theCoder) }
        classProvider?.shutdown()
        classProvider = nil
        return true
    }

    deinit {
        if !registry.isClosed { _ = destroy() }
    }
}

extension Engine {
    /// The object at `made` if it is the one registered at `identifier`
    /// under `parent` (nil: a root), else nil (`FactoryRequest.object(at:)`).
    func acceptFactoryResult(_ made: UnsafeRawPointer, parent: ObjectNode?, identifier: String) -> ObjectNode? {
        lock.withLock { registry.acceptFactoryResult(made, parent: parent, identifier: identifier, owner: self) }
    }

    /// Runs `body` under the engine's lock (the order every component uses:
    /// the engine's lock first, then its own).
    public func serialized<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        try lock.withLock(body)
    }

    /// The registered child of `parent` (nil: a root) named `identifier`.
    public func child(of parent: ObjectNode?, named identifier: String) -> ObjectNode? {
        lock.withLock { registry.child(of: parent, named: identifier, owner: self) }
    }
}
