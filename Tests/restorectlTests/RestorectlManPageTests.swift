// restorectl(1) (docs/man/restorectl.1) against the built restorectl: the
// page is mdoc that `mandoc -T lint` passes without a word, and it names
// every subcommand and every long option the binary's --help shows.
import Foundation
import XCTest

final class RestorectlManPageTests: XCTestCase {
    private let page = Ctl.repo + "/docs/man/restorectl.1"

    private func mandoc() throws -> String {
        for p in ["/usr/bin/mandoc", "/usr/local/bin/mandoc"] where FileManager.default.isExecutableFile(atPath: p) { return p }
        throw XCTSkip("mandoc is not installed (.ci/run installs it)")
    }

    private func run(_ exe: String, _ args: [String]) throws -> (code: Int32, out: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = args
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// `mandoc -T lint` prints nothing: no error, warning or style message.
    func testLintIsClean() throws {
        let r = try run(try mandoc(), ["-T", "lint", page])
        XCTAssertEqual(r.out, "", "mandoc -T lint docs/man/restorectl.1")
        XCTAssertEqual(r.code, 0)
    }

    /// The page as rendered text names every subcommand and every long
    /// option of `restorectl SUBCOMMAND --help`.
    func testEverySubcommandAndOptionIsDocumented() throws {
        // Rendered, then the overstrike (bold: "c\bc", underline: "_\bc") taken out.
        var text = ""
        for ch in try run(try mandoc(), ["-T", "ascii", "-O", "width=200", page]).out.unicodeScalars {
            if ch == "\u{8}" { if !text.isEmpty { text.removeLast() }; continue }
            text.unicodeScalars.append(ch)
        }
        let ctl = try Ctl.binary()
        let help = try run(ctl, ["--help"]).out
        guard let start = help.range(of: "SUBCOMMANDS:") else { return XCTFail("no SUBCOMMANDS in --help:\n\(help)") }
        let subcommands = help[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false)
            .dropFirst().prefix { !$0.isEmpty }
            .compactMap { line -> String? in
                guard line.hasPrefix("  "), !line.hasPrefix("   ") else { return nil }
                return line.split(separator: " ").first.map(String.init)
            }.filter { $0 != "help" }
        XCTAssertTrue(subcommands.contains("test") && subcommands.count >= 12, "\(subcommands)")
        let rx = try NSRegularExpression(pattern: #"(--[a-z][a-z-]+)"#)
        var missing: [String] = []
        for sub in subcommands {
            if !text.contains("restorectl \(sub)") { missing.append(sub) }
            let h = try run(ctl, ["help", sub]).out
            guard let usage = h.split(separator: "\n").first(where: { $0.hasPrefix("USAGE:") }) else {
                missing.append("\(sub): no USAGE line"); continue
            }
            let u = String(usage)
            for m in rx.matches(in: u, range: NSRange(u.startIndex..., in: u)) {
                let opt = String(u[Range(m.range(at: 1), in: u)!])
                if !text.contains(opt) { missing.append("\(sub) \(opt)") }
            }
        }
        XCTAssertEqual(missing, [], "restorectl(1) does not document these")
        for s in ["@WAIT:ms", "\\e", "\\r", "FIRST LAUNCH", "NOT REACHED", "--allow-not-reached", "RESTORATION_KILL_AT"] {
            XCTAssertTrue(text.contains(s), "restorectl(1) lacks \(s)")
        }
    }
}
