import ArgumentParser
import Foundation
import RestorationArchive
import RestorationCore

struct Graph: ParsableCommand {
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case dot, svg
    }

    static let configuration = CommandConfiguration(
        commandName: "graph",
        abstract: "Draw the object tree and the reference edges with Graphviz.",
        discussion: """
            Prints the archive as a Graphviz digraph: one box per object (its \
            place in the decode order, its identifier and class), solid edges \
            from a parent to its children, dashed edges from an object to the \
            objects it references (labelled with the key). The decode order is \
            the engine's (dependencies first; reference cycles in archive order), \
            so a person can look at it instead of reading it. --format svg pipes \
            the graph through Graphviz's 'dot -Tsvg' when 'dot' is on PATH, and \
            exits 7 with a clear message when it is not. Never loads a plugin or \
            runs a factory.

            EXAMPLES
              restorectl graph state.rst > state.dot
              restorectl graph --format svg state.rst > state.svg

            \(Exit.table)
            """)

    @OptionGroup var input: ArchiveArgument

    @Option(help: "dot (Graphviz source) or svg (rendered by the 'dot' program).")
    var format: Format = .dot

    func run() throws {
        let a = try LoadedArchive.load(input.archive)
        // Look for dot first: no point building a graph nobody can render.
        var dotPath: String? = nil
        if format == .svg {
            guard let p = Graph.findOnPath("dot") else {
                throw CtlFailure(Exit.io, "graphviz 'dot' is not installed; use --format dot")
            }
            dotPath = p
        }
        let text = Graph.dot(a)
        guard let dotPath else {
            var out = Output()
            out.write(text)
            out.flush()
            return
        }
        try Graph.render(text, with: dotPath)
    }

    static func findOnPath(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for dir in path.split(separator: ":") where !dir.isEmpty {
            let candidate = "\(dir)/\(name)"
            if access(candidate, X_OK) == 0, !FileRules.isDirectory(candidate) { return candidate }
        }
        return nil
    }

    static func render(_ text: String, with dot: String) throws {
        fflush(stdout)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: dot)
        p.arguments = ["-Tsvg"]
        let pipe = Pipe()
        p.standardInput = pipe
        do {
            try p.run()
        } catch {
            throw CtlFailure(Exit.io, "cannot run graphviz \(Text.quotedPath(dot)): \(error.localizedDescription)")
        }
        pipe.fileHandleForWriting.write(Data(text.utf8))
        try? pipe.fileHandleForWriting.close()
        p.waitUntilExit()
        if p.terminationStatus != 0 {
            throw CtlFailure(Exit.failure, "graphviz \(Text.quotedPath(dot)) -Tsvg failed (exit status \(p.terminationStatus))")
        }
    }

    /// A DOT string literal showing `s` as Text.escaped shows it.
    static func dotString(_ s: String) -> String {
        var out = "\""
        for c in Text.escaped(s).unicodeScalars {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            default: out.unicodeScalars.append(c)
            }
        }
        return out + "\""
    }

    static func dot(_ a: LoadedArchive) -> String {
        let reader = a.reader
        let doc = a.document
        let n = doc.objects.count
        let order = Planner.decodeOrder(count: n, included: { _ in true },
                                        parent: { reader.parent(ofRecord: $0) },
                                        references: { reader.references(ofRecord: $0) },
                                        referencesOnlyBackward: !reader.hasForwardReferences)
        var position = [Int](repeating: 0, count: n)
        for (k, r) in order.enumerated() { position[Int(r)] = k + 1 }

        var out = "digraph restoration {\n"
        out += "  // archive \(Text.escaped(a.file)): \(n) objects\n"
        out += "  // solid: parent -> child; dashed: object -> the object it references (key);\n"
        out += "  // each label starts with the object's place in the decode order\n"
        out += "  graph [rankdir=TB, fontname=\"Helvetica\", label=\(dotString("decode order: dependencies first; cycles in archive order")), labelloc=b];\n"
        out += "  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n"
        out += "  edge [fontname=\"Helvetica\", fontsize=10];\n"
        for (i, o) in doc.objects.enumerated() {
            // Two lines: "3. Detail" and the class; each escaped once.
            let first = dotString("\(position[i]). \(o.identifier)")
            let second = o.className.map { dotString($0) } ?? "\"(no class)\""
            let literal = first.dropLast() + "\\n" + second.dropFirst()
            out += "  r\(i) [label=\(literal), tooltip=\(dotString(doc.path(of: i)))];\n"
        }
        for (i, o) in doc.objects.enumerated() {
            if let p = o.parent { out += "  r\(p) -> r\(i);\n" }
        }
        for (i, o) in doc.objects.enumerated() {
            for (key, target) in references(o.entries, trail: "") {
                out += "  r\(i) -> r\(target) [style=dashed, label=\(dotString(key)), constraint=false];\n"
            }
        }
        out += "}\n"
        return out
    }

    /// (key path, target record) of every object reference, nested records included.
    static func references(_ entries: [ArchiveEntry], trail: String) -> [(String, Int)] {
        var out: [(String, Int)] = []
        for e in entries {
            switch e.value {
            case .object(let r): out.append((trail + e.key, r))
            case .objectArray(let a):
                for (n, r) in a.enumerated() { out.append((trail + e.key + "[\(n)]", r)) }
            case .record(let sub): out += references(sub, trail: trail + e.key + ".")
            default: break
            }
        }
        return out
    }
}
