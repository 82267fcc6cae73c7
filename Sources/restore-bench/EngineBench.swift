// The engine's half of the benchmark: everything goes through the C ABI of
// Include/restoration.h, as a C host would use it.
//
// Host objects are `Node` instances passed as `void *instance`
// (Unmanaged, retained once for the engine and released by the `release`
// callback). Callbacks are @convention(c) functions; keys are C strings made
// once. A callback cannot throw, so every rst_* status is checked and a
// failure is counted (with the first message); a run with a counted failure
// is a failed run.
//
// save    = every object registered (untimed), then rst_save_to_buffer timed:
//           each object's encode callback writes its 8 values through
//           rst_encode_bool/int/double/string/bytes/object, a nested record
//           (begin_record, encode_string, encode_int, end_record) and
//           rst_encode_int_array, and the engine writes the archive to memory.
// restore = a new engine (untimed set-up): one host class per class name
//           (rst_register_class; its factory allocates a Node and registers
//           it) and the first ceil(N/2) objects in pre-order pre-registered
//           (a prefix of pre-order holds every pre-registered object's
//           parent, and it is exactly half; "even index and parent
//           pre-registered" would keep only about 2^-depth of a 6-level
//           tree); then rst_restore_from_buffer timed: validation,
//           materialize (half found at their paths, half made by factories),
//           the dependency-ordered decode through rst_decode_*, and finish.
// migrate = the restore above with every record migrated (docs/EVOLUTION.md): the
//           archive is saved with no class version set (version 0), and the
//           restoring engine sets every class to version 1 and registers a
//           one-step migration from 0 for it that renames "number" to
//           "amount" and adds "added" (number + 1) with rst_encode_int; the
//           decode callback reads "amount" and "added". Same graph, same
//           pre-registered half, timed the same way, in the same round-robin
//           as the plain restore, so the ratio of the two is the cost of the
//           migration path.
// Every restore's first run is verified object by object: values, class,
// parent and reference identity, `finished`, and rst_last_restore_report
// (migrate: also one migration per record and "added" = "amount" + 1).

#if !BASELINES_ONLY
import Foundation
import CRestoration
import RestorationC
import RestorationArchive
#if canImport(Glibc)
import Glibc
#endif

// MARK: - C strings made once

func cString(_ s: String) -> UnsafePointer<CChar> { UnsafePointer(strdup(s)!) }

enum Key {
    static let flag = cString("flag")
    static let number = cString("number")
    static let ratio = cString("ratio")
    static let title = cString("title")
    static let blob = cString("blob")
    static let link = cString("link")
    static let note = cString("note")
    static let text = cString("text")
    static let count = cString("count")
    static let rows = cString("rows")
    static let amount = cString("amount")     // "number" after the migration
    static let added = cString("added")       // added by the migration
}

let classNameCStrings: [UnsafePointer<CChar>] = Graph.classNames.map(cString)

/// "RST_ERR_LIMIT: <rst_last_error()>", the message cut to 300 characters
/// (an engine may quote a 400 KB path).
func statusText(_ s: rst_status) -> String {
    let name = String(cString: rst_status_name(s))
    var message = String(cString: rst_last_error())
    if message.count > 300 { message = String(message.prefix(240)) + " … " + String(message.suffix(50)) }
    return message.isEmpty ? name : "\(name): \(message)"
}

// MARK: - Callback bookkeeping

/// Counters the callbacks update (a callback cannot throw).
enum Counters {
    static var failures = 0
    static var firstFailure: String?
    static var created = 0
    static var migrated = 0
    static var log: [String] = []

    static func reset() { failures = 0; firstFailure = nil; created = 0; migrated = 0 }

    static func fail(_ what: String, _ status: rst_status) {
        failures += 1
        if firstFailure == nil { firstFailure = "\(what): \(statusText(status))" }
    }

    static func fail(_ what: String) {
        failures += 1
        if firstFailure == nil { firstFailure = what }
    }
}

@inline(__always)
private func node(_ instance: UnsafeMutableRawPointer?) -> Node {
    Unmanaged<Node>.fromOpaque(instance!).takeUnretainedValue()
}

@inline(__always)
private func check(_ status: rst_status, _ what: String) {
    if status != RST_OK { Counters.fail(what, status) }
}

// MARK: - The host object's callbacks

