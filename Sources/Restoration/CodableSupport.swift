import Foundation
import RestorationCore

// Codable over the archive's native values. Encoding builds a small value
// tree first (Encoder containers are not scoped, so a record cannot be
// begun and ended around them) and then writes it with the coder's typed
// calls; decoding reads the key's subtree and decodes from it. The mapping
// is documented on RestorationCoder.encode(_:forKey:).

/// A value as the archive stores it.
indirect enum EncodedTree {
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case bytes(Data)
    case intArray([Int64])
    case stringArray([String])
    case record([(String, EncodedTree)])
    /// Something Codable cannot use (an object reference, a future type).
    case other(String)
    /// Decoding only: an array element encoded as nil (no value stored).
    case null

    var typeName: String {
        switch self {
        case .bool: return "a bool"
        case .int: return "an int"
        case .double: return "a double"
        case .string: return "a string"
        case .bytes: return "bytes"
        case .intArray: return "an int array"
        case .stringArray: return "a string array"
        case .record: return "a record"
        case .other(let what): return what
        case .null: return "nothing (nil)"
        }
    }
}

/// A key of the Codable adapters: a name or an array index.
struct IndexKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue; self.intValue = Int(stringValue) }
    init(intValue: Int) { self.stringValue = String(intValue); self.intValue = intValue }
    static let `super` = IndexKey(stringValue: "super")
}

/// "key.field.2", for messages.
func keyPath(_ top: String, _ path: [CodingKey]) -> String {
    ([top] + path.map { $0.stringValue }).joined(separator: ".")
}

// MARK: - encoding

/// A place a value is encoded into.
final class Slot {
    enum Content {
        case empty
        case leaf(EncodedTree)
        case record(RecordBuilder)
        case array(ArrayBuilder)
    }
    var content: Content = .empty

    func record() -> RecordBuilder {
        if case .record(let r) = content { return r }
        let r = RecordBuilder()
        content = .record(r)
        return r
    }

    func array() -> ArrayBuilder {
        if case .array(let a) = content { return a }
        let a = ArrayBuilder()
        content = .array(a)
        return a
    }

    /// The finished value; nil for an empty slot (nil is absence).
    func value() -> EncodedTree? {
        switch content {
        case .empty: return nil
        case .leaf(let v): return v
        case .record(let r): return r.value()
        case .array(let a): return a.value()
        }
    }
}

final class RecordBuilder {
    var order: [String] = []
    var slots: [String: Slot] = [:]

    func slot(_ key: String) -> Slot {
        if let s = slots[key] { return s }
        let s = Slot()
        order.append(key)
        slots[key] = s
        return s
    }

    func value() -> EncodedTree {
        var fields: [(String, EncodedTree)] = []
        fields.reserveCapacity(order.count)
        for k in order { if let v = slots[k]!.value() { fields.append((k, v)) } }
        return .record(fields)
    }
}

final class ArrayBuilder {
    var elements: [Slot] = []

    func append() -> Slot {
        let s = Slot()
        elements.append(s)
        return s
    }

    /// All ints: an int array; all strings: a string array; otherwise a
    /// record "0", "1", … plus "count" (nil elements have no key).
    func value() -> EncodedTree {
        let values = elements.map { $0.value() }
        if !values.isEmpty {
            var ints: [Int64] = []
            var allInts = true
            for v in values {
                guard case .int(let i)? = v else { allInts = false; break }
                ints.append(i)
            }
            if allInts { return .intArray(ints) }
            var strings: [String] = []
            var allStrings = true
            for v in values {
                guard case .string(let s)? = v else { allStrings = false; break }
                strings.append(s)
            }
            if allStrings { return .stringArray(strings) }
        }
        var fields: [(String, EncodedTree)] = []
        for (i, v) in values.enumerated() { if let v { fields.append((String(i), v)) } }
        fields.append(("count", .int(Int64(values.count))))
        return .record(fields)
    }
}

/// Values that have a native archive form of their own, whatever Codable
/// would make of them. Decided by the static type (an empty `[Point]`
/// would pass a dynamic `as? [Int]` cast).
@inline(__always)
func nativeValue<T>(_ value: T) -> EncodedTree? {
    if T.self == Data.self { return .bytes(value as! Data) }
    if T.self == [Int].self { return .intArray((value as! [Int]).map { Int64($0) }) }
    if T.self == [Int64].self { return .intArray(value as! [Int64]) }
    if T.self == [String].self { return .stringArray(value as! [String]) }
    return nil
}

