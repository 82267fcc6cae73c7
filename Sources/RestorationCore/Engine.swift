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

/// What the steps of one restore share: the archive, the coder (set up to
/// read it), the per-record state, and the class factories looked up so far
/// (once per class name). Ends with `end()`, which resets the coder.
final class RestoreRun {
    let reader: ArchiveReader
    let coder: Coder
    let session: RestoreSession
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

    init(reader: ArchiveReader, coder: Coder) {
        self.reader = reader
        self.coder = coder
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
    func classFactory(ofRecord r: Int, engine: Engine) -> Unmanaged<ClassFactory>? {
        guard let ci = reader.className(ofRecord: r) else { return nil }
        if let f = classFactories.lookup(ci) { return f }
        return classFactories.store(ci, engine.registry.factory(forClass: name(ci), provider: engine.classProvider))
    }
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
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var saveGeneration = 0
    /// The number of registered objects.
    public var objectCount: Int { registry.objectCount }
    /// The handle of the most recently registered object (nil once it leaves).
    public var lastRegistered: UnsafeMutableRawPointer? { registry.lastRegistered }
    /// The reason, generation, counts and skips of the restore in progress
    /// or last done (RestoreOutcomes.swift).
    let outcomes = RestoreOutcomes()
    /// Class versions (Migrations.swift) and migration steps by class and from-version.
    var classVersions: [String: UInt32] = [:]
    var migrations: [String: [UInt32: MigrationStep]] = [:]
    /// Quarantine: names the running object callback's record in the marker.
    var markerWatch: MarkerWatch?
    /// Per class number, during a save that stores versions.
    private var saveVersions: [UInt32] = []
    /// Size budgets (Budget.swift): the measurement of the last save. Under `lock`.
    let budget = Budget()

    enum Operation { case saving, restoring }
    /// The save or restore in progress (its callbacks are running).
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var operation: Operation?

    /// Save: identifiers of at most 8 bytes → their name index in the
    /// archive being written (direct-mapped by prefix; most hosts reuse
    /// identifiers across parents).
    private let shortNameCache = UnsafeMutablePointer<(key: UInt64, index: UInt32)>.allocate(capacity: 256)

    public init(configuration: Configuration) {
        self.configuration = configuration
        storage = (configuration.store ?? configuration.archivePath.map { FileArchiveStore(path: $0) }).map(Storage.init(store:))
        // Two-phase init: the sentinel and the coder refer back to self.
        registry.adopt(root: ObjectNode(sentinelOf: self))
        coderStorage = Coder(engine: self)
        lifecycleStorage = Lifecycle(engine: self, delayMs: configuration.autosaveDelayMs,
                                     maxDelayMs: configuration.autosaveMaxDelayMs)
        rooms = Rooms(crashPolicy: CrashPolicy(engine: self, guarded: configuration.crashGuard, quarantine: configuration.quarantine),
                      deferred: Deferred(engine: self), carry: Carry(engine: self))
        KillPoints.load()   // RESTORATION_KILL_AT is read once per process (docs/TESTING.md)
    }

    /// Sensitive values: the policy, the encryption key's source, and what
    /// one save, export or restore does with them (Sensitivity.swift).
    public let sensitivity = SensitivityRoom()
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

    /// The engine's v1.1 rooms, each with its state and a narrow interface
    /// back to the engine: the crash-loop guard and quarantine
    /// (CrashPolicy.swift), extended restorations (Deferred.swift) and the
    /// records carried through saves (Carry.swift).
    struct Rooms {
        let crashPolicy: CrashPolicy
        let deferred: Deferred
        let carry: Carry
    }
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var rooms: Rooms?
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

    private func save<R>(mode: SensitivityRoom.WriteMode = .save, _ finish: (inout ArchiveWriter, ArchiveInfo) throws(WriteFailure) -> R) throws(RestorationFailure) -> R {
        lock.lock()
        defer { lock.unlock() }
        if operation == nil { deferred.checkDeadlines() }   // deferred completion: before the save begins (did_finish_restoring may save)
        try beginOperation(.saving)
        defer { operation = nil }
        sensitivity.beginSave(mode)
        theCoder.encoding.sensitivityInSave = sensitivity.hasPolicy || mode == .portableExport
        var sensitiveLeftOut = (count: 0, reason: "")
        defer {
            theCoder.encoding.sensitivityInSave = false
            _ = sensitivity.endSave()              // the key wiped on every path
        }
        if mode == .save, let shouldSave, !shouldSave() {
            throw RestorationFailure(.rejected, "save rejected: should_save returned false; the old archive is untouched")
        }
        let order = registry.preorderRefs()
        if order.count > RestorationLimits.maxObjects {
            throw RestorationFailure(.limit, "save: \(order.count) objects are registered; an archive holds at most \(RestorationLimits.maxObjects) (RST_MAX_OBJECTS)")
        }
        let info = ArchiveInfo(formatVersion: 1, appVersion: configuration.appVersion,
                               systemVersion: SystemInfo.systemVersion, idiom: configuration.idiom,
                               savedAtMs: SystemInfo.nowMs(), objectCount: UInt64(order.count))
        let coder = theCoder
        defer {
            coder.encoding.writer = ArchiveWriter()
            coder.keys.clear()
        }
        try writeRecords(order, cut: nil, list: nil)
        // Size budgets (Budget.swift): measured once the records are written.
        var trimmedFrom: (writer: ArchiveWriter, total: Int, cut: [Bool])? = nil
        let budgetBytes = configuration.sizeBudget
        if budgetBytes > 0 && mode == .save {            // an export has no budget
            let size = try Engine.saveFailure { () throws(WriteFailure) in try coder.encoding.writer.archiveSize(info: info) }
            switch budget.judge(coder.encoding.writer, size: size, budget: budgetBytes, policy: configuration.budgetPolicy,
                                liveCount: order.count, priority: { order[$0].with { $0.priority } }) {
            case .fits:
                break
            case .warn(let m):
                log(.warning, m)
            case .fail(let m):
                budget.keep(coder.encoding.writer, total: size)
                throw RestorationFailure(.limit, "save failed, the old archive is untouched: \(m)")
            case .trim(let cut, let list):
                let first = coder.encoding.writer
                try writeRecords(order, cut: cut, list: list)
                let trimmedSize = try Engine.saveFailure { () throws(WriteFailure) in try coder.encoding.writer.archiveSize(info: info) }
                if UInt64(trimmedSize) > budgetBytes {
                    budget.keep(first, total: size)
                    throw RestorationFailure(.limit, "save failed, the old archive is untouched: the archive would be \(trimmedSize) bytes even with \(list.entries.count) subtrees left out, over its size budget of \(budgetBytes) bytes (policy TRIM)")
                }
                log(.info, "the archive would have been \(size) bytes, over its size budget of \(budgetBytes) bytes; \(list.entries.count) subtree\(list.entries.count == 1 ? "" : "s") left out (policy TRIM): \(list.entries.prefix(3).map { "'\($0.path)'" }.joined(separator: ", "))\(list.entries.count > 3 ? ", ..." : "")")
                trimmedFrom = (first, size, cut)
            }
        }
        sensitiveLeftOut = sensitivity.endSave()   // every value written (carried ones too): the key is wiped
        let total = try Engine.saveFailure { () throws(WriteFailure) in try coder.encoding.writer.archiveSize(info: info) }
        let result = try Engine.saveFailure { () throws(WriteFailure) in try finish(&coder.encoding.writer, info) }
        guard mode == .save else { return result }      // an export: no sizes kept, no carry count, no WARNING
        if sensitiveLeftOut.count > 0 {
            log(.warning, "save: \(sensitiveLeftOut.count) ENCRYPTED value\(sensitiveLeftOut.count == 1 ? " was" : "s were") not written (\(sensitiveLeftOut.reason)); they are left out as if SECRET")
        }
        budget.keep(coder.encoding.writer, total: total, trimmedFrom: trimmedFrom)
        if !carry.commitAfterWrite { carry.commit() }
        return result
    }

    /// A writer's failure as the save's.
    private static func saveFailure<T>(_ body: () throws(WriteFailure) -> T) throws(RestorationFailure) -> T {
        do {
            return try body()
        } catch {
            switch error {
            case .limit(let m): throw RestorationFailure(.limit, "save failed: \(m)")
            case .duplicateKey: throw RestorationFailure(.duplicate, "save failed: duplicate key")
            case .state(let m): throw RestorationFailure(.state, "save failed: \(m)")
            }
        }
    }

    /// Writes the records of a save into a new writer (the coder's): the live
    /// objects of `order` (without those `cut` marks: a size budget's TRIM,
    /// whose references are dropped), `list` in record 0, then the carried
    /// records whose parents are written.
    private func writeRecords(_ order: [NodeRef], cut: [Bool]?, list: TrimmedList?) throws(RestorationFailure) {
        saveGeneration += 1
        let gen = saveGeneration
        if let cut {
            var k = 0
            for i in 0..<order.count {
                order[i].with { n in
                    n.saveGeneration = gen
                    n.saveIndex = cut[i] ? -1 : k
                }
                if !cut[i] { k += 1 }
            }
        } else {
            for i in 0..<order.count {
                order[i].with { n in
                    n.saveGeneration = gen
                    n.saveIndex = i
                }
            }
        }
        let coder = theCoder
        coder.encoding.writer = ArchiveWriter(estimatedObjects: order.count)
        sensitivity.newWriter()   // a TRIM writes the records again, into a new key table
        // Class versions: records store their class version once any class has one.
        saveVersions = classVersions.isEmpty ? [] : registry.classTable.map { classVersions[$0.name] ?? 0 }
        coder.encoding.writer.recordVersions = !classVersions.isEmpty
        coder.encoding.writer.recordCarry = !carry.isEmpty   // carried records
        defer { saveVersions = [] }
        coder.encoding.failure = nil
        coder.encoding.saveGeneration = gen
        coder.keys.clear()
        // Name indexes of this archive: per class number, and for short identifiers.
        let classIndex = UnsafeMutablePointer<UInt32>.allocate(capacity: max(registry.classTable.count, 1))
        classIndex.initialize(repeating: UInt32.max, count: max(registry.classTable.count, 1))
        defer { classIndex.deallocate() }
        shortNameCache.initialize(repeating: (0, 0), count: 256)
        // One sink for the records (nothing copies the writer until they are written).
        coder.encoding.openSink()
        defer { coder.encoding.closeSink() }

        if let cut {
            var pendingList = list
            for i in 0..<order.count where !cut[i] {
                if let f = order[i].with({ saveObject($0, coder, classIndex, list: pendingList) }) { throw f }
                pendingList = nil
            }
        } else {
            for u in order {
                if let f = u.with({ saveObject($0, coder, classIndex) }) { throw f }
            }
        }
        if !carry.isEmpty {
            // Carried records follow the live ones.
            do {
                try carry.append(&coder.encoding.writer) { path in
                    guard let n = find(path: path), n.saveGeneration == gen, n.saveIndex >= 0 else { return nil }
                    return n.saveIndex
                }
            } catch {
                throw RestorationFailure(.limit, "save failed: the carried records do not fit: \(error)")
            }
        }
    }

    /// Writes one object of a save; returns the failure that ends the save.
    /// The writer is reached through its sink (`FieldSink`, opened by
    /// `writeRecords`: one copy-on-write check per save), which the
    /// object's encode callback uses too (the C face's fast lane).
    @inline(__always)
    private func saveObject(_ n: ObjectNode, _ coder: Coder, _ classIndex: UnsafeMutablePointer<UInt32>, list: TrimmedList? = nil) -> RestorationFailure? {
        let sink = coder.encoding.sink.unsafelyUnwrapped
        let idIndex = nameIndex(n, sink)
        var cls: UInt32? = nil
        if n.classID >= 0 {
            var k = classIndex[n.classID]
            if k == UInt32.max {
                var cn = registry.classTable[n.classID].name
                k = cn.withUTF8 { sink.name(UnsafeRawBufferPointer($0)) }
                classIndex[n.classID] = k
            }
            cls = k
        }
        // The container, borrowed (the engine owns every node: no retain).
        let parentIndex: Int? = n.containerRef.unsafelyUnwrapped.with { $0.isSentinel ? nil : $0.saveIndex }
        if _slowPath(!saveVersions.isEmpty) {
            sink.beginObject(identifier: idIndex, parent: parentIndex, className: cls,
                             version: n.classID >= 0 ? saveVersions[n.classID] : 0)
        } else {
            sink.beginObject(identifier: idIndex, parent: parentIndex, className: cls)
        }
        if n.handles(.encode) {
            coder.beginEncoding(n)
            coder.encoding.openLane()
            n.call(.encode, coder)
            coder.encoding.closeLane()
            coder.endEncoding()
        }
        if coder.encoding.hasFailure, let f = coder.encoding.failure {
            return RestorationFailure(f.status, "save failed, the old archive is untouched: \(f.message)")
        }
        if let list {
            // Size budgets: the list of trimmed subtrees goes into record 0.
            let before = coder.encoding.writer.recordBytes
            defer { budget.listBytes = coder.encoding.writer.recordBytes - before }   // not the root's own bytes
            do { try Engine.writeTrimmedList(list, &coder.encoding.writer) } catch {
                return RestorationFailure(.limit, "save failed, the old archive is untouched: the list of trimmed subtrees does not fit: \(error.message)")
            }
        }
        do {
            try sink.endObject()
        } catch {
            return RestorationFailure(.state, "save failed, the old archive is untouched: the encode callback of '\(n.path)' left a nested record open (a record begun and not ended)")
        }
        return nil
    }

    /// The name index of a node's identifier in the archive being written.
    @inline(__always)
    private func nameIndex(_ n: ObjectNode, _ sink: FieldSink) -> UInt32 {
        let bytes = n.identifierBytes
        guard n.identifierCount <= 8 else { return sink.name(bytes) }
        let key = n.identifierPrefix   // identifiers hold no NUL: the prefix is the identifier
        let e = shortNameCache + Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 56)
        if e.pointee.key == key { return e.pointee.index }
        let index = sink.name(bytes)
        e.pointee = (key, index)
        return index
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

    /// A restore, after the archive was read and validated (step 1,
    /// `validate`, in `restore()` and `restore(bytes:)`), as named steps:
    ///
    ///     shouldRestore → loadPlugins → [migrate] → materialize → decode → report → finish
    ///
    /// Each step is one method over one `RestoreRun`; v1.1's passes slot in
    /// where the comments say (migrate before materialize; quarantine and
    /// carry decide skips inside materialize; explain collects the skips
    /// `skip(_:_:)` records). Every factory is invoked by `invoke(_:for:in:)`
    /// and every object called by `ObjectNode.call`, whatever their kind.
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
        // A marker that cannot be written (a read-only directory) must not stop
        // the restore: it runs without the crash-loop guard, with a warning.
        var guarded: CrashGuard.Token?
        if let markerStore {
            // Quarantine: with it, a version-2 marker names each object callback's record;
            // attempt 2 (a quarantine in effect) makes any death set the archive aside.
            let attempt = crashPolicy.attempt(quarantined: quarantined)
            do { guarded = try CrashGuard.begin(markerStore, bytes: reader.archiveBytes, attempt: attempt) } catch {
                log(.warning, "\(error.message); restoring without the crash-loop guard")
            }
            if let note = guarded?.note { log(.warning, note) }
        }
        markerWatch = guarded?.watch
        defer {
            markerWatch = nil
            if deferred.isOpen {
                // Deferred completion: the marker stays, naming the record that extended.
                deferred.park(PendingFinish(guardToken: guarded, watch: guarded?.watch, reader: reader))
            } else if let guarded, let w = CrashGuard.end(guarded) {
                log(.warning, w)
            }
        }

        if let shouldRestore, !shouldRestore(reader.info) {
            throw RestorationFailure(.rejected, "restore rejected: should_restore returned false; nothing was decoded")
        }
        // Plugins load, then migrations run, after validation, before any factory.
        loadPlugins(for: reader)
        let (migrated, preSkips) = try migrate(reader, quarantined: quarantined?.record)
        let opened = sensitivity.openSealed(migrated, engine: self)   // sealed values: opened once, before any decode
        defer { if opened !== migrated { SensitivityRoom.wipe(opened) } }   // after run.end(): nothing reads it then
        let run = RestoreRun(reader: opened, coder: theCoder)
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
        materialize(run)
        let order = decode(run, plan)
        // Size budgets: the subtrees the save left out (as saved, before migrations).
        outcomes.record(report(run, decoded: order.count), run.explain(), trimmed: Engine.trimmedSkips(reader), reader: migrated)
        carry.collect(run)
        finish(run, order)
    }

