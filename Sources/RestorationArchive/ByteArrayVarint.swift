/// The codec's one varint reader (`readVarint`) over a byte array, for the
/// payloads the core builds and reads back itself (a sealed value's
/// plaintext): the LEB128 varint at `pos`, which then points past it; nil,
/// with `pos` unchanged, when the varint is cut off by the end, is longer
/// than 10 bytes or overflows 64 bits.
public func readVarint(_ bytes: [UInt8], _ pos: inout Int) -> UInt64? {
    guard pos >= 0 else { return nil }
    return bytes.withUnsafeBytes { (b: UnsafeRawBufferPointer) -> UInt64? in
        guard let base = b.baseAddress else { return nil }
        return readVarint(base, &pos, b.count)
    }
}
