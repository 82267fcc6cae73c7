// restore and why for a given build (--classes, --plugins): what that
// build would restore and skip, instead of giving every record an owner.

import RestorationArchive
import RestorationCore

/// What the answer of `restore` and `why` assumes about the app's build.
enum BuildModel {
    /// One sentence: what was assumed and how to ask for a given build.
    static func assumptionText(classes: [String]?) -> String {
        if classes != nil {
            return "the build registers the classes of --classes, the plugins of --plugins (if given), and its own object at the path of every record without a class (under records without a class); any other record is skipped as that build would skip it, unless the build registers an object at its path itself"
        }
        return "this answer assumes every record has an owner: a record no plugin provides gets a stand-in, as if the app registered an object, a class or a fallback for it; to ask what a given build restores and skips, pass --classes A,B,... (the classes it registers) and --plugins DIR"
    }

    static func assumption(classes: [String]?) -> [String] {
        ["  assumes         " + assumptionText(classes: classes)]
    }
}

extension HeadlessRestore {
    /// The build --classes describes: its classes as host classes (a host
    /// class hides a plugin class of the same name, as in the app), and its
    /// own objects registered before the restore, as a host does: every
    /// record without a class whose ancestors have no class either.
    func modelBuild(_ classes: [String]) {
        let trace = self.trace, paths = self.paths
        for name in classes {
            try? engine.registerClass(name) { request in
                let standIn = StandIn(trace: trace, record: request.record, paths: paths)
                guard let node = try? request.engine.register(identifier: request.identifier, parent: request.parent,
                                                              className: request.className, behavior: standIn) else {
                    return nil
                }
                trace.outcome[request.record] = .buildClass(name)
                return node
            }
        }
        var nodes: [Int: ObjectNode] = [:]
        for r in 0..<reader.recordCount where reader.className(ofRecord: r) == nil {
            let parent = reader.parent(ofRecord: r)
            if let parent, nodes[parent] == nil { continue }   // under a record with a class
            let standIn = StandIn(trace: trace, record: r, paths: paths)
            guard let node = try? engine.register(identifier: reader.name(reader.identifier(ofRecord: r)),
                                                  parent: parent.flatMap { nodes[$0] }, className: nil, behavior: standIn) else { continue }
            nodes[r] = node
            trace.outcome[r] = .buildObject
        }
    }

    /// Checks and splits --classes: comma-separated class names (spaces
    /// around a name ignored; empty names are an error).
    static func parseClasses(_ list: String?) throws(CtlFailure) -> [String]? {
        guard let list else { return nil }
        var out: [String] = []
        for (i, part) in list.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
            let name = String(part.drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
            if name.isEmpty { throw CtlFailure(Exit.usage, "--classes: name \(i + 1) of \(Text.quoted(list)) is empty (expected comma-separated class names)") }
            do throws(RestorationFailure) { try ArgumentRules.className(name) } catch {
                throw CtlFailure(Exit.usage, "--classes: \(Text.quoted(name)): \(error.message)")
            }
            if !out.contains(name) { out.append(name) }
        }
        return out
    }
}
