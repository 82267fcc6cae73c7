import ArgumentParser
import RestorationArchive
import RestorationCore

struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Compare two archives object by object and key by key.",
        discussion: """
            Objects are matched by path. Prints objects added (+), removed (-) and \
            re-classed (~), and for objects in both, keys added, removed or changed \
            with the old and new values (nested records by key path, "frame.x"; \
            object references by the target's path). Differences in app version, \
            system version or idiom are listed too; the save time is shown but is \
            not a difference. Exits 0 when the archives are equal, 1 when they \
            differ. Never loads a plugin or runs a factory.

            EXAMPLES
              restorectl diff before.rst after.rst
              restorectl diff --full a.rst b.rst || echo "state changed"

            \(Exit.table)
            """)

    @Argument(help: ArgumentHelp("The old archive.", valueName: "a"))
    var a: String

    @Argument(help: ArgumentHelp("The new archive.", valueName: "b"))
    var b: String

    @Flag(help: "Do not shorten long values.")
    var full = false

    func run() throws {
        let left = try LoadedArchive.load(a).document
        let right = try LoadedArchive.load(b).document
        let lines = DiffEngine(left, right, full: full).lines()
        var out = Output()
        let changes = lines.filter { !$0.hasPrefix("  note") }.count
        for l in lines { out.line(l) }
        if changes == 0 { out.line("no differences") }
        out.flush()
        if changes > 0 { throw ExitCode(Exit.differences) }
    }
}

/// The differences between two documents, as lines ("  note" lines do not count).
struct DiffEngine {
    let left: ArchiveDocument
    let right: ArchiveDocument
    let lp: [String]
    let rp: [String]
    let lr: Renderer
    let rr: Renderer

    init(_ left: ArchiveDocument, _ right: ArchiveDocument, full: Bool) {
        self.left = left
        self.right = right
        lp = left.objects.indices.map { left.path(of: $0) }
        rp = right.objects.indices.map { right.path(of: $0) }
        lr = Renderer(paths: lp, full: full)
        rr = Renderer(paths: rp, full: full)
    }

    func lines() -> [String] {
        var out: [String] = []
        let li = left.info, ri = right.info
        for (name, x, y) in [("app version", li.appVersion, ri.appVersion),
                             ("system version", li.systemVersion, ri.systemVersion),
                             ("idiom", li.idiom, ri.idiom)] where x != y {
            out.append("~ info \(name): \(Text.quoted(x)) -> \(Text.quoted(y))")
        }
        if li.savedAtMs != ri.savedAtMs {
            out.append("  note: saved at \(Text.iso8601(ms: li.savedAtMs)) -> \(Text.iso8601(ms: ri.savedAtMs)) (not counted as a difference)")
        }
        var rightIndex: [String: Int] = [:]
        for (i, p) in rp.enumerated() { rightIndex[p] = i }
        var leftIndex: [String: Int] = [:]
        for (i, p) in lp.enumerated() { leftIndex[p] = i }

        for (i, p) in lp.enumerated() where rightIndex[p] == nil {
            out.append("- \(lr.header(path: p, className: left.objects[i].className, version: left.objects[i].version))")
        }
        for (j, p) in rp.enumerated() where leftIndex[p] == nil {
            out.append("+ \(rr.header(path: p, className: right.objects[j].className, version: right.objects[j].version))")
        }
        for (i, p) in lp.enumerated() {
            guard let j = rightIndex[p] else { continue }
            let lo = left.objects[i], ro = right.objects[j]
            var objectLines: [String] = []
            if lo.className != ro.className {
                objectLines.append("    class: \(lo.className.map { Text.escaped($0) } ?? "(none)") -> \(ro.className.map { Text.escaped($0) } ?? "(none)")")
            }
            if lo.version != ro.version {
                objectLines.append("    version: \(lo.version) -> \(ro.version)")
            }
            compare(lo.entries, ro.entries, trail: "", into: &objectLines)
            if !objectLines.isEmpty {
                out.append("~ \(Text.escaped(p))")
                out += objectLines
            }
        }
        // Archive order decides the decode order of reference cycles.
        let common = lp.filter { rightIndex[$0] != nil }
        let commonRight = rp.filter { leftIndex[$0] != nil }
        if common != commonRight {
            out.append("~ archive order: the objects both archives hold are in a different order")
        }
        return out
    }

    private func compare(_ a: [ArchiveEntry], _ b: [ArchiveEntry], trail: String, into out: inout [String]) {
        var bIndex: [String: Int] = [:]
        for (k, e) in b.enumerated() { bIndex[e.key] = k }
        var aKeys = Set<String>()
        for e in a {
            aKeys.insert(e.key)
            let name = trail + Text.escaped(e.key)
            guard let k = bIndex[e.key] else {
                out.append("    - \(name): \(lr.typeAndValue(e.value))")
                continue
            }
            let f = b[k]
            if case .record(let sa) = e.value, case .record(let sb) = f.value {
                compare(sa, sb, trail: name + ".", into: &out)
            } else if !same(e.value, f.value) {
                out.append("    ~ \(name): \(lr.typeAndValue(e.value)) -> \(rr.typeAndValue(f.value))")
            }
        }
        for f in b where !aKeys.contains(f.key) {
            out.append("    + \(trail + Text.escaped(f.key)): \(rr.typeAndValue(f.value))")
        }
    }

    /// Equal values; object references compare the targets' paths, doubles their bits.
    private func same(_ x: ArchiveValue, _ y: ArchiveValue) -> Bool {
        switch (x, y) {
        case (.object(let r), .object(let s)):
            return (r < lp.count ? lp[r] : "#\(r)") == (s < rp.count ? rp[s] : "#\(s)")
        case (.objectArray(let a), .objectArray(let b)):
            return a.map { r in r < lp.count ? lp[r] : "#\(r)" } == b.map { s in s < rp.count ? rp[s] : "#\(s)" }
        case (.double(let d), .double(let e)):
            return d.bitPattern == e.bitPattern
        default:
            return x == y
        }
    }
}
