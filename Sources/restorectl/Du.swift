import ArgumentParser
import RestorationArchive
import RestorationCore
import RestorationPlugins

/// `restorectl du`: where an archive's bytes go, like du(1) or ncdu — the
/// object tree by subtree size, or the bytes per class (docs/BUDGETS.md).
struct Du: ParsableCommand {
    enum By: String, ExpressibleByArgument, CaseIterable {
        case `class`
    }

    static let configuration = CommandConfiguration(
        commandName: "du",
        abstract: "Show where an archive's bytes go: the object tree by size, or per class.",
        discussion: """
            Measures every record of the archive exactly as a save does (see \
            rst_last_save_sizes): its own bytes (its header and values) and its \
            subtree's (own plus every descendant's). The roots' subtrees plus the \
            header and string tables are the file's size. The tree is printed \
            largest first at every level, each line with the subtree's size \
            (B, KiB, MiB), its share of the archive and its path; --depth N stops \
            at depth N (a root is depth 0; deeper records still count in their \
            ancestors' sizes). --by class sums the own bytes of the records of \
            each class instead; with --plugins DIR, each class names the plugin \
            that provides it, and the bytes are also summed per plugin. Subtrees \
            the save left out to fit its size budget (RST_BUDGET_TRIM) are listed \
            at the end with the budget. Never runs a factory: --plugins loads the \
            plugins as 'restorectl plugins' does, only to read which classes each provides.

            JSON (--json), stable: {"archive", "bytes", "overhead_bytes", \
            "records", "budget" (null without trimmed subtrees), "trimmed": \
            [{"path", "class"}], then either "tree": [{"path", "identifier", \
            "parent" (its path; null for a root), "depth", "class" (null when \
            none), "own_bytes", "subtree_bytes", "percent"}] — a flat list in \
            the order of the text (depth first, children largest first, down to \
            --depth) — or with --by class "classes": [{"class", "plugin" (null \
            when none), "records", "own_bytes", "percent"}] and "plugins": \
            [{"plugin", "records", "own_bytes", "percent"}]}. "percent" is of \
            "bytes", with one decimal.

            EXAMPLES
              restorectl du state.rst
              restorectl du --depth 1 state.rst
              restorectl du --by class --plugins ./plugins state.rst
              restorectl du --json state.rst | jq '.tree[0].subtree_bytes'

            \(Exit.table)
            """)

    @OptionGroup var input: ArchiveArgument

    @Option(help: ArgumentHelp("Show records down to this depth (a root is 0).", valueName: "n"))
    var depth: Int?

    @Option(help: ArgumentHelp("Sum the bytes per class instead of showing the tree.", valueName: "class"))
    var by: By?

    @Option(help: ArgumentHelp("With --by class: name the plugin of this directory that provides each class.", valueName: "dir"))
    var plugins: String?

    @Flag(help: "Print JSON (the format above).")
    var json = false

    func validate() throws {
        if let depth, depth < 0 { throw ValidationError("--depth must be 0 or more") }
        if plugins != nil && by == nil { throw ValidationError("--plugins needs --by class") }
    }