private let nodeEncode: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?) -> Void = { instance, coder in
    let n = node(instance)
    check(rst_encode_bool(coder, Key.flag, n.flag), "encode flag")
    check(rst_encode_int(coder, Key.number, n.number), "encode number")
    check(rst_encode_double(coder, Key.ratio, n.ratio), "encode ratio")
    check(n.title.withCString { rst_encode_string(coder, Key.title, $0) }, "encode title")
    check(n.blob.withUnsafeBytes { rst_encode_bytes(coder, Key.blob, $0.baseAddress, $0.count) }, "encode blob")
    if let ref = n.ref { check(rst_encode_object(coder, Key.link, ref.object), "encode link") }
    check(rst_encode_begin_record(coder, Key.note), "begin note")
    check(n.noteText.withCString { rst_encode_string(coder, Key.text, $0) }, "encode note.text")
    check(rst_encode_int(coder, Key.count, n.noteCount), "encode note.count")
    check(rst_encode_end_record(coder), "end note")
    check(n.rows.withUnsafeBufferPointer { rst_encode_int_array(coder, Key.rows, $0.baseAddress, $0.count) }, "encode rows")
}

private let nodeDecode: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?) -> Void = { instance, coder in
    decodeNode(node(instance), coder, migrated: false)
}

/// The decode callback of the migrated class version: "number" is "amount",
/// and the migration added "added" = amount + 1.
private let nodeDecodeMigrated: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?) -> Void = { instance, coder in
    decodeNode(node(instance), coder, migrated: true)
}

@inline(__always)
private func decodeNode(_ n: Node, _ coder: OpaquePointer?, migrated: Bool) {
    var b = false
    var i: Int64 = 0
    var d = 0.0
    var s: UnsafePointer<CChar>?
    var p: UnsafeRawPointer?
    var len = 0
    var st = rst_decode_bool(coder, Key.flag, &b)
    if st == RST_OK { n.flag = b } else { Counters.fail("decode flag", st) }
    st = rst_decode_int(coder, migrated ? Key.amount : Key.number, &i)
    if st == RST_OK { n.number = i } else { Counters.fail(migrated ? "decode amount" : "decode number", st) }
    if migrated {
        st = rst_decode_int(coder, Key.added, &i)
        if st != RST_OK { Counters.fail("decode added", st) }
        else if i != n.number &+ 1 { Counters.fail("decode added: \(i), expected amount + 1 = \(n.number &+ 1)") }
    }
    st = rst_decode_double(coder, Key.ratio, &d)
    if st == RST_OK { n.ratio = d } else { Counters.fail("decode ratio", st) }
    st = rst_decode_string(coder, Key.title, &s, &len)
    if st == RST_OK, let s { n.title = String(decoding: UnsafeRawBufferPointer(start: s, count: len), as: UTF8.self) } else { Counters.fail("decode title", st) }
    st = rst_decode_bytes(coder, Key.blob, &p, &len)
    if st == RST_OK, let p { n.blob = Data(bytes: p, count: len) } else { Counters.fail("decode blob", st) }
    var ref: OpaquePointer?
    st = rst_decode_object(coder, Key.link, &ref)
    if st == RST_OK, let ref, let target = rst_object_instance(ref) {
        n.ref = Unmanaged<Node>.fromOpaque(target).takeUnretainedValue()
    } else if st != RST_ERR_NOT_FOUND {          // the root has no reference
        Counters.fail("decode link", st)
    }
    st = rst_decode_begin_record(coder, Key.note)
    if st == RST_OK {
        st = rst_decode_string(coder, Key.text, &s, &len)
        if st == RST_OK, let s { n.noteText = String(decoding: UnsafeRawBufferPointer(start: s, count: len), as: UTF8.self) } else { Counters.fail("decode note.text", st) }
        st = rst_decode_int(coder, Key.count, &i)
        if st == RST_OK { n.noteCount = i } else { Counters.fail("decode note.count", st) }
        check(rst_decode_end_record(coder), "end note")
    } else { Counters.fail("begin note", st) }
    var count = 0
    var rows = [Int64](repeating: 0, count: 4)
    st = rows.withUnsafeMutableBufferPointer { rst_decode_int_array(coder, Key.rows, $0.baseAddress, 4, &count) }
    if st == RST_ERR_LIMIT {                     // more than 4: ask again with room
        rows = [Int64](repeating: 0, count: count)
        st = rows.withUnsafeMutableBufferPointer { rst_decode_int_array(coder, Key.rows, $0.baseAddress, $0.count, &count) }
    }
    if st == RST_OK { rows.removeLast(max(0, rows.count - count)); n.rows = rows } else { Counters.fail("decode rows", st) }
}

private let nodeFinished: @convention(c) (UnsafeMutableRawPointer?) -> Void = { instance in
    node(instance).finished = true
}

