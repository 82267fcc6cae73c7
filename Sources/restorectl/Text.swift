// Rendering text taken from archives (and file names) for a terminal:
// nothing from an archive reaches the terminal unescaped (B7.4).

enum Text {
    /// True for scalars that must not reach a terminal as they are: control
    /// characters (ESC, BEL, CR, ...), format characters (bidi overrides,
    /// zero-width joiners), line and paragraph separators, private use,
    /// surrogates and unassigned code points.
    static func isUnsafe(_ u: Unicode.Scalar) -> Bool {
        if u.value < 0x20 || u.value == 0x7F { return true }
        if u.value < 0x7F { return false }
        switch u.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate, .unassigned:
            return true
        default:
            return false
        }
    }

    /// `s` with every unsafe scalar written as a Swift escape (`\n`, `\t`,
    /// `\r`, `\u{1B}`) and backslashes doubled, so the output is unambiguous.
    /// With `quote`, also escapes `"` and wraps the result in quotes.
    static func escaped(_ s: String, quote: Bool = false) -> String {
        var needs = quote
        if !needs {
            for u in s.unicodeScalars where u == "\\" || isUnsafe(u) { needs = true; break }
        }
        if !needs { return s }
        var out = quote ? "\"" : ""
        out.reserveCapacity(s.utf8.count + 8)
        for u in s.unicodeScalars {
            switch u {
            case "\\": out += "\\\\"
            case "\"" where quote: out += "\\\""
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case "\0": out += "\\0"
            default:
                if isUnsafe(u) {
                    out += "\\u{" + String(u.value, radix: 16, uppercase: true) + "}"
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        if quote { out += "\"" }
        return out
    }

    /// A string value, quoted and escaped: `"a\u{1B}b"`.
    static func quoted(_ s: String) -> String { escaped(s, quote: true) }

    /// A file name for messages: `'dir/x.rst'`, escaped.
    static func quotedPath(_ p: String) -> String { "'" + escaped(p) + "'" }

    /// A one-line message: any line break or control character is escaped.
    static func oneLine(_ s: String) -> String {
        var out = ""
        for u in s.unicodeScalars {
            if isUnsafe(u) {
                switch u {
                case "\n": out += "\\n"
                case "\t": out += "\\t"
                case "\r": out += "\\r"
                default: out += "\\u{" + String(u.value, radix: 16, uppercase: true) + "}"
                }
            } else {
                out.unicodeScalars.append(u)
            }
        }
        return out
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// An OS string (a file name's bytes) as text: valid UTF-8 stays text,
    /// every other byte is written `\xHH` (lowercase), a backslash `\\`.
    /// Characters unsafe for a terminal (control, format, ...) are written
    /// as `\xHH` escapes of their bytes too, and with `quote` a `"` as
    /// `\x22` and the whole wrapped in quotes; `parseOSString` reads every
    /// form back to the same bytes.
    static func osString(_ bytes: [UInt8], quote: Bool = false) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count + 2)
        if quote { out.append(0x22) }
        func escape(_ b: UInt8) {
            out.append(0x5C); out.append(0x78)
            out.append(hexDigits[Int(b >> 4)]); out.append(hexDigits[Int(b & 15)])
        }
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == 0x5C { out.append(0x5C); out.append(0x5C); i += 1; continue }
            if b == 0x22 && quote { escape(b); i += 1; continue }
            let n = validSequenceLength(bytes, at: i)
            if n == 0 { escape(b); i += 1; continue }
            var scalar: Unicode.Scalar?
            var it = bytes[i..<(i + n)].makeIterator()
            var d = UTF8()
            if case .scalarValue(let u) = d.decode(&it) { scalar = u }
            if let u = scalar, !isUnsafe(u) {
                out.append(contentsOf: bytes[i..<(i + n)])
            } else {
                for k in i..<(i + n) { escape(bytes[k]) }
            }
            i += n
        }
        if quote { out.append(0x22) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The length of the valid UTF-8 sequence at `i` (1...4), 0 if none.
    private static func validSequenceLength(_ b: [UInt8], at i: Int) -> Int {
        let c = b[i]
        if c < 0x80 { return 1 }
        func cont(_ k: Int, _ lo: UInt8 = 0x80, _ hi: UInt8 = 0xBF) -> Bool {
            i + k < b.count && b[i + k] >= lo && b[i + k] <= hi
        }
        switch c {
        case 0xC2...0xDF: return cont(1) ? 2 : 0
        case 0xE0: return cont(1, 0xA0) && cont(2) ? 3 : 0
        case 0xE1...0xEC, 0xEE...0xEF: return cont(1) && cont(2) ? 3 : 0
        case 0xED: return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0
        case 0xF0: return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0
        case 0xF1...0xF3: return cont(1) && cont(2) && cont(3) ? 4 : 0
        case 0xF4: return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0
        default: return 0
        }
    }

    /// Reads the text form of an OS string back to its bytes: `\\` is a
    /// backslash, `\xHH` (either case) a byte, anything else itself.
    /// Throws a sentence (with the character offset) for another escape, a
    /// cut-off one, or a NUL.
    static func parseOSString(_ s: String) throws(OSStringSyntax) -> [UInt8] {
        let u = Array(s.utf8)
        var out = [UInt8]()
        out.reserveCapacity(u.count)
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x61...0x66: return c - 0x61 + 10
            case 0x41...0x46: return c - 0x41 + 10
            default: return nil
            }
        }
        var i = 0
        while i < u.count {
            let c = u[i]
            if c == 0 { throw OSStringSyntax(message: "a NUL at byte \(i) (an OS string holds any bytes but NUL)") }
            guard c == 0x5C else { out.append(c); i += 1; continue }
            guard i + 1 < u.count else { throw OSStringSyntax(message: "a backslash at byte \(i) ends the text (write a backslash as \\\\)") }
            if u[i + 1] == 0x5C { out.append(0x5C); i += 2; continue }
            guard u[i + 1] == 0x78, i + 3 < u.count, let hi = nibble(u[i + 2]), let lo = nibble(u[i + 3]) else {
                throw OSStringSyntax(message: "the escape at byte \(i) is neither \\\\ nor \\xHH with two hex digits")
            }
            let b = hi << 4 | lo
            if b == 0 { throw OSStringSyntax(message: "\\x00 at byte \(i) (an OS string holds any bytes but NUL)") }
            out.append(b)
            i += 4
        }
        return out
    }

    struct OSStringSyntax: Error { let message: String }

    /// Lowercase hex, two digits per byte.
    static func hex<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(hexDigits[Int(b >> 4)])
            out.append(hexDigits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses hex (either case, even length); nil if malformed.
    static func unhex(_ s: String) -> [UInt8]? {
        let u = Array(s.utf8)
        guard u.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x61...0x66: return c - 0x61 + 10
            case 0x41...0x46: return c - 0x41 + 10
            default: return nil
            }
        }
        var out = [UInt8]()
        out.reserveCapacity(u.count / 2)
        var i = 0
        while i < u.count {
            guard let hi = nibble(u[i]), let lo = nibble(u[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    /// UTC milliseconds as ISO 8601, "2024-11-22T05:59:00.123Z".
    static func iso8601(ms: Int64) -> String {
        let (secsQ, msR) = ms.quotientAndRemainder(dividingBy: 1000)
        var secs = secsQ
        var milli = msR
        if milli < 0 { milli += 1000; secs -= 1 }
        var days = secs / 86400
        var rem = secs % 86400
        if rem < 0 { rem += 86400; days -= 1 }
        // Civil from days (Howard Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        var y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        if m <= 2 { y += 1 }
        func pad(_ v: Int64, _ n: Int) -> String {
            let s = String(v)
            return s.count >= n ? s : String(repeating: "0", count: n - s.count) + s
        }
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(rem / 3600, 2)):\(pad(rem / 60 % 60, 2)):\(pad(rem % 60, 2)).\(pad(milli, 3))Z"
    }

    /// The shortest text that reads back as exactly `d` (and "nan", "inf",
    /// "-inf"; a NaN other than the default one as "nan:0x<bits>").
    static func double(_ d: Double) -> String {
        if d.isNaN {
            return d.bitPattern == Double.nan.bitPattern ? "nan" : "nan:0x" + String(d.bitPattern, radix: 16)
        }
        if d.isInfinite { return d < 0 ? "-inf" : "inf" }
        return "\(d)"
    }

    /// Reads what `double(_:)` writes (and any JSON number); nil if malformed.
    static func parseDouble(_ s: String) -> Double? {
        switch s {
        case "nan": return Double.nan
        case "inf", "+inf", "infinity": return Double.infinity
        case "-inf", "-infinity": return -Double.infinity
        default: break
        }
        if s.hasPrefix("nan:0x"), let bits = UInt64(s.dropFirst(6), radix: 16) {
            let d = Double(bitPattern: bits)
            return d.isNaN ? d : nil
        }
        guard let first = s.utf8.first, first == UInt8(ascii: "-") || (first >= 0x30 && first <= 0x39) else { return nil }
        // Double(String) also accepts "nan" and hex floats; only decimal
        // number text gets here (checked above and by the caller's grammar).
        for c in s.utf8 where !(c >= 0x30 && c <= 0x39) && c != 0x2D && c != 0x2B && c != 0x2E && c != 0x65 && c != 0x45 {
            return nil
        }
        return Double(s)
    }
}
