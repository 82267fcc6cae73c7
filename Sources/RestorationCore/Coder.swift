import RestorationArchive

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A key as bytes: the C layer passes a C string (measured only when the
/// key cache misses), the Swift API a String's UTF-8. Borrowed for the
/// duration of one call.
public struct KeyBytes {
    @usableFromInline let start: UnsafeRawPointer?
    /// -1: a NUL-terminated C string, not measured yet.
    @usableFromInline let length: Int

    @inline(__always) public init(_ bytes: UnsafeRawBufferPointer) {
        start = bytes.baseAddress
        length = bytes.count
    }

    /// A NUL-terminated C key.
    @inline(__always) public init(cString: UnsafePointer<CChar>) {
        start = UnsafeRawPointer(cString)
        length = -1
    }

    @inlinable @inline(__always) var isCString: Bool { length < 0 }

    /// The key's bytes (a C key is measured).
    public var bytes: UnsafeRawBufferPointer {
        if length >= 0 { return UnsafeRawBufferPointer(start: start, count: length) }
        return UnsafeRawBufferPointer(start: start, count: strlen(start.unsafelyUnwrapped.assumingMemoryBound(to: CChar.self)))
    }

    /// The key as text, for messages.
    public var string: String { String(decoding: bytes, as: UTF8.self) }
}

/// State an edge keeps with a coder (`Coder.attach`), told when each decode
/// callback or factory returns. A class (not a protocol) so that the coder
/// calls it without an existential or reference counting.
open class CoderAttachment {
    public init() {}
    /// The callback that the coder was passed to returned.
    open func callbackDidEnd() {}
}

/// The keyed, typed values of one object (`rst_coder`). One per engine,
/// reused: it is live only during the callback it was passed to, and every
/// call outside one fails with `.state`.
public final class Coder {
    public enum Mode: Equatable {
        case idle
        case encoding
        /// A factory's coder in pass 1: referenced records may not be materialized yet.
        case factory
        case decoding
        /// v1.1: a migration step edits a record (Migrations.swift).
        case migrating
    }

    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    public private(set) var mode: Mode = .idle
    public unowned(unsafe) let engine: Engine

    // Encoding state.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    @usableFromInline var writer = ArchiveWriter()
    /// The first encode error of the save in progress; it fails the save.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    var encodeFailure: RestorationFailure? {
        didSet { hasEncodeFailure = encodeFailure != nil }
    }
    /// `encodeFailure != nil`, without copying it on every encode call.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    @usableFromInline private(set) var hasEncodeFailure = false
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    unowned(unsafe) var node: ObjectNode?
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    @usableFromInline var saveGeneration = 0
    /// Sensitive values (Sensitivity.swift): set when this object's values
    /// must be asked about; an engine without a policy never sets it.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    @usableFromInline var sensitivityOn = false
    /// Whether the save in progress has a policy (or is a portable export):
    /// only then does an encode callback ask the room. Set by the engine.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    var sensitivityInSave = false

    // Decoding state.
    /// The archive being read; owns it for the restore.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    @usableFromInline var reader: ArchiveReader? {
        didSet { readerRef = reader.map { Unmanaged.passUnretained($0) } }
    }
    /// The same reader without reference counting on the hot paths.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    @usableFromInline private(set) var readerRef: Unmanaged<ArchiveReader>?
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    var session: RestoreSession? {
        didSet { sessionRef = session.map { Unmanaged.passUnretained($0) } }
    }
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    @usableFromInline private(set) var sessionRef: Unmanaged<RestoreSession>?
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    public private(set) var record = 0
    /// The open records (the object's own fields at depth 0) and the scan hint of each.
    @usableFromInline let ranges: UnsafeMutablePointer<ArchiveReader.FieldRange>
    @usableFromInline let hints: UnsafeMutablePointer<Int>
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    @usableFromInline private(set) var depth = 0
    /// Key address → key index, for the archive being written or read.
    @usableFromInline let keys = KeyCache()
    /// An edge's state kept with this coder (the C face's C-string arena),
    /// told when each decode callback or factory returns; `attachmentRef`
    /// is the same object, unretained, for hot paths.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var attachment: CoderAttachment?
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var attachmentUnmanaged: Unmanaged<CoderAttachment>?
    public var attachmentRef: UnsafeMutableRawPointer? { attachmentUnmanaged?.toOpaque() }
    /// What the running decode callback or factory reported (`failCallback`).
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    var callbackFailure: RestorationFailure? {
        didSet { hasCallbackFailure = callbackFailure != nil }
    }
    /// `callbackFailure != nil`, without copying it after every callback.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private(set) var hasCallbackFailure = false
    /// v1.1: the migrating role (`.migrating` mode), which owns the record
    /// a migration step edits. Not retained: `Engine.migrate` holds the
    /// editor for as long as it is set.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    @usableFromInline unowned(unsafe) var migration: MigrationEditor?

    init(engine: Engine) {
        self.engine = engine
        ranges = .allocate(capacity: RestorationLimits.maxRecordDepth + 2)
        hints = .allocate(capacity: RestorationLimits.maxRecordDepth + 2)
    }

    deinit {
        ranges.deallocate()
        hints.deallocate()
        keys.destroy()
    }


    /// The opaque handle C sees (`rst_coder *`).
    @inline(__always) public var handle: UnsafeMutableRawPointer {
        Unmanaged.passUnretained(self).toOpaque()
    }

    @inline(__always) public static func from(handle: UnsafeRawPointer) -> Coder {
        Unmanaged<Coder>.fromOpaque(handle).takeUnretainedValue()
    }

    // MARK: lifecycle (engine only)

    @inline(__always)
    func beginEncoding(_ node: ObjectNode) {
        self.node = node
        mode = .encoding
        if _slowPath(sensitivityInSave) { beginSensitiveObject(node) }
    }

    @inline(__always)
    func endEncoding() {
        if _slowPath(sensitivityOn) { endSensitiveObject() }
        mode = .idle
        node = nil
    }

    @inline(never)
    private func beginSensitiveObject(_ node: ObjectNode) {
        sensitivityOn = engine.sensitivity.beginObject(node)
    }

    @inline(never)
    private func endSensitiveObject() {
        engine.sensitivity.endObject(self)
        sensitivityOn = false
    }

    func beginDecoding(record: Int, node: ObjectNode?, factory: Bool) {
        self.record = record
        self.node = node
        guard let readerRef else { return }
        let r = readerRef._withUnsafeGuaranteedRef { $0.fields(ofRecord: record) }
        depth = 0
        ranges[0] = r
        hints[0] = r.start
        mode = factory ? .factory : .decoding
    }

    func endDecoding() {
        mode = .idle
        node = nil
        if let a = attachmentUnmanaged { a._withUnsafeGuaranteedRef { $0.callbackDidEnd() } }
    }

    func beginMigrating(record: Int, editor: MigrationEditor) {
        self.record = record
        node = nil
        migration = editor
        mode = .migrating
    }

    func endMigrating() {
        mode = .idle
        migration?.releaseBorrowed()
        migration = nil
        if let a = attachment { a.callbackDidEnd() }
    }

    /// Keeps `a` with this coder for as long as the coder lives.
    public func attach(_ a: CoderAttachment) {
        attachment = a
        attachmentUnmanaged = Unmanaged.passUnretained(a)
    }

    // MARK: where we are, for messages

    /// "object 'Tabs/Nav'" or "record 12 (Tabs/Nav)", for error messages.
    public var location: String {
        switch mode {
        case .encoding:
            return "object '\(node?.path ?? "?")'"
        case .factory, .decoding, .migrating:
            if let reader { return "record \(record) ('\(reader.path(ofRecord: record))')\(mode == .migrating ? " (migrating)" : "")" }
            return "record \(record)"
        case .idle:
            return "coder"
        }
    }

    // MARK: encode

    /// The cached index of a key, if any (C keys are not measured).
    @inlinable @inline(__always)
    func cachedKey(_ key: KeyBytes) -> UInt32? {
        if key.isCString { return keys.lookup(cString: key.start.unsafelyUnwrapped) }
        return keys.lookup(key.bytes)
    }

    private func cacheKey(_ key: KeyBytes, _ bytes: UnsafeRawBufferPointer, _ index: UInt32) {
        if key.isCString { keys.store(cKey: bytes, index) } else { keys.store(bytes, index) }
    }

    @inlinable @inline(__always)
    func encodingKey(_ key: KeyBytes) throws(RestorationFailure) -> UInt32 {
        guard mode == .encoding, !hasEncodeFailure else { throw encodingRefused() }
        if let k = cachedKey(key) { return k }
        return try newEncodingKey(key)
    }

    /// Outside an encode callback, or after an earlier encode error.
    @usableFromInline @inline(never)
    func encodingRefused() -> RestorationFailure {
        guard mode == .encoding else { return stateFailure(encode: true) }
        let f = encodeFailure.unsafelyUnwrapped
        return RestorationFailure(f.status, "an earlier encode error already failed this save: \(f.message)")
    }

    @usableFromInline @inline(never)
    func newEncodingKey(_ key: KeyBytes) throws(RestorationFailure) -> UInt32 {
        let bytes = key.bytes
        // A bad key fails the whole save like any other encode error.
        do { try ArgumentRules.key(bytes, location: location) } catch { throw fail(error) }
        let k = writer.key(bytes)
        cacheKey(key, bytes, k)
        return k
    }

    @usableFromInline @inline(never)
    func stateFailure(encode: Bool) -> RestorationFailure {
        if mode == .migrating {
            return RestorationFailure(.state, "\(location): object references cannot be read or written in a migration (no object exists yet); they stay as they are and can be renamed or removed")
        }
        return RestorationFailure(.state, encode
            ? "called outside an encode callback (the coder is only valid during the callback it was passed to)"
            : "called outside a decode callback or factory (the coder is only valid during the callback it was passed to)")
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
        if encodeFailure == nil { encodeFailure = f }
        return f
    }

    @usableFromInline @inline(never)
    func fail(_ f: RestorationFailure) -> RestorationFailure {
        if mode == .encoding, encodeFailure == nil { encodeFailure = f }
        return f
    }

    @inlinable @inline(__always)
    public func encodeBool(_ key: KeyBytes, _ v: Bool) throws(RestorationFailure) {
        if _slowPath(mode == .migrating) { return try editor.writeScalar(key, v ? .boolTrue : .boolFalse, bits: 0) }
        let k = try encodingKey(key)
        if _slowPath(sensitivityOn), try divert(k, key, SensitiveValue.bool(v)) { return }
        do { try writer.writeBool(k, v) } catch { throw record(error, key: key) }
    }

    @inlinable @inline(__always)
    public func encodeInt(_ key: KeyBytes, _ v: Int64) throws(RestorationFailure) {
        if _slowPath(mode == .migrating) { return try editor.writeScalar(key, .int, bits: UInt64(bitPattern: v)) }
        let k = try encodingKey(key)
        if _slowPath(sensitivityOn), try divert(k, key, SensitiveValue.int(v)) { return }
        do { try writer.writeInt(k, v) } catch { throw record(error, key: key) }
    }

    @inlinable @inline(__always)
    public func encodeDouble(_ key: KeyBytes, _ v: Double) throws(RestorationFailure) {
        if _slowPath(mode == .migrating) { return try editor.writeScalar(key, .double, bits: v.bitPattern) }
        let k = try encodingKey(key)
        if _slowPath(sensitivityOn), try divert(k, key, SensitiveValue.double(v)) { return }
        do { try writer.writeDouble(k, v) } catch { throw record(error, key: key) }
    }

    /// `utf8` must be valid UTF-8 without NUL bytes.
    @inlinable @inline(__always)
    public func encodeString(_ key: KeyBytes, _ utf8: UnsafeRawBufferPointer) throws(RestorationFailure) {
        if _slowPath(mode == .migrating) { return try editor.writeString(key, utf8) }
        let k = try encodingKey(key)
        guard ArgumentRules.isText(utf8) else {
            throw fail(RestorationFailure(.invalid, "\(location), key '\(key.string)': the value is not valid UTF-8 (or holds a NUL byte)"))
        }
        if _slowPath(sensitivityOn), try divert(k, key, SensitiveValue.string(utf8)) { return }
        do { try writer.writeString(k, utf8) } catch { throw record(error, key: key) }
    }

    @inlinable @inline(__always)
    public func encodeBytes(_ key: KeyBytes, _ bytes: UnsafeRawBufferPointer) throws(RestorationFailure) {
        if _slowPath(mode == .migrating) { return try editor.write(key, .bytes(Array(bytes))) }
        let k = try encodingKey(key)
        if _slowPath(sensitivityOn), try divert(k, key, SensitiveValue.bytes(bytes)) { return }
        do { try writer.writeBytes(k, bytes) } catch { throw record(error, key: key) }
    }

    @inlinable @inline(__always)
    public func encodeObject(_ key: KeyBytes, _ ref: ObjectNode) throws(RestorationFailure) {
        let k = try encodingKey(key)
        if _slowPath(sensitivityOn), try divert(k, key, SensitiveValue.reference) { return }
        guard ref.engine === engine, ref.isRegistered else {
            throw fail(RestorationFailure(.invalid, "\(location), key '\(key.string)': the referenced object belongs to another engine"))
        }
        guard ref.saveGeneration == saveGeneration else {
            throw fail(RestorationFailure(.state, "\(location), key '\(key.string)': '\(ref.path)' was registered after this save began, so it is not in the archive"))
        }
        if _slowPath(ref.saveIndex < 0) { return }   // left out by the size budget (Budget.swift): the reference is dropped
        do { try writer.writeObject(k, record: ref.saveIndex) } catch { throw record(error, key: key) }
    }

    @inlinable @inline(__always)
    public func encodeIntArray(_ key: KeyBytes, _ values: UnsafeBufferPointer<Int64>) throws(RestorationFailure) {
        if _slowPath(mode == .migrating) { return try editor.write(key, .intArray(Array(values))) }
        let k = try encodingKey(key)
        if _slowPath(sensitivityOn), try divert(k, key, SensitiveValue.intArray(values)) { return }
        do { try writer.writeIntArray(k, values) } catch { throw record(error, key: key) }
    }

    public func encodeStringArray(_ key: KeyBytes, _ elements: [UnsafeRawBufferPointer]) throws(RestorationFailure) {
        if _slowPath(mode == .migrating) { return try editor.writeStringArray(key, elements) }
        let k = try encodingKey(key)
        for (i, e) in elements.enumerated() where !ArgumentRules.isText(e) {
            throw fail(RestorationFailure(.invalid, "\(location), key '\(key.string)': element \(i) is not valid UTF-8 (or holds a NUL byte)"))
        }
        if _slowPath(sensitivityOn), try divert(k, key, SensitiveValue.stringArray(elements)) { return }
        do { try writer.writeStringArray(k, elements) } catch { throw record(error, key: key) }
    }

    @inlinable @inline(__always)
    public func encodeBeginRecord(_ key: KeyBytes) throws(RestorationFailure) {
        if _slowPath(mode == .migrating) { return try editor.beginRecord(key, create: true) }
        let k = try encodingKey(key)
        if _slowPath(sensitivityOn), try divert(k, key, SensitiveValue.beginRecord) { return }
        do { try writer.beginRecord(k) } catch { throw record(error, key: key) }
    }

    @inlinable @inline(__always)
    public func encodeEndRecord() throws(RestorationFailure) {
        if _slowPath(mode == .migrating) { return try editor.endRecord() }
        guard mode == .encoding else { throw stateFailure(encode: true) }
        if _slowPath(sensitivityOn), try divertEndRecord() { return }
        guard writer.nestingDepth > 0 else {
            throw fail(RestorationFailure(.state, "\(location) has no open record to end"))
        }
        do { try writer.endRecord() } catch { throw record(error, key: KeyBytes(UnsafeRawBufferPointer(start: nil, count: 0))) }
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
        let k = writer.key(bytes)
        if writer.rawTag(ofKey: k) != nil {
            // The value is already in the archive as it is: the save fails,
            // so it never reaches the disk.
            throw fail(RestorationFailure(.state, "\(location), key '\(key.string)': already encoded in this record; set its sensitivity before encoding it"))
        }
        let room = engine.sensitivity
        room.switchOn(node.unsafelyUnwrapped, depth: writer.nestingDepth)
        room.override(depth: writer.nestingDepth, key: k, s)
        sensitivityOn = true
    }

    // MARK: decode

    /// The field under `key` in the current record, or nil when absent.
    @inlinable @inline(__always)
    func field(_ key: KeyBytes) throws(RestorationFailure) -> ArchiveReader.Field? {
        guard mode == .decoding || mode == .factory, readerRef != nil else { throw stateFailure(encode: false) }
        let k = cachedKey(key) ?? newDecodingKey(key)
        if k == KeyCache.absent { return nil }
        let d = depth
        var hint = hints[d]
        let range = ranges[d]
        guard let f = readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef({ $0.find(k, in: range, hint: &hint) }) else { return nil }
        hints[d] = hint
        return f
    }

    @usableFromInline @inline(never)
    func newDecodingKey(_ key: KeyBytes) -> UInt32 {
        let bytes = key.bytes
        let k = readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.keyIndex(bytes) } ?? KeyCache.absent
        cacheKey(key, bytes, k)
        return k
    }

    @inlinable @inline(__always)
    func typed(_ key: KeyBytes, _ expected: ValueTag) throws(RestorationFailure) -> ArchiveReader.Field {
        guard let f = try field(key) else { throw missing(key) }
        let tag = f.tag
        if tag == expected || (expected == .boolFalse && tag == .boolTrue) { return f }
        throw mismatch(key, tag, expected)
    }

    @usableFromInline @inline(never)
    func mismatch(_ key: KeyBytes, _ tag: ValueTag?, _ expected: ValueTag) -> RestorationFailure {
        Coder.mismatch(key, tag, expected, at: location)
    }

    @usableFromInline @inline(never)
    func missing(_ key: KeyBytes) -> RestorationFailure {
        Coder.missing(key, at: location)
    }

    static func mismatch(_ key: KeyBytes, _ tag: ValueTag?, _ expected: ValueTag, at location: String) -> RestorationFailure {
        RestorationFailure(.type, "\(location), key '\(key.string)' holds \(Coder.typeName(tag)), not \(Coder.typeName(expected))")
    }

    static func missing(_ key: KeyBytes, at location: String) -> RestorationFailure {
        RestorationFailure(.notFound, "\(location) has no key '\(key.string)'")
    }

    /// "an int", "a string", for messages.
    public static func typeName(_ tag: ValueTag?) -> String {
        switch tag {
        case .boolFalse, .boolTrue: return "a bool"
        case .int: return "an int"
        case .double: return "a double"
        case .string: return "a string"
        case .bytes: return "bytes"
        case .object: return "an object reference"
        case .intArray: return "an int array"
        case .stringArray: return "a string array"
        case .record: return "a record"
        case .objectArray: return "an object array"
        case .osString: return "an OS string"
        case nil: return "a value of a type this version does not know"
        }
    }

    public func contains(_ key: KeyBytes) throws(RestorationFailure) -> Bool {
        if _slowPath(mode == .migrating) { return editor.contains(key) }
        if mode == .encoding {
            guard let k = try? encodingKeyIndex(key) else { return false }
            return writer.tag(ofKey: k) != nil
        }
        return try field(key) != nil
    }

    private func encodingKeyIndex(_ key: KeyBytes) throws(RestorationFailure) -> UInt32 {
        try ArgumentRules.key(key.bytes, location: location)
        return writer.key(key.bytes)
    }

    /// The type under `key`: nil when absent; `.some(nil)` for an unknown (future) type.
    public func valueType(_ key: KeyBytes) throws(RestorationFailure) -> ValueTag?? {
        if _slowPath(mode == .migrating) { return editor.valueType(key) }
        if mode == .encoding {
            let k = try encodingKeyIndex(key)
            guard let t = writer.tag(ofKey: k) else { return nil }
            return .some(t)
        }
        guard let f = try field(key) else { return nil }
        return .some(f.tag)
    }

    @inlinable @inline(__always)
    public func decodeBool(_ key: KeyBytes) throws(RestorationFailure) -> Bool {
        if _slowPath(mode == .migrating) { return try editor.bool(key) }
        let f = try typed(key, .boolFalse)
        return f.tag == .boolTrue
    }

    @inlinable @inline(__always)
    public func decodeInt(_ key: KeyBytes) throws(RestorationFailure) -> Int64 {
        if _slowPath(mode == .migrating) { return try editor.int(key) }
        let f = try typed(key, .int)
        return readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.int(f) }
    }

    @inlinable @inline(__always)
    public func decodeDouble(_ key: KeyBytes) throws(RestorationFailure) -> Double {
        if _slowPath(mode == .migrating) { return try editor.double(key) }
        let f = try typed(key, .double)
        return readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.double(f) }
    }

    /// The string's bytes, borrowed from the archive (not NUL-terminated).
    @inlinable @inline(__always)
    public func decodeStringBytes(_ key: KeyBytes) throws(RestorationFailure) -> UnsafeRawBufferPointer {
        if _slowPath(mode == .migrating) { return try editor.text(key) }
        guard let f = try field(key) else { throw missing(key) }
        if _slowPath(f.rawTag != ValueTag.string.rawValue) { try osStringAsText(key, f) }
        return readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.bytes(f) }
    }

    public func decodeString(_ key: KeyBytes) throws(RestorationFailure) -> String {
        String(decoding: try decodeStringBytes(key), as: UTF8.self)
    }

    /// Borrowed from the archive; valid until the callback returns.
    @inlinable @inline(__always)
    public func decodeBytes(_ key: KeyBytes) throws(RestorationFailure) -> UnsafeRawBufferPointer {
        if _slowPath(mode == .migrating) { return try editor.rawBytes(key) }
        guard let f = try field(key) else { throw missing(key) }
        if _slowPath(f.rawTag != ValueTag.bytes.rawValue && f.rawTag != ValueTag.osString.rawValue) {
            throw mismatch(key, f.tag, .bytes)
        }
        return readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.bytes(f) }
    }

    public func decodeObject(_ key: KeyBytes) throws(RestorationFailure) -> ObjectNode {
        ObjectNode.from(handle: try decodeObjectHandle(key))
    }

    /// The referenced object's handle (`rst_object *`), without reference counting.
    @inlinable @inline(__always)
    public func decodeObjectHandle(_ key: KeyBytes) throws(RestorationFailure) -> UnsafeMutableRawPointer {
        let f = try typed(key, .object)
        let target = readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.objectRecord(f) }
        guard let sessionRef else { throw stateFailure(encode: false) }
        if let h = sessionRef._withUnsafeGuaranteedRef({ $0.handle(target) }) { return h }
        throw unresolvedReference(key, target)
    }

    @usableFromInline @inline(never)
    func unresolvedReference(_ key: KeyBytes, _ target: Int) -> RestorationFailure {
        if session?.state[target] == .pending {
            return RestorationFailure(.state, "\(location), key '\(key.string)' refers to record \(target) ('\(reader!.path(ofRecord: target))'), which is not materialized yet (pass 1 creates objects in archive order)")
        }
        return RestorationFailure(.notFound, "\(location), key '\(key.string)' refers to record \(target) ('\(reader!.path(ofRecord: target))'), which was skipped")
    }

    /// Copies into `buffer` when it is large enough; returns the count either way.
    @inlinable @inline(__always)
    public func decodeIntArray(_ key: KeyBytes, into buffer: UnsafeMutableBufferPointer<Int64>?) throws(RestorationFailure) -> (count: Int, copied: Bool) {
        if _slowPath(mode == .migrating) { return try editor.intArray(key, into: buffer) }
        let f = try typed(key, .intArray)
        let r = reader.unsafelyUnwrapped
        let n = r.intArrayCount(f)
        guard let buffer, buffer.count >= n else { return (n, n == 0) }
        r.intArray(f, into: buffer)
        return (n, true)
    }

    public func decodeIntArray(_ key: KeyBytes) throws(RestorationFailure) -> [Int64] {
        if _slowPath(mode == .migrating) { return try editor.intArray(key) }
        let f = try typed(key, .intArray)
        let r = reader.unsafelyUnwrapped
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
        let r = reader.unsafelyUnwrapped
        return (index >= 0 ? r.stringArrayElement(f, at: index) : nil, r.stringArrayCount(f))
    }

    public func decodeStringArray(_ key: KeyBytes) throws(RestorationFailure) -> [String] {
        if _slowPath(mode == .migrating) { return try editor.stringArray(key) }
        let f = try typed(key, .stringArray)
        let r = reader.unsafelyUnwrapped
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
        guard depth < RestorationLimits.maxRecordDepth else {
            throw RestorationFailure(.limit, "\(location): records nest at most \(RestorationLimits.maxRecordDepth) deep")
        }
        let r = readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.recordFields(f) }
        depth += 1
        ranges[depth] = r
        hints[depth] = r.start
    }

    @inlinable @inline(__always)
    public func decodeEndRecord() throws(RestorationFailure) {
        if _slowPath(mode == .migrating) { return try editor.endRecord() }
        guard mode == .decoding || mode == .factory else { throw stateFailure(encode: false) }
        guard depth > 0 else {
            throw RestorationFailure(.state, "\(location) is at its top level (no record was begun)")
        }
        depth -= 1
    }

    /// The keys of the current record with their types, in archive order
    /// (tools: restorectl's stand-in objects decode everything).
    public func forEachField(_ body: (String, ArchiveReader.Field) -> Void) throws(RestorationFailure) {
        if mode == .migrating {
            throw RestorationFailure(.state, "\(location): a migration lists the record's keys with migrationKeys(), not fields of the archive")
        }
        guard mode == .decoding || mode == .factory, let reader else { throw stateFailure(encode: false) }
        reader.forEachField(in: ranges[depth]) { f in body(reader.keyName(f.key), f) }
    }

    /// v1.1: the keys of the record a migration edits (its current nested
    /// record), in order.
    public func migrationKeys() throws(RestorationFailure) -> [String] {
        guard mode == .migrating else { throw notMigrating("migrationKeys") }
        return editor.keys()
    }

    /// Removes `key` from the record (a migration only).
    /// - Throws: `.notFound` for a missing key; `.state` outside a migration.
    public func remove(_ key: KeyBytes) throws(RestorationFailure) {
        guard mode == .migrating else { throw notMigrating("remove") }
        try editor.remove(key)
    }

    /// Renames `from` to `to`, keeping the value and its place (a migration only).
    /// - Throws: `.notFound` when `from` is missing; `.duplicate` when `to`
    ///   is taken; `.invalid` for a bad key; `.state` outside a migration.
    public func rename(_ from: KeyBytes, to: KeyBytes) throws(RestorationFailure) {
        guard mode == .migrating else { throw notMigrating("rename") }
        try editor.rename(from, to: to)
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

    /// The migrating role (`.migrating` mode only).
    @inlinable @inline(__always)
    var editor: MigrationEditor { migration.unsafelyUnwrapped }

    /// The archive being read (decode and factory modes).
    public var currentReader: ArchiveReader? { mode == .idle || mode == .encoding ? nil : reader }
}

