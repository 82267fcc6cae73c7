// A power-loss model (after ALICE, OSDI 2014): the file-system calls of a
// save are recorded; for every prefix of that trace, every state an
// ext4-like file system could be left in by a power loss at that point is
// built in a real directory, and a new process must restore the old or the
// new state from it — never neither — and the new one once the save returned.
//
// The model (weaker than ext4, so every behaviour ext4 allows is included):
//   - metadata operations (create, rename, unlink) reach the disk in order
//     (the journal), but only those before the last directory fsync (or
//     syncfs) are sure to: any longer prefix of the rest may have;
//   - a file's data written before its last fsync is on disk; later writes
//     may be lost, kept in order up to any point, the next one torn in half,
//     or the file may have its final length with zeros for the unsynced
//     bytes (delayed allocation);
//   - a file's data survives independently of whether its name did.
import XCTest
import Foundation
@testable import RestorationCore
#if canImport(Glibc)
import Glibc
#endif

final class PowerLossTests: XCTestCase {
    var dir: String!
    var path: String { dir + "/state.rst" }

    override func setUp() { dir = makeTempDir("powerloss") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    enum ModelOp {
        case create(String, Int)          // name -> new inode
        case rename(String, String)
        case link(String, String)         // a second name for the same inode
        case unlink(String)
        case write(Int, Int, [UInt8])     // inode, offset, bytes
        case truncate(Int, Int)           // inode, length
        case fsyncFile(Int)
        case fsyncDir
        case syncAll

        var isMetadata: Bool {
            switch self {
            case .create, .rename, .link, .unlink: return true
            default: return false
            }
        }
    }

    struct FSState {
        var entries: [String: Int] = [:]
        var data: [Int: [UInt8]] = [:]
    }

    /// The directory's files now, as a durable starting state.
    func snapshot() throws -> FSState {
        var s = FSState()
        var next = 1
        for name in try FileManager.default.contentsOfDirectory(atPath: dir).sorted() {
            s.entries[name] = next
            s.data[next] = fileBytes(dir + "/" + name) ?? []
            next += 1
        }
        return s
    }

    /// The model operations of a trace (successful calls only).
    func modelOps(_ trace: IOTrace, start: FSState) -> [ModelOp] {
        var ops: [ModelOp] = []
        var entries = start.entries
        var nextInode = (start.data.keys.max() ?? 0) + 1
        var fdInode: [Int32: Int] = [:]
        var fdIsDir: Set<Int32> = []
        func name(_ p: String) -> String? {
            FileStore.directory(of: p) == dir ? FileStore.baseName(of: p) : nil
        }
        for t in trace.calls where t.result >= 0 {
            let c = t.call
            switch c.op {
            case .open:
                let fd = Int32(t.result)
                if c.path == dir { fdIsDir.insert(fd); continue }
                guard let p = c.path, let n = name(p) else { continue }
                if let ino = entries[n] {
                    fdInode[fd] = ino
                    if c.flags & O_TRUNC != 0 { ops.append(.truncate(ino, 0)) }
                } else if c.flags & O_CREAT != 0 {
                    let ino = nextInode
                    nextInode += 1
                    entries[n] = ino
                    fdInode[fd] = ino
                    ops.append(.create(n, ino))
                }
            case .fcntl:
                if let ino = fdInode[c.fd] { fdInode[Int32(t.result)] = ino }
            case .close:
                fdInode[c.fd] = nil
                fdIsDir.remove(c.fd)
            case .write:
                if let ino = fdInode[c.fd], let d = t.data { ops.append(.write(ino, t.offset, d)) }
            case .ftruncate:
                if let ino = fdInode[c.fd] { ops.append(.truncate(ino, c.count)) }
            case .fsync:
                if fdIsDir.contains(c.fd) { ops.append(.fsyncDir) } else if let ino = fdInode[c.fd] { ops.append(.fsyncFile(ino)) }
            case .syncfs:
                ops.append(.syncAll)
            case .rename:
                guard let a = c.path.flatMap(name), let b = c.path2.flatMap(name), let ino = entries[a] else { continue }
                entries[a] = nil
                entries[b] = ino
                ops.append(.rename(a, b))
            case .link:
                guard let a = c.path.flatMap(name), let b = c.path2.flatMap(name), let ino = entries[a] else { continue }
                entries[b] = ino
                ops.append(.link(a, b))
            case .unlink:
                guard let n = c.path.flatMap(name) else { continue }
                entries[n] = nil
                ops.append(.unlink(n))
            default:
                break
            }
        }
        return ops
    }

    static func apply(_ op: ModelOp, to data: inout [UInt8]) {
        switch op {
        case .write(_, let off, let bytes):
            if data.count < off + bytes.count { data += [UInt8](repeating: 0, count: off + bytes.count - data.count) }
            data.replaceSubrange(off..<(off + bytes.count), with: bytes)
        case .truncate(_, let len):
            if data.count > len { data.removeSubrange(len...) } else { data += [UInt8](repeating: 0, count: len - data.count) }
        default: break
        }
    }

    /// Every state a power loss after `ops[0..<k]` can leave.
    func crashStates(_ ops: [ModelOp], _ k: Int, start: FSState) -> [FSState] {
        let prefix = Array(ops[0..<k])
        // Metadata: sure up to the last directory sync; any longer ordered prefix possible.
        let metaIndices = prefix.indices.filter { prefix[$0].isMetadata }
        let lastDirSync = prefix.lastIndex { if case .fsyncDir = $0 { return true }; if case .syncAll = $0 { return true }; return false } ?? -1
        let sure = metaIndices.filter { $0 < lastDirSync }.count
        // Data per inode: the writes sure to be there and the pending ones.
        var inodes: [Int] = []
        for op in prefix {
            switch op {
            case .write(let i, _, _), .truncate(let i, _): if !inodes.contains(i) { inodes.append(i) }
            default: break
            }
        }
        var variants: [[Int: [UInt8]]] = [[:]]
        for ino in inodes {
            let lastSync = prefix.lastIndex {
                if case .fsyncFile(let i) = $0, i == ino { return true }
                if case .syncAll = $0 { return true }
                return false
            } ?? -1
            var durable = start.data[ino] ?? []
            var pending: [ModelOp] = []
            for (i, op) in prefix.enumerated() {
                switch op {
                case .write(let x, _, _) where x == ino, .truncate(let x, _) where x == ino:
                    if i < lastSync { Self.apply(op, to: &durable) } else { pending.append(op) }
                default: break
                }
            }
            var choices: [[UInt8]] = []
            var d = durable
            choices.append(d)                                   // none of the pending writes
            for (q, op) in pending.enumerated() {
                if case .write(_, let off, let bytes) = op, bytes.count > 1 {
                    var torn = d                                // this one torn in half
                    Self.apply(.write(ino, off, Array(bytes[0..<(bytes.count / 2)])), to: &torn)
                    choices.append(torn)
                }
                Self.apply(op, to: &d)
                choices.append(d)                               // pending[0...q] made it
                _ = q
            }
            if !pending.isEmpty {                               // final length, unsynced bytes zero
                var zeros = d
                for i in durable.count..<zeros.count { zeros[i] = 0 }
                choices.append(zeros)
            }
            variants = variants.flatMap { v in choices.map { c in var w = v; w[ino] = c; return w } }
        }
        var out: [FSState] = []
        for p in sure...metaIndices.count {
            for v in variants {
                var s = start
                for m in metaIndices.prefix(p) {
                    switch prefix[m] {
                    case .create(let n, let ino): s.entries[n] = ino
                    case .rename(let a, let b): s.entries[b] = s.entries[a]; s.entries[a] = nil
                    case .link(let a, let b): s.entries[b] = s.entries[a]
                    case .unlink(let n): s.entries[n] = nil
                    default: break
                    }
                }
                for (ino, d) in v { s.data[ino] = d }
                out.append(s)
            }
        }
        return out
    }

    func materialize(_ s: FSState) throws {
        for f in try FileManager.default.contentsOfDirectory(atPath: dir) {
            try FileManager.default.removeItem(atPath: dir + "/" + f)
        }
        for (name, ino) in s.entries {
            let fd = open(dir + "/" + name, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            XCTAssertGreaterThanOrEqual(fd, 0)
            let d = s.data[ino] ?? []
            if !d.isEmpty { _ = d.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } }
            close(fd)
        }
    }

    /// Records a save of `newValue` over an archive of `oldValue` (writes cut
    /// to `chunk` bytes, so the archive takes several), then checks every crash state.
    func checkSave(chunk: Int?, oldExists: Bool, marker: Bool) throws -> Int {
        for f in try FileManager.default.contentsOfDirectory(atPath: dir) { try FileManager.default.removeItem(atPath: dir + "/" + f) }
        if oldExists {
            let (e, _) = try counterEngine(path, 1)
            try e.save()
            e.destroy()
            if marker {
                // A marker a dead restore of the old archive left: it must not condemn the new one.
                let old = fileBytes(path)!
                let m = CrashGuard.Marker(owner: .init(pid: 999999, start: 1, boot: SystemInfo.bootID),
                                          archive: old.withUnsafeBytes { CrashGuard.identity(of: $0) })
                _ = FileManager.default.createFile(atPath: FileStore.markerPath(path), contents: Data(CrashGuard.encode(m).utf8))
            }
        }
        let start = try snapshot()
        let trace = IOTrace()
        trace.limitWrites = chunk
        let (e, _) = try counterEngine(path, 2)
        try FileIO.withInterceptor(trace) { try e.save() }
        e.destroy()
        let newBytes = fileBytes(path)!
        let ops = modelOps(trace, start: start)
        var checked = 0
        for k in 0...ops.count {
            for s in crashStates(ops, k, start: start) {
                try materialize(s)
                let context = "power loss after \(k) of \(ops.count) operations (chunk \(chunk.map(String.init) ?? "whole"), old archive: \(oldExists), marker: \(marker)); files: \(s.entries.keys.sorted())\noperations: \(ops.prefix(k))"
                let archive = s.entries["state.rst"].flatMap { s.data[$0] }
                let done = k == ops.count
                switch restoreAsNextProcess(path) {
                case .success(let v):
                    XCTAssertTrue(done ? v == 2 : (v == 1 || v == 2), "restored \(v): \(context)")
                    XCTAssertTrue(archive == newBytes || (!done && oldExists && v == 1), "archive bytes neither old nor new: \(context)")
                case .failure(let f):
                    // No archive before the first save; or the old archive with its genuine crash marker.
                    let allowed = (!oldExists && !done && f.status == .notFound) || (marker && !done && f.status == .rejected && archive != newBytes)
                    XCTAssertTrue(allowed, "neither state restores: \(f): \(context)")
                }
                // And the engine saves again there.
                do {
                    let (e2, _) = try counterEngine(path, 3)
                    try e2.save()
                    e2.destroy()
                    XCTAssertEqual(FileStore.siblings(of: path, infix: ".tmp-"), [], context)
                } catch {
                    XCTFail("cannot save after the power loss: \(error): \(context)")
                }
                checked += 1
            }
        }
        return checked
    }

    /// A save keeping 2 generations over archive 1 with generation 1 = 0:
    /// after a power loss at any point, the path holds 1 or 2 (2 once the
    /// save returned), and every generation left is a whole earlier archive
    /// (byte for byte), newest first.
    func checkRotatingSave(chunk: Int?) throws -> Int {
        for f in try FileManager.default.contentsOfDirectory(atPath: dir) { try FileManager.default.removeItem(atPath: dir + "/" + f) }
        var known: [[UInt8]: Int64] = [:]
        for v in [Int64(0), 1] {
            let (e, _) = try counterEngine(path, v, generations: 2)
            try e.save()
            e.destroy()
            known[fileBytes(path)!] = v
        }
        let start = try snapshot()
        let trace = IOTrace()
        trace.limitWrites = chunk
        let (e, _) = try counterEngine(path, 2, generations: 2)
        try FileIO.withInterceptor(trace) { try e.save() }
        e.destroy()
        XCTAssertEqual(fileBytes(FileStore.generationPath(path, 1)).flatMap { known[$0] }, 1)
        let ops = modelOps(trace, start: start)
        XCTAssertTrue(ops.contains { if case .link = $0 { return true }; return false }, "no link in the trace")
        var checked = 0
        for k in 0...ops.count {
            for s in crashStates(ops, k, start: start) {
                try materialize(s)
                let context = "power loss after \(k) of \(ops.count) operations of a rotating save (chunk \(chunk.map(String.init) ?? "whole")); files: \(s.entries.keys.sorted())\noperations: \(ops.prefix(k))"
                let done = k == ops.count
                switch restoreAsNextProcess(path) {
                case .success(let v): XCTAssertTrue(done ? v == 2 : (v == 1 || v == 2), "restored \(v): \(context)")
                case .failure(let f): XCTFail("neither state restores: \(f): \(context)")
                }
                var previous = Int64.max
                for g in 1...3 {
                    guard let name = Optional("state.rst.\(g)"), let ino = s.entries[name] else { continue }
                    XCTAssertLessThan(g, 3, "a third generation: \(context)")
                    guard let v = s.data[ino].flatMap({ known[$0] }) else {
                        XCTFail("generation \(g) is not a whole earlier archive: \(context)")
                        continue
                    }
                    XCTAssertLessThanOrEqual(v, previous, "generations out of order: \(context)")
                    previous = v
                }
                if done { XCTAssertEqual(s.entries["state.rst.1"].flatMap { s.data[$0] }.flatMap { known[$0] }, 1, context) }
                checked += 1
            }
        }
        return checked
    }

    func testEveryPowerLossDuringARotatingSaveKeepsWholeGenerationsInOrder() throws {
        var total = 0
        for chunk in [nil, 64] as [Int?] { total += try checkRotatingSave(chunk: chunk) }
        print("power-loss model: \(total) crash states of rotating saves checked")
        XCTAssertGreaterThan(total, 50)
    }

    func testEveryPowerLossDuringASaveLeavesTheOldOrTheNewState() throws {
        var total = 0
        for (chunk, oldExists, marker) in [(nil, true, false), (64, true, false), (64, false, false), (64, true, true)] as [(Int?, Bool, Bool)] {
            total += try checkSave(chunk: chunk, oldExists: oldExists, marker: marker)
        }
        print("power-loss model: \(total) crash states checked")
        XCTAssertGreaterThan(total, 100)
    }
}
