import CRestoration
import RestorationCore
#if canImport(Glibc)
import Glibc
#endif

// "Sensitive values and size budgets" of Include/restoration.h (library
// 1.2): the C face of Sources/RestorationCore/Sensitivity.swift and of
// Budget.swift (the sizes of the last save). The options' `encryption_key`,
// `size_budget` and `budget_policy` are read with the other options
// (OptionsABI.swift, EngineABI.swift); `rst_export` is in SaveRestoreABI.swift.

extension CFace {
    static func sensitivity(_ s: rst_sensitivity) -> Sensitivity? {
        Sensitivity(rawValue: s.rawValue)
    }

    /// `rst_set_key_sensitivity`.
    public static func set_key_sensitivity(_ e: OpaquePointer!, _ class_name: UnsafePointer<CChar>!, _ key: UnsafePointer<CChar>!, _ s: rst_sensitivity) -> rst_status {
        guard let e else { return fail(.invalid, "rst_set_key_sensitivity: engine is NULL") }
        guard let key else { return fail(.invalid, "rst_set_key_sensitivity: key is NULL") }
        guard let level = sensitivity(s) else {
            return fail(.invalid, "rst_set_key_sensitivity: \(s.rawValue) is not an rst_sensitivity (0...3)")
        }
        let keyBytes = Array(UnsafeRawBufferPointer(start: key, count: strlen(key)))
        guard !keyBytes.isEmpty else { return fail(.invalid, "rst_set_key_sensitivity: the key is empty") }
        guard keyBytes.count <= Int(RST_MAX_KEY_BYTES) else {
            return fail(.limit, "rst_set_key_sensitivity: key '\(String(decoding: keyBytes.prefix(40), as: UTF8.self))…' is \(keyBytes.count) bytes; at most \(RST_MAX_KEY_BYTES) (RST_MAX_KEY_BYTES)")
        }
        var cls: String? = nil
        if let class_name {
            let n = strlen(class_name)
            guard n > 0 else { return fail(.invalid, "rst_set_key_sensitivity: the class name is empty (NULL means every class)") }
            guard n <= Int(RST_MAX_CLASS_NAME_BYTES) else {
                return fail(.limit, "rst_set_key_sensitivity: the class name is \(n) bytes; at most \(RST_MAX_CLASS_NAME_BYTES) (RST_MAX_CLASS_NAME_BYTES)")
            }
            cls = String(cString: class_name)
        }
        engine(e).setKeySensitivity(className: cls, key: keyBytes, level)
        return RST_OK
    }

    /// `rst_coder_set_sensitivity`.
    public static func coder_set_sensitivity(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ s: rst_sensitivity) -> rst_status {
        guard let c else { return fail(.invalid, "rst_coder_set_sensitivity: coder is NULL") }
        guard let key else { return fail(.invalid, "rst_coder_set_sensitivity: key is NULL") }
        guard let level = sensitivity(s) else {
            return fail(.invalid, "rst_coder_set_sensitivity: \(s.rawValue) is not an rst_sensitivity (0...3)")
        }
        do {
            try coder(c).setSensitivity(KeyBytes(cString: key), level)
            return RST_OK
        } catch {
            return fail(error, in: "rst_coder_set_sensitivity")
        }
    }

}

extension CFace {
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
