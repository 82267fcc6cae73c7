// ArchiveWriter: builds a v1 archive in one pass (see docs/FORMAT.md).
//
// Records are written into one growable raw buffer as values arrive. The
// byte length of an object's fields (and of a nested record) is unknown until
// it closes: one byte is reserved, and when the record closes its minimal
// LEB128 length is stored there, moving the content right only when the
// length needs more than one byte (content of 128 bytes or more). The string
// tables and the header are assembled by `finish`.
//
// Value semantics: the state lives behind one class reference; every
// mutating call checks that reference for uniqueness and copies on write, so
// a copied writer never shares bytes with the original.

@usableFromInline
@inline(__always)
func growCapacity(_ current: Int, _ needed: Int) -> Int {
    var c = current < 64 ? 64 : current
    while c < needed { c = c > Int.max / 2 ? needed : c &* 2 }
    return c
}

// MARK: - Intern table

/// Interned byte strings: an arena, the start of each string in it, and a
/// hash index over them. Lookups of a known string allocate nothing.
@usableFromInline
struct InternTable {
    @usableFromInline var arena: UnsafeMutableRawPointer
    @usableFromInline var arenaCount: Int
    @usableFromInline var arenaCap: Int
    /// starts[i] is where string i begins; starts[count] == arenaCount.
    @usableFromInline var starts: UnsafeMutablePointer<Int>
    @usableFromInline var count: Int
    @usableFromInline var startsCap: Int
    /// The hash of each string (to grow the index without rehashing).
    @usableFromInline var hashes: UnsafeMutablePointer<UInt32>
    @usableFromInline var index: HashIndex
    /// `encodedSize`, kept as strings are inserted (not summed over the
    /// table at each `finish`).
    @usableFromInline var encodedBytes = 0

    init(expected: Int) {
        let e = max(16, min(expected, 1 << 24))
        arenaCap = e * 8
        arena = UnsafeMutableRawPointer.allocate(byteCount: arenaCap, alignment: 8)
        arenaCount = 0
        startsCap = e + 2
        starts = UnsafeMutablePointer<Int>.allocate(capacity: startsCap)
        starts[0] = 0
        hashes = UnsafeMutablePointer<UInt32>.allocate(capacity: startsCap)
        count = 0
        index = HashIndex(capacityFor: e)
    }

    init(copying o: InternTable) {
        arenaCap = o.arenaCap
        arena = UnsafeMutableRawPointer.allocate(byteCount: arenaCap, alignment: 8)
        arena.copyMemory(from: o.arena, byteCount: o.arenaCount)
        arenaCount = o.arenaCount
        startsCap = o.startsCap
        starts = UnsafeMutablePointer<Int>.allocate(capacity: startsCap)
        starts.initialize(from: o.starts, count: o.count + 1)
        hashes = UnsafeMutablePointer<UInt32>.allocate(capacity: startsCap)
        hashes.initialize(from: o.hashes, count: o.count)
        count = o.count
        index = HashIndex(copying: o.index)
        encodedBytes = o.encodedBytes
    }

    func release() {
        arena.deallocate()
        starts.deallocate()
        hashes.deallocate()
        index.release()
    }

    @inlinable @inline(__always)
    func bytes(_ i: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: arena + starts[i], count: starts[i &+ 1] &- starts[i])
    }

    @inlinable @inline(__always)
    mutating func intern(_ s: UnsafeRawBufferPointer) -> UInt32 {
        let n = s.count
        let base = s.baseAddress
        let h = hashBytes(base, n)
        let arena = self.arena, starts = self.starts
        let (found, slot) = index.find(h) { e in
            let st = starts[Int(e)]
            return starts[Int(e) &+ 1] &- st == n && bytesEqual(arena + st, base, n)
        }
        if let f = found { return f }
        return insert(s, h, slot)
    }

    @usableFromInline @inline(never)
    mutating func insert(_ s: UnsafeRawBufferPointer, _ h: UInt32, _ slot: Int) -> UInt32 {
        let n = s.count
        if arenaCount + n > arenaCap {
            let newCap = growCapacity(arenaCap, arenaCount + n)
            let a = UnsafeMutableRawPointer.allocate(byteCount: newCap, alignment: 8)
            a.copyMemory(from: arena, byteCount: arenaCount)
            arena.deallocate()
            arena = a
            arenaCap = newCap
        }
        if n > 0, let src = s.baseAddress { (arena + arenaCount).copyMemory(from: src, byteCount: n) }
        arenaCount += n
        encodedBytes += varintSize(UInt64(n)) + n
        if count + 2 > startsCap {
            let newCap = growCapacity(startsCap, count + 2)
            let st = UnsafeMutablePointer<Int>.allocate(capacity: newCap)
            st.initialize(from: starts, count: count + 1)
            starts.deallocate()
            starts = st
            let hs = UnsafeMutablePointer<UInt32>.allocate(capacity: newCap)
            hs.initialize(from: hashes, count: count)
            hashes.deallocate()
            hashes = hs
            startsCap = newCap
        }
        let idx = count
        count += 1
        starts[count] = arenaCount
        hashes[idx] = h
        index.insert(at: slot, h, UInt32(truncatingIfNeeded: idx))
        if index.needsGrowth { index.grow(hashes: hashes) }
        return UInt32(truncatingIfNeeded: idx)
    }

    /// Forgets every string, keeping the memory.
    mutating func removeAll() {
        arenaCount = 0
        count = 0
        starts[0] = 0
        encodedBytes = 0
        index.removeAll()
    }

    /// Bytes of this table in the archive: each string as varint length + bytes.
    var encodedSize: Int { encodedBytes }
}

// MARK: - Writer state

@usableFromInline
struct SavedFrame {
    @usableFromInline var start: Int
    @usableFromInline var lenPos: Int
    @usableFromInline var big: Bool
    @usableFromInline var seen: UInt64
    @usableFromInline init(start: Int, lenPos: Int, big: Bool, seen: UInt64) {
        self.start = start
        self.lenPos = lenPos
        self.big = big
        self.seen = seen
    }
}

