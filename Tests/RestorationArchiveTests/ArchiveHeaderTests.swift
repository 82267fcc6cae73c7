import XCTest
@testable import RestorationArchive

/// The one description of the fixed header (docs/FORMAT.md): its offsets,
/// and reading and writing it agree with an archive built by hand.
final class ArchiveHeaderTests: XCTestCase {
    func testOffsetsAreTheFormats() {
        XCTAssertEqual(ArchiveHeader.magicOffset, 0)
        XCTAssertEqual(ArchiveHeader.versionOffset, 8)
        XCTAssertEqual(ArchiveHeader.flagsOffset, 10)
        XCTAssertEqual(ArchiveHeader.lengthOffset, 12)
        XCTAssertEqual(ArchiveHeader.infoOffset, 16)
        XCTAssertEqual(ArchiveHeader.size, ArchiveFormat.fixedHeaderBytes)
    }

    func testReadsAnArchiveBuiltByHand() {
        var raw = RawArchive()
        raw.flags = ArchiveFormat.flagRecordCarry
        let b = raw.bytes
        b.withUnsafeBytes { p in
            XCTAssertNil(ArchiveHeader.magicMismatch(p.baseAddress!))
            XCTAssertEqual(ArchiveHeader(reading: p.baseAddress!),
                           ArchiveHeader(version: 1, flags: ArchiveFormat.flagRecordCarry, length: UInt32(b.count)))
        }
        var wrong = b
        wrong[5] ^= 1
        wrong.withUnsafeBytes { XCTAssertEqual(ArchiveHeader.magicMismatch($0.baseAddress!), 5) }
    }

    func testWriteIsTheInverseOfRead() {
        let h = ArchiveHeader(flags: ArchiveFormat.flagRecordVersions | ArchiveFormat.flagRecordCarry, length: 0x0102_0304)
        var out = [UInt8](repeating: 0xEE, count: ArchiveHeader.size + 1)
        out.withUnsafeMutableBytes { h.write(to: $0.baseAddress!) }
        XCTAssertEqual(Array(out[0..<8]), ArchiveFormat.magic)
        XCTAssertEqual(Array(out[8..<16]), [1, 0, 3, 0, 4, 3, 2, 1])
        XCTAssertEqual(out[16], 0xEE, "nothing past the header is written")
        out.withUnsafeBytes { XCTAssertEqual(ArchiveHeader(reading: $0.baseAddress!), h) }
    }

    /// The writer's header is the one the validator reads back.
    func testWriterAndValidatorAgree() throws {
        var w = ArchiveWriter()
        w.recordVersions = true
        let name = Array("a".utf8).withUnsafeBytes { w.name($0) }
        w.beginObject(identifier: name, parent: nil, className: nil, version: 3)
        try w.endObject()
        let bytes = try w.finish(info: ArchiveInfo())
        bytes.withUnsafeBytes { p in
            let h = ArchiveHeader(reading: p.baseAddress!)
            XCTAssertEqual(h.flags, ArchiveFormat.flagRecordVersions)
            XCTAssertEqual(Int(h.length), bytes.count)
        }
        XCTAssertEqual(try ArchiveReader(bytes: bytes).version(ofRecord: 0), 3)
    }
}
