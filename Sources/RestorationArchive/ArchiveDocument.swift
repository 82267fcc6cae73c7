// ArchiveDocument: a whole archive as plain Swift values, for tools
// (inspect, JSON round trip, diff). Not for the hot path: the engine uses
// ArchiveReader and ArchiveWriter directly.

public indirect enum ArchiveValue: Equatable, Sendable {
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case bytes([UInt8])
    case object(record: Int)
    case intArray([Int64])
    case stringArray([String])
    case record([ArchiveEntry])
    /// v1.1: references to records (indexes in ArchiveDocument.objects).
    case objectArray([Int])
    /// v1.2: an OS string (a file name): any bytes but NUL.
    case osString([UInt8])
    /// A value with no ValueTag (tag 12...15: a sealed value, LOCAL marks, a future type), kept as its raw payload.
    case unknown(tag: UInt8, payload: [UInt8])

    /// The tag this value is written with.
    public var rawTag: UInt8 {
        switch self {
        case .bool(let b): return (b ? ValueTag.boolTrue : .boolFalse).rawValue
        case .int: return ValueTag.int.rawValue
        case .double: return ValueTag.double.rawValue
        case .string: return ValueTag.string.rawValue
        case .bytes: return ValueTag.bytes.rawValue
        case .object: return ValueTag.object.rawValue
        case .intArray: return ValueTag.intArray.rawValue
        case .stringArray: return ValueTag.stringArray.rawValue
        case .record: return ValueTag.record.rawValue
        case .objectArray: return ValueTag.objectArray.rawValue
        case .osString: return ValueTag.osString.rawValue
        case .unknown(let t, _): return t
        }
    }

    /// Equality that treats two NaN doubles with the same bit pattern as
    /// equal (the synthesized == follows IEEE-754, where NaN != NaN).
    public func isIdentical(to other: ArchiveValue) -> Bool {
        switch (self, other) {
        case (.double(let a), .double(let b)): return a.bitPattern == b.bitPattern
        case (.record(let a), .record(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value.isIdentical(to: $1.value) }
        default: return self == other
        }
    }
}

public struct ArchiveEntry: Equatable, Sendable {
    public var key: String
    public var value: ArchiveValue
    public init(key: String, value: ArchiveValue) {
        self.key = key
        self.value = value
    }
}

public struct ArchiveObject: Equatable, Sendable {
    public var identifier: String
    /// Index of the parent in ArchiveDocument.objects (an earlier object), nil for a root.
    public var parent: Int?
    public var className: String?
    public var entries: [ArchiveEntry]
    /// v1.1: the class version the record stores (0: none, as in v1 archives).
    public var version: UInt32
    /// Carried records: 0 live; 1 + saves left for a carried record (UInt32.max: always).
    public var carry: UInt32 = 0
    public init(identifier: String, parent: Int? = nil, className: String? = nil, entries: [ArchiveEntry] = [], version: UInt32 = 0) {
        self.identifier = identifier
        self.parent = parent
        self.className = className
        self.entries = entries
        self.version = version
    }
}

public struct ArchiveDocument: Equatable, Sendable {
    public var info: ArchiveInfo
    /// In archive order: a parent before its children.
    public var objects: [ArchiveObject]

    public init(info: ArchiveInfo, objects: [ArchiveObject]) {
        self.info = info
        self.objects = objects
    }

    /// Decodes every record of a (validated) reader.
    public init(reader: ArchiveReader) {
        info = reader.info
        var objs: [ArchiveObject] = []
        objs.reserveCapacity(reader.recordCount)
        for r in 0..<reader.recordCount {
            objs.append(ArchiveObject(
                identifier: reader.name(reader.identifier(ofRecord: r)),
                parent: reader.parent(ofRecord: r),
                className: reader.className(ofRecord: r).map { reader.name($0) },
                entries: ArchiveDocument.entries(reader, reader.fields(ofRecord: r)),
                version: reader.version(ofRecord: r)))
            objs[objs.count - 1].carry = reader.carry(ofRecord: r)
        }
        objects = objs
    }

    /// The values of record r of a (validated) reader.
    public static func entries(of reader: ArchiveReader, record r: Int) -> [ArchiveEntry] {
        entries(reader, reader.fields(ofRecord: r))
    }

    public init(bytes: [UInt8]) throws(ArchiveFailure) {
        self.init(reader: try ArchiveReader(bytes: bytes))
    }

    static func entries(_ r: ArchiveReader, _ range: ArchiveReader.FieldRange) -> [ArchiveEntry] {
        var out: [ArchiveEntry] = []
        r.forEachField(in: range) { f in
            out.append(ArchiveEntry(key: r.keyName(f.key), value: value(of: f, in: r)))
        }
        return out
    }

    /// The value of one field of a (validated) reader.
    public static func value(of f: ArchiveReader.Field, in r: ArchiveReader) -> ArchiveValue {
        switch f.tag {
        case .boolFalse?, .boolTrue?: return .bool(r.bool(f))
        case .int?: return .int(r.int(f))
        case .double?: return .double(r.double(f))
        case .string?: return .string(r.string(f))
        case .bytes?: return .bytes(Array(r.bytes(f)))
        case .object?: return .object(record: r.objectRecord(f))
        case .intArray?:
            let n = r.intArrayCount(f)
            return .intArray([Int64](unsafeUninitializedCapacity: n) { buf, count in
                r.intArray(f, into: buf)
                count = n
            })
        case .stringArray?:
            var a: [String] = []
            a.reserveCapacity(r.stringArrayCount(f))
            r.forEachStringArrayElement(f) { a.append(String(decoding: $0, as: UTF8.self)) }
            return .stringArray(a)
        case .record?: return .record(entries(r, r.recordFields(f)))
        case .objectArray?:
            var a: [Int] = []
            a.reserveCapacity(r.objectArrayCount(f))
            r.forEachObjectArrayElement(f) { a.append($0) }
            return .objectArray(a)
        case .osString?: return .osString(Array(r.bytes(f)))
        case nil: return .unknown(tag: f.rawTag, payload: Array(r.bytes(f)))
        }
    }

    /// The path of object `index`, "Tabs/Nav/List" (stops at a parent that
    /// is not an earlier object).
    public func path(of index: Int) -> String {
        guard index >= 0 && index < objects.count else { return "" }
        var comps: [String] = []
        var i = index
        while true {
            comps.append(objects[i].identifier)
            guard let p = objects[i].parent, p >= 0, p < i else { break }
            i = p
        }
        return comps.reversed().joined(separator: "/")
    }

    /// Writes the document through ArchiveWriter (info.savedAtMs and the info
    /// strings are kept; formatVersion and objectCount are set by the writer).
    /// Everything the reader would reject is refused first, with a message
    /// naming the object index, its path and the key: `.state` for invalid
    /// content (identifier rules, parent order, duplicate paths or keys,
    /// references out of range, NUL in strings, bad tags), `.limit` for limits.
    public func encode() throws(WriteFailure) -> [UInt8] {
        if objects.count > ArchiveLimits.maxObjects {
            throw WriteFailure.limit("the document has \(objects.count) objects, more than the limit of \(ArchiveLimits.maxObjects)")
        }
        var w = ArchiveWriter(estimatedObjects: objects.count)
        w.recordVersions = objects.contains { $0.version != 0 }
        w.recordCarry = objects.contains { $0.carry != 0 }
        var depths: [Int] = []
        depths.reserveCapacity(objects.count)
        struct PathKey: Hashable { var parent: Int; var identifier: String }
        var paths = Set<PathKey>()
        for (i, o) in objects.enumerated() {
            func where_() -> String { "object \(i) (\(path(of: i)))" }
            let idBytes = o.identifier.utf8.count
            if idBytes == 0 { throw WriteFailure.state("\(where_()): the identifier is empty") }
            if idBytes > ArchiveLimits.maxIdentifierBytes {
                throw WriteFailure.limit("\(where_()): the identifier has \(idBytes) bytes, more than \(ArchiveLimits.maxIdentifierBytes)")
            }
            if o.identifier.utf8.contains(0x2F) { throw WriteFailure.state("\(where_()): the identifier '\(o.identifier)' contains '/'") }
            if o.identifier.utf8.contains(0) { throw WriteFailure.state("\(where_()): the identifier contains a NUL byte") }
            var depth = 0
            if let p = o.parent {
                guard p >= 0 && p < i else {
                    throw WriteFailure.state("\(where_()): parent \(p) is not an earlier object")
                }
                depth = depths[p] + 1
                if depth >= ArchiveLimits.maxTreeDepth {
                    throw WriteFailure.limit("\(where_()): the parent chain is \(depth + 1) records long, more than \(ArchiveLimits.maxTreeDepth) (RST_MAX_TREE_DEPTH)")
                }
            }
            depths.append(depth)
            if !paths.insert(PathKey(parent: o.parent ?? -1, identifier: o.identifier)).inserted {
                throw WriteFailure.state("\(where_()): another object already has this path")
            }
            var classIndex: UInt32? = nil
            if let c = o.className {
                let n = c.utf8.count
                if n == 0 { throw WriteFailure.state("\(where_()): the class name is empty") }
                if n > ArchiveLimits.maxClassNameBytes {
                    throw WriteFailure.limit("\(where_()): the class name has \(n) bytes, more than \(ArchiveLimits.maxClassNameBytes)")
                }
                if c.utf8.contains(0) { throw WriteFailure.state("\(where_()): the class name contains a NUL byte") }
                classIndex = ArchiveDocument.intern(c, &w, key: false)
            }
            let ident = ArchiveDocument.intern(o.identifier, &w, key: false)
            if w.recordCarry {
                w.beginObject(identifier: ident, parent: o.parent, className: classIndex, version: o.version, carry: o.carry)
            } else if w.recordVersions {
                w.beginObject(identifier: ident, parent: o.parent, className: classIndex, version: o.version)
            } else {
                w.beginObject(identifier: ident, parent: o.parent, className: classIndex)
            }
            try writeEntries(o.entries, &w, object: i, trail: [])
            try w.endObject()
        }
        var info = self.info
        info.formatVersion = 1
        return try w.finish(info: info)
    }

    static func intern(_ s: String, _ w: inout ArchiveWriter, key: Bool) -> UInt32 {
        var s = s
        return s.withUTF8 { u in
            let raw = UnsafeRawBufferPointer(u)
            return key ? w.key(raw) : w.name(raw)
        }
    }

    func writeEntries(_ entries: [ArchiveEntry], _ w: inout ArchiveWriter, object i: Int, trail: [String]) throws(WriteFailure) {
        try ValueTreeWriter(DocumentTreePolicy(document: self, object: i)).write(entries, &w, trail: trail)
    }
}

/// ArchiveDocument's values are checked as the reader would check them,
/// and every failure names the object index, its path and the key path.
struct DocumentTreePolicy: ValueTreePolicy {
    let document: ArchiveDocument
    let object: Int

    func place(_ trail: [String], _ key: String) -> String {
        "object \(object) (\(document.path(of: object))), key '\((trail + [key]).joined(separator: "."))'"
    }

    func check(record entries: [ArchiveEntry], trail: [String]) throws(WriteFailure) {
        if entries.count > ArchiveLimits.maxValuesPerRecord {
            throw WriteFailure.limit("object \(object) (\(document.path(of: object)))\(trail.isEmpty ? "" : ", key '\(trail.joined(separator: "."))'"): \(entries.count) values in one record, more than \(ArchiveLimits.maxValuesPerRecord)")
        }
    }

    func key(for e: ArchiveEntry, _ w: inout ArchiveWriter, trail: [String]) throws(WriteFailure) -> UInt32 {
        func fail(_ what: String) -> WriteFailure { .state("\(place(trail, e.key)): \(what)") }
        let kb = e.key.utf8.count
        if kb == 0 { throw fail("the key is empty") }
        if kb > ArchiveLimits.maxKeyBytes {
            throw WriteFailure.limit("\(place(trail, e.key)): the key has \(kb) bytes, more than \(ArchiveLimits.maxKeyBytes)")
        }
        if e.key.utf8.contains(0) { throw fail("the key contains a NUL byte") }
        let k = ArchiveDocument.intern(e.key, &w, key: true)
        if w.rawTag(ofKey: k) != nil { throw fail("the key appears twice in the same record") }
        let objects = document.objects.count
        switch e.value {
        case .string(let s):
            if s.utf8.contains(0) { throw fail("the string contains a NUL byte") }
        case .osString(let b):
            if b.contains(0) { throw fail("the OS string contains a NUL byte") }
        case .object(let r):
            if r < 0 || r >= objects {
                throw fail("the object reference \(r) is out of range (\(objects) objects)")
            }
        case .objectArray(let a):
            for r in a where r < 0 || r >= objects {
                throw fail("the object array element \(r) is out of range (\(objects) objects)")
            }
        case .stringArray(let a):
            for (n, s) in a.enumerated() where s.utf8.contains(0) {
                throw fail("string array element \(n) contains a NUL byte")
            }
        case .record:
            if trail.count + 1 > ArchiveLimits.maxRecordDepth {
                throw WriteFailure.limit("\(place(trail, e.key)): nested records deeper than \(ArchiveLimits.maxRecordDepth)")
            }
        case .unknown(let tag, _):
            if !ValueTag.isOpaque(rawTag: tag) { throw fail("unknown value tag \(tag) is not an opaque tag (\(ValueTag.opaqueRawTags))") }
        case .bool, .int, .double, .bytes, .intArray:
            break
        }
        return k
    }

    func failure(_ error: WriteFailure, writing e: ArchiveEntry, trail: [String]) -> WriteFailure {
        switch error {
        case .duplicateKey: return .state("\(place(trail, e.key)): the key appears twice in the same record")
        case .limit(let m) where !m.hasPrefix("object "):
            return .limit("\(place(trail, e.key)): \(m)")
        default: return error
        }
    }
}

/// Runs a body that throws only WriteFailure through a rethrowing API.
@inline(__always)
func typed<R>(_ body: () throws -> R) throws(WriteFailure) -> R {
    do {
        return try body()
    } catch let e as WriteFailure {
        throw e
    } catch {
        throw WriteFailure.state("\(error)")
    }
}
