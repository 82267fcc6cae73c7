import Foundation
import RestorationArchive
import RestorationCore

/// The keyed, typed values of one object: the Swift counterpart of the
/// `NSCoder` UIKit passes to `encodeRestorableState(with:)`.
///
/// A coder is handed to ``StateRestoring/encodeRestorableState(with:)``,
/// ``StateRestoring/decodeRestorableState(with:)`` and to restoration-class
/// factories, and is **valid only during that call**; any use afterwards
/// throws ``RestorationError/state(_:)``.
///
/// Every value is stored as the archive's own typed records and arrays, so
/// `restorectl inspect` shows each field and a C host reads it with the
/// `rst_decode_*` functions:
///
/// | Swift value | stored as | read in C with |
/// |---|---|---|
/// | `Bool` | bool | `rst_decode_bool` |
/// | `Int`, every fixed-width integer | int (64-bit signed) | `rst_decode_int` |
/// | `Double`, `Float` | double | `rst_decode_double` |
/// | `String` | string | `rst_decode_string` |
/// | `Data` | bytes | `rst_decode_bytes` |
/// | `[Int]` (any array of integers) | int array | `rst_decode_int_array` |
/// | `[String]` | string array | `rst_decode_string_array` |
/// | a registered ``StateRestoring`` object | object reference | `rst_decode_object` |
/// | any other `Codable` value | see ``encode(_:forKey:)-(Encodable,_)`` | `rst_decode_begin_record` … |
///
/// **Missing keys and wrong types.** Every `decode` returns `nil` when the
/// key is absent (UIKit's coder returns nil or 0; we return nil so that
/// absence is never confused with a stored zero) and throws
/// ``RestorationError/type(_:)`` when the key holds another type, or an
/// integer that does not fit the requested integer type. The message names
/// the object's path and the key.
///
/// See also <doc:Restoration>, the overview of preservation and restoration.
public final class RestorationCoder {
    let coder: Coder
    let registry: ObjectTable
    private(set) var isValid = true

    init(coder: Coder, registry: ObjectTable) {
        self.coder = coder
        self.registry = registry
    }

    /// Ends the coder's validity (the callback returned).
    func invalidate() { isValid = false }

    @inline(__always)
    func check() throws(RestorationError) {
        guard isValid else {
            throw RestorationError.state("RestorationCoder used after the callback it was passed to returned (a coder is valid only during that call)")
        }
    }

    /// True inside ``StateRestoring/encodeRestorableState(with:)``; false
    /// when decoding (in ``StateRestoring/decodeRestorableState(with:)`` or a
    /// restoration-class factory).
    public var isEncoding: Bool { isValid && coder.mode == .encoding }

    /// Where the coder is, for messages: "object 'Tabs/List'" when
    /// encoding, "record 3 ('Tabs/List')" when decoding.
    public var location: String { coder.location }

    // MARK: - encode

    /// Stores a Boolean.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: Non-empty UTF-8 of at most 255 bytes, unique within the record.
    /// - Throws: ``RestorationError/duplicate(_:)`` for a repeated key,
    ///   ``RestorationError/invalid(_:)`` for a bad key,
    ///   ``RestorationError/state(_:)`` outside an encode callback. Any
    ///   error also fails the save in progress.
    ///
    /// The corresponding C function is `rst_encode_bool`.
    public func encode(_ value: Bool, forKey key: String) throws(RestorationError) {
        try check()
        try withKey(key) { (k) throws(RestorationFailure) in try coder.encodeBool(k, value) }
    }

    /// Stores an integer as the archive's 64-bit signed int.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: Non-empty UTF-8 of at most 255 bytes, unique within the record.
    /// - Throws: As ``encode(_:forKey:)-(Bool,_)``.
    ///
    /// The corresponding C function is `rst_encode_int`.
    public func encode(_ value: Int, forKey key: String) throws(RestorationError) {
        try check()
        try withKey(key) { (k) throws(RestorationFailure) in try coder.encodeInt(k, Int64(value)) }
    }

