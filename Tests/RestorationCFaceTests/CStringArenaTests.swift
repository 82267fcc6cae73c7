// The C-string arena behind rst_decode_string: every copy is the value's
// bytes and a NUL, and no copy touches another (short copies are two
// overlapping word moves).
import XCTest
@testable import RestorationCFace

final class CStringArenaTests: XCTestCase {
    func testCopiesOfEveryShortLengthAreExactAndApart() {
        let arena = CStringArena()
        var kept: [(UnsafePointer<CChar>, [UInt8])] = []
        var g = SystemRandomNumberGenerator()
        // Enough copies to fill more than one 64 KiB chunk.
        for round in 0..<400 {
            for n in 0...40 {
                let bytes = (0..<n).map { _ in UInt8.random(in: 1...255, using: &g) }
                let p = bytes.withUnsafeBytes { arena.copy($0) }
                kept.append((p, bytes))
                if round == 0 || n % 7 == 0 {
                    XCTAssertEqual(Array(UnsafeRawBufferPointer(start: p, count: n)), bytes, "n \(n)")
                    XCTAssertEqual(UnsafeRawPointer(p).load(fromByteOffset: n, as: UInt8.self), 0, "n \(n)")
                }
            }
        }
        // Every copy is still intact after all the others.
        for (p, bytes) in kept {
            XCTAssertEqual(Array(UnsafeRawBufferPointer(start: p, count: bytes.count)), bytes)
            XCTAssertEqual(UnsafeRawPointer(p).load(fromByteOffset: bytes.count, as: UInt8.self), 0)
        }
        arena.reset()
    }
}
