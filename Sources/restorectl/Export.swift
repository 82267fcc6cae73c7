import ArgumentParser
import RestorationArchive
import RestorationCore

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write an archive's state to a new file, portably with --portable.",
        discussion: """
            Reads and validates IN, then writes OUT (replaced atomically and \
            durably; never through a symbolic link or over another user's file). \
            With --portable, the values that belong to this machine or its key \
            are left out: sealed (ENCRYPTED) values, and the values their record \
            marks LOCAL (with the marks themselves), nested records included — \
            what rst_export(RST_EXPORT_PORTABLE) leaves out of a live engine's \
            state. SECRET values are never in an archive to begin with. \
            Everything else, the info included, is kept as it is.

            EXAMPLES
              restorectl export --portable state.rst to-other-machine.rst

            \(Exit.table)
            """)

    @Flag(help: "Leave out LOCAL and ENCRYPTED (sealed) values.")
    var portable = false

    @Argument(help: ArgumentHelp("The archive to read.", valueName: "IN"))
    var input: String

    @Argument(help: ArgumentHelp("The archive to write.", valueName: "OUT"))
    var output: String

    @Flag(name: .shortAndLong, help: "Print nothing on success.")
    var quiet = false

    func run() throws {
        let loaded = try LoadedArchive.load(input)
        var doc = loaded.document
        if portable {
            for i in doc.objects.indices { doc.objects[i].entries = SensitivityRoom.portableEntries(doc.objects[i].entries) }
        }
        let bytes: [UInt8]
        do {
            bytes = try doc.encode()
        } catch {
            throw CtlFailure(Exit.corrupt, "\(Text.quotedPath(input)): cannot write the export: \(error.message)")
        }
        try FileRules.checkOwnedRegularOrAbsent(output, for: "export to")
        do throws(RestorationFailure) {
            try withRawBytes(bytes) { (b: UnsafeRawBufferPointer) throws(RestorationFailure) in
                try FileStore.atomicWrite(b, to: output)
            }
        } catch {
            throw CtlFailure(error)
        }
        if !quiet {
            print("exported \(Text.quotedPath(output))\(portable ? " (portable)" : ""): \(doc.objects.count) objects, \(bytes.count) bytes")
        }
    }
}
