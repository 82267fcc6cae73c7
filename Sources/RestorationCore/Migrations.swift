import RestorationArchive
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Class versions and migration chains (docs/EVOLUTION.md).
//
// A class's version (default: none set) is stored in every record of that
// class at save. At restore, after validation and before pass 1 (the
// `migrate` step of `runRestore`), a record whose stored version is below
// its class's current one runs the chain from, from+1, ... up to the current
// version; each step edits the record through the coder in `.migrating`
// mode (`MigrationEditor`): the record's fields as an array whose values
// stay the archive's bytes until a step replaces them (`ArchiveRewriter`).
// When some record was migrated, the archive is rebuilt — every other
// record copied byte for byte, new keys appended to the key table — and
// its reader derived from the original's (valid by construction: the
// original was validated and every edit checked; debug builds validate it
// again and compare), so the rest of the restore reads it like any archive. A missing step, a failing
// step or a record newer than its class skips that record with its
// descendants (SkipReason.noMigration / .migrationFailed / .tooNew).

/// One migration step: edits the record (the coder is in `.migrating` mode)
/// from `fromVersion` to `fromVersion + 1`. Returns nil on success, else why
/// it failed.
public typealias Migration = (_ coder: Coder, _ fromVersion: UInt32) -> RestorationFailure?

extension Engine {
    /// Sets the version of every object of `className` (registered or made
    /// by a factory, host or plugin). Each record stores it at save.
    public func setClassVersion(_ className: String, _ version: UInt32) throws(RestorationFailure) {
        try ArgumentRules.className(className)
        lock.withLock { migrations.classVersions[className] = version }
    }

    /// The version set for `className`, nil when none is.
    public func classVersion(_ className: String) -> UInt32? {
        lock.withLock { migrations.classVersions[className] }
    }

    /// Registers the step that migrates records of `className` from
    /// `fromVersion` to `fromVersion + 1`.
    /// - Throws: `.duplicate` when that step is registered already;
    ///   `.invalid`/`.limit` for a bad class name; `.invalid` for
    ///   `fromVersion == UInt32.max` (no version follows it).
    public func registerMigration(_ className: String, from fromVersion: UInt32, _ step: @escaping Migration) throws(RestorationFailure) {
        try ArgumentRules.className(className)
        guard fromVersion < UInt32.max else {
            throw RestorationFailure(.invalid, "a migration from version \(fromVersion) of class '\(className)' has no version to migrate to")
        }
        try lock.withLock { () throws(RestorationFailure) in
            if migrations.steps[className]?[fromVersion] != nil {
                throw RestorationFailure(.duplicate, "class '\(className)' already has a migration from version \(fromVersion)")
            }
            migrations.steps[className, default: [:]][fromVersion] = MigrationStep(step)
        }
    }
}

/// The migrations room: the class versions, the steps registered per class
/// and from-version, and the `migrate` step of a restore (`RestorePass`
/// calls it after `loadPlugins`, before pass 1). The engine's public
/// methods above change it under the engine's lock.
final class MigrationRoom {
    /// Class versions, by class name.
    var classVersions: [String: UInt32] = [:]
    /// Migration steps by class and from-version.
    var steps: [String: [UInt32: MigrationStep]] = [:]

    /// The current version of a node's class (0 when none is set).
    func classVersion(ofNode n: ObjectNode) -> UInt32 {
        guard let c = n.className else { return 0 }
        return classVersions[c] ?? 0
    }

