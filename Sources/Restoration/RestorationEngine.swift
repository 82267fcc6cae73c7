import Foundation
import RestorationArchive
import RestorationCore
import RestorationPlugins

/// One archive's restoration machinery: the Swift face of `rst_engine`.
///
/// Create one per archive (one per window or scene, if you have several),
/// register your ``StateRestoring`` objects, and call ``save()`` when the
/// app is about to go away and ``restore()`` when it launches again:
///
/// ```swift
/// let engine = try RestorationEngine(archiveURL: stateURL, appVersion: "2.1", idiom: "desktop")
/// try engine.register(tabs)
/// try engine.register(settings)
/// try engine.registerRestorationClass(DetailRestorer.self, named: "CountryDetail")
/// do { try engine.restore() } catch .notFound { /* first launch */ }
/// …
/// try engine.save()
/// ```
///
/// This is a thin layer over the same core the C ABI uses: a C host, a
/// Swift host and `restorectl` read and write identical archives.
///
/// **Threads.** Every method may be called from any thread; save,
/// restore, register and unregister are serialized. Object callbacks,
/// factories and the `should…` closures run on the thread that called
/// ``save()`` or ``restore()``, and may register and look up objects.
///
/// **Weak registration.** See ``register(_:)``.
///
/// See also <doc:Restoration>, the overview of preservation and restoration.
public final class RestorationEngine: @unchecked Sendable {

    // MARK: - value types

    /// What an archive says about when and by whom it was saved (UIKit's
    /// `UIApplicationStateRestoration…Key` values); the C type is
    /// `rst_archive_info`.
    ///
    /// See also <doc:Restoration>.
    public struct ArchiveInfo: Equatable, Sendable {
        /// The archive format version (1).
        public var formatVersion: Int
        /// The host's ``Options/appVersion`` at save time.
        public var appVersion: String
        /// The operating system release at save time (`uname -r`).
        public var systemVersion: String
        /// The host's ``Options/idiom`` at save time.
        public var idiom: String
        /// When the archive was saved, in UTC milliseconds since 1970.
        public var savedAtMilliseconds: Int64
        /// Records (objects) in the archive.
        public var objectCount: Int
        /// Why this archive is being restored (in ``shouldRestore``);
        /// ``RestoreReason/firstLaunch`` elsewhere. C: `restore_reason`.
        public var restoreReason: RestoreReason = .firstLaunch
        /// 0: the current archive; k: generation k. C: `generation`.
        public var generation: Int = 0

        /// When the archive was saved.
        public var savedAt: Date { Date(timeIntervalSince1970: Double(savedAtMilliseconds) / 1000) }

        /// Creates an info value (tests and tools; the engine makes them).
        public init(formatVersion: Int = 1, appVersion: String = "", systemVersion: String = "",
                    idiom: String = "", savedAtMilliseconds: Int64 = 0, objectCount: Int = 0) {
            self.formatVersion = formatVersion
            self.appVersion = appVersion
            self.systemVersion = systemVersion
            self.idiom = idiom
            self.savedAtMilliseconds = savedAtMilliseconds
            self.objectCount = objectCount
        }

        init(_ i: RestorationArchive.ArchiveInfo) {
            self.init(formatVersion: Int(i.formatVersion), appVersion: i.appVersion, systemVersion: i.systemVersion,
                      idiom: i.idiom, savedAtMilliseconds: i.savedAtMs, objectCount: Int(clamping: i.objectCount))
        }
    }

    /// What the last restore did; the C type is `rst_restore_report`.
    ///
    /// See also <doc:Restoration>.
    public struct RestoreReport: Equatable, Sendable {
        /// Records in the archive.
        public var archived: Int
        /// Objects decoded.
        public var restored: Int
        /// Records no object could be found or created for, with their
        /// descendants.
        public var skipped: Int
        /// Plugins this engine loaded so far (they load once per engine).
        public var pluginsLoaded: Int
        /// Plugins this engine rejected so far.
        public var pluginsRejected: Int

        /// Creates a report (tests; the engine makes them).
        public init(archived: Int = 0, restored: Int = 0, skipped: Int = 0, pluginsLoaded: Int = 0, pluginsRejected: Int = 0) {
            self.archived = archived
            self.restored = restored
            self.skipped = skipped
            self.pluginsLoaded = pluginsLoaded
            self.pluginsRejected = pluginsRejected
        }

