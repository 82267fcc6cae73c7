import RestorationArchive

/// The coder's migrating role (`.migrating` mode): the record a migration
/// step edits and every operation on it — read, write (add or replace),
/// remove, rename, enter and leave nested records. The record's fields are
/// kept as the rewriter gives them (the archive's bytes until a step
/// replaces a value), keys as indexes of the rewriter's key table. One
/// editor serves every record of a restore (its arrays keep their
/// capacity); `Engine.migrate` holds it, and the coder forwards each of its
/// calls here once it has found itself migrating.
@usableFromInline
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
    /// The record being edited.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private(set) var record = 0
    // The editor lives inside `Engine.migrate`, which holds the rewriter.
    unowned(unsafe) let rewriter: ArchiveRewriter
    /// The same two for the calls made for every record (begin, find, int),
    /// which otherwise retain and release them around each call; both
    /// outlive the editor (`Engine.migrate` holds the rewriter, the
    /// rewriter its reader).
    private let rewriterRef: Unmanaged<ArchiveRewriter>
    private let readerRef: Unmanaged<ArchiveReader>
    /// The rewriter's reader (the archive being migrated), held by the rewriter.
    unowned(unsafe) let reader: ArchiveReader

    init(rewriter: ArchiveRewriter) {
        self.rewriter = rewriter
        self.reader = rewriter.reader
        rewriterRef = Unmanaged.passUnretained(rewriter)
        readerRef = Unmanaged.passUnretained(rewriter.reader)
    }

    deinit {
        releaseBorrowed()
        keyCache.destroy()
    }

    /// Inlined into the coder's `endMigrating` (after every step): with
    /// nothing borrowed, a load and a test.
    @inline(__always) func releaseBorrowed() {
        if borrowed.isEmpty { return }
        releaseBorrowedCopies()
    }

    @inline(never) private func releaseBorrowedCopies() {
        for p in borrowed { p.deallocate() }
        borrowed.removeAll()
    }

    /// Starts on record r: its fields as they stand, parsed only as far as
    /// the step looks (`find`); the rest is written back as it is.
    func begin(record r: Int) {
        record = r
        rewriterRef._withUnsafeGuaranteedRef { $0.beginLazily(record: r, &edit) }
        if !path.isEmpty { path.removeAll(keepingCapacity: true) }
    }

    /// "record 12", for error messages (no reader is open while migrations run).
    var location: String { "record \(record)" }

    /// The level being edited (the record's own fields, or a nested record entered).
    var level: Int { path.last ?? 0 }

    /// The index of `key` in the current level, nil when it has none
    /// (inlined into each caller, as the lookups it makes).
    @inline(__always) func find(_ key: KeyBytes) -> Int? {
        guard let k = keyIndex(key) else { return nil }
        return find(k)
    }

    /// Key lookups by the key's address (C hosts pass literals), each hit
    /// confirmed by comparing the bytes with the cache's copy (`KeyCache`,
    /// the decode path's cache): indexes of the rewriter's key table, which
    /// only grows, so an index once found stays right.
    private let keyCache = KeyCache()

    /// The key's index in the rebuilt archive's key table, nil when it has none.
    /// The cache's hit inlined into each caller (a step's every key is a
    /// hit after the first record: the call's frame cost a quarter of the
    /// lookup); a miss is looked up and cached out of line.
    @inline(__always) func keyIndex(_ key: KeyBytes) -> UInt32? {
        if let p = key.start {
            let hit = key.isCString ? keyCache.lookup(cString: p) : keyCache.lookup(UnsafeRawBufferPointer(start: p, count: key.length))
            if let hit { return hit }
        }
        return keyIndexMissed(key)
    }

    @inline(never) private func keyIndexMissed(_ key: KeyBytes) -> UInt32? {
        let bytes = key.bytes
        guard let found = rewriter.keyIndex(bytes) else { return nil }
        keyCache.store(bytes, found)
        return found
    }

    /// Inlined into each caller (a step's lookups are few and short: the
    /// call's frame cost as much as the scan); parsing on is out of line.
    @inline(__always) func find(_ k: UInt32) -> Int? {
        let level = self.level
        let i = parsedIndex(k, in: level)
        if i != nil || !mayBeUnparsed(k, in: level) { return i }
        return findUnparsed(k)
    }

    /// The index of key k among the fields of `level` parsed so far.
    @inline(__always) func parsedIndex(_ k: UInt32, in level: Int) -> Int? {
        edit.levels[level].withUnsafeBufferPointer { fields in
            for i in fields.indices where fields[i].key == k { return i }
            return nil
        }
    }

    /// The field with key k among those of `level` parsed so far, read
    /// where the scan finds it (`find` then an index of the level read it
    /// twice, with its bounds checks).
    @inline(__always) func parsedField(_ k: UInt32, in level: Int) -> EditedField? {
        edit.levels[level].withUnsafeBufferPointer { fields in
            for i in fields.indices where fields[i].key == k { return fields[i] }
            return nil
        }
    }

    /// Whether key k may be among the record's fields not parsed yet: they
    /// are the record's own level's, and hold keys of the archive's own
    /// table only (a key an edit added is in none of them), each once —
    /// and the key of a field renamed among them (`laneRename`).
    @inline(__always) func mayBeUnparsed(_ k: UInt32, in level: Int) -> Bool {
        level == 0 && !edit.unparsed.isEmpty && (Int(k) < reader.keyCount || edit.unparsed.isRenamed(k))
    }

    @inline(never) private func findUnparsed(_ k: UInt32) -> Int? {
        rewriterRef._withUnsafeGuaranteedRef { $0.parseUnparsed(&edit, until: k) }
    }

    /// Parses the record's fields not parsed yet (for what needs them all).
    func parseAll() {
        if !edit.unparsed.isEmpty { rewriter.parseUnparsed(&edit, until: nil) }
    }

    /// Makes the record's value count exact where a limit could be reached:
    /// the fields not parsed yet count at most one per byte.
    /// Inlined (it runs for every record and every added key): the test,
    /// not a call.
    @inline(__always) func settleCount() {
        if !edit.unparsed.isEmpty && edit.levels[0].count + edit.unparsed.fieldBound >= ArchiveLimits.maxValuesPerRecord { parseAll() }
    }

    func borrow(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let p = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
        if bytes.count > 0 { p.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
        borrowed.append(p)
        return UnsafeRawBufferPointer(start: p, count: bytes.count)
    }

    // MARK: keys and fields

    /// A key given to a write, checked as encode checks keys, as an index
    /// of the rebuilt archive's key table (added when new).
    /// A known key is answered inline (the key cache); a new one checked
    /// and added out of line.
    @inline(__always) func writeKey(_ key: KeyBytes) throws(RestorationFailure) -> UInt32 {
        if let k = keyIndex(key) { return k }
        return try newKey(key)
    }

    @inline(never) private func newKey(_ key: KeyBytes) throws(RestorationFailure) -> UInt32 {
        let bytes = key.bytes
        try ArgumentRules.key(bytes, location: location)
        return rewriter.internKey(bytes)
    }

    /// The current record's value for `key`, checked to have the tag `expected`.
    /// Inlined into each read (the call's frame cost as much as the
    /// test); the failures are built out of line.
    @inline(__always) func field(_ key: KeyBytes, _ expected: ValueTag) throws(RestorationFailure) -> EditedField {
        guard let i = find(key) else { throw missing(key) }
        let f = edit.levels[level][i]
        // Raw tags compared (a ValueTag is made only for the message).
        if f.rawTag == expected.rawValue || (expected == .boolFalse && f.rawTag == ValueTag.boolTrue.rawValue) { return f }
        throw mismatch(key, f.rawTag, expected)
    }

    @inline(never) private func missing(_ key: KeyBytes) -> RestorationFailure { Coder.missing(key, at: location) }

    @inline(never) private func mismatch(_ key: KeyBytes, _ rawTag: UInt8, _ expected: ValueTag) -> RestorationFailure {
        Coder.mismatch(key, ValueTag(rawValue: rawTag), expected, at: location)
    }

    /// Adds or replaces `key` in the current record (its place kept when replaced).
    /// Inlined into each write (the call's frame cost as much as the
    /// work); the limit's failure is built out of line.
    @inline(__always) func put(_ k: UInt32, _ field: EditedField, _ key: KeyBytes) throws(RestorationFailure) {
        let level = self.level
        if let i = find(k) {
            edit.levels[level][i] = field
        } else {
            if level == 0 { settleCount() }
            guard edit.levels[level].count < ArchiveLimits.maxValuesPerRecord else { throw tooManyValues(key) }
            edit.levels[level].append(field)
        }
    }

    @inline(never) private func tooManyValues(_ key: KeyBytes) -> RestorationFailure {
        RestorationFailure(.limit, "\(location), key '\(key.string)': a record holds at most \(ArchiveLimits.maxValuesPerRecord) values (RST_MAX_VALUES_PER_RECORD)")
    }

    // MARK: writes

    /// Adds or replaces `key` with `value`.
    @usableFromInline @inline(never)
    func write(_ key: KeyBytes, _ value: ArchiveValue) throws(RestorationFailure) {
        let k = try writeKey(key)
        let index = edit.values.count
        try put(k, EditedField(key: k, rawTag: value.rawTag, source: .value, originalKey: k, payload: index, start: 0, end: 0), key)
        edit.values.append(value)
    }

    /// Adds or replaces a bool, int or double (no allocation).
    @usableFromInline @inline(never)
    func writeScalar(_ key: KeyBytes, _ tag: ValueTag, bits: UInt64) throws(RestorationFailure) {
        let k = try writeKey(key)
        try put(k, EditedField(key: k, rawTag: tag.rawValue, source: .scalar, originalKey: k,
                               payload: Int(bitPattern: UInt(bits)), start: 0, end: 0), key)
    }

    /// Adds or replaces a string (`utf8` is checked as encode checks it).
    @usableFromInline @inline(never)
    func writeString(_ key: KeyBytes, _ utf8: UnsafeRawBufferPointer) throws(RestorationFailure) {
        guard ArgumentRules.isText(utf8) else { throw RestorationFailure(.invalid, "\(location), key '\(key.string)': the value is not valid UTF-8 (or holds a NUL byte)") }
        try write(key, .string(String(decoding: utf8, as: UTF8.self)))
    }

    /// Adds or replaces a string array (each element checked as encode checks it).
    func writeStringArray(_ key: KeyBytes, _ elements: [UnsafeRawBufferPointer]) throws(RestorationFailure) {
        for (i, e) in elements.enumerated() where !ArgumentRules.isText(e) {
            throw RestorationFailure(.invalid, "\(location), key '\(key.string)': element \(i) is not valid UTF-8 (or holds a NUL byte)")
        }
        try write(key, .stringArray(elements.map { String(decoding: $0, as: UTF8.self) }))
    }

    /// Enters the nested record under `key`: a new one (`create`), or one
    /// the record holds, whose fields become editable.
    @usableFromInline @inline(never)
    func beginRecord(_ key: KeyBytes, create: Bool) throws(RestorationFailure) {
        guard path.count < RestorationLimits.maxRecordDepth else {
            throw RestorationFailure(.limit, "\(location): records nest at most \(RestorationLimits.maxRecordDepth) deep")
        }
        let entered: Int
        if create {
            let k = try writeKey(key)
            let level = edit.addLevel()
            try put(k, EditedField(key: k, rawTag: ValueTag.record.rawValue, source: .level, originalKey: k, payload: level, start: 0, end: 0), key)
            entered = level
        } else {
            let f = try field(key, .record)
            if f.source == .level {
                entered = f.payload
            } else {                                // an archive record: its fields become editable
                let level = rewriter.enter(f, &edit)
                try put(f.key, EditedField(key: f.key, rawTag: f.rawTag, source: .level, originalKey: f.key, payload: level, start: 0, end: 0), key)
                entered = level
            }
        }
        path.append(entered)
    }

    @usableFromInline @inline(never)
    func endRecord() throws(RestorationFailure) {
        guard !path.isEmpty else {
            throw RestorationFailure(.state, "\(location) is at its top level (no record was begun)")
        }
        path.removeLast()
    }

    /// Removes `key` from the record.
    /// - Throws: `.notFound` for a missing key.
    func remove(_ key: KeyBytes) throws(RestorationFailure) {
        guard let i = find(key) else {
            throw RestorationFailure(.notFound, "\(location) has no key '\(key.string)' to remove")
        }
        let level = self.level
        edit.levels[level].remove(at: i)
        if level == 0 && i < edit.unparsed.at { edit.unparsed.at -= 1 }
    }

    /// Renames `from` to `to`, keeping the value and its place.
    /// - Throws: `.notFound` when `from` is missing; `.duplicate` when `to`
    ///   is taken; `.invalid` for a bad key.
    func rename(_ from: KeyBytes, to: KeyBytes) throws(RestorationFailure) {
        guard let i = find(from) else {
            throw RestorationFailure(.notFound, "\(location) has no key '\(from.string)' to rename")
        }
        let t = try writeKey(to)
        let level = self.level
        if edit.levels[level][i].key == t { return }
        if find(t) != nil {
            throw RestorationFailure(.duplicate, "\(location) already has a value for key '\(to.string)'")
        }
        edit.levels[level][i].key = t
    }

    // MARK: reads

    /// The keys of the current level, in order.
    func keys() -> [String] {
        if level == 0 { parseAll() }
        return edit.levels[level].map { rewriter.keyName($0.key) }
    }

    @usableFromInline @inline(never)
    func contains(_ key: KeyBytes) -> Bool {
        find(key) != nil
    }

    /// The type under `key`: nil when absent; `.some(nil)` for an unknown (future) type.
    @usableFromInline @inline(never)
    func valueType(_ key: KeyBytes) -> ValueTag?? {
        guard let i = find(key) else { return nil }
        return .some(ValueTag(rawValue: edit.levels[level][i].rawTag))
    }

    @usableFromInline @inline(never)
    func read(_ key: KeyBytes, _ expected: ValueTag) throws(RestorationFailure) -> ArchiveValue {
        rewriter.value(try field(key, expected), edit)
    }

    @usableFromInline @inline(never)
    func bool(_ key: KeyBytes) throws(RestorationFailure) -> Bool {
        try read(key, .boolFalse) == .bool(true)
    }

    @usableFromInline @inline(never)
    func int(_ key: KeyBytes) throws(RestorationFailure) -> Int64 {
        let f = try field(key, .int)
        switch f.source {       // the usual two without passing the edit (no reference counting)
        case .archive: return readerRef._withUnsafeGuaranteedRef { $0.int(f.archiveField) }
        case .scalar: return Int64(f.payload)
        case .value, .level: return rewriter.int(f, edit)
        }
    }

    @usableFromInline @inline(never)
    func double(_ key: KeyBytes) throws(RestorationFailure) -> Double {
        if case .double(let v) = try read(key, .double) { return v }
        return 0
    }

    /// A string's or bytes value's content: the archive's own bytes for an
    /// original value (valid until the restore ends), a copy freed when the
    /// step returns for a value a step wrote.
    func bytes(_ key: KeyBytes, _ tag: ValueTag) throws(RestorationFailure) -> UnsafeRawBufferPointer {
        let f = try field(key, tag)
        if f.source == .archive { return rewriter.bytes(f) }
        switch rewriter.value(f, edit) {
        case .string(var s): return s.withUTF8 { borrow(UnsafeRawBufferPointer($0)) }
        case .bytes(let b), .osString(let b): return b.withUnsafeBytes { borrow($0) }
        default: return borrow(UnsafeRawBufferPointer(start: nil, count: 0))
        }
    }

    /// A string, or an OS string that is valid UTF-8.
    @usableFromInline @inline(never)
    func text(_ key: KeyBytes) throws(RestorationFailure) -> UnsafeRawBufferPointer {
        guard valueType(key) == .some(.osString) else { return try bytes(key, .string) }
        let b = try bytes(key, .osString)
        if !ArgumentRules.isText(b) { throw Coder.osStringNotText(key, at: location) }
        return b
    }

    /// Bytes, or an OS string's raw bytes.
    @usableFromInline @inline(never)
    func rawBytes(_ key: KeyBytes) throws(RestorationFailure) -> UnsafeRawBufferPointer {
        try bytes(key, valueType(key) == .some(.osString) ? .osString : .bytes)
    }

    /// An OS string's bytes, or a string's.
    func osStringBytes(_ key: KeyBytes) throws(RestorationFailure) -> UnsafeRawBufferPointer {
        let tag = valueType(key) ?? nil
        return try bytes(key, tag == .string ? .string : .osString)
    }

    @usableFromInline @inline(never)
    func intArray(_ key: KeyBytes) throws(RestorationFailure) -> [Int64] {
        guard case .intArray(let a) = try read(key, .intArray) else { return [] }
        return a
    }

    /// Copies into `buffer` when it is large enough; returns the count either way.
    @usableFromInline @inline(never)
    func intArray(_ key: KeyBytes, into buffer: UnsafeMutableBufferPointer<Int64>?) throws(RestorationFailure) -> (count: Int, copied: Bool) {
        let a = try intArray(key)
        guard let buffer, buffer.count >= a.count else { return (a.count, a.isEmpty) }
        for (i, v) in a.enumerated() { buffer[i] = v }
        return (a.count, true)
    }

    func stringArray(_ key: KeyBytes) throws(RestorationFailure) -> [String] {
        guard case .stringArray(let a) = try read(key, .stringArray) else { return [] }
        return a
    }

    /// Element `index` (a copy freed when the step returns), and the count.
    func stringArrayElement(_ key: KeyBytes, at index: Int) throws(RestorationFailure) -> (element: UnsafeRawBufferPointer?, count: Int) {
        let a = try stringArray(key)
        return (index >= 0 && index < a.count ? Array(a[index].utf8).withUnsafeBytes { borrow($0) } : nil, a.count)
    }
}

