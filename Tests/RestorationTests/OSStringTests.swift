import Foundation
import XCTest
@testable import Restoration

/// File names are bytes: encodeOSString / decodeOSString in the Swift API.
final class OSStringTests: XCTestCase {
    private let latin1: [UInt8] = [0x63, 0x61, 0x66, 0xE9]   // "caf\xe9"

    func testOSStringsRoundTripWithTheirOwnType() throws {
        try roundTrip(encode: { c in
            try c.encodeOSString(self.latin1, forKey: "name")
            try c.encodeOSString(Array("café".utf8), forKey: "utf8")
            try c.encodeOSString([], forKey: "empty")
            try c.encode("plain", forKey: "plain")
            try c.encode(3, forKey: "n")
        }, decode: { c in
            XCTAssertEqual(try c.valueType(forKey: "name"), .osString)
            XCTAssertEqual(try c.decodeOSString(forKey: "name"), self.latin1)
            XCTAssertEqual(try c.decodeOSString(forKey: "empty"), [])
            XCTAssertEqual(try c.decodeOSString(forKey: "plain"), Array("plain".utf8), "a string reads as an OS string")
            XCTAssertNil(try c.decodeOSString(forKey: "missing"))
            XCTAssertThrowsError(try c.decodeOSString(forKey: "n")) { e in
                guard case RestorationError.type = e else { return XCTFail("\(e)") }
            }
            // As a string only when it is UTF-8; as bytes always.
            XCTAssertEqual(try c.decode(String.self, forKey: "utf8"), "café")
            XCTAssertThrowsError(try c.decode(String.self, forKey: "name")) { e in
                guard case RestorationError.type(let m) = e else { return XCTFail("\(e)") }
                XCTAssertTrue(m.contains("not valid UTF-8") && m.contains("'name'"), m)
            }
            XCTAssertEqual(try c.decode(Data.self, forKey: "name"), Data(self.latin1))
        })
    }

    func testNULIsInvalidAndFailsTheSave() throws {
        let engine = try RestorationEngine()
        let p = Probe("P")
        p.onEncode = { c in try c.encodeOSString([0x61, 0, 0x62], forKey: "bad") }
        try engine.register(p)
        XCTAssertThrowsError(try engine.saveToData()) { e in
            guard case RestorationError.invalid(let m) = e else { return XCTFail("\(e)") }
            XCTAssertTrue(m.contains("NUL") && m.contains("'bad'"), m)
        }
    }
}
