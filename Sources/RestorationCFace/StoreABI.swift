import CRestoration
import RestorationCore
#if canImport(Glibc)
import Glibc
#endif

// The storage door (restoration_store.h): a host's `rst_store_ops` adapted
// as the core's `ArchiveStore` (`CStore`), and the core's file and memory
// stores offered to C as `rst_store_ops` tables (`SwiftStoreBox`).

// MARK: rst_store_set_error: a thread-local sentence for the failing store call

private let storeErrorKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key) { p in free(p) }
    return key
}()

/// Takes (and clears) this thread's store sentence.
func takeStoreError() -> String? {
    guard let p = pthread_getspecific(storeErrorKey) else { return nil }
    pthread_setspecific(storeErrorKey, nil)
    let s = String(cString: p.assumingMemoryBound(to: CChar.self))
    free(p)
    return s
}

extension CFace {
    public static func store_set_error(_ sentence: UnsafePointer<CChar>!) {
        let old = pthread_getspecific(storeErrorKey)
        pthread_setspecific(storeErrorKey, sentence.map { UnsafeMutableRawPointer(strdup($0)) })
        free(old)
    }
}

// MARK: a host's store as the core's

/// A host's table as this library reads it: a table older than version 2
/// ends at `destroy` (a host built with an older header allocated no more),
/// so only that much is copied and the version-2 members read as NULL.
func readStoreOps(_ ops: UnsafePointer<rst_store_ops>) -> rst_store_ops {
    let version = UnsafeRawPointer(ops).load(as: UInt32.self)
    if version >= 2 { return ops.pointee }
    var o = rst_store_ops()
    let v1Size = MemoryLayout<rst_store_ops>.offset(of: \rst_store_ops.acquire)!
    withUnsafeMutableBytes(of: &o) { $0.copyMemory(from: UnsafeRawBufferPointer(start: ops, count: v1Size)) }
    return o
}

/// `rst_store_ops` + `ctx` as an `ArchiveStore`. Every failure's sentence is
/// the store's own (rst_store_set_error) or one naming `describe()`;
/// `destroy(ctx)` runs exactly once, when the adapter goes.
final class CStore: ArchiveStore {
    let ops: rst_store_ops
    let ctx: UnsafeMutableRawPointer?
    let describe: String
    let isShared: Bool

    init(ops: rst_store_ops, ctx: UnsafeMutableRawPointer?) {
        self.ops = ops
        self.ctx = ctx
        let d = ops.describe!(ctx).flatMap { String(validatingCString: $0) }
        self.describe = (d?.isEmpty == false) ? d! : "the host's store"
        self.isShared = ops.flags & UInt32(RST_STORE_SHARED) != 0
    }

    deinit { ops.destroy!(ctx) }

    var canLink: Bool { ops.link != nil }
    var canMap: Bool { ops.map != nil }

    private func slot(_ s: StoreSlot) -> rst_slot { rst_slot(rawValue: s.rawValue) }

    /// The failure of a store call: its own sentence, else one naming the store.
    private func failure(_ st: rst_status, _ what: @autoclosure () -> String) -> RestorationFailure {
        let status = Status(rawValue: st.rawValue) ?? .io
        if let own = takeStoreError() {
            // The store's sentence, kept whole, and the place named.
            return RestorationFailure(status, own.containsBytes(of: describe) ? own : "\(describe): \(own)")
        }
        return RestorationFailure(status, "\(describe): \(what()) failed (\(status.cName))")
    }

    @inline(__always) private func begin() { if pthread_getspecific(storeErrorKey) != nil { _ = takeStoreError() } }

    func read(_ s: StoreSlot, _ index: UInt64) throws(RestorationFailure) -> StoreBytes? {
        begin()
        var data: UnsafeRawPointer? = nil
        var len = 0
        var hold: UnsafeMutableRawPointer? = nil
        let st = ops.read!(ctx, slot(s), index, &data, &len, &hold)
        if st == RST_ERR_NOT_FOUND { _ = takeStoreError(); return nil }
        guard st == RST_OK else { throw failure(st, "read of slot \(s) \(index)") }
        guard let data else {
            if hold != nil { ops.release!(ctx, hold) }
            throw RestorationFailure(.io, "\(describe): read of slot \(s) \(index) returned RST_OK without setting *data")
        }
        let ops = self.ops, ctx = self.ctx
        return StoreBytes(bytes: UnsafeRawBufferPointer(start: data, count: len), release: { ops.release!(ctx, hold) })
    }

