#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `RESTORATION_DEBUG_PLUGINS=1`: every loader decision on stderr, one line
/// each, prefixed `restoration-plugins:`. Read with `secure_getenv`, so a
/// setuid or setcap host ignores it.
struct Trace {
    let enabled: Bool

    init() {
        enabled = Trace.secureEnvironment("RESTORATION_DEBUG_PLUGINS").map { $0 != "" && $0 != "0" } ?? false
    }

    /// Writes one line when tracing is on. The message is only built then.
    @inline(__always)
    func callAsFunction(_ message: @autoclosure () -> String) {
        guard enabled else { return }
        let line = "restoration-plugins: \(message())\n"
        fputs(line, stderr)
    }

    private typealias GetEnv = @convention(c) (UnsafePointer<CChar>) -> UnsafeMutablePointer<CChar>?

    /// `secure_getenv` (a GNU extension Swift's Glibc module does not
    /// import): nil when the variable is unset or the process runs with
    /// AT_SECURE. Falls back to nothing rather than to plain `getenv`.
    static func secureEnvironment(_ name: String) -> String? {
        guard let sym = dlsym(nil, "secure_getenv") else { return nil }
        let fn = unsafeBitCast(sym, to: GetEnv.self)
        return name.withCString { fn($0) }.map { String(cString: $0) }
    }
}

/// `strerror` as a Swift string.
func errnoText(_ e: Int32) -> String {
    String(cString: strerror(e))
}

/// The most recent `dlerror()` text, or `fallback`.
func dlErrorText(_ fallback: String) -> String {
    guard let p = dlerror() else { return fallback }
    return String(cString: p)
}

