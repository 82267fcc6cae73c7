/// A growable buffer of plain values — no reference counting, nothing to
/// deinitialize — owned by a struct that frees it with `release()`: the
/// work lists of a restore (the planner's waiting records and its heap, the
/// migrations planned). An array would check its uniqueness and capacity
/// on every append and retain its storage around loops; this is plain
/// stores, and a call only when it grows.
struct PlainBuffer<Element: BitwiseCopyable> {
    private var base: UnsafeMutablePointer<Element>? = nil
    private(set) var count = 0
    private var capacity = 0

    var isEmpty: Bool { count == 0 }

    /// Element i, for i in 0..<count (not checked).
    @inline(__always) subscript(i: Int) -> Element {
        get { base.unsafelyUnwrapped[i] }
        nonmutating set { base.unsafelyUnwrapped[i] = newValue }
    }

    /// Appends `e`. When the buffer is full it grows to twice its capacity,
    /// and to at least `minimumCapacity` (a first buffer sized for what its
    /// owner expects, so that it does not grow again).
    @inline(__always) mutating func append(_ e: Element, minimumCapacity: Int) {
        if _slowPath(count == capacity) { grow(minimumCapacity) }
        (base.unsafelyUnwrapped + count).initialize(to: e)
        count &+= 1
    }

    @inline(never) private mutating func grow(_ minimumCapacity: Int) {
        let newCapacity = Swift.max(capacity &* 2, count &+ 1, minimumCapacity)
        let grown = UnsafeMutablePointer<Element>.allocate(capacity: newCapacity)
        if let base {
            grown.moveInitialize(from: base, count: count)
            base.deallocate()
        }
        base = grown
        capacity = newCapacity
    }

    /// Drops the last element and returns it; the buffer must not be empty.
    @inline(__always) mutating func removeLast() -> Element {
        count &-= 1
        return base.unsafelyUnwrapped[count]
    }

    /// The elements (valid until the next append or `release`).
    var elements: UnsafeBufferPointer<Element> { UnsafeBufferPointer(start: base, count: count) }

    /// Frees the memory; the buffer is empty and usable again.
    mutating func release() {
        base?.deallocate()
        base = nil
        count = 0
        capacity = 0
    }
}
