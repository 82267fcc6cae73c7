#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The crash-loop guard: a marker `<archive>.restoring` records the process
/// that is restoring an archive, and which archive. The states and rules
/// (docs/ARCHITECTURE.md, "The crash-loop marker"):
///
/// - absent: no restore is running or died.
/// - **valid** (every line below, in order, nothing else): a restore began.
///   It condemns the archive (set aside as `<archive>.crashed-<ms>`) only
///   when it names *this* archive (its size and checksum), *this* boot, and
///   a process that is gone (pid and start time: a pid alone is reused).
/// - anything else — empty (emptied on purpose, or lost to a power loss),
///   torn, foreign, an older format, a FIFO or directory — is **unusable**:
///   it never condemns an archive; the next restore ignores it with a
///   warning and replaces it.
///
///     restoration-crash-marker 1
///     pid=<decimal>
///     start=<decimal clock ticks since boot>
///     boot=<boot id>
///     archive=<bytes>:<crc32c of the archive, 8 hex digits>
///     end
///
/// The marker is never written through a FIFO or symlink (O_NOFOLLOW,
/// O_NONBLOCK, O_EXCL after removing a regular file), never read from one
/// (O_NONBLOCK, S_IFREG), and failing to remove it at the end of a restore
/// is reported (a warning) and repaired: it is emptied through its open
/// descriptor, and its removal is retried by the next save, restore or
/// discard in this process.
enum CrashGuard {
    struct Owner: Equatable {
        var pid: Int32
        var start: UInt64
        var boot: String
    }

    struct Marker: Equatable {
        var owner: Owner
        /// `identity(of:)` of the archive being restored.
        var archive: String
        /// v1.1 §6 (version-2 markers, written by engines with quarantine):
        /// which restore of this archive it is (1; 2 when a quarantine was
        /// in effect: a death then sets the archive aside), and the record
        /// whose callback was running (nil: none, or a version-1 marker).
        var attempt: Int = 1
        var record: Int? = nil
        var isVersion2 = false
    }

    static let magic = "restoration-crash-marker 1"
    /// v1.1 §6: version 2 adds `attempt=` and `record=` (10 characters,
    /// rewritten in place through a shared mapping while the restore runs:
    /// ten '-' outside object callbacks, else the record index, 10 digits).
    static let magic2 = "restoration-crash-marker 2"
    static let noRecord = "----------"

    static var current: Owner {
        let pid = getpid()
        return Owner(pid: pid, start: SystemInfo.startTime(of: pid) ?? 0, boot: SystemInfo.bootID)
    }

    /// Tests only: markers of this process count as left by a process that
    /// died (what the next process would see).
    nonisolated(unsafe) static var simulateNextProcess = false

    /// An archive's identity in markers: its size and its stored checksum
    /// (the last 4 bytes, CRC-32C): the very bytes that were being restored.
    static func identity(of bytes: UnsafeRawBufferPointer) -> String {
        var crc: UInt32 = 0
        if bytes.count >= 4 {
            for i in (bytes.count - 4)..<bytes.count { crc = crc << 8 | UInt32(bytes[i]) }
        }
        let hex = String(crc, radix: 16)
        return "\(bytes.count):" + String(repeating: "0", count: 8 - hex.count) + hex
    }

    static func encode(_ m: Marker) -> String {
        if m.isVersion2 {
            return "\(magic2)\npid=\(m.owner.pid)\nstart=\(m.owner.start)\nboot=\(m.owner.boot)\narchive=\(m.archive)\nattempt=\(m.attempt)\nrecord=\(noRecord)\nend\n"
        }
        return "\(magic)\npid=\(m.owner.pid)\nstart=\(m.owner.start)\nboot=\(m.owner.boot)\narchive=\(m.archive)\nend\n"
    }

