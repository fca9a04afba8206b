// A subscription's query: the subset of RQL that a server can answer from its tables, parsed,
// checked against the schema and bound to its arguments in one pass. What a subscription may
// not use (SORT, LIMIT, aggregates, key paths through links, quantifiers, SUBQUERY, ...) is
// refused by name, so a user learns what to change.

/// An argument of a subscription query: a value for `$n`, or a list of values for `IN $n`.
public enum SubscriptionArgument: Hashable, Sendable {
    case value(SyncValue)
    case list([SyncValue])
}

/// A checked predicate, its arguments bound.
public indirect enum SubscriptionPredicate: Hashable, Sendable {
    /// TRUEPREDICATE or FALSEPREDICATE.
    case constant(Bool)
    case comparison(SubscriptionComparison)
    case not(SubscriptionPredicate)
    case and([SubscriptionPredicate])
    case or([SubscriptionPredicate])
}

/// A property of the subscription's class compared with a value or, for IN, a list of values.
public struct SubscriptionComparison: Hashable, Sendable {
    public enum Operator: String, Hashable, Sendable {
        case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
        case beginsWith = "BEGINSWITH", endsWith = "ENDSWITH", contains = "CONTAINS", like = "LIKE", `in` = "IN"

        var isOrdering: Bool { [.less, .lessOrEqual, .greater, .greaterOrEqual].contains(self) }
        var isStringOperator: Bool { [.beginsWith, .endsWith, .contains, .like].contains(self) }

        /// The operator with its sides swapped: `3 < age` is `age > 3`.
        var mirrored: Operator {
            switch self {
            case .less: return .greater
            case .lessOrEqual: return .greaterOrEqual
            case .greater: return .less
            case .greaterOrEqual: return .lessOrEqual
            default: return self
            }
        }
    }

    public let property: String
    public let type: SyncPropertyType
    public let op: Operator
    /// `[c]`: letter case ignored.
    public let caseInsensitive: Bool
    /// The value compared with: one, or for IN the list's values (perhaps none).
    public let values: [SyncValue]
}

/// A subscription's query on one class, parsed, checked and bound.
///
/// The subset: a property of the class compared with a literal or `$n` (`==`, `!=`, `<`, `<=`,
/// `>`, `>=`, `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE`, the string operators and `==`,
/// `!=` and `IN` with `[c]`), `IN {…}` and `IN $n`, `AND`/`&&`, `OR`/`||`, `NOT`/`!`,
/// parentheses, `TRUEPREDICATE` and `FALSEPREDICATE`. Literals: ints, doubles, strings, `true`,
/// `false`, `null`, `T<seconds>:<nanoseconds>`, `oid(…)` and `uuid(…)`.
public struct SubscriptionQuery: Hashable, Sendable {
    public let className: String
    /// The query as given.
    public let text: String
    public let predicate: SubscriptionPredicate

    /// The longest query, in bytes.
    public static let maxLength = 64 * 1024
    /// The deepest nesting of parentheses and NOTs.
    public static let maxNesting = 32

    /// Parses `query` on `className`, checks it against `schema` and binds `arguments` (`$0` is
    /// the first).
    ///
    /// - Throws: `SyncError(.querySyntax)` for text that does not parse;
    ///   `SyncError(.queryNotAllowed)` for RQL that subscriptions do not allow, naming it;
    ///   `SyncError(.queryInvalid)` for an unknown class or property, a value of the wrong type,
    ///   or a missing or mistyped argument. Messages quote the query and give the position.
    /// - Complexity: O(n) in the length of the query.
    ///
    /// `namedArguments` binds `$name` arguments (a server's rules take `$user`); without them a
    /// `$name` is a syntax error, as it always was.
    public init(className: String, query: String, schema: SubscriptionSchema, arguments: [SubscriptionArgument] = [],
                namedArguments: [String: SubscriptionArgument] = [:]) throws(SyncError) {
        guard let properties = schema.classes[className] else {
            throw SyncError(.queryInvalid, "subscription on class '\(className.prefix(80))': the schema has no such class")
        }
        guard query.utf8.count <= Self.maxLength else {
            throw SyncError(.queryInvalid, "subscription query on class '\(className)' is \(query.utf8.count) bytes long; at most \(Self.maxLength) are allowed")
        }
        var parser = SubscriptionParser(query: query, className: className, properties: properties, arguments: arguments,
                                        named: namedArguments)
        self.className = className
        self.text = query
        self.predicate = try parser.parse()
    }
}

