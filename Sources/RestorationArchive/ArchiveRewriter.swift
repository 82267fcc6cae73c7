// ArchiveRewriter: a validated archive rebuilt with some records' fields
// replaced (migrations, docs/EVOLUTION.md), everything else copied byte for byte.
//
// A migration edits one record: its fields are a list of `EditedField`s
// whose values are still the archive's bytes (`.archive`) until a step
// replaces them, so a record costs one small array, not a decoded tree.
// The migration editor begins a record lazily (`beginLazily`): its fields
// are parsed only as far as a step looks up a key, and the ones never
// parsed are written back as one copy of their bytes (`UnparsedFields`;
// a rename of one of them is held there, `holdRename`, and the copy made
// in two parts around that field's new header).
// An edited record is written through a `ByteSink`, runs of untouched
// fields as one copy each.
// Keys keep their indexes; a key the archive does not have yet is appended
// to the key table, so every untouched field stays valid as it is. `encode`
// writes the new archive into one buffer: the header (flag 1 set, flag 2
// kept), the info and the name table copied, the key table copied plus the
// new keys, and every record's header written again (with its version)
// followed by its fields — the replacement for an edited record, a copy for
// any other. `rebuiltReader` derives the new reader's indexes from the
// original reader's instead of validating the result again (it is valid by
// construction; with `verify`, debug builds and tests check that).

/// One value of a record being edited: a key (an index of the rewriter's
/// key table) and where its value is. A plain value (no reference
/// counting), so an edited record is one array of them.
public struct EditedField: Equatable {
    /// Where the value is.
    public enum Source: UInt8 {
        /// A field of the archive: `start..<end` is the whole field (header
        /// included), `payload` its content as in `ArchiveReader.Field`.
        case archive
        /// A value written by the edit: `payload` indexes the edit's values.
        case value
        /// A nested record entered or created by the edit: `payload`
        /// indexes the edit's levels.
        case level
        /// A bool, int or double written by the edit: `payload` is its bit
        /// pattern (no allocation).
        case scalar
    }
    public var key: UInt32
    public var rawTag: UInt8
    public var source: Source
    /// The archive field's key before the edit (a renamed field is
    /// rewritten; an untouched one is copied as it is).
    public var originalKey: UInt32
    public var payload: Int
    public var start: Int
    public var end: Int

    @inlinable public init(key: UInt32, rawTag: UInt8, source: Source, originalKey: UInt32, payload: Int, start: Int, end: Int) {
        self.key = key
        self.rawTag = rawTag
        self.source = source
        self.originalKey = originalKey
        self.payload = payload
        self.start = start
        self.end = end
    }

    /// Object references, arrays of them and nested records (which may hold either).
    @inlinable public static func mayHoldReferences(_ rawTag: UInt8) -> Bool {
        rawTag == ValueTag.object.rawValue || rawTag == ValueTag.objectArray.rawValue || rawTag == ValueTag.record.rawValue
    }

    /// The archive field it stands for (source `.archive` only).
    @inlinable public var archiveField: ArchiveReader.Field {
        ArchiveReader.Field(key: originalKey, rawTag: rawTag, payload: payload, end: end)
    }
}

/// The edited state of one record: `levels[0]` is the record's own fields,
/// other levels nested records entered or created; `values` the values the
/// edit wrote. Reused from record to record (its arrays keep their capacity).
public struct RecordEdit {
    public var levels: [[EditedField]] = [[]]
    /// Levels in use (the rest are spare, kept for their capacity).
    public var levelCount = 1
    public var values: [ArchiveValue] = []
    /// Fields of the record's own level, as `begin` found them, that can
    /// hold references (object, object array, nested record); for an edit
    /// begun lazily, those parsed so far.
    public var referenceFields = 0
    /// The record's own fields not parsed yet (`ArchiveRewriter.beginLazily`);
    /// empty after `begin`.
    public var unparsed = UnparsedFields()

    public init() {}

    /// Empties the edit for the next record.
    @inline(__always) public mutating func reset() {
        // A record's own level usually holds the few fields a step looked
        // at: dropped one by one (a plain store each, the buffer kept), not
        // through `removeAll(keepingCapacity:)`, whose generic range
        // replacement costs more than several of them. Inlined into the
        // callers (once per record), the level reached once.
        levels.withUnsafeMutableBufferPointer { l in
            if l[0].count <= 8 {
                while !l[0].isEmpty { l[0].removeLast() }
            } else {
                l[0].removeAll(keepingCapacity: true)
            }
        }
        levelCount = 1
        if !values.isEmpty { values.removeAll(keepingCapacity: true) }
        unparsed = UnparsedFields()
    }

    /// A new empty level; returns its index.
    public mutating func addLevel() -> Int {
        if levelCount == levels.count { levels.append([]) } else { levels[levelCount].removeAll(keepingCapacity: true) }
        levelCount += 1
        return levelCount - 1
    }
}

/// The tail of a record's own fields that an edit begun lazily has not
/// parsed: the archive's bytes `start..<end`, whole fields; they stand in
/// the record's level before index `at` (fields parsed before them, fields
/// the edit added after). Untouched but for at most one renamed field
/// (`renamedAt`, the usual step's rename, `ArchiveRewriter.holdRename`):
/// its key is `renamed.key` from then on, and parsing reaches it with that
/// key. Written back as one copy of those bytes, or two around the renamed
/// field's new header.
public struct UnparsedFields: Equatable {
    public var start = 0, end = 0
    public var at = 0
    /// The renamed field as parsing it gives it (its new key, the archive's
    /// one as `originalKey`); `start` is -1 and `key` UInt32.max (no key's
    /// index) while none is. Its key is one the rewriter added to the
    /// table: no other field of the record can hold it.
    public var renamed = UnparsedFields.noRename
    @inlinable public init() {}
    @inlinable public var isEmpty: Bool { start >= end }
    /// At least as many as the fields it holds (each takes a byte or more).
    @inlinable public var fieldBound: Int { end - start }
    /// Where the renamed field starts (a field start in `start..<end`), -1 for none.
    @inlinable public var renamedAt: Int { renamed.start }
    /// Whether key k is the renamed field's (one compare).
    @inlinable public func isRenamed(_ k: UInt32) -> Bool { k == renamed.key }
    public static let noRename = EditedField(key: .max, rawTag: 0, source: .archive, originalKey: .max, payload: 0, start: -1, end: 0)
}