    /// The marker in `text`, or nil when it is not a complete, well-formed marker.
    static func parse(_ bytes: [UInt8]) -> Marker? {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        func value(_ line: Substring, _ key: String) -> Substring? {
            guard line.hasPrefix(key + "=") else { return nil }
            let v = line.dropFirst(key.count + 1)
            return v.isEmpty ? nil : v
        }
        if lines.count == 9, lines[0] == magic2, lines[7] == "end", lines[8].isEmpty {
            guard var m = parse(Array((magic + "\n" + lines[1...4].joined(separator: "\n") + "\nend\n").utf8)),
                  let a = value(lines[5], "attempt"), let attempt = Int(a), attempt >= 1,
                  let r = value(lines[6], "record"), r.utf8.count == noRecord.utf8.count else { return nil }
            m.attempt = attempt
            m.isVersion2 = true
            if r != noRecord {
                guard r.allSatisfy({ $0.isASCII && $0.isNumber }), let index = Int(r) else { return nil }
                m.record = index
            }
            return m
        }
        // Six lines and the empty string after the final newline.
        guard lines.count == 7, lines[0] == magic, lines[5] == "end", lines[6].isEmpty else { return nil }
        guard let p = value(lines[1], "pid"), let pid = Int32(p), pid > 0,
              let s = value(lines[2], "start"), let start = UInt64(s),
              let boot = value(lines[3], "boot"),
              let archive = value(lines[4], "archive"), archive.contains(":") else { return nil }
        return Marker(owner: Owner(pid: pid, start: start, boot: String(boot)), archive: String(archive))
    }

    enum Reading: Equatable {
        case absent
        /// Present but not a marker the guard may act on; the reason, for the warning.
        case unusable(String)
        /// It may be a marker, but an I/O error kept it from being read.
        case unreadable(String)
        case valid(Marker)
    }

