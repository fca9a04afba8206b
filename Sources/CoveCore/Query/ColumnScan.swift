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
    /// An int or double column against a number, decoded and compared in one loop; `null` is
    /// the answer for null values.
    case ints(column: Int, test: ColumnTest, constant: Int64, null: Bool)
    case doubles(column: Int, test: ColumnTest, constant: Double, null: Bool)
    case between(column: Int, kind: ColumnKind, low: Value, high: Value)
    case member(column: Int, kind: ColumnKind, values: Set<Value>)

    /// The columns the predicate reads, each once.
    var columns: [Int] {
        var out: [Int] = []
        func collect(_ p: ColumnPredicate) {
            switch p {
            case .constant: break
            case .and(let terms), .or(let terms): terms.forEach(collect)
            case .not(let inner): collect(inner)
            case .compare(let c, _, _, _), .ints(let c, _, _, _), .doubles(let c, _, _, _), .between(let c, _, _, _),
                 .member(let c, _, _):
                if !out.contains(c) { out.append(c) }
            }
        }
        collect(self)
        return out
    }

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
        guard case .path(let path) = e, let p = path.ownProperty?.property, !p.isLink else { return nil }
        // The kinds the scanner compares in place (the stored kind as PropertyCodec maps it).
        guard let kind = p.columnSpec?.kind, [.int, .double, .float, .bool, .string, .timestamp].contains(kind),
              let column = columnOf(p) else { return nil }
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
            let test: ColumnTest
            switch op {
            case .equal: test = .equal
            case .notEqual: test = .notEqual
            case .less: test = .less
            case .lessOrEqual: test = .lessOrEqual
            case .greater: test = .greater
            default: test = .greaterOrEqual
            }
            let null = QueryEvaluator.test(.null, op, v, [])
            switch (kind, v) {
            case (.int, .int(let c)): return .ints(column: column, test: test, constant: c, null: null)
            case (.double, .double(let c)) where !c.isNaN: return .doubles(column: column, test: test, constant: c, null: null)
            case (.double, .int(let c)): return .doubles(column: column, test: test, constant: Double(c), null: null)
            default: return .compare(column: column, kind: kind, op: op, value: v)
            }
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

/// Evaluates compiled predicates over one cluster, reusing its buffers between clusters: each
/// comparison fills a mask in one loop over the decoded column, and AND and OR combine masks in
/// place.
struct ColumnScanner {
    private var ints: [Int64] = []
    private var doubles: [Double] = []
    private var nulls: [Bool] = []
    /// Masks for the terms of AND and OR, one per nesting depth.
    private var spare: [[Bool]] = []

    /// Fills `mask` (resized to the cluster) with which objects of `view` match `p`.
    mutating func matches(_ p: ColumnPredicate, _ view: ClusterViewReader, into mask: inout [Bool], depth: Int) throws(CoveError) {
        let n = view.count
        mask.resize(to: n, with: false)
        switch p {
        case .constant(let b):
            mask.withUnsafeMutableBufferPointer { m in for i in 0..<n { m[i] = b } }
        case .and(let terms), .or(let terms):
            var isAnd = true
            if case .or = p { isAnd = false }
            guard let first = terms.first else {
                mask.withUnsafeMutableBufferPointer { m in for i in 0..<n { m[i] = isAnd } }
                return
            }
            try matches(first, view, into: &mask, depth: depth + 1)
            if terms.count == 1 { return }
            while spare.count <= depth { spare.append([]) }
            var term = spare[depth]
            spare[depth] = []
            defer { spare[depth] = term }
            for t in terms.dropFirst() {
                try matches(t, view, into: &term, depth: depth + 1)
                // Bytewise AND and OR on the flags (a Bool is the byte 0 or 1): no branch per
                // object, and the loop vectorises.
                mask.withUnsafeMutableBytes { m in
                    term.withUnsafeBytes { x in
                        if isAnd {
                            for i in 0..<n { m[i] = m[i] & x[i] }
                        } else {
                            for i in 0..<n { m[i] = m[i] | x[i] }
                        }
                    }
                }
            }
        case .not(let inner):
            try matches(inner, view, into: &mask, depth: depth + 1)
            mask.withUnsafeMutableBufferPointer { m in for i in 0..<n { m[i] = !m[i] } }
        case .ints(let column, let test, let constant, let null):
            mask.withUnsafeMutableBufferPointer { view.view.compareInts(column, test, constant, null: null, into: $0) }
        case .doubles(let column, let test, let constant, let null):
            mask.withUnsafeMutableBufferPointer { view.view.compareDoubles(column, test, constant, null: null, into: $0) }
        case .compare(let column, let kind, let op, let value):
            try compare(view, column, kind, into: &mask) { QueryEvaluator.test($0, op, value, []) }
        case .between(let column, let kind, let low, let high):
            try compare(view, column, kind, into: &mask) {
                QueryEvaluator.test($0, .greaterOrEqual, low, []) && QueryEvaluator.test($0, .lessOrEqual, high, [])
            }
        case .member(let column, let kind, let values):
            try compare(view, column, kind, into: &mask) { values.contains(QueryEvaluator.normalized($0)) }
        }
    }