private let nodeRelease: @convention(c) (UnsafeMutableRawPointer?) -> Void = { instance in
    Unmanaged<Node>.fromOpaque(instance!).release()
}

let nodeCallbacks: UnsafeMutablePointer<rst_object_callbacks> = {
    let p = UnsafeMutablePointer<rst_object_callbacks>.allocate(capacity: 1)
    p.initialize(to: rst_object_callbacks(encode: nodeEncode, decode: nodeDecode, finished: nodeFinished, release: nodeRelease))
    return p
}()

/// The same object at class version 1 (the migrate case): its decode reads
/// the migrated record.
let nodeMigratedCallbacks: UnsafeMutablePointer<rst_object_callbacks> = {
    let p = UnsafeMutablePointer<rst_object_callbacks>.allocate(capacity: 1)
    p.initialize(to: rst_object_callbacks(encode: nodeEncode, decode: nodeDecodeMigrated, finished: nodeFinished, release: nodeRelease))
    return p
}()

/// The migrate case's step from version 0 to 1: renames "number" to
/// "amount" and adds "added" = amount + 1.
private let nodeMigration: rst_migrate_fn = { coder, from, _ in
    guard from == 0 else { return RST_ERR_STATE }
    var st = rst_coder_rename(coder, Key.number, Key.amount)
    guard st == RST_OK else { return st }
    var amount: Int64 = 0
    st = rst_decode_int(coder, Key.amount, &amount)
    guard st == RST_OK else { return st }
    st = rst_encode_int(coder, Key.added, amount &+ 1)
    guard st == RST_OK else { return st }
    Counters.migrated += 1
    return RST_OK
}

/// The factory's context: the class index + 1, plus this bit for the
/// migrated callbacks.
private let migratedFactoryBit = 1 << 16

/// The host classes' factory; ctx is the class index + 1 (| migratedFactoryBit).
private let nodeFactory: rst_factory_fn = { engine, parent, identifier, _, ctx in
    let raw = Int(bitPattern: ctx)
    let callbacks = raw & migratedFactoryBit != 0 ? nodeMigratedCallbacks : nodeCallbacks
    let index = (raw & ~migratedFactoryBit) - 1
    guard let identifier, index >= 0, index < classNameCStrings.count else {
        Counters.fail("factory called with a bad context or identifier")
        return nil
    }
    var parentNode: Node?
    if let parent {
        guard let instance = rst_object_instance(parent) else { Counters.fail("factory: parent has no instance"); return nil }
        parentNode = Unmanaged<Node>.fromOpaque(instance).takeUnretainedValue()
    }
    let n = Node(identifier: String(cString: identifier), className: Graph.classNames[index], parent: parentNode, index: -1)
    let retained = Unmanaged.passRetained(n)
    var out: OpaquePointer?
    let st = rst_register_object(engine, identifier, parent, classNameCStrings[index], callbacks, retained.toOpaque(), &out)
    guard st == RST_OK, let out else {
        retained.release()
        Counters.fail("factory: rst_register_object", st)
        return nil
    }
    n.object = out
    Counters.created += 1
    return out
}

private let engineLog: @convention(c) (OpaquePointer?, Int32, UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void = { _, level, message, _ in
    if level >= Int32(RST_LOG_WARNING), Counters.log.count < 20, let message {
        Counters.log.append(String(cString: message))
    }
}

// MARK: - Engines

/// The sealed-values run's key: 32 bytes of 0x42.
private let benchKey: @convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutableRawPointer?) -> rst_status = { _, key, _ in
    for i in 0..<32 { key?[i] = 0x42 }
    return RST_OK
}

func makeEngine(archivePath: String? = nil, pluginDir: String? = nil, encryptionKey: Bool = false) throws -> OpaquePointer {
    var opts = rst_engine_options()
    opts.version = UInt32(RST_ENGINE_OPTIONS_VERSION)
    opts.log = engineLog
    if encryptionKey { opts.encryption_key = benchKey }
    var engine: OpaquePointer?
    let st: rst_status = withOptionalCString(archivePath) { ap in
        withOptionalCString(pluginDir) { pd in
            "restore-bench".withCString { app in
                "bench".withCString { idiom in
                    opts.archive_path = ap
                    opts.plugin_dir = pd
                    opts.app_version = app
                    opts.idiom = idiom
                    return rst_engine_create(&opts, &engine)
                }
            }
        }
    }
    guard st == RST_OK, let engine else { throw BenchError("rst_engine_create: \(statusText(st))") }
    return engine
}

