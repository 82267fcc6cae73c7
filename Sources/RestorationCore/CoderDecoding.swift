import RestorationArchive

/// The decoding role's state (`.decoding` and `.factory` modes): the
/// archive being read and where in it the running callback is. The coder's
/// decode calls (the extension below) are its operations.
@usableFromInline
struct DecodingRole {
    /// The archive being read; owns it for the restore.
    @usableFromInline var reader: ArchiveReader? {
        didSet { readerRef = reader.map { Unmanaged.passUnretained($0) } }
    }
    /// The same reader without reference counting on the hot paths.
    @usableFromInline private(set) var readerRef: Unmanaged<ArchiveReader>?
    var session: RestoreSession? {
        didSet { sessionRef = session.map { Unmanaged.passUnretained($0) } }
    }
    @usableFromInline private(set) var sessionRef: Unmanaged<RestoreSession>?
    /// The open records (the object's own fields at depth 0) and the scan hint of each.
    @usableFromInline let ranges: UnsafeMutablePointer<ArchiveReader.FieldRange>
    @usableFromInline let hints: UnsafeMutablePointer<Int>
    /// The object's own fields that a migration added at their end, not
    /// read yet: where the next one starts, the record's end when there is
    /// none (`ArchiveReader.addedTail(ofRecord:)`). A read that misses the
    /// hint looks there before scanning: the new code reads a key a
    /// migration added where it reads it, not where the migration put it.
    @usableFromInline let tail: UnsafeMutablePointer<Int>
    @usableFromInline var depth = 0

    init() {
        ranges = .allocate(capacity: RestorationLimits.maxRecordDepth + 2)
        hints = .allocate(capacity: RestorationLimits.maxRecordDepth + 2)
        tail = .allocate(capacity: 1)
        tail.initialize(to: 0)
    }

    /// Frees the open-record stack (the coder's deinit).
    func deallocate() {
        ranges.deallocate()
        hints.deallocate()
        tail.deallocate()
    }

    /// Opens record r's own fields; false when no archive is being read.
    mutating func begin(record r: Int) -> Bool {
        guard let readerRef else { return false }
        let (range, added) = readerRef._withUnsafeGuaranteedRef { ($0.fields(ofRecord: r), $0.addedTail(ofRecord: r)) }
        depth = 0
        ranges[0] = range
        hints[0] = range.start
        tail.pointee = added ?? range.end
        return true
    }

    /// The field with key index k in the open record.
    @inlinable @inline(__always)
    func find(_ k: UInt32) -> ArchiveReader.Field? {
        let d = depth
        var hint = hints[d]
        let range = ranges[d]
        if d == 0 && tail.pointee < range.end, let f = atTail(k, before: range.end) { return f }
        guard let f = readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef({ $0.find(k, in: range, hint: &hint) }) else { return nil }
        // The record's last field found (where a migration step's added key
        // goes) leaves the hint where it was: a hint at the record's end
        // would send the next key's scan back to the start, while the keys
        // read in save order go on at the old hint. Only where scans start
        // changes; `find` wraps around, so every key is found as before.
        if hint != range.end { hints[d] = hint }
        return f
    }

    /// The field with key index k when it is the next one of the object's
    /// added tail, the tail moved past it (the hint stays where it is);
    /// nil otherwise, with nothing changed. Keys are unique within a
    /// record, so it is the field `find`'s scan would find.
    @usableFromInline @inline(never)
    func atTail(_ k: UInt32, before end: Int) -> ArchiveReader.Field? {
        let t = tail.pointee
        guard let f = readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef({ $0.field(at: t, before: end) }), f.key == k else { return nil }
        tail.pointee = f.end
        return f
    }

    /// The field with key index k and raw tag `rawTag` when it is the one
    /// at the open record's hint (a record read in the order it was
    /// written), and the hint moved past it; nil otherwise, with nothing
    /// changed (then `find` decides). `ArchiveReader.field(at:before:key:rawTag:)`
    /// returns only the field `find` would return first from the hint.
    @inlinable @inline(__always)
    func next(_ k: UInt32, _ rawTag: UInt8) -> ArchiveReader.Field? {
        atHint { r, hint, end in r.field(at: hint, before: end, key: k, rawTag: rawTag).map { ($0, $0.end) } }
    }

