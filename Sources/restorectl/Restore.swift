import ArgumentParser
import RestorationArchive
import RestorationCore
import RestorationPlugins

struct Restore: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Run a headless restore of an archive through the real engine.",
        discussion: """
            Restores the archive into a fresh engine (crash-loop guard off: a hand \
            restore never sets an app's archive aside, and the archive is left as \
            it is). The engine validates the archive first, with every limit, and \
            refuses a corrupt one. Records are materialized by plugin classes \
            where a plugin in --plugins DIR provides the class, and by a stand-in \
            object otherwise (the engine's fallback factory), so every record's \
            values are decoded. The engine then runs the decode pass in dependency \
            order and the finished pass. Prints each object in the order it was \
            decoded with its outcome -- which plugin and class created it, or \
            stand-in; skipped records and why -- then the engine's report and \
            its log. A record whose plugin factory declined is skipped, as in the \
            app. Without --classes the outcome assumes every record has an owner; \
            with --classes A,B (the classes a build registers) it is that build's: \
            its classes (hiding plugin classes of the same name) and plugins \
            produce records, records without a class (under records without one) \
            go to the objects the build registers itself, and the rest are \
            skipped with the engine's reason, as that build would skip them. \
            --save-to then saves the restored objects through the engine \
            (stand-ins encode what they decoded; plugin objects encode \
            themselves). Refuses an archive that is a symbolic link or owned by \
            another user.

            EXAMPLES
              restorectl restore state.rst
              restorectl restore state.rst --plugins ./plugins --json
              restorectl restore state.rst --save-to resaved.rst
              restorectl restore state.rst --explain
              restorectl restore state.rst --explain --classes Doc,Tab --plugins ./plugins

            \(Exit.table)
            """)

    @OptionGroup var input: ArchiveArgument

    @Option(help: ArgumentHelp("Load plugin classes from this directory (the engine's plugin_dir).", valueName: "dir"))
    var plugins: String?

    @Option(help: ArgumentHelp("The classes a build registers, comma-separated: answer for that build (records of other classes are skipped as it would skip them) instead of giving every record an owner.", valueName: "list"))
    var classes: String?

    @Flag(help: "Print the outcome as JSON.")
    var json = false

    @Flag(help: "Do not shorten long values.")
    var full = false

    @Flag(help: "List every skipped record with the engine's reason (RST_SKIP_*) and sentence.")
    var explain = false

    @Option(help: ArgumentHelp("After the restore, save the engine's objects to this archive.", valueName: "archive"))
    var saveTo: String?

    func run() throws {
        let file = input.archive
        try FileRules.checkOwnedRegularOrAbsent(file, for: "restore")
        if let dir = plugins {
            guard FileRules.exists(dir) else { throw CtlFailure(Exit.notFound, "there is no plugin directory at \(Text.quotedPath(dir))") }
            guard FileRules.isDirectory(dir) else { throw CtlFailure(Exit.plugin, "the plugin directory \(Text.quotedPath(dir)) is not a directory") }
        }
        if let saveTo { try FileRules.checkOwnedRegularOrAbsent(saveTo, for: "save to") }
        let buildClasses = try HeadlessRestore.parseClasses(classes)
        let archive = try LoadedArchive.load(file)
        let reader = archive.reader
        let run = HeadlessRestore(reader: reader, pluginDirectory: plugins, classes: buildClasses)
        defer { run.engine.destroy() }
        // The very bytes just validated (no second read of the file).
        try run.restore()

        let result = run.result()
        var out = Output()
        if json {
            var j = result.json(file: file)
            if explain, case .object(var members) = j {
                members.append(("skips", .array(run.skips.map(Explain.json))))
                j = .object(members)
            }
            out.write(JSONWriter.write(j))
        } else {
            for l in result.lines(file: file, full: full) { out.line(l) }
            if explain { for l in Explain.lines(run.skips) { out.line(l) } }
            // A marker left by a restore that died means the app's next restore
            // of this file will set it aside; a hand restore ignores it.
            let beside = FileStore.stateFiles(of: file).filter { $0 != file && !$0.hasSuffix(".lock") }
            if !beside.isEmpty {
                out.line()
                out.line("note: the engine keeps these beside the archive (crash-loop marker, set-aside copies, temporaries):")
                for b in beside { out.line("  \(Text.escaped(b))") }
            }
        }
        out.flush()

        if let saveTo {
            let bytes: [UInt8]
            do { bytes = try run.engine.saveToBytes() } catch { throw CtlFailure(error) }
            do throws(RestorationFailure) {
                try withRawBytes(bytes) { (b: UnsafeRawBufferPointer) throws(RestorationFailure) in
                    try FileStore.atomicWrite(b, to: saveTo)
                }
            } catch {
                throw CtlFailure(error)
            }
            if !json {
                print("saved the restored objects to \(Text.quotedPath(saveTo)) (\(bytes.count) bytes)")
                for (r, notes) in run.trace.notes.sorted(by: { $0.key < $1.key }) {
                    for n in notes where n.hasPrefix("save: ") {
                        print("  note: \(Text.escaped(run.paths[r])): \(Text.escaped(String(n.dropFirst(6))))")
                    }
                }
            }
        }
    }
}

