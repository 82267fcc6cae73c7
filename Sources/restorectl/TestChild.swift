// Running the program under test (`restorectl test`): one child per run, in
// its own process group (killed whole when the run ends), its output in a
// log file. Its standard input is /dev/null, or a pipe that `--keys` types
// into; with `--pty` all three are a pseudo-terminal of its own (its own
// session, the terminal its controlling one), whose output restorectl
// drains into the log so the program never blocks on it.

import RestorationCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How one run of the program ended.
enum ChildEnd: Equatable {
    /// SIGKILL it sent itself (a kill point; a wrapper's exit status 137 too).
    case killed
    /// Another signal ended it.
    case signaled(Int32)
    case exited(Int32)
    /// Still running at the deadline: restorectl killed it.
    case timedOut

    var text: String {
        switch self {
        case .killed: return "killed itself (SIGKILL)"
        case .signaled(let s): return "died of signal \(s) (\(String(cString: strsignal(s))))"
        case .exited(let c): return "exited with status \(c)"
        case .timedOut: return "was still running at the timeout"
        }
    }
}

/// What the child reads and where it writes.
struct ChildIO {
    /// A pseudo-terminal (`--pty`).
    var pty = false
    /// What `--keys` types; nil: nothing (stdin /dev/null without a pty).
    var keys: Keys?

    /// How the run's standard input is described in a message.
    var stdinText: String {
        if pty { return keys == nil ? "a pseudo-terminal nobody typed into" : "a pseudo-terminal, typed into from --keys" }
        return keys == nil ? "/dev/null" : "a pipe fed from --keys, closed after the last line"
    }
}
/// The process group of the child running now (0: none), for the handler
/// that ends it when restorectl itself is interrupted.
nonisolated(unsafe) private var runningGroup: pid_t = 0

enum TestChild {
    /// On SIGINT, SIGTERM or SIGHUP the running child's group is killed
    /// first, then restorectl ends by that signal. SIGPIPE is ignored: a
    /// program that closed its input makes a write of --keys fail, not
    /// restorectl end.
    static func killChildOnInterrupt() {
        for s in [SIGINT, SIGTERM, SIGHUP] {
            signal(s) { sig in
                if runningGroup > 0 { kill(-runningGroup, SIGKILL) }
                signal(sig, SIG_DFL)
                raise(sig)
            }
        }
        signal(SIGPIPE, SIG_IGN)
    }

    /// The variables restorectl sets; inherited values of them are dropped.
    static let ownVariables = ["RESTORATION_KILL_AT", "RESTORATION_TEST_EXIT", "RESTORATION_TEST_REPORT", "RESTORATION_TEST_SETTLE"]

    /// The terminal type a pseudo-terminal run gets when TERM is unset,
    /// empty or "dumb".
    static let defaultTerm = "xterm"
    /// The pseudo-terminal's size.
    static let ptyRows: UInt16 = 24, ptyColumns: UInt16 = 80

    /// glibc's POSIX_SPAWN_SETSID (not imported into Swift).
    private static let spawnSetSID: Int32 = 0x80

    private typealias OpenPty = @convention(c) (UnsafeMutablePointer<Int32>, UnsafeMutablePointer<Int32>, UnsafeMutablePointer<CChar>?,
                                                UnsafeRawPointer?, UnsafeRawPointer?) -> Int32

