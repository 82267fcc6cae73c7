#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The crash-loop guard: the store's marker slot (the file store's
/// `<archive>.restoring`) records the process that is restoring an archive,
/// and which archive. All its I/O goes through the store. The states and rules
/// (docs/ARCHITECTURE.md, "The crash-loop marker"):
///
/// - absent: no restore is running or died.
/// - **valid** (every line below, in order, nothing else): a restore began.
///   It condemns the archive (set aside as `<archive>.crashed-<ms>`) only
///   when it names *this* archive (its size and checksum), *this* boot, and
///   a process that is gone (pid and start time: a pid alone is reused).
/// - anything else — empty (emptied on purpose, or lost to a power loss),
///   torn, foreign, an older format, a FIFO or directory — is **unusable**:
///   it never condemns an archive; the next restore ignores it with a
///   warning and replaces it.
///
///     restoration-crash-marker 1
///     pid=<decimal>
///     start=<decimal clock ticks since boot>
///     boot=<boot id>
///     archive=<bytes>:<crc32c of the archive, 8 hex digits>
///     end
///
/// The file store never writes the marker through a FIFO or symlink
/// (O_NOFOLLOW, O_NONBLOCK, O_EXCL after removing a regular file), never
/// reads it from one (O_NONBLOCK, S_IFREG). Failing to remove it at the end
/// of a restore is reported (a warning) and repaired: a mapped marker is
/// zeroed first, one written with `write` is emptied, and the next save that
/// writes, restore or discard removes it.
enum CrashGuard {
    struct Owner: Equatable {
        var pid: Int32
        var start: UInt64
        var boot: String
    }

    struct Marker: Equatable {
        var owner: Owner
        /// `identity(of:)` of the archive being restored.
        var archive: String
        /// Quarantine (version-2 markers, written by engines with quarantine):
        /// which restore of this archive it is (1; 2 when a quarantine was
        /// in effect: a death then sets the archive aside), and the record
        /// whose callback was running (nil: none, or a version-1 marker).
        var attempt: Int = 1
        var record: Int? = nil
        var isVersion2 = false
    }

    static let magic = "restoration-crash-marker 1"
    /// Quarantine (docs/EVOLUTION.md): version 2 adds `attempt=` and `record=` (10 characters,
    /// rewritten in place through a shared mapping while the restore runs:
    /// ten '-' outside object callbacks, else the record index, 10 digits).
    static let magic2 = "restoration-crash-marker 2"
    static let noRecord = "----------"

    static var current: Owner {
        let pid = getpid()
        return Owner(pid: pid, start: SystemInfo.startTime(of: pid) ?? 0, boot: SystemInfo.bootID)
    }

    /// Tests only: markers of this process count as left by a process that
    /// died (what the next process would see).
    nonisolated(unsafe) static var simulateNextProcess = false

    /// An archive's identity in markers: its size and its stored checksum
    /// (the last 4 bytes, CRC-32C): the very bytes that were being restored.
    static func identity(of bytes: UnsafeRawBufferPointer) -> String {
        var crc: UInt32 = 0
        if bytes.count >= 4 {
            for i in (bytes.count - 4)..<bytes.count { crc = crc << 8 | UInt32(bytes[i]) }
        }
        let hex = String(crc, radix: 16)
        return "\(bytes.count):" + String(repeating: "0", count: 8 - hex.count) + hex
    }

    static func encode(_ m: Marker) -> String {
        if m.isVersion2 {
            return "\(magic2)\npid=\(m.owner.pid)\nstart=\(m.owner.start)\nboot=\(m.owner.boot)\narchive=\(m.archive)\nattempt=\(m.attempt)\nrecord=\(noRecord)\nend\n"
        }
        return "\(magic)\npid=\(m.owner.pid)\nstart=\(m.owner.start)\nboot=\(m.owner.boot)\narchive=\(m.archive)\nend\n"
    }