// MARK: - The headless restore

/// What happened to each record.
final class RestoreTrace {
    enum Outcome {
        /// Created by a plugin factory of this class.
        case plugin(String)
        /// Created by the stand-in fallback factory.
        case standIn
        /// With --classes: created by a class the build registers (a stand-in
        /// decodes its values).
        case buildClass(String)
        /// With --classes: a record without a class, restored into the
        /// object the build registers at its path (a stand-in here).
        case buildObject
    }

    var outcome: [Int: Outcome] = [:]
    /// Records whose plugin factory declined (or returned a foreign object).
    var declined: [Int: String] = [:]
    /// Stand-ins, in the order the engine decoded them (pass 2).
    var decoded: [Int] = []
    /// Stand-ins, in the order the engine finished them (pass 3).
    var finished: [Int] = []
    /// Values the stand-ins decoded through the coder.
    var values: [Int: [ArchiveEntry]] = [:]
    /// Decode errors (per record), and references to skipped records.
    var notes: [Int: [String]] = [:]
    var log: [(LogLevel, String)] = []
    var didFinishRestoring = false

    func note(_ r: Int, _ s: String) { notes[r, default: []].append(s) }
}

/// Stands in for an object no plugin provides: decodes every field with the
/// engine's coder and records it; at a later save, encodes it back.
final class StandIn: ObjectBehavior {
    let trace: RestoreTrace
    let record: Int
    /// Record paths, to find reference targets at save time.
    let paths: [String]

    init(trace: RestoreTrace, record: Int, paths: [String]) {
        self.trace = trace
        self.record = record
        self.paths = paths
    }

    var instance: UnsafeMutableRawPointer? { nil }

    func decode(_ node: ObjectNode, _ coder: Coder) {
        trace.decoded.append(coder.record)
        guard let reader = coder.currentReader else { return }
        trace.values[coder.record] = decodeLevel(coder, reader, trail: "")
    }

