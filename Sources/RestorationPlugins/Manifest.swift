import CRestoration
import RestorationCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a plugin file was rejected: one sentence for the log and the listing.
struct PluginRejection: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// One class of a manifest after validation.
struct ManifestClass {
    var className: String
    var factorySymbol: String
    var signature: String
    /// Why the class cannot be used (the plugin's other classes still load).
    var problem: String?
    /// The prepared call, when the class is usable.
    var call: FactoryCall?
}

typealias PluginInitFn = @convention(c) (OpaquePointer?, UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> Int32
typealias PluginFiniFn = @convention(c) (UnsafeMutableRawPointer?) -> Void

/// A manifest whose fields were all checked.
struct ValidatedManifest {
    let name: String
    let version: String
    var classes: [ManifestClass]
    let initialize: PluginInitFn?
    let finalize: PluginFiniFn?
}

/// Stage 2 of 3 (discover, validate, load): opens one discovered file and
/// checks what it declares. The file is re-checked on an open descriptor
/// (same device and inode as at discovery, still a regular file with a safe
/// owner and mode, an ELF shared object for this machine whose segments are
/// all inside the file: see ELFCheck) immediately before `dlopen`;
/// plugin_dir itself is not
/// writable by anyone but its owner or root (discovery checked), so only
/// they could swap the file in between.
enum PluginImage {
    /// Upper bound on `class_count` (a garbage count must not make us walk memory).
    static let maxClasses = 1024
    /// Upper bound on any manifest string, in bytes.
    static let maxStringBytes = 4096

    static let openFlags = RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE

    /// dlopen with RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE and the absolute
    /// path. Never dlclose'd, on any path: unloading Swift code crashes the
    /// process later, and RTLD_NODELETE keeps the image mapped anyway.
    static func open(_ file: DiscoveredFile, trace: Trace) throws(PluginRejection) -> UnsafeMutableRawPointer {
        let fd = Glibc.open(file.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let e = errno
            throw PluginRejection("'\(file.path)' cannot be opened: \(errnoText(e))")
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let e = errno
            throw PluginRejection("'\(file.path)' cannot be examined: \(errnoText(e))")
        }
        guard st.st_mode & S_IFMT == S_IFREG else {
            throw PluginRejection("'\(file.path)' is not a regular file")
        }
        guard UInt64(st.st_dev) == file.device, UInt64(st.st_ino) == file.inode else {
            throw PluginRejection("'\(file.path)' was replaced after it was examined; not loaded")
        }
        if let problem = Discovery.trustProblem(st, what: "'\(file.path)'") {
            throw PluginRejection(problem)
        }
        if let problem = ELFCheck.problem(fd: fd, size: Int64(st.st_size)) {
            throw PluginRejection("'\(file.path)' is not a loadable shared object: \(problem)")
        }
        trace("dlopen('\(file.path)', RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)")
        _ = dlerror()
        guard let handle = dlopen(file.path, openFlags) else {
            throw PluginRejection("'\(file.path)' is not a loadable shared object: \(dlErrorText("dlopen failed"))")
        }
        return handle
    }

    /// The manifest at `m`, reading only the members its version has: a
    /// manifest of ABI version 1 ends after `fini` (a plugin built against
    /// the 1.0 header); version 2 has `manifest_size`, and members past it
    /// read as zero. Another version is rejected before anything else is read.
    static func readManifest(_ m: UnsafePointer<rst_plugin_manifest>, file: DiscoveredFile) throws(PluginRejection) -> rst_plugin_manifest {
        let raw = UnsafeRawPointer(m)
        let abi = raw.loadUnaligned(as: UInt32.self)
        var out = rst_plugin_manifest()
        let v1Size = MemoryLayout<rst_plugin_manifest>.offset(of: \rst_plugin_manifest.manifest_size)!
        let known = MemoryLayout<rst_plugin_manifest>.size
        let size: Int
        switch abi {
        case 1:
            size = v1Size
        case 2:
            let declared = Int(raw.loadUnaligned(fromByteOffset: v1Size, as: UInt32.self))
            guard declared == 0 || declared >= v1Size + MemoryLayout<UInt32>.size else {
                throw PluginRejection("the manifest of '\(file.path)' says manifest_size is \(declared) bytes, less than the members of ABI version 2")
            }
            size = declared == 0 ? known : min(declared, known)
        default:
            throw PluginRejection("'\(file.path)' was built for plugin ABI version \(abi); this host supports versions 1 and \(RST_PLUGIN_ABI_VERSION)")
        }
        withUnsafeMutableBytes(of: &out) { $0.baseAddress!.copyMemory(from: raw, byteCount: size) }
        return out
    }

    /// Calls `rst_plugin_manifest_v1` with the host table and checks every
    /// field. Throws for a plugin-level problem; a class-level problem
    /// marks that class only.
    static func manifest(handle: UnsafeMutableRawPointer, hostAPI: UnsafeRawPointer,
                         file: DiscoveredFile, trace: Trace) throws(PluginRejection) -> ValidatedManifest {
        _ = dlerror()
        guard let symbol = dlsym(handle, RST_PLUGIN_MANIFEST_SYMBOL) else {
            throw PluginRejection("'\(file.path)' does not export \(RST_PLUGIN_MANIFEST_SYMBOL) (is it a Restoration plugin?)")
        }
        let entry = unsafeBitCast(symbol, to: rst_plugin_manifest_fn.self)
        trace("\(file.name): calling \(RST_PLUGIN_MANIFEST_SYMBOL)")
        guard let m = entry(hostAPI.assumingMemoryBound(to: rst_host_api.self)) else {
            throw PluginRejection("\(RST_PLUGIN_MANIFEST_SYMBOL) of '\(file.path)' returned NULL (the plugin declined to load, for example because the host's rst_host_api table is older than it needs)")
        }
        let manifest = try readManifest(m, file: file)
        let name: String, version: String
        switch (text(manifest.name), text(manifest.version)) {
        case (.success(let n), .success(let v)):
            name = n
            version = v
        case (.failure(let f), _):
            throw PluginRejection("the manifest of '\(file.path)' has \(f.describe("name"))")
        case (_, .failure(let f)):
            throw PluginRejection("the manifest of '\(file.path)' has \(f.describe("version"))")
        }
        guard name.utf8.count > 0 else {
            throw PluginRejection("the manifest of '\(file.path)' has an empty name")
        }
        let count = manifest.class_count
        guard count <= maxClasses else {
            throw PluginRejection("the manifest of '\(file.path)' declares \(count) classes; a plugin declares at most \(maxClasses)")
        }
        guard count == 0 || manifest.classes != nil else {
            throw PluginRejection("the manifest of '\(file.path)' declares \(count) classes but its classes pointer is NULL")
        }
        trace("\(file.name): manifest '\(name)' version '\(version)', ABI \(manifest.abi_version), \(count) class(es), init \(manifest.`init` == nil ? "none" : "present"), fini \(manifest.fini == nil ? "none" : "present")")

        var classes: [ManifestClass] = []
        classes.reserveCapacity(count)
        for k in 0..<count {
            let c = manifest.classes[k]
            var mc = ManifestClass(className: "", factorySymbol: "", signature: "", problem: nil, call: nil)
            mc.problem = validateClass(c, index: k, into: &mc, earlier: classes, handle: handle)
            if let problem = mc.problem {
                trace("\(file.name): class #\(k) '\(mc.className)' rejected: \(problem)")
            } else {
                trace("\(file.name): class '\(mc.className)' -> \(mc.factorySymbol)(\(mc.signature)): ffi_cif prepared")
            }
            classes.append(mc)
        }
        return ValidatedManifest(name: name, version: version, classes: classes,
                                 initialize: manifest.`init`, finalize: manifest.fini)
    }

    /// Checks one class; fills `mc` with what could be read. Returns the
    /// problem, or nil when the class is usable (then `mc.call` is set).
    private static func validateClass(_ c: rst_plugin_class, index k: Int, into mc: inout ManifestClass,
                                      earlier: [ManifestClass], handle: UnsafeMutableRawPointer) -> String? {
        switch text(c.class_name) {
        case .success(let s): mc.className = s
        case .failure(let f): return "class #\(k) has \(f.describe("class_name"))"
        }
        do {
            try ArgumentRules.className(mc.className)
        } catch {
            return error.message
        }
        switch text(c.factory_symbol) {
        case .success(let s): mc.factorySymbol = s
        case .failure(let f): return "class '\(mc.className)' has \(f.describe("factory_symbol"))"
        }
        switch text(c.signature) {
        case .success(let s): mc.signature = s
        case .failure(let f): return "class '\(mc.className)' has \(f.describe("signature"))"
        }
        if earlier.contains(where: { $0.className == mc.className && $0.problem == nil }) {
            return "class '\(mc.className)' is declared twice in this plugin; the first declaration is used"
        }
        let letters: [SignatureLetter]
        switch SignatureLetter.parse(mc.signature) {
        case .success(let l): letters = l
        case .failure(let e): return "class '\(mc.className)': \(e.message)"
        }
        guard !mc.factorySymbol.isEmpty else {
            return "class '\(mc.className)' has an empty factory_symbol"
        }
        _ = dlerror()
        guard let fn = dlsym(handle, mc.factorySymbol) else {
            return "class '\(mc.className)': factory symbol '\(mc.factorySymbol)' is not exported by the plugin (\(dlErrorText("dlsym failed")))"
        }
        switch FactoryCall.prepare(symbol: fn, letters: letters) {
        case .success(let call): mc.call = call
        case .failure(let e): return "class '\(mc.className)': \(e.message)"
        }
        return nil
    }

    enum TextProblem: Error {
        case null, tooLong, notUTF8
        func describe(_ field: String) -> String {
            switch self {
            case .null: return "a NULL \(field)"
            case .tooLong: return "a \(field) longer than \(PluginImage.maxStringBytes) bytes"
            case .notUTF8: return "a \(field) that is not valid UTF-8"
            }
        }
    }

    /// A manifest string: non-NULL, bounded, valid UTF-8.
    static func text(_ p: UnsafePointer<CChar>?) -> Result<String, TextProblem> {
        guard let p else { return .failure(.null) }
        let n = strnlen(p, maxStringBytes + 1)
        guard n <= maxStringBytes else { return .failure(.tooLong) }
        let bytes = UnsafeRawBufferPointer(start: p, count: n)
        guard ArgumentRules.isText(bytes) else { return .failure(.notUTF8) }
        return .success(String(decoding: bytes, as: UTF8.self))
    }
}
