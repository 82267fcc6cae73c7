// TEMPORARY interface skeleton so the C layer compiles; the plugin engineer replaces this file.
import RestorationCore

public struct PluginClassInfo: Equatable, Sendable {
    public var className: String
    public var factorySymbol: String
    public var signature: String
    public var usable: Bool
    public var reason: String
}

public struct PluginFileInfo: Equatable, Sendable {
    public enum State: Sendable { case discovered, loaded, rejected }
    public var path: String
    public var name: String
    public var version: String
    public var state: State
    public var reason: String
    public var classes: [PluginClassInfo]
}

public final class PluginLoader: ClassProvider {
    public init(directory: String, hostAPI: UnsafeRawPointer, engine: Engine) {}
    public func factory(forClass className: String) -> Factory? { nil }
    public var loadedCount: Int { 0 }
    public var rejectedCount: Int { 0 }
    public func shutdown() {}
    public func loadAll() throws(RestorationFailure) {}
    public func list() throws(RestorationFailure) -> [PluginFileInfo] { [] }
}