    /// Stores a double.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: Non-empty UTF-8 of at most 255 bytes, unique within the record.
    /// - Throws: As ``encode(_:forKey:)-(Bool,_)``.
    ///
    /// The corresponding C function is `rst_encode_double`.
    public func encode(_ value: Double, forKey key: String) throws(RestorationError) {
        try check()
        try withKey(key) { (k) throws(RestorationFailure) in try coder.encodeDouble(k, value) }
    }

    /// Stores a string.
    ///
    /// - Parameters:
    ///   - value: Any string without NUL characters.
    ///   - key: Non-empty UTF-8 of at most 255 bytes, unique within the record.
    /// - Throws: ``RestorationError/invalid(_:)`` when the string holds a
    ///   NUL character; otherwise as ``encode(_:forKey:)-(Bool,_)``.
    ///
    /// The corresponding C function is `rst_encode_string`.
    public func encode(_ value: String, forKey key: String) throws(RestorationError) {
        try check()
        try withKey(key) { (k) throws(RestorationFailure) in
            try withUTF8(value) { (v) throws(RestorationFailure) in try coder.encodeString(k, v) }
        }
    }

    /// Stores bytes.
    ///
    /// - Parameters:
    ///   - value: Any bytes, empty included.
    ///   - key: Non-empty UTF-8 of at most 255 bytes, unique within the record.
    /// - Throws: As ``encode(_:forKey:)-(Bool,_)``.
    ///
    /// The corresponding C function is `rst_encode_bytes`.
    public func encode(_ value: Data, forKey key: String) throws(RestorationError) {
        try check()
        try withKey(key) { (k) throws(RestorationFailure) in
            try withBytes(value) { (b) throws(RestorationFailure) in try coder.encodeBytes(k, b) }
        }
    }

    /// Stores an OS string: a Linux file name or path, any bytes but NUL,
    /// UTF-8 or not, kept losslessly with its own type.
    ///
    /// - Parameters:
    ///   - bytes: The name's bytes, without a terminating NUL.
    ///   - key: Non-empty UTF-8 of at most 255 bytes, unique within the record.
    /// - Throws: ``RestorationError/invalid(_:)`` when the bytes hold a NUL;
    ///   otherwise as ``encode(_:forKey:)-(Bool,_)``.
    ///
    /// The corresponding C function is `rst_encode_os_string`.
    public func encodeOSString(_ bytes: [UInt8], forKey key: String) throws(RestorationError) {
        try check()
        try withKey(key) { (k) throws(RestorationFailure) in
            let r: Result<Void, RestorationFailure> = bytes.withUnsafeBytes { b in
                do throws(RestorationFailure) { return .success(try coder.encodeOSString(k, b)) } catch { return .failure(error) }
            }
            try r.get()
        }
    }

    /// Stores an int array.
    ///
    /// - Parameters:
    ///   - value: The integers, stored as 64-bit signed ints.
    ///   - key: Non-empty UTF-8 of at most 255 bytes, unique within the record.
    /// - Throws: As ``encode(_:forKey:)-(Bool,_)``.
    ///
    /// The corresponding C function is `rst_encode_int_array`.
    public func encode(_ value: [Int], forKey key: String) throws(RestorationError) {
        try check()
        try encodeInts(value.map { Int64($0) }, key)
    }

    func encodeInts(_ value: [Int64], _ key: String) throws(RestorationError) {
        try withKey(key) { (k) throws(RestorationFailure) in
            try withInt64Buffer(value) { (b) throws(RestorationFailure) in try coder.encodeIntArray(k, b) }
        }
    }

    /// Stores a string array.
    ///
    /// - Parameters:
    ///   - value: The strings, none holding a NUL character.
    ///   - key: Non-empty UTF-8 of at most 255 bytes, unique within the record.
    /// - Throws: ``RestorationError/invalid(_:)`` when an element holds a
    ///   NUL character; otherwise as ``encode(_:forKey:)-(Bool,_)``.
    ///
    /// The corresponding C function is `rst_encode_string_array`.
    public func encode(_ value: [String], forKey key: String) throws(RestorationError) {
        try check()
        try withKey(key) { (k) throws(RestorationFailure) in
            try withPinnedStrings(value) { (b) throws(RestorationFailure) in try coder.encodeStringArray(k, b) }
        }
    }

