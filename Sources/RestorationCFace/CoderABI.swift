import CRestoration
import RestorationArchive
import RestorationCore
#if canImport(Glibc)
import Glibc
#endif

// The coder half of Include/restoration.h: hot paths, kept to a NULL check,
// a handle conversion and one core call each. No closures and no reference
// counting per call: the engine keeps its coder alive during callbacks, and
// keys are passed unmeasured (the core's key cache confirms a literal it has
// seen without strlen).

/// The coder behind a handle, without retain/release.
@inline(__always)
func withCoder<T>(_ c: OpaquePointer, _ body: (Coder) -> T) -> T {
    Unmanaged<Coder>.fromOpaque(UnsafeRawPointer(c))._withUnsafeGuaranteedRef(body)
}

/// A NULL coder or key in an encode call (a NULL key inside an encode
/// callback also fails the save).
@inline(never)
func encodeNull(_ c: OpaquePointer?, _ what: StaticString) -> rst_status {
    guard let c else { return fail(.invalid, "\(what): coder is NULL") }
    return withCoder(c) { coder in failEncode(coder, .invalid, "\(what): \(coder.location): key is NULL") }
}

/// A NULL coder or key in a decode call.
@inline(never)
func decodeNull(_ c: OpaquePointer?, _ what: StaticString) -> rst_status {
    guard let c else { return fail(.invalid, "\(what): coder is NULL") }
    return withCoder(c) { coder in fail(.invalid, "\(what): \(coder.location): key is NULL") }
}

/// A misuse inside an encode callback also fails the save.
@inline(never)
func failEncode(_ coder: Coder, _ status: Status, _ message: String) -> rst_status {
    coder.recordEncodeFailure(RestorationFailure(status, message))
    return fail(status, message)
}

/// A misuse found by an encode function itself (a NULL value): recorded as
/// the save's failure, and as the last error.
@inline(never)
func misuse(_ c: OpaquePointer, _ message: (Coder, KeyBytes) -> String, _ key: UnsafePointer<CChar>) -> rst_status {
    withCoder(c) { coder in
        let f = coder.misuse(.invalid, message(coder, KeyBytes(cString: key)))
        return fail(f)
    }
}

// MARK: encode

extension CFace {
    public static func encode_bool(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ v: Bool) -> rst_status {
        guard let c, let key else { return encodeNull(c, "rst_encode_bool") }
        return withCoder(c) { encodeBool($0, key, v) }
    }

    /// The fast lane (`Coder.fastLane`), else the checked path. Out of line
    /// and called with the coder borrowed: `encode_bool` is then a tail call.
    @inline(never)
    static func encodeBool(_ coder: Coder, _ key: UnsafePointer<CChar>, _ v: Bool) -> rst_status {
        if coder.fastEncodeBool(key, v) { return RST_OK }
        return encodeBoolChecked(coder, key, v)
    }

    /// What the core's fast lane declines (`Coder.fastLane`): the checked path.
    @inline(never)
    static func encodeBoolChecked(_ coder: Coder, _ key: UnsafePointer<CChar>, _ v: Bool) -> rst_status {
        do throws(RestorationFailure) { try coder.encodeBool(KeyBytes(cString: key), v); return RST_OK } catch { return fail(error, in: "rst_encode_bool") }
    }
}

extension CFace {
    public static func encode_int(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ v: Int64) -> rst_status {
        guard let c, let key else { return encodeNull(c, "rst_encode_int") }
        return withCoder(c) { encodeInt($0, key, v) }
    }

    @inline(never)
    static func encodeInt(_ coder: Coder, _ key: UnsafePointer<CChar>, _ v: Int64) -> rst_status {
        if coder.fastEncodeInt(key, v) { return RST_OK }
        return encodeIntChecked(coder, key, v)
    }

    @inline(never)
    static func encodeIntChecked(_ coder: Coder, _ key: UnsafePointer<CChar>, _ v: Int64) -> rst_status {
        do throws(RestorationFailure) { try coder.encodeInt(KeyBytes(cString: key), v); return RST_OK } catch { return fail(error, in: "rst_encode_int") }
    }
}

