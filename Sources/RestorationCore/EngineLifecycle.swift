/// The engine's side of ABI v1.1 §3: sessions, restore reasons, fallback to
/// generations. Everything here runs under the engine's lock.
extension Engine {
    /// Opens this process's session beside `path` at the first save or
    /// restore, after reading what the previous one left: a session whose
    /// process is gone means the previous process died.
    func openSession(_ path: String) {
        if previousSessionDied == nil {
            if let o = SessionFile.read(path) {
                previousSessionDied = !CrashGuard.isAlive(o)
            } else {
                previousSessionDied = false
            }
        }
        guard !sessionOpen else { return }
        KillPoints.logSettingsOnce(self)
        sessionOpen = true
        if let w = SessionFile.open(path) { log(.warning, w) }
    }

    /// Ends the session (engine destroy; a signal that ends the process).
    public func closeSession() {
        lock.withLock {
            guard sessionOpen, let path = configuration.archivePath else { return }
            sessionOpen = false
            if let w = SessionFile.close(path) { log(.warning, w) }
        }
    }

    /// The reason a restore of the current archive has.
    private var currentReason: RestoreReason { previousSessionDied == true ? .recover : .relaunch }

    /// `rst_restore`: the archive; missing or invalid, the newest valid
    /// generation (FALLBACK), the invalid archive set aside intact.
    func restoreWithFallback(_ path: String) throws(RestorationFailure) {
        openSession(path)
        restoreReason = .firstLaunch
        restoreGeneration = 0
        var failure: RestorationFailure
        do {
            // One copy of the file in memory: read into a buffer the reader
            // adopts and validates in place.
            let current = try FileStore.readBuffer(path)
            do {
                let reader = try Engine.validate(adopting: current, source: "archive '\(path)'")
                try restoreFile(path, reader: reader, reason: currentReason, generation: 0)
                return
            } catch where [.corrupt, .version, .limit].contains(error.status) {
                failure = error
            }
        } catch where error.status == .notFound || error.status == .limit {
            failure = error
        }
        // Missing or invalid: the newest valid generation, if any.
        let keep = configuration.generations
        guard keep > 0 else { throw failure }
        for k in 1...FileStore.maxGenerations {
            let g = FileStore.generationPath(path, k)
            guard let buffer = try? FileStore.readBuffer(g),
                  let reader = try? Engine.validate(adopting: buffer, source: "archive '\(g)'") else { continue }
            if failure.status != .notFound {
                let aside = try FileStore.setAsideInvalid(path, nowMs: SystemInfo.nowMs())
                log(.warning, "\(failure.message); set aside as '\(aside)'; restoring generation \(k) ('\(g)')")
            } else {
                log(.warning, "there is no archive at '\(path)'; restoring generation \(k) ('\(g)')")
            }
            try restoreFile(g, reader: reader, reason: .fallback, generation: UInt32(k))
            return
        }
        throw failure
    }

    /// `rst_restore_generation`: generation k on request (FALLBACK); k = 0:
    /// the current archive, as `restore()`. A missing one: notFound.
    public func restore(generation k: UInt32) throws(RestorationFailure) {
        if k == 0 { return try restore() }
        try lock.withLock { () throws(RestorationFailure) in
            guard let path = configuration.archivePath else {
                throw RestorationFailure(.invalid, "the engine has no archive_path")
            }
            guard k <= UInt32(FileStore.maxGenerations) else {
                throw RestorationFailure(.notFound, "there is no generation \(k) of '\(path)' (at most \(FileStore.maxGenerations) are kept)")
            }
            openSession(path)
            let g = FileStore.generationPath(path, Int(k))
            let buffer: UnsafeMutableRawBufferPointer
            do throws(RestorationFailure) { buffer = try FileStore.readBuffer(g) } catch {
                if error.status == .notFound { throw RestorationFailure(.notFound, "there is no generation \(k) of '\(path)' ('\(g)')") }
                throw error
            }
            let reader = try Engine.validate(adopting: buffer, source: "archive '\(g)'")
            try restoreFile(g, reader: reader, reason: .fallback, generation: k)
        }
    }

    /// The reason of the last restore (`rst_last_restore_reason`).
    public var lastRestoreReason: RestoreReason { lock.withLock { restoreReason } }
}