public final class ArchiveRewriter {
    public let reader: ArchiveReader
    /// Keys appended to the archive's table (index = reader.keyCount + i).
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var addedKeys: [[UInt8]] = []
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var addedKeyIndex: [[UInt8]: UInt32] = [:]
    /// Replaced fields of the edited records, in record order.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var patchBytes = ByteSink()
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var patches: [(record: Int, start: Int, end: Int, version: UInt32, tail: Int)] = []
    /// Whether some patch has fields the edit added at its end (a patch's
    /// `tail`, an offset of `patchBytes`, else -1): the rebuilt reader then
    /// keeps where they start (`ArchiveReader.addedTail(ofRecord:)`).
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var anyTail = false
    /// The object references of each replaced record (same order as
    /// `patches`): a range of `patchRefBuffer`, or nil when they are the
    /// original record's. Filled only from the first record whose
    /// references were collected: while every edit keeps its references
    /// (the usual case) it stays empty, and a patch past its end is nil
    /// (`collectedReferences(ofPatch:)`).
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var patchRefs: [Range<Int>?] = []
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var patchRefBuffer: [Int32] = []

    /// The original archive's bytes (the reader's, which it keeps while it
    /// lives), read without going through the reader for every record.
    private let archiveBase: UnsafeRawPointer

    public init(reader: ArchiveReader) {
        self.reader = reader
        archiveBase = reader.archiveBytes.baseAddress!
    }

    deinit {
        patchBytes.release()
        batch.deallocate()
    }

    /// True when no record was replaced (the archive would be the same).
    public var isEmpty: Bool { patches.isEmpty }

    /// Bytes of the replaced fields so far.
    public var replacedByteCount: Int { patchBytes.count }

    // MARK: - Keys

    /// The index of a key in the rebuilt archive's table, nil when neither
    /// the archive nor an edit has it. Allocates nothing for an archive key.
    public func keyIndex(_ utf8: UnsafeRawBufferPointer) -> UInt32? {
        if let k = reader.keyIndex(utf8) { return k }
        if addedKeys.count <= 8 {               // a migration adds a few keys: compare them
            for i in addedKeys.indices where addedKeys[i].count == utf8.count {
                let equal = addedKeys[i].withUnsafeBytes { bytesEqual($0.baseAddress!, utf8.baseAddress, utf8.count) }
                if equal { return UInt32(reader.keyCount + i) }
            }
            return nil
        }
        return addedKeyIndex[Array(utf8)]
    }

    /// The index of a key, appended to the table when it is new. The caller
    /// has checked the key (non-empty text of at most maxKeyBytes).
    public func internKey(_ utf8: UnsafeRawBufferPointer) -> UInt32 {
        if let k = keyIndex(utf8) { return k }
        let k = UInt32(reader.keyCount + addedKeys.count)
        let bytes = Array(utf8)
        addedKeys.append(bytes)
        addedKeyIndex[bytes] = k
        return k
    }

    /// True when key `index` of the rebuilt archive's table is `utf8`.
    @inlinable public func key(_ index: UInt32, is utf8: UnsafeRawBufferPointer) -> Bool {
        let i = Int(index)
        if i < reader.keyCount {
            let k = reader.keyBytes(index)
            return k.count == utf8.count && bytesEqual(k.baseAddress!, utf8.baseAddress, utf8.count)
        }
        return addedKeyMatches(i - reader.keyCount, utf8)
    }

    @usableFromInline func addedKeyMatches(_ i: Int, _ utf8: UnsafeRawBufferPointer) -> Bool {
        guard i < addedKeys.count, addedKeys[i].count == utf8.count else { return false }
        return addedKeys[i].withUnsafeBytes { bytesEqual($0.baseAddress!, utf8.baseAddress, utf8.count) }
    }

    /// The text of a key of the rebuilt archive's table.
    public func keyName(_ index: UInt32) -> String {
        let i = Int(index)
        if i < reader.keyCount { return reader.keyName(index) }
        return String(decoding: addedKeys[i - reader.keyCount], as: UTF8.self)
    }

    // MARK: - Fields

    /// Appends the fields of a range of the archive (a record's own, or a
    /// nested record's) to `out`; returns how many can hold references
    /// (object, object array, nested record).
    @discardableResult
    func appendFields(in range: ArchiveReader.FieldRange, to out: inout [EditedField]) -> Int {
        guard reader._valid(range) else { return 0 }
        // Parsed into a small buffer and appended a batch at a time: one
        // append per batch instead of one (with its uniqueness check) per
        // field. EditedField is a plain value (no references), so the
        // buffer's elements need no deinitialization.
        let b = batch
        var n = 0, references = 0
        var pos = range.start
        while pos < range.end, let f = reader._field(at: pos, limit: range.end) {
            (b + n).initialize(to: EditedField(key: f.key, rawTag: f.rawTag, source: .archive, originalKey: f.key,
                                               payload: f.payload, start: pos, end: f.end))
            if EditedField.mayHoldReferences(f.rawTag) { references &+= 1 }
            n &+= 1
            if n == ArchiveRewriter.batchSize {
                out.append(contentsOf: UnsafeBufferPointer(start: b, count: n))
                n = 0
            }
            pos = f.end
        }
        if n > 0 { out.append(contentsOf: UnsafeBufferPointer(start: b, count: n)) }
        return references
    }

    /// Fields parsed by `appendFields` before they are appended.
    private static let batchSize = 32
    private let batch = UnsafeMutablePointer<EditedField>.allocate(capacity: ArchiveRewriter.batchSize)

    /// Starts editing record r: `edit` holds its fields as they stand.
    public func begin(record r: Int, _ edit: inout RecordEdit) {
        edit.reset()
        edit.referenceFields = appendFields(in: reader.fields(ofRecord: r), to: &edit.levels[0])
    }