    func write(_ s: StoreSlot, _ index: UInt64, _ bytes: UnsafeRawBufferPointer, whenDurable: (() -> Void)?) throws(RestorationFailure) {
        begin()
        whenDurable?()
        let st = ops.write!(ctx, slot(s), index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), bytes.count)
        guard st == RST_OK else { throw failure(st, "write of slot \(s) \(index) (\(bytes.count) bytes)") }
    }

    func move(_ from: StoreSlot, _ fromIndex: UInt64, to: StoreSlot, _ toIndex: UInt64) throws(RestorationFailure) {
        begin()
        let st = ops.move!(ctx, slot(from), fromIndex, slot(to), toIndex)
        guard st == RST_OK else { throw failure(st, "move of slot \(from) \(fromIndex) to \(to) \(toIndex)") }
    }

    func link(_ from: StoreSlot, _ fromIndex: UInt64, to: StoreSlot, _ toIndex: UInt64) throws(RestorationFailure) {
        guard let link = ops.link else { throw RestorationFailure(.invalid, "\(describe) has no link") }
        begin()
        let st = link(ctx, slot(from), fromIndex, slot(to), toIndex)
        guard st == RST_OK else { throw failure(st, "link of slot \(from) \(fromIndex) to \(to) \(toIndex)") }
    }

    func remove(_ s: StoreSlot, _ index: UInt64) throws(RestorationFailure) {
        begin()
        let st = ops.remove!(ctx, slot(s), index)
        if st == RST_ERR_NOT_FOUND { _ = takeStoreError(); return }
        guard st == RST_OK else { throw failure(st, "remove of slot \(s) \(index)") }
    }

    /// At most this many indexes in a slot (a count beyond it is a store error).
    static let maxListed = 1 << 20

    func list(_ s: StoreSlot) throws(RestorationFailure) -> [UInt64] {
        var cap = 64
        while true {
            begin()
            var out = [UInt64](repeating: 0, count: cap)
            var count = Int.max
            let st = out.withUnsafeMutableBufferPointer { ops.list!(ctx, slot(s), $0.baseAddress, cap, &count) }
            guard st == RST_OK else { throw failure(st, "list of slot \(s)") }
            if count == Int.max { throw RestorationFailure(.io, "\(describe): list of slot \(s) returned RST_OK without setting *count") }
            if count > CStore.maxListed { throw RestorationFailure(.io, "\(describe): list of slot \(s) reports \(count) indexes; at most \(CStore.maxListed) are accepted") }
            if count <= cap {
                let got = Array(out[0..<count])
                // Ascending, as the contract says; sorted anyway (cheap) so a careless store cannot mislead.
                return got.sorted()
            }
            cap = count
        }
    }

    func lock() throws(RestorationFailure) {
        begin()
        let st = ops.lock!(ctx)
        guard st == RST_OK else { throw failure(st, "lock") }
    }

    func unlock() { ops.unlock!(ctx) }

    func map(_ s: StoreSlot, length: Int) throws(RestorationFailure) -> UnsafeMutableRawBufferPointer {
        guard let map = ops.map else { throw RestorationFailure(.invalid, "\(describe) has no map") }
        begin()
        var addr: UnsafeMutableRawPointer? = nil
        let st = map(ctx, slot(s), length, &addr)
        guard st == RST_OK else { throw failure(st, "map of slot \(s) (\(length) bytes)") }
        guard let addr else { throw RestorationFailure(.io, "\(describe): map of slot \(s) returned RST_OK without setting *addr") }
        return UnsafeMutableRawBufferPointer(start: addr, count: length)
    }
}

// MARK: the core's stores as rst_store_ops

/// The context of a built-in store handed to C: the Swift store, its
/// describe() string, and the holds of its reads.
final class SwiftStoreBox {
    let store: ArchiveStore
    let describeC: UnsafeMutablePointer<CChar>
    init(_ store: ArchiveStore) {
        self.store = store
        describeC = strdup(store.describe)
    }
    deinit { free(describeC) }

    static func from(_ ctx: UnsafeMutableRawPointer?) -> SwiftStoreBox {
        Unmanaged<SwiftStoreBox>.fromOpaque(ctx!).takeUnretainedValue()
    }
}

/// A read's hold: the bytes until release.
private final class HoldBox {
    let bytes: StoreBytes
    init(_ b: StoreBytes) { bytes = b }
}

private func report(_ f: RestorationFailure) -> rst_status {
    CFace.store_set_error(f.message)
    return rst_status(rawValue: f.status.rawValue)
}

private func cslot(_ s: rst_slot) -> StoreSlot? { StoreSlot(rawValue: s.rawValue) }

