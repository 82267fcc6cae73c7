import RestorationArchive

// Size budgets (docs/BUDGETS.md): every save measures each record — its own
// bytes in the archive and its subtree's — and, with a budget, does what the
// policy says when the archive would be larger: WARN saves and logs one
// warning, FAIL refuses the save, TRIM leaves out whole subtrees of non-root
// records (lowest priority first, the largest first among equals) until it
// fits, and lists their tops in the archive (TrimmedList) so that the next
// restore reports them as skipped (SkipReason.trimmed).
//
// The interface to the save path is narrow: the writer notes where each
// record begins (offsets it already has), the save asks `judge` once the
// records are written, and hands the writer over with `keep` (no copy: the
// engine drops its writer after every save anyway). Sizes, paths and class
// names are computed only when someone asks (`entries`), so a save without
// a budget pays for an offset per record and one size computation.

/// One record of the last save (`rst_size_entry`).
public struct SaveSizeEntry: Equatable, Sendable {
    public var path: String
    /// "" when none.
    public var className: String
    /// The record's own bytes in the archive (header and values).
    public var ownBytes: UInt64
    /// Own bytes plus every descendant's.
    public var subtreeBytes: UInt64
    /// Left out of that save by the TRIM policy (sizes: what it would have taken).
    public var trimmed: Bool

    public init(path: String, className: String, ownBytes: UInt64, subtreeBytes: UInt64, trimmed: Bool) {
        self.path = path
        self.className = className
        self.ownBytes = ownBytes
        self.subtreeBytes = subtreeBytes
        self.trimmed = trimmed
    }
}

/// The records of one written archive, read back from its writer.
struct WrittenRecords {
    let writer: ArchiveWriter
    let count: Int
    let total: Int
    /// The bytes of a TRIM save's list of trimmed subtrees, written into
    /// record 0: the archive's overhead, not that record's own bytes.
    let listBytes: Int

    init(_ writer: ArchiveWriter, total: Int, listBytes: Int = 0) {
        self.writer = writer
        self.count = writer.recordCount
        self.total = total
        self.listBytes = listBytes
    }

    /// Own bytes of every record: the distance between record starts.
    func own() -> [UInt64] {
        var out = [UInt64](repeating: 0, count: count)
        guard count > 0 else { return out }
        var next = writer.recordBytes
        var i = count - 1
        while i >= 0 {
            let s = writer.recordStart(i)
            out[i] = UInt64(next - s)
            next = s
            i -= 1
        }
        if listBytes > 0 && out[0] >= UInt64(listBytes) { out[0] -= UInt64(listBytes) }
        return out
    }

    func parents() -> [Int] { (0..<count).map { writer.recordHeader($0).parent ?? -1 } }

    func sizes(parents: [Int]? = nil) -> RecordSizes {
        RecordSizes(own: own(), parents: parents ?? self.parents(), total: UInt64(total))
    }

    /// Path and class of every record (parents come first).
    func names() -> (paths: [String], classes: [String]) {
        var paths: [String] = []
        var classes: [String] = []
        paths.reserveCapacity(count)
        classes.reserveCapacity(count)
        for i in 0..<count {
            let h = writer.recordHeader(i)
            let id = writer.nameString(h.identifier)
            if let p = h.parent, p >= 0, p < i { paths.append(paths[p] + "/" + id) } else { paths.append(id) }
            classes.append(h.className.map { writer.nameString($0) } ?? "")
        }
        return (paths, classes)
    }

    /// Path and class of one record (walking up its parents).
    func describe(_ i: Int) -> (path: String, className: String) {
        var parts: [String] = []
        var r: Int? = i
        var cls = ""
        var first = true
        while let cur = r {
            let h = writer.recordHeader(cur)
            parts.append(writer.nameString(h.identifier))
            if first { cls = h.className.map { writer.nameString($0) } ?? "" }
            first = false
            r = (h.parent ?? -1) >= 0 && h.parent! < cur ? h.parent : nil
        }
        return (parts.reversed().joined(separator: "/"), cls)
    }
}