@usableFromInline
struct WriterCore {
    // The records section.
    @usableFromInline var out: UnsafeMutableRawPointer
    @usableFromInline var count: Int
    @usableFromInline var capacity: Int
    @usableFromInline var keys: InternTable
    @usableFromInline var names: InternTable
    /// key | tag << 32 of every value of every open frame (a stack).
    @usableFromInline var fkeys: UnsafeMutablePointer<UInt64>
    @usableFromInline var fTop: Int
    @usableFromInline var fCap: Int
    /// The current frame (innermost open record): its first entry in fkeys,
    /// the position of its reserved length byte, and whether it uses bigSets.
    @usableFromInline var fStart: Int
    @usableFromInline var fLenPos: Int
    @usableFromInline var fBig: Bool
    /// The current frame's keys below 64, as bits: duplicate checks of those
    /// keys need no search.
    @usableFromInline var fSeen: UInt64
    /// -1: no object open; 0: the object's own fields; n: n nested records open.
    @usableFromInline var depth: Int
    /// Frames below the current one, indexed by depth.
    @usableFromInline var saved: UnsafeMutablePointer<SavedFrame>
    /// Key -> tag of frames with more than `smallRecordKeys` values, by depth.
    /// Smaller records are searched linearly in fkeys.
    @usableFromInline var bigSets: [[UInt32: UInt8]]
    @usableFromInline var recordCount: Int
    @usableFromInline var maxRef: Int
    /// The first error of a call that cannot throw; `finish` reports it.
    @usableFromInline var sticky: WriteFailure?
    /// v1.1: records store their class version (header flag
    /// `ArchiveFormat.flagRecordVersions`); decided before the first record.
    @usableFromInline var recordVersions = false
    /// Carried records: records store `carry` (header flag `ArchiveFormat.flagRecordCarry`).
    @usableFromInline var recordCarry = false
    /// Where each record begins in the records section (size budgets: a
    /// record's own bytes are the distance to the next one's start):
    /// `recordCount` entries (every `beginObject` adds one), room for
    /// `recordStartsCap`. A plain buffer: appending checks no uniqueness.
    @usableFromInline var recordStarts: UnsafeMutablePointer<UInt32>
    @usableFromInline var recordStartsCap: Int

    /// Records above this many keys switch from a linear scan to a dictionary.
    @inlinable static var smallRecordKeys: Int { 16 }

    init(estimatedObjects: Int) {
        let est = max(0, min(estimatedObjects, ArchiveLimits.maxObjects))
        capacity = max(4096, min(est * 112, ArchiveLimits.maxArchiveBytes))
        out = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        count = 0
        keys = InternTable(expected: 64)
        // Identifiers usually repeat across parents ("row0", "row1", ...):
        // start small; the table grows when they do not.
        names = InternTable(expected: max(64, est))
        fCap = 256
        fkeys = UnsafeMutablePointer<UInt64>.allocate(capacity: fCap)
        fTop = 0
        fStart = 0
        fLenPos = 0
        fBig = false
        fSeen = 0
        depth = -1
        saved = UnsafeMutablePointer<SavedFrame>.allocate(capacity: ArchiveLimits.maxRecordDepth + 2)
        bigSets = Array(repeating: [:], count: ArchiveLimits.maxRecordDepth + 2)
        recordCount = 0
        maxRef = -1
        sticky = nil
        recordStartsCap = max(16, est &+ 1)
        recordStarts = UnsafeMutablePointer<UInt32>.allocate(capacity: recordStartsCap)
    }

    init(copying o: WriterCore) {
        capacity = o.capacity
        out = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        out.copyMemory(from: o.out, byteCount: o.count)
        count = o.count
        keys = InternTable(copying: o.keys)
        names = InternTable(copying: o.names)
        fCap = o.fCap
        fkeys = UnsafeMutablePointer<UInt64>.allocate(capacity: fCap)
        fkeys.initialize(from: o.fkeys, count: o.fTop)
        fTop = o.fTop
        fStart = o.fStart
        fLenPos = o.fLenPos
        fBig = o.fBig
        fSeen = o.fSeen
        depth = o.depth
        saved = UnsafeMutablePointer<SavedFrame>.allocate(capacity: ArchiveLimits.maxRecordDepth + 2)
        if o.depth > 0 { saved.initialize(from: o.saved, count: o.depth) }
        bigSets = o.bigSets
        recordCount = o.recordCount
        maxRef = o.maxRef
        sticky = o.sticky
        recordVersions = o.recordVersions
        recordCarry = o.recordCarry
        recordStartsCap = o.recordStartsCap
        recordStarts = UnsafeMutablePointer<UInt32>.allocate(capacity: recordStartsCap)
        recordStarts.initialize(from: o.recordStarts, count: o.recordCount)
    }

    /// Back to the state of a new writer, keeping the memory.
    mutating func reset() {
        count = 0
        keys.removeAll()
        names.removeAll()
        fTop = 0
        fStart = 0
        fLenPos = 0
        fBig = false
        fSeen = 0
        depth = -1
        for d in bigSets.indices where !bigSets[d].isEmpty { bigSets[d].removeAll(keepingCapacity: true) }
        recordCount = 0
        maxRef = -1
        sticky = nil
        recordVersions = false
        recordCarry = false
    }

    func release() {
        out.deallocate()
        keys.release()
        names.release()
        fkeys.deallocate()
        saved.deallocate()
        recordStarts.deallocate()
    }

    // MARK: buffer

    /// Makes room for `n` more bytes, refusing to grow the records past the
    /// archive limit.
    @inlinable @inline(__always)
    mutating func reserve(_ n: Int) throws(WriteFailure) {
        if _slowPath(n > capacity &- count) { try grow(n) }
    }

    @usableFromInline @inline(never)
    mutating func grow(_ n: Int) throws(WriteFailure) {
        if n > ArchiveLimits.maxArchiveBytes - count {
            throw WriteFailure.limit("the archive would exceed \(ArchiveLimits.maxArchiveBytes) bytes (record \(recordCount - 1) already needs \(count) bytes and \(n) more are asked for)")
        }
        growUnchecked(n)
    }

    /// Makes room for `n` more bytes (n is small and bounded by the caller).
    @inlinable @inline(__always)
    mutating func reserveUnchecked(_ n: Int) {
        if _slowPath(n > capacity &- count) { growUnchecked(n) }
    }

    @usableFromInline @inline(never)
    mutating func growUnchecked(_ n: Int) {
        let newCap = growCapacity(capacity, count + n)
        let p = UnsafeMutableRawPointer.allocate(byteCount: newCap, alignment: 16)
        p.copyMemory(from: out, byteCount: count)
        out.deallocate()
        out = p
        capacity = newCap
    }

    // MARK: keys of the current record

    @inlinable @inline(__always)
    func entryIndex(_ key: UInt32) -> Int {
        var i = fStart
        while i < fTop {
            if UInt32(truncatingIfNeeded: fkeys[i]) == key { return i }
            i &+= 1
        }
        return -1
    }

    @inlinable @inline(__always)
    func hasKey(_ key: UInt32) -> Bool {
        if key < 64 { return fSeen & (1 &<< UInt64(key)) != 0 }
        if _slowPath(fBig) { return bigSets[depth][key] != nil }
        return entryIndex(key) >= 0
    }