    private func decodeLevel(_ coder: Coder, _ reader: ArchiveReader, trail: String) -> [ArchiveEntry] {
        var fields: [ArchiveReader.Field] = []
        do {
            try coder.forEachField { _, f in fields.append(f) }
        } catch {
            trace.note(record, "\(trail.isEmpty ? "" : trail + ": ")\(error.message)")
            return []
        }
        var out: [ArchiveEntry] = []
        out.reserveCapacity(fields.count)
        for f in fields {
            let key = reader.keyName(f.key)
            let kb = KeyBytes(reader.keyBytes(f.key))
            do throws(RestorationFailure) {
                let v: ArchiveValue
                switch f.tag {
                case .boolFalse?, .boolTrue?: v = .bool(try coder.decodeBool(kb))
                case .int?: v = .int(try coder.decodeInt(kb))
                case .double?: v = .double(try coder.decodeDouble(kb))
                case .string?: v = .string(try coder.decodeString(kb))
                case .bytes?: v = .bytes(Array(try coder.decodeBytes(kb)))
                case .osString?: v = .osString(Array(try coder.decodeOSStringBytes(kb)))
                case .object?:
                    let target = reader.objectRecord(f)
                    do {
                        let node = try coder.decodeObject(kb)
                        if target < paths.count, node.path != paths[target] {
                            trace.note(record, "\(trail)\(key): the coder returned '\(node.path)' for a reference to '\(paths[target])'")
                        }
                    } catch {
                        if error.status != .notFound { throw error }
                        // A reference to a skipped record: shown as such.
                    }
                    v = .object(record: target)
                case .objectArray?:
                    _ = try coder.decodeObjectArray(kb)
                    var targets: [Int] = []
                    reader.forEachObjectArrayElement(f) { targets.append($0) }
                    v = .objectArray(targets)
                case .intArray?: v = .intArray(try coder.decodeIntArray(kb))
                case .stringArray?: v = .stringArray(try coder.decodeStringArray(kb))
                case .record?:
                    try coder.decodeBeginRecord(kb)
                    let sub = decodeLevel(coder, reader, trail: trail + key + ".")
                    try coder.decodeEndRecord()
                    v = .record(sub)
                case nil:
                    v = .unknown(tag: f.rawTag, payload: Array(reader.bytes(f)))
                }
                out.append(ArchiveEntry(key: key, value: v))
            } catch {
                trace.note(record, "\(trail)\(key): \(error.message)")
            }
        }
        return out
    }

    func finished(_ node: ObjectNode) {
        trace.finished.append(record)
    }

    func released(_ node: ObjectNode) {}

    func encode(_ node: ObjectNode, _ coder: Coder) {
        guard let entries = trace.values[record] else { return }
        encodeLevel(entries, node.engine, coder, trail: "")
    }

    private func encodeLevel(_ entries: [ArchiveEntry], _ engine: Engine, _ coder: Coder, trail: String) {
        for e in entries {
            var key = e.key
            key.withUTF8 { u in
                let kb = KeyBytes(UnsafeRawBufferPointer(u))
                do {
                    switch e.value {
                    case .bool(let b): try coder.encodeBool(kb, b)
                    case .int(let i): try coder.encodeInt(kb, i)
                    case .double(let d): try coder.encodeDouble(kb, d)
                    case .string(var s): try s.withUTF8 { b in try coder.encodeString(kb, UnsafeRawBufferPointer(b)) }
                    case .bytes(let b): try b.withUnsafeBytes { b in try coder.encodeBytes(kb, b) }
                    case .osString(let b): try b.withUnsafeBytes { b in try coder.encodeOSString(kb, b) }
                    case .object(let r):
                        if r < paths.count, let target = engine.find(path: paths[r]) {
                            try coder.encodeObject(kb, target)
                        } else {
                            trace.note(record, "save: \(trail)\(e.key): the referenced object was skipped; the key is left out")
                        }
                    case .objectArray(let a):
                        // Elements whose objects were skipped are left out (as a single reference's key is).
                        var nodes: [ObjectNode] = []
                        for r in a {
                            if r < paths.count, let target = engine.find(path: paths[r]) { nodes.append(target) }
                        }
                        if nodes.count != a.count {
                            trace.note(record, "save: \(trail)\(e.key): \(a.count - nodes.count) of \(a.count) referenced objects were skipped and are left out")
                        }
                        try coder.encodeObjectArray(kb, nodes)
                    case .intArray(let a): try a.withUnsafeBufferPointer { b in try coder.encodeIntArray(kb, b) }
                    case .stringArray(let a):
                        try withPinnedStrings(a) { (bufs) throws(RestorationFailure) in try coder.encodeStringArray(kb, bufs) }
                    case .record(let sub):
                        try coder.encodeBeginRecord(kb)
                        encodeLevel(sub, engine, coder, trail: trail + e.key + ".")
                        try coder.encodeEndRecord()
                    case .unknown(let tag, _):
                        trace.note(record, "save: \(trail)\(e.key): a value of unknown type (tag \(tag)) cannot be encoded through the coder; left out")
                    }
                } catch {
                    let message = (error as? RestorationFailure)?.message ?? "\(error)"
                    trace.note(record, "save: \(trail)\(e.key): \(message)")
                }
            }
        }
    }
}

