// Hexadecimal digits and big-endian bytes, for the fixed-width text and byte forms of clocks,
// ObjectIds and UUIDs (lowercase hex on output; either case on input), and the backslash escapes
// that JSON and the query language share.

enum Hex {
    /// The value of one hex digit, or nil.
    static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c &- UInt8(ascii: "A") &+ 10
        default: return nil
        }
    }

    /// `value` as exactly `width` lowercase digits (the high ones dropped if it is wider).
    static func digits(_ value: UInt64, width: Int) -> String {
        let alphabet = Array("0123456789abcdef".utf8)
        var out = [UInt8](repeating: UInt8(ascii: "0"), count: width)
        var v = value
        var i = width - 1
        while i >= 0 {
            out[i] = alphabet[Int(v & 0xF)]
            v >>= 4
            i -= 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The number that `bytes` spell in hex, or nil when one is not a hex digit or there are more
    /// than 16.
    static func number<C: Collection>(_ bytes: C) -> UInt64? where C.Element == UInt8 {
        guard !bytes.isEmpty, bytes.count <= 16 else { return nil }
        var v: UInt64 = 0
        for c in bytes {
            guard let d = value(c) else { return nil }
            v = v << 4 | UInt64(d)
        }
        return v
    }
}

enum BigEndian {
    /// The number that up to 8 bytes spell, most significant first.
    static func number<C: Collection>(_ bytes: C) -> UInt64 where C.Element == UInt8 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The low `count` bytes of `value`, most significant first.
    static func bytes(_ value: UInt64, count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: value >> UInt64(8 * (count - 1 - $0))) }
    }
}

enum Escape {
    /// The byte that `\b`, `\f`, `\n`, `\r` or `\t` stands for, or that `\"`, `\\` and `\/`
    /// stand for themselves; nil for any other letter after a backslash.
    static func shared(_ letter: UInt8) -> UInt8? {
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): return letter
        case UInt8(ascii: "b"): return 0x08
        case UInt8(ascii: "f"): return 0x0C
        case UInt8(ascii: "n"): return 0x0A
        case UInt8(ascii: "r"): return 0x0D
        case UInt8(ascii: "t"): return 0x09
        default: return nil
        }
    }
}