    /// The marker in `text`, or nil when it is not a complete, well-formed marker.
    static func parse(_ bytes: [UInt8]) -> Marker? {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        func value(_ line: Substring, _ key: String) -> Substring? {
            guard line.hasPrefix(key + "=") else { return nil }
            let v = line.dropFirst(key.count + 1)
            return v.isEmpty ? nil : v
        }
        if lines.count == 9, lines[0] == magic2, lines[7] == "end", lines[8].isEmpty {
            guard var m = parse(Array((magic + "\n" + lines[1...4].joined(separator: "\n") + "\nend\n").utf8)),
                  let a = value(lines[5], "attempt"), let attempt = Int(a), attempt >= 1,
                  let r = value(lines[6], "record"), r.utf8.count == noRecord.utf8.count else { return nil }
            m.attempt = attempt
            m.isVersion2 = true
            if r != noRecord {
                guard r.allSatisfy({ $0.isASCII && $0.isNumber }), let index = Int(r) else { return nil }
                m.record = index
            }
            return m
        }
        // Six lines and the empty string after the final newline.
        guard lines.count == 7, lines[0] == magic, lines[5] == "end", lines[6].isEmpty else { return nil }
        guard let p = value(lines[1], "pid"), let pid = Int32(p), pid > 0,
              let s = value(lines[2], "start"), let start = UInt64(s),
              let boot = value(lines[3], "boot"),
              let archive = value(lines[4], "archive"), archive.utf8.contains(UInt8(ascii: ":")) else { return nil }
        return Marker(owner: Owner(pid: pid, start: start, boot: String(boot)), archive: String(archive))
    }

    enum Reading: Equatable {
        case absent
        /// Present but not a marker the guard may act on; the reason, for the warning.
        case unusable(String)
        /// It may be a marker, but an I/O error kept it from being read.
        case unreadable(String)
        case valid(Marker)
    }

    /// Reads the store's marker slot.
    static func read(_ store: ArchiveStore) -> Reading {
        let held: StoreBytes?
        do throws(RestorationFailure) { held = try store.read(.marker, 0) } catch {
            // Present but not the engine's (a FIFO, a link, too large): unusable.
            return error.status == .corrupt ? .unusable(error.message) : .unreadable(error.message)
        }
        guard let held else { return .absent }
        let bytes = held.takeArray()
        if bytes.isEmpty { return .unusable("it is empty (a finished restore emptied it, or a power loss lost its contents)") }
        guard let m = parse(bytes) else {
            return .unusable("it is not a complete marker (torn, foreign, emptied or of an older version)")
        }
        return .valid(m)
    }

    /// True when the marker's process is still running (same boot, same pid, same start time).
    static func isAlive(_ o: Owner) -> Bool {
        if simulateNextProcess && o.pid == getpid() { return false }
        guard o.pid > 0, o.boot == SystemInfo.bootID else { return false }
        guard let start = SystemInfo.startTime(of: o.pid) else { return false }
        return start == o.start
    }

    enum Verdict {
        case none
        /// The marker could not be read (an I/O error): restoring could
        /// repeat a crash, setting aside could condemn a good archive, so
        /// neither is done: the restore fails with this error.
        case unreadable(RestorationFailure)
        /// Leave the archive alone; log this warning.
        case ignore(String)
        /// A process died while restoring these very bytes.
        case crashed(Marker)
    }

    /// "crash-loop marker '<archive>.restoring'" (the file store, as in
    /// 1.1), else "the crash-loop marker of <describe>".
    static func markerName(_ store: ArchiveStore) -> String {
        if let f = store as? FileArchiveStore { return "crash-loop marker '\(f.file(.marker, 0))'" }
        return "the crash-loop marker of \(store.describe)"
    }

    /// What the marker says about restoring `bytes` now (`source` names them).
    static func examine(_ store: ArchiveStore, source: String, bytes: UnsafeRawBufferPointer) -> Verdict {
        let path = markerName(store)
        switch read(store) {
        case .absent:
            return .none
        case .unusable(let why):
            return .ignore("ignoring \(path): \(why); it does not condemn the archive")
        case .unreadable(let why):
            return .unreadable(RestorationFailure(.io, "cannot restore \(source): \(path) cannot be read (\(why)); the archive is left in place, not set aside"))
        case .valid(let m):
            if m.archive != identity(of: bytes) {
                return .ignore("ignoring \(path): it names another version of the archive (\(m.archive), now \(identity(of: bytes))), which a save replaced")
            }
            if m.owner.boot != SystemInfo.bootID {
                return .ignore("ignoring \(path): it was left by process \(m.owner.pid) of an earlier boot, whose restore a shutdown or power loss may have ended")
            }
            if isAlive(m.owner) {
                return .ignore("\(path): process \(m.owner.pid) is restoring this archive now")
            }
            return .crashed(m)
        }
    }

