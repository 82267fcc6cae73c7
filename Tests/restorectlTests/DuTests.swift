// restorectl du (library 1.2, size budgets): the tree by size, --depth,
// --by class, --json, and the subtrees a budget trimmed.
import Foundation
import RestorationArchive
import XCTest

final class RestorectlDuTests: XCTestCase {
    /// App (Window) { Small (Leaf, 50 B), Big (Leaf, 900 B) { Kid (Leaf) } },
    /// Other (no class); App lists the trimmed subtree App/Gone (budget 4000).
    static func archive() throws -> [UInt8] {
        let list = TrimmedList(budget: 4000, entries: [TrimmedList.Entry(path: "App/Gone", className: "Leaf")])
        let doc = ArchiveDocument(info: ArchiveInfo(appVersion: "1.0", savedAtMs: 1), objects: [
            ArchiveObject(identifier: "App", className: "Window",
                          entries: [ArchiveEntry(key: "rst.trimmed", value: .unknown(tag: TrimmedList.rawTag, payload: list.payload()))]),
            ArchiveObject(identifier: "Small", parent: 0, className: "Leaf",
                          entries: [ArchiveEntry(key: "pad", value: .string(String(repeating: "s", count: 50)))]),
            ArchiveObject(identifier: "Big", parent: 0, className: "Leaf",
                          entries: [ArchiveEntry(key: "pad", value: .string(String(repeating: "b", count: 900)))]),
            ArchiveObject(identifier: "Kid", parent: 2, className: "Leaf",
                          entries: [ArchiveEntry(key: "pad", value: .string(String(repeating: "k", count: 10)))]),
            ArchiveObject(identifier: "Other", className: nil,
                          entries: [ArchiveEntry(key: "pad", value: .string("o"))]),
        ])
        return try doc.encode()
    }

    func testTreeLargestFirstWithTrimmedSubtrees() throws {
        let dir = TempDir("du")
        let a = dir.file("a.rst")
        let bytes = try Self.archive()
        Archives.write(bytes, to: a)
        let r = try expect(0, ["du", a])
        XCTAssertTrue(r.stdout.contains("\(bytes.count) bytes"), r.stdout)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        func index(_ s: String) -> Int? { lines.firstIndex { $0.contains(s) } }
        let app = try XCTUnwrap(index("  App  (Window)")), big = try XCTUnwrap(index("App/Big  (Leaf)"))
        let kid = try XCTUnwrap(index("App/Big/Kid")), small = try XCTUnwrap(index("App/Small"))
        let other = try XCTUnwrap(index("  Other"))
        XCTAssertTrue(app < big && big < kid && kid < small && small < other, r.stdout)
        XCTAssertTrue(lines[big].contains("KiB") || lines[big].contains(" B"), lines[big])
        XCTAssertTrue(r.stdout.contains("size budget of 4000 bytes"), r.stdout)
        XCTAssertTrue(r.stdout.contains("  App/Gone  (Leaf)"), r.stdout)
        // --depth 0: the roots only.
        let d = try expect(0, ["du", "--depth", "0", a])
        XCTAssertFalse(d.stdout.contains("App/Big"), d.stdout)
        XCTAssertTrue(d.stdout.contains("Other"), d.stdout)
        try expect(2, ["du", "--depth", "-1", a])
        try expect(2, ["du", "--plugins", dir.path, a])
    }

    func testJSONAddsUpExactly() throws {
        let dir = TempDir("du-json")
        let a = dir.file("a.rst")
        let bytes = try Self.archive()
        Archives.write(bytes, to: a)
        let r = try expect(0, ["du", "--json", a])
        let j = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(j["bytes"] as? Int, bytes.count)
        XCTAssertEqual(j["records"] as? Int, 5)
        XCTAssertEqual(j["budget"] as? Int, 4000)
        let trimmed = try XCTUnwrap(j["trimmed"] as? [[String: Any]])
        XCTAssertEqual(trimmed.first?["path"] as? String, "App/Gone")
        let tree = try XCTUnwrap(j["tree"] as? [[String: Any]])
        XCTAssertEqual(tree.map { $0["path"] as? String }, ["App", "App/Big", "App/Big/Kid", "App/Small", "Other"])
        XCTAssertEqual(tree.map { $0["depth"] as? Int }, [0, 1, 2, 1, 0])
        XCTAssertEqual(tree[1]["parent"] as? String, "App")
        XCTAssertTrue(tree[0]["parent"] is NSNull)
        let roots = tree.filter { $0["parent"] is NSNull }
        let rootSum = roots.reduce(0) { $0 + ($1["subtree_bytes"] as! Int) }
        XCTAssertEqual(rootSum + (j["overhead_bytes"] as! Int), bytes.count)
        XCTAssertEqual(tree[1]["subtree_bytes"] as? Int, (tree[1]["own_bytes"] as! Int) + (tree[2]["own_bytes"] as! Int))
        XCTAssertTrue(tree[4]["class"] is NSNull)
        let shallow = try expect(0, ["du", "--json", "--depth", "0", a])
        let sj = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(shallow.stdout.utf8)) as? [String: Any])
        XCTAssertEqual((sj["tree"] as? [[String: Any]])?.count, 2)
    }

    func testByClass() throws {
        let dir = TempDir("du-class")
        let a = dir.file("a.rst")
        let bytes = try Self.archive()
        Archives.write(bytes, to: a)
        let r = try expect(0, ["du", "--by", "class", a])
        let leaf = try XCTUnwrap(r.stdout.split(separator: "\n").first { $0.hasSuffix("  Leaf") })
        XCTAssertTrue(leaf.contains(" 3 "), String(leaf))
        XCTAssertTrue(r.stdout.contains("(no class)"), r.stdout)
        let j = try expect(0, ["du", "--by", "class", "--json", a])
        let o = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [String: Any])
        let classes = try XCTUnwrap(o["classes"] as? [[String: Any]])
        XCTAssertEqual(classes.first?["class"] as? String, "Leaf")
        XCTAssertEqual(classes.first?["records"] as? Int, 3)
        let sum = classes.reduce(0) { $0 + ($1["own_bytes"] as! Int) }
        XCTAssertEqual(sum + (o["overhead_bytes"] as! Int), bytes.count)
        // An empty plugin directory: no class comes from a plugin.
        let p = try expect(0, ["du", "--by", "class", "--plugins", dir.path, a])
        XCTAssertTrue(p.stdout.contains("Leaf (no plugin)"), p.stdout)
        let help = try expect(0, ["du", "--help"])
        XCTAssertTrue(help.stdout.contains("--by"), help.stdout)
    }

    /// `why` on a trimmed path (or below one) explains it instead of "not found".
    func testWhyExplainsATrimmedPath() throws {
        let dir = TempDir("du-why")
        let a = dir.file("a.rst")
        Archives.write(try Self.archive(), to: a)
        let r = try expect(0, ["why", a, "App/Gone"])
        XCTAssertTrue(r.stdout.contains("RST_SKIP_TRIMMED"), r.stdout)
        XCTAssertTrue(r.stdout.contains("size budget of 4000 bytes"), r.stdout)
        let below = try expect(0, ["why", a, "App/Gone/Deep"])
        XCTAssertTrue(below.stdout.contains("ancestor 'App/Gone'"), below.stdout)
        try expect(3, ["why", a, "Nope"])
    }
}
