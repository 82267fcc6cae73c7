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
/// Tags 12...15 are reserved for future types (see `ArchiveReader.Field.rawTag`).
public enum ValueTag: UInt8, Sendable, CaseIterable {
    case boolFalse = 0, boolTrue = 1, int = 2, double = 3, string = 4, bytes = 5,
         object = 6, intArray = 7, stringArray = 8, record = 9,
         /// v1.1: an array of object references (docs/FORMAT.md, tag 10).
         objectArray = 10,
         /// v1.2: an OS string, any bytes but NUL (docs/FORMAT.md, tag 11).
         osString = 11
}

// MARK: - The one table of tags and payload shapes

/// How a field's payload is laid out after its header (docs/FORMAT.md,
/// "Fields"). The writer, the validator, the reader and the document model
/// all take a tag's layout from `PayloadShape.of(rawTag:)`, so a new value
/// type (v1.1: arrays of object references) is described here once.
public enum PayloadShape: UInt8, Sendable {
    /// No payload: the tag is the value (false, true).
    case none
    /// One zigzag varint: a signed 64-bit integer.
    case zigzag
    /// One varint: a record index below object_count (an object reference).
    case recordIndex
    /// 8 bytes, little-endian: an IEEE-754 double's bit pattern.
    case fixed64
    /// `varint len` + len bytes of text (UTF-8 without NUL).
    case text
    /// `varint len` + len bytes, anything.
    case bytes
    /// `varint byte_len`, then within it `varint count` + count zigzag varints.
    case zigzagArray
    /// `varint byte_len`, then within it `varint count` + count × (`varint len` + text).
    case textArray
    /// `varint byte_len`, then fields of the same syntax filling it (a nested record).
    case fields
    /// `varint byte_len`, then within it `varint count` + count record
    /// indexes (varints below object_count): an array of object references.
    case recordIndexArray
    /// `varint len` + len bytes, any but NUL (an OS string: a file name).
    case osText
    /// v1.2: `varint byte_len`, then within it the inner value's tag (1
    /// byte), a 24-byte nonce and the sealed content (the inner payload
    /// sealed with XChaCha20-Poly1305, 16 bytes longer): a sealed value
    /// (RST_TYPE_SEALED). A reader before 1.2 skips it as a future type.
    case sealed
    /// `varint byte_len` + byte_len bytes a version-1 reader does not
    /// interpret (tags 13...15: future types, skipped).
    case future

    /// The shape of a raw tag (0...15). The one place that maps tags to layouts.
    @inlinable @inline(__always)
    public static func of(rawTag: UInt8) -> PayloadShape {
        switch rawTag {
        case 0, 1: return .none                // ValueTag.boolFalse, .boolTrue
        case 2: return .zigzag                 // ValueTag.int
        case 3: return .fixed64                // ValueTag.double
        case 4: return .text                   // ValueTag.string
        case 5: return .bytes                  // ValueTag.bytes
        case 6: return .recordIndex            // ValueTag.object
        case 7: return .zigzagArray            // ValueTag.intArray
        case 8: return .textArray              // ValueTag.stringArray
        case 9: return .fields                 // ValueTag.record
        case 10: return .recordIndexArray      // ValueTag.objectArray (v1.1)
        case 11: return .osText                // ValueTag.osString (v1.2)
        case 12: return .sealed                // a sealed value (v1.2)
        default: return .future                // 13...15
        }
    }

    /// Whether the payload starts with a `varint` byte length that bounds it.
    @inlinable @inline(__always)
    public var isLengthPrefixed: Bool { rawValue >= PayloadShape.text.rawValue }
}

extension ValueTag {
    /// The layout of this tag's payload.
    @inlinable @inline(__always)
    public var shape: PayloadShape { PayloadShape.of(rawTag: rawValue) }

    /// Raw tags this reader skips without understanding (13...15; tag 10,
    /// object arrays, tag 11, OS strings, and tag 12, sealed values, were
    /// among them for older readers, which skip them).
    public static let futureRawTags: ClosedRange<UInt8> = 13...15

    /// Whether `raw` is a tag reserved for future types.
    @inlinable @inline(__always)
    public static func isFuture(rawTag raw: UInt8) -> Bool { futureRawTags.contains(raw) }

    /// v1.2: raw tags with no `ValueTag`, whose values the document model
    /// and tools keep as opaque payloads (`ArchiveValue.unknown`): 12, a
    /// sealed value (opened only by an engine with its key), 13, the list of
    /// subtrees a size budget trimmed, 14, a record's LOCAL keys
    /// (`ArchiveFormat.localMarksTag`), and the future tag 15 (13...15 keep
    /// the future shape).
    public static let opaqueRawTags: ClosedRange<UInt8> = 12...15

    /// Whether `raw` is kept as an opaque payload (`opaqueRawTags`).
    @inlinable @inline(__always)
    public static func isOpaque(rawTag raw: UInt8) -> Bool { opaqueRawTags.contains(raw) }
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

    /// What went wrong, as a sentence.
    public var message: String {
        switch self {
        case .duplicateKey: return "the key is already present in the record"
        case .limit(let m), .state(let m): return m
        }
    }
}

/// Fixed facts of format version 1.
public enum ArchiveFormat {
    /// The 8 magic bytes every archive starts with.
    public static let magic: [UInt8] = [0x89, 0x52, 0x53, 0x54, 0x0D, 0x0A, 0x1A, 0x0A]
    /// The format version this module writes and reads.
    public static let version: UInt16 = 1
    /// Header flag (v1.1): every record stores its class version, a varint
    /// after `class`. Set only when some record has a version other than 0,
    /// so archives without versions stay byte-identical to v1's.
    public static let flagRecordVersions: UInt16 = 1
    /// Header flag (carried records, docs/EVOLUTION.md): every record stores `carry`, a varint after
    /// the version (or after `class` without flag 1): 0 for a live record,
    /// 1 + the saves that will still carry it for a record carried for a
    /// class nothing could produce (UInt32.max: always). Set only when the
    /// archive holds a carried record.
    public static let flagRecordCarry: UInt16 = 2
    /// v1.2: a sealed value's tag (`PayloadShape.sealed`, RST_TYPE_SEALED).
    public static let sealedTag: UInt8 = 12
    /// v1.2: the tag of a record's list of LOCAL keys (a `.future` shape:
    /// `varint byte_len`, then `varint count` + count × `str` key names),
    /// under a key that starts with `localMarksKey`. (Tag 13 is the size
    /// budget's list of trimmed subtrees.)
    public static let localMarksTag: UInt8 = 14
    /// v1.2: the key of a record's list of LOCAL keys: "rst.local", or
    /// "rst.local.2", ... when the record's own values use it.
    public static let localMarksKey = "rst.local"

    /// Sealed payload: inner tag (1) + nonce (24) + the authentication tag (16).
    public static let sealedOverhead: Int = 1 + 24 + 16
    /// The flags this reader understands.
    public static let knownFlags: UInt16 = flagRecordVersions | flagRecordCarry
    /// magic(8) + version(2) + flags(2) + total_len(4).
    public static let fixedHeaderBytes: Int = ArchiveHeader.size
    /// The smallest well-formed archive: the fixed header, an info block with
    /// three empty strings (3), saved_at_ms (8) and object_count (1), two
    /// string-table counts (2) and the checksum (4).
    public static let minimumArchiveBytes: Int = 16 + 12 + 2 + 4
}
