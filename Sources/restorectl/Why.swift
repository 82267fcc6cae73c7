import ArgumentParser
import RestorationArchive
import RestorationCore

// Every skip explained (docs/EVOLUTION.md), from the engine's own list
// (Engine.lastRestoreSkips, the rst_last_restore_skips of the C ABI).

extension HeadlessRestore {
    /// The engine's explained skips of the restore just run.
    var skips: [SkippedRecord] { engine.lastRestoreSkips }
}

enum Explain {
    /// "  Tabs/Old  RST_SKIP_NO_FACTORY (class Old, version 2): <detail>"
    static func line(_ s: SkippedRecord) -> String {
        var what = s.className.isEmpty ? "no class" : "class " + Text.escaped(s.className)
        if s.version != 0 { what += ", version \(s.version)" }
        return "  \(Text.escaped(s.path))  \(s.reason.cName) (\(what)): \(Text.escaped(s.detail))"
    }

    static func lines(_ skips: [SkippedRecord]) -> [String] {
        var out = ["", "why (the engine's rst_last_restore_skips, archive order):"]
        if skips.isEmpty { out.append("  nothing was skipped") }
        for s in skips { out.append(line(s)) }
        return out
    }

    static func json(_ s: SkippedRecord) -> JSON {
        .object([("path", .string(s.path)),
                 ("class", s.className.isEmpty ? .null : .string(s.className)),
                 ("reason", .string(s.reason.cName)),
                 ("reason_code", .int(Int64(s.reason.rawValue))),
                 ("version", .int(Int64(s.version))),
                 ("detail", .string(s.detail))])
    }
}

struct Why: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "why",
        abstract: "Explain what produced one record at a restore, or why it was skipped.",
        discussion: """
            Runs the same headless restore as `restorectl restore` (plugins from \
            --plugins DIR, crash-loop guard off) and explains one path: which \
            plugin class, build class or stand-in produced it and where it came \
            in the decode order, or the engine's skip reason (RST_SKIP_*) and its \
            sentence. Without --classes the answer assumes every record has an \
            owner: a record no plugin provides gets a stand-in, though an app \
            skips it (RST_SKIP_NO_FACTORY) unless it registers that object, a \
            class or a fallback. With --classes A,B (the classes a build \
            registers) the answer is that build's: its classes and plugins \
            produce records, every record without a class (under records \
            without one) is taken as an object the build registers itself, and \
            the rest are skipped as that build skips them. Exits 3 when no \
            record has the path.

            EXAMPLES
              restorectl why state.rst Tabs/Countries/Detail --plugins ./plugins
              restorectl why state.rst Tabs/Countries/Detail --classes Doc,Tab --plugins ./plugins

            \(Exit.table)
            """)

    @OptionGroup var input: ArchiveArgument

    @Argument(help: ArgumentHelp("The record's path, \"A/B/C\".", valueName: "path"))
    var path: String

    @Option(help: ArgumentHelp("Load plugin classes from this directory (the engine's plugin_dir).", valueName: "dir"))
    var plugins: String?

    @Option(help: ArgumentHelp("The classes a build registers, comma-separated: answer for that build (records of other classes are skipped as it would skip them) instead of giving every record an owner.", valueName: "list"))
    var classes: String?

    @Flag(help: "Print the answer as JSON.")
    var json = false

    func run() throws {
        let file = input.archive
        try FileRules.checkOwnedRegularOrAbsent(file, for: "why")
        if let dir = plugins {
            guard FileRules.exists(dir) else { throw CtlFailure(Exit.notFound, "there is no plugin directory at \(Text.quotedPath(dir))") }
            guard FileRules.isDirectory(dir) else { throw CtlFailure(Exit.plugin, "the plugin directory \(Text.quotedPath(dir)) is not a directory") }
        }
        let buildClasses = try HeadlessRestore.parseClasses(classes)
        let archive = try LoadedArchive.load(file)
        let reader = archive.reader
        let run = HeadlessRestore(reader: reader, pluginDirectory: plugins, classes: buildClasses)
        defer { run.engine.destroy() }
        guard let rec = run.paths.firstIndex(of: path) else {
            // Size budgets: a path the save left out is explained, not "not found".
            if let t = TrimmedList(reader: reader), let top = t.entries.first(where: { path == $0.path || path.hasPrefix($0.path + "/") }) {
                let why = top.path == path
                    ? "the save that wrote this archive left it out (with its descendants) to fit its size budget of \(t.budget) bytes"
                    : "the save that wrote this archive left out its ancestor '\(top.path)' (with its descendants) to fit its size budget of \(t.budget) bytes"
                var out = Output()
                if json {
                    out.write(JSONWriter.write(.object([("path", .string(path)), ("outcome", .string("trimmed")),
                                                        ("top", .string(top.path)), ("budget", .number(String(t.budget))),
                                                        ("detail", .string(why))])))
                } else {
                    out.line("\(Text.escaped(path)): not in the archive: \(top.path == path ? "RST_SKIP_TRIMMED" : "below a trimmed subtree")")
                    out.line("  why      \(Text.escaped(why))")
                }
                out.flush()
                return
            }
            throw CtlFailure(Exit.notFound, "no record of \(Text.quotedPath(file)) has the path \(Text.quoted(path))")
        }
        try run.restore()
        let result = run.result()
        let cls = reader.className(ofRecord: rec).map { reader.name($0) }
        let version = reader.version(ofRecord: rec)
        var out = Output()
        if let skip = run.skips.first(where: { $0.record == rec }) {
            if json {
                out.write(JSONWriter.write(.object([("path", .string(path)), ("outcome", .string("skipped")),
                                                    ("skip", Explain.json(skip)),
                                                    ("classes", buildClasses.map { .array($0.map { .string($0) }) } ?? .null),
                                                    ("assumption", .string(BuildModel.assumptionText(classes: buildClasses)))])))
            } else {
                out.line("\(Text.escaped(path)): skipped: \(skip.reason.cName)")
                out.line("  class    \(cls.map { Text.escaped($0) } ?? "(none)")\(version != 0 ? ", version \(version)" : "")")
                out.line("  why      \(Text.escaped(skip.detail))")
                out.line("  assumes  \(BuildModel.assumptionText(classes: buildClasses))")
            }
        } else {
            let o = result.outcome(rec)
            let position = result.order.firstIndex(of: rec)
            if json {
                var members: [(String, JSON)] = [("path", .string(path)), ("outcome", .string(o.kind)), ("detail", .string(o.text))]
                if let p = o.plugin { members.append(("plugin", .string(p))) }
                if let position { members.append(("decode_index", .int(Int64(position)))) }
                members.append(("classes", buildClasses.map { .array($0.map { .string($0) }) } ?? .null))
                members.append(("assumption", .string(BuildModel.assumptionText(classes: buildClasses))))
                out.write(JSONWriter.write(.object(members)))
            } else {
                out.line("\(Text.escaped(path)): restored: \(o.text)")
                out.line("  class    \(cls.map { Text.escaped($0) } ?? "(none)")\(version != 0 ? ", version \(version)" : "")")
                if let position { out.line("  decoded  \(position + 1) of \(result.order.count) (pass 2)") }
                if o.kind == "stand-in" {
                    out.line("  note     in an app this record needs a registered object, a class or a fallback; without one it is skipped (RST_SKIP_NO_FACTORY)")
                }
                out.line("  assumes  \(BuildModel.assumptionText(classes: buildClasses))")
            }
        }
        out.flush()
    }
}