/// The parser: recursive descent over the lexer's tokens, with the depth capped so that no query
/// recurses deeply. AND and OR chains are loops, so long chains cost no depth.
private struct SubscriptionParser {
    private var lexer: SubscriptionLexer
    private var lookahead: [SubscriptionToken] = []
    private let className: String
    private let properties: [String: SyncPropertyType]
    private let arguments: [SubscriptionArgument]
    private let named: [String: SubscriptionArgument]
    private var depth = 0
    private var errors: SubscriptionErrors { lexer.errors }

    init(query: String, className: String, properties: [String: SyncPropertyType], arguments: [SubscriptionArgument],
         named: [String: SubscriptionArgument]) {
        lexer = SubscriptionLexer(query, names: Set(named.keys))
        self.named = named
        self.className = className
        self.properties = properties
        self.arguments = arguments
    }

    // MARK: Tokens

    private mutating func peek(_ n: Int = 0) throws(SyncError) -> SubscriptionToken {
        while lookahead.count <= n { lookahead.append(try lexer.next()) }
        return lookahead[n]
    }

    @discardableResult
    private mutating func advance() throws(SyncError) -> SubscriptionToken {
        let token = try peek()
        lookahead.removeFirst()
        return token
    }

    /// A word's keyword meaning: most keywords in any case; `in not any some all none true false`
    /// only in all-lower or all-upper case, as the query language has it.
    private static func keyword(_ word: String) -> String? {
        let lower = word.lowercased()
        let anyCase: Set<String> = ["and", "or", "beginswith", "endswith", "contains", "like", "null", "nil", "truepredicate",
                                    "falsepredicate", "subquery", "between", "text", "sort", "distinct", "limit", "offset"]
        if anyCase.contains(lower) { return lower }
        let strictCase: Set<String> = ["in", "not", "any", "some", "all", "none", "true", "false"]
        if strictCase.contains(lower), word == lower || word == word.uppercased() { return lower }
        return nil
    }

    private func describe(_ token: SubscriptionToken) -> String {
        switch token.kind {
        case .end: return "the end of the query"
        case .word(let w): return "'\(w)'"
        case .value(let v): return v.description
        case .argument(let n): return "$\(n)"
        case .namedArgument(let name): return "$\(name)"
        case .caseInsensitive: return "'[c]'"
        case .symbol(let s): return "'\(s)'"
        case .refused(let what): return what
        }
    }

    private func expected(_ what: String, _ token: SubscriptionToken) -> SyncError {
        if case .refused(let thing) = token.kind { return errors.notAllowed(thing, at: token.start) }
        return errors.syntax("expected \(what)", at: token.start, detail: "found \(describe(token))")
    }

    // MARK: Predicates

    mutating func parse() throws(SyncError) -> SubscriptionPredicate {
        if case .end = try peek().kind { throw errors.syntax("empty query: expected a predicate", at: 0, detail: "write TRUEPREDICATE to subscribe to every object") }
        let predicate = try orChain()
        let token = try peek()
        switch token.kind {
        case .end:
            return predicate
        case .word(let w):
            if let k = Self.keyword(w), ["sort", "distinct", "limit", "offset"].contains(k) {
                throw errors.notAllowed(w.uppercased() + "(…)", at: token.start, detail: "a subscription holds every object that matches")
            }
        default:
            break
        }
        if case .symbol(")") = token.kind { throw errors.syntax("unbalanced ')'", at: token.start) }
        throw expected("'&&', '||' or the end of the query", token)
    }

