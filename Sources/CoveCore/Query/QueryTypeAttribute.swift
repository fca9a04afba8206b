// The type attribute of a mixed value, `.@type` in the query language (docs/query-language.md): each value
// type is one bit, and a name a query compares `@type` with stands for one or several of them
// ('numeric' is int, float, double and decimal). Names are read without regard to case, with
// realm-core's aliases.

/// A set of value types: the type of one value (one bit), or what a type name matches.
struct QueryTypeAttribute: OptionSet, Hashable, Sendable {
    let rawValue: Int64

    static let null = QueryTypeAttribute(rawValue: 1 << 0)
    static let bool = QueryTypeAttribute(rawValue: 1 << 1)
    static let int = QueryTypeAttribute(rawValue: 1 << 2)
    static let float = QueryTypeAttribute(rawValue: 1 << 3)
    static let double = QueryTypeAttribute(rawValue: 1 << 4)
    static let decimal = QueryTypeAttribute(rawValue: 1 << 5)
    static let string = QueryTypeAttribute(rawValue: 1 << 6)
    static let binary = QueryTypeAttribute(rawValue: 1 << 7)
    static let date = QueryTypeAttribute(rawValue: 1 << 8)
    static let objectId = QueryTypeAttribute(rawValue: 1 << 9)
    static let uuid = QueryTypeAttribute(rawValue: 1 << 10)
    static let link = QueryTypeAttribute(rawValue: 1 << 11)
    /// Nested collections held by mixed values.
    static let list = QueryTypeAttribute(rawValue: 1 << 12)
    static let dictionary = QueryTypeAttribute(rawValue: 1 << 13)
    static let numeric: QueryTypeAttribute = [.int, .float, .double, .decimal]

    /// The type of one value.
    init(of value: Value) {
        switch value {
        case .null: self = .null
        case .bool: self = .bool
        case .int: self = .int
        case .float: self = .float
        case .double: self = .double
        case .decimal128: self = .decimal
        case .string: self = .string
        case .data: self = .binary
        case .timestamp: self = .date
        case .objectId: self = .objectId
        case .uuid: self = .uuid
        case .link: self = .link
        case .list: self = .list
        case .dictionary: self = .dictionary
        }
    }

    init(rawValue: Int64) { self.rawValue = rawValue }

    /// The names `@type` compares with (lower case), realm-core's aliases included.
    static let names: [String: QueryTypeAttribute] = [
        "null": .null, "bool": .bool, "boolean": .bool, "int": .int, "integer": .int, "float": .float,
        "double": .double, "decimal": .decimal, "decimal128": .decimal, "numeric": .numeric,
        "string": .string, "char": .string, "binary": .binary, "bindata": .binary, "data": .binary,
        "date": .date, "timestamp": .date, "objectid": .objectId, "uuid": .uuid, "guid": .uuid,
        "object": .link, "objectlink": .link, "link": .link,
        "list": .list, "array": .list, "dictionary": .dictionary, "collection": [.list, .dictionary],
    ]

    /// What a type name stands for; nil for an unknown name.
    static func named(_ name: String) -> QueryTypeAttribute? { names[name.lowercased()] }

    /// The names, for messages.
    static var knownNames: String { names.keys.sorted().map { "'\($0)'" }.joined(separator: ", ") }
}