    /// `next` for an int: its value.
    @inlinable @inline(__always)
    func nextInt(_ k: UInt32) -> Int64? {
        atHint { r, hint, end in r.intField(at: hint, before: end, key: k) }
    }

    /// `next` for an object reference: the record it refers to.
    @inlinable @inline(__always)
    func nextObject(_ k: UInt32) -> Int? {
        atHint { r, hint, end in r.objectField(at: hint, before: end, key: k) }
    }

    /// What `read` finds at the open record's hint (given the hint and the
    /// record's end), the hint moved to the end it returns.
    @inlinable @inline(__always)
    func atHint<T>(_ read: (ArchiveReader, Int, Int) -> (T, Int)?) -> T? {
        let d = depth
        let end = ranges[d].end
        let hint = hints[d]
        guard let (v, e) = readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef({ read($0, hint, end) }) else { return nil }
        hints[d] = e
        return v
    }

    /// `next` and `nextInt` at the object's added tail instead of the hint
    /// when `atTail` (the checked calls try it after the hint: a key a
    /// migration added, read where the new code reads it); a hit moves the
    /// tail past the field and leaves the hint. Inlined with a constant, so
    /// the reads at the hint are what they were.
    @inlinable @inline(__always)
    func next(_ k: UInt32, _ rawTag: UInt8, atTail: Bool) -> ArchiveReader.Field? {
        if !atTail { return next(k, rawTag) }
        return onTail { r, p, end in r.field(at: p, before: end, key: k, rawTag: rawTag).map { ($0, $0.end) } }
    }

    @inlinable @inline(__always)
    func nextInt(_ k: UInt32, atTail: Bool) -> Int64? {
        if !atTail { return nextInt(k) }
        return onTail { r, p, end in r.intField(at: p, before: end, key: k) }
    }

    /// What `read` finds at the object's added tail (given the tail and the
    /// record's end), the tail moved to the end it returns.
    @inlinable @inline(__always)
    func onTail<T>(_ read: (ArchiveReader, Int, Int) -> (T, Int)?) -> T? {
        guard depth == 0 else { return nil }
        let end = ranges[0].end
        let t = tail.pointee
        guard t < end, let (v, e) = readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef({ read($0, t, end) }) else { return nil }
        tail.pointee = e
        return v
    }

    /// Enters a nested record.
    @inlinable @inline(__always)
    mutating func enter(_ range: ArchiveReader.FieldRange) {
        depth += 1
        ranges[depth] = range
        hints[depth] = range.start
    }
}

// MARK: - the decoding role's operations

extension Coder {
    /// The index of `key` in the archive being read (`KeyCache.absent`
    /// when it has none); fails outside a decode callback or factory.
    @inlinable @inline(__always)
    func decodingKey(_ key: KeyBytes) throws(RestorationFailure) -> UInt32 {
        guard mode == .decoding || mode == .factory, decoding.readerRef != nil else { throw stateFailure(encode: false) }
        return cachedKey(key) ?? newDecodingKey(key)
    }

    /// The field under `key` in the current record, or nil when absent.
    @inlinable @inline(__always)
    func field(_ key: KeyBytes) throws(RestorationFailure) -> ArchiveReader.Field? {
        let k = try decodingKey(key)
        if k == KeyCache.absent { return nil }
        return decoding.find(k)
    }

