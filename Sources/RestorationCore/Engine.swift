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
    /// The identifier NUL-terminated; valid during the factory call.
    public let identifierCString: UnsafePointer<CChar>
    public let className: String?
    public let record: Int
    /// 0 at a root.
    public let depth: Int
    public let savedAtMs: Int64
    /// Readable (decode calls) during the factory call.
    public let coder: Coder

    /// The record's whole path, "A/B/C".
    public var path: String { coder.decoding.reader?.path(ofRecord: record) ?? identifier }
}

extension FactoryRequest {
    /// The object at `handle` if it is the one now registered at the
    /// requested path, else nil; never dereferences a handle that is not a
    /// registered object's. The engine applies the same check to every
    /// factory's result; a factory that holds only a handle (a plugin's,
    /// through libffi) uses this to turn it into the node.
    public func object(at handle: UnsafeRawPointer) -> ObjectNode? {
        engine.acceptFactoryResult(handle, parent: parent, identifier: identifier)
    }
}

/// Creates the object for a record, registered with exactly the requested
/// parent and identifier; nil declines.
public typealias Factory = (FactoryRequest) -> ObjectNode?

/// A factory as a plain function and a context, which the engine calls
/// without building a `FactoryRequest` (the fast kind; the C face adapts
/// `rst_factory_fn` to it): (engine handle, parent handle or nil,
/// identifier NUL-terminated, coder handle, context) -> the new object's
/// handle or nil.
public typealias FactoryFunction = @convention(c) (OpaquePointer?, OpaquePointer?, UnsafePointer<CChar>?, OpaquePointer?, UnsafeMutableRawPointer?) -> OpaquePointer?

/// A restoration class's factory, of either kind. A class, so that restore
/// pass 1 handles it without copying its contents per record. The engine
/// invokes every kind the same way: `Engine.invoke(_:for:)`.
final class ClassFactory {
    enum Kind {
        case function(FactoryFunction, context: UnsafeMutableRawPointer?)
        case closure(Factory)
    }
    let kind: Kind
    /// Names it in messages: "the factory of class 'X'", "the fallback factory".
    let what: String

    init(_ kind: Kind, what: String) {
        self.kind = kind
        self.what = what
    }
}

/// Supplies restoration classes no host registered (the plugin loader).
public protocol ClassProvider: AnyObject {
    /// The factory for `className`, loading plugins on first need; nil when none provides it.
    func factory(forClass className: String) -> Factory?
    /// Skips (docs/EVOLUTION.md): why no plugin provides `className` when a plugin that
    /// declares it was rejected (a sentence), else nil.
    func rejection(forClass className: String) -> String?
    /// Plugins loaded and rejected so far.
    var loadedCount: Int { get }
    var rejectedCount: Int { get }
    /// Engine destroy: run the plugins' fini.
    func shutdown()
}

extension ClassProvider {
    public func rejection(forClass className: String) -> String? { nil }
}

/// What the last restore did (`rst_restore_report`).
public struct RestoreCounts: Equatable, Sendable {
    public var archived: UInt64 = 0
    public var restored: UInt64 = 0
    public var skipped: UInt64 = 0
    public var pluginsLoaded: UInt64 = 0
    public var pluginsRejected: UInt64 = 0
    public init() {}
}

/// One archive's restoration machinery (`rst_engine`). Every public method
/// may be called from any thread; save, restore, register and unregister are
/// serialized by one recursive lock, and callbacks run with it held on the
/// calling thread (so they may register and find objects).
public final class Engine {
    /// Everything an engine is created with, complete at `init` (the C
    /// face reads `rst_engine_options` into one: CFace.readOptions; the
    /// Swift API's options make one too). `validate(naming:)` is the one
    /// check of it both use.
    public struct Configuration {
        public var archivePath: String?
        public var pluginDirectory: String?
        public var appVersion: String
        public var idiom: String
        /// false: restore neither checks nor writes the crash-loop marker.
        public var crashGuard: Bool
        /// Options version 2 (docs/LIFECYCLE.md): debounce of the autosave (0: none), its ceiling
        /// (0: 10 × the delay), older good archives kept (0…16).
        public var autosaveDelayMs: UInt32
        public var autosaveMaxDelayMs: UInt32
        public var generations: Int
        /// Library 1.1: a death inside one object's callback quarantines that
        /// record instead of setting the archive aside (Quarantine.swift).
        public var quarantine: Bool
        /// Library 1.1: saves that carry records nothing could produce (Carry.swift);
        /// 0: none, UInt32.max: always.
        public var carrySaves: UInt32
        /// Library 1.2: bytes an archive may take; 0: no budget (docs/BUDGETS.md).
        public var sizeBudget: UInt64
        /// What a save over `sizeBudget` does.
        public var budgetPolicy: BudgetPolicy
        /// How long a claimed signal waits for a dispatch to save before the
        /// signal is re-raised anyway (docs/LIFECYCLE.md, "Signals").
        public var signalDeadlineMs: UInt32
        /// Where the archive lives (docs/STORAGE.md); nil: the file store of
        /// `archivePath`, if any. Set one or the other.
        public var store: ArchiveStore?