    func run() throws {
        let a = try LoadedArchive.load(input.archive)
        let reader = a.reader
        let sizes = RecordSizes(reader: reader)
        let trimmed = TrimmedList(reader: reader)
        let n = reader.recordCount
        let total = sizes.total
        func percent(_ b: UInt64) -> String {
            total == 0 ? "0.0" : Du.oneDecimal(Double(b) * 100 / Double(total))
        }
        var paths = [String](repeating: "", count: n)
        var children = [[Int]](repeating: [], count: n)
        var roots: [Int] = []
        for r in 0..<n {
            let id = reader.name(reader.identifier(ofRecord: r))
            if let p = reader.parent(ofRecord: r) {
                paths[r] = paths[p] + "/" + id
                children[p].append(r)
            } else {
                paths[r] = id
                roots.append(r)
            }
        }
        func largestFirst(_ rs: [Int]) -> [Int] {
            rs.sorted { sizes.subtree[$0] != sizes.subtree[$1] ? sizes.subtree[$0] > sizes.subtree[$1] : $0 < $1 }
        }
        func className(_ r: Int) -> String? { reader.className(ofRecord: r).map { reader.name($0) } }
        let trimmedJSON: JSON = .array((trimmed?.entries ?? []).map {
            .object([("path", .string($0.path)), ("class", $0.className.isEmpty ? .null : .string($0.className))])
        })
        var out = Output()
        let header = "\(Text.quotedPath(a.file)): \(total) bytes (\(Du.human(total))), \(n) record\(n == 1 ? "" : "s"); header and string tables \(Du.human(sizes.overhead)) (\(percent(sizes.overhead))%)"

        if by == .class {
            let providers = try plugins.map(Du.pluginClasses) ?? [:]
            var perClass: [String?: (records: Int, bytes: UInt64)] = [:]
            var classOrder: [String?] = []
            for r in 0..<n {
                let c = className(r)
                if perClass[c] == nil { classOrder.append(c); perClass[c] = (0, 0) }
                perClass[c]!.records += 1
                perClass[c]!.bytes += sizes.own[r]
            }
            classOrder.sort { perClass[$0]!.bytes != perClass[$1]!.bytes ? perClass[$0]!.bytes > perClass[$1]!.bytes : ($0 ?? "") < ($1 ?? "") }
            var perPlugin: [String: (records: Int, bytes: UInt64)] = [:]
            for c in classOrder {
                guard let c, let p = providers[c] else { continue }
                perPlugin[p, default: (0, 0)].records += perClass[c]!.records
                perPlugin[p, default: (0, 0)].bytes += perClass[c]!.bytes
            }
            let pluginOrder = perPlugin.keys.sorted { perPlugin[$0]!.bytes != perPlugin[$1]!.bytes ? perPlugin[$0]!.bytes > perPlugin[$1]!.bytes : $0 < $1 }
            if json {
                out.write(JSONWriter.write(.object(Du.common(a, sizes, n, trimmed, trimmedJSON) + [
                    ("classes", .array(classOrder.map { c in
                        let v = perClass[c]!
                        return .object([("class", c.map { .string($0) } ?? .null),
                                        ("plugin", c.flatMap { providers[$0] }.map { .string($0) } ?? .null),
                                        ("records", .int(Int64(v.records))), ("own_bytes", .number(String(v.bytes))),
                                        ("percent", .number(percent(v.bytes)))])
                    })),
                    ("plugins", .array(pluginOrder.map { p in
                        let v = perPlugin[p]!
                        return .object([("plugin", .string(p)), ("records", .int(Int64(v.records))),
                                        ("own_bytes", .number(String(v.bytes))), ("percent", .number(percent(v.bytes)))])
                    })),
                ])))
                out.line()
            } else {
                out.line(header)
                out.line()
                out.line(Du.row("SIZE", "%", "RECORDS", plugins == nil ? "CLASS" : "CLASS (PLUGIN)"))
                for c in classOrder {
                    let v = perClass[c]!
                    var name = c.map { Text.escaped($0) } ?? "(no class)"
                    if plugins != nil { name += " (\(c.flatMap { providers[$0] }.map { Text.escaped($0) } ?? "no plugin"))" }
                    out.line(Du.row(Du.human(v.bytes), percent(v.bytes) + "%", String(v.records), name))
                }
                if plugins != nil {
                    out.line()
                    out.line(Du.row("SIZE", "%", "RECORDS", "PLUGIN"))
                    for p in pluginOrder {
                        let v = perPlugin[p]!
                        out.line(Du.row(Du.human(v.bytes), percent(v.bytes) + "%", String(v.records), Text.escaped(p)))
                    }
                    if pluginOrder.isEmpty { out.line("  (no class of this archive comes from a plugin)") }
                }
                Du.printTrimmed(trimmed, &out)
            }
            out.flush()
            return
        }

        // The display order: depth first, children largest first. Iterative
        // (and the JSON flat): archives may be 65,536 levels deep.
        let maxDepth = depth ?? Int.max
        var shown: [(record: Int, depth: Int)] = []
        var stack: [(Int, Int)] = largestFirst(roots).reversed().map { ($0, 0) }
        while let (r, d) = stack.popLast() {
            shown.append((r, d))
            if d < maxDepth { stack += largestFirst(children[r]).reversed().map { ($0, d + 1) } }
        }
        if json {
            out.write(JSONWriter.write(.object(Du.common(a, sizes, n, trimmed, trimmedJSON) + [
                ("tree", .array(shown.map { (r, d) in
                    .object([("path", .string(paths[r])), ("identifier", .string(reader.name(reader.identifier(ofRecord: r)))),
                             ("parent", reader.parent(ofRecord: r).map { .string(paths[$0]) } ?? .null),
                             ("depth", .int(Int64(d))), ("class", className(r).map { .string($0) } ?? .null),
                             ("own_bytes", .number(String(sizes.own[r]))), ("subtree_bytes", .number(String(sizes.subtree[r]))),
                             ("percent", .number(percent(sizes.subtree[r])))])
                })),
            ])))
            out.line()
        } else {
            out.line(header)
            out.line()
            out.line(Du.row("SIZE", "%", "OWN", "PATH"))
            for (r, d) in shown {
                var name = String(repeating: "  ", count: min(d, 40)) + Text.escaped(paths[r])
                if let c = className(r) { name += "  (\(Text.escaped(c)))" }
                out.line(Du.row(Du.human(sizes.subtree[r]), percent(sizes.subtree[r]) + "%", Du.human(sizes.own[r]), name))
            }
            Du.printTrimmed(trimmed, &out)
        }
        out.flush()
    }

