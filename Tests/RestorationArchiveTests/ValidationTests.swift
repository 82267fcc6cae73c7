import RestorationArchive
import XCTest

final class ValidationTests: XCTestCase {
    // MARK: - Damage to a valid archive

    func testTruncationAtEveryOffsetIsRejected() throws {
        let bytes = try RoundTripTests.sample()
        XCTAssertNotNil(accept(bytes))
        for n in 0..<bytes.count {
            XCTAssertThrowsError(try ArchiveReader(bytes: Array(bytes[0..<n])), "prefix of \(n) bytes")
        }
        // Also with total_len and the checksum made consistent with the cut:
        // the structure itself must then be found wanting.
        for n in 30..<(bytes.count - 4) {
            var cut = Array(bytes[0..<n]) + [0, 0, 0, 0]
            withUnsafeBytes(of: UInt32(cut.count).littleEndian) { t in for i in 0..<4 { cut[12 + i] = t[i] } }
            fixChecksum(&cut)
            XCTAssertThrowsError(try ArchiveReader(bytes: cut), "consistent cut at \(n)")
        }
    }

    func testEveryBitFlipIsRejected() throws {
        let bytes = try RoundTripTests.sample()
        for i in 0..<bytes.count {
            for bit in 0..<8 {
                var b = bytes
                b[i] ^= UInt8(1 << bit)
                do {
                    _ = try ArchiveReader(bytes: b)
                    XCTFail("flip of bit \(bit) of byte \(i) was accepted")
                } catch {
                    switch error {
                    case .corrupt, .version: break
                    case .limit: XCTFail("flip of bit \(bit) of byte \(i): \(error)")
                    }
                }
            }
        }
    }

    /// Random damage with the checksum recomputed: the parser must reject or
    /// accept, never crash; what it accepts must survive the document model.
    func testRandomDamageWithValidChecksumNeverCrashes() throws {
        let base = try RoundTripTests.sample()
        var rng = SplitMix(state: 12345)
        var accepted = 0
        for round in 0..<3000 {
            var b = base
            let edits = 1 + Int(rng.next() % 4)
            for _ in 0..<edits {
                let i = 16 + Int(rng.next() % UInt64(b.count - 20))
                switch rng.next() % 3 {
                case 0: b[i] ^= UInt8(1 << (rng.next() % 8))
                case 1: b[i] = UInt8(truncatingIfNeeded: rng.next())
                default: b[i] = [0x00, 0x7F, 0x80, 0xFF, 0x2F][Int(rng.next() % 5)]
                }
            }
            fixChecksum(&b)
            guard let r = try? ArchiveReader(bytes: b) else { continue }
            accepted += 1
            // Everything the reader accepted can be read in full and re-encoded.
            let doc = ArchiveDocument(reader: r)
            for i in 0..<r.recordCount {
                _ = r.path(ofRecord: i)
                _ = r.references(ofRecord: i)
            }
            do {
                let again = try doc.encode()
                let doc2 = try ArchiveDocument(bytes: again)
                XCTAssertTrue(identical(doc, doc2), "round \(round)")
            } catch {
                XCTFail("round \(round): an accepted archive failed to re-encode: \(error)")
            }
        }
        XCTAssertGreaterThan(accepted, 0)
    }

    // MARK: - Header

