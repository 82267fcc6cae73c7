#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Facts about this process and system, recorded in archives and markers.
public enum SystemInfo {
    /// UTC milliseconds since the epoch.
    public static func nowMs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    /// UTC milliseconds as "2026-11-28T13:15:00Z", for sentences.
    public static func utcText(ms: Int64) -> String {
        var t = time_t(ms / 1000)
        var tm = Glibc.tm()
        guard gmtime_r(&t, &tm) != nil else { return "\(ms) ms" }
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(tm.tm_year + 1900)-\(two(tm.tm_mon + 1))-\(two(tm.tm_mday))T\(two(tm.tm_hour)):\(two(tm.tm_min)):\(two(tm.tm_sec))Z"
    }

    /// The OS release (`uname -r`), e.g. "Linux 6.1.0".
    public static let systemVersion: String = {
        var u = utsname()
        guard uname(&u) == 0 else { return "unknown" }
        func field<T>(_ v: T) -> String {
            withUnsafeBytes(of: v) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
        }
        return "\(field(u.sysname)) \(field(u.release))"
    }()

    /// The contents of a small file, or nil.
    static func readSmallFile(_ path: String, max: Int = 4096) -> String? {
        // Non-blocking: a FIFO planted at the path must not hang a restore.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return nil }
        var buf = [UInt8](repeating: 0, count: max)
        let n = buf.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, max) }
        guard n > 0 else { return nil }
        return String(decoding: buf[0..<n], as: UTF8.self)
    }

    /// A process's start time in clock ticks since boot (field 22 of
    /// /proc/PID/stat), which together with the pid identifies a process.
    /// A process that has exited but is not reaped yet (a zombie, state 'Z',
    /// or 'X' while it goes) has no start time: it is dead.
    static func startTime(of pid: Int32) -> UInt64? {
        guard let stat = readSmallFile("/proc/\(pid)/stat") else { return nil }
        // The command name (field 2) may contain spaces and parentheses: skip to the last ')'.
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let rest = stat[stat.index(after: close)...].split(separator: " ")
        // rest[0] is field 3 (state); field 22 is rest[19].
        guard rest.count > 19, rest[0] != "Z", rest[0] != "X" else { return nil }
        return UInt64(rest[19])
    }

    static let bootID: String = readSmallFile("/proc/sys/kernel/random/boot_id")?
        .trimmingCharacters(in: " \n") ?? "unknown"
}

extension String {
    func trimmingCharacters(in set: String) -> String {
        let chars = Set(set)
        var s = Substring(self)
        while let f = s.first, chars.contains(f) { s.removeFirst() }
        while let l = s.last, chars.contains(l) { s.removeLast() }
        return String(s)
    }
}
