// The JSON form of an archive: what `inspect --json` prints and `save --from`
// reads. Schema (version 1 of this JSON; member order as written):
//
//   {"format_version": 1, "app_version": "...", "system_version": "...",
//    "idiom": "...", "saved_at_ms": 1732255140123,
//    "objects": [{"path": "Tabs/Nav", "class": "NavStack" | null,
//                 "version": 2,   (v1.1, only when not 0: the class version)
//                 "carry": 3,     (v1.1, only for a carried record: 1 + saves left)
//                 "values": [{"key": "k", "type": "int", "value": 3}, ...]}]}
//
// Types: bool, int, double, string, bytes (lowercase hex string), object
// (value = the target's path), object_array (v1.1: value = an array of the
// targets' paths), int_array, string_array, record (value = a
// nested list of entries), os_string (v1.2: a file name's bytes as text:
// valid UTF-8 as is, other bytes as \xHH, a backslash as \\), unknown
// (plus "tag": 12...15, value = payload hex; tag 11, as a 1.1 restorectl
// printed an OS string, is read as the OS string).
// Ints are exact int64 JSON numbers; doubles are the shortest text that reads
// back as the same bits, or "nan", "inf", "-inf" ("nan:0x<bits>" for a NaN
// with a payload).

import RestorationArchive
import RestorationCore

enum StateJSON {
    static let formatVersion = 1

    // MARK: document -> JSON

    static func json(_ doc: ArchiveDocument) -> JSON {
        let paths = doc.objects.indices.map { doc.path(of: $0) }
        var objects: [JSON] = []
        objects.reserveCapacity(doc.objects.count)
        for (i, o) in doc.objects.enumerated() {
            var members: [(String, JSON)] = [
                ("path", .string(paths[i])),
                ("class", o.className.map { .string($0) } ?? .null),
            ]
            if o.version != 0 { members.append(("version", .int(Int64(o.version)))) }
            if o.carry != 0 { members.append(("carry", .int(Int64(o.carry)))) }
            members.append(("values", entries(o.entries, paths)))
            objects.append(.object(members))
        }
        return .object([
            ("format_version", .int(Int64(doc.info.formatVersion))),
            ("app_version", .string(doc.info.appVersion)),
            ("system_version", .string(doc.info.systemVersion)),
            ("idiom", .string(doc.info.idiom)),
            ("saved_at_ms", .int(doc.info.savedAtMs)),
            ("objects", .array(objects)),
        ])
    }

    static func entries(_ entries: [ArchiveEntry], _ paths: [String]) -> JSON {
        .array(entries.map { e in
            var members: [(String, JSON)] = [("key", .string(e.key)), ("type", .string(typeName(e.value)))]
            if case .unknown(let tag, _) = e.value { members.append(("tag", .int(Int64(tag)))) }
            members.append(("value", value(e.value, paths)))
            return .object(members)
        })
    }

    static func typeName(_ v: ArchiveValue) -> String {
        switch v {
        case .bool: return "bool"
        case .int: return "int"
        case .double: return "double"
        case .string: return "string"
        case .bytes: return "bytes"
        case .osString: return "os_string"
        case .object: return "object"
        case .objectArray: return "object_array"
        case .intArray: return "int_array"
        case .stringArray: return "string_array"
        case .record: return "record"
        case .unknown: return "unknown"
        }
    }

    static let typeNames = ["bool", "int", "double", "string", "bytes", "object", "object_array", "int_array", "string_array", "record", "os_string", "unknown"]

