import RestorationArchive

// Arrays of object references (value tag 10; docs/EVOLUTION.md). Each element follows
// the rules of a single reference; each is a dependency edge for the decode
// order (the reader lists them with the record's references).

extension Coder {
    /// Stores references to `refs` (each a registered object of this engine,
    /// in the archive of this save).
    public func encodeObjectArray(_ key: KeyBytes, _ refs: [ObjectNode]) throws(RestorationFailure) {
        let k = try encodingKey(key)
        var records: [Int] = []
        records.reserveCapacity(refs.count)
        for (i, ref) in refs.enumerated() {
            guard ref.engine === engine, ref.isRegistered else {
                throw fail(RestorationFailure(.invalid, "\(location), key '\(key.string)': element \(i) belongs to another engine (or is not registered)"))
            }
            guard ref.saveGeneration == encoding.saveGeneration else {
                throw fail(RestorationFailure(.state, "\(location), key '\(key.string)': element \(i), '\(ref.path)', was registered after this save began, so it is not in the archive"))
            }
            if ref.saveIndex < 0 { continue }   // left out by the size budget: the element is dropped
            records.append(ref.saveIndex)
        }
        do {
            try records.withUnsafeBufferPointer { b throws(WriteFailure) in try encoding.writer.writeObjectArray(k, records: b) }
        } catch { throw record(error, key: key) }
    }

    /// The number of elements of the object array under `key`.
    public func decodeObjectArrayCount(_ key: KeyBytes) throws(RestorationFailure) -> Int {
        let f = try typed(key, .objectArray)
        return decoding.reader.unsafelyUnwrapped.objectArrayCount(f)
    }

    /// Element `index` of the object array under `key`: the count, and the
    /// element's handle (nil when its record was skipped). `inRange` false:
    /// no such element. During pass 1 (a factory), an element whose record is
    /// not materialized yet: `.state`.
    public func decodeObjectArrayElement(_ key: KeyBytes, at index: Int) throws(RestorationFailure)
        -> (handle: UnsafeMutableRawPointer?, count: Int, inRange: Bool) {
        let f = try typed(key, .objectArray)
        let r = decoding.reader.unsafelyUnwrapped
        let n = r.objectArrayCount(f)
        guard let target = r.objectArrayElement(f, at: index) else { return (nil, n, false) }
        guard let session = decoding.session else { throw stateFailure(encode: false) }
        if let h = session.handle(target) { return (h, n, true) }
        if session.state[target] == .pending {
            throw RestorationFailure(.state, "\(location), key '\(key.string)': element \(index) refers to record \(target) ('\(r.path(ofRecord: target))'), which is not materialized yet (pass 1 creates objects in archive order)")
        }
        return (nil, n, true)
    }

    /// Every element of the object array under `key` (nil: a skipped record).
    public func decodeObjectArray(_ key: KeyBytes) throws(RestorationFailure) -> [ObjectNode?] {
        let f = try typed(key, .objectArray)
        let r = decoding.reader.unsafelyUnwrapped
        guard let session = decoding.session else { throw stateFailure(encode: false) }
        var out: [ObjectNode?] = []
        out.reserveCapacity(r.objectArrayCount(f))
        var pending: Int? = nil
        r.forEachObjectArrayElement(f) { target in
            if let h = session.handle(target) {
                out.append(ObjectNode.from(handle: h))
            } else {
                if session.state[target] == .pending && pending == nil { pending = target }
                out.append(nil)
            }
        }
        if let p = pending {
            throw RestorationFailure(.state, "\(location), key '\(key.string)' refers to record \(p) ('\(r.path(ofRecord: p))'), which is not materialized yet (pass 1 creates objects in archive order)")
        }
        return out
    }
}