// MARK: lanes

extension MigrationEditor {
    /// `int`'s answer when the key is there and holds an int the archive
    /// or the step gave as a scalar; nil for anything else (a missing key,
    /// another type, a value of the edit's values), which the checked
    /// `int` then decides with its message. No throwing frame and no
    /// `Result` around it: the step's usual read is a key cache hit, a
    /// scan of the few fields parsed and the varint. The lookups are the
    /// checked call's own (`find`'s, the field read where the scan finds
    /// it: a key cache miss is cached, fields parsed on), so the checked
    /// call that follows a nil finds the same field, already parsed.
    @usableFromInline @inline(never)
    func laneInt(_ key: KeyBytes) -> Int64? {
        guard let k = keyIndex(key) else { return nil }
        let level = self.level
        var f = parsedField(k, in: level)
        if f == nil && level == 0 && edit.unparsed.isRenamed(k) {
            f = edit.unparsed.renamed                  // read where it is, nothing parsed
        } else if f == nil && mayBeUnparsed(k, in: level), let i = findUnparsed(k) {
            f = edit.levels[0][i]
        }
        guard let f, f.rawTag == ValueTag.int.rawValue else { return nil }
        switch f.source {
        case .archive: return readerRef._withUnsafeGuaranteedRef { $0.int(f.archiveField) }
        case .scalar: return Int64(f.payload)
        case .value, .level: return nil
        }
    }

