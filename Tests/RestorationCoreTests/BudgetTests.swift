import XCTest
import Foundation
import RestorationArchive
@testable import RestorationCore

/// Budget.swift: TRIM's choice (a child of lower priority than its parent,
/// then the parent: only the top is listed), references and object arrays
/// to trimmed objects dropped, sizes exact against the archive.
final class BudgetTests: XCTestCase {
    struct Pad: ObjectBehavior {
        let bytes: Int
        var refs: () -> [ObjectNode] = { [] }
        func encode(_ node: ObjectNode, _ coder: Coder) {
            let b = [UInt8](repeating: 7, count: bytes)
            b.withUnsafeBytes { try? coder.encodeBytes(key("pad"), $0) }
            let r = refs()
            if let first = r.first { try? coder.encodeObject(key("ref"), first) }
            if !r.isEmpty { try? coder.encodeObjectArray(key("all"), r) }
        }
        func decode(_ node: ObjectNode, _ coder: Coder) {}
        func finished(_ node: ObjectNode) {}
        func released(_ node: ObjectNode) {}
        var instance: UnsafeMutableRawPointer? { nil }
    }

    func testTrimTopsAndDroppedReferences() throws {
        func build(_ e: Engine) throws -> [String: ObjectNode] {
            var nodes: [String: ObjectNode] = [:]
            let root = try e.register(identifier: "R", parent: nil, className: nil,
                                      behavior: Pad(bytes: 10, refs: { [nodes["P"]!, nodes["Q"]!] }))
            nodes["R"] = root
            nodes["P"] = try e.register(identifier: "P", parent: root, className: "T", behavior: Pad(bytes: 600))
            nodes["C"] = try e.register(identifier: "C", parent: nodes["P"], className: "T", behavior: Pad(bytes: 300))
            nodes["Q"] = try e.register(identifier: "Q", parent: root, className: "T", behavior: Pad(bytes: 200))
            return nodes
        }
        let plain = Engine(configuration: .init())
        let plainNodes = try build(plain)
        let full = try plain.saveToBytes()
        withExtendedLifetime(plainNodes) {}

        var config = Engine.Configuration()
        config.sizeBudget = UInt64(full.count - 700)
        config.budgetPolicy = .trim
        let e = Engine(configuration: config)
        let nodes = try build(e)
        e.setPriority(-5, of: nodes["C"]!)   // C first (300), then the largest of priority 0: P (with C)
        let bytes = try e.saveToBytes()
        XCTAssertLessThanOrEqual(bytes.count, full.count - 700)
        let sizes = e.lastSaveSizes
        XCTAssertEqual(sizes.map(\.path), ["R", "R/P", "R/P/C", "R/Q"])
        XCTAssertEqual(sizes.map(\.trimmed), [false, true, true, false])
        let reader = try ArchiveReader(bytes: bytes)
        XCTAssertEqual(TrimmedList(reader: reader)?.entries.map(\.path), ["R/P"])   // the top only
        XCTAssertEqual(TrimmedList(reader: reader)?.budget, UInt64(full.count - 700))
        // R's reference to P is gone; its array keeps Q only.
        let measured = RecordSizes(reader: reader)
        XCTAssertEqual(measured.own, sizes.filter { !$0.trimmed }.map(\.ownBytes))
        XCTAssertEqual(measured.subtree[0] + measured.overhead, UInt64(bytes.count))
        let doc = ArchiveDocument(reader: reader)
        XCTAssertNil(doc.objects[0].entries.first { $0.key == "ref" })
        XCTAssertEqual(doc.objects[0].entries.first { $0.key == "all" }?.value, .objectArray([1]))
        withExtendedLifetime(nodes) {}
    }
}

extension BudgetTests {
    /// A chain as deep as the format allows, the deeper the lower its
    /// priority: the save trims one record at a time from the bottom
    /// without quadratic work, and lists one top.
    func testDeepChainTrimsQuickly() throws {
        var config = Engine.Configuration()
        config.sizeBudget = 200
        config.budgetPolicy = .trim
        let e = Engine(configuration: config)
        var parent: ObjectNode? = nil
        var nodes: [ObjectNode] = []
        for d in 0..<RestorationLimits.maxTreeDepth {
            let n = try e.register(identifier: "n", parent: parent, className: nil, behavior: Pad(bytes: 1))
            n.priority = Int32(-d)
            nodes.append(n)
            parent = n
        }
        let start = Date()
        let bytes = try e.saveToBytes()
        XCTAssertLessThan(Date().timeIntervalSince(start), 30)
        XCTAssertLessThanOrEqual(bytes.count, 200)
        let list = TrimmedList(reader: try ArchiveReader(bytes: bytes))
        XCTAssertEqual(list?.entries.count, 1)
        // Deepest first: the chain is cut just below what fits.
        let top = list?.entries.first?.path ?? ""
        XCTAssertTrue(top.hasPrefix("n/n") && top.split(separator: "/").count < 64, top)
        withExtendedLifetime(nodes) {}
    }
}
