extension String {
    /// Whether `part` occurs in this string, compared as UTF-8 bytes (the
    /// engine uses it to ask whether a store's sentence already names the
    /// store). The standard library's `contains(_: some StringProtocol)`
    /// lives in the `_StringProcessing` module: a single call to it links
    /// that module and its regex parser, 1.2 MB of code, into
    /// librestoration.so (docs/PERFORMANCE-LEVERS.md; the install test
    /// checks that the library holds none of it).
    public func containsBytes(of part: String) -> Bool {
        var text = self, part = part
        return text.withUTF8 { t in
            part.withUTF8 { p in
                guard p.count <= t.count else { return false }
                guard let first = p.first else { return true }
                var i = 0
                while i <= t.count - p.count {
                    if t[i] == first && memcmpEqual(t.baseAddress! + i, p.baseAddress!, p.count) { return true }
                    i += 1
                }
                return false
            }
        }
    }
}

@inline(__always)
private func memcmpEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ n: Int) -> Bool {
    for k in 0..<n where a[k] != b[k] { return false }
    return true
}
