// Reading archive files: always through RestorationCore's FileStore and the
// engine's own validation (Engine.validate), so restorectl accepts and
// rejects exactly what the engine does. Nothing here loads a plugin or runs
// a factory (B7.1).

import RestorationArchive
import RestorationCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One archive file, read and fully validated.
struct LoadedArchive {
    let file: String
    let byteCount: Int
    let reader: ArchiveReader

    /// Reads and validates `file`; failures carry the engine's status mapped
    /// to restorectl's exit code, and name the file and where it failed.
    static func load(_ file: String) throws(CtlFailure) -> LoadedArchive {
        let bytes: [UInt8]
        do {
            bytes = try FileStore.read(file)
        } catch {
            throw CtlFailure(error)
        }
        do throws(RestorationFailure) {
            let reader = try withRawBytes(bytes) { (b: UnsafeRawBufferPointer) throws(RestorationFailure) in
                try Engine.validate(b, source: "archive \(Text.quotedPath(file))")
            }
            return LoadedArchive(file: file, byteCount: bytes.count, reader: reader)
        } catch {
            throw CtlFailure(error)
        }
    }

    /// Every record as plain values.
    var document: ArchiveDocument { ArchiveDocument(reader: reader) }
}

/// Checks the B7.3 rules before restorectl restores from or saves to `path`:
/// never through a symbolic link, never a file another user owns.
enum FileRules {
    static func checkOwnedRegularOrAbsent(_ path: String, for what: String) throws(CtlFailure) {
        var st = stat()
        guard lstat(path, &st) == 0 else {
            let e = errno
            if e == ENOENT { return }
            throw CtlFailure(Exit.io, "cannot \(what) \(Text.quotedPath(path)): \(String(cString: strerror(e))) (errno \(e))")
        }
        if st.st_mode & S_IFMT == S_IFLNK {
            throw CtlFailure(Exit.rejected, "refusing to \(what) \(Text.quotedPath(path)): it is a symbolic link (restorectl never follows links here)")
        }
        if st.st_uid != geteuid() {
            throw CtlFailure(Exit.rejected, "refusing to \(what) \(Text.quotedPath(path)): it is owned by uid \(st.st_uid), not by this user (uid \(geteuid()))")
        }
    }

    static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR
    }
}

/// `body` over the array's bytes, keeping the typed error.
func withRawBytes<R>(_ a: [UInt8], _ body: (UnsafeRawBufferPointer) throws(RestorationFailure) -> R) throws(RestorationFailure) -> R {
    let r: Result<R, RestorationFailure> = a.withUnsafeBytes { b in
        do throws(RestorationFailure) { return .success(try body(b)) } catch { return .failure(error) }
    }
    return try r.get()
}