private func badSlot(_ box: SwiftStoreBox, _ s: rst_slot) -> rst_status {
    report(RestorationFailure(.invalid, "\(box.store.describe): there is no slot \(s.rawValue)"))
}

private func makeOps(link: Bool, map: Bool) -> rst_store_ops {
    var o = rst_store_ops()
    o.version = UInt32(RST_STORE_VERSION)
    o.flags = 0
    o.read = { ctx, s, index, data, len, hold in
        let box = SwiftStoreBox.from(ctx)
        guard let slot = cslot(s) else { return badSlot(box, s) }
        guard let data, let len, let hold else { return report(RestorationFailure(.invalid, "\(box.store.describe): read needs data, len and hold")) }
        do {
            guard let b = try box.store.read(slot, index) else { return RST_ERR_NOT_FOUND }
            data.pointee = b.bytes.baseAddress ?? UnsafeRawPointer(box.describeC)
            len.pointee = b.bytes.count
            hold.pointee = Unmanaged.passRetained(HoldBox(b)).toOpaque()
            return RST_OK
        } catch { return report(error as! RestorationFailure) }
    }
    o.release = { _, hold in
        guard let hold else { return }
        let h = Unmanaged<HoldBox>.fromOpaque(hold).takeRetainedValue()
        h.bytes.release()
    }
    o.write = { ctx, s, index, data, len in
        let box = SwiftStoreBox.from(ctx)
        guard let slot = cslot(s) else { return badSlot(box, s) }
        guard data != nil || len == 0 else { return report(RestorationFailure(.invalid, "\(box.store.describe): write of \(len) bytes from NULL")) }
        do {
            try box.store.write(slot, index, UnsafeRawBufferPointer(start: data, count: len), whenDurable: nil)
            return RST_OK
        } catch { return report(error as! RestorationFailure) }
    }
    o.move = { ctx, f, fi, t, ti in
        let box = SwiftStoreBox.from(ctx)
        guard let from = cslot(f) else { return badSlot(box, f) }
        guard let to = cslot(t) else { return badSlot(box, t) }
        do { try box.store.move(from, fi, to: to, ti); return RST_OK } catch { return report(error as! RestorationFailure) }
    }
    if link {
        o.link = { ctx, f, fi, t, ti in
            let box = SwiftStoreBox.from(ctx)
            guard let from = cslot(f) else { return badSlot(box, f) }
            guard let to = cslot(t) else { return badSlot(box, t) }
            do { try box.store.link(from, fi, to: to, ti); return RST_OK } catch { return report(error as! RestorationFailure) }
        }
    }
    o.remove = { ctx, s, index in
        let box = SwiftStoreBox.from(ctx)
        guard let slot = cslot(s) else { return badSlot(box, s) }
        do { try box.store.remove(slot, index); return RST_OK } catch { return report(error as! RestorationFailure) }
    }
    o.list = { ctx, s, indexes, cap, count in
        let box = SwiftStoreBox.from(ctx)
        guard let slot = cslot(s) else { return badSlot(box, s) }
        guard let count, indexes != nil || cap == 0 else { return report(RestorationFailure(.invalid, "\(box.store.describe): list needs indexes (or cap 0) and count")) }
        do {
            let all = try box.store.list(slot)
            for (i, v) in all.prefix(cap).enumerated() { indexes![i] = v }
            count.pointee = all.count
            return RST_OK
        } catch { return report(error as! RestorationFailure) }
    }
    o.lock = { ctx in
        let box = SwiftStoreBox.from(ctx)
        do { try box.store.lock(); return RST_OK } catch { return report(error as! RestorationFailure) }
    }
    o.unlock = { ctx in SwiftStoreBox.from(ctx).store.unlock() }
    if map {
        o.map = { ctx, s, len, addr in
            let box = SwiftStoreBox.from(ctx)
            guard let slot = cslot(s) else { return badSlot(box, s) }
            guard let addr else { return report(RestorationFailure(.invalid, "\(box.store.describe): map needs addr")) }
            do {
                addr.pointee = try box.store.map(slot, length: len).baseAddress
                return RST_OK
            } catch { return report(error as! RestorationFailure) }
        }
    }
    o.describe = { ctx in UnsafePointer(SwiftStoreBox.from(ctx).describeC) }
    o.destroy = { ctx in
        guard let ctx else { return }
        Unmanaged<SwiftStoreBox>.fromOpaque(ctx).release()
    }
    return o
}

private let fileStoreOps: UnsafeMutablePointer<rst_store_ops> = {
    let p = UnsafeMutablePointer<rst_store_ops>.allocate(capacity: 1)
    var o = makeOps(link: true, map: true)
    o.flags = UInt32(RST_STORE_SHARED)
    p.initialize(to: o)
    return p
}()

