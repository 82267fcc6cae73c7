// What restores come to: the reason and generation of the restore in
// progress or last done, its counts (`lastRestoreReport`) and the records
// it skipped with their reasons (`lastRestoreSkips`), kept until the next
// restore begins. A token that expires later changes them (Deferred.swift).

import RestorationArchive

/// The outcome of the restore in progress or last done. Owned by its
/// engine; read and changed under the engine's lock.
final class RestoreOutcomes {
    /// Why this restore happened and which generation it read (0: the
    /// archive itself, or a buffer).
    private(set) var reason: RestoreReason = .firstLaunch
    private(set) var generation: UInt32 = 0
    /// The counts; nil before any restore reached pass 1.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private(set) var counts: RestoreCounts?
    /// The skipped records, explained.
    private(set) var skips = SkipLedger.empty

    /// A restore begins (or a restore from the store found nothing): its
    /// reason and generation (nil: the generation stays as it is); the
    /// counts and skips stay those of the last restore that reached pass 1
    /// until `record` replaces them.
    func begin(_ reason: RestoreReason, generation: UInt32?) {
        self.reason = reason
        if let generation { self.generation = generation }
    }

    /// The restore reached its report: its counts and skips, plus the
    /// subtrees its save left out (`trimmed`, size budgets), which count
    /// as skipped and are listed after the ledger's own entries.
    func record(_ counts: RestoreCounts, _ skips: SkipLedger, trimmed: [SkippedRecord], reader: ArchiveReader) {
        var counts = counts
        var skips = skips
        if !trimmed.isEmpty {
            skips = SkipLedger(reader: reader, entries: skips.entries, trimmed: trimmed)
            counts.skipped += UInt64(trimmed.count)
        }
        self.counts = counts
        self.skips = skips
    }

    /// Record `record` did not finish after all (its token expired): one
    /// restored fewer, one skipped more, with `reason` and `detail`.
    func unrestore(record: Int, reason: SkipReason, detail: String, reader: ArchiveReader?) {
        skips = skips.adding(record: record, reason: reason, detail: detail, reader: reader)
        if var r = counts {
            if r.restored > 0 { r.restored -= 1 }
            r.skipped += 1
            counts = r
        }
    }
}
