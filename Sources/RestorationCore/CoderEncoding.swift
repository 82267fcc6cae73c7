import RestorationArchive

/// The encoding role's state (`.encoding` mode): the archive being
/// written and what the save in progress has decided so far. The coder's
/// encode calls (the extension below) are its operations.
@usableFromInline
struct EncodingRole {
    @usableFromInline var writer = ArchiveWriter()
    /// The first encode error of the save in progress; it fails the save.
    var failure: RestorationFailure? {
        didSet {
            hasFailure = failure != nil
            if hasFailure { lane = nil }
        }
    }
    /// `failure != nil`, without copying it on every encode call.
    @usableFromInline private(set) var hasFailure = false
    /// The save in progress (objects registered after it began are not in it).
    @usableFromInline var saveGeneration = 0
    /// Sensitive values (Sensitivity.swift): set when this object's values
    /// must be asked about; an engine without a policy never sets it.
    @usableFromInline var sensitivityOn = false {
        didSet { if sensitivityOn { lane = nil } }
    }
    /// Whether the save in progress has a policy (or is a portable export):
    /// only then does an encode callback ask the room. Set by the engine.
    var sensitivityInSave = false
    /// The writer's sink (`FieldSink`) while a save writes its records:
    /// taken after the writer's one copy-on-write check, dropped when the
    /// records are written (nothing copies the writer in between).
    @usableFromInline private(set) var sink: FieldSink?
    /// The sink, while the C face's encode calls may use it (`Coder.fastLane`):
    /// during the object's encode callback, until the save fails or one of
    /// the object's values is asked about (`sensitivityOn`); each of those
    /// clears it, so the fast lane checks one word instead of three flags.
    @usableFromInline private(set) var lane: FieldSink?

    /// Around the records of a save (`Engine.writeRecords`).
    mutating func openSink() { sink = writer.sink() }
    mutating func closeSink() { sink = nil }
    /// Around its encode callback, inside `beginEncoding`/`endEncoding`.
    mutating func openLane() { lane = hasFailure || sensitivityOn ? nil : sink }
    mutating func closeLane() { lane = nil }

    /// Keeps `f` when it is the save's first failure.
    mutating func note(_ f: RestorationFailure) {
        if failure == nil { failure = f }
    }
}

// MARK: - the encoding role's operations

extension Coder {
    /// Whether this object's values are asked about (`EncodingRole.sensitivityOn`).
    var sensitivityOn: Bool { encoding.sensitivityOn }

    @inlinable @inline(__always)
    func encodingKey(_ key: KeyBytes) throws(RestorationFailure) -> UInt32 {
        guard mode == .encoding, !encoding.hasFailure else { throw encodingRefused() }
        if let k = cachedKey(key) { return k }
        return try newEncodingKey(key)
    }

    /// Outside an encode callback, or after an earlier encode error.
    @usableFromInline @inline(never)
    func encodingRefused() -> RestorationFailure {
        guard mode == .encoding else { return stateFailure(encode: true) }
        let f = encoding.failure.unsafelyUnwrapped
        return RestorationFailure(f.status, "an earlier encode error already failed this save: \(f.message)")
    }

    @usableFromInline @inline(never)
    func newEncodingKey(_ key: KeyBytes) throws(RestorationFailure) -> UInt32 {
        let bytes = key.bytes
        // A bad key fails the whole save like any other encode error.
        do { try ArgumentRules.key(bytes, location: location) } catch { throw fail(error) }
        let k = encoding.writer.key(bytes)
        cacheKey(key, bytes, k)
        return k
    }

    @usableFromInline @inline(never)
    func record(_ error: WriteFailure, key: KeyBytes) -> RestorationFailure {
        let f: RestorationFailure
        switch error {
        case .duplicateKey:
            f = RestorationFailure(.duplicate, "\(location) already has a value for key '\(key.string)' in this record")
        case .limit(let m):
            f = RestorationFailure(.limit, "\(location), key '\(key.string)': \(m)")
        case .state(let m):
            f = RestorationFailure(.state, "\(location): \(m)")
        }
        encoding.note(f)
        return f
    }

    @usableFromInline @inline(never)
    func fail(_ f: RestorationFailure) -> RestorationFailure {
        if mode == .encoding { encoding.note(f) }
        return f
    }

