import Foundation
import RestorationCore

// Sensitive values and portable exports in the Swift API: the same room the
// C functions `rst_set_key_sensitivity`, `rst_coder_set_sensitivity`,
// `rst_export` and the options' `encryption_key` reach.

/// How the values under one key are written. See docs/SECURITY.md.
public enum KeySensitivity: UInt32, Sendable {
    /// Written as they are.
    case normal = 0
    /// Never written (not to a file, buffer, generation or export); a
    /// decode of it finds nothing.
    case secret = 1
    /// Written sealed (XChaCha20-Poly1305) with the engine's
    /// ``RestorationEngine/setEncryptionKey(_:)``; left out without a key.
    case encrypted = 2
    /// Written, and left out of portable exports.
    case local = 3

    var core: Sensitivity { Sensitivity(rawValue: rawValue)! }
}

extension RestorationEngine {
    /// The app's policy: every value under `key` in records of the class
    /// `className` (nil: every class), at any depth of their nested records,
    /// whoever encodes it. `.normal` removes the rule.
    ///
    /// The corresponding C function is `rst_set_key_sensitivity`.
    public func setSensitivity(_ s: KeySensitivity, forKey key: String, inClass className: String? = nil) throws(RestorationError) {
        guard !key.isEmpty, key.utf8.count <= 255 else {
            throw RestorationError.invalid("setSensitivity: the key must be 1 to 255 bytes of UTF-8")
        }
        core.setKeySensitivity(className: className, key: Array(key.utf8), s.core)
    }

    /// Sets where the 32-byte key that seals ``KeySensitivity/encrypted``
    /// values comes from (nil: no key): `provider` is asked once per save
    /// that writes such a value and once per restore that meets one, on the
    /// saving or restoring thread with the engine busy (it must not call the
    /// engine); it returns the key, or nil for none (then such values are
    /// left out at save, or decode as not found at restore). The engine
    /// wipes its copy after use.
    ///
    /// The corresponding C option is `rst_engine_options.encryption_key`.
    public func setEncryptionKey(_ provider: (() -> [UInt8]?)?) {
        guard let f = provider else { core.setEncryptionKeyProvider(nil); return }
        core.setEncryptionKeyProvider { out in
            guard var k = f() else { return false }
            defer { k.withUnsafeMutableBytes { p in for i in p.indices { p[i] = 0 } } }
            guard k.count == 32 else { return false }
            k.withUnsafeBytes { out.copyMemory(from: $0) }
            return true
        }
    }

    /// Writes the state to a new archive, as ``saveToData()`` does, but it
    /// is not a save: ``shouldSave`` is not asked, carried records do not
    /// count it, nothing is logged about the values it leaves out.
    /// `portable`: LOCAL and ENCRYPTED values are left out too, so the data
    /// restores on another machine.
    ///
    /// The corresponding C function is `rst_export`.
    public func export(portable: Bool) throws(RestorationError) -> Data {
        try registry.locked { () throws(RestorationError) -> Data in
            registry.sweep()
            var data = Data()
            _ = try RestorationError.wrap { () throws(RestorationFailure) in
                try core.export(portable: portable) { n in
                    data = Data(count: n)
                    return UnsafeMutableRawPointer.allocate(byteCount: max(n, 1), alignment: 16)
                }.map { r in
                    data = Data(bytes: r.bytes, count: r.count)
                    r.bytes.deallocate()
                }
            }
            return data
        }
    }
}

extension RestorationCoder {
    /// Inside an encode, before `key` is encoded in this record: how its
    /// value is written, for this record only; wins over the engine's policy.
    ///
    /// - Throws: ``RestorationError/state(_:)`` after the key was encoded
    ///   or outside an encode.
    ///
    /// The corresponding C function is `rst_coder_set_sensitivity`.
    public func setSensitivity(_ s: KeySensitivity, forKey key: String) throws(RestorationError) {
        try check()
        try withKey(key) { (k) throws(RestorationFailure) in try coder.setSensitivity(k, s.core) }
    }
}
