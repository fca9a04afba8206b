// A subscription's query as parameterised SQL for PostgreSQL: the condition a server runs against
// the class's table to find the objects a subscription holds. Values only ever travel as
// parameters ($1, $2, ...), never in the text, and the condition keeps the query language's
// meaning where SQL's differs: null is not a third truth value, and strings order by bytes.

/// How classes and properties are named in PostgreSQL: a table per class, `"c_<Class>"`, a
/// column per property, `"p_<property>"`. The prefixes keep names clear of SQL's keywords and of
/// the columns a server adds of its own.
public struct SQLNaming: Hashable, Sendable {
    public let tablePrefix: String
    public let columnPrefix: String

    /// PostgreSQL's longest identifier, in bytes; it cuts longer ones short, which could make
    /// two names one.
    public static let maxIdentifierBytes = 63

    public init(tablePrefix: String = "c_", columnPrefix: String = "p_") {
        self.tablePrefix = tablePrefix
        self.columnPrefix = columnPrefix
    }

    /// The quoted table name of a class.
    ///
    /// - Throws: `SyncError(.queryInvalid)` when the name would be longer than PostgreSQL keeps.
    public func table(_ className: String) throws(SyncError) -> String {
        try Self.quoted(tablePrefix + className, "class '\(className)'")
    }

    /// The quoted column name of a property.
    ///
    /// - Throws: `SyncError(.queryInvalid)` when the name would be longer than PostgreSQL keeps.
    public func column(_ property: String) throws(SyncError) -> String {
        try Self.quoted(columnPrefix + property, "property '\(property)'")
    }

    /// `"name"` with every `"` doubled.
    static func quoted(_ identifier: String, _ what: String) throws(SyncError) -> String {
        guard identifier.utf8.count <= maxIdentifierBytes else {
            throw SyncError(.queryInvalid, "the SQL name of \(what), \(identifier), is longer than the \(maxIdentifierBytes) bytes PostgreSQL keeps")
        }
        var out = "\""
        for c in identifier {
            out.append(c)
            if c == "\"" { out.append("\"") }
        }
        return out + "\""
    }
}

/// A subscription's query as SQL: a condition on the class's table and its parameters.
public struct SubscriptionSQL: Hashable, Sendable {
    /// The class's table, quoted.
    public let table: String
    /// The condition, with `$1`, `$2`, ... for the parameters.
    public let condition: String
    /// The parameters' values, `$1` first.
    public let parameters: [SyncValue]

    /// `SELECT * FROM <table> WHERE <condition>`.
    public var select: String { "SELECT * FROM \(table) WHERE \(condition)" }
}

extension SubscriptionQuery {
    /// PostgreSQL's limit on a statement's parameters.
    public static let maxParameters = 65_535

    /// The query as a condition on the class's table.
    ///
    /// - `==` is `=`, and `!=` is `IS DISTINCT FROM`, so that a null property matches `!= 'x'`
    ///   as it does in the query language; `== null` and `!= null` are `IS NULL` and
    ///   `IS NOT NULL`.
    /// - Inside a NOT, a comparison of an optional property is wrapped in `COALESCE(…, FALSE)`,
    ///   so that a null property makes it false, as the query language does, rather than unknown
    ///   (which NOT would keep unknown, and WHERE would drop).
    /// - Strings order by bytes (`COLLATE "C"`), as Cove orders them.
    /// - `BEGINSWITH`, `ENDSWITH`, `CONTAINS` and `LIKE` are `LIKE` with the pattern as a
    ///   parameter, `%`, `_` and `\` escaped with a backslash (PostgreSQL's default escape), and
    ///   LIKE's `*` and `?` turned into `%` and `_`. With `[c]` they are `ILIKE`, and `==`, `!=`
    ///   and `IN` compare `lower()` of both sides: case folds as the database's locale has it.
    ///
    /// `parameterOffset` numbers the parameters from `$(offset + 1)`, for a statement that
    /// holds several conditions (or parameters of its own before them).
    ///
    /// - Throws: `SyncError(.queryInvalid)` when a table or column name is too long for
    ///   PostgreSQL, or the query needs more than 65,535 parameters (with the offset).
    public func sql(naming: SQLNaming = SQLNaming(), parameterOffset: Int = 0) throws(SyncError) -> SubscriptionSQL {
        var translator = SQLTranslator(naming: naming, offset: max(0, parameterOffset))
        let condition = try translator.predicate(predicate, negated: false)
        guard translator.offset + translator.parameters.count <= Self.maxParameters else {
            throw SyncError(.queryInvalid, "subscription query on class '\(className)' needs \(translator.offset + translator.parameters.count) SQL parameters; PostgreSQL takes at most \(Self.maxParameters)")
        }
        return SubscriptionSQL(table: try naming.table(className), condition: condition, parameters: translator.parameters)
    }
}

