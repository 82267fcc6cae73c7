import RestorationArchive

/// The storage room: the engine's side of sessions, restore reasons,
/// generations and fallback, set-asides and discard, all through the store
/// (`Storage` keeps its state). Everything here runs under the engine's
/// lock, except `closeSession()`. The room reaches the engine only through
/// `log` and the restore it is handed (`RestoreSlot`).
extension Storage {
    /// Reads what the previous process left (once), then records this
    /// process's session in the store when it is not yet. `atSave`: a
    /// failure is logged only when the archive's place exists (a restore
    /// before the first save may find no folder; the save records it).
    @discardableResult
    func openSession(quiet: Bool = false) -> Status? {
        if previousSessionDied == nil {
            for p in MachineIdentity.current.problems { log(.warning, p) }
            if let held = try? store.read(.session, 0), let r = SessionFile.parseRecord(held.takeArray()) {
                if r.isOtherMachine {
                    // Not judged by its pid: that process runs (or ran) elsewhere.
                    previousSessionDied = true
                    let began = r.beganMs.map { " (its session began at \(SystemInfo.utcText(ms: $0)))" } ?? ""
                    log(.warning, "the previous session of \(store.describe) was recorded on \(MachineIdentity.describe(host: r.host ?? "", id: r.machine ?? ""))\(began) and not ended: it died there, or that machine may still be running it; restoring as RECOVER")
                } else {
                    previousSessionDied = !CrashGuard.isAlive(r.owner)
                }
            } else {
                previousSessionDied = false
            }
        }
        guard !sessionRecorded else { return nil }
        KillPoints.logSettingsOnce(log)
        let bytes = Array(SessionFile.encode(CrashGuard.current).utf8)
        do throws(RestorationFailure) {
            if closer == nil, let c = store.sessionCloser() {
                closer = c
            }
            var mapped: UnsafeMutableRawBufferPointer? = nil
            if closer == nil && store.canMap {
                do throws(RestorationFailure) { mapped = try store.map(.session, length: bytes.count) } catch {
                    // A mapping that cannot be backed (a full file system): written once instead.
                    if error.status != .notFound && !sessionFailureLogged {
                        log(.warning, "cannot map the session in \(store.describe): \(error.message); it is written once instead")
                    }
                    if error.status == .notFound { throw error }
                }
            }
            if let r = mapped {
                guard r.count >= bytes.count, let b = r.baseAddress else {
                    throw RestorationFailure(.io, "its map gave \(r.count) bytes, not \(bytes.count)")
                }
                bytes.withUnsafeBytes { b.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
                sessionRegion = r
            } else {
                try store.write(.session, 0, bytes)
            }
            sessionState.store(1, ordering: .releasing)
            return nil
        } catch {
            if (!quiet || error.status != .notFound) && !sessionFailureLogged {
                sessionFailureLogged = true
                log(.warning, "cannot record the session in \(store.describe): \(error.message); a crash of this process will read as a clean end")
            }
            return error.status
        }
    }

    /// The reason a restore of the current archive has.
    private func currentReason() -> RestoreReason { previousSessionDied == true ? .recover : .relaunch }

    /// Reads and validates a slot (nil: empty).
    func load(_ slot: StoreSlot, _ index: UInt64, _ source: String) throws(RestorationFailure) -> ArchiveReader? {
        let held: StoreBytes?
        do throws(RestorationFailure) { held = try store.read(slot, index) } catch { throw named(error) }
        guard let held else { return nil }
        if held.bytes.count > RestorationLimits.maxArchiveBytes {
            held.release()
            throw RestorationFailure(.limit, "\(source) is \(held.bytes.count) bytes; the limit is \(RestorationLimits.maxArchiveBytes) bytes (RST_MAX_ARCHIVE_BYTES)")
        }
        return try Engine.validate(held: held, source: source)
    }

    func source(_ slot: StoreSlot, _ index: UInt64) -> String {
        if let f = store as? FileArchiveStore { return "archive '\(f.file(slot, index))'" }
        return slot == .archive ? "the archive in \(store.describe)" : "\(slot) \(index) in \(store.describe)"
    }

    /// Moves an invalid slot to INVALID intact (the lock held); its new index.
    private func setAsideInvalid(_ slot: StoreSlot, _ index: UInt64) throws(RestorationFailure) -> String {
        return try store.locked { () throws(RestorationFailure) -> String in
            let to = try store.freeIndex(.invalid, nowMs: SystemInfo.nowMs())
            do throws(RestorationFailure) { try store.move(slot, index, to: .invalid, to) } catch { throw named(error) }
            if let f = store as? FileArchiveStore { return "'\(f.file(.invalid, to))'" }
            return "invalid \(to) in \(store.describe)"
        }
    }

    /// `rst_restore`: the archive; missing or invalid, the newest valid
    /// generation (FALLBACK, the invalid archive set aside intact). None
    /// restorable though one existed: RESET, every invalid one set aside
    /// intact, the current archive's failure thrown (notFound when only
    /// generations existed). Nothing existed: FIRST_LAUNCH and notFound.
    func restoreWithFallback(generations: Int, outcomes: RestoreOutcomes, restore: RestoreSlot) throws(RestorationFailure) {
        openSession(quiet: true)
        outcomes.begin(.firstLaunch, generation: 0)
        var failure: RestorationFailure
        var archiveInvalid = false
        do throws(RestorationFailure) {
            if let reader = try load(.archive, 0, source(.archive, 0)) {
                try restore(.archive, 0, reader, currentReason())
                return
            }
            failure = RestorationFailure(.notFound, "there is no archive in \(store.describe)")
            if let f = store as? FileArchiveStore { failure = RestorationFailure(.notFound, "there is no archive at '\(f.path)'") }
        } catch where [.corrupt, .version, .limit].contains(error.status) {
            failure = error
            archiveInvalid = true
        }
        // Missing or invalid: the newest valid generation, if any.
        var invalidGenerations: [UInt64] = []
        let present = generations > 0 ? ((try? store.list(.generation)) ?? []) : []
        for k in present.sorted() where k >= 1 && k <= UInt64(FileStore.maxGenerations) {
            let reader: ArchiveReader?
            do throws(RestorationFailure) { reader = try load(.generation, k, source(.generation, k)) } catch {
                if [.corrupt, .version, .limit].contains(error.status) { invalidGenerations.append(k) }
                continue
            }
            guard let reader else { continue }
            if archiveInvalid {
                let aside = try setAsideInvalid(.archive, 0)
                log(.warning, "\(failure.message); set aside as \(aside); restoring generation \(k) (\(source(.generation, k)))")
            } else {
                log(.warning, "\(failure.message); restoring generation \(k) (\(source(.generation, k)))")
            }
            try restore(.generation, k, reader, .fallback)
            return
        }
        guard archiveInvalid || !invalidGenerations.isEmpty else { throw failure }
        // RESET: something existed, nothing could be restored. Every invalid
        // copy is kept, intact, where no save rotates or overwrites it.
        outcomes.begin(.reset, generation: nil)
        lastArchiveKey = nil
        var asides: [String] = []
        if archiveInvalid { asides.append(try setAsideInvalid(.archive, 0)) }
        for k in invalidGenerations { asides.append(try setAsideInvalid(.generation, k)) }
        let msg = "\(failure.message); no generation could be restored either: starting over (RESET); set aside intact: \(asides.joined(separator: ", "))"
        log(.error, msg)
        throw RestorationFailure(failure.status, msg)
    }

    /// Keeps the archive now in the store as generation 1, shifting the
    /// others up to `keep` (the lock held): generation k moves to k+1,
    /// oldest first, then the archive is linked (or read and written) to
    /// generation 1. No archive: nothing to keep.
    func rotateGenerations(keep: Int) throws(RestorationFailure) {
        guard keep > 0 else { return }
        let st = store
        let what = "cannot keep the replaced archive of \(st.describe) as generation 1"
        let present: [UInt64]
        do throws(RestorationFailure) { present = try st.list(.archive) } catch { throw RestorationFailure(error.status, "\(what): \(error.message); the old archive is kept") }
        guard !present.isEmpty else { return }
        if keep >= 2 {
            let gens = Set((try? st.list(.generation)) ?? [])
            for k in stride(from: keep - 1, through: 1, by: -1) where gens.contains(UInt64(k)) {
                do throws(RestorationFailure) { try st.move(.generation, UInt64(k), to: .generation, UInt64(k + 1)) } catch where error.status != .notFound {
                    throw RestorationFailure(error.status, "\(what): shifting generation \(k) to \(k + 1) failed: \(error.message); the old archive is kept")
                }
            }
        }
        do throws(RestorationFailure) {
            if st.canLink {
                try st.link(.archive, 0, to: .generation, 1)
            } else if let held = try st.read(.archive, 0) {
                defer { held.release() }
                try st.write(.generation, 1, held.bytes, whenDurable: nil)
            }
        } catch {
            throw RestorationFailure(error.status, error.message.containsBytes(of: st.describe) ? "\(error.message); the old archive is kept" : "\(what): \(error.message); the old archive is kept")
        }
    }

    /// Writes a save's bytes to the store (the engine's lock held; the
    /// store's lock taken here): unchanged state writes nothing; else the
    /// generations rotate and the archive is replaced. Returns false when
    /// nothing was written (unchanged).
    func writeArchive(_ bytes: [UInt8], generations: Int) throws(RestorationFailure) -> Bool {
        let key = bytes.withUnsafeBytes { Storage.key($0) }
        let st = store
        return try st.locked { () throws(RestorationFailure) -> Bool in
            if let key, let last = lastArchiveKey, last == key,
               let held = try? st.read(.archive, 0) {
                let same = bytes.withUnsafeBytes { Storage.sameButTime($0, held.bytes) }
                held.release()
                if same { return false }
            } else if let key, lastArchiveKey == nil, !archiveKeyProbed {
                // Never restored nor saved: "the archive in place" is the
                // store's, read once (another engine or process wrote it).
                archiveKeyProbed = true
                if let held = try? st.read(.archive, 0) {
                    let same = bytes.withUnsafeBytes { Storage.sameButTime($0, held.bytes) }
                    held.release()
                    if same {
                        lastArchiveKey = key
                        return false
                    }
                }
            }
            try rotateGenerations(keep: generations)
            let isFile = st is FileArchiveStore
            do throws(RestorationFailure) {
                try bytes.withUnsafeBytes { b in
                    Result { () throws(RestorationFailure) in
                        try st.write(.archive, 0, b, whenDurable: { KillPoints.reach(.saveWritten) })
                    }
                }.get()
            } catch {
                throw isFile ? error : named(error)
            }
            KillPoints.reach(.saveReplaced)
            lastArchiveKey = key
            return true
        }
    }

    /// Sets the archive slot that crashed aside to CRASHED (the lock held).
    func setAsideCrashed(_ slot: StoreSlot, _ index: UInt64) throws(RestorationFailure) -> String {
        return try store.locked { () throws(RestorationFailure) -> String in
            let to = try store.freeIndex(.crashed, nowMs: SystemInfo.nowMs())
            do throws(RestorationFailure) { try store.move(slot, index, to: .crashed, to) } catch {
                throw RestorationFailure(error.status, "cannot set aside \(source(slot, index)): \(named(error).message)")
            }
            if slot == .archive { lastArchiveKey = nil }
            if let f = store as? FileArchiveStore { return "'\(f.file(.crashed, to))'" }
            return "crashed \(to) in \(store.describe)"
        }
    }

    /// `rst_discard`: every slot emptied, and what the store keeps beside
    /// them, under the store's lock.
    func discard() throws(RestorationFailure) {
        try Storage.discardAll(store)
        // The session went with the rest: the next save or restore records it again.
        sessionState.store(0, ordering: .releasing)
        sessionRegion = nil
        lastArchiveKey = nil
        archiveKeyProbed = false
    }
}

/// How the storage room has a slot restored: the engine's `restoreSlot`
/// (slot, index, the validated reader, the reason).
typealias RestoreSlot = (StoreSlot, UInt64, ArchiveReader, RestoreReason) throws(RestorationFailure) -> Void

extension Engine {
    /// Ends the session cleanly (engine destroy, `rst_close_session`, a
    /// signal that ends the process): the next restore reports RELAUNCH.
    /// Takes no lock and allocates nothing with the file store or a store
    /// that maps (async-signal-safe then); with another store it calls the
    /// store's `remove` of the session slot.
    public func closeSession() {
        storage?.closeSession()
    }

