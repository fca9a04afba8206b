// ColumnScan: the fast path of a query over a table. A predicate made only of comparisons
// between a plain property of the object (int, double, float, bool, string, date) and a
// constant, joined by AND, OR and NOT, runs cluster by cluster over the packed column arrays
// (a tight loop per comparison, no object materialised); anything else goes through the
// general evaluator. Both follow the same value rules (QueryEvaluator.test).
import CoveStorage
#if canImport(Glibc)
import Glibc
#endif

/// A predicate compiled for column-at-a-time evaluation.
indirect enum ColumnPredicate {
    case constant(Bool)
    case and([ColumnPredicate])
    case or([ColumnPredicate])
    case not(ColumnPredicate)
    case compare(column: Int, kind: ColumnKind, op: QueryOperator, value: Value)
    case between(column: Int, kind: ColumnKind, low: Value, high: Value)
    case member(column: Int, kind: ColumnKind, values: Set<Value>)

    /// The compiled form of `p` over `cls`'s table, or nil when some part needs the general
    /// evaluator.
    static func compile(_ p: BoundPredicate, columnOf: (Property) -> Int?) -> ColumnPredicate? {
        switch p {
        case .constant(let b): return .constant(b)
        case .and(let terms):
            var out: [ColumnPredicate] = []
            for t in terms {
                guard let c = compile(t, columnOf: columnOf) else { return nil }
                out.append(c)
            }
            return .and(out)
        case .or(let terms):
            var out: [ColumnPredicate] = []
            for t in terms {
                guard let c = compile(t, columnOf: columnOf) else { return nil }
                out.append(c)
            }
            return .or(out)
        case .not(let inner):
            return compile(inner, columnOf: columnOf).map { .not($0) }
        case .compare(let c):
            return compile(c, columnOf: columnOf)
        }
    }

    private static func plainColumn(_ e: BoundExpression, _ columnOf: (Property) -> Int?) -> (Int, ColumnKind)? {
        guard case .path(let path) = e, path.root == .object, path.quantifier == nil, path.steps.count == 1,
              case .none = path.postfix, case .property(_, let p) = path.steps[0], p.collection == .none, !p.isLink else { return nil }
        let kind: ColumnKind
        switch p.type {
        case .int: kind = .int
        case .double: kind = .double
        case .float: kind = .float
        case .bool: kind = .bool
        case .string: kind = .string
        case .date: kind = .timestamp
        default: return nil
        }
        guard let column = columnOf(p) else { return nil }
        return (column, kind)
    }

    private static func compile(_ c: BoundComparison, columnOf: (Property) -> Int?) -> ColumnPredicate? {
        guard c.options.isEmpty else { return nil }
        var op = c.op
        var left = c.left, right = c.right
        if plainColumn(left, columnOf) == nil, plainColumn(right, columnOf) != nil {
            // `5 < age` is `age > 5`.
            switch op {
            case .less: op = .greater
            case .lessOrEqual: op = .greaterOrEqual
            case .greater: op = .less
            case .greaterOrEqual: op = .lessOrEqual
            case .equal, .notEqual: break
            default: return nil
            }
            swap(&left, &right)
        }
        guard let (column, kind) = plainColumn(left, columnOf) else { return nil }
        switch (op, right) {
        case (.equal, .constant(let v)), (.notEqual, .constant(let v)), (.less, .constant(let v)),
             (.lessOrEqual, .constant(let v)), (.greater, .constant(let v)), (.greaterOrEqual, .constant(let v)):
            if kind == .string, case .string = v {} else if kind == .string, !v.isNull { return nil }
            return .compare(column: column, kind: kind, op: op, value: v)
        case (.beginsWith, .constant(let v)), (.endsWith, .constant(let v)), (.contains, .constant(let v)), (.like, .constant(let v)):
            guard kind == .string else { return nil }
            return .compare(column: column, kind: kind, op: op, value: v)
        case (.between, .list(let bounds, nil)) where bounds.count == 2:
            return .between(column: column, kind: kind, low: bounds[0], high: bounds[1])
        case (.in, _):
            guard let lookup = c.lookup else { return nil }
            return .member(column: column, kind: kind, values: lookup)
        default:
            return nil
        }
    }
}

