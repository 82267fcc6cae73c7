import RestorationArchive

// Validation of archive bytes for every caller (the engine's restores, the C
// face, restorectl): the codec's validating reader, its failures mapped to
// statuses whose messages name the source.
extension Engine {
    /// Validates archive bytes completely, mapping codec failures to statuses.
    public static func validate(_ bytes: UnsafeRawBufferPointer, source: String) throws(RestorationFailure) -> ArchiveReader {
        do {
            return try ArchiveReader(bytes: bytes)
        } catch {
            throw failure(error, source: source)
        }
    }

    /// Validates a buffer the reader adopts (`FileStore.readBuffer`'s): no
    /// second copy. The buffer is the reader's from here on, freed with it
    /// or when validation fails.
    public static func validate(adopting bytes: UnsafeMutableRawBufferPointer, source: String) throws(RestorationFailure) -> ArchiveReader {
        do {
            return try ArchiveReader(adopting: bytes)
        } catch {
            throw failure(error, source: source)
        }
    }

    /// Validates bytes read from a store, released with the reader: kept
    /// where they are when nothing writes them while held (the file store's
    /// read-only mapping), adopted when they are the store's heap buffer,
    /// else copied and the hold released.
    public static func validate(held: StoreBytes, source: String) throws(RestorationFailure) -> ArchiveReader {
        guard held.isImmutable else { return try validate(adopting: held.takeBuffer(), source: source) }
        do {
            return try ArchiveReader(keeping: held.bytes, release: held.release)
        } catch {
            throw failure(error, source: source)
        }
    }
}

/// A codec failure as the restore's, naming `source`.
fileprivate func failure(_ error: ArchiveFailure, source: String) -> RestorationFailure {
    switch error {
    case .corrupt(let m): return RestorationFailure(.corrupt, "\(source) is corrupt: \(m)")
    case .version(let m): return RestorationFailure(.version, "\(source) is not supported: \(m)")
    case .limit(let m): return RestorationFailure(.limit, "\(source) exceeds a limit: \(m)")
    }
}
