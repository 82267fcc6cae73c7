// restorectl and sensitive values: inspect shows a sealed value's size,
// --json its bytes in base64, save --from writes them back unchanged, diff
// compares them, and export --portable leaves out sealed values and the
// values a record marks LOCAL.
import Foundation
import RestorationArchive
import XCTest

final class SensitiveTests: XCTestCase {
    static func marks(_ keys: [String]) -> [UInt8] {
        var p: [UInt8] = [UInt8(keys.count)]
        for k in keys { p.append(UInt8(k.utf8.count)); p += Array(k.utf8) }
        return p
    }

    /// One object: a sealed token, a LOCAL path (marked), an int, and a nested
    /// record with a sealed value of its own.
    static func archive(sealedByte: UInt8 = 0xA5) throws -> (bytes: [UInt8], sealed: [UInt8]) {
        var w = ArchiveWriter()
        func k(_ s: String) -> UInt32 { s.utf8.withContiguousStorageIfAvailable { w.key(UnsafeRawBufferPointer($0)) }! }
        func n(_ s: String) -> UInt32 { s.utf8.withContiguousStorageIfAvailable { w.name(UnsafeRawBufferPointer($0)) }! }
        let sealed = [UInt8(4)] + [UInt8](repeating: sealedByte, count: 24 + 16 + 5)
        w.beginObject(identifier: n("form"), parent: nil, className: n("Form"))
        try sealed.withUnsafeBytes { try w.writeUnknown(k("token"), tag: 12, payload: $0) }
        try Array("/home/alice/doc".utf8).withUnsafeBytes { try w.writeString(k("path"), $0) }
        try w.writeInt(k("n"), 42)
        try w.beginRecord(k("inner"))
        try sealed.withUnsafeBytes { try w.writeUnknown(k("token"), tag: 12, payload: $0) }
        try w.writeInt(k("m"), 1)
        try w.endRecord()
        try marks(["path"]).withUnsafeBytes { try w.writeUnknown(k("rst.local"), tag: 14, payload: $0) }
        try w.endObject()
        return (try w.finish(info: Archives.info), sealed)
    }

    func testInspectJSONSaveAndDiffKeepSealedBytes() throws {
        let dir = TempDir("sealed")
        let (bytes, sealed) = try SensitiveTests.archive()
        let a = dir.file("a.rst"), b = dir.file("b.rst"), c = dir.file("c.rst")
        Archives.write(bytes, to: a)
        let text = try expect(0, ["inspect", a])
        XCTAssertTrue(text.stdout.contains("token: <sealed, \(sealed.count) bytes>"), text.stdout)
        XCTAssertTrue(text.stdout.contains("<LOCAL keys: "), text.stdout)
        let json = try expect(0, ["inspect", "--json", a])
        XCTAssertTrue(json.stdout.contains("\"type\": \"sealed\""), json.stdout)
        XCTAssertTrue(json.stdout.contains("\"value\": {\"sealed\": \"\(Data(sealed).base64EncodedString())\"}"), json.stdout)
        try expect(0, ["save", "--from", "-", "--out", b], stdin: json.stdoutBytes)
        let copy = try ArchiveDocument(bytes: [UInt8](FileManager.default.contents(atPath: b)!))
        XCTAssertEqual(copy.objects[0].entries[0].value, .unknown(tag: 12, payload: sealed))
        try expect(0, ["diff", a, b])
        Archives.write(try SensitiveTests.archive(sealedByte: 0xA6).bytes, to: c)
        let d = try expect(1, ["diff", a, c])
        XCTAssertTrue(d.stdout.contains("token"), d.stdout)
        // A sealed value too short in hand-edited JSON is refused with its path.
        let bad = json.stdout.replacingOccurrences(of: Data(sealed).base64EncodedString(), with: "AAAA")
        let r = try ctl(["save", "--from", "-", "--out", dir.file("d.rst")], stdin: Array(bad.utf8))
        XCTAssertNotEqual(r.code, 0)
        XCTAssertTrue(r.stderr.contains("too few for a sealed value"), r.stderr)
    }

    func testPortableExportLeavesOutSealedAndLocalValues() throws {
        let dir = TempDir("export")
        let (bytes, _) = try SensitiveTests.archive()
        let a = dir.file("a.rst"), p = dir.file("p.rst"), same = dir.file("same.rst")
        Archives.write(bytes, to: a)
        try expect(0, ["export", "--portable", a, p])
        let doc = try ArchiveDocument(bytes: [UInt8](FileManager.default.contents(atPath: p)!))
        let keys = doc.objects[0].entries.map(\.key)
        XCTAssertEqual(keys, ["n", "inner"])
        XCTAssertEqual(doc.objects[0].entries[1].value, .record([ArchiveEntry(key: "m", value: .int(1))]))
        XCTAssertFalse(String(decoding: FileManager.default.contents(atPath: p)!, as: UTF8.self).contains("/home/alice"))
        try expect(0, ["export", a, same])
        try expect(0, ["diff", a, same])
        try expect(3, ["export", "--portable", dir.file("missing.rst"), p])
    }
}
