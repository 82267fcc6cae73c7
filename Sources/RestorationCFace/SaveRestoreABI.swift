import CRestoration
import RestorationArchive
import RestorationCore
#if canImport(Glibc)
import Glibc
#endif

// "Saving and restoring" of Include/restoration.h: save, restore, buffers,
// discard, export, archive info, the report, skips, reasons, generations.

extension CFace {
    public static func save(_ e: OpaquePointer!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_save: engine is NULL") }
        if !engine(e).hasStore { return fail(.invalid, "rst_save: the engine has no archive_path (use rst_save_to_buffer)") }
        do {
            let engine = engine(e)
            try engine.lifecycle.reportingSave(.call) { () throws(RestorationFailure) in try engine.save() }
            return RST_OK
        } catch {
            return fail(error, in: "rst_save")
        }
    }

    public static func restore(_ e: OpaquePointer!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_restore: engine is NULL") }
        if !engine(e).hasStore { return fail(.invalid, "rst_restore: the engine has no archive_path (use rst_restore_from_buffer)") }
        do {
            try engine(e).restore()
            return RST_OK
        } catch {
            return fail(error, in: "rst_restore")
        }
    }

    public static func save_to_buffer(_ e: OpaquePointer!, _ out: UnsafeMutablePointer<UnsafeMutableRawPointer?>!, _ len: UnsafeMutablePointer<Int>!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_save_to_buffer: engine is NULL") }
        guard let out, let len else { return fail(.invalid, "rst_save_to_buffer: out or len is NULL") }
        do {
            var asked = 0
            guard let (p, n) = try engine(e).saveToBuffer(allocate: { size in
                asked = size
                return malloc(max(size, 1))
            }) else { return fail(.noMemory, "rst_save_to_buffer: cannot allocate \(asked) bytes") }
            out.pointee = p
            len.pointee = n
            return RST_OK
        } catch {
            return fail(error, in: "rst_save_to_buffer")
        }
    }

    public static func restore_from_buffer(_ e: OpaquePointer!, _ data: UnsafeRawPointer!, _ len: Int) -> rst_status {
        guard let e else { return fail(.invalid, "rst_restore_from_buffer: engine is NULL") }
        guard data != nil || len == 0 else { return fail(.invalid, "rst_restore_from_buffer: data is NULL") }
        do {
            try engine(e).restore(bytes: UnsafeRawBufferPointer(start: data, count: len))
            return RST_OK
        } catch {
            return fail(error, in: "rst_restore_from_buffer")
        }
    }

    public static func discard(_ e: OpaquePointer!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_discard: engine is NULL") }
        if !engine(e).hasStore { return fail(.invalid, "rst_discard: the engine has no archive_path") }
        do {
            try engine(e).discard()
            return RST_OK
        } catch {
            return fail(error, in: "rst_discard")
        }
    }

    public static func read_archive_info(_ path: UnsafePointer<CChar>!, _ out: UnsafeMutablePointer<UnsafeMutablePointer<rst_archive_info>?>!) -> rst_status {
        guard let path else { return fail(.invalid, "rst_read_archive_info: path is NULL") }
        guard let out else { return fail(.invalid, "rst_read_archive_info: out is NULL") }
        // Refused like rst_engine_create's paths: String(cString:) would replace
        // the bytes with U+FFFD and open another file.
        guard let p = String(validatingCString: path) else { return fail(.invalid, "rst_read_archive_info: path is not valid UTF-8") }
        do {
            let reader = try Engine.validate(adopting: try FileStore.readBuffer(p), source: "archive '\(p)'")
            let info = reader.info
            var packer = OneAllocation()
            packer.reserve(MemoryLayout<rst_archive_info>.stride)
            let strings = [info.appVersion, info.systemVersion, info.idiom]
            for s in strings { packer.reserveString(s) }
            guard let block = packer.allocate() else { return fail(.noMemory, "rst_read_archive_info: out of memory") }
            let result = block.bindMemory(to: rst_archive_info.self, capacity: 1)
            var cursor = OneAllocation.Cursor(block: block, offset: MemoryLayout<rst_archive_info>.stride)
            result.initialize(to: rst_archive_info(format_version: info.formatVersion,
                                                   app_version: cursor.put(info.appVersion),
                                                   system_version: cursor.put(info.systemVersion),
                                                   idiom: cursor.put(info.idiom),
                                                   saved_at_ms: info.savedAtMs, object_count: info.objectCount,
                                                   restore_reason: 0, generation: 0))
            out.pointee = result
            return RST_OK
        } catch {
            return fail(error, in: "rst_read_archive_info")
        }
    }

