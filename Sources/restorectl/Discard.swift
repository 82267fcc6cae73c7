import ArgumentParser
import RestorationCore

struct Discard: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "discard",
        abstract: "Remove an archive and everything the engine keeps beside it.",
        discussion: """
            Lists, then removes, the archive and the files the engine keeps \
            beside it: set-aside copies left by the crash-loop guard \
            (<archive>.crashed-<ms>), the restore marker (<archive>.restoring), \
            the save lock (<archive>.lock) and temporaries of interrupted saves \
            (<archive>.tmp-*). This is what a force-quit does to saved state \
            (rst_discard). With --dry-run, only lists them. Exits 3 when there \
            is nothing to remove.

            EXAMPLES
              restorectl discard --dry-run state.rst
              restorectl discard state.rst

            \(Exit.table)
            """)

    @OptionGroup var input: ArchiveArgument

    @Flag(help: "List what would be removed, and remove nothing.")
    var dryRun = false

    func run() throws {
        let files = FileStore.stateFiles(of: input.archive)
        guard !files.isEmpty else {
            throw CtlFailure(Exit.notFound, "nothing to discard: there is no archive at \(Text.quotedPath(input.archive)) and nothing beside it")
        }
        var out = Output()
        out.line(dryRun ? "would remove:" : "removing:")
        for f in files { out.line("  \(Text.escaped(f))") }
        out.flush()
        if dryRun { return }
        do {
            try FileStore.discard(input.archive)
        } catch {
            throw CtlFailure(error)
        }
        print("removed \(files.count) file\(files.count == 1 ? "" : "s")")
    }
}