    /// Stores any `Encodable` value as native archive values.
    ///
    /// The value is encoded with a Swift `Encoder` that writes:
    /// - single values as the native types (every fixed-width integer as an
    ///   int, `Float` as a double, `Data` as bytes);
    /// - keyed containers (structs, classes, enums with associated values)
    ///   as nested records, field by field;
    /// - unkeyed containers whose elements are all integers as an int
    ///   array, all strings as a string array; `[Int]`, `[String]` and
    ///   `[Int64]` always so, even when empty;
    /// - any other unkeyed container as a nested record with the keys `"0"`,
    ///   `"1"`, … and an int `"count"` (so an empty `[Bool]` is a record
    ///   holding only `count = 0`);
    /// - `nil` as absence: an optional that is nil writes no key, and
    ///   decodes back as nil.
    ///
    /// Enums with raw values are stored as their raw value.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: Non-empty UTF-8 of at most 255 bytes, unique within the record.
    /// - Throws: ``RestorationError``, like every coder method: from the
    ///   coder (a `UInt64` above `Int64.max` is ``RestorationError/invalid(_:)``;
    ///   nesting deeper than 32 records is ``RestorationError/limit(_:)``); an
    ///   error the value's own `encode(to:)` throws becomes
    ///   ``RestorationError/invalid(_:)`` with its description.
    ///
    /// The corresponding C functions are `rst_encode_begin_record` and the
    /// other `rst_encode_*` functions.
    public func encode<T: Encodable>(_ value: T, forKey key: String) throws(RestorationError) {
        try check()
        let tree: EncodedTree?
        do {
            tree = try ArchiveTreeEncoder.encodeTree(value, key: key, location: location)
        } catch let e as RestorationError {
            throw e
        } catch {
            throw RestorationError.invalid("encode: \(location), key '\(key)': \(T.self).encode(to:) threw: \(error)")
        }
        guard let tree else { return }
        try emit(tree, forKey: key)
    }

    /// Stores a reference to another registered object; decoding it returns
    /// that object (re-created first when it had to be), and the engine
    /// decodes the referenced object before this one.
    ///
    /// - Parameters:
    ///   - object: An object registered with this engine.
    ///   - key: Non-empty UTF-8 of at most 255 bytes, unique within the record.
    /// - Throws: ``RestorationError/invalid(_:)`` when `object` is not
    ///   registered with this engine; ``RestorationError/state(_:)`` when it
    ///   was registered after the save began.
    ///
    /// The corresponding C function is `rst_encode_object`.
    public func encodeReference(_ object: StateRestoring, forKey key: String) throws(RestorationError) {
        try check()
        guard let node = registry.locked({ registry.liveNode(of: object) }) else {
            let f = RestorationFailure(.invalid, "encodeReference: \(location), key '\(key)': the referenced \(type(of: object)) is not registered with this engine")
            coder.recordEncodeFailure(f)
            throw RestorationError(f)
        }
        try withKey(key) { (k) throws(RestorationFailure) in try coder.encodeObject(k, node) }
    }

    /// Stores a reference to the object registered at `path`, whoever
    /// registered it (a C plugin's object included).
    ///
    /// - Parameters:
    ///   - path: A restoration identifier path, `"Tabs/Countries/List"`.
    ///   - key: Non-empty UTF-8 of at most 255 bytes, unique within the record.
    /// - Throws: ``RestorationError/notFound(_:)`` when nothing is
    ///   registered at `path`; otherwise as ``encodeReference(_:forKey:)``.
    ///
    /// The corresponding C functions are `rst_find_object` and `rst_encode_object`.
    public func encodeReference(toPath path: String, forKey key: String) throws(RestorationError) {
        try check()
        guard let node = registry.core.find(path: path) else {
            let f = RestorationFailure(.notFound, "encodeReference: \(location), key '\(key)': no object is registered at '\(path)'")
            coder.recordEncodeFailure(f)
            throw RestorationError(f)
        }
        try withKey(key) { (k) throws(RestorationFailure) in try coder.encodeObject(k, node) }
    }