    @inlinable @inline(__always)
    public func encodeBool(_ key: KeyBytes, _ v: Bool) throws(RestorationFailure) {
        if _slowPath(mode == .migrating) { return try withEditor { e throws(RestorationFailure) in try e.writeScalar(key, v ? .boolTrue : .boolFalse, bits: 0) } }
        let k = try encodingKey(key)
        if _slowPath(encoding.sensitivityOn), try divert(k, key, SensitiveValue.bool(v)) { return }
        do { try encoding.writer.writeBool(k, v) } catch { throw record(error, key: key) }
    }

    @inlinable @inline(__always)
    public func encodeInt(_ key: KeyBytes, _ v: Int64) throws(RestorationFailure) {
        if _slowPath(mode == .migrating) {
            if withEditorLane({ $0.laneWriteScalar(key, ValueTag.int.rawValue, bits: UInt64(bitPattern: v)) }) { return }
            return try withEditor { e throws(RestorationFailure) in try e.writeScalar(key, .int, bits: UInt64(bitPattern: v)) }
        }
        let k = try encodingKey(key)
        if _slowPath(encoding.sensitivityOn), try divert(k, key, SensitiveValue.int(v)) { return }
        do { try encoding.writer.writeInt(k, v) } catch { throw record(error, key: key) }
    }

    @inlinable @inline(__always)
    public func encodeDouble(_ key: KeyBytes, _ v: Double) throws(RestorationFailure) {
        if _slowPath(mode == .migrating) { return try withEditor { e throws(RestorationFailure) in try e.writeScalar(key, .double, bits: v.bitPattern) } }
        let k = try encodingKey(key)
        if _slowPath(encoding.sensitivityOn), try divert(k, key, SensitiveValue.double(v)) { return }
        do { try encoding.writer.writeDouble(k, v) } catch { throw record(error, key: key) }
    }

    /// `utf8` must be valid UTF-8 without NUL bytes.
    @inlinable @inline(__always)
    public func encodeString(_ key: KeyBytes, _ utf8: UnsafeRawBufferPointer) throws(RestorationFailure) {
        if _slowPath(mode == .migrating) { return try editor.writeString(key, utf8) }
        let k = try encodingKey(key)
        guard ArgumentRules.isText(utf8) else {
            throw fail(RestorationFailure(.invalid, "\(location), key '\(key.string)': the value is not valid UTF-8 (or holds a NUL byte)"))
        }
        if _slowPath(encoding.sensitivityOn), try divert(k, key, SensitiveValue.string(utf8)) { return }
        do { try encoding.writer.writeString(k, utf8) } catch { throw record(error, key: key) }
    }

    @inlinable @inline(__always)
    public func encodeBytes(_ key: KeyBytes, _ bytes: UnsafeRawBufferPointer) throws(RestorationFailure) {
        if _slowPath(mode == .migrating) { return try editor.write(key, .bytes(Array(bytes))) }
        let k = try encodingKey(key)
        if _slowPath(encoding.sensitivityOn), try divert(k, key, SensitiveValue.bytes(bytes)) { return }
        do { try encoding.writer.writeBytes(k, bytes) } catch { throw record(error, key: key) }
    }

    @inlinable @inline(__always)
    public func encodeObject(_ key: KeyBytes, _ ref: ObjectNode) throws(RestorationFailure) {
        let k = try encodingKey(key)
        if _slowPath(encoding.sensitivityOn), try divert(k, key, SensitiveValue.reference) { return }
        guard ref.engine === engine, ref.isRegistered else {
            throw fail(RestorationFailure(.invalid, "\(location), key '\(key.string)': the referenced object belongs to another engine"))
        }
        guard ref.saveGeneration == encoding.saveGeneration else {
            throw fail(RestorationFailure(.state, "\(location), key '\(key.string)': '\(ref.path)' was registered after this save began, so it is not in the archive"))
        }
        if _slowPath(ref.saveIndex < 0) { return }   // left out by the size budget (Budget.swift): the reference is dropped
        do { try encoding.writer.writeObject(k, record: ref.saveIndex) } catch { throw record(error, key: key) }
    }

    @inlinable @inline(__always)
    public func encodeIntArray(_ key: KeyBytes, _ values: UnsafeBufferPointer<Int64>) throws(RestorationFailure) {
        if _slowPath(mode == .migrating) { return try editor.write(key, .intArray(Array(values))) }
        let k = try encodingKey(key)
        if _slowPath(encoding.sensitivityOn), try divert(k, key, SensitiveValue.intArray(values)) { return }
        do { try encoding.writer.writeIntArray(k, values) } catch { throw record(error, key: key) }
    }