    func testHeaderChecks() {
        let good = RawArchive(names: ["a"], records: [record(ident: 0, fields: [])]).bytes
        XCTAssertNotNil(accept(good))

        expectFailure([], "corrupt", "too short", "0 bytes")
        expectFailure(Array(good[0..<10]), "corrupt", "too short")
        var magic = good
        magic[3] = 0x58
        expectFailure(magic, "corrupt", "not a Restoration archive", "byte 3")

        var v = RawArchive(names: ["a"], records: [record(ident: 0, fields: [])])
        v.version = 2
        expectFailure(v.bytes, "version", "version 2", "byte 8")
        v.version = 0
        expectFailure(v.bytes, "version", "version 0")
        // The version is checked right after the magic, before anything else.
        var vShort = v.bytes
        vShort.removeLast(10)
        expectFailure(vShort, "version", "version 0")

        var f = RawArchive(names: ["a"], records: [record(ident: 0, fields: [])])
        f.flags = 4
        expectFailure(f.bytes, "version", "unknown flags", "byte 10")

        var t = RawArchive(names: ["a"], records: [record(ident: 0, fields: [])])
        t.totalLen = UInt32(good.count + 3)
        expectFailure(t.bytes, "corrupt", "truncated", "\(good.count + 3)", "\(good.count)")
        t.totalLen = UInt32(good.count - 1)
        expectFailure(t.bytes, "corrupt", "trailing bytes", "\(good.count - 1)", "\(good.count)")

        var c = RawArchive(names: ["a"], records: [record(ident: 0, fields: [])])
        c.badChecksum = true
        expectFailure(c.bytes, "corrupt", "checksum mismatch")

        // Shorter than the smallest archive, with a consistent total_len.
        var tiny: [UInt8] = Array(good[0..<16]) + [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        withUnsafeBytes(of: UInt32(tiny.count).littleEndian) { b in for i in 0..<4 { tiny[12 + i] = b[i] } }
        expectFailure(tiny, "corrupt", "smallest archive")
    }

    func testArchiveSizeLimit() {
        // total_len and the real size agree and exceed the limit: LIMIT, checked
        // before the checksum (the buffer is never copied).
        // (Only the header is written: the untouched pages of the big
        // allocation are never made resident.)
        let n = ArchiveLimits.maxArchiveBytes + 1
        let big = UnsafeMutableRawBufferPointer.allocate(byteCount: n, alignment: 16)
        defer { big.deallocate() }
        let head: [UInt8] = [0x89, 0x52, 0x53, 0x54, 0x0D, 0x0A, 0x1A, 0x0A, 1, 0, 0, 0]
        for (i, b) in head.enumerated() { big[i] = b }
        withUnsafeBytes(of: UInt32(n).littleEndian) { t in for i in 0..<4 { big[12 + i] = t[i] } }
        XCTAssertThrowsError(try ArchiveReader(bytes: UnsafeRawBufferPointer(big))) { e in
            guard case ArchiveFailure.limit(let m) = e as! ArchiveFailure else { return XCTFail("\(e)") }
            XCTAssertTrue(m.contains("\(n)") && m.contains("\(ArchiveLimits.maxArchiveBytes)"), m)
        }
    }

    func testInfoChecks() {
        var a = RawArchive(names: ["a"], records: [record(ident: 0, fields: [])])
        a.app = [UInt8](repeating: 0x41, count: 4097)
        expectFailure(a.bytes, "limit", "app_version", "4096")
        a.app = [UInt8](repeating: 0x41, count: 4096)
        XCTAssertEqual(accept(a.bytes)?.info.appVersion.utf8.count, 4096)
        a.app = [0x41, 0xC3]
        expectFailure(a.bytes, "corrupt", "app_version is not valid UTF-8")
        a.app = []
        a.sys = [0x41, 0x00]
        expectFailure(a.bytes, "corrupt", "system_version contains a NUL byte", "byte 19")
        a.sys = []
        a.idiom = [0xFF]
        expectFailure(a.bytes, "corrupt", "idiom is not valid UTF-8")
    }

    // MARK: - Counts and lengths that do not fit

    func testHugeCountsAndLengths() {
        var a = RawArchive(keys: ["k"], names: ["a"], records: [record(ident: 0, fields: [])])
        a.keyCount = UInt64.max
        expectFailure(a.bytes, "corrupt", "key_count")
        a.keyCount = 1_000_000
        expectFailure(a.bytes, "corrupt", "key_count 1000000")
        a.keyCount = nil
        a.nameCount = 1 << 40
        expectFailure(a.bytes, "corrupt", "name_count")
        a.nameCount = nil
        a.objectCount = 1 << 23
        expectFailure(a.bytes, "corrupt", "object_count 8388608")
        a.objectCount = UInt64(ArchiveLimits.maxObjects) + 1
        expectFailure(a.bytes, "limit", "object_count")
        a.objectCount = 2
        expectFailure(a.bytes, "corrupt") // fewer records than object_count
        a.objectCount = 0
        expectFailure(a.bytes, "corrupt", "stray bytes")

        // A string whose length runs past its record.
        let s = RawArchive(keys: ["k"], names: ["a"],
                           records: [record(ident: 0, fields: field(0, 4, varint(1 << 50) + [0x41]))])
        expectFailure(s.bytes, "corrupt", "record 0 (a), key 'k'", "string length")
        // fields_len too large / too small.
        var bad = record(ident: 0, fields: field(0, 2, [2]))
        bad[3] = 9
        expectFailure(RawArchive(keys: ["k"], names: ["a"], records: [bad]).bytes, "corrupt", "fields_len 9")
        bad[3] = 1
        expectFailure(RawArchive(keys: ["k"], names: ["a"], records: [bad]).bytes, "corrupt")
        // A double cut short.
        expectFailure(RawArchive(keys: ["k"], names: ["a"], records: [record(ident: 0, fields: field(0, 3, [1, 2, 3]))]).bytes,
                      "corrupt", "double")
        // An int array whose count does not fit, or with stray bytes.
        let arr1 = field(0, 7, lenPrefixed(varint(1000) + [2, 4]))
        expectFailure(RawArchive(keys: ["k"], names: ["a"], records: [record(ident: 0, fields: arr1)]).bytes,
                      "corrupt", "int array count 1000")
        let arr2 = field(0, 7, lenPrefixed(varint(1) + [2, 4]))
        expectFailure(RawArchive(keys: ["k"], names: ["a"], records: [record(ident: 0, fields: arr2)]).bytes,
                      "corrupt", "int array has 1 stray bytes")
        let arr3 = field(0, 7, lenPrefixed(varint(3) + [2, 4]))
        expectFailure(RawArchive(keys: ["k"], names: ["a"], records: [record(ident: 0, fields: arr3)]).bytes, "corrupt")
        let sarr = field(0, 8, lenPrefixed(varint(2) + lenPrefixed("ab") + [5, 0x41]))
        expectFailure(RawArchive(keys: ["k"], names: ["a"], records: [record(ident: 0, fields: sarr)]).bytes, "corrupt")
        let sarr2 = field(0, 8, lenPrefixed(varint(1) + lenPrefixed("ab") + [0x41]))
        expectFailure(RawArchive(keys: ["k"], names: ["a"], records: [record(ident: 0, fields: sarr2)]).bytes,
                      "corrupt", "string array has 1 stray bytes")
        // A nested record whose length runs past its parent.
        let nested = field(0, 9, varint(50) + field(0, 0))
        expectFailure(RawArchive(keys: ["k"], names: ["a"], records: [record(ident: 0, fields: nested)]).bytes,
                      "corrupt", "nested record length 50")
        // Bytes between the last record and the checksum.
        var extra = RawArchive(names: ["a"], records: [record(ident: 0, fields: [])])
        extra.extra = [0]
        expectFailure(extra.bytes, "corrupt", "stray bytes")
    }

    func testVarints() {
        // Non-minimal varints are accepted when they fit.
        let nonMinimal = field(0, 2, [0x82, 0x80, 0x80, 0x00])
        let r = accept(RawArchive(keys: ["k"], names: ["a"], records: [record(ident: 0, fields: nonMinimal)]).bytes)
        XCTAssertEqual(r.map { $0.int($0.field(0, "k")!) }, 1)
        // 10 bytes with the top bit: UInt64.max.
        let maxv = field(0, 2, [UInt8](repeating: 0xFF, count: 9) + [0x01])
        let r2 = accept(RawArchive(keys: ["k"], names: ["a"], records: [record(ident: 0, fields: maxv)]).bytes)
        XCTAssertEqual(r2.map { $0.int($0.field(0, "k")!) }, Int64.min)
        // Longer than 10 bytes.
        let long = field(0, 2, [UInt8](repeating: 0x80, count: 10) + [0x00])
        expectFailure(RawArchive(keys: ["k"], names: ["a"], records: [record(ident: 0, fields: long)]).bytes,
                      "corrupt", "longer than 10 bytes", "record 0 (a), key 'k'")
        // Overflowing 64 bits.
        let over = field(0, 2, [UInt8](repeating: 0xFF, count: 9) + [0x02])
        expectFailure(RawArchive(keys: ["k"], names: ["a"], records: [record(ident: 0, fields: over)]).bytes,
                      "corrupt", "overflows 64 bits")
        // A varint that runs into the end of its value.
        let cut = field(0, 7, lenPrefixed(varint(1) + [0x80]))
        expectFailure(RawArchive(keys: ["k"], names: ["a"], records: [record(ident: 0, fields: cut)]).bytes,
                      "corrupt", "cut off")
        // An overlong varint for a count in the header.
        var a = RawArchive(names: ["a"], records: [record(ident: 0, fields: [])])
        a.app = []
        a.sys = []
        var b = a.bytes
        // Replace object_count (after 3 empty strings and 8 bytes) by an 11-byte varint.
        let at = 16 + 3 + 8
        b.replaceSubrange(at..<(at + 1), with: [UInt8](repeating: 0x81, count: 10) + [0x00])
        withUnsafeBytes(of: UInt32(b.count).littleEndian) { t in for i in 0..<4 { b[12 + i] = t[i] } }
        fixChecksum(&b)
        expectFailure(b, "corrupt", "object_count", "longer than 10 bytes", "byte \(at)")
    }

    // MARK: - Strings

    func testStringTableRules() {
        expectFailure(RawArchive(keys: [""], names: ["a"], records: [record(ident: 0, fields: [])]).bytes,
                      "corrupt", "key 0 is empty")
        expectFailure(RawArchive(keys: ["k"], names: [""], records: []).bytes, "corrupt", "name 0 is empty")
        expectFailure(RawArchive(keys: [String(repeating: "k", count: 256)], names: ["a"], records: []).bytes,
                      "limit", "key 0 is 256 bytes")
        XCTAssertNotNil(accept(RawArchive(keys: [String(repeating: "k", count: 255)], names: ["a"], records: []).bytes))
        expectFailure(RawArchive(names: [String(repeating: "n", count: 256)], records: []).bytes, "limit", "name 0 is 256 bytes")
        var k = RawArchive(names: ["a"], records: [])
        k.keys = [[0x6B, 0x00]]
        expectFailure(k.bytes, "corrupt", "key contains a NUL byte")
        k.keys = [[0x6B, 0xC0, 0x80]] // overlong NUL
        expectFailure(k.bytes, "corrupt", "key is not valid UTF-8")
        k.keys = []
        k.names = [[0xED, 0xA0, 0x80]] // a surrogate
        expectFailure(k.bytes, "corrupt", "name is not valid UTF-8")
        expectFailure(RawArchive(keys: ["a", "b", "a"], names: [], records: []).bytes, "corrupt", "key 2 'a' repeats key 0")
        expectFailure(RawArchive(names: ["x", "x"], records: []).bytes, "corrupt", "name 1 'x' repeats name 0")
    }

    func testStringValues() {
        func archive(_ payload: [UInt8], tag: UInt8 = 4) -> [UInt8] {
            RawArchive(keys: ["scroll"], names: ["Tabs", "Nav", "List"], records: [
                record(ident: 0, fields: []),
                record(ident: 1, delta: 1, fields: []),
                record(ident: 2, delta: 1, fields: field(0, tag, payload)),
            ]).bytes
        }
        let bad = archive(lenPrefixed([0x61, 0xE2, 0x28, 0xA1]))
        // The byte offset of the bad byte: find it in the archive.
        let offset = bad.count - 4 - 3
        expectFailure(bad, "corrupt", "record 2 (Tabs/Nav/List), key 'scroll': string is not valid UTF-8 at byte \(offset)")
        expectFailure(archive(lenPrefixed([0x61, 0x00, 0x62])), "corrupt", "key 'scroll': string contains a NUL byte")
        // Bytes values may hold anything.
        XCTAssertNotNil(accept(archive(lenPrefixed([0x61, 0x00, 0xFF]), tag: 5)))
        // String array elements.
        expectFailure(archive(lenPrefixed(varint(2) + lenPrefixed("ok") + lenPrefixed([0xFF])), tag: 8),
                      "corrupt", "string array element is not valid UTF-8")
        expectFailure(archive(lenPrefixed(varint(1) + lenPrefixed([0])), tag: 8),
                      "corrupt", "string array element contains a NUL byte")
        // Valid multi-byte text of every length class.
        XCTAssertNotNil(accept(archive(lenPrefixed(Array("aé€𐍈 plain ascii that is longer than eight".utf8)))))
    }

    func testIdentifiersAndClassNames() {
        expectFailure(RawArchive(names: ["a/b"], records: [record(ident: 0, fields: [])]).bytes,
                      "corrupt", "record 0: identifier 'a/b' contains '/'")
        // A class name may contain '/', and an unused name too.
        let ok = RawArchive(names: ["a", "My/Class", "x/y"], records: [record(ident: 0, cls: 2, fields: [])]).bytes
        XCTAssertEqual(accept(ok).map { $0.name($0.className(ofRecord: 0)!) }, "My/Class")
        expectFailure(RawArchive(names: ["a"], records: [record(ident: 1, fields: [])]).bytes,
                      "corrupt", "identifier name index 1 is out of range")
        expectFailure(RawArchive(names: ["a"], records: [record(ident: 0, cls: 2, fields: [])]).bytes,
                      "corrupt", "class name index 1 is out of range")
    }

    // MARK: - Keys and records

    func testKeyIndexes() {
        let keys = (0..<20).map { "k\($0)" }
        // Key indexes >= 15 use the extension varint.
        let f = field(3, 0) + field(15, 1) + field(19, 2, [4])
        let r = accept(RawArchive(keys: keys, names: ["a"], records: [record(ident: 0, fields: f)]).bytes)
        XCTAssertEqual(r.map { $0.int($0.field(0, "k19")!) }, 2)
        XCTAssertEqual(r.map { $0.bool($0.field(0, "k15")!) }, true)
        expectFailure(RawArchive(keys: keys, names: ["a"], records: [record(ident: 0, fields: field(20, 0))]).bytes,
                      "corrupt", "key index 15+5 is out of range (key_count 20)")
        expectFailure(RawArchive(keys: ["a"], names: ["a"], records: [record(ident: 0, fields: field(1, 0))]).bytes,
                      "corrupt", "key index 1 is out of range")
        expectFailure(RawArchive(keys: ["a"], names: ["a"], records: [record(ident: 0, fields: field(15, 0))]).bytes,
                      "corrupt", "out of range")
    }

    func testDuplicateKeys() {
        let keys = (0..<40).map { "k\($0)" }
        func one(_ f: [UInt8]) -> [UInt8] {
            RawArchive(keys: keys, names: ["a"], records: [record(ident: 0, fields: f)]).bytes
        }
        expectFailure(one(field(1, 0) + field(2, 0) + field(1, 1)), "corrupt", "record 0 (a), key 'k1': the key appears twice")
        // The same key in the object and in a nested record is fine.
        XCTAssertNotNil(accept(one(field(1, 0) + field(2, 9, lenPrefixed(field(1, 1))) + field(3, 0))))
        // A duplicate inside a nested record, and one after it at the object level.
        expectFailure(one(field(2, 9, lenPrefixed(field(1, 1) + field(1, 0)))), "corrupt", "key 'k2.k1'")
        expectFailure(one(field(1, 0) + field(2, 9, lenPrefixed(field(1, 1))) + field(1, 0)), "corrupt", "key 'k1'")
        // More than 16 keys: the hash set path.
        var many: [UInt8] = []
        for i in 0..<30 { many += field(i, 0) }
        XCTAssertNotNil(accept(one(many)))
        expectFailure(one(many + field(7, 1)), "corrupt", "appears twice")
        expectFailure(one(field(39, 9, lenPrefixed(many + field(29, 1)))), "corrupt", "key 'k39.k29'")
        // Sibling nested records may reuse keys.
        XCTAssertNotNil(accept(one(field(38, 9, lenPrefixed(many)) + field(39, 9, lenPrefixed(many)))))
    }

    func testParentsAndPaths() {
        // parent_delta 0 is a root; several roots are fine when their identifiers differ.
        XCTAssertNotNil(accept(RawArchive(names: ["a", "b"], records: [
            record(ident: 0, fields: []), record(ident: 1, fields: []),
        ]).bytes))
        expectFailure(RawArchive(names: ["a"], records: [record(ident: 0, delta: 1, fields: [])]).bytes,
                      "corrupt", "record 0: parent_delta 1 points before the first record")
        expectFailure(RawArchive(names: ["a", "b"], records: [
            record(ident: 0, fields: []), record(ident: 1, delta: 2, fields: []),
        ]).bytes, "corrupt", "parent_delta 2")
        // Duplicate paths.
        expectFailure(RawArchive(names: ["a", "b"], records: [
            record(ident: 0, fields: []), record(ident: 0, fields: []),
        ]).bytes, "corrupt", "record 1 (a): the path is already used")
        expectFailure(RawArchive(names: ["a", "b"], records: [
            record(ident: 0, fields: []), record(ident: 1, delta: 1, fields: []), record(ident: 1, delta: 2, fields: []),
        ]).bytes, "corrupt", "record 2 (a/b)")
        // The same identifier under different parents is fine.
        let r = accept(RawArchive(names: ["a", "b", "c"], records: [
            record(ident: 0, fields: []), record(ident: 2, delta: 1, fields: []),
            record(ident: 1, fields: []), record(ident: 2, delta: 1, fields: []),
        ]).bytes)
        XCTAssertEqual(r?.path(ofRecord: 3), "b/c")
        XCTAssertEqual(r?.depth(ofRecord: 3), 1)
    }

    /// The duplicate-path check is skipped when no identifier repeats; the
    /// verdict and message agree with the definition (a (parent, identifier)
    /// pair seen twice) for identifiers drawn from small and large pools,
    /// name indexes around the used-identifier bitmap's word edges.
    func testDuplicatePathsAgreeWithTheDefinition() {
        var rng = SystemRandomNumberGenerator()
        for trial in 0..<400 {
            let nameCount = [1, 2, 63, 64, 65, 127, 128, 129, 200][trial % 9]
            let names = (0..<nameCount).map { "n\($0)" }
            let count = Int.random(in: 1...40, using: &rng)
            let pool = Bool.random(using: &rng) ? min(nameCount, 3) : nameCount
            var recs: [[UInt8]] = []
            var pairs: [(Int, Int)] = []
            var firstDuplicate: Int? = nil
            var used = Set<Int>()
            for i in 0..<count {
                var ident = nameCount - 1 - Int.random(in: 0..<pool, using: &rng)
                // Mostly fresh identifiers when the pool is large.
                if pool == nameCount, used.count < nameCount, Int.random(in: 0..<4, using: &rng) != 0 {
                    while used.contains(ident) { ident = Int.random(in: 0..<nameCount, using: &rng) }
                }
                used.insert(ident)
                let parent = i == 0 || Bool.random(using: &rng) ? -1 : Int.random(in: 0..<i, using: &rng)
                recs.append(record(ident: UInt64(ident), delta: parent < 0 ? 0 : UInt64(i - parent), fields: []))
                if firstDuplicate == nil, pairs.contains(where: { $0 == (parent, ident) }) { firstDuplicate = i }
                pairs.append((parent, ident))
            }
            let bytes = RawArchive(names: names, records: recs).bytes
            if let d = firstDuplicate {
                expectFailure(bytes, "corrupt", "record \(d) ", "the path is already used by an earlier record")
            } else {
                XCTAssertNotNil(accept(bytes))
            }
        }
    }

    func testObjectReferences() {
        let recs = [record(ident: 0, fields: field(0, 6, varint(1))), record(ident: 1, fields: field(0, 6, varint(0)))]
        let r = accept(RawArchive(keys: ["ref"], names: ["a", "b"], records: recs).bytes)
        XCTAssertEqual(r?.hasForwardReferences, true)
        expectFailure(RawArchive(keys: ["ref"], names: ["a"], records: [record(ident: 0, fields: field(0, 6, varint(1)))]).bytes,
                      "corrupt", "object reference to record 1 is out of range (object_count 1)")
        expectFailure(RawArchive(keys: ["ref"], names: ["a"], records: [record(ident: 0, fields: field(0, 6, varint(1 << 40)))]).bytes,
                      "corrupt", "out of range")
    }

    func testUnknownTagsAreSkippedAndReported() throws {
        let f = field(0, 2, [2]) + field(1, 14, lenPrefixed([1, 2, 3, 0xFF])) + field(2, 15, [0]) + field(3, 4, lenPrefixed("ok"))
        let r = try XCTUnwrap(accept(RawArchive(keys: ["a", "future", "empty", "b"], names: ["x"], records: [record(ident: 0, fields: f)]).bytes))
        var tags: [UInt8] = []
        r.forEachField(in: r.fields(ofRecord: 0)) { tags.append($0.rawTag) }
        XCTAssertEqual(tags, [2, 14, 15, 4])
        let u = try XCTUnwrap(r.field(0, "future"))
        XCTAssertNil(u.tag)
        XCTAssertEqual(Array(r.bytes(u)), [1, 2, 3, 0xFF])
        XCTAssertEqual(r.text(try XCTUnwrap(r.field(0, "b"))), "ok")
        let doc = ArchiveDocument(reader: r)
        XCTAssertEqual(doc.objects[0].entries[1].value, .unknown(tag: 14, payload: [1, 2, 3, 0xFF]))
        XCTAssertEqual(doc.objects[0].entries[2].value, .unknown(tag: 15, payload: []))
        XCTAssertEqual(try ArchiveDocument(bytes: try doc.encode()), doc)
        // An unknown tag whose length runs past the record.
        expectFailure(RawArchive(keys: ["a"], names: ["x"], records: [record(ident: 0, fields: field(0, 14, [9, 1]))]).bytes,
                      "corrupt", "value length 9")
    }

    /// v1.2: tag 12 is a sealed value: inner tag + 24-byte nonce + at least
    /// the 16-byte authentication tag; counted; kept by the document as is.
    func testSealedValuesAreCheckedAndCounted() throws {
        let good = [UInt8]([4]) + [UInt8](repeating: 0xA5, count: 24 + 16 + 3)
        let f = field(0, 12, lenPrefixed(good)) + field(1, 4, lenPrefixed("ok"))
        let r = try XCTUnwrap(accept(RawArchive(keys: ["token", "b"], names: ["x"], records: [record(ident: 0, fields: f)]).bytes))
        XCTAssertEqual(r.sealedValueCount, 1)
        XCTAssertEqual(ArchiveDocument(reader: r).objects[0].entries[0].value, .unknown(tag: 12, payload: good))
        expectFailure(RawArchive(keys: ["a"], names: ["x"], records: [record(ident: 0, fields: field(0, 12, lenPrefixed([UInt8](repeating: 0, count: 40))))]).bytes,
                      "corrupt", "shorter than its 41-byte")
        expectFailure(RawArchive(keys: ["a"], names: ["x"], records: [record(ident: 0, fields: field(0, 12, lenPrefixed([9] + [UInt8](repeating: 0, count: 40))))]).bytes,
                      "corrupt", "cannot be sealed")
        expectFailure(RawArchive(keys: ["a"], names: ["x"], records: [record(ident: 0, fields: field(0, 12, lenPrefixed([6] + [UInt8](repeating: 0, count: 40))))]).bytes,
                      "corrupt", "cannot be sealed")
    }

    // MARK: - Limits

    func testTreeDepthLimit() {
        func chain(_ n: Int) -> [UInt8] {
            var recs: [[UInt8]] = [record(ident: 0, fields: [])]
            for _ in 1..<n { recs.append(record(ident: 0, delta: 1, fields: [])) }
            return RawArchive(names: ["x"], records: recs).bytes
        }
        // 65536 records: the last is at depth 65535, the deepest allowed
        // (the engine registers the same chain and no deeper).
        let ok = chain(ArchiveLimits.maxTreeDepth)
        let r = accept(ok)
        XCTAssertEqual(r?.depth(ofRecord: ArchiveLimits.maxTreeDepth - 1), ArchiveLimits.maxTreeDepth - 1)
        expectFailure(chain(ArchiveLimits.maxTreeDepth + 1), "limit", "record 65536", "65537 records long")
    }

    func testValuesPerRecordLimit() {
        let n = ArchiveLimits.maxValuesPerRecord
        let keys = (0...n).map { "k\($0)" }
        var f: [UInt8] = []
        f.reserveCapacity(4 * (n + 1))
        for i in 0..<n { f += field(i, 0) }
        XCTAssertNotNil(accept(RawArchive(keys: keys, names: ["a"], records: [record(ident: 0, fields: f)]).bytes))
        f += field(n, 0)
        expectFailure(RawArchive(keys: keys, names: ["a"], records: [record(ident: 0, fields: f)]).bytes,
                      "limit", "more than 65536 values")
        // The writer refuses the 65537th value too.
        var w = ArchiveWriter()
        w.begin("a")
        var ks: [UInt32] = []
        for i in 0...n { ks.append(w.key("k\(i)")) }
        for i in 0..<n { XCTAssertNoThrow(try w.writeBool(ks[i], true)) }
        XCTAssertThrowsError(try w.writeBool(ks[n], true)) { e in
            guard case WriteFailure.limit = e as! WriteFailure else { return XCTFail("\(e)") }
        }
    }
}
