import RestorationArchive
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// v1.1 §4: class versions and migration chains.
//
// A class's version (default: none set) is stored in every record of that
// class at save. At restore, after validation and before pass 1 (the
// `migrate` step of `runRestore`), a record whose stored version is below
// its class's current one runs the chain from, from+1, ... up to the current
// version; each step edits the record through the coder in `.migrating`
// mode, over an editable copy of the record (`MigrationEditor`). When some
// record was migrated, the archive is rebuilt from the edited records and
// validated again, so the result satisfies every archive limit and the
// rest of the restore reads it like any archive. A missing step, a failing
// step or a record newer than its class skips that record with its
// descendants (SkipReason.noMigration / .migrationFailed / .tooNew).

/// One migration step: edits the record (the coder is in `.migrating` mode)
/// from `fromVersion` to `fromVersion + 1`. Returns nil on success, else why
/// it failed.
public typealias Migration = (_ coder: Coder, _ fromVersion: UInt32) -> RestorationFailure?

/// An editable copy of one record, the coder's state in `.migrating` mode.
final class MigrationEditor {
    var entries: [ArchiveEntry]
    /// Indexes of the nested records entered, outermost first.
    var path: [Int] = []
    /// Copies handed out as borrowed bytes; freed when the step returns.
    var borrowed: [UnsafeMutableRawPointer] = []
    let fromVersion: UInt32

    init(entries: [ArchiveEntry], fromVersion: UInt32) {
        self.entries = entries
        self.fromVersion = fromVersion
    }

    deinit { releaseBorrowed() }

    func releaseBorrowed() {
        for p in borrowed { p.deallocate() }
        borrowed.removeAll()
    }

    /// Runs `body` on the entries of the current (innermost entered) record.
    func withLevel<R>(_ body: (inout [ArchiveEntry]) throws(RestorationFailure) -> R) throws(RestorationFailure) -> R {
        try MigrationEditor.at(&entries, path[...], body)
    }

    private static func at<R>(_ entries: inout [ArchiveEntry], _ path: ArraySlice<Int>,
                              _ body: (inout [ArchiveEntry]) throws(RestorationFailure) -> R) throws(RestorationFailure) -> R {
        guard let i = path.first else { return try body(&entries) }
        guard case .record(var sub) = entries[i].value else {
            throw RestorationFailure(.state, "the record entered was replaced by a value of another type")
        }
        entries[i].value = .bool(false)   // keep `sub` uniquely referenced while it is edited
        defer { entries[i].value = .record(sub) }
        return try at(&sub, path.dropFirst(), body)
    }

    func value(_ key: String) throws(RestorationFailure) -> ArchiveValue? {
        try withLevel { (e: inout [ArchiveEntry]) throws(RestorationFailure) -> ArchiveValue? in e.first { $0.key == key }?.value }
    }

    func borrow(_ bytes: [UInt8]) -> UnsafeRawBufferPointer {
        let p = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
        bytes.withUnsafeBytes { b in if b.count > 0 { p.copyMemory(from: b.baseAddress!, byteCount: b.count) } }
        borrowed.append(p)
        return UnsafeRawBufferPointer(start: p, count: bytes.count)
    }
}

extension Coder {
    /// The editor of the migration step running (`.migrating` mode).
    var editor: MigrationEditor { migration.unsafelyUnwrapped }

    /// A key given to a migration call, checked as encode checks keys.
    func migrationKey(_ key: KeyBytes) throws(RestorationFailure) -> String {
        let bytes = key.bytes
        try ArgumentRules.key(bytes, location: location)
        return String(decoding: bytes, as: UTF8.self)
    }

    @usableFromInline @inline(never)
    func migrationRead(_ key: KeyBytes, _ expected: ValueTag) throws(RestorationFailure) -> ArchiveValue {
        let k = String(decoding: key.bytes, as: UTF8.self)
        guard let v = try editor.value(k) else { throw missing(key) }
        let tag = ValueTag(rawValue: v.rawTag)
        if tag == expected || (expected == .boolFalse && tag == .boolTrue) { return v }
        throw mismatch(key, tag, expected)
    }