    @usableFromInline @inline(never)
    func newDecodingKey(_ key: KeyBytes) -> UInt32 {
        let bytes = key.bytes
        let k = decoding.readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.keyIndex(bytes) } ?? KeyCache.absent
        cacheKey(key, bytes, k)
        return k
    }

    /// The field under `key`, of type `expected` (a bool for `.boolFalse`):
    /// the field at the open record's hint when it is that one (a record
    /// read in save order), else `typedSlow`.
    @inlinable @inline(__always)
    func typed(_ key: KeyBytes, _ expected: ValueTag) throws(RestorationFailure) -> ArchiveReader.Field {
        let k = try decodingKey(key)
        if k != KeyCache.absent, let f = decoding.next(k, expected.rawValue) { return f }
        return try typedSlow(key, k, expected)
    }

    /// `typed` by a scan of the record (`find`): any order, and the
    /// failures (no such key, another type).
    @usableFromInline @inline(never)
    func typedSlow(_ key: KeyBytes, _ k: UInt32, _ expected: ValueTag) throws(RestorationFailure) -> ArchiveReader.Field {
        guard k != KeyCache.absent, let f = decoding.find(k) else { throw missing(key) }
        let tag = f.tag
        if tag == expected || (expected == .boolFalse && tag == .boolTrue) { return f }
        throw mismatch(key, tag, expected)
    }

    @inlinable @inline(__always)
    public func decodeBool(_ key: KeyBytes) throws(RestorationFailure) -> Bool {
        if _slowPath(mode == .migrating) { return try withEditor { e throws(RestorationFailure) in try e.bool(key) } }
        let f = try typed(key, .boolFalse)
        return f.tag == .boolTrue
    }

    @inlinable @inline(__always)
    public func decodeInt(_ key: KeyBytes) throws(RestorationFailure) -> Int64 {
        if _slowPath(mode == .migrating) {
            if let v = withEditorLane({ $0.laneInt(key) }) { return v }
            return try withEditor { e throws(RestorationFailure) in try e.int(key) }
        }
        let k = try decodingKey(key)
        if k != KeyCache.absent, let v = decoding.nextInt(k) { return v }
        let f = try typedSlow(key, k, .int)
        return decoding.readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.int(f) }
    }

    @inlinable @inline(__always)
    public func decodeDouble(_ key: KeyBytes) throws(RestorationFailure) -> Double {
        if _slowPath(mode == .migrating) { return try withEditor { e throws(RestorationFailure) in try e.double(key) } }
        let f = try typed(key, .double)
        return decoding.readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.double(f) }
    }

    /// The string's bytes, borrowed from the archive (not NUL-terminated).
    @inlinable @inline(__always)
    public func decodeStringBytes(_ key: KeyBytes) throws(RestorationFailure) -> UnsafeRawBufferPointer {
        if _slowPath(mode == .migrating) { return try withEditor { e throws(RestorationFailure) in try e.text(key) } }
        let k = try decodingKey(key)
        let f: ArchiveReader.Field
        if k != KeyCache.absent, let g = decoding.next(k, ValueTag.string.rawValue) {
            f = g
        } else {
            f = try stringFieldSlow(key, k)
        }
        return decoding.readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.bytes(f) }
    }

    /// The field of `decodeStringBytes` by a scan (`find`): a string out
    /// of save order, or an OS string that is text.
    @usableFromInline @inline(never)
    func stringFieldSlow(_ key: KeyBytes, _ k: UInt32) throws(RestorationFailure) -> ArchiveReader.Field {
        guard k != KeyCache.absent, let f = decoding.find(k) else { throw missing(key) }
        if f.rawTag != ValueTag.string.rawValue { try osStringAsText(key, f) }
        return f
    }

    public func decodeString(_ key: KeyBytes) throws(RestorationFailure) -> String {
        String(decoding: try decodeStringBytes(key), as: UTF8.self)
    }

    /// Borrowed from the archive; valid until the callback returns.
    @inlinable @inline(__always)
    public func decodeBytes(_ key: KeyBytes) throws(RestorationFailure) -> UnsafeRawBufferPointer {
        if _slowPath(mode == .migrating) { return try editor.rawBytes(key) }
        let k = try decodingKey(key)
        let f: ArchiveReader.Field
        if k != KeyCache.absent, let g = decoding.next(k, ValueTag.bytes.rawValue) {
            f = g
        } else {
            f = try bytesFieldSlow(key, k)
        }
        return decoding.readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.bytes(f) }
    }

    /// The field of `decodeBytes` by a scan (`find`): bytes out of save
    /// order, or an OS string.
    @usableFromInline @inline(never)
    func bytesFieldSlow(_ key: KeyBytes, _ k: UInt32) throws(RestorationFailure) -> ArchiveReader.Field {
        guard k != KeyCache.absent, let f = decoding.find(k) else { throw missing(key) }
        if f.rawTag != ValueTag.bytes.rawValue && f.rawTag != ValueTag.osString.rawValue {
            throw mismatch(key, f.tag, .bytes)
        }
        return f
    }

    public func decodeObject(_ key: KeyBytes) throws(RestorationFailure) -> ObjectNode {
        ObjectNode.from(handle: try decodeObjectHandle(key))
    }

    /// The referenced object's handle (`rst_object *`), without reference counting.
    @inlinable @inline(__always)
    public func decodeObjectHandle(_ key: KeyBytes) throws(RestorationFailure) -> UnsafeMutableRawPointer {
        let k = try decodingKey(key)
        let target: Int
        if k != KeyCache.absent, let t = decoding.nextObject(k) {
            target = t
        } else {
            let f = try typedSlow(key, k, .object)
            target = decoding.readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.objectRecord(f) }
        }
        guard let sessionRef = decoding.sessionRef else { throw stateFailure(encode: false) }
        if let h = sessionRef._withUnsafeGuaranteedRef({ $0.handle(target) }) { return h }
        throw unresolvedReference(key, target)
    }

    @usableFromInline @inline(never)
    func unresolvedReference(_ key: KeyBytes, _ target: Int) -> RestorationFailure {
        if decoding.session?.state[target] == .pending {
            return RestorationFailure(.state, "\(location), key '\(key.string)' refers to record \(target) ('\(decoding.reader!.path(ofRecord: target))'), which is not materialized yet (pass 1 creates objects in archive order)")
        }
        return RestorationFailure(.notFound, "\(location), key '\(key.string)' refers to record \(target) ('\(decoding.reader!.path(ofRecord: target))'), which was skipped")
    }

    /// Copies into `buffer` when it is large enough; returns the count either way.
    @inlinable @inline(__always)
    public func decodeIntArray(_ key: KeyBytes, into buffer: UnsafeMutableBufferPointer<Int64>?) throws(RestorationFailure) -> (count: Int, copied: Bool) {
        if _slowPath(mode == .migrating) { return try editor.intArray(key, into: buffer) }
        let f = try typed(key, .intArray)
        return decoding.readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.intArray(f, ifRoomIn: buffer) }
    }

    public func decodeIntArray(_ key: KeyBytes) throws(RestorationFailure) -> [Int64] {
        if _slowPath(mode == .migrating) { return try editor.intArray(key) }
        let f = try typed(key, .intArray)
        let r = decoding.reader.unsafelyUnwrapped
        let n = r.intArrayCount(f)
        return [Int64](unsafeUninitializedCapacity: n) { buf, count in
            r.intArray(f, into: buf)
            count = n
        }
    }

    /// Element `index` (borrowed bytes), and the count. nil element when out of range.
    public func decodeStringArrayElement(_ key: KeyBytes, at index: Int) throws(RestorationFailure) -> (element: UnsafeRawBufferPointer?, count: Int) {
        if _slowPath(mode == .migrating) { return try editor.stringArrayElement(key, at: index) }
        let f = try typed(key, .stringArray)
        let r = decoding.reader.unsafelyUnwrapped
        return (index >= 0 ? r.stringArrayElement(f, at: index) : nil, r.stringArrayCount(f))
    }

    public func decodeStringArray(_ key: KeyBytes) throws(RestorationFailure) -> [String] {
        if _slowPath(mode == .migrating) { return try editor.stringArray(key) }
        let f = try typed(key, .stringArray)
        let r = decoding.reader.unsafelyUnwrapped
        let n = r.stringArrayCount(f)
        var out: [String] = []
        out.reserveCapacity(n)
        for i in 0..<n {
            if let e = r.stringArrayElement(f, at: i) { out.append(String(decoding: e, as: UTF8.self)) }
        }
        return out
    }

    @inlinable @inline(__always)
    public func decodeBeginRecord(_ key: KeyBytes) throws(RestorationFailure) {
        if _slowPath(mode == .migrating) { return try editor.beginRecord(key, create: false) }
        let f = try typed(key, .record)
        guard decoding.depth < RestorationLimits.maxRecordDepth else {
            throw RestorationFailure(.limit, "\(location): records nest at most \(RestorationLimits.maxRecordDepth) deep")
        }
        let r = decoding.readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.recordFields(f) }
        decoding.enter(r)
    }

    @inlinable @inline(__always)
    public func decodeEndRecord() throws(RestorationFailure) {
        if _slowPath(mode == .migrating) { return try editor.endRecord() }
        guard mode == .decoding || mode == .factory else { throw stateFailure(encode: false) }
        guard decoding.depth > 0 else {
            throw RestorationFailure(.state, "\(location) is at its top level (no record was begun)")
        }
        decoding.depth -= 1
    }

    // MARK: the decode lane (the C face's first try)

    /// The index of C key `key` when a decode call may take the field at
    /// the open record's hint: a decode callback or factory is running
    /// with an archive, and the key is in the key cache and in the archive.
    /// nil otherwise; then the checked call (`decodeInt` and the others)
    /// decides, with every message. Reads only (the key cache's lookup
    /// changes nothing), so a decline leaves the coder as it was.
    @inlinable @inline(__always)
    func decodeLane(_ key: UnsafePointer<CChar>) -> UInt32? {
        guard mode == .decoding || mode == .factory, decoding.readerRef != nil,
              let k = keys.lookup(cString: UnsafeRawPointer(key)), k != KeyCache.absent else { return nil }
        return k
    }

    /// `decodeBool` when the field at the hint is it; nil (nothing
    /// changed) otherwise. The `fastDecode…` calls below each return what
    /// the checked call of the same name returns, and move the hint as it
    /// does, whenever they return a value: the same `DecodingRole.next…`
    /// read, which that call tries first. With `atTail`, they read at the
    /// object's added tail instead (`DecodingRole.tail`; the checked call
    /// would find the same field: keys are unique within a record).
    @inlinable @inline(__always)
    public func fastDecodeBool(_ key: UnsafePointer<CChar>, atTail: Bool = false) -> Bool? {
        guard let k = decodeLane(key), let f = decoding.next(k, ValueTag.boolFalse.rawValue, atTail: atTail) else { return nil }
        return f.rawTag == ValueTag.boolTrue.rawValue
    }

    @inlinable @inline(__always)
    public func fastDecodeInt(_ key: UnsafePointer<CChar>, atTail: Bool = false) -> Int64? {
        guard let k = decodeLane(key) else { return nil }
        return decoding.nextInt(k, atTail: atTail)
    }

    @inlinable @inline(__always)
    public func fastDecodeDouble(_ key: UnsafePointer<CChar>, atTail: Bool = false) -> Double? {
        guard let k = decodeLane(key), let f = decoding.next(k, ValueTag.double.rawValue, atTail: atTail) else { return nil }
        return decoding.readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.double(f) }
    }

    /// `decodeStringBytes`' fast path: a string at the hint.
    @inlinable @inline(__always)
    public func fastDecodeStringBytes(_ key: UnsafePointer<CChar>, atTail: Bool = false) -> UnsafeRawBufferPointer? {
        guard let k = decodeLane(key), let f = decoding.next(k, ValueTag.string.rawValue, atTail: atTail) else { return nil }
        return decoding.readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.bytes(f) }
    }

    @inlinable @inline(__always)
    public func fastDecodeBytes(_ key: UnsafePointer<CChar>, atTail: Bool = false) -> UnsafeRawBufferPointer? {
        guard let k = decodeLane(key), let f = decoding.next(k, ValueTag.bytes.rawValue, atTail: atTail) else { return nil }
        return decoding.readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.bytes(f) }
    }

    /// `decodeObjectHandle`'s fast path: a reference at the hint to an
    /// object this restore has; the hint moves only then (a reference
    /// that does not resolve is left to the checked call and its message).
    @inlinable @inline(__always)
    public func fastDecodeObjectHandle(_ key: UnsafePointer<CChar>) -> UnsafeMutableRawPointer? {
        guard let k = decodeLane(key), let sessionRef = decoding.sessionRef else { return nil }
        let d = decoding.depth
        let hint = decoding.hints[d]
        let end = decoding.ranges[d].end
        guard let (target, e) = decoding.readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef({ $0.objectField(at: hint, before: end, key: k) }),
              let h = sessionRef._withUnsafeGuaranteedRef({ $0.handle(target) }) else { return nil }
        decoding.hints[d] = e
        return h
    }

    /// `decodeIntArray(_:into:)`'s fast path: an int array at the hint.
    @inlinable @inline(__always)
    public func fastDecodeIntArray(_ key: UnsafePointer<CChar>, into buffer: UnsafeMutableBufferPointer<Int64>?, atTail: Bool = false) -> (count: Int, copied: Bool)? {
        guard let k = decodeLane(key), let f = decoding.next(k, ValueTag.intArray.rawValue, atTail: atTail) else { return nil }
        return decoding.readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.intArray(f, ifRoomIn: buffer) }
    }

    /// `decodeBeginRecord`'s fast path: a record at the hint, below the
    /// depth limit; false (nothing changed) otherwise.
    @inlinable @inline(__always)
    public func fastDecodeBeginRecord(_ key: UnsafePointer<CChar>, atTail: Bool = false) -> Bool {
        guard let k = decodeLane(key), decoding.depth < RestorationLimits.maxRecordDepth,
              let f = decoding.next(k, ValueTag.record.rawValue, atTail: atTail) else { return false }
        decoding.enter(decoding.readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.recordFields(f) })
        return true
    }

    /// `decodeEndRecord`'s fast path: a record is open.
    @inlinable @inline(__always)
    public func fastDecodeEndRecord() -> Bool {
        guard mode == .decoding || mode == .factory, decoding.depth > 0 else { return false }
        decoding.depth -= 1
        return true
    }

    /// The keys of the current record with their types, in archive order
    /// (tools: restorectl's stand-in objects decode everything).
    public func forEachField(_ body: (String, ArchiveReader.Field) -> Void) throws(RestorationFailure) {
        if mode == .migrating {
            throw RestorationFailure(.state, "\(location): a migration lists the record's keys with migrationKeys(), not fields of the archive")
        }
        guard mode == .decoding || mode == .factory, let reader = decoding.reader else { throw stateFailure(encode: false) }
        reader.forEachField(in: decoding.ranges[decoding.depth]) { f in body(reader.keyName(f.key), f) }
    }

    /// The bytes of an OS string or of a string, borrowed like a string's
    /// (not NUL-terminated).
    public func decodeOSStringBytes(_ key: KeyBytes) throws(RestorationFailure) -> UnsafeRawBufferPointer {
        if _slowPath(mode == .migrating) { return try editor.osStringBytes(key) }
        guard let f = try field(key) else { throw missing(key) }
        guard f.rawTag == ValueTag.osString.rawValue || f.rawTag == ValueTag.string.rawValue else {
            throw mismatch(key, f.tag, .osString)
        }
        return decoding.readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.bytes(f) }
    }

    /// A field that is not a string, read as a string: an OS string that is
    /// valid UTF-8 passes; anything else is a type mismatch.
    @usableFromInline @inline(never)
    func osStringAsText(_ key: KeyBytes, _ f: ArchiveReader.Field) throws(RestorationFailure) {
        guard f.tag == .osString else { throw mismatch(key, f.tag, .string) }
        let b = decoding.readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.bytes(f) }
        if !ArgumentRules.isText(b) { throw osStringNotText(key) }
    }

    @usableFromInline @inline(never)
    func osStringNotText(_ key: KeyBytes) -> RestorationFailure {
        Coder.osStringNotText(key, at: location)
    }

    static func osStringNotText(_ key: KeyBytes, at location: String) -> RestorationFailure {
        RestorationFailure(.type, "\(location), key '\(key.string)' holds an OS string that is not valid UTF-8, not a string (read it as an OS string or as bytes)")
    }
}
