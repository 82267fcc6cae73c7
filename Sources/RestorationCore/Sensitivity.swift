import RestorationArchive
import CSodium

// Sensitive values (library 1.2): which values must not reach the disk as
// they are, and what a save, an export and a restore do with them.
//
// The policy lives here, in one room with a narrow interface: the coder
// asks it only when `EncodingRole.sensitivityOn` is set (one branch per value for
// an engine without a policy), and the engine tells it when a save or an
// export begins and ends and when a restore meets sealed values.
//
// - SECRET: nothing is written (a nested record under the key: nothing of it).
// - ENCRYPTED: a leaf value is written sealed (tag 12, docs/FORMAT.md) with
//   XChaCha20-Poly1305 from libsodium, a fresh random nonce, and the record
//   path, class and key as associated data; a nested record under the key
//   keeps its structure and has every value in it sealed; an object
//   reference (an index of another record of the same archive) stays plain.
//   Without a key the value is left out, counted, and one WARNING per save
//   says so. A restore opens every sealed value once, before any decode.
// - LOCAL: written, with the record's list of LOCAL keys (tag 14) so that a
//   portable export (here, or `restorectl export --portable`) leaves it out.

/// How one key's values are written (`rst_sensitivity`).
public enum Sensitivity: UInt32, Sendable {
    case normal = 0, secret = 1, encrypted = 2, local = 3
}

/// Fills a 32-byte key; false: no key. Called with the engine's lock held.
public typealias EncryptionKeyProvider = (UnsafeMutableRawBufferPointer) -> Bool

/// A value the coder was asked to encode, for the room to seal or drop.
@usableFromInline
enum SensitiveValue {
    case bool(Bool), int(Int64), double(Double)
    case string(UnsafeRawBufferPointer), bytes(UnsafeRawBufferPointer), osString(UnsafeRawBufferPointer)
    case intArray(UnsafeBufferPointer<Int64>), stringArray([UnsafeRawBufferPointer])
    case reference, beginRecord
}

public final class SensitivityRoom {
    /// What is being written.
    public enum WriteMode: Equatable { case save, export, portableExport }

    private struct Rule {
        var anyClass: Sensitivity? = nil
        var byClass: [String: Sensitivity] = [:]
    }

    // The policy (changed under the engine's lock).
    private var rules: [[UInt8]: Rule] = [:]
    /// Whether any rule is set: an engine without one pays one branch per value.
    public private(set) var hasPolicy = false
    /// The encryption key's source (options `encryption_key`, Swift closure).
    public var keyProvider: EncryptionKeyProvider?

    // One save or export.
    private var inSave = false
    private var pendingRules: [(String?, [UInt8], Sensitivity)] = []
    private(set) var mode: WriteMode = .save
    private var key: UnsafeMutableRawPointer?
    private var keyAsked = false
    private var keyMissingReason = ""
    private var leftOut = 0
    private var resolved: [UInt32: Rule?] = [:]

    // One object of it.
    private struct Level {
        var inherited: Sensitivity
        var marks: [[UInt8]]
    }
    private var levels: [Level] = []
    private var overrides: [(depth: Int, key: UInt32, s: Sensitivity)] = []
    private var dropDepth = 0
    private var objectClass: String? = nil
    private var objectPath = ""
    /// Scratch reused from value to value of a save: the associated data's
    /// path and class part, the inner content, the sealed payload.
    private var adPrefix: [UInt8] = []
    private var ad: [UInt8] = []
    private var plain: [UInt8] = []
    private var sealed: [UInt8] = []
    /// Random nonces drawn 128 at a time (one system call, not one per
    /// value); each is used once, then the batch is wiped with the key.
    private var nonces = [UInt8](repeating: 0, count: 24 * 128)
    private var noncesLeft = 0

    init() {}

    deinit { wipeKey() }

    // MARK: the policy

    /// Sets the policy for `key` in records of `className` (nil: every class).
    /// During a save or export (from one of its callbacks) the change waits
    /// for its end: a save keeps the policy it began with.
    public func set(className: String?, key: [UInt8], _ s: Sensitivity) {
        if inSave {
            pendingRules.append((className, key, s))
            return
        }
        var rule = rules[key] ?? Rule()
        if let c = className {
            rule.byClass[c] = s == .normal ? nil : s
        } else {
            rule.anyClass = s == .normal ? nil : s
        }
        rules[key] = (rule.anyClass == nil && rule.byClass.isEmpty) ? nil : rule
        hasPolicy = !rules.isEmpty
    }

