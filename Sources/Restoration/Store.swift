import RestorationCore

/// Where an engine's archive lives, and everything the engine keeps beside
/// it: the storage door (docs/STORAGE.md). The built-in stores are
/// ``RestorationStores/file(_:)`` (what an archive path means) and
/// ``RestorationStores/memory(name:)``; a host can give its own (its
/// database, its configuration system, a server) or wrap a built-in one.
///
/// A store holds *slots* — a ``RestorationStoreSlot`` and an index — each
/// holding bytes or nothing. The contract every store keeps:
/// - ``read(_:index:)``: the slot's bytes, nil when empty;
/// - ``write(_:index:bytes:)``: atomic and durable: every later read (any
///   process, after a crash or a power loss) sees the new bytes; after a
///   failure, the old ones; never a mix;
/// - ``move(_:index:to:index:)``: atomic; replaces `to`; `from` empty after;
/// - ``remove(_:index:)``: an empty slot is fine;
/// - ``list(_:)``: the indexes present, ascending;
/// - ``lock()``/``unlock()``: exclusive among every engine and thread (and,
///   when ``isShared``, process) using the same place; held around a save's
///   write and rotation, a discard and a set-aside, never while the engine
///   calls an object or a callback.
///
/// Two members are optional, as in C (defaults: absent):
/// - ``link(_:index:to:index:)`` with ``canLink``: a move that leaves
///   `from` holding its bytes too (generation 1 is then a link of the
///   archive, not a read and a write);
/// - ``map(_:length:)`` with ``canMap``: a writable region whose contents
///   survive the death of the process. **A store without it loses
///   per-object quarantine**: a death during a restore sets the whole
///   archive aside and the next launch reports
///   ``RestorationEngine/RestoreReason/firstLaunch``; with it only the
///   record whose callback was running is skipped.
///
/// **Errors.** A failing member throws a ``RestorationError`` whose case is
/// the status and whose message is the store's own sentence: the engine's
/// error for the operation carries that sentence (prefixed by
/// ``storeDescription`` when it does not name the place already), as a C
/// store's `rst_store_set_error()` does. A thrown
/// ``RestorationError/notFound(_:)`` from ``remove(_:index:)`` counts as
/// success (the slot is empty); from ``read(_:index:)`` return nil instead.
///
/// The corresponding C type is `rst_store_ops` (restoration_store.h); the
/// C function `rst_store_set_error` corresponds to throwing.
public protocol RestorationStore: AnyObject {
    /// Names the place, for messages: "database 'app.db', table 'state'".
    var storeDescription: String { get }
    /// Other processes may use the same place (``lock()`` must exclude them).
    var isShared: Bool { get }
    func read(_ slot: RestorationStoreSlot, index: UInt64) throws(RestorationError) -> [UInt8]?
    func write(_ slot: RestorationStoreSlot, index: UInt64, bytes: UnsafeRawBufferPointer) throws(RestorationError)
    func move(_ slot: RestorationStoreSlot, index: UInt64, to: RestorationStoreSlot, index toIndex: UInt64) throws(RestorationError)
    func remove(_ slot: RestorationStoreSlot, index: UInt64) throws(RestorationError)
    func list(_ slot: RestorationStoreSlot) throws(RestorationError) -> [UInt64]
    func lock() throws(RestorationError)
    func unlock()

    /// Whether ``link(_:index:to:index:)`` is available (default false).
    var canLink: Bool { get }
    /// As ``move(_:index:to:index:)``, but `from` keeps its bytes too:
    /// afterwards the two slots are independent copies. Called only when
    /// ``canLink`` is true.
    func link(_ slot: RestorationStoreSlot, index: UInt64, to: RestorationStoreSlot, index toIndex: UInt64) throws(RestorationError)
    /// Whether ``map(_:length:)`` is available (default false).
    var canMap: Bool { get }
    /// A writable region of `length` bytes for the slot, starting with its
    /// bytes (zero beyond them, or when the slot is new), valid until the
    /// engine removes the slot or the store is released, whose contents
    /// survive the death of the process and are what a later
    /// ``read(_:index:)`` returns (a shared mapping of a file, with its
    /// blocks reserved first so a full disk fails here, not at the first
    /// store into the region). Called only when ``canMap`` is true, for the
    /// crash-loop marker and the session.
    func map(_ slot: RestorationStoreSlot, length: Int) throws(RestorationError) -> UnsafeMutableRawBufferPointer
}

