// The repository explains itself: comments, headers and docs point to a
// docs/ page that states the contract in the project's own words, never to
// a section number of a specification or an issue number that a reader of
// the repository cannot open; and every docs/ page they name exists.
import Foundation
import XCTest

final class DocsReferencesTests: XCTestCase {
    /// Where the rule holds: everything a reader of the repository reads.
    private static let roots = ["Sources", "Include", "docs", "Examples", "Toolkits", "Plugins",
                                "README.md", "Makefile"]

    /// Every text file under `roots` (build folders and hidden folders left out),
    /// with its path relative to the repository.
    private func textFiles() -> [(path: String, text: String)] {
        let fm = FileManager.default
        var out: [(String, String)] = []
        func visit(_ relative: String) {
            let full = Ctl.repo + "/" + relative
            var isDir: ObjCBool = false
            guard fm.fileExists(atPath: full, isDirectory: &isDir) else { return }
            if isDir.boolValue {
                let name = (relative as NSString).lastPathComponent
                if name.hasPrefix(".") || name == "build" { return }
                for child in ((try? fm.contentsOfDirectory(atPath: full)) ?? []).sorted() {
                    visit(relative + "/" + child)
                }
            } else if let data = fm.contents(atPath: full), !data.contains(0),
                      let text = String(data: data, encoding: .utf8) {
                out.append((relative, text))
            }
        }
        for root in Self.roots { visit(root) }
        return out
    }

    /// Lines of `files` matching `pattern`, as "path:line: text".
    private func hits(_ pattern: String, in files: [(path: String, text: String)]) throws -> [String] {
        let rx = try NSRegularExpression(pattern: pattern, options: [.caseInsensitive])
        var found: [String] = []
        for file in files {
            for (i, line) in file.text.components(separatedBy: "\n").enumerated() {
                let range = NSRange(line.startIndex..., in: line)
                if rx.firstMatch(in: line, range: range) != nil {
                    found.append("\(file.path):\(i + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        return found
    }

    func testTheWalkSeesTheRepository() {
        let paths = Set(textFiles().map(\.path))
        for expected in ["Include/restoration.h", "docs/ARCHITECTURE.md", "docs/EVOLUTION.md",
                         "Sources/RestorationCore/Engine.swift", "README.md"] {
            XCTAssertTrue(paths.contains(expected), "the walk of \(Ctl.repo) did not find \(expected)")
        }
    }

    /// No section sign: a reference names a docs/ page (and its section's title) instead.
    func testNoSectionNumbers() throws {
        let found = try hits("\u{00A7}", in: textFiles())
        XCTAssertEqual(found, [], "section numbers of a specification; point to a docs/ page instead:\n"
                       + found.joined(separator: "\n"))
    }

    /// No "issue 11": say what the thing is, or point to the docs/ page that states it.
    func testNoIssueNumbers() throws {
        let found = try hits(#"\bissues?\s+#?[0-9]+"#, in: textFiles())
        XCTAssertEqual(found, [], "issue numbers; point to a docs/ page instead:\n"
                       + found.joined(separator: "\n"))
    }

    /// Every docs/NAME.md that a comment, header or page names exists.
    func testNamedDocsPagesExist() throws {
        let rx = try NSRegularExpression(pattern: #"docs/[A-Za-z0-9_-]+\.md"#)
        var missing: Set<String> = []
        for file in textFiles() {
            let text = file.text
            for m in rx.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let page = String(text[Range(m.range, in: text)!])
                if !FileManager.default.fileExists(atPath: Ctl.repo + "/" + page) {
                    missing.insert("\(file.path) names \(page)")
                }
            }
        }
        XCTAssertEqual(missing.sorted(), [], "docs pages that do not exist")
    }
}