    /// The policy for `key` in a record of `className`.
    public func policy(className: String?, key: [UInt8]) -> Sensitivity {
        guard hasPolicy, let rule = rules[key] else { return .normal }
        if let c = className, let s = rule.byClass[c] { return s }
        return rule.anyClass ?? .normal
    }

    // MARK: a save or an export (the engine)

    func beginSave(_ m: WriteMode) {
        inSave = true
        mode = m
        keyAsked = false
        keyMissingReason = ""
        leftOut = 0
        resolved.removeAll(keepingCapacity: true)
    }

    /// The save writes its records (again: a size budget's TRIM encodes
    /// every object a second time) into a new writer, whose key indexes
    /// differ: the values left out are counted again.
    func newWriter() {
        resolved.removeAll(keepingCapacity: true)
        leftOut = 0
    }

    /// Ends the save: wipes the key; returns the ENCRYPTED values left out
    /// for want of a key and why.
    func endSave() -> (count: Int, reason: String) {
        if inSave {
            inSave = false
            let pending = pendingRules
            pendingRules.removeAll()
            for (c, k, s) in pending { set(className: c, key: k, s) }
        }
        wipeKey()
        plain.withUnsafeMutableBytes { rsod_wipe($0.baseAddress, $0.count) }
        plain.removeAll(keepingCapacity: true)
        keyAsked = false
        resolved.removeAll(keepingCapacity: true)
        defer { leftOut = 0; mode = .save }
        return (leftOut, keyMissingReason)
    }

    private func wipeKey() {
        if noncesLeft > 0 {
            nonces.withUnsafeMutableBytes { rsod_wipe($0.baseAddress, $0.count) }
            noncesLeft = 0
        }
        if let k = key {
            rsod_wipe(k, 32)
            k.deallocate()
            key = nil
        }
    }

    /// The key for this save or restore, asked once.
    private func obtainKey() -> UnsafeRawPointer? {
        if keyAsked { return key.map { UnsafeRawPointer($0) } }
        keyAsked = true
        guard let provider = keyProvider else {
            keyMissingReason = "no encryption key callback is set"
            return nil
        }
        guard SensitivityRoom.sodiumReady else {
            keyMissingReason = "libsodium could not be initialized"
            return nil
        }
        let k = UnsafeMutableRawPointer.allocate(byteCount: 32, alignment: 16)
        k.initializeMemory(as: UInt8.self, repeating: 0, count: 32)
        guard provider(UnsafeMutableRawBufferPointer(start: k, count: 32)) else {
            rsod_wipe(k, 32)
            k.deallocate()
            keyMissingReason = "the encryption key callback gave no key"
            return nil
        }
        key = k
        return UnsafeRawPointer(k)
    }

    // MARK: one object (the coder)

    /// An encode callback begins: whether the coder must ask this room.
    func beginObject(_ node: ObjectNode) -> Bool {
        start(node)
        return true
    }

    private func start(_ node: ObjectNode) {
        levels.removeAll(keepingCapacity: true)
        levels.append(Level(inherited: .normal, marks: []))
        overrides.removeAll(keepingCapacity: true)
        dropDepth = 0
        objectClass = node.className
        objectPath = node.path
        adPrefix.removeAll(keepingCapacity: true)
        adPrefix += objectPath.utf8
        adPrefix.append(0)
        if let c = objectClass { adPrefix += c.utf8 }
        adPrefix.append(0)
    }

    /// `rst_coder_set_sensitivity` turned the room on inside a callback.
    func switchOn(_ node: ObjectNode, depth: Int) {
        if levels.isEmpty { start(node) }
        while levels.count < depth + 1 { levels.append(Level(inherited: .normal, marks: [])) }
    }

    func override(depth: Int, key: UInt32, _ s: Sensitivity) {
        overrides.removeAll { $0.depth == depth && $0.key == key }
        overrides.append((depth, key, s))
    }