private func withOptionalCString<R>(_ s: String?, _ body: (UnsafePointer<CChar>?) throws -> R) rethrows -> R {
    if let s { return try s.withCString { try body($0) } }
    return try body(nil)
}

// MARK: - The engine as a contestant

final class EngineContestant: Contestant {
    let key: String
    let name: String
    /// The migrate case: the restore engine runs a migration on every record.
    let migrate: Bool
    let graph: Graph
    let live: [Node]
    let archivePath: String?
    /// The object moved to a plugin class (the plugin case), or nil.
    let pluginIndex: Int?
    /// plugin_dir of the next restore engine (the plugin case), or nil.
    var pluginDir: String?
    let preregisterCount: Int

    private var saveEngine: OpaquePointer?
    private var archive: UnsafeMutableRawPointer?
    private(set) var archiveLength = 0
    private var restoreEngine: OpaquePointer?
    private(set) var lastReport = rst_restore_report()

    var archiveBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: archive, count: archiveLength) }

    /// Registers every object of `live` (untimed). With `pluginClass`, the last
    /// object (a leaf nobody references) is registered under that class name.
    /// With `migrate`, the restores migrate every record (the "engine-migrate" row).
    init(graph: Graph, live: [Node], archivePath: String? = nil, pluginClass: String? = nil, migrate: Bool = false) throws {
        self.migrate = migrate
        key = migrate ? "engine-migrate" : "engine"
        name = migrate ? "Restoration engine, every record migrated (C ABI)" : "Restoration engine (C ABI)"
        self.graph = graph
        self.live = live
        self.archivePath = archivePath
        self.pluginIndex = pluginClass == nil ? nil : graph.lastLeaf
        self.preregisterCount = (graph.count + 1) / 2
        let engine = try makeEngine(archivePath: archivePath)
        saveEngine = engine
        for (i, o) in graph.objects.enumerated() {
            let n = live[i]
            let retained = Unmanaged.passRetained(n)
            var out: OpaquePointer?
            let parent = o.parent < 0 ? nil : live[o.parent].object
            let st: rst_status
            if i == pluginIndex, let pluginClass {
                st = pluginClass.withCString { rst_register_object(engine, n.identifier, parent, $0, nodeCallbacks, retained.toOpaque(), &out) }
            } else {
                st = rst_register_object(engine, n.identifier, parent, classNameCStrings[o.classIndex], nodeCallbacks, retained.toOpaque(), &out)
            }
            guard st == RST_OK, let out else {
                retained.release()
                throw BenchError("registering object \(i) (\(graph.shortPath(of: i))): \(statusText(st))")
            }
            n.object = out
        }
    }

    deinit { close() }

    /// Destroys the engines and frees the archive.
    func close() {
        if let e = restoreEngine { rst_engine_destroy(e); restoreEngine = nil }
        if let e = saveEngine { rst_engine_destroy(e); saveEngine = nil }
        if let a = archive { rst_free(a); archive = nil; archiveLength = 0 }
    }

    func prepareSave() throws {
        if let a = archive { rst_free(a); archive = nil; archiveLength = 0 }
        Counters.reset()
    }

    func save() throws -> Int {
        var out: UnsafeMutableRawPointer?
        var length = 0
        let st = rst_save_to_buffer(saveEngine, &out, &length)
        guard st == RST_OK, let out else { throw BenchError("rst_save_to_buffer: \(statusText(st))") }
        archive = out
        archiveLength = length
        if Counters.failures > 0 { throw BenchError("\(Counters.failures) failed calls in encode callbacks; first: \(Counters.firstFailure ?? "?")") }
        return length
    }

    /// A new engine: the host classes, and the first ceil(N/2) objects in pre-order.
    func prepareRestore() throws {
        if let e = restoreEngine { rst_engine_destroy(e); restoreEngine = nil }
        let e = try makeEngine(pluginDir: pluginDir)
        restoreEngine = e
        for (index, name) in classNameCStrings.enumerated() {
            let ctx = UnsafeMutableRawPointer(bitPattern: (index + 1) | (migrate ? migratedFactoryBit : 0))
            var st = rst_register_class(e, name, nodeFactory, ctx)
            guard st == RST_OK else { throw BenchError("rst_register_class: \(statusText(st))") }
            if migrate {
                st = rst_set_class_version(e, name, 1)
                guard st == RST_OK else { throw BenchError("rst_set_class_version: \(statusText(st))") }
                st = rst_register_migration(e, name, 0, nodeMigration, nil)
                guard st == RST_OK else { throw BenchError("rst_register_migration: \(statusText(st))") }
            }
        }
        let callbacks = migrate ? nodeMigratedCallbacks : nodeCallbacks
        var pre: [Node] = []
        pre.reserveCapacity(preregisterCount)
        for i in 0..<preregisterCount {
            let o = graph.objects[i]
            let n = Node(identifier: o.identifier, className: Graph.classNames[o.classIndex],
                         parent: o.parent < 0 ? nil : pre[o.parent], index: i)
            let retained = Unmanaged.passRetained(n)
            var out: OpaquePointer?
            let st = rst_register_object(e, o.identifier, n.parent?.object, classNameCStrings[o.classIndex],
                                         callbacks, retained.toOpaque(), &out)
            guard st == RST_OK, let out else {
                retained.release()
                throw BenchError("pre-registering object \(i): \(statusText(st))")
            }
            n.object = out
            pre.append(n)
        }
        Counters.reset()
    }

    func restore() throws {
        let st = rst_restore_from_buffer(restoreEngine, archive, archiveLength)
        guard st == RST_OK else { throw BenchError("rst_restore_from_buffer: \(statusText(st))") }
    }

    func endRestore() {
        if let e = restoreEngine { rst_engine_destroy(e); restoreEngine = nil }
    }

    /// Every object: found at its path, right values, class, parent and
    /// reference identity, finished; the report's counts; no failed call.
    func verifyRestore() -> String? {
        guard let e = restoreEngine else { return "no restore engine" }
        if Counters.failures > 0 { return "\(Counters.failures) failed calls in callbacks; first: \(Counters.firstFailure ?? "?")" }
        var report = rst_restore_report()
        let st = rst_last_restore_report(e, &report)
        guard st == RST_OK else { return "rst_last_restore_report: \(statusText(st))" }
        lastReport = report
        let n = graph.count
        let pluginSkipped = pluginIndex != nil && pluginDir == nil
        let expectRestored = pluginSkipped ? n - 1 : n
        if report.archived != UInt64(n) { return "report: archived \(report.archived), expected \(n)" }
        if report.restored != UInt64(expectRestored) { return "report: restored \(report.restored), expected \(expectRestored)" }
        if report.skipped != (pluginSkipped ? 1 : 0) { return "report: skipped \(report.skipped)" }
        let expectCreated = n - preregisterCount - (pluginIndex == nil ? 0 : 1)
        if Counters.created != expectCreated { return "factories created \(Counters.created) objects, expected \(expectCreated)" }
        let expectMigrated = migrate ? n : 0
        if Counters.migrated != expectMigrated { return "\(Counters.migrated) records migrated, expected \(expectMigrated)" }

        let objects = locate(engine: e)
        var instances = [Node?](repeating: nil, count: n)
        for i in 0..<n where i != pluginIndex {
            guard let o = objects[i], let inst = rst_object_instance(o) else { return "object \(i) (\(graph.shortPath(of: i))) not found after restore" }
            instances[i] = Unmanaged<Node>.fromOpaque(inst).takeUnretainedValue()
        }
        for (i, o) in graph.objects.enumerated() {
            if i == pluginIndex {
                if pluginSkipped {
                    if objects[i] != nil { return "the plugin object exists without a plugin directory" }
                } else if let problem = checkPluginObject(objects[i]) {
                    return problem
                }
                continue
            }
            let node = instances[i]!
            if let ident = rst_object_identifier(objects[i]), String(cString: ident) != o.identifier { return "object \(i): identifier" }
            if let m = node.mismatch(o) { return "object \(i) (\(graph.shortPath(of: i))): \(m)" }
            if !node.finished { return "object \(i): `finished` not called" }
            if o.parent < 0 ? node.parent != nil : node.parent !== instances[o.parent] { return "object \(i): wrong parent" }
            if o.ref < 0 ? node.ref != nil : node.ref !== instances[o.ref] { return "object \(i): wrong reference" }
        }
        return nil
    }

    /// The rst_object of every object of the graph in the restore engine: each
    /// object not yet found is looked up by its path, and its ancestors are
    /// then reached with rst_object_parent (so a 65,537-deep chain costs one
    /// long path, not 65,537 of them).
    private func locate(engine: OpaquePointer) -> [OpaquePointer?] {
        let n = graph.count
        var located = [OpaquePointer?](repeating: nil, count: n)
        var done = [Bool](repeating: false, count: n)
        for i in stride(from: n - 1, through: 0, by: -1) where !done[i] {
            var o = graph.path(of: i).withCString { rst_find_object(engine, $0) }
            located[i] = o
            done[i] = true
            var j = i
            while let current = o, graph.objects[j].parent >= 0 {
                let p = graph.objects[j].parent
                if done[p] { break }
                o = rst_object_parent(current)
                located[p] = o
                done[p] = true
                j = p
            }
        }
        return located
    }

    private func checkPluginObject(_ object: OpaquePointer?) -> String? {
        guard let object else { return "the plugin class's object was not created" }
        guard let raw = rst_object_instance(object) else { return "the plugin object has no instance" }
        let fields = raw.assumingMemoryBound(to: Int64.self)
        if fields[0] != pluginMagic { return "the plugin object's instance is not the plugin's" }
        if fields[1] != 8 { return "the plugin's decode read \(fields[1]) of 8 values" }
        if fields[2] != 1 { return "the plugin object's `finished` was not called" }
        return nil
    }

    /// Size budgets: the plain save, the writer's always-on bookkeeping for
    /// the same records (N offsets and one archive-size computation over
    /// the same identifiers and class names), and rst_last_save_sizes, runs
    /// interleaved after one warm-up.
    func timeBudgets(runs: Int) -> BudgetBench {
        var saves: [Double] = [], books: [Double] = [], attributions: [Double] = []
        var problem: String?
        // A writer holding this graph's records (no values): its names and
        // keys are what the archive-size computation walks.
        var w = ArchiveWriter(estimatedObjects: graph.count)
        for (i, o) in graph.objects.enumerated() {
            var id = o.identifier
            var cls = Graph.classNames[o.classIndex]
            let idIndex = id.withUTF8 { w.name(UnsafeRawBufferPointer($0)) }
            let clsIndex = cls.withUTF8 { w.name(UnsafeRawBufferPointer($0)) }
            w.beginObject(identifier: idIndex, parent: o.parent < 0 ? nil : o.parent, className: clsIndex)
            try? w.endObject()
        }
        let info = RestorationArchive.ArchiveInfo(appVersion: "restore-bench", idiom: "bench")
        var offsets: [UInt32] = []
        for run in 0...runs {
            var out: UnsafeMutableRawPointer?
            var length = 0
            var st = RST_OK
            Counters.reset()
            let t = Clock.time { st = rst_save_to_buffer(saveEngine, &out, &length) }
            if let out { rst_free(out) }
            guard st == RST_OK else { problem = "rst_save_to_buffer: \(statusText(st))"; break }
            var entries: UnsafeMutablePointer<rst_size_entry>?
            var count = 0
            let a = Clock.time { st = rst_last_save_sizes(saveEngine, &entries, &count) }
            if let entries { rst_free(entries) }
            guard st == RST_OK, count == graph.count else { problem = "rst_last_save_sizes: \(statusText(st)), \(count) entries"; break }
            var size = 0
            let b = Clock.time {
                offsets.removeAll(keepingCapacity: false)
                for i in 0..<graph.count { offsets.append(UInt32(truncatingIfNeeded: i &* 40)) }
                size = (try? w.archiveSize(info: info)) ?? 0
            }
            if size == 0 || offsets.count != graph.count { problem = "archiveSize failed" }
            if run > 0 {
                saves.append(t * 1000)
                attributions.append(a * 1000)
                books.append(b * 1000)
            }
        }
        let save = Stats(ms: saves), book = Stats(ms: books), attr = Stats(ms: attributions)
        return BudgetBench(save: save, bookkeeping: book, attribution: attr,
                           bookkeepingPercent: save.median > 0 ? book.median / save.median * 100 : .nan,
                           attributionPercent: save.median > 0 ? attr.median / save.median * 100 : .nan, problem: problem)
    }

    /// rst_save to archive_path (temporary file, fsync, rename, fsync of the
    /// directory), timed `runs` times after one warm-up.
    func timeFileSave(runs: Int) throws -> (Stats, Int) {
        guard let path = archivePath else { throw BenchError("no archive_path") }
        var samples: [Double] = []
        for run in 0...runs {
            Counters.reset()
            var st = RST_OK
            let t = Clock.time { st = rst_save(saveEngine) }
            guard st == RST_OK else { throw BenchError("rst_save: \(statusText(st))") }
            if Counters.failures > 0 { throw BenchError("encode failures during rst_save: \(Counters.firstFailure ?? "?")") }
            if run > 0 { samples.append(t * 1000) }
        }
        var info: UnsafeMutablePointer<rst_archive_info>?
        let st = rst_read_archive_info(path, &info)
        guard st == RST_OK, let info else { throw BenchError("rst_read_archive_info: \(statusText(st))") }
        defer { rst_free(info) }
        if info.pointee.object_count != UInt64(graph.count) {
            throw BenchError("the saved file holds \(info.pointee.object_count) objects, expected \(graph.count)")
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
        return (Stats(ms: samples), size ?? 0)
    }
}

