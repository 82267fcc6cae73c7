#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The crash-loop guard: a marker beside the archive records the process
/// that is restoring it (pid, start time, boot id: a pid alone is reused, and
/// is 1 in every container). A marker whose process is gone means a process
/// died during a restore: the next restore sets the archive aside.
enum CrashGuard {
    struct Owner: Equatable {
        var pid: Int32
        var start: UInt64
        var boot: String
    }

    static var current: Owner {
        let pid = getpid()
        return Owner(pid: pid, start: SystemInfo.startTime(of: pid) ?? 0, boot: SystemInfo.bootID)
    }

    static func read(_ archive: String) -> Owner? {
        guard let text = SystemInfo.readSmallFile(FileStore.markerPath(archive)) else { return nil }
        var pid: Int32?, start: UInt64?, boot: String?
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { continue }
            switch parts[0] {
            case "pid": pid = Int32(parts[1])
            case "start": start = UInt64(parts[1])
            case "boot": boot = String(parts[1])
            default: break
            }
        }
        // A marker we cannot parse still says a restore began and never ended.
        return Owner(pid: pid ?? 0, start: start ?? 0, boot: boot ?? "")
    }

    /// True when the marker's process is still running (same boot, same pid, same start time).
    static func isAlive(_ o: Owner) -> Bool {
        guard o.pid > 0, o.boot == SystemInfo.bootID else { return false }
        guard let start = SystemInfo.startTime(of: o.pid) else { return false }
        return start == o.start
    }

    static func write(_ archive: String) throws(RestorationFailure) {
        let o = current
        let text = "pid=\(o.pid)\nstart=\(o.start)\nboot=\(o.boot)\n"
        let path = FileStore.markerPath(archive)
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw RestorationFailure(.io, "cannot write crash-loop marker '\(path)': \(FileStore.errnoText())")
        }
        defer { close(fd) }
        var bytes = Array(text.utf8)
        let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        if n != bytes.count {
            throw RestorationFailure(.io, "cannot write crash-loop marker '\(path)': \(FileStore.errnoText())")
        }
        bytes.removeAll()
    }

    static func clear(_ archive: String) {
        unlink(FileStore.markerPath(archive))
    }
}