    private func effective(_ k: UInt32, _ keyBytes: UnsafeRawBufferPointer, depth: Int) -> Sensitivity {
        for o in overrides where o.depth == depth && o.key == k { return o.s }
        var s = Sensitivity.normal
        if hasPolicy {
            let rule: Rule?
            if let r = resolved[k] { rule = r } else {
                rule = rules[Array(keyBytes)]
                resolved[k] = .some(rule)
            }
            if let rule {
                if let c = objectClass, let cs = rule.byClass[c] { s = cs } else { s = rule.anyClass ?? .normal }
            }
        }
        // A nested record under an ENCRYPTED key seals what it holds,
        // unless the policy says otherwise for a key inside it.
        if s == .normal { return levels[min(depth, levels.count - 1)].inherited }
        return s
    }

    /// True when the value was handled here (left out or written sealed).
    func divert(_ coder: Coder, _ k: UInt32, _ key: KeyBytes, _ value: SensitiveValue) throws(RestorationFailure) -> Bool {
        if dropDepth > 0 {
            if case .beginRecord = value { dropDepth += 1 }
            return true
        }
        let depth = coder.encoding.writer.nestingDepth
        if levels.count < depth + 1 { switchOn(coder.node.unsafelyUnwrapped, depth: depth) }
        let keyBytes = key.bytes
        var s = effective(k, keyBytes, depth: depth)
        if mode == .portableExport && (s == .local || s == .encrypted) { s = .secret }
        switch s {
        case .normal:
            if case .beginRecord = value { levels.append(Level(inherited: levels[depth].inherited, marks: [])) }
            return false
        case .secret:
            if case .beginRecord = value { dropDepth = 1 }
            return true
        case .local:
            levels[depth].marks.append(Array(keyBytes))
            if case .beginRecord = value { levels.append(Level(inherited: .normal, marks: [])) }
            return false
        case .encrypted:
            switch value {
            case .reference:
                return false
            case .beginRecord:
                levels.append(Level(inherited: .encrypted, marks: []))
                return false
            case .bool, .int, .double, .string, .bytes, .osString, .intArray, .stringArray:
                if mode == .save || mode == .export, obtainKey() == nil {
                    if mode == .save { leftOut += 1 }
                    return true
                }
                try seal(coder, k, key, keyBytes, value)
                return true
            }
        }
    }

    /// A nested record ends: true when it was left out (nothing to end in
    /// the writer); otherwise its LOCAL marks are written first.
    func endRecord(_ coder: Coder) throws(RestorationFailure) -> Bool {
        if dropDepth > 0 {
            dropDepth -= 1
            return true
        }
        let depth = coder.encoding.writer.nestingDepth
        guard depth > 0, levels.count > depth else { return false }
        try writeMarks(coder, depth)
        levels.removeLast(levels.count - depth)
        overrides.removeAll { $0.depth >= depth }
        return false
    }

    /// The encode callback returned: the object's own LOCAL marks.
    func endObject(_ coder: Coder) {
        defer {
            levels.removeAll(keepingCapacity: true)
            overrides.removeAll(keepingCapacity: true)
            dropDepth = 0
        }
        guard !coder.encoding.hasFailure, coder.encoding.writer.nestingDepth == 0, !levels.isEmpty else { return }
        do { try writeMarks(coder, 0) } catch { coder.recordEncodeFailure(error) }
    }

    /// The name of the field holding a record's LOCAL keys: any key not used
    /// in the record (readers know the field by its tag).
    static let marksKeyName = Array(ArchiveFormat.localMarksKey.utf8)

    private func writeMarks(_ coder: Coder, _ depth: Int) throws(RestorationFailure) {
        let marks = levels[depth].marks
        guard !marks.isEmpty else { return }
        var payload: [UInt8] = []
        putVarint(&payload, UInt64(marks.count))
        for m in marks {
            putVarint(&payload, UInt64(m.count))
            payload += m
        }
        var name = SensitivityRoom.marksKeyName
        var n = 1
        while true {
            let k = name.withUnsafeBytes { coder.encoding.writer.key($0) }
            if coder.encoding.writer.rawTag(ofKey: k) == nil {
                if let e = SensitivityRoom.writeUnknown(coder, k, ArchiveFormat.localMarksTag, payload) {
                    throw coder.record(e, key: KeyBytes(UnsafeRawBufferPointer(start: nil, count: 0)))
                }
                return
            }
            n += 1
            name = SensitivityRoom.marksKeyName + Array(".\(n)".utf8)
        }
    }