/// What the save does after `judge`.
enum BudgetVerdict {
    /// Within the budget (or none): finish as written.
    case fits
    /// Over budget under WARN: finish, after logging the sentence.
    case warn(String)
    /// Over budget under FAIL (or TRIM that cannot fit): refuse with the sentence.
    case fail(String)
    /// Over budget under TRIM: write again without the records marked in
    /// `cut` (archive indexes of this pass), listing `list` in record 0.
    case trim(cut: [Bool], list: TrimmedList)
}

/// The size budget's state of one engine: the measurement of the last save.
/// Used under the engine's lock.
final class Budget {
    /// The last successful or budget-failed save.
    private var last: WrittenRecords?
    /// A TRIM save's first pass (every record) and what it left out; read
    /// only when asked, so a deep tree costs nothing more at the save.
    private var firstPass: (records: WrittenRecords, cut: [Bool])?
    /// The bytes the save being written spent on its list of trimmed
    /// subtrees (in record 0), set by the save, taken by `keep`.
    var listBytes = 0

    /// Judges a written archive of `size` bytes against the configuration.
    /// `priority(i)` is record i's object priority (live records: i <
    /// `liveCount`; the carried records that follow are never trimmed
    /// themselves but go with a trimmed parent).
    func judge(_ writer: ArchiveWriter, size: Int, budget: UInt64, policy: Engine.BudgetPolicy,
               liveCount: Int, priority: (Int) -> Int32) -> BudgetVerdict {
        guard budget > 0, UInt64(size) > budget else { return .fits }
        let written = WrittenRecords(writer, total: size)
        let parents = written.parents()
        let sizes = written.sizes(parents: parents)
        let largest = Budget.largest(sizes, parents, written)
        switch policy {
        case .warn:
            return .warn("the archive is \(size) bytes, over its size budget of \(budget) bytes; saved anyway (policy WARN). \(largest)")
        case .fail:
            return .fail("the archive would be \(size) bytes, over its size budget of \(budget) bytes (policy FAIL). \(largest)")
        case .trim:
            break
        }
        let n = written.count
        let live = min(liveCount, n)
        // Live records are in pre-order: a live record's live descendants
        // follow it contiguously. Carried records (after them) count toward
        // their nearest live ancestor.
        var liveDesc = [Int](repeating: 0, count: live)
        var i = live - 1
        while i >= 0 {
            let p = parents[i]
            if p >= 0 { liveDesc[p] += liveDesc[i] + 1 }
            i -= 1
        }
        var carriedUnder = [UInt64](repeating: 0, count: live)
        var anchor = [Int](repeating: -1, count: n)
        for j in 0..<n {
            if j < live { anchor[j] = j; continue }
            let p = parents[j]
            anchor[j] = p >= 0 ? anchor[p] : -1
            if anchor[j] >= 0 { carriedUnder[anchor[j]] &+= sizes.own[j] }
        }
        var candidates: [Int] = []
        for r in 0..<live where parents[r] >= 0 { candidates.append(r) }
        let pri = candidates.map(priority)
        var order = Array(candidates.indices)
        order.sort { a, b in
            if pri[a] != pri[b] { return pri[a] < pri[b] }
            let sa = sizes.subtree[candidates[a]], sb = sizes.subtree[candidates[b]]
            if sa != sb { return sa > sb }
            return candidates[a] < candidates[b]
        }
        // Each path's length in bytes, without building the paths (a tree
        // may be 65,536 levels deep).
        var entryBytes = [Int](repeating: 0, count: live)
        for r in 0..<live {
            let h = writer.recordHeader(r)
            let id = writer.nameString(h.identifier).utf8.count
            let parentPath = parents[r] >= 0 ? entryBytes[parents[r]] : 0
            entryBytes[r] = parentPath + (parents[r] >= 0 ? 1 : 0) + id
        }
        // The list's own cost, counted generously: its key in the key table,
        // the value's header and lengths, record 0's longer length; then
        // each listed top. A top inside a subtree trimmed later leaves the list.
        var removedBytes: UInt64 = 0
        var listBytes: UInt64 = 48
        var predicted = UInt64(size) + listBytes
        var cut = [Bool](repeating: false, count: n)
        var isTop = [Bool](repeating: false, count: live)
        var topCost = [UInt64](repeating: 0, count: live)
        var chosen: [Int] = []
        for k in order {
            if predicted <= budget { break }
            let r = candidates[k]
            if cut[r] { continue }
            let end = r + 1 + liveDesc[r]
            var j = r
            while j < end {
                if isTop[j] {
                    // Already out with its subtree: only its list entry goes.
                    isTop[j] = false
                    listBytes -= topCost[j]
                    j += 1 + liveDesc[j]
                    continue
                }
                if !cut[j] {
                    cut[j] = true
                    removedBytes &+= sizes.own[j] &+ carriedUnder[j]
                }
                j += 1
            }
            let cls = writer.recordHeader(r).className.map { writer.nameString($0).utf8.count } ?? 0
            isTop[r] = true
            topCost[r] = UInt64(entryBytes[r] + cls + 20)
            listBytes += topCost[r]
            chosen.append(r)
            let gross = UInt64(size) + listBytes
            predicted = gross > removedBytes ? gross - removedBytes : 0
        }
        if predicted > budget {
            let roots = parents.enumerated().reduce(UInt64(0)) { $0 + ($1.element < 0 ? sizes.own[$1.offset] : 0) }
            return .fail("the archive would be \(size) bytes, over its size budget of \(budget) bytes, and it does not fit even with every subtree below the roots left out (policy TRIM; the roots alone take \(roots + sizes.overhead) bytes). \(largest)")
        }
        // Carried records under a trimmed record go with it.
        for j in live..<n where anchor[j] >= 0 && cut[anchor[j]] { cut[j] = true }
        // Only the tops are listed, in archive order.
        let tops = chosen.filter { isTop[$0] }.sorted()
        let list = TrimmedList(budget: budget, entries: tops.map { r in
            let d = written.describe(r)
            return TrimmedList.Entry(path: d.path, className: d.className)
        })
        return .trim(cut: cut, list: list)
    }

