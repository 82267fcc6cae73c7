// The validating parser behind ArchiveReader.init. Archives are untrusted:
// every length and count is checked against the bytes that remain before
// anything is allocated or read, arithmetic on archive data cannot trap, and
// nested records are parsed iteratively with an explicit stack of at most
// ArchiveLimits.maxRecordDepth + 1 frames.

@usableFromInline
struct StrRef {
    /// Offset of the first byte in the archive.
    @usableFromInline var start: UInt32
    @usableFromInline var len: UInt32
}

/// One record of the index, 24 bytes. A record's tree depth is known only
/// while validating (scratch), and its carry count is kept apart, only for
/// an archive that stores carry counts (`ReaderStorage.carries`): what a
/// restore keeps per record is what it reads.
@usableFromInline
struct RecordInfo {
    @usableFromInline var identifier: UInt32
    /// -1 for a root.
    @usableFromInline var parent: Int32
    /// 0: no class; else name index + 1.
    @usableFromInline var classPlusOne: UInt32
    @usableFromInline var fieldsStart: Int32
    @usableFromInline var fieldsEnd: Int32
    /// v1.1: the record's class version (0 in archives without versions).
    @usableFromInline var version: UInt32 = 0
}

/// Owns every allocation of a reader (and, while validating, the scratch
/// allocations, so that a failure anywhere frees everything).
@usableFromInline
final class ReaderStorage {
    var bytes: UnsafeMutableRawPointer?
    /// Set when `bytes` are held, not owned (a read-only mapping of a
    /// file): run instead of freeing them.
    var releaseBytes: (() -> Void)?
    var keys: UnsafeMutablePointer<StrRef>?
    var names: UnsafeMutablePointer<StrRef>?
    var keyIndex: HashIndex?
    var nameIndex: HashIndex?
    var records: UnsafeMutablePointer<RecordInfo>?
    var refStart: UnsafeMutablePointer<Int32>?
    var refs: UnsafeMutablePointer<Int32>?
    /// Carried records: each record's carry count (0 live; 1 + saves left),
    /// only when the archive stores them (header flag 2); else nil: all 0.
    var carries: UnsafeMutablePointer<UInt32>?
    /// An archive rebuilt after migrations (`ArchiveRewriter.rebuiltReader`):
    /// per record, where the fields its migration added at its end start
    /// (a byte offset of the archive), 0 when it has none; nil for any other
    /// archive. Never read from an archive's bytes.
    var addedTails: UnsafeMutablePointer<Int32>?
    // Scratch, freed when validation ends.
    var nameFlags: UnsafeMutablePointer<UInt8>?
    /// Each record's tree depth (a root is 0), for the depth limit.
    var depths: UnsafeMutablePointer<Int32>?
    var pathIndex: HashIndex?
    var keyStack: UnsafeMutablePointer<UInt32>?
    var frames: UnsafeMutablePointer<Frame>?
    /// v1.2: sealed values seen (tag 12).
    var sealedCount = 0

    init() {}

    func freeScratch() {
        nameFlags?.deallocate(); nameFlags = nil
        pathIndex?.release(); pathIndex = nil
        keyStack?.deallocate(); keyStack = nil
        frames?.deallocate(); frames = nil
        depths?.deallocate(); depths = nil
    }

    deinit {
        if let releaseBytes { releaseBytes() } else { bytes?.deallocate() }
        keys?.deallocate()
        names?.deallocate()
        keyIndex?.release()
        nameIndex?.release()
        records?.deallocate()
        refStart?.deallocate()
        refs?.deallocate()
        carries?.deallocate()
        addedTails?.deallocate()
        freeScratch()
    }
}

struct Validator {
    /// Where parsing is (ArchiveCursor: bounded reads).
    var cursor: ArchiveCursor
    /// Total bytes.
    let n: Int
    /// Where the checksum starts.
    let end: Int
    let st: ReaderStorage

    var b: UnsafeRawPointer { @inline(__always) get { cursor.base } }
    var pos: Int {
        @inline(__always) get { cursor.pos }
        @inline(__always) set { cursor.pos = newValue }
    }

    var keyCount = 0
    var nameCount = 0
    var objectCount = 0
    var keys: UnsafeMutablePointer<StrRef>
    var names: UnsafeMutablePointer<StrRef>
    var nameFlags: UnsafeMutablePointer<UInt8>
    var records: UnsafeMutablePointer<RecordInfo>
    var refStart: UnsafeMutablePointer<Int32>
    var refs: UnsafeMutablePointer<Int32>
    var refCount = 0
    var refCap = 0
    var forward = false
    var firstRecordAt = 0
    /// v1.1: records store their class version (header flag).
    var versioned = false
    /// Carried records: records store their carry count (header flag).
    var carrying = false

    // Error context.
    var record = -1
    var pathKnown = false
    var curKey: UInt32? = nil
    var depth = 0

    // Field parsing: the key stack of open frames and the frames themselves.
    var keyStack: UnsafeMutablePointer<UInt32>
    var keyTop = 0
    var keyCap = 0
    let frames: UnsafeMutablePointer<Frame>
    var bigSets = [Set<UInt32>](repeating: [], count: ArchiveLimits.maxRecordDepth + 1)

