import ArgumentParser
import RestorationArchive
import RestorationCore

struct ArchiveArgument: ParsableArguments {
    @Argument(help: ArgumentHelp("The archive file.", valueName: "archive"))
    var archive: String
}

struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Print an archive's info and its object tree with every value.",
        discussion: """
            Prints the archive info (format version, app version, system version, \
            idiom, save time, object count), then every object in archive order: its \
            path, its class, and every key with its type and value. Bytes are shown \
            as hex; object references as the target's path; nested records indented. \
            Long strings, bytes and arrays are shortened unless --full is given. \
            Strings from the archive are escaped: control characters never reach \
            the terminal. Never loads a plugin or runs a factory.

            --json prints the whole archive (never shortened) as JSON that \
            'restorectl save --from' reads back:

              {"format_version": 1, "app_version": "1.2", "system_version": "Linux 6.8",
               "idiom": "desktop", "saved_at_ms": 1732255140123,
               "objects": [
                 {"path": "Tabs", "class": "TabBar", "values": [
                   {"key": "selectedTab", "type": "int", "value": 2}]},
                 {"path": "Tabs/Nav", "class": null, "values": [
                   {"key": "detail", "type": "object", "value": "Tabs/Nav/Detail"},
                   {"key": "frame", "type": "record", "value": [
                     {"key": "x", "type": "double", "value": 1.5}]}]}]}

            Value types: bool, int (exact int64), double (shortest exact text; \
            "nan", "inf", "-inf" as strings), string, bytes (hex), object (the \
            target's path), object_array (v1.1: the targets' paths), int_array, \
            string_array, record (a nested list of \
            entries), os_string (a file name: UTF-8 as text, other bytes as \\xHH, \
            a backslash as \\\\), unknown (a future type: "tag" 12...15 and the payload as hex). \
            Values are a list so key order round-trips.

            EXAMPLES
              restorectl inspect state.rst
              restorectl inspect --full state.rst | less -R
              restorectl inspect --json state.rst > state.json

            \(Exit.table)
            """)

    @OptionGroup var input: ArchiveArgument

    @Flag(help: "Print JSON (the schema 'save --from' reads) instead of text.")
    var json = false

    @Flag(help: "Do not shorten long strings, bytes and arrays (text output).")
    var full = false

    func run() throws {
        let a = try LoadedArchive.load(input.archive)
        let doc = a.document
        var out = Output()
        if json {
            out.write(JSONWriter.write(StateJSON.json(doc)))
            out.flush()
            return
        }
        let paths = doc.objects.indices.map { doc.path(of: $0) }
        let r = Renderer(paths: paths, full: full)
        out.line("archive \(Text.quotedPath(input.archive))")
        for l in r.infoLines(doc.info, byteCount: a.byteCount) { out.line(l) }
        out.line()
        var lines: [String] = []
        for (i, o) in doc.objects.enumerated() {
            lines.removeAll(keepingCapacity: true)
            out.line(r.header(path: paths[i], className: o.className, version: o.version, carry: o.carry))
            r.entryLines(o.entries, indent: 4, into: &lines)
            for l in lines { out.line(l) }
        }
        if doc.objects.isEmpty { out.line("(no objects)") }
        out.flush()
    }
}

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Validate an archive completely, as the engine would before a restore.",
        discussion: """
            Runs the engine's full validation (checksum, header, string tables, \
            every record, every limit). Exits 0 and prints one line when the \
            archive is valid; otherwise exits with the code for what is wrong \
            and prints one line on stderr naming the file and where validation \
            failed (byte offset, record index and path, key). Never loads a \
            plugin or runs a factory.

            EXAMPLES
              restorectl verify state.rst && echo fine
              restorectl verify --quiet quarantine/state.rst; echo "exit $?"

            \(Exit.table)
            """)

    @OptionGroup var input: ArchiveArgument

    @Flag(name: .shortAndLong, help: "Print nothing when the archive is valid.")
    var quiet = false

    func run() throws {
        let a = try LoadedArchive.load(input.archive)
        if !quiet {
            let info = a.reader.info
            print("archive \(Text.quotedPath(input.archive)) is valid: format version \(info.formatVersion), \(info.objectCount) objects, \(a.byteCount) bytes")
        }
    }
}
