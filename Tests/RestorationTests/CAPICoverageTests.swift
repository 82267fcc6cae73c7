// The Swift API reaches every C function: the functions of the three public
// headers (every `RST_API` declaration of restoration.h and
// restoration_store.h, and every member of restoration_plugin.h's
// `rst_host_api` table, the functions a host offers its plugins) are listed
// from the headers themselves and looked up in `twins`, which names each
// one's Swift counterpart. A function added to a header without a Swift twin
// fails this test, and so does a twin left over for a function that is
// gone. Each twin's witness is a closure or key path that names the Swift
// member, so the compiler checks that the member exists with that shape.
import Foundation
import XCTest
@testable import Restoration

final class CAPICoverageTests: XCTestCase {
    /// A Swift counterpart: what a Swift program writes instead.
    struct Twin {
        let swift: String
        /// Never called: it names the member, so it must compile.
        let witness: Any
        init(_ swift: String, _ witness: Any) {
            self.swift = swift
            self.witness = witness
        }
    }

    typealias E = RestorationEngine
    typealias C = RestorationCoder

    static let twins: [String: Twin] = [
        // The library
        "rst_version": Twin("RestorationEngine.libraryVersion", { _ = E.libraryVersion }),
        "rst_status_name": Twin("RestorationError.statusName", \RestorationError.statusName),
        "rst_last_error": Twin("RestorationError.message (each thrown error carries its sentence)", \RestorationError.message),
        "rst_free": Twin("nothing to free: Data, arrays and strings own their memory (RestorationEngine.saveToData() returns Data)",
                         { (e: E) throws in _ = try e.saveToData() }),
        "rst_engine_options_init": Twin("RestorationEngine.Options() (every member has its default)", { _ = E.Options() }),

        // The engine
        "rst_engine_create": Twin("RestorationEngine(options:)", { (o: E.Options) throws in _ = try E(options: o) }),
        "rst_engine_create_with_store": Twin("RestorationEngine(store:options:)",
                                             { (s: RestorationStore, o: E.Options) throws in _ = try E(store: s, options: o) }),
        "rst_engine_destroy": Twin("releasing the RestorationEngine (its deinit)", { (e: E) in withExtendedLifetime(e) {} }),
        "rst_file_store": Twin("RestorationStores.file(_:)", { (p: String) throws in _ = try RestorationStores.file(p) }),
        "rst_memory_store": Twin("RestorationStores.memory(name:)", { _ = RestorationStores.memory(name: "m") }),
        "rst_store_set_error": Twin("a RestorationStore member throws a RestorationError carrying its sentence",
                                    { (s: RestorationStore) throws in try s.lock() }),

        // Objects
        "rst_register_object": Twin("RestorationEngine.register(_:)", { (e: E, o: StateRestoring) throws in try e.register(o) }),
        "rst_unregister_object": Twin("RestorationEngine.unregister(_:)", { (e: E, o: StateRestoring) throws in try e.unregister(o) }),
        "rst_find_object": Twin("RestorationEngine.registeredObject(atPath:)", { (e: E) in _ = e.registeredObject(atPath: "A") }),
        "rst_object_instance": Twin("RestorationEngine.RegisteredObject.object, RestorationEngine.object(atPath:)",
                                    \E.RegisteredObject.object),
        "rst_object_identifier": Twin("RestorationEngine.RegisteredObject.identifier", \E.RegisteredObject.identifier),
        "rst_object_parent": Twin("RestorationEngine.RegisteredObject.parentPath", \E.RegisteredObject.parentPath),
        "rst_object_path": Twin("RestorationEngine.path(of:), RegisteredObject.path", { (e: E, o: StateRestoring) in _ = e.path(of: o) }),
        "rst_object_class_name": Twin("RestorationEngine.RegisteredObject.className", \E.RegisteredObject.className),
        "rst_register_class": Twin("RestorationEngine.registerRestorationClass(named:factory:) and (_:named:)",
                                   { (e: E) throws in try e.registerRestorationClass(named: "K") { _, _ in nil } }),
        "rst_set_fallback_factory": Twin("RestorationEngine.setFallbackFactory(_:)", { (e: E) in e.setFallbackFactory(nil) }),
        "rst_set_object_priority": Twin("RestorationEngine.setPriority(_:for:)",
                                        { (e: E, o: StateRestoring) throws in try e.setPriority(1, for: o) }),

        // Saving and restoring
        "rst_save": Twin("RestorationEngine.save()", { (e: E) throws in try e.save() }),
        "rst_restore": Twin("RestorationEngine.restore()", { (e: E) throws in try e.restore() }),
        "rst_save_to_buffer": Twin("RestorationEngine.saveToData()", { (e: E) throws in _ = try e.saveToData() }),
        "rst_restore_from_buffer": Twin("RestorationEngine.restore(from:)", { (e: E) throws in try e.restore(from: Data()) }),
        "rst_discard": Twin("RestorationEngine.discard()", { (e: E) throws in try e.discard() }),
        "rst_export": Twin("RestorationEngine.export(portable:)", { (e: E) throws in _ = try e.export(portable: true) }),
        "rst_read_archive_info": Twin("RestorationEngine.archiveInfo(at:), archiveInfo(from:)",
                                      { (u: URL) throws in _ = try E.archiveInfo(at: u) }),
        "rst_last_restore_report": Twin("RestorationEngine.lastRestoreReport", \E.lastRestoreReport),
        "rst_last_restore_skips": Twin("RestorationEngine.lastRestoreSkips", \E.lastRestoreSkips),
        "rst_skip_reason_name": Twin("RestorationEngine.SkipReason.name", \E.SkipReason.name),
        "rst_last_save_sizes": Twin("RestorationEngine.lastSaveSizes", \E.lastSaveSizes),
        "rst_load_plugins": Twin("RestorationEngine.loadPlugins()", { (e: E) throws in try e.loadPlugins() }),
        "rst_list_plugins": Twin("RestorationEngine.plugins()", { (e: E) throws in _ = try e.plugins() }),

        // The coder: encoding
        "rst_encode_bool": Twin("RestorationCoder.encode(_: Bool, forKey:)", { (c: C) throws in try c.encode(true, forKey: "k") }),
        "rst_encode_int": Twin("RestorationCoder.encode(_: Int, forKey:)", { (c: C) throws in try c.encode(1, forKey: "k") }),
        "rst_encode_double": Twin("RestorationCoder.encode(_: Double, forKey:)", { (c: C) throws in try c.encode(1.5, forKey: "k") }),
        "rst_encode_string": Twin("RestorationCoder.encode(_: String, forKey:)", { (c: C) throws in try c.encode("s", forKey: "k") }),
        "rst_encode_bytes": Twin("RestorationCoder.encode(_: Data, forKey:)", { (c: C) throws in try c.encode(Data(), forKey: "k") }),
        "rst_encode_os_string": Twin("RestorationCoder.encodeOSString(_:forKey:)",
                                     { (c: C) throws in try c.encodeOSString([0x2f], forKey: "k") }),
        "rst_encode_object": Twin("RestorationCoder.encodeReference(_:forKey:)",
                                  { (c: C, o: StateRestoring) throws in try c.encodeReference(o, forKey: "k") }),
        "rst_encode_int_array": Twin("RestorationCoder.encode(_: [Int], forKey:)", { (c: C) throws in try c.encode([1, 2], forKey: "k") }),
        "rst_encode_string_array": Twin("RestorationCoder.encode(_: [String], forKey:)",
                                        { (c: C) throws in try c.encode(["a"], forKey: "k") }),
        "rst_encode_object_array": Twin("RestorationCoder.encodeReferences(_:forKey:)",
                                        { (c: C, o: StateRestoring) throws in try c.encodeReferences([o], forKey: "k") }),
        "rst_encode_begin_record": Twin("RestorationCoder.encodeRecord(forKey:_:) (and any Encodable)",
                                        { (c: C) throws in try c.encodeRecord(forKey: "k") { _ in } }),
        "rst_encode_end_record": Twin("RestorationCoder.encodeRecord(forKey:_:) ends it when its body returns",
                                      { (c: C) throws in try c.encodeRecord(forKey: "k") { _ in } }),

        // The coder: decoding
        "rst_coder_contains": Twin("RestorationCoder.contains(_:)", { (c: C) in _ = c.contains("k") }),
        "rst_coder_value_type": Twin("RestorationCoder.valueType(forKey:)", { (c: C) throws in _ = try c.valueType(forKey: "k") }),
        "rst_decode_bool": Twin("RestorationCoder.decode(Bool.self, forKey:)", { (c: C) throws in _ = try c.decode(Bool.self, forKey: "k") }),
        "rst_decode_int": Twin("RestorationCoder.decode(Int.self, forKey:)", { (c: C) throws in _ = try c.decode(Int.self, forKey: "k") }),
        "rst_decode_double": Twin("RestorationCoder.decode(Double.self, forKey:)",
                                  { (c: C) throws in _ = try c.decode(Double.self, forKey: "k") }),
        "rst_decode_string": Twin("RestorationCoder.decode(String.self, forKey:)",
                                  { (c: C) throws in _ = try c.decode(String.self, forKey: "k") }),
        "rst_decode_string_copy": Twin("RestorationCoder.decode(String.self, forKey:) (a Swift String is a copy)",
                                       { (c: C) throws in _ = try c.decode(String.self, forKey: "k") }),
        "rst_decode_bytes": Twin("RestorationCoder.decode(Data.self, forKey:)", { (c: C) throws in _ = try c.decode(Data.self, forKey: "k") }),
        "rst_decode_os_string": Twin("RestorationCoder.decodeOSString(forKey:)", { (c: C) throws in _ = try c.decodeOSString(forKey: "k") }),
        "rst_decode_object": Twin("RestorationCoder.decodeReference(forKey:), decodeReference(_:forKey:)",
                                  { (c: C) throws in _ = try c.decodeReference(forKey: "k") }),
        "rst_decode_int_array": Twin("RestorationCoder.decode([Int].self, forKey:)",
                                     { (c: C) throws in _ = try c.decode([Int].self, forKey: "k") }),
        "rst_decode_string_array": Twin("RestorationCoder.decode([String].self, forKey:)",
                                        { (c: C) throws in _ = try c.decode([String].self, forKey: "k") }),
        "rst_decode_object_array": Twin("RestorationCoder.decodeReferences(forKey:)",
                                        { (c: C) throws in _ = try c.decodeReferences(forKey: "k") }),
        "rst_decode_begin_record": Twin("RestorationCoder.decodeRecord(forKey:_:) (and any Decodable)",
                                        { (c: C) throws in _ = try c.decodeRecord(forKey: "k") { _ in 1 } }),
        "rst_decode_end_record": Twin("RestorationCoder.decodeRecord(forKey:_:) ends it when its body returns",
                                      { (c: C) throws in _ = try c.decodeRecord(forKey: "k") { _ in 1 } }),
        "rst_coder_fail": Twin("StateRestoring.decodeRestorableState(with:) throws",
                               { (o: StateRestoring, c: C) throws in try o.decodeRestorableState(with: c) }),

        // Lifecycle
        "rst_mark_dirty": Twin("RestorationEngine.markDirty()", { (e: E) in e.markDirty() }),
        "rst_is_dirty": Twin("RestorationEngine.isDirty", \E.isDirty),
        "rst_flush": Twin("RestorationEngine.flush()", { (e: E) throws in try e.flush() }),
        "rst_event_fd": Twin("RestorationEngine.eventFileDescriptor(), autosaveOnMainQueue()",
                             { (e: E) throws in _ = try e.eventFileDescriptor() }),
        "rst_dispatch": Twin("RestorationEngine.dispatch()", { (e: E) throws in try e.dispatch() }),
        "rst_next_timeout_ms": Twin("RestorationEngine.nextTimeout", \E.nextTimeout),
        "rst_start_autosave_thread": Twin("RestorationEngine.startAutosaveThread()", { (e: E) throws in try e.startAutosaveThread() }),
        "rst_save_on_signals": Twin("RestorationEngine.saveOnSignals(_:)", { (e: E) throws in try e.saveOnSignals() }),
        "rst_set_save_listener": Twin("RestorationEngine.setSaveListener(_:), saveEvents", { (e: E) in e.setSaveListener(nil) }),
        "rst_close_session": Twin("RestorationEngine.closeSession()", { (e: E) in e.closeSession() }),
        "rst_last_restore_reason": Twin("RestorationEngine.lastRestoreReason", \E.lastRestoreReason),
        "rst_restore_reason_name": Twin("RestorationEngine.RestoreReason.description", \E.RestoreReason.description),
        "rst_restore_generation": Twin("RestorationEngine.restore(generation:)", { (e: E) throws in try e.restore(generation: 1) }),

        // Surviving change
        "rst_set_class_version": Twin("RestorationEngine.setClassVersion(_:forClass:)",
                                      { (e: E) throws in try e.setClassVersion(2, forClass: "K") }),
        "rst_register_migration": Twin("RestorationEngine.registerMigration(forClass:from:_:)",
                                       { (e: E) throws in try e.registerMigration(forClass: "K", from: 1) { _, _ in } }),
        "rst_coder_class_version": Twin("RestorationCoder.classVersion", \C.classVersion),
        "rst_coder_remove": Twin("RestorationCoder.removeValue(forKey:)", { (c: C) throws in try c.removeValue(forKey: "k") }),
        "rst_coder_rename": Twin("RestorationCoder.renameKey(_:to:)", { (c: C) throws in try c.renameKey("a", to: "b") }),
        "rst_extend_restoration": Twin("RestorationEngine.extendRestoration(deadlineMilliseconds:)",
                                       { (e: E) throws in _ = try e.extendRestoration(deadlineMilliseconds: 0) }),
        "rst_complete_restoration": Twin("RestorationToken.complete()", { (t: RestorationToken) throws in try t.complete() }),

        // Sensitive values
        "rst_set_key_sensitivity": Twin("RestorationEngine.setSensitivity(_:forKey:inClass:)",
                                        { (e: E) throws in try e.setSensitivity(.local, forKey: "k", inClass: "K") }),
        "rst_coder_set_sensitivity": Twin("RestorationCoder.setSensitivity(_:forKey:)",
                                          { (c: C) throws in try c.setSensitivity(.local, forKey: "k") }),
    ]

