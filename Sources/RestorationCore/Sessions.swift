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
/// complete or not at all:
///
///     restoration-session 1
///     pid=<decimal>
///     start=<start time of that pid, clock ticks since boot>
///     boot=<boot id>
///     end
///
/// Anything else (torn, foreign, zeroed by a close through a mapping, a
/// FIFO) is no session: the previous one counts as ended cleanly. A session
/// of another boot counts as died, which it did.
enum SessionFile {
    static let magic = "restoration-session 1"
    static let infix = ".session"

    static func path(_ archive: String) -> String { archive + infix }

    static func encode(_ o: CrashGuard.Owner) -> String {
        "\(magic)\npid=\(o.pid)\nstart=\(o.start)\nboot=\(o.boot)\nend\n"
    }

    static func parse(_ bytes: [UInt8]) -> CrashGuard.Owner? {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count == 6, lines[0] == magic, lines[4] == "end", lines[5].isEmpty else { return nil }
        func value(_ line: Substring, _ key: String) -> Substring? {
            line.hasPrefix(key + "=") ? line.dropFirst(key.count + 1) : nil
        }
        guard let pid = value(lines[1], "pid").flatMap({ Int32($0) }), pid > 0,
              let start = value(lines[2], "start").flatMap({ UInt64($0) }),
              let boot = value(lines[3], "boot"), !boot.isEmpty else { return nil }
        return CrashGuard.Owner(pid: pid, start: start, boot: String(boot))
    }
}