    /// "The largest subtrees: 'A/B' (class 'Row', 1234 bytes), ..." — the
    /// three largest subtrees of non-root records.
    static func largest(_ sizes: RecordSizes, _ parents: [Int], _ written: WrittenRecords) -> String {
        var top: [Int] = []
        for r in 0..<parents.count where parents[r] >= 0 {
            top.append(r)
            top.sort { sizes.subtree[$0] != sizes.subtree[$1] ? sizes.subtree[$0] > sizes.subtree[$1] : $0 < $1 }
            if top.count > 3 { top.removeLast() }
        }
        if top.isEmpty { return "No record is below a root: only the roots take space." }
        let parts = top.map { r -> String in
            let d = written.describe(r)
            return "'\(d.path)' (\(d.className.isEmpty ? "no class" : "class '\(d.className)'"), \(sizes.subtree[r]) bytes)"
        }
        return "The largest subtrees: " + parts.joined(separator: ", ") + "."
    }

    /// A save ended (finished, or failed by the budget): its writer becomes
    /// the measurement `entries` reads. `trimmedFrom`: the first pass of a
    /// TRIM save and what it cut.
    func keep(_ writer: ArchiveWriter, total: Int, trimmedFrom: (writer: ArchiveWriter, total: Int, cut: [Bool])? = nil) {
        last = WrittenRecords(writer, total: total, listBytes: trimmedFrom == nil ? 0 : listBytes)
        listBytes = 0
        firstPass = trimmedFrom.map { (WrittenRecords($0.writer, total: $0.total), $0.cut) }
    }

