import RestorationArchive
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Class versions and migration chains (docs/EVOLUTION.md).
//
// A class's version (default: none set) is stored in every record of that
// class at save. At restore, after validation and before pass 1 (the
// `migrate` step of `runRestore`), a record whose stored version is below
// its class's current one runs the chain from, from+1, ... up to the current
// version; each step edits the record through the coder in `.migrating`
// mode (`MigrationEditor`): the record's fields as an array whose values
// stay the archive's bytes until a step replaces them (`ArchiveRewriter`).
// When some record was migrated, the archive is rebuilt — every other
// record copied byte for byte, new keys appended to the key table — and
// its reader derived from the original's (valid by construction: the
// original was validated and every edit checked; debug builds validate it
// again and compare), so the rest of the restore reads it like any archive. A missing step, a failing
// step or a record newer than its class skips that record with its
// descendants (SkipReason.noMigration / .migrationFailed / .tooNew).

/// One migration step: edits the record (the coder is in `.migrating` mode)
/// from `fromVersion` to `fromVersion + 1`. Returns nil on success, else why
/// it failed.
public typealias Migration = (_ coder: Coder, _ fromVersion: UInt32) -> RestorationFailure?

/// The record a migration step edits, the coder's state in `.migrating`
/// mode: its fields as the rewriter gives them (the archive's bytes until a
/// step replaces a value), keys as indexes of the rewriter's key table. One
/// editor serves every record of a restore (its arrays keep their capacity).
final class MigrationEditor {
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    var edit = RecordEdit()
    /// The levels of the nested records entered, outermost first.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    var path: [Int] = []
    /// Copies handed out as borrowed bytes; freed when the step returns.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    var borrowed: [UnsafeMutableRawPointer] = []
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    var fromVersion: UInt32 = 0
    // The editor lives inside `Engine.migrate`, which holds the rewriter.
    unowned(unsafe) let rewriter: ArchiveRewriter

    init(rewriter: ArchiveRewriter) {
        self.rewriter = rewriter
    }

    deinit {
        releaseBorrowed()
        keyCache.deallocate()
    }

    func releaseBorrowed() {
        for p in borrowed { p.deallocate() }
        borrowed.removeAll()
    }

    /// Starts on record r: its fields as they stand.
    func begin(record r: Int) {
        rewriter.begin(record: r, &edit)
        path.removeAll(keepingCapacity: true)
    }

    /// The level being edited (the record's own fields, or a nested record entered).
    var level: Int { path.last ?? 0 }

    /// The index of `key` in the current level, nil when it has none.
    func find(_ key: KeyBytes) -> Int? {
        guard let k = keyIndex(key) else { return nil }
        return find(k)
    }

    /// Key lookups by the address of a C key (hosts pass literals), each
    /// confirmed by comparing the bytes: (address, table index).
    private let keyCache: UnsafeMutablePointer<(UnsafeRawPointer?, UInt32)> = {
        let p = UnsafeMutablePointer<(UnsafeRawPointer?, UInt32)>.allocate(capacity: 16)
        p.initialize(repeating: (nil, 0), count: 16)
        return p
    }()

    /// The key's index in the rebuilt archive's key table, nil when it has none.
    func keyIndex(_ key: KeyBytes) -> UInt32? {
        let bytes = key.bytes
        let slot = Int(truncatingIfNeeded: UInt(bitPattern: bytes.baseAddress) >> 3) & 15
        let (p, k) = keyCache[slot]
        if p != nil && p == bytes.baseAddress {
            if rewriter.key(k, is: bytes) { return k }
        }
        guard let found = rewriter.keyIndex(bytes) else { return nil }
        keyCache[slot] = (bytes.baseAddress, found)
        return found
    }

    func find(_ k: UInt32) -> Int? {
        edit.levels[level].withUnsafeBufferPointer { fields in
            for i in fields.indices where fields[i].key == k { return i }
            return nil
        }
    }

