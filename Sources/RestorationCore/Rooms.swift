/// The engine's rooms: each feature that takes part in a save or a restore
/// keeps its state in one, and the passes (SavePass.swift,
/// RestorePass.swift) receive them together as this one value and call
/// them at their steps.
///
/// - `crashPolicy`: the crash-loop guard and quarantine (CrashPolicy.swift);
/// - `deferred`: extended restorations, their tokens and deadlines (Deferred.swift);
/// - `carry`: records carried through saves (Carry.swift);
/// - `sensitivity`: sealed values, the policy and the key (Sensitivity.swift);
/// - `budget`: the size budget's verdict and the last save's sizes (Budget.swift);
/// - `migrations`: class versions, migration steps and the `migrate` step
///   (Migrations.swift);
/// - `storage`: the store and what the engine keeps about it (sessions, the
///   last archive; Storage.swift); nil without a store or archive path;
/// - `outcomes`: the reason, generation, counts and skips of the last restore
///   (RestoreOutcomes.swift).
struct Rooms {
    let crashPolicy: CrashPolicy
    let deferred: Deferred
    let carry: Carry
    let sensitivity: SensitivityRoom
    let budget: Budget
    let outcomes: RestoreOutcomes
    let migrations: MigrationRoom
    let storage: Storage?
}