extension CFace {
    public static func encode_double(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ v: Double) -> rst_status {
        guard let c, let key else { return encodeNull(c, "rst_encode_double") }
        return withCoder(c) { encodeDouble($0, key, v) }
    }

    @inline(never)
    static func encodeDouble(_ coder: Coder, _ key: UnsafePointer<CChar>, _ v: Double) -> rst_status {
        if coder.fastEncodeDouble(key, v) { return RST_OK }
        return encodeDoubleChecked(coder, key, v)
    }

    @inline(never)
    static func encodeDoubleChecked(_ coder: Coder, _ key: UnsafePointer<CChar>, _ v: Double) -> rst_status {
        do throws(RestorationFailure) { try coder.encodeDouble(KeyBytes(cString: key), v); return RST_OK } catch { return fail(error, in: "rst_encode_double") }
    }
}

extension CFace {
    public static func encode_string(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ utf8: UnsafePointer<CChar>!) -> rst_status {
        guard let c, let key else { return encodeNull(c, "rst_encode_string") }
        guard let utf8 else {
            return misuse(c, { coder, k in "rst_encode_string: \(coder.location), key '\(k.string)': the value is NULL" }, key)
        }
        return withCoder(c) { encodeString($0, key, utf8) }
    }

    @inline(never)
    static func encodeString(_ coder: Coder, _ key: UnsafePointer<CChar>, _ utf8: UnsafePointer<CChar>) -> rst_status {
        let value = UnsafeRawBufferPointer(start: utf8, count: strlen(utf8))
        if coder.fastEncodeString(key, value) { return RST_OK }
        return encodeStringChecked(coder, key, value)
    }

    @inline(never)
    static func encodeStringChecked(_ coder: Coder, _ key: UnsafePointer<CChar>, _ value: UnsafeRawBufferPointer) -> rst_status {
        do throws(RestorationFailure) {
            try coder.encodeString(KeyBytes(cString: key), value)
            return RST_OK
        } catch { return fail(error, in: "rst_encode_string") }
    }
}

extension CFace {
    public static func encode_bytes(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ p: UnsafeRawPointer!, _ n: Int) -> rst_status {
        guard let c, let key else { return encodeNull(c, "rst_encode_bytes") }
        guard p != nil || n == 0 else {
            return misuse(c, { coder, k in "rst_encode_bytes: \(coder.location), key '\(k.string)': p is NULL but n is \(n)" }, key)
        }
        let value = UnsafeRawBufferPointer(start: p, count: n)
        return withCoder(c) { encodeBytes($0, key, value) }
    }

    @inline(never)
    static func encodeBytes(_ coder: Coder, _ key: UnsafePointer<CChar>, _ value: UnsafeRawBufferPointer) -> rst_status {
        if coder.fastEncodeBytes(key, value) { return RST_OK }
        return encodeBytesChecked(coder, key, value)
    }

    @inline(never)
    static func encodeBytesChecked(_ coder: Coder, _ key: UnsafePointer<CChar>, _ value: UnsafeRawBufferPointer) -> rst_status {
        do throws(RestorationFailure) { try coder.encodeBytes(KeyBytes(cString: key), value); return RST_OK } catch { return fail(error, in: "rst_encode_bytes") }
    }
}

extension CFace {
    public static func encode_object(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ ref: OpaquePointer!) -> rst_status {
        guard let c, let key else { return encodeNull(c, "rst_encode_object") }
        guard let ref else {
            return misuse(c, { coder, k in "rst_encode_object: \(coder.location), key '\(k.string)': the referenced object is NULL" }, key)
        }
        return withCoder(c) { coder in
            Unmanaged<ObjectNode>.fromOpaque(UnsafeRawPointer(ref))._withUnsafeGuaranteedRef { encodeObject(coder, key, $0) }
        }
    }

    @inline(never)
    static func encodeObject(_ coder: Coder, _ key: UnsafePointer<CChar>, _ target: ObjectNode) -> rst_status {
        if coder.fastEncodeObject(key, target) { return RST_OK }
        return encodeObjectChecked(coder, key, target)
    }

    @inline(never)
    static func encodeObjectChecked(_ coder: Coder, _ key: UnsafePointer<CChar>, _ target: ObjectNode) -> rst_status {
        do throws(RestorationFailure) { try coder.encodeObject(KeyBytes(cString: key), target); return RST_OK } catch { return fail(error, in: "rst_encode_object") }
    }
}

