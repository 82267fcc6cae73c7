#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Which machine this process runs on, for sessions and archives that may
/// be read on another one: the machine id (`/etc/machine-id`, else
/// `/var/lib/dbus/machine-id`, else the boot id) and the host name.
/// `RESTORATION_MACHINE_ID` and `RESTORATION_HOSTNAME` (read once, with
/// `secure_getenv`) override them, for containers that share or lack a
/// machine id and for tests that play two machines on one host: any
/// non-empty text without '/', a newline or NUL; another value is ignored,
/// and `problems` says so for the engine to log once. The machine id alone
/// decides "this machine"; the boot id only "this boot" of it.
public struct MachineIdentity: Equatable, Sendable {
    public var id: String
    public var host: String

    /// "<host name> (machine <id>)": how sentences name a machine.
    public var described: String { MachineIdentity.describe(host: host, id: id) }

    public static func describe(host: String, id: String) -> String {
        "\(host.isEmpty ? "an unnamed host" : host) (machine \(id.isEmpty ? "unknown" : id))"
    }

    /// This process's machine, and the sentences about overrides that were ignored.
    public static let current: (identity: MachineIdentity, problems: [String]) = {
        var problems: [String] = []
        func override(_ name: String) -> String? {
            guard let v = KillPoints.secureEnvironment(name) else { return nil }
            if valid(v) { return v }
            problems.append("\(name) is ignored: it must be non-empty text without '/' or a newline (it is \(v.isEmpty ? "empty" : "'\(v.prefix(64))'"))")
            return nil
        }
        let id = override("RESTORATION_MACHINE_ID") ?? systemMachineID()
        let host = override("RESTORATION_HOSTNAME") ?? systemHostName()
        return (MachineIdentity(id: id, host: host), problems)
    }()

    /// Whether `v` may name a machine or a host in a session record.
    public static func valid(_ v: String) -> Bool {
        !v.isEmpty && v.utf8.count <= 255 && !v.contains("/") && !v.contains("\n") && !v.contains("\0") && !v.contains("\r")
    }

    static func systemMachineID() -> String {
        for p in ["/etc/machine-id", "/var/lib/dbus/machine-id"] {
            if let t = SystemInfo.readSmallFile(p)?.trimmingCharacters(in: " \n\t"), valid(t) { return t }
        }
        let boot = SystemInfo.bootID
        return valid(boot) ? boot : "unknown"
    }

    static func systemHostName() -> String {
        var buf = [CChar](repeating: 0, count: 256)
        guard gethostname(&buf, buf.count - 1) == 0 else { return "localhost" }
        let name = String(decoding: buf.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return valid(name) ? name : "localhost"
    }
}