    func borrow(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let p = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
        if bytes.count > 0 { p.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
        borrowed.append(p)
        return UnsafeRawBufferPointer(start: p, count: bytes.count)
    }
}

extension Coder {
    /// The editor of the migration step running (`.migrating` mode).
    var editor: MigrationEditor { migration.unsafelyUnwrapped }

    /// A key given to a migration's write, checked as encode checks keys,
    /// as an index of the rebuilt archive's key table (added when new).
    func migrationKey(_ key: KeyBytes) throws(RestorationFailure) -> UInt32 {
        if let k = editor.keyIndex(key) { return k }
        let bytes = key.bytes
        try ArgumentRules.key(bytes, location: location)
        return editor.rewriter.internKey(bytes)
    }

    @usableFromInline @inline(never)
    func migrationRead(_ key: KeyBytes, _ expected: ValueTag) throws(RestorationFailure) -> ArchiveValue {
        let e = editor
        return e.rewriter.value(try migrationField(key, expected), e.edit)
    }

    @usableFromInline @inline(never)
    func migrationInt(_ key: KeyBytes) throws(RestorationFailure) -> Int64 {
        let e = editor
        return e.rewriter.int(try migrationField(key, .int), e.edit)
    }

    /// The current record's value for `key`, checked to have the tag `expected`.
    func migrationField(_ key: KeyBytes, _ expected: ValueTag) throws(RestorationFailure) -> EditedField {
        let e = editor
        guard let i = e.find(key) else { throw missing(key) }
        let f = e.edit.levels[e.level][i]
        let tag = ValueTag(rawValue: f.rawTag)
        if tag == expected || (expected == .boolFalse && tag == .boolTrue) { return f }
        throw mismatch(key, tag, expected)
    }

    /// Adds or replaces `key` in the current record (its place kept when replaced).
    @usableFromInline @inline(never)
    func migrationWrite(_ key: KeyBytes, _ value: ArchiveValue) throws(RestorationFailure) {
        let k = try migrationKey(key)
        let e = editor
        let index = e.edit.values.count
        try migrationPut(k, EditedField(key: k, rawTag: value.rawTag, source: .value, originalKey: k, payload: index, start: 0, end: 0), key)
        e.edit.values.append(value)
    }

    /// Adds or replaces a bool, int or double (no allocation).
    @usableFromInline @inline(never)
    func migrationWriteScalar(_ key: KeyBytes, _ tag: ValueTag, bits: UInt64) throws(RestorationFailure) {
        let k = try migrationKey(key)
        try migrationPut(k, EditedField(key: k, rawTag: tag.rawValue, source: .scalar, originalKey: k,
                                        payload: Int(bitPattern: UInt(bits)), start: 0, end: 0), key)
    }

    func migrationPut(_ k: UInt32, _ field: EditedField, _ key: KeyBytes) throws(RestorationFailure) {
        let e = editor
        let level = e.level
        if let i = e.find(k) {
            e.edit.levels[level][i] = field
        } else {
            guard e.edit.levels[level].count < ArchiveLimits.maxValuesPerRecord else {
                throw RestorationFailure(.limit, "\(location), key '\(key.string)': a record holds at most \(ArchiveLimits.maxValuesPerRecord) values (RST_MAX_VALUES_PER_RECORD)")
            }
            e.edit.levels[level].append(field)
        }
    }

    @usableFromInline @inline(never)
    func migrationBeginRecord(_ key: KeyBytes, create: Bool) throws(RestorationFailure) {
        let e = editor
        guard e.path.count < RestorationLimits.maxRecordDepth else {
            throw RestorationFailure(.limit, "\(location): records nest at most \(RestorationLimits.maxRecordDepth) deep")
        }
        let entered: Int
        if create {
            let k = try migrationKey(key)
            let level = e.edit.addLevel()
            try migrationPut(k, EditedField(key: k, rawTag: ValueTag.record.rawValue, source: .level, originalKey: k, payload: level, start: 0, end: 0), key)
            entered = level
        } else {
            let f = try migrationField(key, .record)
            if f.source == .level {
                entered = f.payload
            } else {                                // an archive record: its fields become editable
                let level = e.rewriter.enter(f, &e.edit)
                try migrationPut(f.key, EditedField(key: f.key, rawTag: f.rawTag, source: .level, originalKey: f.key, payload: level, start: 0, end: 0), key)
                entered = level
            }
        }
        e.path.append(entered)
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
        let e = editor
        guard let i = e.find(key) else {
            throw RestorationFailure(.notFound, "\(location) has no key '\(key.string)' to remove")
        }
        e.edit.levels[e.level].remove(at: i)
    }

