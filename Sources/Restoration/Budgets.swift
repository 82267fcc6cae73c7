import RestorationCore

// Size budgets in the Swift API (library 1.2; docs/BUDGETS.md): the policy
// (``RestorationEngine/Options/sizeBudget`` and ``RestorationEngine/Options/budgetPolicy``),
// object priorities and the sizes of the last save.

extension RestorationEngine {
    /// What a save over ``Options/sizeBudget`` does.
    ///
    /// The corresponding C values are `RST_BUDGET_WARN`, `RST_BUDGET_TRIM`
    /// and `RST_BUDGET_FAIL`.
    public enum BudgetPolicy: UInt32, Sendable, CaseIterable {
        /// Save anyway; one warning names the budget, the size and the three
        /// largest subtrees.
        case warn = 0
        /// Leave out whole subtrees of non-root objects, lowest priority
        /// first and the largest first among equals, until the archive fits;
        /// the next restore reports them as ``SkipReason/trimmed``.
        case trim = 1
        /// Refuse the save (``RestorationError/limit(_:)``); the old archive stays.
        case fail = 2
    }

    /// One record of the last save.
    ///
    /// The corresponding C type is `rst_size_entry`.
    public struct SaveSize: Equatable, Sendable {
        /// "Tabs/Nav/List".
        public var path: String
        /// "" when the record has no class.
        public var className: String
        /// The record's own bytes in the archive.
        public var ownBytes: UInt64
        /// Its own bytes plus every descendant's.
        public var subtreeBytes: UInt64
        /// Left out of that save by ``BudgetPolicy/trim`` (the sizes are
        /// what it would have taken).
        public var trimmed: Bool
    }

    /// Every record the last successful or budget-failed save considered,
    /// in archive order, trimmed ones included; empty before any save. The
    /// roots' ``SaveSize/subtreeBytes`` plus the header and string tables
    /// are the archive's size, exactly.
    ///
    /// The corresponding C function is `rst_last_save_sizes`.
    public var lastSaveSizes: [SaveSize] {
        core.lastSaveSizes.map {
            SaveSize(path: $0.path, className: $0.className, ownBytes: $0.ownBytes,
                     subtreeBytes: $0.subtreeBytes, trimmed: $0.trimmed)
        }
    }

    /// Sets a registered object's priority for ``BudgetPolicy/trim``
    /// (default 0; lower is left out first).
    ///
    /// - Throws: ``RestorationError/invalid(_:)`` when `object` is not
    ///   registered with this engine.
    ///
    /// The corresponding C function is `rst_set_object_priority`.
    public func setPriority(_ priority: Int32, for object: StateRestoring) throws(RestorationError) {
        let node: ObjectNode? = registry.locked { registry.liveNode(of: object) }
        guard let node else { throw RestorationError.invalid("setPriority: the object is not registered with this engine") }
        core.setPriority(priority, of: node)
    }
}
