// Decimal128: IEEE 754-2008 decimal128 in the binary integer decimal (BID) encoding, stored as
// BSON stores it (16 bytes little-endian). Parsing and printing follow the BSON Decimal128 string
// rules; comparison is numeric (1.5 == 1.50) with NaN as the least value, so the order is total
// and can back an index. Arithmetic is not provided.

/// A decimal floating-point number: up to 34 significant digits, exponents -6176...6111,
/// infinities and NaN, in the IEEE 754-2008 decimal128 BID encoding.
///
/// Equality and order are numeric: `1.5 == 1.50`, `-0 == 0`. NaN equals NaN and sorts before
/// every other value, including -Infinity, so that sorting and indexes see one total order.
public struct Decimal128: Sendable {
    /// The high 64 bits of the encoding (sign, combination field, top of the coefficient).
    public let high: UInt64
    /// The low 64 bits of the encoding (bottom of the coefficient).
    public let low: UInt64

    /// The decimal with this bit pattern.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The decimal of these 16 bytes as BSON stores them (little-endian: `low` first). Throws
    /// `CoveError(.invalidArgument)` unless there are exactly 16.
    public init<C: Collection>(bytes: C) throws(CoveError) where C.Element == UInt8 {
        guard bytes.count == 16 else {
            throw CoveError(.invalidArgument, "a decimal128 is 16 bytes, got \(bytes.count)")
        }
        var lo: UInt64 = 0
        var hi: UInt64 = 0
        for (i, b) in bytes.enumerated() {
            if i < 8 { lo |= UInt64(b) << UInt64(8 * i) } else { hi |= UInt64(b) << UInt64(8 * (i - 8)) }
        }
        self.init(high: hi, low: lo)
    }

