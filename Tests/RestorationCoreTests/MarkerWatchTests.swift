@testable import RestorationCore
import XCTest

/// The crash-loop marker's `record=` field: what `enter` and `leave` write.
final class MarkerWatchTests: XCTestCase {
    private func field(_ body: (MarkerWatch) -> Void) -> [UInt8] {
        let buf = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 16)
        defer { buf.deallocate() }
        buf.initializeMemory(as: UInt8.self, repeating: 0xEE, count: 16)
        body(MarkerWatch(base: buf, offset: 3))   // an odd offset: unaligned stores
        return Array(UnsafeRawBufferPointer(start: buf, count: 16))
    }

    private func reference(_ r: Int) -> [UInt8] {
        let buf = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 16)
        defer { buf.deallocate() }
        buf.initializeMemory(as: UInt8.self, repeating: 0xEE, count: 16)
        MarkerWatch.storeDigitByDigit(buf + 3, r)
        return Array(UnsafeRawBufferPointer(start: buf, count: 16))
    }

    /// Ten zero-padded digits, the last ten of larger numbers, nothing
    /// written outside the field.
    func testEnterWritesTheLastTenDigits() {
        XCTAssertEqual(field { $0.enter(0) }, [0xEE, 0xEE, 0xEE] + Array("0000000000".utf8) + [0xEE, 0xEE, 0xEE])
        XCTAssertEqual(Array(field { $0.enter(1_234_567_890) }[3..<13]), Array("1234567890".utf8))
        XCTAssertEqual(Array(field { $0.enter(42) }[3..<13]), Array("0000000042".utf8))
        var values = Array(0..<120_000)
        values += [9_999_999_999, 10_000_000_000, 12_345_678_901_234, Int.max, 99_999_999, 100_000_000, 999_999_999]
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<100_000 { values.append(Int.random(in: 0...Int.max, using: &rng) >> Int.random(in: 0...62, using: &rng)) }
        for r in values {
            let got = field { $0.enter(r) }
            if got != reference(r) { XCTFail("record \(r): \(String(decoding: got[3..<13], as: UTF8.self))"); return }
        }
    }

    func testLeaveWritesDashesAndUnmapStopsStores() {
        XCTAssertEqual(field { $0.enter(77); $0.leave() }, [0xEE, 0xEE, 0xEE] + Array("----------".utf8) + [0xEE, 0xEE, 0xEE])
        XCTAssertEqual(field { $0.unmap(); $0.enter(5); $0.leave() }, [UInt8](repeating: 0xEE, count: 16))
    }
}