    /// The `migrate` step of a restore (after `loadPlugins`, before pass 1):
    /// runs every needed migration chain (those the plugins' `init`
    /// registered included) and,
    /// when a record changed, returns the rebuilt, revalidated archive.
    /// Returns the records to skip, with their reasons.
    func migrate(_ reader: ArchiveReader, quarantined: Int?, coder: Coder, watch: MarkerWatch?,
                 log: (LogLevel, String) -> Void) throws(RestorationFailure) -> (ArchiveReader, [Int: SkipNote]) {
        let n = reader.recordCount
        // Class names of the archive, once each.
        var nameOf: [UInt32: String] = [:]
        func name(_ i: UInt32) -> String {
            if let s = nameOf[i] { return s }
            let s = reader.name(i)
            nameOf[i] = s
            return s
        }
        if classVersions.isEmpty { return (reader, [:]) }

        var notes: [Int: SkipNote] = [:]
        var dead = [Bool](repeating: false, count: n)
        // Per class name of the archive: its current version (nil: none set).
        var currentOf: [UInt32: UInt32?] = [:]
        // Per (class, stored version): the chain of steps, an index of `chains`.
        var chainOf: [UInt64: Int] = [:]
        var chains: [[MigrationStep]] = []
        var todo = MigrationJobs()
        defer { todo.release() }
        // The class and stored version of the record before, with what the
        // dictionaries said for them: consecutive records mostly share both.
        var lastClass = UInt32.max, lastCurrent: UInt32? = nil
        var lastChainKey = UInt64.max, lastChain = 0
        for r in 0..<n {
            if let p = reader.parent(ofRecord: r), dead[p] { dead[r] = true; continue }
            if r == quarantined { dead[r] = true; continue }   // quarantined: its note comes from the restore
            guard let ci = reader.className(ofRecord: r) else { continue }
            let currentVersion: UInt32?
            if ci == lastClass { currentVersion = lastCurrent } else {
                if let known = currentOf[ci] { currentVersion = known } else {
                    currentVersion = classVersions[name(ci)]
                    currentOf[ci] = .some(currentVersion)
                }
                lastClass = ci
                lastCurrent = currentVersion
            }
            guard let current = currentVersion else { continue }
            let stored = reader.version(ofRecord: r)
            if stored > current {
                dead[r] = true
                notes[r] = SkipNote(reason: .tooNew, detail: "it was saved by version \(stored) of class '\(name(ci))', newer than this program's version \(current)")
                continue
            }
            if stored == current { continue }
            let chainKey = UInt64(ci) << 32 | UInt64(stored)
            if chainKey == lastChainKey && lastChain >= 0 {
                todo.append(MigrationJob(record: r, from: stored, to: current, chain: lastChain), room: n - r)
                continue
            }
            var chain = chainOf[chainKey]
            if chain == nil {
                var steps: [MigrationStep] = []
                var v = stored
                let table = self.steps[name(ci)] ?? [:]
                while v < current {
                    guard let step = table[v] else { break }
                    steps.append(step)
                    v += 1
                }
                chain = v < current ? -1 - Int(v) : chains.count      // -1 - v: no step from version v
                if v == current { chains.append(steps) }
                chainOf[chainKey] = chain
            }
            if let c = chain, c < 0 {
                let v = -1 - c
                dead[r] = true
                notes[r] = SkipNote(reason: .noMigration, detail: "class '\(name(ci))' has no migration from version \(v) (the record is version \(stored), the class \(current))")
                continue
            }
            lastChainKey = chainKey
            lastChain = chain!
            todo.append(MigrationJob(record: r, from: stored, to: current, chain: chain!), room: n - r)
        }
        if todo.isEmpty { return (reader, notes) }

        let rewriter = ArchiveRewriter(reader: reader)
        let editor = MigrationEditor(rewriter: rewriter)
        var chainSteps: [MigrationStep] = [], stepsOf = -1    // the chain of the job before
        // The crash-loop guard's watch (`watch`, read once by the caller) is
        // entered out of line: inlined, the record field's digits were
        // computed for every record even with no guard (a restore from a buffer).
        for job in todo.jobs {
            let r = job.record
            if let p = reader.parent(ofRecord: r), dead[p] { dead[r] = true; continue }
            editor.begin(record: r)
            var failure: (UInt32, RestorationFailure)? = nil
            if job.chain != stepsOf { chainSteps = chains[job.chain]; stepsOf = job.chain }
            for k in chainSteps.indices {
                // The step through an unretained reference: `chainSteps` holds it
                // for the whole loop, and its closure is a `let` (retaining
                // both around every call cost about 80 instructions a record).
                let step = Unmanaged.passUnretained(chainSteps[k])
                let from = job.from + UInt32(k)
                editor.fromVersion = from
                if !editor.path.isEmpty { editor.path.removeAll(keepingCapacity: true) }
                coder.beginMigrating(record: r, editor: editor)
                if let watch { MigrationWatch.enter(watch, r) }
                let f = step._withUnsafeGuaranteedRef { $0.run(coder, from) }
                if let watch { watch.leave() }
                // (Tested first, as the decode loop does: a step that
                // reported nothing leaves nothing to take.)
                let reported = coder.hasCallbackFailure ? coder.takeCallbackFailure() : nil
                coder.endMigrating(editor)
                if let f = reported ?? f {
                    failure = (from, f)
                    break
                }
            }
            if failure == nil { editor.settleCount() }
            if failure == nil, let problem = MigrationLimits.check(&editor.edit) {
                failure = (job.to - 1, RestorationFailure(.limit, problem))
            }
            if failure == nil {
                do {
                    try rewriter.replace(record: r, editing: &editor.edit, version: job.to)
                } catch {
                    let status: Status = if case .limit = error { .limit } else { .state }
                    failure = (job.to - 1, RestorationFailure(status, "the migrated record cannot be written: \(error.message)"))
                }
            }
            if let (from, f) = failure {
                let cls = reader.className(ofRecord: r).map(name) ?? ""
                dead[r] = true
                notes[r] = SkipNote(reason: .migrationFailed, detail: "the migration of class '\(cls)' from version \(from) failed (\(f.status.cName)): \(f.message)")
                log(.warning, "record \(r) ('\(reader.path(ofRecord: r))'): the migration of class '\(cls)' from version \(from) failed (\(f.status.cName)): \(f.message); skipped with its descendants")
                continue
            }
            if rewriter.replacedByteCount > ArchiveLimits.maxArchiveBytes {
                throw RestorationFailure(.limit, "after migrations the archive exceeds a limit: more than \(ArchiveLimits.maxArchiveBytes) bytes (RST_MAX_ARCHIVE_BYTES)")
            }
        }
        if rewriter.isEmpty { return (reader, notes) }     // every migration failed: the archive as it was
        // The rebuilt archive's reader: its indexes derived from this one's
        // (valid by construction); debug builds also validate it from
        // scratch and compare every index.
        #if DEBUG
        let verify = true
        #else
        let verify = false
        #endif
        do {
            return (try rewriter.rebuiltReader(verify: verify), notes)
        } catch {
            switch error {
            case .limit(let m): throw RestorationFailure(.limit, "after migrations the archive exceeds a limit: \(m)")
            case .duplicateKey, .state: throw RestorationFailure(.state, "after migrations the archive cannot be written: \(error.message)")
            }
        }
    }
}

