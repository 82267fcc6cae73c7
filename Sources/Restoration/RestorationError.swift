import Foundation
import RestorationCore

/// A failed restoration operation: one case per status of the C ABI
/// (`rst_status`), each carrying the sentence the engine wrote about it
/// (the text C callers get from `rst_last_error()`).
///
/// Match a case to react to one kind of failure:
///
/// ```swift
/// do {
///     try engine.restore()
/// } catch .notFound {
///     // first launch: nothing was saved yet
/// } catch {
///     print("restore failed: \(error)")   // "RST_ERR_CORRUPT: archive '…' is corrupt: …"
/// }
/// ```
///
/// See also <doc:Restoration>, the overview of preservation and restoration.
public enum RestorationError: Error, Equatable, Hashable, Sendable {
    /// A bad argument or a misuse: an empty or malformed identifier, an
    /// unregistered parent, an engine without an archive path asked to save
    /// to a file (`RST_ERR_INVALID`).
    case invalid(String)
    /// No such key, object, class or archive file (`RST_ERR_NOT_FOUND`).
    case notFound(String)
    /// The path or class name is already registered, or a key repeats
    /// within one record (`RST_ERR_DUPLICATE`).
    case duplicate(String)
    /// The key holds a value of another type, or an integer that does not
    /// fit the requested type (`RST_ERR_TYPE`).
    case type(String)
    /// The archive failed validation; nothing was decoded (`RST_ERR_CORRUPT`).
    case corrupt(String)
    /// The archive format or a plugin ABI is not supported (`RST_ERR_VERSION`).
    case version(String)
    /// The file system failed; the message names the file and errno
    /// (`RST_ERR_IO`).
    case io(String)
    /// A plugin failed to load or to create its object (`RST_ERR_PLUGIN`).
    case plugin(String)
    /// `shouldSave` or `shouldRestore` said no, or the crash-loop guard
    /// refused a restore (`RST_ERR_REJECTED`).
    case rejected(String)
    /// Memory ran out (`RST_ERR_NOMEM`).
    case noMemory(String)
    /// Not allowed now: a coder used outside its callback, `unregister`
    /// from inside a save or restore (`RST_ERR_STATE`).
    case state(String)
    /// A size, count or depth limit was exceeded (`RST_ERR_LIMIT`).
    case limit(String)
    /// Another instance owns this state now; nothing was written over it
    /// (`RST_ERR_FENCED`).
    case fenced(String)
    /// The store cannot be reached now (`RST_ERR_UNAVAILABLE`).
    case unavailable(String)

    /// Converts a core failure; the message is kept verbatim.
    ///
    /// - Parameter failure: A status and its message, as the core reports them.
    public init(_ failure: RestorationFailure) {
        self.init(status: failure.status, message: failure.message)
    }

    init(status: Status, message: String) {
        switch status {
        case .ok: self = .invalid("unexpected success status reported as a failure: \(message)")
        case .invalid: self = .invalid(message)
        case .notFound: self = .notFound(message)
        case .duplicate: self = .duplicate(message)
        case .type: self = .type(message)
        case .corrupt: self = .corrupt(message)
        case .version: self = .version(message)
        case .io: self = .io(message)
        case .plugin: self = .plugin(message)
        case .rejected: self = .rejected(message)
        case .noMemory: self = .noMemory(message)
        case .state: self = .state(message)
        case .limit: self = .limit(message)
        case .fenced: self = .fenced(message)
        case .unavailable: self = .unavailable(message)
        }
    }

    /// The sentence describing what went wrong and where (file, record
    /// path, key). The corresponding C function is `rst_last_error`.
    public var message: String {
        switch self {
        case .invalid(let m), .notFound(let m), .duplicate(let m), .type(let m),
             .corrupt(let m), .version(let m), .io(let m), .plugin(let m),
             .rejected(let m), .noMemory(let m), .state(let m), .limit(let m),
             .fenced(let m), .unavailable(let m):
            return m
        }
    }

    /// The numeric value of the matching `rst_status` (1 for
    /// `RST_ERR_INVALID` … 14 for `RST_ERR_UNAVAILABLE`).
    public var statusCode: UInt32 { status.rawValue }

    /// The C enumerator's name, such as `"RST_ERR_CORRUPT"`. The
    /// corresponding C function is `rst_status_name`.
    public var statusName: String { status.cName }

    var status: Status {
        switch self {
        case .invalid: return .invalid
        case .notFound: return .notFound
        case .duplicate: return .duplicate
        case .type: return .type
        case .corrupt: return .corrupt
        case .version: return .version
        case .io: return .io
        case .plugin: return .plugin
        case .rejected: return .rejected
        case .noMemory: return .noMemory
        case .state: return .state
        case .limit: return .limit
        case .fenced: return .fenced
        case .unavailable: return .unavailable
        }
    }

    /// A failure with an explicit status (used where the Swift layer itself
    /// detects a misuse).
    static func make(_ status: Status, _ message: String) -> RestorationError {
        RestorationError(status: status, message: message)
    }

    /// The core failure this error stands for.
    var failure: RestorationFailure { RestorationFailure(status, message) }
}

extension RestorationError: CustomStringConvertible {
    /// `"RST_ERR_CORRUPT: archive '/tmp/a.rst' is corrupt: …"`.
    public var description: String { "\(statusName): \(message)" }
}

extension RestorationError: LocalizedError {
    /// The message, for `localizedDescription`.
    public var errorDescription: String? { message }
    /// The status name, such as `"RST_ERR_IO"`.
    public var failureReason: String? { statusName }
}