    /// Stores a nested record: the values `body` encodes go inside it.
    ///
    /// - Parameters:
    ///   - key: Non-empty UTF-8 of at most 255 bytes, unique within the record.
    ///   - body: Encodes the nested record's values with this same coder.
    /// - Throws: ``RestorationError/limit(_:)`` past 32 nested records;
    ///   whatever `body` throws (the record is closed either way). `body`
    ///   may throw any error, so this method is `throws` rather than
    ///   `throws(RestorationError)` (a closure's thrown type is not inferred
    ///   from its body before Swift's FullTypedThrows); every error the
    ///   coder itself raises is a ``RestorationError``.
    ///
    /// The corresponding C functions are `rst_encode_begin_record` and
    /// `rst_encode_end_record`.
    public func encodeRecord(forKey key: String, _ body: (RestorationCoder) throws -> Void) throws {
        try check()
        try withKey(key) { (k) throws(RestorationFailure) in try coder.encodeBeginRecord(k) }
        var failed: Error?
        do { try body(self) } catch { failed = error }
        try RestorationError.wrap { () throws(RestorationFailure) in try coder.encodeEndRecord() }
        if let failed { throw failed }
    }

    // MARK: - presence

    /// Whether the current record holds `key`, whatever its value (a stored
    /// `false`, `0` or `""` counts). False outside a callback.
    ///
    /// The corresponding C function is `rst_coder_contains`.
    public func contains(_ key: String) -> Bool {
        guard isValid else { return false }
        return (try? withKey(key) { (k) throws(RestorationFailure) in try coder.contains(k) }) ?? false
    }

    /// The type stored under `key`, or nil when the key is absent.
    ///
    /// - Throws: ``RestorationError/state(_:)`` outside a callback;
    ///   ``RestorationError/invalid(_:)`` for a malformed key.
    ///
    /// The corresponding C function is `rst_coder_value_type`.
    public func valueType(forKey key: String) throws(RestorationError) -> RestorationValueType? {
        try check()
        let t = try withKey(key) { (k) throws(RestorationFailure) in try coder.valueType(k) }
        guard let t else { return nil }
        return RestorationValueType(t)
    }

    /// The keys of the current record, in the order they were stored
    /// (decoding only; empty when encoding).
    public var allKeys: [String] {
        guard isValid, !isEncoding else { return [] }
        if coder.mode == .migrating { return (try? coder.migrationKeys()) ?? [] }
        var keys: [String] = []
        try? coder.forEachField { name, _ in keys.append(name) }
        return keys
    }

    // MARK: - decode

    /// Reads a Boolean.
    ///
    /// - Parameters:
    ///   - type: `Bool.self`.
    ///   - key: The key.
    /// - Returns: The value, or nil when the key is absent.
    /// - Throws: ``RestorationError/type(_:)`` when the key holds another
    ///   type; ``RestorationError/state(_:)`` outside a decode callback or
    ///   factory.
    ///
    /// The corresponding C function is `rst_decode_bool`.
    public func decode(_ type: Bool.Type, forKey key: String) throws(RestorationError) -> Bool? {
        try check()
        return try optional(key) { (k) throws(RestorationFailure) in try coder.decodeBool(k) }
    }

    /// Reads an integer.
    ///
    /// - Parameters:
    ///   - type: `Int.self`. Narrower integer types go through
    ///     ``decode(_:forKey:)-(Decodable.Type,_)``, which throws
    ///     ``RestorationError/type(_:)`` when the stored value does not fit.
    ///   - key: The key.
    /// - Returns: The value, or nil when the key is absent.
    /// - Throws: As ``decode(_:forKey:)-(Bool.Type,_)``.
    ///
    /// The corresponding C function is `rst_decode_int`.
    public func decode(_ type: Int.Type, forKey key: String) throws(RestorationError) -> Int? {
        try check()
        let v = try optional(key) { (k) throws(RestorationFailure) in try coder.decodeInt(k) }
        guard let v else { return nil }
        guard let i = Int(exactly: v) else {
            throw RestorationError.type("decode: \(location), key '\(key)' holds \(v), which does not fit Int")
        }
        return i
    }

