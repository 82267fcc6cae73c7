// The plugin host table (RestorationPlugins/HostTable.swift) sets every
// member of rst_host_api: a new C function added to the header's table but
// not to the host's would reach plugins as NULL.
import XCTest
import Foundation
import CRestoration
@testable import RestorationPlugins

final class HostTableTests: XCTestCase {
    /// The function-pointer members the header declares, in order.
    func headerMembers() throws -> [String] {
        let header = try String(contentsOfFile: repoRoot + "/Include/restoration_plugin.h", encoding: .utf8)
        let start = try XCTUnwrap(header.range(of: "typedef struct rst_host_api {"))
        let end = try XCTUnwrap(header.range(of: "} rst_host_api;", range: start.upperBound..<header.endIndex))
        let body = header[start.upperBound..<end.lowerBound]
        var names: [String] = []
        var rest = Substring(body)
        while let r = rest.range(of: "(*") {
            let after = rest[r.upperBound...]
            guard let close = after.firstIndex(of: ")") else { break }
            names.append(String(after[..<close]).trimmingCharacters(in: .whitespaces))
            rest = after[close...]
        }
        return names
    }

    func testEveryMemberIsSet() throws {
        let table = restorationHostAPI.pointee
        let children = Array(Mirror(reflecting: table).children)
        let header = try headerMembers()
        XCTAssertGreaterThan(header.count, 50)
        let functions = children.filter { $0.label != "table_version" && $0.label != "table_size" }
        XCTAssertEqual(functions.compactMap(\.label), header, "the Swift view of rst_host_api and the header disagree")
        for child in functions {
            let m = Mirror(reflecting: child.value)
            XCTAssertEqual(m.displayStyle, .optional, child.label ?? "?")
            XCTAssertFalse(m.children.isEmpty, "rst_host_api.\(child.label ?? "?") is NULL in the host's table")
        }
        XCTAssertEqual(table.table_size, UInt32(MemoryLayout<rst_host_api>.size))
        XCTAssertEqual(table.table_version, UInt32(RST_HOST_API_VERSION))
    }
}