    public func encodeStringArray(_ key: KeyBytes, _ elements: [UnsafeRawBufferPointer]) throws(RestorationFailure) {
        if _slowPath(mode == .migrating) { return try editor.writeStringArray(key, elements) }
        let k = try encodingKey(key)
        for (i, e) in elements.enumerated() where !ArgumentRules.isText(e) {
            throw fail(RestorationFailure(.invalid, "\(location), key '\(key.string)': element \(i) is not valid UTF-8 (or holds a NUL byte)"))
        }
        if _slowPath(encoding.sensitivityOn), try divert(k, key, SensitiveValue.stringArray(elements)) { return }
        do { try encoding.writer.writeStringArray(k, elements) } catch { throw record(error, key: key) }
    }

    @inlinable @inline(__always)
    public func encodeBeginRecord(_ key: KeyBytes) throws(RestorationFailure) {
        if _slowPath(mode == .migrating) { return try editor.beginRecord(key, create: true) }
        let k = try encodingKey(key)
        if _slowPath(encoding.sensitivityOn), try divert(k, key, SensitiveValue.beginRecord) { return }
        do { try encoding.writer.beginRecord(k) } catch { throw record(error, key: key) }
    }

    @inlinable @inline(__always)
    public func encodeEndRecord() throws(RestorationFailure) {
        if _slowPath(mode == .migrating) { return try editor.endRecord() }
        guard mode == .encoding else { throw stateFailure(encode: true) }
        if _slowPath(encoding.sensitivityOn), try divertEndRecord() { return }
        guard encoding.writer.nestingDepth > 0 else {
            throw fail(RestorationFailure(.state, "\(location) has no open record to end"))
        }
        do { try encoding.writer.endRecord() } catch { throw record(error, key: KeyBytes(UnsafeRawBufferPointer(start: nil, count: 0))) }
    }

    // MARK: the fast lane of the C face's encode calls

    /// The writer's sink and the key's index when an encode call from C may
    /// go straight to the writer: an encode callback is running, the save
    /// has not failed, none of this object's values is asked about
    /// (sensitivity), and the key is in the cache (seen before in this
    /// save, confirmed byte for byte). Otherwise nil: the call takes the
    /// checked path (`encodeInt` and the others), which decides everything
    /// again, so a refusal, its message and the save's failure come from
    /// one place. `fastEncode…` return false, having written nothing, when
    /// the sink declines too (see `FieldSink`).
    @inlinable @inline(__always)
    func fastLane(_ key: UnsafePointer<CChar>) -> (FieldSink, UInt32)? {
        guard mode == .encoding, let sink = encoding.lane,   // no failure, no sensitivity (EncodingRole.lane)
              let k = keys.lookup(cString: UnsafeRawPointer(key)) else { return nil }
        return (sink, k)
    }

    @inlinable @inline(__always)
    public func fastEncodeBool(_ key: UnsafePointer<CChar>, _ v: Bool) -> Bool {
        guard let (s, k) = fastLane(key) else { return false }
        return s.tryBool(k, v)
    }

    @inlinable @inline(__always)
    public func fastEncodeInt(_ key: UnsafePointer<CChar>, _ v: Int64) -> Bool {
        guard let (s, k) = fastLane(key) else { return false }
        return s.tryInt(k, v)
    }

    @inlinable @inline(__always)
    public func fastEncodeDouble(_ key: UnsafePointer<CChar>, _ v: Double) -> Bool {
        guard let (s, k) = fastLane(key) else { return false }
        return s.tryDouble(k, v)
    }

    /// `utf8` has no NUL byte (measured with strlen); it is checked for UTF-8 here.
    @inlinable @inline(__always)
    public func fastEncodeString(_ key: UnsafePointer<CChar>, _ utf8: UnsafeRawBufferPointer) -> Bool {
        guard let (s, k) = fastLane(key), Coder.isLaneText(utf8) else { return false }
        return s.tryString(k, utf8)
    }

    /// `ArgumentRules.isText`, with ASCII text of 8 bytes or more (without
    /// NUL) confirmed a word at a time, the last word overlapping the one
    /// before (no byte loop for the tail); anything else gets the full check.
    @inlinable @inline(__always)
    static func isLaneText(_ b: UnsafeRawBufferPointer) -> Bool {
        let n = b.count
        if n >= 8, let p = b.baseAddress {
            // A byte >= 0x80 or a zero byte sets its high bit here (as in isText).
            @inline(__always) func flags(_ w: UInt64) -> UInt64 { w | ((w &- 0x0101_0101_0101_0101) & ~w) }
            var bad: UInt64 = 0
            var i = 0
            while i &+ 8 < n {
                bad |= flags(p.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                i &+= 8
            }
            bad |= flags(p.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self))
            if bad & 0x8080_8080_8080_8080 == 0 { return true }
        }
        return ArgumentRules.isText(b)
    }