    @inlinable
    func rawTag(ofKey key: UInt32) -> UInt8? {
        if depth < 0 { return nil }
        if fBig { return bigSets[depth][key] }
        let i = entryIndex(key)
        return i < 0 ? nil : UInt8(truncatingIfNeeded: fkeys[i] &>> 32)
    }

    @inlinable @inline(__always)
    mutating func pushKey(_ key: UInt32, _ tag: UInt8) {
        if _slowPath(fTop == fCap) { growKeys() }
        fkeys[fTop] = UInt64(key) | (UInt64(tag) &<< 32)
        fTop &+= 1
        if key < 64 { fSeen |= 1 &<< UInt64(key) }
        if _slowPath(fBig || fTop &- fStart > WriterCore.smallRecordKeys) { noteBig(key, tag) }
    }

    /// Forgets the last key pushed (a value that was not committed).
    @usableFromInline @inline(never)
    mutating func dropLastKey() {
        fTop -= 1
        let key = UInt32(truncatingIfNeeded: fkeys[fTop])
        if key < 64 { fSeen &= ~(1 &<< UInt64(key)) }
        if fBig { bigSets[depth][UInt32(truncatingIfNeeded: fkeys[fTop])] = nil }
    }

    @usableFromInline @inline(never)
    mutating func growKeys() {
        let newCap = fCap * 2
        let p = UnsafeMutablePointer<UInt64>.allocate(capacity: newCap)
        p.initialize(from: fkeys, count: fTop)
        fkeys.deallocate()
        fkeys = p
        fCap = newCap
    }

    @usableFromInline @inline(never)
    mutating func noteBig(_ key: UInt32, _ tag: UInt8) {
        if fBig {
            bigSets[depth][key] = tag
            return
        }
        fBig = true
        var d = bigSets[depth]
        bigSets[depth] = [:]
        d.removeAll(keepingCapacity: true)
        for i in fStart..<fTop {
            d[UInt32(truncatingIfNeeded: fkeys[i])] = UInt8(truncatingIfNeeded: fkeys[i] >> 32)
        }
        bigSets[depth] = d
    }

    // MARK: fields

    /// Checks that a value may be written under `key`, makes room for the
    /// header and `payloadMax` bytes, writes the header, and returns where the
    /// payload goes. The caller stores the payload and sets `count`.
    @inlinable @inline(__always)
    mutating func openField(_ key: UInt32, _ tag: UInt8, _ payloadMax: Int) throws(WriteFailure) -> UnsafeMutableRawPointer {
        if _slowPath(depth < 0) { throw noObject() }
        if _slowPath(hasKey(key)) { throw WriteFailure.duplicateKey }
        if _slowPath(fTop &- fStart >= ArchiveLimits.maxValuesPerRecord) { throw tooManyValues() }
        try reserve(payloadMax &+ 6)
        pushKey(key, tag)
        var p = out + count
        if key < 15 {
            p.storeBytes(of: UInt8(truncatingIfNeeded: key &<< 4) | tag, as: UInt8.self)
            p += 1
        } else {
            p.storeBytes(of: 0xF0 | tag, as: UInt8.self)
            p += 1
            p += putVarint(p, UInt64(key &- 15))
        }
        return p
    }

    @usableFromInline
    func noObject() -> WriteFailure {
        .state("no object is open: call beginObject before writing values")
    }

    @usableFromInline
    func tooManyValues() -> WriteFailure {
        .limit("record \(recordCount - 1) has more than \(ArchiveLimits.maxValuesPerRecord) values at nesting depth \(depth)")
    }

    @inlinable @inline(__always)
    mutating func commit(_ p: UnsafeMutableRawPointer) {
        count = p - out
    }

    /// Stores the length of the frame whose reserved length byte is at `lenPos`
    /// (its content runs from lenPos + 1 to count).
    @inlinable @inline(__always)
    mutating func closeLength(_ lenPos: Int) {
        let len = count &- lenPos &- 1
        if len < 0x80 {
            out.storeBytes(of: UInt8(truncatingIfNeeded: len), toByteOffset: lenPos, as: UInt8.self)
        } else {
            closeLongLength(lenPos, len)
        }
    }

    @usableFromInline @inline(never)
    mutating func closeLongLength(_ lenPos: Int, _ len: Int) {
        let n = varintSize(UInt64(len))
        reserveUnchecked(n - 1)
        // Overlapping move to the right (copyMemory is memmove).
        (out + lenPos + n).copyMemory(from: out + lenPos + 1, byteCount: len)
        _ = putVarint(out + lenPos, UInt64(len))
        count += n - 1
    }

    // MARK: objects and nested records

    /// Starts record `recordCount`. Misuse is noted in `sticky` (the first
    /// problem wins, in this order: an object still open, too many objects,
    /// a parent that is not an earlier record, a version or carry count the
    /// header flags do not store); the record is written all the same.
    @inlinable
    mutating func beginObject(identifier: UInt32, parent: Int?, className: UInt32?, version: UInt32 = 0, carry: UInt32 = 0) {
        if _slowPath(depth >= 0) { closeUnfinishedObject() }
        let index = recordCount
        let parentOK = parent.map { $0 >= 0 && $0 < index } ?? true
        if _slowPath(index >= ArchiveLimits.maxObjects || !parentOK
                     || (version != 0 && !recordVersions) || (carry != 0 && !recordCarry)) {
            noteObjectProblems(index, parent, version, carry)
        }
        let delta: UInt64 = parentOK ? parent.map { UInt64(index &- $0) } ?? 0 : 0
        reserveUnchecked(32)
        if _slowPath(index == recordStartsCap) { growRecordStarts() }
        recordStarts[index] = UInt32(truncatingIfNeeded: count)
        var p = out + count
        p += putVarint(p, UInt64(identifier))
        p += putVarint(p, delta)
        p += putVarint(p, className.map { UInt64($0) &+ 1 } ?? 0)
        if recordVersions { p += putVarint(p, UInt64(version)) }
        if recordCarry { p += putVarint(p, UInt64(carry)) }
        count = p - out
        fLenPos = count
        count &+= 1
        fTop = 0
        fStart = 0
        fBig = false
        fSeen = 0
        depth = 0
        recordCount = index &+ 1
    }

    /// beginObject while a record is still open: noted, and the record closed.
    @usableFromInline @inline(never)
    mutating func closeUnfinishedObject() {
        if sticky == nil {
            sticky = .state("beginObject was called while record \(recordCount - 1) was still open (endObject is missing)")
        }
        while depth > 0 { popFrame() }
        closeLength(fLenPos)
        fTop = 0
        depth = -1
    }