    /// Reads the marker of `archive` without blocking and without following links.
    static func read(_ archive: String) -> Reading {
        let path = FileStore.markerPath(archive)
        var st = stat()
        if FileStore.retrying({ FileIO.lstat(path, &st) }) != 0 {
            let e = errno
            return e == ENOENT ? .absent : .unreadable("cannot be examined: \(FileStore.errnoText(e))")
        }
        if let k = FileStore.kind(st) { return .unusable("it is \(k), not a marker file") }
        let fd = FileStore.retrying { FileIO.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW) }
        guard fd >= 0 else {
            let e = errno
            if e == ENOENT { return .absent }
            // ELOOP: replaced by a symlink since the lstat: not a marker file.
            return e == ELOOP ? .unusable("it is a symbolic link, not a marker file") : .unreadable("cannot be opened: \(FileStore.errnoText(e))")
        }
        defer { _ = FileIO.close(fd) }
        guard FileStore.retrying({ FileIO.fstat(fd, &st) }) == 0 else { return .unreadable("cannot be examined: \(FileStore.errnoText())") }
        if let k = FileStore.kind(st) { return .unusable("it is \(k), not a marker file") }
        let max = 1024
        var buf = [UInt8](repeating: 0, count: max)
        var off = 0, interrupts = 0
        while off < max {
            let n = buf.withUnsafeMutableBytes { FileIO.read(fd, $0.baseAddress! + off, max - off) }
            if n < 0 {
                let e = errno
                if e == EINTR && interrupts < FileStore.maxInterrupts { interrupts += 1; continue }
                return .unreadable("cannot be read: \(FileStore.errnoText(e))")
            }
            if n == 0 { break }
            off += n
        }
        let expected = min(Int(st.st_size), max)
        if off < expected {
            return .unreadable("cannot be read: it has \(st.st_size) bytes, but reading stopped after \(off) (\(FileStore.errnoText(EIO)))")
        }
        if off == 0 { return .unusable("it is empty (a finished restore emptied it, or a power loss lost its contents)") }
        guard let m = parse(Array(buf[0..<off])) else {
            return .unusable("it is not a complete marker (torn, foreign or of an older version)")
        }
        return .valid(m)
    }

    /// True when the marker's process is still running (same boot, same pid, same start time).
    static func isAlive(_ o: Owner) -> Bool {
        if simulateNextProcess && o.pid == getpid() { return false }
        guard o.pid > 0, o.boot == SystemInfo.bootID else { return false }
        guard let start = SystemInfo.startTime(of: o.pid) else { return false }
        return start == o.start
    }

    enum Verdict {
        case none
        /// The marker could not be read (an I/O error): restoring could
        /// repeat a crash, setting aside could condemn a good archive, so
        /// neither is done: the restore fails with this error.
        case unreadable(RestorationFailure)
        /// Leave the archive alone; log this warning.
        case ignore(String)
        /// A process died while restoring these very bytes.
        case crashed(Marker)
    }

    /// What the marker says about restoring `bytes` from `archive` now.
    static func examine(_ archive: String, bytes: UnsafeRawBufferPointer) -> Verdict {
        retryPendingClears()
        let path = FileStore.markerPath(archive)
        switch read(archive) {
        case .absent:
            return .none
        case .unusable(let why):
            return .ignore("ignoring crash-loop marker '\(path)': \(why); it does not condemn the archive")
        case .unreadable(let why):
            return .unreadable(RestorationFailure(.io, "cannot restore '\(archive)': its crash-loop marker '\(path)' \(why); the archive is left in place, not set aside"))
        case .valid(let m):
            if m.archive != identity(of: bytes) {
                return .ignore("ignoring crash-loop marker '\(path)': it names another version of the archive (\(m.archive), now \(identity(of: bytes))), which a save replaced")
            }
            if m.owner.boot != SystemInfo.bootID {
                return .ignore("ignoring crash-loop marker '\(path)': it was left by process \(m.owner.pid) of an earlier boot, whose restore a shutdown or power loss may have ended")
            }
            if isAlive(m.owner) {
                return .ignore("crash-loop marker '\(path)': process \(m.owner.pid) is restoring this archive now")
            }
            return .crashed(m)
        }
    }

    /// A marker written for a restore in progress: its path and open
    /// descriptor, and (version 2) the mapping that names the record whose
    /// callback runs.
    struct Token {
        let path: String
        let fd: Int32
        var watch: MarkerWatch? = nil
    }

    /// Writes the marker before the restore's callbacks run. A marker that
    /// cannot be written is an error for the caller to report (the restore
    /// then runs without the guard); a partly written one is removed (and
    /// is unusable anyway: it lacks its final line).
    static func begin(_ archive: String, bytes: UnsafeRawBufferPointer, attempt: Int? = nil) throws(RestorationFailure) -> Token {
        retryPendingClears()
        let path = FileStore.markerPath(archive)
        let what = "cannot write crash-loop marker '\(path)'"
        var st = stat()
        if FileIO.lstat(path, &st) == 0 {
            if let k = FileStore.kind(st) {
                throw RestorationFailure(.io, "\(what): the path is \(k); it is left alone")
            }
            // Replaced, never written through: a hard link to it must not be changed.
            if FileStore.retrying({ FileIO.unlink(path) }) != 0 && errno != ENOENT {
                throw RestorationFailure(.io, "\(what): cannot remove the previous marker: \(FileStore.errnoText())")
            }
        }
        // Version 2 is mapped shared afterwards, which needs read access too.
        let access = attempt == nil ? O_WRONLY : O_RDWR
        let raw = FileStore.retrying { FileIO.open(path, access | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600) }
        guard raw >= 0 else { throw RestorationFailure(.io, "\(what): \(FileStore.errnoText())") }
        let fd: Int32
        do {
            fd = try FileStore.aboveStdio(raw, "\(what): the file")
        } catch {
            _ = FileStore.retrying { FileIO.unlink(path) }
            throw error
        }
        var marker = Marker(owner: current, archive: identity(of: bytes))
        if let attempt {
            marker.isVersion2 = true
            marker.attempt = attempt
        }
        let text = Array(encode(marker).utf8)
        var off = 0, zeros = 0, interrupts = 0
        var failure: String?
        while off < text.count {
            let n = text.withUnsafeBytes { FileIO.write(fd, $0.baseAddress! + off, text.count - off) }
            if n < 0 {
                let e = errno
                if e == EINTR && interrupts < FileStore.maxInterrupts { interrupts += 1; continue }
                failure = "writing failed after \(off) of \(text.count) bytes: \(FileStore.errnoText(e))"
                break
            }
            if n == 0 {
                zeros += 1
                if zeros < FileStore.maxZeroWrites { continue }
                failure = "writing made no progress after \(off) of \(text.count) bytes (write returned 0): the disk is full (\(FileStore.errnoText(ENOSPC)))"
                break
            }
            zeros = 0
            interrupts = 0
            off += n
        }
        if let failure {
            // Remove the partial marker (emptying it first, in case removing fails: empty is harmless).
            _ = FileStore.retrying { FileIO.ftruncate(fd, 0) }
            _ = FileIO.close(fd)
            _ = FileStore.retrying { FileIO.unlink(path) }
            throw RestorationFailure(.io, "\(what): \(failure)")
        }
        var token = Token(path: path, fd: fd)
        if attempt != nil {
            let field = Array("record=\(noRecord)\n".utf8)
            if let at = search(text, field) {
                token.watch = MarkerWatch(fd: fd, length: text.count, offset: at + "record=".utf8.count)
            }
        }
        return token
    }

    private static func search(_ hay: [UInt8], _ needle: [UInt8]) -> Int? {
        guard hay.count >= needle.count else { return nil }
        for i in 0...(hay.count - needle.count) where hay[i..<(i + needle.count)].elementsEqual(needle) { return i }
        return nil
    }

    /// Removes the marker of a finished restore. Returns a warning when it
    /// could not be removed: it is then emptied through its descriptor
    /// (an empty marker condemns nothing) and its removal is retried later.
    static func end(_ t: Token) -> String? {
        t.watch?.unmap()
        defer { _ = FileIO.close(t.fd) }
        guard let e = removeRetrying(t.path) else { return nil }
        remember(t.path)
        if FileStore.retrying({ FileIO.ftruncate(t.fd, 0) }) == 0 {
            return "cannot remove crash-loop marker '\(t.path)' after the restore: \(FileStore.errnoText(e)); it was emptied instead (an empty marker condemns nothing) and its removal will be retried"
        }
        let e2 = errno
        return "cannot remove crash-loop marker '\(t.path)' after the restore: \(FileStore.errnoText(e)), nor empty it: \(FileStore.errnoText(e2)); until it is removed, the next process may take this restore for a crash; its removal will be retried"
    }

    /// Removes the marker after a save (it names the replaced archive) or
    /// when the archive is set aside; a warning when it cannot.
    static func clear(_ archive: String) -> String? {
        retryPendingClears()
        let path = FileStore.markerPath(archive)
        var st = stat()
        guard FileIO.lstat(path, &st) == 0, FileStore.kind(st) == nil else { return nil }
        guard let e = removeRetrying(path) else { return nil }
        remember(path)
        return "cannot remove crash-loop marker '\(path)': \(FileStore.errnoText(e)); its removal will be retried (it names the previous archive, so it condemns nothing)"
    }

    /// unlink, tried 3 times (an EIO can be transient); nil on success or
    /// when already gone, else the errno.
    private static func removeRetrying(_ path: String) -> Int32? {
        var e: Int32 = 0
        for _ in 0..<3 {
            if FileStore.retrying({ FileIO.unlink(path) }) == 0 { return nil }
            e = errno
            if e == ENOENT { return nil }
        }
        return e
    }

    // Markers this process failed to remove: retried by the next begin,
    // examine or clear, if they are still this process's or empty.
    nonisolated(unsafe) private static var pending: Set<String> = []
    private static let pendingLock = RecursiveLock()

    private static func remember(_ path: String) {
        pendingLock.withLock { _ = pending.insert(path) }
    }

    static func retryPendingClears() {
        let paths: [String] = pendingLock.withLock { pending.isEmpty ? [] : Array(pending) }
        guard !paths.isEmpty else { return }
        let me = current
        for p in paths {
            var st = stat()
            var done = true
            if FileIO.lstat(p, &st) == 0, FileStore.kind(st) == nil {
                let archive = String(p.dropLast(".restoring".count))
                let mine: Bool
                switch read(archive) {
                case .valid(let m): mine = m.owner == me
                case .unusable: mine = st.st_size == 0
                case .absent, .unreadable: mine = false
                }
                if mine && removeRetrying(p) != nil { done = false }
            }
            if done { pendingLock.withLock { _ = pending.remove(p) } }
        }
    }
}
