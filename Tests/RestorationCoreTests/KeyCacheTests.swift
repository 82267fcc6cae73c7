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

    /// Short C keys (up to 8 bytes) are confirmed byte by byte without
    /// strlen: the same answers as measuring them (every length, a change
    /// at every position, shorter and longer keys at the same address), and
    /// no byte past a key's NUL is read: a shorter key that ends right
    /// before an unreadable page is a miss, not a fault.
    func testShortCKeysAgreeWithMeasuringThem() throws {
        let cache = KeyCache()
        defer { cache.destroy() }
        let buf = UnsafeMutablePointer<CChar>.allocate(capacity: 32)
        defer { buf.deallocate() }
        let p = UnsafeRawPointer(buf)
        func measured(_ cached: [UInt8]) -> Bool { strlen(buf) == cached.count && memcmp(buf, cached, cached.count) == 0 }
        for n in 1...9 {
            let cached = (0..<n).map { UInt8(ascii: "a") + UInt8($0) }
            var candidates: [[UInt8]] = [cached, Array(cached.dropLast()), cached + [0x7A], cached + cached]
            for i in 0..<n { var c = cached; c[i] = 0x5A; candidates.append(c) }
            for candidate in candidates where !candidate.isEmpty {
                cache.clear()
                memset(buf, 0, 32)
                memcpy(buf, cached, n)
                cache.store(cKey: UnsafeRawBufferPointer(start: p, count: n), 5)
                memset(buf, 0x41, 32)
                memcpy(buf, candidate, candidate.count)
                buf[candidate.count] = 0
                XCTAssertEqual(cache.lookup(cString: p) == 5, measured(cached), "cached \(cached), now \(candidate)")
            }
        }
        // "ab" + NUL as the last bytes before a page that cannot be read, at
        // the address where "abcdefg" was cached.
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let map = try XCTUnwrap(mmap(nil, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
        try XCTSkipIf(map == UnsafeMutableRawPointer(bitPattern: -1), "mmap failed")
        defer { munmap(map, 2 * page) }
        let at = map + page - 3
        memcpy(at, "abcdefg", 8)   // crosses into the second page while it is readable
        cache.clear()
        cache.store(cKey: UnsafeRawBufferPointer(start: at, count: 7), 9)
        XCTAssertEqual(cache.lookup(cString: at), 9)
        memcpy(at, "ab", 3)
        XCTAssertEqual(mprotect(map + page, page, PROT_NONE), 0)
        XCTAssertNil(cache.lookup(cString: at))
        memcpy(at - 5, "abcdefg", 8)   // NUL included: its last byte is the page's last
        cache.clear()
        cache.store(cKey: UnsafeRawBufferPointer(start: at - 5, count: 7), 9)
        XCTAssertEqual(cache.lookup(cString: at - 5), 9)
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