    /// Starts editing record r without parsing its fields: they are parsed
    /// as far as a lookup needs (`parseUnparsed`), and those never looked
    /// at are written back as one copy. Its users look keys up through
    /// `parseUnparsed` before scanning level 0 (the migration editor).
    public func beginLazily(record r: Int, _ edit: inout RecordEdit) {
        edit.reset()
        edit.referenceFields = 0
        let range = reader.fields(ofRecord: r)
        guard reader._valid(range) else { return }
        edit.unparsed.start = range.start
        edit.unparsed.end = range.end
        edit.unparsed.at = 0
    }

    /// Parses the edit's unparsed fields into level 0 (at their place)
    /// until one with key `key` is found — its index is returned — or, with
    /// nil, all of them.
    /// With `renamedTo`, the field found is parsed with that key (its
    /// original key kept as `originalKey`, as a rename leaves it): what
    /// parsing it and then renaming it gives, without writing the level
    /// again.
    @discardableResult
    public func parseUnparsed(_ edit: inout RecordEdit, until key: UInt32?, renamedTo newKey: UInt32? = nil) -> Int? {
        var u = edit.unparsed
        var found: Int? = nil
        var references = 0
        // Fields go in at their place: appended while no field was added
        // after them (the usual case), else inserted one by one.
        let appending = u.at == edit.levels[0].count
        let target = key.map { Int64($0) } ?? -1        // -1: no field's (parse them all)
        // The level reached once through the outer array's buffer (as
        // `RecordEdit.reset` does), not made unique again for every field.
        edit.levels.withUnsafeMutableBufferPointer { l in
            while u.start < u.end, let f = reader._field(at: u.start, limit: u.end) {
                var key = f.key
                if _slowPath(u.start == u.renamedAt) {      // the renamed field: parsed with its new key
                    key = u.renamed.key
                    u.renamed = UnparsedFields.noRename
                }
                let hit = Int64(key) == target
                var field = EditedField(key: key, rawTag: f.rawTag, source: .archive, originalKey: f.key,
                                        payload: f.payload, start: u.start, end: f.end)
                if hit, let newKey { field.key = newKey }
                if appending { l[0].append(field) } else { l[0].insert(field, at: u.at) }
                if EditedField.mayHoldReferences(f.rawTag) { references &+= 1 }
                u.start = f.end
                u.at &+= 1
                if hit { found = u.at &- 1; break }
            }
        }
        if found == nil {                           // all parsed (a validated record has whole fields)
            u.start = u.end
            u.renamed = UnparsedFields.noRename
        }
        edit.referenceFields &+= references
        edit.unparsed = u
        return found
    }

    /// Renames the unparsed field with key `key` to `newKey` without
    /// parsing anything: the field is found by its header alone and the
    /// rename held in `edit.unparsed` (the record's level unchanged). What
    /// `parseUnparsed(_:until:renamedTo:)` leaves, once parsing reaches the
    /// field. Its caller has checked that `newKey` is a key the rewriter
    /// added (on no field of the archive) and on no field of the edit, and
    /// that no rename is held yet. False, with nothing changed, when no
    /// unparsed field has `key`.
    public func holdRename(_ edit: inout RecordEdit, of key: UInt32, to newKey: UInt32) -> Bool {
        let u = edit.unparsed
        var pos = u.start
        while pos < u.end, let f = reader._field(at: pos, limit: u.end) {
            if f.key == key {
                edit.unparsed.renamed = EditedField(key: newKey, rawTag: f.rawTag, source: .archive, originalKey: f.key,
                                                    payload: f.payload, start: pos, end: f.end)
                return true
            }
            pos = f.end
        }
        return false
    }

    /// A value as the archive document would hold it (for reads during an edit).
    public func value(_ f: EditedField, _ edit: RecordEdit) -> ArchiveValue {
        switch f.source {
        case .archive: return ArchiveDocument.value(of: f.archiveField, in: reader)
        case .value: return edit.values[f.payload]
        case .scalar:
            let bits = UInt64(UInt(bitPattern: f.payload))
            switch f.rawTag {
            case ValueTag.int.rawValue: return .int(Int64(bitPattern: bits))
            case ValueTag.double.rawValue: return .double(Double(bitPattern: bits))
            default: return .bool(f.rawTag == ValueTag.boolTrue.rawValue)
            }
        case .level: return .record(edit.levels[f.payload].map { ArchiveEntry(key: keyName($0.key), value: value($0, edit)) })
        }
    }

    /// An int value, without building an ArchiveValue.
    @inlinable public func int(_ f: EditedField, _ edit: RecordEdit) -> Int64 {
        switch f.source {
        case .archive: return reader.int(f.archiveField)
        case .value: if case .int(let v) = edit.values[f.payload] { return v }; return 0
        case .scalar: return Int64(f.payload)
        case .level: return 0
        }
    }

    /// Enters an archive field holding a nested record: its fields become
    /// a new level of the edit, whose index is returned.
    public func enter(_ f: EditedField, _ edit: inout RecordEdit) -> Int {
        let level = edit.addLevel()
        appendFields(in: reader.recordFields(f.archiveField), to: &edit.levels[level])
        return level
    }

    /// The content of an archive string or bytes value (valid while the
    /// reader lives).
    public func bytes(_ f: EditedField) -> UnsafeRawBufferPointer { reader.bytes(f.archiveField) }

    // MARK: - Replacing records

    /// Replaces the fields of record r with the edit's and its class version
    /// with `version`. Records are replaced in increasing order, each once.
    /// - Throws: `.state` for a record out of order or a value an edit
    ///   cannot write; `.limit` when the record's fields exceed maxArchiveBytes.
    public func replace(record r: Int, with edit: RecordEdit, version: UInt32) throws(WriteFailure) {
        var edit = edit
        try replace(record: r, editing: &edit, version: version)
    }

