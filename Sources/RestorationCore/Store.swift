/// Where archives live: the storage seam (docs/STORAGE.md).
///
/// The engine reaches its archive and every file beside it — older
/// generations, invalid archives set aside, the crash-loop marker, the
/// quarantine, the session — only through an `ArchiveStore`. A store holds
/// *slots*: a kind and an index; each slot holds bytes or nothing.
/// `FileArchiveStore` is what an archive path means (1.1's file names and
/// durability); `MemoryArchiveStore` keeps slots in this process's memory;
/// the C face adapts a host's `rst_store_ops` table.
///
/// Every method may fail with a `RestorationFailure` whose sentence names
/// `describe`; `.notFound` is reserved for `read` of an empty slot.
public enum StoreSlot: UInt32, Sendable, CaseIterable, CustomStringConvertible {
    /// The current archive (index 0).
    case archive = 0
    /// Index k = 1…16: the k-th older archive.
    case generation = 1
    /// An invalid archive set aside; index = UTC ms.
    case invalid = 2
    /// The crash-loop marker (index 0).
    case marker = 3
    /// The per-object quarantine (index 0).
    case quarantine = 4
    /// The session record (index 0).
    case session = 5
    /// An archive set aside after a crash loop; index = UTC ms.
    case crashed = 6

    public var description: String {
        switch self {
        case .archive: return "archive"
        case .generation: return "generation"
        case .invalid: return "invalid"
        case .marker: return "marker"
        case .quarantine: return "quarantine"
        case .session: return "session"
        case .crashed: return "crashed"
        }
    }

    /// Slots holding one item at index 0.
    public var isSingle: Bool { self == .archive || self == .marker || self == .quarantine || self == .session }
}

/// Bytes read from a store, valid until `release()` (called exactly once).
public struct StoreBytes {
    public let bytes: UnsafeRawBufferPointer
    private let releaser: (() -> Void)?
    /// Set when the bytes are a private heap buffer the caller may adopt
    /// (`adoptableBuffer`): then `release()` frees it.
    private let owned: UnsafeMutableRawBufferPointer?
    /// Set when nothing writes the bytes while they are held (a read-only
    /// mapping of a file that is replaced by rename, never written in
    /// place): a reader may keep them, and the hold, instead of a copy.
    public let isImmutable: Bool

    /// Bytes held by the store until `release` runs.
    public init(bytes: UnsafeRawBufferPointer, release: @escaping () -> Void) {
        self.bytes = bytes
        self.releaser = release
        self.owned = nil
        self.isImmutable = false
    }

    /// Bytes nothing writes while they are held (see `isImmutable`); `release`
    /// ends the hold (the file store: unmaps them).
    public init(immutable bytes: UnsafeRawBufferPointer, release: @escaping () -> Void) {
        self.bytes = bytes
        self.releaser = release
        self.owned = nil
        self.isImmutable = true
    }

    /// A buffer from `UnsafeMutableRawPointer.allocate` that the reader may
    /// adopt (no second copy); else `release()` deallocates it.
    public init(owning buffer: UnsafeMutableRawBufferPointer) {
        self.bytes = UnsafeRawBufferPointer(buffer)
        self.releaser = nil
        self.owned = buffer
        self.isImmutable = false
    }

    /// The bytes as a heap buffer the caller owns from now on (no copy when
    /// the store handed over its buffer; else a copy, and the hold released).
    func takeBuffer() -> UnsafeMutableRawBufferPointer {
        if let owned { return owned }
        let copy = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        if let b = bytes.baseAddress, bytes.count > 0 { copy.copyMemory(from: b, byteCount: bytes.count) }
        releaser?()
        return UnsafeMutableRawBufferPointer(start: copy, count: bytes.count)
    }

    /// A copy as an array, the hold released.
    public func takeArray() -> [UInt8] {
        let a = [UInt8](bytes)
        release()
        return a
    }

    public func release() {
        if let owned { owned.deallocate() } else { releaser?() }
    }
}

/// A store: the one way the engine reaches its archive and what it keeps
/// beside it. See docs/STORAGE.md for the contract every store keeps.
public protocol ArchiveStore: AnyObject {
    /// Names the place, for sentences: "file '/home/u/.local/state/app/state.rst'".
    var describe: String { get }
    /// Other processes may use the same place: `lock` excludes them too.
    var isShared: Bool { get }

