import CFFI
import RestorationCFace
import RestorationCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One letter of a factory signature (restoration_plugin.h).
enum SignatureLetter: UInt8, CaseIterable {
    case engine = 0x45      // E  rst_engine *
    case parent = 0x50      // P  rst_object * (NULL at a root)
    case identifier = 0x49  // I  const char *
    case path = 0x52        // R  const char *, "A/B/C"
    case coder = 0x43       // C  rst_coder *
    case context = 0x58     // X  void *, the plugin context from init
    case depth = 0x44       // D  uint32_t, 0 at a root
    case savedAt = 0x54     // T  int64_t, UTC ms

    static let alphabet = "E P I R C X D T"

    var character: Character { Character(Unicode.Scalar(rawValue)) }

    /// The C type libffi passes.
    var ffiType: UnsafeMutablePointer<ffi_type> {
        switch self {
        case .depth: return cffi_uint32()
        case .savedAt: return cffi_sint64()
        default: return cffi_pointer()
        }
    }

    /// Parses a signature: every byte a known letter, none repeated.
    /// Returns the letters or a sentence saying what is wrong.
    static func parse(_ signature: String) -> Result<[SignatureLetter], SignatureError> {
        var letters: [SignatureLetter] = []
        for byte in signature.utf8 {
            guard let letter = SignatureLetter(rawValue: byte) else {
                let shown = byte >= 0x20 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
                return .failure(SignatureError(message: "signature '\(signature)' has \(shown), which is not one of \(alphabet)"))
            }
            if letters.contains(letter) {
                return .failure(SignatureError(message: "signature '\(signature)' repeats '\(letter.character)'; each letter may appear at most once"))
            }
            letters.append(letter)
        }
        return .success(letters)
    }
}

struct SignatureError: Error {
    let message: String
}

/// A factory symbol and its signature as an `ffi_cif`, prepared once at load
/// and shared by every call (libffi only reads a prepared cif, so calls from
/// several threads or engines are safe). Lives as long as its loader; the
/// code it points to is never unmapped (RTLD_NODELETE, no dlclose).
final class FactoryCall {
    let letters: [SignatureLetter]
    private let cif: UnsafeMutablePointer<ffi_cif>
    private let argumentTypes: UnsafeMutablePointer<UnsafeMutablePointer<ffi_type>?>
    private let function: @convention(c) () -> Void

    /// Prepares the cif; nil (and a message) if libffi refuses it.
    /// Validation happens before any allocation escapes (see SWIFT-C-ABI.md,
    /// pitfall 8: a failing init leaks what it allocated).
    static func prepare(symbol: UnsafeMutableRawPointer, letters: [SignatureLetter]) -> Result<FactoryCall, SignatureError> {
        let cif = UnsafeMutablePointer<ffi_cif>.allocate(capacity: 1)
        let types = UnsafeMutablePointer<UnsafeMutablePointer<ffi_type>?>.allocate(capacity: max(letters.count, 1))
        for (i, l) in letters.enumerated() { types[i] = l.ffiType }
        let status = ffi_prep_cif(cif, FFI_DEFAULT_ABI, UInt32(letters.count), cffi_pointer(), types)
        guard status == FFI_OK else {
            cif.deallocate()
            types.deallocate()
            return .failure(SignatureError(message: "libffi could not prepare a call for this signature (ffi_prep_cif returned \(status.rawValue))"))
        }
        return .success(FactoryCall(letters: letters, cif: cif, types: types,
                                    function: unsafeBitCast(symbol, to: (@convention(c) () -> Void).self)))
    }

    private init(letters: [SignatureLetter], cif: UnsafeMutablePointer<ffi_cif>,
                 types: UnsafeMutablePointer<UnsafeMutablePointer<ffi_type>?>, function: @escaping @convention(c) () -> Void) {
        self.letters = letters
        self.cif = cif
        self.argumentTypes = types
        self.function = function
    }

    deinit {
        cif.deallocate()
        argumentTypes.deallocate()
    }

    /// Builds the arguments the signature asks for from the request and
    /// calls the factory. Returns the `rst_object *` it returned, unchecked
    /// (the caller compares it with the registered object before using it).
    func call(_ request: FactoryRequest, context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
        let n = letters.count
        // One 8-byte slot per argument; avalue[i] points at slot i.
        return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: max(n, 1)) { slots in
            withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: max(n, 1)) { values in
                let base = UnsafeMutableRawPointer(slots.baseAddress!)
                for (i, letter) in letters.enumerated() {
                    let slot = base + i * 8
                    slot.storeBytes(of: 0, as: UInt64.self)
                    switch letter {
                    case .engine:
                        slot.storeBytes(of: request.engine.handle, as: UnsafeMutableRawPointer?.self)
                    case .parent:
                        slot.storeBytes(of: request.parent?.handle, as: UnsafeMutableRawPointer?.self)
                    case .identifier:
                        slot.storeBytes(of: request.identifierCString, as: UnsafePointer<CChar>?.self)
                    case .path:
                        var path = request.path
                        let cPath = path.withUTF8 { cString(UnsafeRawBufferPointer($0), for: request.coder) }
                        slot.storeBytes(of: cPath, as: UnsafePointer<CChar>?.self)
                    case .coder:
                        slot.storeBytes(of: request.coder.handle, as: UnsafeMutableRawPointer?.self)
                    case .context:
                        slot.storeBytes(of: context, as: UnsafeMutableRawPointer?.self)
                    case .depth:
                        slot.storeBytes(of: UInt32(clamping: max(request.depth, 0)), as: UInt32.self)
                    case .savedAt:
                        slot.storeBytes(of: request.savedAtMs, as: Int64.self)
                    }
                    values[i] = slot
                }
                var result: UInt64 = 0  // >= sizeof(ffi_arg)
                withUnsafeMutableBytes(of: &result) { r in
                    ffi_call(cif, function, r.baseAddress, values.baseAddress)
                }
                return UnsafeMutableRawPointer(bitPattern: UInt(truncatingIfNeeded: result))
            }
        }
    }
}
