// ArchiveReader: an immutable, fully validated view of one archive.
//
// `init` copies the bytes, validates everything (see Validator.swift and
// docs/FORMAT.md), and builds the indexes the accessors use: per-record
// identifier/parent/class/depth/field range, the key and name tables with
// hash lookups, and the object references of each record (CSR arrays).
// After `init` the reader is never mutated, so it can be read from several
// threads at once.

public final class ArchiveReader {
    /// What the archive says about itself.
    public let info: ArchiveInfo

    @usableFromInline let _storage: ReaderStorage
    @usableFromInline let _base: UnsafeRawPointer
    @usableFromInline let _byteCount: Int
    @usableFromInline let _recordCount: Int
    @usableFromInline let _keyCount: Int
    @usableFromInline let _nameCount: Int
    @usableFromInline let _records: UnsafePointer<RecordInfo>
    @usableFromInline let _keys: UnsafePointer<StrRef>
    @usableFromInline let _names: UnsafePointer<StrRef>
    @usableFromInline let _keyCtrl: UnsafePointer<UInt8>
    @usableFromInline let _keySlots: UnsafePointer<UInt32>
    @usableFromInline let _keyMask: Int
    @usableFromInline let _nameCtrl: UnsafePointer<UInt8>
    @usableFromInline let _nameSlots: UnsafePointer<UInt32>
    @usableFromInline let _nameMask: Int
    @usableFromInline let _refStart: UnsafePointer<Int32>
    @usableFromInline let _refs: UnsafePointer<Int32>
    /// Carry counts, when the archive stores them.
    @usableFromInline let _carries: UnsafePointer<UInt32>?
    @usableFromInline let _hasForwardReferences: Bool
    /// `ReaderStorage.addedTails`: nil unless migrations rebuilt the archive.
    @usableFromInline let _addedTails: UnsafePointer<Int32>?

    /// Copies the bytes into memory the reader owns, then validates all of it.
    public convenience init(bytes: UnsafeRawBufferPointer) throws(ArchiveFailure) {
        let (st, info, forward, masks) = try ArchiveReader.validate(bytes)
        self.init(storage: st, info: info, forward: forward, masks: masks)
    }

    /// Validates bytes the reader then owns, without copying them (an
    /// archive file read into a private buffer: one copy of it in memory,
    /// not two). `buffer` must come from
    /// `UnsafeMutableRawPointer.allocate(byteCount:alignment:)`, and nothing
    /// else may keep, write or free it: the reader frees it, also when
    /// validation fails.
    public convenience init(adopting buffer: UnsafeMutableRawBufferPointer) throws(ArchiveFailure) {
        let st = ReaderStorage()
        st.bytes = buffer.baseAddress   // freed with the storage, whatever happens below
        let (_, info, v) = try Validator.runKeepingState(UnsafeRawBufferPointer(buffer), adopted: st)
        self.init(storage: st, info: info, forward: v.forward, masks: (v.n, v.keyCount, v.nameCount))
    }

    /// Validates bytes the reader keeps where they are, without copying
    /// them, and runs `release` when it is gone (also when validation
    /// fails): a read-only mapping of an archive file. Nothing may write
    /// the bytes while the reader holds them (the engine replaces an
    /// archive file by rename, never in place).
    public convenience init(keeping bytes: UnsafeRawBufferPointer, release: @escaping () -> Void) throws(ArchiveFailure) {
        let st = ReaderStorage()
        st.bytes = UnsafeMutableRawPointer(mutating: bytes.baseAddress)
        st.releaseBytes = release   // run with the storage, whatever happens below
        let (_, info, v) = try Validator.runKeepingState(bytes, adopted: st)
        self.init(storage: st, info: info, forward: v.forward, masks: (v.n, v.keyCount, v.nameCount))
    }

    public convenience init(bytes: [UInt8]) throws(ArchiveFailure) {
        let r: Result<(ReaderStorage, ArchiveInfo, Bool, (Int, Int, Int)), ArchiveFailure> =
            bytes.withUnsafeBytes { buf in
                do throws(ArchiveFailure) {
                    return .success(try ArchiveReader.validate(buf))
                } catch {
                    return .failure(error)
                }
            }
        let (st, info, forward, masks) = try r.get()
        self.init(storage: st, info: info, forward: forward, masks: masks)
    }

