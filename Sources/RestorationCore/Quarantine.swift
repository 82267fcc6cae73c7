#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import RestorationArchive

// v1.1 §6: per-object crash quarantine.
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

/// The `record=` field of a version-2 marker, mapped shared.
final class MarkerWatch {
    private var base: UnsafeMutableRawPointer?
    private let length: Int
    private let field: UnsafeMutableRawPointer?

    init?(fd: Int32, length: Int, offset: Int) {
        guard let p = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), p != MAP_FAILED else { return nil }
        base = p
        self.length = length
        field = p + offset
    }

    /// The callback of record r begins.
    @inline(__always) func enter(_ r: Int) {
        guard let f = field else { return }
        var v = r
        var i = 9
        while i >= 0 {
            f.storeBytes(of: UInt8(48 + v % 10), toByteOffset: i, as: UInt8.self)
            v /= 10
            i -= 1
        }
    }

    /// No object callback runs.
    @inline(__always) func leave() {
        guard let f = field else { return }
        for i in 0..<10 { f.storeBytes(of: UInt8(ascii: "-"), toByteOffset: i, as: UInt8.self) }
    }

    func unmap() {
        if let b = base { munmap(b, length) }
        base = nil
    }

    deinit { unmap() }
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

    /// The quarantine of `archive`, nil when there is none or it cannot be read as one.
    public static func read(_ archive: String) -> Entry? {
        guard let bytes = try? FileStore.read(path(archive), limit: 8192) else { return nil }
        return parse(bytes)
    }

    static func write(_ archive: String, _ e: Entry) throws(RestorationFailure) {
        let text = Array(encode(e).utf8)
        try text.withUnsafeBytes { b in
            Result { () throws(RestorationFailure) in try FileStore.atomicWrite(b, to: path(archive)) }
        }.get()
        // atomicWrite locks through '<quarantine>.lock': not needed beside it.
        _ = FileIO.unlink(FileStore.lockPath(path(archive)))
    }

    /// Ends the quarantine of `archive` (a save, a discard, a set-aside).
    /// Returns a warning when it exists and cannot be removed.
    @discardableResult
    static func clear(_ archive: String) -> String? {
        let p = path(archive)
        if FileStore.retrying({ FileIO.unlink(p) }) != 0 && errno != ENOENT {
            return "cannot remove the quarantine '\(p)': \(FileStore.errnoText())"
        }
        return nil
    }
}

extension Engine {
    /// Records the restore's marker watch (nil: no per-object naming).
    @inline(__always) func watchEnter(_ r: Int) { if let w = markerWatch { w.enter(r) } }
    @inline(__always) func watchLeave() { if let w = markerWatch { w.leave() } }

    /// v1.1 §6: the quarantined record of `archive` for these bytes, if any
    /// (a quarantine naming other bytes is removed).
    func quarantinedRecord(_ archive: String, bytes: UnsafeRawBufferPointer, recordCount: Int) -> Quarantine.Entry? {
        guard let q = Quarantine.read(archive) else {
            var st = stat()
            if FileIO.lstat(Quarantine.path(archive), &st) == 0 {
                log(.warning, "ignoring '\(Quarantine.path(archive))': it is not a quarantine this library wrote; removed")
                Quarantine.clear(archive)
            }
            return nil
        }
        if q.archive != CrashGuard.identity(of: bytes) || q.record >= recordCount {
            log(.info, "the quarantine '\(Quarantine.path(archive))' names another version of the archive; removed")
            Quarantine.clear(archive)
            return nil
        }
        return q
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
        guard let q = Quarantine.read(archive) else { return nil }
        let bytes = (try? FileStore.read(archive)) ?? []
        let current = bytes.withUnsafeBytes { CrashGuard.identity(of: $0) } == q.archive
        return QuarantineInfo(file: Quarantine.path(archive), record: q.record, path: q.path, pid: q.pid, current: current)
    }

    /// Ends the quarantine beside `archive` (the next restore restores the
    /// record again). Missing: nothing to do.
    public static func clearQuarantine(of archive: String) throws(RestorationFailure) {
        if let w = Quarantine.clear(archive) { throw RestorationFailure(.io, w) }
    }
}
