import XCTest
@testable import RestorationArchive
@testable import RestorationCore

/// Sensitivity.swift: the policy's lookup, the one branch an engine without
/// a policy pays, every sealable type round trip, and opened content checked
/// like archive data (hostile content is refused, never trusted).
final class SensitivityTests: XCTestCase {
    final class Box: ObjectBehavior {
        var onEncode: (Coder) -> Void = { _ in }
        var onDecode: (Coder) -> Void = { _ in }
        func encode(_ node: ObjectNode, _ coder: Coder) { onEncode(coder) }
        func decode(_ node: ObjectNode, _ coder: Coder) { onDecode(coder) }
        func finished(_ node: ObjectNode) {}
        func released(_ node: ObjectNode) {}
        var instance: UnsafeMutableRawPointer? { nil }
    }

    private func k(_ s: String) -> KeyBytes {
        let p = UnsafeMutableRawBufferPointer.allocate(byteCount: s.utf8.count, alignment: 1)
        p.copyBytes(from: Array(s.utf8))
        leaked.append(p)
        return KeyBytes(UnsafeRawBufferPointer(p))
    }
    private var leaked: [UnsafeMutableRawBufferPointer] = []
    override func tearDown() { leaked.forEach { $0.deallocate() } }

    private func withKey(_ e: Engine, _ byte: UInt8) {
        e.setEncryptionKeyProvider { key in
            for i in key.indices { key[i] = byte }
            return true
        }
    }

    func testPolicyLookupClassWinsOverEveryClassAndNormalRemoves() {
        let room = SensitivityRoom()
        XCTAssertFalse(room.hasPolicy)
        room.set(className: nil, key: Array("a".utf8), .secret)
        room.set(className: "C", key: Array("a".utf8), .local)
        XCTAssertTrue(room.hasPolicy)
        XCTAssertEqual(room.policy(className: "C", key: Array("a".utf8)), .local)
        XCTAssertEqual(room.policy(className: "D", key: Array("a".utf8)), .secret)
        XCTAssertEqual(room.policy(className: nil, key: Array("a".utf8)), .secret)
        XCTAssertEqual(room.policy(className: nil, key: Array("b".utf8)), .normal)
        room.set(className: nil, key: Array("a".utf8), .normal)
        room.set(className: "C", key: Array("a".utf8), .normal)
        XCTAssertFalse(room.hasPolicy)
    }

    func testAnEngineWithoutPolicyNeverAsksTheRoom() throws {
        let e = Engine(configuration: .init())
        let box = Box()
        var on: [Bool] = []
        box.onEncode = { [unowned self] c in
            on.append(c.sensitivityOn)
            try! c.encodeInt(self.k("i"), 1)
            on.append(c.sensitivityOn)
        }
        try e.register(identifier: "Obj", parent: nil, className: nil, behavior: box)
        _ = try e.saveToBytes()
        XCTAssertEqual(on, [false, false])
        e.setKeySensitivity(className: nil, key: Array("x".utf8), .secret)
        on = []
        _ = try e.saveToBytes()
        XCTAssertEqual(on, [true, true])
    }

    func testEverySealableTypeRoundTripsSealed() throws {
        let a = Engine(configuration: .init())
        withKey(a, 3)
        for name in ["b", "i", "d", "s", "y", "ia", "sa", "r", "o"] { a.setKeySensitivity(className: nil, key: Array(name.utf8), .encrypted) }
        let box = Box()
        box.onEncode = { [unowned self] c in
            try! c.encodeBool(self.k("b"), true)
            try! c.encodeInt(self.k("i"), Int64.min)
            try! c.encodeDouble(self.k("d"), -0.0)
            try! Array("tëxt".utf8).withUnsafeBytes { try c.encodeString(self.k("s"), $0) }
            try! [UInt8]([0, 1, 255]).withUnsafeBytes { try c.encodeBytes(self.k("y"), $0) }
            try! [Int64(5), -6, Int64.max].withUnsafeBufferPointer { try c.encodeIntArray(self.k("ia"), $0) }
            let x = Array("x".utf8), empty: [UInt8] = []
            try! x.withUnsafeBytes { xb in try empty.withUnsafeBytes { eb in try c.encodeStringArray(self.k("sa"), [xb, eb]) } }
            try! c.encodeBeginRecord(self.k("r"))
            try! c.encodeInt(self.k("n"), 9)
            try! c.encodeEndRecord()
            try! [UInt8]([0x2F, 0xFF, 0x61]).withUnsafeBytes { try c.encodeOSString(self.k("o"), $0) }
        }
        try a.register(identifier: "Obj", parent: nil, className: "K", behavior: box)
        let bytes = try a.saveToBytes()
        let reader = try ArchiveReader(bytes: bytes)
        XCTAssertEqual(reader.sealedValueCount, 9)   // 8 values + the one inside "r"
        let b = Engine(configuration: .init())
        withKey(b, 3)
        let box2 = Box()
        var got: [String] = []
        box2.onDecode = { [unowned self] c in
            got.append("\(try! c.decodeBool(self.k("b")))")
            got.append("\(try! c.decodeInt(self.k("i")))")
            got.append("\(try! c.decodeDouble(self.k("d")).sign == .minus)")
            got.append(try! c.decodeString(self.k("s")))
            got.append("\(Array(try! c.decodeBytes(self.k("y"))))")
            got.append("\(try! c.decodeIntArray(self.k("ia")))")
            got.append("\(try! c.decodeStringArray(self.k("sa")))")
            try! c.decodeBeginRecord(self.k("r"))
            got.append("\(try! c.decodeInt(self.k("n")))")
            try! c.decodeEndRecord()
            got.append("\(Array(try! c.decodeOSStringBytes(self.k("o"))))")
        }
        try b.register(identifier: "Obj", parent: nil, className: "K", behavior: box2)
        try bytes.withUnsafeBytes { try b.restore(bytes: $0) }
        XCTAssertEqual(got, ["true", "\(Int64.min)", "true", "tëxt", "[0, 1, 255]", "[5, -6, \(Int64.max)]", "[\"x\", \"\"]", "9", "[47, 255, 97]"])
    }

