import CRestoration
import RestorationArchive
import RestorationCore
#if canImport(Glibc)
import Glibc
#endif

// docs/EVOLUTION.md: what each rst_* function of "Surviving change
// and failure" does. Forwarded to by RestorationC's exports and the host
// table (RestorationPlugins/HostTable.swift). The options of carried
// records and crash quarantine are read with the others (OptionsABI.swift).

// MARK: every skip explained

extension CFace {
    public static func skip_reason_name(_ r: rst_skip_reason) -> UnsafePointer<CChar>! {
        staticCString(CSpelling.skipReason(rawValue: r.rawValue))
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
}

// MARK: arrays of object references

extension CFace {
    public static func encode_object_array(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ v: UnsafePointer<OpaquePointer?>!, _ n: Int) -> rst_status {
        guard let c, let key else { return encodeNull(c, "rst_encode_object_array") }
        guard v != nil || n == 0 else {
            return misuse(c, { coder, k in "rst_encode_object_array: \(coder.location), key '\(k.string)': v is NULL but n is \(n)" }, key)
        }
        var nodes: [ObjectNode] = []
        nodes.reserveCapacity(n)
        for i in 0..<n {
            guard let p = v[i] else {
                return misuse(c, { coder, k in "rst_encode_object_array: \(coder.location), key '\(k.string)': element \(i) is NULL" }, key)
            }
            nodes.append(node(p))
        }
        return withCoder(c) { coder in
            do throws(RestorationFailure) { try coder.encodeObjectArray(KeyBytes(cString: key), nodes); return RST_OK } catch { return fail(error, in: "rst_encode_object_array") }
        }
    }

    public static func decode_object_array(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!, _ index: Int,
                                           _ out: UnsafeMutablePointer<OpaquePointer?>!, _ count: UnsafeMutablePointer<Int>!) -> rst_status {
        count?.pointee = 0   // "always set": 0 when the key is absent or of another type
        guard let out else { return outMissing("rst_decode_object_array") }
        guard let c, let key else { return decodeNull(c, "rst_decode_object_array") }
        return withCoder(c) { coder in
            do throws(RestorationFailure) {
                let k = KeyBytes(cString: key)
                let (h, n, inRange) = try coder.decodeObjectArrayElement(k, at: index)
                count?.pointee = n
                guard inRange else {
                    return fail(.notFound, "rst_decode_object_array: \(coder.location), key '\(k.string)' has \(n) elements; index \(index) is out of range")
                }
                out.pointee = h.map { OpaquePointer($0) }
                return RST_OK
            } catch {
                // "always set": the count when the key holds an object array.
                if let n = try? coder.decodeObjectArrayCount(KeyBytes(cString: key)) { count?.pointee = n }
                return fail(error, in: "rst_decode_object_array")
            }
        }
    }
}

// MARK: class versions and migrations

extension CFace {
    public static func set_class_version(_ e: OpaquePointer!, _ class_name: UnsafePointer<CChar>!, _ version: UInt32) -> rst_status {
        guard let e else { return fail(.invalid, "rst_set_class_version: engine is NULL") }
        guard let class_name else { return fail(.invalid, "rst_set_class_version: class_name is NULL") }
        guard let name = String(validatingCString: class_name) else { return fail(.invalid, "rst_set_class_version: the class name is not valid UTF-8") }
        do throws(RestorationFailure) {
            try engine(e).setClassVersion(name, version)
            return RST_OK
        } catch { return fail(error, in: "rst_set_class_version") }
    }

    public static func register_migration(_ e: OpaquePointer!, _ class_name: UnsafePointer<CChar>!, _ from_version: UInt32,
                                          _ fn: rst_migrate_fn!, _ ctx: UnsafeMutableRawPointer!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_register_migration: engine is NULL") }
        guard let class_name else { return fail(.invalid, "rst_register_migration: class_name is NULL") }
        guard let fn else { return fail(.invalid, "rst_register_migration: fn is NULL") }
        guard let name = String(validatingCString: class_name) else { return fail(.invalid, "rst_register_migration: the class name is not valid UTF-8") }
        let context = ctx
        do throws(RestorationFailure) {
            try engine(e).registerMigration(name, from: from_version) { coder, from in
                let s = fn(OpaquePointer(coder.handle), from, context)
                if s == RST_OK { return nil }
                let status = Status(rawValue: s.rawValue) ?? .invalid
                return RestorationFailure(status, "the migration returned \(status.cName)")
            }
            return RST_OK
        } catch { return fail(error, in: "rst_register_migration") }
    }

    public static func coder_class_version(_ c: OpaquePointer!) -> UInt32 {
        guard let c else { _ = fail(.invalid, "rst_coder_class_version: coder is NULL"); return 0 }
        return withCoder(c) { coder in
            do throws(RestorationFailure) { return try coder.classVersion } catch { _ = fail(error, in: "rst_coder_class_version"); return 0 }
        }
    }

    public static func coder_remove(_ c: OpaquePointer!, _ key: UnsafePointer<CChar>!) -> rst_status {
        guard let c else { return fail(.invalid, "rst_coder_remove: coder is NULL") }
        guard let key else { return fail(.invalid, "rst_coder_remove: key is NULL") }
        return withCoder(c) { coder in
            do throws(RestorationFailure) { try coder.remove(KeyBytes(cString: key)); return RST_OK } catch { return fail(error, in: "rst_coder_remove") }
        }
    }

    public static func coder_rename(_ c: OpaquePointer!, _ from_key: UnsafePointer<CChar>!, _ to_key: UnsafePointer<CChar>!) -> rst_status {
        guard let c else { return fail(.invalid, "rst_coder_rename: coder is NULL") }
        guard let from_key, let to_key else { return fail(.invalid, "rst_coder_rename: a key is NULL") }
        return withCoder(c) { coder in
            do throws(RestorationFailure) { try coder.rename(KeyBytes(cString: from_key), to: KeyBytes(cString: to_key)); return RST_OK } catch { return fail(error, in: "rst_coder_rename") }
        }
    }
}

// MARK: restoration that finishes later

extension CFace {
    public static func extend_restoration(_ e: OpaquePointer!, _ deadline_ms: UInt32, _ out: UnsafeMutablePointer<OpaquePointer?>!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_extend_restoration: engine is NULL") }
        guard let out else { return fail(.invalid, "rst_extend_restoration: out is NULL") }
        do throws(RestorationFailure) {
            out.pointee = OpaquePointer(try engine(e).extendRestoration(deadlineMs: deadline_ms).handle)
            return RST_OK
        } catch { return fail(error, in: "rst_extend_restoration") }
    }

    public static func complete_restoration(_ e: OpaquePointer!, _ t: OpaquePointer!) -> rst_status {
        guard let e else { return fail(.invalid, "rst_complete_restoration: engine is NULL") }
        guard let t else { return fail(.invalid, "rst_complete_restoration: token is NULL") }
        do throws(RestorationFailure) {
            try engine(e).completeRestoration(handle: UnsafeRawPointer(t))
            return RST_OK
        } catch { return fail(error, in: "rst_complete_restoration") }
    }
}