    private mutating func orChain() throws(SyncError) -> SubscriptionPredicate {
        var terms = [try andChain()]
        while try consume("||", keyword: "or") { terms.append(try andChain()) }
        return terms.count == 1 ? terms[0] : .or(terms)
    }

    private mutating func andChain() throws(SyncError) -> SubscriptionPredicate {
        var terms = [try unary()]
        while try consume("&&", keyword: "and") { terms.append(try unary()) }
        return terms.count == 1 ? terms[0] : .and(terms)
    }

    /// Consumes the symbol or keyword if it is next.
    private mutating func consume(_ symbol: String, keyword: String) throws(SyncError) -> Bool {
        let token = try peek()
        switch token.kind {
        case .symbol(let s) where s == symbol: break
        case .word(let w) where Self.keyword(w) == keyword: break
        default: return false
        }
        try advance()
        return true
    }

    /// NOTs, then a parenthesized predicate, a constant predicate or a comparison.
    private mutating func unary() throws(SyncError) -> SubscriptionPredicate {
        let token = try peek()
        depth += 1
        defer { depth -= 1 }
        if depth > SubscriptionQuery.maxNesting {
            throw errors.syntax("nesting deeper than \(SubscriptionQuery.maxNesting) levels", at: token.start)
        }
        if try consume("!", keyword: "not") { return .not(try unary()) }
        switch token.kind {
        case .symbol("("):
            try advance()
            let inner = try orChain()
            let close = try peek()
            guard case .symbol(")") = close.kind else { throw expected("')'", close) }
            try advance()
            return inner
        case .word(let w) where Self.keyword(w) == "truepredicate":
            try advance()
            return .constant(true)
        case .word(let w) where Self.keyword(w) == "falsepredicate":
            try advance()
            return .constant(false)
        default:
            return try comparison()
        }
    }

    // MARK: Comparisons

    /// One side of a comparison as written.
    private enum Operand {
        case property(String)
        case value(SyncValue)
        case argument(Int)
        case named(String)
        /// `{…}`: literals and arguments.
        case list([Operand])
    }

    private mutating func comparison() throws(SyncError) -> SubscriptionPredicate {
        let left = try peek()
        let lhs = try operand()
        let opToken = try peek()
        var op: SubscriptionComparison.Operator
        switch opToken.kind {
        case .symbol(let s):
            guard let symbolOp = SubscriptionComparison.Operator(rawValue: s), !symbolOp.isStringOperator else {
                throw expected("a comparison operator", opToken)
            }
            op = symbolOp
        case .word(let w):
            switch Self.keyword(w) {
            case "beginswith": op = .beginsWith
            case "endswith": op = .endsWith
            case "contains": op = .contains
            case "like": op = .like
            case "in": op = .in
            case "between": throw errors.notAllowed("BETWEEN", at: opToken.start, detail: "write 'p >= low AND p <= high'")
            case "text": throw errors.notAllowed("full-text search (TEXT)", at: opToken.start)
            default: throw expected("a comparison operator", opToken)
            }
        default:
            throw expected("a comparison operator", opToken)
        }
        try advance()
        var caseInsensitive = false
        if case .caseInsensitive = try peek().kind {
            try advance()
            caseInsensitive = true
        }
        let right = try peek()
        let rhs = try operand()
        // The property on the left: a constant on the left is mirrored where that means the same.
        let property: String, propertyToken: SubscriptionToken, other: Operand, otherToken: SubscriptionToken
        switch (lhs, rhs) {
        case (.property, .property):
            throw errors.notAllowed("comparing two properties", at: left.start, detail: "compare a property with a value or an argument")
        case (.property(let p), _):
            (property, propertyToken, other, otherToken) = (p, left, rhs, right)
        case (_, .property(let p)):
            guard !op.isStringOperator, op != .in else {
                throw errors.invalid("\(op.rawValue) needs the property on its left", at: left.start)
            }
            (property, propertyToken, other, otherToken) = (p, right, lhs, left)
            op = op.mirrored
        default:
            throw errors.invalid("a comparison needs a property of class '\(className)' on one side", at: left.start)
        }
        return .comparison(try bind(property, at: propertyToken, op, caseInsensitive, other, otherToken))
    }