        public init(archivePath: String? = nil, pluginDirectory: String? = nil, appVersion: String = "", idiom: String = "", crashGuard: Bool = true,
                    autosaveDelayMs: UInt32 = 0, autosaveMaxDelayMs: UInt32 = 0, generations: Int = 0,
                    quarantine: Bool = false, carrySaves: UInt32 = 0,
                    sizeBudget: UInt64 = 0, budgetPolicy: BudgetPolicy = .warn, signalDeadlineMs: UInt32 = 1000,
                    store: ArchiveStore? = nil) {
            self.archivePath = archivePath
            self.pluginDirectory = pluginDirectory
            self.appVersion = appVersion
            self.idiom = idiom
            self.crashGuard = crashGuard
            self.autosaveDelayMs = autosaveDelayMs
            self.autosaveMaxDelayMs = autosaveMaxDelayMs
            self.generations = generations
            self.quarantine = quarantine
            self.carrySaves = carrySaves
            self.sizeBudget = sizeBudget
            self.budgetPolicy = budgetPolicy
            self.signalDeadlineMs = signalDeadlineMs
            self.store = store
        }

        /// What each option is called where the caller gave it: the C face
        /// names the struct's members ("opts->generations"), the Swift API
        /// its properties ("generations").
        public struct OptionNames: Sendable {
            public var archivePath, appVersion, idiom, autosaveDelay, autosaveMaxDelay, generations, anArchivePath: String
            public init(archivePath: String, appVersion: String, idiom: String, autosaveDelay: String,
                        autosaveMaxDelay: String, generations: String, anArchivePath: String) {
                self.archivePath = archivePath
                self.appVersion = appVersion
                self.idiom = idiom
                self.autosaveDelay = autosaveDelay
                self.autosaveMaxDelay = autosaveMaxDelay
                self.generations = generations
                self.anArchivePath = anArchivePath
            }
        }

        /// The checks every front door makes of a configuration: an empty
        /// archive path, recorded strings over the archive's limit,
        /// generations over the most kept, an autosave ceiling below its
        /// delay, autosave or generations without an archive to save to.
        /// - Throws: `.invalid` or `.limit`, naming the option as `names` does.
        public func validate(naming names: OptionNames) throws(RestorationFailure) {
            if let archivePath, archivePath.isEmpty {
                throw RestorationFailure(.invalid, "\(names.archivePath) is empty")
            }
            if appVersion.utf8.count > ArchiveLimits.maxInfoStringBytes {
                throw RestorationFailure(.limit, "\(names.appVersion) is longer than \(ArchiveLimits.maxInfoStringBytes) bytes")
            }
            if idiom.utf8.count > ArchiveLimits.maxInfoStringBytes {
                throw RestorationFailure(.limit, "\(names.idiom) is longer than \(ArchiveLimits.maxInfoStringBytes) bytes")
            }
            if generations < 0 || generations > FileStore.maxGenerations {
                throw RestorationFailure(.invalid, "\(names.generations) is \(generations); at most \(FileStore.maxGenerations) generations are kept")
            }
            if autosaveMaxDelayMs != 0 && autosaveMaxDelayMs < autosaveDelayMs {
                throw RestorationFailure(.invalid, "\(names.autosaveMaxDelay) (\(autosaveMaxDelayMs)) is below \(names.autosaveDelay) (\(autosaveDelayMs))")
            }
            if archivePath == nil && store == nil && (autosaveDelayMs != 0 || generations != 0) {
                throw RestorationFailure(.invalid, "\(names.autosaveDelay) and \(names.generations) need \(names.anArchivePath)")
            }
        }
    }