    /// The 16 bytes, little-endian, as BSON and the C API's `decimal128` hold them.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(16)
        for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: low >> UInt64(8 * i))) }
        for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: high >> UInt64(8 * i))) }
        return out
    }

    static let exponentBias = 6176
    static let minExponent = -6176
    static let maxExponent = 6111
    static let maxDigits = 34
    /// 10^0 ... 10^38.
    static let powersOf10: [UInt128] = {
        var p: [UInt128] = [1]
        for _ in 1...38 { p.append(p[p.count - 1] * 10) }
        return p
    }()
    static let maxCoefficient: UInt128 = powersOf10[34] - 1

    /// Quiet NaN.
    public static let nan = Decimal128(high: 0x7C00_0000_0000_0000, low: 0)
    /// Positive infinity.
    public static let infinity = Decimal128(high: 0x7800_0000_0000_0000, low: 0)
    /// Zero (exponent 0).
    public static let zero = Decimal128(negative: false, coefficient: 0, exponent: 0)

    /// What a bit pattern holds.
    enum Kind: Equatable {
        case nan
        case infinity
        /// coefficient × 10^exponent; non-canonical coefficients read as zero, as IEEE says.
        case finite(coefficient: UInt128, exponent: Int)
    }

    var kind: Kind {
        let combination = (high >> 58) & 0x1F
        if combination == 0x1F { return .nan }
        if combination == 0x1E { return .infinity }
        if (high >> 61) & 0x3 == 0x3 {
            // The "11" form implies a coefficient of at least 2^113 > 10^34 - 1: non-canonical.
            let e = Int((high >> 47) & 0x3FFF) - Decimal128.exponentBias
            return .finite(coefficient: 0, exponent: e)
        }
        let e = Int((high >> 49) & 0x3FFF) - Decimal128.exponentBias
        let c = UInt128(high & 0x1_FFFF_FFFF_FFFF) << 64 | UInt128(low)
        return .finite(coefficient: c > Decimal128.maxCoefficient ? 0 : c, exponent: e)
    }

    /// A finite decimal; `coefficient` ≤ 10^34 - 1 and `exponent` in -6176...6111.
    init(negative: Bool, coefficient: UInt128, exponent: Int) {
        let biased = UInt64(exponent + Decimal128.exponentBias)
        high = (negative ? 1 << 63 : 0) | biased << 49 | UInt64(truncatingIfNeeded: coefficient >> 64)
        low = UInt64(truncatingIfNeeded: coefficient)
    }

    /// True for a negative value, -0, -Infinity or a NaN with its sign bit set.
    public var isSignMinus: Bool { high >> 63 == 1 }
    /// True for NaN.
    public var isNaN: Bool { kind == .nan }
    /// True for ±Infinity.
    public var isInfinite: Bool { kind == .infinity }
    /// True for a zero of any sign and exponent.
    public var isZero: Bool {
        if case .finite(let c, _) = kind { return c == 0 }
        return false
    }

    /// The decimal of `value`, exactly.
    public init(_ value: Int64) {
        self.init(negative: value < 0, coefficient: UInt128(value.magnitude), exponent: 0)
    }

    /// The decimal with the shortest digits that read back as `value` (what `value.description`
    /// prints: 0.1 becomes 0.1, not 0.1000000000000000055...). NaN and infinities carry over.
    public init(_ value: Double) {
        if value.isNaN {
            self = .nan
        } else if value.isInfinite {
            self = value < 0 ? Decimal128(high: Decimal128.infinity.high | 1 << 63, low: 0) : .infinity
        } else {
            // Every finite double's description has at most 17 digits and a small exponent.
            self = (try? Decimal128(value.description)) ?? .nan
        }
    }

    /// Parses a decimal: an optional sign, digits with at most one '.', an optional exponent
    /// (`e` or `E`, optional sign, digits), or `NaN`, `Inf`, `Infinity` (any case, with an
    /// optional sign). Values needing more than 34 significant digits, or an exponent outside the
    /// range once trailing zeros are used up, throw `CoveError(.invalidArgument)`: parsing is
    /// exact, never rounded.
    public init(_ text: String) throws(CoveError) {
        func bad(_ why: String) -> CoveError {
            CoveError(.invalidArgument, "\(JSONValue.quoted(text)) is not a decimal128: \(why)")
        }
        var chars = Array(text.utf8)
        var negative = false
        if let first = chars.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            negative = first == UInt8(ascii: "-")
            chars.removeFirst()
        }
        let lowered = String(decoding: chars, as: UTF8.self).lowercased()
        if lowered == "nan" {
            self.init(high: Decimal128.nan.high | (negative ? 1 << 63 : 0), low: 0)
            return
        }
        if lowered == "inf" || lowered == "infinity" {
            self.init(high: Decimal128.infinity.high | (negative ? 1 << 63 : 0), low: 0)
            return
        }
        var digits: [UInt8] = []
        var fractionDigits = 0
        var seenPoint = false
        var sawDigit = false
        var i = 0
        while i < chars.count {
            let c = chars[i]
            if c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") {
                sawDigit = true
                if seenPoint { fractionDigits += 1 }
                if !(digits.isEmpty && c == UInt8(ascii: "0")) { digits.append(c - UInt8(ascii: "0")) }
            } else if c == UInt8(ascii: ".") && !seenPoint {
                seenPoint = true
            } else {
                break
            }
            i += 1
        }
        guard sawDigit else { throw bad("expected digits") }
        var exponent = 0
        if i < chars.count {
            guard chars[i] == UInt8(ascii: "e") || chars[i] == UInt8(ascii: "E") else {
                throw bad("unexpected character")
            }
            i += 1
            var expNegative = false
            if i < chars.count, chars[i] == UInt8(ascii: "-") || chars[i] == UInt8(ascii: "+") {
                expNegative = chars[i] == UInt8(ascii: "-")
                i += 1
            }
            guard i < chars.count else { throw bad("expected exponent digits") }
            while i < chars.count {
                let c = chars[i]
                guard c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") else { throw bad("unexpected character in the exponent") }
                // Capped far beyond the range so that huge exponents cannot overflow Int.
                exponent = min(exponent * 10 + Int(c - UInt8(ascii: "0")), 1_000_000)
                i += 1
            }
            if expNegative { exponent = -exponent }
        }
        exponent -= fractionDigits
        // More than 34 digits: only trailing zeros may go, each raising the exponent.
        while digits.count > Decimal128.maxDigits, digits.last == 0 {
            digits.removeLast()
            exponent += 1
        }
        guard digits.count <= Decimal128.maxDigits else { throw bad("more than 34 significant digits") }
        var coefficient: UInt128 = 0
        for d in digits { coefficient = coefficient * 10 + UInt128(d) }
        if coefficient == 0 {
            exponent = min(max(exponent, Decimal128.minExponent), Decimal128.maxExponent)
        } else {
            var count = digits.count
            while exponent > Decimal128.maxExponent && count < Decimal128.maxDigits {
                coefficient *= 10
                exponent -= 1
                count += 1
            }
            guard exponent <= Decimal128.maxExponent else { throw bad("exponent too large") }
            while exponent < Decimal128.minExponent {
                guard coefficient % 10 == 0 else { throw bad("exponent too small") }
                coefficient /= 10
                exponent += 1
            }
        }
        self.init(negative: negative, coefficient: coefficient, exponent: exponent)
    }

    /// The number of decimal digits of `c` (1 for zero).
    static func digitCount(_ c: UInt128) -> Int {
        var n = 1
        while n < 39 && c >= powersOf10[n] { n += 1 }
        return n
    }

    /// The closest `Double` (through the decimal string).
    public var doubleValue: Double {
        switch kind {
        case .nan: return .nan
        case .infinity: return isSignMinus ? -.infinity : .infinity
        case .finite: return Double(description) ?? .nan
        }
    }
}

