import Synchronization
import RestorationArchive

/// What an engine keeps about its store: the store itself, its session,
/// and what it last wrote or read (to skip saving unchanged state). One
/// per engine that has a store (an archive path or a host's store).
final class Storage {
    let store: ArchiveStore
    /// Whether the previous process's session died (read once, at the
    /// first save or restore).
    var previousSessionDied: Bool?
    /// The session slot holds this process's session (until it is closed).
    var sessionRecorded: Bool { sessionState.load(ordering: .acquiring) == 1 }
    /// 1 while the session is recorded and not closed: `close()` may run
    /// from a signal handler, so it is an atomic, not the engine's lock.
    let sessionState = Atomic<Int>(0)
    /// How the session is ended without a lock (prepared when it is recorded).
    var closer: SessionCloser?
    /// A mapping of the session slot the closer zeroes (stores with `map`
    /// and no closer of their own).
    var sessionRegion: UnsafeMutableRawBufferPointer?
    /// The archive slot's content as of the last save or restore of this
    /// engine: its length and the CRC-32C of its bytes without `saved_at_ms`.
    var lastArchiveKey: (count: Int, crc: UInt32)?
    /// The archive in the store was read once to learn its key (an engine
    /// that saves before it restored or saved compares with it too); at
    /// most once per engine, and again only after a discard.
    var archiveKeyProbed = false
    /// A failure to record the session was logged (once per engine: a
    /// save that keeps failing for the same reason says it once).
    var sessionFailureLogged = false

    /// The engine's log (set once, when the engine is created): the storage
    /// room's one way back to it (StorageRoom.swift).
    var log: (LogLevel, String) -> Void = { _, _ in }

    init(store: ArchiveStore) { self.store = store }

    /// Empties every slot of `store`, and what it keeps beside them, under its lock.
    static func discardAll(_ st: ArchiveStore) throws(RestorationFailure) {
        try st.locked { () throws(RestorationFailure) in
            do throws(RestorationFailure) {
                for slot in [StoreSlot.archive, .marker, .session, .quarantine] { try st.remove(slot, 0) }
                for slot in [StoreSlot.crashed, .invalid, .generation] {
                    for i in try st.list(slot) { try st.remove(slot, i) }
                }
                try st.discardExtras()
            } catch {
                if st is FileArchiveStore || error.message.containsBytes(of: st.describe) { throw error }
                throw RestorationFailure(error.status, "cannot discard \(st.describe): \(error.message)")
            }
        }
    }

    /// The sentence of a store failure, naming the store.
    func named(_ f: RestorationFailure) -> RestorationFailure {
        f.message.containsBytes(of: store.describe) ? f : RestorationFailure(f.status, "\(store.describe): \(f.message)")
    }

    /// Ends the session: async-signal-safe when the store's closer is (the
    /// file store's, a mapping's), else through `remove`.
    func closeSession() {
        guard sessionState.exchange(0, ordering: .acquiringAndReleasing) == 1 else { return }
        if let c = closer { c.close(); return }
        if let r = sessionRegion, let b = r.baseAddress {
            b.initializeMemory(as: UInt8.self, repeating: 0, count: r.count)
            return
        }
        try? store.remove(.session, 0)
    }

    /// After a close through a mapping (zeroed: no session), the slot
    /// itself goes at destroy, where locks and allocation are fine.
    func removeClosedSession() {
        guard sessionRegion != nil, !sessionRecorded else { return }
        sessionRegion = nil
        try? store.remove(.session, 0)
    }

    /// `key` of archive bytes: the length and the CRC of everything but the
    /// save time (`saved_at_ms`) and the checksum; nil when malformed.
    static func key(_ b: UnsafeRawBufferPointer) -> (count: Int, crc: UInt32)? {
        guard let r = savedAtRange(b) else { return nil }
        var crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[0..<r.lowerBound]))
        crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[r.upperBound..<(b.count - 4)]), continuing: crc)
        return (b.count, crc)
    }

    /// Where `saved_at_ms` lies (the codec's `ArchiveHeader.savedAtRange`).
    static func savedAtRange(_ b: UnsafeRawBufferPointer) -> Range<Int>? {
        ArchiveHeader.savedAtRange(in: b)
    }

    /// True when `a` and `b` are the same archive but for the save time.
    static func sameButTime(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count, let ra = savedAtRange(a), let rb = savedAtRange(b), ra == rb else { return false }
        return a[0..<ra.lowerBound].elementsEqual(b[0..<ra.lowerBound])
            && a[ra.upperBound..<(a.count - 4)].elementsEqual(b[ra.upperBound..<(b.count - 4)])
    }
}