/// The engine's class provider for the headless restore: the plugin loader,
/// with every factory call traced (which class created which record, and
/// which declined).
final class TracingProvider: ClassProvider {
    let loader: PluginLoader
    let trace: RestoreTrace

    init(loader: PluginLoader, trace: RestoreTrace) {
        self.loader = loader
        self.trace = trace
    }

    func factory(forClass className: String) -> Factory? {
        guard let f = loader.factory(forClass: className) else { return nil }
        let trace = self.trace
        return { request in
            let made = f(request)
            if let made, request.object(at: UnsafeRawPointer(made.handle)) === made {
                trace.outcome[request.record] = .plugin(className)
            } else {
                trace.declined[request.record] = made == nil ? "plugin factory declined" : "plugin factory returned an object at another path"
            }
            return made
        }
    }

    func rejection(forClass className: String) -> String? { loader.rejection(forClass: className) }
    var loadedCount: Int { loader.loadedCount }
    var rejectedCount: Int { loader.rejectedCount }
    func shutdown() { loader.shutdown() }
}

final class HeadlessRestore {
    let reader: ArchiveReader
    let engine: Engine
    let trace = RestoreTrace()
    let paths: [String]
    let loader: PluginLoader?

    /// With `classes` (--classes): the build's classes; no fallback. Records
    /// without a class whose ancestors have none either are the objects the
    /// build registers itself before it restores; the rest need a class the
    /// build or a plugin provides, or are skipped as in that build.
    let classes: [String]?

    init(reader: ArchiveReader, pluginDirectory: String?, classes: [String]? = nil) {
        self.reader = reader
        self.classes = classes
        paths = (0..<reader.recordCount).map { reader.path(ofRecord: $0) }
        engine = Engine(configuration: .init(appVersion: reader.info.appVersion, idiom: reader.info.idiom, crashGuard: false))
        let trace = self.trace
        engine.logHandler = { level, message in trace.log.append((level, message)) }
        if let dir = pluginDirectory {
            loader = PluginLoader.attach(to: engine, directory: dir) { TracingProvider(loader: $0, trace: trace) }
        } else {
            loader = nil
        }
        let paths = self.paths
        if let classes {
            modelBuild(classes)
            engine.didFinishRestoring = { trace.didFinishRestoring = true }
            return
        }
        engine.setFallbackFactory { request in
            // A class a plugin provides but declined stays skipped, as in the app.
            if trace.declined[request.record] != nil { return nil }
            let standIn = StandIn(trace: trace, record: request.record, paths: paths)
            guard let node = try? request.engine.register(identifier: request.identifier, parent: request.parent,
                                                          className: request.className, behavior: standIn) else {
                return nil
            }
            trace.outcome[request.record] = .standIn
            return node
        }
        engine.didFinishRestoring = { trace.didFinishRestoring = true }
    }

    /// Restores from the reader's bytes (the engine validates them again).
    func restore() throws(CtlFailure) {
        do {
            try engine.restore(bytes: reader.archiveBytes)
        } catch {
            throw CtlFailure(error)
        }
    }

    func result() -> RestoreResult {
        let n = reader.recordCount
        let materialized = (0..<n).map { trace.outcome[$0] != nil }
        // The engine's own planner, with the engine's inputs: the order pass 2 ran.
        let order = Planner.decodeOrder(count: n, included: { materialized[$0] },
                                        parent: { self.reader.parent(ofRecord: $0) },
                                        references: { self.reader.references(ofRecord: $0) },
                                        referencesOnlyBackward: !reader.hasForwardReferences).map(Int.init)
        var pluginFiles: [String: PluginFileInfo] = [:]
        var files: [PluginFileInfo] = []
        var listFailure: String?
        if let loader {
            do {
                files = try loader.list()
                for f in files where f.state == .loaded {
                    for c in f.classes where c.usable && pluginFiles[c.className] == nil { pluginFiles[c.className] = f }
                }
            } catch {
                listFailure = error.message
            }
        }
        let doc = ArchiveDocument(reader: reader)
        var skipped: [(Int, String)] = []
        for r in 0..<n where !materialized[r] {
            let reason: String
            if let p = reader.parent(ofRecord: r), !materialized[p] {
                reason = "parent skipped"
            } else if let d = trace.declined[r] {
                reason = d
            } else {
                reason = "no factory produced it"
            }
            skipped.append((r, reason))
        }
        return RestoreResult(classes: classes, doc: doc, paths: paths, order: order, trace: trace, pluginFiles: pluginFiles,
                             files: files, listFailure: listFailure, skipped: skipped,
                             report: engine.lastRestoreReport ?? RestoreCounts(), pluginDirectory: loader?.directory)
    }
}

