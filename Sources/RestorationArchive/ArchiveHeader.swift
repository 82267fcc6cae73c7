// The fixed header every archive starts with, described once: its fields,
// their offsets and how they are read and written. The validator, the
// writer, the rewriter and the size report use it; no other code names an
// offset inside the header.

/// The fixed header: magic(8) + version(2) + flags(2) + total_len(4), all
/// little-endian, followed by the info block (docs/FORMAT.md).
public struct ArchiveHeader: Equatable, Sendable {
    /// Offset of the 8 magic bytes.
    public static let magicOffset = 0
    /// Offset of the format version (UInt16).
    public static let versionOffset = 8
    /// Offset of the flags (UInt16).
    public static let flagsOffset = 10
    /// Offset of total_len (UInt32): the archive's size, checksum included.
    public static let lengthOffset = 12
    /// Offset of the info block, the first byte after the fixed header.
    public static let infoOffset = 16
    /// Bytes of the fixed header.
    public static let size = infoOffset

    public var version: UInt16
    public var flags: UInt16
    /// total_len: the bytes of the whole archive.
    public var length: UInt32

    public init(version: UInt16 = ArchiveFormat.version, flags: UInt16, length: UInt32) {
        self.version = version
        self.flags = flags
        self.length = length
    }

    /// The index of the first magic byte that differs from the format's
    /// (nil: the magic is right). `base` holds at least `size` bytes.
    static func magicMismatch(_ base: UnsafeRawPointer) -> Int? {
        for i in 0..<ArchiveFormat.magic.count
        where base.load(fromByteOffset: magicOffset + i, as: UInt8.self) != ArchiveFormat.magic[i] {
            return i
        }
        return nil
    }

    /// Reads the version, flags and length at `base` (at least `size` bytes;
    /// the magic is checked by `magicMismatch`).
    init(reading base: UnsafeRawPointer) {
        version = UInt16(littleEndian: base.loadUnaligned(fromByteOffset: ArchiveHeader.versionOffset, as: UInt16.self))
        flags = UInt16(littleEndian: base.loadUnaligned(fromByteOffset: ArchiveHeader.flagsOffset, as: UInt16.self))
        length = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: ArchiveHeader.lengthOffset, as: UInt32.self))
    }

    /// Writes the whole fixed header (magic included) at `base`.
    func write(to base: UnsafeMutableRawPointer) {
        for (i, b) in ArchiveFormat.magic.enumerated() {
            base.storeBytes(of: b, toByteOffset: ArchiveHeader.magicOffset + i, as: UInt8.self)
        }
        base.storeBytes(of: version.littleEndian, toByteOffset: ArchiveHeader.versionOffset, as: UInt16.self)
        base.storeBytes(of: flags.littleEndian, toByteOffset: ArchiveHeader.flagsOffset, as: UInt16.self)
        base.storeBytes(of: length.littleEndian, toByteOffset: ArchiveHeader.lengthOffset, as: UInt32.self)
    }
}

extension ArchiveHeader {
    /// Where the info block's `saved_at_ms` lies in archive bytes: after the
    /// fixed header and the info's three strings (app version, system
    /// version, idiom; each a varint length and its bytes), 8 bytes that a
    /// checksum follows; nil when the bytes cannot hold them. Read through
    /// the codec's one cursor and varint reader. It does not validate: the
    /// engine uses it to compare an archive with the one in its store
    /// without the save time.
    public static func savedAtRange(in b: UnsafeRawBufferPointer) -> Range<Int>? {
        guard let base = b.baseAddress, b.count >= infoOffset else { return nil }
        var c = ArchiveCursor(base, at: infoOffset)
        for _ in 0..<3 {
            guard let n = c.length(b.count) else { return nil }
            c.skip(n)
        }
        guard c.pos + 8 + 4 <= b.count else { return nil }
        return c.pos..<(c.pos + 8)
    }
}
