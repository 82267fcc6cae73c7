/// Bump allocator for the NUL-terminated copies that decode hands out as
/// `const char *`; reset when the callback that received them returns.
final class CStringArena {
    private var chunks: [(base: UnsafeMutableRawPointer, size: Int)] = []
    private var current = 0
    private var used = 0
    private static let chunkSize = 64 * 1024

    deinit {
        for c in chunks { c.base.deallocate() }
    }

    /// A NUL-terminated copy of `bytes`, valid until `reset()`.
    func copy(_ bytes: UnsafeRawBufferPointer) -> UnsafePointer<CChar> {
        let need = bytes.count + 1
        if chunks.isEmpty || used + need > chunks[current].size {
            advance(need)
        }
        let dst = chunks[current].base + used
        if bytes.count > 0, let src = bytes.baseAddress {
            dst.copyMemory(from: src, byteCount: bytes.count)
        }
        dst.storeBytes(of: 0, toByteOffset: bytes.count, as: UInt8.self)
        used += need
        return UnsafePointer(dst.assumingMemoryBound(to: CChar.self))
    }

    private func advance(_ need: Int) {
        if !chunks.isEmpty, current + 1 < chunks.count, chunks[current + 1].size >= need {
            current += 1
            used = 0
            return
        }
        let size = max(need, Self.chunkSize)
        let base = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        chunks.insert((base, size), at: chunks.isEmpty ? 0 : current + 1)
        if chunks.count > 1 { current += 1 }
        used = 0
    }

    /// Invalidates every pointer handed out; keeps the first chunk.
    func reset() {
        if chunks.count > 1 {
            for c in chunks[1...] { c.base.deallocate() }
            chunks.removeSubrange(1...)
        }
        current = 0
        used = 0
    }
}