    // MARK: sealing

    /// The associated data of a sealed value: path, class and key.
    static func associatedData(path: String, className: String?, key: UnsafeRawBufferPointer) -> [UInt8] {
        var ad = Array(path.utf8)
        ad.append(0)
        if let c = className { ad += Array(c.utf8) }
        ad.append(0)
        ad += Array(key)
        return ad
    }

    private func seal(_ coder: Coder, _ k: UInt32, _ key: KeyBytes, _ keyBytes: UnsafeRawBufferPointer, _ value: SensitiveValue) throws(RestorationFailure) {
        plain.removeAll(keepingCapacity: true)
        let tag: UInt8
        switch value {
        case .bool(let b): tag = b ? ValueTag.boolTrue.rawValue : ValueTag.boolFalse.rawValue
        case .int(let v):
            tag = ValueTag.int.rawValue
            putVarint(&plain, UInt64(bitPattern: (v << 1) ^ (v >> 63)))
        case .double(let d):
            tag = ValueTag.double.rawValue
            withUnsafeBytes(of: d.bitPattern.littleEndian) { plain += $0 }
        case .string(let b): tag = ValueTag.string.rawValue; plain += b
        case .bytes(let b): tag = ValueTag.bytes.rawValue; plain += b
        case .osString(let b): tag = ValueTag.osString.rawValue; plain += b
        case .intArray(let a):
            tag = ValueTag.intArray.rawValue
            putVarint(&plain, UInt64(a.count))
            for v in a { putVarint(&plain, UInt64(bitPattern: (v << 1) ^ (v >> 63))) }
        case .stringArray(let a):
            tag = ValueTag.stringArray.rawValue
            putVarint(&plain, UInt64(a.count))
            for e in a { putVarint(&plain, UInt64(e.count)); plain += e }
        case .reference, .beginRecord:
            return
        }
        defer { plain.withUnsafeMutableBytes { rsod_wipe($0.baseAddress, $0.count) } }
        guard let keyPtr = key_ else { return }
        ad.removeAll(keepingCapacity: true)
        ad += adPrefix
        ad += keyBytes
        let count = ArchiveFormat.sealedOverhead + plain.count
        sealed.removeAll(keepingCapacity: true)
        sealed.append(contentsOf: repeatElement(0, count: count))
        sealed[0] = tag
        if noncesLeft == 0 {
            nonces.withUnsafeMutableBytes { rsod_random($0.baseAddress, $0.count) }
            noncesLeft = nonces.count / 24
        }
        noncesLeft -= 1
        let nonceAt = noncesLeft * 24
        let rc = sealed.withUnsafeMutableBytes { o in
            plain.withUnsafeBytes { p in
                ad.withUnsafeBytes { a in
                    nonces.withUnsafeMutableBytes { n in
                        let out = o.baseAddress!.assumingMemoryBound(to: UInt8.self)
                        let nonce = n.baseAddress!.assumingMemoryBound(to: UInt8.self) + nonceAt
                        out.advanced(by: 1).update(from: nonce, count: 24)
                        nonce.update(repeating: 0, count: 24)           // used: never again
                        return rsod_seal(out + 25, out + 1,
                                         p.baseAddress?.assumingMemoryBound(to: UInt8.self), p.count,
                                         a.baseAddress?.assumingMemoryBound(to: UInt8.self), a.count,
                                         keyPtr.assumingMemoryBound(to: UInt8.self))
                    }
                }
            }
        }
        guard rc == 0 else {
            throw coder.fail(RestorationFailure(.io, "\(coder.location), key '\(key.string)': the value could not be sealed"))
        }
        if let e = SensitivityRoom.writeUnknown(coder, k, ArchiveFormat.sealedTag, sealed) { throw coder.record(e, key: key) }
    }

    private static func writeUnknown(_ coder: Coder, _ k: UInt32, _ tag: UInt8, _ payload: [UInt8]) -> WriteFailure? {
        payload.withUnsafeBytes { p -> WriteFailure? in
            do throws(WriteFailure) { try coder.encoding.writer.writeUnknown(k, tag: tag, payload: p); return nil } catch { return error }
        }
    }

    private var key_: UnsafeRawPointer? { key.map { UnsafeRawPointer($0) } }

    // MARK: carried records