    /// What a save over the size budget does (the C values are the raw values).
    public enum BudgetPolicy: UInt32, Sendable {
        case warn = 0, trim = 1, fail = 2
    }

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
        storage = (configuration.store ?? configuration.archivePath.map { FileArchiveStore(path: $0) }).map(Storage.init(store:))
        // Two-phase init: the sentinel and the coder refer back to self.
        registry.adopt(root: ObjectNode(sentinelOf: self))
        coderStorage = Coder(engine: self)
        lifecycleStorage = Lifecycle(engine: self, delayMs: configuration.autosaveDelayMs,
                                     maxDelayMs: configuration.autosaveMaxDelayMs)
        rooms = Rooms(crashPolicy: CrashPolicy(engine: self, guarded: configuration.crashGuard, quarantine: configuration.quarantine),
                      deferred: Deferred(engine: self), carry: Carry(engine: self),
                      sensitivity: SensitivityRoom(), budget: Budget(), outcomes: RestoreOutcomes(),
                      migrations: MigrationRoom())
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
    let storage: Storage?
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
        let recorded = openSession(s, quiet: true)
        let wrote = try writeArchive(s, bytes)
        if recorded == .notFound { openSession(s) }   // the write made the folder
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
    /// (EngineLifecycle.swift, `restoreWithFallback`).
    public func restore() throws(RestorationFailure) {
        lock.lock()
        defer { lock.unlock() }
        guard let s = storage else {
            throw RestorationFailure(.invalid, "the engine has no archive path (restore from a buffer instead)")
        }
        if operation != nil { try beginOperation(.restoring) }
        KillPoints.reach(.restoreBegin)
        try TestExits.fileRestore(self) { () throws(RestorationFailure) in try restoreWithFallback(s) }
    }

    /// Restores the store's `slot` (the archive, or one of its generations)
    /// with the crash-loop guard; `reader` validated from its bytes.
    func restoreSlot(_ s: Storage, _ slot: StoreSlot, _ index: UInt64, reader: ArchiveReader, reason: RestoreReason) throws(RestorationFailure) {
        let bytes = reader.archiveBytes
        let name = source(s, slot, index)
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

    func validate(_ bytes: [UInt8], source: String) throws(RestorationFailure) -> ArchiveReader {
        try bytes.withUnsafeBytes { b in
            Result { () throws(RestorationFailure) in try Engine.validate(b, source: source) }
        }.get()
    }

    /// Validates archive bytes completely, mapping codec failures to statuses.
    public static func validate(_ bytes: UnsafeRawBufferPointer, source: String) throws(RestorationFailure) -> ArchiveReader {
        do {
            return try ArchiveReader(bytes: bytes)
        } catch {
            throw failure(error, source: source)
        }
    }

    /// Validates a buffer the reader adopts (`FileStore.readBuffer`'s): no
    /// second copy. The buffer is the reader's from here on, freed with it
    /// or when validation fails.
    public static func validate(adopting bytes: UnsafeMutableRawBufferPointer, source: String) throws(RestorationFailure) -> ArchiveReader {
        do {
            return try ArchiveReader(adopting: bytes)
        } catch {
            throw failure(error, source: source)
        }
    }

    /// Validates bytes read from a store, released with the reader: kept
    /// where they are when nothing writes them while held (the file store's
    /// read-only mapping), adopted when they are the store's heap buffer,
    /// else copied and the hold released.
    public static func validate(held: StoreBytes, source: String) throws(RestorationFailure) -> ArchiveReader {
        guard held.isImmutable else { return try validate(adopting: held.takeBuffer(), source: source) }
        do {
            return try ArchiveReader(keeping: held.bytes, release: held.release)
        } catch {
            throw failure(error, source: source)
        }
    }

    private static func failure(_ error: ArchiveFailure, source: String) -> RestorationFailure {
        switch error {
        case .corrupt(let m): return RestorationFailure(.corrupt, "\(source) is corrupt: \(m)")
        case .version(let m): return RestorationFailure(.version, "\(source) is not supported: \(m)")
        case .limit(let m): return RestorationFailure(.limit, "\(source) exceeds a limit: \(m)")
        }
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
        try discardStore(s)
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
