#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The file-system calls of `FileStore` and `CrashGuard`, through one seam.
///
/// Every call the engine makes on the archive's directory (open, close,
/// read, write, fsync, fstat, lstat, stat, mkdir, rename, link, unlink, flock,
/// fcntl, ftruncate, syncfs, opendir/readdir, and the read-only mmap of an
/// archive) goes through `FileIO`. In production each is the
/// libc call plus one thread-local load. A test installs an `IOInterceptor`
/// on its own thread (`FileIO.withInterceptor`) to fail the Nth call with an
/// errno, shorten a read or write, or record the calls (the power-loss model
/// replays them); other threads are never affected.
enum IOOp: String, CaseIterable, Sendable {
    case open, close, read, write, fsync, fstat, lstat, stat, mkdir, rename, unlink, flock, fcntl, ftruncate, syncfs, opendir, readdir, link, mmap
}

/// One call, as an interceptor sees it.
struct IOCall {
    var op: IOOp
    var path: String? = nil
    /// rename's target.
    var path2: String? = nil
    var fd: Int32 = -1
    /// open's flags; flock's operation.
    var flags: Int32 = 0
    /// read/write: the bytes asked for.
    var count: Int = 0
}

/// What an interceptor does with one call.
enum IOAction {
    case proceed
    /// Fail with this errno (the call is not made).
    case fail(Int32)
    /// read/write at most this many bytes (0: return 0 without calling).
    case limit(Int)
}

/// Installed on one thread by tests: decides each call, then sees its result.
protocol IOInterceptor: AnyObject {
    func before(_ call: IOCall) -> IOAction
    /// `result` is the call's return value (-1: failed with `errno`);
    /// `data` the bytes a write wrote.
    func after(_ call: IOCall, result: Int, data: UnsafeRawBufferPointer?)
}

/// libc's stat(2) (the name also denotes `struct stat`, and FileIO.stat).
private func cStat(_ path: String, _ st: UnsafeMutablePointer<stat>) -> Int32 { stat(path, st) }

/// libc's flock(2) (the name also denotes `struct flock`).
private func cFlock(_ fd: Int32, _ operation: Int32) -> Int32 { flock(fd, operation) }

enum FileIO {
    private static let key: pthread_key_t = {
        var k = pthread_key_t()
        precondition(pthread_key_create(&k, nil) == 0, "pthread_key_create failed")
        return k
    }()

    @inline(__always)
    private static var interceptor: IOInterceptor? {
        guard let p = pthread_getspecific(key) else { return nil }
        return Unmanaged<AnyObject>.fromOpaque(p).takeUnretainedValue() as? IOInterceptor
    }

    /// Runs `body` with `interceptor` deciding this thread's file-system calls.
    static func withInterceptor<R>(_ interceptor: IOInterceptor, _ body: () throws -> R) rethrows -> R {
        let previous = pthread_getspecific(key)
        let me = Unmanaged.passRetained(interceptor as AnyObject)
        pthread_setspecific(key, me.toOpaque())
        defer {
            pthread_setspecific(key, previous)
            me.release()
        }
        return try body()
    }

    /// The common path of every call: ask the interceptor, make the call, report.
    @inline(__always)
    private static func call(_ c: IOCall, _ body: (Int?) -> Int, data: ((Int) -> UnsafeRawBufferPointer?)? = nil) -> Int {
        guard let i = interceptor else { return body(nil) }
        let result: Int
        switch i.before(c) {
        case .proceed: result = body(nil)
        case .fail(let e): errno = e; result = -1
        case .limit(let n): result = n == 0 ? 0 : body(n)
        }
        let e = errno
        i.after(c, result: result, data: result > 0 ? data?(result) : nil)
        errno = e
        return result
    }

