#if canImport(Glibc)
import Glibc
#endif

// rst_save into a folder that does not exist yet creates it, as the XDG Base
// Directory specification asks of programs writing under $XDG_STATE_HOME
// ("if the destination directory is non-existent an attempt should be made
// to create it with permission 0700"). Each directory created is made
// durable (fsync of its parent) before the archive is written into it, so a
// power loss cannot keep the archive and lose the folder that names it.
// Every call goes through FileIO, so the fault-injection tests reach it.

extension FileStore {
    /// Creates the missing directories above `path` (the archive's own
    /// folder and any missing ancestor), mode 0700, parents first. Nothing
    /// happens when the folder exists. A component that exists but is not a
    /// directory, or a directory that cannot be created or made durable,
    /// fails with a sentence naming it and the errno; directories already
    /// created stay (a later save goes on from them).
    public static func createArchiveDirectory(for path: String) throws(RestorationFailure) {
        let dir = directory(of: path)
        var st = stat()
        if FileIO.stat(dir, &st) == 0 {
            if (st.st_mode & S_IFMT) == S_IFDIR { return }
            throw RestorationFailure(.io, "cannot save to '\(path)': '\(dir)' exists and is not a directory")
        }
        // Walk up to the deepest existing ancestor, then create downwards.
        var missing: [String] = []
        var cursor = dir
        while true {
            if FileIO.stat(cursor, &st) == 0 {
                guard (st.st_mode & S_IFMT) == S_IFDIR else {
                    throw RestorationFailure(.io, "cannot save to '\(path)': '\(cursor)' exists and is not a directory")
                }
                break
            }
            // ENOTDIR: an ancestor is not a directory; walking up names it.
            guard errno == ENOENT || errno == ENOTDIR else {
                throw RestorationFailure(.io, "cannot save to '\(path)': cannot examine '\(cursor)': \(errnoText())")
            }
            missing.append(cursor)
            let parent = directory(of: cursor)
            if parent == cursor || missing.count > 4096 { break }
            cursor = parent
        }
        for d in missing.reversed() {
            if FileIO.mkdir(d, 0o700) != 0 && errno != EEXIST {
                throw RestorationFailure(.io, "cannot save to '\(path)': the folder '\(dir)' does not exist and creating '\(d)' failed: \(errnoText())")
            }
            let parent = directory(of: d)
            let pfd = FileIO.open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard pfd >= 0 else {
                throw RestorationFailure(.io, "cannot save to '\(path)': created '\(d)' but cannot open its parent '\(parent)' to make it durable: \(errnoText())")
            }
            let synced = FileIO.fsync(pfd)
            let e = errno
            _ = FileIO.close(pfd)
            if synced != 0 {
                throw RestorationFailure(.io, "cannot save to '\(path)': created '\(d)' but fsync of '\(parent)' failed: \(errnoText(e))")
            }
        }
    }
}
