// inspect --json | save --from - : the hand-editing round trip, byte for byte
// on values, on archives from the writer, from ArchiveDocument and from the
// real engine.
import Foundation
import RestorationArchive
import XCTest

final class RoundTripTests: XCTestCase {
    /// Values equal bit for bit (NaN payloads and -0.0 included), references by path.
    func assertSameValues(_ a: ArchiveDocument, _ b: ArchiveDocument, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(a.objects.count, b.objects.count, file: file, line: line)
        for (i, (x, y)) in zip(a.objects, b.objects).enumerated() {
            XCTAssertEqual(a.path(of: i), b.path(of: i), file: file, line: line)
            XCTAssertEqual(x.className, y.className, file: file, line: line)
            XCTAssertEqual(x.parent, y.parent, file: file, line: line)
            XCTAssertEqual(x.entries.count, y.entries.count, "\(a.path(of: i))", file: file, line: line)
            for (e, f) in zip(x.entries, y.entries) {
                XCTAssertEqual(e.key, f.key, file: file, line: line)
                XCTAssertTrue(e.value.isIdentical(to: f.value), "\(a.path(of: i)).\(e.key): \(e.value) != \(f.value)", file: file, line: line)
            }
        }
        XCTAssertEqual(a.info.appVersion, b.info.appVersion, file: file, line: line)
        XCTAssertEqual(a.info.systemVersion, b.info.systemVersion, file: file, line: line)
        XCTAssertEqual(a.info.idiom, b.info.idiom, file: file, line: line)
    }

    /// inspect --json A | save --from - --out B; inspect --json B equals the first.
    func roundTrip(_ bytes: [UInt8], _ dir: TempDir, name: String = "a") throws -> (json: String, doc: ArchiveDocument, bytes: [UInt8]) {
        let a = dir.file("\(name).rst"), b = dir.file("\(name)-copy.rst")
        Archives.write(bytes, to: a)
        let first = try expect(0, ["inspect", "--json", a])
        try expect(0, ["save", "--from", "-", "--out", b], stdin: first.stdoutBytes)
        let second = try expect(0, ["inspect", "--json", b])
        XCTAssertEqual(first.stdout, second.stdout, "the JSON of the copy differs")
        let copy = [UInt8](FileManager.default.contents(atPath: b) ?? Data())
        let original = try ArchiveDocument(bytes: bytes)
        let restored = try ArchiveDocument(bytes: copy)
        assertSameValues(original, restored)
        XCTAssertEqual(original.info.savedAtMs, restored.info.savedAtMs)
        return (first.stdout, restored, copy)
    }

    func testWriterArchiveRoundTripsExactly() throws {
        let dir = TempDir("rt-writer")
        let bytes = try Archives.everyType()
        let (json, _, copy) = try roundTrip(bytes, dir)
        // Saving the same JSON again gives the same bytes (save is deterministic).
        let (_, _, again) = try roundTrip(copy, dir, name: "again")
        XCTAssertEqual(again, copy, "save wrote different bytes for the same JSON")
        XCTAssertTrue(json.contains("\"value\": 9223372036854775807"), json)
        XCTAssertTrue(json.contains("\"value\": -9223372036854775808"), json)
        XCTAssertTrue(json.contains("\"value\": 9007199254740993"), json)
        XCTAssertTrue(json.contains("\"value\": \"nan\""), json)
        XCTAssertTrue(json.contains("\"value\": \"-inf\""), json)
        XCTAssertTrue(json.contains("\"value\": -0.0"), json)
        XCTAssertTrue(json.contains("\"type\": \"unknown\", \"tag\": 13, \"value\": \"deadbeef\""), json)
        XCTAssertTrue(json.contains("{\"key\": \"source\", \"type\": \"object\", \"value\": \"Tabs/Numbers\"}"), json)
    }