    private mutating func operand() throws(SyncError) -> Operand {
        let token = try peek()
        switch token.kind {
        case .value(let v):
            try advance()
            return .value(v)
        case .argument(let n):
            try advance()
            return .argument(n)
        case .namedArgument(let name):
            try advance()
            return .named(name)
        case .symbol("{"):
            try advance()
            return .list(try listItems())
        case .word(let w):
            switch Self.keyword(w) {
            case "true", "false":
                try advance()
                return .value(.bool(Self.keyword(w) == "true"))
            case "null", "nil":
                try advance()
                return .value(.null)
            case "any", "some", "all", "none":
                throw errors.notAllowed("the quantifier \(w.uppercased())", at: token.start, detail: "subscriptions compare properties of their own class, not collections")
            case "subquery":
                throw errors.notAllowed("SUBQUERY", at: token.start)
            case nil:
                break
            default:
                throw expected("a property, a value or an argument", token)
            }
            try advance()
            let next = try peek()
            if case .refused(let what) = next.kind, what.hasPrefix("a key path") {
                try advance()
                let path = errors.source(token.start, try peek().end)
                throw errors.notAllowed("the key path '\(path)'", at: token.start,
                                        detail: "a subscription compares properties of class '\(className)' itself, not through links")
            }
            if case .refused(let what) = next.kind, what.hasPrefix("the aggregate") || what.hasPrefix("a subscript") {
                throw errors.notAllowed(what, at: next.start, detail: "subscriptions cannot look into collections")
            }
            return .property(w)
        default:
            throw expected("a property, a value or an argument", token)
        }
    }

    /// The items of `{…}` after the `{`: literals and arguments, comma-separated.
    private mutating func listItems() throws(SyncError) -> [Operand] {
        var items: [Operand] = []
        if case .symbol("}") = try peek().kind {
            try advance()
            return items
        }
        while true {
            let token = try peek()
            let item = try operand()
            switch item {
            case .property(let p): throw errors.invalid("a list holds values, not the property '\(p)'", at: token.start)
            case .list: throw errors.syntax("a list inside a list", at: token.start)
            default: items.append(item)
            }
            let next = try advance()
            switch next.kind {
            case .symbol(","): continue
            case .symbol("}"): return items
            default: throw expected("',' or '}' in a list", next)
            }
        }
    }

    // MARK: Binding