    /// Tests every object's value of `column` into `mask`, value by value (decoded columns for
    /// ints and doubles), with the nulls tested through `test`.
    private mutating func compare(_ view: ClusterViewReader, _ column: Int, _ kind: ColumnKind, into mask: inout [Bool],
                                  _ test: (Value) -> Bool) throws(CoveError) {
        let n = view.count
        let hasNulls = view.mayHaveNulls(column)
        if hasNulls { view.nulls(column, into: &nulls) }
        switch kind {
        case .int:
            view.ints(column, into: &ints)
            for i in 0..<n { mask[i] = test(.int(ints[i])) }
        case .double:
            view.doubles(column, into: &doubles)
            for i in 0..<n { mask[i] = test(.double(doubles[i])) }
        default:
            for i in 0..<n { mask[i] = hasNulls && nulls[i] ? false : test(try view.value(column, i, kind)) }
        }
        // Nulls follow the general rules (`== nil` matches them, `!= 5` does too).
        if hasNulls {
            let null = test(.null)
            for i in 0..<n where nulls[i] { mask[i] = null }
        }
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
    func mayHaveNulls(_ column: Int) -> Bool { view.mayHaveNulls(column) }

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
                    return String(utf8: b)
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
    package func columnScan(_ cls: ObjectSchema, _ predicate: BoundPredicate) throws(CoveError) -> [Int64]? {
        let t = try table(cls)
        guard let compiled = ColumnPredicate.compile(predicate, columnOf: { p in p.key.flatMap { t.columnOfProperty[$0] } }) else {
            return nil
        }
        var keys: [Int64] = []
        try forEachMask(t, compiled, keys: true) { reader, mask in
            for i in 0..<mask.count where mask[i] { keys.append(Int64(bitPattern: reader.key(i))) }
        }
        return keys
    }

    /// How many of `cls`'s objects `predicate` selects, scanning as `columnScan` does without
    /// collecting their keys; nil when the predicate does not compile to column form.
    package func columnCount(_ cls: ObjectSchema, _ predicate: BoundPredicate) throws(CoveError) -> Int? {
        let t = try table(cls)
        guard let compiled = ColumnPredicate.compile(predicate, columnOf: { p in p.key.flatMap { t.columnOfProperty[$0] } }) else {
            return nil
        }
        var count = 0
        try forEachMask(t, compiled, keys: false) { _, mask in
            mask.withUnsafeBytes { m in
                var c = 0
                for i in 0..<m.count { c &+= Int(m[i]) }
                count &+= c
            }
        }
        return count
    }

    /// Calls `body` with each cluster of table `t` and which of its objects match `compiled`
    /// (`keys`: whether `body` reads the objects' keys, so that they are prefetched too;
    /// `reading`: more columns `body` reads, prefetched with the predicate's).
    private func forEachMask(_ t: Table, _ compiled: ColumnPredicate, keys: Bool, reading: [Int] = [],
                             _ body: (ClusterViewReader, [Bool]) throws(CoveError) -> Void) throws(CoveError) {
        var scanner = ColumnScanner()
        var mask: [Bool] = []
        var failure: CoveError?
        do {
            try t.tree.forEachCluster(prefetching: ClusterPrefetch(columns: compiled.columns + reading, keys: keys)) {
                (view: ClusterView) throws(StorageError) -> Bool in
                let reader = ClusterViewReader(view: view)
                do throws(CoveError) {
                    try scanner.matches(compiled, reader, into: &mask, depth: 0)
                    try body(reader, mask)
                } catch {
                    failure = error
                    return false
                }
                return true
            }
        } catch {
            throw CoveError(error)
        }
        if let failure { throw failure }
    }

    /// The keys of the first `limit` of `cls`'s objects that `predicate` selects, in the order
    /// of string property `path` (nulls first ascending, last descending; ties in key order),
    /// kept while the table is scanned: no list of every match is made. Nil when the
    /// predicate does not compile to column form or `path` is not a plain string property of
    /// `cls`.
    package func columnScanTopStrings(_ cls: ObjectSchema, _ predicate: BoundPredicate, _ path: BoundPath,
                              ascending: Bool, limit: Int) throws(CoveError) -> [Int64]? {
        guard limit > 0, let (owner, p) = path.ownProperty, owner.className == cls.className, p.type == .string else { return nil }
        let t = try table(cls)
        guard let propertyKey = p.key, let column = t.columnOfProperty[propertyKey],
              let compiled = ColumnPredicate.compile(predicate, columnOf: { q in q.key.flatMap { t.columnOfProperty[$0] } }) else {
            return nil
        }
        var top = StringTopK(limit: limit, ascending: ascending)
        try forEachMask(t, compiled, keys: true, reading: [column]) { reader, mask throws(CoveError) in
            do throws(StorageError) {
                for i in 0..<mask.count where mask[i] {
                    let key = reader.key(i)
                    try reader.view.withBytes(column, i) { (bytes: UnsafeRawBufferPointer?) in
                        top.offer(bytes, Int(truncatingIfNeeded: key))
                    }
                }
            } catch {
                throw CoveError(error)
            }
        }
        return top.positions.map { Int64($0) }
    }
}

extension ObjectStore {
    /// The values of `path` for `rows`, read a cluster at a time, when the path is a plain
    /// property of the objects and the rows are links to them in ascending key order (as a
    /// scan or a filter leaves them); nil otherwise, for the caller to read row by row.
    package func columnValues(_ path: BoundPath, _ rows: [Value]) throws(CoveError) -> [Value]? {
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
        guard let (cls, p) = path.ownProperty else { return nil }
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
            try rc.table.tree.forEachCluster(prefetching: ClusterPrefetch(columns: [rc.column], keys: true)) {
                (view: ClusterView) throws(StorageError) -> Bool in
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
    /// column's bytes in place. Nil when the path is not a plain string property of the rows'
    /// objects in ascending key order.
    package func topStrings(_ path: BoundPath, _ rows: [Value], ascending: Bool, limit: Int) throws(CoveError) -> [Int]? {
        guard limit > 0, let rc = try rowColumn(path, rows), rc.property.type == .string else { return nil }
        var top = StringTopK(limit: limit, ascending: ascending)
        let complete = try Self.forEachKeyedRow(rc) { (view, i, position) throws(StorageError) -> Bool in
            try view.withBytes(rc.column, i) { (bytes: UnsafeRawBufferPointer?) in top.offer(bytes, position) }
            return true
        }
        return complete ? top.positions : nil
    }
}

/// The first `limit` of a stream of strings (or nulls) offered in place: a candidate is
/// compared with the current last of the kept ones, by its first eight bytes and then memcmp,
/// and copied only when it gets in. Nulls come first ascending and last descending; ties go to
/// the lower position.
struct StringTopK {
    let limit: Int
    let ascending: Bool
    /// The kept strings, best first: (bytes, or nil for null; their first eight bytes as a
    /// big-endian number, zero-padded; position).
    private var kept: [(bytes: [UInt8]?, prefix: UInt64, position: Int)] = []

    init(limit: Int, ascending: Bool) {
        self.limit = limit
        self.ascending = ascending
        kept.reserveCapacity(limit + 1)
    }

    /// The positions kept, best first.
    var positions: [Int] { kept.map(\.position) }

    /// The first eight bytes of `x` as a number whose order is the bytes' order.
    private static func prefix(_ x: UnsafeRawBufferPointer) -> UInt64 {
        if x.count >= 8 { return UInt64(bigEndian: x.loadUnaligned(as: UInt64.self)) }
        var v: UInt64 = 0
        for i in 0..<8 { v = v &<< 8 | (i < x.count ? UInt64(x[i]) : 0) }
        return v
    }

    /// Whether (a, i) comes before (b, j); `ap` and `bp` are their prefixes, which decide when
    /// they differ (zero padding orders a proper prefix first) and memcmp otherwise.
    private func before(_ a: UnsafeRawBufferPointer?, _ ap: UInt64, _ i: Int, _ b: [UInt8]?, _ bp: UInt64, _ j: Int) -> Bool {
        switch (a, b) {
        case (nil, nil): return i < j
        case (nil, _): return ascending
        case (_, nil): return !ascending
        case (let x?, let y?):
            if ap != bp { return ascending ? ap < bp : ap > bp }
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

    /// Considers `bytes` (nil: null) at `position`; positions are offered in ascending order.
    mutating func offer(_ bytes: UnsafeRawBufferPointer?, _ position: Int) {
        let p = bytes.map(Self.prefix) ?? 0
        if kept.count == limit, let last = kept.last, !before(bytes, p, position, last.bytes, last.prefix, last.position) { return }
        var lo = 0, hi = kept.count
        while lo < hi {
            let mid = (lo + hi) / 2
            // Past kept[mid] when the candidate does not come before it.
            if before(bytes, p, position, kept[mid].bytes, kept[mid].prefix, kept[mid].position) { hi = mid } else { lo = mid + 1 }
        }
        kept.insert((bytes.map { Array($0) }, p, position), at: lo)
        if kept.count > limit { kept.removeLast() }
    }
}