    /// `rename` when it would succeed: both keys known to the rebuilt
    /// archive's table, `to` on none of the level's fields (parsed or
    /// not), `from` on one. A field not parsed yet stays unparsed, the
    /// rename held where it is (`ArchiveRewriter.holdRename`: its header
    /// found, nothing parsed; parsing on reaches it with its new key, and
    /// the record is written with it); when one is held already, the
    /// field is parsed with its new key
    /// (`parseUnparsed(_:until:renamedTo:)`). False, with nothing changed
    /// but fields parsed (which `rename` would parse too), for everything
    /// else — a new key to check and add, a duplicate, the same key, a
    /// missing one — which `rename` decides with its message.
    @usableFromInline @inline(never)
    func laneRename(_ from: KeyBytes, to: KeyBytes) -> Bool {
        guard let t = keyIndex(to) else { return false }
        let level = self.level
        if parsedIndex(t, in: level) != nil || mayBeUnparsed(t, in: level) { return false }
        guard let k = keyIndex(from) else { return false }
        if let i = parsedIndex(k, in: level) {
            edit.levels[level][i].key = t
            return true
        }
        guard mayBeUnparsed(k, in: level) else { return false }
        // `to` is a key the rewriter added (not the archive's: `mayBeUnparsed`
        // said no), so no unparsed field holds it.
        if edit.unparsed.renamedAt < 0 {
            return rewriterRef._withUnsafeGuaranteedRef { $0.holdRename(&edit, of: k, to: t) }
        }
        return rewriterRef._withUnsafeGuaranteedRef { $0.parseUnparsed(&edit, until: k, renamedTo: t) } != nil
    }