    /// Renames `from` to `to`, keeping the value and its place (a migration only).
    /// - Throws: `.notFound` when `from` is missing; `.duplicate` when `to`
    ///   is taken; `.invalid` for a bad key; `.state` outside a migration.
    public func rename(_ from: KeyBytes, to: KeyBytes) throws(RestorationFailure) {
        guard mode == .migrating else { throw notMigrating("rename") }
        let e = editor
        guard let i = e.find(from) else {
            throw RestorationFailure(.notFound, "\(location) has no key '\(from.string)' to rename")
        }
        let t = try migrationKey(to)
        let level = e.level
        if e.edit.levels[level][i].key == t { return }
        if e.find(t) != nil {
            throw RestorationFailure(.duplicate, "\(location) already has a value for key '\(to.string)'")
        }
        e.edit.levels[level][i].key = t
    }

    func notMigrating(_ what: String) -> RestorationFailure {
        RestorationFailure(.state, "\(what) edits a record only inside a migration (one registered for its class); archives written by a save are append-only")
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
        editor.find(key) != nil
    }

    @usableFromInline @inline(never)
    func migratingValueType(_ key: KeyBytes) throws(RestorationFailure) -> ValueTag?? {
        let e = editor
        guard let i = e.find(key) else { return nil }
        return .some(ValueTag(rawValue: e.edit.levels[e.level][i].rawTag))
    }

