import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// How a child process ended.
struct ChildResult {
    var stdout: String
    var stderr: String
    /// The exit status, or the signal number when `signaled`.
    var status: Int32
    var signaled: Bool
    var timedOut: Bool

    var summary: String {
        let end = timedOut ? "killed after its timeout" : signaled ? "killed by signal \(status)" : "exit status \(status)"
        return "\(end)\n--- stdout:\n\(stdout)--- stderr:\n\(stderr)"
    }
}

/// Runs a program with extra environment variables; kills it (SIGKILL) when
/// it runs longer than `timeout` seconds. Output is read as it comes, so a
/// chatty child never blocks on a full pipe.
func runChild(_ executable: String, _ arguments: [String], environment extra: [String: String] = [:],
              timeout: TimeInterval = 60) throws -> ChildResult {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: executable)
    p.arguments = arguments
    p.environment = ProcessInfo.processInfo.environment.merging(extra) { _, new in new }
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    p.standardInput = FileHandle.nullDevice
    let outData = LockedData(), errData = LockedData()
    out.fileHandleForReading.readabilityHandler = { outData.append($0.availableData) }
    err.fileHandleForReading.readabilityHandler = { errData.append($0.availableData) }
    let done = DispatchSemaphore(value: 0)
    p.terminationHandler = { _ in done.signal() }
    try p.run()
    var timedOut = false
    if done.wait(timeout: .now() + timeout) == .timedOut {
        timedOut = true
        kill(p.processIdentifier, SIGKILL)
        done.wait()
    }
    out.fileHandleForReading.readabilityHandler = nil
    err.fileHandleForReading.readabilityHandler = nil
    outData.append(out.fileHandleForReading.readDataToEndOfFile())
    errData.append(err.fileHandleForReading.readDataToEndOfFile())
    return ChildResult(stdout: outData.string, stderr: errData.string, status: p.terminationStatus,
                       signaled: p.terminationReason == .uncaughtSignal, timedOut: timedOut)
}

final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func append(_ d: Data) { lock.withLock { data.append(d) } }
    var string: String { lock.withLock { String(decoding: data, as: UTF8.self) } }
}

/// This test binary (the xctest bundle's executable), to run one test of it
/// as a child process: `runSelf("Class/testMethod", environment:)`.
func runSelf(_ test: String, environment: [String: String], timeout: TimeInterval = 60) throws -> ChildResult {
    let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
    guard me.hasSuffix(".xctest") else {
        throw XCTSkip("the test binary is not an .xctest executable (\(me)); cannot run a test as a child process")
    }
    return try runChild(me, ["RestorationTests.\(test)"], environment: environment, timeout: timeout)
}