    /// `replace(record:with:version:)` reading the edit where it is (the
    /// migration editor's, a class property: passed by value it is copied,
    /// its arrays retained and released, for every record).
    public func replace(record r: Int, editing edit: inout RecordEdit, version: UInt32) throws(WriteFailure) {
        guard r >= 0 && r < reader.recordCount, patches.last.map({ $0.record < r }) ?? true else {
            throw .state("record \(r) is replaced out of order")
        }
        if patches.isEmpty {
            // Room for every record from here on edited and an eighth larger,
            // so that the buffer is not copied as it grows (pages never
            // written are never touched), and for their entries.
            let rest = reader.byteCount - reader.fields(ofRecord: r).start
            patchBytes.reserve(rest + rest / 8 + 256)
            patches.reserveCapacity(reader.recordCount - r)
        }
        let start = patchBytes.count
        var kept = KeptReferences()
        let tail: Int
        do {
            tail = try append(level: 0, edit, to: &patchBytes, kept: &kept)
        } catch {
            patchBytes.truncate(to: start)
            throw error
        }
        guard patchBytes.count - start <= ArchiveLimits.maxArchiveBytes else {
            patchBytes.truncate(to: start)
            throw .limit("the record's fields take more than \(ArchiveLimits.maxArchiveBytes) bytes (RST_MAX_ARCHIVE_BYTES)")
        }
        patches.append((r, start, patchBytes.count, version, tail))
        if tail >= 0 { anyTail = true }
        // (The edit's own answer first: it is the usual one, and it needs no call.)
        if (!kept.broken && kept.count == edit.referenceFields) || reader.references(ofRecord: r).isEmpty {
            // a migration cannot add references: the original's (nil, not stored)
        } else {
            let start = patchRefBuffer.count
            references(level: 0, edit, into: &patchRefBuffer)
            if patchRefs.isEmpty { patchRefs.reserveCapacity(reader.recordCount - r + patches.count) }
            while patchRefs.count < patches.count - 1 { patchRefs.append(nil) }
            patchRefs.append(start..<patchRefBuffer.count)
        }
    }

    /// The references `replace` collected for patch j, nil when they are
    /// the original record's.
    private func collectedReferences(ofPatch j: Int) -> Range<Int>? {
        j < patchRefs.count ? patchRefs[j] : nil
    }

    /// Whether an edit kept every field of the original record that can
    /// hold references (object, object array, nested record), untouched and
    /// in their order — then its references are the original's. Noted by
    /// `append` as it writes the record's own level.
    struct KeptReferences {
        var count = 0, last = -1
        var broken = false

        @inline(__always) mutating func note(_ f: EditedField) {
            if f.source == .level { broken = true; return }        // an entered record: count them
            guard f.source == .archive && EditedField.mayHoldReferences(f.rawTag) else { return }
            if f.start <= last { broken = true }
            last = f.start
            count &+= 1
        }
    }

    /// Writes the fields of one level of the edit: runs of untouched archive
    /// fields as one copy each, every other field encoded from its source.
    /// Returns where the level's added tail starts in `out` — the fields
    /// after its last archive field (parsed or not), which the edit wrote —
    /// or -1 when its last field is the archive's.
    @discardableResult
    private func append(level: Int, _ edit: RecordEdit, to out: inout ByteSink, kept: inout KeptReferences) throws(WriteFailure) -> Int {
        var added = -1
        let base = archiveBase
        var runStart = -1, runEnd = -1          // archive bytes to copy as they are, not yet copied
        // The fields never parsed (level 0 of a lazy edit): one run of
        // untouched archive bytes at their place. Their references are
        // untouched and come after every parsed field's, so `kept` needs
        // no note of them.
        let tail = level == 0 ? edit.unparsed : UnparsedFields()
        /// An archive field written with a new key: its header, then its
        /// payload (the archive's bytes as they are) starting a run, so
        /// that the untouched fields after it (a renamed key followed by
        /// the rest of the record) go out in the same copy. The same
        /// bytes, in the same order: the run is copied before anything
        /// else is written.
        @inline(__always) func renamedField(key: UInt32, rawTag tag: UInt8, payload: Int, end: Int) {
            if key < 15 {
                out.byte(UInt8(truncatingIfNeeded: key << 4) | tag)
            } else {
                out.byte(0xF0 | tag)
                out.varint(UInt64(key - 15))
            }
            switch PayloadShape.of(rawTag: tag) {
            case .none, .zigzag, .recordIndex, .fixed64: break
            case .text, .bytes, .zigzagArray, .textArray, .fields, .recordIndexArray, .osText, .sealed, .future:
                out.varint(UInt64(end - payload))
            }
            runStart = payload; runEnd = end
        }
        @inline(__always) func tailRun() {
            added = -1
            // The bytes up to the renamed field (all of them when none is).
            let upTo = tail.renamedAt >= 0 ? tail.renamedAt : tail.end
            if runStart >= 0 && runEnd == tail.start {
                runEnd = upTo
            } else {
                if runStart >= 0 { out.bytes(base + runStart, runEnd - runStart) }
                runStart = tail.start; runEnd = upTo
            }
            guard tail.renamedAt >= 0 else { return }
            if runEnd > runStart { out.bytes(base + runStart, runEnd - runStart) }
            let f = tail.renamed
            renamedField(key: f.key, rawTag: f.rawTag, payload: f.payload, end: f.end)
            runEnd = tail.end
        }
        // The level reached through the outer array's buffer: borrowed from
        // it (the edit holds both arrays for the call), not retained and
        // released around the loop as `edit.levels[level]` was.
        try edit.levels.withUnsafeBufferPointer { (levels) throws(WriteFailure) in
        try levels[level].withUnsafeBufferPointer { (fields) throws(WriteFailure) in
            for (i, f) in fields.enumerated() {
                if _slowPath(i == tail.at && !tail.isEmpty) { tailRun() }
                kept.note(f)
                if f.source == .archive { added = -1 }
                if f.source == .archive && f.key == f.originalKey {
                    if runStart >= 0 && runEnd == f.start { runEnd = f.end; continue }
                    if runStart >= 0 { out.bytes(base + runStart, runEnd - runStart) }
                    runStart = f.start; runEnd = f.end
                    continue
                }
                if runStart >= 0 { out.bytes(base + runStart, runEnd - runStart); runStart = -1 }
                if f.source == .archive {
                    renamedField(key: f.key, rawTag: f.rawTag, payload: f.payload, end: f.end)
                    continue
                }
                if added < 0 { added = out.count }
                let tag = f.rawTag
                if f.key < 15 {
                    out.byte(UInt8(truncatingIfNeeded: f.key << 4) | tag)
                } else {
                    out.byte(0xF0 | tag)
                    out.varint(UInt64(f.key - 15))
                }
                switch f.source {
                case .archive: break                // written above
                case .level:
                    var inner = ByteSink()
                    defer { inner.release() }
                    var ignored = KeptReferences()          // only the record's own level counts
                    try append(level: f.payload, edit, to: &inner, kept: &ignored)
                    out.varint(UInt64(inner.count))
                    out.bytes(inner.written)
                case .value:
                    try appendPayload(edit.values[f.payload], to: &out)
                case .scalar:
                    switch tag {
                    case ValueTag.int.rawValue: out.varint(zigzag(Int64(f.payload)))
                    case ValueTag.double.rawValue:
                        withUnsafeBytes(of: UInt64(UInt(bitPattern: f.payload)).littleEndian) { out.bytes($0) }
                    default: break                  // a bool: the tag is the value
                    }
                }
            }
            if fields.count <= tail.at && !tail.isEmpty { tailRun() }
        }
        }
        if runStart >= 0 { out.bytes(base + runStart, runEnd - runStart) }
        return added
    }