/// One record to migrate: its stored version, its class's, and its chain
/// (an index of the chains `MigrationRoom.migrate` built).
struct MigrationJob {
    var record: Int
    var from: UInt32, to: UInt32
    var chain: Int
}

/// The records a restore migrates, in record order. Planned one record at
/// a time, usually every record: a buffer sized once, at the first record
/// that needs a migration, for every record from there on (no record is
/// planned twice), and filled with plain stores — an array's append
/// checked its uniqueness and capacity for every record.
struct MigrationJobs {
    private var buffer = PlainBuffer<MigrationJob>()

    var isEmpty: Bool { buffer.isEmpty }
    var count: Int { buffer.count }

    /// Appends a job; `room` is how many records are left to plan, this one
    /// included (the buffer's size when it is made).
    @inline(__always) mutating func append(_ job: MigrationJob, room: Int) {
        buffer.append(job, minimumCapacity: buffer.count &+ room)
    }

    /// The jobs planned (valid until `release`).
    var jobs: UnsafeBufferPointer<MigrationJob> { buffer.elements }

    /// Frees the buffer.
    mutating func release() { buffer.release() }
}

enum MigrationWatch {
    @inline(never) static func enter(_ watch: MarkerWatch, _ r: Int) { watch.enter(r) }
}

/// One step of a chain, boxed: a closure kept in a class's property of its
/// own function type is called directly, while one kept in a dictionary or
/// an array of closures is wrapped in a reabstraction thunk each time it is
/// stored (the chain's steps went through the engine's dictionary and two
/// arrays: seven thunks per call). Boxed when registered, a step is called
/// with none.
final class MigrationStep {
    let run: Migration
    init(_ run: @escaping Migration) { self.run = run }
}

/// The per-record limits a migration's result must satisfy (the archive's
/// own limits are checked when it is rebuilt; nesting is bounded when a
/// record is entered).
enum MigrationLimits {
    /// (`inout` only so that the editor's edit is read where it is, not copied.)
    /// The usual record (its own level only, within the limit) is decided
    /// inline; anything else by the loop below.
    @inline(__always) static func check(_ edit: inout RecordEdit) -> String? {
        if edit.levelCount == 1 && edit.levels[0].count <= ArchiveLimits.maxValuesPerRecord { return nil }
        return checkLevels(&edit)
    }

    @inline(never) static func checkLevels(_ edit: inout RecordEdit) -> String? {
        for l in 0..<edit.levelCount where edit.levels[l].count > ArchiveLimits.maxValuesPerRecord {
            return "the migrated record holds \(edit.levels[l].count) values, more than \(ArchiveLimits.maxValuesPerRecord) (RST_MAX_VALUES_PER_RECORD)"
        }
        return nil
    }
}
