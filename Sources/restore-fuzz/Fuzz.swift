// restore-fuzz: archives are untrusted input. This target feeds bytes to the
// codec and to a whole restore through the engine, whose stand-in objects
// decode every value of every record (nested records, arrays, references);
// an accepted archive is also restored with every record migrated (renamed,
// removed, added and nested values), which must validate again.
//
// Fuzzing (libFuzzer + AddressSanitizer; see `make fuzz`):
//   swift build -c release --product restore-fuzz --scratch-path .build-fuzz \
//     --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING
//   SWIFT_BACKTRACE=enable=no .build-fuzz/release/restore-fuzz \
//     -max_total_time=60 -artifact_prefix=fuzz-out/ fuzz-out/corpus Sources/restore-fuzz/corpus
//
// Without -DFUZZING it is a replay tool: `restore-fuzz FILE|DIR...` runs every
// input once and exits non-zero if an invariant breaks (a crash is a failure
// too); `make test` replays the committed corpus this way.
import RestorationArchive
import RestorationCore
#if canImport(Glibc)
import Glibc
#endif

/// Decodes every value of its record when the engine asks.
struct StandIn: ObjectBehavior {
    func encode(_ node: ObjectNode, _ coder: Coder) {}
    func decode(_ node: ObjectNode, _ coder: Coder) { decodeAll(coder, depth: 0) }
    func finished(_ node: ObjectNode) {}
    func released(_ node: ObjectNode) {}
    var instance: UnsafeMutableRawPointer? { nil }
}

func decodeAll(_ coder: Coder, depth: Int) {
    var fields: [(String, ValueTag?)] = []
    try? coder.forEachField { key, field in fields.append((key, field.tag)) }
    for (key, tag) in fields {
        var k = key
        k.withUTF8 { utf8 in
            let kb = KeyBytes(UnsafeRawBufferPointer(utf8))
            precondition((try? coder.contains(kb)) == true, "key '\(key)' listed but not found")
            switch tag {
            case .boolFalse?, .boolTrue?: _ = try? coder.decodeBool(kb)
            case .int?: _ = try? coder.decodeInt(kb)
            case .double?: _ = try? coder.decodeDouble(kb)
            case .string?: _ = try? coder.decodeString(kb); _ = try? coder.decodeStringBytes(kb)
            case .bytes?: _ = try? coder.decodeBytes(kb)
            case .osString?: _ = try? coder.decodeOSStringBytes(kb); _ = try? coder.decodeStringBytes(kb); _ = try? coder.decodeBytes(kb)
            case .object?: _ = try? coder.decodeObjectHandle(kb)
            case .intArray?: _ = try? coder.decodeIntArray(kb)
            case .stringArray?: _ = try? coder.decodeStringArray(kb)
            case .objectArray?:
                _ = try? coder.decodeObjectArray(kb)
                _ = try? coder.decodeObjectArrayElement(kb, at: 0)
            case .record?:
                if (try? coder.decodeBeginRecord(kb)) != nil {
                    decodeAll(coder, depth: depth + 1)
                    try? coder.decodeEndRecord()
                }
            case nil: break
            }
            // A wrong-type read must fail cleanly, never trap.
            if tag != .int { _ = try? coder.decodeInt(kb) }
        }
    }
}

/// Runs `body` with the key's bytes.
func withKey<R>(_ key: String, _ body: (KeyBytes) throws -> R) rethrows -> R {
    var k = key
    return try k.withUTF8 { try body(KeyBytes(UnsafeRawBufferPointer($0))) }
}

/// The archive's last key (`fuzzMigrations`): what `editingStep` renames
/// before it looks at anything else.
nonisolated(unsafe) var fuzzEarlyKey: String? = nil

