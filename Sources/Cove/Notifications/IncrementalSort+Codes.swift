// The first sort key's value of every row as a 64-bit code that orders as the values do: a
// binary search over the order then compares codes in memory and reads a row's values from
// the store only on a tie of codes that do not say the values are equal. The codes follow the
// order through each change set (copied with it); the state has them when it was evaluated and
// the first key is a property of one of the types below.
//
// Codes, compared as unsigned integers (reversed for a descending key): null 0; then an
// integer's bits with the sign flipped, a double's IEEE bits made to order (-0 as +0), a bool
// 1 or 2, a string's first seven UTF-8 bytes and its length (0xFF past seven); a path that
// crossed a null link sorts last, UInt64.max. Equal codes mean equal values except 0 (null, the
// least integer, the empty string), UInt64.max, and strings longer than seven bytes (low byte
// 0xFF).
import CoveCore

enum SortCode {
    /// Whether the values of `property` have codes (one type, not mixed).
    static func applies(to property: Property) -> Bool {
        switch property.type {
        case .int, .bool, .double, .float, .string: return property.collection == .none
        default: return false
        }
    }

    /// The code of a sort value; nil for one without (NaN, which orders with nothing).
    static func code(_ v: SortValue) -> UInt64? {
        if v.crossed { return .max }
        switch v.value {
        case .null: return 0
        case .bool(let b): return b ? 2 : 1
        case .int(let i): return UInt64(bitPattern: i) ^ (1 << 63)
        case .float(let f): return code(Double(f))
        case .double(let d): return code(d)
        case .string(let s):
            var bytes: UInt64 = 0
            var n = 0
            for b in s.utf8.prefix(7) {
                bytes |= UInt64(b) << (56 - 8 * UInt64(n))
                n += 1
            }
            let count = s.utf8.count
            return bytes | (count > 7 ? 0xFF : UInt64(count))
        default: return nil
        }
    }

    private static func code(_ d: Double) -> UInt64? {
        if d.isNaN { return nil }
        let bits = (d == 0 ? 0.0 : d).bitPattern
        return bits >> 63 == 1 ? ~bits : bits | (1 << 63)
    }

    /// Whether equal codes `c` mean equal values. A code does not say its type: one whose low
    /// byte is 0xFF is taken for a long string's whatever it is (a tie then reads the values).
    static func isExact(_ c: UInt64) -> Bool {
        c != 0 && c != .max && c & 0xFF != 0xFF
    }

    /// The codes of the first values of `rows`, nil when one has none.
    static func codes(_ firsts: [SortValue]) -> [UInt64]? {
        var out: [UInt64] = []
        out.reserveCapacity(firsts.count)
        for v in firsts {
            guard let c = code(v) else { return nil }
            out.append(c)
        }
        return out
    }
}
