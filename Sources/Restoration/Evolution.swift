import RestorationCore

// docs/EVOLUTION.md in the Swift API: skips explained, arrays of
// references.

extension RestorationEngine {
    /// Why a record of the last restore was not restored.
    ///
    /// The corresponding C type is `rst_skip_reason`.
    public enum SkipReason: UInt32, Sendable, CaseIterable {
        case noFactory = 1, declined, factoryError, pluginRejected, parentSkipped,
             quarantined, noMigration, migrationFailed, tooNew, expired
        /// The object's ``StateRestoring/decodeRestorableState(with:)``
        /// threw (or a C decode called `rst_coder_fail`): it exists and keeps
        /// what it decoded, but is not counted as restored and is not told
        /// that restoration finished.
        case decodeFailed = 11
        /// Library 1.2: left out of the save that wrote the archive by its
        /// size budget (``RestorationEngine/BudgetPolicy/trim``); only the
        /// top of each trimmed subtree is listed.
        case trimmed = 12

        /// "RST_SKIP_DECLINED". The corresponding C function is `rst_skip_reason_name`.
        public var name: String { RestorationCore.SkipReason(rawValue: rawValue)!.cName }
    }

    /// One record the last restore skipped.
    ///
    /// The corresponding C type is `rst_skipped_record`.
    public struct SkippedRecord: Equatable, Sendable {
        /// "Tabs/Nav/List".
        public var path: String
        /// "" when the record has no class.
        public var className: String
        public var reason: SkipReason
        /// The record's class version (0 for archives without versions).
        public var version: UInt32
        /// A sentence saying why.
        public var detail: String
    }

    /// Every record the last restore skipped, in archive order, descendants
    /// included, and every object whose decode threw: as many as the
    /// report's ``RestoreReport/skipped``. Empty before any restore.
    ///
    /// The corresponding C function is `rst_last_restore_skips`.
    public var lastRestoreSkips: [SkippedRecord] {
        registry.locked {
            core.lastRestoreSkips.map {
                SkippedRecord(path: $0.path, className: $0.className, reason: SkipReason(rawValue: $0.reason.rawValue)!,
                              version: $0.version, detail: $0.detail)
            }
        }
    }
}

extension RestorationCoder {
    /// Stores an array of references (a navigation stack). Each element is a
    /// dependency: it is decoded before this object (cycles in archive order).
    ///
    /// - Parameters:
    ///   - objects: Objects registered with this engine.
    ///   - key: Non-empty UTF-8 of at most 255 bytes, unique within the record.
    /// - Throws: ``RestorationError/invalid(_:)`` when an element is not
    ///   registered with this engine; ``RestorationError/state(_:)`` when one
    ///   was registered after the save began.
    ///
    /// The corresponding C function is `rst_encode_object_array`.
    public func encodeReferences(_ objects: [StateRestoring], forKey key: String) throws(RestorationError) {
        try check()
        var nodes: [ObjectNode] = []
        nodes.reserveCapacity(objects.count)
        for (i, object) in objects.enumerated() {
            guard let node = registry.locked({ registry.liveNode(of: object) }) else {
                let f = RestorationFailure(.invalid, "encodeReferences: \(location), key '\(key)': element \(i), a \(type(of: object)), is not registered with this engine")
                coder.recordEncodeFailure(f)
                throw RestorationError(f)
            }
            nodes.append(node)
        }
        try withKey(key) { (k) throws(RestorationFailure) in try coder.encodeObjectArray(k, nodes) }
    }

    /// Stores an array of references by path, whoever registered the objects.
    ///
    /// - Throws: ``RestorationError/notFound(_:)`` when nothing is
    ///   registered at one of the paths; otherwise as ``encodeReferences(_:forKey:)``.
    ///
    /// The corresponding C functions are `rst_find_object` and `rst_encode_object_array`.
    public func encodeReferences(toPaths paths: [String], forKey key: String) throws(RestorationError) {
        try check()
        var nodes: [ObjectNode] = []
        for path in paths {
            guard let node = registry.core.find(path: path) else {
                let f = RestorationFailure(.notFound, "encodeReferences: \(location), key '\(key)': no object is registered at '\(path)'")
                coder.recordEncodeFailure(f)
                throw RestorationError(f)
            }
            nodes.append(node)
        }
        try withKey(key) { (k) throws(RestorationFailure) in try coder.encodeObjectArray(k, nodes) }
    }

