import RestorationArchive

// Unclaimed records are carried, not lost (docs/EVOLUTION.md).
//
// With `Configuration.carrySaves = N > 0`, a record a restore skipped because
// nothing could produce it (RST_SKIP_NO_FACTORY, RST_SKIP_PLUGIN_REJECTED:
// no registered object, factory or fallback — its plugin uninstalled, say)
// is kept verbatim with its descendants and written back by the next N
// successful saves, appended after the live records, under the same path,
// as long as its parent is present in that save (or it is a root) and no
// live object now holds its path. Each carried record stores its count
// left (archive header flag 2, docs/FORMAT.md), so the count survives
// relaunches; a record carried again at the next restore continues from
// there. References from and to carried records are kept when both ends
// are written (resolved by path at each save); others are left out. A
// carried record claimed again at a later restore is restored normally.
// Quarantined records are not carried.

/// One carried record: its place in its subtree and its values (object
/// references as paths, resolved at each save).
struct CarriedRecord {
    var identifier: String
    /// Index in the subtree of its parent; -1 for the subtree's root.
    var parentInSubtree: Int
    var className: String?
    var version: UInt32
    var entries: [ArchiveEntry]
}

/// A carried record with its descendants.
final class CarriedSubtree {
    /// The path of the root's parent; nil for a root record.
    let parentPath: String?
    let rootPath: String
    let records: [CarriedRecord]
    /// Paths of the records each record's references name (source record index → path).
    let referencePaths: [Int: String]
    /// Paths of the subtree's own records, in order.
    let paths: [String]
    /// Saves that will still write it (UInt32.max: always).
    var savesLeft: UInt32
    /// Written by the save in progress (counted down when it succeeds).
    var writtenInSave = false

    init(parentPath: String?, rootPath: String, records: [CarriedRecord], referencePaths: [Int: String], paths: [String], savesLeft: UInt32) {
        self.parentPath = parentPath
        self.rootPath = rootPath
        self.records = records
        self.referencePaths = referencePaths
        self.paths = paths
        self.savesLeft = savesLeft
    }
}

/// The records carried through saves: collected after a restore, appended
/// by each save after the live records, counted down when a save succeeds.
/// Owned by its engine; every method runs under the engine's lock.
final class Carry {
    private unowned let engine: Engine
    /// The subtrees carried now.
    private(set) var carried: [CarriedSubtree] = []
    /// A file save counts the carried records down only once the file is
    /// written (not when its bytes are made).
    var commitAfterWrite = false

    init(engine: Engine) { self.engine = engine }

    var isEmpty: Bool { carried.isEmpty }
    private var configuration: Engine.Configuration { engine.configuration }
    private var sensitivity: SensitivityRoom { engine.sensitivity }
    private func log(_ level: LogLevel, _ message: @autoclosure () -> String) { engine.log(level, message()) }

    /// After a restore: the subtrees to carry (replacing the previous list).
    func collect(_ run: RestorePass) {
        carried = []
        guard configuration.carrySaves > 0 else { return }
        let reader = run.sealedSource ?? run.reader   // sealed values are carried still sealed
        let n = reader.recordCount
        var subtreeOf = [Int](repeating: -1, count: n)
        var roots: [Int] = []
        var carryLeft: [UInt32] = []
        for r in 0..<n where run.session.state[r] != .materialized {
            if let p = reader.parent(ofRecord: r), subtreeOf[p] >= 0 {
                subtreeOf[r] = subtreeOf[p]
                continue
            }
            guard let note = run.notes[r], note.reason == .noFactory || note.reason == .pluginRejected else { continue }
            if let p = reader.parent(ofRecord: r), run.session.state[p] != .materialized { continue }
            // Saves left: a fresh record gets N; a carried one continues its count.
            let stored = reader.carry(ofRecord: r)
            let left: UInt32
            if configuration.carrySaves == UInt32.max || stored == UInt32.max {
                left = configuration.carrySaves == UInt32.max ? UInt32.max : min(configuration.carrySaves, UInt32.max - 1)
            } else if stored == 0 {
                left = configuration.carrySaves
            } else {
                left = min(stored - 1, configuration.carrySaves)
            }
            guard left > 0 else { continue }
            subtreeOf[r] = roots.count
            roots.append(r)
            carryLeft.append(left)
        }
        guard !roots.isEmpty else { return }
        var members = [[Int]](repeating: [], count: roots.count)
        for r in 0..<n where subtreeOf[r] >= 0 { members[subtreeOf[r]].append(r) }
        for (k, root) in roots.enumerated() {
            var local: [Int: Int] = [:]
            var records: [CarriedRecord] = []
            var refs: [Int: String] = [:]
            var paths: [String] = []
            for r in members[k] {
                local[r] = records.count
                let p = reader.parent(ofRecord: r)
                var entries = ArchiveDocument.entries(of: reader, record: r)
                if r == 0 { entries.removeAll(where: TrimmedList.isTrimmedList) }   // size budgets: that archive's list, not this record's
                Carry.collectReferences(entries) { t in if refs[t] == nil { refs[t] = reader.path(ofRecord: t) } }
                records.append(CarriedRecord(identifier: reader.name(reader.identifier(ofRecord: r)),
                                             parentInSubtree: r == root ? -1 : (p.flatMap { local[$0] } ?? -1),
                                             className: reader.className(ofRecord: r).map { reader.name($0) },
                                             version: reader.version(ofRecord: r), entries: entries))
                paths.append(reader.path(ofRecord: r))
            }
            let parentPath = reader.parent(ofRecord: root).map { reader.path(ofRecord: $0) }
            carried.append(CarriedSubtree(parentPath: parentPath, rootPath: reader.path(ofRecord: root), records: records,
                                          referencePaths: refs, paths: paths, savesLeft: carryLeft[k]))
        }
        log(.info, "carrying \(roots.count) record\(roots.count == 1 ? "" : "s") nothing could produce (with their descendants) through the next saves")
    }
}