    /// Reads a double.
    ///
    /// - Parameters:
    ///   - type: `Double.self`.
    ///   - key: The key.
    /// - Returns: The value, or nil when the key is absent.
    /// - Throws: As ``decode(_:forKey:)-(Bool.Type,_)`` (an int is not a double).
    ///
    /// The corresponding C function is `rst_decode_double`.
    public func decode(_ type: Double.Type, forKey key: String) throws(RestorationError) -> Double? {
        try check()
        return try optional(key) { (k) throws(RestorationFailure) in try coder.decodeDouble(k) }
    }

    /// Reads a string.
    ///
    /// - Parameters:
    ///   - type: `String.self`.
    ///   - key: The key.
    /// - Returns: The value (a copy), or nil when the key is absent.
    /// - Throws: As ``decode(_:forKey:)-(Bool.Type,_)``.
    ///
    /// The corresponding C function is `rst_decode_string`.
    public func decode(_ type: String.Type, forKey key: String) throws(RestorationError) -> String? {
        try check()
        return try optional(key) { (k) throws(RestorationFailure) in try coder.decodeString(k) }
    }

    /// Reads bytes.
    ///
    /// - Parameters:
    ///   - type: `Data.self`.
    ///   - key: The key.
    /// - Returns: The value (a copy), or nil when the key is absent.
    /// - Throws: As ``decode(_:forKey:)-(Bool.Type,_)``.
    ///
    /// The corresponding C function is `rst_decode_bytes`.
    public func decode(_ type: Data.Type, forKey key: String) throws(RestorationError) -> Data? {
        try check()
        return try optional(key) { (k) throws(RestorationFailure) in Data(try coder.decodeBytes(k)) }
    }

    /// Reads an OS string (or a string) as bytes, exactly as stored.
    ///
    /// - Parameter key: The key.
    /// - Returns: The bytes (a copy, no NUL), or nil when the key is absent.
    /// - Throws: ``RestorationError/type(_:)`` when the key holds another
    ///   type; otherwise as ``decode(_:forKey:)-(Bool.Type,_)``.
    ///   `decode(String.self, ...)` of an OS string succeeds only when it is
    ///   valid UTF-8; `decode(Data.self, ...)` reads its bytes.
    ///
    /// The corresponding C function is `rst_decode_os_string`.
    public func decodeOSString(forKey key: String) throws(RestorationError) -> [UInt8]? {
        try check()
        return try optional(key) { (k) throws(RestorationFailure) in Array(try coder.decodeOSStringBytes(k)) }
    }

    /// Reads an int array.
    ///
    /// - Parameters:
    ///   - type: `[Int].self`.
    ///   - key: The key.
    /// - Returns: The values, or nil when the key is absent.
    /// - Throws: As ``decode(_:forKey:)-(Bool.Type,_)``.
    ///
    /// The corresponding C function is `rst_decode_int_array`.
    public func decode(_ type: [Int].Type, forKey key: String) throws(RestorationError) -> [Int]? {
        try check()
        let v = try optional(key) { (k) throws(RestorationFailure) in try coder.decodeIntArray(k) }
        return v.map { $0.map { Int($0) } }
    }

    /// Reads a string array.
    ///
    /// - Parameters:
    ///   - type: `[String].self`.
    ///   - key: The key.
    /// - Returns: The strings, or nil when the key is absent.
    /// - Throws: As ``decode(_:forKey:)-(Bool.Type,_)``.
    ///
    /// The corresponding C function is `rst_decode_string_array`.
    public func decode(_ type: [String].Type, forKey key: String) throws(RestorationError) -> [String]? {
        try check()
        return try optional(key) { (k) throws(RestorationFailure) in try coder.decodeStringArray(k) }
    }