extension RestorationStore {
    public var isShared: Bool { false }
    public var canLink: Bool { false }
    public var canMap: Bool { false }
    public func link(_ slot: RestorationStoreSlot, index: UInt64, to: RestorationStoreSlot, index toIndex: UInt64) throws(RestorationError) {
        throw RestorationError.invalid("\(storeDescription) cannot link (canLink is false)")
    }
    public func map(_ slot: RestorationStoreSlot, length: Int) throws(RestorationError) -> UnsafeMutableRawBufferPointer {
        throw RestorationError.invalid("\(storeDescription) cannot map (canMap is false)")
    }
}

/// The kinds of slot a store holds (`rst_slot`).
public typealias RestorationStoreSlot = StoreSlot

/// The built-in stores.
public enum RestorationStores {
    /// The file store of an archive path: 1.1's file names (`<archive>.k`,
    /// `.invalid-<ms>`, `.crashed-<ms>`, `.restoring`, `.quarantine`,
    /// `.session`, `.lock`), durability and locking. The corresponding C
    /// function is `rst_file_store`.
    public static func file(_ archivePath: String) throws(RestorationError) -> RestorationStore {
        if let why = FileArchiveStore.check(archivePath) { throw RestorationError.invalid("RestorationStores.file: \(why)") }
        return BuiltInStore(FileArchiveStore(path: archivePath))
    }

    /// A store that keeps its slots in this process's memory (tests; hosts
    /// that persist the bytes themselves). The corresponding C function is
    /// `rst_memory_store`.
    public static func memory(name: String = "memory store") -> RestorationStore {
        BuiltInStore(MemoryArchiveStore(name: name))
    }
}

/// A built-in core store seen through the Swift protocol (the engine
/// unwraps it and talks to the core store directly).
final class BuiltInStore: RestorationStore {
    let core: ArchiveStore
    init(_ core: ArchiveStore) { self.core = core }
    var storeDescription: String { core.describe }
    var isShared: Bool { core.isShared }
    private func wrap<T>(_ body: () throws(RestorationFailure) -> T) throws(RestorationError) -> T {
        do { return try body() } catch { throw RestorationError(error) }
    }
    func read(_ slot: RestorationStoreSlot, index: UInt64) throws(RestorationError) -> [UInt8]? {
        try wrap { () throws(RestorationFailure) in try core.read(slot, index)?.takeArray() }
    }
    func write(_ slot: RestorationStoreSlot, index: UInt64, bytes: UnsafeRawBufferPointer) throws(RestorationError) {
        try wrap { () throws(RestorationFailure) in try core.write(slot, index, bytes, whenDurable: nil) }
    }
    func move(_ slot: RestorationStoreSlot, index: UInt64, to: RestorationStoreSlot, index toIndex: UInt64) throws(RestorationError) {
        try wrap { () throws(RestorationFailure) in try core.move(slot, index, to: to, toIndex) }
    }
    func remove(_ slot: RestorationStoreSlot, index: UInt64) throws(RestorationError) {
        try wrap { () throws(RestorationFailure) in try core.remove(slot, index) }
    }
    func list(_ slot: RestorationStoreSlot) throws(RestorationError) -> [UInt64] {
        try wrap { () throws(RestorationFailure) in try core.list(slot) }
    }
    func lock() throws(RestorationError) { try wrap { () throws(RestorationFailure) in try core.lock() } }
    func unlock() { core.unlock() }
    var canLink: Bool { core.canLink }
    func link(_ slot: RestorationStoreSlot, index: UInt64, to: RestorationStoreSlot, index toIndex: UInt64) throws(RestorationError) {
        try wrap { () throws(RestorationFailure) in try core.link(slot, index, to: to, toIndex) }
    }
    var canMap: Bool { core.canMap }
    func map(_ slot: RestorationStoreSlot, length: Int) throws(RestorationError) -> UnsafeMutableRawBufferPointer {
        try wrap { () throws(RestorationFailure) in try core.map(slot, length: length) }
    }
}