    // MARK: the headers

    static func header(_ name: String) throws -> String {
        try String(contentsOf: packageRoot.appendingPathComponent("Include/\(name)"), encoding: .utf8)
    }

    /// The header without its comments (a comment may mention `RST_API`).
    static func code(_ text: String) -> String {
        var s = text.replacingOccurrences(of: #"/\*[\s\S]*?\*/"#, with: " ", options: .regularExpression)
        s = s.replacingOccurrences(of: #"//[^\n]*"#, with: " ", options: .regularExpression)
        return s
    }

    static func matches(_ pattern: String, in text: String) throws -> [[String]] {
        let re = try NSRegularExpression(pattern: pattern)
        let ns = text as NSString
        return re.matches(in: text, range: NSRange(location: 0, length: ns.length)).map { m in
            (1..<m.numberOfRanges).map { ns.substring(with: m.range(at: $0)) }
        }
    }

    /// Every function an `RST_API` declaration names.
    static func apiFunctions(_ headerName: String) throws -> Set<String> {
        Set(try matches(#"RST_API\b[^;(]*?\b(rst_\w+)\s*\("#, in: code(try header(headerName))).map { $0[0] })
    }

    /// The members of `rst_host_api`, and the C name each is reached by in
    /// a plugin (`#define rst_free rst_plugin_api__->mem_free`).
    static func hostTable() throws -> (members: [String], cNames: [String: String]) {
        let text = code(try header("restoration_plugin.h"))
        guard let start = text.range(of: "typedef struct rst_host_api {"),
              let end = text.range(of: "} rst_host_api;", range: start.upperBound..<text.endIndex) else {
            throw XCTSkip("restoration_plugin.h has no `typedef struct rst_host_api { … } rst_host_api;` to read")
        }
        let body = String(text[start.upperBound..<end.lowerBound])
        let members = try matches(#"\(\s*\*\s*(\w+)\s*\)\s*\("#, in: body).map { $0[0] }
        var cNames: [String: String] = [:]
        for m in try matches(#"#define\s+(rst_\w+)\s+rst_plugin_api__->(\w+)"#, in: text) { cNames[m[1]] = m[0] }
        return (members, cNames)
    }

    // MARK: the tests

    func testEveryHeaderFunctionHasASwiftTwin() throws {
        var functions: [String: String] = [:]   // function → header
        for h in ["restoration.h", "restoration_store.h"] {
            let found = try Self.apiFunctions(h)
            XCTAssertFalse(found.isEmpty, "no RST_API declaration found in Include/\(h): the parser no longer matches the header")
            for f in found { functions[f] = h }
        }
        XCTAssertGreaterThan(functions.count, 80, "the headers' RST_API functions: \(functions.keys.sorted())")
        XCTAssertNotNil(functions["rst_close_session"], "rst_close_session, a declaration the parser must find")

        let table = try Self.hostTable()
        XCTAssertGreaterThan(table.members.count, 60, "the members of rst_host_api: \(table.members)")
        // A member is the C function its `#define` names; the members added
        // later have no `#define` (plugins check them with RST_HOST_API_HAS)
        // and are `rst_<member>`, but for these.
        let renamed = ["mem_free": "rst_free", "export_state": "rst_export"]
        for member in table.members {
            let c = table.cNames[member] ?? renamed[member] ?? "rst_\(member)"
            if functions[c] == nil {
                // A host function with no RST_API twin: it needs a Swift twin of its own.
                functions["rst_host_api.\(member)"] = "restoration_plugin.h (a member with no RST_API function \(c))"
            }
        }

        let missing = functions.keys.filter { Self.twins[$0] == nil }.sorted()
        XCTAssertEqual(missing, [], "C functions without a Swift twin (add the Swift API member, then its line to CAPICoverageTests.twins): "
                       + missing.map { "\($0) (\(functions[$0]!))" }.joined(separator: ", "))
        let stale = Self.twins.keys.filter { functions[$0] == nil }.sorted()
        XCTAssertEqual(stale, [], "CAPICoverageTests.twins names functions no header declares: \(stale)")
        for (name, twin) in Self.twins {
            XCTAssertFalse(twin.swift.isEmpty, "\(name): the Swift twin has no name")
        }
    }

    /// The Swift API's documentation names the C function each member
    /// stands for ("The corresponding C function is `rst_save`"), so a
    /// reader of either finds the other.
    func testTheSwiftDocumentationNamesEveryCFunction() throws {
        let dir = packageRoot.appendingPathComponent("Sources/Restoration")
        var text = ""
        for f in try FileManager.default.contentsOfDirectory(atPath: dir.path) where f.hasSuffix(".swift") {
            text += try String(contentsOf: dir.appendingPathComponent(f), encoding: .utf8)
        }
        let unnamed = Self.twins.keys.filter { !text.contains("`\($0)`") }.sorted()
        // Functions whose Swift twin is the language itself (memory, a default initializer).
        let byTheLanguage: Set<String> = ["rst_free", "rst_engine_options_init", "rst_decode_string_copy"]
        XCTAssertEqual(unnamed.filter { !byTheLanguage.contains($0) }, [],
                       "C functions that no doc comment in Sources/Restoration names (write \"The corresponding C function is `rst_…`\")")
    }
}
