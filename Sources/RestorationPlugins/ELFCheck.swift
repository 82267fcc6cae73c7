#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A cheap look at a file's ELF header and program headers, on the opened
/// descriptor, before `dlopen` sees it. `dlopen` rejects most non-ELF files
/// cleanly, but glibc maps the segments of a *truncated* ELF file without
/// checking them against the file size, and the first touch of a page past
/// the end of the file kills the process with SIGBUS. So: right magic, class,
/// byte order, machine and type, and every segment's file bytes inside the
/// file. Runs no plugin code.
enum ELFCheck {
    #if arch(x86_64)
    static let hostMachine: UInt16? = 62    // EM_X86_64
    #elseif arch(arm64)
    static let hostMachine: UInt16? = 183   // EM_AARCH64
    #else
    static let hostMachine: UInt16? = nil   // not checked
    #endif

    /// nil when the file looks loadable, else why not.
    static func problem(fd: Int32, size: Int64) -> String? {
        guard MemoryLayout<Int>.size == 8 else { return nil }  // 64-bit hosts only
        var header = [UInt8](repeating: 0, count: 64)
        guard size >= 64, readFully(fd, &header, at: 0) else {
            return "not an ELF file (\(size) bytes, too short for an ELF header)"
        }
        guard header[0] == 0x7F, header[1] == 0x45, header[2] == 0x4C, header[3] == 0x46 else {
            return "not an ELF file (no ELF magic number)"
        }
        guard header[4] == 2 else { return "not a 64-bit ELF file (ELF class \(header[4]))" }
        guard header[5] == 1 else { return "not a little-endian ELF file" }
        let type = u16(header, 16)
        guard type == 3 else { return "not an ELF shared object (e_type \(type); ET_DYN is 3)" }
        let machine = u16(header, 18)
        if let hostMachine, machine != hostMachine {
            return "built for another machine (ELF e_machine \(machine); this host is \(hostMachine))"
        }
        let phoff = u64(header, 32)
        let phentsize = Int(u16(header, 54))
        let phnum = Int(u16(header, 56))
        guard phentsize == 56, phnum > 0, phnum < 0xFFFF else {
            return "a damaged ELF file (\(phnum) program headers of \(phentsize) bytes)"
        }
        let tableBytes = UInt64(phnum * phentsize)
        guard phoff < UInt64(size), tableBytes <= UInt64(size) - phoff else {
            return "a truncated ELF file (its program headers end past the end of the file)"
        }
        var table = [UInt8](repeating: 0, count: Int(tableBytes))
        guard readFully(fd, &table, at: Int64(phoff)) else {
            return "an unreadable ELF file (program headers)"
        }
        for i in 0..<phnum {
            let base = i * phentsize
            let offset = u64(table, base + 8)
            let fileSize = u64(table, base + 32)
            guard fileSize > 0 else { continue }
            guard offset <= UInt64(size), fileSize <= UInt64(size) - offset else {
                return "a truncated ELF file (segment \(i) needs bytes up to \(offset &+ fileSize); the file has \(size))"
            }
        }
        return nil
    }

    private static func readFully(_ fd: Int32, _ buffer: inout [UInt8], at offset: Int64) -> Bool {
        var done = 0
        let total = buffer.count
        while done < total {
            let n = buffer.withUnsafeMutableBytes { b in
                pread(fd, b.baseAddress! + done, total - done, off_t(offset) + off_t(done))
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            done += n
        }
        return true
    }

    @inline(__always) private static func u16(_ b: [UInt8], _ at: Int) -> UInt16 {
        UInt16(b[at]) | UInt16(b[at + 1]) << 8
    }

    @inline(__always) private static func u64(_ b: [UInt8], _ at: Int) -> UInt64 {
        var v: UInt64 = 0
        for k in 0..<8 { v |= UInt64(b[at + k]) << (8 * UInt64(k)) }
        return v
    }
}
