import ArgumentParser
import RestorationArchive
import RestorationCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

struct Save: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "save",
        abstract: "Build an archive from the JSON that 'inspect --json' prints.",
        discussion: """
            This is how a person writes or edits state by hand: print an archive \
            as JSON, edit it, save it back. The JSON schema is the one described \
            in 'restorectl inspect --help'. Objects are listed in archive order: \
            a parent's path must appear before its children's; an object's \
            identifier is the last component of its path; an object reference \
            names its target by path (any object of the file, earlier or later). \
            The archive is written by the core's writer, validated by the engine's \
            reader, then replaced atomically and durably (temporary file, fsync, \
            rename). saved_at_ms is kept from the JSON (the current time when it \
            is absent, or with --now). Refuses to write through a symbolic link \
            or over a file owned by another user.

            Round trip: 'inspect --json A | save --from - --out B' gives an archive \
            B whose 'inspect --json' equals A's.

            Malformed JSON is reported with the JSON path at fault, for example:
              restorectl: 'state.json': $.objects[3].values[1].type: unknown type "integer" ...

            EXAMPLES
              restorectl inspect --json state.rst > state.json
              restorectl save --from state.json --out state.rst
              restorectl inspect --json a.rst | restorectl save --from - --out b.rst

            \(Exit.table)
            """)

    @Option(help: ArgumentHelp("The JSON file to read ('-' for standard input).", valueName: "state.json"))
    var from: String

    @Option(help: ArgumentHelp("The archive to write (replaced atomically).", valueName: "archive"))
    var out: String

    @Flag(help: "Stamp the archive with the current time instead of the JSON's saved_at_ms.")
    var now = false

    @Flag(name: .shortAndLong, help: "Print nothing on success.")
    var quiet = false

    func run() throws {
        let source = from == "-" ? "standard input" : Text.quotedPath(from)
        let text = try readInput(from)
        let json: JSON
        do {
            json = try JSONParser.parse(text)
        } catch {
            throw CtlFailure(Exit.corrupt, "\(source): malformed JSON: \(error.description)")
        }
        var doc: ArchiveDocument
        do {
            doc = try StateJSON.document(json, now: SystemInfo.nowMs())
        } catch {
            throw CtlFailure(error.code, "\(source): \(error.description)")
        }
        if now { doc.info.savedAtMs = SystemInfo.nowMs() }
        let bytes: [UInt8]
        do {
            bytes = try doc.encode()
        } catch {
            switch error {
            case .limit(let m): throw CtlFailure(Exit.limit, "\(source): the archive would exceed a limit: \(m)")
            case .state(let m): throw CtlFailure(Exit.corrupt, "\(source): cannot build the archive: \(m)")
            case .duplicateKey: throw CtlFailure(Exit.corrupt, "\(source): cannot build the archive: a key appears twice in one record")
            }
        }
        // Never write what the engine would refuse to restore.
        do throws(RestorationFailure) {
            _ = try withRawBytes(bytes) { (b: UnsafeRawBufferPointer) throws(RestorationFailure) in
                try Engine.validate(b, source: "the archive built from \(source)")
            }
        } catch {
            throw CtlFailure(error)
        }
        try FileRules.checkOwnedRegularOrAbsent(out, for: "save to")
        do throws(RestorationFailure) {
            try withRawBytes(bytes) { (b: UnsafeRawBufferPointer) throws(RestorationFailure) in
                try FileStore.atomicWrite(b, to: out)
            }
        } catch {
            throw CtlFailure(error)
        }
        if !quiet {
            print("saved \(Text.quotedPath(out)): \(doc.objects.count) objects, \(bytes.count) bytes")
        }
    }

    /// The whole input, at most 1 GiB.
    private func readInput(_ path: String) throws(CtlFailure) -> [UInt8] {
        let limit = 1 << 30
        let fd: Int32
        if path == "-" {
            fd = 0
        } else {
            fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                let e = errno
                if e == ENOENT { throw CtlFailure(Exit.notFound, "there is no JSON file at \(Text.quotedPath(path))") }
                throw CtlFailure(Exit.io, "cannot open \(Text.quotedPath(path)): \(String(cString: strerror(e))) (errno \(e))")
            }
        }
        defer { if fd != 0 { close(fd) } }
        var data = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                let e = errno
                throw CtlFailure(Exit.io, "reading \(path == "-" ? "standard input" : Text.quotedPath(path)) failed: \(String(cString: strerror(e))) (errno \(e))")
            }
            if n == 0 { break }
            data.append(contentsOf: chunk[0..<n])
            if data.count > limit {
                throw CtlFailure(Exit.limit, "\(path == "-" ? "standard input" : Text.quotedPath(path)) is larger than \(limit) bytes")
            }
        }
        return data
    }
}
