// The archive codec's public vocabulary: limits, failures, value tags, info.
// Pure Swift: this module imports nothing but the standard library.
// The byte layout is documented in docs/FORMAT.md.

/// Every limit of the format. They mirror the RST_MAX_* macros of
/// Include/restoration.h and are enforced by the writer and the reader.
public enum ArchiveLimits {
    /// Archive file or buffer, checksum included (RST_MAX_ARCHIVE_BYTES).
    public static let maxArchiveBytes: Int = 256 * 1024 * 1024
    /// One identifier, UTF-8 bytes (RST_MAX_IDENTIFIER_BYTES).
    public static let maxIdentifierBytes: Int = 255
    /// One class name, UTF-8 bytes (RST_MAX_CLASS_NAME_BYTES).
    public static let maxClassNameBytes: Int = 255
    /// One key, UTF-8 bytes (RST_MAX_KEY_BYTES).
    public static let maxKeyBytes: Int = 255
    /// Nested records inside one object: the object's own fields are depth 0,
    /// a record inside them is depth 1, ... (RST_MAX_RECORD_DEPTH).
    public static let maxRecordDepth: Int = 32
    /// Parent chain length; a root is depth 0 (RST_MAX_TREE_DEPTH).
    public static let maxTreeDepth: Int = 65536
    /// Keys in one object or nested record (RST_MAX_VALUES_PER_RECORD).
    public static let maxValuesPerRecord: Int = 65536
    /// Objects (records) in one archive (RST_MAX_OBJECTS).
    public static let maxObjects: Int = 16_777_216
    /// Each of the info strings (app version, system version, idiom).
    public static let maxInfoStringBytes: Int = 4096
}

/// Why an archive was rejected. Every message is one sentence naming what was
/// wrong and where (a byte offset and, inside the records, the record index,
/// its path and the key).
public enum ArchiveFailure: Error, Equatable, CustomStringConvertible, Sendable {
    /// The bytes are not a well-formed archive (RST_ERR_CORRUPT).
    case corrupt(String)
    /// A format version or flag this reader does not support (RST_ERR_VERSION).
    case version(String)
    /// A size, count or depth limit was exceeded (RST_ERR_LIMIT).
    case limit(String)

    public var message: String {
        switch self {
        case .corrupt(let m), .version(let m), .limit(let m): return m
        }
    }

    /// The message itself.
    public var description: String { message }
}

/// The type of a stored value: the low nibble of a field's header byte.
/// Tags 10...15 are reserved for future types (see `ArchiveReader.Field.rawTag`).
public enum ValueTag: UInt8, Sendable {
    case boolFalse = 0, boolTrue = 1, int = 2, double = 3, string = 4, bytes = 5,
         object = 6, intArray = 7, stringArray = 8, record = 9
}

/// What an archive says about when and by whom it was saved.
public struct ArchiveInfo: Equatable, Sendable {
    public var formatVersion: UInt32
    public var appVersion: String
    public var systemVersion: String
    public var idiom: String
    /// UTC milliseconds since the epoch.
    public var savedAtMs: Int64
    /// Records in the archive.
    public var objectCount: UInt64

    public init(formatVersion: UInt32 = 1, appVersion: String = "", systemVersion: String = "",
                idiom: String = "", savedAtMs: Int64 = 0, objectCount: UInt64 = 0) {
        self.formatVersion = formatVersion
        self.appVersion = appVersion
        self.systemVersion = systemVersion
        self.idiom = idiom
        self.savedAtMs = savedAtMs
        self.objectCount = objectCount
    }
}

/// Why the writer refused a call.
public enum WriteFailure: Error, Equatable, Sendable {
    /// The key is already present in the current record.
    case duplicateKey
    /// A size, count or depth limit would be exceeded.
    case limit(String)
    /// Not allowed now (no open object, unbalanced records, bad document, ...).
    case state(String)
}

/// Fixed facts of format version 1.
public enum ArchiveFormat {
    /// The 8 magic bytes every archive starts with.
    public static let magic: [UInt8] = [0x89, 0x52, 0x53, 0x54, 0x0D, 0x0A, 0x1A, 0x0A]
    /// The format version this module writes and reads.
    public static let version: UInt16 = 1
    /// magic(8) + version(2) + flags(2) + total_len(4).
    public static let fixedHeaderBytes: Int = 16
    /// The smallest well-formed archive: the fixed header, an info block with
    /// three empty strings (3), saved_at_ms (8) and object_count (1), two
    /// string-table counts (2) and the checksum (4).
    public static let minimumArchiveBytes: Int = 16 + 12 + 2 + 4
}