    /// Reads any `Decodable` value stored by ``encode(_:forKey:)-(Encodable,_)``
    /// (or written by a C host with the same shape: a record for a struct,
    /// an int array for `[Int]`, …).
    ///
    /// Integers are range-checked: decoding `Int8` from a stored 300 throws
    /// ``RestorationError/type(_:)`` naming the key. Inside the value, a
    /// missing non-optional field throws ``RestorationError/notFound(_:)``
    /// and a missing optional field decodes as nil.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - key: The key.
    /// - Returns: The value, or nil when the key is absent.
    /// - Throws: ``RestorationError``, like every coder method
    ///   (``RestorationError/type(_:)`` for a shape that does not match); an
    ///   error `init(from:)` throws becomes ``RestorationError/invalid(_:)``
    ///   with its description.
    ///
    /// The corresponding C functions are `rst_decode_begin_record` and the
    /// other `rst_decode_*` functions.
    public func decode<T: Decodable>(_ type: T.Type, forKey key: String) throws(RestorationError) -> T? {
        try check()
        guard let tree = try readTree(key) else { return nil }
        do {
            return try ArchiveTreeDecoder.decode(T.self, from: tree, key: key, location: location)
        } catch let e as RestorationError {
            throw e
        } catch {
            throw RestorationError.invalid("decode: \(location), key '\(key)': \(T.self).init(from:) threw: \(error)")
        }
    }

    /// Reads a value, or `defaultValue` when the key is absent (a wrong type
    /// still throws).
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - key: The key.
    ///   - defaultValue: Returned when the key is absent.
    /// - Returns: The stored value or `defaultValue`.
    /// - Throws: As ``decode(_:forKey:)-(Decodable.Type,_)``.
    public func decode<T: Decodable>(_ type: T.Type, forKey key: String, default defaultValue: @autoclosure () -> T) throws(RestorationError) -> T {
        try decode(type, forKey: key) ?? defaultValue()
    }

    /// Reads an object reference stored with ``encodeReference(_:forKey:)``.
    ///
    /// - Parameter key: The key.
    /// - Returns: The referenced Swift object; nil when the key is absent,
    ///   when the referenced record was skipped (nothing could re-create
    ///   it), or when the referenced object is not a Swift object (a C
    ///   plugin's: use ``decodeReferencePath(forKey:)``).
    /// - Throws: ``RestorationError/type(_:)`` when the key holds another
    ///   type; ``RestorationError/state(_:)`` in a factory when the
    ///   referenced record is not created yet.
    ///
    /// The corresponding C function is `rst_decode_object`.
    public func decodeReference(forKey key: String) throws(RestorationError) -> StateRestoring? {
        guard let node = try referencedNode(key) else { return nil }
        return (node.behavior as? ObjectBox)?.object
    }

    /// Reads an object reference as a given class.
    ///
    /// - Parameters:
    ///   - type: The expected class.
    ///   - key: The key.
    /// - Returns: As ``decodeReference(forKey:)``.
    /// - Throws: ``RestorationError/type(_:)`` when the referenced object
    ///   is of another class; otherwise as ``decodeReference(forKey:)``.
    ///
    /// The corresponding C function is `rst_decode_object`.
    public func decodeReference<T>(_ type: T.Type, forKey key: String) throws(RestorationError) -> T? {
        guard let object = try decodeReference(forKey: key) else { return nil }
        guard let typed = object as? T else {
            throw RestorationError.type("decodeReference: \(location), key '\(key)' refers to a \(Swift.type(of: object)), not a \(T.self)")
        }
        return typed
    }

    /// The restoration identifier path of the object a reference names,
    /// whoever registered it.
    ///
    /// - Parameter key: The key.
    /// - Returns: `"Tabs/Countries/List"`, or nil when the key is absent or
    ///   the referenced record was skipped.
    /// - Throws: As ``decodeReference(forKey:)``.
    ///
    /// The corresponding C functions are `rst_decode_object` and `rst_object_path`.
    public func decodeReferencePath(forKey key: String) throws(RestorationError) -> String? {
        try referencedNode(key)?.path
    }

    private func referencedNode(_ key: String) throws(RestorationError) -> ObjectNode? {
        try check()
        do {
            return try optional(key) { (k) throws(RestorationFailure) in try coder.decodeObject(k) }
        } catch .notFound {
            return nil   // the referenced record was skipped
        }
    }