private let memoryStoreOps: UnsafeMutablePointer<rst_store_ops> = {
    let p = UnsafeMutablePointer<rst_store_ops>.allocate(capacity: 1)
    p.initialize(to: makeOps(link: true, map: false))
    return p
}()

extension CFace {
    public static func file_store(_ archive_path: UnsafePointer<CChar>!, _ ops: UnsafeMutablePointer<UnsafePointer<rst_store_ops>?>!,
                                  _ ctx: UnsafeMutablePointer<UnsafeMutableRawPointer?>!) -> rst_status {
        guard let archive_path else { return fail(.invalid, "rst_file_store: archive_path is NULL") }
        guard let ops, let ctx else { return fail(.invalid, "rst_file_store: ops or ctx is NULL") }
        guard let path = String(validatingCString: archive_path) else { return fail(.invalid, "rst_file_store: archive_path is not valid UTF-8") }
        if path.utf8.count >= Int(PATH_MAX) { return fail(.limit, "rst_file_store: archive_path is \(path.utf8.count) bytes; a path has at most \(PATH_MAX - 1)") }
        if let why = FileArchiveStore.check(path, subject: "archive_path") { return fail(.invalid, "rst_file_store: \(why)") }
        let box = SwiftStoreBox(FileArchiveStore(path: path))
        ops.pointee = UnsafePointer(fileStoreOps)
        ctx.pointee = Unmanaged.passRetained(box).toOpaque()
        return RST_OK
    }

    public static func memory_store(_ ops: UnsafeMutablePointer<UnsafePointer<rst_store_ops>?>!,
                                    _ ctx: UnsafeMutablePointer<UnsafeMutableRawPointer?>!) -> rst_status {
        guard let ops, let ctx else { return fail(.invalid, "rst_memory_store: ops or ctx is NULL") }
        let box = SwiftStoreBox(MemoryArchiveStore())
        ops.pointee = UnsafePointer(memoryStoreOps)
        ctx.pointee = Unmanaged.passRetained(box).toOpaque()
        return RST_OK
    }

    /// The core store for a C pair: the built-in stores' own (unwrapped, so
    /// the file store keeps its signal-safe session close), else an adapter.
    /// nil with the failure when the table is refused; `destroy` is then
    /// the caller's to call.
    public static func adoptStore(_ ops: UnsafePointer<rst_store_ops>, _ ctx: UnsafeMutableRawPointer?) -> ArchiveStore {
        if ops == UnsafePointer(fileStoreOps) || ops == UnsafePointer(memoryStoreOps) {
            let box = Unmanaged<SwiftStoreBox>.fromOpaque(ctx!).takeRetainedValue()
            return box.store
        }
        return CStore(ops: readStoreOps(ops), ctx: ctx)
    }

    /// Whether `ops` is the table of rst_file_store or rst_memory_store.
    public static func isBuiltInStore(_ ops: UnsafePointer<rst_store_ops>) -> Bool {
        ops == UnsafePointer(fileStoreOps) || ops == UnsafePointer(memoryStoreOps)
    }

    /// Checks a table as rst_engine_create_with_store does.
    public static func checkStoreOps(_ ops: UnsafePointer<rst_store_ops>) -> RestorationFailure? {
        let o = readStoreOps(ops)
        if o.version != UInt32(RST_STORE_VERSION) {
            return RestorationFailure(.version, "ops->version is \(o.version); this library knows \(RST_STORE_VERSION) (RST_STORE_VERSION)")
        }
        if o.flags & ~UInt32(RST_STORE_SHARED) != 0 {
            return RestorationFailure(.invalid, "ops->flags has unknown bits 0x\(String(o.flags & ~UInt32(RST_STORE_SHARED), radix: 16))")
        }
        var missing: [String] = []
        if o.read == nil { missing.append("read") }
        if o.release == nil { missing.append("release") }
        if o.write == nil { missing.append("write") }
        if o.move == nil { missing.append("move") }
        if o.remove == nil { missing.append("remove") }
        if o.list == nil { missing.append("list") }
        if o.lock == nil { missing.append("lock") }
        if o.unlock == nil { missing.append("unlock") }
        if o.describe == nil { missing.append("describe") }
        if o.destroy == nil { missing.append("destroy") }
        if !missing.isEmpty {
            return RestorationFailure(.invalid, "ops->\(missing.joined(separator: ", ops->")) \(missing.count == 1 ? "is" : "are") NULL (only link and map are optional)")
        }
        return nil
    }

}
