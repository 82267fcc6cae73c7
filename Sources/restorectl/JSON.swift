// A small JSON reader and writer. Numbers keep their text, so int64 values
// beyond 2^53 and doubles round-trip exactly; objects keep member order.
// Every parse error names the JSON path where it happened ("$.objects[3]").

indirect enum JSON: Equatable {
    case null
    case bool(Bool)
    /// The number's text as it appears in the document (JSON grammar checked).
    case number(String)
    case string(String)
    case array([JSON])
    /// Members in document order; names are unique (the parser rejects repeats).
    case object([(String, JSON)])

    static func == (a: JSON, b: JSON) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        case (.string(let x), .string(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    static func int(_ v: Int64) -> JSON { .number(String(v)) }

    /// "a string", "an object", for messages.
    var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    subscript(member: String) -> JSON? {
        guard case .object(let members) = self else { return nil }
        for (k, v) in members where k == member { return v }
        return nil
    }
}

/// A JSON path for messages: `$.objects[3].values[1].type`. Cheap to extend
/// (one small node); the text is only built for a message.
struct JSONPath: CustomStringConvertible {
    private indirect enum Node {
        case root
        case member(Node, String)
        case index(Node, Int)
    }

    private var node: Node = .root

    func member(_ name: String) -> JSONPath {
        var p = self
        p.node = .member(node, name)
        return p
    }

    func index(_ i: Int) -> JSONPath {
        var p = self
        p.node = .index(node, i)
        return p
    }

    var description: String {
        var parts: [String] = []
        var n = node
        while true {
            switch n {
            case .root:
                return "$" + parts.reversed().joined()
            case .member(let parent, let name):
                let simple = !name.isEmpty && name.unicodeScalars.allSatisfy { ($0 >= "a" && $0 <= "z") || ($0 >= "A" && $0 <= "Z") || ($0 >= "0" && $0 <= "9") || $0 == "_" }
                parts.append(simple ? "." + name : "[" + Text.quoted(name) + "]")
                n = parent
            case .index(let parent, let i):
                parts.append("[\(i)]")
                n = parent
            }
        }
    }
}

/// A malformed document: where, and what is wrong.
struct JSONError: Error, CustomStringConvertible {
    let path: JSONPath
    let message: String
    var description: String { "\(path): \(message)" }
}

// MARK: - Parser

struct JSONParser {
    static let maxDepth = 512

    private let b: [UInt8]
    private var i = 0
    private var depth = 0

    private init(_ bytes: [UInt8]) { b = bytes }

    /// Parses a whole document (UTF-8, optional BOM, one value, whitespace).
    static func parse(_ bytes: [UInt8]) throws(JSONError) -> JSON {
        var p = JSONParser(bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { p.i = 3 }
        let root = JSONPath()
        p.skipSpace()
        let v = try p.value(root)
        p.skipSpace()
        if p.i < bytes.count { throw p.error(root, "unexpected \(p.describeHere()) after the document") }
        return v
    }

    private func position() -> String {
        var line = 1, col = 1
        var k = 0
        while k < i && k < b.count {
            if b[k] == 0x0A { line += 1; col = 1 } else if b[k] & 0xC0 != 0x80 { col += 1 }
            k += 1
        }
        return "line \(line), column \(col)"
    }

    private func error(_ path: JSONPath, _ what: String) -> JSONError {
        JSONError(path: path, message: "\(what) (at \(position()))")
    }

    private func describeHere() -> String {
        guard i < b.count else { return "end of input" }
        let c = b[i]
        if c >= 0x21 && c < 0x7F { return "'\(Character(Unicode.Scalar(c)))'" }
        return "byte 0x\(Text.hex([c]))"
    }

    private mutating func skipSpace() {
        while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
    }

    private mutating func literal(_ word: String, _ path: JSONPath) throws(JSONError) {
        let w = Array(word.utf8)
        guard i + w.count <= b.count, Array(b[i..<(i + w.count)]) == w else {
            throw error(path, "expected a value, found \(describeHere())")
        }
        i += w.count
    }

    private mutating func value(_ path: JSONPath) throws(JSONError) -> JSON {
        guard i < b.count else { throw error(path, "expected a value, found end of input") }
        switch b[i] {
        case UInt8(ascii: "{"): return try object(path)
        case UInt8(ascii: "["): return try array(path)
        case UInt8(ascii: "\""): return .string(try string(path))
        case UInt8(ascii: "t"): try literal("true", path); return .bool(true)
        case UInt8(ascii: "f"): try literal("false", path); return .bool(false)
        case UInt8(ascii: "n"): try literal("null", path); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number(path))
        default: throw error(path, "expected a value, found \(describeHere())")
        }
    }

    private mutating func enter(_ path: JSONPath) throws(JSONError) {
        depth += 1
        if depth > JSONParser.maxDepth { throw error(path, "nested more than \(JSONParser.maxDepth) levels deep") }
    }

    private mutating func object(_ path: JSONPath) throws(JSONError) -> JSON {
        try enter(path)
        defer { depth -= 1 }
        i += 1
        var members: [(String, JSON)] = []
        var seen = Set<String>()
        skipSpace()
        if i < b.count, b[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
        while true {
            skipSpace()
            guard i < b.count, b[i] == UInt8(ascii: "\"") else {
                throw error(path, "expected a member name in quotes, found \(describeHere())")
            }
            let name = try string(path)
            let mpath = path.member(name)
            if !seen.insert(name).inserted { throw error(mpath, "the member \(Text.quoted(name)) appears twice") }
            skipSpace()
            guard i < b.count, b[i] == UInt8(ascii: ":") else { throw error(mpath, "expected ':' after the member name, found \(describeHere())") }
            i += 1
            skipSpace()
            members.append((name, try value(mpath)))
            skipSpace()
            guard i < b.count else { throw error(path, "expected ',' or '}', found end of input") }
            if b[i] == UInt8(ascii: ",") { i += 1; continue }
            if b[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
            throw error(mpath, "expected ',' or '}' after this member, found \(describeHere())")
        }
    }

    private mutating func array(_ path: JSONPath) throws(JSONError) -> JSON {
        try enter(path)
        defer { depth -= 1 }
        i += 1
        var items: [JSON] = []
        skipSpace()
        if i < b.count, b[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
        while true {
            skipSpace()
            let ipath = path.index(items.count)
            items.append(try value(ipath))
            skipSpace()
            guard i < b.count else { throw error(path, "expected ',' or ']', found end of input") }
            if b[i] == UInt8(ascii: ",") { i += 1; continue }
            if b[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
            throw error(ipath, "expected ',' or ']' after this element, found \(describeHere())")
        }
    }

    private mutating func hex4(_ path: JSONPath) throws(JSONError) -> UInt32 {
        guard i + 4 <= b.count, let v = UInt32(String(decoding: b[i..<(i + 4)], as: UTF8.self), radix: 16),
              b[i..<(i + 4)].allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) }) else {
            throw error(path, "a \\u escape needs four hex digits")
        }
        i += 4
        return v
    }

    private mutating func string(_ path: JSONPath) throws(JSONError) -> String {
        i += 1  // the opening quote
        var out = [UInt8]()
        while true {
            guard i < b.count else { throw error(path, "unterminated string") }
            let c = b[i]
            if c == UInt8(ascii: "\"") { i += 1; break }
            if c < 0x20 { throw error(path, "a control character (0x\(Text.hex([c]))) inside a string must be escaped") }
            if c != UInt8(ascii: "\\") { out.append(c); i += 1; continue }
            i += 1
            guard i < b.count else { throw error(path, "unterminated string") }
            let e = b[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var v = try hex4(path)
                if v >= 0xD800 && v < 0xDC00 {
                    guard i + 2 <= b.count, b[i] == UInt8(ascii: "\\"), b[i + 1] == UInt8(ascii: "u") else {
                        throw error(path, "a lone UTF-16 surrogate (\\u\(String(v, radix: 16))) is not a character")
                    }
                    i += 2
                    let lo = try hex4(path)
                    guard lo >= 0xDC00 && lo < 0xE000 else {
                        throw error(path, "a lone UTF-16 surrogate (\\u\(String(v, radix: 16))) is not a character")
                    }
                    v = 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00)
                } else if v >= 0xDC00 && v < 0xE000 {
                    throw error(path, "a lone UTF-16 surrogate (\\u\(String(v, radix: 16))) is not a character")
                }
                out.append(contentsOf: Array(String(Character(Unicode.Scalar(v)!)).utf8))
            default:
                i -= 1
                throw error(path, "unknown escape \\\(describeHere())")
            }
        }
        guard let s = String(validating: out, as: UTF8.self) else {
            throw error(path, "the string is not valid UTF-8")
        }
        return s
    }

    private mutating func number(_ path: JSONPath) throws(JSONError) -> String {
        let start = i
        func digits() -> Int {
            let s = i
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 { i += 1 }
            return i - s
        }
        if b[i] == UInt8(ascii: "-") { i += 1 }
        guard i < b.count, b[i] >= 0x30, b[i] <= 0x39 else { throw error(path, "a number needs digits after '-'") }
        if b[i] == 0x30 {
            i += 1
            if i < b.count, b[i] >= 0x30, b[i] <= 0x39 { throw error(path, "a number may not have leading zeros") }
        } else {
            _ = digits()
        }
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            if digits() == 0 { throw error(path, "a number needs digits after '.'") }
        }
        if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
            i += 1
            if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
            if digits() == 0 { throw error(path, "a number needs digits in its exponent") }
        }
        return String(decoding: b[start..<i], as: UTF8.self)
    }
}