    @usableFromInline @inline(never)
    mutating func noteObjectProblems(_ index: Int, _ parent: Int?, _ version: UInt32, _ carry: UInt32) {
        if index >= ArchiveLimits.maxObjects && sticky == nil {
            sticky = .limit("more than \(ArchiveLimits.maxObjects) objects")
        }
        if let parent, !(parent >= 0 && parent < index), sticky == nil {
            sticky = .state("record \(index): parent \(parent) is not an earlier record")
        }
        if !recordVersions && version != 0 && sticky == nil {
            sticky = .state("record \(index) has class version \(version), but the writer was not told to store versions (recordVersions)")
        }
        if !recordCarry && carry != 0 && sticky == nil {
            sticky = .state("record \(index) is carried, but the writer was not told to store carry counts (recordCarry)")
        }
    }

    @usableFromInline @inline(never)
    mutating func growRecordStarts() {
        let newCap = growCapacity(recordStartsCap, recordStartsCap &+ 1)
        let p = UnsafeMutablePointer<UInt32>.allocate(capacity: newCap)
        p.initialize(from: recordStarts, count: recordCount)
        recordStarts.deallocate()
        recordStarts = p
        recordStartsCap = newCap
    }

    @inlinable
    mutating func endObject() throws(WriteFailure) {
        if _slowPath(depth != 0) { throw endObjectMisuse() }
        closeLength(fLenPos)
        if _slowPath(fBig) { bigSets[0].removeAll(keepingCapacity: true) }
        fTop = 0
        fBig = false
        fSeen = 0
        depth = -1
    }

    @usableFromInline @inline(never)
    func endObjectMisuse() -> WriteFailure {
        if depth < 0 { return WriteFailure.state("endObject: no object is open") }
        return WriteFailure.state("endObject: record \(recordCount - 1) still has \(depth) nested record(s) open (endRecord is missing)")
    }

    mutating func beginRecord(_ key: UInt32) throws(WriteFailure) {
        if depth < 0 { throw noObject() }
        if depth >= ArchiveLimits.maxRecordDepth {
            if hasKey(key) { throw WriteFailure.duplicateKey }
            throw WriteFailure.limit("record \(recordCount - 1): nested records deeper than \(ArchiveLimits.maxRecordDepth)")
        }
        let p = try openField(key, ValueTag.record.rawValue, 1)
        saved[depth] = SavedFrame(start: fStart, lenPos: fLenPos, big: fBig, seen: fSeen)
        fLenPos = p - out
        count = fLenPos + 1
        fStart = fTop
        fBig = false
        fSeen = 0
        depth += 1
    }

    mutating func endRecord() throws(WriteFailure) {
        if depth < 0 { throw noObject() }
        if depth == 0 { throw WriteFailure.state("endRecord: no nested record is open in record \(recordCount - 1)") }
        popFrame()
    }

    /// Closes the current nested record.
    @usableFromInline
    mutating func popFrame() {
        closeLength(fLenPos)
        if fBig { bigSets[depth].removeAll(keepingCapacity: true) }
        fTop = fStart
        depth -= 1
        let s = saved[depth]
        fStart = s.start
        fLenPos = s.lenPos
        fBig = s.big
        fSeen = s.seen
    }

    // MARK: finish

    /// Checks that the archive can be finished and returns its total size.
    func finishSize(info: ArchiveInfo) throws(WriteFailure) -> Int {
        if let s = sticky { throw s }
        if depth >= 0 {
            throw WriteFailure.state("finish: record \(recordCount - 1) is still open (endObject is missing)")
        }
        if maxRef >= recordCount {
            throw WriteFailure.state("finish: an object reference points to record \(maxRef), but only \(recordCount) records were written")
        }
        let app = info.appVersion, sys = info.systemVersion, idiom = info.idiom
        for (name, s) in [("app version", app), ("system version", sys), ("idiom", idiom)] {
            if s.utf8.count > ArchiveLimits.maxInfoStringBytes {
                throw WriteFailure.limit("the \(name) has \(s.utf8.count) bytes, more than \(ArchiveLimits.maxInfoStringBytes)")
            }
            if s.utf8.contains(0) { throw WriteFailure.state("the \(name) contains a NUL byte") }
        }
        let infoBytes = varintSize(UInt64(app.utf8.count)) + app.utf8.count
            + varintSize(UInt64(sys.utf8.count)) + sys.utf8.count
            + varintSize(UInt64(idiom.utf8.count)) + idiom.utf8.count
            + 8 + varintSize(UInt64(recordCount))
        let tableBytes = varintSize(UInt64(keys.count)) + varintSize(UInt64(names.count))
            + keys.encodedSize + names.encodedSize
        let total = ArchiveHeader.size + infoBytes + tableBytes + count + 4
        if total > ArchiveLimits.maxArchiveBytes {
            throw WriteFailure.limit("the archive would be \(total) bytes, more than the limit of \(ArchiveLimits.maxArchiveBytes)")
        }
        return total
    }

    /// Writes the whole archive (`total` bytes, from `finishSize`) at `base`.
    func finishWrite(info: ArchiveInfo, total: Int, to base: UnsafeMutableRawPointer) -> Int {
        var app = info.appVersion, sys = info.systemVersion, idiom = info.idiom
        let savedAt = info.savedAtMs
        let records = UnsafeRawPointer(out)
        let recordBytes = count
        let n = recordCount
        let keys = self.keys, names = self.names
        let flags = (recordVersions ? ArchiveFormat.flagRecordVersions : 0) | (recordCarry ? ArchiveFormat.flagRecordCarry : 0)
        ArchiveHeader(flags: flags, length: UInt32(truncatingIfNeeded: total)).write(to: base)
        var p = base + ArchiveHeader.infoOffset
        func putString(_ s: inout String) {
            s.withUTF8 { u in
                p += putVarint(p, UInt64(u.count))
                if u.count > 0 { p.copyMemory(from: u.baseAddress!, byteCount: u.count) }
                p += u.count
            }
        }
        putString(&app)
        putString(&sys)
        putString(&idiom)
        p.storeBytes(of: savedAt.littleEndian, as: Int64.self)
        p += 8
        p += putVarint(p, UInt64(n))
        p += putVarint(p, UInt64(keys.count))
        p += putVarint(p, UInt64(names.count))
        for table in [keys, names] {
            for i in 0..<table.count {
                let s = table.bytes(i)
                p += putVarint(p, UInt64(s.count))
                if s.count > 0 { p.copyMemory(from: s.baseAddress!, byteCount: s.count) }
                p += s.count
            }
        }
        // Checksum the header and tables, then copy and checksum the records in one pass.
        var crc = CRC32C.update(0, UnsafeRawPointer(base), p - base)
        crc = CRC32C.copy(crc, from: records, to: p, recordBytes)
        p += recordBytes
        p.storeBytes(of: crc.littleEndian, as: UInt32.self)
        p += 4
        return p - base
    }

