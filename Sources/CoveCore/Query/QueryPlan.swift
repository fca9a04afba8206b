// QueryPlan: how a query's rows were produced, step by step: where they came from (a scan, the
// packed columns, an index, a collection's elements) and what was done to them (filters, sorts,
// DISTINCT, LIMIT, OFFSET). `QueryRunner` builds it as it runs; `Results.explain()` prints it.

/// The steps that produced a query's rows, in order.
package struct QueryPlan: Sendable, Equatable, CustomStringConvertible {
    package enum Step: Sendable, Equatable, CustomStringConvertible {
        /// Every object of a class, in key order.
        case scan(className: String, objects: Int)
        /// The predicate run over the packed columns of a class's objects.
        case columnScan(className: String, objects: UInt64)
        /// The same, keeping the first `limit` by one string property while scanning.
        case columnScanTop(className: String, objects: UInt64, limit: Int, key: String, ascending: Bool)
        /// Lookups in the primary-key index or a secondary index, giving candidate objects.
        case index(primaryKey: Bool, className: String, property: String, lookups: Int, candidates: Int)
        /// The elements of a list or set, `Class.property`.
        case elements(of: String, count: Int)
        /// The objects linking to one through a backlinks property, `Class.property`.
        case links(of: String, count: Int)
        /// A query's predicate tested on each row (its text).
        case filter(String)
        /// A stable sort; with `keepingFirst`, only that many kept, in a bounded buffer.
        case sort(keys: [SortKey], keepingFirst: Int?)
        case distinct(keyPaths: [String])
        case limit(Int)
        case offset(Int)

        package var description: String {
            switch self {
            case .scan(let c, let n): return "scan of \(n) \(c) objects"
            case .columnScan(let c, let n): return "column scan of \(n) \(c) objects"
            case .columnScanTop(let c, let n, let limit, let key, let ascending):
                return "column scan of \(n) \(c) objects keeping the first \(limit) by \(key) \(ascending ? "ASC" : "DESC")"
            case .index(let primaryKey, let c, let p, let lookups, let candidates):
                return "\(primaryKey ? "primary-key" : "secondary") index on \(c).\(p) (\(Self.count(lookups, "lookup")), \(Self.count(candidates, "candidate")))"
            case .elements(let of, let n): return "the \(n) elements of \(of)"
            case .links(let of, let n): return "the \(n) links of \(of)"
            case .filter(let text): return "filter \(text)"
            case .sort(let keys, let first):
                return "sort by " + keys.map(\.description).joined(separator: ", ") + (first.map { " keeping the first \($0)" } ?? "")
            case .distinct(let paths): return "distinct on " + paths.joined(separator: ", ")
            case .limit(let n): return "limit \(n)"
            case .offset(let n): return "offset \(n)"
            }
        }

        private static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }
    }

    /// One key of a sort step: a key path and its direction.
    package struct SortKey: Sendable, Equatable, CustomStringConvertible {
        package var keyPath: String
        package var ascending: Bool
        package var description: String { "\(keyPath) \(ascending ? "ASC" : "DESC")" }

        package init(keyPath: String, ascending: Bool) {
            self.keyPath = keyPath
            self.ascending = ascending
        }
    }

    package var steps: [Step] = []

    package init() {}

    package mutating func append(_ step: Step) {
        steps.append(step)
    }

    /// The steps as `explain()` prints them: "scan of 6 Person objects, then filter age > 3".
    package var description: String { steps.map(\.description).joined(separator: ", then ") }
}