extension CFace {
    public static func encode_int_array(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ v: UnsafePointer<Int64>!, _ n: Int) -> rst_status {
        guard let c, let key else { return encodeNull(c, "rst_encode_int_array") }
        guard v != nil || n == 0 else {
            return misuse(c, { coder, k in "rst_encode_int_array: \(coder.location), key '\(k.string)': v is NULL but n is \(n)" }, key)
        }
        let values = UnsafeBufferPointer(start: v, count: n)
        return withCoder(c) { encodeIntArray($0, key, values) }
    }

    @inline(never)
    static func encodeIntArray(_ coder: Coder, _ key: UnsafePointer<CChar>, _ values: UnsafeBufferPointer<Int64>) -> rst_status {
        if coder.fastEncodeIntArray(key, values) { return RST_OK }
        return encodeIntArrayChecked(coder, key, values)
    }

    @inline(never)
    static func encodeIntArrayChecked(_ coder: Coder, _ key: UnsafePointer<CChar>, _ values: UnsafeBufferPointer<Int64>) -> rst_status {
        do throws(RestorationFailure) { try coder.encodeIntArray(KeyBytes(cString: key), values); return RST_OK } catch { return fail(error, in: "rst_encode_int_array") }
    }
}

extension CFace {
    public static func encode_string_array(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ v: UnsafePointer<UnsafePointer<CChar>?>!, _ n: Int) -> rst_status {
        guard let c, let key else { return encodeNull(c, "rst_encode_string_array") }
        guard v != nil || n == 0 else {
            return misuse(c, { coder, k in "rst_encode_string_array: \(coder.location), key '\(k.string)': v is NULL but n is \(n)" }, key)
        }
        var elements: [UnsafeRawBufferPointer] = []
        elements.reserveCapacity(n)
        for i in 0..<n {
            guard let s = v[i] else {
                return misuse(c, { coder, k in "rst_encode_string_array: \(coder.location), key '\(k.string)': element \(i) is NULL" }, key)
            }
            elements.append(UnsafeRawBufferPointer(start: s, count: strlen(s)))
        }
        return withCoder(c) { coder in
            do throws(RestorationFailure) { try coder.encodeStringArray(KeyBytes(cString: key), elements); return RST_OK } catch { return fail(error, in: "rst_encode_string_array") }
        }
    }
}

extension CFace {
    public static func encode_begin_record(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!) -> rst_status {
        guard let c, let key else { return encodeNull(c, "rst_encode_begin_record") }
        return withCoder(c) { encodeBeginRecord($0, key) }
    }

    @inline(never)
    static func encodeBeginRecord(_ coder: Coder, _ key: UnsafePointer<CChar>) -> rst_status {
        if coder.fastEncodeBeginRecord(key) { return RST_OK }
        return encodeBeginRecordChecked(coder, key)
    }

    @inline(never)
    static func encodeBeginRecordChecked(_ coder: Coder, _ key: UnsafePointer<CChar>) -> rst_status {
        do throws(RestorationFailure) { try coder.encodeBeginRecord(KeyBytes(cString: key)); return RST_OK } catch { return fail(error, in: "rst_encode_begin_record") }
    }
}

extension CFace {
    public static func encode_end_record(_ c: OpaquePointer!) -> rst_status {
        guard let c else { return fail(.invalid, "rst_encode_end_record: coder is NULL") }
        return withCoder(c) { encodeEndRecord($0) }
    }

    @inline(never)
    static func encodeEndRecord(_ coder: Coder) -> rst_status {
        if coder.fastEncodeEndRecord() { return RST_OK }
        return encodeEndRecordChecked(coder)
    }

    @inline(never)
    static func encodeEndRecordChecked(_ coder: Coder) -> rst_status {
        do throws(RestorationFailure) { try coder.encodeEndRecord(); return RST_OK } catch { return fail(error, in: "rst_encode_end_record") }
    }
}

// MARK: decode