    /// Resolves the property, checks the operator and values against its type, and binds
    /// arguments.
    private func bind(_ name: String, at propertyToken: SubscriptionToken, _ op: SubscriptionComparison.Operator, _ caseInsensitive: Bool,
                      _ operand: Operand, _ operandToken: SubscriptionToken) throws(SyncError) -> SubscriptionComparison {
        guard let type = properties[name] else {
            throw errors.invalid("class '\(className)' has no property '\(name)'", at: propertyToken.start)
        }
        let what = "property '\(name)' of class '\(className)'"
        if let collection = type.collection {
            throw errors.notAllowed("querying the \(collection) \(what)", at: propertyToken.start, detail: "subscriptions cannot look into collections")
        }
        switch type.base {
        case .mixed:
            throw errors.notAllowed("querying the mixed \(what)", at: propertyToken.start)
        case .linkingObjects:
            throw errors.notAllowed("querying the backlinks \(what)", at: propertyToken.start)
        default:
            break
        }
        if op.isOrdering, [.bool, .data].contains(type.base) || Self.isLink(type) {
            throw errors.invalid("'\(op.rawValue)' does not apply to the \(type) \(what)", at: propertyToken.start)
        }
        if op.isStringOperator, type.base != .string {
            throw errors.invalid("\(op.rawValue) needs a string property; \(what) is \(type)", at: propertyToken.start)
        }
        if caseInsensitive, type.base != .string || op.isOrdering {
            throw errors.invalid("[c] applies to ==, !=, IN and the string operators on string properties; not to '\(op.rawValue)' on the \(type) \(what)",
                                 at: propertyToken.start)
        }
        var values: [SyncValue] = []
        switch (op, operand) {
        case (.in, .list(let items)):
            for item in items { values.append(try single(item, operandToken, forIn: true)) }
        case (.in, .argument(let n)):
            guard n < arguments.count else { throw missingArgument(n, operandToken) }
            guard case .list(let list) = arguments[n] else {
                throw errors.invalid("IN $\(n) needs a list argument, got a single value", at: operandToken.start)
            }
            values = list
        case (.in, .named(let name)):
            guard case .list(let list)? = named[name] else {
                throw errors.invalid("IN $\(name) needs a list argument, got a single value", at: operandToken.start)
            }
            values = list
        case (.in, _):
            throw errors.invalid("IN needs a list: {…} or a list argument", at: operandToken.start)
        case (_, .list):
            throw errors.invalid("a list {…} is only allowed after IN", at: operandToken.start)
        default:
            values = [try single(operand, operandToken, forIn: false)]
        }
        for value in values {
            try check(value, type, op, what, operandToken)
        }
        return SubscriptionComparison(property: name, type: type, op: op, caseInsensitive: caseInsensitive, values: values)
    }

    private static func isLink(_ type: SyncPropertyType) -> Bool {
        if case .link = type.base { return true }
        return false
    }

    private func missingArgument(_ n: Int, _ token: SubscriptionToken) -> SyncError {
        errors.invalid("argument $\(n) is missing: \(arguments.count) argument\(arguments.count == 1 ? " was" : "s were") given", at: token.start)
    }

    /// A literal's value, or a single-value argument's.
    private func single(_ operand: Operand, _ token: SubscriptionToken, forIn: Bool) throws(SyncError) -> SyncValue {
        switch operand {
        case .value(let v):
            return v
        case .argument(let n):
            guard n < arguments.count else { throw missingArgument(n, token) }
            guard case .value(let v) = arguments[n] else {
                throw errors.invalid("argument $\(n) is a list; \(forIn ? "a list {…} holds single values" : "only IN takes one")", at: token.start)
            }
            return v
        case .named(let name):
            guard case .value(let v)? = named[name] else {
                throw errors.invalid("argument $\(name) is a list; \(forIn ? "a list {…} holds single values" : "only IN takes one")", at: token.start)
            }
            return v
        default:
            throw errors.invalid("expected a value", at: token.start)
        }
    }

    /// Whether `value` may be compared with a property of `type` by `op`.
    private func check(_ value: SyncValue, _ type: SyncPropertyType, _ op: SubscriptionComparison.Operator, _ what: String,
                       _ token: SubscriptionToken) throws(SyncError) {
        if value == .null {
            guard op == .equal || op == .notEqual || op == .in else {
                throw errors.invalid("null compares only with ==, != and IN; \(what) is compared with '\(op.rawValue)'", at: token.start)
            }
            return
        }
        let fits: Bool
        switch (type.base, value) {
        case (.bool, .bool), (.string, .string), (.data, .data), (.date, .date), (.objectId, .objectId), (.uuid, .uuid):
            fits = true
        case (.int, .int), (.int, .double), (.float, .int), (.float, .double), (.double, .int), (.double, .double),
             (.decimal128, .int), (.decimal128, .double), (.decimal128, .decimal128):
            fits = true
        default:
            fits = false
        }
        guard fits else {
            let detail = Self.isLink(type) ? " (a link compares only with null in a subscription)" : ""
            throw errors.invalid("\(what) is \(type), compared with \(value.typeName) \(value)\(detail)", at: token.start)
        }
    }
}
