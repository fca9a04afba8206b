// QueryEvaluator: runs a bound predicate on one object (or one element of a collection of
// values). Key paths become lists of values (a to-many step multiplies them, a null link gives
// null), comparisons are existential over those lists unless a quantifier says otherwise, and
// the value rules of docs/query-language.md (numbers by value across types, strings by UTF-8 bytes, null
// rules, [c]/[d] folding) live in `test`. AND/OR chains are loops, not recursion.
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

package struct QueryEvaluator {
    /// The class key of `O<n>` constants: they match an object key of any class.
    static let anyClass = UInt32.max

    let store: ObjectStore
    /// The values of the SUBQUERY variables in scope.
    var variables: [Value] = []

    package init(store: ObjectStore) {
        self.store = store
    }

    // MARK: Predicates

    package mutating func matches(_ p: BoundPredicate, _ row: Value) throws(CoveError) -> Bool {
        switch p {
        case .constant(let b): return b
        case .and(let terms):
            for t in terms where !(try matches(t, row)) { return false }
            return true
        case .or(let terms):
            for t in terms where try matches(t, row) { return true }
            return false
        case .not(let inner): return !(try matches(inner, row))
        case .compare(let c): return try compare(c, row)
        }
    }

    private static func quantified(_ q: QueryQuantifier, _ values: [Value], _ test: (Value) -> Bool) -> Bool {
        switch q {
        case .any: return values.contains(where: test)
        case .all: return values.allSatisfy(test)
        case .none: return !values.contains(where: test)
        }
    }

    private static func quantifier(_ e: BoundExpression) -> QueryQuantifier? {
        switch e {
        case .path(let p): return p.quantifier
        case .list(_, let q): return q
        default: return nil
        }
    }

    mutating func compare(_ c: BoundComparison, _ row: Value) throws(CoveError) -> Bool {
        if c.comparesTypes { return try compareTypes(c, row) }
        if let single = try singleValueCompare(c, row) { return single }
        let left = try values(c.left, row)
        let leftQuantifier = Self.quantifier(c.left) ?? .any
        switch c.op {
        case .between:
            guard case .list(let bounds, _) = c.right, bounds.count == 2 else { return false }
            let (lo, hi) = (bounds[0], bounds[1])
            return Self.quantified(leftQuantifier, left) { v in
                Self.test(v, .greaterOrEqual, lo, []) && Self.test(v, .lessOrEqual, hi, [])
            }
        case .in:
            if let lookup = c.lookup {
                return Self.quantified(leftQuantifier, left) { lookup.contains(Self.normalized($0)) }
            }
            let right = try values(c.right, row)
            let options = c.options
            return Self.quantified(leftQuantifier, left) { l in right.contains { Self.test(l, .equal, $0, options) } }
        case .text:
            let right = try values(c.right, row)
            guard case .string(let query)? = right.first else { return false }
            return left.contains { v in
                guard case .string(let s) = v else { return false }
                return StringFolding.textMatches(s, query)
            }
        default:
            let right = try values(c.right, row)
            // A collection against a list literal, with no quantifier on either: the whole list,
            // element by element.
            if case .path(let p) = c.left, p.isMultiple, p.quantifier == nil, case .list(_, nil) = c.right, c.op == .equal {
                return left.count == right.count && zip(left, right).allSatisfy { Self.test($0, .equal, $1, c.options) }
            }
            let rightQuantifier = Self.quantifier(c.right) ?? .any
            let op = c.op, options = c.options
            return Self.quantified(leftQuantifier, left) { l in
                Self.quantified(rightQuantifier, right) { r in Self.test(l, op, r, options) }
            }
        }
    }

    /// A comparison of `@type`: both sides give type sets, equal when they share a type
    /// (`'numeric'` equals an int), with the same quantifier and list rules as values.
    private mutating func compareTypes(_ c: BoundComparison, _ row: Value) throws(CoveError) -> Bool {
        let left = try values(c.left, row), right = try values(c.right, row)
        func same(_ l: Value, _ r: Value) -> Bool {
            guard case .int(let a) = l, case .int(let b) = r else { return false }
            return a & b != 0
        }
        let leftQuantifier = Self.quantifier(c.left) ?? .any
        if c.op == .in {
            return Self.quantified(leftQuantifier, left) { l in right.contains { same(l, $0) } }
        }
        if case .path(let p) = c.left, p.isMultiple, p.quantifier == nil, case .list(_, nil) = c.right, c.op == .equal {
            return left.count == right.count && zip(left, right).allSatisfy { same($0, $1) }
        }
        let rightQuantifier = Self.quantifier(c.right) ?? .any
        let equal = c.op == .equal
        return Self.quantified(leftQuantifier, left) { l in
            Self.quantified(rightQuantifier, right) { r in same(l, r) == equal }
        }
    }

    /// The common case on its own: one single-valued property of the object itself (no
    /// postfix, no quantifier) against a constant, read once and tested without building the
    /// lists the general path makes. Nil when the comparison is not of that shape.
    private func singleValueCompare(_ c: BoundComparison, _ row: Value) throws(CoveError) -> Bool? {
        guard case .path(let path) = c.left, let (cls, property) = path.ownProperty,
              case .constant(let right) = c.right, case .link(let link) = row else { return nil }
        switch c.op {
        case .between, .in, .text: return nil
        default: return Self.test(try store.get(cls, link.objectKey, property), c.op, right, c.options)
        }
    }

    // MARK: Expressions

    mutating func values(_ e: BoundExpression, _ row: Value) throws(CoveError) -> [Value] {
        switch e {
        case .constant(let v): return [v]
        case .list(let vs, _): return vs
        case .path(let p): return try pathValues(p, row)
        case .subquery(let path, let variable, let predicate):
            let elements = try pathValues(path, row)
            var count: Int64 = 0
            for element in elements {
                if variables.count > variable { variables[variable] = element } else { variables.append(element) }
                if try matches(predicate, row) { count += 1 }
            }
            if variables.count > variable { variables.removeSubrange(variable...) }
            return [.int(count)]
        case .arithmetic(let op, let a, let b):
            let xs = try values(a, row), ys = try values(b, row)
            var out: [Value] = []
            for x in xs { for y in ys { if let v = Self.arithmetic(op, x, y) { out.append(v) } } }
            return out
        }
    }

    package mutating func pathValues(_ path: BoundPath, _ row: Value) throws(CoveError) -> [Value] {
        var current: [Value]
        switch path.root {
        case .object, .element: current = [row]
        case .variable(let i): current = i < variables.count ? [variables[i]] : []
        }
        var fromCollection = false
        var i = 0
        let steps = path.steps
        while i < steps.count {
            let step = steps[i]
            let next = i + 1 < steps.count ? steps[i + 1] : nil
            var consumed = false
            var out: [Value] = []
            switch step {
            case .property(let cls, let p):
                for v in current {
                    guard case .link(let link) = v else {
                        // A hop through a null link: null for the rest of the path.
                        out.append(.null)
                        continue
                    }
                    switch p.collection {
                    case .none:
                        out.append(try store.get(cls, link.objectKey, p))
                    case .list:
                        switch next {
                        case .index(let n)?:
                            consumed = true
                            let count = try store.listCount(cls, link.objectKey, p)
                            if n >= 0 && n < count { out.append(try store.listGet(cls, link.objectKey, p, n)) }
                        case .first?, .last?:
                            consumed = true
                            let count = try store.listCount(cls, link.objectKey, p)
                            if count > 0 {
                                let n: Int
                                if case .first? = next { n = 0 } else { n = count - 1 }
                                out.append(try store.listGet(cls, link.objectKey, p, n))
                            }
                        case .all?:
                            consumed = true
                            fromCollection = true
                            out.append(contentsOf: try store.listValues(cls, link.objectKey, p))
                        default:
                            fromCollection = true
                            out.append(contentsOf: try store.listValues(cls, link.objectKey, p))
                        }
                    case .set:
                        if case .all? = next { consumed = true }
                        fromCollection = true
                        out.append(contentsOf: try store.setValues(cls, link.objectKey, p))
                    case .map:
                        switch next {
                        case .key(let k)?:
                            consumed = true
                            // Cove's decision 5: a missing key reads as null.
                            out.append(try store.mapGet(cls, link.objectKey, p, k) ?? .null)
                        case .keys?:
                            consumed = true
                            fromCollection = true
                            out.append(contentsOf: try store.mapEntries(cls, link.objectKey, p).map { Value.string($0.key) })
                        default:
                            if case .all? = next { consumed = true }
                            fromCollection = true
                            out.append(contentsOf: try store.mapEntries(cls, link.objectKey, p).map(\.value))
                        }
                    }
                }
            case .backlinks(let source, let via):
                fromCollection = true
                let sourceKey = try store.classKey(of: source)
                for v in current {
                    guard case .link(let link) = v else { continue }
                    for key in try store.backlinks(to: link.objectKey, from: source, via: via) {
                        out.append(.link(ObjectLink(classKey: sourceKey, objectKey: key)))
                    }
                }
            case .allBacklinks:
                fromCollection = true
                for v in current {
                    guard case .link(let link) = v, let target = store.schema.objectSchema(forClassKey: link.classKey) else { continue }
                    for source in store.schema.classes {
                        for p in source.properties where p.type.objectClassName == target.className {
                            let sourceKey = try store.classKey(of: source)
                            for key in try store.backlinks(to: link.objectKey, from: source, via: p) {
                                out.append(.link(ObjectLink(classKey: sourceKey, objectKey: key)))
                            }
                        }
                    }
                }
            case .all:
                fromCollection = true
                out = current
            case .index(let n):
                out = n >= 0 && n < current.count ? [current[n]] : []
            case .first:
                out = current.first.map { [$0] } ?? []
            case .last:
                out = current.last.map { [$0] } ?? []
            case .key, .keys:
                out = current
            case .nested(let nested):
                for v in current {
                    switch (nested, v) {
                    case (.index(let n), .list(let elements)):
                        if n >= 0 && n < elements.count { out.append(elements[n]) }
                    case (.first, .list(let elements)):
                        if let e = elements.first { out.append(e) }
                    case (.last, .list(let elements)):
                        if let e = elements.last { out.append(e) }
                    case (.key(let k), .dictionary(let entries)):
                        // As for a map property: a missing key reads as null.
                        out.append(entries[k] ?? .null)
                    case (.all, .list(let elements)):
                        out.append(contentsOf: elements)
                    case (.all, .dictionary(let entries)):
                        out.append(contentsOf: Value.sortedEntries(entries).map(\.value))
                    case (.keys, .dictionary(let entries)):
                        out.append(contentsOf: Value.sortedEntries(entries).map { Value.string($0.key) })
                    default:
                        break
                    }
                }
                if case .all = nested { fromCollection = true }
                if case .keys = nested { fromCollection = true }
            }
            current = out
            i += consumed ? 2 : 1
        }
        switch path.postfix {
        case .none:
            return current
        case .count:
            if fromCollection { return [.int(Int64(current.count))] }
            return current.map(Self.byteLength)
        case .length:
            return current.map(Self.byteLength)
        case .type:
            return current.map { .int(QueryTypeAttribute(of: $0).rawValue) }
        case .aggregate(let aggregate, let inner):
            var elements = current
            if !inner.isEmpty {
                var innerPath = BoundPath(root: .element, steps: inner, postfix: .none, quantifier: nil, isMultiple: false,
                                          type: nil, lastProperty: nil, text: path.text)
                innerPath.kind = .plain
                var collected: [Value] = []
                for element in elements { collected.append(contentsOf: try pathValues(innerPath, element)) }
                elements = collected
            }
            // The binder let only numbers (dates for min and max) or mixed values through. Of
            // mixed values, as in Realm, sum and average take the numbers; min and max order
            // all of them the way SORT does.
            switch aggregate {
            case .min: return [Self.extreme(elements, largest: false)]
            case .max: return [Self.extreme(elements, largest: true)]
            case .sum: return [try CollectionAggregates.sum(elements.filter { Self.double($0) != nil }, of: path.text)]
            case .avg: return [try CollectionAggregates.average(elements.filter { Self.double($0) != nil }, of: path.text) ?? .null]
            }
        }
    }

    /// The least (or greatest) non-null value in SORT's order; null when there is none.
    static func extreme(_ values: [Value], largest: Bool) -> Value {
        var best: Value?
        for v in values where !v.isNull {
            guard let b = best else {
                best = v
                continue
            }
            let c = sortOrder(v, b)
            if largest ? c > 0 : c < 0 { best = v }
        }
        return best ?? .null
    }

    static func byteLength(_ v: Value) -> Value {
        switch v {
        case .string(let s): return .int(Int64(s.utf8.count))
        case .data(let d): return .int(Int64(d.count))
        case .list(let elements): return .int(Int64(elements.count))
        case .dictionary(let entries): return .int(Int64(entries.count))
        default: return .null
        }
    }

    // MARK: Values

    /// The form IN's hash set holds: integral numbers as ints, others as doubles, the rest as is.
    package static func normalized(_ v: Value) -> Value {
        switch v {
        case .float(let f): return normalized(.double(Double(f)))
        case .double(let d):
            if d.isFinite, d == d.rounded(), let i = Int64(exactly: d) { return .int(i) }
            return .double(d)
        case .decimal128(let d):
            return normalized(.double(d.doubleValue))
        default: return v
        }
    }

    /// `l op r` by the rules of docs/query-language.md.
    static func test(_ l: Value, _ op: QueryOperator, _ r: Value, _ options: QueryStringOptions) -> Bool {
        if l.isNull || r.isNull {
            switch op {
            case .equal, .lessOrEqual, .greaterOrEqual, .like: return l.isNull && r.isNull
            case .notEqual: return !(l.isNull && r.isNull)
            case .beginsWith, .endsWith, .contains: return r.isNull
            default: return false
            }
        }
        switch op {
        case .equal: return equal(l, r, options)
        case .notEqual: return !equal(l, r, options)
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard let c = order(l, r) else { return false }
            switch op {
            case .less: return c < 0
            case .lessOrEqual: return c <= 0
            case .greater: return c > 0
            default: return c >= 0
            }
        case .beginsWith, .endsWith, .contains, .like:
            switch (l, r) {
            case (.string(let a), .string(let b)):
                let x = StringFolding.fold(a, options), y = StringFolding.fold(b, options)
                switch op {
                case .beginsWith: return x.utf8.starts(with: y.utf8)
                case .endsWith: return x.utf8.reversed().starts(with: y.utf8.reversed())
                case .contains: return y.isEmpty || contains(Array(x.utf8), Array(y.utf8))
                default: return StringFolding.like(x, y)
                }
            case (.data(let a), .data(let b)):
                switch op {
                case .beginsWith: return a.starts(with: b)
                case .endsWith: return a.reversed().starts(with: b.reversed())
                case .contains: return b.isEmpty || contains(a, b)
                default: return false
                }
            default:
                return false
            }
        default:
            return false
        }
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        if needle.count > haystack.count { return false }
        var i = 0
        while i + needle.count <= haystack.count {
            if haystack[i] == needle[0] && haystack[i..<(i + needle.count)].elementsEqual(needle) { return true }
            i += 1
        }
        return false
    }

    static func equal(_ l: Value, _ r: Value, _ options: QueryStringOptions) -> Bool {
        if let c = numericOrder(l, r) { return c == 0 }
        switch (l, r) {
        case (.string(let a), .string(let b)):
            if options.isEmpty { return a.utf8.elementsEqual(b.utf8) }
            return StringFolding.fold(a, options).utf8.elementsEqual(StringFolding.fold(b, options).utf8)
        case (.link(let a), .link(let b)):
            return a.objectKey == b.objectKey && (a.classKey == b.classKey || a.classKey == anyClass || b.classKey == anyClass)
        default:
            return l == r
        }
    }

    /// The order of two numbers of any numeric types, nil when either is not a number.
    /// A number as a double; nil for other values.
    static func double(_ v: Value) -> Double? {
        switch v {
        case .int(let i): return Double(i)
        case .float(let f): return Double(f)
        case .double(let d): return d
        case .decimal128(let d): return d.doubleValue
        default: return nil
        }
    }

    static func numericOrder(_ l: Value, _ r: Value) -> Int? {
        switch (l, r) {
        case (.int(let a), .int(let b)): return a < b ? -1 : (a > b ? 1 : 0)
        case (.decimal128(let a), .decimal128(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.decimal128(let a), .int(let b)): let d = Decimal128(b); return a < d ? -1 : (a == d ? 0 : 1)
        case (.int(let a), .decimal128(let b)): let d = Decimal128(a); return d < b ? -1 : (d == b ? 0 : 1)
        default:
            guard let a = double(l), let b = double(r) else { return nil }
            if a.isNaN || b.isNaN { return a.isNaN && b.isNaN ? 0 : nil }
            return a < b ? -1 : (a > b ? 1 : 0)
        }
    }

    /// The order of two values of comparable types; nil when they do not compare.
    static func order(_ l: Value, _ r: Value) -> Int? {
        if let c = numericOrder(l, r) { return c }
        func bytes(_ a: some Sequence<UInt8>, _ b: some Sequence<UInt8>) -> Int {
            var x = a.makeIterator(), y = b.makeIterator()
            while true {
                switch (x.next(), y.next()) {
                case (nil, nil): return 0
                case (nil, _): return -1
                case (_, nil): return 1
                case (let p?, let q?): if p != q { return p < q ? -1 : 1 }
                }
            }
        }
        switch (l, r) {
        case (.string(let a), .string(let b)): return compareUTF8(a, b)
        case (.data(let a), .data(let b)): return bytes(a, b)
        case (.timestamp(let a), .timestamp(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.objectId(let a), .objectId(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.uuid(let a), .uuid(let b)): return bytes(a.rfc4122Bytes, b.rfc4122Bytes)
        case (.bool(let a), .bool(let b)): return a == b ? 0 : (a ? 1 : -1)
        default: return nil
        }
    }

    /// The byte order of two strings' UTF-8, with memcmp on their contiguous storage.
    package static func compareUTF8(_ a: String, _ b: String) -> Int {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                let n = Swift.min(x.count, y.count)
                if n > 0, let px = x.baseAddress, let py = y.baseAddress {
                    let c = memcmp(px, py, n)
                    if c != 0 { return c < 0 ? -1 : 1 }
                }
                return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
            }
        }
    }

    /// A total order for SORT: null < bool < numbers < strings < binaries < dates < ObjectIds <
    /// UUIDs < links < lists < dictionaries, each by value (collections element by element, in
    /// their keys' order for dictionaries, a shorter one first).
    package static func sortOrder(_ l: Value, _ r: Value) -> Int {
        func rank(_ v: Value) -> Int {
            switch v {
            case .null: return 0
            case .bool: return 1
            case .int, .float, .double, .decimal128: return 2
            case .string: return 3
            case .data: return 4
            case .timestamp: return 5
            case .objectId: return 6
            case .uuid: return 7
            case .link: return 8
            case .list: return 9
            case .dictionary: return 10
            }
        }
        let a = rank(l), b = rank(r)
        if a != b { return a < b ? -1 : 1 }
        if case .list(let x) = l, case .list(let y) = r {
            for (u, v) in zip(x, y) {
                let c = sortOrder(u, v)
                if c != 0 { return c }
            }
            return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
        }
        if case .dictionary(let x) = l, case .dictionary(let y) = r {
            let xs = Value.sortedEntries(x), ys = Value.sortedEntries(y)
            for (a, b) in zip(xs, ys) {
                let k = compareUTF8(a.key, b.key)
                if k != 0 { return k }
                let c = sortOrder(a.value, b.value)
                if c != 0 { return c }
            }
            return xs.count == ys.count ? 0 : (xs.count < ys.count ? -1 : 1)
        }
        if case .link(let x) = l, case .link(let y) = r {
            return (x.classKey, x.objectKey) < (y.classKey, y.objectKey) ? -1 : ((x.classKey, x.objectKey) == (y.classKey, y.objectKey) ? 0 : 1)
        }
        return order(l, r) ?? 0
    }

    /// Constant-folded or per-row arithmetic; nil for a division by zero or a non-number.
    static func arithmetic(_ op: QueryArithmetic, _ a: Value, _ b: Value) -> Value? {
        if case .int(let x) = a, case .int(let y) = b {
            switch op {
            case .add: let (v, o) = x.addingReportingOverflow(y); return o ? .double(Double(x) + Double(y)) : .int(v)
            case .subtract: let (v, o) = x.subtractingReportingOverflow(y); return o ? .double(Double(x) - Double(y)) : .int(v)
            case .multiply: let (v, o) = x.multipliedReportingOverflow(by: y); return o ? .double(Double(x) * Double(y)) : .int(v)
            case .divide:
                if y == 0 { return nil }
                return x % y == 0 ? .int(x / y) : .double(Double(x) / Double(y))
            }
        }
        guard let x = double(a), let y = double(b) else { return nil }
        switch op {
        case .add: return .double(x + y)
        case .subtract: return .double(x - y)
        case .multiply: return .double(x * y)
        case .divide: return y == 0 ? nil : .double(x / y)
        }
    }
}