    /// The `loadPlugins` step (before `migrate`): asks the class provider
    /// once for each class of the archive that no host class serves, so the
    /// plugins those classes need are loaded (and the migrations their
    /// `init` registers apply) before any migration or factory runs.
    private func loadPlugins(for reader: ArchiveReader) {
        guard let provider = classProvider else { return }
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
    private func materialize(_ run: RestoreRun) {
        let reader = run.reader, session = run.session
        let rootRef = NodeRef(root)
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
            if let factory = run.classFactory(ofRecord: r, engine: self) {
                made = factory._withUnsafeGuaranteedRef { invoke($0, for: r, in: run, container: containerRef, identifier: key) }
            }
            if made == nil, let fallback = fallbackRef {
                made = fallback._withUnsafeGuaranteedRef { invoke($0, for: r, in: run, container: containerRef, identifier: key) }
            }
            if let made {
                session.materialize(r, made)
            } else {
                if run.notes[r] == nil { noteUnproduced(r, run) }
                skip(r, run)
            }
        }
    }

    /// Marks record r skipped (its descendants follow in `materialize`).
    /// v1.1: carry keeps the record, explain records the reason.
    private func skip(_ r: Int, _ run: RestoreRun) {
        run.session.state[r] = .skipped
        let cls = run.reader.className(ofRecord: r).map { "class '\(run.name($0))'" } ?? "no class"
        log(.info, "record \(r) ('\(run.reader.path(ofRecord: r))', \(cls)): no registered object, factory or fallback produced it; skipped with its descendants")
    }