    /// counts: (byteCount, keyCount, nameCount)
    static func validate(_ buf: UnsafeRawBufferPointer) throws(ArchiveFailure)
        -> (ReaderStorage, ArchiveInfo, Bool, (Int, Int, Int)) {
        let (st, info, forward, counts) = try Validator.runForReader(buf)
        return (st, info, forward, counts)
    }

    init(storage st: ReaderStorage, info: ArchiveInfo, forward: Bool, masks: (Int, Int, Int)) {
        self.info = info
        _storage = st
        _base = UnsafeRawPointer(st.bytes!)
        _byteCount = masks.0
        _recordCount = Int(info.objectCount)
        _keyCount = masks.1
        _nameCount = masks.2
        _records = UnsafePointer(st.records!)
        _keys = UnsafePointer(st.keys!)
        _names = UnsafePointer(st.names!)
        let ki = st.keyIndex!, ni = st.nameIndex!
        _keyCtrl = UnsafePointer(ki.ctrl)
        _keySlots = UnsafePointer(ki.slots)
        _keyMask = ki.mask
        _nameCtrl = UnsafePointer(ni.ctrl)
        _nameSlots = UnsafePointer(ni.slots)
        _nameMask = ni.mask
        _refStart = UnsafePointer(st.refStart!)
        _refs = UnsafePointer(st.refs!)
        _carries = st.carries.map { UnsafePointer($0) }
        _hasForwardReferences = forward
        _addedTails = st.addedTails.map { UnsafePointer($0) }
    }

    // MARK: - Sizes

    /// Bytes of the archive, checksum included.
    @inlinable public var byteCount: Int { _byteCount }
    @inlinable public var recordCount: Int { _recordCount }
    @inlinable public var keyCount: Int { _keyCount }
    @inlinable public var nameCount: Int { _nameCount }