private struct SQLTranslator {
    let naming: SQLNaming
    /// How many parameters come before this condition's.
    let offset: Int
    var parameters: [SyncValue] = []

    init(naming: SQLNaming, offset: Int) {
        self.naming = naming
        self.offset = offset
    }

    /// `negated`: whether a NOT encloses the predicate.
    mutating func predicate(_ p: SubscriptionPredicate, negated: Bool) throws(SyncError) -> String {
        switch p {
        case .constant(let b):
            return b ? "TRUE" : "FALSE"
        case .not(let inner):
            let sql = try predicate(inner, negated: true)
            // AND and OR chains come in parentheses already.
            switch inner {
            case .and, .or: return "NOT " + sql
            default: return "NOT (\(sql))"
            }
        case .and(let terms), .or(let terms):
            var parts: [String] = []
            for term in terms { parts.append(try predicate(term, negated: negated)) }
            if case .and = p { return "(" + parts.joined(separator: " AND ") + ")" }
            return "(" + parts.joined(separator: " OR ") + ")"
        case .comparison(let c):
            let (sql, mayBeNull) = try comparison(c)
            return negated && mayBeNull && c.type.isOptional ? "COALESCE(\(sql), FALSE)" : sql
        }
    }

    private mutating func parameter(_ value: SyncValue) -> String {
        parameters.append(value)
        return "$\(offset + parameters.count)"
    }

    /// The comparison's SQL, and whether it is null (rather than false) for a null property.
    private mutating func comparison(_ c: SubscriptionComparison) throws(SyncError) -> (String, Bool) {
        let column = try naming.column(c.property)
        let folded = c.caseInsensitive ? "lower(\(column))" : column
        func side(_ p: String) -> String { c.caseInsensitive ? "lower(\(p))" : p }
        let value = c.values.first ?? .null
        switch c.op {
        case .equal:
            if value == .null { return ("\(column) IS NULL", false) }
            return ("\(folded) = \(side(parameter(value)))", true)
        case .notEqual:
            if value == .null { return ("\(column) IS NOT NULL", false) }
            return ("\(folded) IS DISTINCT FROM \(side(parameter(value)))", false)
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            let ordered = c.type.base == .string ? "\(column) COLLATE \"C\"" : column
            return ("\(ordered) \(c.op.rawValue) \(parameter(value))", true)
        case .beginsWith, .endsWith, .contains, .like:
            guard case .string(let text) = value else { return ("FALSE", false) }
            let pattern: String
            switch c.op {
            case .beginsWith: pattern = Self.escapedForLike(text) + "%"
            case .endsWith: pattern = "%" + Self.escapedForLike(text)
            case .contains: pattern = "%" + Self.escapedForLike(text) + "%"
            default: pattern = Self.likePattern(text)
            }
            return ("\(column) \(c.caseInsensitive ? "ILIKE" : "LIKE") \(parameter(.string(pattern)))", true)
        case .in:
            let present = c.values.filter { $0 != .null }
            let matchesNull = present.count < c.values.count
            if present.isEmpty { return (matchesNull ? "\(column) IS NULL" : "FALSE", false) }
            var list: [String] = []
            for v in present { list.append(side(parameter(v))) }
            let inList = "\(folded) IN (\(list.joined(separator: ", ")))"
            return matchesNull ? ("(\(inList) OR \(column) IS NULL)", false) : (inList, true)
        }
    }

    /// Text that LIKE matches literally: `%`, `_` and `\` escaped by a backslash.
    static func escapedForLike(_ text: String) -> String {
        var out = ""
        for c in text.unicodeScalars {
            if c == "%" || c == "_" || c == "\\" { out.unicodeScalars.append("\\") }
            out.unicodeScalars.append(c)
        }
        return out
    }

    /// The query language's LIKE pattern (`*` any run, `?` one character, nothing escapes) as
    /// SQL's.
    static func likePattern(_ pattern: String) -> String {
        var out = ""
        for c in pattern.unicodeScalars {
            switch c {
            case "*": out.unicodeScalars.append("%")
            case "?": out.unicodeScalars.append("_")
            case "%", "_", "\\":
                out.unicodeScalars.append("\\")
                out.unicodeScalars.append(c)
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }
}