    private func appendPayload(_ v: ArchiveValue, to out: inout ByteSink) throws(WriteFailure) {
        switch v {
        case .bool: break
        case .int(let x): out.varint(zigzag(x))
        case .double(let d):
            withUnsafeBytes(of: d.bitPattern.littleEndian) { out.bytes($0) }
        case .string(let s):
            var s = s
            s.withUTF8 { b in
                out.varint(UInt64(b.count))
                out.bytes(UnsafeRawBufferPointer(b))
            }
        case .bytes(let b), .osString(let b):
            out.varint(UInt64(b.count))
            b.withUnsafeBytes { out.bytes($0) }
        case .intArray(let a):
            var inner = ByteSink()
            defer { inner.release() }
            inner.varint(UInt64(a.count))
            for x in a { inner.varint(zigzag(x)) }
            out.varint(UInt64(inner.count))
            out.bytes(inner.written)
        case .stringArray(let a):
            var inner = ByteSink()
            defer { inner.release() }
            inner.varint(UInt64(a.count))
            for e in a {
                var e = e
                e.withUTF8 { b in
                    inner.varint(UInt64(b.count))
                    inner.bytes(UnsafeRawBufferPointer(b))
                }
            }
            out.varint(UInt64(inner.count))
            out.bytes(inner.written)
        case .record, .object, .objectArray, .unknown:
            throw .state("an edit cannot write a value of tag \(v.rawTag) (records are entered, references and future types kept)")
        }
    }

    // MARK: - The rebuilt archive

    /// The rebuilt archive, in a buffer from `UnsafeMutableRawPointer.allocate`
    /// (for `ArchiveReader(adopting:)`, which then owns it).
    /// - Throws: `.limit` when it would exceed maxArchiveBytes.
    public func encode() throws(WriteFailure) -> UnsafeMutableRawBufferPointer {
        try write(records: nil, addedTails: nil, loose: false).bytes
    }

    /// Where `write` put the string tables, relative to the original.
    struct Layout {
        var bytes: UnsafeMutableRawBufferPointer
        /// New offset − old offset of every original key, and of every name.
        var keyShift = 0, nameShift = 0
        /// Offsets of the added keys' bytes.
        var addedKeyStarts: [Int] = []
    }

