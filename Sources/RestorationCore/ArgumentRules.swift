import RestorationArchive
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The engine's limits (the RST_MAX_* macros of restoration.h).
public enum RestorationLimits {
    public static let maxArchiveBytes = ArchiveLimits.maxArchiveBytes
    public static let maxIdentifierBytes = ArchiveLimits.maxIdentifierBytes
    public static let maxClassNameBytes = ArchiveLimits.maxClassNameBytes
    public static let maxKeyBytes = ArchiveLimits.maxKeyBytes
    public static let maxRecordDepth = ArchiveLimits.maxRecordDepth
    public static let maxTreeDepth = ArchiveLimits.maxTreeDepth
    public static let maxValuesPerRecord = ArchiveLimits.maxValuesPerRecord
    public static let maxObjects = ArchiveLimits.maxObjects
}

/// Argument rules shared by every edge (C ABI, Swift API).
public enum ArgumentRules {
    /// Valid UTF-8 with no NUL byte: an ASCII fast path here, the rest by
    /// the archive's own validator (`isValidArchiveText`), so the engine
    /// accepts exactly the text an archive may hold.
    @inlinable @inline(__always)
    public static func isText(_ b: UnsafeRawBufferPointer) -> Bool {
        guard let p = b.baseAddress else { return true }
        // Eight bytes at a time: a word with a byte >= 0x80 or a zero byte
        // ((w - 0x01..) & ~w & 0x80.. is non-zero iff some byte is zero)
        // sends the rest to the full check.
        let n = b.count
        var i = 0
        while i &+ 8 <= n {
            let w = p.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            if (w | ((w &- 0x0101_0101_0101_0101) & ~w)) & 0x8080_8080_8080_8080 != 0 {
                return isValidArchiveText(UnsafeRawBufferPointer(start: p + i, count: n &- i))
            }
            i &+= 8
        }
        while i < n {
            let c = p.load(fromByteOffset: i, as: UInt8.self)
            if c == 0 || c >= 0x80 { return isValidArchiveText(UnsafeRawBufferPointer(start: p + i, count: n &- i)) }
            i &+= 1
        }
        return true
    }

    @inline(__always)
    static func key(_ b: UnsafeRawBufferPointer, location: @autoclosure () -> String) throws(RestorationFailure) {
        if b.count > 0 && b.count <= RestorationLimits.maxKeyBytes && isText(b) { return }
        if b.count == 0 { throw RestorationFailure(.invalid, "\(location()): the key is empty") }
        if b.count > RestorationLimits.maxKeyBytes {
            throw RestorationFailure(.limit, "\(location()): the key is \(b.count) bytes long; keys are at most \(RestorationLimits.maxKeyBytes) bytes (RST_MAX_KEY_BYTES)")
        }
        throw RestorationFailure(.invalid, "\(location()): the key is not valid UTF-8")
    }

    /// Identifier rules: non-empty UTF-8, no '/', at most 255 bytes.
    public static func identifier(_ id: String) throws(RestorationFailure) {
        var n = 0
        var slash = false
        var nul = false
        for b in id.utf8 {
            n &+= 1
            if b == UInt8(ascii: "/") { slash = true } else if b == 0 { nul = true }
        }
        if n == 0 { throw RestorationFailure(.invalid, "the identifier is empty") }
        if n > RestorationLimits.maxIdentifierBytes {
            throw RestorationFailure(.limit, "identifier '\(id.prefix(40))…' is \(n) bytes long; identifiers are at most \(RestorationLimits.maxIdentifierBytes) bytes (RST_MAX_IDENTIFIER_BYTES)")
        }
        if slash {
            throw RestorationFailure(.invalid, "identifier '\(id)' contains '/', which separates path components")
        }
        if nul { throw RestorationFailure(.invalid, "identifier contains a NUL byte") }
    }

    /// The same rules for an identifier given as bytes (already valid UTF-8).
    @inline(__always)
    public static func identifier(_ b: UnsafeRawBufferPointer) throws(RestorationFailure) {
        let n = b.count
        if n == 0 || n > RestorationLimits.maxIdentifierBytes || hasSlashOrNUL(b) {
            try identifier(String(decoding: b, as: UTF8.self))
        }
    }

    /// Whether `k` is a C identifier (measured with strlen: no NUL) of 1 to
    /// 8 bytes, all ASCII, without '/': then it is text (`isText`) and
    /// `identifier(_:)` accepts it. Decided from the key's prefix (its bytes
    /// with zero padding; a padding byte is not '/'). false: check the usual way.
    @inline(__always)
    static func isPlainShortCIdentifier(_ k: IdentifierKey) -> Bool {
        let n = k.bytes.count
        guard n >= 1 && n <= 8 && RestorationLimits.maxIdentifierBytes >= 8 && k.isASCII else { return false }
        let w = k.prefix ^ 0x2F2F_2F2F_2F2F_2F2F   // a '/' becomes a zero byte
        return (w &- 0x0101_0101_0101_0101) & ~w & 0x8080_8080_8080_8080 == 0
    }

    /// Whether `b` holds a '/' or a NUL byte (eight bytes at a time).
    @inline(__always)
    static func hasSlashOrNUL(_ b: UnsafeRawBufferPointer) -> Bool {
        guard let p = b.baseAddress else { return false }
        let n = b.count
        @inline(__always) func hasZeroByte(_ w: UInt64) -> Bool {
            (w &- 0x0101_0101_0101_0101) & ~w & 0x8080_8080_8080_8080 != 0
        }
        var i = 0
        while i &+ 8 <= n {
            let w = p.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            if hasZeroByte(w) || hasZeroByte(w ^ 0x2F2F_2F2F_2F2F_2F2F) { return true }
            i &+= 8
        }
        while i < n {
            let c = p.load(fromByteOffset: i, as: UInt8.self)
            if c == 0 || c == UInt8(ascii: "/") { return true }
            i &+= 1
        }
        return false
    }

    public static func className(_ name: String) throws(RestorationFailure) {
        let n = name.utf8.count
        if n == 0 { throw RestorationFailure(.invalid, "the class name is empty") }
        if n > RestorationLimits.maxClassNameBytes {
            throw RestorationFailure(.limit, "class name '\(name.prefix(40))…' is \(n) bytes long; class names are at most \(RestorationLimits.maxClassNameBytes) bytes (RST_MAX_CLASS_NAME_BYTES)")
        }
        for b in name.utf8 where b == 0 { throw RestorationFailure(.invalid, "class name contains a NUL byte") }
    }
}
