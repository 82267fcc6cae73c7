import RestorationArchive

/// The engine's side of sessions, restore reasons, generations and
/// fallback, all through its store. Everything here runs under the
/// engine's lock, except `closeSession()`.
extension Engine {
    /// Reads what the previous process left (once), then records this
    /// process's session in the store when it is not yet. `atSave`: a
    /// failure is logged only when the archive's place exists (a restore
    /// before the first save may find no folder; the save records it).
    @discardableResult
    func openSession(_ s: Storage, quiet: Bool = false) -> Status? {
        if s.previousSessionDied == nil {
            for p in MachineIdentity.current.problems { log(.warning, p) }
            if let held = try? s.store.read(.session, 0), let r = SessionFile.parseRecord(held.takeArray()) {
                if r.isOtherMachine {
                    // Not judged by its pid: that process runs (or ran) elsewhere.
                    s.previousSessionDied = true
                    let began = r.beganMs.map { " (its session began at \(SystemInfo.utcText(ms: $0)))" } ?? ""
                    log(.warning, "the previous session of \(s.store.describe) was recorded on \(MachineIdentity.describe(host: r.host ?? "", id: r.machine ?? ""))\(began) and not ended: it died there, or that machine may still be running it; restoring as RECOVER")
                } else {
                    s.previousSessionDied = !CrashGuard.isAlive(r.owner)
                }
            } else {
                s.previousSessionDied = false
            }
        }
        guard !s.sessionRecorded else { return nil }
        KillPoints.logSettingsOnce(self)
        let bytes = Array(SessionFile.encode(CrashGuard.current).utf8)
        do throws(RestorationFailure) {
            if s.closer == nil, let c = s.store.sessionCloser() {
                s.closer = c
            }
            var mapped: UnsafeMutableRawBufferPointer? = nil
            if s.closer == nil && s.store.canMap {
                do throws(RestorationFailure) { mapped = try s.store.map(.session, length: bytes.count) } catch {
                    // A mapping that cannot be backed (a full file system): written once instead.
                    if error.status != .notFound && !s.sessionFailureLogged {
                        log(.warning, "cannot map the session in \(s.store.describe): \(error.message); it is written once instead")
                    }
                    if error.status == .notFound { throw error }
                }
            }
            if let r = mapped {
                guard r.count >= bytes.count, let b = r.baseAddress else {
                    throw RestorationFailure(.io, "its map gave \(r.count) bytes, not \(bytes.count)")
                }
                bytes.withUnsafeBytes { b.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
                s.sessionRegion = r
            } else {
                try s.store.write(.session, 0, bytes)
            }
            s.sessionState.store(1, ordering: .releasing)
            return nil
        } catch {
            if (!quiet || error.status != .notFound) && !s.sessionFailureLogged {
                s.sessionFailureLogged = true
                log(.warning, "cannot record the session in \(s.store.describe): \(error.message); a crash of this process will read as a clean end")
            }
            return error.status
        }
    }

    /// Ends the session cleanly (engine destroy, `rst_close_session`, a
    /// signal that ends the process): the next restore reports RELAUNCH.
    /// Takes no lock and allocates nothing with the file store or a store
    /// that maps (async-signal-safe then); with another store it calls the
    /// store's `remove` of the session slot.
    public func closeSession() {
        storage?.closeSession()
    }

    /// The reason a restore of the current archive has.
    private func currentReason(_ s: Storage) -> RestoreReason { s.previousSessionDied == true ? .recover : .relaunch }

    /// Reads and validates a slot (nil: empty).
    private func load(_ s: Storage, _ slot: StoreSlot, _ index: UInt64, _ source: String) throws(RestorationFailure) -> ArchiveReader? {
        let held: StoreBytes?
        do throws(RestorationFailure) { held = try s.store.read(slot, index) } catch { throw s.named(error) }
        guard let held else { return nil }
        if held.bytes.count > RestorationLimits.maxArchiveBytes {
            held.release()
            throw RestorationFailure(.limit, "\(source) is \(held.bytes.count) bytes; the limit is \(RestorationLimits.maxArchiveBytes) bytes (RST_MAX_ARCHIVE_BYTES)")
        }
        return try Engine.validate(held: held, source: source)
    }

    func source(_ s: Storage, _ slot: StoreSlot, _ index: UInt64) -> String {
        if let f = s.store as? FileArchiveStore { return "archive '\(f.file(slot, index))'" }
        return slot == .archive ? "the archive in \(s.store.describe)" : "\(slot) \(index) in \(s.store.describe)"
    }

    /// Moves an invalid slot to INVALID intact (the lock held); its new index.
    private func setAsideInvalid(_ s: Storage, _ slot: StoreSlot, _ index: UInt64) throws(RestorationFailure) -> String {
        try s.store.locked { () throws(RestorationFailure) -> String in
            let to = try s.store.freeIndex(.invalid, nowMs: SystemInfo.nowMs())
            do throws(RestorationFailure) { try s.store.move(slot, index, to: .invalid, to) } catch { throw s.named(error) }
            if let f = s.store as? FileArchiveStore { return "'\(f.file(.invalid, to))'" }
            return "invalid \(to) in \(s.store.describe)"
        }
    }

    /// `rst_restore`: the archive; missing or invalid, the newest valid
    /// generation (FALLBACK, the invalid archive set aside intact). None
    /// restorable though one existed: RESET, every invalid one set aside
    /// intact, the current archive's failure thrown (notFound when only
    /// generations existed). Nothing existed: FIRST_LAUNCH and notFound.
    func restoreWithFallback(_ s: Storage) throws(RestorationFailure) {
        openSession(s, quiet: true)
        outcomes.begin(.firstLaunch, generation: 0)
        var failure: RestorationFailure
        var archiveInvalid = false
        do throws(RestorationFailure) {
            if let reader = try load(s, .archive, 0, source(s, .archive, 0)) {
                try restoreSlot(s, .archive, 0, reader: reader, reason: currentReason(s))
                return
            }
            failure = RestorationFailure(.notFound, "there is no archive in \(s.store.describe)")
            if let f = s.store as? FileArchiveStore { failure = RestorationFailure(.notFound, "there is no archive at '\(f.path)'") }
        } catch where [.corrupt, .version, .limit].contains(error.status) {
            failure = error
            archiveInvalid = true
        }
        // Missing or invalid: the newest valid generation, if any.
        var invalidGenerations: [UInt64] = []
        let present = configuration.generations > 0 ? ((try? s.store.list(.generation)) ?? []) : []
        for k in present.sorted() where k >= 1 && k <= UInt64(FileStore.maxGenerations) {
            let reader: ArchiveReader?
            do throws(RestorationFailure) { reader = try load(s, .generation, k, source(s, .generation, k)) } catch {
                if [.corrupt, .version, .limit].contains(error.status) { invalidGenerations.append(k) }
                continue
            }
            guard let reader else { continue }
            if archiveInvalid {
                let aside = try setAsideInvalid(s, .archive, 0)
                log(.warning, "\(failure.message); set aside as \(aside); restoring generation \(k) (\(source(s, .generation, k)))")
            } else {
                log(.warning, "\(failure.message); restoring generation \(k) (\(source(s, .generation, k)))")
            }
            try restoreSlot(s, .generation, k, reader: reader, reason: .fallback)
            return
        }
        guard archiveInvalid || !invalidGenerations.isEmpty else { throw failure }
        // RESET: something existed, nothing could be restored. Every invalid
        // copy is kept, intact, where no save rotates or overwrites it.
        outcomes.begin(.reset, generation: nil)
        s.lastArchiveKey = nil
        var asides: [String] = []
        if archiveInvalid { asides.append(try setAsideInvalid(s, .archive, 0)) }
        for k in invalidGenerations { asides.append(try setAsideInvalid(s, .generation, k)) }
        let msg = "\(failure.message); no generation could be restored either: starting over (RESET); set aside intact: \(asides.joined(separator: ", "))"
        log(.error, msg)
        throw RestorationFailure(failure.status, msg)
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
            openSession(s, quiet: true)
            let src = source(s, .generation, UInt64(k))
            guard let reader = try load(s, .generation, UInt64(k), src) else {
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

    /// Keeps the archive now in the store as generation 1, shifting the
    /// others up to `keep` (the lock held): generation k moves to k+1,
    /// oldest first, then the archive is linked (or read and written) to
    /// generation 1. No archive: nothing to keep.
    func rotateGenerations(_ s: Storage, keep: Int) throws(RestorationFailure) {
        guard keep > 0 else { return }
        let st = s.store
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
    func writeArchive(_ s: Storage, _ bytes: [UInt8]) throws(RestorationFailure) -> Bool {
        let key = bytes.withUnsafeBytes { Storage.key($0) }
        let st = s.store
        return try st.locked { () throws(RestorationFailure) -> Bool in
            if let key, let last = s.lastArchiveKey, last == key,
               let held = try? st.read(.archive, 0) {
                let same = bytes.withUnsafeBytes { Storage.sameButTime($0, held.bytes) }
                held.release()
                if same { return false }
            } else if let key, s.lastArchiveKey == nil, !s.archiveKeyProbed {
                // Never restored nor saved: "the archive in place" is the
                // store's, read once (another engine or process wrote it).
                s.archiveKeyProbed = true
                if let held = try? st.read(.archive, 0) {
                    let same = bytes.withUnsafeBytes { Storage.sameButTime($0, held.bytes) }
                    held.release()
                    if same {
                        s.lastArchiveKey = key
                        return false
                    }
                }
            }
            try rotateGenerations(s, keep: configuration.generations)
            let isFile = st is FileArchiveStore
            do throws(RestorationFailure) {
                try bytes.withUnsafeBytes { b in
                    Result { () throws(RestorationFailure) in
                        try st.write(.archive, 0, b, whenDurable: { KillPoints.reach(.saveWritten) })
                    }
                }.get()
            } catch {
                throw isFile ? error : s.named(error)
            }
            KillPoints.reach(.saveReplaced)
            s.lastArchiveKey = key
            return true
        }
    }

    /// Sets the archive slot that crashed aside to CRASHED (the lock held).
    func setAsideCrashed(_ s: Storage, _ slot: StoreSlot, _ index: UInt64) throws(RestorationFailure) -> String {
        try s.store.locked { () throws(RestorationFailure) -> String in
            let to = try s.store.freeIndex(.crashed, nowMs: SystemInfo.nowMs())
            do throws(RestorationFailure) { try s.store.move(slot, index, to: .crashed, to) } catch {
                throw RestorationFailure(error.status, "cannot set aside \(source(s, slot, index)): \(s.named(error).message)")
            }
            if slot == .archive { s.lastArchiveKey = nil }
            if let f = s.store as? FileArchiveStore { return "'\(f.file(.crashed, to))'" }
            return "crashed \(to) in \(s.store.describe)"
        }
    }

    /// `rst_discard`: every slot emptied, and what the store keeps beside
    /// them, under the store's lock.
    func discardStore(_ s: Storage) throws(RestorationFailure) {
        try Storage.discardAll(s.store)
        // The session went with the rest: the next save or restore records it again.
        s.sessionState.store(0, ordering: .releasing)
        s.sessionRegion = nil
        s.lastArchiveKey = nil
        s.archiveKeyProbed = false
    }
}