extension Carry {
    /// Calls `body` with every record `entries` refer to (nested records included).
    static func collectReferences(_ entries: [ArchiveEntry], _ body: (Int) -> Void) {
        for e in entries {
            switch e.value {
            case .object(let r): body(r)
            case .objectArray(let a): a.forEach(body)
            case .record(let sub): collectReferences(sub, body)
            default: break
            }
        }
    }

}

extension Carry {
    /// During a save, after the live records: appends the carried subtrees
    /// that may be written now. `pathIndex` finds a live record's index.
    func append(_ w: inout ArchiveWriter, saveIndexOf: (String) -> Int?) throws(WriteFailure) {
        guard !carried.isEmpty else { return }
        // Which records are written, and where each goes. Judged record by
        // record, parents first: a record whose path a live object now holds
        // is not written (the live object's state is), and its carried
        // descendants go under that live object; a record whose parent is
        // neither written nor live is left out with its descendants.
        var newIndex: [String: Int] = [:]
        var next = w.recordCount
        var writing: [(subtree: CarriedSubtree, write: [Bool])] = []
        for s in carried {
            s.writtenInSave = false
            guard s.savesLeft > 0 else { continue }
            if let pp = s.parentPath, saveIndexOf(pp) == nil, newIndex[pp] == nil { continue }   // its parent is absent
            var write = [Bool](repeating: false, count: s.records.count)
            var any = false
            for (i, rec) in s.records.enumerated() {
                if rec.parentInSubtree >= 0 {
                    let q = rec.parentInSubtree
                    guard write[q] || saveIndexOf(s.paths[q]) != nil else { continue }   // its parent is neither written nor live
                }
                let path = s.paths[i]
                if saveIndexOf(path) != nil || newIndex[path] != nil { continue }        // a live object holds its path
                write[i] = true
                newIndex[path] = next
                next += 1
                any = true
            }
            if any { writing.append((s, write)) }
        }
        for (s, write) in writing {
            s.writtenInSave = true
            let left = s.savesLeft == UInt32.max ? UInt32.max : s.savesLeft - 1
            let carry = left == UInt32.max ? UInt32.max : left + 1
            for (i, rec) in s.records.enumerated() where write[i] {
                let parent: Int?
                if rec.parentInSubtree >= 0 {
                    let pp = s.paths[rec.parentInSubtree]
                    parent = write[rec.parentInSubtree] ? newIndex[pp] : saveIndexOf(pp)
                } else if let pp = s.parentPath {
                    parent = saveIndexOf(pp) ?? newIndex[pp]
                } else {
                    parent = nil
                }
                var id = rec.identifier
                let ident = id.withUTF8 { w.name(UnsafeRawBufferPointer($0)) }
                var cls: UInt32? = nil
                if var c = rec.className { cls = c.withUTF8 { w.name(UnsafeRawBufferPointer($0)) } }
                w.beginObject(identifier: ident, parent: parent, className: cls, version: rec.version, carry: carry)
                try Carry.write(sensitivity.filterCarried(rec.entries, className: rec.className), &w) { source in
                    guard let p = s.referencePaths[source] else { return nil }
                    return saveIndexOf(p) ?? newIndex[p]
                }
                try w.endObject()
            }
        }
    }

}

extension Carry {
    /// Writes values, mapping each reference's source record to its index
    /// in this archive (nil: its target is not written; the reference is left out).
    static func write(_ entries: [ArchiveEntry], _ w: inout ArchiveWriter, _ map: (Int) -> Int?) throws(WriteFailure) {
        try withoutActuallyEscaping(map) { map throws(WriteFailure) in
            try ValueTreeWriter(CarriedTreePolicy(map: map)).write(entries, &w)
        }
    }
}

/// Carried values were checked when they were read: only their references
/// are mapped to the records of the archive being written.
struct CarriedTreePolicy: ValueTreePolicy {
    let map: (Int) -> Int?
    func record(forReference r: Int) -> Int? { map(r) }
}

extension Carry {
    /// A save succeeded: the subtrees it wrote count one save down.
    func commit() {
        guard !carried.isEmpty else { return }
        for s in carried where s.writtenInSave {
            s.writtenInSave = false
            if s.savesLeft != UInt32.max { s.savesLeft -= 1 }
        }
        carried.removeAll { $0.savesLeft == 0 }
    }

    /// A save wrote nothing (unchanged state): no carried record was written.
    func uncommit() {
        for s in carried { s.writtenInSave = false }
    }
}

extension Engine {
    /// The paths of the records this engine carries, with their saves left
    /// (tools and tests).
    public var carriedRecords: [(path: String, savesLeft: UInt32)] {
        lock.withLock { carry.carried.flatMap { s in s.paths.map { ($0, s.savesLeft) } } }
    }
}
