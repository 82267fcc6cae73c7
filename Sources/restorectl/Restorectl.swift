// restorectl: inspect, verify, edit and test-restore Restoration archives.
// One core: every archive is read by RestorationArchive's validating reader
// (through the engine's Engine.validate) and written by ArchiveDocument /
// ArchiveWriter; `restore` runs the real engine.

import ArgumentParser
import CRestoration
import RestorationCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

@main
struct Restorectl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restorectl",
        abstract: "Inspect, verify, edit and test-restore Restoration state archives.",
        discussion: """
            A person debugging an app's saved state, or crafting one for a test, uses \
            restorectl. It reads archives with the engine's own validating reader: \
            inspect, verify, diff and graph never load a plugin or run a factory, so \
            they are safe on a quarantined or hostile archive.

            EXAMPLES
              restorectl inspect state.rst
              restorectl inspect --json state.rst > state.json   # edit, then:
              restorectl save --from state.json --out edited.rst
              restorectl restore edited.rst --plugins ./plugins

            \(Exit.table)
            """,
        version: "\(RST_VERSION_STRING) (archive format \(RST_FORMAT_VERSION), plugin ABI \(RST_PLUGIN_ABI_VERSION))",
        subcommands: [Inspect.self, Verify.self, Save.self, Restore.self, Plugins.self,
                      Diff.self, Graph.self, Discard.self, Why.self, QuarantineCommand.self,
                      TestCommand.self, Du.self]
    )

    /// Like ParsableCommand.main, with restorectl's exit codes: usage errors
    /// exit 2, and every error is one line on stderr (no stack trace).
    static func main() {
        signal(SIGPIPE, SIG_DFL)
        do {
            var command = try parseAsRoot()
            try command.run()
            fflush(stdout)
            Glibc.exit(Exit.ok)
        } catch let f as CtlFailure {
            fflush(stdout)
            fputs("restorectl: \(Text.oneLine(f.message))\n", stderr)
            Glibc.exit(f.code)
        } catch let code as ExitCode {
            fflush(stdout)
            Glibc.exit(code.rawValue)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                print(fullMessage(for: error))
                fflush(stdout)
                Glibc.exit(Exit.ok)
            }
            let text = message(for: error)
                .split(whereSeparator: { $0 == "\n" || $0 == "\r\n" })
                .map { $0.trimmingCharacters() }
                .filter { !$0.isEmpty }
                .joined(separator: " ")
            if code == .validationFailure {
                fputs("restorectl: \(Text.oneLine(text)) (see 'restorectl\(subcommandName()) --help')\n", stderr)
                Glibc.exit(Exit.usage)
            }
            fputs("restorectl: \(Text.oneLine(text))\n", stderr)
            Glibc.exit(code.rawValue == 0 ? Exit.failure : code.rawValue)
        }
    }

    /// " inspect" when the command line names a subcommand.
    private static func subcommandName() -> String {
        let names = configuration.subcommands.compactMap { $0.configuration.commandName ?? nil }
        for a in CommandLine.arguments.dropFirst() where !a.hasPrefix("-") {
            return names.contains(a) ? " " + a : ""
        }
        return ""
    }
}

extension Substring {
    func trimmingCharacters() -> String {
        var s = self[...]
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}

/// Buffered standard output.
struct Output {
    private var buffer = ""

    mutating func line(_ s: String = "") {
        buffer += s
        buffer += "\n"
        if buffer.utf8.count > 1 << 16 { flush() }
    }

    mutating func write(_ s: String) {
        buffer += s
        if buffer.utf8.count > 1 << 16 { flush() }
    }

    mutating func flush() {
        fputs(buffer, stdout)
        buffer = ""
    }
}
