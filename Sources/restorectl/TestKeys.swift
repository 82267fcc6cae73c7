// `restorectl test --keys FILE|-`: the input typed into the program under
// test at every launch (docs/TESTING.md, restorectl(1)).
//
// The file is read line by line. A line `@WAIT:MS` pauses MS milliseconds
// (0 to 600000); a line starting with `@#` is a comment. Any other line is typed as it is, without its line end,
// after its escapes are replaced: `\e` ESC, `\r` carriage return (the Enter
// key on a terminal), `\n` line feed, `\t` tab, `\\` a backslash. Any other
// backslash is an error naming the line and column. An empty line types
// nothing.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

struct Keys: Equatable {
    enum Step: Equatable {
        case type([UInt8])
        case wait(Int)
    }

    var steps: [Step]

    /// The longest pause one `@WAIT` line may ask for.
    static let maxWaitMs = 600_000

    /// Parses the text of a keys file; `source` names it in errors.
    static func parse(_ bytes: [UInt8], source: String) throws(CtlFailure) -> Keys {
        var steps: [Step] = []
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }   // the final line end
        for (n, raw) in lines.enumerated() {
            var line = Array(raw)
            if line.last == UInt8(ascii: "\r") { line.removeLast() }   // a CRLF file
            let where_ = "\(source), line \(n + 1)"
            let text = String(decoding: line, as: UTF8.self)
            if text.hasPrefix("@#") { continue }
            if text.hasPrefix("@WAIT:") {
                let ms = text.dropFirst(6)
                guard !ms.isEmpty, ms.allSatisfy({ $0.isASCII && $0.isNumber }), let v = Int(ms), v <= maxWaitMs else {
                    throw CtlFailure(Exit.usage, "--keys \(where_): '\(Text.oneLine(text))' is not @WAIT:MS with MS a whole number of milliseconds from 0 to \(maxWaitMs)")
                }
                steps.append(.wait(v))
                continue
            }
            var out: [UInt8] = []
            var i = 0
            while i < line.count {
                let c = line[i]
                guard c == UInt8(ascii: "\\") else { out.append(c); i += 1; continue }
                guard i + 1 < line.count else {
                    throw CtlFailure(Exit.usage, "--keys \(where_), column \(i + 1): a backslash at the end of the line (type one as \\\\)")
                }
                switch line[i + 1] {
                case UInt8(ascii: "e"): out.append(0x1b)
                case UInt8(ascii: "r"): out.append(0x0d)
                case UInt8(ascii: "n"): out.append(0x0a)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
                default:
                    let what = String(decoding: [line[i + 1]], as: UTF8.self)
                    throw CtlFailure(Exit.usage, "--keys \(where_), column \(i + 1): '\\\(Text.oneLine(what))' is not an escape (\\e, \\r, \\n, \\t, \\\\)")
                }
                i += 2
            }
            if !out.isEmpty { steps.append(.type(out)) }
        }
        return Keys(steps: steps)
    }

    /// Reads FILE, or standard input for "-".
    static func load(_ path: String) throws(CtlFailure) -> Keys {
        var bytes: [UInt8] = []
        let fd = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw CtlFailure(errno == ENOENT ? Exit.notFound : Exit.io, "--keys: cannot open \(Text.quotedPath(path)): \(String(cString: strerror(errno)))")
        }
        defer { if fd != 0 { close(fd) } }
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 {
                throw CtlFailure(Exit.io, "--keys: cannot read \(path == "-" ? "standard input" : Text.quotedPath(path)): \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            bytes += buf[0..<n]
            if bytes.count > 16 << 20 { throw CtlFailure(Exit.limit, "--keys: \(Text.quotedPath(path)) is larger than 16 MiB") }
        }
        return try parse(bytes, source: path == "-" ? "standard input" : Text.quotedPath(path))
    }
}

/// Types `Keys` into a descriptor as the run goes: the steps in order, each
/// pause measured from the moment the step before it was fully written.
struct KeyFeeder {
    private let steps: [Keys.Step]
    private var next = 0
    private var pending: [UInt8] = []
    private var readyAt: Int64

    init(_ keys: Keys, start: Int64) {
        steps = keys.steps
        readyAt = start
    }

    /// Nothing left to type.
    var done: Bool { next >= steps.count && pending.isEmpty }

    /// Writes what is due at `now` to the non-blocking `fd`; false when the
    /// reader is gone (EPIPE, EIO).
    mutating func feed(_ fd: Int32, now: Int64) -> Bool {
        while true {
            if pending.isEmpty {
                guard next < steps.count, now >= readyAt else { return true }
                switch steps[next] {
                case .wait(let ms): readyAt = now + Int64(ms)
                case .type(let b): pending = b
                }
                next += 1
                continue
            }
            let n = pending.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                pending.removeFirst(n)
                if pending.isEmpty { readyAt = now }
                continue
            }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return true }
            return false
        }
    }

    /// The milliseconds until the next step is due (nil: none waits on time).
    func msUntilDue(now: Int64) -> Int64? {
        guard pending.isEmpty, next < steps.count else { return nil }
        return max(0, readyAt - now)
    }
}
