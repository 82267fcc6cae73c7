import CRestoration
import RestorationCFace
import RestorationCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One class a plugin offers, as `rst_list_plugins` reports it.
public struct PluginClassInfo: Equatable, Sendable {
    public var className: String
    public var factorySymbol: String
    public var signature: String
    /// false: rejected (bad signature, missing symbol, ...), lost to a plugin
    /// whose file name sorts first, or its plugin was rejected.
    public var usable: Bool
    /// Why not usable; "" when usable.
    public var reason: String

    public init(className: String, factorySymbol: String, signature: String, usable: Bool, reason: String) {
        self.className = className
        self.factorySymbol = factorySymbol
        self.signature = signature
        self.usable = usable
        self.reason = reason
    }
}

/// One `*.so` file of plugin_dir, as `rst_list_plugins` reports it.
public struct PluginFileInfo: Equatable, Sendable {
    public enum State: Sendable { case discovered, loaded, rejected }
    /// Absolute path of the file.
    public var path: String
    /// Manifest name and version ("" before loading, or when rejected before
    /// the manifest was read).
    public var name: String
    public var version: String
    public var state: State
    /// Why rejected; "" otherwise.
    public var reason: String
    public var classes: [PluginClassInfo]

    public init(path: String, name: String, version: String, state: State, reason: String, classes: [PluginClassInfo]) {
        self.path = path
        self.name = name
        self.version = version
        self.state = state
        self.reason = reason
        self.classes = classes
    }
}

/// The plugin loader of one engine: the engine's `ClassProvider` for classes
/// no host registered.
///
/// Three stages, each in its own file: *discover* (Discovery.swift: list
/// plugin_dir, check owners and modes, run no plugin code), *validate*
/// (Manifest.swift: dlopen, call `rst_plugin_manifest_v1` with the host
/// table, check every field and signature, dlsym every factory), *load*
/// (here: run `init`, resolve class conflicts, hand out factories that call
/// through libffi, FFI.swift; `fini` at engine destroy).
///
/// Plugins load lazily, all at once, the first time the engine asks for a
/// class no host registered (or at `loadAll()`, `rst_load_plugins`), once
/// per engine. They are never dlclose'd. Every rejection is logged at
/// WARNING through the engine's log and counted; `RESTORATION_DEBUG_PLUGINS=1`
/// traces every decision on stderr.
///
/// Threads: the engine calls `factory(forClass:)`, `loadedCount`,
/// `rejectedCount` and `shutdown()` with its own lock held; `list()` and
/// `loadAll()` may come from any thread and take the engine's lock first
/// (`Engine.serialized`). The loader's state is guarded by its own
/// recursive lock, always taken after the engine's, so a plugin `init`
/// (which runs with both held) may call back into the engine.
///
/// Every face attaches plugins the same way: `PluginLoader.attach(to:directory:)`.
public final class PluginLoader: ClassProvider {
    /// plugin_dir as configured.
    public let directory: String
    private let hostAPI: UnsafeRawPointer
    private weak var engine: Engine?
    private let lock = RecursiveLock()
    private let trace = Trace()

    private enum Phase { case idle, loading, loaded, shutDown }
    private var phase = Phase.idle
    private var discovered = false
    private var discoveryFailure: RestorationFailure?
    private var records: [PluginRecord] = []
    private var factories: [String: Factory] = [:]
    /// Which record provides each usable class (first file by name wins).
    private var providers: [String: PluginRecord] = [:]
    private var loaded = 0
    private var rejected = 0

    /// Everything known about one file.
    private final class PluginRecord {
        let file: DiscoveredFile
        var state: PluginFileInfo.State
        var reason: String
        var name = ""
        var version = ""
        var classes: [ManifestClass] = []
        var context: UnsafeMutableRawPointer?
        var finalize: PluginFiniFn?

        init(file: DiscoveredFile) {
            self.file = file
            if let problem = file.problem {
                state = .rejected
                reason = problem
            } else {
                state = .discovered
                reason = ""
            }
        }

        var info: PluginFileInfo {
            let classInfo = classes.map { c -> PluginClassInfo in
                let why: String
                if let p = c.problem {
                    why = p
                } else if state == .rejected {
                    why = "its plugin was rejected"
                } else {
                    why = ""
                }
                return PluginClassInfo(className: c.className, factorySymbol: c.factorySymbol, signature: c.signature,
                                       usable: why.isEmpty && state == .loaded, reason: why)
            }
            return PluginFileInfo(path: file.path, name: name, version: version, state: state, reason: reason, classes: classInfo)
        }
    }

