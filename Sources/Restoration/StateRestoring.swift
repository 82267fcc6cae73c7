/// An object whose state is preserved and restored: the Swift counterpart of
/// UIKit's `UIStateRestoring`.
///
/// Conform a screen, a controller or any long-lived model object, give it a
/// ``restorationIdentifier``, and register it with
/// ``RestorationEngine/register(_:)``. At save time the engine calls
/// ``encodeRestorableState(with:)``; at restore time it calls
/// ``decodeRestorableState(with:)`` (parents first, and referenced objects
/// before the objects that reference them), then
/// ``applicationFinishedRestoringState()`` on every restored object.
///
/// ```swift
/// final class SettingsScreen: StateRestoring {
///     let restorationIdentifier: String? = "Settings"
///     weak var tabs: TabBar?
///     var restorationParent: StateRestoring? { tabs }
///     var objectRestorationClass: RestorationClass? { "Settings" }
///     var metricUnits = false
///
///     func encodeRestorableState(with coder: RestorationCoder) throws {
///         try coder.encode(metricUnits, forKey: "metricUnits")
///     }
///     func decodeRestorableState(with coder: RestorationCoder) throws {
///         metricUnits = try coder.decode(Bool.self, forKey: "metricUnits") ?? false
///     }
/// }
/// ```
///
/// The engine holds registered objects **weakly**, as UIKit does; see
/// ``RestorationEngine/register(_:)`` for when a deallocated object leaves
/// the engine.
///
/// See also <doc:Restoration>, the overview of preservation and restoration.
public protocol StateRestoring: AnyObject {
    /// Scopes the object under its ``restorationParent``: non-empty UTF-8,
    /// no `/`, no NUL, at most 255 bytes. An object whose identifier is nil
    /// cannot be registered.
    var restorationIdentifier: String? { get }

    /// The object this one's identifier is scoped under; nil (the default)
    /// makes it a root. Read once, by ``RestorationEngine/register(_:)``,
    /// which requires the parent to be registered already. Objects created
    /// by a restoration class are placed under the record's parent
    /// regardless of this property.
    var restorationParent: StateRestoring? { get }

    /// Names the restoration class that re-creates this object when it is
    /// not registered at restore time; recorded in the archive. Nil (the
    /// default) records no class: such an object is restored only when the
    /// app registers it (or a fallback factory makes it) before restoring.
    var objectRestorationClass: RestorationClass? { get }

    /// Writes the object's state. Called at every save, in archive order
    /// (depth-first, roots and siblings in registration order). An error
    /// thrown here, or by any `encode` call, fails the whole save and leaves
    /// the previous archive untouched. Default: encodes nothing.
    ///
    /// - Parameter coder: Valid only during this call.
    /// - Throws: Anything; the save fails with the error's message.
    func encodeRestorableState(with coder: RestorationCoder) throws

    /// Reads the object's state back. Called at restore, after the object's
    /// parent and the objects it references were decoded. An error thrown
    /// here is logged (warning) and the restore continues with the other
    /// objects. Default: decodes nothing.
    ///
    /// - Parameter coder: Valid only during this call.
    func decodeRestorableState(with coder: RestorationCoder) throws

    /// Called once on every restored object after all of them were decoded
    /// (UIKit's `applicationFinishedRestoringState`). Default: does nothing.
    func applicationFinishedRestoringState()
}

extension StateRestoring {
    /// No parent: the object is a root.
    public var restorationParent: StateRestoring? { nil }
    /// No restoration class.
    public var objectRestorationClass: RestorationClass? { nil }
    /// Encodes nothing.
    public func encodeRestorableState(with coder: RestorationCoder) throws {}
    /// Decodes nothing.
    public func decodeRestorableState(with coder: RestorationCoder) throws {}
    /// Does nothing.
    public func applicationFinishedRestoringState() {}
}

/// A restoration class: re-creates objects that are not registered when a
/// restore runs (UIKit's `UIObjectRestoration`).
///
/// Register it by name with
/// ``RestorationEngine/registerRestorationClass(_:named:)`` before
/// restoring. The engine registers the object you return under exactly the
/// record's parent and identifier, and keeps it alive (see
/// ``RestorationEngine/registerRestorationClass(_:named:)``).
///
/// ```swift
/// enum DetailRestorer: ObjectRestoration {
///     static func object(withRestorationIdentifierPath path: [String],
///                        coder: RestorationCoder) -> StateRestoring? {
///         guard let country = try? coder.decode(String.self, forKey: "country") else { return nil }
///         return DetailScreen(country: country)
///     }
/// }
/// try engine.registerRestorationClass(DetailRestorer.self, named: "CountryDetail")
/// ```
///
/// See also <doc:Restoration>, the overview of preservation and restoration.
public protocol ObjectRestoration {
    /// Creates the object for a record, or returns nil to decline (the
    /// fallback factory is asked next, then the record is skipped with its
    /// descendants).
    ///
    /// - Parameters:
    ///   - identifierComponents: The record's restoration identifier path,
    ///     root first; the last component is the identifier the returned
    ///     object's ``StateRestoring/restorationIdentifier`` must equal.
    ///   - coder: The record's archived state, readable during this call.
    ///     References to records not yet created throw
    ///     ``RestorationError/state(_:)``.
    /// - Returns: The object, or nil to decline.
    static func object(withRestorationIdentifierPath identifierComponents: [String],
                       coder: RestorationCoder) -> StateRestoring?

    /// The class name used when none is given at registration. Default:
    /// the type's name, `String(describing: Self.self)`.
    static var restorationClassName: String { get }
}

extension ObjectRestoration {
    /// The type's name.
    public static var restorationClassName: String { String(describing: Self.self) }
}

/// The name of a restoration class, as archives record it: a string, or a
/// type conforming to ``ObjectRestoration`` (its
/// ``ObjectRestoration/restorationClassName``).
///
/// ```swift
/// var objectRestorationClass: RestorationClass? { "TabBar" }
/// var objectRestorationClass: RestorationClass? { .type(DetailRestorer.self) }
/// ```
///
/// See also <doc:Restoration>, the overview of preservation and restoration.
public struct RestorationClass: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The name written to the archive (at most 255 bytes of UTF-8).
    public let name: String

    /// A class known by name (a host class, or one a plugin provides).
    public init(_ name: String) { self.name = name }

    /// The class implemented by `type`, under its
    /// ``ObjectRestoration/restorationClassName``.
    public init<T: ObjectRestoration>(_ type: T.Type) { self.name = T.restorationClassName }

    /// A class known by name.
    public init(stringLiteral value: String) { self.name = value }

    /// A class known by name.
    public static func named(_ name: String) -> RestorationClass { RestorationClass(name) }

    /// The class implemented by `type`.
    public static func type<T: ObjectRestoration>(_ type: T.Type) -> RestorationClass { RestorationClass(type) }

    /// The name.
    public var description: String { name }
}