/// A migration step that edits whatever record it gets: renames the
/// archive's last key and reads it (a rename of a field not parsed yet,
/// which the editor holds among the unparsed fields), renames the first
/// key, removes the second, adds an int, and adds a string inside the first
/// nested record. Each edit may fail (a taken name, a record at a limit);
/// the step still succeeds, so the record is rewritten.
func editingStep(_ coder: Coder, _ from: UInt32) -> RestorationFailure? {
    if let early = fuzzEarlyKey {
        _ = withKey(early) { f in withKey("early") { try? coder.rename(f, to: $0) } }
        _ = withKey("early") { try? coder.decodeInt($0) }
    }
    let keys = (try? coder.migrationKeys()) ?? []
    if let first = keys.first { _ = withKey(first) { f in withKey("renamed\(from)") { try? coder.rename(f, to: $0) } } }
    if keys.count > 1 { _ = withKey(keys[1]) { try? coder.remove($0) } }
    _ = withKey("added") { try? coder.encodeInt($0, Int64(from)) }
    for k in keys.dropFirst(2) {
        let isRecord = withKey(k) { ((try? coder.valueType($0)) ?? nil) == .record }
        guard isRecord, (try? withKey(k) { try coder.decodeBeginRecord($0) }) != nil else { continue }
        _ = withKey("inner") { kb in Array("x".utf8).withUnsafeBytes { try? coder.encodeString(kb, $0) } }
        try? coder.decodeEndRecord()
        break
    }
    return nil
}

/// Invariant: migrating every record of an accepted archive (each class one
/// version newer than its newest record, a step from each version its
/// records have) gives an archive the engine validates and restores — the
/// rewriter never writes bytes the validator refuses.
@inline(never)
func fuzzMigrations(_ data: UnsafeRawBufferPointer, _ reader: ArchiveReader) {
    var range: [String: (UInt32, UInt32)] = [:]
    for r in 0..<reader.recordCount {
        guard let c = reader.className(ofRecord: r) else { continue }
        let name = reader.name(c), v = reader.version(ofRecord: r)
        let (lo, hi) = range[name] ?? (v, v)
        range[name] = (min(lo, v), max(hi, v))
    }
    fuzzEarlyKey = reader.keyCount > 0 ? reader.keyName(UInt32(reader.keyCount - 1)) : nil
    let engine = Engine(configuration: .init(crashGuard: false))
    engine.logHandler = { _, _ in }
    engine.setFallbackFactory { req in
        try? req.engine.register(identifier: req.identifier, parent: req.parent, className: req.className, behavior: StandIn())
    }
    for (name, (lo, hi)) in range where hi < UInt32.max && hi - lo < 8 {
        try? engine.setClassVersion(name, hi + 1)
        for from in lo...hi { try? engine.registerMigration(name, from: from, editingStep) }
    }
    do {
        try engine.restore(bytes: data)
    } catch {
        precondition(error.status == .limit || error.status == .rejected,
                     "the engine refused an accepted archive after migrating it: \(error)")
    }
    engine.destroy()
}

/// Invariant: the codec's rewriter, editing every record (first key
/// renamed, second removed, a scalar added, the first nested record entered
/// and given one more value), gives an archive that validates, and the
/// reader it derives without validating has the same indexes as the one
/// validation builds (`verify` compares them and traps on a difference).
@inline(never)
func fuzzRewriter(_ reader: ArchiveReader) {
    let rw = ArchiveRewriter(reader: reader)
    var edit = RecordEdit()
    func key(_ s: String) -> UInt32 { Array(s.utf8).withUnsafeBytes { rw.internKey($0) } }
    let renamed = key("renamed~"), added = key("added~"), inner = key("inner~")
    for r in 0..<reader.recordCount {
        rw.begin(record: r, &edit)
        if !edit.levels[0].isEmpty && !edit.levels[0].contains(where: { $0.key == renamed }) { edit.levels[0][0].key = renamed }
        if edit.levels[0].count > 1 { edit.levels[0].remove(at: 1) }
        if !edit.levels[0].contains(where: { $0.key == added }) && edit.levels[0].count < ArchiveLimits.maxValuesPerRecord {
            edit.levels[0].append(EditedField(key: added, rawTag: ValueTag.int.rawValue, source: .scalar, originalKey: added,
                                              payload: r, start: 0, end: 0))
        }
        if let i = edit.levels[0].firstIndex(where: { $0.source == .archive && $0.rawTag == ValueTag.record.rawValue }) {
            let level = rw.enter(edit.levels[0][i], &edit)
            edit.levels[0][i] = EditedField(key: edit.levels[0][i].key, rawTag: ValueTag.record.rawValue, source: .level,
                                            originalKey: edit.levels[0][i].key, payload: level, start: 0, end: 0)
            if !edit.levels[level].contains(where: { $0.key == inner }) && edit.levels[level].count < ArchiveLimits.maxValuesPerRecord {
                edit.levels[level].append(EditedField(key: inner, rawTag: ValueTag.boolTrue.rawValue, source: .scalar,
                                                      originalKey: inner, payload: 0, start: 0, end: 0))
            }
        }
        do { try rw.replace(record: r, with: edit, version: reader.version(ofRecord: r) &+ 1) } catch {
            guard case .limit = error else { preconditionFailure("the rewriter refused an edit: \(error)") }
        }
    }
    do { _ = try rw.rebuiltReader(verify: true) } catch {
        guard case .limit = error else { preconditionFailure("the rewriter failed: \(error)") }
    }
}

