import CRestoration
import RestorationArchive
import RestorationCore
#if canImport(Glibc)
import Glibc
#endif

// The coder half of Include/restoration.h: hot paths, kept to a NULL check,
// a handle conversion and one core call each.

@inline(__always)
func encode(_ c: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ what: StaticString,
            _ body: (Coder, KeyBytes) throws(RestorationFailure) -> Void) -> rst_status {
    guard let c else { return fail(.invalid, "\(what): coder is NULL") }
    // No retain/release per call: the engine keeps its coder alive.
    return Unmanaged<Coder>.fromOpaque(UnsafeRawPointer(c))._withUnsafeGuaranteedRef { coder in
        guard let key else { return failEncode(coder, .invalid, "\(what): \(coder.location): key is NULL") }
        return call(body, coder, keyBytes(key))
    }
}

@inline(__always)
func call(_ body: (Coder, KeyBytes) throws(RestorationFailure) -> Void, _ coder: Coder, _ key: KeyBytes) -> rst_status {
    do {
        try body(coder, key)
        return RST_OK
    } catch {
        return fail(error)
    }
}

/// A misuse inside an encode callback also fails the save.
@inline(never)
func failEncode(_ coder: Coder, _ status: Status, _ message: String) -> rst_status {
    coder.recordEncodeFailure(RestorationFailure(status, message))
    return fail(status, message)
}

@inline(__always)
func decode(_ c: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ what: StaticString,
            _ body: (Coder, KeyBytes) throws(RestorationFailure) -> Void) -> rst_status {
    guard let c else { return fail(.invalid, "\(what): coder is NULL") }
    return Unmanaged<Coder>.fromOpaque(UnsafeRawPointer(c))._withUnsafeGuaranteedRef { coder in
        guard let key else { return fail(.invalid, "\(what): \(coder.location): key is NULL") }
        return call(body, coder, keyBytes(key))
    }
}

// MARK: encode

@c @implementation
public func rst_encode_bool(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ v: Bool) -> rst_status {
    encode(c, key, "rst_encode_bool") { (coder, k) throws(RestorationFailure) in try coder.encodeBool(k, v) }
}

@c @implementation
public func rst_encode_int(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ v: Int64) -> rst_status {
    encode(c, key, "rst_encode_int") { (coder, k) throws(RestorationFailure) in try coder.encodeInt(k, v) }
}

@c @implementation
public func rst_encode_double(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ v: Double) -> rst_status {
    encode(c, key, "rst_encode_double") { (coder, k) throws(RestorationFailure) in try coder.encodeDouble(k, v) }
}

@c @implementation
public func rst_encode_string(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ utf8: UnsafePointer<CChar>!) -> rst_status {
    encode(c, key, "rst_encode_string") { (coder, k) throws(RestorationFailure) in
        guard let utf8 else { throw coder.misuse(.invalid, "rst_encode_string: \(coder.location), key '\(k.string)': the value is NULL") }
        try coder.encodeString(k, UnsafeRawBufferPointer(start: utf8, count: strlen(utf8)))
    }
}

@c @implementation
public func rst_encode_bytes(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ p: UnsafeRawPointer!, _ n: Int) -> rst_status {
    encode(c, key, "rst_encode_bytes") { (coder, k) throws(RestorationFailure) in
        guard p != nil || n == 0 else { throw coder.misuse(.invalid, "rst_encode_bytes: \(coder.location), key '\(k.string)': p is NULL but n is \(n)") }
        try coder.encodeBytes(k, UnsafeRawBufferPointer(start: p, count: n))
    }
}

@c @implementation
public func rst_encode_object(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ ref: OpaquePointer!) -> rst_status {
    encode(c, key, "rst_encode_object") { (coder, k) throws(RestorationFailure) in
        guard let ref else { throw coder.misuse(.invalid, "rst_encode_object: \(coder.location), key '\(k.string)': the referenced object is NULL") }
        try coder.encodeObject(k, node(ref))
    }
}