    /// Reads a nested record: the values `body` decodes come from inside it.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - body: Decodes the nested record's values with this same coder.
    /// - Returns: What `body` returns, or nil when the key is absent.
    /// - Throws: ``RestorationError/type(_:)`` when the key holds another
    ///   type; whatever `body` throws (the record is left either way).
    ///
    /// The corresponding C functions are `rst_decode_begin_record` and
    /// `rst_decode_end_record`.
    public func decodeRecord<R>(forKey key: String, _ body: (RestorationCoder) throws -> R) throws -> R? {
        try check()
        let entered: Bool? = try optional(key) { (k) throws(RestorationFailure) in try coder.decodeBeginRecord(k); return true }
        guard entered != nil else { return nil }
        defer { try? coder.decodeEndRecord() }
        return try body(self)
    }

    // MARK: - helpers

    /// Runs a decode; `.notFound` (the key is absent) becomes nil.
    @inline(__always)
    private func optional<T>(_ key: String, _ body: (KeyBytes) throws(RestorationFailure) -> T) throws(RestorationError) -> T? {
        do {
            return try withKey(key, body)
        } catch .notFound {
            // Core decode functions report only an absent key as .notFound
            // (decodeObject's skipped target is handled by its caller).
            if contains(key) { throw RestorationError.notFound("decode: \(location), key '\(key)' refers to a record that was skipped") }
            return nil
        }
    }

    /// Writes a value tree under `key` in the current record.
    func emit(_ value: EncodedTree, forKey key: String) throws(RestorationError) {
        switch value {
        case .bool(let b):
            try withKey(key) { (k) throws(RestorationFailure) in try coder.encodeBool(k, b) }
        case .int(let i):
            try withKey(key) { (k) throws(RestorationFailure) in try coder.encodeInt(k, i) }
        case .double(let d):
            try withKey(key) { (k) throws(RestorationFailure) in try coder.encodeDouble(k, d) }
        case .string(let s):
            try withKey(key) { (k) throws(RestorationFailure) in
                try withUTF8(s) { (v) throws(RestorationFailure) in try coder.encodeString(k, v) }
            }
        case .bytes(let d):
            try withKey(key) { (k) throws(RestorationFailure) in
                try withBytes(d) { (b) throws(RestorationFailure) in try coder.encodeBytes(k, b) }
            }
        case .intArray(let a):
            try encodeInts(a, key)
        case .stringArray(let a):
            try withKey(key) { (k) throws(RestorationFailure) in
                try withPinnedStrings(a) { (b) throws(RestorationFailure) in try coder.encodeStringArray(k, b) }
            }
        case .record(let fields):
            try withKey(key) { (k) throws(RestorationFailure) in try coder.encodeBeginRecord(k) }
            for (name, v) in fields { try emit(v, forKey: name) }
            try RestorationError.wrap { () throws(RestorationFailure) in try coder.encodeEndRecord() }
        case .null:
            return
        case .other(let what):
            throw RestorationError.invalid("encode: \(location), key '\(key)': cannot store \(what)")
        }
    }

    /// Reads the value under `key` (recursively for records), or nil when absent.
    func readTree(_ key: String) throws(RestorationError) -> EncodedTree? {
        guard let t = try withKey(key, { (k) throws(RestorationFailure) in try coder.valueType(k) }) else { return nil }
        guard let tag = t else { return .other("a value of a type this version does not know") }
        switch tag {
        case .boolFalse, .boolTrue:
            return .bool(try withKey(key) { (k) throws(RestorationFailure) in try coder.decodeBool(k) })
        case .int:
            return .int(try withKey(key) { (k) throws(RestorationFailure) in try coder.decodeInt(k) })
        case .double:
            return .double(try withKey(key) { (k) throws(RestorationFailure) in try coder.decodeDouble(k) })
        case .string:
            return .string(try withKey(key) { (k) throws(RestorationFailure) in try coder.decodeString(k) })
        case .bytes:
            return .bytes(try withKey(key) { (k) throws(RestorationFailure) in Data(try coder.decodeBytes(k)) })
        case .intArray:
            return .intArray(try withKey(key) { (k) throws(RestorationFailure) in try coder.decodeIntArray(k) })
        case .stringArray:
            return .stringArray(try withKey(key) { (k) throws(RestorationFailure) in try coder.decodeStringArray(k) })
        case .object:
            return .other("an object reference")
        case .objectArray:
            return .other("an array of object references")
        case .osString:
            return .other("an OS string (read it with decodeOSString(forKey:))")
        case .record:
            try withKey(key) { (k) throws(RestorationFailure) in try coder.decodeBeginRecord(k) }
            defer { try? coder.decodeEndRecord() }
            var names: [String] = []
            try RestorationError.wrap { () throws(RestorationFailure) in try coder.forEachField { name, _ in names.append(name) } }
            var fields: [(String, EncodedTree)] = []
            fields.reserveCapacity(names.count)
            for name in names {
                if let v = try readTree(name) { fields.append((name, v)) }
            }
            return .record(fields)
        }
    }
}

