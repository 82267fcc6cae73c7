#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The built-in store: what an archive path means. Slots are the files of
/// 1.1 beside the archive, with 1.1's durability and locking:
///
/// | slot | file |
/// |---|---|
/// | archive | `<archive>` (its folder created 0700 at the first write) |
/// | generation k | `<archive>.k` |
/// | invalid ms | `<archive>.invalid-<ms>` |
/// | crashed ms | `<archive>.crashed-<ms>` |
/// | marker | `<archive>.restoring` |
/// | quarantine | `<archive>.quarantine` |
/// | session | `<archive>.session` |
/// | (lock) | `<archive>.lock` (flock) |
///
/// The archive, generations, set-asides and quarantine are written to a
/// temporary, fsynced, renamed, and the folder fsynced (`FileStore.atomicWrite`).
/// The session and the marker are, as in 1.1, written without fsync (both
/// describe this boot only: a power loss ends it). Every system call goes
/// through `FileIO`, so the fault-injection tests reach them.
public final class FileArchiveStore: ArchiveStore {
    public let path: String
    public let describe: String
    public var isShared: Bool { true }
    public var canLink: Bool { true }
    public var canMap: Bool { true }

    private let stateLock = RecursiveLock()
    private var lockFD: Int32 = -1
    /// `lock()` found no folder: nothing to exclude yet; the archive's
    /// first write creates the folder and then takes the lock.
    private var lockDeferred = false
    private var maps: [StoreSlot: UnsafeMutableRawBufferPointer] = [:]

    /// nil (with the reason) for a path that is not an archive path: empty,
    /// ending in '/', or naming a directory.
    /// `subject` is what the user gave, as they spelled it ("archive_path"
    /// for C callers).
    public static func check(_ path: String, subject: String = "the archive path") -> String? {
        if path.isEmpty { return "\(subject) is empty" }
        if path.hasSuffix("/") { return "\(subject) '\(path)' ends in '/': it names a folder, not a file" }
        var st = stat()
        if stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR {
            return "\(subject) '\(path)' names a directory, not a file"
        }
        return nil
    }

    public init(path: String) {
        self.path = path
        self.describe = "file '\(path)'"
    }

    deinit {
        for (_, m) in maps { munmap(m.baseAddress, m.count) }
        if lockFD >= 0 { _ = FileIO.close(lockFD) }
    }

    /// The file of a slot.
    public func file(_ slot: StoreSlot, _ index: UInt64) -> String {
        switch slot {
        case .archive: return path
        case .generation: return FileStore.generationPath(path, Int(index))
        case .invalid: return "\(path)\(FileStore.invalidInfix)\(index)"
        case .crashed: return "\(path)\(FileStore.crashedInfix)\(index)"
        case .marker: return FileStore.markerPath(path)
        case .quarantine: return Quarantine.path(path)
        case .session: return SessionFile.path(path)
        }
    }

    private func checkIndex(_ slot: StoreSlot, _ index: UInt64) throws(RestorationFailure) {
        if slot.isSingle && index != 0 {
            throw RestorationFailure(.invalid, "\(describe): slot \(slot) has only index 0, not \(index)")
        }
        if slot == .generation && (index < 1 || index > UInt64(FileStore.maxGenerations)) {
            throw RestorationFailure(.invalid, "\(describe): generation \(index) is out of range (1 to \(FileStore.maxGenerations))")
        }
    }

    public func read(_ slot: StoreSlot, _ index: UInt64) throws(RestorationFailure) -> StoreBytes? {
        try checkIndex(slot, index)
        let p = file(slot, index)
        switch slot {
        case .archive, .generation, .invalid, .crashed:
            do throws(RestorationFailure) {
                return try FileStore.readHeld(p)
            } catch where error.status == .notFound {
                return nil
            }
        case .marker, .session, .quarantine:
            return try readSmall(p, limit: slot == .quarantine ? 8192 : 1024)
        }
    }

