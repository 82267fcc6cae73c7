import CRestoration
import RestorationCore
#if canImport(Glibc)
import Glibc
#endif

// The lifecycle in the C face (library 1.1): when to save (dirty tracking, autosave,
// the descriptor, dispatch, the thread, signals) and what happened last
// time (restore reasons, generations). The core does the work
// (Lifecycle.swift, StorageRoom.swift, Generations.swift); options
// version 2's members are read with the others (OptionsABI.swift).

extension CFace {
    public static func mark_dirty(_ e: OpaquePointer!, _ o: OpaquePointer!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_mark_dirty: engine is NULL") }
        let engine = engine(e)
        if let o {
            let belongs = withNode(o) { $0.engine === engine && $0.isRegistered }
            guard belongs else { return fail(.invalid, "rst_mark_dirty: the object is not registered in this engine") }
        }
        engine.lifecycle.markDirty()
        return RST_OK
    }

    public static func is_dirty(_ e: OpaquePointer!) -> Bool {
        guard let e else { return false }
        return engine(e).lifecycle.isDirty
    }

    public static func flush(_ e: OpaquePointer!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_flush: engine is NULL") }
        let engine = engine(e)
        guard engine.lifecycle.isDirty else { return RST_OK }
        do {
            try engine.lifecycle.reportingSave(.call) { () throws(RestorationFailure) in try engine.save() }
            return RST_OK
        } catch {
            return fail(error, in: "rst_flush")
        }
    }

    /// `rst_set_save_listener`: one per engine; NULL removes it. The C
    /// function and its context are kept by value (no allocation per save).
    public static func set_save_listener(_ e: OpaquePointer!, _ fn: rst_save_listener!, _ ctx: UnsafeMutableRawPointer!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_set_save_listener: engine is NULL") }
        let engine = engine(e)
        guard let fn else {
            engine.lifecycle.saveListener = nil
            return RST_OK
        }
        let context = UnsafeSendableContext(ctx)
        engine.lifecycle.saveListener = { trigger, failure in
            fn(e, failure.map { cStatus($0.status) } ?? RST_OK, trigger.rawValue, context.pointer)
        }
        return RST_OK
    }

    /// The lifecycle calls need an archive to save to.
    private static func withArchive(_ e: OpaquePointer?, _ what: StaticString,
                                    _ body: (Engine) throws(RestorationFailure) -> Void) -> rst_status {
        guard let e else { return fail(.invalid, "\(what): engine is NULL") }
        let engine = engine(e)
        guard engine.hasStore else {
            return fail(.invalid, "\(what): the engine has no archive_path, so it has nothing to save to")
        }
        do {
            try body(engine)
            return RST_OK
        } catch {
            return fail(error, in: what)
        }
    }

    public static func event_fd(_ e: OpaquePointer!) -> Int32 {
        var fd: Int32 = -1
        let s = withArchive(e, "rst_event_fd") { engine throws(RestorationFailure) in fd = try engine.lifecycle.eventDescriptor() }
        return s == RST_OK ? fd : -1
    }

    public static func dispatch(_ e: OpaquePointer!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_dispatch: engine is NULL") }
        do {
            try engine(e).lifecycle.dispatch()
            return RST_OK
        } catch {
            return fail(error, in: "rst_dispatch (autosave)")
        }
    }

    public static func next_timeout_ms(_ e: OpaquePointer!) -> Int64 {
        guard let e else { return -1 }
        return engine(e).lifecycle.nextTimeoutMs()
    }

    public static func start_autosave_thread(_ e: OpaquePointer!) -> rst_status {
        withArchive(e, "rst_start_autosave_thread") { engine throws(RestorationFailure) in try engine.lifecycle.startThread() }
    }

    public static func save_on_signals(_ e: OpaquePointer!, _ signals: UnsafePointer<Int32>!, _ count: Int) -> rst_status {
        guard signals != nil || count == 0 else { return fail(.invalid, "rst_save_on_signals: signal_numbers is NULL") }
        let list = count == 0 ? [] : Array(UnsafeBufferPointer(start: signals, count: count))
        return withArchive(e, "rst_save_on_signals") { engine throws(RestorationFailure) in try engine.lifecycle.saveOnSignals(list) }
    }



}

/// A host's context pointer carried into a closure (the host owns what it points to).
struct UnsafeSendableContext: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer?
    init(_ p: UnsafeMutableRawPointer?) { pointer = p }
}

extension CFace {
    /// `rst_close_session`: async-signal-safe with the file store and with a
    /// store that maps (see the header).
    public static func close_session(_ e: OpaquePointer!) {
        guard let e else { return }
        engine(e).closeSession()
    }
}