    /// Attaches the plugins of `directory` to `engine`: the one way every
    /// face (the C ABI, the Swift API, restorectl) gives an engine its
    /// plugin classes. Plugins receive the host table the loader owns
    /// (`rst_host_api`, built from the C face's functions), so this needs
    /// nothing of RestorationC.
    /// - Parameters:
    ///   - engine: the engine whose classes the plugins provide (not retained).
    ///   - directory: plugin_dir (resolved to an absolute canonical path
    ///     when first scanned).
    ///   - wrap: what the engine should ask instead of the loader itself (a
    ///     tracing provider over it, in restorectl); nil: the loader.
    /// - Returns: the loader, now `engine.classProvider` (or wrapped by it).
    @discardableResult
    public static func attach(to engine: Engine, directory: String,
                              through wrap: ((PluginLoader) -> ClassProvider)? = nil) -> PluginLoader {
        let loader = PluginLoader(directory: directory, hostAPI: UnsafeRawPointer(restorationHostAPI), engine: engine)
        engine.classProvider = wrap?(loader) ?? loader
        return loader
    }

    /// - Parameters:
    ///   - directory: plugin_dir.
    ///   - hostAPI: the `rst_host_api` table handed to every plugin.
    ///   - engine: the engine whose classes the plugins provide (not retained).
    init(directory: String, hostAPI: UnsafeRawPointer, engine: Engine) {
        self.directory = directory
        self.hostAPI = hostAPI
        self.engine = engine
        trace("engine \(engine.handle): plugin_dir '\(directory)' (plugins load when a restore first needs a class no host registered)")
    }

    // MARK: ClassProvider

    public func factory(forClass className: String) -> Factory? {
        lock.withLock {
            switch phase {
            case .shutDown:
                return nil
            case .loading:
                // Asked from inside a plugin's init: nothing is claimed yet.
                trace("class '\(className)' requested while plugins are loading; not available yet")
                return nil
            case .idle:
                performLoad(because: "a restore needs class '\(className)', which no host registered")
            case .loaded:
                break
            }
            if let f = factories[className] {
                trace("class '\(className)' is provided by \(providers[className]?.file.name ?? "?")")
                return f
            }
            trace("no plugin provides class '\(className)'")
            return nil
        }
    }

    /// Skips (docs/EVOLUTION.md): why a plugin that declares `className` could not provide it
    /// (the plugin was rejected, or that class was), nil when none did.
    public func rejection(forClass className: String) -> String? {
        lock.withLock {
            guard factories[className] == nil else { return nil }
            for record in records {
                guard let c = record.classes.first(where: { $0.className == className }) else { continue }
                if let p = c.problem { return "\(record.file.path): \(p)" }
                if record.state == .rejected { return "plugin '\(record.file.path)' was rejected: \(record.reason)" }
            }
            return nil
        }
    }

    public var loadedCount: Int { lock.withLock { loaded } }
    public var rejectedCount: Int { lock.withLock { rejected } }

    /// Runs every loaded plugin's `fini` (last loaded first) and forgets the
    /// factories. Plugins stay mapped.
    public func shutdown() {
        let finis: [(PluginRecord, PluginFiniFn)] = lock.withLock {
            guard phase != .shutDown else { return [] }
            phase = .shutDown
            factories = [:]
            providers = [:]
            return records.reversed().compactMap { r in
                guard r.state == .loaded, let f = r.finalize else { return nil }
                return (r, f)
            }
        }
        for (r, fini) in finis {
            trace("\(r.file.name): calling fini")
            fini(r.context)
        }
        trace("plugin loader shut down (plugins stay resident; nothing is dlclose'd)")
    }

    // MARK: public API of the C layer

    /// Loads every plugin now, as a restore that needs an unknown class
    /// would; once per engine (later calls return at once).
    /// - Throws: `.io` when plugin_dir cannot be resolved or read. Rejected
    ///   plugins are not an error (see `list()`).
    public func loadAll() throws(RestorationFailure) {
        // The engine's lock first (as a restore holds it), then ours: a
        // plugin init that calls back into the engine cannot deadlock.
        guard let engine else { throw RestorationFailure(.state, "the engine is gone") }
        try engine.serialized { () throws(RestorationFailure) in try lock.withLock { () throws(RestorationFailure) in
            if phase == .idle { performLoad(because: "loadAll() was called") }
            if let f = discoveryFailure { throw f }
        } }
    }

    /// Every `*.so` file of plugin_dir, sorted by name, with its state,
    /// classes and rejection reason. Loads nothing (it may scan the
    /// directory, which runs no plugin code).
    /// - Throws: `.io` when plugin_dir cannot be resolved or read.
    public func list() throws(RestorationFailure) -> [PluginFileInfo] {
        guard let engine else { throw RestorationFailure(.state, "the engine is gone") }
        return try engine.serialized { () throws(RestorationFailure) -> [PluginFileInfo] in try lock.withLock { () throws(RestorationFailure) -> [PluginFileInfo] in
            discoverOnce()
            if let f = discoveryFailure { throw f }
            return records.map(\.info)
        } }
    }

    // MARK: loading

    /// Stage 1, once per engine.
    private func discoverOnce() {
        guard !discovered else { return }
        discovered = true
        do {
            let result = try Discovery.scan(directory, trace: trace)
            records = result.files.map(PluginRecord.init)
        } catch {
            discoveryFailure = error
            trace("discovery failed: \(error.message)")
        }
    }