    /// A small file beside the archive, never through a FIFO or a symbolic
    /// link. Not a regular file, or larger than `limit`: `.corrupt` (it is
    /// present but cannot be the engine's).
    private func readSmall(_ p: String, limit: Int) throws(RestorationFailure) -> StoreBytes? {
        var st = stat()
        if FileStore.retrying({ FileIO.lstat(p, &st) }) != 0 {
            let e = errno
            if e == ENOENT || e == ENOTDIR { return nil }
            throw RestorationFailure(.io, "'\(p)' cannot be examined: \(FileStore.errnoText(e))")
        }
        if let k = FileStore.kind(st) { throw RestorationFailure(.corrupt, "'\(p)' is \(k), not a regular file") }
        let fd = FileStore.retrying { FileIO.open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW) }
        guard fd >= 0 else {
            let e = errno
            if e == ENOENT { return nil }
            if e == ELOOP { throw RestorationFailure(.corrupt, "'\(p)' is a symbolic link, not a regular file") }
            throw RestorationFailure(.io, "'\(p)' cannot be opened: \(FileStore.errnoText(e))")
        }
        defer { _ = FileIO.close(fd) }
        guard FileStore.retrying({ FileIO.fstat(fd, &st) }) == 0 else {
            throw RestorationFailure(.io, "'\(p)' cannot be examined: \(FileStore.errnoText())")
        }
        if let k = FileStore.kind(st) { throw RestorationFailure(.corrupt, "'\(p)' is \(k), not a regular file") }
        if Int(st.st_size) > limit { throw RestorationFailure(.corrupt, "'\(p)' has \(st.st_size) bytes, more than the \(limit) this library writes there") }
        let size = Int(st.st_size)
        let buf = UnsafeMutableRawPointer.allocate(byteCount: max(size, 1), alignment: 16)
        var off = 0, interrupts = 0
        while off < size {
            let n = FileIO.read(fd, buf + off, size - off)
            if n < 0 {
                let e = errno
                if e == EINTR && interrupts < FileStore.maxInterrupts { interrupts += 1; continue }
                buf.deallocate()
                throw RestorationFailure(.io, "'\(p)' cannot be read: \(FileStore.errnoText(e))")
            }
            if n == 0 { break }
            off += n
        }
        if off < size {
            buf.deallocate()
            throw RestorationFailure(.io, "'\(p)' cannot be read: it has \(size) bytes, but reading stopped after \(off) (\(FileStore.errnoText(EIO)))")
        }
        return StoreBytes(owning: UnsafeMutableRawBufferPointer(start: buf, count: off))
    }

    public func write(_ slot: StoreSlot, _ index: UInt64, _ bytes: UnsafeRawBufferPointer,
                      whenDurable: (() -> Void)?) throws(RestorationFailure) {
        try checkIndex(slot, index)
        let p = file(slot, index)
        switch slot {
        case .archive:
            try FileStore.createArchiveDirectory(for: path)
            let holding = stateLock.withLock { lockFD >= 0 }
            if !holding && lockDeferred {
                // The folder exists now: take the lock `lock()` could not.
                let fd = try FileStore.lock(path, "cannot save to '\(path)'")
                stateLock.withLock { lockFD = fd; lockDeferred = false }
            }
            let locked = stateLock.withLock { lockFD >= 0 }
            try FileStore.atomicWrite(bytes, to: p, locking: !locked, beforeRename: FileArchiveStore.hook(whenDurable))
        case .generation, .invalid, .crashed, .quarantine:
            try FileStore.atomicWrite(bytes, to: p, locking: false, beforeRename: FileArchiveStore.hook(whenDurable))
        case .session:
            whenDurable?()
            try writeUnsynced(p, bytes)
        case .marker:
            whenDurable?()
            if bytes.isEmpty { try emptyMarker(p) } else { try writeMarker(p, bytes) }
        }
    }

    /// The session: a temporary, renamed (1.1: not fsynced).
    private func writeUnsynced(_ p: String, _ bytes: UnsafeRawBufferPointer) throws(RestorationFailure) {
        let tmp = "\(path)\(FileStore.tempInfix)session-\(getpid())"
        _ = FileStore.retrying { FileIO.unlink(tmp) }
        let fd = FileStore.retrying { FileIO.open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600) }
        guard fd >= 0 else {
            let e = errno
            throw RestorationFailure(e == ENOENT ? .notFound : .io, "cannot write '\(p)': creating '\(tmp)' failed: \(FileStore.errnoText(e))")
        }
        var off = 0, zeros = 0, interrupts = 0
        var failure: String?
        while off < bytes.count {
            let n = FileIO.write(fd, bytes.baseAddress! + off, bytes.count - off)
            if n < 0 && errno == EINTR && interrupts < FileStore.maxInterrupts { interrupts += 1; continue }
            if n < 0 { failure = FileStore.errnoText(); break }
            if n == 0 { zeros += 1; if zeros >= FileStore.maxZeroWrites { failure = FileStore.errnoText(ENOSPC); break }; continue }
            off += n
        }
        _ = FileIO.close(fd)
        if failure == nil && FileStore.retrying({ FileIO.rename(tmp, p) }) != 0 { failure = FileStore.errnoText() }
        if let failure {
            _ = FileStore.retrying { FileIO.unlink(tmp) }
            throw RestorationFailure(.io, "cannot write '\(p)': \(failure)")
        }
    }

    /// The marker (1.1): the previous one removed, never written through; a
    /// new file (O_EXCL, never a FIFO or a link); a partial one removed.
    private func writeMarker(_ p: String, _ bytes: UnsafeRawBufferPointer) throws(RestorationFailure) {
        let what = "cannot write crash-loop marker '\(p)'"
        try unmapSlot(.marker)
        var st = stat()
        if FileIO.lstat(p, &st) == 0 {
            if let k = FileStore.kind(st) { throw RestorationFailure(.io, "\(what): the path is \(k); it is left alone") }
            if FileStore.retrying({ FileIO.unlink(p) }) != 0 && errno != ENOENT {
                throw RestorationFailure(.io, "\(what): cannot remove the previous marker: \(FileStore.errnoText())")
            }
        }
        let raw = FileStore.retrying { FileIO.open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600) }
        guard raw >= 0 else { throw RestorationFailure(.io, "\(what): \(FileStore.errnoText())") }
        let fd: Int32
        do throws(RestorationFailure) { fd = try FileStore.aboveStdio(raw, "\(what): the file") } catch {
            _ = FileStore.retrying { FileIO.unlink(p) }
            throw error
        }
        var off = 0, zeros = 0, interrupts = 0
        var failure: String?
        while off < bytes.count {
            let n = FileIO.write(fd, bytes.baseAddress! + off, bytes.count - off)
            if n < 0 {
                let e = errno
                if e == EINTR && interrupts < FileStore.maxInterrupts { interrupts += 1; continue }
                failure = "writing failed after \(off) of \(bytes.count) bytes: \(FileStore.errnoText(e))"
                break
            }
            if n == 0 {
                zeros += 1
                if zeros < FileStore.maxZeroWrites { continue }
                failure = "writing made no progress after \(off) of \(bytes.count) bytes (write returned 0): the disk is full (\(FileStore.errnoText(ENOSPC)))"
                break
            }
            zeros = 0
            interrupts = 0
            off += n
        }
        if let failure {
            _ = FileStore.retrying { FileIO.ftruncate(fd, 0) }
            _ = FileIO.close(fd)
            _ = FileStore.retrying { FileIO.unlink(p) }
            throw RestorationFailure(.io, "\(what): \(failure)")
        }
        _ = FileIO.close(fd)
    }

    /// Empties a marker that could not be removed (an empty marker condemns
    /// nothing), in place: never through a FIFO or a link.
    private func emptyMarker(_ p: String) throws(RestorationFailure) {
        let fd = FileStore.retrying { FileIO.open(p, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600) }
        guard fd >= 0 else {
            throw RestorationFailure(.io, "cannot empty crash-loop marker '\(p)': \(FileStore.errnoText())")
        }
        defer { _ = FileIO.close(fd) }
        var st = stat()
        guard FileIO.fstat(fd, &st) == 0, FileStore.kind(st) == nil else {
            throw RestorationFailure(.io, "cannot empty crash-loop marker '\(p)': it is not a regular file")
        }
        if FileStore.retrying({ FileIO.ftruncate(fd, 0) }) != 0 {
            throw RestorationFailure(.io, "cannot empty crash-loop marker '\(p)': \(FileStore.errnoText())")
        }
    }

    public func move(_ from: StoreSlot, _ fromIndex: UInt64, to: StoreSlot, _ toIndex: UInt64) throws(RestorationFailure) {
        try checkIndex(from, fromIndex)
        try checkIndex(to, toIndex)
        let a = file(from, fromIndex), b = file(to, toIndex)
        if FileStore.retrying({ FileIO.rename(a, b) }) != 0 {
            let e = errno
            if e == ENOENT { throw RestorationFailure(.notFound, "cannot move '\(a)' to '\(b)': there is no '\(a)'") }
            throw RestorationFailure(.io, "cannot move '\(a)' to '\(b)': \(FileStore.errnoText(e))")
        }
    }

    public func link(_ from: StoreSlot, _ fromIndex: UInt64, to: StoreSlot, _ toIndex: UInt64) throws(RestorationFailure) {
        try checkIndex(from, fromIndex)
        try checkIndex(to, toIndex)
        let a = file(from, fromIndex), b = file(to, toIndex)
        if let k = FileStore.nonRegularKind(a) {
            throw RestorationFailure(.io, "cannot save to '\(a)': it is \(k); refusing to replace it")
        }
        // A second name first, renamed over the target (link(2) does not replace).
        let tmp = "\(path)\(FileStore.generationTempInfix)\(getpid())-\(FileArchiveStore.nextCounter())"
        if FileStore.retrying({ FileIO.link(a, tmp) }) != 0 {
            let e = errno
            if e == ENOENT { throw RestorationFailure(.notFound, "cannot link '\(a)' to '\(b)': there is no '\(a)'") }
            throw RestorationFailure(.io, "cannot link '\(a)' to '\(tmp)' (to keep it as '\(b)'): \(FileStore.errnoText(e))")
        }
        if FileStore.retrying({ FileIO.rename(tmp, b) }) != 0 {
            let e = errno
            _ = FileStore.retrying { FileIO.unlink(tmp) }
            throw RestorationFailure(.io, "cannot rename '\(tmp)' to '\(b)': \(FileStore.errnoText(e))")
        }
    }

    public func remove(_ slot: StoreSlot, _ index: UInt64) throws(RestorationFailure) {
        try checkIndex(slot, index)
        try unmapSlot(slot)
        let p = file(slot, index)
        if FileStore.retrying({ FileIO.unlink(p) }) != 0 && errno != ENOENT && errno != ENOTDIR {
            throw RestorationFailure(.io, "cannot remove '\(p)': \(FileStore.errnoText())")
        }
    }

    public func list(_ slot: StoreSlot) throws(RestorationFailure) -> [UInt64] {
        if slot.isSingle {
            var st = stat()
            if FileStore.retrying({ FileIO.lstat(file(slot, 0), &st) }) == 0 { return [0] }
            let e = errno
            if e == ENOENT || e == ENOTDIR { return [] }
            throw RestorationFailure(.io, "cannot examine '\(file(slot, 0))': \(FileStore.errnoText(e))")
        }
        let infix: String
        switch slot {
        case .generation: infix = "."
        case .invalid: infix = FileStore.invalidInfix
        default: infix = FileStore.crashedInfix
        }
        guard let names = FileStore.listSiblings(of: path, infix: infix) else {
            let e = errno
            if e == ENOENT || e == ENOTDIR { return [] }
            throw RestorationFailure(.io, "cannot list the folder '\(FileStore.directory(of: path))' of \(describe): \(FileStore.errnoText(e))")
        }
        let prefix = path + infix
        var out: [UInt64] = []
        for n in names {
            let rest = n.utf8.dropFirst(prefix.utf8.count)
            guard !rest.isEmpty, rest.allSatisfy({ $0 >= 48 && $0 <= 57 }), rest.first != 48 || rest.count == 1,
                  let v = UInt64(String(decoding: rest, as: UTF8.self)) else { continue }
            if slot == .generation && (v < 1 || v > UInt64(FileStore.maxGenerations)) { continue }
            out.append(v)
        }
        return out.sorted()
    }

    public func lock() throws(RestorationFailure) {
        let what = "cannot lock \(describe)"
        do throws(RestorationFailure) {
            let fd = try FileStore.lock(path, what)
            stateLock.withLock { lockFD = fd; lockDeferred = false }
        } catch {
            // No folder yet: nothing to exclude anyone from; the archive's
            // first write creates it and takes the lock then.
            var st = stat()
            let dir = FileStore.directory(of: path)
            if FileIO.lstat(dir, &st) != 0 && (errno == ENOENT || errno == ENOTDIR) {
                stateLock.withLock { lockDeferred = true }
                return
            }
            // A folder we cannot write into, holding nothing of ours: nothing to exclude either.
            if FileStore.stateFiles(of: path).isEmpty, FileStore.listSiblings(of: path, infix: "") != nil {
                stateLock.withLock { lockDeferred = true }
                return
            }
            throw error
        }
    }

    public func unlock() {
        stateLock.withLock {
            if lockFD >= 0 { _ = FileIO.close(lockFD) }
            lockFD = -1
            lockDeferred = false
        }
    }

    public func map(_ slot: StoreSlot, length: Int) throws(RestorationFailure) -> UnsafeMutableRawBufferPointer {
        let p = file(slot, 0)
        let what = "cannot map '\(p)'"
        try checkIndex(slot, 0)
        guard length > 0 else { throw RestorationFailure(.invalid, "\(what): a length of 0") }
        try unmapSlot(slot)
        let raw = FileStore.retrying { FileIO.open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600) }
        guard raw >= 0 else {
            // No folder yet: the first save creates it (the session is recorded then).
            let e = errno
            throw RestorationFailure(e == ENOENT ? .notFound : .io, "\(what): \(FileStore.errnoText(e))")
        }
        let fd = try FileStore.aboveStdio(raw, "\(what): the file")
        defer { _ = FileIO.close(fd) }
        var st = stat()
        guard FileIO.fstat(fd, &st) == 0 else { throw RestorationFailure(.io, "\(what): \(FileStore.errnoText())") }
        if let k = FileStore.kind(st) { throw RestorationFailure(.io, "\(what): it is \(k)") }
        if FileStore.retrying({ FileIO.ftruncate(fd, length) }) != 0 {
            throw RestorationFailure(.io, "\(what): cannot size it to \(length) bytes: \(FileStore.errnoText())")
        }
        // Reserve the pages before they are touched: a store into a page a
        // full file system cannot back raises SIGBUS, not an error. Without
        // a reservation the caller writes the slot once instead.
        var reserved: Int32
        repeat { reserved = posix_fallocate(fd, 0, off_t(length)) } while reserved == EINTR
        if reserved != 0 {
            throw RestorationFailure(.io, "\(what): cannot reserve its \(length) bytes on disk: \(FileStore.errnoText(reserved))")
        }
        guard let m = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), m != MAP_FAILED else {
            throw RestorationFailure(.io, "\(what): mmap failed: \(FileStore.errnoText())")
        }
        let region = UnsafeMutableRawBufferPointer(start: m, count: length)
        stateLock.withLock { maps[slot] = region }
        return region
    }

    private func unmapSlot(_ slot: StoreSlot) throws(RestorationFailure) {
        let m: UnsafeMutableRawBufferPointer? = stateLock.withLock { maps.removeValue(forKey: slot) }
        if let m { munmap(m.baseAddress, m.count) }
    }

    /// Temporaries, the generations' side files and the lock file (unless
    /// a saver waits on it): what `FileStore.discard` removed beyond the slots.
    public func discardExtras() throws(RestorationFailure) {
        let what = "cannot discard '\(path)'"
        func remove(_ p: String) throws(RestorationFailure) {
            if FileStore.retrying({ FileIO.unlink(p) }) != 0 && errno != ENOENT {
                throw RestorationFailure(.io, "\(what): cannot remove '\(p)': \(FileStore.errnoText())")
            }
        }
        let dir = FileStore.directory(of: path)
        var st = stat()
        if FileIO.lstat(dir, &st) != 0 && (errno == ENOENT || errno == ENOTDIR) { return }
        try remove(FileStore.markerPath(path))
        for infix in [FileStore.crashedInfix, FileStore.tempInfix, FileStore.invalidInfix] {
            guard let list = FileStore.listSiblings(of: path, infix: infix) else {
                throw RestorationFailure(.io, "\(what): cannot list its directory '\(dir)' to find its set-aside copies and temporary files: \(FileStore.errnoText())")
            }
            for p in list { try remove(p) }
        }
        guard let gens = FileStore.listGenerationFiles(of: path) else {
            throw RestorationFailure(.io, "\(what): cannot list its directory '\(dir)' to find its generations: \(FileStore.errnoText())")
        }
        for p in gens { try remove(p) }
        let fd = stateLock.withLock { lockFD }
        if fd >= 0 && !FileStore.hasWaiters(fd) { try remove(FileStore.lockPath(path)) }
    }

    /// Unlinks `<archive>.session` when it still names this process, with
    /// open, read, memcmp and unlink only (async-signal-safe): the path and
    /// the expected bytes are prepared here.
    public func sessionCloser() -> SessionCloser? {
        let expected = Array(SessionFile.encode(CrashGuard.current).utf8)
        let pathC = strdup(SessionFile.path(path))!
        let want = UnsafeMutablePointer<UInt8>.allocate(capacity: expected.count)
        want.initialize(from: expected, count: expected.count)
        let count = expected.count
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: count + 1)
        // Freed with the engine's storage: rst_close_session() on a destroyed
        // engine is a use after free like any other call on it.
        return SessionCloser({
            let fd = open(pathC, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
            guard fd >= 0 else { return }
            var off = 0
            while off < count + 1 {
                let n = Glibc.read(fd, scratch + off, count + 1 - off)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                off += n
            }
            close(fd)
            if off == count && memcmp(scratch, want, count) == 0 { unlink(pathC) }
        }, cleanup: {
            free(pathC)
            want.deallocate()
            scratch.deallocate()
        })
    }

    private static func hook(_ f: (() -> Void)?) -> (() throws(RestorationFailure) -> Void)? {
        guard let f else { return nil }
        func call() throws(RestorationFailure) { f() }
        return call
    }

    nonisolated(unsafe) private static var counter = 0
    private static let counterLock = RecursiveLock()
    static func nextCounter() -> Int { counterLock.withLock { counter += 1; return counter } }
}