// MARK: - Writer

enum JSONWriter {
    /// Pretty text: a container whose compact form fits in `width` columns
    /// stays on one line; others put each element on its own line.
    static func write(_ v: JSON, width: Int = 100) -> String {
        var out = ""
        write(v, indent: 0, width: width, into: &out)
        out += "\n"
        return out
    }

    static func compact(_ v: JSON) -> String {
        var out = ""
        compact(v, into: &out)
        return out
    }

    static func compact(_ v: JSON, into out: inout String) {
        switch v {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let n): out += n
        case .string(let s): string(s, into: &out)
        case .array(let items):
            out += "["
            for (k, item) in items.enumerated() {
                if k > 0 { out += ", " }
                compact(item, into: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (k, (name, item)) in members.enumerated() {
                if k > 0 { out += ", " }
                string(name, into: &out)
                out += ": "
                compact(item, into: &out)
            }
            out += "}"
        }
    }

    /// The compact form if it has at most `limit` UTF-8 bytes, else nil
    /// (stops early: a large container costs no more than `limit`).
    static func compact(_ v: JSON, limit: Int) -> String? {
        var out = ""
        return compact(v, into: &out, limit: limit) ? out : nil
    }

    private static func compact(_ v: JSON, into out: inout String, limit: Int) -> Bool {
        switch v {
        case .array(let items):
            out += "["
            for (k, item) in items.enumerated() {
                if k > 0 { out += ", " }
                if !compact(item, into: &out, limit: limit) { return false }
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (k, (name, item)) in members.enumerated() {
                if k > 0 { out += ", " }
                string(name, into: &out)
                out += ": "
                if out.utf8.count > limit || !compact(item, into: &out, limit: limit) { return false }
            }
            out += "}"
        default:
            compact(v, into: &out)
        }
        return out.utf8.count <= limit
    }

    private static func write(_ v: JSON, indent: Int, width: Int, into out: inout String) {
        switch v {
        case .array(let items) where !items.isEmpty:
            if let c = compact(v, limit: width - indent) { out += c; return }
            out += "[\n"
            for (k, item) in items.enumerated() {
                out += String(repeating: " ", count: indent + 2)
                write(item, indent: indent + 2, width: width, into: &out)
                out += k + 1 < items.count ? ",\n" : "\n"
            }
            out += String(repeating: " ", count: indent) + "]"
        case .object(let members) where !members.isEmpty:
            if let c = compact(v, limit: width - indent) { out += c; return }
            out += "{\n"
            for (k, (name, item)) in members.enumerated() {
                out += String(repeating: " ", count: indent + 2)
                string(name, into: &out)
                out += ": "
                write(item, indent: indent + 2, width: width, into: &out)
                out += k + 1 < members.count ? ",\n" : "\n"
            }
            out += String(repeating: " ", count: indent) + "}"
        default:
            compact(v, into: &out)
        }
    }

    /// A JSON string literal; control characters, U+2028/U+2029 and other
    /// unsafe scalars as \u escapes, so the output is safe on a terminal.
    static func string(_ s: String, into out: inout String) {
        out += "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if Text.isUnsafe(u) {
                    if u.value > 0xFFFF {
                        let v = u.value - 0x10000
                        out += utf16Escape(0xD800 + (v >> 10)) + utf16Escape(0xDC00 + (v & 0x3FF))
                    } else {
                        out += utf16Escape(u.value)
                    }
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        out += "\""
    }

    private static func utf16Escape(_ v: UInt32) -> String {
        let h = String(v, radix: 16)
        return "\\u" + String(repeating: "0", count: 4 - h.count) + h
    }
}
