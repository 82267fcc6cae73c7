import ArgumentParser
import RestorationCore
import RestorationPlugins

struct Plugins: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugins",
        abstract: "Load every plugin of a directory and tell what happened to each.",
        discussion: """
            Loads the directory's plugins into a scratch engine exactly as an app's \
            engine would (same discovery, owner and mode checks, ABI check, \
            manifest and signature validation, init), then lists each plugin \
            file: loaded or rejected and why, with its name, version and classes \
            (class name, factory symbol, argument signature, usable or why not). \
            Note that loading runs the plugins' code (their init and ELF \
            constructors); inspect and verify never do. Exits 0 when every \
            plugin loaded, 8 when one or more were rejected, 3 when the directory \
            does not exist.

            EXAMPLES
              restorectl plugins ./plugins
              restorectl plugins --json /usr/lib/myapp/plugins

            \(Exit.table)
            """)

    @Argument(help: ArgumentHelp("The plugin directory.", valueName: "dir"))
    var dir: String

    @Flag(help: "Print JSON.")
    var json = false

    /// What loading every plugin of a directory found: its files, how many
    /// loaded and were rejected, and the loader's log.
    struct Loaded {
        var files: [PluginFileInfo]
        var loadedCount: Int
        var rejectedCount: Int
        var log: [(LogLevel, String)]
    }

    /// Loads every plugin of `dir` into a throwaway engine (never a
    /// restore). Exit codes: no such directory 3, not a directory or a
    /// loader failure 8.
    static func load(_ dir: String) throws -> Loaded {
        guard FileRules.exists(dir) else { throw CtlFailure(Exit.notFound, "there is no plugin directory at \(Text.quotedPath(dir))") }
        guard FileRules.isDirectory(dir) else { throw CtlFailure(Exit.plugin, "\(Text.quotedPath(dir)) is not a directory") }
        let engine = Engine(configuration: .init(pluginDirectory: dir, crashGuard: false))
        var log: [(LogLevel, String)] = []
        engine.logHandler = { level, message in log.append((level, message)) }
        let loader = PluginLoader.attach(to: engine, directory: dir)
        defer { engine.destroy() }
        do {
            try loader.loadAll()
            let files = try loader.list()
            return Loaded(files: files, loadedCount: loader.loadedCount, rejectedCount: loader.rejectedCount, log: log)
        } catch {
            throw CtlFailure(error.status == .io ? Exit.plugin : Exit.code(for: error.status),
                             "plugin directory \(Text.quotedPath(dir)): \(error.message)")
        }
    }

    func run() throws {
        let loaded = try Plugins.load(dir)
        let files = loaded.files, log = loaded.log
        let loader = (loadedCount: loaded.loadedCount, rejectedCount: loaded.rejectedCount)
        var out = Output()
        if json {
            out.write(JSONWriter.write(.object([
                ("directory", .string(dir)),
                ("plugins", .array(files.map(Plugins.json))),
                ("loaded", .int(Int64(loader.loadedCount))),
                ("rejected", .int(Int64(loader.rejectedCount))),
                ("log", .array(log.map { .object([("level", .string($0.0.name)), ("message", .string($0.1))]) })),
            ])))
        } else {
            out.line("plugin directory \(Text.quotedPath(dir)): \(files.count) plugin file\(files.count == 1 ? "" : "s"), \(loader.loadedCount) loaded, \(loader.rejectedCount) rejected")
            for f in files {
                out.line()
                let state: String
                switch f.state {
                case .loaded: state = "loaded"
                case .rejected: state = "REJECTED: \(Text.escaped(f.reason))"
                case .discovered: state = "not loaded"
                }
                out.line("\(Text.escaped(f.path))")
                if !f.name.isEmpty || !f.version.isEmpty {
                    out.line("  plugin   \(Text.quoted(f.name)) version \(Text.quoted(f.version))")
                }
                out.line("  state    \(state)")
                if f.classes.isEmpty { out.line("  classes  none") }
                for c in f.classes {
                    let use = c.usable ? "usable" : "not usable: \(Text.escaped(c.reason))"
                    out.line("  class    \(Text.escaped(c.className))  factory \(Text.escaped(c.factorySymbol))  signature \(Text.quoted(c.signature))  \(use)")
                }
            }
            if files.isEmpty { out.line("(no *.so files)") }
        }
        out.flush()
        if files.contains(where: { $0.state == .rejected }) { throw ExitCode(Exit.plugin) }
    }

    static func json(_ f: PluginFileInfo) -> JSON {
        let state: String
        switch f.state {
        case .loaded: state = "loaded"
        case .rejected: state = "rejected"
        case .discovered: state = "discovered"
        }
        return .object([
            ("path", .string(f.path)),
            ("name", .string(f.name)),
            ("version", .string(f.version)),
            ("state", .string(state)),
            ("reason", .string(f.reason)),
            ("classes", .array(f.classes.map { c in
                .object([("class", .string(c.className)), ("factory_symbol", .string(c.factorySymbol)),
                         ("signature", .string(c.signature)), ("usable", .bool(c.usable)), ("reason", .string(c.reason))])
            })),
        ])
    }
}