    func finish(info: ArchiveInfo) throws(WriteFailure) -> [UInt8] {
        let total = try finishSize(info: info)
        return [UInt8](unsafeUninitializedCapacity: total) { buf, initialized in
            initialized = finishWrite(info: info, total: total, to: UnsafeMutableRawPointer(buf.baseAddress!))
        }
    }

    func finish(info: ArchiveInfo, into allocate: (Int) -> UnsafeMutableRawPointer?) throws(WriteFailure) -> (bytes: UnsafeMutableRawPointer, count: Int)? {
        let total = try finishSize(info: info)
        guard let base = allocate(total) else { return nil }
        let written = finishWrite(info: info, total: total, to: base)
        return (base, written)
    }
}

@usableFromInline
final class WriterBox {
    @usableFromInline let core: UnsafeMutablePointer<WriterCore>

    init(estimatedObjects: Int) {
        core = UnsafeMutablePointer<WriterCore>.allocate(capacity: 1)
        core.initialize(to: WriterCore(estimatedObjects: estimatedObjects))
    }

    @usableFromInline
    init(copying other: WriterBox) {
        core = UnsafeMutablePointer<WriterCore>.allocate(capacity: 1)
        core.initialize(to: WriterCore(copying: other.core.pointee))
    }

    deinit {
        core.pointee.release()
        core.deinitialize(count: 1)
        core.deallocate()
    }
}

// MARK: - Public writer

/// Writes one archive. Call `beginObject` for each object in archive order
/// (depth-first pre-order: a parent before its children), write its values,
/// `endObject`, and finally `finish`. Keys and names are interned first.
///
/// Identical call sequences give identical bytes.
public struct ArchiveWriter {
    @usableFromInline var _box: WriterBox

    public init(estimatedObjects: Int = 0) {
        _box = WriterBox(estimatedObjects: estimatedObjects)
    }

    /// The state, made unique first (copy on write).
    @inlinable
    var _core: UnsafeMutablePointer<WriterCore> {
        @inline(__always) mutating get {
            if _slowPath(!isKnownUniquelyReferenced(&_box)) { _box = WriterBox(copying: _box) }
            return _box.core
        }
    }

    /// Interns a key; the caller has validated the bytes (non-empty UTF-8
    /// without NUL, at most `ArchiveLimits.maxKeyBytes`). Known keys cost a
    /// hash and one comparison, and allocate nothing.
    @inlinable
    public mutating func key(_ utf8: UnsafeRawBufferPointer) -> UInt32 {
        _core.pointee.keys.intern(utf8)
    }

    /// Interns a name (an identifier or a class name); the caller has
    /// validated the bytes.
    @inlinable
    public mutating func name(_ utf8: UnsafeRawBufferPointer) -> UInt32 {
        _core.pointee.names.intern(utf8)
    }

    /// Keys interned so far.
    public var keyCount: Int { _box.core.pointee.keys.count }
    /// Names interned so far.
    public var nameCount: Int { _box.core.pointee.names.count }

    /// Objects begun so far (the open one included).
    @inlinable
    public var recordCount: Int { _box.core.pointee.recordCount }

    /// 0 at the object's own level (and when no object is open); n with n
    /// nested records open.
    @inlinable
    public var nestingDepth: Int { max(0, _box.core.pointee.depth) }

    /// True between beginObject and endObject.
    @inlinable
    public var isObjectOpen: Bool { _box.core.pointee.depth >= 0 }

    /// Bytes of the records written so far.
    public var recordBytes: Int { _box.core.pointee.count }

    /// Where record `i` (< recordCount) begins in the records section; its
    /// own bytes run to the next record's start (the last one's to
    /// `recordBytes`). Size budgets measure records with it.
    public func recordStart(_ i: Int) -> Int {
        let c = _box.core
        precondition(i >= 0 && i < c.pointee.recordCount, "Index out of range")
        return Int(c.pointee.recordStarts[i])
    }

    /// Record `i`'s identifier (a name index), parent and class (a name
    /// index), read back from its header. Valid until the next `reset`.
    public func recordHeader(_ i: Int) -> (identifier: UInt32, parent: Int?, className: UInt32?) {
        let c = _box.core.pointee
        precondition(i >= 0 && i < c.recordCount, "Index out of range")
        var r = ArchiveCursor(UnsafeRawPointer(c.out), at: Int(c.recordStarts[i]))
        let id = r.varint(c.count) ?? 0
        let delta = r.varint(c.count) ?? 0
        let cls = r.varint(c.count) ?? 0
        return (UInt32(truncatingIfNeeded: id), delta == 0 ? nil : i - Int(delta), cls == 0 ? nil : UInt32(truncatingIfNeeded: cls - 1))
    }

    /// Name `i` as interned (an identifier or a class name).
    public func nameString(_ i: UInt32) -> String {
        String(decoding: _box.core.pointee.names.bytes(Int(i)), as: UTF8.self)
    }

    /// The size `finish(info:)` would give, with the same checks (nothing is
    /// assembled).
    public func archiveSize(info: ArchiveInfo) throws(WriteFailure) -> Int {
        try _box.core.pointee.finishSize(info: info)
    }

    /// Starts record `recordCount`. `parent` is an earlier record index or
    /// nil for a root. Misuse (an object still open, a parent that is not an
    /// earlier record, too many objects) is reported by `finish`.
    public mutating func beginObject(identifier: UInt32, parent: Int?, className: UInt32?) {
        _core.pointee.beginObject(identifier: identifier, parent: parent, className: className)
    }

    /// v1.1: starts a record that stores its class version. Requires
    /// `recordVersions` (else `finish` fails with `.state` for a version other than 0).
    public mutating func beginObject(identifier: UInt32, parent: Int?, className: UInt32?, version: UInt32) {
        _core.pointee.beginObject(identifier: identifier, parent: parent, className: className, version: version)
    }

    /// v1.1: whether every record stores its class version (the header flag
    /// `ArchiveFormat.flagRecordVersions`). Set before the first record;
    /// false (the default) writes v1 bytes.
    /// Carried records: starts a record with its class version and carry count
    /// (each needs its flag: `recordVersions`, `recordCarry`).
    public mutating func beginObject(identifier: UInt32, parent: Int?, className: UInt32?, version: UInt32, carry: UInt32) {
        _core.pointee.beginObject(identifier: identifier, parent: parent, className: className, version: version, carry: carry)
    }

    /// Carried records: whether every record stores its carry count (header flag
    /// `ArchiveFormat.flagRecordCarry`). Set before the first record.
    public var recordCarry: Bool {
        get { _box.core.pointee.recordCarry }
        set { setHeaderFlag(\.recordCarry, "recordCarry", newValue) }
    }