extension Decimal128: CustomStringConvertible {
    /// The canonical string of the BSON Decimal128 specification: plain notation when the
    /// exponent is ≤ 0 and the adjusted exponent ≥ -6 (`1.50`, `-0.001`, `0`), scientific
    /// otherwise (`1E+10`, `1.5E-7`, `0E+3`); `NaN`, `Infinity`, `-Infinity`.
    public var description: String {
        switch kind {
        case .nan: return "NaN"
        case .infinity: return isSignMinus ? "-Infinity" : "Infinity"
        case .finite(let coefficient, let exponent):
            let digits = String(coefficient)
            let n = digits.count
            let adjusted = exponent + n - 1
            var out = isSignMinus ? "-" : ""
            if exponent <= 0 && adjusted >= -6 {
                if exponent == 0 {
                    out += digits
                } else {
                    let before = n + exponent
                    if before > 0 {
                        out += digits.prefix(before) + "." + digits.dropFirst(before)
                    } else {
                        out += "0." + String(repeating: "0", count: -before) + digits
                    }
                }
            } else {
                out += digits.prefix(1)
                if n > 1 { out += "." + digits.dropFirst() }
                out += "E" + (adjusted >= 0 ? "+" : "-") + String(adjusted.magnitude)
            }
            return out
        }
    }
}

extension Decimal128: Comparable, Hashable {
    /// Where a value falls in the total order: NaN, then negatives, zero, positives.
    private enum Region: Int, Comparable {
        case nan = 0, negative, zero, positive
        static func < (a: Region, b: Region) -> Bool { a.rawValue < b.rawValue }
    }

    /// A nonzero magnitude as (adjusted exponent, coefficient scaled to exactly 34 digits):
    /// the same for every spelling of one value, and ordered as the magnitudes are. Infinity
    /// is given an adjusted exponent beyond every finite one.
    var normalizedMagnitude: (adjusted: Int, scaled: UInt128) {
        switch kind {
        case .nan: return (0, 0)
        case .infinity: return (Int.max, 0)
        case .finite(let c, let e):
            let n = Decimal128.digitCount(c)
            return (e + n - 1, c * Decimal128.powersOf10[Decimal128.maxDigits - n])
        }
    }

    private var region: Region {
        switch kind {
        case .nan: return .nan
        case .infinity: return isSignMinus ? .negative : .positive
        case .finite(let c, _): return c == 0 ? .zero : (isSignMinus ? .negative : .positive)
        }
    }

    /// Numeric order; NaN is the least value and equal to itself.
    public static func < (a: Decimal128, b: Decimal128) -> Bool {
        let ra = a.region, rb = b.region
        if ra != rb { return ra < rb }
        guard ra == .positive || ra == .negative else { return false }
        let ma = a.normalizedMagnitude, mb = b.normalizedMagnitude
        let less = (ma.adjusted, ma.scaled) < (mb.adjusted, mb.scaled)
        let greater = (mb.adjusted, mb.scaled) < (ma.adjusted, ma.scaled)
        return ra == .positive ? less : greater
    }

    /// Numeric equality: 1.5 == 1.50, -0 == 0, NaN == NaN.
    public static func == (a: Decimal128, b: Decimal128) -> Bool {
        let ra = a.region, rb = b.region
        if ra != rb { return false }
        guard ra == .positive || ra == .negative else { return true }
        let ma = a.normalizedMagnitude, mb = b.normalizedMagnitude
        return ma.adjusted == mb.adjusted && ma.scaled == mb.scaled
    }

    /// Hashes the numeric value, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        let r = region
        hasher.combine(r.rawValue)
        if r == .positive || r == .negative {
            let m = normalizedMagnitude
            hasher.combine(m.adjusted)
            hasher.combine(m.scaled)
        }
    }

    /// Appends 18 bytes whose byte order is the numeric order above and which are equal exactly
    /// when the values are equal: a region byte (NaN, negative, zero, positive), then for a
    /// nonzero value the adjusted exponent (biased, 2 bytes big-endian) and the 34-digit scaled
    /// coefficient (16 bytes big-endian), all inverted for negatives.
    func appendOrderedBytes(to out: inout [UInt8]) {
        let r = region
        out.append(UInt8(r.rawValue))
        guard r == .positive || r == .negative else {
            out.append(contentsOf: repeatElement(0, count: 17))
            return
        }
        let m = normalizedMagnitude
        // Adjusted exponents of finite values lie in -6176...6144; infinity is given 0xFFFF.
        let e: UInt16 = m.adjusted == Int.max ? 0xFFFF : UInt16(m.adjusted + 8192)
        let flip: UInt8 = r == .negative ? 0xFF : 0
        out.append(UInt8(e >> 8) ^ flip)
        out.append(UInt8(e & 0xFF) ^ flip)
        for i in stride(from: 120, through: 0, by: -8) {
            out.append(UInt8(truncatingIfNeeded: m.scaled >> UInt128(i)) ^ flip)
        }
    }
}
