import RestorationArchive

/// One save (or export) from start to end, over the registry, the coder and
/// the rooms it is given: the engine makes one under its lock and runs it.
///
///     sealing begins → should_save → order → write records (each object's
///     encode; carried records after the live ones) → budget verdict (WARN,
///     FAIL, or TRIM: write again without the cut subtrees, the trimmed list
///     in record 0) → sealing ends (the key wiped) → finish → keep sizes,
///     commit carry
///
/// Each feature that takes part is a room the pass calls at its step:
/// `SensitivityRoom` (sealing: `beginSave`/`newWriter`/`endSave`), `Budget`
/// (the verdict and the sizes kept), `Carry` (append, commit). The engine is
/// only its owner, through which the pass logs.
final class SavePass {
    let mode: SensitivityRoom.WriteMode
    /// The façade: logs through it; nothing else is read from it.
    private unowned(unsafe) let owner: Engine
    private let registry: Registry
    private let rooms: Rooms
    private let coder: Coder
    private let configuration: Engine.Configuration
    private let classVersions: [String: UInt32]
    /// Per class number, while records are written when any class has a version.
    #if UNCHECKED_EXCLUSIVITY
    @exclusivity(unchecked)
    #endif
    private var saveVersions: [UInt32] = []
    /// Identifiers of at most 8 bytes → their name index in the archive
    /// being written (direct-mapped by prefix; most hosts reuse identifiers
    /// across parents).
    private let shortNameCache = UnsafeMutablePointer<(key: UInt64, index: UInt32)>.allocate(capacity: 256)

    init(mode: SensitivityRoom.WriteMode, owner: Engine, registry: Registry, rooms: Rooms, coder: Coder,
         configuration: Engine.Configuration, classVersions: [String: UInt32]) {
        self.mode = mode
        self.owner = owner
        self.registry = registry
        self.rooms = rooms
        self.coder = coder
        self.configuration = configuration
        self.classVersions = classVersions
    }

    deinit { shortNameCache.deallocate() }

    /// The save: `shouldSave` (nil: not asked) is asked once sealing has
    /// begun; `finish` makes the result of the written archive.
    func run<R>(shouldSave: (() -> Bool)?, _ finish: (inout ArchiveWriter, ArchiveInfo) throws(WriteFailure) -> R) throws(RestorationFailure) -> R {
        let coder = self.coder, sensitivity = rooms.sensitivity
        sensitivity.beginSave(mode)
        coder.encoding.sensitivityInSave = sensitivity.hasPolicy || mode == .portableExport
        var sensitiveLeftOut = (count: 0, reason: "")
        defer {
            coder.encoding.sensitivityInSave = false
            _ = sensitivity.endSave()              // the key wiped on every path
        }
        if let shouldSave, !shouldSave() {
            throw RestorationFailure(.rejected, "save rejected: should_save returned false; the old archive is untouched")
        }
        let order = registry.preorderRefs()
        if order.count > RestorationLimits.maxObjects {
            throw RestorationFailure(.limit, "save: \(order.count) objects are registered; an archive holds at most \(RestorationLimits.maxObjects) (RST_MAX_OBJECTS)")
        }
        let info = ArchiveInfo(formatVersion: 1, appVersion: configuration.appVersion,
                               systemVersion: SystemInfo.systemVersion, idiom: configuration.idiom,
                               savedAtMs: SystemInfo.nowMs(), objectCount: UInt64(order.count))
                defer {
            coder.encoding.writer = ArchiveWriter()
            coder.keys.clear()
        }
        try writeRecords(order, cut: nil, list: nil)
        // Size budgets (Budget.swift): measured once the records are written.
        var trimmedFrom: (writer: ArchiveWriter, total: Int, cut: [Bool])? = nil
        let budgetBytes = configuration.sizeBudget
        if budgetBytes > 0 && mode == .save {            // an export has no budget
            let size = try SavePass.failure { () throws(WriteFailure) in try coder.encoding.writer.archiveSize(info: info) }
            switch rooms.budget.judge(coder.encoding.writer, size: size, budget: budgetBytes, policy: configuration.budgetPolicy,
                                liveCount: order.count, priority: { order[$0].with { $0.priority } }) {
            case .fits:
                break
            case .warn(let m):
                owner.log(.warning, m)
            case .fail(let m):
                rooms.budget.keep(coder.encoding.writer, total: size)
                throw RestorationFailure(.limit, "save failed, the old archive is untouched: \(m)")
            case .trim(let cut, let list):
                let first = coder.encoding.writer
                try writeRecords(order, cut: cut, list: list)
                let trimmedSize = try SavePass.failure { () throws(WriteFailure) in try coder.encoding.writer.archiveSize(info: info) }
                if UInt64(trimmedSize) > budgetBytes {
                    rooms.budget.keep(first, total: size)
                    throw RestorationFailure(.limit, "save failed, the old archive is untouched: the archive would be \(trimmedSize) bytes even with \(list.entries.count) subtrees left out, over its size budget of \(budgetBytes) bytes (policy TRIM)")
                }
                owner.log(.info, "the archive would have been \(size) bytes, over its size budget of \(budgetBytes) bytes; \(list.entries.count) subtree\(list.entries.count == 1 ? "" : "s") left out (policy TRIM): \(list.entries.prefix(3).map { "'\($0.path)'" }.joined(separator: ", "))\(list.entries.count > 3 ? ", ..." : "")")
                trimmedFrom = (first, size, cut)
            }
        }
        sensitiveLeftOut = rooms.sensitivity.endSave()   // every value written (carried ones too): the key is wiped
        let total = try SavePass.failure { () throws(WriteFailure) in try coder.encoding.writer.archiveSize(info: info) }
        let result = try SavePass.failure { () throws(WriteFailure) in try finish(&coder.encoding.writer, info) }
        guard mode == .save else { return result }      // an export: no sizes kept, no carry count, no WARNING
        if sensitiveLeftOut.count > 0 {
            owner.log(.warning, "save: \(sensitiveLeftOut.count) ENCRYPTED value\(sensitiveLeftOut.count == 1 ? " was" : "s were") not written (\(sensitiveLeftOut.reason)); they are left out as if SECRET")
        }
        rooms.budget.keep(coder.encoding.writer, total: total, trimmedFrom: trimmedFrom)
        if !rooms.carry.commitAfterWrite { rooms.carry.commit() }
        return result
    }