    public var recordVersions: Bool {
        get { _box.core.pointee.recordVersions }
        set { setHeaderFlag(\.recordVersions, "recordVersions", newValue) }
    }

    /// A header flag can change only before the first record; later, the
    /// writer fails (sticky) and the flag keeps its value.
    private mutating func setHeaderFlag(_ flag: WritableKeyPath<WriterCore, Bool>, _ name: String, _ value: Bool) {
        let c = _core
        if c.pointee.recordCount > 0 {
            if c.pointee.sticky == nil { c.pointee.sticky = .state("\(name) was changed after the first record") }
            return
        }
        c.pointee[keyPath: flag] = value
    }

    /// v1.1: an array of references to records (each earlier, later or
    /// itself; `finish` checks they exist). Tag 10 (docs/FORMAT.md).
    public mutating func writeObjectArray(_ key: UInt32, records: UnsafeBufferPointer<Int>) throws(WriteFailure) {
        let c = _core
        let n = records.count
        if _slowPath(n > ArchiveLimits.maxArchiveBytes / 4) { throw c.pointee.tooBig(n &* 4) }
        var maxR = -1
        for r in records {
            if r < 0 || r >= ArchiveLimits.maxObjects {
                throw WriteFailure.state("record \(c.pointee.recordCount - 1): object reference to record \(r) is out of range")
            }
            if r > maxR { maxR = r }
        }
        var content = varintSize(UInt64(n))
        for r in records { content &+= varintSize(UInt64(r)) }
        var p = try c.pointee.openField(key, ValueTag.objectArray.rawValue, content &+ 10)
        p += putVarint(p, UInt64(content))
        p += putVarint(p, UInt64(n))
        for r in records { p += putVarint(p, UInt64(r)) }
        if maxR > c.pointee.maxRef { c.pointee.maxRef = maxR }
        c.pointee.commit(p)
    }

    /// Closes the open object. `.state` if a nested record is still open or no
    /// object is open.
    public mutating func endObject() throws(WriteFailure) {
        try _core.pointee.endObject()
    }

    @inlinable
    public mutating func writeBool(_ key: UInt32, _ v: Bool) throws(WriteFailure) {
        let c = _core
        let p = try c.pointee.openField(key, v ? 1 : 0, 0)
        c.pointee.commit(p)
    }

    @inlinable
    public mutating func writeInt(_ key: UInt32, _ v: Int64) throws(WriteFailure) {
        let c = _core
        var p = try c.pointee.openField(key, ValueTag.int.rawValue, 10)
        p += putVarint(p, zigzag(v))
        c.pointee.commit(p)
    }

    @inlinable
    public mutating func writeDouble(_ key: UInt32, _ v: Double) throws(WriteFailure) {
        let c = _core
        let p = try c.pointee.openField(key, ValueTag.double.rawValue, 8)
        p.storeBytes(of: v.bitPattern.littleEndian, as: UInt64.self)
        c.pointee.commit(p + 8)
    }

    @inlinable
    public mutating func writeString(_ key: UInt32, _ utf8: UnsafeRawBufferPointer) throws(WriteFailure) {
        try _writeLengthPrefixed(key, ValueTag.string.rawValue, utf8)
    }

    @inlinable
    public mutating func writeBytes(_ key: UInt32, _ bytes: UnsafeRawBufferPointer) throws(WriteFailure) {
        try _writeLengthPrefixed(key, ValueTag.bytes.rawValue, bytes)
    }

    /// Writes an OS string (tag 11): any bytes but NUL, which the caller
    /// has checked (the validator rejects a NUL).
    @inlinable
    public mutating func writeOSString(_ key: UInt32, _ bytes: UnsafeRawBufferPointer) throws(WriteFailure) {
        try _writeLengthPrefixed(key, ValueTag.osString.rawValue, bytes)
    }

    /// Writes a value of an opaque tag (12...15: a sealed value, LOCAL marks, a future type) as its payload;
    /// tools use it to carry values they cannot interpret. Another tag: `.state`.
    public mutating func writeUnknown(_ key: UInt32, tag: UInt8, payload: UnsafeRawBufferPointer) throws(WriteFailure) {
        guard ValueTag.isOpaque(rawTag: tag) else {
            throw WriteFailure.state("writeUnknown: tag \(tag) is not an opaque tag (\(ValueTag.opaqueRawTags))")
        }
        try _writeLengthPrefixed(key, tag, payload)
    }

    @inlinable @inline(__always)
    mutating func _writeLengthPrefixed(_ key: UInt32, _ tag: UInt8, _ data: UnsafeRawBufferPointer) throws(WriteFailure) {
        let c = _core
        let n = data.count
        if _slowPath(n > ArchiveLimits.maxArchiveBytes) { throw c.pointee.tooBig(n) }
        var p = try c.pointee.openField(key, tag, n &+ 10)
        p += putVarint(p, UInt64(n))
        if n > 0, let src = data.baseAddress {
            copyBytes(p, src, n)
            p += n
        }
        c.pointee.commit(p)
    }

    /// A reference to record `record` (any record of the archive, earlier or
    /// later; `finish` checks it exists).
    @inlinable
    public mutating func writeObject(_ key: UInt32, record: Int) throws(WriteFailure) {
        let c = _core
        if _slowPath(record < 0 || record >= ArchiveLimits.maxObjects) {
            throw WriteFailure.state("record \(c.pointee.recordCount - 1): object reference to record \(record) is out of range")
        }
        var p = try c.pointee.openField(key, ValueTag.object.rawValue, 10)
        p += putVarint(p, UInt64(record))
        if record > c.pointee.maxRef { c.pointee.maxRef = record }
        c.pointee.commit(p)
    }

    @inlinable
    public mutating func writeIntArray(_ key: UInt32, _ values: UnsafeBufferPointer<Int64>) throws(WriteFailure) {
        let c = _core
        let n = values.count
        if _slowPath(n > ArchiveLimits.maxArchiveBytes / 10) { throw c.pointee.tooBig(n &* 10) }
        // One pass: a one-byte length is reserved and fixed up afterwards
        // (moving the content only when it is 128 bytes or longer).
        let p0 = try c.pointee.openField(key, ValueTag.intArray.rawValue, n &* 10 &+ 20)
        var p = p0 + 1
        p += putVarint(p, UInt64(n))
        for v in values { p += putVarint(p, zigzag(v)) }
        let content = p - (p0 + 1)
        if _fastPath(content < 0x80) {
            p0.storeBytes(of: UInt8(truncatingIfNeeded: content), as: UInt8.self)
        } else {
            let extra = varintSize(UInt64(content)) &- 1
            (p0 + 1 + extra).copyMemory(from: p0 + 1, byteCount: content)
            _ = putVarint(p0, UInt64(content))
            p += extra
        }
        c.pointee.commit(p)
    }

