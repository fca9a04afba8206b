// The configuration's read and write rules: per class of the schema, a query in the subscription
// subset in which `$user` is the token's user. Read rules narrow what subscriptions send (in
// SQL, on the typed tables); write rules are checked on upload against the objects' states in
// memory, by an evaluator that gives the SQL translation's answers (null is not a third truth
// value; strings compare by bytes). docs/SYNC.md, "Read and write rules".
import CoveSyncCore
import Foundation

/// The rules of the configuration, checked against the schema.
public struct ServerRules: Sendable, Equatable {
    /// Per class, the query texts of its read and write rules (`"*"`'s filled in), nil where the
    /// class has none.
    public let read: [String: String]
    public let write: [String: String]
    let schema: ServerSchema
    /// The classes whose read rule is not TRUEPREDICATE (for every user alike: the user only
    /// binds `$user`), known without parsing a rule on every download.
    let readRuled: Set<String>

    /// Reads and checks `document` (the configuration's `rules`) against `schema`.
    /// - Throws: `ConfigError` naming the class and the rule that is wrong.
    public init(_ document: JSONDocument, schema: ServerSchema?) throws(ConfigError) {
        guard case .object(let top) = document else {
            throw ConfigError("rules: expected an object of {\"read\", \"write\"} by class name")
        }
        guard let schema else { throw ConfigError("rules: rules need a schema (the configuration's \"schema\")") }
        var named: [String: [String: String]] = [:]
        for (className, body) in top.sorted(by: { $0.key < $1.key }) {
            guard className == "*" || schema.classes[className] != nil else {
                throw ConfigError("rules: the schema has no class '\(className.prefix(80))'")
            }
            guard case .object(let members) = body else {
                throw ConfigError("rules: class '\(className)': expected an object with \"read\", \"write\" or both")
            }
            for (name, value) in members.sorted(by: { $0.key < $1.key }) {
                guard name == "read" || name == "write" else {
                    throw ConfigError("rules: class '\(className)' has unknown member \"\(name.prefix(80))\" (expected \"read\", \"write\")")
                }
                guard case .string(let query) = value else {
                    throw ConfigError("rules: class '\(className)', \(name): expected a query string such as \"owner == $user\"")
                }
                named[className, default: [:]][name] = query
            }
        }
        var read: [String: String] = [:], write: [String: String] = [:]
        var readRuled = Set<String>()
        for className in schema.classes.keys.sorted() {
            for kind in ["read", "write"] {
                guard let query = named[className]?[kind] ?? named["*"]?[kind] else { continue }
                let from = named[className]?[kind] == nil ? " (from \"*\")" : ""
                let parsed: SubscriptionQuery
                do {
                    parsed = try Self.query(className, query, schema: schema, user: "")
                } catch {
                    throw ConfigError("rules: class '\(className)', \(kind)\(from): \(error.message)")
                }
                if kind == "read" { read[className] = query } else { write[className] = query }
                if kind == "read", parsed.predicate != .constant(true) { readRuled.insert(className) }
            }
        }
        self.read = read
        self.write = write
        self.schema = schema
        self.readRuled = readRuled
    }

    /// No rules: every user reads and writes everything.
    init(schema: ServerSchema) {
        read = [:]
        write = [:]
        self.schema = schema
        readRuled = []
    }

    /// A rule's query on `className` with `$user` bound to `user`.
    static func query(_ className: String, _ text: String, schema: ServerSchema, user: String) throws(SyncError) -> SubscriptionQuery {
        let query = try SubscriptionQuery(className: className, query: text, schema: schema.subscriptions,
                                          namedArguments: ["user": .value(.string(user))])
        _ = try query.sql()
        return query
    }

    /// The class's read rule for `user`, nil when every user reads it.
    func readRule(_ className: String, user: String) -> SubscriptionQuery? {
        rule(read[className], className, user)
    }

    /// The class's write rule for `user`, nil when every user writes it.
    func writeRule(_ className: String, user: String) -> SubscriptionQuery? {
        rule(write[className], className, user)
    }

    private func rule(_ text: String?, _ className: String, _ user: String) -> SubscriptionQuery? {
        // Checked at startup with a user of the same type: it checks for every user.
        guard let text, let query = try? Self.query(className, text, schema: schema, user: user) else { return nil }
        if case .constant(true) = query.predicate { return nil }
        return query
    }

    public static func == (a: ServerRules, b: ServerRules) -> Bool { a.read == b.read && a.write == b.write }
}

// MARK: Evaluation

/// A query evaluated against one object as its typed row shows it: what the SQL translation's
/// condition answers for that row.
struct RowEvaluator {
    let cls: ServerClass
    let ref: SyncObjectRef
    let state: SyncObjectState

    /// What the typed column of `property` holds: the state's value when it fits the
    /// property's type, nil (NULL) otherwise.
    func column(_ property: String) -> SyncValue? {
        guard let type = cls.properties[property] else { return nil }
        let value = property == cls.primaryKey ? ref.key.value : state.property(property)
        guard let value, SQLValues.text(value, for: type) != nil else { return nil }
        return value
    }

    /// Whether the query matches: an unknown answer (a comparison with NULL) does not.
    func matches(_ query: SubscriptionQuery) -> Bool {
        evaluate(query.predicate, negated: false) == true
    }