extension Coder {
    /// The callback this coder was passed to failed as a whole (a Swift
    /// throw, `rst_coder_fail`, a plugin's error): the one rule of
    /// docs/ARCHITECTURE.md, "Errors". In an encode callback the save fails
    /// with `f`; in a decode callback the engine logs it, does not count the
    /// object as restored and skips its `finished`; in a factory it is
    /// logged. The first failure of a callback counts.
    /// - Throws: `.state` outside a callback.
    public func failCallback(_ f: RestorationFailure) throws(RestorationFailure) {
        switch mode {
        case .idle:
            throw RestorationFailure(.state, "no callback is running (the coder is only valid during the callback it was passed to)")
        case .encoding:
            recordEncodeFailure(RestorationFailure(f.status, "\(location): \(f.message)"))
        case .decoding, .factory, .migrating:
            if callbackFailure == nil { callbackFailure = f }
        }
    }

    /// The failure a decode callback or factory reported, cleared.
    func takeCallbackFailure() -> RestorationFailure? {
        defer { callbackFailure = nil }
        return callbackFailure
    }

    /// Records a misuse detected by an edge (a NULL argument); inside an
    /// encode callback it fails the save like any other encode error.
    public func misuse(_ status: Status, _ message: String) -> RestorationFailure {
        let f = RestorationFailure(status, message)
        recordEncodeFailure(f)
        return f
    }