    /// Adds or replaces `key` in the current record (its place kept when replaced).
    @usableFromInline @inline(never)
    func migrationWrite(_ key: KeyBytes, _ value: ArchiveValue) throws(RestorationFailure) {
        let k = try migrationKey(key)
        let location = self.location
        try editor.withLevel { (e: inout [ArchiveEntry]) throws(RestorationFailure) in
            if let i = e.firstIndex(where: { $0.key == k }) {
                e[i].value = value
            } else {
                guard e.count < ArchiveLimits.maxValuesPerRecord else {
                    throw RestorationFailure(.limit, "\(location), key '\(k)': a record holds at most \(ArchiveLimits.maxValuesPerRecord) values (RST_MAX_VALUES_PER_RECORD)")
                }
                e.append(ArchiveEntry(key: k, value: value))
            }
        }
    }

    @usableFromInline @inline(never)
    func migrationBeginRecord(_ key: KeyBytes, create: Bool) throws(RestorationFailure) {
        guard editor.path.count < RestorationLimits.maxRecordDepth else {
            throw RestorationFailure(.limit, "\(location): records nest at most \(RestorationLimits.maxRecordDepth) deep")
        }
        if create {
            try migrationWrite(key, .record([]))
        } else {
            _ = try migrationRead(key, .record)
        }
        let k = String(decoding: key.bytes, as: UTF8.self)
        let i = try editor.withLevel { (e: inout [ArchiveEntry]) throws(RestorationFailure) -> Int in e.firstIndex { $0.key == k } ?? 0 }
        editor.path.append(i)
    }

    @usableFromInline @inline(never)
    func migrationEndRecord() throws(RestorationFailure) {
        guard !editor.path.isEmpty else {
            throw RestorationFailure(.state, "\(location) is at its top level (no record was begun)")
        }
        editor.path.removeLast()
    }

    /// Removes `key` from the record (a migration only).
    /// - Throws: `.notFound` for a missing key; `.state` outside a migration.
    public func remove(_ key: KeyBytes) throws(RestorationFailure) {
        guard mode == .migrating else { throw notMigrating("remove") }
        let k = String(decoding: key.bytes, as: UTF8.self)
        let location = self.location
        try editor.withLevel { (e: inout [ArchiveEntry]) throws(RestorationFailure) in
            guard let i = e.firstIndex(where: { $0.key == k }) else {
                throw RestorationFailure(.notFound, "\(location) has no key '\(k)' to remove")
            }
            e.remove(at: i)
        }
    }

    /// Renames `from` to `to`, keeping the value and its place (a migration only).
    /// - Throws: `.notFound` when `from` is missing; `.duplicate` when `to`
    ///   is taken; `.invalid` for a bad key; `.state` outside a migration.
    public func rename(_ from: KeyBytes, to: KeyBytes) throws(RestorationFailure) {
        guard mode == .migrating else { throw notMigrating("rename") }
        let f = String(decoding: from.bytes, as: UTF8.self)
        let t = try migrationKey(to)
        let location = self.location
        try editor.withLevel { (e: inout [ArchiveEntry]) throws(RestorationFailure) in
            guard let i = e.firstIndex(where: { $0.key == f }) else {
                throw RestorationFailure(.notFound, "\(location) has no key '\(f)' to rename")
            }
            if f == t { return }
            if e.contains(where: { $0.key == t }) {
                throw RestorationFailure(.duplicate, "\(location) already has a value for key '\(t)'")
            }
            e[i].key = t
        }
    }

    func notMigrating(_ what: String) -> RestorationFailure {
        RestorationFailure(.state, "\(what) edits a record only inside a migration (rst_register_migration); archives written by a save are append-only")
    }

    /// The class version of the values this coder reads or writes: in a
    /// migration, the version the step migrates from; in decode and
    /// factories, the record's version (after migration: its class's
    /// current version); in encode, the class's current version.
    public var classVersion: UInt32 {
        get throws(RestorationFailure) {
            switch mode {
            case .idle: throw stateFailure(encode: false)
            case .migrating: return editor.fromVersion
            case .encoding: return node.map { engine.classVersion(ofNode: $0) } ?? 0
            case .decoding, .factory: return reader?.version(ofRecord: record) ?? 0
            }
        }
    }

    // MARK: reads of the record being migrated