    /// `openpty(3)` (in glibc's libc since 2.34; not imported into Swift):
    /// the master, the slave and the slave's path, both descriptors
    /// close-on-exec, the master non-blocking.
    private static func openPseudoTerminal() throws(CtlFailure) -> (master: Int32, slave: Int32, path: String) {
        guard let sym = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "openpty") else {
            throw CtlFailure(Exit.failure, "--pty: this C library has no openpty()")
        }
        let openpty = unsafeBitCast(sym, to: OpenPty.self)
        var m: Int32 = -1, s: Int32 = -1
        var name = [CChar](repeating: 0, count: 4096)
        var size = winsize(ws_row: ptyRows, ws_col: ptyColumns, ws_xpixel: 0, ws_ypixel: 0)
        let rc = withUnsafePointer(to: &size) { openpty(&m, &s, &name, nil, UnsafeRawPointer($0)) }
        guard rc == 0 else { throw CtlFailure(Exit.io, "--pty: cannot open a pseudo-terminal: \(String(cString: strerror(errno)))") }
        _ = fcntl(m, F_SETFD, FD_CLOEXEC)
        _ = fcntl(s, F_SETFD, FD_CLOEXEC)
        _ = fcntl(m, F_SETFL, fcntl(m, F_GETFL) | O_NONBLOCK)
        return (m, s, String(cString: name))
    }

    /// Runs `command` with `env` added to the environment, its output
    /// appended to `log`, its input as `io` says; waits at most `timeout`
    /// seconds.
    static func run(_ command: [String], env: [String: String], log: String, timeout: Double, io: ChildIO) throws(CtlFailure) -> ChildEnd {
        var environment: [String] = []
        var term: String? = nil
        var p = environ
        while let e = p.pointee {
            let s = String(cString: e)
            let name = s.split(separator: "=", maxSplits: 1).first.map(String.init) ?? s
            if name == "TERM" { term = String(s.dropFirst(5)) }
            if !ownVariables.contains(name) && !(io.pty && name == "TERM") { environment.append(s) }
            p += 1
        }
        if io.pty { environment.append("TERM=" + ((term ?? "").isEmpty || term == "dumb" ? defaultTerm : term!)) }
        for (k, v) in env.sorted(by: { $0.key < $1.key }) { environment.append("\(k)=\(v)") }

        let logFD = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard logFD >= 0 else { throw CtlFailure(Exit.io, "cannot create the log \(Text.quotedPath(log)): \(String(cString: strerror(errno)))") }
        defer { close(logFD) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var flags = Int32(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)

        // The parent's end of the child's input (the pty master or the
        // pipe's write end), and what it closes once the child runs.
        var input: Int32 = -1
        var closeAfterSpawn: Int32 = -1
        if io.pty {
            let (m, s, path) = try openPseudoTerminal()
            input = m
            closeAfterSpawn = s
            // Opened by a session leader without a controlling terminal, the
            // slave becomes its controlling terminal.
            posix_spawn_file_actions_addopen(&actions, 0, path, O_RDWR, 0)
            posix_spawn_file_actions_adddup2(&actions, 0, 1)
            posix_spawn_file_actions_adddup2(&actions, 0, 2)
            flags |= spawnSetSID
        } else {
            if io.keys != nil {
                var fds: [Int32] = [-1, -1]
                guard pipe(&fds) == 0 else {
                    throw CtlFailure(Exit.io, "cannot create the pipe for --keys: \(String(cString: strerror(errno)))")
                }
                _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
                _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
                input = fds[1]
                closeAfterSpawn = fds[0]
                _ = fcntl(input, F_SETFL, fcntl(input, F_GETFL) | O_NONBLOCK)
                posix_spawn_file_actions_adddup2(&actions, fds[0], 0)
            } else {
                posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            }
            posix_spawn_file_actions_adddup2(&actions, logFD, 1)
            posix_spawn_file_actions_adddup2(&actions, logFD, 2)
            posix_spawnattr_setpgroup(&attr, 0)
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
        }
        defer { if input >= 0 { close(input) } }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attr, &defaults)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attr, &none)
        posix_spawnattr_setflags(&attr, Int16(flags))

        let argv = command.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            for a in argv { free(a) }
            for e in envp { free(e) }
        }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, command[0], &actions, &attr, argv, envp)
        if closeAfterSpawn >= 0 { close(closeAfterSpawn) }
        guard rc == 0 else {
            throw CtlFailure(rc == ENOENT ? Exit.notFound : Exit.failure, "cannot run '\(command[0])': \(String(cString: strerror(rc)))")
        }
        runningGroup = pid
        defer { runningGroup = 0 }
        let start = SystemInfo.nowMs()
        let deadline = start + Int64(timeout * 1000)
        var feeder = io.keys.map { KeyFeeder($0, start: start) }
        var reading = io.pty     // the master still gives output
        var buf = [UInt8](repeating: 0, count: 65536)

        /// Copies what the pty has to the log; false once it gives no more.
        func drain() -> Bool {
            while true {
                let n = buf.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                if n > 0 {
                    var off = 0
                    while off < n {
                        let w = buf.withUnsafeBytes { write(logFD, $0.baseAddress! + off, n - off) }
                        if w < 0 && errno == EINTR { continue }
                        if w <= 0 { break }   // a full log loses output, never the run
                        off += w
                    }
                    continue
                }
                if n < 0 && errno == EINTR { continue }
                return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)   // EIO: no slave open any more
            }
        }

        var status: Int32 = 0
        var timedOut = false
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if r < 0 && errno != EINTR { status = 0xff00; break }
            let now = SystemInfo.nowMs()
            if now >= deadline {
                kill(-pid, SIGKILL)
                kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                timedOut = true
                break
            }
            if var f = feeder {
                if !f.feed(input, now: now) || (f.done && !io.pty) {
                    // The reader is gone, or a pipe has had every line: EOF.
                    feeder = nil
                    if !io.pty { close(input); input = -1 }
                } else {
                    feeder = f
                }
            }
            var wait = min(10, deadline - now)
            if let due = feeder?.msUntilDue(now: now) { wait = min(wait, max(1, due)) }
            if reading {
                var pfd = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
                if poll(&pfd, 1, Int32(wait)) > 0 { reading = drain() }
            } else {
                usleep(useconds_t(wait * 1000))
            }
        }
        kill(-pid, SIGKILL)   // whatever it left in its group
        if reading { _ = drain() }
        if timedOut { return .timedOut }
        let sig = status & 0x7f
        if sig == 0 {
            let code = (status >> 8) & 0xff
            return code == 128 + SIGKILL ? .killed : .exited(code)
        }
        return sig == SIGKILL ? .killed : .signaled(sig)
    }

    /// The last `lines` lines of a log, for a failure.
    static func tail(_ log: String, lines: Int = 30) -> String {
        guard let bytes = try? FileStore.read(log) else { return "(no output)" }
        let text = String(decoding: bytes, as: UTF8.self)
        let all = text.split(separator: "\n", omittingEmptySubsequences: false)
        let kept = all.suffix(lines + 1)
        let out = kept.joined(separator: "\n").trimmingTrailingNewlines()
        return out.isEmpty ? "(no output)" : (all.count > kept.count ? "…\n" : "") + out
    }
}

extension String {
    func trimmingTrailingNewlines() -> String {
        var s = Substring(self)
        while s.last == "\n" { s = s.dropLast() }
        return String(s)
    }
}

extension Text {
    /// "10 s", "2.5 s".
    static func seconds(_ s: Double) -> String {
        s == s.rounded() && s < 1e9 ? "\(Int(s)) s" : "\(s) s"
    }
}