// MARK: - The host's share

/// What the host itself costs inside save and restore, with no engine: the
/// save floor reads every value the encode callback reads, the same way
/// (withCString, withUnsafeBytes, the reference's rst_object); the restore
/// floor allocates the objects the factories allocate and builds every value
/// the decode callbacks build (String, Data, [Int64], links, `finished`).
/// It tells how much of a time target the engine has left.
func hostFloor(live: [Node], graph: Graph, preregistered: Int, runs: Int) -> (save: Stats, restore: Stats) {
    var saves: [Double] = [], restores: [Double] = []
    var sink = 0
    let parents = graph.objects.map(\.parent), refs = graph.objects.map(\.ref)
    for run in 0...runs {
        let ts = Clock.time {
            for n in live {
                sink &+= n.flag ? 1 : 0
                sink &+= Int(truncatingIfNeeded: n.number) &+ Int(truncatingIfNeeded: n.ratio.bitPattern)
                sink &+= n.title.withCString { Int($0[0]) }
                sink &+= n.blob.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in Int(raw[0]) }
                if let r = n.ref { sink &+= Int(bitPattern: r.object) }
                sink &+= n.noteText.withCString { Int($0[0]) } &+ Int(truncatingIfNeeded: n.noteCount)
                sink &+= n.rows.withUnsafeBufferPointer { Int(truncatingIfNeeded: $0[0]) }
            }
        }
        // The pre-registered half exists before the restore, as in the engine's case.
        let pre = (0..<preregistered).map { i in
            Node(identifier: live[i].identifier, className: live[i].className, parent: nil, index: i)
        }
        var made: [Node] = []
        made.reserveCapacity(live.count)
        let tr = Clock.time {
            for (i, src) in live.enumerated() {
                let n = i < preregistered ? pre[i]
                    : Node(identifier: src.identifier.withCString { String(cString: $0) }, className: src.className,
                           parent: nil, index: -1)
                n.parent = parents[i] < 0 ? nil : made[parents[i]]
                n.flag = src.flag
                n.number = src.number
                n.ratio = src.ratio
                n.title = src.title.withCString { String(decoding: UnsafeRawBufferPointer(start: $0, count: 16), as: UTF8.self) }
                n.blob = src.blob.withUnsafeBytes { Data(bytes: $0.baseAddress!, count: $0.count) }
                n.ref = refs[i] < 0 ? nil : made[refs[i]]
                n.noteText = src.noteText.withCString { String(cString: $0) }
                n.noteCount = src.noteCount
                var rows = [Int64](repeating: 0, count: 4)
                src.rows.withUnsafeBufferPointer { b in rows.withUnsafeMutableBufferPointer { $0.baseAddress!.update(from: b.baseAddress!, count: 4) } }
                n.rows = rows
                made.append(n)
            }
            for n in made { n.finished = true }
        }
        if run > 0 { saves.append(ts * 1000); restores.append(tr * 1000) }
        sink &+= made.count
    }
    if sink == 42 { Log.say("") }       // keeps the loops observable
    return (Stats(ms: saves), Stats(ms: restores))
}

