import RestorationArchive

// Every skip explained (docs/EVOLUTION.md): every skipped record of a restore, with its reason. The restore
// steps note why a record was not produced (`RestorePass.note`); `explain`
// turns the notes into the list `rst_last_restore_skips` returns, in archive
// order, descendants included, one entry per record the report counts in
// `skipped`.

/// Why a record of the last restore was not restored (`rst_skip_reason`).
/// Stable numbers: 1...10 are the v1.1 contract; 11 is this library's
/// addition for a decode callback that reported failure.
public enum SkipReason: UInt32, Sendable, CaseIterable {
    /// Nothing registered at its path, no factory for its class, no fallback.
    case noFactory = 1
    /// The factory (or fallback) returned NULL.
    case declined = 2
    /// The factory returned an object that is not the one registered at the path.
    case factoryError = 3
    /// The class's plugin failed to load (or the class was rejected).
    case pluginRejected = 4
    /// An ancestor was skipped.
    case parentSkipped = 5
    /// The previous restore of this archive died in this record.
    case quarantined = 6
    /// No migration registered from the record's version.
    case noMigration = 7
    /// A migration returned an error.
    case migrationFailed = 8
    /// Saved by a newer version of its class.
    case tooNew = 9
    /// Its extended restoration missed the deadline.
    case expired = 10
    /// Its decode callback reported failure (`rst_coder_fail`, a Swift
    /// `decodeRestorableState` that threw): the object exists and keeps what
    /// it decoded, but is not counted as restored and gets no `finished`.
    case decodeFailed = 11
    /// Library 1.2: left out of the save that wrote the archive by its size
    /// budget (policy TRIM; Budget.swift). Only the top of each trimmed
    /// subtree is listed: its descendants were not saved.
    case trimmed = 12
}

/// One skipped record of the last restore (`rst_skipped_record`).
public struct SkippedRecord: Equatable, Sendable {
    /// Index of the record in the archive.
    public var record: Int
    public var path: String
    /// "" when the record has none.
    public var className: String
    public var reason: SkipReason
    /// The record's class version, as stored in the archive (0 for v1 archives).
    public var version: UInt32
    /// A sentence saying why.
    public var detail: String

    public init(record: Int, path: String, className: String, reason: SkipReason, version: UInt32, detail: String) {
        self.record = record
        self.path = path
        self.className = className
        self.reason = reason
        self.version = version
        self.detail = detail
    }
}

/// Why one record was not produced, noted by a restore step.
struct SkipNote {
    var reason: SkipReason
    var detail: String
}

/// The skips of one restore, kept compact: the record index, reason and
/// any detail a step noted. Paths, class names and the default sentences
/// are made only when asked (`records`), so a restore that skips a
/// 65,536-deep chain does no quadratic work unless the host asks for the
/// list. Keeps the restore's reader while there are skips.
final class SkipLedger {
    let reader: ArchiveReader?
    let entries: [(record: Int32, reason: SkipReason, detail: String?)]
    /// Library 1.2: the tops of the subtrees the archive's save trimmed
    /// (RST_SKIP_TRIMMED; not records of the archive), after the entries.
    let trimmed: [SkippedRecord]

    init(reader: ArchiveReader?, entries: [(record: Int32, reason: SkipReason, detail: String?)], trimmed: [SkippedRecord] = []) {
        self.reader = entries.isEmpty ? nil : reader
        self.entries = entries
        self.trimmed = trimmed
    }

    static let empty = SkipLedger(reader: nil, entries: [])

    var count: Int { entries.count + trimmed.count }

    var records: [SkippedRecord] {
        guard let reader else { return trimmed }
        return entries.map { e in
            let r = Int(e.record)
            let detail: String
            if let d = e.detail {
                detail = d
            } else if e.reason == .parentSkipped, let p = reader.parent(ofRecord: r) {
                detail = "its parent '\(reader.path(ofRecord: p))' was skipped"
            } else {
                detail = "no registered object, factory or fallback produced it"
            }
            return SkippedRecord(record: r, path: reader.path(ofRecord: r),
                                 className: reader.className(ofRecord: r).map { reader.name($0) } ?? "",
                                 reason: e.reason, version: reader.version(ofRecord: r), detail: detail)
        } + trimmed
    }
}

extension RestorePass {
    /// Notes why record r was not produced; the last note of a record wins
    /// ("when several producers were asked, the reason is the last one's").
    func note(_ r: Int, _ reason: SkipReason, _ detail: String) {
        notes[r] = SkipNote(reason: reason, detail: detail)
    }

    /// Every record the report counts as skipped, in archive order, with its reason.
    func explain() -> SkipLedger {
        var out: [(record: Int32, reason: SkipReason, detail: String?)] = []
        let reader = self.reader
        for r in 0..<reader.recordCount {
            let skipped = session.state[r] != .materialized
            let failedDecode = !skipped && !failed.isEmpty && failed.contains(r)
            guard skipped || failedDecode else { continue }
            if let n = notes[r] {
                out.append((Int32(r), n.reason, n.detail))
            } else if let p = reader.parent(ofRecord: r), session.state[p] != .materialized {
                out.append((Int32(r), .parentSkipped, nil))
            } else {
                out.append((Int32(r), .noFactory, nil))
            }
        }
        // The report outlives the restore: it keeps the archive as read, never
        // the copy with the sealed values opened, which is wiped at the end.
        return SkipLedger(reader: sealedSource ?? reader, entries: out)
    }
}

extension RestorePass {
    /// Notes why nothing produced record r when no producer left a note:
    /// no class, factory or fallback — or the plugin that declares its class
    /// was rejected.
    func noteUnproduced(_ r: Int) {
        guard let ci = reader.className(ofRecord: r) else {
            note(r, .noFactory, "no object is registered at its path, it has no class, and there is no fallback factory")
            return
        }
        let cls = name(ci)
        if let why = owner.classProvider?.rejection(forClass: cls) {
            note(r, .pluginRejected, "class '\(cls)' is declared by a plugin that could not be used: \(why)")
        } else {
            note(r, .noFactory, "no object is registered at its path, no host or plugin provides class '\(cls)', and there is no fallback factory")
        }
    }
}

extension Engine {
    /// Every record the last restore skipped, in archive order,
    /// descendants included; `count` equals `lastRestoreReport.skipped`.
    /// Empty before any restore reached pass 1.
    public var lastRestoreSkips: [SkippedRecord] {
        lock.withLock {
            deferred.checkDeadlines()
            return outcomes.skips.records
        }
    }
}
