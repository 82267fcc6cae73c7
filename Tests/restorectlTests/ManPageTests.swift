// restoration(3) (docs/man/restoration.3) against the installed headers:
// every public function is named, and every file the engine creates.
import Foundation
import XCTest

final class ManPageTests: XCTestCase {
    private func read(_ relative: String) throws -> String {
        try String(contentsOfFile: Ctl.repo + "/" + relative, encoding: .utf8)
    }

    /// The page as text: roff's `\-` is a hyphen, font escapes go, `\e` is a backslash.
    private func pageText() throws -> String {
        var s = try read("docs/man/restoration.3")
        for (from, to) in [("\\-", "-"), ("\\fB", ""), ("\\fI", ""), ("\\fR", ""), ("\\fP", ""), ("\\e", "\\"), ("\\&", "")] {
            s = s.replacingOccurrences(of: from, with: to)
        }
        return s
    }

    /// Every `RST_API` function of restoration.h and restoration_store.h,
    /// and what a plugin exports and uses from restoration_plugin.h.
    func testEveryPublicFunctionIsNamed() throws {
        let page = try pageText()
        let rx = try NSRegularExpression(pattern: #"RST_API\b[^;(]*?\b(rst_[a-z0-9_]+)\s*\("#, options: [.dotMatchesLineSeparators])
        var names: [String] = []
        for header in ["Include/restoration.h", "Include/restoration_store.h"] {
            let text = try read(header)
            let found = rx.matches(in: text, range: NSRange(text.startIndex..., in: text)).map {
                String(text[Range($0.range(at: 1), in: text)!])
            }
            XCTAssertFalse(found.isEmpty, "no RST_API function found in \(header)")
            names += found
        }
        XCTAssertTrue(names.contains("rst_engine_create_with_store"))
        XCTAssertTrue(names.contains("rst_decode_string_copy"))
        names += ["rst_plugin_manifest_v1", "RST_HOST_API_HAS", "rst_host_api"]
        let missing = names.filter { name in
            // A whole word: rst_decode_string must not match inside rst_decode_string_copy only.
            page.range(of: #"(?<![A-Za-z0-9_])"# + name + #"(?![A-Za-z0-9_])"#, options: .regularExpression) == nil
        }
        XCTAssertEqual(missing, [], "restoration(3) does not name these public functions")
        for header in ["<restoration.h>", "<restoration_store.h>", "<restoration_plugin.h>"] {
            XCTAssertTrue(page.contains(header), "restoration(3) does not name \(header)")
        }
    }

    /// FILES lists the archive and everything the file store keeps beside it.
    func testFilesListsEverySuffix() throws {
        let page = try pageText()
        guard let files = page.range(of: ".SH FILES"), let end = page.range(of: ".SH EXAMPLES") else {
            return XCTFail("restoration(3) has no FILES section before EXAMPLES")
        }
        // roff's `.IR archive .lock` alternates fonts: compare without the spaces and quotes.
        let section = String(page[files.upperBound..<end.lowerBound]).filter { $0 != " " && $0 != "\"" }
        for suffix in [".1", ".16", ".invalid-", ".crashed-", ".k.crashed-", ".restoring", ".k.restoring",
                       ".quarantine", ".session", ".lock", ".tmp-", ".tmp-gen-"] {
            XCTAssertTrue(section.contains("archive" + suffix),
                          "FILES lacks archive\(suffix):\n\(section)")
        }
    }

    /// The page tells what to call when in 1.1 and later: marks and autosave,
    /// not a save after each change; signals only when asked.
    func testWhatToCallWhen() throws {
        let page = try pageText()
        for s in ["rst_mark_dirty", "autosave_delay_ms", "rst_flush", "rst_save_on_signals", "SA_RESTART",
                  "signal_deadline_ms", "installs no signal handler unless asked"] {
            XCTAssertTrue(page.contains(s), "restoration(3) lacks \(s)")
        }
        XCTAssertFalse(page.contains("after each change the user would expect"), "the 1.0 advice to save after each change is gone")
    }
}