    @usableFromInline @inline(never)
    func migratingContains(_ key: KeyBytes) -> Bool {
        (try? editor.value(String(decoding: key.bytes, as: UTF8.self))) != nil
    }

    @usableFromInline @inline(never)
    func migratingValueType(_ key: KeyBytes) throws(RestorationFailure) -> ValueTag?? {
        guard let v = try editor.value(String(decoding: key.bytes, as: UTF8.self)) else { return nil }
        return .some(ValueTag(rawValue: v.rawTag))
    }

    @usableFromInline @inline(never)
    func migratingBytes(_ key: KeyBytes, _ tag: ValueTag) throws(RestorationFailure) -> UnsafeRawBufferPointer {
        switch try migrationRead(key, tag) {
        case .string(let s): return editor.borrow(Array(s.utf8))
        case .bytes(let b): return editor.borrow(b)
        default: return editor.borrow([])
        }
    }

    @usableFromInline @inline(never)
    func migratingIntArray(_ key: KeyBytes) throws(RestorationFailure) -> [Int64] {
        guard case .intArray(let a) = try migrationRead(key, .intArray) else { return [] }
        return a
    }

    @usableFromInline @inline(never)
    func migratingStringArray(_ key: KeyBytes) throws(RestorationFailure) -> [String] {
        guard case .stringArray(let a) = try migrationRead(key, .stringArray) else { return [] }
        return a
    }
}

extension Engine {
    /// The current version of a node's class (0 when none is set).
    func classVersion(ofNode n: ObjectNode) -> UInt32 {
        guard let c = n.className else { return 0 }
        return classVersions[c] ?? 0
    }

    /// Sets the version of every object of `className` (registered or made
    /// by a factory, host or plugin). Each record stores it at save.
    public func setClassVersion(_ className: String, _ version: UInt32) throws(RestorationFailure) {
        try ArgumentRules.className(className)
        lock.withLock { classVersions[className] = version }
    }

    /// The version set for `className`, nil when none is.
    public func classVersion(_ className: String) -> UInt32? {
        lock.withLock { classVersions[className] }
    }

    /// Registers the step that migrates records of `className` from
    /// `fromVersion` to `fromVersion + 1`.
    /// - Throws: `.duplicate` when that step is registered already;
    ///   `.invalid`/`.limit` for a bad class name; `.invalid` for
    ///   `fromVersion == UInt32.max` (no version follows it).
    public func registerMigration(_ className: String, from fromVersion: UInt32, _ step: @escaping Migration) throws(RestorationFailure) {
        try ArgumentRules.className(className)
        guard fromVersion < UInt32.max else {
            throw RestorationFailure(.invalid, "a migration from version \(fromVersion) of class '\(className)' has no version to migrate to")
        }
        try lock.withLock { () throws(RestorationFailure) in
            if migrations[className]?[fromVersion] != nil {
                throw RestorationFailure(.duplicate, "class '\(className)' already has a migration from version \(fromVersion)")
            }
            migrations[className, default: [:]][fromVersion] = step
        }
    }