    /// SQL's three-valued answer; nil is unknown.
    private func evaluate(_ p: SubscriptionPredicate, negated: Bool) -> Bool? {
        switch p {
        case .constant(let b): return b
        case .not(let inner): return evaluate(inner, negated: true).map { !$0 }
        case .and(let terms):
            var unknown = false
            for t in terms {
                switch evaluate(t, negated: negated) {
                case false?: return false
                case nil: unknown = true
                default: break
                }
            }
            return unknown ? nil : true
        case .or(let terms):
            var unknown = false
            for t in terms {
                switch evaluate(t, negated: negated) {
                case true?: return true
                case nil: unknown = true
                default: break
                }
            }
            return unknown ? nil : false
        case .comparison(let c):
            let answer = compare(c)
            // The translation wraps an optional property's comparison in COALESCE(…, FALSE) under NOT.
            if answer == nil, negated, c.type.isOptional { return false }
            return answer
        }
    }

    private func compare(_ c: SubscriptionComparison) -> Bool? {
        let column = column(c.property)
        let value = c.values.first ?? .null
        switch c.op {
        case .equal:
            if value == .null { return column == nil }
            guard let column else { return nil }
            return Self.order(column, value, c.caseInsensitive) == 0
        case .notEqual:
            if value == .null { return column != nil }
            guard let column else { return true }
            return Self.order(column, value, c.caseInsensitive) != 0
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard let column, let order = Self.order(column, value, false) else { return nil }
            switch c.op {
            case .less: return order < 0
            case .lessOrEqual: return order <= 0
            case .greater: return order > 0
            default: return order >= 0
            }
        case .beginsWith, .endsWith, .contains, .like:
            guard case .string(let text) = value else { return false }
            guard case .string(let s)? = column else { return nil }
            let escaped = text.unicodeScalars.map { LikeAtom.literal($0) }
            switch c.op {
            case .beginsWith: return Self.like(s, escaped + [.any], c.caseInsensitive)
            case .endsWith: return Self.like(s, [.any] + escaped, c.caseInsensitive)
            case .contains: return Self.like(s, [.any] + escaped + [.any], c.caseInsensitive)
            default:
                // LIKE's own wildcards: `*` any run, `?` one character.
                return Self.like(s, text.unicodeScalars.map { $0 == "*" ? .any : $0 == "?" ? .one : .literal($0) }, c.caseInsensitive)
            }
        case .in:
            let present = c.values.filter { $0 != .null }
            let matchesNull = present.count < c.values.count
            guard let column else { return matchesNull ? true : (present.isEmpty ? false : nil) }
            return present.contains { Self.order(column, $0, c.caseInsensitive) == 0 }
        }
    }

    /// How a column's value orders against a query's value, as PostgreSQL compares them (numbers
    /// of any kind as numbers, strings and bytes by bytes, `[c]` folding case); nil when they do
    /// not compare.
    static func order(_ a: SyncValue, _ b: SyncValue, _ caseInsensitive: Bool) -> Int? {
        func sign<T: Comparable>(_ x: T, _ y: T) -> Int { x < y ? -1 : (x == y ? 0 : 1) }
        func bytes(_ x: some Sequence<UInt8>, _ y: some Sequence<UInt8>) -> Int {
            let (x, y) = (Array(x), Array(y))
            return x.lexicographicallyPrecedes(y) ? -1 : (x == y ? 0 : 1)
        }
        switch (a, b) {
        case (.int(let x), .int(let y)): return sign(x, y)
        case (.int(let x), .double(let y)): return sign(Double(x), y)
        case (.double(let x), .int(let y)): return sign(x, Double(y))
        case (.double(let x), .double(let y)):
            // PostgreSQL: NaN equals NaN and is above every other number.
            if x.isNaN || y.isNaN { return x.isNaN && y.isNaN ? 0 : (x.isNaN ? 1 : -1) }
            return sign(x, y)
        case (.bool(let x), .bool(let y)): return x == y ? 0 : (x ? 1 : -1)
        case (.string(let x), .string(let y)):
            return caseInsensitive ? bytes(x.lowercased().utf8, y.lowercased().utf8) : bytes(x.utf8, y.utf8)
        case (.data(let x), .data(let y)): return bytes(x, y)
        case (.objectId(let x), .objectId(let y)): return bytes(x.bytes, y.bytes)
        case (.uuid(let x), .uuid(let y)): return bytes(x.bytes, y.bytes)
        case (.date(let x), .date(let y)): return sign(x, y)
        case (.decimal128(let x), .decimal128(let y)):
            guard let dx = Decimal(string: x.text), let dy = Decimal(string: y.text) else { return nil }
            return sign(dx, dy)
        default: return nil
        }
    }

    enum LikeAtom: Equatable {
        case literal(Unicode.Scalar), any, one
    }

    /// LIKE (ILIKE when `caseInsensitive`) of a pattern already read into atoms.
    static func like(_ text: String, _ pattern: [LikeAtom], _ caseInsensitive: Bool) -> Bool {
        let s = Array((caseInsensitive ? text.lowercased() : text).unicodeScalars)
        let p = caseInsensitive ? pattern.map { atom -> LikeAtom in
            if case .literal(let u) = atom, let low = String(u).lowercased().unicodeScalars.first { return .literal(low) }
            return atom
        } : pattern
        // Positions of the pattern reachable after each scalar of the text.
        var reach = Array(repeating: false, count: p.count + 1)
        reach[0] = true
        func close(_ r: inout [Bool]) {
            for i in 0..<p.count where r[i] && p[i] == .any { r[i + 1] = true }
        }
        close(&reach)
        for u in s {
            var next = Array(repeating: false, count: p.count + 1)
            for i in 0..<p.count where reach[i] {
                switch p[i] {
                case .any: next[i] = true
                case .one: next[i + 1] = true
                case .literal(let l): if l == u { next[i + 1] = true }
                }
            }
            close(&next)
            reach = next
        }
        return reach[p.count]
    }
}