    public func recordEncodeFailure(_ f: RestorationFailure) {
        if mode == .encoding, encodeFailure == nil { encodeFailure = f }
    }
}

// MARK: - OS strings (file names: any bytes but NUL)

extension Coder {
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
        if _slowPath(sensitivityOn), try divert(k, key, SensitiveValue.osString(bytes)) { return }
        do { try writer.writeOSString(k, bytes) } catch { throw record(error, key: key) }
    }

    /// The bytes of an OS string or of a string, borrowed like a string's
    /// (not NUL-terminated).
    public func decodeOSStringBytes(_ key: KeyBytes) throws(RestorationFailure) -> UnsafeRawBufferPointer {
        if _slowPath(mode == .migrating) { return try editor.osStringBytes(key) }
        guard let f = try field(key) else { throw missing(key) }
        guard f.rawTag == ValueTag.osString.rawValue || f.rawTag == ValueTag.string.rawValue else {
            throw mismatch(key, f.tag, .osString)
        }
        return readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.bytes(f) }
    }

    /// A field that is not a string, read as a string: an OS string that is
    /// valid UTF-8 passes; anything else is a type mismatch.
    @usableFromInline @inline(never)
    func osStringAsText(_ key: KeyBytes, _ f: ArchiveReader.Field) throws(RestorationFailure) {
        guard f.tag == .osString else { throw mismatch(key, f.tag, .string) }
        let b = readerRef.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.bytes(f) }
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
