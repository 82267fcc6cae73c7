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

    /// The object of the running encode or decode callback (nil in a
    /// factory or a migration: no object exists yet).
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    unowned(unsafe) var node: ObjectNode?
    /// The record of the running decode callback, factory or migration.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    public private(set) var record = 0
    /// The encoding role's state (CoderEncoding.swift).
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    @usableFromInline var encoding = EncodingRole()
    /// The decoding role's state, also read by factories (CoderDecoding.swift).
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    @usableFromInline var decoding = DecodingRole()
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
    }

    deinit {
        decoding.deallocate()
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
        if _slowPath(encoding.sensitivityInSave) { beginSensitiveObject(node) }
    }

    @inline(__always)
    func endEncoding() {
        if _slowPath(encoding.sensitivityOn) { endSensitiveObject() }
        mode = .idle
        node = nil
    }

    @inline(never)
    private func beginSensitiveObject(_ node: ObjectNode) {
        encoding.sensitivityOn = engine.sensitivity.beginObject(node)
    }

    @inline(never)
    private func endSensitiveObject() {
        engine.sensitivity.endObject(self)
        encoding.sensitivityOn = false
    }

    func beginDecoding(record: Int, node: ObjectNode?, factory: Bool) {
        self.record = record
        self.node = node
        guard decoding.begin(record: record) else { return }
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

    /// `editor` is the one `beginMigrating` was given (held by the caller:
    /// read from the unowned `migration`, it was retained and released).
    func endMigrating(_ editor: MigrationEditor) {
        mode = .idle
        editor.releaseBorrowed()
        migration = nil
        // (Unretained, as `endDecoding` does: the coder holds it.)
        if let a = attachmentUnmanaged { a._withUnsafeGuaranteedRef { $0.callbackDidEnd() } }
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
            if let reader = decoding.reader { return "record \(record) ('\(reader.path(ofRecord: record))')\(mode == .migrating ? " (migrating)" : "")" }
            return "record \(record)"
        case .idle:
            return "coder"
        }
    }

    // MARK: shared by the roles: keys and failures

    /// The cached index of a key, if any (C keys are not measured).
    @inlinable @inline(__always)
    func cachedKey(_ key: KeyBytes) -> UInt32? {
        if key.isCString { return keys.lookup(cString: key.start.unsafelyUnwrapped) }
        return keys.lookup(key.bytes)
    }

    func cacheKey(_ key: KeyBytes, _ bytes: UnsafeRawBufferPointer, _ index: UInt32) {
        if key.isCString { keys.store(cKey: bytes, index) } else { keys.store(bytes, index) }
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

    // MARK: asked of every role

    public func contains(_ key: KeyBytes) throws(RestorationFailure) -> Bool {
        if _slowPath(mode == .migrating) { return editor.contains(key) }
        if mode == .encoding {
            guard let k = try? encodingKeyIndex(key) else { return false }
            return encoding.writer.tag(ofKey: k) != nil
        }
        return try field(key) != nil
    }

    private func encodingKeyIndex(_ key: KeyBytes) throws(RestorationFailure) -> UInt32 {
        try ArgumentRules.key(key.bytes, location: location)
        return encoding.writer.key(key.bytes)
    }

    /// The type under `key`: nil when absent; `.some(nil)` for an unknown (future) type.
    public func valueType(_ key: KeyBytes) throws(RestorationFailure) -> ValueTag?? {
        if _slowPath(mode == .migrating) { return editor.valueType(key) }
        if mode == .encoding {
            let k = try encodingKeyIndex(key)
            guard let t = encoding.writer.tag(ofKey: k) else { return nil }
            return .some(t)
        }
        guard let f = try field(key) else { return nil }
        return .some(f.tag)
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
        try withEditor { e throws(RestorationFailure) in try e.remove(key) }
    }

    /// Renames `from` to `to`, keeping the value and its place (a migration only).
    /// - Throws: `.notFound` when `from` is missing; `.duplicate` when `to`
    ///   is taken; `.invalid` for a bad key; `.state` outside a migration.
    /// The editor's lane inlined into the caller (the C face's
    /// `rst_coder_rename`); what it declines, and a coder not migrating,
    /// take the checked call.
    @inlinable
    public func rename(_ from: KeyBytes, to: KeyBytes) throws(RestorationFailure) {
        if mode == .migrating, withEditorLane({ $0.laneRename(from, to: to) }) { return }
        try renameChecked(from, to: to)
    }

    @usableFromInline @inline(never)
    func renameChecked(_ from: KeyBytes, to: KeyBytes) throws(RestorationFailure) {
        guard mode == .migrating else { throw notMigrating("rename") }
        try withEditor { e throws(RestorationFailure) in try e.rename(from, to: to) }
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
            case .encoding: return node.map { engine.migrations.classVersion(ofNode: $0) } ?? 0
            case .decoding, .factory: return decoding.reader?.version(ofRecord: record) ?? 0
            }
        }
    }

    /// The migrating role (`.migrating` mode only).
    @inlinable @inline(__always)
    var editor: MigrationEditor { migration.unsafelyUnwrapped }

    /// The archive being read (decode and factory modes).
    public var currentReader: ArchiveReader? { mode == .idle || mode == .encoding ? nil : decoding.reader }
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
        if mode == .encoding { encoding.note(f) }
    }
}