final class ArchiveTreeEncoder: Encoder {
    let slot: Slot
    let codingPath: [CodingKey]
    let topKey: String
    let location: String
    var userInfo: [CodingUserInfoKey: Any] = [:]

    init(slot: Slot, codingPath: [CodingKey], topKey: String, location: String) {
        self.slot = slot
        self.codingPath = codingPath
        self.topKey = topKey
        self.location = location
    }

    /// The tree for `value`; nil when it encodes nothing (nil).
    static func encodeTree<T: Encodable>(_ value: T, key: String, location: String) throws -> EncodedTree? {
        if let v = nativeValue(value) { return v }
        let slot = Slot()
        try ArchiveTreeEncoder(slot: slot, codingPath: [], topKey: key, location: location).encodeValue(value, into: slot, path: [])
        return slot.value()
    }

    func encodeValue<T: Encodable>(_ value: T, into slot: Slot, path: [CodingKey]) throws {
        if let v = nativeValue(value) {
            slot.content = .leaf(v)
            return
        }
        try value.encode(to: ArchiveTreeEncoder(slot: slot, codingPath: path, topKey: topKey, location: location))
    }

    func integer<I: BinaryInteger>(_ v: I, path: [CodingKey]) throws -> EncodedTree {
        guard let i = Int64(exactly: v) else {
            throw RestorationError.invalid("encode: \(location), key '\(keyPath(topKey, path))': \(v) does not fit the archive's 64-bit signed int")
        }
        return .int(i)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(KeyedEncoder<Key>(encoder: self, record: slot.record(), codingPath: codingPath))
    }

    func unkeyedContainer() -> UnkeyedEncodingContainer {
        UnkeyedEncoder(encoder: self, array: slot.array(), codingPath: codingPath)
    }

    func singleValueContainer() -> SingleValueEncodingContainer {
        SingleEncoder(encoder: self, slot: slot, codingPath: codingPath)
    }
}