struct RestoreResult {
    /// --classes (nil: every record is assumed to have an owner).
    var classes: [String]? = nil
    let doc: ArchiveDocument
    let paths: [String]
    let order: [Int]
    let trace: RestoreTrace
    let pluginFiles: [String: PluginFileInfo]
    let files: [PluginFileInfo]
    let listFailure: String?
    let skipped: [(Int, String)]
    let report: RestoreCounts
    let pluginDirectory: String?

    var skippedSet: Set<Int> { Set(skipped.map { $0.0 }) }

    static func baseName(_ p: String) -> String {
        p.split(separator: "/").last.map(String.init) ?? p
    }

    /// "plugin libx.so: class X", "stand-in (class X not provided)".
    func outcome(_ r: Int) -> (kind: String, text: String, plugin: String?) {
        let cls = doc.objects[r].className
        switch trace.outcome[r] {
        case .plugin(let c)?:
            let file = pluginFiles[c].map { RestoreResult.baseName($0.path) } ?? "?"
            return ("plugin", "plugin \(Text.escaped(file)): class \(Text.escaped(c))", pluginFiles[c]?.path)
        case .standIn?:
            if let cls { return ("stand-in", "stand-in (class \(Text.escaped(cls)) not provided)", nil) }
            return ("stand-in", "stand-in (no class)", nil)
        case .buildClass(let c)?:
            return ("build class", "class \(Text.escaped(c)), registered by the build (--classes)", nil)
        case .buildObject?:
            return ("build object", "the object the build registers at this path (no class: only an object the host registers before restoring receives it)", nil)
        case nil:
            return ("skipped", "skipped", nil)
        }
    }

    /// Values to show: what the stand-in decoded, or (plugin objects) the archive's.
    func values(_ r: Int) -> (entries: [ArchiveEntry], decodedByStandIn: Bool) {
        if let v = trace.values[r] { return (v, true) }
        return (doc.objects[r].entries, false)
    }