    init(bytes: UnsafeRawPointer, count: Int, storage: ReaderStorage) {
        cursor = ArchiveCursor(bytes, at: ArchiveHeader.infoOffset)
        n = count
        end = count - 4
        st = storage
        // Placeholders until the real sizes are known (freed with the storage).
        func one<T>(_ t: T.Type) -> UnsafeMutablePointer<T> { UnsafeMutablePointer<T>.allocate(capacity: 1) }
        keys = one(StrRef.self); st.keys = keys
        names = one(StrRef.self); st.names = names
        nameFlags = one(UInt8.self); st.nameFlags = nameFlags
        records = one(RecordInfo.self); st.records = records
        refStart = one(Int32.self); st.refStart = refStart
        refs = one(Int32.self); st.refs = refs
        refCap = 1
        keyCap = 64
        keyStack = UnsafeMutablePointer<UInt32>.allocate(capacity: keyCap); st.keyStack = keyStack
        frames = UnsafeMutablePointer<Frame>.allocate(capacity: ArchiveLimits.maxRecordDepth + 1)
        st.frames = frames
    }

    // MARK: - Entry point

    /// Validates `input` completely and returns the storage of a reader.
    /// `adopted`: storage that already owns `input` (ArchiveReader(adopting:)):
    /// the bytes are validated where they are, without the private copy.
    static func runKeepingState(_ input: UnsafeRawBufferPointer, adopted: ReaderStorage? = nil) throws(ArchiveFailure) -> (ReaderStorage, ArchiveInfo, Validator) {
        let count = input.count
        let fixed = ArchiveFormat.fixedHeaderBytes
        guard count >= fixed, let src = input.baseAddress else {
            throw ArchiveFailure.corrupt("archive is too short: \(count) bytes, but the fixed header alone is \(fixed) bytes, at byte 0")
        }
        if let i = ArchiveHeader.magicMismatch(src) {
            throw ArchiveFailure.corrupt("not a Restoration archive: wrong magic bytes at byte \(ArchiveHeader.magicOffset + i)")
        }
        let header = ArchiveHeader(reading: src)
        let version = header.version
        if version != ArchiveFormat.version {
            throw ArchiveFailure.version("unsupported format version \(version) at byte \(ArchiveHeader.versionOffset) (this reader supports version \(ArchiveFormat.version))")
        }
        let flags = header.flags
        if flags & ~ArchiveFormat.knownFlags != 0 {
            throw ArchiveFailure.version("unknown flags 0x\(String(flags & ~ArchiveFormat.knownFlags, radix: 16)) at byte \(ArchiveHeader.flagsOffset) (this reader knows 0x\(String(ArchiveFormat.knownFlags, radix: 16)): record versions)")
        }
        let total = Int(header.length)
        let lengthAt = ArchiveHeader.lengthOffset
        if total > count {
            throw ArchiveFailure.corrupt("archive is truncated: total_len at byte \(lengthAt) says \(total) bytes, but there are only \(count)")
        }
        if total < count {
            throw ArchiveFailure.corrupt("archive has trailing bytes: total_len at byte \(lengthAt) says \(total) bytes, but there are \(count)")
        }
        if count > ArchiveLimits.maxArchiveBytes {
            throw ArchiveFailure.limit("archive is \(count) bytes, more than the limit of \(ArchiveLimits.maxArchiveBytes) bytes, at byte \(lengthAt)")
        }
        if count < ArchiveFormat.minimumArchiveBytes {
            throw ArchiveFailure.corrupt("archive is truncated: \(count) bytes is shorter than the smallest archive (\(ArchiveFormat.minimumArchiveBytes) bytes) at byte \(count)")
        }

        // Own the bytes: everything below reads memory the reader owns only
        // (a buffer of the caller's could change after it was checked).
        let st: ReaderStorage
        let copy: UnsafeRawPointer
        let computed: UInt32
        if let adopted {
            // Already ours (read from a file into a buffer nobody else holds).
            st = adopted
            copy = src
            computed = CRC32C.update(0, src, count - 4)
        } else {
            st = ReaderStorage()
            let mine = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 16)
            st.bytes = mine
            // Copy and checksum in one pass.
            computed = CRC32C.copy(0, from: src, to: mine, count - 4)
            (mine + (count - 4)).copyMemory(from: src + (count - 4), byteCount: 4)
            copy = UnsafeRawPointer(mine)
        }
        let stored = UInt32(littleEndian: copy.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self))
        if stored != computed {
            throw ArchiveFailure.corrupt("checksum mismatch: the archive stores 0x\(hex32(stored)) at byte \(count - 4), but its bytes 0..<\(count - 4) give 0x\(hex32(computed))")
        }

        var v = Validator(bytes: copy, count: count, storage: st)
        v.versioned = flags & ArchiveFormat.flagRecordVersions != 0
        v.carrying = flags & ArchiveFormat.flagRecordCarry != 0
        let info = try v.parse()
        st.freeScratch()
        return (st, info, v)
    }

    // MARK: - Errors

    func u8(_ i: Int) -> UInt8 { b.load(fromByteOffset: i, as: UInt8.self) }

    func string(_ r: StrRef) -> String {
        String(decoding: UnsafeRawBufferPointer(start: b + Int(r.start), count: Int(r.len)), as: UTF8.self)
    }

    /// "record 12 (Tabs/Nav/List), key 'scroll': " or "" outside the records.
    func context() -> String {
        guard record >= 0 else { return "" }
        var s = "record \(record)"
        if pathKnown { s += " (\(recordPath(record)))" }
        if let k = curKey {
            var parts: [String] = []
            if depth >= 1 { for d in 0..<depth { parts.append(string(keys[Int(frames[d].key)])) } }
            parts.append(string(keys[Int(k)]))
            s += ", key '\(parts.joined(separator: "."))'"
        }
        return s + ": "
    }

    func recordPath(_ r: Int) -> String {
        var comps: [String] = []
        var i = r
        var steps = 0
        while i >= 0 && steps < 64 {
            comps.append(string(names[Int(records[i].identifier)]))
            i = Int(records[i].parent)
            steps += 1
        }
        if i >= 0 { comps.append("...") }
        return comps.reversed().joined(separator: "/")
    }

    func corrupt(_ what: String, at offset: Int) -> ArchiveFailure {
        .corrupt(context() + what + " at byte \(offset)")
    }

    func limit(_ what: String, at offset: Int) -> ArchiveFailure {
        .limit(context() + what + " at byte \(offset)")
    }

    // MARK: - Primitives

    /// The next varint (the shared `readVarint`), or a CORRUPT failure
    /// naming `what` and why it could not be read.
    @inline(__always)
    mutating func varint(_ limit: Int, _ what: StaticString) throws(ArchiveFailure) -> UInt64 {
        if let v = cursor.varint(limit) { return v }
        throw varintFailure(limit, what)
    }

    @inline(never)
    func varintFailure(_ limit: Int, _ what: StaticString) -> ArchiveFailure {
        switch cursor.varintProblem(limit) {
        case .cutOff:
            return corrupt("\(what) is cut off by the end of \(limit == end ? "the records" : "its enclosing value")", at: pos)
        case .tooLong: return corrupt("\(what) is a varint longer than 10 bytes", at: pos)
        case .overflow: return corrupt("\(what) overflows 64 bits", at: pos)
        }
    }

    /// A varint byte length that must fit in the bytes before `limit`.
    @inline(__always)
    mutating func length(_ limit: Int, _ what: StaticString) throws(ArchiveFailure) -> Int {
        let at = pos
        let v = try varint(limit, what)
        if v > UInt64(cursor.remaining(limit)) {
            throw corrupt("\(what) \(v) runs past the end of \(limit == end ? "the records" : "its enclosing value") (\(cursor.remaining(limit)) bytes remain)", at: at)
        }
        return Int(truncatingIfNeeded: v)
    }

    /// Checks `len` bytes at `pos` as text (UTF-8 without NUL). Mutating
    /// (it changes nothing) so that it reads the cursor in place: as a
    /// non-mutating method, called from the parsing loops, the optimizer
    /// copied the whole validator (224 bytes) to read two words.
    @inline(__always)
    mutating func checkText(_ len: Int, _ what: StaticString) throws(ArchiveFailure) {
        let bad = utf8Violation(cursor.base + cursor.pos, len)
        if bad >= 0 { throw textError(bad, what) }
    }

    /// An OS string: any bytes but NUL.
    func checkNoNUL(_ len: Int) throws(ArchiveFailure) {
        var i = 0
        while i < len {
            if u8(pos &+ i) == 0 { throw corrupt("OS string contains a NUL byte", at: pos &+ i) }
            i &+= 1
        }
    }

    @inline(never)
    func textError(_ bad: Int, _ what: StaticString) -> ArchiveFailure {
        let at = pos + bad
        if u8(at) == 0 { return corrupt("\(what) contains a NUL byte", at: at) }
        return corrupt("\(what) is not valid UTF-8", at: at)
    }

    // MARK: - Header, info, string tables

    mutating func parse() throws(ArchiveFailure) -> ArchiveInfo {
        let app = try infoString("app_version")
        let sys = try infoString("system_version")
        let idiom = try infoString("idiom")
        if cursor.remaining(end) < 8 { throw corrupt("saved_at_ms is cut off by the checksum", at: pos) }
        let savedAt = Int64(littleEndian: b.loadUnaligned(fromByteOffset: pos, as: Int64.self))
        cursor.skip(8)
        let ocAt = pos
        let oc = try varint(end, "object_count")
        if oc > UInt64(ArchiveLimits.maxObjects) {
            throw limit("object_count \(oc) is more than the limit of \(ArchiveLimits.maxObjects) objects", at: ocAt)
        }
        objectCount = Int(oc)
        try parseStrings()
        try parseRecords()
        return ArchiveInfo(formatVersion: 1, appVersion: app, systemVersion: sys, idiom: idiom,
                           savedAtMs: savedAt, objectCount: UInt64(objectCount))
    }

    mutating func infoString(_ what: StaticString) throws(ArchiveFailure) -> String {
        let at = pos
        let len = try varint(end, what)
        if len > UInt64(ArchiveLimits.maxInfoStringBytes) {
            throw limit("\(what) is \(len) bytes, more than the limit of \(ArchiveLimits.maxInfoStringBytes)", at: at)
        }
        if len > UInt64(cursor.remaining(end)) {
            throw corrupt("\(what) length \(len) runs past the end of the archive (\(cursor.remaining(end)) bytes remain)", at: at)
        }
        let l = Int(len)
        try checkText(l, what)
        let s = String(decoding: cursor.bytes(l), as: UTF8.self)
        cursor.skip(l)
        return s
    }

    mutating func parseStrings() throws(ArchiveFailure) {
        let kcAt = pos
        let kc = try varint(end, "key_count")
        // Every entry takes at least one byte.
        if kc > UInt64(cursor.remaining(end)) {
            throw corrupt("key_count \(kc) cannot fit in the \(cursor.remaining(end)) bytes that remain", at: kcAt)
        }
        let ncAt = pos
        let nc = try varint(end, "name_count")
        let room = UInt64(cursor.remaining(end))
        if kc > room {
            throw corrupt("key_count \(kc) cannot fit in the \(room) bytes that remain", at: kcAt)
        }
        if nc > room - kc {
            throw corrupt("name_count \(nc) cannot fit in the \(cursor.remaining(end)) bytes that remain after \(kc) keys", at: ncAt)
        }
        keyCount = Int(kc)
        nameCount = Int(nc)

        keys.deallocate(); st.keys = nil
        keys = UnsafeMutablePointer<StrRef>.allocate(capacity: max(1, keyCount)); st.keys = keys
        names.deallocate(); st.names = nil
        names = UnsafeMutablePointer<StrRef>.allocate(capacity: max(1, nameCount)); st.names = names
        nameFlags.deallocate(); st.nameFlags = nil
        nameFlags = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, nameCount)); st.nameFlags = nameFlags
        st.keyIndex = HashIndex(capacityFor: keyCount)
        st.nameIndex = HashIndex(capacityFor: nameCount)
        // Local copies of the indexes (same memory, owned by the storage).
        var keyIndex = st.keyIndex.unsafelyUnwrapped
        var nameIndex = st.nameIndex.unsafelyUnwrapped

        for i in 0..<keyCount {
            let at = pos
            let len = try varint(end, "key length")
            if len == 0 { throw corrupt("key \(i) is empty", at: at) }
            if len > UInt64(ArchiveLimits.maxKeyBytes) {
                throw limit("key \(i) is \(len) bytes, more than the limit of \(ArchiveLimits.maxKeyBytes)", at: at)
            }
            if len > UInt64(cursor.remaining(end)) {
                throw corrupt("key \(i) length \(len) runs past the end of the archive", at: at)
            }
            let l = Int(len)
            try checkText(l, "key")
            let r = StrRef(start: UInt32(pos), len: UInt32(l))
            keys[i] = r
            if let dup = insert(&keyIndex, keys, i) {
                throw corrupt("key \(i) '\(string(r))' repeats key \(dup) in the key table", at: at)
            }
            cursor.skip(l)
        }
        let maxName = max(ArchiveLimits.maxIdentifierBytes, ArchiveLimits.maxClassNameBytes)
        for i in 0..<nameCount {
            let at = pos
            let len = try varint(end, "name length")
            if len == 0 { throw corrupt("name \(i) is empty", at: at) }
            if len > UInt64(maxName) {
                throw limit("name \(i) is \(len) bytes, more than the limit of \(maxName)", at: at)
            }
            if len > UInt64(cursor.remaining(end)) {
                throw corrupt("name \(i) length \(len) runs past the end of the archive", at: at)
            }
            let l = Int(len)
            var slash: UInt8 = 0
            if let (w1, w2) = shortTextWords(b + pos, l, readable: n &- pos),
               wordIsASCIIWithoutNUL(w1) && wordIsASCIIWithoutNUL(w2) {
                // Short ASCII text (most names): checked and searched for '/' a word at a time.
                slash = wordHasByte(w1, 0x2F) || wordHasByte(w2, 0x2F) ? 1 : 0
            } else {
                try checkText(l, "name")
                for j in 0..<l where u8(pos + j) == 0x2F { slash = 1; break }
            }
            let r = StrRef(start: UInt32(pos), len: UInt32(l))
            names[i] = r
            nameFlags[i] = slash
            cursor.skip(l)
        }
        // A tight second pass, so that the cache misses of the hash table overlap.
        for i in 0..<nameCount {
            if let dup = insert(&nameIndex, names, i) {
                let r = names[i]
                throw corrupt("name \(i) '\(string(r))' repeats name \(dup) in the name table", at: Int(r.start) - 1)
            }
        }
    }

    /// Inserts string i into a hash index; returns the index of an equal
    /// string already there.
    func insert(_ index: inout HashIndex, _ strs: UnsafeMutablePointer<StrRef>, _ i: Int) -> Int? {
        let r = strs[i]
        let p = b + Int(r.start)
        let n = Int(r.len)
        let h = hashBytes(p, n)
        let b = self.b
        let (found, slot) = index.find(h) { e in
            let o = strs[Int(e)]
            return Int(o.len) == n && bytesEqual(b + Int(o.start), p, n)
        }
        if let f = found { return Int(f) }
        index.insert(at: slot, h, UInt32(i))
        return nil
    }

    // MARK: - Records

    mutating func parseRecords() throws(ArchiveFailure) {
        // Every record takes at least 4 bytes (four varints).
        let remaining = cursor.remaining(end)
        if objectCount > remaining / 4 {
            throw corrupt("object_count \(objectCount) needs at least \(objectCount * 4) bytes of records, but only \(remaining) remain", at: pos)
        }
        records.deallocate(); st.records = nil
        records = UnsafeMutablePointer<RecordInfo>.allocate(capacity: max(1, objectCount)); st.records = records
        refStart.deallocate(); st.refStart = nil
        refStart = UnsafeMutablePointer<Int32>.allocate(capacity: objectCount + 1); st.refStart = refStart
        refCap = max(16, min(objectCount, remaining / 2))
        refs.deallocate(); st.refs = nil
        refs = UnsafeMutablePointer<Int32>.allocate(capacity: refCap); st.refs = refs
        let depths = UnsafeMutablePointer<Int32>.allocate(capacity: max(1, objectCount)); st.depths = depths
        let carries: UnsafeMutablePointer<UInt32>? = carrying ? .allocate(capacity: max(1, objectCount)) : nil
        st.carries = carries

        // Which names were used as an identifier: a path can repeat only
        // if an identifier does (a path is its parent and identifier).
        let usedWords = (nameCount &+ 63) &>> 6
        let used = UnsafeMutablePointer<UInt64>.allocate(capacity: max(1, usedWords))
        used.initialize(repeating: 0, count: usedWords)
        defer { used.deallocate() }
        var identifierRepeats = false

        firstRecordAt = pos
        for i in 0..<objectCount {
            record = i
            pathKnown = false
            curKey = nil
            depth = 0
            let idAt = pos
            if pos >= end {
                throw corrupt("object_count says \(objectCount) records, but the records end after \(i)", at: pos)
            }
            let ident = try varint(end, "identifier")
            if ident >= UInt64(nameCount) {
                throw corrupt("identifier name index \(ident) is out of range (name_count \(nameCount))", at: idAt)
            }
            let identName = names[Int(ident)]
            let usedBit = UInt64(1) &<< (ident & 63)
            if used[Int(ident &>> 6)] & usedBit != 0 { identifierRepeats = true } else { used[Int(ident &>> 6)] |= usedBit }
            if nameFlags[Int(ident)] != 0 {
                throw corrupt("identifier '\(string(identName))' contains '/'", at: Int(identName.start))
            }
            if Int(identName.len) > ArchiveLimits.maxIdentifierBytes {
                throw limit("identifier is \(identName.len) bytes, more than the limit of \(ArchiveLimits.maxIdentifierBytes)", at: idAt)
            }
            let pdAt = pos
            let delta = try varint(end, "parent_delta")
            if delta > UInt64(i) {
                throw corrupt("parent_delta \(delta) points before the first record", at: pdAt)
            }
            let parent = delta == 0 ? -1 : i - Int(delta)
            let clAt = pos
            let cls = try varint(end, "class")
            if cls > UInt64(nameCount) {
                throw corrupt("class name index \(cls - 1) is out of range (name_count \(nameCount))", at: clAt)
            }
            if cls > 0 && Int(names[Int(cls - 1)].len) > ArchiveLimits.maxClassNameBytes {
                throw limit("class name is more than \(ArchiveLimits.maxClassNameBytes) bytes", at: clAt)
            }
            var classVersion: UInt32 = 0
            if versioned {
                let vAt = pos
                let v = try varint(end, "class version")
                if v > UInt64(UInt32.max) {
                    throw corrupt("class version \(v) does not fit in 32 bits", at: vAt)
                }
                classVersion = UInt32(v)
            }
            var carry: UInt32 = 0
            if carrying {
                let cAt = pos
                let v = try varint(end, "carry count")
                if v > UInt64(UInt32.max) {
                    throw corrupt("carry count \(v) does not fit in 32 bits", at: cAt)
                }
                carry = UInt32(v)
            }
            let treeDepth = parent < 0 ? 0 : Int(depths[parent]) + 1
            records[i] = RecordInfo(identifier: UInt32(ident), parent: Int32(parent),
                                    classPlusOne: UInt32(cls), fieldsStart: 0, fieldsEnd: 0, version: classVersion)
            depths[i] = Int32(truncatingIfNeeded: treeDepth)
            carries?[i] = carry
            // Depths run from 0 (a root) to maxTreeDepth - 1, as the engine registers them.
            if treeDepth >= ArchiveLimits.maxTreeDepth {
                throw limit("the parent chain is \(treeDepth + 1) records long, more than the limit of \(ArchiveLimits.maxTreeDepth) (RST_MAX_TREE_DEPTH)", at: pdAt)
            }
            pathKnown = true

            let flAt = pos
            let fl = try varint(end, "fields_len")
            if fl > UInt64(cursor.remaining(end)) {
                throw corrupt("fields_len \(fl) runs past the end of the records (\(cursor.remaining(end)) bytes remain)", at: flAt)
            }
            let fieldsStart = pos
            let fieldsEnd = pos + Int(fl)
            records[i].fieldsStart = Int32(fieldsStart)
            records[i].fieldsEnd = Int32(fieldsEnd)
            refStart[i] = Int32(refCount)
            try parseFields(fieldsEnd, record: i)
        }
        refStart[objectCount] = Int32(refCount)
        record = -1
        if pos != end {
            throw corrupt("the \(objectCount) records of object_count end at byte \(pos), but the checksum starts at byte \(end): \(cursor.remaining(end)) stray bytes", at: pos)
        }

        // Duplicate paths: (parent, identifier) pairs seen twice. Names are
        // unique in the name table, so equal identifiers have equal indexes;
        // when no identifier repeats, no path can (the pass is skipped).
        // A tight separate pass, so that the cache misses overlap.
        if !identifierRepeats {
            record = -1
            return
        }
        st.pathIndex = HashIndex(capacityFor: objectCount)
        var paths = st.pathIndex.unsafelyUnwrapped
        defer { st.pathIndex = paths }
        let records = self.records
        for i in 0..<objectCount {
            let rec = records[i]
            let pk = (UInt64(UInt32(bitPattern: rec.parent)) << 32) | UInt64(rec.identifier)
            let h = UInt32(truncatingIfNeeded: (pk &* 0x9E37_79B9_7F4A_7C15) >> 32)
            let (found, slot) = paths.find(h) { e in
                let o = records[Int(e)]
                return o.parent == rec.parent && o.identifier == rec.identifier
            }
            if found != nil {
                record = i
                pathKnown = true
                throw corrupt("the path is already used by an earlier record", at: recordStart(i))
            }
            paths.insert(at: slot, h, UInt32(i))
        }
        record = -1
    }

    /// Where record i starts (for messages): where record i - 1 ends.
    func recordStart(_ i: Int) -> Int {
        i == 0 ? firstRecordAt : Int(records[i - 1].fieldsEnd)
    }

    @inline(never)
    func duplicateKey(_ at: Int) -> ArchiveFailure {
        corrupt("the key appears twice in the same record", at: at)
    }

    @inline(never)
    mutating func growRefs() {
        let newCap = refCap * 2
        let p = UnsafeMutablePointer<Int32>.allocate(capacity: newCap)
        p.initialize(from: refs, count: refCount)
        refs.deallocate()
        refs = p
        st.refs = p
        refCap = newCap
    }

    @inline(never)
    mutating func growKeyStack() {
        let newCap = keyCap * 2
        let p = UnsafeMutablePointer<UInt32>.allocate(capacity: newCap)
        p.initialize(from: keyStack, count: keyTop)
        keyStack.deallocate()
        keyStack = p
        st.keyStack = p
        keyCap = newCap
    }

    @inline(never)
    mutating func makeBig(_ d: Int, _ keyStart: Int) {
        var set = bigSets[d]
        bigSets[d] = []
        set.removeAll(keepingCapacity: true)
        for j in keyStart..<keyTop { set.insert(keyStack[j]) }
        bigSets[d] = set
    }

    @inline(never)
    mutating func insertBig(_ d: Int, _ k: UInt32) -> Bool {
        bigSets[d].insert(k).inserted
    }

    @inline(never)
    mutating func clearBig(_ d: Int) {
        bigSets[d].removeAll(keepingCapacity: true)
    }

    /// Parses the fields of record `r`, which run from `pos` to `fieldsEnd`,
    /// nested records included. The current frame lives in locals; the
    /// frames around it are saved in `frames` (at most maxRecordDepth).
    mutating func parseFields(_ fieldsEnd: Int, record r: Int) throws(ArchiveFailure) {
        var d = 0                 // nesting depth of the current frame
        var fe = fieldsEnd        // where the current frame ends
        var fks = 0               // the current frame's first key in keyStack
        var big = false           // the current frame's keys are in bigSets[d]
        var seen: UInt64 = 0      // the current frame's keys below 64, as bits
        keyTop = 0
        let kc = UInt64(keyCount)
        let frames = self.frames
        while true {
            if pos >= fe {
                if d == 0 { break }
                if big { clearBig(d) }
                keyTop = fks
                d &-= 1
                depth = d
                let f = frames[d]
                fe = f.end
                fks = f.keyStart
                big = f.big
                seen = f.seen
                continue
            }
            // Common fields first, with what the general way below would
            // change and nothing more: keys below 64 (from 15 on, of one
            // extension byte) and new, in a frame of fewer than 16 keys,
            // holding a bool, an int, a double, a short string or bytes,
            // or an object reference, read whole and valid. The state
            // lives in locals for the run of such fields, and is stored
            // once after it. A field that is anything else, or anything
            // wrong, ends the run with nothing changed for it and goes the
            // general way, which reads it from its start (every check and
            // message is there).
            // Every byte read is before `fe`, except the word loads (a
            // varint's end, short text), which are checked to lie within
            // the archive's n bytes.
            if !big {
                var p = pos
                var top = keyTop
                var sn = seen
                var rc = refCount
                var fw = forward
                var topLimit = min(keyCap, fks &+ 16)
                let refs = self.refs
                let refCap = self.refCap
                let oc = UInt64(objectCount)
                let n = self.n
                let keyStack = self.keyStack
                skim: while p < fe && top < topLimit {
                    let h = skimByte(b, p)
                    var key = UInt64(h &>> 4)
                    var q = p &+ 1
                    if key == 15 {
                        // A key from 15 to 63: 15 plus one byte.
                        key = skimExtendedKey(b, q, fe)
                        guard key < 64 else { break skim }
                        q &+= 1
                    }
                    let bit: UInt64 = 1 &<< key
                    guard key < kc && sn & bit == 0 else { break skim }
                    switch h & 0x0F {
                    case ValueTag.boolFalse.rawValue, ValueTag.boolTrue.rawValue:
                        break
                    case ValueTag.int.rawValue:
                        // The varint's end from one word when the archive
                        // has 8 bytes there (and the two after it for one
                        // of 9 or 10 bytes).
                        guard n &- q >= 8 else { break skim }
                        let stops = ~UInt64(littleEndian: b.loadUnaligned(fromByteOffset: q, as: UInt64.self)) & 0x8080_8080_8080_8080
                        var e = q &+ ((stops.trailingZeroBitCount &+ 1) &>> 3)
                        if stops == 0 {
                            e = longVarintEnd(b, q, readable: n &- q)
                            guard e != 0 else { break skim }
                        }
                        guard e <= fe else { break skim }
                        q = e
                    case ValueTag.double.rawValue:
                        guard fe &- q >= 8 else { break skim }
                        q &+= 8
                    case ValueTag.string.rawValue, ValueTag.bytes.rawValue:
                        guard q < fe else { break skim }
                        let len = Int(skimByte(b, q))
                        let s = q &+ 1
                        guard len < 0x80 && len <= fe &- s,
                              h & 0x0F == ValueTag.bytes.rawValue || isText(b + s, len, readable: n &- s) else { break skim }
                        q = s &+ len
                    case ValueTag.object.rawValue:
                        guard rc < refCap, let target = readVarint(b, &q, fe), target < oc else { break skim }
                        if target >= UInt64(r) { fw = true }
                        refs[rc] = Int32(truncatingIfNeeded: target)
                        rc &+= 1
                    case ValueTag.intArray.rawValue:
                        // Length and count of one byte; elements each found
                        // from one word (and one or two bytes past it);
                        // they must end exactly at the array's end.
                        guard q < fe else { break skim }
                        let len = Int(skimByte(b, q))
                        let s = q &+ 1
                        guard len < 0x80 && len <= fe &- s && len > 0 else { break skim }
                        let ce = s &+ len
                        var count = Int(skimByte(b, s))
                        var e = s &+ 1
                        guard count < 0x80 && count <= ce &- e else { break skim }
                        while count > 0 {
                            guard n &- e >= 8 else { break skim }
                            let stops = ~UInt64(littleEndian: b.loadUnaligned(fromByteOffset: e, as: UInt64.self)) & 0x8080_8080_8080_8080
                            if stops != 0 {
                                e &+= (stops.trailingZeroBitCount &+ 1) &>> 3
                            } else {
                                e = longVarintEnd(b, e, readable: n &- e)
                                guard e != 0 else { break skim }
                            }
                            count &-= 1
                        }
                        guard e == ce else { break skim }
                        q = ce
                    case ValueTag.record.rawValue:
                        // A nested record of one length byte: the frame
                        // opened as the general way opens it, and the run
                        // goes on inside it.
                        guard q < fe else { break skim }
                        let len = Int(skimByte(b, q))
                        let s = q &+ 1
                        guard len < 0x80 && len <= fe &- s && d < ArchiveLimits.maxRecordDepth else { break skim }
                        sn |= bit
                        keyStack[top] = UInt32(truncatingIfNeeded: key)
                        top &+= 1
                        frames[d] = Frame(end: fe, keyStart: fks, big: false, key: UInt32(truncatingIfNeeded: key), seen: sn)
                        d &+= 1
                        depth = d
                        fe = s &+ len
                        fks = top
                        sn = 0
                        topLimit = min(keyCap, fks &+ 16)
                        p = s
                        continue skim
                    default:
                        break skim
                    }
                    sn |= bit
                    keyStack[top] = UInt32(truncatingIfNeeded: key)
                    top &+= 1
                    p = q
                }
                pos = p
                keyTop = top
                seen = sn
                refCount = rc
                forward = fw
                if p >= fe { continue }
            }
            let fieldAt = pos
            let h = cursor.byte()
            curKey = nil
            var key = UInt64(h &>> 4)
            let tag = h & 0x0F
            if key == 15 {
                let ext = try varint(fe, "key index")
                if kc <= 15 || ext >= kc &- 15 {
                    throw corrupt("key index 15+\(ext) is out of range (key_count \(keyCount))", at: fieldAt)
                }
                key = ext &+ 15
            } else if key >= kc {
                throw corrupt("key index \(key) is out of range (key_count \(keyCount))", at: fieldAt)
            }
            let k = UInt32(truncatingIfNeeded: key)
            curKey = k

            // One value per key in a record.
            let count = keyTop &- fks
            if count >= ArchiveLimits.maxValuesPerRecord {
                throw limit("the record has more than \(ArchiveLimits.maxValuesPerRecord) values", at: fieldAt)
            }
            if big {
                if !insertBig(d, k) { throw duplicateKey(fieldAt) }
            } else if k < 64 {
                // Exact for keys below 64: their bits are set for every such
                // key of this frame.
                let bit: UInt64 = 1 &<< UInt64(k)
                if seen & bit != 0 { throw duplicateKey(fieldAt) }
                seen |= bit
            } else {
                var j = fks
                while j < keyTop {
                    if keyStack[j] == k { throw duplicateKey(fieldAt) }
                    j &+= 1
                }
            }
            if keyTop == keyCap { growKeyStack() }
            keyStack[keyTop] = k
            keyTop &+= 1
            if !big && count >= 16 {
                makeBig(d, fks)
                big = true
            }

            switch PayloadShape.of(rawTag: tag) {
            case .none:
                break
            case .zigzag:
                if !cursor.skipVarint(fe) { throw varintFailure(fe, "int value") }
            case .fixed64:
                if cursor.remaining(fe) < 8 { throw corrupt("double value is cut off (\(cursor.remaining(fe)) of 8 bytes)", at: pos) }
                cursor.skip(8)
            case .text:
                let len = try length(fe, "string length")
                try checkText(len, "string")
                cursor.skip(len)
            case .bytes:
                let len = try length(fe, "bytes length")
                cursor.skip(len)
            case .osText:
                let len = try length(fe, "OS string length")
                try checkNoNUL(len)
                cursor.skip(len)
            case .recordIndex:
                let at = pos
                let target = try varint(fe, "object reference")
                if target >= UInt64(objectCount) {
                    throw corrupt("object reference to record \(target) is out of range (object_count \(objectCount))", at: at)
                }
                if target >= UInt64(r) { forward = true }
                if refCount == refCap { growRefs() }
                refs[refCount] = Int32(truncatingIfNeeded: target)
                refCount &+= 1
            case .zigzagArray:
                let len = try length(fe, "int array length")
                let ce = pos &+ len
                let cAt = pos
                let count = try varint(ce, "int array count")
                if count > UInt64(cursor.remaining(ce)) {
                    throw corrupt("int array count \(count) cannot fit in its \(len) bytes", at: cAt)
                }
                var c = Int(truncatingIfNeeded: count)
                while c > 0 {
                    _ = try varint(ce, "int array element")
                    c &-= 1
                }
                if pos != ce {
                    throw corrupt("int array has \(cursor.remaining(ce)) stray bytes after its \(count) elements", at: pos)
                }
            case .textArray:
                let len = try length(fe, "string array length")
                let ce = pos &+ len
                let cAt = pos
                let count = try varint(ce, "string array count")
                if count > UInt64(cursor.remaining(ce)) {
                    throw corrupt("string array count \(count) cannot fit in its \(len) bytes", at: cAt)
                }
                var c = Int(truncatingIfNeeded: count)
                while c > 0 {
                    let el = try length(ce, "string array element length")
                    try checkText(el, "string array element")
                    cursor.skip(el)
                    c &-= 1
                }
                if pos != ce {
                    throw corrupt("string array has \(cursor.remaining(ce)) stray bytes after its \(count) elements", at: pos)
                }
            case .fields:
                let at = pos
                let len = try length(fe, "nested record length")
                if d >= ArchiveLimits.maxRecordDepth {
                    throw limit("nested records are deeper than the limit of \(ArchiveLimits.maxRecordDepth)", at: at)
                }
                frames[d] = Frame(end: fe, keyStart: fks, big: big, key: k, seen: seen)
                d &+= 1
                depth = d
                fe = pos &+ len
                fks = keyTop
                big = false
                seen = 0
            case .recordIndexArray:
                let len = try length(fe, "object array length")
                let ce = pos &+ len
                let cAt = pos
                let count = try varint(ce, "object array count")
                if count > UInt64(cursor.remaining(ce)) {
                    throw corrupt("object array count \(count) cannot fit in its \(len) bytes", at: cAt)
                }
                var c = Int(truncatingIfNeeded: count)
                while c > 0 {
                    let at = pos
                    let target = try varint(ce, "object array element")
                    if target >= UInt64(objectCount) {
                        throw corrupt("object array element refers to record \(target), out of range (object_count \(objectCount))", at: at)
                    }
                    if target >= UInt64(r) { forward = true }
                    if refCount == refCap { growRefs() }
                    refs[refCount] = Int32(truncatingIfNeeded: target)
                    refCount &+= 1
                    c &-= 1
                }
                if pos != ce {
                    throw corrupt("object array has \(cursor.remaining(ce)) stray bytes after its \(count) elements", at: pos)
                }
            case .sealed:
                // v1.2: inner tag + nonce + sealed content; opened only at decode.
                let at = pos
                let len = try length(fe, "sealed value length")
                if len < ArchiveFormat.sealedOverhead {
                    throw corrupt("sealed value of \(len) bytes is shorter than its \(ArchiveFormat.sealedOverhead)-byte nonce, type and tag", at: at)
                }
                let inner = b.load(fromByteOffset: pos, as: UInt8.self)
                switch PayloadShape.of(rawTag: inner) {
                case .none, .zigzag, .fixed64, .text, .bytes, .osText, .zigzagArray, .textArray: break
                default: throw corrupt("sealed value holds type tag \(inner), which cannot be sealed", at: pos)
                }
                st.sealedCount &+= 1
                cursor.skip(len)
            case .future:
                // A future type: its length says how much to skip.
                let len = try length(fe, "value length")
                cursor.skip(len)
            }
        }
        curKey = nil
        depth = 0
    }
}

