// The query language's syntax tree, as the parser produces it from RQL text (see docs/query-language.md):
// predicates, the expressions they compare, key paths with their postfixes, and the
// SORT/DISTINCT/LIMIT/OFFSET descriptors. Names are not resolved here; QueryCompiler binds them
// to a class of the schema.

/// A parsed query: a predicate and the descriptors after it, in order.
package struct ParsedQuery: Equatable, Sendable {
    package var predicate: QueryPredicate
    package var descriptors: [QueryDescriptor]

    package init(predicate: QueryPredicate, descriptors: [QueryDescriptor] = []) {
        self.predicate = predicate
        self.descriptors = descriptors
    }
}

/// A boolean condition. `and` and `or` hold their operands flat (a chain of 10,000 terms is one
/// node), so evaluating them needs no deep recursion.
package indirect enum QueryPredicate: Equatable, Sendable {
    case truePredicate
    case falsePredicate
    case and([QueryPredicate])
    case or([QueryPredicate])
    case not(QueryPredicate)
    case comparison(QueryComparison)
}

/// The operators of a comparison.
package enum QueryOperator: String, Equatable, Sendable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case `in` = "IN"
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case contains = "CONTAINS"
    case like = "LIKE"
    case text = "TEXT"
    case between = "BETWEEN"
}

/// The string comparison modifiers: `[c]` case-insensitive, `[d]` diacritic-insensitive.
package struct QueryStringOptions: OptionSet, Equatable, Sendable, Hashable {
    package let rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }
    package static let caseInsensitive = QueryStringOptions(rawValue: 1)
    package static let diacriticInsensitive = QueryStringOptions(rawValue: 2)
}

/// `left op[options] right`; `position` is the byte offset of the comparison in the query text,
/// for messages.
package struct QueryComparison: Equatable, Sendable {
    package var left: QueryExpression
    package var op: QueryOperator
    package var options: QueryStringOptions
    package var right: QueryExpression
    package var position: Int

    package init(left: QueryExpression, op: QueryOperator, options: QueryStringOptions = [], right: QueryExpression, position: Int = 0) {
        self.left = left
        self.op = op
        self.options = options
        self.right = right
        self.position = position
    }
}

/// ANY/SOME, ALL, NONE before a key path.
package enum QueryQuantifier: Equatable, Sendable {
    case any, all, none
}

/// A literal value in the query text.
package enum QueryConstant: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case float(Float)
    case string(String)
    case binary([UInt8])
    case timestamp(Timestamp)
    case objectId(ObjectId)
    case uuid(UUIDValue)
    /// `obj('Class', pk)`
    case objectByPrimaryKey(className: String, primaryKey: QueryConstantBox)
    /// `O<n>`: an object key of the class the comparison's path leads to.
    case objectKey(Int64)
    /// `L<t>:<n>`: class key and object key.
    case link(classKey: UInt32, objectKey: Int64)
}

/// A UUID as 16 bytes (Equatable and Sendable without Foundation's UUID in the syntax tree).
package struct UUIDValue: Equatable, Sendable, Hashable {
    package var bytes: [UInt8]
    package init(bytes: [UInt8]) { self.bytes = bytes }
}

/// Boxes a constant inside a constant (the primary key of `obj(...)`).
package final class QueryConstantBox: Equatable, Sendable {
    package let value: QueryConstant
    package init(_ value: QueryConstant) { self.value = value }
    package static func == (a: QueryConstantBox, b: QueryConstantBox) -> Bool { a.value == b.value }
}

/// One step of a key path after its first name.
package enum QueryPathStep: Equatable, Sendable {
    /// `.name` (also `.@links.Class.prop` as `.backlinks`)
    case property(String)
    /// `.@links.Class.property`
    case backlinks(className: String, property: String)
    /// `.@links` followed by `.@count`/`.@size`: every incoming link
    case allBacklinks
    /// `[n]`
    case index(Int)
    /// `[FIRST]`, `[LAST]`
    case first, last
    /// `[*]` and `.@values` (dictionary values, every list element)
    case all
    /// `['key']` on a dictionary (also `.key` when the property is a dictionary)
    case key(String)
    /// `[$n]` on a dictionary or list
    case argumentKey(Int)
    /// `.@keys` of a dictionary
    case keys
}

/// What may end a key path.
package enum QueryPathPostfix: Equatable, Sendable {
    case none
    /// `.@count`, `.@size`, `[SIZE]`
    case count
    /// `.@type`
    case type
    /// `.length` of strings or binaries (byte length)
    case length
    /// `.@min`, `.@max`, `.@sum`, `.@avg`, with the property after it for collections of objects
    case aggregate(QueryAggregate, property: [QueryPathStep])
}

package enum QueryAggregate: String, Equatable, Sendable {
    case min = "@min", max = "@max", sum = "@sum", avg = "@avg"
}

/// A key path: its first name (or `$var` inside a SUBQUERY), the steps after it, and a postfix.
package struct QueryKeyPath: Equatable, Sendable {
    /// The first component: a property name, or a SUBQUERY variable (`$d`), or `$Kn` (a string
    /// argument spliced in as a key path).
    package var head: String
    package var isVariable: Bool
    package var steps: [QueryPathStep]
    package var postfix: QueryPathPostfix
    package var quantifier: QueryQuantifier?

    package init(head: String, isVariable: Bool = false, steps: [QueryPathStep] = [], postfix: QueryPathPostfix = .none,
                quantifier: QueryQuantifier? = nil) {
        self.head = head
        self.isVariable = isVariable
        self.steps = steps
        self.postfix = postfix
        self.quantifier = quantifier
    }
}

/// Arithmetic between expressions.
package enum QueryArithmetic: String, Equatable, Sendable {
    case add = "+", subtract = "-", multiply = "*", divide = "/"
}

/// A side of a comparison.
package indirect enum QueryExpression: Equatable, Sendable {
    case constant(QueryConstant)
    /// `$n` (and `%@`, numbered in order)
    case argument(Int)
    /// `{a, b}` with an optional quantifier (`ANY {…}`)
    case list([QueryExpression], quantifier: QueryQuantifier?)
    case keyPath(QueryKeyPath)
    /// `SUBQUERY(path, $var, predicate).@count`
    case subquery(path: QueryKeyPath, variable: String, predicate: QueryPredicate)
    case arithmetic(QueryArithmetic, QueryExpression, QueryExpression)
}

/// SORT, DISTINCT, LIMIT and OFFSET after the predicate.
package enum QueryDescriptor: Equatable, Sendable {
    case sort([(QueryKeyPath, ascending: Bool)])
    case distinct([QueryKeyPath])
    case limit(Int)
    case offset(Int)

    package static func == (a: QueryDescriptor, b: QueryDescriptor) -> Bool {
        switch (a, b) {
        case (.sort(let x), .sort(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.ascending == $1.ascending }
        case (.distinct(let x), .distinct(let y)): return x == y
        case (.limit(let x), .limit(let y)): return x == y
        case (.offset(let x), .offset(let y)): return x == y
        default: return false
        }
    }
}