    /// Reads an array of references.
    ///
    /// - Returns: One element per stored reference, nil for a record that
    ///   was skipped or an object that is not a Swift object (a C plugin's:
    ///   use ``decodeReferencePaths(forKey:)``); nil when the key is absent.
    /// - Throws: ``RestorationError/type(_:)`` when the key holds another
    ///   type; ``RestorationError/state(_:)`` in a factory when a referenced
    ///   record is not created yet.
    ///
    /// The corresponding C function is `rst_decode_object_array`.
    public func decodeReferences(forKey key: String) throws(RestorationError) -> [StateRestoring?]? {
        try referencedNodes(key)?.map { ($0?.behavior as? ObjectBox)?.object }
    }

    /// Reads an array of references as a given class; elements of another
    /// class throw ``RestorationError/type(_:)``, skipped ones are nil.
    ///
    /// The corresponding C function is `rst_decode_object_array`.
    public func decodeReferences<T>(_ type: T.Type, forKey key: String) throws(RestorationError) -> [T?]? {
        guard let objects = try decodeReferences(forKey: key) else { return nil }
        var out: [T?] = []
        out.reserveCapacity(objects.count)
        for (i, o) in objects.enumerated() {
            guard let o else { out.append(nil); continue }
            guard let t = o as? T else {
                throw RestorationError.type("decodeReferences: \(location), key '\(key)', element \(i) is a \(Swift.type(of: o)), not a \(T.self)")
            }
            out.append(t)
        }
        return out
    }

    /// The paths of the objects an array of references names (nil for a
    /// skipped record); nil when the key is absent.
    ///
    /// The corresponding C functions are `rst_decode_object_array` and `rst_object_path`.
    public func decodeReferencePaths(forKey key: String) throws(RestorationError) -> [String?]? {
        try referencedNodes(key)?.map { $0?.path }
    }

    private func referencedNodes(_ key: String) throws(RestorationError) -> [ObjectNode?]? {
        try check()
        guard contains(key) else { return nil }
        return try withKey(key) { (k) throws(RestorationFailure) in try coder.decodeObjectArray(k) }
    }
}

// MARK: class versions and migrations

extension RestorationEngine {
    /// Sets the current version of a restoration class: every record of
    /// that class stores it at save, and at restore a record of an older
    /// version runs the migrations from its version up to this one before
    /// any factory or ``StateRestoring/decodeRestorableState(with:)`` sees it.
    /// A class without a version restores as before; a record newer than its
    /// class's version is skipped (``SkipReason/tooNew``).
    ///
    /// - Parameters:
    ///   - version: The version (0 counts as set).
    ///   - className: The class name archives record (`restorationClass`).
    /// - Throws: ``RestorationError/invalid(_:)`` or
    ///   ``RestorationError/limit(_:)`` for a bad name.
    ///
    /// The corresponding C function is `rst_set_class_version`.
    public func setClassVersion(_ version: UInt32, forClass className: String) throws(RestorationError) {
        try RestorationError.wrap { () throws(RestorationFailure) in try core.setClassVersion(className, version) }
    }

    /// Registers the step that migrates records of `className` from
    /// `fromVersion` to `fromVersion + 1`.
    ///
    /// In `migration` the coder reads the record as it stands (`decode`),
    /// adds or replaces values (`encode`), and edits it with
    /// ``RestorationCoder/removeValue(forKey:)`` and
    /// ``RestorationCoder/renameKey(_:to:)``; ``RestorationCoder/decodeRecord(forKey:_:)``
    /// edits a nested record in place, ``RestorationCoder/encodeRecord(forKey:_:)``
    /// adds a new one. References cannot be read or written (no object
    /// exists yet); they are kept. Throwing fails the step: the record is
    /// skipped with its descendants (``SkipReason/migrationFailed``).
    ///
    /// - Throws: ``RestorationError/duplicate(_:)`` when that step exists.
    ///
    /// The corresponding C function is `rst_register_migration`.
    public func registerMigration(forClass className: String, from fromVersion: UInt32,
                                  _ migration: @escaping (_ coder: RestorationCoder, _ fromVersion: UInt32) throws -> Void) throws(RestorationError) {
        let registry = self.registry
        try RestorationError.wrap { () throws(RestorationFailure) in
            try core.registerMigration(className, from: fromVersion) { coder, from in
                let c = RestorationCoder(coder: coder, registry: registry)
                defer { c.invalidate() }
                do {
                    try migration(c, from)
                    return nil
                } catch {
                    let f = (error as? RestorationError)?.failure ?? RestorationFailure(.invalid, "\(error)")
                    return RestorationFailure(f.status, "the migration threw: \(f.message)")
                }
            }
        }
    }
}