    /// A carried record's values as this save or export may write them:
    /// SECRET keys of the policy left out; in a portable export, LOCAL and
    /// ENCRYPTED ones (and sealed values and marked keys) too.
    func filterCarried(_ entries: [ArchiveEntry], className: String?, inheritedOut: Bool = false) -> [ArchiveEntry] {
        let portable = mode == .portableExport
        guard hasPolicy || portable else { return entries }
        var local = Set<String>()
        if portable {
            for e in entries { if SensitivityRoom.isMarks(e) , case .unknown(_, let p) = e.value { local.formUnion(SensitivityRoom.markedKeys(p) ?? []) } }
        }
        var out: [ArchiveEntry] = []
        out.reserveCapacity(entries.count)
        for var e in entries {
            let s = policy(className: className, key: Array(e.key.utf8))
            if s == .secret { continue }
            if portable {
                if s == .local || s == .encrypted || local.contains(e.key) { continue }
                if case .unknown(let t, _) = e.value, t == ArchiveFormat.sealedTag { continue }
                if SensitivityRoom.isMarks(e) { continue }
            }
            if case .record(let sub) = e.value { e.value = .record(filterCarried(sub, className: className)) }
            out.append(e)
        }
        return out
    }

    /// A record's values as a portable export writes them: sealed values,
    /// LOCAL marks and the keys they list left out, nested records included
    /// (`restorectl export --portable`).
    public static func portableEntries(_ entries: [ArchiveEntry]) -> [ArchiveEntry] {
        var local = Set<String>()
        for e in entries { if isMarks(e), case .unknown(_, let p) = e.value { local.formUnion(markedKeys(p) ?? []) } }
        var out: [ArchiveEntry] = []
        for var e in entries where !local.contains(e.key) {
            if case .unknown(let t, _) = e.value, t == ArchiveFormat.sealedTag { continue }
            if isMarks(e) { continue }
            if case .record(let sub) = e.value { e.value = .record(portableEntries(sub)) }
            out.append(e)
        }
        return out
    }

    /// Whether a value is a record's list of LOCAL keys: tag 14, a key that
    /// starts with "rst.local", a payload that parses.
    static func isMarks(_ e: ArchiveEntry) -> Bool {
        guard case .unknown(let t, let p) = e.value, t == ArchiveFormat.localMarksTag,
              e.key.hasPrefix(ArchiveFormat.localMarksKey) else { return false }
        return markedKeys(p) != nil
    }

    /// The key names a LOCAL marks payload lists; nil for a malformed one
    /// (then nothing is taken as marked).
    public static func markedKeys(_ p: [UInt8]) -> [String]? {
        var pos = 0
        guard let count = readVarint(p, &pos), count <= UInt64(p.count) else { return nil }
        var out: [String] = []
        for _ in 0..<Int(count) {
            guard let n = readVarint(p, &pos), n <= UInt64(p.count - pos) else { return nil }
            out.append(String(decoding: p[pos..<(pos + Int(n))], as: UTF8.self))
            pos += Int(n)
        }
        return pos == p.count ? out : nil
    }

    // MARK: opening (a restore)

    /// A restore's archive with its sealed values opened (those that cannot
    /// be opened are left out, so their keys decode as not found), or the
    /// same reader when it holds none. Logs one WARNING counting failures.
    func openSealed(_ reader: ArchiveReader, engine: Engine) -> ArchiveReader {
        guard reader.sealedValueCount > 0 else { return reader }
        defer {
            wipeKey()
            keyAsked = false
        }
        let keyPtr = obtainKey()
        let rewriter = ArchiveRewriter(reader: reader)
        var edit = RecordEdit()
        var failures: [String: Int] = [:]
        for r in 0..<reader.recordCount where SensitivityRoom.containsSealed(reader, reader.fields(ofRecord: r)) {
            rewriter.begin(record: r, &edit)
            let path = reader.path(ofRecord: r)
            let cls = reader.className(ofRecord: r).map { reader.name($0) }
            openLevel(0, &edit, rewriter, reader, path: path, cls: cls, key: keyPtr, failures: &failures)
            do { try rewriter.replace(record: r, with: edit, version: reader.version(ofRecord: r)) } catch {
                failures["the record could not be rebuilt (\(error.message))", default: 0] += 1
            }
        }
        let opened: ArchiveReader
        do {
            opened = try rewriter.rebuiltReader(verify: SensitivityRoom.verify)
        } catch {
            engine.log(.warning, "\(reader.sealedValueCount) sealed value\(reader.sealedValueCount == 1 ? "" : "s") could not be opened: the archive could not be rebuilt (\(error.message)); their keys decode as not found")
            return reader
        }
        let failed = failures.values.reduce(0, +)
        if failed > 0 {
            let why = failures.sorted { $0.key < $1.key }.map { "\($0.value): \($0.key)" }.joined(separator: "; ")
            engine.log(.warning, "\(failed) sealed value\(failed == 1 ? "" : "s") could not be opened (\(why)); their keys decode as not found and the restore goes on")
        }
        return opened
    }

