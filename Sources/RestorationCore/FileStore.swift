#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The archive's files: atomic, durable replacement; bounded reads; the
/// files kept beside the archive (lock, temporaries, crash marker, set-aside
/// copies). Every failure names the file and the errno text.
public enum FileStore {
    static func errnoText(_ e: Int32 = errno) -> String {
        String(cString: strerror(e)) + " (errno \(e))"
    }

    public static func directory(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        let d = String(path[..<slash])
        return d.isEmpty ? "/" : d
    }

    public static func baseName(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return path }
        return String(path[path.utf8.index(after: slash)...])
    }

    /// Paths the engine keeps beside an archive.
    public static func markerPath(_ archive: String) -> String { archive + ".restoring" }
    public static func lockPath(_ archive: String) -> String { archive + ".lock" }
    static let tempInfix = ".tmp-"
    static let crashedInfix = ".crashed-"

    /// Moves an fd out of 0...2 so that stray writes to stdio cannot land in the archive.
    private static func highFD(_ fd: Int32) -> Int32 {
        guard fd >= 0, fd <= 2 else { return fd }
        let moved = fcntl(fd, F_DUPFD_CLOEXEC, 3)
        close(fd)
        return moved
    }

    /// The kind of a non-regular file, for messages; nil when regular or absent.
    static func nonRegularKind(_ path: String) -> String? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        switch st.st_mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFLNK: return "a symbolic link"
        case S_IFDIR: return "a directory"
        case S_IFIFO: return "a FIFO"
        case S_IFCHR, S_IFBLK: return "a device"
        case S_IFSOCK: return "a socket"
        default: return "not a regular file"
        }
    }

    /// Replaces `path` with `bytes` atomically and durably: a temporary file
    /// in the same directory (mode 0600), fsync, rename, fsync of the
    /// directory. Concurrent savers (threads or processes) serialize on an
    /// advisory lock beside the archive. On failure the old archive is
    /// untouched and no temporary file is left.
    public static func atomicWrite(_ bytes: UnsafeRawBufferPointer, to path: String) throws(RestorationFailure) {
        if let kind = nonRegularKind(path) {
            throw RestorationFailure(.io, "cannot save to '\(path)': it is \(kind); refusing to replace it")
        }
        let dir = directory(of: path)
        let base = baseName(of: path)

        // Serialize savers of this archive.
        let lockFD = highFD(open(lockPath(path), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600))
        guard lockFD >= 0 else {
            throw RestorationFailure(.io, "cannot save to '\(path)': cannot open lock file '\(lockPath(path))': \(errnoText())")
        }
        defer { close(lockFD) }
        while flock(lockFD, LOCK_EX) != 0 {
            if errno != EINTR { throw RestorationFailure(.io, "cannot save to '\(path)': cannot lock '\(lockPath(path))': \(errnoText())") }
        }

        // Temporaries left by a crashed save are ours to remove (we hold the lock).
        removeSiblings(of: path, infix: tempInfix)

        let tmp = "\(dir)/\(base)\(tempInfix)\(getpid())-\(nextTempCounter())"
        let fd = highFD(open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600))
        guard fd >= 0 else {
            throw RestorationFailure(.io, "cannot save to '\(path)': cannot create temporary file '\(tmp)': \(errnoText())")
        }
        var ok = false
        defer { if !ok { unlink(tmp) } }
        do {
            defer { close(fd) }
            var off = 0
            while off < bytes.count {
                let n = write(fd, bytes.baseAddress! + off, bytes.count - off)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw RestorationFailure(.io, "cannot save to '\(path)': writing '\(tmp)' failed after \(off) of \(bytes.count) bytes: \(errnoText())")
                }
                off += n
            }
            // No retry after a failed fsync: the page cache may have dropped the data.
            if fsync(fd) != 0 {
                throw RestorationFailure(.io, "cannot save to '\(path)': fsync of '\(tmp)' failed: \(errnoText()); the old archive is kept")
            }
        }
        if rename(tmp, path) != 0 {
            throw RestorationFailure(.io, "cannot save to '\(path)': rename from '\(tmp)' failed: \(errnoText())")
        }
        ok = true
        let dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 {
            let r = fsync(dfd)
            let e = errno
            close(dfd)
            if r != 0 && e != EINVAL {
                throw RestorationFailure(.io, "saved '\(path)', but fsync of its directory '\(dir)' failed: \(errnoText(e)); the rename may not survive a power loss")
            }
        }
    }

    nonisolated(unsafe) private static var tempCounter = 0
    private static let counterLock = RecursiveLock()
    private static func nextTempCounter() -> Int {
        counterLock.withLock { tempCounter += 1; return tempCounter }
    }

    /// Reads a whole archive file, refusing more than `limit` bytes before reading.
    public static func read(_ path: String, limit: Int = RestorationLimits.maxArchiveBytes) throws(RestorationFailure) -> [UInt8] {
        // O_NONBLOCK: opening a FIFO must not wait for a writer (the S_IFREG check below refuses it).
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let e = errno
            if e == ENOENT { throw RestorationFailure(.notFound, "there is no archive at '\(path)'") }
            throw RestorationFailure(.io, "cannot open archive '\(path)': \(errnoText(e))")
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw RestorationFailure(.io, "cannot stat archive '\(path)': \(errnoText())") }
        guard st.st_mode & S_IFMT == S_IFREG else {
            throw RestorationFailure(.io, "archive '\(path)' is not a regular file")
        }
        let size = Int(st.st_size)
        if size > limit {
            throw RestorationFailure(.limit, "archive '\(path)' is \(size) bytes; the limit is \(limit) bytes (RST_MAX_ARCHIVE_BYTES)")
        }
        var out = [UInt8](repeating: 0, count: size)
        var off = 0
        try out.withUnsafeMutableBytes { buf in Result { () throws(RestorationFailure) in
            while off < size {
                let n = Glibc.read(fd, buf.baseAddress! + off, size - off)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw RestorationFailure(.io, "reading archive '\(path)' failed at byte \(off): \(errnoText())")
                }
                if n == 0 { break }
                off += n
            }
        } }.get()
        if off < size { out.removeSubrange(off...) }
        return out
    }

    /// Files beside `archive` whose names start with the archive's name plus `infix`.
    public static func siblings(of archive: String, infix: String) -> [String] {
        let dir = directory(of: archive)
        let prefix = baseName(of: archive) + infix
        guard let d = opendir(dir) else { return [] }
        defer { closedir(d) }
        var out: [String] = []
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name.hasPrefix(prefix) { out.append("\(dir)/\(name)") }
        }
        return out.sorted()
    }

    static func removeSiblings(of archive: String, infix: String) {
        for p in siblings(of: archive, infix: infix) { unlink(p) }
    }

    /// Every file the engine keeps for `archive`, the archive included, that exists now.
    public static func stateFiles(of archive: String) -> [String] {
        var out: [String] = []
        for p in [archive, markerPath(archive), lockPath(archive)] where access(p, F_OK) == 0 || nonRegularKind(p) != nil {
            out.append(p)
        }
        out += siblings(of: archive, infix: crashedInfix)
        out += siblings(of: archive, infix: tempInfix)
        return out
    }

    /// Removes the archive and everything kept beside it. Missing files are fine.
    public static func discard(_ archive: String) throws(RestorationFailure) {
        for p in stateFiles(of: archive) {
            if unlink(p) != 0 && errno != ENOENT {
                throw RestorationFailure(.io, "cannot remove '\(p)': \(errnoText())")
            }
        }
    }

    /// Renames the archive to `<archive>.crashed-<UTC ms>`; returns the new path.
    static func setAside(_ archive: String, nowMs: Int64) throws(RestorationFailure) -> String {
        var target = "\(archive)\(crashedInfix)\(nowMs)"
        var n = 1
        while access(target, F_OK) == 0 { target = "\(archive)\(crashedInfix)\(nowMs)-\(n)"; n += 1 }
        if rename(archive, target) != 0 {
            throw RestorationFailure(.io, "cannot set aside archive '\(archive)' as '\(target)': \(errnoText())")
        }
        return target
    }
}