extension RestorationCoder {
    /// The class version of the values this coder holds: in a migration, the
    /// version it migrates from; when decoding, the record's version (after
    /// migration, its class's current one; 0 for archives without versions);
    /// when encoding, the class's current version.
    ///
    /// The corresponding C function is `rst_coder_class_version`.
    public var classVersion: UInt32 {
        guard isValid else { return 0 }
        return (try? coder.classVersion) ?? 0
    }

    /// Removes a value from the record a migration edits.
    ///
    /// - Throws: ``RestorationError/notFound(_:)`` for a missing key;
    ///   ``RestorationError/state(_:)`` outside a migration.
    ///
    /// The corresponding C function is `rst_coder_remove`.
    public func removeValue(forKey key: String) throws(RestorationError) {
        try check()
        try withKey(key) { (k) throws(RestorationFailure) in try coder.remove(k) }
    }

    /// Renames a key of the record a migration edits, keeping its value
    /// and place.
    ///
    /// - Throws: ``RestorationError/notFound(_:)`` when `key` is missing;
    ///   ``RestorationError/duplicate(_:)`` when `newKey` is taken;
    ///   ``RestorationError/state(_:)`` outside a migration.
    ///
    /// The corresponding C function is `rst_coder_rename`.
    public func renameKey(_ key: String, to newKey: String) throws(RestorationError) {
        try check()
        try withKey(key) { (from) throws(RestorationFailure) in
            try withUTF8(newKey) { (to) throws(RestorationFailure) in try coder.rename(from, to: KeyBytes(to)) }
        }
    }
}

// MARK: restoration that finishes later

/// An extension of a restore in progress (UIKit's
/// `extendStateRestoration`): until it completes (or its deadline passes),
/// ``RestorationEngine/Options/didFinishRestoring`` waits.
///
/// The corresponding C type is `rst_restore_token`.
public final class RestorationToken: @unchecked Sendable {
    let engine: Engine
    let token: RestoreToken

    init(engine: Engine, token: RestoreToken) {
        self.engine = engine
        self.token = token
    }

    /// Completes the extension, from any thread; the last one runs
    /// `didFinishRestoring` on the calling thread.
    ///
    /// - Throws: ``RestorationError/state(_:)`` when it was completed
    ///   before or its deadline passed (its object is then listed in
    ///   ``RestorationEngine/lastRestoreSkips`` as ``RestorationEngine/SkipReason/expired``).
    ///
    /// The corresponding C function is `rst_complete_restoration`.
    public func complete() throws(RestorationError) {
        try RestorationError.wrap { () throws(RestorationFailure) in try engine.completeRestoration(handle: token.handle) }
    }
}

extension RestorationEngine {
    /// Extends the restore in progress; call it from
    /// ``StateRestoring/decodeRestorableState(with:)`` or
    /// ``StateRestoring/applicationFinishedRestoringState()`` for state that
    /// loads asynchronously, and call ``RestorationToken/complete()`` when it
    /// has. A token not completed within `deadlineMilliseconds` (0: no
    /// deadline) expires. Expiry is noticed on time by the dispatcher
    /// (`dispatch()`, the autosave thread; docs/LIFECYCLE.md), otherwise at
    /// the engine's next call (save, restore, report, skips, complete).
    ///
    /// - Throws: ``RestorationError/state(_:)`` anywhere else.
    ///
    /// The corresponding C function is `rst_extend_restoration`.
    public func extendRestoration(deadlineMilliseconds: UInt32) throws(RestorationError) -> RestorationToken {
        let t = try RestorationError.wrap { () throws(RestorationFailure) in try core.extendRestoration(deadlineMs: deadlineMilliseconds) }
        return RestorationToken(engine: core, token: t)
    }
}

// MARK: ownership of restored objects

extension RestorationEngine {
    /// Hands ownership of a restored object back to the app.
    ///
    /// Objects a restoration class or the fallback factory creates are owned
    /// by the engine (unless ``Options/ownsRestoredObjects`` is false): they
    /// stay registered — saved, and re-created at every launch — until they
    /// are unregistered, even after the app stopped using them. When the app
    /// takes such an object over (puts it in its view hierarchy, say), call
    /// this: from then on the registration lasts exactly as long as the app
    /// keeps the object alive, as for objects the app registers itself, and
    /// the object leaves the archive after the app drops it. To end it at
    /// once, call ``unregister(_:)``.
    ///
    /// - Throws: ``RestorationError/notFound(_:)`` when it is not registered.
    public func relinquish(_ object: StateRestoring) throws(RestorationError) {
        try registry.relinquish(object)
    }

    /// Whether the engine owns (keeps alive) a registered object: true for
    /// objects a restoration class made, until ``relinquish(_:)``.
    public func ownsObject(_ object: StateRestoring) -> Bool {
        registry.isOwned(object)
    }
}
