import XCTest
@testable import RestorationCore

/// Engine.runRestore's steps: one way to invoke a factory (either kind), one
/// result check, the fallback after a declining class, skips with
/// descendants, and the report.
final class RestoreStepsTests: XCTestCase {
    final class Plain: ObjectBehavior {
        var finished = 0
        func encode(_ node: ObjectNode, _ coder: Coder) {}
        func decode(_ node: ObjectNode, _ coder: Coder) {}
        func finished(_ node: ObjectNode) { finished += 1 }
        func released(_ node: ObjectNode) {}
        var instance: UnsafeMutableRawPointer? { nil }
    }

    /// An archive of Root/{A (class Decline), B (class Wrong), C (class Fail)/Kid, D (no class)}.
    private func archive() throws -> [UInt8] {
        let e = Engine(configuration: .init())
        let root = try e.register(identifier: "Root", parent: nil, className: nil, behavior: Plain())
        try e.register(identifier: "A", parent: root, className: "Decline", behavior: Plain())
        try e.register(identifier: "B", parent: root, className: "Wrong", behavior: Plain())
        let c = try e.register(identifier: "C", parent: root, className: "Fail", behavior: Plain())
        try e.register(identifier: "Kid", parent: c, className: nil, behavior: Plain())
        try e.register(identifier: "D", parent: root, className: nil, behavior: Plain())
        return try e.saveToBytes()
    }

    func testFactoriesFallbackResultCheckSkipsAndReport() throws {
        let bytes = try archive()
        let e = Engine(configuration: .init())
        var logs: [(LogLevel, String)] = []
        e.logHandler = { logs.append(($0, $1)) }
        try e.register(identifier: "Root", parent: nil, className: nil, behavior: Plain())
        var asked: [String] = []
        try e.registerClass("Decline") { req in asked.append("Decline \(req.path)"); return nil }
        try e.registerClass("Wrong") { req in
            asked.append("Wrong \(req.path)")
            // Registers elsewhere: not the object at the requested path.
            return try? req.engine.register(identifier: "Elsewhere", parent: req.parent, className: nil, behavior: Plain())
        }
        try e.registerClass("Fail") { req in
            asked.append("Fail \(req.path)")
            try? req.coder.failCallback(RestorationFailure(.io, "the model is gone"))
            return nil
        }
        e.setFallbackFactory { req in
            asked.append("fallback \(req.path)")
            guard req.identifier == "A" else { return nil }
            return try? req.engine.register(identifier: req.identifier, parent: req.parent, className: nil, behavior: Plain())
        }
        try bytes.withUnsafeBytes { raw in try e.restore(bytes: raw) }

        XCTAssertEqual(asked, ["Decline Root/A", "fallback Root/A", "Wrong Root/B", "fallback Root/B",
                               "Fail Root/C", "fallback Root/C", "fallback Root/D"])
        XCTAssertNotNil(e.find(path: "Root/A"), "the fallback made what the class declined")
        XCTAssertNil(e.find(path: "Root/B"), "an object at another path is not a result")
        XCTAssertNotNil(e.find(path: "Root/Elsewhere"), "what the factory registered stays")
        XCTAssertNil(e.find(path: "Root/C/Kid"))
        XCTAssertTrue(logs.contains { $0.0 == .warning && $0.1.contains("Root/B") && $0.1.contains("not the one registered") }, "\(logs)")
        XCTAssertTrue(logs.contains { $0.0 == .warning && $0.1.contains("the model is gone") }, "\(logs)")
        let report = try XCTUnwrap(e.lastRestoreReport)
        XCTAssertEqual(report.archived, 6)
        XCTAssertEqual(report.restored, 2)   // Root and A
        XCTAssertEqual(report.skipped, 4)    // B, C, Kid (with its parent), D
    }

    func testAFunctionFactoryIsInvokedWithTheSameRules() throws {
        let bytes = try archive()
        let e = Engine(configuration: .init())
        e.logHandler = { _, _ in }
        try e.register(identifier: "Root", parent: nil, className: nil, behavior: Plain())
        // A plain function (the kind the C face uses): declines everything.
        let declineAll: FactoryFunction = { _, _, id, coder, _ in
            precondition(id != nil && coder != nil)
            return nil
        }
        try e.registerClass("Decline", function: declineAll, context: nil)
        try bytes.withUnsafeBytes { raw in try e.restore(bytes: raw) }
        XCTAssertNil(e.find(path: "Root/A"))
        XCTAssertEqual(e.lastRestoreReport?.restored, 1)
    }
}
