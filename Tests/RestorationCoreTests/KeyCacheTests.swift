import XCTest
@testable import RestorationCore

/// KeyCache: a key's address maps to its index, confirmed by its bytes.
final class KeyCacheTests: XCTestCase {
    func testHitsByAddressAndByBytes() {
        let cache = KeyCache()
        defer { cache.destroy() }
        let key: StaticString = "scroll"
        let p = UnsafeRawPointer(key.utf8Start)
        let bytes = UnsafeRawBufferPointer(start: p, count: key.utf8CodeUnitCount)
        XCTAssertNil(cache.lookup(bytes))
        cache.store(bytes, 7)
        XCTAssertEqual(cache.lookup(bytes), 7)
        cache.store(cKey: bytes, 7)
        XCTAssertEqual(cache.lookup(cString: p), 7)
        cache.clear()
        XCTAssertNil(cache.lookup(bytes))
        XCTAssertNil(cache.lookup(cString: p))
    }

    func testAReusedBufferHoldingAnotherKeyIsNeverMistakenForTheCachedOne() {
        let cache = KeyCache()
        defer { cache.destroy() }
        let buf = UnsafeMutablePointer<CChar>.allocate(capacity: 32)
        defer { buf.deallocate() }
        strcpy(buf, "first-key-longer-than-eight")
        let b1 = UnsafeRawBufferPointer(start: buf, count: strlen(buf))
        cache.store(cKey: b1, 1)
        XCTAssertEqual(cache.lookup(cString: UnsafeRawPointer(buf)), 1)
        strcpy(buf, "other-key-longer-than-eight")
        XCTAssertNil(cache.lookup(cString: UnsafeRawPointer(buf)), "same address, other bytes: a miss")
        strcpy(buf, "short")
        XCTAssertNil(cache.lookup(cString: UnsafeRawPointer(buf)))
    }

    func testAbsentKeysAreCachedAsAbsent() {
        let cache = KeyCache()
        defer { cache.destroy() }
        let key: StaticString = "missing"
        let b = UnsafeRawBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
        cache.store(b, KeyCache.absent)
        XCTAssertEqual(cache.lookup(b), KeyCache.absent)
    }
}