    static func common(_ a: LoadedArchive, _ sizes: RecordSizes, _ n: Int, _ trimmed: TrimmedList?, _ trimmedJSON: JSON) -> [(String, JSON)] {
        [("archive", .string(a.file)), ("bytes", .number(String(sizes.total))),
         ("overhead_bytes", .number(String(sizes.overhead))), ("records", .int(Int64(n))),
         ("budget", trimmed.map { .number(String($0.budget)) } ?? .null), ("trimmed", trimmedJSON)]
    }

    static func printTrimmed(_ trimmed: TrimmedList?, _ out: inout Output) {
        guard let t = trimmed, !t.entries.isEmpty else { return }
        out.line()
        out.line("left out by the save's size budget of \(t.budget) bytes (\(human(t.budget))), with their descendants:")
        for e in t.entries {
            out.line("  " + Text.escaped(e.path) + (e.className.isEmpty ? "" : "  (\(Text.escaped(e.className)))"))
        }
    }

    static func row(_ size: String, _ pct: String, _ third: String, _ name: String) -> String {
        func pad(_ s: String, _ w: Int) -> String { s.count >= w ? s : String(repeating: " ", count: w - s.count) + s }
        return pad(size, 10) + " " + pad(pct, 6) + " " + pad(third, 10) + "  " + name
    }

    /// "512 B", "1.5 KiB", "12.0 MiB".
    static func human(_ b: UInt64) -> String {
        if b < 1024 { return "\(b) B" }
        let units = ["KiB", "MiB", "GiB"]
        var v = Double(b) / 1024
        var i = 0
        while v >= 1024 && i < units.count - 1 { v /= 1024; i += 1 }
        return oneDecimal(v) + " " + units[i]
    }

    static func oneDecimal(_ v: Double) -> String {
        let tenths = Int((v * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// Class name → the name of the plugin (its file name when it has no
    /// manifest name) that provides it, from the manifests of `dir`.
    static func pluginClasses(_ dir: String) throws -> [String: String] {
        let files = try Plugins.load(dir).files
        var map: [String: String] = [:]
        for f in files {
            let name = f.name.isEmpty ? String(f.path.split(separator: "/").last ?? "") : f.name
            for c in f.classes where map[c.className] == nil { map[c.className] = name }
        }
        return map
    }
}
