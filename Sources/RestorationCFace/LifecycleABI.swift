import CRestoration
import RestorationCore
#if canImport(Glibc)
import Glibc
#endif

// docs/LIFECYCLE.md in the C face: options version 2, when to save (dirty
// tracking, autosave, the descriptor, dispatch, the thread, signals) and
// what happened last time (restore reasons, generations). The core does the
// work (Lifecycle.swift, EngineLifecycle.swift, Generations.swift).

/// The members of `rst_engine_options` version 2 adds.
struct OptionsV2 {
    var autosaveDelayMs: UInt32 = 0
    var autosaveMaxDelayMs: UInt32 = 0
    var generations: Int = 0
    var carrySaves: UInt32 = 0
}

/// The size of `rst_engine_options` as a caller of `version` knows it.
func optionsSize(version: UInt32) -> Int {
    switch version {
    case ...1: return MemoryLayout<rst_engine_options>.offset(of: \rst_engine_options.autosave_delay_ms)!
    case 2: return MemoryLayout<rst_engine_options>.offset(of: \rst_engine_options.size_budget)!
    default: return MemoryLayout<rst_engine_options>.size
    }
}

/// The members of `rst_engine_options` version 3 adds (0 for older
/// structs). `encryption_key` is a callback and is adapted where the
/// others are (`createEngine`).
struct OptionsV3 {
    var sizeBudget: UInt64 = 0
    var budgetPolicy: UInt32 = 0
    var signalDeadlineMs: UInt32 = 0
}

/// Checks version 3's members of a copy holding only the caller's version's
/// members.
func optionsV3(_ o: rst_engine_options) -> Result<OptionsV3, RestorationFailure> {
    guard o.version >= 3 else { return .success(OptionsV3()) }
    guard o.budget_policy <= RST_BUDGET_FAIL else {
        return .failure(RestorationFailure(.invalid, "opts->budget_policy is \(o.budget_policy); it must be RST_BUDGET_WARN (0), RST_BUDGET_TRIM (1) or RST_BUDGET_FAIL (2)"))
    }
    return .success(OptionsV3(sizeBudget: o.size_budget, budgetPolicy: o.budget_policy, signalDeadlineMs: o.signal_deadline_ms))
}

/// Checks version 2's members of a copy holding only the caller's version's
/// members (0 past `log` for version 1).
func optionsV2(_ o: rst_engine_options, archivePath: String?) -> Result<OptionsV2, RestorationFailure> {
    guard o.version >= 2 else { return .success(OptionsV2()) }
    if o.generations > UInt32(FileStore.maxGenerations) {
        return .failure(RestorationFailure(.invalid, "opts->generations is \(o.generations); at most \(FileStore.maxGenerations) generations are kept"))
    }
    if o.autosave_max_delay_ms != 0 && o.autosave_max_delay_ms < o.autosave_delay_ms {
        return .failure(RestorationFailure(.invalid, "opts->autosave_max_delay_ms (\(o.autosave_max_delay_ms)) is below opts->autosave_delay_ms (\(o.autosave_delay_ms))"))
    }
    if archivePath == nil && (o.autosave_delay_ms != 0 || o.generations != 0) {
        return .failure(RestorationFailure(.invalid, "opts->autosave_delay_ms and opts->generations need an archive_path"))
    }
    return .success(OptionsV2(autosaveDelayMs: o.autosave_delay_ms, autosaveMaxDelayMs: o.autosave_max_delay_ms,
                              generations: Int(o.generations), carrySaves: o.carry_saves))
}

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

    public static func last_restore_reason(_ e: OpaquePointer!) -> rst_restore_reason {
        guard let e else { return RST_REASON_FIRST_LAUNCH }
        return rst_restore_reason(rawValue: engine(e).lastRestoreReason.rawValue)
    }

    public static func restore_generation(_ e: OpaquePointer!, _ generation: UInt32) -> rst_status {
        guard let e else { return fail(.invalid, "rst_restore_generation: engine is NULL") }
        do {
            try engine(e).restore(generation: generation)
            return RST_OK
        } catch {
            return fail(error, in: "rst_restore_generation")
        }
    }

    public static func restore_reason_name(_ r: rst_restore_reason) -> UnsafePointer<CChar>! {
        switch RestoreReason(rawValue: r.rawValue) {
        case .firstLaunch: return staticCString("RST_REASON_FIRST_LAUNCH")
        case .relaunch: return staticCString("RST_REASON_RELAUNCH")
        case .recover: return staticCString("RST_REASON_RECOVER")
        case .buffer: return staticCString("RST_REASON_BUFFER")
        case .fallback: return staticCString("RST_REASON_FALLBACK")
        case .reset: return staticCString("RST_REASON_RESET")
        case nil: return staticCString("RST_REASON_UNKNOWN")
        }
    }
}

/// A host's context pointer carried into a closure (the host owns what it points to).
struct UnsafeSendableContext: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer?
    init(_ p: UnsafeMutableRawPointer?) { pointer = p }
}
