// Human-readable text for archive values. Everything taken from an archive
// goes through Text.escaped/quoted (no terminal injection, B7.4).

import RestorationArchive

struct Renderer {
    /// Record paths, by record index (for object references).
    let paths: [String]
    /// false: long strings, bytes and arrays are shortened.
    let full: Bool
    /// Notes appended to object references, by target record ("skipped").
    var referenceNote: (Int) -> String? = { _ in nil }

    static let maxStringChars = 160
    static let maxBytes = 32
    static let maxElements = 16

    init(paths: [String], full: Bool) {
        self.paths = paths
        self.full = full
    }

    func infoLines(_ info: ArchiveInfo, byteCount: Int?) -> [String] {
        var lines = [
            "  format version  \(info.formatVersion)",
            "  app version     \(Text.quoted(info.appVersion))",
            "  system version  \(Text.quoted(info.systemVersion))",
            "  idiom           \(Text.quoted(info.idiom))",
            "  saved at        \(Text.iso8601(ms: info.savedAtMs)) (\(info.savedAtMs) ms)",
            "  objects         \(info.objectCount)",
        ]
        if let byteCount { lines.append("  size            \(byteCount) bytes") }
        return lines
    }

    /// "Tabs/Nav  class NavStack", "Tabs/Nav  class NavStack v2" (v1.1: the
    /// record's class version, shown when not 0) or "Tabs/Nav  (no class)".
    func header(path: String, className: String?, version: UInt32 = 0, carry: UInt32 = 0) -> String {
        Text.escaped(path) + "  " + (className.map { "class " + Text.escaped($0) } ?? "(no class)")
            + (version != 0 ? " v\(version)" : "")
            + (carry == 0 ? "" : carry == UInt32.max ? "  [carried, always]" : "  [carried, \(carry - 1) more save\(carry - 1 == 1 ? "" : "s")]")
    }

    /// One line per value; records open a block indented by two more spaces.
    func entryLines(_ entries: [ArchiveEntry], indent: Int, into out: inout [String], top: Bool = true) {
        let pad = String(repeating: " ", count: indent)
        if entries.isEmpty && top { out.append(pad + "(no values)") }
        for e in entries {
            let key = Text.escaped(e.key)
            switch e.value {
            case .record(let sub):
                out.append("\(pad)\(key): record {")
                entryLines(sub, indent: indent + 2, into: &out, top: false)
                out.append("\(pad)}")
            default:
                out.append("\(pad)\(key): \(typeAndValue(e.value))")
            }
        }
    }

    func typeAndValue(_ v: ArchiveValue) -> String {
        switch v {
        case .bool(let b): return "bool = \(b)"
        case .int(let i): return "int = \(i)"
        case .double(let d): return "double = \(Text.double(d))"
        case .string(let s): return "string = \(string(s))"
        case .bytes(let b): return "bytes[\(b.count)] = \(bytes(b))"
        case .osString(let b): return "os_string = \(Text.osString(b, quote: true))"
        case .object(let r): return "object -> \(reference(r))"
        case .objectArray(let a):
            return "object_array[\(a.count)] -> [" + elements(a.prefix(full ? a.count : Renderer.maxElements + 1).map { reference($0) }, total: a.count) + "]"
        case .intArray(let a):
            return "int_array[\(a.count)] = [" + elements(a.map { String($0) }) + "]"
        case .stringArray(let a):
            return "string_array[\(a.count)] = [" + elements(a.prefix(full ? a.count : Renderer.maxElements + 1).map { string($0) }, total: a.count) + "]"
        case .record(let sub): return "record {\(sub.count) values}"
        case .unknown(let tag, let payload):
            return "unknown (tag \(tag)) [\(payload.count)] = \(bytes(payload))"
        }
    }

    func reference(_ r: Int) -> String {
        let target = r >= 0 && r < paths.count ? Text.escaped(paths[r]) : "record \(r)"
        if let note = referenceNote(r) { return "\(target) (\(note))" }
        return target
    }

    func string(_ s: String) -> String {
        if full || s.count <= Renderer.maxStringChars { return Text.quoted(s) }
        let head = String(s.prefix(Renderer.maxStringChars))
        return Text.quoted(head) + "... (\(s.count) characters; --full shows all)"
    }

    func bytes(_ b: [UInt8]) -> String {
        if b.isEmpty { return "(empty)" }
        if full || b.count <= Renderer.maxBytes { return Text.hex(b) }
        return Text.hex(b.prefix(Renderer.maxBytes)) + "... (--full shows all)"
    }

    func elements(_ items: [String], total: Int? = nil) -> String {
        let n = total ?? items.count
        if full || n <= Renderer.maxElements { return items.joined(separator: ", ") }
        return items.prefix(Renderer.maxElements).joined(separator: ", ") + ", ... \(n - Renderer.maxElements) more"
    }
}