@c @implementation
public func rst_encode_int_array(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ v: UnsafePointer<Int64>!, _ n: Int) -> rst_status {
    encode(c, key, "rst_encode_int_array") { (coder, k) throws(RestorationFailure) in
        guard v != nil || n == 0 else { throw coder.misuse(.invalid, "rst_encode_int_array: \(coder.location), key '\(k.string)': v is NULL but n is \(n)") }
        try coder.encodeIntArray(k, UnsafeBufferPointer(start: v, count: n))
    }
}

@c @implementation
public func rst_encode_string_array(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ v: UnsafePointer<UnsafePointer<CChar>?>!, _ n: Int) -> rst_status {
    encode(c, key, "rst_encode_string_array") { (coder, k) throws(RestorationFailure) in
        guard v != nil || n == 0 else { throw coder.misuse(.invalid, "rst_encode_string_array: \(coder.location), key '\(k.string)': v is NULL but n is \(n)") }
        var elements: [UnsafeRawBufferPointer] = []
        elements.reserveCapacity(n)
        for i in 0..<n {
            guard let s = v[i] else { throw coder.misuse(.invalid, "rst_encode_string_array: \(coder.location), key '\(k.string)': element \(i) is NULL") }
            elements.append(UnsafeRawBufferPointer(start: s, count: strlen(s)))
        }
        try coder.encodeStringArray(k, elements)
    }
}

@c @implementation
public func rst_encode_begin_record(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!) -> rst_status {
    encode(c, key, "rst_encode_begin_record") { (coder, k) throws(RestorationFailure) in try coder.encodeBeginRecord(k) }
}

@c @implementation
public func rst_encode_end_record(_ c: OpaquePointer!) -> rst_status {
    guard let c else { return fail(.invalid, "rst_encode_end_record: coder is NULL") }
    do {
        try coder(c).encodeEndRecord()
        return RST_OK
    } catch {
        return fail(error)
    }
}

// MARK: decode

@c @implementation
public func rst_coder_contains(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!) -> Bool {
    guard let c else { _ = fail(.invalid, "rst_coder_contains: coder is NULL"); return false }
    guard let key else { _ = fail(.invalid, "rst_coder_contains: key is NULL"); return false }
    do {
        return try coder(c).contains(keyBytes(key))
    } catch {
        _ = fail(error)
        return false
    }
}

@c @implementation
public func rst_coder_value_type(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!) -> rst_value_type {
    guard let c else { _ = fail(.invalid, "rst_coder_value_type: coder is NULL"); return RST_TYPE_NONE }
    guard let key else { _ = fail(.invalid, "rst_coder_value_type: key is NULL"); return RST_TYPE_NONE }
    do {
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
        case nil: return RST_TYPE_UNKNOWN
        }
    } catch {
        _ = fail(error)
        return RST_TYPE_NONE
    }
}

@inline(__always)
func outMissing(_ what: StaticString) -> rst_status { fail(.invalid, "\(what): out is NULL") }

@c @implementation
public func rst_decode_bool(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ out: UnsafeMutablePointer<Bool>!) -> rst_status {
    guard let out else { return outMissing("rst_decode_bool") }
    return decode(c, key, "rst_decode_bool") { (coder, k) throws(RestorationFailure) in out.pointee = try coder.decodeBool(k) }
}

@c @implementation
public func rst_decode_int(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ out: UnsafeMutablePointer<Int64>!) -> rst_status {
    guard let out else { return outMissing("rst_decode_int") }
    return decode(c, key, "rst_decode_int") { (coder, k) throws(RestorationFailure) in out.pointee = try coder.decodeInt(k) }
}

@c @implementation
public func rst_decode_double(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ out: UnsafeMutablePointer<Double>!) -> rst_status {
    guard let out else { return outMissing("rst_decode_double") }
    return decode(c, key, "rst_decode_double") { (coder, k) throws(RestorationFailure) in out.pointee = try coder.decodeDouble(k) }
}

