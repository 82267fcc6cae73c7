// The fixture plugins and hosts: C files in C/ (excluded from the target in
// Package.swift, so SwiftPM does not build them), read here and compiled at
// test time (compilePlugin) with cc -shared -fPIC -std=c11 -Wall -Werror
// -I<repo>/Include.
import Foundation

/// The text of C/<name>, next to this file.
func cFixture(_ name: String) -> String {
    let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("C/" + name).path
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
        fatalError("the C fixture \(path) cannot be read")
    }
    return text
}

enum Fixtures {
    /// Factories of every signature shape. Each factory registers an object
    /// whose instance is a malloc'd description of the arguments it received:
    /// "cls=K sig=S E=%p P=%p I=id R=path C=<v> X=%p D=%u T=%lld Xinit=%p",
    /// with "-" for a letter the signature lacks. Without I (or R) or P the
    /// factory falls back to a fixed path; without E to the engine init saw.
    /// -DINIT_RESULT=n makes init return n.
    static let signatures = cFixture("signatures.c")

    /// A small plugin with two classes, CLASS1 and CLASS2 (factories
    /// signature "EPI"; the instance is "TAG:class"). Variants:
    /// -DV1_STRUCT (a 1.0 manifest), -DSIZED=n (manifest_size),
    /// -DNO_MANIFEST, -DNULL_MANIFEST, -DABI=n, -DTAG="x", -DCLASS1="x",
    /// -DCLASS2="x", -DINIT_RESULT=n.
    static let simple = cFixture("simple.c")

    /// Classes with bad declarations next to a good one: a letter outside
    /// the table, a repeated letter, a missing factory symbol, a NULL
    /// signature, a duplicate declaration, an empty class name.
    static let badClasses = cFixture("bad_classes.c")

    /// A C host linked against librestoration.so: restores the archive
    /// argv[2] with plugin_dir argv[1], prints what it found, saves again.
    static let cHost = cFixture("c_host.c")
}