    func testEdgeNumbersKeepTheirBits() throws {
        let dir = TempDir("rt-numbers")
        let (_, doc, _) = try roundTrip(try Archives.everyType(), dir)
        let numbers = try XCTUnwrap(doc.objects.first { $0.identifier == "Numbers" })
        func value(_ key: String) -> ArchiveValue? { numbers.entries.first { $0.key == key }?.value }
        for (key, v) in Archives.ints {
            XCTAssertEqual(value("i_" + key), .int(v), key)
        }
        for (key, d) in Archives.doubles {
            guard case .double(let got)? = value("d_" + key) else { XCTFail("d_\(key) missing"); continue }
            XCTAssertEqual(got.bitPattern, d.bitPattern, "d_\(key): \(got) != \(d)")
        }
        XCTAssertEqual(value("ints"), .intArray([Int64.min, -1, 0, 1, Int64.max]))
    }

    func testDocumentArchiveRoundTrips() throws {
        let dir = TempDir("rt-doc")
        _ = try roundTrip(try Archives.small(extra: true), dir)
    }

    func testEmptyArchiveRoundTrips() throws {
        let dir = TempDir("rt-empty")
        _ = try roundTrip(try ArchiveDocument(info: Archives.info, objects: []).encode(), dir)
    }

    /// An archive saved by the real engine: restore (stand-ins decode every
    /// value through the coder), then save through the engine's own save.
    func testEngineSavedArchiveRoundTrips() throws {
        let dir = TempDir("rt-engine")
        let source = dir.file("source.rst"), resaved = dir.file("engine.rst")
        Archives.write(try Archives.everyType(), to: source)
        let r = try expect(0, ["restore", source, "--save-to", resaved])
        XCTAssertTrue(r.stdout.contains("future: a value of unknown type (tag 13) cannot be encoded"), r.stdout)
        let engineBytes = [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: resaved)))
        try expect(0, ["verify", resaved])
        let (_, copy, _) = try roundTrip(engineBytes, dir, name: "engine")

        // Every value the engine wrote is the one the source held (minus the
        // value of a future type, which the coder cannot write).
        let original = try ArchiveDocument(bytes: try Archives.everyType())
        XCTAssertEqual(copy.objects.count, original.objects.count)
        for (i, o) in original.objects.enumerated() {
            let c = copy.objects[i]
            XCTAssertEqual(original.path(of: i), copy.path(of: i))
            let kept = o.entries.filter { if case .unknown = $0.value { return false }; return true }
            XCTAssertEqual(kept.count, c.entries.count, original.path(of: i))
            for (e, f) in zip(kept, c.entries) {
                XCTAssertEqual(e.key, f.key)
                XCTAssertTrue(e.value.isIdentical(to: f.value), "\(original.path(of: i)).\(e.key): \(e.value) != \(f.value)")
            }
        }
        // The engine stamps the app version and idiom it was given (the archive's).
        XCTAssertEqual(copy.info.appVersion, Archives.info.appVersion)
        XCTAssertEqual(copy.info.idiom, Archives.info.idiom)
    }

    func testSaveNowStampsTheCurrentTime() throws {
        let dir = TempDir("rt-now")
        let a = dir.file("a.rst"), b = dir.file("b.rst")
        Archives.write(try Archives.small(), to: a)
        let json = try expect(0, ["inspect", "--json", a])
        try expect(0, ["save", "--now", "--quiet", "--from", "-", "--out", b], stdin: json.stdoutBytes)
        let doc = try ArchiveDocument(bytes: [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: b))))
        XCTAssertGreaterThan(doc.info.savedAtMs, Archives.info.savedAtMs)
        // Apart from the save time, the JSON is the same.
        let second = try expect(0, ["inspect", "--json", b])
        func dropTime(_ s: String) -> String {
            s.split(separator: "\n").filter { !$0.contains("\"saved_at_ms\"") }.joined(separator: "\n")
        }
        XCTAssertEqual(dropTime(json.stdout), dropTime(second.stdout))
    }

    /// State written by hand: forward references, nested records, all types.
    func testHandWrittenJSON() throws {
        let dir = TempDir("rt-hand")
        let json = """
            {"app_version": "3.0", "idiom": "kiosk", "saved_at_ms": 5,
             "objects": [
               {"path": "A", "class": "Root", "values": [
                 {"key": "next", "type": "object", "value": "A/B"},
                 {"key": "big", "type": "int", "value": -9223372036854775808},
                 {"key": "d", "type": "double", "value": 1e-7},
                 {"key": "raw", "type": "bytes", "value": "00FF7f"},
                 {"key": "r", "type": "record", "value": [{"key": "deep", "type": "record", "value": []}]}]},
               {"path": "A/B", "values": []}]}
            """
        let out = dir.file("hand.rst")
        try expect(0, ["save", "--from", "-", "--out", out], stdin: Array(json.utf8))
        let doc = try ArchiveDocument(bytes: [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: out))))
        XCTAssertEqual(doc.info.appVersion, "3.0")
        XCTAssertEqual(doc.info.savedAtMs, 5)
        XCTAssertEqual(doc.objects[0].entries.map(\.key), ["next", "big", "d", "raw", "r"])
        XCTAssertEqual(doc.objects[0].entries[0].value, .object(record: 1))
        XCTAssertEqual(doc.objects[0].entries[1].value, .int(Int64.min))
        XCTAssertEqual(doc.objects[0].entries[2].value, .double(1e-7))
        XCTAssertEqual(doc.objects[0].entries[3].value, .bytes([0, 255, 127]))
        XCTAssertEqual(doc.objects[1].className, nil)
        XCTAssertEqual(doc.objects[1].parent, 0)
    }

    /// Malformed JSON: exit 4 and a message naming the JSON path at fault.
    func testMalformedJSONNamesThePath() throws {
        let dir = TempDir("rt-bad")
        let out = dir.file("x.rst")
        let cases: [(String, Int32, String)] = [
            (#"{"objects": [{"path": "A"}, {"path": "B"}, {"path": "C"}, {"path": "D", "values": [{"key": "a", "type": "int", "value": 1}, {"key": "b", "type": "integer", "value": 2}]}]}"#,
             4, #"$.objects[3].values[1].type: unknown type "integer""#),
            (#"{"objects": [{"path": "A/B"}]}"#, 4, #"$.objects[0].path: the parent "A" must appear earlier"#),
            (#"{"objects": [{"path": "A", "values": [{"key": "k", "type": "int", "value": 1.5}]}]}"#, 4, "$.objects[0].values[0].value: 1.5 is not an integer"),
            (#"{"objects": [{"path": "A", "values": [{"key": "k", "type": "int", "value": 9223372036854775808}]}]}"#, 4, "$.objects[0].values[0].value: 9223372036854775808 is outside the int64 range"),
            (#"{"objects": [{"path": "A", "values": [{"key": "k", "type": "object", "value": "Nope"}]}]}"#, 4, #"$.objects[0].values[0].value: no object has the path "Nope""#),
            (#"{"objects": [{"path": "A", "values": [{"key": "k", "type": "bytes", "value": "abc"}]}]}"#, 4, "$.objects[0].values[0].value:"),
            (#"{"objects": [{"path": "A", "values": [{"key": "k", "type": "int", "value": 1}, {"key": "k", "type": "int", "value": 2}]}]}"#, 4, "$.objects[0].values[1].key:"),
            (#"{"objects": [{"path": "A",}]}"#, 4, "malformed JSON: $.objects[0]:"),
            (#"{"objects": [{"path": "A"}]"#, 4, "malformed JSON:"),
            (#"{"objects": [{"path": "A", "values": [{"key": "k", "type": "double", "value": "lots"}]}]}"#, 4, "$.objects[0].values[0].value:"),
            (#"{"objects": [{"path": "A", "colour": "red"}]}"#, 4, "$.objects[0].colour: unknown member"),
            (#"{"format_version": 2, "objects": []}"#, 5, "$.format_version: format version 2 is not supported"),
            ("{\"objects\": [{\"path\": \"\(String(repeating: "x", count: 300))\"}]}", 6, "$.objects[0].path:"),
            ("not json", 4, "malformed JSON: $: expected a value"),
        ]
        for (json, code, message) in cases {
            let r = try expect(code, ["save", "--from", "-", "--out", out], stdin: Array(json.utf8))
            XCTAssertTrue(r.stderr.contains(message), "expected \(message) in: \(r.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: out), "a failed save left a file")
        }
    }
}
