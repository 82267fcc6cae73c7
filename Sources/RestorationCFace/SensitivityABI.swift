import CRestoration
import RestorationCore
#if canImport(Glibc)
import Glibc
#endif

// Sensitive values and portable exports (library 1.2): the C face of
// Sources/RestorationCore/Sensitivity.swift. The options' `encryption_key`
// is adapted in `createEngine` (EngineABI.swift).

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

    /// `rst_export`.
    public static func export_state(_ e: OpaquePointer!, _ flags: UInt32, _ out: UnsafeMutablePointer<UnsafeMutableRawPointer?>!, _ len: UnsafeMutablePointer<Int>!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_export: engine is NULL") }
        guard let out, let len else { return fail(.invalid, "rst_export: buf or len is NULL") }
        guard flags & ~UInt32(RST_EXPORT_PORTABLE) == 0 else {
            return fail(.invalid, "rst_export: flags 0x\(String(flags, radix: 16)) hold bits other than RST_EXPORT_PORTABLE")
        }
        do {
            var asked = 0
            guard let (p, n) = try engine(e).export(portable: flags & UInt32(RST_EXPORT_PORTABLE) != 0, allocate: { size in
                asked = size
                return malloc(max(size, 1))
            }) else { return fail(.noMemory, "rst_export: cannot allocate \(asked) bytes") }
            out.pointee = p
            len.pointee = n
            return RST_OK
        } catch {
            return fail(error, in: "rst_export")
        }
    }
}
