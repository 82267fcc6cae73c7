import RestorationArchive

extension Engine {
    /// Everything an engine is created with, complete at `init` (the C
    /// face reads `rst_engine_options` into one: CFace.readOptions; the
    /// Swift API's options make one too). `validate(naming:)` is the one
    /// check of it both use.
    public struct Configuration {
        public var archivePath: String?
        public var pluginDirectory: String?
        public var appVersion: String
        public var idiom: String
        /// false: restore neither checks nor writes the crash-loop marker.
        public var crashGuard: Bool
        /// Options version 2 (docs/LIFECYCLE.md): debounce of the autosave (0: none), its ceiling
        /// (0: 10 × the delay), older good archives kept (0…16).
        public var autosaveDelayMs: UInt32
        public var autosaveMaxDelayMs: UInt32
        public var generations: Int
        /// Library 1.1: a death inside one object's callback quarantines that
        /// record instead of setting the archive aside (Quarantine.swift).
        public var quarantine: Bool
        /// Library 1.1: saves that carry records nothing could produce (Carry.swift);
        /// 0: none, UInt32.max: always.
        public var carrySaves: UInt32
        /// Library 1.2: bytes an archive may take; 0: no budget (docs/BUDGETS.md).
        public var sizeBudget: UInt64
        /// What a save over `sizeBudget` does.
        public var budgetPolicy: BudgetPolicy
        /// How long a claimed signal waits for a dispatch to save before the
        /// signal is re-raised anyway (docs/LIFECYCLE.md, "Signals").
        public var signalDeadlineMs: UInt32
        /// Where the archive lives (docs/STORAGE.md); nil: the file store of
        /// `archivePath`, if any. Set one or the other.
        public var store: ArchiveStore?

        public init(archivePath: String? = nil, pluginDirectory: String? = nil, appVersion: String = "", idiom: String = "", crashGuard: Bool = true,
                    autosaveDelayMs: UInt32 = 0, autosaveMaxDelayMs: UInt32 = 0, generations: Int = 0,
                    quarantine: Bool = false, carrySaves: UInt32 = 0,
                    sizeBudget: UInt64 = 0, budgetPolicy: BudgetPolicy = .warn, signalDeadlineMs: UInt32 = 1000,
                    store: ArchiveStore? = nil) {
            self.archivePath = archivePath
            self.pluginDirectory = pluginDirectory
            self.appVersion = appVersion
            self.idiom = idiom
            self.crashGuard = crashGuard
            self.autosaveDelayMs = autosaveDelayMs
            self.autosaveMaxDelayMs = autosaveMaxDelayMs
            self.generations = generations
            self.quarantine = quarantine
            self.carrySaves = carrySaves
            self.sizeBudget = sizeBudget
            self.budgetPolicy = budgetPolicy
            self.signalDeadlineMs = signalDeadlineMs
            self.store = store
        }

        /// What each option is called where the caller gave it: the C face
        /// names the struct's members ("opts->generations"), the Swift API
        /// its properties ("generations").
        public struct OptionNames: Sendable {
            public var archivePath, appVersion, idiom, autosaveDelay, autosaveMaxDelay, generations, anArchivePath: String
            public init(archivePath: String, appVersion: String, idiom: String, autosaveDelay: String,
                        autosaveMaxDelay: String, generations: String, anArchivePath: String) {
                self.archivePath = archivePath
                self.appVersion = appVersion
                self.idiom = idiom
                self.autosaveDelay = autosaveDelay
                self.autosaveMaxDelay = autosaveMaxDelay
                self.generations = generations
                self.anArchivePath = anArchivePath
            }
        }

        /// The checks every front door makes of a configuration: an empty
        /// archive path, recorded strings over the archive's limit,
        /// generations over the most kept, an autosave ceiling below its
        /// delay, autosave or generations without an archive to save to.
        /// - Throws: `.invalid` or `.limit`, naming the option as `names` does.
        public func validate(naming names: OptionNames) throws(RestorationFailure) {
            if let archivePath, archivePath.isEmpty {
                throw RestorationFailure(.invalid, "\(names.archivePath) is empty")
            }
            if appVersion.utf8.count > ArchiveLimits.maxInfoStringBytes {
                throw RestorationFailure(.limit, "\(names.appVersion) is longer than \(ArchiveLimits.maxInfoStringBytes) bytes")
            }
            if idiom.utf8.count > ArchiveLimits.maxInfoStringBytes {
                throw RestorationFailure(.limit, "\(names.idiom) is longer than \(ArchiveLimits.maxInfoStringBytes) bytes")
            }
            if generations < 0 || generations > FileStore.maxGenerations {
                throw RestorationFailure(.invalid, "\(names.generations) is \(generations); at most \(FileStore.maxGenerations) generations are kept")
            }
            if autosaveMaxDelayMs != 0 && autosaveMaxDelayMs < autosaveDelayMs {
                throw RestorationFailure(.invalid, "\(names.autosaveMaxDelay) (\(autosaveMaxDelayMs)) is below \(names.autosaveDelay) (\(autosaveDelayMs))")
            }
            if archivePath == nil && store == nil && (autosaveDelayMs != 0 || generations != 0) {
                throw RestorationFailure(.invalid, "\(names.autosaveDelay) and \(names.generations) need \(names.anArchivePath)")
            }
        }
    }

    /// What a save over the size budget does (the C values are the raw values).
    public enum BudgetPolicy: UInt32, Sendable {
        case warn = 0, trim = 1, fail = 2
    }
}