extension CFace {
    public static func coder_contains(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!) -> Bool {
        guard let c else { _ = fail(.invalid, "rst_coder_contains: coder is NULL"); return false }
        guard let key else { _ = fail(.invalid, "rst_coder_contains: key is NULL"); return false }
        do throws(RestorationFailure) {
            return try coder(c).contains(keyBytes(key))
        } catch {
            _ = fail(error, in: "rst_coder_contains")
            return false
        }
    }
}

extension CFace {
    public static func coder_value_type(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!) -> rst_value_type {
        guard let c else { _ = fail(.invalid, "rst_coder_value_type: coder is NULL"); return RST_TYPE_NONE }
        guard let key else { _ = fail(.invalid, "rst_coder_value_type: key is NULL"); return RST_TYPE_NONE }
        do throws(RestorationFailure) {
            guard let t = try coder(c).valueType(keyBytes(key)) else { return RST_TYPE_NONE }
            switch t {
            case .boolFalse?, .boolTrue?: return RST_TYPE_BOOL
            case .int?: return RST_TYPE_INT
            case .double?: return RST_TYPE_DOUBLE
            case .string?: return RST_TYPE_STRING
            case .bytes?: return RST_TYPE_BYTES
            case .object?: return RST_TYPE_OBJECT
            case .intArray?: return RST_TYPE_INT_ARRAY
            case .stringArray?: return RST_TYPE_STRING_ARRAY
            case .record?: return RST_TYPE_RECORD
            case .objectArray?: return RST_TYPE_OBJECT_ARRAY
            case .osString?: return RST_TYPE_OS_STRING
            case nil: return coder(c).isSealed(keyBytes(key)) ? RST_TYPE_SEALED : RST_TYPE_UNKNOWN
            }
        } catch {
            _ = fail(error, in: "rst_coder_value_type")
            return RST_TYPE_NONE
        }
    }
}

/// Out of line, so that the decode functions keep no frame of their own.
@inline(never)
func outMissing(_ what: StaticString) -> rst_status { fail(.invalid, "\(what): out is NULL") }

// Each decode call tries the core's decode lane (`Coder.fastDecodeInt` and
// the others: the field at the open record's hint, read in save order)
// in an out-of-line function taking the coder borrowed, so that
// `decode_int` is the argument checks and a tail call; what the lane
// declines takes the checked call (`decodeIntChecked`), which tries the
// lane once more at the object's added tail (the fields a migration added
// at the record's end, read where the new code reads them; a record
// without them declines at once) and then decides every failure and its
// message as before.

extension CFace {
    public static func decode_bool(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ out: UnsafeMutablePointer<Bool>!) -> rst_status {
        guard let out else { return outMissing("rst_decode_bool") }
        guard let c, let key else { return decodeNull(c, "rst_decode_bool") }
        return withCoder(c) { decodeBool($0, key, out) }
    }

    @inline(never)
    static func decodeBool(_ coder: Coder, _ key: UnsafePointer<CChar>, _ out: UnsafeMutablePointer<Bool>) -> rst_status {
        if let v = coder.fastDecodeBool(key) { out.pointee = v; return RST_OK }
        return decodeBoolChecked(coder, key, out)
    }

    @inline(never)
    static func decodeBoolChecked(_ coder: Coder, _ key: UnsafePointer<CChar>, _ out: UnsafeMutablePointer<Bool>) -> rst_status {
        if let v = coder.fastDecodeBool(key, atTail: true) { out.pointee = v; return RST_OK }
        do throws(RestorationFailure) { out.pointee = try coder.decodeBool(KeyBytes(cString: key)); return RST_OK } catch { return fail(error, in: "rst_decode_bool") }
    }
}

extension CFace {
    public static func decode_int(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ out: UnsafeMutablePointer<Int64>!) -> rst_status {
        guard let out else { return outMissing("rst_decode_int") }
        guard let c, let key else { return decodeNull(c, "rst_decode_int") }
        return withCoder(c) { decodeInt($0, key, out) }
    }

    @inline(never)
    static func decodeInt(_ coder: Coder, _ key: UnsafePointer<CChar>, _ out: UnsafeMutablePointer<Int64>) -> rst_status {
        if let v = coder.fastDecodeInt(key) { out.pointee = v; return RST_OK }
        return decodeIntChecked(coder, key, out)
    }