    /// Writes the rebuilt archive; with `records`, also fills each record's
    /// index entry (the original's, with its new field range and version),
    /// and with `addedTails` (zeroed) where each edited record's added tail starts.
    ///
    /// `loose` (with `records`): the layout a rebuilt reader reads, not an
    /// archive. The header, the info and the key and name tables are
    /// written as for an archive; then the fields of the records no edit
    /// replaced (a run of records whose fields lie close together in one
    /// copy, the record headers between them included, never read again),
    /// then the edited records' new fields one after another, followed by
    /// 4 bytes where an archive has its checksum (none is computed). Each
    /// record's index entry says where its fields are, with an edited
    /// record's new version, and every reader lookup goes through the
    /// index, never through the records' own headers. A rewriter over such a reader (the sealed values'
    /// opening after migrations) reads it the same way: it reads the
    /// tables by their layout and the records through the index.
    /// Written instead of an archive, it spares every record a header and
    /// a copy of its fields, and the whole a checksum.
    func write(records: UnsafeMutablePointer<RecordInfo>?, addedTails: UnsafeMutablePointer<Int32>?, loose: Bool) throws(WriteFailure) -> Layout {
        let src = reader.archiveBytes
        let base = src.baseAddress!
        let n = reader.recordCount
        // Where the sections of the (validated) original start.
        var c = ArchiveCursor(base, at: ArchiveHeader.infoOffset)
        let limit = src.count - 4
        func skipString() throws(WriteFailure) {
            guard let len = c.length(limit) else { throw .state("the archive's layout changed") }
            c.skip(len)
        }
        func varint() throws(WriteFailure) -> Int {
            guard let v = c.varint(limit), v <= UInt64(Int32.max) else { throw .state("the archive's layout changed") }
            return Int(v)
        }
        for _ in 0..<3 { try skipString() }        // app_version, system_version, idiom
        c.skip(8)                                   // saved_at_ms
        _ = try varint()                            // object_count
        let infoEnd = c.pos
        let keyCount = try varint(), nameCount = try varint()
        guard keyCount == reader.keyCount, nameCount == reader.nameCount else { throw .state("the archive's layout changed") }
        let keysStart = c.pos
        // Where the key and name tables end: where their last string's
        // bytes end, as the validated reader has them (the strings follow
        // one another), instead of walking every string again (a name per
        // object: about 17 instructions each). Checked to fall in order
        // inside the archive all the same.
        @inline(__always) func end(of last: StrRef?, after start: Int) throws(WriteFailure) -> Int {
            guard let last else { return start }
            let e = Int(last.start) + Int(last.len)
            guard e > start && e <= limit else { throw .state("the archive's layout changed") }
            return e
        }
        let namesStart = try end(of: keyCount > 0 ? reader._keys[keyCount - 1] : nil, after: keysStart)
        let recordsStart = try end(of: nameCount > 0 ? reader._names[nameCount - 1] : nil, after: namesStart)

        var header = ArchiveHeader(reading: base)
        let oldFlags = header.flags
        let flags = oldFlags | ArchiveFormat.flagRecordVersions
        let carry = oldFlags & ArchiveFormat.flagRecordCarry != 0
        let addedBytes = addedKeys.reduce(0) { $0 + $1.count + 10 }
        // An upper bound: every record header grows by at most a version and
        // a longer fields_len (10 bytes each).
        guard patchBytes.count + addedBytes <= ArchiveLimits.maxArchiveBytes else {
            throw .limit("the archive would exceed \(ArchiveLimits.maxArchiveBytes) bytes (RST_MAX_ARCHIVE_BYTES)")
        }
        let capacity = src.count + patchBytes.count + addedBytes + 20 + n * 20
        let out = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        var o = 0
        @inline(__always) func put(_ from: UnsafeRawPointer, _ count: Int) {
            (out + o).copyMemory(from: from, byteCount: count)
            o += count
        }
        @inline(__always) func putVar(_ x: UInt64) { o += putVarint(out + o, x) }

        header.flags = flags
        o = ArchiveHeader.infoOffset                        // the header below, with total_len
        put(base + ArchiveHeader.infoOffset, infoEnd - ArchiveHeader.infoOffset)
        putVar(UInt64(keyCount + addedKeys.count))
        putVar(UInt64(nameCount))
        var layout = Layout(bytes: UnsafeMutableRawBufferPointer(start: out, count: 0))
        layout.keyShift = o - keysStart
        put(base + keysStart, namesStart - keysStart)
        layout.addedKeyStarts.reserveCapacity(addedKeys.count)
        for k in addedKeys {
            putVar(UInt64(k.count))
            layout.addedKeyStarts.append(o)
            k.withUnsafeBytes { put($0.baseAddress!, $0.count) }
        }
        layout.nameShift = o - namesStart
        put(base + namesStart, recordsStart - namesStart)
        if loose, let records {
            // The records no edit replaced: their fields copied, a run of
            // records whose fields lie close together (a record header
            // between them) in one copy, the bytes between included.
            records.update(from: reader._records, count: n)
            var copyFrom = -1, copyTo = -1, copyOut = 0
            var next = 0
            for r in 0..<n {
                if next < patches.count && patches[next].record == r { next += 1; continue }
                let fs = Int(records[r].fieldsStart), fe = Int(records[r].fieldsEnd)
                if copyFrom >= 0 && fs >= copyTo && fs - copyTo <= 64 {
                    copyTo = fe
                } else {
                    if copyFrom >= 0 { put(base + copyFrom, copyTo - copyFrom) }
                    copyFrom = fs; copyTo = fe; copyOut = o
                }
                let shift = copyOut - copyFrom
                records[r].fieldsStart = Int32(truncatingIfNeeded: fs + shift)
                records[r].fieldsEnd = Int32(truncatingIfNeeded: fe + shift)
            }
            if copyFrom >= 0 { put(base + copyFrom, copyTo - copyFrom) }
            // The replaced records' fields, as `replace` wrote them.
            let patchStart = o
            if patchBytes.count > 0 { put(UnsafeRawPointer(patchBytes.base!), patchBytes.count) }
            for patch in patches {
                let r = patch.record
                records[r].fieldsStart = Int32(truncatingIfNeeded: patchStart + patch.start)
                records[r].fieldsEnd = Int32(truncatingIfNeeded: patchStart + patch.end)
                records[r].version = patch.version
                if patch.tail >= 0 { addedTails?[r] = Int32(truncatingIfNeeded: patchStart + patch.tail) }
            }
        } else {
            var next = 0
            let patchBase = UnsafeRawPointer(patchBytes.base)
            for r in 0..<n {
                let parent = reader.parent(ofRecord: r)
                putVar(UInt64(reader.identifier(ofRecord: r)))
                putVar(UInt64(parent.map { r - $0 } ?? 0))
                putVar(UInt64(reader.className(ofRecord: r).map { $0 + 1 } ?? 0))
                var info = reader._records[r]
                if next < patches.count && patches[next].record == r {
                    let patch = patches[next]
                    next += 1
                    putVar(UInt64(patch.version))
                    if carry { putVar(UInt64(reader.carry(ofRecord: r))) }
                    putVar(UInt64(patch.end - patch.start))
                    info.fieldsStart = Int32(truncatingIfNeeded: o)
                    if patch.tail >= 0 { addedTails?[r] = Int32(truncatingIfNeeded: o + (patch.tail - patch.start)) }
                    if patch.end > patch.start { put(patchBase! + patch.start, patch.end - patch.start) }
                    info.version = patch.version
                } else {
                    putVar(UInt64(reader.version(ofRecord: r)))
                    if carry { putVar(UInt64(reader.carry(ofRecord: r))) }
                    let range = reader.fields(ofRecord: r)
                    putVar(UInt64(range.end - range.start))
                    info.fieldsStart = Int32(truncatingIfNeeded: o)
                    put(base + range.start, range.end - range.start)
                }
                info.fieldsEnd = Int32(truncatingIfNeeded: o)
                records?[r] = info
            }
        }
        let total = o + 4
        guard total <= ArchiveLimits.maxArchiveBytes else {
            out.deallocate()
            throw .limit("the archive would take \(total) bytes, more than \(ArchiveLimits.maxArchiveBytes) (RST_MAX_ARCHIVE_BYTES)")
        }
        header.length = UInt32(total)
        header.write(to: out)
        // The loose layout is no archive: no checksum is computed for it.
        let crc = loose && records != nil ? 0 : CRC32C.checksum(UnsafeRawBufferPointer(start: out, count: o))
        out.storeBytes(of: crc.littleEndian, toByteOffset: o, as: UInt32.self)
        layout.bytes = UnsafeMutableRawBufferPointer(start: out, count: total)
        return layout
    }

