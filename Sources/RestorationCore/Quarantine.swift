#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import RestorationArchive

// Per-object crash quarantine (docs/EVOLUTION.md).
//
// An engine with quarantine (C: options version 2 without
// RST_ENGINE_NO_QUARANTINE, or RST_ENGINE_QUARANTINE with version 1) writes a
// version-2 crash-loop marker whose `record=` field names, while the restore
// runs, the record whose factory, migration, decode or finished is running
// (a shared mapping of the marker: one 10-byte store per callback, no system
// call; the page cache keeps it when the process is killed). The next
// restore that finds the marker of a dead process:
//   - names a record, and it was the first attempt: writes the quarantine
//     `<archive>.quarantine` naming that record (for these archive bytes),
//     removes the marker and restores, skipping the record and its
//     descendants (RST_SKIP_QUARANTINED);
//   - otherwise (no record: a death in should_restore, did_finish_restoring
//     or the engine; or a second death, attempt 2, while a quarantine was in
//     effect; or an engine without quarantine restores next): sets the
//     archive aside as in v1.
// The quarantine lasts until the next successful save (which removes it: the
// archive then holds the new state) or rst_discard; it is ignored (and
// removed) when it names other archive bytes.
//
//     restoration-quarantine 1
//     archive=<bytes>:<crc32c>
//     record=<index>
//     path=<record path>
//     pid=<the process that died>
//     end

/// The `record=` field of a version-2 marker, in the region the store's
/// `map` gave (the store owns the mapping).
final class MarkerWatch {
    private var field: UnsafeMutableRawPointer?

    init(base: UnsafeMutableRawPointer, offset: Int) {
        field = base + offset
    }

    /// The callback of record r begins: the field becomes r's last ten
    /// decimal digits, zero-padded. Written as one 2-byte and one 8-byte
    /// store, the eight low digits converted in a register (this runs twice
    /// per object callback of a restore from a store).
    @inline(__always) func enter(_ r: Int) {
        guard let f = field else { return }
        if _slowPath(r < 0) { MarkerWatch.storeDigitByDigit(f, r); return }
        let (high, low) = MarkerWatch.digits(UInt64(r))
        f.storeBytes(of: high, toByteOffset: 0, as: UInt16.self)
        f.storeBytes(of: low, toByteOffset: 2, as: UInt64.self)
    }

    /// No object callback runs: the field becomes ten dashes.
    @inline(__always) func leave() {
        guard let f = field else { return }
        f.storeBytes(of: 0x2D2D, toByteOffset: 0, as: UInt16.self)
        f.storeBytes(of: 0x2D2D_2D2D_2D2D_2D2D, toByteOffset: 2, as: UInt64.self)
    }

    /// The ten ASCII digits of v modulo 10^10 as they lie in memory (a
    /// little-endian machine): the first two, then the other eight.
    @inline(__always) static func digits(_ v: UInt64) -> (UInt16, UInt64) {
        let top = (v / 100_000_000) % 100
        let high = UInt16(truncatingIfNeeded: 0x30 &+ top / 10) | (UInt16(truncatingIfNeeded: 0x30 &+ top % 10) &<< 8)
        let eight = v % 100_000_000
        // Four-digit halves in 32-bit lanes, then two-digit quarters in
        // 16-bit lanes, then digits in bytes (x * 10486 >> 20 is x / 100
        // for x < 10,000; x * 103 >> 10 is x / 10 for x < 100).
        var x = (eight / 10_000) | ((eight % 10_000) &<< 32)
        let hundreds = ((x &* 10486) &>> 20) & 0x0000_007F_0000_007F
        x = hundreds | ((x &- hundreds &* 100) &<< 16)
        let tens = ((x &* 103) &>> 10) & 0x000F_000F_000F_000F
        x = tens | ((x &- tens &* 10) &<< 8)
        return (UInt16(littleEndian: high), UInt64(littleEndian: x | 0x3030_3030_3030_3030))
    }

    /// The plain way, kept for a negative r (never a record index).
    static func storeDigitByDigit(_ f: UnsafeMutableRawPointer, _ r: Int) {
        var v = r
        var i = 9
        while i >= 0 {
            f.storeBytes(of: UInt8(truncatingIfNeeded: 48 + v % 10), toByteOffset: i, as: UInt8.self)
            v /= 10
            i -= 1
        }
    }

    /// The region is about to go: no more stores through it.
    func unmap() { field = nil }
}

enum Quarantine {
    static let magic = "restoration-quarantine 1"

    static func path(_ archive: String) -> String { archive + ".quarantine" }

    struct Entry: Equatable {
        var archive: String
        var record: Int
        var path: String
        var pid: Int32
    }

    static func encode(_ e: Entry) -> String {
        "\(magic)\narchive=\(e.archive)\nrecord=\(e.record)\npath=\(e.path)\npid=\(e.pid)\nend\n"
    }

    static func parse(_ bytes: [UInt8]) -> Entry? {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count == 7, lines[0] == magic, lines[5] == "end", lines[6].isEmpty else { return nil }
        func value(_ line: Substring, _ key: String) -> String? {
            guard line.hasPrefix(key + "=") else { return nil }
            return String(line.dropFirst(key.count + 1))
        }
        guard let a = value(lines[1], "archive"), let r = value(lines[2], "record").flatMap({ Int($0) }), r >= 0,
              let p = value(lines[3], "path"), let pid = value(lines[4], "pid").flatMap({ Int32($0) }) else { return nil }
        return Entry(archive: a, record: r, path: p, pid: pid)
    }

    /// The quarantine in `store`, nil when there is none or it cannot be read as one.
    static func read(_ store: ArchiveStore) -> Entry? {
        guard let bytes = try? store.readArray(.quarantine) else { return nil }
        return parse(bytes)
    }

    static func write(_ store: ArchiveStore, _ e: Entry) throws(RestorationFailure) {
        try store.write(.quarantine, 0, Array(encode(e).utf8))
    }

    /// Ends the quarantine (a save, a discard, a set-aside). Returns a
    /// warning when it exists and cannot be removed.
    @discardableResult
    static func clear(_ store: ArchiveStore) -> String? {
        do throws(RestorationFailure) { try store.remove(.quarantine, 0) } catch {
            return "cannot remove the quarantine of \(store.describe): \(error.message)"
        }
        return nil
    }
}

/// A quarantine as tools see it (`restorectl quarantine`).
public struct QuarantineInfo: Equatable, Sendable {
    /// The quarantine file, `<archive>.quarantine`.
    public var file: String
    /// The record index and path the dead restore was in.
    public var record: Int
    public var path: String
    /// The process that died.
    public var pid: Int32
    /// Whether it names the archive's current bytes (else the next restore removes it).
    public var current: Bool
}

extension Engine {
    /// The quarantine beside `archive`, nil when there is none (or the file
    /// there is not one).
    public static func quarantine(of archive: String) -> QuarantineInfo? {
        let store = FileArchiveStore(path: archive)
        guard let q = Quarantine.read(store) else { return nil }
        let bytes = (try? FileStore.read(archive)) ?? []
        let current = bytes.withUnsafeBytes { CrashGuard.identity(of: $0) } == q.archive
        return QuarantineInfo(file: Quarantine.path(archive), record: q.record, path: q.path, pid: q.pid, current: current)
    }

    /// Ends the quarantine beside `archive` (the next restore restores the
    /// record again). Missing: nothing to do.
    public static func clearQuarantine(of archive: String) throws(RestorationFailure) {
        if let w = Quarantine.clear(FileArchiveStore(path: archive)) { throw RestorationFailure(.io, w) }
    }
}