    static func value(_ v: ArchiveValue, _ paths: [String]) -> JSON {
        switch v {
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d):
            return d.isFinite ? .number(Text.double(d)) : .string(Text.double(d))
        case .string(let s): return .string(s)
        case .bytes(let b): return .string(Text.hex(b))
        case .osString(let b): return .string(Text.osString(b))
        case .object(let r): return .string(r >= 0 && r < paths.count ? paths[r] : "")
        case .objectArray(let a): return .array(a.map { r in .string(r >= 0 && r < paths.count ? paths[r] : "") })
        case .intArray(let a): return .array(a.map { .int($0) })
        case .stringArray(let a): return .array(a.map { .string($0) })
        case .record(let sub): return entries(sub, paths)
        case .unknown(_, let payload): return .string(Text.hex(payload))
        }
    }

    // MARK: JSON -> document

    /// A document that does not follow the schema; `code` is the exit code.
    struct SchemaError: Error {
        let code: Int32
        let path: JSONPath
        let message: String
        var description: String { "\(path): \(message)" }
    }

    private static func fail(_ path: JSONPath, _ message: String, code: Int32 = Exit.corrupt) -> SchemaError {
        SchemaError(code: code, path: path, message: message)
    }

    /// Builds the document the JSON describes. `now` is used when
    /// saved_at_ms is absent.
    static func document(_ json: JSON, now: Int64) throws(SchemaError) -> ArchiveDocument {
        let root = JSONPath()
        guard case .object(let members) = json else { throw fail(root, "expected an object, found \(json.kindName)") }
        let known = ["format_version", "app_version", "system_version", "idiom", "saved_at_ms", "objects"]
        for (name, _) in members where !known.contains(name) {
            throw fail(root.member(name), "unknown member (expected one of \(known.joined(separator: ", ")))")
        }
        var info = ArchiveInfo()
        if let v = json["format_version"] {
            let p = root.member("format_version")
            let n = try int(v, p)
            if n != Int64(formatVersion) {
                throw fail(p, "format version \(n) is not supported (this restorectl writes version \(formatVersion))", code: Exit.version)
            }
        }
        info.appVersion = try optionalString(json["app_version"], root.member("app_version"))
        info.systemVersion = try optionalString(json["system_version"], root.member("system_version"))
        info.idiom = try optionalString(json["idiom"], root.member("idiom"))
        info.savedAtMs = try json["saved_at_ms"].map { v throws(SchemaError) in try int(v, root.member("saved_at_ms")) } ?? now

        let opath = root.member("objects")
        guard let ov = json["objects"] else { throw fail(opath, "missing (the list of objects; [] for none)") }
        guard case .array(let items) = ov else { throw fail(opath, "expected an array, found \(ov.kindName)") }

        // First pass: paths, so references may point forward.
        var index: [String: Int] = [:]
        var objects: [ArchiveObject] = []
        objects.reserveCapacity(items.count)
        for (i, item) in items.enumerated() {
            let p = opath.index(i)
            guard case .object(let om) = item else { throw fail(p, "expected an object, found \(item.kindName)") }
            for (name, _) in om where !["path", "class", "version", "carry", "values"].contains(name) {
                throw fail(p.member(name), "unknown member (expected path, class, version, carry, values)")
            }
            let pp = p.member("path")
            guard let pv = item["path"] else { throw fail(pp, "missing (the object's restoration path, \"A/B/C\")") }
            guard case .string(let path) = pv else { throw fail(pp, "expected a string, found \(pv.kindName)") }
            let comps = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            if comps.contains(where: { $0.isEmpty }) {
                throw fail(pp, "\(Text.quoted(path)) is not a path (identifiers are non-empty, joined by '/')")
            }
            if let bad = comps.first(where: { $0.utf8.count > ArchiveLimits.maxIdentifierBytes }) {
                throw fail(pp, "the identifier \(Text.quoted(String(bad.prefix(32))))... has \(bad.utf8.count) bytes, more than \(ArchiveLimits.maxIdentifierBytes)", code: Exit.limit)
            }
            if comps.contains(where: { $0.utf8.contains(0) }) { throw fail(pp, "an identifier contains a NUL character") }
            if let earlier = index[path] { throw fail(pp, "the path \(Text.quoted(path)) is already used by $.objects[\(earlier)]") }
            var parent: Int? = nil
            if comps.count > 1 {
                let parentPath = comps.dropLast().joined(separator: "/")
                guard let pi = index[parentPath] else {
                    throw fail(pp, "the parent \(Text.quoted(parentPath)) must appear earlier in objects")
                }
                parent = pi
            }
            var className: String? = nil
            if let cv = item["class"] {
                let cp = p.member("class")
                switch cv {
                case .null: break
                case .string(let c):
                    if c.isEmpty { throw fail(cp, "the class name is empty (use null for none)") }
                    if c.utf8.count > ArchiveLimits.maxClassNameBytes {
                        throw fail(cp, "the class name has \(c.utf8.count) bytes, more than \(ArchiveLimits.maxClassNameBytes)", code: Exit.limit)
                    }
                    if c.utf8.contains(0) { throw fail(cp, "the class name contains a NUL character") }
                    className = c
                default: throw fail(cp, "expected a string or null, found \(cv.kindName)")
                }
            }
            var version: UInt32 = 0
            if let vv = item["version"] {
                let vp = p.member("version")
                let v = try int(vv, vp)
                guard v >= 0 && v <= Int64(UInt32.max) else { throw fail(vp, "the class version \(v) is outside 0...\(UInt32.max)") }
                version = UInt32(v)
            }
            var carry: UInt32 = 0
            if let cv = item["carry"] {
                let cp = p.member("carry")
                let v = try int(cv, cp)
                guard v >= 0 && v <= Int64(UInt32.max) else { throw fail(cp, "the carry count \(v) is outside 0...\(UInt32.max)") }
                carry = UInt32(v)
            }
            index[path] = i
            objects.append(ArchiveObject(identifier: comps[comps.count - 1], parent: parent, className: className, version: version))
            objects[objects.count - 1].carry = carry
        }

        // Second pass: values.
        for (i, item) in items.enumerated() {
            guard let vv = item["values"] else { continue }
            objects[i].entries = try entries(vv, opath.index(i).member("values"), index, depth: 0)
        }
        return ArchiveDocument(info: info, objects: objects)
    }

    private static func optionalString(_ v: JSON?, _ p: JSONPath) throws(SchemaError) -> String {
        guard let v else { return "" }
        guard case .string(let s) = v else { throw fail(p, "expected a string, found \(v.kindName)") }
        if s.utf8.contains(0) { throw fail(p, "the string contains a NUL character") }
        if s.utf8.count > ArchiveLimits.maxInfoStringBytes {
            throw fail(p, "\(s.utf8.count) bytes, more than \(ArchiveLimits.maxInfoStringBytes)", code: Exit.limit)
        }
        return s
    }

    static func int(_ v: JSON, _ p: JSONPath) throws(SchemaError) -> Int64 {
        guard case .number(let text) = v else { throw fail(p, "expected an integer, found \(v.kindName)") }
        if let n = Int64(text) { return n }
        if text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
            throw fail(p, "\(text) is not an integer")
        }
        throw fail(p, "\(text) is outside the int64 range (\(Int64.min)...\(Int64.max))")
    }

    private static func double(_ v: JSON, _ p: JSONPath) throws(SchemaError) -> Double {
        switch v {
        case .number(let text):
            guard let d = Double(text) else { throw fail(p, "\(text) is not a double") }
            return d
        case .string(let s):
            guard let d = Text.parseDouble(s), !d.isFinite else {
                throw fail(p, "expected a number or \"nan\", \"inf\", \"-inf\", found \(Text.quoted(s))")
            }
            return d
        default:
            throw fail(p, "expected a number, found \(v.kindName)")
        }
    }

    private static func string(_ v: JSON, _ p: JSONPath) throws(SchemaError) -> String {
        guard case .string(let s) = v else { throw fail(p, "expected a string, found \(v.kindName)") }
        if s.utf8.contains(0) { throw fail(p, "the string contains a NUL character, which archives cannot hold") }
        return s
    }

    private static func hex(_ v: JSON, _ p: JSONPath) throws(SchemaError) -> [UInt8] {
        guard case .string(let s) = v else { throw fail(p, "expected a hex string, found \(v.kindName)") }
        guard let b = Text.unhex(s) else { throw fail(p, "\(Text.quoted(String(s.prefix(40)))) is not hex (two digits per byte)") }
        return b
    }

    private static func entries(_ v: JSON, _ p: JSONPath, _ index: [String: Int], depth: Int) throws(SchemaError) -> [ArchiveEntry] {
        guard case .array(let items) = v else { throw fail(p, "expected an array of {\"key\", \"type\", \"value\"} entries, found \(v.kindName)") }
        if items.count > ArchiveLimits.maxValuesPerRecord {
            throw fail(p, "\(items.count) values in one record, more than \(ArchiveLimits.maxValuesPerRecord)", code: Exit.limit)
        }
        var out: [ArchiveEntry] = []
        out.reserveCapacity(items.count)
        var seen: [String: Int] = [:]
        for (k, item) in items.enumerated() {
            let ep = p.index(k)
            guard case .object(let members) = item else { throw fail(ep, "expected an object, found \(item.kindName)") }
            for (name, _) in members where !["key", "type", "value", "tag"].contains(name) {
                throw fail(ep.member(name), "unknown member (expected key, type, value; tag for unknown)")
            }
            let kp = ep.member("key")
            guard let kv = item["key"] else { throw fail(kp, "missing") }
            guard case .string(let key) = kv else { throw fail(kp, "expected a string, found \(kv.kindName)") }
            if key.isEmpty { throw fail(kp, "the key is empty") }
            if key.utf8.count > ArchiveLimits.maxKeyBytes {
                throw fail(kp, "the key has \(key.utf8.count) bytes, more than \(ArchiveLimits.maxKeyBytes)", code: Exit.limit)
            }
            if key.utf8.contains(0) { throw fail(kp, "the key contains a NUL character") }
            if let first = seen[key] { throw fail(kp, "the key \(Text.quoted(key)) already appears at [\(first)] of this record") }
            seen[key] = k
            let tp = ep.member("type")
            guard let tv = item["type"] else { throw fail(tp, "missing (one of \(typeNames.joined(separator: ", ")))") }
            guard case .string(let type) = tv else { throw fail(tp, "expected a string, found \(tv.kindName)") }
            guard typeNames.contains(type) else {
                throw fail(tp, "unknown type \(Text.quoted(type)) (expected one of \(typeNames.joined(separator: ", ")))")
            }
            if type != "unknown", item["tag"] != nil { throw fail(ep.member("tag"), "only values of type \"unknown\" have a tag") }
            let vp = ep.member("value")
            guard let value = item["value"] else { throw fail(vp, "missing") }
            let v: ArchiveValue
            switch type {
            case "bool":
                guard case .bool(let b) = value else { throw fail(vp, "expected true or false, found \(value.kindName)") }
                v = .bool(b)
            case "int": v = .int(try int(value, vp))
            case "double": v = .double(try double(value, vp))
            case "string": v = .string(try string(value, vp))
            case "bytes": v = .bytes(try hex(value, vp))
            case "os_string":
                guard case .string(let text) = value else { throw fail(vp, "expected an OS string as text (\\xHH for a byte that is not UTF-8, \\\\ for a backslash), found \(value.kindName)") }
                do { v = .osString(try Text.parseOSString(text)) } catch { throw fail(vp, error.message) }
            case "object":
                guard case .string(let target) = value else { throw fail(vp, "expected the referenced object's path, found \(value.kindName)") }
                guard let r = index[target] else { throw fail(vp, "no object has the path \(Text.quoted(target))") }
                v = .object(record: r)
            case "object_array":
                guard case .array(let a) = value else { throw fail(vp, "expected an array of the referenced objects' paths, found \(value.kindName)") }
                var records: [Int] = []
                records.reserveCapacity(a.count)
                for (n, e) in a.enumerated() {
                    guard case .string(let target) = e else { throw fail(vp.index(n), "expected the referenced object's path, found \(e.kindName)") }
                    guard let r = index[target] else { throw fail(vp.index(n), "no object has the path \(Text.quoted(target))") }
                    records.append(r)
                }
                v = .objectArray(records)
            case "int_array":
                guard case .array(let a) = value else { throw fail(vp, "expected an array of integers, found \(value.kindName)") }
                var ints: [Int64] = []
                ints.reserveCapacity(a.count)
                for (n, e) in a.enumerated() { ints.append(try int(e, vp.index(n))) }
                v = .intArray(ints)
            case "string_array":
                guard case .array(let a) = value else { throw fail(vp, "expected an array of strings, found \(value.kindName)") }
                var strings: [String] = []
                strings.reserveCapacity(a.count)
                for (n, e) in a.enumerated() { strings.append(try string(e, vp.index(n))) }
                v = .stringArray(strings)
            case "record":
                if depth + 1 > ArchiveLimits.maxRecordDepth {
                    throw fail(vp, "nested records deeper than \(ArchiveLimits.maxRecordDepth)", code: Exit.limit)
                }
                v = .record(try entries(value, vp, index, depth: depth + 1))
            default:  // unknown
                let gp = ep.member("tag")
                guard let gv = item["tag"] else { throw fail(gp, "missing (a value of type \"unknown\" keeps its tag, 12...15)") }
                let tag = try int(gv, gp)
                if tag == Int64(ValueTag.osString.rawValue) {
                    // An OS string as a 1.1 restorectl printed it (tag 11 was a future tag then).
                    let payload = try hex(value, vp)
                    if payload.contains(0) { throw fail(vp, "an OS string (tag 11) holds any bytes but NUL") }
                    v = .osString(payload)
                } else {
                    guard ValueTag.isFuture(rawTag: UInt8(clamping: tag)) && tag <= 15 else { throw fail(gp, "tag \(tag) is not a future tag (12...15)") }
                    v = .unknown(tag: UInt8(tag), payload: try hex(value, vp))
                }
            }
            out.append(ArchiveEntry(key: key, value: v))
        }
        return out
    }
}
