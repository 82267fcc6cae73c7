import CRestoration
import RestorationCore
#if canImport(Glibc)
import Glibc
#endif

// Library 1.2, size budgets in the C face: object priorities and the sizes
// of the last save. The core measures and judges (Budget.swift); options
// version 3's size_budget and budget_policy are read with the other options
// (LifecycleABI.swift, EngineABI.swift).

extension CFace {
    public static func set_object_priority(_ o: OpaquePointer!, _ priority: Int32) -> rst_status {
        guard let o else { return fail(.invalid, "rst_set_object_priority: object is NULL") }
        let n = node(o)
        guard n.isRegistered else { return fail(.invalid, "rst_set_object_priority: the object is not registered") }
        n.engine.setPriority(priority, of: n)
        return RST_OK
    }

    public static func last_save_sizes(_ e: OpaquePointer!, _ out: UnsafeMutablePointer<UnsafeMutablePointer<rst_size_entry>?>!,
                                       _ count: UnsafeMutablePointer<Int>!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_last_save_sizes: engine is NULL") }
        guard let out else { return fail(.invalid, "rst_last_save_sizes: out is NULL") }
        guard let count else { return fail(.invalid, "rst_last_save_sizes: count is NULL") }
        out.pointee = nil
        count.pointee = 0
        let entries = engine(e).lastSaveSizes
        if entries.isEmpty { return RST_OK }
        var packer = OneAllocation()
        let arrayBytes = MemoryLayout<rst_size_entry>.stride * entries.count
        packer.reserve(arrayBytes)
        for s in entries {
            packer.reserveString(s.path)
            packer.reserveString(s.className)
        }
        guard let block = packer.allocate() else { return fail(.noMemory, "rst_last_save_sizes: out of memory for \(entries.count) entries") }
        let array = block.bindMemory(to: rst_size_entry.self, capacity: entries.count)
        var cursor = OneAllocation.Cursor(block: block, offset: (arrayBytes + 7) & ~7)
        for (i, s) in entries.enumerated() {
            (array + i).initialize(to: rst_size_entry(path: cursor.put(s.path), class_name: cursor.put(s.className),
                                                      own_bytes: s.ownBytes, subtree_bytes: s.subtreeBytes,
                                                      trimmed: s.trimmed ? 1 : 0))
        }
        out.pointee = array
        count.pointee = entries.count
        return RST_OK
    }
}
