// The instruction and memory targets (--instructions): read from one run of
// Tests/perf/callgrind.sh with MASSIF=1 (valgrind; repeatable on a loaded
// machine, and slow, so only on request: CI stays fast).

import Foundation

/// What callgrind.sh printed: instructions per object (N = 20,000) and the
/// engine's heap in a 100,000-object file restore over the archive.
struct InstructionResult: Codable {
    var save: Int?
    var restoreBuffer: Int?
    var restoreFile: Int?
    var migrated: Int?
    var heapOverArchive: Double?
    var problem: String?

    /// The per-object count of the line starting with `prefix` ("…, N per object").
    static func perObject(_ out: String, _ prefix: String) -> Int? {
        guard let line = out.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }),
              let r = line.range(of: ", ", options: .backwards) else { return nil }
        return Int(line[r.upperBound...].split(separator: " ").first ?? "")
    }

    static func parse(_ out: String) -> InstructionResult {
        var r = InstructionResult()
        r.save = perObject(out, "rst_save_to_buffer:")
        r.restoreBuffer = perObject(out, "rst_restore_from_buffer:")
        r.restoreFile = perObject(out, "rst_restore:")
        r.migrated = perObject(out, "rst_restore_from_buffer, every record migrated:")
        if let line = out.split(separator: "\n").first(where: { $0.contains("engine heap peak") }),
           let x = line.split(separator: " ").last(where: { $0.hasSuffix("x") }) {
            r.heapOverArchive = Double(x.dropLast())
        }
        return r
    }

    /// Runs the script against the librestoration.so beside this executable.
    static func measure() -> InstructionResult {
        let bin = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let script = repositoryRoot().appendingPathComponent("Tests/perf/callgrind.sh").path
        Log.say("instructions: valgrind callgrind and massif through \(script) (a few minutes)")
        do {
            let (status, out) = try runCommand(["env", "MASSIF=1", script, bin.path])
            var r = parse(out)
            if status != 0 { r.problem = "Tests/perf/callgrind.sh exited \(status): " + String(out.suffix(300)) }
            else if r.save == nil || r.heapOverArchive == nil { r.problem = "Tests/perf/callgrind.sh printed no counts: " + String(out.suffix(300)) }
            return r
        } catch {
            return InstructionResult(problem: "Tests/perf/callgrind.sh could not run: \(error)")
        }
    }
}