    /// A string's or bytes value's content: the archive's own bytes for an
    /// original value (valid until the restore ends), a copy freed when the
    /// step returns for a value a step wrote.
    @usableFromInline @inline(never)
    func migratingBytes(_ key: KeyBytes, _ tag: ValueTag) throws(RestorationFailure) -> UnsafeRawBufferPointer {
        let f = try migrationField(key, tag)
        let e = editor
        if f.source == .archive { return e.rewriter.bytes(f) }
        switch e.rewriter.value(f, e.edit) {
        case .string(var s): return s.withUTF8 { e.borrow(UnsafeRawBufferPointer($0)) }
        case .bytes(let b), .osString(let b): return b.withUnsafeBytes { e.borrow($0) }
        default: return e.borrow(UnsafeRawBufferPointer(start: nil, count: 0))
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

    /// The `migrate` step of a restore (after `loadPlugins`, before pass 1):
    /// runs every needed migration chain (those the plugins' `init`
    /// registered included) and,
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
        if classVersions.isEmpty { return (reader, [:]) }

        var notes: [Int: SkipNote] = [:]
        var dead = [Bool](repeating: false, count: n)
        // Per class name of the archive: its current version (nil: none set).
        var currentOf: [UInt32: UInt32?] = [:]
        // Per (class, stored version): the chain of steps, an index of `chains`.
        var chainOf: [UInt64: Int] = [:]
        var chains: [[Migration]] = []
        var todo: [(record: Int, from: UInt32, to: UInt32, chain: Int)] = []
        for r in 0..<n {
            if let p = reader.parent(ofRecord: r), dead[p] { dead[r] = true; continue }
            if r == quarantined { dead[r] = true; continue }   // quarantined: its note comes from the restore
            guard let ci = reader.className(ofRecord: r) else { continue }
            let known = currentOf[ci]
            let currentVersion: UInt32?
            if let known { currentVersion = known } else {
                currentVersion = classVersions[name(ci)]
                currentOf[ci] = .some(currentVersion)
            }
            guard let current = currentVersion else { continue }
            let stored = reader.version(ofRecord: r)
            if stored > current {
                dead[r] = true
                notes[r] = SkipNote(reason: .tooNew, detail: "it was saved by version \(stored) of class '\(name(ci))', newer than this program's version \(current)")
                continue
            }
            if stored == current { continue }
            let chainKey = UInt64(ci) << 32 | UInt64(stored)
            var chain = chainOf[chainKey]
            if chain == nil {
                var steps: [Migration] = []
                var v = stored
                let table = migrations[name(ci)] ?? [:]
                while v < current {
                    guard let step = table[v] else { break }
                    steps.append(step)
                    v += 1
                }
                chain = v < current ? -1 - Int(v) : chains.count      // -1 - v: no step from version v
                if v == current { chains.append(steps) }
                chainOf[chainKey] = chain
            }
            if let c = chain, c < 0 {
                let v = -1 - c
                dead[r] = true
                notes[r] = SkipNote(reason: .noMigration, detail: "class '\(name(ci))' has no migration from version \(v) (the record is version \(stored), the class \(current))")
                continue
            }
            todo.append((r, stored, current, chain!))
        }
        if todo.isEmpty { return (reader, notes) }

        let rewriter = ArchiveRewriter(reader: reader)
        let editor = MigrationEditor(rewriter: rewriter)
        let coder = theCoder
        for job in todo {
            let r = job.record
            if let p = reader.parent(ofRecord: r), dead[p] { dead[r] = true; continue }
            editor.begin(record: r)
            var failure: (UInt32, RestorationFailure)? = nil
            for (k, step) in chains[job.chain].enumerated() {
                let from = job.from + UInt32(k)
                editor.fromVersion = from
                editor.path.removeAll(keepingCapacity: true)
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
            }
            if failure == nil, let problem = MigrationLimits.check(editor.edit) {
                failure = (job.to - 1, RestorationFailure(.limit, problem))
            }
            if failure == nil {
                do {
                    try rewriter.replace(record: r, with: editor.edit, version: job.to)
                } catch {
                    let status: Status = if case .limit = error { .limit } else { .state }
                    failure = (job.to - 1, RestorationFailure(status, "the migrated record cannot be written: \(error.message)"))
                }
            }
            if let (from, f) = failure {
                let cls = reader.className(ofRecord: r).map(name) ?? ""
                dead[r] = true
                notes[r] = SkipNote(reason: .migrationFailed, detail: "the migration of class '\(cls)' from version \(from) failed (\(f.status.cName)): \(f.message)")
                log(.warning, "record \(r) ('\(reader.path(ofRecord: r))'): the migration of class '\(cls)' from version \(from) failed (\(f.status.cName)): \(f.message); skipped with its descendants")
                continue
            }
            if rewriter.replacedByteCount > ArchiveLimits.maxArchiveBytes {
                throw RestorationFailure(.limit, "after migrations the archive exceeds a limit: more than \(ArchiveLimits.maxArchiveBytes) bytes (RST_MAX_ARCHIVE_BYTES)")
            }
        }
        if rewriter.isEmpty { return (reader, notes) }     // every migration failed: the archive as it was
        // The rebuilt archive's reader: its indexes derived from this one's
        // (valid by construction); debug builds also validate it from
        // scratch and compare every index.
        #if DEBUG
        let verify = true
        #else
        let verify = false
        #endif
        do {
            return (try rewriter.rebuiltReader(verify: verify), notes)
        } catch {
            switch error {
            case .limit(let m): throw RestorationFailure(.limit, "after migrations the archive exceeds a limit: \(m)")
            case .duplicateKey, .state: throw RestorationFailure(.state, "after migrations the archive cannot be written: \(error.message)")
            }
        }
    }
}

/// The per-record limits a migration's result must satisfy (the archive's
/// own limits are checked when it is rebuilt; nesting is bounded when a
/// record is entered).
enum MigrationLimits {
    static func check(_ edit: RecordEdit) -> String? {
        for l in 0..<edit.levelCount where edit.levels[l].count > ArchiveLimits.maxValuesPerRecord {
            return "the migrated record holds \(edit.levels[l].count) values, more than \(ArchiveLimits.maxValuesPerRecord) (RST_MAX_VALUES_PER_RECORD)"
        }
        return nil
    }
}