/// A host's Swift store as the core's.
final class HostStore: ArchiveStore {
    let host: RestorationStore
    let describe: String
    init(_ host: RestorationStore) {
        self.host = host
        describe = host.storeDescription
    }
    var isShared: Bool { host.isShared }
    private func wrap<T>(_ body: () throws(RestorationError) -> T) throws(RestorationFailure) -> T {
        do { return try body() } catch {
            let m = error.message.contains(describe) ? error.message : "\(describe): \(error.message)"
            throw RestorationFailure(Status(rawValue: error.statusCode) ?? .io, m)
        }
    }
    func read(_ slot: StoreSlot, _ index: UInt64) throws(RestorationFailure) -> StoreBytes? {
        guard let bytes = try wrap({ () throws(RestorationError) in try host.read(slot, index: index) }) else { return nil }
        let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        bytes.withUnsafeBytes { if $0.count > 0 { buf.copyMemory(from: $0) } }
        return StoreBytes(owning: UnsafeMutableRawBufferPointer(rebasing: buf[0..<bytes.count]))
    }
    func write(_ slot: StoreSlot, _ index: UInt64, _ bytes: UnsafeRawBufferPointer, whenDurable: (() -> Void)?) throws(RestorationFailure) {
        whenDurable?()
        try wrap { () throws(RestorationError) in try host.write(slot, index: index, bytes: bytes) }
    }
    func move(_ from: StoreSlot, _ fromIndex: UInt64, to: StoreSlot, _ toIndex: UInt64) throws(RestorationFailure) {
        try wrap { () throws(RestorationError) in try host.move(from, index: fromIndex, to: to, index: toIndex) }
    }
    func remove(_ slot: StoreSlot, _ index: UInt64) throws(RestorationFailure) {
        do throws(RestorationError) { try host.remove(slot, index: index) } catch {
            if case .notFound = error { return }   // an empty slot: success, as in C
            try wrap { () throws(RestorationError) in throw error }
        }
    }
    func list(_ slot: StoreSlot) throws(RestorationFailure) -> [UInt64] {
        try wrap { () throws(RestorationError) in try host.list(slot) }.sorted()
    }
    func lock() throws(RestorationFailure) { try wrap { () throws(RestorationError) in try host.lock() } }
    func unlock() { host.unlock() }
    var canLink: Bool { host.canLink }
    func link(_ from: StoreSlot, _ fromIndex: UInt64, to: StoreSlot, _ toIndex: UInt64) throws(RestorationFailure) {
        try wrap { () throws(RestorationError) in try host.link(from, index: fromIndex, to: to, index: toIndex) }
    }
    var canMap: Bool { host.canMap }
    func map(_ slot: StoreSlot, length: Int) throws(RestorationFailure) -> UnsafeMutableRawBufferPointer {
        let r = try wrap { () throws(RestorationError) in try host.map(slot, length: length) }
        guard r.count >= length, r.baseAddress != nil else {
            throw RestorationFailure(.io, "\(describe): map of slot \(slot) gave \(r.count) bytes, not \(length)")
        }
        return r
    }
}

extension RestorationEngine {
    /// Creates an engine whose archive lives in `store` (`options.archivePath`
    /// must be nil): everything that works with an archive path works the
    /// same — autosave, sessions and restore reasons, generations and
    /// fallback, the crash-loop guard, carried records, discard.
    ///
    /// The corresponding C function is `rst_engine_create_with_store`.
    public convenience init(store: RestorationStore, options: Options = Options()) throws(RestorationError) {
        if options.archivePath != nil {
            throw RestorationError.invalid("RestorationEngine: give a store or an archive path, not both")
        }
        let core: ArchiveStore = (store as? BuiltInStore)?.core ?? HostStore(store)
        try self.init(options: options, coreStore: core)
    }
}
