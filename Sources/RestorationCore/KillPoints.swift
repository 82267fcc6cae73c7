#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A moment of a save or restore at which a test may kill the process
/// (docs/TESTING.md). The raw values are the names
/// `RESTORATION_KILL_AT` takes.
public enum KillPoint: String, CaseIterable, Sendable {
    /// A save to the store or archive path begins (before `should_save`).
    case saveBegin = "save-begin"
    /// Every encode is done; nothing is written.
    case saveEncoded = "save-encoded"
    /// The new archive is durable but not yet in place.
    case saveWritten = "save-written"
    /// The new archive is in place, before anything after it.
    case saveReplaced = "save-replaced"
    /// Every restore from the store or archive path, with or without an archive.
    case restoreBegin = "restore-begin"
    /// Before the first decode callback.
    case restoreDecoding = "restore-decoding"
    /// After `did_finish_restoring`.
    case restoreFinished = "restore-finished"
    /// An autosave starts.
    case autosave = "autosave"
}

/// `RESTORATION_KILL_AT=POINT[:N]`: the process sends itself SIGKILL the
/// N-th time (default 1) any engine with a store or archive path reaches
/// POINT. Read once, when the process creates its first engine
/// (`KillPoints.load()`), with `secure_getenv` (ignored in set-user-ID and
/// set-group-ID processes). Unset, `reach` is one load and one compare.
public enum KillPoints {
    /// What the variable asked for, or why it was ignored.
    public enum Setting: Equatable, Sendable {
        case off
        case armed(KillPoint, count: Int)
        /// The value could not be read; the sentence says why (logged once
        /// by the first engine).
        case invalid(String)
    }

    /// The parsed setting (the variable is read on first use).
    public static let setting: Setting = parse(secureEnvironment("RESTORATION_KILL_AT"))

    /// Parses `POINT[:N]`.
    public static func parse(_ value: String?) -> Setting {
        guard let value, !value.isEmpty else { return .off }
        let parts = value.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let point = KillPoint(rawValue: String(parts[0])) else {
            let names = KillPoint.allCases.map(\.rawValue).joined(separator: ", ")
            return .invalid("RESTORATION_KILL_AT='\(value)' names no kill point (\(names)); ignored")
        }
        var n = 1
        if parts.count == 2 {
            guard let k = Int(parts[1]), k >= 1 else {
                return .invalid("RESTORATION_KILL_AT='\(value)': the count after ':' must be a whole number from 1; ignored")
            }
            n = k
        }
        return .armed(point, count: n)
    }

    /// The armed point and count, or nil (read by `reach`).
    private static let armed: (point: KillPoint, count: Int)? = {
        if case .armed(let p, let n) = setting { return (p, n) }
        return nil
    }()

    private static let counter = Mutex()
    nonisolated(unsafe) private static var reached = 0

    /// Reads the variable (once per process) and returns the sentence to
    /// log when its value is invalid.
    @discardableResult
    public static func load() -> String? {
        _ = TestExits.mode
        if case .invalid(let why) = setting { return why }
        return nil
    }

    /// Counts `point`; at the N-th time it was asked for, the process ends
    /// by SIGKILL at once (no handler, no atexit, no flush).
    @inline(__always)
    public static func reach(_ point: KillPoint) {
        guard let a = armed, a.point == point else { return }
        counter.lock()
        reached += 1
        let now = reached
        counter.unlock()
        if now == a.count { die() }
    }

    /// Whether `point` is the armed one (the count aside).
    @inline(__always)
    static func isArmed(_ point: KillPoint) -> Bool {
        guard let a = armed else { return false }
        return a.point == point
    }

    /// `reach(point)` when `condition` holds (an engine with a store or
    /// archive path); the condition is evaluated only when `point` is armed.
    @inline(__always)
    public static func reach(_ point: KillPoint, when condition: @autoclosure () -> Bool) {
        guard let a = armed, a.point == point, condition() else { return }
        reach(point)
    }

    /// Logs the sentences of invalid test variables once per process,
    /// through the first engine that saves or restores a file.
    static func logSettingsOnce(_ log: (LogLevel, String) -> Void) {
        let first = counter.withLock { () -> Bool in
            if loggedSettings { return false }
            loggedSettings = true
            return true
        }
        guard first else { return }
        if let why = load() { log(.warning, why) }
        if let why = TestExits.warning { log(.warning, why) }
    }
    nonisolated(unsafe) private static var loggedSettings = false

    private static func die() -> Never {
        _ = kill(getpid(), SIGKILL)
        while true { pause() }
    }

    private typealias GetEnv = @convention(c) (UnsafePointer<CChar>) -> UnsafeMutablePointer<CChar>?

    /// `secure_getenv` (a GNU extension the Glibc module does not import):
    /// nil when unset or when the process runs with AT_SECURE.
    public static func secureEnvironment(_ name: String) -> String? {
        guard let sym = dlsym(nil, "secure_getenv") else { return nil }
        let fn = unsafeBitCast(sym, to: GetEnv.self)
        return name.withCString { fn($0) }.map { String(cString: $0) }
    }
}