@c @implementation
public func rst_decode_string(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ out: UnsafeMutablePointer<UnsafePointer<CChar>?>!, _ len: UnsafeMutablePointer<Int>!) -> rst_status {
    guard let out else { return outMissing("rst_decode_string") }
    return decode(c, key, "rst_decode_string") { (coder, k) throws(RestorationFailure) in
        let (p, n) = try coder.decodeCString(k)
        out.pointee = p
        len?.pointee = n
    }
}

private let emptyBytes: UnsafeMutableRawPointer = .allocate(byteCount: 1, alignment: 1)

@c @implementation
public func rst_decode_bytes(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ out: UnsafeMutablePointer<UnsafeRawPointer?>!, _ len: UnsafeMutablePointer<Int>!) -> rst_status {
    guard let out else { return outMissing("rst_decode_bytes") }
    return decode(c, key, "rst_decode_bytes") { (coder, k) throws(RestorationFailure) in
        let b = try coder.decodeBytes(k)
        out.pointee = b.baseAddress ?? UnsafeRawPointer(emptyBytes)
        len?.pointee = b.count
    }
}

@c @implementation
public func rst_decode_object(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ out: UnsafeMutablePointer<OpaquePointer?>!) -> rst_status {
    guard let out else { return outMissing("rst_decode_object") }
    return decode(c, key, "rst_decode_object") { (coder, k) throws(RestorationFailure) in out.pointee = handle(try coder.decodeObject(k)) }
}

@c @implementation
public func rst_decode_int_array(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ buf: UnsafeMutablePointer<Int64>!, _ cap: Int, _ count: UnsafeMutablePointer<Int>!) -> rst_status {
    guard let count else { return fail(.invalid, "rst_decode_int_array: count is NULL") }
    guard buf != nil || cap == 0 else { return fail(.invalid, "rst_decode_int_array: buf is NULL but cap is \(cap)") }
    count.pointee = 0   // "always set": 0 when the key is absent or of another type
    return decode(c, key, "rst_decode_int_array") { (coder, k) throws(RestorationFailure) in
        let (n, copied) = try coder.decodeIntArray(k, into: buf.map { UnsafeMutableBufferPointer(start: $0, count: cap) })
        count.pointee = n
        if !copied {
            throw RestorationFailure(.limit, "rst_decode_int_array: \(coder.location), key '\(k.string)' holds \(n) ints; the buffer has room for \(cap)")
        }
    }
}

@c @implementation
public func rst_decode_string_array(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ index: Int,
                                    _ out: UnsafeMutablePointer<UnsafePointer<CChar>?>!, _ len: UnsafeMutablePointer<Int>!,
                                    _ count: UnsafeMutablePointer<Int>!) -> rst_status {
    guard let out else { return outMissing("rst_decode_string_array") }
    return decode(c, key, "rst_decode_string_array") { (coder, k) throws(RestorationFailure) in
        let (element, n) = try coder.decodeStringArrayElement(k, at: index)
        count?.pointee = n
        guard let element else {
            throw RestorationFailure(.notFound, "rst_decode_string_array: \(coder.location), key '\(k.string)' has \(n) elements; index \(index) is out of range")
        }
        out.pointee = coder.arenaCopy(element)
        len?.pointee = element.count
    }
}

@c @implementation
public func rst_decode_begin_record(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!) -> rst_status {
    decode(c, key, "rst_decode_begin_record") { (coder, k) throws(RestorationFailure) in try coder.decodeBeginRecord(k) }
}

@c @implementation
public func rst_decode_end_record(_ c: OpaquePointer!) -> rst_status {
    guard let c else { return fail(.invalid, "rst_decode_end_record: coder is NULL") }
    do {
        try coder(c).decodeEndRecord()
        return RST_OK
    } catch {
        return fail(error)
    }
}