// MARK: - Entry points used by main.swift

enum EngineBench {
    static let included = true
    static let note: String? = nil

    static func contestant(graph: Graph, live: [Node], workDir: URL) throws -> Contestant {
        let dir = workDir.appendingPathComponent("n\(graph.count)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return try EngineContestant(graph: graph, live: live, archivePath: dir.appendingPathComponent("state.rst").path)
    }

    /// The "engine-migrate" row: its own host objects (an object registers
    /// with one engine) and no archive file.
    static func migrateContestant(graph: Graph) throws -> Contestant {
        try EngineContestant(graph: graph, live: graph.liveNodes(), migrate: true)
    }

    /// Per-N figures after the timed runs: ns per value and the file save.
    static func sizeExtras(_ c: Contestant, result: FormatResult?, runs: Int) -> EngineSizeExtras {
        let e = c as! EngineContestant
        let n = e.graph.count
        var x = EngineSizeExtras(n: n, preregistered: e.preregisterCount,
                                 preregisteredFraction: Double(e.preregisterCount) / Double(n),
                                 nsPerEncodedValue: nil, nsPerDecodedValue: nil, fileSave: nil, fileBytes: nil, problem: nil)
        if let r = result, r.problem == nil {
            if let s = r.save?.median { x.nsPerEncodedValue = s * 1e6 / Double(8 * n) }
            if let d = r.restore?.median { x.nsPerDecodedValue = d * 1e6 / Double(8 * n) }
        }
        let floor = hostFloor(live: e.live, graph: e.graph, preregistered: e.preregisterCount, runs: runs)
        x.hostSaveFloor = floor.save
        x.hostRestoreFloor = floor.restore
        x.budget = e.timeBudgets(runs: runs)
        do {
            let (stats, bytes) = try e.timeFileSave(runs: runs)
            x.fileSave = stats
            x.fileBytes = bytes
        } catch {
            x.problem = "file save: \(error)"
        }
        return x
    }

    /// Destroys the contestant's engines and frees its archive.
    static func close(_ c: Contestant) { (c as? EngineContestant)?.close() }

    /// The linear-growth check from interleaved runs: small save, large save,
    /// small restore, large restore, `runs` times, so that both sizes see the
    /// same machine (the per-N tables are minutes apart on a shared machine).
    static func growth(small: Contestant, large: Contestant, runs: Int) -> GrowthResult {
        var times: [[Double]] = [[], [], [], []]       // small save, large save, small restore, large restore
        var problem: String?
        do {
            for _ in 0..<runs {
                for (k, c) in [small, large].enumerated() {
                    try c.prepareSave()
                    times[k].append(try Clock.time { _ = try c.save() } * 1000)
                }
                for (k, c) in [small, large].enumerated() {
                    try c.prepareRestore()
                    times[2 + k].append(try Clock.time { try c.restore() } * 1000)
                    c.endRestore()
                }
            }
        } catch {
            problem = "interleaved runs failed: \(error)"
        }
        let st = times.map { Stats(ms: $0) }
        let n = { (c: Contestant) in (c as? EngineContestant)?.graph.count ?? 0 }
        return GrowthResult(smallN: n(small), largeN: n(large), runs: st[0].samples.count,
                            smallSave: st[0], largeSave: st[1], smallRestore: st[2], largeRestore: st[3],
                            saveRatio: st[1].median / st[0].median, restoreRatio: st[3].median / st[2].median,
                            problem: problem)
    }

    /// The cases beyond the per-N table.
    static func extras(options: Options, workDir: URL) -> EngineExtras {
        var x = EngineExtras()
        Log.say("engine: micro loop")
        x.micro = runMicro(runs: options.runs)
        Log.say("engine: sealed values")
        x.sealedMicro = runMicro(runs: options.runs, sealed: true)
        Log.say("engine: plugin case")
        x.plugin = runPluginCase(n: 10_000, runs: options.runs, seed: options.seed, workDir: workDir)
        Log.say("engine: deep chain, fan-out and depth limit (child process, \(smallStackBytes / 1024) KiB stack)")
        runShapesInChild(runs: options.runs, seed: options.seed, into: &x)
        x.log = Array((Counters.log + x.log).prefix(20))
        return x
    }
}

#else

// A scratch build with -D BASELINES_ONLY (the engine's core was not there to
// link): the baselines run, the engine's rows and checks say so.
import Foundation

enum EngineBench {
    static let included = false
    static let note: String? = "not included: this build was compiled with -D BASELINES_ONLY"

    static func contestant(graph: Graph, live: [Node], workDir: URL) throws -> Contestant {
        throw BenchError("engine not included in this build")
    }

    static func migrateContestant(graph: Graph) throws -> Contestant {
        throw BenchError("engine not included in this build")
    }

    static func sizeExtras(_ c: Contestant, result: FormatResult?, runs: Int) -> EngineSizeExtras {
        EngineSizeExtras(n: 0, preregistered: 0, preregisteredFraction: 0, nsPerEncodedValue: nil, nsPerDecodedValue: nil,
                         fileSave: nil, fileBytes: nil, problem: "engine not included")
    }

    static func extras(options: Options, workDir: URL) -> EngineExtras { EngineExtras() }

    static func close(_ c: Contestant) {}

    static func growth(small: Contestant, large: Contestant, runs: Int) -> GrowthResult? { nil }
}

func childShapesMain(runs: Int, seed: UInt64) -> Int32 {
    Log.say("--child-shapes needs the engine; this build has -D BASELINES_ONLY")
    return 2
}
#endif
