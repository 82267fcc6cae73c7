// The public spelling of the C enumerators: the one table of the names
// Include/restoration.h gives the core's status, restore reason and skip
// reason values ("RST_ERR_CORRUPT", "RST_REASON_RECOVER", "RST_SKIP_DECLINED").
//
// These names are part of documented output beyond the C functions that
// return them (rst_status_name, rst_restore_reason_name,
// rst_skip_reason_name, which the C face answers from this table): the
// engine's log lines, restorectl's text and JSON and the test-exit report
// print them. So the table lives here, where the core, restorectl and the
// Swift API reach it without depending on the C face, and nowhere else. The
// strings are static so the C face returns them as C strings without copying.

/// The C enumerators' names, by value; an unknown value has the "_UNKNOWN"
/// spelling of its enumeration.
public enum CSpelling {
    public static func status(rawValue: UInt32) -> StaticString {
        switch Status(rawValue: rawValue) {
        case .ok: return "RST_OK"
        case .invalid: return "RST_ERR_INVALID"
        case .notFound: return "RST_ERR_NOT_FOUND"
        case .duplicate: return "RST_ERR_DUPLICATE"
        case .type: return "RST_ERR_TYPE"
        case .corrupt: return "RST_ERR_CORRUPT"
        case .version: return "RST_ERR_VERSION"
        case .io: return "RST_ERR_IO"
        case .plugin: return "RST_ERR_PLUGIN"
        case .rejected: return "RST_ERR_REJECTED"
        case .noMemory: return "RST_ERR_NOMEM"
        case .state: return "RST_ERR_STATE"
        case .limit: return "RST_ERR_LIMIT"
        case .fenced: return "RST_ERR_FENCED"
        case .unavailable: return "RST_ERR_UNAVAILABLE"
        case nil: return "RST_ERR_UNKNOWN"
        }
    }

    public static func restoreReason(rawValue: UInt32) -> StaticString {
        switch RestoreReason(rawValue: rawValue) {
        case .firstLaunch: return "RST_REASON_FIRST_LAUNCH"
        case .relaunch: return "RST_REASON_RELAUNCH"
        case .recover: return "RST_REASON_RECOVER"
        case .buffer: return "RST_REASON_BUFFER"
        case .fallback: return "RST_REASON_FALLBACK"
        case .reset: return "RST_REASON_RESET"
        case .handoff: return "RST_REASON_HANDOFF"
        case nil: return "RST_REASON_UNKNOWN"
        }
    }

    public static func skipReason(rawValue: UInt32) -> StaticString {
        switch SkipReason(rawValue: rawValue) {
        case .noFactory: return "RST_SKIP_NO_FACTORY"
        case .declined: return "RST_SKIP_DECLINED"
        case .factoryError: return "RST_SKIP_FACTORY_ERROR"
        case .pluginRejected: return "RST_SKIP_PLUGIN_REJECTED"
        case .parentSkipped: return "RST_SKIP_PARENT_SKIPPED"
        case .quarantined: return "RST_SKIP_QUARANTINED"
        case .noMigration: return "RST_SKIP_NO_MIGRATION"
        case .migrationFailed: return "RST_SKIP_MIGRATION_FAILED"
        case .tooNew: return "RST_SKIP_TOO_NEW"
        case .expired: return "RST_SKIP_EXPIRED"
        case .decodeFailed: return "RST_SKIP_DECODE_FAILED"
        case .trimmed: return "RST_SKIP_TRIMMED"
        case nil: return "RST_SKIP_UNKNOWN"
        }
    }
}

extension Status {
    /// The C enumerator's name, "RST_ERR_CORRUPT" (CSpelling).
    public var cName: String { CSpelling.status(rawValue: rawValue).description }
}

extension RestoreReason {
    /// The C enumerator's name, "RST_REASON_RECOVER" (CSpelling).
    public var cName: String { CSpelling.restoreReason(rawValue: rawValue).description }
}

extension SkipReason {
    /// The C enumerator's name, "RST_SKIP_DECLINED" (CSpelling).
    public var cName: String { CSpelling.skipReason(rawValue: rawValue).description }
}