    /// The slot's bytes; nil when the slot is empty.
    func read(_ slot: StoreSlot, _ index: UInt64) throws(RestorationFailure) -> StoreBytes?
    /// Atomic and durable replacement of the slot's bytes. `whenDurable`
    /// runs once the new bytes are durable but not yet in place (kill
    /// points; the file store: after the temporary's fsync, before the
    /// rename; other stores call it just before their write).
    func write(_ slot: StoreSlot, _ index: UInt64, _ bytes: UnsafeRawBufferPointer,
               whenDurable: (() -> Void)?) throws(RestorationFailure)
    /// Atomic: `to` holds what `from` held (replacing it), `from` is empty.
    func move(_ from: StoreSlot, _ fromIndex: UInt64, to: StoreSlot, _ toIndex: UInt64) throws(RestorationFailure)
    /// Whether `link` is available.
    var canLink: Bool { get }
    /// As `move`, but `from` keeps its bytes.
    func link(_ from: StoreSlot, _ fromIndex: UInt64, to: StoreSlot, _ toIndex: UInt64) throws(RestorationFailure)
    /// Empties the slot (an empty slot is fine).
    func remove(_ slot: StoreSlot, _ index: UInt64) throws(RestorationFailure)
    /// The indexes present in `slot`, ascending.
    func list(_ slot: StoreSlot) throws(RestorationFailure) -> [UInt64]
    /// Exclusive among every engine, thread (and, when shared, process) using the place.
    func lock() throws(RestorationFailure)
    func unlock()
    /// Whether `map` is available.
    var canMap: Bool { get }
    /// A writable region of `length` bytes for the slot (its bytes, zero
    /// beyond) that survives the death of the process and is what a later
    /// read returns; valid until the slot is removed or the store is gone.
    func map(_ slot: StoreSlot, length: Int) throws(RestorationFailure) -> UnsafeMutableRawBufferPointer
    /// After the engine's discard emptied every slot (lock held): what the
    /// store keeps for itself beside them (the file store: temporaries and
    /// its lock file). Default: nothing.
    func discardExtras() throws(RestorationFailure)
    /// A way to end the session from a signal handler: called once when the
    /// session slot was written; the returned closer must be async-signal-safe.
    /// nil: the engine uses `map` of the session slot when it can, else `remove`.
    func sessionCloser() -> SessionCloser?
}

extension ArchiveStore {
    public func discardExtras() throws(RestorationFailure) {}
    public func sessionCloser() -> SessionCloser? { nil }
    public func link(_ from: StoreSlot, _ fromIndex: UInt64, to: StoreSlot, _ toIndex: UInt64) throws(RestorationFailure) {
        throw RestorationFailure(.invalid, "\(describe) cannot link")
    }
    public func map(_ slot: StoreSlot, length: Int) throws(RestorationFailure) -> UnsafeMutableRawBufferPointer {
        throw RestorationFailure(.invalid, "\(describe) cannot map")
    }
    public var canLink: Bool { false }
    public var canMap: Bool { false }
    public var isShared: Bool { false }

    /// Reads a whole slot as an array (nil: empty).
    func readArray(_ slot: StoreSlot, _ index: UInt64 = 0) throws(RestorationFailure) -> [UInt8]? {
        try read(slot, index)?.takeArray()
    }

    func write(_ slot: StoreSlot, _ index: UInt64 = 0, _ bytes: [UInt8]) throws(RestorationFailure) {
        try bytes.withUnsafeBytes { b in
            Result { () throws(RestorationFailure) in try write(slot, index, b, whenDurable: nil) }
        }.get()
    }

    /// `body` with the store's lock held.
    func locked<T>(_ body: () throws(RestorationFailure) -> T) throws(RestorationFailure) -> T {
        try lock()
        defer { unlock() }
        return try body()
    }

    /// A free index for a set-aside (`.invalid`, `.crashed`): `nowMs`, or the next free one.
    func freeIndex(_ slot: StoreSlot, nowMs: Int64) throws(RestorationFailure) -> UInt64 {
        let taken = Set(try list(slot))
        var i = UInt64(max(nowMs, 0))
        while taken.contains(i) { i += 1 }
        return i
    }
}

/// Ends a session from a signal handler: async-signal-safe (no lock, no
/// allocation), idempotent.
public final class SessionCloser: @unchecked Sendable {
    private let body: () -> Void
    private let cleanup: (() -> Void)?
    /// `cleanup` frees what `body` uses; it runs when the closer goes with
    /// its engine (after the engine stopped claiming signals, so no handler
    /// of the library can still call `body`).
    public init(_ body: @escaping () -> Void, cleanup: (() -> Void)? = nil) {
        self.body = body
        self.cleanup = cleanup
    }
    public func close() { body() }
    deinit { cleanup?() }
}