    @inlinable
    public mutating func writeStringArray<C: Collection>(_ key: UInt32, _ elements: C) throws(WriteFailure)
    where C.Element == UnsafeRawBufferPointer {
        let c = _core
        var n = 0
        var content = 0
        for e in elements {
            n &+= 1
            content &+= varintSize(UInt64(e.count)) &+ e.count
            if _slowPath(content > ArchiveLimits.maxArchiveBytes) { throw c.pointee.tooBig(content) }
        }
        content &+= varintSize(UInt64(n))
        var p = try c.pointee.openField(key, ValueTag.stringArray.rawValue, content &+ 10)
        p += putVarint(p, UInt64(content))
        let contentStart = p
        p += putVarint(p, UInt64(n))
        var written = 0
        for e in elements {
            // Never write past what was measured, even if the collection changed.
            if _slowPath(written == n || e.count > content &- (p - contentStart) &- varintSize(UInt64(e.count))) { break }
            p += putVarint(p, UInt64(e.count))
            if e.count > 0, let src = e.baseAddress {
                copyBytes(p, src, e.count)
                p += e.count
            }
            written &+= 1
        }
        if _slowPath(written != n || p - contentStart != content) {
            // The collection gave different elements on the second pass: the
            // header and payload were not committed; forget the key too.
            c.pointee.dropLastKey()
            throw WriteFailure.state("writeStringArray: the collection changed while it was written")
        }
        c.pointee.commit(p)
    }

    /// Opens a nested record under `key`; values go into it until `endRecord`.
    /// Deeper than `ArchiveLimits.maxRecordDepth`: `.limit`.
    public mutating func beginRecord(_ key: UInt32) throws(WriteFailure) {
        try _core.pointee.beginRecord(key)
    }

    /// Closes the innermost nested record. `.state` at the object level.
    public mutating func endRecord() throws(WriteFailure) {
        try _core.pointee.endRecord()
    }

    /// The tag already written under `key` in the current record, or nil
    /// (also nil for a future tag written with `writeUnknown`: see `rawTag`).
    @inlinable
    public func tag(ofKey key: UInt32) -> ValueTag? {
        guard let t = _box.core.pointee.rawTag(ofKey: key) else { return nil }
        return ValueTag(rawValue: t)
    }

    /// The raw tag (0...15) already written under `key` in the current record.
    @inlinable
    public func rawTag(ofKey key: UInt32) -> UInt8? {
        _box.core.pointee.rawTag(ofKey: key)
    }

    /// Forgets everything written and interned (indexes from `key` and
    /// `name` become invalid), keeping the memory for the next archive: a
    /// writer reused this way touches no fresh pages.
    public mutating func reset() {
        _core.pointee.reset()
    }

    /// Assembles the archive: header (info.objectCount is replaced by
    /// recordCount, formatVersion by 1), string tables, records, checksum.
    /// Info strings longer than `ArchiveLimits.maxInfoStringBytes` or a total
    /// above `ArchiveLimits.maxArchiveBytes`: `.limit`. The writer is left as
    /// it was: calling `finish` again gives the same bytes.
    public mutating func finish(info: ArchiveInfo) throws(WriteFailure) -> [UInt8] {
        try _core.pointee.finish(info: info)
    }

    /// `finish` into memory the caller provides, without an intermediate
    /// array: `allocate` is called once with the archive's size in bytes and
    /// returns at least that many writable bytes (e.g. from `malloc`), or nil.
    /// Returns the buffer and the archive's size, or nil when `allocate`
    /// returned nil. The buffer belongs to the caller. Errors are those of
    /// `finish`, reported before `allocate` is called.
    public mutating func finish(info: ArchiveInfo, into allocate: (Int) -> UnsafeMutableRawPointer?) throws(WriteFailure) -> (bytes: UnsafeMutableRawPointer, count: Int)? {
        try _core.pointee.finish(info: info, into: allocate)
    }
}

// MARK: - The encode calls' fast lane

/// `putVarint` without the byte loop: the 2- and 3-byte varints (values
/// below 2^21: counts, small ints, references) by one store each, longer
/// ones (timestamps, ids, hashes, negative numbers) by `putLongVarint`.
/// The same bytes as `putVarint`; the caller has 10 writable bytes at `p`
/// (a 3-byte varint is stored as 4 bytes, one of 4 to 8 bytes as 8: bytes
/// past the varint's end are scratch, which the writer's `count` does not
/// cover).
@inlinable @inline(__always)
func putShortVarint(_ p: UnsafeMutableRawPointer, _ x: UInt64) -> Int {
    if x < 0x80 {
        p.storeBytes(of: UInt8(truncatingIfNeeded: x), as: UInt8.self)
        return 1
    }
    if x < 0x4000 {
        let w = UInt16(truncatingIfNeeded: (x & 0x7F) | 0x80 | (x &<< 1) & 0x7F00)
        p.storeBytes(of: w.littleEndian, as: UInt16.self)
        return 2
    }
    if x < 0x20_0000 {
        let w = UInt32(truncatingIfNeeded: (x & 0x7F) | 0x8080 | (x &<< 1) & 0x7F00 | (x &<< 2) & 0x7F_0000)
        p.storeBytes(of: w.littleEndian, as: UInt32.self)
        return 3
    }
    return putLongVarint(p, x)
}

extension ArchiveWriter {
    /// The writer's state for the values of one object, without the
    /// copy-on-write check that every other mutating call makes (one check
    /// here). The sink stays valid while this writer is neither copied,
    /// assigned, reset nor finished: the engine takes one per encode
    /// callback, during which nothing copies the writer.
    @inlinable
    public mutating func sink() -> FieldSink { FieldSink(_core) }
}

/// Writes a value the way the `ArchiveWriter` call of the same name does,
/// when that call could do nothing but write it: each `try…` either writes
/// exactly the bytes and keeps exactly the state that call would, or, when
/// the call would do anything else (fail, grow the buffer, move a record to
/// its dictionary of keys, write a key of 64 or more), changes nothing and
/// returns false, and the caller makes the checked call. So the checked
/// calls stay the one place where a value is refused.
public struct FieldSink {
    @usableFromInline let core: UnsafeMutablePointer<WriterCore>

    @inlinable init(_ core: UnsafeMutablePointer<WriterCore>) { self.core = core }

