// swift-tools-version: 6.1
//
// Restoration: state preservation and restoration for Linux programs.
// One core, thin edges — see docs/ARCHITECTURE.md.
//
//   CRestoration        Include/: the public C headers (header-only C target)
//   RestorationArchive  the archive codec: writer, validating reader (pure Swift)
//   RestorationCore     object registry, coder, restore planner, engine, file store (pure Swift)
//   RestorationCFace    the C face: what every rst_* function does, C callback/factory adapters,
//                       rst_last_error, the C-string arena (the core itself knows only Swift types)
//   RestorationPlugins  the plugin loader: the only place that calls dlopen and libffi; owns the
//                       rst_host_api table plugins receive, and attaches plugins to an engine
//   RestorationC        the exported C ABI (@c @implementation, forwarding to the C face)
//   librestoration      the shared library product alone: SONAME, export list, static runtime
//   Restoration         the Swift API (StateRestoring, RestorationEngine, RestorationCoder)
import PackageDescription
import Foundation

let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().path

// The library's major version (the SONAME's number), read from the header
// that defines it, so the two can never disagree.
let libraryMajorVersion: String = {
    let header = (try? String(contentsOfFile: packageRoot + "/Include/restoration.h", encoding: .utf8)) ?? ""
    for line in header.split(separator: "\n") where line.hasPrefix("#define RST_VERSION_MAJOR ") {
        if let n = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(2).first { return String(n) }
    }
    return "1"
}()

// The hot paths (coder, registry, C face) skip Swift's dynamic exclusivity
// checks in release builds, property by property: the stored properties of
// the classes every encode, decode and registration touches (Coder,
// ObjectNode, Engine, RestoreRun, ChildIndex, CStringArena) are declared
// `@exclusivity(unchecked)` under `#if UNCHECKED_EXCLUSIVITY`, defined here
// for release only. (Not the compiler flag `-enforce-exclusivity=unchecked`:
// SwiftPM refuses unsafeFlags in a product that another package depends on
// by version.) Those checks catch *overlapping accesses* to one variable (a
// modify of a class property, such as the coder's writer, still open when
// code reaches the same property again), not threads. In these classes every
// such access is confined to one call that does not call out to host code
// while it is open (callbacks run between accesses), and the codec's
// untrusted input is parsed into locals and an immutable reader. The
// evidence: `swift test` builds debug, where the checks are on and trap, and
// runs every path, reentrant callbacks included (callbacks that encode,
// decode, register and find during a save or restore: the C programs, the
// core, Swift API and plugin tests). Unchecked, a save costs less than half
// (callgrind: 7,692 → 3,382 instructions per object; docs/PERFORMANCE-LEVERS.md).
// Bounds and overflow checks stay on.
let hotPath: [SwiftSetting] = [.define("UNCHECKED_EXCLUSIVITY", .when(configuration: .release))]

