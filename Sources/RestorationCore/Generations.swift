#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Generations: with `generations = K > 0` each save that writes keeps
/// the archive it replaces as generation 1, shifting older ones up to K.
/// Through the store, under its lock (StorageRoom.swift,
/// `rotateGenerations`): generation k moves to k+1, oldest first (a kill
/// between two moves leaves a gap, never two generations out of order);
/// the archive is linked to generation 1 (without `link`: read and written
/// there); then the new archive is written. The archive slot is never empty.
/// The file store's names: `<archive>.k`; its link is link(2) to a
/// temporary `<archive>.tmp-gen-…`, renamed onto `<archive>.1`.
extension FileStore {
    /// The most generations an engine keeps (`rst_engine_options.generations`).
    public static let maxGenerations = 16
    static let invalidInfix = ".invalid-"
    static let generationTempInfix = ".tmp-gen-"

    /// `<archive>.k`.
    public static func generationPath(_ archive: String, _ k: Int) -> String { "\(archive).\(k)" }

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

}
