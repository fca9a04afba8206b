// Decimal128 arithmetic for aggregates: addition (sum) and division by a count (average),
// rounded to 34 significant digits, half to even, as IEEE 754 decimal arithmetic rounds.

extension Decimal128 {
    /// A finite value as sign, coefficient and exponent; nil for NaN and infinities.
    private var parts: (negative: Bool, coefficient: UInt128, exponent: Int)? {
        guard case .finite(let c, let e) = kind else { return nil }
        return (isSignMinus, c, e)
    }

    /// `c / 10^k`, rounded half to even.
    private static func divideRounding(_ c: UInt128, byPowerOf10 k: Int) -> UInt128 {
        if k <= 0 { return c }
        if k > 38 { return 0 }
        let p = powersOf10[k]
        let (q, r) = c.quotientAndRemainder(dividingBy: p)
        let twice = r * 2
        if twice > p || (twice == p && q & 1 == 1) { return q + 1 }
        return q
    }

    /// The decimal `coefficient × 10^exponent` rounded to 34 digits, or ±infinity when the
    /// exponent is out of range; trailing zeros absorb an exponent below the minimum.
    private static func make(negative: Bool, coefficient: UInt128, exponent: Int) -> Decimal128 {
        var c = coefficient
        var e = exponent
        var digits = 0
        var probe = c
        while probe > 0 { probe /= 10; digits += 1 }
        if digits > maxDigits {
            let k = digits - maxDigits
            c = divideRounding(c, byPowerOf10: k)
            e += k
            if c > maxCoefficient { c /= 10; e += 1 }
        }
        if e < minExponent {
            c = divideRounding(c, byPowerOf10: minExponent - e)
            e = minExponent
        }
        while e > maxExponent && c != 0 && c * 10 <= maxCoefficient {
            c *= 10
            e -= 1
        }
        if e > maxExponent {
            if c == 0 { return Decimal128(negative: negative, coefficient: 0, exponent: maxExponent) }
            return negative ? Decimal128(high: infinity.high | 1 << 63, low: 0) : infinity
        }
        return Decimal128(negative: negative, coefficient: c, exponent: e)
    }

    /// The sum, rounded to 34 significant digits. NaN with any NaN or with +∞ and -∞.
    public static func + (a: Decimal128, b: Decimal128) -> Decimal128 {
        if a.isNaN || b.isNaN { return .nan }
        if a.isInfinite || b.isInfinite {
            if a.isInfinite && b.isInfinite && a.isSignMinus != b.isSignMinus { return .nan }
            return a.isInfinite ? a : b
        }
        guard var x = a.parts, var y = b.parts else { return .nan }
        // x takes the larger exponent; scale it down towards y's while its digits allow, then
        // round y to what is left.
        if x.exponent < y.exponent { swap(&x, &y) }
        while x.exponent > y.exponent && x.coefficient != 0 && x.coefficient * 10 <= maxCoefficient {
            x.coefficient *= 10
            x.exponent -= 1
        }
        if x.coefficient == 0 { x.exponent = y.exponent }
        if x.exponent > y.exponent {
            y.coefficient = divideRounding(y.coefficient, byPowerOf10: x.exponent - y.exponent)
            y.exponent = x.exponent
        }
        if x.negative == y.negative {
            return make(negative: x.negative, coefficient: x.coefficient + y.coefficient, exponent: x.exponent)
        }
        if x.coefficient >= y.coefficient {
            return make(negative: x.coefficient == y.coefficient ? false : x.negative,
                        coefficient: x.coefficient - y.coefficient, exponent: x.exponent)
        }
        return make(negative: y.negative, coefficient: y.coefficient - x.coefficient, exponent: x.exponent)
    }

    /// The quotient by a positive count, rounded to 34 significant digits (for averages).
    public func divided(by count: Int) -> Decimal128 {
        guard count > 0 else { return .nan }
        if isNaN || isInfinite { return self }
        guard let x = parts else { return .nan }
        if x.coefficient == 0 { return self }
        // Widen the coefficient as far as 128 bits allow, divide, and round the last digit.
        var c = x.coefficient
        var e = x.exponent
        while c <= UInt128.max / 10 / 10 {
            c *= 10
            e -= 1
        }
        let n = UInt128(count)
        let (q, r) = c.quotientAndRemainder(dividingBy: n)
        var quotient = q
        if r * 2 > n || (r * 2 == n && q & 1 == 1) { quotient += 1 }
        // Drop trailing zeros the widening added.
        while quotient != 0 && quotient % 10 == 0 && e < x.exponent {
            quotient /= 10
            e += 1
        }
        return Decimal128.make(negative: x.negative, coefficient: quotient, exponent: e)
    }
}