    /// Every record of the last save, in archive order, the trimmed ones
    /// included; empty before any save.
    var entries: [SaveSizeEntry] {
        guard let last else { return [] }
        let sizes = last.sizes()
        let (paths, classes) = last.names()
        // Records the first pass of a TRIM save wrote and the second left
        // out, each with the index of the written record it comes before.
        var trimmed: [(before: Int, entry: SaveSizeEntry)] = []
        if let (first, cut) = firstPass {
            let firstSizes = first.sizes()
            let (firstPaths, firstClasses) = first.names()
            var before = 0
            for j in 0..<first.count {
                if cut[j] {
                    trimmed.append((before, SaveSizeEntry(path: firstPaths[j], className: firstClasses[j], ownBytes: firstSizes.own[j],
                                                          subtreeBytes: firstSizes.subtree[j], trimmed: true)))
                } else {
                    before += 1
                }
            }
        }
        var out: [SaveSizeEntry] = []
        out.reserveCapacity(last.count + trimmed.count)
        var t = 0
        for i in 0..<last.count {
            while t < trimmed.count && trimmed[t].before == i { out.append(trimmed[t].entry); t += 1 }
            out.append(SaveSizeEntry(path: paths[i], className: classes[i], ownBytes: sizes.own[i],
                                     subtreeBytes: sizes.subtree[i], trimmed: false))
        }
        while t < trimmed.count { out.append(trimmed[t].entry); t += 1 }
        return out
    }

    /// The total size of the last save's archive (0 before any save).
    var lastTotal: Int { last?.total ?? 0 }
}

extension Engine {
    /// Library 1.2: every record the last successful or budget-failed save
    /// considered, in archive order (docs/BUDGETS.md); empty before any save.
    public var lastSaveSizes: [SaveSizeEntry] {
        lock.withLock { budget.entries }
    }

    /// Sets an object's priority for the TRIM policy (lower goes first).
    public func setPriority(_ priority: Int32, of node: ObjectNode) {
        lock.withLock { node.priority = priority }
    }
}

extension TrimmedList {
    /// The list of trimmed subtrees as skips of a restore (RST_SKIP_TRIMMED).
    static func skips(_ reader: ArchiveReader) -> [SkippedRecord] {
        guard let list = TrimmedList(reader: reader) else { return [] }
        return list.entries.map { e in
            SkippedRecord(record: -1, path: e.path, className: e.className, reason: .trimmed, version: 0,
                          detail: "the save that wrote this archive left it out (with its descendants) to fit its size budget of \(list.budget) bytes")
        }
    }

    /// Whether an entry of record 0 is a list of trimmed subtrees (left out
    /// when the record is carried: the list belongs to the archive it came from).
    static func isTrimmedList(_ e: ArchiveEntry) -> Bool {
        guard case .unknown(let tag, let payload) = e.value, tag == TrimmedList.rawTag,
              e.key.hasPrefix(TrimmedList.key) else { return false }
        return payload.withUnsafeBytes { TrimmedList(payload: $0) } != nil
    }

    /// Writes the list of trimmed subtrees into the open record 0 (its own
    /// level), under the first free key "rst.trimmed", "rst.trimmed.2", ...
    func write(into w: inout ArchiveWriter) throws(WriteFailure) {
        var n = 1
        while true {
            var name = n == 1 ? TrimmedList.key : "\(TrimmedList.key).\(n)"
            let k = name.withUTF8 { w.key(UnsafeRawBufferPointer($0)) }
            if w.rawTag(ofKey: k) == nil {
                let payload = self.payload()
                let r: Result<Void, WriteFailure> = payload.withUnsafeBytes { b in
                    do throws(WriteFailure) { try w.writeUnknown(k, tag: TrimmedList.rawTag, payload: b); return .success(()) } catch { return .failure(error) }
                }
                try r.get()
                return
            }
            n += 1
        }
    }
}