    @inline(never)
    static func decodeIntChecked(_ coder: Coder, _ key: UnsafePointer<CChar>, _ out: UnsafeMutablePointer<Int64>) -> rst_status {
        if let v = coder.fastDecodeInt(key, atTail: true) { out.pointee = v; return RST_OK }
        do throws(RestorationFailure) { out.pointee = try coder.decodeInt(KeyBytes(cString: key)); return RST_OK } catch { return fail(error, in: "rst_decode_int") }
    }
}

extension CFace {
    public static func decode_double(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ out: UnsafeMutablePointer<Double>!) -> rst_status {
        guard let out else { return outMissing("rst_decode_double") }
        guard let c, let key else { return decodeNull(c, "rst_decode_double") }
        return withCoder(c) { decodeDouble($0, key, out) }
    }

    @inline(never)
    static func decodeDouble(_ coder: Coder, _ key: UnsafePointer<CChar>, _ out: UnsafeMutablePointer<Double>) -> rst_status {
        if let v = coder.fastDecodeDouble(key) { out.pointee = v; return RST_OK }
        return decodeDoubleChecked(coder, key, out)
    }

    @inline(never)
    static func decodeDoubleChecked(_ coder: Coder, _ key: UnsafePointer<CChar>, _ out: UnsafeMutablePointer<Double>) -> rst_status {
        if let v = coder.fastDecodeDouble(key, atTail: true) { out.pointee = v; return RST_OK }
        do throws(RestorationFailure) { out.pointee = try coder.decodeDouble(KeyBytes(cString: key)); return RST_OK } catch { return fail(error, in: "rst_decode_double") }
    }
}

extension CFace {
    public static func decode_string(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ out: UnsafeMutablePointer<UnsafePointer<CChar>?>!, _ len: UnsafeMutablePointer<Int>!) -> rst_status {
        guard let out else { return outMissing("rst_decode_string") }
        guard let c, let key else { return decodeNull(c, "rst_decode_string") }
        return withCoder(c) { decodeString($0, key, out, len) }
    }

    @inline(never)
    static func decodeString(_ coder: Coder, _ key: UnsafePointer<CChar>, _ out: UnsafeMutablePointer<UnsafePointer<CChar>?>, _ len: UnsafeMutablePointer<Int>?) -> rst_status {
        if let b = coder.fastDecodeStringBytes(key) {
            out.pointee = cString(b, for: coder)
            len?.pointee = b.count
            return RST_OK
        }
        return decodeStringChecked(coder, key, out, len)
    }

    @inline(never)
    static func decodeStringChecked(_ coder: Coder, _ key: UnsafePointer<CChar>, _ out: UnsafeMutablePointer<UnsafePointer<CChar>?>, _ len: UnsafeMutablePointer<Int>?) -> rst_status {
        if let b = coder.fastDecodeStringBytes(key, atTail: true) {
            out.pointee = cString(b, for: coder)
            len?.pointee = b.count
            return RST_OK
        }
        do throws(RestorationFailure) {
            let b = try coder.decodeStringBytes(KeyBytes(cString: key))
            let (p, n) = (cString(b, for: coder), b.count)
            out.pointee = p
            len?.pointee = n
            return RST_OK
        } catch { return fail(error, in: "rst_decode_string") }
    }
}

private let emptyBytes: UnsafeMutableRawPointer = .allocate(byteCount: 1, alignment: 1)

extension CFace {
    public static func decode_bytes(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ out: UnsafeMutablePointer<UnsafeRawPointer?>!, _ len: UnsafeMutablePointer<Int>!) -> rst_status {
        guard let out else { return outMissing("rst_decode_bytes") }
        guard let c, let key else { return decodeNull(c, "rst_decode_bytes") }
        return withCoder(c) { decodeBytes($0, key, out, len) }
    }

    @inline(never)
    static func decodeBytes(_ coder: Coder, _ key: UnsafePointer<CChar>, _ out: UnsafeMutablePointer<UnsafeRawPointer?>, _ len: UnsafeMutablePointer<Int>?) -> rst_status {
        if let b = coder.fastDecodeBytes(key) {
            out.pointee = b.baseAddress ?? UnsafeRawPointer(emptyBytes)
            len?.pointee = b.count
            return RST_OK
        }
        return decodeBytesChecked(coder, key, out, len)
    }

