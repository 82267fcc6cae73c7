import RestorationArchive

// v1.1 §5: unclaimed records are carried, not lost.
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
// Quarantined records (§6) are not carried.

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

extension Engine {
    /// After a restore: the subtrees to carry (replacing the previous list).
    func collectCarried(_ run: RestoreRun) {
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
                if r == 0 { entries.removeAll(where: Engine.isTrimmedList) }   // size budgets: that archive's list, not this record's
                Engine.collectReferences(entries) { t in if refs[t] == nil { refs[t] = reader.path(ofRecord: t) } }
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

    /// During a save, after the live records: appends the carried subtrees
    /// that may be written now. `pathIndex` finds a live record's index.
    func appendCarried(_ w: inout ArchiveWriter, saveIndexOf: (String) -> Int?) throws(WriteFailure) {
        guard !carried.isEmpty else { return }
        // Which subtrees are written, and where each record goes.
        var newIndex: [String: Int] = [:]
        var next = w.recordCount
        var writing: [CarriedSubtree] = []
        for s in carried {
            s.writtenInSave = false
            guard s.savesLeft > 0 else { continue }
            if let pp = s.parentPath, saveIndexOf(pp) == nil, newIndex[pp] == nil { continue }   // its parent is absent
            if saveIndexOf(s.rootPath) != nil || newIndex[s.rootPath] != nil { continue }           // a live object holds its path
            for p in s.paths {
                newIndex[p] = next
                next += 1
            }
            writing.append(s)
        }
        for s in writing {
            s.writtenInSave = true
            let left = s.savesLeft == UInt32.max ? UInt32.max : s.savesLeft - 1
            let carry = left == UInt32.max ? UInt32.max : left + 1
            let base = newIndex[s.paths[0]]!
            for (i, rec) in s.records.enumerated() {
                let parent: Int?
                if rec.parentInSubtree >= 0 {
                    parent = base + rec.parentInSubtree
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
                _ = i
                try Engine.write(sensitivity.filterCarried(rec.entries, className: rec.className), &w) { source in
                    guard let p = s.referencePaths[source] else { return nil }
                    return saveIndexOf(p) ?? newIndex[p]
                }
                try w.endObject()
            }
        }
    }

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

extension Engine {
    /// A save succeeded: the subtrees it wrote count one save down.
    func commitCarried() {
        guard !carried.isEmpty else { return }
        for s in carried where s.writtenInSave {
            s.writtenInSave = false
            if s.savesLeft != UInt32.max { s.savesLeft -= 1 }
        }
        carried.removeAll { $0.savesLeft == 0 }
    }

    /// A save wrote nothing (unchanged state): no carried record was written.
    func uncommitCarried() {
        for s in carried { s.writtenInSave = false }
    }

    /// The paths of the records this engine carries, with their saves left
    /// (tools and tests).
    public var carriedRecords: [(path: String, savesLeft: UInt32)] {
        lock.withLock { carried.flatMap { s in s.paths.map { ($0, s.savesLeft) } } }
    }
}