    /// A writer's failure as the save's.
    static func failure<T>(_ body: () throws(WriteFailure) -> T) throws(RestorationFailure) -> T {
        do {
            return try body()
        } catch {
            switch error {
            case .limit(let m): throw RestorationFailure(.limit, "save failed: \(m)")
            case .duplicateKey: throw RestorationFailure(.duplicate, "save failed: duplicate key")
            case .state(let m): throw RestorationFailure(.state, "save failed: \(m)")
            }
        }
    }

    /// Writes the records of a save into a new writer (the coder's): the live
    /// objects of `order` (without those `cut` marks: a size budget's TRIM,
    /// whose references are dropped), `list` in record 0, then the carried
    /// records whose parents are written.
    private func writeRecords(_ order: [NodeRef], cut: [Bool]?, list: TrimmedList?) throws(RestorationFailure) {
        let gen = registry.nextSaveGeneration()
        if let cut {
            var k = 0
            for i in 0..<order.count {
                order[i].with { n in
                    n.saveGeneration = gen
                    n.saveIndex = cut[i] ? -1 : k
                }
                if !cut[i] { k += 1 }
            }
        } else {
            for i in 0..<order.count {
                order[i].with { n in
                    n.saveGeneration = gen
                    n.saveIndex = i
                }
            }
        }
        coder.encoding.writer = ArchiveWriter(estimatedObjects: order.count)
        rooms.sensitivity.newWriter()   // a TRIM writes the records again, into a new key table
        // Class versions: records store their class version once any class has one.
        saveVersions = classVersions.isEmpty ? [] : registry.classTable.map { classVersions[$0.name] ?? 0 }
        coder.encoding.writer.recordVersions = !classVersions.isEmpty
        coder.encoding.writer.recordCarry = !rooms.carry.isEmpty   // carried records
        defer { saveVersions = [] }
        coder.encoding.failure = nil
        coder.encoding.saveGeneration = gen
        coder.keys.clear()
        // Name indexes of this archive: per class number, and for short identifiers.
        let classIndex = UnsafeMutablePointer<UInt32>.allocate(capacity: max(registry.classTable.count, 1))
        classIndex.initialize(repeating: UInt32.max, count: max(registry.classTable.count, 1))
        defer { classIndex.deallocate() }
        shortNameCache.initialize(repeating: (0, 0), count: 256)
        // One sink for the records (nothing copies the writer until they are written).
        coder.encoding.openSink()
        defer { coder.encoding.closeSink() }

        if let cut {
            var pendingList = list
            for i in 0..<order.count where !cut[i] {
                if let f = order[i].with({ saveObject($0, classIndex, list: pendingList) }) { throw f }
                pendingList = nil
            }
        } else {
            for u in order {
                if let f = u.with({ saveObject($0, classIndex) }) { throw f }
            }
        }
        if !rooms.carry.isEmpty {
            // Carried records follow the live ones.
            do {
                try rooms.carry.append(&coder.encoding.writer) { path in
                    guard let n = registry.find(path: path), n.saveGeneration == gen, n.saveIndex >= 0 else { return nil }
                    return n.saveIndex
                }
            } catch {
                throw RestorationFailure(.limit, "save failed: the carried records do not fit: \(error)")
            }
        }
    }

