// Exit codes and the one-line error every failing subcommand prints.

import RestorationArchive
import RestorationCore

/// The exit codes of restorectl. Stable: scripts depend on them.
enum Exit {
    static let ok: Int32 = 0
    /// `diff` found differences; or a failure with no more specific code.
    static let differences: Int32 = 1
    static let failure: Int32 = 1
    /// The command line is wrong (ArgumentParser's validation).
    static let usage: Int32 = 2
    static let notFound: Int32 = 3
    static let corrupt: Int32 = 4
    static let version: Int32 = 5
    static let limit: Int32 = 6
    static let io: Int32 = 7
    static let plugin: Int32 = 8
    static let rejected: Int32 = 9
    static let fenced: Int32 = 10
    static let unavailable: Int32 = 11

    /// The table printed by the root command's and every subcommand's help.
    static let table = """
        EXIT CODES
          0  ok; diff: the archives are equal
          1  diff: the archives differ; other failures without a code below
          2  usage: a wrong command line
          3  not found: no such archive, JSON file or plugin directory
          4  corrupt: the archive failed validation (save: malformed JSON)
          5  unsupported version: an archive format this restorectl cannot read
          6  limit exceeded: a size, count or depth limit of the format
          7  I/O error: the file system failed; graph --format svg without 'dot'
          8  plugin error: a plugin was rejected or failed to load
          9  rejected: a symbolic link, another user's file, or a refused restore
         10  fenced: another instance owns the state now
         11  unavailable: the store cannot be reached now
        """

    /// The exit code for a core status; chosen per status, not by raw value.
    static func code(for status: Status) -> Int32 {
        switch status {
        case .ok: return ok
        case .notFound: return notFound
        case .corrupt: return corrupt
        case .version: return version
        case .limit: return limit
        case .io: return io
        case .plugin: return plugin
        case .rejected: return rejected
        case .fenced: return fenced
        case .unavailable: return unavailable
        case .invalid, .duplicate, .type, .noMemory, .state: return failure
        }
    }
}

/// A failure to report: one line on stderr, then this exit code.
struct CtlFailure: Error, CustomStringConvertible {
    let code: Int32
    let message: String

    init(_ code: Int32, _ message: String) {
        self.code = code
        self.message = message
    }

    init(_ failure: RestorationFailure) {
        self.init(Exit.code(for: failure.status), failure.message)
    }

    var description: String { message }
}
