import CRestoration
import RestorationArchive
import RestorationCore
#if canImport(Glibc)
import Glibc
#endif

// docs/EVOLUTION.md: what each rst_* function of "Surviving change"
// (Include/restoration.h) does; the skips are in SaveRestoreABI.swift and
// the arrays of object references in CoderABI.swift, with their sections. Forwarded to by RestorationC's exports and the host
// table (RestorationPlugins/HostTable.swift). The options of carried
// records and crash quarantine are read with the others (OptionsABI.swift).

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