    func testOpenedContentIsCheckedLikeArchiveData() {
        // (tag, content): each is refused, none traps.
        let hostile: [(UInt8, [UInt8])] = [
            (0, [1]),                                   // a bool with content
            (2, []), (2, [0x80]), (2, [1, 2]),          // no varint, cut off, trailing
            (2, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02]),   // overflows 64 bits
            (3, [1, 2, 3]),                             // a double of 3 bytes
            (4, [0x61, 0x00]), (4, [0xC3]),             // NUL, cut-off UTF-8
            (7, [0xFF, 0xFF, 0xFF, 0xFF, 0x0F]),        // a count far past the bytes
            (7, [2, 1]),                                // one element short
            (8, [1, 5, 0x61]),                          // a length past the end
            (8, [1, 1, 0x00]),                          // NUL in an element
            (11, [0x61, 0x00]),                         // NUL in an OS string
            (6, [0]), (9, []), (10, [0]), (12, []),     // never sealed
        ]
        for (tag, content) in hostile {
            XCTAssertNil(SensitivityRoom.value(tag: tag, content), "tag \(tag) \(content)")
        }
        XCTAssertEqual(SensitivityRoom.value(tag: 2, [3]), .int(-2))
        XCTAssertEqual(SensitivityRoom.value(tag: 8, [2, 1, 0x61, 0]), .stringArray(["a", ""]))
    }

    func testLocalMarksParseStrictly() {
        XCTAssertEqual(SensitivityRoom.markedKeys([2, 1, 0x61, 2, 0x62, 0x63]), ["a", "bc"])
        XCTAssertNil(SensitivityRoom.markedKeys([0xDE, 0xAD, 0xBE, 0xEF]))
        XCTAssertNil(SensitivityRoom.markedKeys([1, 5, 0x61]))
        XCTAssertNil(SensitivityRoom.markedKeys([1, 1, 0x61, 0x00]))   // trailing byte
    }

    func testTheKeyIsAskedOncePerSaveAndNotWithoutSealedValues() throws {
        let e = Engine(configuration: .init())
        var asked = 0
        e.setEncryptionKeyProvider { key in asked += 1; for i in key.indices { key[i] = 1 }; return true }
        e.setKeySensitivity(className: nil, key: Array("t".utf8), .encrypted)
        let box = Box()
        var encrypted = true
        box.onEncode = { [unowned self] c in
            if encrypted { for n in 0..<5 { try! c.encodeInt(self.k("t\(n)"), 1); try! c.encodeInt(self.k("t"), 2) ; break } }
            try! c.encodeInt(self.k("u"), 3)
        }
        try e.register(identifier: "A", parent: nil, className: nil, behavior: box)
        try e.register(identifier: "B", parent: nil, className: nil, behavior: box)
        let bytes = try e.saveToBytes()
        XCTAssertEqual(asked, 1)
        encrypted = false
        _ = try e.saveToBytes()
        XCTAssertEqual(asked, 1)
        // A restore asks once, whatever the number of sealed values.
        try bytes.withUnsafeBytes { try e.restore(bytes: $0) }
        XCTAssertEqual(asked, 2)
    }

    func testEveryValueGetsItsOwnNonce() throws {
        let e = Engine(configuration: .init())
        withKey(e, 9)
        for n in 0..<300 { e.setKeySensitivity(className: nil, key: Array("v\(n)".utf8), .encrypted) }
        let box = Box()
        box.onEncode = { [unowned self] c in
            for n in 0..<300 { try! c.encodeInt(self.k("v\(n)"), 1) }   // more than one batch of nonces
        }
        try e.register(identifier: "A", parent: nil, className: nil, behavior: box)
        var nonces = Set<[UInt8]>()
        for _ in 0..<2 {
            let doc = ArchiveDocument(reader: try ArchiveReader(bytes: try e.saveToBytes()))
            for entry in doc.objects[0].entries {
                guard case .unknown(12, let p) = entry.value else { return XCTFail("\(entry)") }
                nonces.insert(Array(p[1..<25]))
            }
        }
        XCTAssertEqual(nonces.count, 600)
    }

    func testAPolicyChangedDuringASaveWaitsForTheNextOne() throws {
        let e = Engine(configuration: .init())
        e.setKeySensitivity(className: nil, key: Array("a".utf8), .secret)
        let box = Box()
        box.onEncode = { [unowned self] c in
            c.engine.setKeySensitivity(className: nil, key: Array("a".utf8), .normal)   // from a callback
            c.engine.setKeySensitivity(className: nil, key: Array("b".utf8), .secret)
            try! c.encodeInt(self.k("a"), 1)
            try! c.encodeInt(self.k("b"), 2)
        }
        try e.register(identifier: "A", parent: nil, className: nil, behavior: box)
        var doc = ArchiveDocument(reader: try ArchiveReader(bytes: try e.saveToBytes()))
        XCTAssertEqual(doc.objects[0].entries.map(\.key), ["b"])        // the policy the save began with
        box.onEncode = { [unowned self] c in
            try! c.encodeInt(self.k("a"), 1)
            try! c.encodeInt(self.k("b"), 2)
        }
        doc = ArchiveDocument(reader: try ArchiveReader(bytes: try e.saveToBytes()))
        XCTAssertEqual(doc.objects[0].entries.map(\.key), ["a"])        // the changed one
    }
}
