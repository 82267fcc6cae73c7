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
    static func lockPath(_ archive: String) -> String { archive + ".lock" }
    static let tempInfix = ".tmp-"
    static let crashedInfix = ".crashed-"

    /// Retries a call interrupted by a signal (EINTR), at most this many times in a row.
    static let maxInterrupts = 100
    /// A lock file replaced (by discards) this many times in a row while waiting is an error.
    static let maxLockAttempts = 10_000
    /// A write that returns 0 this many times in a row is a full disk (SQLite: SQLITE_FULL).
    static let maxZeroWrites = 8

    /// `body` again while it fails with EINTR (bounded: an endless EINTR is reported).
    @inline(__always)
    static func retrying<T: BinaryInteger>(_ body: () -> T) -> T {
        var tries = 0
        while true {
            let r = body()
            if r >= 0 || errno != EINTR || tries >= maxInterrupts { return r }
            tries += 1
        }
    }

    /// The kind of a non-regular file, for messages; nil when regular or absent.
    static func nonRegularKind(_ path: String) -> String? {
        var st = stat()
        guard retrying({ FileIO.lstat(path, &st) }) == 0 else { return nil }
        return kind(st)
    }

    /// "a FIFO", "a directory"...; nil for a regular file.
    public static func kind(_ st: stat) -> String? {
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

    /// Opens (creating it) and locks `<archive>.lock` exclusively; returns its
    /// fd. The lock file is checked to still be the one at its path once
    /// locked: `discard` removes it while holding it, and a saver that was
    /// waiting on the removed file must lock the new one instead.
    static func lock(_ archive: String, _ what: String) throws(RestorationFailure) -> Int32 {
        let lp = lockPath(archive)
        for _ in 0..<maxLockAttempts {
            let raw = retrying { FileIO.open(lp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600) }
            guard raw >= 0 else {
                throw RestorationFailure(.io, "\(what): cannot open lock file '\(lp)': \(errnoText())")
            }
            let fd = try aboveStdio(raw, "\(what): the lock file '\(lp)'")
            var st = stat()
            guard FileIO.fstat(fd, &st) == 0 else {
                let e = errno
                _ = FileIO.close(fd)
                throw RestorationFailure(.io, "\(what): cannot examine lock file '\(lp)': \(errnoText(e))")
            }
            if let k = kind(st) {
                _ = FileIO.close(fd)
                throw RestorationFailure(.io, "\(what): lock file '\(lp)' is \(k), not a regular file")
            }
            if retrying({ FileIO.flock(fd, LOCK_EX) }) != 0 {
                let e = errno
                _ = FileIO.close(fd)
                throw RestorationFailure(.io, "\(what): cannot lock '\(lp)': \(errnoText(e))")
            }
            var now = stat()
            if FileIO.lstat(lp, &now) == 0 {
                if now.st_dev == st.st_dev && now.st_ino == st.st_ino { return fd }
            } else if errno != ENOENT {
                let e = errno
                _ = FileIO.close(fd)
                throw RestorationFailure(.io, "\(what): cannot examine lock file '\(lp)': \(errnoText(e))")
            }
            // Removed or replaced (by a discard) while we waited: lock the file now there.
            _ = FileIO.close(fd)
        }
        throw RestorationFailure(.io, "\(what): lock file '\(lp)' kept being replaced while waiting for it")
    }

    /// Moves an fd out of 0...2 (closing the original) so that stray writes
    /// to stdio cannot land in the archive; on failure the fd is closed.
    static func aboveStdio(_ fd: Int32, _ what: @autoclosure () -> String) throws(RestorationFailure) -> Int32 {
        guard fd >= 0, fd <= 2 else { return fd }
        let moved = FileIO.dupAbove2(fd)
        let e = errno
        _ = FileIO.close(fd)
        guard moved >= 0 else {
            throw RestorationFailure(.io, "\(what()) was opened on descriptor \(fd) (stdin, stdout or stderr is closed) and cannot be moved above 2: \(errnoText(e))")
        }
        return moved
    }

    /// Replaces `path` with `bytes` atomically and durably: a temporary file
    /// in the same directory (mode 0600, never fd 0–2), fsync, close, rename,
    /// fsync of the directory (syncfs through the new archive when the
    /// directory cannot be opened). Concurrent savers and discards (threads
    /// or processes) serialize on an advisory lock beside the archive. On
    /// failure before the rename the old archive is untouched and no
    /// temporary file is left; a failure after it says that the new archive
    /// is in place but not durable.
    ///
    /// `beforeRename`, when given, runs with the lock held after the
    /// temporary is durable and just before the rename (generations keep
    /// the archive being replaced there); its failure fails the save with
    /// the old archive in place.
    ///
    /// `locking: false`: the caller holds the archive's lock already (the
    /// file store's `lock`), or the file needs none (the quarantine).
    public static func atomicWrite(_ bytes: UnsafeRawBufferPointer, to path: String, locking: Bool = true,
                                   beforeRename: (() throws(RestorationFailure) -> Void)? = nil) throws(RestorationFailure) {
        let what = "cannot save to '\(path)'"
        if let kind = nonRegularKind(path) {
            throw RestorationFailure(.io, "\(what): it is \(kind); refusing to replace it")
        }
        let dir = directory(of: path)
        let base = baseName(of: path)

        let lockFD = locking ? try lock(path, what) : -1
        defer { if lockFD >= 0 { _ = FileIO.close(lockFD) } }

        // Temporaries left by a crashed save are ours to remove (we hold the lock).
        removeSiblings(of: path, infix: tempInfix)

        let tmp = "\(dir)/\(base)\(tempInfix)\(getpid())-\(nextTempCounter())"
        let raw = retrying { FileIO.open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600) }
        guard raw >= 0 else {
            throw RestorationFailure(.io, "\(what): cannot create temporary file '\(tmp)': \(errnoText())")
        }
        // The temporary exists from here on: every failure below removes it.
        var renamed = false
        defer { if !renamed { _ = retrying { FileIO.unlink(tmp) } } }
        let fd = try aboveStdio(raw, "\(what): the temporary file '\(tmp)' (now removed)")
        do {
            var open = true
            defer { if open { _ = FileIO.close(fd) } }
            var off = 0, zeros = 0, interrupts = 0
            while off < bytes.count {
                let n = FileIO.write(fd, bytes.baseAddress! + off, bytes.count - off)
                if n < 0 {
                    let e = errno
                    if e == EINTR && interrupts < maxInterrupts { interrupts += 1; continue }
                    throw RestorationFailure(.io, "\(what): writing '\(tmp)' failed after \(off) of \(bytes.count) bytes: \(errnoText(e)); the old archive is kept")
                }
                if n == 0 {
                    zeros += 1
                    if zeros < maxZeroWrites { continue }
                    throw RestorationFailure(.io, "\(what): writing '\(tmp)' made no progress after \(off) of \(bytes.count) bytes (write returned 0 \(zeros) times): the disk is full (\(errnoText(ENOSPC))); the old archive is kept")
                }
                zeros = 0
                interrupts = 0
                off += n
            }
            // No retry after a failed fsync: the page cache may have dropped the data.
            if retrying({ FileIO.fsync(fd) }) != 0 {
                throw RestorationFailure(.io, "\(what): fsync of '\(tmp)' failed: \(errnoText()); the old archive is kept")
            }
            open = false
            // close reports write-back errors on some file systems (NFS); EINTR still closes the fd on Linux.
            if FileIO.close(fd) != 0 && errno != EINTR {
                throw RestorationFailure(.io, "\(what): closing '\(tmp)' failed: \(errnoText()); the old archive is kept")
            }
        }
        try beforeRename?()
        if retrying({ FileIO.rename(tmp, path) }) != 0 {
            throw RestorationFailure(.io, "\(what): rename from '\(tmp)' failed: \(errnoText()); the old archive is kept")
        }
        renamed = true
        try syncDirectory(of: path)
    }

    /// Makes the rename that just replaced `path` durable: fsync of its
    /// directory; when the directory cannot be opened (mode 0333 for a
    /// non-root user: EACCES), syncfs of its file system through the archive.
    static func syncDirectory(of path: String) throws(RestorationFailure) {
        let dir = directory(of: path)
        let notDurable = "the new archive '\(path)' is in place but not durable (it may not survive a power loss)"
        let dfd = retrying { FileIO.open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        if dfd >= 0 {
            let r = retrying { FileIO.fsync(dfd) }
            let e = errno
            _ = FileIO.close(dfd)
            // EINVAL: the file system has no directory fsync (its renames are synchronous).
            if r == 0 || e == EINVAL { return }
            throw RestorationFailure(.io, "\(notDurable): fsync of its directory '\(dir)' failed: \(errnoText(e))")
        }
        let openError = errno
        let fd = retrying { FileIO.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) }
        guard fd >= 0 else {
            throw RestorationFailure(.io, "\(notDurable): its directory '\(dir)' cannot be opened to fsync it (\(errnoText(openError))), nor the archive to syncfs it (\(errnoText()))")
        }
        let r = retrying { FileIO.syncfs(fd) }
        let e = errno
        _ = FileIO.close(fd)
        if r != 0 {
            throw RestorationFailure(.io, "\(notDurable): its directory '\(dir)' cannot be opened to fsync it (\(errnoText(openError))), and syncfs failed: \(errnoText(e))")
        }
    }

    nonisolated(unsafe) private static var tempCounter = 0
    private static let counterLock = RecursiveLock()
    private static func nextTempCounter() -> Int {
        counterLock.withLock { tempCounter += 1; return tempCounter }
    }

    /// Reads a whole archive file, refusing more than `limit` bytes before reading.
    public static func read(_ path: String, limit: Int = RestorationLimits.maxArchiveBytes) throws(RestorationFailure) -> [UInt8] {
        let buffer = try readBuffer(path, limit: limit)
        defer { buffer.deallocate() }
        return [UInt8](UnsafeRawBufferPointer(buffer))
    }

    /// Reads a whole archive file into a new buffer the caller owns (and
    /// frees with `deallocate()`, or hands to `ArchiveReader(adopting:)`,
    /// which validates it without a second copy), refusing more than `limit`
    /// bytes before reading. The buffer is private memory: a file changed or
    /// truncated later does not change it.
    public static func readBuffer(_ path: String, limit: Int = RestorationLimits.maxArchiveBytes) throws(RestorationFailure) -> UnsafeMutableRawBufferPointer {
        let (fd, size) = try openArchive(path, limit: limit)
        defer { _ = FileIO.close(fd) }
        return try readAll(fd, size, path)
    }

    /// Reads a whole archive file as bytes held until `release()`: a
    /// read-only private mapping (no copy of it on the heap) when the file
    /// is at least a page, else — or when mmap fails (a file system that
    /// cannot map) — a private buffer as `readBuffer`'s. The mapping is safe
    /// to keep through a restore because the engine replaces an archive by
    /// rename and never writes one in place: a save or a discard during the
    /// restore leaves the mapped (old) file's bytes as they were.
    public static func readHeld(_ path: String, limit: Int = RestorationLimits.maxArchiveBytes) throws(RestorationFailure) -> StoreBytes {
        let (fd, size) = try openArchive(path, limit: limit)
        defer { _ = FileIO.close(fd) }
        if size >= pageSize, let m = FileIO.mapReadOnly(fd, size) {
            return StoreBytes(immutable: UnsafeRawBufferPointer(start: m, count: size)) { munmap(UnsafeMutableRawPointer(mutating: m), size) }
        }
        return StoreBytes(owning: try readAll(fd, size, path))
    }

    static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// An archive file opened for reading (a regular file of at most `limit`
    /// bytes) and its size; the caller closes it.
    private static func openArchive(_ path: String, limit: Int) throws(RestorationFailure) -> (Int32, Int) {
        // O_NONBLOCK: opening a FIFO must not wait for a writer (the S_IFREG check below refuses it).
        let fd = retrying { FileIO.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
        guard fd >= 0 else {
            let e = errno
            if e == ENOENT { throw RestorationFailure(.notFound, "there is no archive at '\(path)'") }
            throw RestorationFailure(.io, "cannot open archive '\(path)': \(errnoText(e))")
        }
        var st = stat()
        var refusal: RestorationFailure?
        if FileIO.fstat(fd, &st) != 0 {
            refusal = RestorationFailure(.io, "cannot stat archive '\(path)': \(errnoText())")
        } else if st.st_mode & S_IFMT != S_IFREG {
            refusal = RestorationFailure(.io, "archive '\(path)' is not a regular file")
        } else if Int(st.st_size) > limit {
            refusal = RestorationFailure(.limit, "archive '\(path)' is \(st.st_size) bytes; the limit is \(limit) bytes (RST_MAX_ARCHIVE_BYTES)")
        }
        if let refusal {
            _ = FileIO.close(fd)
            throw refusal
        }
        return (fd, Int(st.st_size))
    }

    /// The `size` bytes of an open archive file, into a new buffer.
    private static func readAll(_ fd: Int32, _ size: Int, _ path: String) throws(RestorationFailure) -> UnsafeMutableRawBufferPointer {
        // Never zero bytes, so that the buffer always has an address to free.
        let base = UnsafeMutableRawPointer.allocate(byteCount: max(size, 1), alignment: 16)
        var off = 0, interrupts = 0
        while off < size {
            let n = FileIO.read(fd, base + off, size - off)
            if n < 0 {
                let e = errno
                if e == EINTR && interrupts < maxInterrupts { interrupts += 1; continue }
                base.deallocate()
                throw RestorationFailure(.io, "reading archive '\(path)' failed at byte \(off) of \(size): \(errnoText(e))")
            }
            if n == 0 {
                base.deallocate()
                throw RestorationFailure(.io, "reading archive '\(path)' stopped at byte \(off) of \(size): the file shrank while it was read (another program truncated it)")
            }
            interrupts = 0
            off += n
        }
        return UnsafeMutableRawBufferPointer(start: base, count: size)
    }

    /// Files beside `archive` whose names start with the archive's name plus
    /// `infix`; nil (with errno) when the directory cannot be listed.
    static func listSiblings(of archive: String, infix: String) -> [String]? {
        let dir = directory(of: archive)
        let prefix = Array((baseName(of: archive) + infix).utf8)
        guard let names = FileIO.listDirectory(dir) else { return nil }
        var out: [String] = []
        // Names that are not UTF-8 are never the engine's (it makes only UTF-8 names).
        for n in names where n.starts(with: prefix) {
            if let s = String(validating: n, as: UTF8.self) { out.append("\(dir)/\(s)") }
        }
        return out.sorted()
    }

    /// Files beside `archive` whose names start with the archive's name plus `infix`.
    public static func siblings(of archive: String, infix: String) -> [String] {
        listSiblings(of: archive, infix: infix) ?? []
    }

    /// Best effort (a save removes stale temporaries; failing that is harmless).
    static func removeSiblings(of archive: String, infix: String) {
        for p in siblings(of: archive, infix: infix) { _ = retrying { FileIO.unlink(p) } }
    }

    /// Every file the engine keeps for `archive`, the archive included, that exists now.
    public static func stateFiles(of archive: String) -> [String] {
        var out: [String] = []
        var st = stat()
        for p in [archive, markerPath(archive), lockPath(archive), SessionFile.path(archive), Quarantine.path(archive)] where FileIO.lstat(p, &st) == 0 {
            out.append(p)
        }
        out += siblings(of: archive, infix: crashedInfix)
        out += siblings(of: archive, infix: tempInfix)
        out += generationFiles(of: archive)
        out += siblings(of: archive, infix: invalidInfix)
        return out
    }

    /// Removes the archive and everything kept beside it (`restorectl
    /// discard`; the engine's discard through the file store). Missing files
    /// are fine. Holds the archive's lock, so a save in progress (in any
    /// process) finishes first and its temporary file is never removed
    /// under it; the lock file goes last, still locked.
    public static func discard(_ archive: String) throws(RestorationFailure) {
        try Storage.discardAll(FileArchiveStore(path: archive))
    }

    /// True when another open file description waits for the flock held on
    /// `fd` (a "->" line for its inode in /proc/locks).
    static func hasWaiters(_ fd: Int32) -> Bool {
        var st = stat()
        guard Glibc.fstat(fd, &st) == 0 else { return false }
        let dev = UInt64(st.st_dev)
        let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & ~UInt64(0xfff))
        let minor = (dev & 0xff) | ((dev >> 12) & ~UInt64(0xff))
        func hex2(_ v: UInt64) -> String { let h = String(v, radix: 16); return h.count < 2 ? "0" + h : h }
        let id = "\(hex2(major)):\(hex2(minor)):\(st.st_ino)"
        let lf = Glibc.open("/proc/locks", O_RDONLY | O_CLOEXEC)
        guard lf >= 0 else { return false }
        defer { Glibc.close(lf) }
        var text: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while text.count < 8 << 20 {
            let n = buf.withUnsafeMutableBytes { Glibc.read(lf, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            text += buf[0..<n]
        }
        for line in text.split(separator: UInt8(ascii: "\n")) {
            let fields = line.split(separator: UInt8(ascii: " "))
            guard fields.count > 5, fields.contains(where: { $0.elementsEqual("->".utf8) }),
                  fields.contains(where: { $0.elementsEqual("FLOCK".utf8) }),
                  fields.contains(where: { $0.elementsEqual(id.utf8) }) else { continue }
            return true
        }
        return false
    }

}
