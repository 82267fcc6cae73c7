#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a restore restores what it does (`rst_restore_reason`, ABI v1.1 §3).
public enum RestoreReason: UInt32, Sendable, CustomStringConvertible {
    /// No archive: never saved, or discarded.
    case firstLaunch = 0
    /// The previous session ended cleanly.
    case relaunch = 1
    /// The previous session died: the archive is its last save.
    case recover = 2
    /// `rst_restore_from_buffer`.
    case buffer = 3
    /// The current archive was missing or invalid: an older generation.
    case fallback = 4

    /// The C enumerator's name, "RST_REASON_RECOVER".
    public var cName: String {
        switch self {
        case .firstLaunch: return "RST_REASON_FIRST_LAUNCH"
        case .relaunch: return "RST_REASON_RELAUNCH"
        case .recover: return "RST_REASON_RECOVER"
        case .buffer: return "RST_REASON_BUFFER"
        case .fallback: return "RST_REASON_FALLBACK"
        }
    }

    public var description: String { cName }
}

/// The session file `<archive>.session`: an engine with an archive path
/// writes it at its first save or restore and removes it at destroy, so
/// the next process can tell whether the previous one ended cleanly. Its
/// content, complete or not at all (written to a temporary, then renamed;
/// not fsynced: a power loss ends the boot, and a session of another boot
/// whose file survived counts as died, which it did):
///
///     restoration-session 1
///     pid=<decimal>
///     start=<start time of that pid, clock ticks since boot>
///     boot=<boot id>
///     end
///
/// Anything else (torn, foreign, a FIFO) is no session: the previous one
/// counts as ended cleanly. All I/O goes through `FileIO`.
enum SessionFile {
    static let magic = "restoration-session 1"
    static let infix = ".session"

    static func path(_ archive: String) -> String { archive + infix }

    static func encode(_ o: CrashGuard.Owner) -> String {
        "\(magic)\npid=\(o.pid)\nstart=\(o.start)\nboot=\(o.boot)\nend\n"
    }

    static func parse(_ bytes: [UInt8]) -> CrashGuard.Owner? {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count == 6, lines[0] == magic, lines[4] == "end", lines[5].isEmpty else { return nil }
        func value(_ line: Substring, _ key: String) -> Substring? {
            line.hasPrefix(key + "=") ? line.dropFirst(key.count + 1) : nil
        }
        guard let pid = value(lines[1], "pid").flatMap({ Int32($0) }), pid > 0,
              let start = value(lines[2], "start").flatMap({ UInt64($0) }),
              let boot = value(lines[3], "boot"), !boot.isEmpty else { return nil }
        return CrashGuard.Owner(pid: pid, start: start, boot: String(boot))
    }

    /// The session recorded beside `archive`; nil when there is none usable.
    static func read(_ archive: String) -> CrashGuard.Owner? {
        let p = path(archive)
        let fd = FileStore.retrying { FileIO.open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW) }
        guard fd >= 0 else { return nil }
        defer { _ = FileIO.close(fd) }
        var st = stat()
        guard FileIO.fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_size <= 1024 else { return nil }
        var buf = [UInt8](repeating: 0, count: 1024)
        var off = 0, interrupts = 0
        while off < buf.count {
            let n = buf.withUnsafeMutableBytes { FileIO.read(fd, $0.baseAddress! + off, $0.count - off) }
            if n < 0 && errno == EINTR && interrupts < FileStore.maxInterrupts { interrupts += 1; continue }
            if n <= 0 { break }
            off += n
        }
        return parse(Array(buf[0..<off]))
    }

    /// Records this process's session; a warning on failure (nil: written).
    static func open(_ archive: String) -> String? {
        let p = path(archive)
        let tmp = "\(archive)\(FileStore.tempInfix)session-\(getpid())"
        let bytes = Array(encode(CrashGuard.current).utf8)
        _ = FileStore.retrying { FileIO.unlink(tmp) }
        let fd = FileStore.retrying { FileIO.open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600) }
        guard fd >= 0 else { return "cannot record the session in '\(p)': creating '\(tmp)' failed: \(FileStore.errnoText()); a crash of this process will read as a clean end" }
        var off = 0, zeros = 0, interrupts = 0
        var failure: String?
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { FileIO.write(fd, $0.baseAddress! + off, $0.count - off) }
            if n < 0 && errno == EINTR && interrupts < FileStore.maxInterrupts { interrupts += 1; continue }
            if n < 0 { failure = FileStore.errnoText(); break }
            if n == 0 { zeros += 1; if zeros >= FileStore.maxZeroWrites { failure = FileStore.errnoText(ENOSPC); break }; continue }
            off += n
        }
        _ = FileIO.close(fd)
        if failure == nil && FileStore.retrying({ FileIO.rename(tmp, p) }) != 0 { failure = FileStore.errnoText() }
        if let failure {
            _ = FileStore.retrying { FileIO.unlink(tmp) }
            return "cannot record the session in '\(p)': \(failure); a crash of this process will read as a clean end"
        }
        return nil
    }

    /// Ends this process's session: removes the file if it names this
    /// process (another process may have taken it over since).
    static func close(_ archive: String) -> String? {
        guard let o = read(archive), o == CrashGuard.current else { return nil }
        let p = path(archive)
        if FileStore.retrying({ FileIO.unlink(p) }) != 0 && errno != ENOENT {
            return "cannot close the session '\(p)': \(FileStore.errnoText()); the next launch will read this end as a crash"
        }
        return nil
    }
}