    // MARK: - The rebuilt archive's reader

    /// The rebuilt archive as a reader whose indexes are derived from the
    /// original reader's instead of validating the whole archive again:
    /// every part of it is either the validated original's, copied, or
    /// written by `replace` from edits the coder checked (keys, text,
    /// values per record, nesting) — so the result is valid by
    /// construction. With `verify` (debug builds, tests), the bytes are also
    /// validated from scratch and every index compared; a difference traps.
    /// - Throws: `.limit` when the archive would exceed maxArchiveBytes.
    public func rebuiltReader(verify: Bool) throws(WriteFailure) -> ArchiveReader {
        let n = reader.recordCount
        let st = ReaderStorage()                  // owns every allocation below, whatever happens
        st.sealedCount = reader._storage.sealedCount   // v1.2: copied values stay sealed
        if let c = reader._storage.carries {        // carry counts: the original's, unchanged
            st.carries = .allocate(capacity: max(1, n))
            st.carries!.initialize(from: c, count: n)
        }
        let records = UnsafeMutablePointer<RecordInfo>.allocate(capacity: max(1, n))
        st.records = records
        if anyTail {
            st.addedTails = .allocate(capacity: max(1, n))
            st.addedTails!.initialize(repeating: 0, count: max(1, n))
        }
        // The loose layout (`write`) whenever it fits the size limit with
        // room to spare; else an archive, which is smaller (and throws when
        // it does not fit either, as before).
        let loose = reader.byteCount + patchBytes.count + addedKeys.reduce(0) { $0 + $1.count + 10 } + 64 <= ArchiveLimits.maxArchiveBytes
        let layout = try write(records: records, addedTails: st.addedTails, loose: loose)
        st.bytes = layout.bytes.baseAddress
        let out = UnsafeRawPointer(layout.bytes.baseAddress!)

        // Keys: the original ones moved by keyShift, then the added ones; a
        // new hash index over all of them (the table is small).
        let oldKeys = reader.keyCount, kc = oldKeys + addedKeys.count
        let keys = UnsafeMutablePointer<StrRef>.allocate(capacity: max(1, kc))
        st.keys = keys
        for i in 0..<oldKeys {
            let r = reader._keys[i]
            keys[i] = StrRef(start: UInt32(Int(r.start) + layout.keyShift), len: r.len)
        }
        for (j, k) in addedKeys.enumerated() {
            keys[oldKeys + j] = StrRef(start: UInt32(layout.addedKeyStarts[j]), len: UInt32(k.count))
        }
        var keyIndex = HashIndex(capacityFor: kc)
        for i in 0..<kc {
            let r = keys[i], p = out + Int(r.start), len = Int(r.len)
            let h = hashBytes(p, len)
            let (_, slot) = keyIndex.find(h) { _ in false }
            keyIndex.insert(at: slot, h, UInt32(i))
        }
        st.keyIndex = keyIndex

        // Names: the same table, moved by nameShift; its hash index maps
        // hashes to name numbers, which did not change: copied.
        let nc = reader.nameCount
        let names = UnsafeMutablePointer<StrRef>.allocate(capacity: max(1, nc))
        st.names = names
        for i in 0..<nc {
            let r = reader._names[i]
            names[i] = StrRef(start: UInt32(Int(r.start) + layout.nameShift), len: r.len)
        }
        st.nameIndex = HashIndex(copying: reader._storage.nameIndex!)

        // References: the original's for every record, the edited ones'
        // collected by `replace`.
        let refStart = UnsafeMutablePointer<Int32>.allocate(capacity: n + 1)
        st.refStart = refStart
        var forward = false
        if patchRefs.isEmpty {
            // Every edited record kept its references: the original's
            // tables as they are (record indexes did not change).
            let total = Int(reader._refStart[n])
            let refs = UnsafeMutablePointer<Int32>.allocate(capacity: max(1, total))
            st.refs = refs
            refStart.update(from: reader._refStart, count: n + 1)
            refs.update(from: reader._refs, count: total)
            forward = reader.hasForwardReferences
        } else {
            var total = 0
            var next = 0
            for r in 0..<n {
                if next < patches.count && patches[next].record == r, let range = collectedReferences(ofPatch: next) {
                    total += range.count
                    next += 1
                } else {
                    if next < patches.count && patches[next].record == r { next += 1 }
                    total += Int(reader._refStart[r + 1] - reader._refStart[r])
                }
            }
            let refs = UnsafeMutablePointer<Int32>.allocate(capacity: max(1, total))
            st.refs = refs
            var k = 0
            next = 0
            for r in 0..<n {
                refStart[r] = Int32(k)
                if next < patches.count && patches[next].record == r, let range = collectedReferences(ofPatch: next) {
                    for j in range { refs[k] = patchRefBuffer[j]; k += 1 }
                    next += 1
                } else {
                    if next < patches.count && patches[next].record == r { next += 1 }
                    for t in reader.references(ofRecord: r) { refs[k] = t; k += 1 }
                }
                for j in Int(refStart[r])..<k where Int(refs[j]) >= r { forward = true }
            }
            refStart[n] = Int32(k)
        }

        let rebuilt = ArchiveReader(storage: st, info: reader.info, forward: forward,
                                    masks: (layout.bytes.count, kc, nc))
        if verify {
            // Loose: the archive a rewriter writes from the rebuilt reader,
            // validated from scratch, holds the same content record by
            // record. An archive: it validates, with the same indexes.
            let checked: ArchiveReader
            do {
                checked = loose ? try ArchiveReader(adopting: try ArchiveRewriter(reader: rebuilt).encode())
                                : try ArchiveReader(bytes: UnsafeRawBufferPointer(layout.bytes))
            } catch {
                preconditionFailure("the rebuilt archive does not validate: \(error)")
            }
            if let difference = loose ? rebuilt.contentDifference(checked) : rebuilt.indexDifference(checked) {
                preconditionFailure("the rebuilt archive's derived indexes differ from its validated ones: \(difference)")
            }
            if let r = rebuilt.misplacedAddedTail() {
                preconditionFailure("the rebuilt archive's added tail of record \(r) is not at one of its fields")
            }
        }
        return rebuilt
    }