        init(_ r: RestorationCore.RestoreCounts) {
            self.init(archived: Int(clamping: r.archived), restored: Int(clamping: r.restored), skipped: Int(clamping: r.skipped),
                      pluginsLoaded: Int(clamping: r.pluginsLoaded), pluginsRejected: Int(clamping: r.pluginsRejected))
        }
    }

    /// The level of a diagnostic (`RST_LOG_*`).
    ///
    /// See also <doc:Restoration>.
    public enum LogLevel: Int, Comparable, Sendable, CustomStringConvertible {
        /// `RST_LOG_DEBUG`: tracing.
        case debug = 0
        /// `RST_LOG_INFO`: a skipped record, a loaded plugin.
        case info = 1
        /// `RST_LOG_WARNING`: a rejected plugin, a declining factory.
        case warning = 2
        /// `RST_LOG_ERROR`: a set-aside archive.
        case error = 3

        init(_ l: RestorationCore.LogLevel) { self = LogLevel(rawValue: l.rawValue) ?? .error }

        /// Orders by severity.
        public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }

        /// "debug", "info", "warning" or "error".
        public var description: String {
            switch self {
            case .debug: return "debug"
            case .info: return "info"
            case .warning: return "warning"
            case .error: return "error"
            }
        }
    }

    /// The engine's options: `rst_engine_options` as Swift values.
    ///
    /// See also <doc:Restoration>.
    public struct Options {
        /// The archive file ``RestorationEngine/save()`` writes and
        /// ``RestorationEngine/restore()`` reads; nil: only
        /// ``RestorationEngine/saveToData()`` and
        /// ``RestorationEngine/restore(from:)`` are available.
        public var archivePath: String? {
            didSet { nonFileArchiveURL = nil }
        }
        /// A directory of `*.so` plugins that provide restoration classes;
        /// nil: no plugins. Loaded once per engine, when a restore first
        /// needs a class nobody registered.
        public var pluginDirectory: String? {
            didSet { nonFilePluginURL = nil }
        }
        /// A URL given as `archiveURL` / `pluginDirectoryURL` that is not a
        /// file URL: kept aside (the path stays nil) so that creating the
        /// engine fails with a message naming it.
        private var nonFileArchiveURL: URL?
        private var nonFilePluginURL: URL?
        /// Recorded in the archive (``ArchiveInfo/appVersion``).
        public var appVersion: String
        /// Recorded in the archive: "desktop", "tablet", "kiosk", …
        public var idiom: String
        /// False: ``RestorationEngine/restore()`` neither checks nor writes
        /// the crash-loop marker (`RST_ENGINE_NO_CRASH_GUARD`).
        public var crashGuard: Bool
        /// v1.1: when a restore dies inside one object's callback (its
        /// factory, a migration, `decodeRestorableState` or
        /// `applicationFinishedRestoringState`), the next restore skips that
        /// object and its descendants (``RestorationEngine/SkipReason/quarantined``)
        /// and restores the rest, instead of setting the whole archive
        /// aside; a second death, or one outside object callbacks, still sets
        /// it aside. The next successful save ends the quarantine. False by
        /// default (1.0's behaviour). C: options version 2, or
        /// `RST_ENGINE_QUARANTINE`.
        public var crashQuarantine: Bool = false
        /// Whether objects a restoration class (or the fallback factory)
        /// creates are owned by the engine: kept alive, saved and restored
        /// at every launch until the app unregisters them. True (the
        /// default, 1.0's behaviour) suits objects nothing else holds.
        /// False ties each such registration to the object's life, as for
        /// objects the app registers itself: the engine holds it weakly, so
        /// the factory must hand it to its owner (a parent's children, a
        /// navigation stack) before returning, and when the app drops it,
        /// it leaves the archive. See ``RestorationEngine/relinquish(_:)``
        /// for one object at a time.
        public var ownsRestoredObjects: Bool = true
        /// v1.1: records a restore skipped because nothing could produce
        /// them (no registered object, restoration class or fallback — a
        /// plugin that was uninstalled) are kept with their descendants and
        /// written back by the next `carrySaves` successful saves, so they
        /// come back when their class returns. 0 (the default): dropped at
        /// the next save, as in 1.0; `UInt32.max`: always. The C option is
        /// `carry_saves` (options version 2).
        public var carrySaves: UInt32 = 0
        /// Asked at every save; false rejects it
        /// (``RestorationError/rejected(_:)``) and the old archive stays.
        /// Nil: yes.
        public var shouldSave: (() -> Bool)?
        /// Asked after the archive validated, before anything is created;
        /// false rejects the restore. Nil: yes.
        public var shouldRestore: ((ArchiveInfo) -> Bool)?
        /// Called after every restored object's
        /// ``StateRestoring/applicationFinishedRestoringState()``.
        public var didFinishRestoring: (() -> Void)?
        /// Diagnostics that change no result (a rejected plugin, a skipped
        /// record, a set-aside archive). Nil: warnings and errors go to
        /// standard error.
        public var log: ((LogLevel, String) -> Void)?
        /// Autosave: a save becomes due this long after the last
        /// ``RestorationEngine/markDirty()``; nil: no autosave. Needs an
        /// archive path. See ``RestorationEngine/autosaveOnMainQueue()``.
        /// The corresponding C member is `autosave_delay_ms`.
        public var autosaveDelay: Duration? = nil
        /// The ceiling: never later than this after the first mark since the
        /// last successful save, and the longest wait between retries; nil:
        /// 10 × ``autosaveDelay``. The corresponding C member is `autosave_max_delay_ms`.
        public var autosaveMaxDelay: Duration? = nil
        /// Older good archives kept (`<archive>.1` … `.K`), 0…16.
        /// The corresponding C member is `generations`.
        public var generations: Int = 0
        /// How long a signal claimed by ``RestorationEngine/saveOnSignals(_:)``
        /// waits for a dispatch to save before it ends the program anyway
        /// (without the save); nil: 1 s. The corresponding C member is
        /// `signal_deadline_ms`.
        public var signalDeadline: Duration? = nil
        /// Bytes an archive may take; 0: no budget. See docs/BUDGETS.md.
        /// The corresponding C member is `size_budget`.
        public var sizeBudget: UInt64 = 0
        /// What a save over ``sizeBudget`` does. The corresponding C member
        /// is `budget_policy`.
        public var budgetPolicy: BudgetPolicy = .warn

        /// The archive file as a URL (a file URL), or nil.
        public var archiveURL: URL? {
            get { nonFileArchiveURL ?? archivePath.map { URL(fileURLWithPath: $0) } }
            set {
                archivePath = newValue.flatMap { $0.isFileURL ? $0.path : nil }
                nonFileArchiveURL = newValue.flatMap { $0.isFileURL ? nil : $0 }
            }
        }

        /// The plugin directory as a URL (a file URL), or nil.
        public var pluginDirectoryURL: URL? {
            get { nonFilePluginURL ?? pluginDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) } }
            set {
                pluginDirectory = newValue.flatMap { $0.isFileURL ? $0.path : nil }
                nonFilePluginURL = newValue.flatMap { $0.isFileURL ? nil : $0 }
            }
        }

        /// Checks what only `Options` knows (a non-file URL).
        func checkURLs() throws(RestorationError) {
            if let u = nonFileArchiveURL { throw RestorationError.invalid("RestorationEngine: the archive URL '\(u.absoluteString)' is not a file URL") }
            if let u = nonFilePluginURL { throw RestorationError.invalid("RestorationEngine: the plugin directory URL '\(u.absoluteString)' is not a file URL") }
        }

        /// Options with every field given or defaulted.
        public init(archivePath: String? = nil, pluginDirectory: String? = nil, appVersion: String = "", idiom: String = "",
                    crashGuard: Bool = true, shouldSave: (() -> Bool)? = nil, shouldRestore: ((ArchiveInfo) -> Bool)? = nil,
                    didFinishRestoring: (() -> Void)? = nil, log: ((LogLevel, String) -> Void)? = nil) {
            self.archivePath = archivePath
            self.pluginDirectory = pluginDirectory
            self.appVersion = appVersion
            self.idiom = idiom
            self.crashGuard = crashGuard
            self.shouldSave = shouldSave
            self.shouldRestore = shouldRestore
            self.didFinishRestoring = didFinishRestoring
            self.log = log
        }
    }

    /// A registered object, whoever registered it.
    ///
    /// See also <doc:Restoration>.
    public struct RegisteredObject {
        /// `"Tabs/Countries/List"`.
        public let path: String
        /// The last path component. The corresponding C function is
        /// `rst_object_identifier`.
        public let identifier: String
        /// The restoration class recorded for it, if any. The corresponding
        /// C function is `rst_object_class_name`.
        public let className: String?
        /// The Swift object; nil for an object a C host or plugin
        /// registered. The corresponding C function is `rst_object_instance`.
        public let object: StateRestoring?
        /// The path of the object it is registered under, nil at a root
        /// (``RestorationEngine/registeredObject(atPath:)`` finds it). The
        /// corresponding C function is `rst_object_parent`.
        public let parentPath: String?
    }

    // MARK: - state

    let registry: ObjectTable
    var core: Engine { registry.core }

    /// The options the engine was created with. The closures here are the
    /// initial ones; the engine's ``shouldSave`` and siblings may replace
    /// them.
    public let options: Options

    /// The archive file, or nil for a buffers-only engine.
    public var archiveURL: URL? { options.archiveURL }

    // MARK: - creation

    /// Creates an engine.
    ///
    /// - Parameter options: The archive, plugin directory, recorded
    ///   versions and callbacks.
    /// - Throws: ``RestorationError/invalid(_:)`` for an empty archive path
    ///   or a URL that is not a file URL; ``RestorationError/limit(_:)`` for
    ///   an app version or idiom longer than 4096 bytes.
    ///
    /// The corresponding C function is `rst_engine_create`.
    public convenience init(options: Options) throws(RestorationError) {
        try self.init(options: options, coreStore: nil)
    }

    /// `init(options:)` with the core store of `init(store:options:)`.
    init(options: Options, coreStore: ArchiveStore?) throws(RestorationError) {
        try options.checkURLs()
        if let p = options.pluginDirectory, p.isEmpty { throw RestorationError.invalid("RestorationEngine: the plugin directory is empty") }
        let (delay, maxDelay) = try Self.autosaveTimes(options)
        let config = Engine.Configuration(archivePath: options.archivePath, pluginDirectory: options.pluginDirectory,
                                          appVersion: options.appVersion, idiom: options.idiom,
                                          crashGuard: options.crashGuard,
                                          autosaveDelayMs: delay, autosaveMaxDelayMs: maxDelay,
                                          generations: options.generations,
                                          quarantine: options.crashQuarantine, carrySaves: options.carrySaves,
                                          sizeBudget: options.sizeBudget,
                                          budgetPolicy: Engine.BudgetPolicy(rawValue: options.budgetPolicy.rawValue) ?? .warn,
                                          signalDeadlineMs: try Self.signalDeadlineMs(options),
                                          store: coreStore)
        do throws(RestorationFailure) {
            try config.validate(naming: Self.optionNames)
        } catch {
            throw RestorationError(RestorationFailure(error.status, "RestorationEngine: " + error.message))
        }
        let ownsRestoredObjects = options.ownsRestoredObjects
        let engine = Engine(configuration: config)
        if let dir = options.pluginDirectory {
            // As rst_engine_create does: plugins reach this engine only
            // through the host API table, never by linking librestoration.so.
            PluginLoader.attach(to: engine, directory: dir)
        }
        self.registry = ObjectTable(core: engine)
        self.registry.ownsRestoredObjects = ownsRestoredObjects
        self.options = options
        self.shouldSave = options.shouldSave
        self.shouldRestore = options.shouldRestore
        self.didFinishRestoring = options.didFinishRestoring
        self.log = options.log
        installCallbacks()
        installLifecycle()
    }

    /// Creates an engine for an archive file (or none).
    ///
    /// - Parameters:
    ///   - archiveURL: The archive file; nil: buffers only.
    ///   - pluginDirectory: A directory of plugins; nil: none.
    ///   - appVersion: Recorded in the archive.
    ///   - idiom: Recorded in the archive.
    /// - Throws: As ``init(options:)``.
    ///
    /// The corresponding C function is `rst_engine_create`.
    public convenience init(archiveURL: URL? = nil, pluginDirectory: URL? = nil,
                            appVersion: String = "", idiom: String = "") throws(RestorationError) {
        var o = Options(appVersion: appVersion, idiom: idiom)
        o.archiveURL = archiveURL
        o.pluginDirectoryURL = pluginDirectory
        try self.init(options: o)
    }

    /// Creates an engine for an archive path.
    ///
    /// - Parameters:
    ///   - archivePath: The archive file.
    ///   - pluginDirectory: A directory of plugins; nil: none.
    ///   - appVersion: Recorded in the archive.
    ///   - idiom: Recorded in the archive.
    /// - Throws: As ``init(options:)``.
    ///
    /// The corresponding C function is `rst_engine_create`.
    public convenience init(archivePath: String, pluginDirectory: String? = nil,
                            appVersion: String = "", idiom: String = "") throws(RestorationError) {
        try self.init(options: Options(archivePath: archivePath, pluginDirectory: pluginDirectory,
                                       appVersion: appVersion, idiom: idiom))
    }

    /// Releases every object (children first) and runs the plugins' `fini`.
    /// Objects created by restoration classes are released by the engine.
    ///
    /// The corresponding C function is `rst_engine_destroy`.
    deinit {
        // The main-queue source first: it watches a descriptor destroy closes.
        mainSource?.cancel()
        core.destroy()
        events.finish()
    }

    // Autosave.swift's state.
    let events = SaveEventHub()
    var mainSource: DispatchSourceRead?
    let mainSourceLock = NSLock()

    // MARK: - callbacks

    /// Asked at every save; false rejects it. Nil: yes.
    /// (`rst_engine_options.should_save`)
    public var shouldSave: (() -> Bool)? {
        didSet { registry.locked { installCallbacks() } }
    }

    /// Asked after the archive validated, before pass 1; false rejects the
    /// restore. Nil: yes. (`rst_engine_options.should_restore`)
    public var shouldRestore: ((ArchiveInfo) -> Bool)? {
        didSet { registry.locked { installCallbacks() } }
    }

    /// Called once the restored objects have all finished.
    /// (`rst_engine_options.did_finish_restoring`)
    public var didFinishRestoring: (() -> Void)? {
        didSet { registry.locked { installCallbacks() } }
    }

    /// Diagnostics; nil sends warnings and errors to standard error.
    /// (`rst_engine_options.log`)
    public var log: ((LogLevel, String) -> Void)? {
        didSet { registry.locked { installCallbacks() } }
    }

    private func installCallbacks() {
        core.shouldSave = shouldSave
        core.shouldRestore = shouldRestore.map { f in { [unowned core] info in
            var i = ArchiveInfo(info)
            i.restoreReason = RestoreReason(core.restoreReason)
            i.generation = Int(core.restoreGeneration)
            return f(i)
        } }
        core.didFinishRestoring = didFinishRestoring
        core.logHandler = log.map { f in { level, message in f(LogLevel(level), message) } }
    }

    // MARK: - objects

    /// Registers an object for state preservation: its identifier under its
    /// ``StateRestoring/restorationParent`` (which must be registered
    /// already), and its ``StateRestoring/objectRestorationClass``, are
    /// read now. Registering an object again at the same place does
    /// nothing.
    ///
    /// **Weak registration.** The engine holds the object weakly, as UIKit
    /// does. When it deallocates, it leaves the engine (with its registered
    /// descendants, as ``unregister(_:)`` does) at the start of the engine's
    /// next operation: ``register(_:)`` (of any object at the same path,
    /// and periodically of any object), ``save()``,
    /// ``saveToData()``, ``restore()``, ``restore(from:)``,
    /// ``registeredObjects`` or ``removeDeallocatedObjects()``; lookups by
    /// path (``object(atPath:)``, ``registeredObject(atPath:)``) already
    /// ignore it. A save therefore never writes a
    /// deallocated object; one that deallocates *during* a save (on another
    /// thread) is written as an empty record. Objects created by restoration
    /// classes are the exception: the engine owns them (see
    /// ``registerRestorationClass(_:named:)``).
    ///
    /// - Parameter object: An object with a non-nil restoration identifier.
    /// - Throws: ``RestorationError/invalid(_:)`` when the identifier is
    ///   nil or malformed, or the parent is not registered;
    ///   ``RestorationError/duplicate(_:)`` when another object is
    ///   registered at the path, or this one elsewhere;
    ///   ``RestorationError/limit(_:)`` past the tree depth limit.
    ///
    /// The corresponding C function is `rst_register_object`.
    ///
    /// - Parameter isolation: Filled in by the compiler: the actor the
    ///   caller runs on. An object registered from the main actor (a
    ///   `@MainActor` type conforming with `@MainActor StateRestoring`) is
    ///   called only on the main thread: a save or restore that runs on
    ///   another thread fails for it with ``RestorationError/state(_:)``
    ///   instead of racing with the main actor (see
    ///   ``autosaveOnMainQueue()``).
    public func register(_ object: StateRestoring, isolation: (any Actor)? = #isolation) throws(RestorationError) {
        try registry.register(object, mainActorBound: isolation.map { $0 === MainActor.shared } ?? false)
    }

    /// Unregisters an object and its registered descendants; each leaves
    /// the engine's archive from the next save on, and the engine drops its
    /// ownership of any it owned.
    ///
    /// - Parameter object: A registered object.
    /// - Throws: ``RestorationError/notFound(_:)`` when it is not registered;
    ///   ``RestorationError/state(_:)`` from inside a save or restore
    ///   callback.
    ///
    /// The corresponding C function is `rst_unregister_object`.
    public func unregister(_ object: StateRestoring) throws(RestorationError) {
        try registry.unregister(object)
    }

    /// Whether `object` is registered with this engine.
    public func isRegistered(_ object: StateRestoring) -> Bool {
        registry.locked { registry.liveNode(of: object) != nil }
    }

    /// The restoration identifier path of a registered object,
    /// `"Tabs/Countries/List"`, or nil.
    ///
    /// The corresponding C function is `rst_object_path`.
    public func path(of object: StateRestoring) -> String? {
        registry.locked { registry.liveNode(of: object)?.path }
    }

    /// The Swift object registered at `path`, or nil (none, or one a C host
    /// or plugin registered: see ``registeredObject(atPath:)``).
    ///
    /// The corresponding C functions are `rst_find_object` and `rst_object_instance`.
    public func object(atPath path: String) -> StateRestoring? {
        registry.locked { core.find(path: path).flatMap(registry.object(of:)) }
    }

    /// Whatever is registered at `path`, Swift or not, or nil.
    ///
    /// The corresponding C function is `rst_find_object`.
    public func registeredObject(atPath path: String) -> RegisteredObject? {
        registry.locked {
            guard let n = core.find(path: path) else { return nil }
            if let box = n.behavior as? ObjectBox, box.isDead { return nil }   // leaving at the next operation
            return describe(n)
        }
    }

    /// Every registered object in archive order: depth-first, roots and
    /// siblings in registration order.
    public var registeredObjects: [RegisteredObject] {
        registry.locked {
            registry.sweep()
            return core.archiveOrder().map(describe)
        }
    }

    private func describe(_ n: ObjectNode) -> RegisteredObject {
        RegisteredObject(path: n.path, identifier: n.identifier, className: n.className, object: registry.object(of: n),
                         parentPath: n.parent?.path)
    }

    /// Unregisters every object that deallocated, now (the engine also does
    /// this at the start of each operation; see ``register(_:)``). Does
    /// nothing from inside a save or restore callback.
    public func removeDeallocatedObjects() {
        registry.sweep()
    }

    // MARK: - restoration classes

    /// Registers a restoration class under a name; a restore asks it to
    /// re-create records of that class no registered object stands for. A
    /// host class hides a plugin class of the same name.
    ///
    /// The engine registers the object the class returns with exactly the
    /// record's parent and identifier (its
    /// ``StateRestoring/restorationIdentifier`` must equal the last path
    /// component, else the engine logs a warning and treats it as
    /// declined). **The engine keeps such objects alive** — nobody else
    /// holds them when they are created — until they are unregistered
    /// (``unregister(_:)``, or their parent's unregistration) or the engine
    /// is released. Find them with ``object(atPath:)``.
    ///
    /// - Parameters:
    ///   - type: The restoration class.
    ///   - name: The class name archives record; default:
    ///     ``ObjectRestoration/restorationClassName``.
    /// - Throws: ``RestorationError/duplicate(_:)`` when the name is taken;
    ///   ``RestorationError/invalid(_:)`` for a malformed name.
    ///
    /// The corresponding C function is `rst_register_class`.
    public func registerRestorationClass<T: ObjectRestoration>(_ type: T.Type, named name: String? = nil) throws(RestorationError) {
        let n = name ?? T.restorationClassName
        try registerRestorationClass(named: n) { path, coder in
            T.object(withRestorationIdentifierPath: path, coder: coder)
        }
    }

    /// Registers a restoration class given as a closure.
    ///
    /// - Parameters:
    ///   - name: The class name archives record.
    ///   - factory: Receives the record's identifier path (root first) and
    ///     its archived state; returns the object or nil to decline.
    /// - Throws: As ``registerRestorationClass(_:named:)``.
    ///
    /// The corresponding C function is `rst_register_class`.
    public func registerRestorationClass(named name: String,
                                         factory: @escaping (_ identifierComponents: [String], _ coder: RestorationCoder) -> StateRestoring?) throws(RestorationError) {
        try registry.locked { () throws(RestorationError) in
            let f = registry.factory(factory, what: "the restoration class '\(name)'")
            try RestorationError.wrap { () throws(RestorationFailure) in try core.registerClass(name, factory: f) }
        }
    }

    /// Sets (or with nil, removes) the factory asked when no registered
    /// object, host class or plugin class produced a record: the app
    /// delegate's `viewControllerWithRestorationIdentifierPath:coder:` role.
    /// Objects it returns are registered and owned as for
    /// ``registerRestorationClass(_:named:)``.
    ///
    /// - Parameter factory: Receives the identifier path and the record's
    ///   state; returns the object or nil to decline.
    ///
    /// The corresponding C function is `rst_set_fallback_factory`.
    public func setFallbackFactory(_ factory: ((_ identifierComponents: [String], _ coder: RestorationCoder) -> StateRestoring?)?) {
        registry.locked {
            core.setFallbackFactory(factory.map { registry.factory($0, what: "the fallback factory") })
        }
    }

    // MARK: - save and restore

    /// Saves every registered object to the archive file, atomically and
    /// durably: after a crash at any instant the file holds the old archive
    /// or the new one. Asks ``shouldSave`` first.
    ///
    /// - Throws: ``RestorationError/invalid(_:)`` without an archive path;
    ///   ``RestorationError/rejected(_:)`` when ``shouldSave`` says no;
    ///   ``RestorationError/io(_:)``; or the first error an object's
    ///   encoding raised (the old archive is then untouched).
    ///
    /// The corresponding C function is `rst_save`.
    public func save() throws(RestorationError) {
        do {
            try saveUnreported()
        } catch {
            core.lifecycle.saveAttempted(.call, error.failure)   // the listener, without any lock
            throw error
        }
        core.lifecycle.saveAttempted(.call, nil)
    }

    /// ``save()`` without telling the save listener (autosaves and signal
    /// saves tell it with their own trigger).
    func saveUnreported() throws(RestorationError) {
        try registry.locked { () throws(RestorationError) in
            registry.sweep()
            try RestorationError.wrap { () throws(RestorationFailure) in try core.save() }
        }
    }

    /// Encodes every registered object into archive bytes, as ``save()``
    /// does, without touching any file.
    ///
    /// - Returns: A complete archive.
    /// - Throws: As ``save()``, except for file errors.
    ///
    /// The corresponding C function is `rst_save_to_buffer`.
    public func saveToData() throws(RestorationError) -> Data {
        try registry.locked { () throws(RestorationError) -> Data in
            registry.sweep()
            let bytes = try RestorationError.wrap { () throws(RestorationFailure) in try core.saveToBytes() }
            return Data(bytes)
        }
    }

    /// Restores from the archive file: validates it completely, asks
    /// ``shouldRestore``, then (1) matches each record to the object
    /// registered at its path or creates it with its restoration class, a
    /// plugin's, or the fallback factory, (2) decodes the objects (parents
    /// and referenced objects first), (3) calls
    /// ``StateRestoring/applicationFinishedRestoringState()`` on each and
    /// then ``didFinishRestoring``. Records nothing could produce are
    /// skipped (see ``lastRestoreReport``). The archive stays in place.
    ///
    /// - Throws: ``RestorationError/notFound(_:)`` when there is no archive
    ///   (first launch); ``RestorationError/corrupt(_:)`` or
    ///   ``RestorationError/version(_:)`` for a bad file (nothing ran);
    ///   ``RestorationError/rejected(_:)`` when ``shouldRestore`` said no or
    ///   the previous restore of this archive crashed the process (the
    ///   archive is then set aside as `<archive>.crashed-<ms>`);
    ///   ``RestorationError/invalid(_:)`` without an archive path.
    ///
    /// The corresponding C function is `rst_restore`.
    public func restore() throws(RestorationError) {
        try registry.locked { () throws(RestorationError) in
            registry.sweep()
            try RestorationError.wrap { () throws(RestorationFailure) in try core.restore() }
        }
    }

    /// Restores from archive bytes, as ``restore()`` does (without the
    /// crash-loop guard, which is for files).
    ///
    /// - Parameter data: A complete archive.
    /// - Throws: As ``restore()``; ``RestorationError/limit(_:)`` for more
    ///   than 256 MiB.
    ///
    /// The corresponding C function is `rst_restore_from_buffer`.
    public func restore(from data: Data) throws(RestorationError) {
        try registry.locked { () throws(RestorationError) in
            registry.sweep()
            let r: Result<Void, RestorationFailure> = data.withUnsafeBytes { bytes in
                do throws(RestorationFailure) { try core.restore(bytes: bytes); return .success(()) } catch { return .failure(error) }
            }
            if case .failure(let f) = r { throw RestorationError(f) }
        }
    }

    /// Deletes the saved state (what a force-quit does in UIKit): the
    /// archive, its set-aside copies, temporaries and markers. Succeeds when
    /// there was nothing to delete.
    ///
    /// - Throws: ``RestorationError/invalid(_:)`` without an archive path;
    ///   ``RestorationError/io(_:)``.
    ///
    /// The corresponding C function is `rst_discard`.
    public func discard() throws(RestorationError) {
        try registry.locked { () throws(RestorationError) in
            try RestorationError.wrap { () throws(RestorationFailure) in try core.discard() }
        }
    }

    /// What the last restore did; nil before any restore got past
    /// validation.
    ///
    /// The corresponding C function is `rst_last_restore_report`.
    public var lastRestoreReport: RestoreReport? {
        registry.locked { core.lastRestoreReport.map(RestoreReport.init) }
    }

    /// Reads and validates an archive file's info without restoring it.
    ///
    /// - Parameter url: An archive file.
    /// - Returns: Its info.
    /// - Throws: ``RestorationError/notFound(_:)``, ``RestorationError/io(_:)``,
    ///   ``RestorationError/corrupt(_:)``, ``RestorationError/version(_:)``;
    ///   ``RestorationError/invalid(_:)`` for a URL that is not a file URL.
    ///
    /// The corresponding C function is `rst_read_archive_info`.
    public static func archiveInfo(at url: URL) throws(RestorationError) -> ArchiveInfo {
        guard url.isFileURL else { throw RestorationError.invalid("the archive URL '\(url.absoluteString)' is not a file URL") }
        return try archiveInfo(data: try RestorationError.wrap { () throws(RestorationFailure) in try FileStore.read(url.path) },
                               source: "archive '\(url.path)'")
    }

    /// Reads and validates archive bytes' info without restoring them.
    ///
    /// - Parameter data: Archive bytes.
    /// - Returns: Their info.
    /// - Throws: ``RestorationError/corrupt(_:)``, ``RestorationError/version(_:)``,
    ///   ``RestorationError/limit(_:)``.
    public static func archiveInfo(from data: Data) throws(RestorationError) -> ArchiveInfo {
        try archiveInfo(data: [UInt8](data), source: "the buffer")
    }

    private static func archiveInfo(data: [UInt8], source: String) throws(RestorationError) -> ArchiveInfo {
        let r: Result<ArchiveInfo, RestorationFailure> = data.withUnsafeBytes { b in
            do throws(RestorationFailure) { return .success(ArchiveInfo(try Engine.validate(b, source: source).info)) } catch { return .failure(error) }
        }
        switch r {
        case .success(let i): return i
        case .failure(let f): throw RestorationError(f)
        }
    }
}
