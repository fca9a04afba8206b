// min, max, sum and average over a collection's values, as Realm computes them: nulls are
// skipped, numbers of different types compare by value, sums keep the element type (int,
// double, decimal128) and averages are doubles, or decimals for decimals.

package enum CollectionAggregates {
    /// A numeric view of a value: int, float and double as doubles (ints kept exact), decimals.
    private enum Number {
        case int(Int64), double(Double), decimal(Decimal128)

        init?(_ value: Value) {
            switch value {
            case .int(let i): self = .int(i)
            case .float(let f): self = .double(Double(f))
            case .double(let d): self = .double(d)
            case .decimal128(let d): self = .decimal(d)
            default: return nil
            }
        }

        var decimal: Decimal128 {
            switch self {
            case .int(let i): Decimal128(i)
            case .double(let d): Decimal128(d)
            case .decimal(let d): d
            }
        }

        var double: Double {
            switch self {
            case .int(let i): Double(i)
            case .double(let d): d
            case .decimal(let d): d.doubleValue
            }
        }

        static func < (a: Number, b: Number) -> Bool {
            switch (a, b) {
            case (.int(let x), .int(let y)): x < y
            case (.decimal, _), (_, .decimal): a.decimal < b.decimal
            default: a.double < b.double
            }
        }
    }

    private static func refuse(_ what: String, _ value: Value, _ name: String) -> CoveError {
        CoveError(.wrongType, "\(what) of \(name): its elements are \(value.typeName), which has no \(what)")
    }

    /// The smallest (or, with `largest`, the greatest) non-null value; nil when there is none.
    /// Numbers and dates only.
    package static func extreme(_ values: [Value], largest: Bool, of name: String) throws(CoveError) -> Value? {
        let what = largest ? "max" : "min"
        var best: Value?
        for v in values where !v.isNull {
            guard let current = best else {
                _ = try less(v, v, what, name)   // refuses what has no order
                best = v
                continue
            }
            if largest ? try less(current, v, what, name) : try less(v, current, what, name) { best = v }
        }
        return best
    }

    /// a < b for two numbers (of any numeric types) or two dates.
    private static func less(_ a: Value, _ b: Value, _ what: String, _ name: String) throws(CoveError) -> Bool {
        if case .timestamp(let x) = a, case .timestamp(let y) = b { return x < y }
        guard let x = Number(a) else { throw refuse(what, a, name) }
        guard let y = Number(b) else { throw refuse(what, b, name) }
        return x < y
    }

    /// The sum of the non-null values: an int for ints (an overflow is `.outOfRange`), a double
    /// when any is a float or double (or the elements are), a decimal when any is a decimal (or
    /// the elements are); zero of that type when empty.
    package static func sum(_ values: [Value], of name: String, elementType: PropertyType = .mixed) throws(CoveError) -> Value {
        var intSum: Int64 = 0
        var doubleSum = 0.0
        var decimalSum = Decimal128.zero
        var sawDouble = false, sawDecimal = false
        for v in values where !v.isNull {
            guard let n = Number(v) else { throw refuse("sum", v, name) }
            switch n {
            case .int(let i):
                let (s, overflow) = intSum.addingReportingOverflow(i)
                if overflow { throw CoveError(.outOfRange, "sum of \(name) overflows a 64-bit int") }
                intSum = s
            case .double(let d):
                sawDouble = true
                doubleSum += d
            case .decimal(let d):
                sawDecimal = true
                decimalSum = decimalSum + d
            }
        }
        if sawDecimal || elementType == .decimal128 { return .decimal128(decimalSum + Decimal128(intSum) + Decimal128(doubleSum)) }
        if sawDouble || elementType == .double || elementType == .float { return .double(doubleSum + Double(intSum)) }
        return .int(intSum)
    }

    /// The mean of the non-null values: a double, or a decimal when any is a decimal; nil when
    /// there is none.
    package static func average(_ values: [Value], of name: String) throws(CoveError) -> Value? {
        let present = values.filter { !$0.isNull }
        if present.isEmpty { return nil }
        var sawDecimal = false
        var decimalSum = Decimal128.zero
        var doubleSum = 0.0
        for v in present {
            guard let n = Number(v) else { throw refuse("average", v, name) }
            if case .decimal = n { sawDecimal = true }
            doubleSum += n.double
            decimalSum = decimalSum + n.decimal
        }
        if sawDecimal { return .decimal128(decimalSum.divided(by: present.count)) }
        return .double(doubleSum / Double(present.count))
    }
}