    /// The whole archive (valid while the reader lives).
    @inlinable public var archiveBytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: _base, count: _byteCount)
    }

    // MARK: - Records

    @inlinable @inline(__always)
    func _record(_ r: Int) -> RecordInfo {
        precondition(r >= 0 && r < _recordCount, "record index out of range")
        return _records[r]
    }

    /// The identifier of record r, as a name index.
    @inlinable public func identifier(ofRecord r: Int) -> UInt32 { _record(r).identifier }

    /// The parent of record r (always an earlier record), nil for a root.
    @inlinable public func parent(ofRecord r: Int) -> Int? {
        let p = _record(r).parent
        return p < 0 ? nil : Int(p)
    }

    /// The class name of record r, as a name index, or nil.
    @inlinable public func className(ofRecord r: Int) -> UInt32? {
        let c = _record(r).classPlusOne
        return c == 0 ? nil : c &- 1
    }

    /// v1.1: the class version record r stores (0 when the archive stores none).
    @inlinable public func version(ofRecord r: Int) -> UInt32 { _record(r).version }

    /// Carried records: 0 for a live record; 1 + the saves that will still carry it
    /// for a carried record (UInt32.max: always).
    @inlinable public func carry(ofRecord r: Int) -> UInt32 {
        precondition(r >= 0 && r < _recordCount, "record index out of range")
        return _carries?[r] ?? 0
    }

    /// Length of the parent chain of record r (a root is 0), walked (the
    /// index keeps no depths: nothing on a restore's path asks).
    public func depth(ofRecord r: Int) -> Int {
        var d = 0
        var p = _record(r).parent
        while p >= 0 { d += 1; p = _records[Int(p)].parent }
        return d
    }

    /// The path of record r, "Tabs/Nav/List".
    public func path(ofRecord r: Int) -> String {
        var comps: [UnsafeRawBufferPointer] = []
        var i = r
        var total = 0
        while true {
            let rec = _record(i)
            let s = nameBytes(rec.identifier)
            comps.append(s)
            total += s.count + 1
            if rec.parent < 0 { break }
            i = Int(rec.parent)
        }
        var out: [UInt8] = []
        out.reserveCapacity(total)
        for (n, c) in comps.reversed().enumerated() {
            if n > 0 { out.append(0x2F) }
            out.append(contentsOf: c)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Object references made by record r, nested records included (int
    /// arrays are not references), as record indexes in field order.
    @inlinable public func references(ofRecord r: Int) -> UnsafeBufferPointer<Int32> {
        precondition(r >= 0 && r < _recordCount, "record index out of range")
        let s = Int(_refStart[r])
        return UnsafeBufferPointer(start: _refs + s, count: Int(_refStart[r &+ 1]) &- s)
    }

    /// True if a record references itself or a later record.
    @inlinable public var hasForwardReferences: Bool { _hasForwardReferences }
    /// v1.2: sealed values (tag 12) in the archive, nested records included.
    public var sealedValueCount: Int { _storage.sealedCount }

    // MARK: - Strings

    @inlinable public func nameBytes(_ index: UInt32) -> UnsafeRawBufferPointer {
        precondition(Int(index) < _nameCount, "name index out of range")
        let s = _names[Int(index)]
        return UnsafeRawBufferPointer(start: _base + Int(s.start), count: Int(s.len))
    }

    public func name(_ index: UInt32) -> String {
        String(decoding: nameBytes(index), as: UTF8.self)
    }

    @inlinable public func keyBytes(_ index: UInt32) -> UnsafeRawBufferPointer {
        precondition(Int(index) < _keyCount, "key index out of range")
        let s = _keys[Int(index)]
        return UnsafeRawBufferPointer(start: _base + Int(s.start), count: Int(s.len))
    }

    public func keyName(_ index: UInt32) -> String {
        String(decoding: keyBytes(index), as: UTF8.self)
    }

    @inlinable @inline(__always)
    func _lookup(_ ctrl: UnsafePointer<UInt8>, _ slots: UnsafePointer<UInt32>, _ mask: Int,
                 _ strs: UnsafePointer<StrRef>, _ utf8: UnsafeRawBufferPointer) -> UInt32? {
        let n = utf8.count
        let p = utf8.baseAddress
        let base = _base
        return HashIndex.find(ctrl, slots, mask, hashBytes(p, n)) { e in
            let s = strs[Int(e)]
            return Int(s.len) == n && bytesEqual(base + Int(s.start), p, n)
        }.0
    }

    /// The index of a key, or nil if the archive has no such key. Allocates nothing.
    @inlinable public func keyIndex(_ utf8: UnsafeRawBufferPointer) -> UInt32? {
        _lookup(_keyCtrl, _keySlots, _keyMask, _keys, utf8)
    }

    /// The index of a name (identifier or class name), or nil. Allocates nothing.
    @inlinable public func nameIndex(_ utf8: UnsafeRawBufferPointer) -> UInt32? {
        _lookup(_nameCtrl, _nameSlots, _nameMask, _names, utf8)
    }

    // MARK: - Fields

    /// A byte range of fields: an object's own, or a nested record's.
    public struct FieldRange: Equatable, Sendable {
        public var start: Int
        public var end: Int
        @inlinable public init(start: Int, end: Int) {
            self.start = start
            self.end = end
        }
    }

    /// One field. `payload` is the offset of the value's content after any
    /// length prefix (for a length-prefixed `PayloadShape` the content is
    /// exactly payload..<end; for an int or a reference, the varint; for a
    /// double, the 8 bytes; for a bool, payload == end).
    public struct Field: Equatable, Sendable {
        public var key: UInt32
        public var rawTag: UInt8
        public var payload: Int
        public var end: Int
        @inlinable public init(key: UInt32, rawTag: UInt8, payload: Int, end: Int) {
            self.key = key
            self.rawTag = rawTag
            self.payload = payload
            self.end = end
        }
        /// nil for a sealed value, LOCAL marks or a future type (raw tag 12...15).
        @inlinable public var tag: ValueTag? { ValueTag(rawValue: rawTag) }
    }

    /// The object-level fields of record r.
    @inlinable public func fields(ofRecord r: Int) -> FieldRange {
        let rec = _record(r)
        return FieldRange(start: Int(rec.fieldsStart), end: Int(rec.fieldsEnd))
    }

    /// Where the fields that a migration added at the end of record r start
    /// (an offset inside `fields(ofRecord: r)`, at a field's start), nil
    /// when it added none or the archive was not rebuilt by migrations. A
    /// decode reads such fields out of the order they were written (a new
    /// key where the new code reads it): this is where it looks next when
    /// the field at its hint is not the one asked for.
    @inlinable @inline(__always)
    public func addedTail(ofRecord r: Int) -> Int? {
        guard let t = _addedTails else { return nil }
        precondition(r >= 0 && r < _recordCount, "record index out of range")
        let v = t[r]
        return v > 0 ? Int(v) : nil
    }

    /// The field that starts at `pos`, read whole before `end`; nil when
    /// none fits. Every read is checked against `end` and the archive's
    /// size; the answer means something only for a field's start (as
    /// `addedTail(ofRecord:)` gives).
    @inlinable
    public func field(at pos: Int, before end: Int) -> Field? {
        guard pos >= 0 && pos < end && end <= _byteCount else { return nil }
        return _field(at: pos, limit: end)
    }

    /// Parses the field at `pos`, never reading at or past `limit`; nil if it
    /// does not fit (only possible for a position that is not a field start).
    @inlinable @inline(__always)
    func _field(at pos: Int, limit: Int) -> Field? {
        var c = ArchiveCursor(_base, at: pos)
        let h = c.byte()
        var key = UInt32(h &>> 4)
        let tag = h & 0x0F
        if _slowPath(key == 15) {
            guard let ext = c.varint(limit) else { return nil }
            key = UInt32(truncatingIfNeeded: ext &+ 15)
        }
        let payload = c.pos
        let end: Int
        switch PayloadShape.of(rawTag: tag) {
        case .none:
            end = c.pos
        case .zigzag, .recordIndex:
            // The whole archive is readable: a record's last field is skipped from one word too.
            guard c.skipVarint(limit, readable: _byteCount) else { return nil }
            end = c.pos
        case .fixed64:
            end = c.pos &+ 8
        case .text, .bytes, .zigzagArray, .textArray, .fields, .recordIndexArray, .osText, .sealed, .future:
            guard let len = c.length(limit) else { return nil }
            return Field(key: key, rawTag: tag, payload: c.pos, end: c.pos &+ len)
        }
        if _slowPath(end > limit) { return nil }
        return Field(key: key, rawTag: tag, payload: payload, end: end)
    }

    @inlinable @inline(__always)
    func _valid(_ range: FieldRange) -> Bool {
        range.start >= 0 && range.start <= range.end && range.end <= _byteCount
    }

    /// Finds `key` in the range. The scan starts at `hint` (a byte offset in
    /// the range that a previous `find` on the same range returned; anything
    /// outside the range means range.start) and wraps around to range.start.
    /// On success `hint` is set to the end of the found field, so reading keys
    /// in the order they were written costs O(1) each.
    @inlinable
    public func find(_ key: UInt32, in range: FieldRange, hint: inout Int) -> Field? {
        guard _valid(range) else { return nil }
        let start = range.start, end = range.end
        let first = (hint > start && hint < end) ? hint : start
        var pos = first
        while pos < end {
            guard let f = _field(at: pos, limit: end) else { break }
            if f.key == key {
                hint = f.end
                return f
            }
            pos = f.end
        }
        pos = start
        while pos < first {
            guard let f = _field(at: pos, limit: end) else { return nil }
            if f.key == key {
                hint = f.end
                return f
            }
            pos = f.end
        }
        return nil
    }

    /// The fast path of `find` for a record read in the order it was
    /// written: the field at `pos` when its key is `key` and its raw tag
    /// `rawTag` (for `boolFalse`, either bool), read whole before `end`;
    /// nil otherwise, and then `find` decides. `pos` and `end` are a hint
    /// and a range end of `find`: keys are unique within a record, so the
    /// field found here is the one `find` would return first from that
    /// hint, with the same payload and end. It takes keys below 15 + 128
    /// (at most one byte of key extension), ints and references whose
    /// varint the archive's next 8 bytes hold, and lengths below 128;
    /// anything else returns nil. Every read is checked against `end`
    /// and the archive's size, whatever `pos` and `end` are.
    @inlinable @inline(__always)
    public func field(at pos: Int, before end: Int, key: UInt32, rawTag: UInt8) -> Field? {
        guard let (p, tag) = _header(at: pos, before: end, key: key, rawTag: rawTag) else { return nil }
        let b = _base
        switch PayloadShape.of(rawTag: rawTag) {
        case .none:
            return Field(key: key, rawTag: tag, payload: p, end: p)
        case .zigzag, .recordIndex:
            guard _byteCount &- p >= 8 else { return nil }
            let w = UInt64(littleEndian: b.loadUnaligned(fromByteOffset: p, as: UInt64.self))
            let stops = ~w & 0x8080_8080_8080_8080
            guard stops != 0 else { return nil }
            let e = p &+ ((stops.trailingZeroBitCount &+ 1) &>> 3)
            guard e <= end else { return nil }
            return Field(key: key, rawTag: tag, payload: p, end: e)
        case .fixed64:
            guard end &- p >= 8 else { return nil }
            return Field(key: key, rawTag: tag, payload: p, end: p &+ 8)
        case .text, .bytes, .zigzagArray, .textArray, .fields, .recordIndexArray, .osText, .sealed, .future:
            guard p < end else { return nil }
            let len = Int(b.load(fromByteOffset: p, as: UInt8.self))
            let s = p &+ 1
            guard len < 0x80 && len <= end &- s else { return nil }
            return Field(key: key, rawTag: tag, payload: s, end: s &+ len)
        }
    }

    /// `field(at:before:key:rawTag:)` for an int: its value (as `int`
    /// reads it) and the field's end.
    @inlinable @inline(__always)
    public func intField(at pos: Int, before end: Int, key: UInt32) -> (value: Int64, end: Int)? {
        guard let (p, _) = _header(at: pos, before: end, key: key, rawTag: ValueTag.int.rawValue),
              let (v, e) = _wordVarint(at: p, before: end) else { return nil }
        return (unzigzag(v), e)
    }

    /// `field(at:before:key:rawTag:)` for an object reference: its record
    /// (as `objectRecord` reads it) and the field's end.
    @inlinable @inline(__always)
    public func objectField(at pos: Int, before end: Int, key: UInt32) -> (record: Int, end: Int)? {
        guard let (p, _) = _header(at: pos, before: end, key: key, rawTag: ValueTag.object.rawValue),
              let (v, e) = _wordVarint(at: p, before: end) else { return nil }
        return (Int(truncatingIfNeeded: v), e)
    }

    /// The header of the field at `pos` when it has key `key` and raw tag
    /// `rawTag` (for `boolFalse`, either bool): where its payload starts,
    /// and its tag. Keys below 15 + 128 only (at most one byte of key
    /// extension); nil for any other field or a position outside the
    /// archive or not before `end`.
    @inlinable @inline(__always)
    func _header(at pos: Int, before end: Int, key: UInt32, rawTag: UInt8) -> (Int, UInt8)? {
        guard pos >= 0 && pos < end && end <= _byteCount else { return nil }
        let b = _base
        let h = b.load(fromByteOffset: pos, as: UInt8.self)
        // A bool is asked for as boolFalse and may be either.
        let tagMask: UInt8 = rawTag == ValueTag.boolFalse.rawValue ? 0xFE : 0xFF
        if key < 15 {
            guard h & tagMask == UInt8(truncatingIfNeeded: key &<< 4) | rawTag else { return nil }
            return (pos &+ 1, h & 0x0F)
        }
        let p = pos &+ 1
        guard h & tagMask == 0xF0 | rawTag, key &- 15 < 0x80, p < end,
              b.load(fromByteOffset: p, as: UInt8.self) == UInt8(truncatingIfNeeded: key &- 15) else { return nil }
        return (p &+ 1, h & 0x0F)
    }

    /// The varint at `p` (at least 0) and where it ends, when the archive
    /// has 8 bytes there (10 for a varint of 9 or 10 bytes) and the varint
    /// ends by `end` (`wordVarint`); else nil. This is what the varint
    /// reader returns with `end` as its limit.
    @inlinable @inline(__always)
    func _wordVarint(at p: Int, before end: Int) -> (UInt64, Int)? {
        guard let (v, e) = wordVarint(_base, p, readable: _byteCount &- p), e <= end else { return nil }
        return (v, e)
    }

    /// Every field of the range in order, future types included (their
    /// `tag` is nil).
    @inlinable
    public func forEachField(in range: FieldRange, _ body: (Field) throws -> Void) rethrows {
        guard _valid(range) else { return }
        var pos = range.start
        while pos < range.end {
            guard let f = _field(at: pos, limit: range.end) else { return }
            try body(f)
            pos = f.end
        }
    }

    // MARK: - Payloads (for fields of this reader with the matching tag)

    @inlinable public func bool(_ f: Field) -> Bool { f.rawTag == ValueTag.boolTrue.rawValue }

    @inlinable @inline(__always) public func int(_ f: Field) -> Int64 {
        unzigzag(_varint(f))
    }

    /// The varint at the start of an int's or a reference's payload (0
    /// when it does not end within the field). A field's varint ends at
    /// the field's end, so the varint reader's one-word path (8 bytes
    /// before the limit) never applies: load the word when the archive
    /// has 8 bytes there, and keep the value when the varint ends within
    /// the limit (what the reader would return).
    @inlinable @inline(__always)
    func _varint(_ f: Field) -> UInt64 {
        let limit = min(f.end, _byteCount)
        if f.payload >= 0, let (v, _) = _wordVarint(at: f.payload, before: limit) { return v }
        var c = ArchiveCursor(_base, at: f.payload)
        return c.varint(limit) ?? 0
    }

    @inlinable @inline(__always) public func double(_ f: Field) -> Double {
        guard f.payload >= 0 && f.payload &+ 8 <= _byteCount else { return .nan }
        return Double(bitPattern: UInt64(littleEndian: _base.loadUnaligned(fromByteOffset: f.payload, as: UInt64.self)))
    }

    /// The content of a string or bytes value (no NUL terminator).
    @inlinable @inline(__always) public func bytes(_ f: Field) -> UnsafeRawBufferPointer {
        guard f.payload >= 0 && f.payload <= f.end && f.end <= _byteCount else {
            return UnsafeRawBufferPointer(start: _base, count: 0)
        }
        return UnsafeRawBufferPointer(start: _base + f.payload, count: f.end &- f.payload)
    }

    /// The string value as a Swift String.
    public func string(_ f: Field) -> String {
        String(decoding: bytes(f), as: UTF8.self)
    }

    @inlinable @inline(__always) public func objectRecord(_ f: Field) -> Int {
        Int(truncatingIfNeeded: _varint(f))
    }

    @inlinable public func intArrayCount(_ f: Field) -> Int {
        var c = ArchiveCursor(_base, at: f.payload)
        return Int(truncatingIfNeeded: c.varint(min(f.end, _byteCount)) ?? 0)
    }

    /// Copies the elements into `buffer` (at most buffer.count of them).
    @inlinable public func intArray(_ f: Field, into buffer: UnsafeMutableBufferPointer<Int64>) {
        let limit = min(f.end, _byteCount)
        var c = ArchiveCursor(_base, at: f.payload)
        let count = Int(truncatingIfNeeded: c.varint(limit) ?? 0)
        let n = min(count, buffer.count)
        var i = 0
        while i < n {
            buffer[i] = unzigzag(c.varint(limit) ?? 0)
            i &+= 1
        }
    }

    /// The count of an int array, and its elements copied into `buffer`
    /// when it has room for all of them (`copied`; also true for an empty
    /// array): `intArrayCount` and `intArray(_:into:)` in one pass, the
    /// position kept in a register.
    @inlinable @inline(__always)
    public func intArray(_ f: Field, ifRoomIn buffer: UnsafeMutableBufferPointer<Int64>?) -> (count: Int, copied: Bool) {
        let limit = min(f.end, _byteCount)
        var p = f.payload
        guard p >= 0 else { return (0, true) }
        let n = Int(truncatingIfNeeded: readVarint(_base, &p, limit) ?? 0)
        guard let buffer, buffer.count >= n else { return (n, n == 0) }
        let out = buffer.baseAddress.unsafelyUnwrapped
        var i = 0
        while i < n {
            out[i] = unzigzag(readVarint(_base, &p, limit) ?? 0)
            i &+= 1
        }
        return (n, true)
    }

    @inlinable public func stringArrayCount(_ f: Field) -> Int {
        var c = ArchiveCursor(_base, at: f.payload)
        return Int(truncatingIfNeeded: c.varint(min(f.end, _byteCount)) ?? 0)
    }

    /// Element `index` of a string array, nil if out of range. O(index): to
    /// read them all, use `forEachStringArrayElement`.
    @inlinable public func stringArrayElement(_ f: Field, at index: Int) -> UnsafeRawBufferPointer? {
        let limit = min(f.end, _byteCount)
        var c = ArchiveCursor(_base, at: f.payload)
        let count = Int(truncatingIfNeeded: c.varint(limit) ?? 0)
        guard index >= 0 && index < count else { return nil }
        var i = 0
        while true {
            let len = Int(truncatingIfNeeded: c.varint(limit) ?? 0)
            guard len >= 0 && len <= c.remaining(limit) else { return nil }
            if i == index { return c.bytes(len) }
            c.skip(len)
            i &+= 1
        }
    }

    /// Every element of a string array, in order.
    @inlinable public func forEachStringArrayElement(_ f: Field, _ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        let limit = min(f.end, _byteCount)
        var c = ArchiveCursor(_base, at: f.payload)
        var count = Int(truncatingIfNeeded: c.varint(limit) ?? 0)
        while count > 0 {
            let len = Int(truncatingIfNeeded: c.varint(limit) ?? 0)
            guard len >= 0 && len <= c.remaining(limit) else { return }
            try body(c.bytes(len))
            c.skip(len)
            count &-= 1
        }
    }

    /// v1.1: the number of elements of an object array.
    @inlinable public func objectArrayCount(_ f: Field) -> Int {
        var c = ArchiveCursor(_base, at: f.payload)
        return Int(truncatingIfNeeded: c.varint(min(f.end, _byteCount)) ?? 0)
    }

    /// v1.1: every record index of an object array, in order.
    @inlinable public func forEachObjectArrayElement(_ f: Field, _ body: (Int) throws -> Void) rethrows {
        let limit = min(f.end, _byteCount)
        var c = ArchiveCursor(_base, at: f.payload)
        var count = Int(truncatingIfNeeded: c.varint(limit) ?? 0)
        while count > 0 {
            guard let v = c.varint(limit) else { return }
            try body(Int(truncatingIfNeeded: v))
            count &-= 1
        }
    }

    /// v1.1: element `index` of an object array (a record index), nil when out of range.
    @inlinable public func objectArrayElement(_ f: Field, at index: Int) -> Int? {
        let limit = min(f.end, _byteCount)
        var c = ArchiveCursor(_base, at: f.payload)
        let count = Int(truncatingIfNeeded: c.varint(limit) ?? 0)
        guard index >= 0 && index < count else { return nil }
        var i = 0
        while true {
            guard let v = c.varint(limit) else { return nil }
            if i == index { return Int(truncatingIfNeeded: v) }
            i &+= 1
        }
    }

    /// The fields of a nested record value.
    @inlinable public func recordFields(_ f: Field) -> FieldRange {
        FieldRange(start: f.payload, end: f.end)
    }
}

extension Validator {
    /// Validates and returns what ArchiveReader keeps:
    /// (storage, info, hasForwardReferences, (byteCount, keyCount, nameCount)).
    static func runForReader(_ input: UnsafeRawBufferPointer) throws(ArchiveFailure)
        -> (ReaderStorage, ArchiveInfo, Bool, (Int, Int, Int)) {
        let (st, info, v) = try runKeepingState(input)
        return (st, info, v.forward, (v.n, v.keyCount, v.nameCount))
    }
}

// Immutable after init: safe to share between threads.
extension ArchiveReader: @unchecked Sendable {}
