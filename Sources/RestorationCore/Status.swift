/// Result codes of the core; the numbers are those of `rst_status` in
/// Include/restoration.h (the C layer converts by raw value).
public enum Status: UInt32, Sendable, CustomStringConvertible {
    case ok = 0
    case invalid = 1
    case notFound = 2
    case duplicate = 3
    case type = 4
    case corrupt = 5
    case version = 6
    case io = 7
    case plugin = 8
    case rejected = 9
    case noMemory = 10
    case state = 11
    case limit = 12
    case fenced = 13
    case unavailable = 14

    public var description: String { cName }
}

/// A failed operation: a status and one sentence naming what was wrong and
/// where (file, record path, key).
public struct RestorationFailure: Error, CustomStringConvertible, Sendable {
    public let status: Status
    public let message: String

    public init(_ status: Status, _ message: String) {
        self.status = status
        self.message = message
    }

    public var description: String { "\(status.cName): \(message)" }
}

/// Log levels of the engine's diagnostics (RST_LOG_*).
public enum LogLevel: Int, Sendable, Comparable {
    case debug = 0, info = 1, warning = 2, error = 3

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }

    public var name: String {
        switch self {
        case .debug: return "debug"
        case .info: return "info"
        case .warning: return "warning"
        case .error: return "error"
        }
    }
}