/// Evaluates compiled predicates over one cluster, reusing its buffers between clusters.
struct ColumnScanner {
    private var ints: [Int64] = []
    private var doubles: [Double] = []
    private var nulls: [Bool] = []

    /// Which objects of `view` match `p`.
    mutating func matches(_ p: ColumnPredicate, _ view: ClusterViewReader) throws(CoveError) -> [Bool] {
        let n = view.count
        switch p {
        case .constant(let b): return [Bool](repeating: b, count: n)
        case .and(let terms):
            var mask = [Bool](repeating: true, count: n)
            for t in terms {
                let m = try matches(t, view)
                for i in 0..<n where !m[i] { mask[i] = false }
            }
            return mask
        case .or(let terms):
            var mask = [Bool](repeating: false, count: n)
            for t in terms {
                let m = try matches(t, view)
                for i in 0..<n where m[i] { mask[i] = true }
            }
            return mask
        case .not(let inner):
            return try matches(inner, view).map { !$0 }
        case .compare(let column, let kind, let op, let value):
            return try compare(view, column, kind) { QueryEvaluator.test($0, op, value, []) } fast: { (ints, doubles) in
                Self.fastCompare(op, value, ints, doubles)
            }
        case .between(let column, let kind, let low, let high):
            return try compare(view, column, kind) {
                QueryEvaluator.test($0, .greaterOrEqual, low, []) && QueryEvaluator.test($0, .lessOrEqual, high, [])
            } fast: { _, _ in nil }
        case .member(let column, let kind, let values):
            return try compare(view, column, kind) { values.contains(QueryEvaluator.normalized($0)) } fast: { _, _ in nil }
        }
    }

    /// A comparison of an int or double column with a number, as a loop over the decoded
    /// column; nil when it does not apply (the caller then tests value by value).
    private static func fastCompare(_ op: QueryOperator, _ value: Value, _ ints: [Int64]?, _ doubles: [Double]?) -> [Bool]? {
        func run<T: Comparable>(_ xs: [T], _ c: T) -> [Bool] {
            switch op {
            case .equal: return xs.map { $0 == c }
            case .notEqual: return xs.map { $0 != c }
            case .less: return xs.map { $0 < c }
            case .lessOrEqual: return xs.map { $0 <= c }
            case .greater: return xs.map { $0 > c }
            case .greaterOrEqual: return xs.map { $0 >= c }
            default: return []
            }
        }
        switch op {
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual: break
        default: return nil
        }
        if let ints, case .int(let c) = value { return run(ints, c) }
        if let doubles {
            switch value {
            case .double(let c) where !c.isNaN: return run(doubles, c)
            case .int(let c): return run(doubles, Double(c))
            default: return nil
            }
        }
        return nil
    }

    /// Tests every object's value of `column`: decoded columns for ints and doubles (with the
    /// nulls tested one by one through `test`), values one by one for the other kinds.
    private mutating func compare(_ view: ClusterViewReader, _ column: Int, _ kind: ColumnKind, _ test: (Value) -> Bool,
                                  fast: (_ ints: [Int64]?, _ doubles: [Double]?) -> [Bool]?) throws(CoveError) -> [Bool] {
        let n = view.count
        view.nulls(column, into: &nulls)
        var mask: [Bool]
        switch kind {
        case .int:
            view.ints(column, into: &ints)
            if let m = fast(ints, nil) { mask = m } else { mask = ints.map { test(.int($0)) } }
        case .double:
            view.doubles(column, into: &doubles)
            if let m = fast(nil, doubles) { mask = m } else { mask = doubles.map { test(.double($0)) } }
        default:
            mask = []
            mask.reserveCapacity(n)
            for i in 0..<n { mask.append(nulls[i] ? false : test(try view.value(column, i, kind))) }
        }
        // Nulls follow the general rules (`== nil` matches them, `!= 5` does too).
        for i in 0..<n where nulls[i] { mask[i] = test(.null) }
        return mask
    }
}

/// What ColumnScanner reads of a cluster (ClusterView, with the conversion to `Value`).
struct ClusterViewReader {
    let view: ClusterView

