// Support for the fault-injection and power-loss tests: an IOInterceptor
// (RestorationCore/FileIO.swift) that records every file-system call of the
// engine on this thread and fails the ones a plan names.
import XCTest
import Foundation
@testable import RestorationCore
#if canImport(Glibc)
import Glibc
#endif

/// One recorded call and its outcome.
struct TracedCall {
    var call: IOCall
    var result: Int
    var errno: Int32
    /// The path of the file `call.fd` was opened on (nil: not opened through FileIO).
    var fdPath: String?
    /// What a successful write wrote, and where (the fd's offset before it).
    var data: [UInt8]?
    var offset: Int = 0
    /// Whether the fault plan failed or shortened this call.
    var injected: Bool = false
}

/// A fault: the errno returned, or a short or zero-length read/write.
enum Fault: CustomStringConvertible, CaseIterable {
    case enospc, eio, erofs, eintr, short, zero

    var description: String {
        switch self {
        case .enospc: return "ENOSPC"
        case .eio: return "EIO"
        case .erofs: return "EROFS"
        case .eintr: return "EINTR"
        case .short: return "short"
        case .zero: return "zero"
        }
    }

    /// Short and zero-length results exist only for read and write.
    func applies(to op: IOOp) -> Bool {
        switch self {
        case .short, .zero: return op == .read || op == .write
        default: return true
        }
    }

    func action(for call: IOCall) -> IOAction {
        switch self {
        case .enospc: return .fail(ENOSPC)
        case .eio: return .fail(EIO)
        case .erofs: return .fail(EROFS)
        case .eintr: return .fail(EINTR)
        case .short: return .limit(max(call.count / 2, call.count > 1 ? 1 : 0))
        case .zero: return .limit(0)
        }
    }
}

/// Records the calls; fails call number `failAt` (0-based, this thread's
/// calls only) with `fault`, and when `persistent` every later call of the
/// same operation too. `limitWrites` shortens every write (to make more of
/// them, for the power-loss model).
final class IOTrace: IOInterceptor {
    var calls: [TracedCall] = []
    var failAt: Int?
    var fault: Fault = .eio
    var persistent = false
    var limitWrites: Int?
    private(set) var injected = 0
    private var failingOp: IOOp?
    private var fdPaths: [Int32: String] = [:]
    private var offsets: [Int32: Int] = [:]
    private var pendingInjected = false

    init(failAt: Int? = nil, fault: Fault = .eio, persistent: Bool = false) {
        self.failAt = failAt
        self.fault = fault
        self.persistent = persistent
    }

    func before(_ call: IOCall) -> IOAction {
        let index = calls.count
        pendingInjected = false
        if let failAt, fault.applies(to: call.op) {
            if index == failAt || (persistent && failingOp == call.op && index > failAt) {
                if index == failAt { failingOp = call.op }
                pendingInjected = true
                injected += 1
                return fault.action(for: call)
            }
        }
        if call.op == .write, let limitWrites, call.count > limitWrites { return .limit(limitWrites) }
        return .proceed
    }

    func after(_ call: IOCall, result: Int, data: UnsafeRawBufferPointer?) {
        var t = TracedCall(call: call, result: result, errno: result < 0 ? errno : 0,
                           fdPath: call.fd >= 0 ? fdPaths[call.fd] : nil, injected: pendingInjected)
        switch call.op {
        case .open where result >= 0:
            fdPaths[Int32(result)] = call.path
            offsets[Int32(result)] = 0
        case .fcntl where result >= 0:
            fdPaths[Int32(result)] = fdPaths[call.fd]
            offsets[Int32(result)] = offsets[call.fd] ?? 0
        case .close:
            fdPaths[call.fd] = nil
        case .write where result > 0:
            t.offset = offsets[call.fd] ?? 0
            t.data = data.map { Array($0) }
            offsets[call.fd] = t.offset + result
        case .ftruncate where result == 0:
            offsets[call.fd] = min(offsets[call.fd] ?? 0, call.count)
        default: break
        }
        calls.append(t)
    }

    var summary: String {
        calls.enumerated().map { i, c in
            var s = "\(i) \(c.call.op)"
            if let p = c.call.path ?? c.fdPath { s += " \(URL(fileURLWithPath: p).lastPathComponent)" }
            if let p = c.call.path2 { s += " -> \(URL(fileURLWithPath: p).lastPathComponent)" }
            s += " = \(c.result)"
            if c.result < 0 { s += " (errno \(c.errno))" }
            if c.injected { s += " [injected]" }
            return s
        }.joined(separator: "\n")
    }
}

/// One object holding one integer: what the archives of these tests contain.
final class Counter {
    var value: Int64
    init(_ v: Int64) { value = v }
}

struct CounterBehavior: ObjectBehavior {
    let counter: Counter
    func encode(_ node: ObjectNode, _ coder: Coder) { try? coder.encodeInt(key("value"), counter.value) }
    func decode(_ node: ObjectNode, _ coder: Coder) { if let v = try? coder.decodeInt(key("value")) { counter.value = v } }
    func finished(_ node: ObjectNode) {}
    func released(_ node: ObjectNode) {}
    var instance: UnsafeMutableRawPointer? { nil }
}

/// An engine for `path` with one object whose value is `value`; its log goes to `log`.
func counterEngine(_ path: String, _ value: Int64, log: LogBox? = nil, generations: Int = 0) throws -> (Engine, Counter) {
    let e = Engine(configuration: .init(archivePath: path, generations: generations))
    if let log { e.logHandler = { level, message in log.lines.append("[\(level.name)] \(message)") } }
    let c = Counter(value)
    // A payload, so that the archive spans several writes when writes are limited.
    for i in 0..<4 {
        _ = try e.register(identifier: "pad\(i)", parent: nil, className: nil, behavior: CounterBehavior(counter: Counter(Int64(i) << 40)))
    }
    _ = try e.register(identifier: "counter", parent: nil, className: nil, behavior: CounterBehavior(counter: c))
    return (e, c)
}

final class LogBox { var lines: [String] = [] }

/// What a restore by a new process (a fresh engine with the crash-loop guard,
/// for which markers of this process are those of a dead one) finds at `path`:
/// the counter's value, or the failure.
func restoreAsNextProcess(_ path: String) -> Result<Int64, RestorationFailure> {
    CrashGuard.simulateNextProcess = true
    defer { CrashGuard.simulateNextProcess = false }
    do {
        let (e, c) = try counterEngine(path, -1, log: LogBox())
        defer { e.destroy() }
        try e.restore()
        return .success(c.value)
    } catch let f as RestorationFailure {
        return .failure(f)
    } catch {
        return .failure(RestorationFailure(.io, "\(error)"))
    }
}

func fileBytes(_ path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { [UInt8]($0) }
}

func makeTempDir(_ label: String) -> String {
    let dir = NSTemporaryDirectory() + "rst-\(label)-\(UUID().uuidString)"
    try! FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return dir
}