    public static func last_restore_report(_ e: OpaquePointer!, _ out: UnsafeMutablePointer<rst_restore_report>!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_last_restore_report: engine is NULL") }
        guard let out else { return fail(.invalid, "rst_last_restore_report: out is NULL") }
        guard let r = engine(e).lastRestoreReport else {
            return fail(.state, "rst_last_restore_report: this engine has not restored anything yet")
        }
        out.pointee = rst_restore_report(archived: r.archived, restored: r.restored, skipped: r.skipped,
                                         plugins_loaded: r.pluginsLoaded, plugins_rejected: r.pluginsRejected)
        return RST_OK
    }

    /// `rst_export`.
    public static func export_state(_ e: OpaquePointer!, _ flags: UInt32, _ out: UnsafeMutablePointer<UnsafeMutableRawPointer?>!, _ len: UnsafeMutablePointer<Int>!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_export: engine is NULL") }
        guard let out, let len else { return fail(.invalid, "rst_export: buf or len is NULL") }
        guard flags & ~UInt32(RST_EXPORT_PORTABLE) == 0 else {
            return fail(.invalid, "rst_export: flags 0x\(String(flags, radix: 16)) hold bits other than RST_EXPORT_PORTABLE")
        }
        do {
            var asked = 0
            guard let (p, n) = try engine(e).export(portable: flags & UInt32(RST_EXPORT_PORTABLE) != 0, allocate: { size in
                asked = size
                return malloc(max(size, 1))
            }) else { return fail(.noMemory, "rst_export: cannot allocate \(asked) bytes") }
            out.pointee = p
            len.pointee = n
            return RST_OK
        } catch {
            return fail(error, in: "rst_export")
        }
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
        staticCString(CSpelling.restoreReason(rawValue: r.rawValue))
    }

    public static func last_restore_skips(_ e: OpaquePointer!, _ out: UnsafeMutablePointer<UnsafeMutablePointer<rst_skipped_record>?>!,
                                          _ count: UnsafeMutablePointer<Int>!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_last_restore_skips: engine is NULL") }
        guard let out else { return fail(.invalid, "rst_last_restore_skips: out is NULL") }
        guard let count else { return fail(.invalid, "rst_last_restore_skips: count is NULL") }
        let eng = engine(e)
        let (report, skips) = eng.serialized { (eng.lastRestoreReport, eng.lastRestoreSkips) }
        guard report != nil else {
            return fail(.state, "rst_last_restore_skips: this engine has not restored anything yet")
        }
        out.pointee = nil
        count.pointee = 0
        if skips.isEmpty { return RST_OK }
        var packer = OneAllocation()
        packer.reserve(MemoryLayout<rst_skipped_record>.stride * skips.count)
        for s in skips {
            packer.reserveString(s.path)
            packer.reserveString(s.className)
            packer.reserveString(s.detail)
        }
        guard let block = packer.allocate() else { return fail(.noMemory, "rst_last_restore_skips: out of memory") }
        let array = block.bindMemory(to: rst_skipped_record.self, capacity: skips.count)
        var cursor = OneAllocation.Cursor(block: block, offset: (MemoryLayout<rst_skipped_record>.stride * skips.count + 7) & ~7)
        for (i, s) in skips.enumerated() {
            (array + i).initialize(to: rst_skipped_record(path: cursor.put(s.path), class_name: cursor.put(s.className),
                                                          reason: s.reason.rawValue, version: s.version,
                                                          detail: cursor.put(s.detail)))
        }
        out.pointee = array
        count.pointee = skips.count
        return RST_OK
    }

    public static func skip_reason_name(_ r: rst_skip_reason) -> UnsafePointer<CChar>! {
        staticCString(CSpelling.skipReason(rawValue: r.rawValue))
    }
}
