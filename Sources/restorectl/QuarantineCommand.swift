import ArgumentParser
import RestorationCore

// docs/EVOLUTION.md: show and clear a per-object crash quarantine.
struct QuarantineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quarantine",
        abstract: "Show the record a crashed restore quarantined, or clear the quarantine.",
        discussion: """
            When a restore died inside one object's callback (factory, migration, \
            decode or finished), an engine with quarantine skips that record and \
            its descendants at the next restores (RST_SKIP_QUARANTINED) and \
            restores the rest; <archive>.quarantine names the record until the \
            next successful save. This command shows it; --clear removes it, so \
            the next restore tries the record again (a death there then sets \
            the archive aside only after a new quarantine). Exits 3 when there \
            is no quarantine.

            EXAMPLES
              restorectl quarantine state.rst
              restorectl quarantine --clear state.rst

            \(Exit.table)
            """)

    @OptionGroup var input: ArchiveArgument

    @Flag(help: "Remove the quarantine.")
    var clear = false

    func run() throws {
        let archive = input.archive
        guard let q = Engine.quarantine(of: archive) else {
            throw CtlFailure(Exit.notFound, "\(Text.quotedPath(archive)) has no quarantine")
        }
        var out = Output()
        out.line("quarantine \(Text.quotedPath(q.file))")
        out.line("  record   \(q.record) \(Text.escaped(q.path)) (and its descendants)")
        out.line("  why      process \(q.pid) died in a callback of this record while restoring")
        out.line("  applies  \(q.current ? "yes: it names the archive's current bytes" : "no: the archive changed since; the next restore removes it")")
        if clear {
            do { try Engine.clearQuarantine(of: archive) } catch { throw CtlFailure(error) }
            out.line("cleared: the next restore restores \(Text.escaped(q.path)) again")
        }
        out.flush()
    }
}