/// The type of a stored value.
///
/// See also <doc:Restoration>, the overview of preservation and restoration.
public enum RestorationValueType: Int, Sendable, CaseIterable {
    /// `RST_TYPE_BOOL`.
    case bool = 1
    /// `RST_TYPE_INT`: a 64-bit signed integer.
    case int = 2
    /// `RST_TYPE_DOUBLE`.
    case double = 3
    /// `RST_TYPE_STRING`.
    case string = 4
    /// `RST_TYPE_BYTES`.
    case bytes = 5
    /// `RST_TYPE_OBJECT`: a reference to another object.
    case object = 6
    /// `RST_TYPE_INT_ARRAY`.
    case intArray = 7
    /// `RST_TYPE_STRING_ARRAY`.
    case stringArray = 8
    /// `RST_TYPE_RECORD`: a nested keyed record.
    case record = 9
    /// `RST_TYPE_OBJECT_ARRAY`: references to other objects (v1.1).
    case objectArray = 10
    /// `RST_TYPE_OS_STRING`: a file name, any bytes but NUL (v1.2).
    case osString = 11
    /// `RST_TYPE_UNKNOWN`: written by a newer format version.
    case unknown = 15

    init(_ tag: ValueTag?) {
        switch tag {
        case .boolFalse, .boolTrue: self = .bool
        case .int: self = .int
        case .double: self = .double
        case .string: self = .string
        case .bytes: self = .bytes
        case .object: self = .object
        case .intArray: self = .intArray
        case .stringArray: self = .stringArray
        case .record: self = .record
        case .objectArray: self = .objectArray
        case .osString: self = .osString
        case nil: self = .unknown
        }
    }
}

// MARK: - byte helpers (String and Data to borrowed buffers, typed throws kept)

@inline(__always)
func withKey<R>(_ key: String, _ body: (KeyBytes) throws(RestorationFailure) -> R) throws(RestorationError) -> R {
    do {
        return try withUTF8(key) { (b) throws(RestorationFailure) in try body(KeyBytes(b)) }
    } catch {
        throw RestorationError(error)
    }
}

@inline(__always)
func withUTF8<R>(_ s: String, _ body: (UnsafeRawBufferPointer) throws(RestorationFailure) -> R) throws(RestorationFailure) -> R {
    var s = s
    let r: Result<R, RestorationFailure> = s.withUTF8 { buf in
        do throws(RestorationFailure) { return .success(try body(UnsafeRawBufferPointer(buf))) } catch { return .failure(error) }
    }
    return try r.get()
}

@inline(__always)
func withBytes<R>(_ d: Data, _ body: (UnsafeRawBufferPointer) throws(RestorationFailure) -> R) throws(RestorationFailure) -> R {
    let r: Result<R, RestorationFailure> = d.withUnsafeBytes { buf in
        do throws(RestorationFailure) { return .success(try body(buf)) } catch { return .failure(error) }
    }
    return try r.get()
}

@inline(__always)
func withInt64Buffer<R>(_ a: [Int64], _ body: (UnsafeBufferPointer<Int64>) throws(RestorationFailure) -> R) throws(RestorationFailure) -> R {
    let r: Result<R, RestorationFailure> = a.withUnsafeBufferPointer { buf in
        do throws(RestorationFailure) { return .success(try body(buf)) } catch { return .failure(error) }
    }
    return try r.get()
}