let package = Package(
    name: "Restoration",
    products: [
        .library(name: "restoration", type: .dynamic, targets: ["librestoration"]),
        .library(name: "Restoration", targets: ["Restoration"]),
        .library(name: "RestorationPluginKit", targets: ["RestorationPluginKit"]),
        // Example plugins (Plugins/): a C one and a Swift one, used by the demo.
        .library(name: "countries_detail", type: .dynamic, targets: ["CountriesDetailPlugin"]),
        .library(name: "CountriesPanesPlugin", type: .dynamic, targets: ["CountriesPanesPlugin"]),
        .executable(name: "restorectl", targets: ["restorectl"]),
        .executable(name: "restore-bench", targets: ["restore-bench"]),
        .executable(name: "countries-swift", targets: ["countries-swift"]),
        .executable(name: "readme-swift", targets: ["readme-swift"]),
        .executable(name: "restore-fuzz", targets: ["restore-fuzz"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .target(name: "CRestoration", path: "Include", publicHeadersPath: "."),
        .systemLibrary(name: "CFFI", path: "Sources/CFFI", pkgConfig: "libffi",
                       providers: [.apt(["libffi-dev"])]),

        // The CPU's CRC-32C instruction, chosen at run time (the codec's one C part).
        .target(name: "CCRC32C", path: "Sources/CCRC32C"),
        .target(name: "RestorationArchive", dependencies: ["CCRC32C"], swiftSettings: hotPath),
        // ABI v1.1 §2's signal handler and descriptors (async-signal-safe C, hidden symbols).
        .target(name: "CLifecycle", path: "Sources/CLifecycle"),
        // Sealing sensitive values: the one door to libsodium (Debian: libsodium-dev).
        .target(name: "CSodium", path: "Sources/CSodium", linkerSettings: [.linkedLibrary("sodium")]),
        .target(name: "RestorationCore", dependencies: ["RestorationArchive", "CLifecycle", "CSodium"], swiftSettings: hotPath),
        // RestorationC's one-line exports call the C face's functions (one
        // call per value, ~0.8% of a save: docs/PERFORMANCE-LEVERS.md); the
        // core's hot accessors are @inlinable, so they inline into the C face.
        .target(name: "RestorationCFace", dependencies: ["RestorationCore", "RestorationArchive", "CRestoration"],
                swiftSettings: hotPath),
        .target(name: "RestorationPlugins", dependencies: ["RestorationCore", "RestorationCFace", "CRestoration", "CFFI"]),
        .target(name: "RestorationC", dependencies: ["RestorationCFace", "RestorationPlugins", "CRestoration"],
                swiftSettings: hotPath),
        // librestoration.so.1, and only it: a versioned SONAME, only the rst_*
        // symbols exported, the Swift runtime linked in statically (the
        // library needs no Swift toolchain at run time), linked by lld (whose
        // dynamic symbol table then holds the rst_* functions alone).
        // Its footprint in a C program (docs/PERFORMANCE-LEVERS.md, `pfoot`):
        // libstdc++, libffi and libsodium linked in statically too (the
        // linker scripts of static/, the first -L, turn the driver's -lstdc++
        // and SwiftPM's -lffi/-lsodium into their archives), and libgcc
        // (-static-libgcc), so the loader no longer loads and relocates
        // them at every start; the relative relocations packed (RELR,
        // `-z pack-relative-relocs`; glibc 2.36 or later), which the loader
        // applies in a few instructions each and which leave the 477 KB
        // .rela.dyn out of the file; the functions that run at start laid
        // out side by side (startup.order), so a start touches few pages.
        // The Swift runtime's argv, from the loader rather than /proc/self/maps
        // (Sources/CLibraryArgv/argv.c): in the library alone.
        .target(name: "CLibraryArgv", path: "Sources/CLibraryArgv"),
        .target(name: "librestoration", dependencies: ["RestorationC", "CLibraryArgv"], path: "Sources/librestoration",
                exclude: ["exports.map", "static", "startup.order"],
                linkerSettings: [.unsafeFlags(["-L", "\(packageRoot)/Sources/librestoration/static",
                                               "-static-stdlib", "-use-ld=lld", "-Xclang-linker", "-static-libgcc",
                                               "-Xlinker", "-soname=librestoration.so.\(libraryMajorVersion)",
                                               "-Xlinker", "--version-script=\(packageRoot)/Sources/librestoration/exports.map",
                                               "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                                               "-Xlinker", "--symbol-ordering-file=\(packageRoot)/Sources/librestoration/startup.order",
                                               "-Xlinker", "--no-warn-symbol-ordering"],
                                              .when(platforms: [.linux]))]),
        .target(name: "Restoration", dependencies: ["RestorationCore", "RestorationPlugins", "RestorationArchive"]),
        // Helper for plugins written in Swift: depends on the C headers only (never on the core).
        .target(name: "RestorationPluginKit", dependencies: ["CRestoration"]),

        .target(name: "CountriesDetailPlugin", dependencies: ["CRestoration"],
                path: "Plugins/countries-detail", publicHeadersPath: "."),
        .target(name: "CountriesPanesPlugin", dependencies: ["RestorationPluginKit", "CRestoration"],
                path: "Plugins/countries-panes", exclude: ["exports.map"]),

        .executableTarget(name: "restorectl", dependencies: [
            "RestorationCore", "RestorationArchive", "RestorationPlugins", "CRestoration",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // c/: the C contestants, compiled by restore-bench at run time (cc), not by SwiftPM.
        .executableTarget(name: "restore-bench", dependencies: [
            "RestorationC", "CRestoration", "RestorationArchive",
        ], exclude: ["c"]),
        // Fuzz target (libFuzzer with -DFUZZING; a corpus replay tool otherwise).
        .executableTarget(name: "restore-fuzz", dependencies: ["RestorationCore", "RestorationArchive"],
                          exclude: ["corpus"]),
        .executableTarget(name: "countries-swift", dependencies: ["Restoration"],
                          path: "Examples/countries-swift"),
        // The README's Swift example, verbatim (ReadmeExampleTests checks both).
        .executableTarget(name: "readme-swift", dependencies: ["Restoration"], path: "Examples/readme-swift"),

        .testTarget(name: "RestorationArchiveTests", dependencies: ["RestorationArchive"]),
        .testTarget(name: "RestorationCoreTests", dependencies: ["RestorationCore", "RestorationArchive"]),
        // The C face called as Swift: argument checks, the C spellings, the
        // options struct by version, and the plugin host table's members.
        .testTarget(name: "RestorationCFaceTests", dependencies: ["RestorationCFace", "RestorationCore", "RestorationPlugins", "CRestoration"]),
        .testTarget(name: "RestorationPluginsTests", dependencies: ["RestorationPlugins", "RestorationC", "RestorationCore", "CRestoration"],
                    exclude: ["C"]),
        .testTarget(name: "RestorationCTests", dependencies: ["RestorationC"], exclude: ["C"]),
        .testTarget(name: "RestorationTests", dependencies: ["Restoration", "RestorationCore", "RestorationArchive"], exclude: ["C"]),
        .testTarget(name: "RestorationPluginKitTests", dependencies: ["RestorationPluginKit", "RestorationPlugins", "RestorationCFace", "CRestoration"]),
        // Swift 6 mode: @MainActor types adopt StateRestoring and autosave on the main queue.
        .testTarget(name: "RestorationSwift6Tests", dependencies: ["Restoration"],
                    swiftSettings: [.swiftLanguageMode(.v6), .enableUpcomingFeature("InferIsolatedConformances")]),
        .testTarget(name: "restorectlTests", dependencies: ["RestorationArchive"], exclude: ["C"]),
    ],
    swiftLanguageModes: [.v5]
)