    static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
        Int32(call(IOCall(op: .open, path: path, flags: flags)) { _ in Int(Glibc.open(path, flags, mode)) })
    }

    /// An injected failure still closes the descriptor, as Linux does on EIO and EINTR.
    static func close(_ fd: Int32) -> Int32 {
        var closed = false
        let r = Int32(call(IOCall(op: .close, fd: fd)) { _ in closed = true; return Int(Glibc.close(fd)) })
        if !closed { let e = errno; _ = Glibc.close(fd); errno = e }
        return r
    }

    static func read(_ fd: Int32, _ buf: UnsafeMutableRawPointer, _ count: Int) -> Int {
        call(IOCall(op: .read, fd: fd, count: count)) { limit in Glibc.read(fd, buf, min(count, limit ?? count)) }
    }

    /// A read-only private mapping of the first `count` bytes of `fd`; nil
    /// (with errno) when it cannot be made.
    static func mapReadOnly(_ fd: Int32, _ count: Int) -> UnsafeRawPointer? {
        var mapped: UnsafeMutableRawPointer?
        let r = call(IOCall(op: .mmap, fd: fd, count: count)) { _ in
            guard let m = mmap(nil, count, PROT_READ, MAP_PRIVATE, fd, 0), m != MAP_FAILED else { return -1 }
            mapped = m
            return 0
        }
        return r == 0 ? mapped.map { UnsafeRawPointer($0) } : nil
    }

    static func write(_ fd: Int32, _ buf: UnsafeRawPointer, _ count: Int) -> Int {
        call(IOCall(op: .write, fd: fd, count: count), { limit in Glibc.write(fd, buf, min(count, limit ?? count)) },
             data: { n in UnsafeRawBufferPointer(start: buf, count: n) })
    }

    static func fsync(_ fd: Int32) -> Int32 {
        Int32(call(IOCall(op: .fsync, fd: fd)) { _ in Int(Glibc.fsync(fd)) })
    }

    static func fstat(_ fd: Int32, _ st: inout stat) -> Int32 {
        withUnsafeMutablePointer(to: &st) { p in
            Int32(call(IOCall(op: .fstat, fd: fd)) { _ in Int(Glibc.fstat(fd, p)) })
        }
    }

    static func lstat(_ path: String, _ st: inout stat) -> Int32 {
        withUnsafeMutablePointer(to: &st) { p in
            Int32(call(IOCall(op: .lstat, path: path)) { _ in Int(Glibc.lstat(path, p)) })
        }
    }

    /// stat(2): follows symbolic links (lstat does not).
    static func stat(_ path: String, _ st: inout stat) -> Int32 {
        withUnsafeMutablePointer(to: &st) { p in
            Int32(call(IOCall(op: .stat, path: path)) { _ in Int(cStat(path, p)) })
        }
    }

    static func mkdir(_ path: String, _ mode: mode_t) -> Int32 {
        Int32(call(IOCall(op: .mkdir, path: path)) { _ in Int(Glibc.mkdir(path, mode)) })
    }

    static func rename(_ from: String, _ to: String) -> Int32 {
        Int32(call(IOCall(op: .rename, path: from, path2: to)) { _ in Int(Glibc.rename(from, to)) })
    }

    /// link(2): a second name for a file (generations keep the archive a save replaces).
    static func link(_ from: String, _ to: String) -> Int32 {
        Int32(call(IOCall(op: .link, path: from, path2: to)) { _ in Int(Glibc.link(from, to)) })
    }

    static func unlink(_ path: String) -> Int32 {
        Int32(call(IOCall(op: .unlink, path: path)) { _ in Int(Glibc.unlink(path)) })
    }

    static func flock(_ fd: Int32, _ operation: Int32) -> Int32 {
        Int32(call(IOCall(op: .flock, fd: fd, flags: operation)) { _ in Int(cFlock(fd, operation)) })
    }

    /// fcntl(fd, F_DUPFD_CLOEXEC, 3): a copy of `fd` above stdin, stdout and stderr.
    static func dupAbove2(_ fd: Int32) -> Int32 {
        Int32(call(IOCall(op: .fcntl, fd: fd, flags: F_DUPFD_CLOEXEC)) { _ in Int(fcntl(fd, F_DUPFD_CLOEXEC, 3)) })
    }

    static func ftruncate(_ fd: Int32, _ length: Int) -> Int32 {
        Int32(call(IOCall(op: .ftruncate, fd: fd, count: length)) { _ in Int(Glibc.ftruncate(fd, off_t(length))) })
    }

    /// syncfs(2): flushes the whole file system that holds `fd` (Glibc's
    /// module map does not export it: found with dlsym).
    static func syncfs(_ fd: Int32) -> Int32 {
        Int32(call(IOCall(op: .syncfs, fd: fd)) { _ in
            guard let f = syncfsFunction else { errno = ENOSYS; return -1 }
            return Int(f(fd))
        })
    }

    private typealias SyncFS = @convention(c) (Int32) -> Int32
    private static let syncfsFunction: SyncFS? = {
        guard let p = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "syncfs") else { return nil }
        return unsafeBitCast(p, to: SyncFS.self)
    }()

    /// The names in directory `dir` (without "." and ".."), or nil with errno.
    static func listDirectory(_ dir: String) -> [[UInt8]]? {
        var d: OpaquePointer?
        let opened = call(IOCall(op: .opendir, path: dir)) { _ in
            d = opendir(dir)
            return d == nil ? -1 : 0
        }
        guard opened == 0, let d else { return nil }
        defer { closedir(d) }
        var names: [[UInt8]] = []
        let failed = call(IOCall(op: .readdir, path: dir)) { _ in
            let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
            while true {
                errno = 0
                guard let e = readdir(d) else { return errno == 0 ? 0 : -1 }
                let cName = (UnsafeRawPointer(e) + nameOffset).assumingMemoryBound(to: UInt8.self)
                let name = Array(UnsafeBufferPointer(start: cName, count: strlen(UnsafeRawPointer(cName).assumingMemoryBound(to: CChar.self))))
                if name == [0x2E] || name == [0x2E, 0x2E] { continue }
                names.append(name)
            }
        }
        return failed == 0 ? names : nil
    }
}