    var count: Int { view.count }
    func key(_ i: Int) -> UInt64 { view.key(i) }
    func ints(_ column: Int, into out: inout [Int64]) { view.ints(column, into: &out) }
    func doubles(_ column: Int, into out: inout [Double]) { view.doubles(column, into: &out) }
    func nulls(_ column: Int, into out: inout [Bool]) { view.nulls(column, into: &out) }

    func value(_ column: Int, _ i: Int, _ kind: ColumnKind) throws(CoveError) -> Value {
        switch kind {
        case .bool: return .bool(view.bool(column, i))
        case .float: return .float(view.float(column, i))
        case .timestamp:
            let t = view.timestamp(column, i)
            return .timestamp(Timestamp(seconds: t.seconds, nanoseconds: t.nanoseconds))
        case .string:
            let s: String?
            do {
                s = try view.withBytes(column, i) { (b: UnsafeRawBufferPointer?) throws(StorageError) -> String? in
                    guard let b else { return nil }
                    return String(validating: b, as: UTF8.self)
                }
            } catch {
                throw CoveError(error)
            }
            guard let s else { return .null }
            return .string(s)
        default:
            throw CoveError(.internal, "column scan of a \(kind) column")
        }
    }
}

extension ObjectStore {
    /// The keys of `cls`'s objects that `predicate` selects, scanning the table cluster by
    /// cluster; nil when the predicate does not compile to column form.
    func columnScan(_ cls: ObjectSchema, _ predicate: BoundPredicate) throws(CoveError) -> [Int64]? {
        let t = try table(cls)
        guard let compiled = ColumnPredicate.compile(predicate, columnOf: { p in p.key.flatMap { t.columnOfProperty[$0] } }) else {
            return nil
        }
        var scanner = ColumnScanner()
        var keys: [Int64] = []
        var failure: CoveError?
        do {
            try t.tree.forEachCluster { (view: ClusterView) throws(StorageError) -> Bool in
                let reader = ClusterViewReader(view: view)
                let mask: [Bool]
                switch Result(catching: { () throws(CoveError) -> [Bool] in try scanner.matches(compiled, reader) }) {
                case .success(let m): mask = m
                case .failure(let e):
                    failure = e
                    return false
                }
                for i in 0..<mask.count where mask[i] { keys.append(Int64(bitPattern: reader.key(i))) }
                return true
            }
        } catch {
            throw CoveError(error)
        }
        if let failure { throw failure }
        return keys
    }
}

extension ObjectStore {
    /// The values of `path` for `rows`, read a cluster at a time, when the path is a plain
    /// property of the objects and the rows are links to them in ascending key order (as a
    /// scan or a filter leaves them); nil otherwise, for the caller to read row by row.
    func columnValues(_ path: BoundPath, _ rows: [Value]) throws(CoveError) -> [Value]? {
        guard let rc = try rowColumn(path, rows) else { return nil }
        let p = rc.property
        var target: UInt32 = 0
        if let name = p.type.objectClassName { target = try self.classKey(of: try objectSchema(name)) }
        var out: [Value] = []
        out.reserveCapacity(rc.keys.count)
        var failure: CoveError?
        let complete = try Self.forEachKeyedRow(rc) { (view, i, _) throws(StorageError) -> Bool in
            switch Result(catching: { () throws(CoveError) -> Value in
                try PropertyCodec.value(try Self.cell(view, rc.column, i), for: p, targetClassKey: target)
            }) {
            case .success(let v):
                out.append(v)
                return true
            case .failure(let e):
                failure = e
                return false
            }
        }
        if let failure { throw failure }
        return complete ? out : nil
    }

    /// A plain property's column and the rows' object keys: what `columnValues` and
    /// `topStrings` read a cluster at a time.
    private struct RowColumn {
        let property: Property
        let table: Table
        let column: Int
        let keys: [UInt64]
    }

    /// The column of `path` and the keys of `rows`; nil when the path is not a plain property
    /// of the rows' objects or the rows are not links to them in ascending key order.
    private func rowColumn(_ path: BoundPath, _ rows: [Value]) throws(CoveError) -> RowColumn? {
        guard path.root == .object, path.steps.count == 1, case .none = path.postfix,
              case .property(let cls, let p) = path.steps[0], p.collection == .none, !p.isBacklinks else { return nil }
        let classKey = try self.classKey(of: cls)
        var keys: [UInt64] = []
        keys.reserveCapacity(rows.count)
        for row in rows {
            guard case .link(let link) = row, link.classKey == classKey, link.objectKey >= 0 else { return nil }
            let key = UInt64(link.objectKey)
            if let last = keys.last, key <= last { return nil }
            keys.append(key)
        }
        let t = try table(cls)
        guard let propertyKey = p.key, let column = t.columnOfProperty[propertyKey] else { return nil }
        return RowColumn(property: p, table: t, column: column, keys: keys)
    }