struct KeyedEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: ArchiveTreeEncoder
    let record: RecordBuilder
    let codingPath: [CodingKey]

    private func put(_ v: EncodedTree, _ key: Key) { record.slot(key.stringValue).content = .leaf(v) }

    mutating func encodeNil(forKey key: Key) throws { record.slot(key.stringValue).content = .empty }
    mutating func encode(_ value: Bool, forKey key: Key) throws { put(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { put(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { put(.double(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { put(.double(Double(value)), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { put(.int(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { put(try encoder.integer(value, path: codingPath + [key]), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { put(try encoder.integer(value, path: codingPath + [key]), key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try encoder.encodeValue(value, into: record.slot(key.stringValue), path: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(KeyedEncoder<NestedKey>(encoder: encoder, record: record.slot(key.stringValue).record(), codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> UnkeyedEncodingContainer {
        UnkeyedEncoder(encoder: encoder, array: record.slot(key.stringValue).array(), codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> Encoder {
        ArchiveTreeEncoder(slot: record.slot("super"), codingPath: codingPath + [IndexKey.super], topKey: encoder.topKey, location: encoder.location)
    }

    mutating func superEncoder(forKey key: Key) -> Encoder {
        ArchiveTreeEncoder(slot: record.slot(key.stringValue), codingPath: codingPath + [key], topKey: encoder.topKey, location: encoder.location)
    }
}

struct UnkeyedEncoder: UnkeyedEncodingContainer {
    let encoder: ArchiveTreeEncoder
    let array: ArrayBuilder
    let codingPath: [CodingKey]
    var count: Int { array.elements.count }

    private var nextPath: [CodingKey] { codingPath + [IndexKey(intValue: count)] }
    private func put(_ v: EncodedTree) { array.append().content = .leaf(v) }

    mutating func encodeNil() throws { _ = array.append() }
    mutating func encode(_ value: Bool) throws { put(.bool(value)) }
    mutating func encode(_ value: String) throws { put(.string(value)) }
    mutating func encode(_ value: Double) throws { put(.double(value)) }
    mutating func encode(_ value: Float) throws { put(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { put(.int(value)) }
    mutating func encode(_ value: UInt) throws { put(try encoder.integer(value, path: nextPath)) }
    mutating func encode(_ value: UInt8) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { put(try encoder.integer(value, path: nextPath)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        let path = nextPath
        try encoder.encodeValue(value, into: array.append(), path: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let path = nextPath
        return KeyedEncodingContainer(KeyedEncoder<NestedKey>(encoder: encoder, record: array.append().record(), codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> UnkeyedEncodingContainer {
        let path = nextPath
        return UnkeyedEncoder(encoder: encoder, array: array.append().array(), codingPath: path)
    }

    mutating func superEncoder() -> Encoder {
        let path = nextPath
        return ArchiveTreeEncoder(slot: array.append(), codingPath: path, topKey: encoder.topKey, location: encoder.location)
    }
}

struct SingleEncoder: SingleValueEncodingContainer {
    let encoder: ArchiveTreeEncoder
    let slot: Slot
    let codingPath: [CodingKey]

    private func put(_ v: EncodedTree) { slot.content = .leaf(v) }

    mutating func encodeNil() throws { slot.content = .empty }
    mutating func encode(_ value: Bool) throws { put(.bool(value)) }
    mutating func encode(_ value: String) throws { put(.string(value)) }
    mutating func encode(_ value: Double) throws { put(.double(value)) }
    mutating func encode(_ value: Float) throws { put(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { put(.int(value)) }
    mutating func encode(_ value: UInt) throws { put(try encoder.integer(value, path: codingPath)) }
    mutating func encode(_ value: UInt8) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { put(try encoder.integer(value, path: codingPath)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        try encoder.encodeValue(value, into: slot, path: codingPath)
    }
}

// MARK: - decoding

final class ArchiveTreeDecoder: Decoder {
    let value: EncodedTree
    let codingPath: [CodingKey]
    let topKey: String
    let location: String
    var userInfo: [CodingUserInfoKey: Any] = [:]

    init(value: EncodedTree, codingPath: [CodingKey], topKey: String, location: String) {
        self.value = value
        self.codingPath = codingPath
        self.topKey = topKey
        self.location = location
    }

    static func decode<T: Decodable>(_ type: T.Type, from value: EncodedTree, key: String, location: String) throws -> T {
        try ArchiveTreeDecoder(value: value, codingPath: [], topKey: key, location: location).decodeValue(T.self, from: value, path: [])
    }

    func typeError(_ path: [CodingKey], _ v: EncodedTree, _ expected: String) -> RestorationError {
        .type("decode: \(location), key '\(keyPath(topKey, path))' holds \(v.typeName), not \(expected)")
    }

    func missing(_ path: [CodingKey]) -> RestorationError {
        .notFound("decode: \(location) has no key '\(keyPath(topKey, path))'")
    }

    /// Native forms first (Data as bytes, [Int] and [String] as arrays),
    /// then the type's own init(from:).
    func decodeValue<T: Decodable>(_ type: T.Type, from v: EncodedTree, path: [CodingKey]) throws -> T {
        if T.self == Data.self {
            guard case .bytes(let d) = v else { throw typeError(path, v, "bytes") }
            return d as! T
        }
        if T.self == [Int].self || T.self == [Int64].self {
            let ints: [Int64]
            switch v {
            case .intArray(let a): ints = a
            case .stringArray(let a) where a.isEmpty: ints = []
            default: throw typeError(path, v, "an int array")
            }
            if T.self == [Int64].self { return ints as! T }
            return ints.map { Int($0) } as! T
        }
        if T.self == [String].self {
            switch v {
            case .stringArray(let a): return a as! T
            case .intArray(let a) where a.isEmpty: return [String]() as! T
            default: throw typeError(path, v, "a string array")
            }
        }
        return try T(from: ArchiveTreeDecoder(value: v, codingPath: path, topKey: topKey, location: location))
    }

    func bool(_ v: EncodedTree, _ path: [CodingKey]) throws -> Bool {
        guard case .bool(let b) = v else { throw typeError(path, v, "a bool") }
        return b
    }

    func string(_ v: EncodedTree, _ path: [CodingKey]) throws -> String {
        guard case .string(let s) = v else { throw typeError(path, v, "a string") }
        return s
    }

    func double(_ v: EncodedTree, _ path: [CodingKey]) throws -> Double {
        guard case .double(let d) = v else { throw typeError(path, v, "a double") }
        return d
    }

    func float(_ v: EncodedTree, _ path: [CodingKey]) throws -> Float {
        let d = try double(v, path)
        if d.isFinite && abs(d) > Double(Float.greatestFiniteMagnitude) {
            throw RestorationError.type("decode: \(location), key '\(keyPath(topKey, path))' holds \(d), which does not fit Float")
        }
        return Float(d)
    }

    func integer<I: FixedWidthInteger>(_ v: EncodedTree, _ path: [CodingKey]) throws -> I {
        guard case .int(let i) = v else { throw typeError(path, v, "an int") }
        guard let r = I(exactly: i) else {
            throw RestorationError.type("decode: \(location), key '\(keyPath(topKey, path))' holds \(i), which does not fit \(I.self)")
        }
        return r
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .record(let fields) = value else { throw typeError(codingPath, value, "a record") }
        return KeyedDecodingContainer(KeyedDecoder<Key>(decoder: self, fields: Dictionary(fields, uniquingKeysWith: { a, _ in a }),
                                                       order: fields.map { $0.0 }, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> UnkeyedDecodingContainer {
        switch value {
        case .intArray(let a):
            return UnkeyedDecoder(decoder: self, elements: a.map { .int($0) }, codingPath: codingPath)
        case .stringArray(let a):
            return UnkeyedDecoder(decoder: self, elements: a.map { .string($0) }, codingPath: codingPath)
        case .record(let fields):
            let byName = Dictionary(fields, uniquingKeysWith: { a, _ in a })
            guard let c = byName["count"] else { throw typeError(codingPath, value, "an array (a record with a \"count\")") }
            let n: Int = try integer(c, codingPath + [IndexKey(stringValue: "count")])
            guard n >= 0, n <= RestorationLimitsForCodable.maxElements else {
                throw RestorationError.limit("decode: \(location), key '\(keyPath(topKey, codingPath))': count \(n) is out of range")
            }
            return UnkeyedDecoder(decoder: self, elements: (0..<n).map { byName[String($0)] }, codingPath: codingPath)
        default:
            throw typeError(codingPath, value, "an array")
        }
    }

    func singleValueContainer() throws -> SingleValueDecodingContainer {
        SingleDecoder(decoder: self, value: value, codingPath: codingPath)
    }
}

enum RestorationLimitsForCodable {
    /// A record holds at most this many values, so no array is longer.
    static let maxElements = RestorationLimits.maxValuesPerRecord
}

struct KeyedDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: ArchiveTreeDecoder
    let fields: [String: EncodedTree]
    let order: [String]
    let codingPath: [CodingKey]

    var allKeys: [Key] { order.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { fields[key.stringValue] != nil }

    private func value(_ key: Key) throws -> EncodedTree {
        guard let v = fields[key.stringValue] else { throw decoder.missing(codingPath + [key]) }
        return v
    }

    /// Nil is absence: a present key is never nil.
    func decodeNil(forKey key: Key) throws -> Bool { fields[key.stringValue] == nil }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decoder.bool(try value(key), codingPath + [key]) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decoder.string(try value(key), codingPath + [key]) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decoder.double(try value(key), codingPath + [key]) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decoder.float(try value(key), codingPath + [key]) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decoder.integer(try value(key), codingPath + [key]) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decoder.integer(try value(key), codingPath + [key]) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decoder.integer(try value(key), codingPath + [key]) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decoder.integer(try value(key), codingPath + [key]) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decoder.integer(try value(key), codingPath + [key]) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decoder.integer(try value(key), codingPath + [key]) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decoder.integer(try value(key), codingPath + [key]) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decoder.integer(try value(key), codingPath + [key]) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decoder.integer(try value(key), codingPath + [key]) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decoder.integer(try value(key), codingPath + [key]) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder.decodeValue(T.self, from: try value(key), path: codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try ArchiveTreeDecoder(value: try value(key), codingPath: codingPath + [key], topKey: decoder.topKey, location: decoder.location)
            .container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> UnkeyedDecodingContainer {
        try ArchiveTreeDecoder(value: try value(key), codingPath: codingPath + [key], topKey: decoder.topKey, location: decoder.location)
            .unkeyedContainer()
    }

    func superDecoder() throws -> Decoder {
        guard let v = fields["super"] else { throw decoder.missing(codingPath + [IndexKey.super]) }
        return ArchiveTreeDecoder(value: v, codingPath: codingPath + [IndexKey.super], topKey: decoder.topKey, location: decoder.location)
    }

    func superDecoder(forKey key: Key) throws -> Decoder {
        ArchiveTreeDecoder(value: try value(key), codingPath: codingPath + [key], topKey: decoder.topKey, location: decoder.location)
    }
}

struct UnkeyedDecoder: UnkeyedDecodingContainer {
    let decoder: ArchiveTreeDecoder
    /// nil: an element encoded as nil (no key in the record form).
    let elements: [EncodedTree?]
    let codingPath: [CodingKey]
    var currentIndex = 0

    init(decoder: ArchiveTreeDecoder, elements: [EncodedTree?], codingPath: [CodingKey]) {
        self.decoder = decoder
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private var path: [CodingKey] { codingPath + [IndexKey(intValue: currentIndex)] }

    private mutating func next() throws -> (EncodedTree, [CodingKey]) {
        guard !isAtEnd else {
            throw RestorationError.notFound("decode: \(decoder.location), key '\(keyPath(decoder.topKey, codingPath))' has only \(elements.count) elements")
        }
        let p = path
        guard let v = elements[currentIndex] else { throw decoder.missing(p) }
        currentIndex += 1
        return (v, p)
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { return false }
        if elements[currentIndex] == nil {
            currentIndex += 1
            return true
        }
        return false
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { let (v, p) = try next(); return try decoder.bool(v, p) }
    mutating func decode(_ type: String.Type) throws -> String { let (v, p) = try next(); return try decoder.string(v, p) }
    mutating func decode(_ type: Double.Type) throws -> Double { let (v, p) = try next(); return try decoder.double(v, p) }
    mutating func decode(_ type: Float.Type) throws -> Float { let (v, p) = try next(); return try decoder.float(v, p) }
    mutating func decode(_ type: Int.Type) throws -> Int { let (v, p) = try next(); return try decoder.integer(v, p) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { let (v, p) = try next(); return try decoder.integer(v, p) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { let (v, p) = try next(); return try decoder.integer(v, p) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { let (v, p) = try next(); return try decoder.integer(v, p) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { let (v, p) = try next(); return try decoder.integer(v, p) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { let (v, p) = try next(); return try decoder.integer(v, p) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { let (v, p) = try next(); return try decoder.integer(v, p) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { let (v, p) = try next(); return try decoder.integer(v, p) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { let (v, p) = try next(); return try decoder.integer(v, p) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { let (v, p) = try next(); return try decoder.integer(v, p) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if !isAtEnd, elements[currentIndex] == nil {
            // A nil element: an Optional element type decodes it as nil.
            let p = path
            currentIndex += 1
            return try T(from: ArchiveTreeDecoder(value: .null, codingPath: p, topKey: decoder.topKey, location: decoder.location))
        }
        let (v, p) = try next()
        return try decoder.decodeValue(T.self, from: v, path: p)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (v, p) = try next()
        return try ArchiveTreeDecoder(value: v, codingPath: p, topKey: decoder.topKey, location: decoder.location).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> UnkeyedDecodingContainer {
        let (v, p) = try next()
        return try ArchiveTreeDecoder(value: v, codingPath: p, topKey: decoder.topKey, location: decoder.location).unkeyedContainer()
    }

    mutating func superDecoder() throws -> Decoder {
        let (v, p) = try next()
        return ArchiveTreeDecoder(value: v, codingPath: p, topKey: decoder.topKey, location: decoder.location)
    }
}

struct SingleDecoder: SingleValueDecodingContainer {
    let decoder: ArchiveTreeDecoder
    let value: EncodedTree
    let codingPath: [CodingKey]

    func decodeNil() -> Bool {
        if case .null = value { return true }
        return false
    }
    func decode(_ type: Bool.Type) throws -> Bool { try decoder.bool(value, codingPath) }
    func decode(_ type: String.Type) throws -> String { try decoder.string(value, codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try decoder.double(value, codingPath) }
    func decode(_ type: Float.Type) throws -> Float { try decoder.float(value, codingPath) }
    func decode(_ type: Int.Type) throws -> Int { try decoder.integer(value, codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try decoder.integer(value, codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try decoder.integer(value, codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try decoder.integer(value, codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decoder.integer(value, codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try decoder.integer(value, codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decoder.integer(value, codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decoder.integer(value, codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decoder.integer(value, codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decoder.integer(value, codingPath) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try decoder.decodeValue(T.self, from: value, path: codingPath)
    }
}