    /// Pushes the key and writes the header of a value of `tag` with at most
    /// `payloadMax` payload bytes, when `openField` would do nothing else:
    /// an object is open, the key is below 64 (its duplicate check is the
    /// frame's bit set) and not yet written in the record, the record has
    /// fewer than `smallRecordKeys` values (so no dictionary and far below
    /// `maxValuesPerRecord`), and the key stack and the buffer have room
    /// (`openField` reserves `payloadMax + 6`). Returns where the payload goes.
    @inlinable @inline(__always)
    func open(_ key: UInt32, _ tag: UInt8, _ payloadMax: Int) -> UnsafeMutableRawPointer? {
        let c = core
        let top = c.pointee.fTop
        guard key < 64, c.pointee.depth >= 0, !c.pointee.fBig,
              c.pointee.fSeen & (1 &<< UInt64(key)) == 0,
              top &- c.pointee.fStart < WriterCore.smallRecordKeys, top < c.pointee.fCap,
              payloadMax &+ 6 <= c.pointee.capacity &- c.pointee.count else { return nil }
        c.pointee.fkeys[top] = UInt64(key) | (UInt64(tag) &<< 32)
        c.pointee.fTop = top &+ 1
        c.pointee.fSeen |= 1 &<< UInt64(key)
        let p = c.pointee.out + c.pointee.count
        if key < 15 {
            p.storeBytes(of: UInt8(truncatingIfNeeded: key &<< 4) | tag, as: UInt8.self)
            return p + 1
        }
        // 15...63: the escape, then key - 15 (below 0x80: one varint byte).
        p.storeBytes(of: 0xF0 | tag, as: UInt8.self)
        p.storeBytes(of: UInt8(truncatingIfNeeded: key &- 15), toByteOffset: 1, as: UInt8.self)
        return p + 2
    }

    @inlinable @inline(__always)
    public func tryBool(_ key: UInt32, _ v: Bool) -> Bool {
        guard let p = open(key, v ? 1 : 0, 0) else { return false }
        core.pointee.commit(p)
        return true
    }

    @inlinable @inline(__always)
    public func tryInt(_ key: UInt32, _ v: Int64) -> Bool {
        guard var p = open(key, ValueTag.int.rawValue, 10) else { return false }
        p += putShortVarint(p, zigzag(v))
        core.pointee.commit(p)
        return true
    }

    @inlinable @inline(__always)
    public func tryDouble(_ key: UInt32, _ v: Double) -> Bool {
        guard let p = open(key, ValueTag.double.rawValue, 8) else { return false }
        p.storeBytes(of: v.bitPattern.littleEndian, as: UInt64.self)
        core.pointee.commit(p + 8)
        return true
    }

    @inlinable @inline(__always)
    public func tryString(_ key: UInt32, _ utf8: UnsafeRawBufferPointer) -> Bool {
        tryLengthPrefixed(key, ValueTag.string.rawValue, utf8)
    }

    @inlinable @inline(__always)
    public func tryBytes(_ key: UInt32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        tryLengthPrefixed(key, ValueTag.bytes.rawValue, bytes)
    }

    @inlinable @inline(__always)
    func tryLengthPrefixed(_ key: UInt32, _ tag: UInt8, _ data: UnsafeRawBufferPointer) -> Bool {
        let n = data.count
        guard n <= ArchiveLimits.maxArchiveBytes, var p = open(key, tag, n &+ 10) else { return false }
        p += putVarint(p, UInt64(n))
        if n > 0, let src = data.baseAddress {
            copyBytes(p, src, n)
            p += n
        }
        core.pointee.commit(p)
        return true
    }

    /// A reference to record `record` (`writeObject`).
    @inlinable @inline(__always)
    public func tryObject(_ key: UInt32, record: Int) -> Bool {
        guard record >= 0, record < ArchiveLimits.maxObjects,
              var p = open(key, ValueTag.object.rawValue, 10) else { return false }
        p += putShortVarint(p, UInt64(record))
        if record > core.pointee.maxRef { core.pointee.maxRef = record }
        core.pointee.commit(p)
        return true
    }

    /// Up to 12 ints: their content (at most 1 + 12 * 10 bytes) always fits
    /// the one length byte `writeIntArray` reserves.
    @inlinable @inline(__always)
    public func tryIntArray(_ key: UInt32, _ values: UnsafeBufferPointer<Int64>) -> Bool {
        let n = values.count
        guard n <= 12, let p0 = open(key, ValueTag.intArray.rawValue, n &* 10 &+ 20) else { return false }
        var p = p0 + 1
        p += putVarint(p, UInt64(n))
        for v in values { p += putShortVarint(p, zigzag(v)) }
        p0.storeBytes(of: UInt8(truncatingIfNeeded: p - (p0 + 1)), as: UInt8.self)
        core.pointee.commit(p)
        return true
    }

    /// Opens a nested record (`beginRecord`) below the depth limit.
    @inlinable @inline(__always)
    public func tryBeginRecord(_ key: UInt32) -> Bool {
        let c = core
        let d = c.pointee.depth
        guard d < ArchiveLimits.maxRecordDepth, let p = open(key, ValueTag.record.rawValue, 1) else { return false }
        c.pointee.saved[d] = SavedFrame(start: c.pointee.fStart, lenPos: c.pointee.fLenPos, big: c.pointee.fBig, seen: c.pointee.fSeen)
        let lenPos = p - c.pointee.out
        c.pointee.fLenPos = lenPos
        c.pointee.count = lenPos &+ 1
        c.pointee.fStart = c.pointee.fTop
        c.pointee.fBig = false
        c.pointee.fSeen = 0
        c.pointee.depth = d &+ 1
        return true
    }

    /// Closes the innermost nested record (`endRecord`) when one is open.
    @inlinable @inline(__always)
    public func tryEndRecord() -> Bool {
        guard core.pointee.depth > 0 else { return false }
        core.pointee.popFrame()
        return true
    }
}

extension FieldSink {
    /// The save loop's calls around each object's values, as the
    /// `ArchiveWriter` calls of the same names (without their copy-on-write
    /// check each): the engine takes the sink before the object's record
    /// begins and drops it after the record ends.
    @inlinable
    public func name(_ utf8: UnsafeRawBufferPointer) -> UInt32 {
        core.pointee.names.intern(utf8)
    }

    @inlinable
    public func beginObject(identifier: UInt32, parent: Int?, className: UInt32?, version: UInt32 = 0) {
        core.pointee.beginObject(identifier: identifier, parent: parent, className: className, version: version)
    }

    @inlinable
    public func endObject() throws(WriteFailure) {
        try core.pointee.endObject()
    }
}

extension WriterCore {
    @usableFromInline
    func tooBig(_ n: Int) -> WriteFailure {
        .limit("record \(recordCount - 1): a value of \(n) bytes cannot fit in an archive of at most \(ArchiveLimits.maxArchiveBytes) bytes")
    }
}
