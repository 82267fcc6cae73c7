import RestorationCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One `*.so` entry of plugin_dir, as discovery found it (no plugin code ran).
struct DiscoveredFile {
    /// The file name inside plugin_dir.
    let name: String
    /// Absolute path (plugin_dir canonicalized with realpath, then the name).
    let path: String
    /// Identity at discovery time (lstat), re-checked on the opened file
    /// just before dlopen.
    let device: UInt64
    let inode: UInt64
    /// Why the file can never load (a symbolic link, unsafe mode or
    /// owner, unsafe plugin_dir); nil when it may be loaded.
    let problem: String?
}

/// Stage 1 of 3 (discover, validate, load): lists plugin_dir without running
/// plugin code. Regular files named `*.so`, not starting with '.', directly
/// in the directory (no recursion), examined with lstat (a symlink is never
/// followed), sorted by name byte-wise so the result does not depend on
/// readdir order. A file or directory writable by group or others, or owned
/// by someone other than this process's user or root, is marked unusable;
/// so are a symbolic link and a second name (hard link) of a file already
/// listed. Other entries named `*.so` (directories, FIFOs, sockets, devices)
/// are not plugins: traced, not listed, not counted as rejected.
enum Discovery {
    struct Scan {
        /// The canonical absolute plugin_dir.
        let directory: String
        let files: [DiscoveredFile]
    }

    static func scan(_ configured: String, trace: Trace) throws(RestorationFailure) -> Scan {
        trace("scanning plugin_dir '\(configured)'")
        guard !configured.isEmpty else {
            throw RestorationFailure(.io, "plugin_dir is empty")
        }
        guard let resolved = realpath(configured, nil) else {
            let e = errno
            throw RestorationFailure(.io, "plugin_dir '\(configured)' cannot be resolved: \(errnoText(e))")
        }
        let directory = String(cString: resolved)
        free(resolved)
        if directory != configured { trace("plugin_dir resolves to '\(directory)'") }

        var st = stat()
        guard stat(directory, &st) == 0 else {
            let e = errno
            throw RestorationFailure(.io, "plugin_dir '\(directory)' cannot be examined: \(errnoText(e))")
        }
        guard st.st_mode & S_IFMT == S_IFDIR else {
            throw RestorationFailure(.io, "plugin_dir '\(directory)' is not a directory")
        }
        let directoryProblem = trustProblem(st, what: "plugin_dir '\(directory)'")
        if let directoryProblem { trace("\(directoryProblem): every plugin in it will be rejected") }

        guard let dir = opendir(directory) else {
            let e = errno
            throw RestorationFailure(.io, "plugin_dir '\(directory)' cannot be read: \(errnoText(e))")
        }
        defer { closedir(dir) }
        let fd = dirfd(dir)
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!

        var files: [DiscoveredFile] = []
        while true {
            errno = 0
            guard let entry = readdir(dir) else {
                let e = errno
                if e != 0 {
                    throw RestorationFailure(.io, "plugin_dir '\(directory)' cannot be read: \(errnoText(e))")
                }
                break
            }
            let cName = (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: CChar.self)
            let length = strlen(cName)
            // Cheap filters on the raw bytes first: '.'-files and non-*.so.
            if cName[0] == 0x2E /* . */ { continue }
            guard length > 3, cName[length - 3] == 0x2E, cName[length - 2] == 0x73 /* s */,
                  cName[length - 1] == 0x6F /* o */ else {
                continue
            }
            guard let name = String(validatingCString: cName) else {
                trace("skipping an entry whose name is not valid UTF-8")
                continue
            }
            let path = directory == "/" ? "/\(name)" : "\(directory)/\(name)"
            var fst = stat()
            guard fstatat(fd, cName, &fst, AT_SYMLINK_NOFOLLOW) == 0 else {
                let e = errno
                let problem = "'\(path)' cannot be examined: \(errnoText(e))"
                trace("found \(name): \(problem)")
                files.append(DiscoveredFile(name: name, path: path, device: 0, inode: 0, problem: problem))
                continue
            }
            var problem: String?
            let type = fst.st_mode & S_IFMT
            if type != S_IFREG && type != S_IFLNK {
                // Plugins are the regular files named *.so: a directory, FIFO,
                // socket or device so named is not a plugin (nor a rejected one).
                trace("skipping \(name): \(FileStore.kind(fst) ?? "not a regular file"), not a plugin")
                continue
            }
            if type == S_IFLNK {
                problem = "'\(path)' is a symbolic link; plugins must be regular files directly in plugin_dir"
            } else if let directoryProblem {
                problem = directoryProblem
            } else {
                problem = trustProblem(fst, what: "'\(path)'")
            }
            trace("found \(name)" + (problem.map { ": will be rejected: \($0)" } ?? ": a candidate"))
            files.append(DiscoveredFile(name: name, path: path, device: UInt64(fst.st_dev), inode: UInt64(fst.st_ino), problem: problem))
        }
        files.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        // One file under two names (hard links) loads once: the first name wins.
        var seen: [String: String] = [:]
        for (i, f) in files.enumerated() where f.problem == nil {
            let key = "\(f.device):\(f.inode)"
            if let first = seen[key] {
                let problem = "'\(f.path)' is the same file as '\(first)' (a hard link); it is loaded once, under its first name"
                trace("\(f.name): will be rejected: \(problem)")
                files[i] = DiscoveredFile(name: f.name, path: f.path, device: f.device, inode: f.inode, problem: problem)
            } else {
                seen[key] = f.name
            }
        }
        trace("plugin_dir '\(directory)': \(files.count) plugin file(s)" + (files.isEmpty ? "" : ": " + files.map(\.name).joined(separator: ", ")))
        return Scan(directory: directory, files: files)
    }

    /// The owner and mode rule (sudo, OpenPAM, OpenSSH): not writable by
    /// group or others, owned by this process's effective user or root.
    static func trustProblem(_ st: stat, what: String) -> String? {
        let mode = st.st_mode & 0o7777
        if mode & 0o022 != 0 {
            let who = mode & 0o020 != 0 ? (mode & 0o002 != 0 ? "group and others" : "group") : "others"
            return "\(what) is writable by \(who) (mode 0\(String(mode, radix: 8))); it must be writable only by its owner"
        }
        let euid = geteuid()
        if st.st_uid != euid && st.st_uid != 0 {
            return "\(what) is owned by uid \(st.st_uid), which is neither this process's user (uid \(euid)) nor root"
        }
        return nil
    }
}