    /// `rst_restore_generation`: generation k on request (FALLBACK); k = 0:
    /// the current archive, as `restore()`. A missing one: notFound.
    public func restore(generation k: UInt32) throws(RestorationFailure) {
        if k == 0 { return try restore() }
        try lock.withLock { () throws(RestorationFailure) in
            guard let s = storage else {
                throw RestorationFailure(.invalid, "the engine has no archive_path")
            }
            guard k <= UInt32(FileStore.maxGenerations) else {
                throw RestorationFailure(.notFound, "there is no generation \(k) of \(s.store.describe) (at most \(FileStore.maxGenerations) are kept)")
            }
            s.openSession(quiet: true)
            let src = s.source(.generation, UInt64(k))
            guard let reader = try s.load(.generation, UInt64(k), src) else {
                if let f = s.store as? FileArchiveStore {
                    throw RestorationFailure(.notFound, "there is no generation \(k) of '\(f.path)' ('\(f.file(.generation, UInt64(k)))')")
                }
                throw RestorationFailure(.notFound, "there is no generation \(k) in \(s.store.describe)")
            }
            try restoreSlot(s, .generation, UInt64(k), reader: reader, reason: .fallback)
        }
    }

    /// The reason of the last restore (`rst_last_restore_reason`).
    public var lastRestoreReason: RestoreReason { lock.withLock { restoreReason } }
}