    /// The one way to invoke a factory, of either kind: the coder reads
    /// record r during the call, and the result counts only if it is the
    /// object now registered at the record's path (anything else is logged
    /// and treated as declined). nil: declined.
    private func invoke(_ factory: ClassFactory, for r: Int, in run: RestoreRun,
                        container containerRef: NodeRef, identifier key: IdentifierKey) -> NodeRef? {
        let container = containerRef.node
        let idBytes = key.bytes
        registry.freePath.set(containerRef, key)
        defer { registry.freePath.clear() }
        let coder = run.coder
        coder.beginDecoding(record: r, node: nil, factory: true)
        defer { coder.endDecoding() }
        let made: UnsafeRawPointer?
        watchEnter(r)
        defer { watchLeave() }
        switch factory.kind {
        case .function(let fn, let context):
            made = fn(OpaquePointer(handle), container.isSentinel ? nil : OpaquePointer(container.handle),
                      run.identifierCString(idBytes), OpaquePointer(coder.handle), context).map { UnsafeRawPointer($0) }
        case .closure(let f):
            let reader = run.reader
            let request = FactoryRequest(engine: self, parent: container.isSentinel ? nil : container,
                                         identifier: run.name(reader.identifier(ofRecord: r)),
                                         identifierCString: run.identifierCString(idBytes),
                                         className: reader.className(ofRecord: r).map(run.name), record: r,
                                         depth: container.depth + 1, savedAtMs: reader.info.savedAtMs, coder: coder)
            made = f(request).map { UnsafeRawPointer($0.handle) }
        }
        if coder.hasCallbackFailure, let f = coder.takeCallbackFailure() {
            log(.warning, "record \(r) ('\(run.reader.path(ofRecord: r))'): \(factory.what) failed (\(f.status.cName)): \(f.message)")
        }
        guard let made else {
            run.note(r, .declined, "\(factory.what) returned NULL (declined)")
            return nil
        }
        if let accepted = registry.acceptFactoryResult(made, container: containerRef, identifier: key) { return accepted }
        let path = run.reader.path(ofRecord: r)
        run.note(r, .factoryError, "\(factory.what) returned an object that is not the one registered at '\(path)'")
        log(.warning, "record \(r) ('\(path)'): \(factory.what) returned an object that is not the one registered at '\(path)' (a factory must register its object with exactly the given parent and identifier); treated as declined")
        return nil   // v1.1 explain: FACTORY_ERROR
    }

