/// A store that keeps its slots in this process's memory (tests; hosts that
/// persist the bytes themselves). Every operation is atomic under one
/// mutex; `lock` is a second, recursive one, exclusive among the threads of
/// this process. No `map`: a death during a restore sets the archive aside
/// (and nothing survives a death anyway, unless the host keeps the bytes).
public final class MemoryArchiveStore: ArchiveStore {
    public let describe: String
    private let data = RecursiveLock()
    private let exclusive = RecursiveLock()
    private var slots: [StoreSlot: [UInt64: [UInt8]]] = [:]

    public init(name: String = "memory store") {
        self.describe = name
    }

    public var canLink: Bool { true }

    /// Every slot's bytes now (tests).
    public var snapshot: [StoreSlot: [UInt64: [UInt8]]] { data.withLock { slots } }

    public func read(_ slot: StoreSlot, _ index: UInt64) throws(RestorationFailure) -> StoreBytes? {
        guard let bytes = data.withLock({ slots[slot]?[index] }) else { return nil }
        let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        bytes.withUnsafeBytes { if $0.count > 0 { buf.copyMemory(from: $0) } }
        return StoreBytes(owning: UnsafeMutableRawBufferPointer(rebasing: buf[0..<bytes.count]))
    }

    public func write(_ slot: StoreSlot, _ index: UInt64, _ bytes: UnsafeRawBufferPointer,
                      whenDurable: (() -> Void)?) throws(RestorationFailure) {
        let copy = [UInt8](bytes)
        whenDurable?()
        data.withLock { slots[slot, default: [:]][index] = copy }
    }

    public func move(_ from: StoreSlot, _ fromIndex: UInt64, to: StoreSlot, _ toIndex: UInt64) throws(RestorationFailure) {
        let moved: Bool = data.withLock {
            guard let b = slots[from]?.removeValue(forKey: fromIndex) else { return false }
            slots[to, default: [:]][toIndex] = b
            return true
        }
        if !moved { throw RestorationFailure(.notFound, "\(describe): nothing to move in slot \(from) \(fromIndex)") }
    }

    public func link(_ from: StoreSlot, _ fromIndex: UInt64, to: StoreSlot, _ toIndex: UInt64) throws(RestorationFailure) {
        let linked: Bool = data.withLock {
            guard let b = slots[from]?[fromIndex] else { return false }
            slots[to, default: [:]][toIndex] = b
            return true
        }
        if !linked { throw RestorationFailure(.notFound, "\(describe): nothing to link in slot \(from) \(fromIndex)") }
    }

    public func remove(_ slot: StoreSlot, _ index: UInt64) throws(RestorationFailure) {
        data.withLock { _ = slots[slot]?.removeValue(forKey: index) }
    }

    public func list(_ slot: StoreSlot) throws(RestorationFailure) -> [UInt64] {
        data.withLock { (slots[slot].map { Array($0.keys) } ?? []).sorted() }
    }

    public func lock() throws(RestorationFailure) { exclusive.lock() }
    public func unlock() { exclusive.unlock() }
}