    /// Writes one object of a save; returns the failure that ends the save.
    /// The writer is reached through its sink (`FieldSink`, opened by
    /// `writeRecords`: one copy-on-write check per save), which the
    /// object's encode callback uses too (the C face's fast lane).
    @inline(__always)
    private func saveObject(_ n: ObjectNode, _ classIndex: UnsafeMutablePointer<UInt32>, list: TrimmedList? = nil) -> RestorationFailure? {
        let sink = coder.encoding.sink.unsafelyUnwrapped
        let idIndex = nameIndex(n, sink)
        var cls: UInt32? = nil
        if n.classID >= 0 {
            var k = classIndex[n.classID]
            if k == UInt32.max {
                var cn = registry.classTable[n.classID].name
                k = cn.withUTF8 { sink.name(UnsafeRawBufferPointer($0)) }
                classIndex[n.classID] = k
            }
            cls = k
        }
        // The container, borrowed (the engine owns every node: no retain).
        let parentIndex: Int? = n.containerRef.unsafelyUnwrapped.with { $0.isSentinel ? nil : $0.saveIndex }
        if _slowPath(!saveVersions.isEmpty) {
            sink.beginObject(identifier: idIndex, parent: parentIndex, className: cls,
                             version: n.classID >= 0 ? saveVersions[n.classID] : 0)
        } else {
            sink.beginObject(identifier: idIndex, parent: parentIndex, className: cls)
        }
        if n.handles(.encode) {
            coder.beginEncoding(n)
            coder.encoding.openLane()
            n.call(.encode, coder)
            coder.encoding.closeLane()
            coder.endEncoding()
        }
        if coder.encoding.hasFailure, let f = coder.encoding.failure {
            return RestorationFailure(f.status, "save failed, the old archive is untouched: \(f.message)")
        }
        if let list {
            // Size budgets: the list of trimmed subtrees goes into record 0.
            let before = coder.encoding.writer.recordBytes
            defer { rooms.budget.listBytes = coder.encoding.writer.recordBytes - before }   // not the root's own bytes
            do { try list.write(into: &coder.encoding.writer) } catch {
                return RestorationFailure(.limit, "save failed, the old archive is untouched: the list of trimmed subtrees does not fit: \(error.message)")
            }
        }
        do {
            try sink.endObject()
        } catch {
            return RestorationFailure(.state, "save failed, the old archive is untouched: the encode callback of '\(n.path)' left a nested record open (a record begun and not ended)")
        }
        return nil
    }

    /// The name index of a node's identifier in the archive being written.
    @inline(__always)
    private func nameIndex(_ n: ObjectNode, _ sink: FieldSink) -> UInt32 {
        let bytes = n.identifierBytes
        guard n.identifierCount <= 8 else { return sink.name(bytes) }
        let key = n.identifierPrefix   // identifiers hold no NUL: the prefix is the identifier
        let e = shortNameCache + Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 56)
        if e.pointee.key == key { return e.pointee.index }
        let index = sink.name(bytes)
        e.pointee = (key, index)
        return index
    }
}
