// The crash-loop policy of a restore from a store: what the marker a
// previous restore left (CrashGuard) and the quarantine (Quarantine) mean
// for restoring a slot now. One decision per slot — restore, skip one
// record, set the archive aside, refuse — then the acts that follow it.

import RestorationArchive

/// The crash-loop guard and quarantine as the engine uses them: examines
/// the marker and the quarantine of the store, decides, and acts (writes
/// the quarantine, sets the archive aside, clears the marker). Owned by
/// its engine; called under the engine's lock.
final class CrashPolicy {
    /// What a marker means for the slot about to be restored.
    enum Decision {
        /// Restore it: no marker, or one that condemns nothing (the
        /// warning, when there is one, is logged).
        case restore(warning: String?)
        /// A process died inside a callback of this record (quarantine on,
        /// first attempt): quarantine the record and its descendants,
        /// restore the rest.
        case skipRecord(Int, pid: Int32)
        /// A process died while restoring it: set the archive aside and
        /// refuse. `named`: the marker named a record the archive does not
        /// hold (the quarantine is left as it is).
        case setAside(pid: Int32, named: Bool)
        /// The marker cannot be read: refuse; the archive stays in place.
        case refuse(RestorationFailure)
    }

    /// Whether restores from the store are guarded at all, and whether a
    /// death inside one record's callback quarantines only that record.
    let guarded: Bool
    let quarantine: Bool
    /// Quarantine: names the running object callback's record in the marker
    /// (set for the length of one guarded restore).
    var watch: MarkerWatch?
    private unowned let engine: Engine

    init(engine: Engine, guarded: Bool, quarantine: Bool) {
        self.engine = engine
        self.guarded = guarded
        self.quarantine = quarantine
    }

    /// The decision for a marker's verdict about an archive of
    /// `recordCount` records (no store is touched).
    static func decide(_ verdict: CrashGuard.Verdict, quarantine: Bool, recordCount: Int) -> Decision {
        switch verdict {
        case .none: return .restore(warning: nil)
        case .ignore(let warning): return .restore(warning: warning)
        case .unreadable(let failure): return .refuse(failure)
        case .crashed(let marker) where quarantine && marker.record != nil && marker.attempt == 1:
            let r = marker.record!
            return r < recordCount ? .skipRecord(r, pid: marker.owner.pid) : .setAside(pid: marker.owner.pid, named: true)
        case .crashed(let marker):
            return .setAside(pid: marker.owner.pid, named: false)
        }
    }

    /// The marker's `attempt` for a restore (nil without quarantine: a
    /// version-1 marker); 2 when a quarantine is in effect, so that any
    /// death then sets the archive aside.
    func attempt(quarantined: Quarantine.Entry?) -> Int? {
        quarantine ? (quarantined == nil ? 1 : 2) : nil
    }

    /// Before restoring the store's `slot` (named `name`) read by `reader`:
    /// examines the marker, acts on the decision, and returns the record
    /// quarantined for this restore (nil: none).
    /// - Throws: `.rejected` when the archive was set aside; the marker's
    ///   read failure when it cannot be read.
    func admit(_ s: Storage, _ slot: StoreSlot, _ index: UInt64, name: String, reader: ArchiveReader) throws(RestorationFailure) -> Quarantine.Entry? {
        guard guarded else { return nil }
        let bytes = reader.archiveBytes
        switch CrashPolicy.decide(CrashGuard.examine(s.store, source: name, bytes: bytes), quarantine: quarantine, recordCount: reader.recordCount) {
        case .restore(let warning):
            if let warning { engine.log(.warning, warning) }
        case .refuse(let failure):
            throw failure
        case .skipRecord(let r, let pid):
            let recordPath = reader.path(ofRecord: r)
            do {
                try Quarantine.write(s.store, Quarantine.Entry(archive: CrashGuard.identity(of: bytes), record: r, path: recordPath, pid: pid))
            } catch { throw s.named(error) }
            if let w = CrashGuard.clear(s.store) { engine.log(.warning, w) }
            engine.log(.error, "a process (pid \(pid)) died in a callback of record \(r) ('\(recordPath)') while restoring \(name); that record and its descendants are quarantined (skipped) until the next save, and the rest is restored")
        case .setAside(let pid, named: true):
            let aside = try s.setAsideCrashed(slot, index)
            if let w = CrashGuard.clear(s.store) { engine.log(.warning, w) }
            throw RestorationFailure(.rejected, "a process (pid \(pid)) died while restoring \(name); the archive was set aside as \(aside)")
        case .setAside(let pid, named: false):
            let aside = try s.setAsideCrashed(slot, index)
            if let w = CrashGuard.clear(s.store) { engine.log(.warning, w) }
            Quarantine.clear(s.store)
            let msg = "a process (pid \(pid)) died while restoring \(name); the archive was set aside as \(aside) and will not be restored again"
            engine.log(.error, msg)
            throw RestorationFailure(.rejected, msg)
        }
        return quarantine ? quarantined(s.store, bytes: bytes, recordCount: reader.recordCount) : nil
    }

    /// The quarantine in effect for these bytes; one that names another
    /// version of the archive, or that this library did not write, is removed.
    func quarantined(_ store: ArchiveStore, bytes: UnsafeRawBufferPointer, recordCount: Int) -> Quarantine.Entry? {
        guard let q = Quarantine.read(store) else {
            if let present = try? store.list(.quarantine), !present.isEmpty {
                engine.log(.warning, "ignoring the quarantine of \(store.describe): it is not a quarantine this library wrote; removed")
                Quarantine.clear(store)
            }
            return nil
        }
        if q.archive != CrashGuard.identity(of: bytes) || q.record >= recordCount {
            engine.log(.info, "the quarantine of \(store.describe) names another version of the archive; removed")
            Quarantine.clear(store)
            return nil
        }
        return q
    }
}
