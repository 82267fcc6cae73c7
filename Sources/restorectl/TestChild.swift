// Running the program under test (`restorectl test`): one child per run,
// its stdin /dev/null, its stdout and stderr in a log file, in its own
// process group (killed whole when the run ends).

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

/// The process group of the child running now (0: none), for the handler
/// that ends it when restorectl itself is interrupted.
nonisolated(unsafe) private var runningGroup: pid_t = 0

enum TestChild {
    /// On SIGINT, SIGTERM or SIGHUP the running child's group is killed
    /// first, then restorectl ends by that signal.
    static func killChildOnInterrupt() {
        for s in [SIGINT, SIGTERM, SIGHUP] {
            signal(s) { sig in
                if runningGroup > 0 { kill(-runningGroup, SIGKILL) }
                signal(sig, SIG_DFL)
                raise(sig)
            }
        }
    }

    /// The variables restorectl sets; inherited values of them are dropped.
    static let ownVariables = ["RESTORATION_KILL_AT", "RESTORATION_TEST_EXIT", "RESTORATION_TEST_REPORT"]

    /// Runs `command` with `env` added to the environment, output appended
    /// to `log`; waits at most `timeout` seconds.
    static func run(_ command: [String], env: [String: String], log: String, timeout: Double) throws(CtlFailure) -> ChildEnd {
        var environment: [String] = []
        var p = environ
        while let e = p.pointee {
            let s = String(cString: e)
            let name = s.split(separator: "=", maxSplits: 1).first.map(String.init) ?? s
            if !ownVariables.contains(name) { environment.append(s) }
            p += 1
        }
        for (k, v) in env.sorted(by: { $0.key < $1.key }) { environment.append("\(k)=\(v)") }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attr, &defaults)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attr, &none)
        posix_spawnattr_setpgroup(&attr, 0)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = command.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            for a in argv { free(a) }
            for e in envp { free(e) }
        }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, command[0], &actions, &attr, argv, envp)
        guard rc == 0 else {
            throw CtlFailure(rc == ENOENT ? Exit.notFound : Exit.failure, "cannot run '\(command[0])': \(String(cString: strerror(rc)))")
        }
        runningGroup = pid
        defer { runningGroup = 0 }
        let deadline = SystemInfo.nowMs() + Int64(timeout * 1000)
        var status: Int32 = 0
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if r < 0 && errno != EINTR { return .exited(-1) }
            if SystemInfo.nowMs() >= deadline {
                kill(-pid, SIGKILL)
                kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                return .timedOut
            }
            usleep(10_000)
        }
        kill(-pid, SIGKILL)   // whatever it left in its group
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
