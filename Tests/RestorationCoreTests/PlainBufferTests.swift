import XCTest
@testable import RestorationCore

/// PlainBuffer.swift: the growable buffer of plain values under the
/// planner's work lists and the migration plan, and the heap built on it.
final class PlainBufferTests: XCTestCase {
    func testAppendsGrowAndKeepEveryElementInOrder() {
        for minimum in [0, 1, 3, 64, 1000] {
            var b = PlainBuffer<(Int32, Int64)>()
            XCTAssertTrue(b.isEmpty)
            for i in 0..<300 { b.append((Int32(i), Int64(i) * 3), minimumCapacity: minimum) }
            XCTAssertEqual(b.count, 300)
            XCTAssertEqual(b.elements.map(\.0), (0..<300).map { Int32($0) }, "minimum \(minimum)")
            XCTAssertEqual(b.elements.map(\.1), (0..<300).map { Int64($0) * 3 })
            b[7] = (-1, -1)
            XCTAssertEqual(b[7].0, -1)
            XCTAssertEqual(b.removeLast().0, 299)
            XCTAssertEqual(b.count, 299)
            b.release()
            XCTAssertTrue(b.isEmpty)
            XCTAssertEqual(b.elements.count, 0)
            b.append((5, 5), minimumCapacity: 0)            // usable again after release
            XCTAssertEqual(b.elements.map(\.0), [5])
            b.release()
        }
    }

    func testTheHeapPopsInOrderWhateverThePushes() {
        var g = SystemRandomNumberGenerator()
        for n in [0, 1, 2, 17, 500] {
            var heap = MinHeap()
            let keys = (0..<n).map { _ in Int32.random(in: -50...50, using: &g) }
            for k in keys { heap.push(k) }
            var popped: [Int32] = []
            while heap.min != nil { popped.append(heap.pop()) }
            XCTAssertEqual(popped, keys.sorted(), "\(n) keys")
            heap.push(3)                                        // usable after emptying
            XCTAssertEqual(heap.min, 3)
            heap.release()
            XCTAssertNil(heap.min)
        }
    }
}
