import CRestoration
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An `rst_coder *`, borrowed: valid only during the callback (encode,
/// decode, or a factory) it was passed to. Every call goes through the
/// host's table; errors throw `PluginError` with `rst_last_error()`.
public struct PluginCoder {
    public let raw: OpaquePointer

    public init(_ raw: OpaquePointer) { self.raw = raw }

    @inline(__always) private var api: rst_host_api { PluginHost.api.pointee }

    // MARK: encode (inside an encode callback)

    public func encode(_ value: Bool, forKey key: String) throws(PluginError) {
        try PluginError.check(api.encode_bool(raw, key, value))
    }

    public func encode(_ value: Int64, forKey key: String) throws(PluginError) {
        try PluginError.check(api.encode_int(raw, key, value))
    }

    public func encode(_ value: Int, forKey key: String) throws(PluginError) {
        try PluginError.check(api.encode_int(raw, key, Int64(value)))
    }

    public func encode(_ value: Double, forKey key: String) throws(PluginError) {
        try PluginError.check(api.encode_double(raw, key, value))
    }

    public func encode(_ value: String, forKey key: String) throws(PluginError) {
        try PluginError.check(api.encode_string(raw, key, value))
    }

    public func encode(bytes: [UInt8], forKey key: String) throws(PluginError) {
        let s = bytes.withUnsafeBytes { b in api.encode_bytes(raw, key, b.baseAddress, b.count) }
        try PluginError.check(s)
    }

    /// An OS string (a file name: any bytes but NUL, UTF-8 or not), kept
    /// losslessly with its own type. A host older than 1.2: RST_ERR_STATE.
    public func encode(osString bytes: [UInt8], forKey key: String) throws(PluginError) {
        guard PluginHost.has(\rst_host_api.encode_os_string), let fn = api.encode_os_string else {
            throw PluginError(RST_ERR_STATE, "encode(osString:): the host's library is older than 1.2 (its table has no encode_os_string)")
        }
        if let nul = bytes.firstIndex(of: 0) {
            throw PluginError(RST_ERR_INVALID, "encode(osString:): key '\(key)': the OS string holds a NUL byte at offset \(nul)")
        }
        let z = bytes.map { CChar(bitPattern: $0) } + [0]
        try PluginError.check(z.withUnsafeBufferPointer { fn(raw, key, $0.baseAddress) })
    }

    /// A reference to another registered object of the same engine.
    public func encode(_ object: PluginObjectRef, forKey key: String) throws(PluginError) {
        try PluginError.check(api.encode_object(raw, key, object.raw))
    }

    public func encode(_ values: [Int64], forKey key: String) throws(PluginError) {
        let s = values.withUnsafeBufferPointer { b in api.encode_int_array(raw, key, b.baseAddress, b.count) }
        try PluginError.check(s)
    }

    public func encode(_ values: [String], forKey key: String) throws(PluginError) {
        // strdup'ed copies: the C array needs stable element pointers.
        let copies: [UnsafeMutablePointer<CChar>?] = values.map { strdup($0) }
        defer { for c in copies { free(c) } }
        let s = copies.map { UnsafePointer($0) }.withUnsafeBufferPointer { b in
            api.encode_string_array(raw, key, b.baseAddress, b.count)
        }
        try PluginError.check(s)
    }

    /// A nested keyed record under `key`: `body` writes its values.
    public func encodeRecord(_ key: String, _ body: (PluginCoder) throws(PluginError) -> Void) throws(PluginError) {
        try PluginError.check(api.encode_begin_record(raw, key))
        try body(self)
        try PluginError.check(api.encode_end_record(raw))
    }

    // MARK: decode (inside decode, or a factory's coder)

    /// True when the record holds `key`, whatever its value.
    public func contains(_ key: String) -> Bool {
        api.coder_contains(raw, key)
    }

    public func decodeBool(forKey key: String) throws(PluginError) -> Bool {
        var v = false
        try PluginError.check(api.decode_bool(raw, key, &v))
        return v
    }

    public func decodeInt(forKey key: String) throws(PluginError) -> Int64 {
        var v: Int64 = 0
        try PluginError.check(api.decode_int(raw, key, &v))
        return v
    }

    public func decodeDouble(forKey key: String) throws(PluginError) -> Double {
        var v = 0.0
        try PluginError.check(api.decode_double(raw, key, &v))
        return v
    }

    public func decodeString(forKey key: String) throws(PluginError) -> String {
        var p: UnsafePointer<CChar>? = nil
        var n = 0
        try PluginError.check(api.decode_string(raw, key, &p, &n))
        guard let p else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: p, count: n), as: UTF8.self)
    }

    public func decodeBytes(forKey key: String) throws(PluginError) -> [UInt8] {
        var p: UnsafeRawPointer? = nil
        var n = 0
        try PluginError.check(api.decode_bytes(raw, key, &p, &n))
        guard let p else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: n))
    }

    /// An OS string's (or a string's) bytes, as stored. A host older than
    /// 1.2: RST_ERR_STATE.
    public func decodeOSString(forKey key: String) throws(PluginError) -> [UInt8] {
        guard PluginHost.has(\rst_host_api.decode_os_string), let fn = api.decode_os_string else {
            throw PluginError(RST_ERR_STATE, "decodeOSString: the host's library is older than 1.2 (its table has no decode_os_string)")
        }
        var p: UnsafePointer<CChar>? = nil
        try PluginError.check(fn(raw, key, &p))
        guard let p else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: strlen(p)))
    }

    /// The referenced object (RST_ERR_STATE in a factory's coder when it is
    /// not materialized yet; RST_ERR_NOT_FOUND when its record was skipped).
    public func decodeObject(forKey key: String) throws(PluginError) -> PluginObjectRef {
        var o: OpaquePointer? = nil
        try PluginError.check(api.decode_object(raw, key, &o))
        guard let o else { throw PluginError(RST_ERR_NOT_FOUND, "decode_object returned NULL for '\(key)'") }
        return PluginObjectRef(o)
    }

    public func decodeIntArray(forKey key: String) throws(PluginError) -> [Int64] {
        var count = 0
        let s = api.decode_int_array(raw, key, nil, 0, &count)
        if s != RST_OK && s != RST_ERR_LIMIT { try PluginError.check(s) }
        if count == 0 { return [] }
        var out = [Int64](repeating: 0, count: count)
        let s2 = out.withUnsafeMutableBufferPointer { b in api.decode_int_array(raw, key, b.baseAddress, b.count, &count) }
        try PluginError.check(s2)
        return out
    }

    public func decodeStringArray(forKey key: String) throws(PluginError) -> [String] {
        var count = 0
        var p: UnsafePointer<CChar>? = nil
        var n = 0
        let first = api.decode_string_array(raw, key, 0, &p, &n, &count)
        if first != RST_OK {
            // An empty array: index 0 is out of range, but count is set (0).
            if first == RST_ERR_NOT_FOUND && count == 0 && api.coder_contains(raw, key) { return [] }
            try PluginError.check(first)
        }
        var out: [String] = []
        out.reserveCapacity(count)
        for i in 0..<count {
            if i > 0 { try PluginError.check(api.decode_string_array(raw, key, i, &p, &n, nil)) }
            out.append(p.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: n), as: UTF8.self) } ?? "")
        }
        return out
    }

    /// Enters the nested record under `key` for `body`.
    public func decodeRecord<T>(_ key: String, _ body: (PluginCoder) throws(PluginError) -> T) throws(PluginError) -> T {
        try PluginError.check(api.decode_begin_record(raw, key))
        let result: T
        do {
            result = try body(self)
        } catch {
            _ = api.decode_end_record(raw)
            throw error
        }
        try PluginError.check(api.decode_end_record(raw))
        return result
    }
}