    /// The object references of an edited record, in the validator's order
    /// (field order, nested records included, array elements in order).
    private func references(level: Int, _ edit: RecordEdit, into out: inout [Int32]) {
        let tail = level == 0 ? edit.unparsed : UnparsedFields()
        for (i, f) in edit.levels[level].enumerated() {
            if i == tail.at && !tail.isEmpty { tailReferences(tail, into: &out) }
            switch f.source {
            case .archive: archiveReferences(f.archiveField, into: &out)
            case .level: references(level: f.payload, edit, into: &out)
            case .value, .scalar: break
            }
        }
        if edit.levels[level].count <= tail.at && !tail.isEmpty { tailReferences(tail, into: &out) }
    }

    private func tailReferences(_ tail: UnparsedFields, into out: inout [Int32]) {
        reader.forEachField(in: ArchiveReader.FieldRange(start: tail.start, end: tail.end)) { archiveReferences($0, into: &out) }
    }

    private func archiveReferences(_ f: ArchiveReader.Field, into out: inout [Int32]) {
        switch f.tag {
        case .object?: out.append(Int32(truncatingIfNeeded: reader.objectRecord(f)))
        case .objectArray?: reader.forEachObjectArrayElement(f) { out.append(Int32(truncatingIfNeeded: $0)) }
        case .record?: reader.forEachField(in: reader.recordFields(f)) { archiveReferences($0, into: &out) }
        default: break
        }
    }
}

extension ArchiveReader {
    /// The first record whose added tail (`addedTail(ofRecord:)`) is not at
    /// the start of one of its own fields, nil when every one is. For checks
    /// of a rebuilt archive.
    public func misplacedAddedTail() -> Int? {
        for r in 0..<recordCount {
            guard let t = addedTail(ofRecord: r) else { continue }
            let range = fields(ofRecord: r)
            var pos = range.start
            while pos < t, let f = _field(at: pos, limit: range.end) { pos = f.end }
            if pos != t || t >= range.end { return r }
        }
        return nil
    }

    /// The first difference between what this reader reads and what
    /// another reads (sizes, the info, each record's identifier, parent,
    /// class, version, carry, field bytes and references, the key and name
    /// tables, every key and name looked up), nil when they read the same,
    /// wherever their bytes lie. For checks of a loose rebuilt reader
    /// against the archive written from it.
    public func contentDifference(_ o: ArchiveReader) -> String? {
        if recordCount != o.recordCount || keyCount != o.keyCount || nameCount != o.nameCount {
            return "sizes \((recordCount, keyCount, nameCount)) vs \((o.recordCount, o.keyCount, o.nameCount))"
        }
        if hasForwardReferences != o.hasForwardReferences { return "hasForwardReferences" }
        if info != o.info { return "info" }
        if let difference = stringTableDifference(o) { return difference }
        for r in 0..<recordCount {
            if identifier(ofRecord: r) != o.identifier(ofRecord: r) || parent(ofRecord: r) != o.parent(ofRecord: r)
                || className(ofRecord: r) != o.className(ofRecord: r) || version(ofRecord: r) != o.version(ofRecord: r)
                || carry(ofRecord: r) != o.carry(ofRecord: r) {
                return "record \(r)"
            }
            let a = fields(ofRecord: r), b = o.fields(ofRecord: r)
            if !archiveBytes[a.start..<a.end].elementsEqual(o.archiveBytes[b.start..<b.end]) { return "fields of record \(r)" }
            if !references(ofRecord: r).elementsEqual(o.references(ofRecord: r)) { return "references of record \(r)" }
        }
        return nil
    }

    /// The first key or name (same count on both) whose text differs, or
    /// that either reader's lookup does not find at its index.
    private func stringTableDifference(_ o: ArchiveReader) -> String? {
        for i in 0..<keyCount {
            let k = UInt32(i)
            if !keyBytes(k).elementsEqual(o.keyBytes(k)) || keyIndex(keyBytes(k)) != k || o.keyIndex(keyBytes(k)) != k { return "key \(i)" }
        }
        for i in 0..<nameCount {
            let k = UInt32(i)
            if !nameBytes(k).elementsEqual(o.nameBytes(k)) || nameIndex(nameBytes(k)) != k { return "name \(i)" }
        }
        return nil
    }

    /// The first difference between this reader's view of its archive and
    /// another's (sizes, records, strings, lookups, references), nil when
    /// they are the same. For checks of derived indexes.
    public func indexDifference(_ o: ArchiveReader) -> String? {
        if byteCount != o.byteCount || recordCount != o.recordCount || keyCount != o.keyCount || nameCount != o.nameCount {
            return "sizes \((byteCount, recordCount, keyCount, nameCount)) vs \((o.byteCount, o.recordCount, o.keyCount, o.nameCount))"
        }
        if !archiveBytes.elementsEqual(o.archiveBytes) { return "bytes" }
        if hasForwardReferences != o.hasForwardReferences { return "hasForwardReferences" }
        if info != o.info { return "info" }
        for r in 0..<recordCount {
            let a = _records[r], b = o._records[r]
            if a.identifier != b.identifier || a.parent != b.parent || a.classPlusOne != b.classPlusOne
                || a.fieldsStart != b.fieldsStart || a.fieldsEnd != b.fieldsEnd || a.version != b.version
                || carry(ofRecord: r) != o.carry(ofRecord: r) {
                return "record \(r)"
            }
            if !references(ofRecord: r).elementsEqual(o.references(ofRecord: r)) { return "references of record \(r)" }
        }
        if let difference = stringTableDifference(o) { return difference }
        return nil
    }
}