    /// The restore is over: the archive it decoded, which held the opened
    /// values in the clear, is wiped before it is freed (nothing reads it
    /// any more: decode callbacks borrow its bytes only while they run).
    static func wipe(_ opened: ArchiveReader) {
        let b = opened.archiveBytes
        rsod_wipe(UnsafeMutableRawPointer(mutating: b.baseAddress), b.count)
    }

    /// sodium_init(), once per process (thread-safe lazy global).
    static let sodiumReady: Bool = rsod_init() == 0

    #if DEBUG
    static let verify = true
    #else
    static let verify = false
    #endif

    static func containsSealed(_ reader: ArchiveReader, _ range: ArchiveReader.FieldRange) -> Bool {
        var found = false
        reader.forEachField(in: range) { f in
            if found { return }
            if f.rawTag == ArchiveFormat.sealedTag { found = true } else if f.tag == .record, containsSealed(reader, reader.recordFields(f)) { found = true }
        }
        return found
    }

    private func openLevel(_ level: Int, _ edit: inout RecordEdit, _ rewriter: ArchiveRewriter, _ reader: ArchiveReader,
                           path: String, cls: String?, key: UnsafeRawPointer?, failures: inout [String: Int]) {
        var i = 0
        while i < edit.levels[level].count {
            var f = edit.levels[level][i]
            guard f.source == .archive else { i += 1; continue }
            if f.rawTag == ValueTag.record.rawValue {
                if SensitivityRoom.containsSealed(reader, reader.recordFields(f.archiveField)) {
                    let l = rewriter.enter(f, &edit)
                    f.source = .level
                    f.payload = l
                    edit.levels[level][i] = f
                    openLevel(l, &edit, rewriter, reader, path: path, cls: cls, key: key, failures: &failures)
                }
                i += 1
                continue
            }
            guard f.rawTag == ArchiveFormat.sealedTag else { i += 1; continue }
            let sealed = reader.bytes(f.archiveField)
            let keyName = reader.keyName(f.key)
            switch SensitivityRoom.open(sealed, path: path, cls: cls, keyName: keyName, key: key) {
            case .success(let (tag, value)):
                edit.values.append(value)
                f.source = .value
                f.rawTag = tag
                f.payload = edit.values.count - 1
                edit.levels[level][i] = f
                i += 1
            case .failure(let why):
                failures[key == nil ? keyMissingReason : why.message, default: 0] += 1
                edit.levels[level].remove(at: i)
            }
        }
    }

    struct OpenFailure: Error { let message: String }

