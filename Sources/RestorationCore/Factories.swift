import RestorationArchive

/// What a factory is asked to create (pass 1 of a restore).
public struct FactoryRequest {
    public let engine: Engine
    /// nil at a root.
    public let parent: ObjectNode?
    public let identifier: String
    /// The identifier NUL-terminated; valid during the factory call.
    public let identifierCString: UnsafePointer<CChar>
    public let className: String?
    public let record: Int
    /// 0 at a root.
    public let depth: Int
    public let savedAtMs: Int64
    /// Readable (decode calls) during the factory call.
    public let coder: Coder

    /// The record's whole path, "A/B/C".
    public var path: String { coder.decoding.reader?.path(ofRecord: record) ?? identifier }
}

extension FactoryRequest {
    /// The object at `handle` if it is the one now registered at the
    /// requested path, else nil; never dereferences a handle that is not a
    /// registered object's. The engine applies the same check to every
    /// factory's result; a factory that holds only a handle (a plugin's,
    /// through libffi) uses this to turn it into the node.
    public func object(at handle: UnsafeRawPointer) -> ObjectNode? {
        engine.acceptFactoryResult(handle, parent: parent, identifier: identifier)
    }
}

/// Creates the object for a record, registered with exactly the requested
/// parent and identifier; nil declines.
public typealias Factory = (FactoryRequest) -> ObjectNode?

/// A factory as a plain function and a context, which the engine calls
/// without building a `FactoryRequest` (the fast kind; the C face adapts
/// `rst_factory_fn` to it): (engine handle, parent handle or nil,
/// identifier NUL-terminated, coder handle, context) -> the new object's
/// handle or nil.
public typealias FactoryFunction = @convention(c) (OpaquePointer?, OpaquePointer?, UnsafePointer<CChar>?, OpaquePointer?, UnsafeMutableRawPointer?) -> OpaquePointer?

/// A restoration class's factory, of either kind. A class, so that restore
/// pass 1 handles it without copying its contents per record. The engine
/// invokes every kind the same way: `Engine.invoke(_:for:)`.
final class ClassFactory {
    enum Kind {
        case function(FactoryFunction, context: UnsafeMutableRawPointer?)
        case closure(Factory)
    }
    let kind: Kind
    /// Names it in messages: "the factory of class 'X'", "the fallback factory".
    let what: String

    init(_ kind: Kind, what: String) {
        self.kind = kind
        self.what = what
    }
}

/// Supplies restoration classes no host registered (the plugin loader).
public protocol ClassProvider: AnyObject {
    /// The factory for `className`, loading plugins on first need; nil when none provides it.
    func factory(forClass className: String) -> Factory?
    /// Skips (docs/EVOLUTION.md): why no plugin provides `className` when a plugin that
    /// declares it was rejected (a sentence), else nil.
    func rejection(forClass className: String) -> String?
    /// Plugins loaded and rejected so far.
    var loadedCount: Int { get }
    var rejectedCount: Int { get }
    /// Engine destroy: run the plugins' fini.
    func shutdown()
}

extension ClassProvider {
    public func rejection(forClass className: String) -> String? { nil }
}

/// What the last restore did (`rst_restore_report`).
public struct RestoreCounts: Equatable, Sendable {
    public var archived: UInt64 = 0
    public var restored: UInt64 = 0
    public var skipped: UInt64 = 0
    public var pluginsLoaded: UInt64 = 0
    public var pluginsRejected: UInt64 = 0
    public init() {}
}
