#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Generations (ABI v1.1 §3): with `generations = K > 0` each successful
/// save keeps the archive it replaces as `<archive>.1`, shifting older ones
/// up to `<archive>.K`. Every step is one atomic call, all under the
/// archive's lock and after the new archive's temporary file is durable,
/// just before the rename that installs it (`FileStore.atomicWrite`'s
/// `beforeRename`), so a failing or killed save never costs a generation
/// and never leaves the path without a complete archive:
///
///  1. `link(<archive>, <archive>.tmp-gen-…)`: a second name for the
///     archive being replaced (a leftover is a temporary: the next save
///     removes it);
///  2. `rename(<archive>.K-1, <archive>.K)`, …, `rename(<archive>.1, <archive>.2)`,
///     oldest first: a kill between two renames leaves a gap, never two
///     generations out of order;
///  3. `rename(<archive>.tmp-gen-…, <archive>.1)`;
///  4. the save's own rename of its temporary onto `<archive>`, then the
///     fsync of the directory, which makes all of the above durable (one
///     directory: the journal keeps them in order).
///
/// Each file is one whole archive (a hard link or a rename never mixes two),
/// and `<archive>.1` … `<archive>.K` are always newest first.
extension FileStore {
    /// The most generations an engine keeps (`rst_engine_options.generations`).
    public static let maxGenerations = 16
    static let invalidInfix = ".invalid-"
    static let generationTempInfix = ".tmp-gen-"

    /// `<archive>.k`.
    public static func generationPath(_ archive: String, _ k: Int) -> String { "\(archive).\(k)" }

    /// Keeps the archive now at `path` as generation 1, shifting the others
    /// up to `keep` (the lock held). Nothing to keep (no archive, or not a
    /// regular file): nothing is done.
    static func rotateGenerations(_ path: String, keep: Int) throws(RestorationFailure) {
        guard keep > 0 else { return }
        let what = "cannot keep the replaced archive '\(path)' as generation 1"
        var st = stat()
        if retrying({ FileIO.lstat(path, &st) }) != 0 {
            if errno == ENOENT { return }   // a first save, or after a fallback: nothing to keep
            throw RestorationFailure(.io, "\(what): cannot examine it: \(errnoText()); the old archive is kept")
        }
        guard st.st_mode & S_IFMT == S_IFREG else { return }
        let tmp = "\(path)\(generationTempInfix)\(getpid())-\(nextGenerationCounter())"
        if retrying({ FileIO.link(path, tmp) }) != 0 {
            throw RestorationFailure(.io, "\(what): link to '\(tmp)' failed: \(errnoText()); the old archive is kept")
        }
        var placed = false
        defer { if !placed { _ = retrying { FileIO.unlink(tmp) } } }
        if keep >= 2 {
            for k in stride(from: keep - 1, through: 1, by: -1) {
                let from = generationPath(path, k), to = generationPath(path, k + 1)
                if retrying({ FileIO.rename(from, to) }) != 0 && errno != ENOENT {
                    throw RestorationFailure(.io, "\(what): shifting '\(from)' to '\(to)' failed: \(errnoText()); the old archive is kept")
                }
            }
        }
        if retrying({ FileIO.rename(tmp, generationPath(path, 1)) }) != 0 {
            throw RestorationFailure(.io, "\(what): rename from '\(tmp)' failed: \(errnoText()); the old archive is kept")
        }
        placed = true
    }

    nonisolated(unsafe) private static var generationCounter = 0
    private static let generationCounterLock = RecursiveLock()
    private static func nextGenerationCounter() -> Int {
        generationCounterLock.withLock { generationCounter += 1; return generationCounter }
    }

    /// Generations and what the engine keeps beside them: `<archive>.<k>`
    /// and `<archive>.<k>.<anything>` (their crash markers and crashed
    /// copies) for k = 1…maxGenerations; nil (errno set) when the directory
    /// cannot be listed.
    static func listGenerationFiles(of archive: String) -> [String]? {
        guard let all = listSiblings(of: archive, infix: ".") else { return nil }
        let prefix = archive + "."
        return all.filter { p in
            let rest = p.dropFirst(prefix.count)
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, !digits.hasPrefix("0"), let k = Int(digits), k >= 1, k <= maxGenerations else { return false }
            let after = rest.dropFirst(digits.count)
            return after.isEmpty || after.hasPrefix(".")
        }
    }

    /// `listGenerationFiles`, [] when the directory cannot be listed.
    public static func generationFiles(of archive: String) -> [String] {
        listGenerationFiles(of: archive) ?? []
    }

    /// Renames an invalid archive to `<archive>.invalid-<UTC ms>`, intact; returns the new path.
    static func setAsideInvalid(_ archive: String, nowMs: Int64) throws(RestorationFailure) -> String {
        var target = "\(archive)\(invalidInfix)\(nowMs)"
        var n = 1
        var st = stat()
        while FileIO.lstat(target, &st) == 0 { target = "\(archive)\(invalidInfix)\(nowMs)-\(n)"; n += 1 }
        if retrying({ FileIO.rename(archive, target) }) != 0 {
            throw RestorationFailure(.io, "cannot set aside the invalid archive '\(archive)' as '\(target)': \(errnoText())")
        }
        return target
    }
}