    @inline(never)
    static func decodeBytesChecked(_ coder: Coder, _ key: UnsafePointer<CChar>, _ out: UnsafeMutablePointer<UnsafeRawPointer?>, _ len: UnsafeMutablePointer<Int>?) -> rst_status {
        if let b = coder.fastDecodeBytes(key, atTail: true) {
            out.pointee = b.baseAddress ?? UnsafeRawPointer(emptyBytes)
            len?.pointee = b.count
            return RST_OK
        }
        do throws(RestorationFailure) {
            let b = try coder.decodeBytes(KeyBytes(cString: key))
            out.pointee = b.baseAddress ?? UnsafeRawPointer(emptyBytes)
            len?.pointee = b.count
            return RST_OK
        } catch { return fail(error, in: "rst_decode_bytes") }
    }
}

extension CFace {
    public static func decode_object(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ out: UnsafeMutablePointer<OpaquePointer?>!) -> rst_status {
        guard let out else { return outMissing("rst_decode_object") }
        guard let c, let key else { return decodeNull(c, "rst_decode_object") }
        return withCoder(c) { decodeObject($0, key, out) }
    }

    @inline(never)
    static func decodeObject(_ coder: Coder, _ key: UnsafePointer<CChar>, _ out: UnsafeMutablePointer<OpaquePointer?>) -> rst_status {
        if let h = coder.fastDecodeObjectHandle(key) { out.pointee = OpaquePointer(h); return RST_OK }
        return decodeObjectChecked(coder, key, out)
    }

    @inline(never)
    static func decodeObjectChecked(_ coder: Coder, _ key: UnsafePointer<CChar>, _ out: UnsafeMutablePointer<OpaquePointer?>) -> rst_status {
        do throws(RestorationFailure) { out.pointee = OpaquePointer(try coder.decodeObjectHandle(KeyBytes(cString: key))); return RST_OK } catch { return fail(error, in: "rst_decode_object") }
    }
}

extension CFace {
    public static func decode_int_array(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ buf: UnsafeMutablePointer<Int64>!, _ cap: Int, _ count: UnsafeMutablePointer<Int>!) -> rst_status {
        guard let count else { return fail(.invalid, "rst_decode_int_array: count is NULL") }
        guard buf != nil || cap == 0 else { return fail(.invalid, "rst_decode_int_array: buf is NULL but cap is \(cap)") }
        count.pointee = 0   // "always set": 0 when the key is absent or of another type
        guard let c, let key else { return decodeNull(c, "rst_decode_int_array") }
        let buffer = buf.map { UnsafeMutableBufferPointer(start: $0, count: cap) }
        return withCoder(c) { decodeIntArray($0, key, buffer, count) }
    }

    @inline(never)
    static func decodeIntArray(_ coder: Coder, _ key: UnsafePointer<CChar>, _ buffer: UnsafeMutableBufferPointer<Int64>?, _ count: UnsafeMutablePointer<Int>) -> rst_status {
        if let (n, copied) = coder.fastDecodeIntArray(key, into: buffer) {
            count.pointee = n
            return copied ? RST_OK : intArrayTooSmall(coder, KeyBytes(cString: key), n, buffer?.count ?? 0)
        }
        return decodeIntArrayChecked(coder, key, buffer, count)
    }

    @inline(never)
    static func decodeIntArrayChecked(_ coder: Coder, _ key: UnsafePointer<CChar>, _ buffer: UnsafeMutableBufferPointer<Int64>?, _ count: UnsafeMutablePointer<Int>) -> rst_status {
        if let (n, copied) = coder.fastDecodeIntArray(key, into: buffer, atTail: true) {
            count.pointee = n
            return copied ? RST_OK : intArrayTooSmall(coder, KeyBytes(cString: key), n, buffer?.count ?? 0)
        }
        do throws(RestorationFailure) {
            let k = KeyBytes(cString: key)
            let (n, copied) = try coder.decodeIntArray(k, into: buffer)
            count.pointee = n
            if !copied { return intArrayTooSmall(coder, k, n, buffer?.count ?? 0) }
            return RST_OK
        } catch { return fail(error, in: "rst_decode_int_array") }
    }
}