    /// A marker written for a restore in progress: its store and (version
    /// 2, through the store's `map`) the mapping that names the record whose
    /// callback runs.
    struct Token {
        let store: ArchiveStore
        var region: UnsafeMutableRawBufferPointer? = nil
        var watch: MarkerWatch? = nil
        /// Why the marker is not the one asked for (a mapping that could not
        /// be backed), for the caller's log.
        var note: String? = nil
    }

    /// Writes the marker before the restore's callbacks run. A marker that
    /// cannot be written is an error for the caller to report (the restore
    /// then runs without the guard). `attempt` (quarantine) with a store
    /// that maps: a version-2 marker in a shared mapping; else a version-1
    /// marker written once.
    static func begin(_ store: ArchiveStore, bytes: UnsafeRawBufferPointer, attempt: Int? = nil) throws(RestorationFailure) -> Token {
        var marker = Marker(owner: current, archive: identity(of: bytes))
        if let attempt, store.canMap {
            marker.isVersion2 = true
            marker.attempt = attempt
        }
        let text = Array(encode(marker).utf8)
        let what = "cannot write \(markerName(store))"
        guard marker.isVersion2 else {
            do throws(RestorationFailure) { try store.write(.marker, 0, text) } catch {
                throw RestorationFailure(error.status, error.message.containsBytes(of: store.describe) ? error.message : "\(what): \(error.message)")
            }
            return Token(store: store)
        }
        do throws(RestorationFailure) { try store.remove(.marker, 0) } catch {
            throw RestorationFailure(error.status, "\(what): \(error.message)")
        }
        let region: UnsafeMutableRawBufferPointer
        do throws(RestorationFailure) { region = try store.map(.marker, length: text.count) } catch {
            // A mapping that cannot be backed (a full file system): the marker
            // is written once instead, as for a store without `map`: a death
            // during this restore then sets the archive aside.
            let why = error.message.containsBytes(of: store.describe) ? error.message : "\(what): \(error.message)"
            var plain = marker
            plain.isVersion2 = false
            plain.attempt = 1
            do throws(RestorationFailure) { try store.write(.marker, 0, Array(encode(plain).utf8)) } catch {
                throw RestorationFailure(error.status, "\(why); nor can it be written once: \(error.message)")
            }
            var token = Token(store: store)
            token.note = "\(why); the marker was written once instead (a death during this restore sets the archive aside rather than one record)"
            return token
        }
        guard region.count >= text.count, let base = region.baseAddress else {
            throw RestorationFailure(.io, "\(what): its map gave \(region.count) bytes, not \(text.count)")
        }
        text.withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: text.count) }
        var token = Token(store: store, region: region)
        if let at = search(text, Array("record=\(noRecord)\n".utf8)) {
            token.watch = MarkerWatch(base: base, offset: at + "record=".utf8.count)
        }
        return token
    }

    private static func search(_ hay: [UInt8], _ needle: [UInt8]) -> Int? {
        guard hay.count >= needle.count else { return nil }
        for i in 0...(hay.count - needle.count) where hay[i..<(i + needle.count)].elementsEqual(needle) { return i }
        return nil
    }

    /// Removes the marker of a finished restore. A mapped marker is zeroed
    /// first (zeros condemn nothing); one written with `write` is emptied
    /// when it cannot be removed. Returns a warning when it could not be removed.
    static func end(_ t: Token) -> String? {
        t.watch?.unmap()
        if let r = t.region, let b = r.baseAddress { b.initializeMemory(as: UInt8.self, repeating: 0, count: r.count) }
        var last: RestorationFailure?
        for _ in 0..<3 {
            do throws(RestorationFailure) { try t.store.remove(.marker, 0); return nil } catch { last = error }
        }
        let e = last!
        if t.region != nil {
            return "cannot remove \(markerName(t.store)) after the restore: \(e.message); it was zeroed instead (it condemns nothing) and its removal will be retried"
        }
        do {
            try t.store.write(.marker, 0, [])
            return "cannot remove \(markerName(t.store)) after the restore: \(e.message); it was emptied instead (an empty marker condemns nothing) and its removal will be retried"
        } catch {
            return "cannot remove \(markerName(t.store)) after the restore: \(e.message), nor empty it: \(error.message); until it is removed, the next process may take this restore for a crash"
        }
    }

    /// Removes the marker after a save (it names the replaced archive) or
    /// when the archive is set aside; a warning when it cannot.
    static func clear(_ store: ArchiveStore) -> String? {
        do {
            try store.remove(.marker, 0)
            return nil
        } catch {
            return "cannot remove \(markerName(store)): \(error.message) (it names the previous archive, so it condemns nothing)"
        }
    }
}