/// One input. Returns whether the codec accepted it.
@inline(never)
func fuzzOne(_ data: UnsafeRawBufferPointer) -> Bool {
    let accepted: Bool
    if let reader = try? ArchiveReader(bytes: data) {
        accepted = true
        // Invariant: what the reader accepts, the document model writes back
        // into an archive the reader accepts again, with the same objects.
        let doc = ArchiveDocument(reader: reader)
        guard let again = try? doc.encode() else { preconditionFailure("an accepted archive did not re-encode") }
        guard let reread = try? ArchiveReader(bytes: again) else { preconditionFailure("a re-encoded archive did not validate") }
        precondition(reread.recordCount == reader.recordCount, "re-encoding changed the record count")
        fuzzMigrations(data, reader)
        fuzzRewriter(reader)
    } else {
        accepted = false
    }
    // The whole engine: validation, materialize through a fallback, decode everything, finish.
    let engine = Engine(configuration: .init(crashGuard: false))
    engine.logHandler = { _, _ in }
    // Sealed values: the corpus's were sealed with 32 bytes of 0x42, so they
    // open (and the opened archive is rebuilt and decoded); mutated ones do not.
    engine.setEncryptionKeyProvider { key in
        for i in key.indices { key[i] = 0x42 }
        return true
    }
    engine.setFallbackFactory { req in
        try? req.engine.register(identifier: req.identifier, parent: req.parent, className: req.className, behavior: StandIn())
    }
    do {
        try engine.restore(bytes: data)
        precondition(accepted, "the engine restored an archive the codec rejects")
    } catch {
        precondition(!accepted || error.status == .limit || error.status == .rejected,
                     "the codec accepted an archive the engine refused: \(error)")
    }
    engine.destroy()
    return accepted
}

/// The input with its total length and checksum made consistent, so that
/// mutations reach the structural validator and the decode passes instead of
/// stopping at the checksum. nil when too short to carry a header.
func repaired(_ data: UnsafeRawBufferPointer) -> [UInt8]? {
    guard data.count >= 20 else { return nil }
    var b = [UInt8](data)
    let n = UInt32(truncatingIfNeeded: b.count)
    for i in 0..<4 { b[12 + i] = UInt8(truncatingIfNeeded: n >> (8 * UInt32(i))) }
    let crc = b.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<(b.count - 4)])) }
    for i in 0..<4 { b[b.count - 4 + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
    return b
}

/// The input as given, then repaired.
@inline(never)
func fuzzBoth(_ data: UnsafeRawBufferPointer) -> Bool {
    let accepted = fuzzOne(data)
    if let fixed = repaired(data) { _ = fixed.withUnsafeBytes { fuzzOne($0) } }
    return accepted
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    _ = fuzzBoth(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
#else
@main
struct Replay {
    static func main() {
        let args = CommandLine.arguments.dropFirst()
        guard !args.isEmpty else {
            fputs("usage: restore-fuzz FILE|DIR...   (replays inputs; build with -DFUZZING for libFuzzer)\n", stderr)
            exit(2)
        }
        var files: [String] = []
        for a in args {
            if let d = opendir(a) {
                while let e = readdir(d) {
                    let name = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
                    if !name.hasPrefix(".") { files.append(a + "/" + name) }
                }
                closedir(d)
            } else {
                files.append(a)
            }
        }
        var accepted = 0
        for f in files.sorted() {
            guard let bytes = try? FileStore.read(f, limit: 1 << 30) else {
                fputs("restore-fuzz: cannot read '\(f)'\n", stderr)
                exit(1)
            }
            if bytes.withUnsafeBytes({ fuzzBoth($0) }) { accepted += 1 }
        }
        print("restore-fuzz: \(files.count) inputs replayed, \(accepted) accepted by the codec, 0 failures")
    }
}
#endif