@inline(never)
func intArrayTooSmall(_ coder: Coder, _ k: KeyBytes, _ n: Int, _ cap: Int) -> rst_status {
    fail(.limit, "rst_decode_int_array: \(coder.location), key '\(k.string)' holds \(n) ints; the buffer has room for \(cap)")
}

extension CFace {
    public static func decode_string_array(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ index: Int,
                                        _ out: UnsafeMutablePointer<UnsafePointer<CChar>?>!, _ len: UnsafeMutablePointer<Int>!,
                                        _ count: UnsafeMutablePointer<Int>!) -> rst_status {
        guard let out else { return outMissing("rst_decode_string_array") }
        guard let c, let key else { return decodeNull(c, "rst_decode_string_array") }
        return withCoder(c) { coder in
            do throws(RestorationFailure) {
                let k = KeyBytes(cString: key)
                let (element, n) = try coder.decodeStringArrayElement(k, at: index)
                count?.pointee = n
                guard let element else {
                    return fail(.notFound, "rst_decode_string_array: \(coder.location), key '\(k.string)' has \(n) elements; index \(index) is out of range")
                }
                out.pointee = cString(element, for: coder)
                len?.pointee = element.count
                return RST_OK
            } catch { return fail(error, in: "rst_decode_string_array") }
        }
    }
}

extension CFace {
    public static func decode_begin_record(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!) -> rst_status {
        guard let c, let key else { return decodeNull(c, "rst_decode_begin_record") }
        return withCoder(c) { decodeBeginRecord($0, key) }
    }

    @inline(never)
    static func decodeBeginRecord(_ coder: Coder, _ key: UnsafePointer<CChar>) -> rst_status {
        if coder.fastDecodeBeginRecord(key) { return RST_OK }
        return decodeBeginRecordChecked(coder, key)
    }

    @inline(never)
    static func decodeBeginRecordChecked(_ coder: Coder, _ key: UnsafePointer<CChar>) -> rst_status {
        if coder.fastDecodeBeginRecord(key, atTail: true) { return RST_OK }
        do throws(RestorationFailure) { try coder.decodeBeginRecord(KeyBytes(cString: key)); return RST_OK } catch { return fail(error, in: "rst_decode_begin_record") }
    }
}

extension CFace {
    public static func decode_end_record(_ c: OpaquePointer!) -> rst_status {
        guard let c else { return fail(.invalid, "rst_decode_end_record: coder is NULL") }
        return withCoder(c) { decodeEndRecord($0) }
    }

    @inline(never)
    static func decodeEndRecord(_ coder: Coder) -> rst_status {
        if coder.fastDecodeEndRecord() { return RST_OK }
        return decodeEndRecordChecked(coder)
    }

    @inline(never)
    static func decodeEndRecordChecked(_ coder: Coder) -> rst_status {
        do throws(RestorationFailure) { try coder.decodeEndRecord(); return RST_OK } catch { return fail(error, in: "rst_decode_end_record") }
    }
}

extension CFace {
    /// `rst_coder_fail`.
    public static func coder_fail(_ c: OpaquePointer!, _ status: rst_status, _ message: UnsafePointer<CChar>!) -> rst_status {
        guard let c else { return fail(.invalid, "rst_coder_fail: coder is NULL") }
        let st = Status(rawValue: status.rawValue).flatMap { $0 == .ok ? nil : $0 } ?? .invalid
        let text = message.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: strlen($0)), as: UTF8.self) } ?? "the callback failed"
        return withCoder(c) { coder in
            do throws(RestorationFailure) {
                try coder.failCallback(RestorationFailure(st, text))
                return RST_OK
            } catch { return fail(error, in: "rst_coder_fail") }
        }
    }
}

// MARK: OS strings (file names are bytes)

extension CFace {
    public static func encode_os_string(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ v: UnsafePointer<CChar>!) -> rst_status {
        guard let c, let key else { return encodeNull(c, "rst_encode_os_string") }
        guard let v else {
            return misuse(c, { coder, k in "rst_encode_os_string: \(coder.location), key '\(k.string)': the value is NULL" }, key)
        }
        return withCoder(c) { coder in
            do throws(RestorationFailure) {
                try coder.encodeOSString(KeyBytes(cString: key), UnsafeRawBufferPointer(start: v, count: strlen(v)))
                return RST_OK
            } catch { return fail(error, in: "rst_encode_os_string") }
        }
    }
}

