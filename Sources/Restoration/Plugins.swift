internal import CRestoration
import RestorationCore
import RestorationPlugins

// The library's version and the plugins of an engine's plugin directory in
// the Swift API (what rst_version, rst_load_plugins and rst_list_plugins
// give C hosts).

extension RestorationEngine {
    /// The library's version, `"1.2.0"`: what `RST_VERSION_STRING` holds for
    /// the headers this API was built with.
    ///
    /// The corresponding C function is `rst_version`.
    public static var libraryVersion: String { RST_VERSION_STRING }

    /// One file of the plugin directory, with its state, classes and
    /// rejection reason (``plugins()``). The corresponding C type is
    /// `rst_plugin_info`.
    public typealias PluginInfo = PluginFileInfo
    /// One class a plugin offers (``PluginInfo/classes``). The
    /// corresponding C type is `rst_plugin_class_info`.
    public typealias PluginClassInfo = RestorationPlugins.PluginClassInfo

    private func pluginLoader(_ what: String) throws(RestorationError) -> PluginLoader {
        guard let loader = core.classProvider as? PluginLoader else {
            throw RestorationError.invalid("\(what): the engine was created without a plugin directory")
        }
        return loader
    }

    /// Loads every plugin of the plugin directory now, as a restore that
    /// needs an unknown class would (once per engine; later calls return at
    /// once). Rejected plugins are not an error: ``plugins()`` says why each
    /// was rejected.
    ///
    /// - Throws: ``RestorationError/invalid(_:)`` without a plugin
    ///   directory; ``RestorationError/io(_:)`` when it cannot be read.
    ///
    /// The corresponding C function is `rst_load_plugins`.
    public func loadPlugins() throws(RestorationError) {
        let loader = try pluginLoader("loadPlugins")
        do throws(RestorationFailure) { try loader.loadAll() } catch {
            throw RestorationError(RestorationFailure(error.status, "loadPlugins: \(error.message)"))
        }
    }

    /// The files of the plugin directory, sorted by name, with their state,
    /// classes and rejection reasons. Loads nothing.
    ///
    /// - Throws: As ``loadPlugins()``.
    ///
    /// The corresponding C function is `rst_list_plugins`.
    public func plugins() throws(RestorationError) -> [PluginInfo] {
        let loader = try pluginLoader("plugins")
        do throws(RestorationFailure) { return try loader.list() } catch {
            throw RestorationError(RestorationFailure(error.status, "plugins: \(error.message)"))
        }
    }
}