    /// Stages 2 and 3 for every discovered file, in name order. Called with
    /// the lock held, once.
    private func performLoad(because why: String) {
        phase = .loading
        defer { phase = .loaded }
        trace("loading plugins: \(why)")
        discoverOnce()
        if let f = discoveryFailure {
            engine?.log(.warning, "plugins: \(f.message); no plugin is loaded")
            return
        }
        for record in records {
            load(record)
        }
        trace("plugins: \(loaded) loaded, \(rejected) rejected; classes: " +
              (providers.isEmpty ? "none" : providers.keys.sorted().map { "\($0) (\(providers[$0]!.file.name))" }.joined(separator: ", ")))
    }

    private func reject(_ record: PluginRecord, _ reason: String) {
        record.state = .rejected
        record.reason = reason
        rejected += 1
        trace("\(record.file.name): REJECTED: \(reason)")
        engine?.log(.warning, "plugin '\(record.file.path)' rejected: \(reason)")
    }

    private func load(_ record: PluginRecord) {
        guard record.state == .discovered else {
            // Rejected at discovery (mode, owner, not a regular file).
            reject(record, record.reason)
            return
        }
        guard let engine else {
            reject(record, "the engine is gone")
            return
        }
        // Stage 2: open and validate.
        let validated: ValidatedManifest
        do {
            let handle = try PluginImage.open(record.file, trace: trace)
            validated = try PluginImage.manifest(handle: handle, hostAPI: hostAPI, file: record.file, trace: trace)
        } catch {
            reject(record, error.reason)
            return
        }
        record.name = validated.name
        record.version = validated.version
        record.classes = validated.classes

        // Stage 3: init, then claim classes.
        if let initialize = validated.initialize {
            var context: UnsafeMutableRawPointer? = nil
            trace("\(record.file.name): calling init")
            let rc = initialize(OpaquePointer(engine.handle), &context)
            guard rc == 0 else {
                reject(record, "its init returned \(rc); the plugin is not used (its fini will not run)")
                return
            }
            record.context = context
        }
        record.finalize = validated.finalize

        for k in record.classes.indices {
            let c = record.classes[k]
            if let problem = c.problem {
                engine.log(.warning, "plugin '\(record.file.path)' ('\(validated.name)'): \(problem); its other classes still load")
                continue
            }
            if let winner = providers[c.className] {
                let problem = "class '\(c.className)' is already provided by plugin '\(winner.name)' ('\(winner.file.path)'), whose file name sorts first"
                record.classes[k].problem = problem
                record.classes[k].call = nil
                trace("\(record.file.name): conflict: \(problem)")
                engine.log(.warning, "plugin '\(record.file.path)' ('\(validated.name)'): \(problem); it keeps its other classes")
                continue
            }
            guard let call = c.call else { continue }
            providers[c.className] = record
            factories[c.className] = PluginLoader.makeFactory(className: c.className, symbol: c.factorySymbol,
                                                              file: record.file.path, call: call,
                                                              context: record.context, trace: trace)
        }
        record.state = .loaded
        loaded += 1
        let usable = record.classes.filter { $0.problem == nil }.map(\.className)
        trace("\(record.file.name): LOADED '\(validated.name)' \(validated.version); classes: \(usable.isEmpty ? "none" : usable.joined(separator: ", "))")
        engine.log(.info, "plugin '\(validated.name)' \(validated.version) loaded from '\(record.file.path)'; classes: \(usable.isEmpty ? "none" : usable.joined(separator: ", "))")
    }

    /// A core factory over a prepared libffi call. The returned handle
    /// becomes a node only through `FactoryRequest.object(at:)`, the
    /// engine's one check that it is the object registered at the requested
    /// path (a bogus pointer is never dereferenced); anything else is an
    /// error, logged with the plugin's name, and treated as declined.
    private static func makeFactory(className: String, symbol: String, file: String, call: FactoryCall,
                                    context: UnsafeMutableRawPointer?, trace: Trace) -> Factory {
        return { request in
            if trace.enabled { trace("calling \(symbol) for class '\(className)' at '\(request.path)'") }
            guard let made = call.call(request, context: context) else {
                if trace.enabled { trace("\(symbol) declined '\(request.path)' (returned NULL)") }
                return nil
            }
            if let node = request.object(at: UnsafeRawPointer(made)) {
                if trace.enabled { trace("\(symbol) created '\(request.path)'") }
                return node
            }
            let detail = request.engine.child(of: request.parent, named: request.identifier) == nil
                ? "nothing is registered there (a factory must register its object with exactly the parent and identifier it is given)"
                : "that is not the object registered there (a factory must return the object it registered)"
            request.engine.log(.error, "record \(request.record) ('\(request.path)'): the factory \(symbol) of plugin class '\(className)' ('\(file)') returned an object that is not at '\(request.path)': \(detail); treated as declined, so the record is skipped unless the fallback factory creates it")
            if trace.enabled { trace("\(symbol) returned a foreign object for '\(request.path)'; rejected") }
            return nil
        }
    }
}