extension CFace {
    public static func decode_os_string(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ out: UnsafeMutablePointer<UnsafePointer<CChar>?>!) -> rst_status {
        guard let out else { return outMissing("rst_decode_os_string") }
        guard let c, let key else { return decodeNull(c, "rst_decode_os_string") }
        return withCoder(c) { coder in
            do throws(RestorationFailure) {
                out.pointee = cString(try coder.decodeOSStringBytes(KeyBytes(cString: key)), for: coder)
                return RST_OK
            } catch { return fail(error, in: "rst_decode_os_string") }
        }
    }
}

extension CFace {
    /// `rst_decode_string_copy`: a string or OS string copied with its NUL
    /// into the caller's buffer; `*len` is always set (0 unless found).
    public static func decode_string_copy(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ buf: UnsafeMutablePointer<CChar>!,
                                          _ cap: Int, _ len: UnsafeMutablePointer<Int>!) -> rst_status {
        len?.pointee = 0
        guard buf != nil || cap == 0 else { return fail(.invalid, "rst_decode_string_copy: buf is NULL but cap is \(cap)") }
        if let buf, cap > 0 { buf.pointee = 0 }
        guard let c, let key else { return decodeNull(c, "rst_decode_string_copy") }
        return withCoder(c) { coder in
            do throws(RestorationFailure) {
                let k = KeyBytes(cString: key)
                let b = try coder.decodeOSStringBytes(k)
                len?.pointee = b.count
                guard b.count < cap, let buf else {
                    return fail(.limit, "rst_decode_string_copy: \(coder.location), key '\(k.string)' holds \(b.count) bytes and its NUL; the buffer has room for \(cap)")
                }
                if let src = b.baseAddress, b.count > 0 { memcpy(buf, src, b.count) }
                buf[b.count] = 0
                return RST_OK
            } catch { return fail(error, in: "rst_decode_string_copy") }
        }
    }
}

extension CFace {
    public static func encode_object_array(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ v: UnsafePointer<OpaquePointer?>!, _ n: Int) -> rst_status {
        guard let c, let key else { return encodeNull(c, "rst_encode_object_array") }
        guard v != nil || n == 0 else {
            return misuse(c, { coder, k in "rst_encode_object_array: \(coder.location), key '\(k.string)': v is NULL but n is \(n)" }, key)
        }
        var nodes: [ObjectNode] = []
        nodes.reserveCapacity(n)
        for i in 0..<n {
            guard let p = v[i] else {
                return misuse(c, { coder, k in "rst_encode_object_array: \(coder.location), key '\(k.string)': element \(i) is NULL" }, key)
            }
            nodes.append(node(p))
        }
        return withCoder(c) { coder in
            do throws(RestorationFailure) { try coder.encodeObjectArray(KeyBytes(cString: key), nodes); return RST_OK } catch { return fail(error, in: "rst_encode_object_array") }
        }
    }

    public static func decode_object_array(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ index: Int,
                                           _ out: UnsafeMutablePointer<OpaquePointer?>!, _ count: UnsafeMutablePointer<Int>!) -> rst_status {
        count?.pointee = 0   // "always set": 0 when the key is absent or of another type
        guard let out else { return outMissing("rst_decode_object_array") }
        guard let c, let key else { return decodeNull(c, "rst_decode_object_array") }
        return withCoder(c) { coder in
            do throws(RestorationFailure) {
                let k = KeyBytes(cString: key)
                let (h, n, inRange) = try coder.decodeObjectArrayElement(k, at: index)
                count?.pointee = n
                guard inRange else {
                    return fail(.notFound, "rst_decode_object_array: \(coder.location), key '\(k.string)' has \(n) elements; index \(index) is out of range")
                }
                out.pointee = h.map { OpaquePointer($0) }
                return RST_OK
            } catch {
                // "always set": the count when the key holds an object array.
                if let n = try? coder.decodeObjectArrayCount(KeyBytes(cString: key)) { count?.pointee = n }
                return fail(error, in: "rst_decode_object_array")
            }
        }
    }
}
