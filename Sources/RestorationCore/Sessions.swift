#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a restore restores what it does (`rst_restore_reason`, docs/LIFECYCLE.md).
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
    /// An archive or a generation existed but none could be restored (each
    /// invalid one was set aside intact).
    case reset = 5
    /// The previous session ended cleanly on another machine.
    case handoff = 6

    public var description: String { cName }
}

/// The session record (the store's session slot; the file store's
/// `<archive>.session`): an engine with a store writes it at its first save
/// or restore and removes it at destroy or `closeSession()`, so the next
/// process can tell whether the previous one ended cleanly. Its content,
/// complete or not at all (library 1.3; 1.1 and 1.2 wrote version 1, the
/// same without `machine`, `host` and `began`, still read):
///
///     restoration-session 2
///     pid=<decimal>
///     start=<start time of that pid, clock ticks since boot>
///     boot=<boot id>
///     machine=<machine id>
///     host=<host name>
///     began=<UTC ms when the session was recorded>
///     end
///
/// Anything else (torn, foreign, zeroed by a close through a mapping, a
/// FIFO) is no session: the previous one counts as ended cleanly. A session
/// of another boot counts as died, which it did. A session of another
/// machine is not judged by its pid: it counts as died there (RECOVER),
/// with a WARNING that the other machine may still be running.
enum SessionFile {
    static let magic = "restoration-session 2"
    static let magicV1 = "restoration-session 1"
    static let infix = ".session"

    static func path(_ archive: String) -> String { archive + infix }

    /// When this process first recorded a session: one value per process,
    /// so every encoding of its record is the same bytes (the file store's
    /// closer compares them before it unlinks the record).
    static let beganMs: Int64 = SystemInfo.nowMs()

    /// The record of this process's session.
    static func encode(_ o: CrashGuard.Owner) -> String {
        let m = MachineIdentity.current.identity
        return "\(magic)\npid=\(o.pid)\nstart=\(o.start)\nboot=\(o.boot)\nmachine=\(m.id)\nhost=\(m.host)\nbegan=\(beganMs)\nend\n"
    }

    /// A recorded session: its process, and (version 2) its machine and
    /// when it began.
    struct Record: Equatable {
        var owner: CrashGuard.Owner
        var machine: String? = nil
        var host: String? = nil
        var beganMs: Int64? = nil

        /// Recorded on another machine (a version-1 record is of this one).
        var isOtherMachine: Bool { machine.map { $0 != MachineIdentity.current.identity.id } ?? false }
    }

    static func parse(_ bytes: [UInt8]) -> CrashGuard.Owner? { parseRecord(bytes)?.owner }

    static func parseRecord(_ bytes: [UInt8]) -> Record? {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let v2 = lines.first == Substring(magic)
        guard (v2 && lines.count == 9) || (lines.first == Substring(magicV1) && lines.count == 6),
              lines[lines.count - 2] == "end", lines[lines.count - 1].isEmpty else { return nil }
        func value(_ line: Substring, _ key: String) -> Substring? {
            line.hasPrefix(key + "=") ? line.dropFirst(key.count + 1) : nil
        }
        guard let pid = value(lines[1], "pid").flatMap({ Int32($0) }), pid > 0,
              let start = value(lines[2], "start").flatMap({ UInt64($0) }),
              let boot = value(lines[3], "boot"), !boot.isEmpty else { return nil }
        var r = Record(owner: CrashGuard.Owner(pid: pid, start: start, boot: String(boot)))
        if v2 {
            guard let machine = value(lines[4], "machine"), MachineIdentity.valid(String(machine)),
                  let host = value(lines[5], "host"), MachineIdentity.valid(String(host)),
                  let began = value(lines[6], "began").flatMap({ Int64($0) }) else { return nil }
            r.machine = String(machine)
            r.host = String(host)
            r.beganMs = began
        }
        return r
    }
}