    /// The `migrate` step of a restore (after `shouldRestore`, before pass 1):
    /// loads the plugins the archive's classes need (so that migrations
    /// their `init` registers apply), runs every needed migration chain and,
    /// when a record changed, returns the rebuilt, revalidated archive.
    /// Returns the records to skip, with their reasons.
    func migrate(_ reader: ArchiveReader, quarantined: Int? = nil) throws(RestorationFailure) -> (ArchiveReader, [Int: SkipNote]) {
        let n = reader.recordCount
        // Class names of the archive, once each.
        var nameOf: [UInt32: String] = [:]
        func name(_ i: UInt32) -> String {
            if let s = nameOf[i] { return s }
            let s = reader.name(i)
            nameOf[i] = s
            return s
        }
        if let provider = classProvider {
            var asked = Set<UInt32>()
            for r in 0..<n {
                guard let ci = reader.className(ofRecord: r), asked.insert(ci).inserted else { continue }
                let cls = name(ci)
                if !hasHostClass(cls) { _ = provider.factory(forClass: cls) }
            }
        }
        if classVersions.isEmpty { return (reader, [:]) }

        var notes: [Int: SkipNote] = [:]
        var dead = [Bool](repeating: false, count: n)
        var todo: [(record: Int, from: UInt32, to: UInt32, steps: [Migration])] = []
        for r in 0..<n {
            if let p = reader.parent(ofRecord: r), dead[p] { dead[r] = true; continue }
            if r == quarantined { dead[r] = true; continue }   // §6: its note comes from the restore
            guard let ci = reader.className(ofRecord: r) else { continue }
            let cls = name(ci)
            guard let current = classVersions[cls] else { continue }
            let stored = reader.version(ofRecord: r)
            if stored > current {
                dead[r] = true
                notes[r] = SkipNote(reason: .tooNew, detail: "it was saved by version \(stored) of class '\(cls)', newer than this program's version \(current)")
                continue
            }
            if stored == current { continue }
            var steps: [Migration] = []
            var v = stored
            let table = migrations[cls] ?? [:]
            while v < current {
                guard let step = table[v] else { break }
                steps.append(step)
                v += 1
            }
            if v < current {
                dead[r] = true
                notes[r] = SkipNote(reason: .noMigration, detail: "class '\(cls)' has no migration from version \(v) (the record is version \(stored), the class \(current))")
                continue
            }
            todo.append((r, stored, current, steps))
        }
        if todo.isEmpty { return (reader, notes) }

        var doc = ArchiveDocument(reader: reader)
        let coder = theCoder
        for job in todo {
            let r = job.record
            if let p = reader.parent(ofRecord: r), dead[p] { dead[r] = true; continue }
            var entries = doc.objects[r].entries
            var failure: (UInt32, RestorationFailure)? = nil
            for (k, step) in job.steps.enumerated() {
                let from = job.from + UInt32(k)
                let editor = MigrationEditor(entries: entries, fromVersion: from)
                coder.beginMigrating(record: r, editor: editor)
                watchEnter(r)
                let f = step(coder, from)
                watchLeave()
                let reported = coder.takeCallbackFailure()
                coder.endMigrating()
                if let f = reported ?? f {
                    failure = (from, f)
                    break
                }
                entries = editor.entries
            }
            if failure == nil, let problem = MigrationLimits.check(entries, depth: 0) {
                failure = (job.to - 1, RestorationFailure(.limit, problem))
            }
            let cls = reader.className(ofRecord: r).map(name) ?? ""
            if let (from, f) = failure {
                dead[r] = true
                notes[r] = SkipNote(reason: .migrationFailed, detail: "the migration of class '\(cls)' from version \(from) failed (\(f.status.cName)): \(f.message)")
                log(.warning, "record \(r) ('\(reader.path(ofRecord: r))'): the migration of class '\(cls)' from version \(from) failed (\(f.status.cName)): \(f.message); skipped with its descendants")
                continue
            }
            doc.objects[r].entries = entries
            doc.objects[r].version = job.to
        }
        let bytes: [UInt8]
        do {
            bytes = try doc.encode()
        } catch {
            switch error {
            case .limit(let m): throw RestorationFailure(.limit, "after migrations the archive exceeds a limit: \(m)")
            case .duplicateKey, .state: throw RestorationFailure(.state, "after migrations the archive cannot be written: \(error)")
            }
        }
        let migrated = try bytes.withUnsafeBytes { b in
            Result { () throws(RestorationFailure) in try Engine.validate(b, source: "the migrated archive") }
        }.get()
        return (migrated, notes)
    }
}

/// The per-record limits a migration's result must satisfy (the archive's
/// own limits are checked when it is rebuilt).
enum MigrationLimits {
    static func check(_ entries: [ArchiveEntry], depth: Int) -> String? {
        if entries.count > ArchiveLimits.maxValuesPerRecord {
            return "the migrated record holds \(entries.count) values, more than \(ArchiveLimits.maxValuesPerRecord) (RST_MAX_VALUES_PER_RECORD)"
        }
        if depth > ArchiveLimits.maxRecordDepth {
            return "the migrated record nests records more than \(ArchiveLimits.maxRecordDepth) deep (RST_MAX_RECORD_DEPTH)"
        }
        for e in entries {
            if case .record(let sub) = e.value, let p = check(sub, depth: depth + 1) { return p }
        }
        return nil
    }
}