    /// Pass 2: `decode` in the order `Planner` computes (planned before
    /// materialize: `DecodePlan`). Returns that order.
    private func decode(_ run: RestoreRun, _ plan: consuming DecodePlan) -> [Int32] {
        let session = run.session
        let order = plan.order(reader: run.reader, state: session.state, materialized: session.materializedCount)
        let coder = run.coder
        if _slowPath(KillPoints.isArmed(.restoreDecoding)) { reachDecodingPoint(run, order) }
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
                if coder.hasCallbackFailure, let f = coder.takeCallbackFailure() { decodeFailed(Int(r32), f, run) }
            }
        }
        return order
    }

    /// A decode callback reported failure: logged; the object keeps what it
    /// decoded, is not counted as restored and gets no `finished`.
    private func decodeFailed(_ r: Int, _ f: RestorationFailure, _ run: RestoreRun) {
        run.failed.insert(r)
        run.note(r, .decodeFailed, "its decode callback failed (\(f.status.cName)): \(f.message)")
        log(.warning, "record \(r) ('\(run.reader.path(ofRecord: r))'): decode failed (\(f.status.cName)): \(f.message); the object keeps what it decoded, is not counted as restored and is not told that restoration finished")
    }

    /// The report of this restore (`lastRestoreReport`).
    private func report(_ run: RestoreRun, decoded: Int) -> RestoreCounts {
        var report = RestoreCounts()
        report.archived = UInt64(run.reader.recordCount)
        report.restored = UInt64(decoded - run.failed.count)
        report.skipped = UInt64(run.reader.recordCount) - report.restored
        report.pluginsLoaded = UInt64(classProvider?.loadedCount ?? 0)
        report.pluginsRejected = UInt64(classProvider?.rejectedCount ?? 0)
        return report
    }

    /// Pass 3: `finished` in decode order, then `didFinishRestoring`.
    private func finish(_ run: RestoreRun, _ order: [Int32]) {
        let session = run.session, coder = run.coder
        let failed = run.failed
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
        if !deferred.isOpen { didFinishRestoring?() }
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
        shortNameCache.deallocate()
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