/// The byte at `i` of the archive, for the validator's runs: a plain
/// pointer read, which the optimizer inlines into the large loop (the
/// generic raw load it would otherwise call out of line there).
@inline(__always)
func skimByte(_ b: UnsafeRawPointer, _ i: Int) -> UInt8 {
    b.assumingMemoryBound(to: UInt8.self)[i]
}

/// The key of a field whose header says 15 and whose extension byte at `q`
/// is before `fe`: 15 plus that byte; 64 or more when there is none or it
/// is not a key below 64 (the validator's runs take keys below 64 only).
/// Out of line, so that the runs stay as small as they were.
@inline(never)
func skimExtendedKey(_ b: UnsafeRawPointer, _ q: Int, _ fe: Int) -> UInt64 {
    guard q < fe else { return 64 }
    return 15 &+ UInt64(skimByte(b, q))
}

/// A saved frame of parseFields: an enclosing record (object or nested).
struct Frame {
    var end: Int
    var keyStart: Int
    var big: Bool
    /// The key of the nested record opened inside this frame (for messages).
    var key: UInt32
    /// The frame's keys below 64, as bits (duplicate detection).
    var seen: UInt64
}

func hex32(_ v: UInt32) -> String {
    let s = String(v, radix: 16, uppercase: true)
    return String(repeating: "0", count: 8 - s.count) + s
}
