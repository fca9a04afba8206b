// Strings made from stored UTF-8 bytes, refusing bytes that are not UTF-8.
import Glibc

extension String {
    /// The string whose UTF-8 encoding is `bytes`, or nil if they are not valid UTF-8.
    ///
    /// Decodes through the standard library's fast path for contiguous bytes, which repairs
    /// invalid input, and compares the result with the input: valid bytes come back byte for
    /// byte, anything repaired does not. It replaces `String(validating:as:)`, whose generic
    /// path looked up type metadata at every call in the profile of `objects-bench load`.
    /// (SPI for the C API, which checks the strings callers pass the same way.)
    @_spi(CoveBindings) public init?(utf8 bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            self = ""
            return
        }
        var s = String(decoding: UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: bytes.count),
                       as: UTF8.self)
        let same = s.withUTF8 { u in u.count == bytes.count && memcmp(u.baseAddress!, base, bytes.count) == 0 }
        guard same else { return nil }
        self = s
    }

    init?(utf8 bytes: [UInt8]) {
        guard let s = bytes.withUnsafeBytes({ String(utf8: $0) }) else { return nil }
        self = s
    }

    init?(utf8 bytes: ArraySlice<UInt8>) {
        guard let s = bytes.withUnsafeBytes({ String(utf8: $0) }) else { return nil }
        self = s
    }

    /// The string's UTF-8 bytes, copied in one piece: `Array(s.utf8)` walks the view through the
    /// generic collection copy, which was most of the cost of storing a short string.
    package var utf8Bytes: [UInt8] {
        var s = self
        return s.withUTF8 { Array($0) }
    }
}