    @inlinable @inline(__always)
    public func fastEncodeBytes(_ key: UnsafePointer<CChar>, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let (s, k) = fastLane(key) else { return false }
        return s.tryBytes(k, bytes)
    }

    /// A reference to an object of this save (`encodeObject`'s checks; a
    /// reference the size budget drops takes the checked path).
    @inlinable @inline(__always)
    public func fastEncodeObject(_ key: UnsafePointer<CChar>, _ ref: ObjectNode) -> Bool {
        guard let (s, k) = fastLane(key), ref.engine === engine, ref.isRegistered,
              ref.saveGeneration == encoding.saveGeneration, ref.saveIndex >= 0 else { return false }
        return s.tryObject(k, record: ref.saveIndex)
    }

    @inlinable @inline(__always)
    public func fastEncodeIntArray(_ key: UnsafePointer<CChar>, _ values: UnsafeBufferPointer<Int64>) -> Bool {
        guard let (s, k) = fastLane(key) else { return false }
        return s.tryIntArray(k, values)
    }

    @inlinable @inline(__always)
    public func fastEncodeBeginRecord(_ key: UnsafePointer<CChar>) -> Bool {
        guard let (s, k) = fastLane(key) else { return false }
        return s.tryBeginRecord(k)
    }

    /// After a failure (no lane) `encodeEndRecord` still ends the record.
    @inlinable @inline(__always)
    public func fastEncodeEndRecord() -> Bool {
        guard mode == .encoding, let sink = encoding.lane else { return false }
        return sink.tryEndRecord()
    }

    /// Sensitive values: true when the room left the value out or wrote it sealed.
    @usableFromInline @inline(never)
    func divert(_ k: UInt32, _ key: KeyBytes, _ value: SensitiveValue) throws(RestorationFailure) -> Bool {
        try engine.sensitivity.divert(self, k, key, value)
    }

    @usableFromInline @inline(never)
    func divertEndRecord() throws(RestorationFailure) -> Bool {
        try engine.sensitivity.endRecord(self)
    }

    /// Sets `key`'s sensitivity for this record (the open nested record, or
    /// the object's own fields) before it is encoded; wins over the policy.
    /// - Throws: `.state` outside an encode callback, or after the key was
    ///   encoded in this record (which also fails the save: the value was
    ///   written as it is); `.invalid`/`.limit` for a bad key.
    public func setSensitivity(_ key: KeyBytes, _ s: Sensitivity) throws(RestorationFailure) {
        guard mode == .encoding else {
            throw RestorationFailure(.state, "called outside an encode callback (a key's sensitivity is set while its object encodes, before the key)")
        }
        let bytes = key.bytes
        try ArgumentRules.key(bytes, location: location)
        let k = encoding.writer.key(bytes)
        if encoding.writer.rawTag(ofKey: k) != nil {
            // The value is already in the archive as it is: the save fails,
            // so it never reaches the disk.
            throw fail(RestorationFailure(.state, "\(location), key '\(key.string)': already encoded in this record; set its sensitivity before encoding it"))
        }
        let room = engine.sensitivity
        room.switchOn(node.unsafelyUnwrapped, depth: encoding.writer.nestingDepth)
        room.override(depth: encoding.writer.nestingDepth, key: k, s)
        encoding.sensitivityOn = true
    }

    /// Encodes an OS string: any bytes but NUL (a Linux file name or path,
    /// UTF-8 or not).
    public func encodeOSString(_ key: KeyBytes, _ bytes: UnsafeRawBufferPointer) throws(RestorationFailure) {
        if let nul = bytes.firstIndex(of: 0) {
            let f = RestorationFailure(.invalid, "\(location), key '\(key.string)': the OS string holds a NUL byte at offset \(nul)")
            if mode == .migrating { throw f }
            throw fail(f)
        }
        if _slowPath(mode == .migrating) { return try editor.write(key, .osString(Array(bytes))) }
        let k = try encodingKey(key)
        if _slowPath(encoding.sensitivityOn), try divert(k, key, SensitiveValue.osString(bytes)) { return }
        do { try encoding.writer.writeOSString(k, bytes) } catch { throw record(error, key: key) }
    }
}