    func lines(file: String, full: Bool) -> [String] {
        var r = Renderer(paths: paths, full: full)
        let skippedSet = self.skippedSet
        r.referenceNote = { skippedSet.contains($0) ? "skipped" : nil }
        var out: [String] = []
        out.append("restore of \(Text.quotedPath(file)) through the engine (crash-loop guard off)")
        out += r.infoLines(doc.info, byteCount: nil)
        if let dir = pluginDirectory {
            out.append("  plugins         \(Text.quotedPath(dir)): \(report.pluginsLoaded) loaded, \(report.pluginsRejected) rejected")
        } else if classes == nil {
            out.append("  plugins         none (--plugins not given): every record gets a stand-in")
        } else {
            out.append("  plugins         none (--plugins not given)")
        }
        if let classes {
            out.append("  build classes   \(classes.isEmpty ? "none" : classes.map { Text.escaped($0) }.joined(separator: ", ")) (--classes)")
        }
        out += BuildModel.assumption(classes: classes)
        out.append("")
        out.append("decode order (pass 2):")
        if order.isEmpty { out.append("  (nothing was decoded)") }
        let finished = Set(trace.finished)
        for (k, rec) in order.enumerated() {
            let o = outcome(rec)
            out.append("  \(k + 1). \(Text.escaped(paths[rec]))  [\(o.text)]")
            let (entries, decoded) = values(rec)
            var lines: [String] = []
            r.entryLines(entries, indent: 7, into: &lines)
            if !decoded && !entries.isEmpty { out.append("       (values as archived; the plugin decoded them)") }
            out += lines
            for n in trace.notes[rec] ?? [] { out.append("       note: \(Text.escaped(n))") }
            if o.plugin == nil && o.kind != "plugin" && !finished.contains(rec) { out.append("       note: finished was not called") }
        }
        if !skipped.isEmpty {
            out.append("")
            out.append("skipped (with their descendants):")
            for (rec, why) in skipped {
                let cls = doc.objects[rec].className.map { "class " + Text.escaped($0) } ?? "no class"
                out.append("  \(Text.escaped(paths[rec]))  (\(cls))  [skipped: \(Text.escaped(why))]")
            }
        }
        out.append("")
        out.append("finished (pass 3): \(report.restored) objects\(trace.didFinishRestoring ? "; did_finish_restoring called" : "")")
        out.append("report: archived \(report.archived), restored \(report.restored), skipped \(report.skipped), plugins loaded \(report.pluginsLoaded), plugins rejected \(report.pluginsRejected)")
        if let f = listFailure { out.append("plugins: \(Text.escaped(f))") }
        let rejected = files.filter { $0.state == .rejected }
        for f in rejected {
            out.append("plugin rejected: \(Text.escaped(RestoreResult.baseName(f.path))): \(Text.escaped(f.reason))")
        }
        if !trace.log.isEmpty {
            out.append("")
            out.append("engine log:")
            for (level, m) in trace.log { out.append("  \(level.name): \(Text.escaped(m))") }
        }
        return out
    }

    func json(file: String) -> JSON {
        var objects: [JSON] = []
        for (k, rec) in order.enumerated() {
            let o = outcome(rec)
            let (entries, decoded) = values(rec)
            var members: [(String, JSON)] = [
                ("path", .string(paths[rec])),
                ("class", doc.objects[rec].className.map { .string($0) } ?? .null),
                ("outcome", .string(o.kind)),
                ("detail", .string(o.text)),
            ]
            if let p = o.plugin { members.append(("plugin", .string(p))) }
            members.append(("decode_index", .int(Int64(k))))
            members.append(("values_decoded_by", .string(decoded ? "stand-in" : "plugin (values as archived)")))
            members.append(("values", StateJSON.entries(entries, paths)))
            let notes = trace.notes[rec] ?? []
            if !notes.isEmpty { members.append(("notes", .array(notes.map { .string($0) }))) }
            objects.append(.object(members))
        }
        let skippedJSON: [JSON] = skipped.map { (rec, why) in
            .object([("path", .string(paths[rec])),
                     ("class", doc.objects[rec].className.map { .string($0) } ?? .null),
                     ("outcome", .string("skipped")),
                     ("reason", .string(why))])
        }
        return .object([
            ("archive", .string(file)),
            ("info", .object([
                ("format_version", .int(Int64(doc.info.formatVersion))),
                ("app_version", .string(doc.info.appVersion)),
                ("system_version", .string(doc.info.systemVersion)),
                ("idiom", .string(doc.info.idiom)),
                ("saved_at_ms", .int(doc.info.savedAtMs)),
            ])),
            ("plugin_directory", pluginDirectory.map { .string($0) } ?? .null),
            ("classes", classes.map { .array($0.map { .string($0) }) } ?? .null),
            ("assumption", .string(BuildModel.assumptionText(classes: classes))),
            ("decoded", .array(objects)),
            ("skipped", .array(skippedJSON)),
            ("did_finish_restoring", .bool(trace.didFinishRestoring)),
            ("report", .object([
                ("archived", .int(Int64(report.archived))),
                ("restored", .int(Int64(report.restored))),
                ("skipped", .int(Int64(report.skipped))),
                ("plugins_loaded", .int(Int64(report.pluginsLoaded))),
                ("plugins_rejected", .int(Int64(report.pluginsRejected))),
            ])),
            ("plugins", .array(files.map(Plugins.json))),
            ("log", .array(trace.log.map { .object([("level", .string($0.0.name)), ("message", .string($0.1))]) })),
        ])
    }
}