    /// `writeScalar` when the key is one the rebuilt archive's table has
    /// (a key cache hit, or a known key) and the record has room: the
    /// field added or replaced exactly as `put` does; false, with nothing
    /// changed, otherwise (a new key to check and add, a record at the
    /// value limit), for the checked call to decide.
    @usableFromInline @inline(never)
    func laneWriteScalar(_ key: KeyBytes, _ rawTag: UInt8, bits: UInt64) -> Bool {
        guard let k = keyIndex(key) else { return false }
        let field = EditedField(key: k, rawTag: rawTag, source: .scalar, originalKey: k,
                                payload: Int(bitPattern: UInt(bits)), start: 0, end: 0)
        let level = self.level
        if let i = find(k) {
            edit.levels[level][i] = field
            return true
        }
        if level == 0 { settleCount() }
        guard edit.levels[level].count < ArchiveLimits.maxValuesPerRecord else { return false }
        edit.levels[level].append(field)
        return true
    }
}

extension Coder {
    /// Runs `body` on the migrating role's editor without retaining it:
    /// read through `editor`, the editor was retained and released around
    /// every forwarded call (about 40 instructions each). Safe for the same
    /// reason `migration` is `unowned(unsafe)`: `Engine.migrate` holds the
    /// editor for as long as the coder is migrating, and every caller has
    /// checked that it is (`mode == .migrating`).
    @inlinable @inline(__always)
    func withEditor<T>(_ body: (MigrationEditor) throws(RestorationFailure) -> T) throws(RestorationFailure) -> T {
        let result: Result<T, RestorationFailure> = Unmanaged.passUnretained(migration.unsafelyUnwrapped)._withUnsafeGuaranteedRef { e in
            do throws(RestorationFailure) { return .success(try body(e)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// The migrating role's editor for a lane (`laneInt`, `laneRename`,
    /// `laneWriteScalar`): a call that cannot throw, so it needs neither
    /// the `Result` of `withEditor` nor a throwing frame. Safe for the
    /// reason `withEditor` is.
    @inlinable @inline(__always)
    func withEditorLane<T>(_ body: (MigrationEditor) -> T) -> T {
        Unmanaged.passUnretained(migration.unsafelyUnwrapped)._withUnsafeGuaranteedRef(body)
    }
}
