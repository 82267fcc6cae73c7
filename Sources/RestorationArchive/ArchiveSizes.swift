// Size budgets in the format (docs/BUDGETS.md, docs/FORMAT.md "Trimmed
// subtrees"): the list of subtrees a save left out to fit its budget, and
// the size of each record of a finished archive.
//
// The list is one value of tag 13 at the top level of the first record
// (always a root: only non-root records are trimmed), under a key that
// starts with "rst.trimmed". Readers before 1.2 see a value of a future
// type and skip it, so a trimmed archive stays readable by them.

/// The subtrees a save left out to fit its size budget.
public struct TrimmedList: Equatable, Sendable {
    /// The raw tag of the value that holds the list (a future tag for
    /// readers before 1.2).
    public static let rawTag: UInt8 = 13
    /// The key the writer uses; a record that already holds it gets
    /// "rst.trimmed.2", "rst.trimmed.3", ... (the tag identifies the list).
    public static let key = "rst.trimmed"

    public struct Entry: Equatable, Sendable {
        /// The top record's path ("Tabs/Nav/List").
        public var path: String
        /// Its class; "" when none.
        public var className: String
        public init(path: String, className: String) {
            self.path = path
            self.className = className
        }
    }

    /// The budget the save had, in bytes.
    public var budget: UInt64
    /// The top of each trimmed subtree, in the archive order of the save
    /// that left them out.
    public var entries: [Entry]

    public init(budget: UInt64, entries: [Entry]) {
        self.budget = budget
        self.entries = entries
    }

    /// The payload (after the value's length): `varint budget`, `varint
    /// count`, then count × (`str path`, `str class`).
    public func payload() -> [UInt8] {
        var out: [UInt8] = []
        func varint(_ x: UInt64) {
            var v = x
            while v >= 0x80 {
                out.append(UInt8(truncatingIfNeeded: v) | 0x80)
                v >>= 7
            }
            out.append(UInt8(v))
        }
        varint(budget)
        varint(UInt64(entries.count))
        for e in entries {
            varint(UInt64(e.path.utf8.count))
            out += e.path.utf8
            varint(UInt64(e.className.utf8.count))
            out += e.className.utf8
        }
        return out
    }

    /// Bytes the value takes in a record: header (key index `keyIndex`),
    /// length and payload.
    public func fieldBytes(keyIndex: UInt32) -> Int {
        let n = payload().count
        let header = keyIndex < 15 ? 1 : 1 + varintSize(UInt64(keyIndex - 15))
        return header + varintSize(UInt64(n)) + n
    }

    /// Parses a payload; nil when it is not a well-formed list (every
    /// length and count is checked against the bytes that remain; paths
    /// and class names must be text, paths non-empty).
    public init?(payload b: UnsafeRawBufferPointer) {
        guard let base = b.baseAddress else { return nil }
        var c = ArchiveCursor(base, at: 0)
        let end = b.count
        guard let budget = c.varint(end), let count = c.varint(end) else { return nil }
        // Each entry takes at least 3 bytes (a path of one byte, an empty class).
        guard count <= UInt64(c.remaining(end) / 3) else { return nil }
        var entries: [Entry] = []
        entries.reserveCapacity(Int(count))
        func text() -> String? {
            guard let n = c.length(end) else { return nil }
            let s = c.bytes(n)
            guard isValidArchiveText(s) else { return nil }
            c.skip(n)
            return String(decoding: s, as: UTF8.self)
        }
        for _ in 0..<Int(count) {
            guard let path = text(), !path.isEmpty, let cls = text() else { return nil }
            entries.append(Entry(path: path, className: cls))
        }
        guard c.pos == end else { return nil }
        self.init(budget: budget, entries: entries)
    }

    /// The list a validated archive holds (the first value of tag 13 at the
    /// top level of record 0 whose key starts with "rst.trimmed"), or nil:
    /// none, or not well-formed (then the value is an ordinary unknown one).
    public init?(reader: ArchiveReader) {
        guard reader.recordCount > 0 else { return nil }
        var found: TrimmedList?
        reader.forEachField(in: reader.fields(ofRecord: 0)) { f in
            guard found == nil, f.rawTag == TrimmedList.rawTag,
                  reader.keyName(f.key).hasPrefix(TrimmedList.key) else { return }
            found = TrimmedList(payload: reader.bytes(f))
        }
        guard let found else { return nil }
        self = found
    }
}

/// The size of every record of an archive: own bytes (its header and
/// fields) and subtree bytes (own plus every descendant's). The roots'
/// subtree bytes plus `overhead` (fixed header, info, string tables and
/// checksum) are the archive's size, exactly.
public struct RecordSizes: Sendable {
    public var own: [UInt64]
    public var subtree: [UInt64]
    public var overhead: UInt64
    public var total: UInt64

    /// Measures a validated archive.
    public init(reader: ArchiveReader) {
        let n = reader.recordCount
        let info = reader.info
        var start = ArchiveHeader.infoOffset
        for s in [info.appVersion, info.systemVersion, info.idiom] {
            start += varintSize(UInt64(s.utf8.count)) + s.utf8.count
        }
        start += 8 + varintSize(UInt64(n))
        start += varintSize(UInt64(reader.keyCount)) + varintSize(UInt64(reader.nameCount))
        for i in 0..<reader.keyCount {
            let c = reader.keyBytes(UInt32(i)).count
            start += varintSize(UInt64(c)) + c
        }
        for i in 0..<reader.nameCount {
            let c = reader.nameBytes(UInt32(i)).count
            start += varintSize(UInt64(c)) + c
        }
        var own = [UInt64](repeating: 0, count: n)
        var prev = start
        for r in 0..<n {
            let end = reader.fields(ofRecord: r).end
            own[r] = UInt64(end - prev)
            prev = end
        }
        // A TRIM save's list of trimmed subtrees sits in record 0: the
        // archive's overhead, not that record's own bytes.
        if n > 0 {
            let fields = reader.fields(ofRecord: 0)
            var pos = fields.start
            var listBytes = 0
            reader.forEachField(in: fields) { f in
                if f.rawTag == TrimmedList.rawTag && reader.keyName(f.key).hasPrefix(TrimmedList.key) { listBytes += f.end - pos }
                pos = f.end
            }
            if own[0] >= UInt64(listBytes) { own[0] -= UInt64(listBytes) }
        }
        let parents = (0..<n).map { reader.parent(ofRecord: $0) ?? -1 }
        self.init(own: own, parents: parents, total: UInt64(reader.byteCount))
    }

    /// Subtree sizes from own sizes and parents (-1: a root; every parent is
    /// an earlier record).
    public init(own: [UInt64], parents: [Int], total: UInt64) {
        var subtree = own
        var i = own.count - 1
        while i >= 0 {
            let p = parents[i]
            if p >= 0 && p < i { subtree[p] &+= subtree[i] }
            i -= 1
        }
        self.own = own
        self.subtree = subtree
        self.total = total
        var body: UInt64 = 0
        for o in own { body &+= o }
        self.overhead = total &- body
    }
}