    /// Calls `body(cluster, row in it, position in keys)` for each of `rc.keys` in order, one
    /// pass over the clusters that hold them, until it returns false. True when every key was
    /// found and visited; false when the table lacks one or `body` stopped.
    private static func forEachKeyedRow(
        _ rc: RowColumn, _ body: (ClusterView, Int, Int) throws(StorageError) -> Bool
    ) throws(CoveError) -> Bool {
        let keys = rc.keys
        var next = 0
        var stopped = false
        do {
            try rc.table.tree.forEachCluster { (view: ClusterView) throws(StorageError) -> Bool in
                guard next < keys.count else { return false }
                if view.key(view.count - 1) < keys[next] { return true }
                var i = 0
                while next < keys.count && i < view.count {
                    let k = view.key(i)
                    if k < keys[next] { i += 1; continue }
                    if k > keys[next] { return false }    // a row the table does not hold
                    guard try body(view, i, next) else {
                        stopped = true
                        return false
                    }
                    next += 1
                    i += 1
                }
                return next < keys.count
            }
        } catch {
            throw CoveError(error)
        }
        return !stopped && next == keys.count
    }

    private static func cell(_ view: ClusterView, _ column: Int, _ i: Int) throws(CoveError) -> CellValue {
        do { return try view.value(column, i) } catch { throw CoveError(error) }
    }
}

extension ObjectStore {
    /// The positions in `rows` of the first `limit` rows by string property `path` (nulls
    /// first ascending, last descending; ties in row order), found with one pass over the
    /// column's bytes in place: a row is compared with the current last of the kept ones by
    /// memcmp and copied only when it gets in. Nil when the path is not a plain string property
    /// of the rows' objects in ascending key order.
    func topStrings(_ path: BoundPath, _ rows: [Value], ascending: Bool, limit: Int) throws(CoveError) -> [Int]? {
        guard limit > 0, let rc = try rowColumn(path, rows), rc.property.type == .string else { return nil }
        // The kept rows, best first: (bytes, or nil for null; position in `rows`).
        var kept: [(bytes: [UInt8]?, index: Int)] = []
        kept.reserveCapacity(limit + 1)
        /// Whether (a, i) comes before (b, j).
        func before(_ a: UnsafeRawBufferPointer?, _ i: Int, _ b: [UInt8]?, _ j: Int) -> Bool {
            switch (a, b) {
            case (nil, nil): return i < j
            case (nil, _): return ascending
            case (_, nil): return !ascending
            case (let x?, let y?):
                let n = Swift.min(x.count, y.count)
                var c: Int32 = 0
                if n > 0, let px = x.baseAddress {
                    c = y.withUnsafeBytes { yb in yb.baseAddress.map { memcmp(px, $0, n) } ?? 0 }
                }
                if c == 0 { c = x.count == y.count ? 0 : (x.count < y.count ? -1 : 1) }
                if c == 0 { return i < j }
                return ascending ? c < 0 : c > 0
            }
        }
        let complete = try Self.forEachKeyedRow(rc) { (view, i, position) throws(StorageError) -> Bool in
            try view.withBytes(rc.column, i) { (bytes: UnsafeRawBufferPointer?) throws(StorageError) in
                if kept.count == limit, let last = kept.last, !before(bytes, position, last.bytes, last.index) { return }
                var lo = 0, hi = kept.count
                while lo < hi {
                    let mid = (lo + hi) / 2
                    // Past kept[mid] when the candidate does not come before it.
                    if before(bytes, position, kept[mid].bytes, kept[mid].index) { hi = mid } else { lo = mid + 1 }
                }
                kept.insert((bytes.map { Array($0) }, position), at: lo)
                if kept.count > limit { kept.removeLast() }
            }
            return true
        }
        return complete ? kept.map(\.index) : nil
    }
}