    /// Opens one sealed payload (inner tag, nonce, sealed content).
    static func open(_ sealed: UnsafeRawBufferPointer, path: String, cls: String?, keyName: String, key: UnsafeRawPointer?) -> Result<(UInt8, ArchiveValue), OpenFailure> {
        guard let key else { return .failure(OpenFailure(message: "no key")) }
        guard sealed.count >= ArchiveFormat.sealedOverhead, let base = sealed.baseAddress else {
            return .failure(OpenFailure(message: "a sealed value is too short"))
        }
        let tag = sealed[0]
        var kb = Array(keyName.utf8)
        let ad = kb.withUnsafeBytes { SensitivityRoom.associatedData(path: path, className: cls, key: $0) }
        kb.removeAll()
        let ctLen = sealed.count - 25
        var plain = [UInt8](repeating: 0, count: ctLen - 16)
        defer { plain.withUnsafeMutableBytes { rsod_wipe($0.baseAddress, $0.count) } }
        let rc = plain.withUnsafeMutableBytes { o in
            ad.withUnsafeBytes { a in
                rsod_open(o.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self)),
                          base.assumingMemoryBound(to: UInt8.self) + 25, ctLen,
                          base.assumingMemoryBound(to: UInt8.self) + 1,
                          a.baseAddress?.assumingMemoryBound(to: UInt8.self), a.count,
                          key.assumingMemoryBound(to: UInt8.self))
            }
        }
        guard rc == 0 else {
            return .failure(OpenFailure(message: "wrong key, or the value was altered or moved to another record"))
        }
        guard let v = value(tag: tag, plain) else { return .failure(OpenFailure(message: "an opened value is malformed")) }
        return .success((tag, v))
    }

    /// The inner value of an opened payload, checked like archive data.
    static func value(tag: UInt8, _ p: [UInt8]) -> ArchiveValue? {
        var pos = 0
        func text(_ b: ArraySlice<UInt8>) -> String? {
            b.withUnsafeBytes { ArgumentRules.isText($0) } ? String(decoding: b, as: UTF8.self) : nil
        }
        // Tags past the value types (the sealed, trimmed-list and LOCAL
        // tags, and the free ones) are never a sealed payload's.
        guard let t = ValueTag(rawValue: tag) else { return nil }
        switch t {
        case .boolFalse, .boolTrue:
            return p.isEmpty ? .bool(t == .boolTrue) : nil
        case .int:
            guard let z = readVarint(p, &pos), pos == p.count else { return nil }
            return .int(Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1))))
        case .double:
            guard p.count == 8 else { return nil }
            var bits: UInt64 = 0
            for i in 0..<8 { bits |= UInt64(p[i]) << (8 * UInt64(i)) }
            return .double(Double(bitPattern: bits))
        case .string:
            return text(p[...]).map { .string($0) }
        case .bytes:
            return .bytes(p)
        case .osString:
            return p.contains(0) ? nil : .osString(p)
        case .intArray:
            guard let n = readVarint(p, &pos), n <= UInt64(p.count) else { return nil }
            var a: [Int64] = []
            a.reserveCapacity(Int(n))
            for _ in 0..<Int(n) {
                guard let z = readVarint(p, &pos) else { return nil }
                a.append(Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1))))
            }
            return pos == p.count ? .intArray(a) : nil
        case .stringArray:
            guard let n = readVarint(p, &pos), n <= UInt64(p.count) else { return nil }
            var a: [String] = []
            for _ in 0..<Int(n) {
                guard let len = readVarint(p, &pos), len <= UInt64(p.count - pos), let s = text(p[pos..<(pos + Int(len))]) else { return nil }
                a.append(s)
                pos += Int(len)
            }
            return pos == p.count ? .stringArray(a) : nil
        case .object, .objectArray, .record:
            return nil   // references and nested records are never sealed: a sealed value is one plain value
        }
    }
}

// MARK: varints (bounded)

func putVarint(_ out: inout [UInt8], _ x: UInt64) {
    var v = x
    while v >= 0x80 {
        out.append(UInt8(truncatingIfNeeded: v) | 0x80)
        v >>= 7
    }
    out.append(UInt8(v))
}


extension Coder {
    /// Whether `key` holds a sealed value (archive tag 12) that was not
    /// opened: what a migration sees (a restore opens sealed values after
    /// migrations; one that does not open is left out).
    public func isSealed(_ key: KeyBytes) -> Bool {
        switch mode {
        case .migrating:
            let e = editor
            guard let i = e.find(key) else { return false }
            return e.edit.levels[e.level][i].rawTag == ArchiveFormat.sealedTag
        case .decoding, .factory:
            return ((try? field(key)) ?? nil)?.rawTag == ArchiveFormat.sealedTag
        default:
            return false
        }
    }
}

extension Engine {
    /// The app's policy: every value under `key` in records of `className`
    /// (nil: every class), at any depth; `.normal` removes it.
    public func setKeySensitivity(className: String?, key: [UInt8], _ s: Sensitivity) {
        lock.withLock { sensitivity.set(className: className, key: key, s) }
    }

    /// The source of the 32-byte key that seals ENCRYPTED values (nil: none).
    public func setEncryptionKeyProvider(_ provider: EncryptionKeyProvider?) {
        lock.withLock { sensitivity.keyProvider = provider }
    }
}
