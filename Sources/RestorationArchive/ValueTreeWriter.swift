// The one writer of value trees: a record's decoded values (the document
// model's ArchiveEntry and ArchiveValue, nested records and arrays
// included) written through ArchiveWriter. ArchiveDocument's encoding
// (and with it `restorectl save --from`) and the engine's carried records
// write their trees here; what differs between them (checks, error
// context, how a reference finds its record) is a ValueTreePolicy.

/// What a caller of ValueTreeWriter decides. The defaults check nothing,
/// keep every reference as it is and report failures unchanged.
public protocol ValueTreePolicy {
    /// Checks a record's values before any is written (`trail`: the keys of
    /// the nested records around them, empty for the object itself).
    func check(record entries: [ArchiveEntry], trail: [String]) throws(WriteFailure)
    /// Interns `entry`'s key and checks the entry before it is written;
    /// returns the key's index.
    func key(for entry: ArchiveEntry, _ w: inout ArchiveWriter, trail: [String]) throws(WriteFailure) -> UInt32
    /// The record index written for a reference (nil: the reference is left out).
    func record(forReference r: Int) -> Int?
    /// The failure reported when writing `entry` failed with `error`.
    func failure(_ error: WriteFailure, writing entry: ArchiveEntry, trail: [String]) -> WriteFailure
}

extension ValueTreePolicy {
    public func check(record entries: [ArchiveEntry], trail: [String]) throws(WriteFailure) {}
    public func key(for entry: ArchiveEntry, _ w: inout ArchiveWriter, trail: [String]) throws(WriteFailure) -> UInt32 {
        ArchiveDocument.intern(entry.key, &w, key: true)
    }
    public func record(forReference r: Int) -> Int? { r }
    public func failure(_ error: WriteFailure, writing entry: ArchiveEntry, trail: [String]) -> WriteFailure { error }
}

/// Writes value trees through ArchiveWriter under a policy.
public struct ValueTreeWriter<Policy: ValueTreePolicy> {
    public let policy: Policy

    public init(_ policy: Policy) {
        self.policy = policy
    }

    /// Writes `entries` into the record open in `w` (an object's, or a
    /// nested record's when `trail` is not empty).
    public func write(_ entries: [ArchiveEntry], _ w: inout ArchiveWriter, trail: [String] = []) throws(WriteFailure) {
        try policy.check(record: entries, trail: trail)
        for e in entries {
            let k = try policy.key(for: e, &w, trail: trail)
            do throws(WriteFailure) {
                try write(e.value, key: k, &w, trail: trail, key: e.key)
            } catch {
                throw policy.failure(error, writing: e, trail: trail)
            }
        }
    }

    func write(_ value: ArchiveValue, key k: UInt32, _ w: inout ArchiveWriter, trail: [String], key name: String) throws(WriteFailure) {
        switch value {
        case .bool(let b): try w.writeBool(k, b)
        case .int(let v): try w.writeInt(k, v)
        case .double(let d): try w.writeDouble(k, d)
        case .string(var s):
            try typed { try s.withUTF8 { u in try w.writeString(k, UnsafeRawBufferPointer(u)) } }
        case .bytes(let b):
            try typed { try b.withUnsafeBytes { u in try w.writeBytes(k, u) } }
        case .osString(let b):
            try typed { try b.withUnsafeBytes { u in try w.writeOSString(k, u) } }
        case .object(let t):
            if let r = policy.record(forReference: t) { try w.writeObject(k, record: r) }
        case .objectArray(let a):
            let mapped = a.compactMap { policy.record(forReference: $0) }
            try mapped.withUnsafeBufferPointer { u throws(WriteFailure) in try w.writeObjectArray(k, records: u) }
        case .intArray(let a):
            try typed { try a.withUnsafeBufferPointer { u in try w.writeIntArray(k, u) } }
        case .stringArray(let a):
            try withPinnedStrings(a) { (u) throws(WriteFailure) in try w.writeStringArray(k, u) }
        case .record(let sub):
            try w.beginRecord(k)
            try write(sub, &w, trail: trail + [name])
            try w.endRecord()
        case .unknown(let tag, let payload):
            try typed { try payload.withUnsafeBytes { u in try w.writeUnknown(k, tag: tag, payload: u) } }
        }
    }
}

// MARK: - Pinning

/// Runs `body` with the UTF-8 bytes of every string as a buffer, all pinned
/// in one arena for the duration of the call (the element-pointer form of a
/// string array that ArchiveWriter and the coders take).
public func withPinnedStrings<R, E: Error>(_ strings: [String], _ body: ([UnsafeRawBufferPointer]) throws(E) -> R) throws(E) -> R {
    var arena: [UInt8] = []
    var ends: [Int] = []
    ends.reserveCapacity(strings.count)
    for s in strings {
        arena.append(contentsOf: s.utf8)
        ends.append(arena.count)
    }
    return try pinned(arena, ends, body)
}

private func pinned<R, E: Error>(_ arena: [UInt8], _ ends: [Int], _ body: ([UnsafeRawBufferPointer]) throws(E) -> R) throws(E) -> R {
    let r: Result<R, E> = arena.withUnsafeBytes { all in
        var views: [UnsafeRawBufferPointer] = []
        views.reserveCapacity(ends.count)
        var start = 0
        for end in ends {
            views.append(UnsafeRawBufferPointer(rebasing: all[start..<end]))
            start = end
        }
        do throws(E) { return .success(try body(views)) } catch { return .failure(error) }
    }
    return try r.get()
}
