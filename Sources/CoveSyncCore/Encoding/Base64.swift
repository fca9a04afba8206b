// Base64 (RFC 4648, standard alphabet, with padding) for data values in changeset lines. The
// decoder is strict: no white space, padding only at the end and only as much as the length
// needs, and unused bits zero, so that every byte string has exactly one text.

enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ data: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((data.count + 2) / 3 * 4)
        var i = 0
        while i < data.count {
            let b0 = data[i]
            let b1 = i + 1 < data.count ? data[i + 1] : 0
            let b2 = i + 2 < data.count ? data[i + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            out.append(i + 1 < data.count ? alphabet[Int((b1 & 0x0F) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(i + 2 < data.count ? alphabet[Int(b2 & 0x3F)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes `text` encodes, or nil when it is not canonical base64.
    static func decode(_ text: String) -> [UInt8]? {
        let t = Array(text.utf8)
        guard t.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(t.count / 4 * 3)
        var i = 0
        while i < t.count {
            let last = i + 4 == t.count
            let pad = last ? (t[i + 3] == UInt8(ascii: "=") ? (t[i + 2] == UInt8(ascii: "=") ? 2 : 1) : 0) : 0
            var v: UInt32 = 0
            for k in 0..<4 {
                if k >= 4 - pad {
                    v <<= 6
                    continue
                }
                guard let d = value(t[i + k]) else { return nil }
                v = v << 6 | UInt32(d)
            }
            out.append(UInt8(truncatingIfNeeded: v >> 16))
            if pad < 2 { out.append(UInt8(truncatingIfNeeded: v >> 8)) }
            if pad < 1 { out.append(UInt8(truncatingIfNeeded: v)) }
            // The bits the padding stands for must be zero, or two texts would mean one value.
            if (pad == 2 && v & 0xFFFF != 0) || (pad == 1 && v & 0xFF != 0) { return nil }
            i += 4
        }
        return out
    }

    private static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return c - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return c - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): return 62
        case UInt8(ascii: "/"): return 63
        default: return nil
        }
    }
}
