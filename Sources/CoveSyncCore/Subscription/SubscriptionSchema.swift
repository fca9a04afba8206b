// The little of a schema that subscriptions are checked against: each class's properties and
// their types, read from Cove's schema notation (docs/schema.md) or built in code.

/// A property's type, as Cove's schema notation writes it (`int`, `string?`, `Dog[]`, ...).
public struct SyncPropertyType: Hashable, Sendable, CustomStringConvertible {
    /// The type of the value or of each element.
    public enum Base: Hashable, Sendable {
        case bool, int, float, double, string, data, date, decimal128, objectId, uuid, mixed
        /// A link to an object of the class named.
        case link(String)
        /// Backlinks: the objects of a class whose property links here.
        case linkingObjects(className: String, property: String)
    }

    /// The kind of collection, if the property is one.
    public enum Collection: Hashable, Sendable {
        case list, set, map
    }

    public let base: Base
    /// Whether the value (or each element) may be null.
    public let isOptional: Bool
    public let collection: Collection?

    public init(_ base: Base, optional: Bool = false, collection: Collection? = nil) {
        self.base = base
        // A single link can always be null, as in Cove's schemas.
        if case .link = base, collection == nil { isOptional = true } else { isOptional = optional }
        self.collection = collection
    }

    /// Reads a type in the schema notation: a base type or class name, then `?`, then `[]`, `<>`
    /// or `{}`; or `@links(Class.property)`.
    ///
    /// - Throws: `SyncError(.invalidValue)` naming the text when it is not a type.
    public init(notation: String) throws(SyncError) {
        var text = Substring(notation)
        if text.hasPrefix("@links("), text.hasSuffix(")") {
            let inner = text.dropFirst(7).dropLast()
            let parts = inner.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 2, SyncName.isValid(String(parts[0])), SyncName.isValid(String(parts[1])) else {
                throw SyncError(.invalidValue, "invalid type '\(notation.prefix(80))': expected @links(Class.property)")
            }
            self.init(.linkingObjects(className: String(parts[0]), property: String(parts[1])))
            return
        }
        var collection: Collection? = nil
        for (suffix, kind) in [("[]", Collection.list), ("<>", .set), ("{}", .map)] where text.hasSuffix(suffix) {
            collection = kind
            text = text.dropLast(2)
        }
        let optional = text.hasSuffix("?")
        if optional { text = text.dropLast() }
        let base: Base
        switch text {
        case "bool": base = .bool
        case "int": base = .int
        case "float": base = .float
        case "double": base = .double
        case "string": base = .string
        case "data": base = .data
        case "date": base = .date
        case "decimal128": base = .decimal128
        case "objectId": base = .objectId
        case "uuid": base = .uuid
        case "mixed": base = .mixed
        default:
            guard SyncName.isValid(String(text)) else {
                throw SyncError(.invalidValue, "invalid type '\(notation.prefix(80))': expected a type such as int, string?, Dog or double[]")
            }
            base = .link(String(text))
        }
        self.init(base, optional: optional, collection: collection)
    }

    /// The type in the schema notation.
    public var description: String {
        let name: String
        switch base {
        case .bool: name = "bool"
        case .int: name = "int"
        case .float: name = "float"
        case .double: name = "double"
        case .string: name = "string"
        case .data: name = "data"
        case .date: name = "date"
        case .decimal128: name = "decimal128"
        case .objectId: name = "objectId"
        case .uuid: name = "uuid"
        case .mixed: name = "mixed"
        case .link(let c): name = c
        case .linkingObjects(let c, let p): return "@links(\(c).\(p))"
        }
        let suffix: String
        switch collection {
        case nil: suffix = ""
        case .list: suffix = "[]"
        case .set: suffix = "<>"
        case .map: suffix = "{}"
        }
        return name + (isOptional && base != .mixed ? "?" : "") + suffix
    }
}

/// Classes and their properties' types: what a subscription's query is checked against.
public struct SubscriptionSchema: Hashable, Sendable {
    /// Property types by property name, by class name.
    public let classes: [String: [String: SyncPropertyType]]

    public init(_ classes: [String: [String: SyncPropertyType]]) {
        self.classes = classes
    }

    /// A schema from type notations: `["Dog": ["name": "string", "age": "int?"]]`.
    ///
    /// - Throws: `SyncError(.invalidValue)` naming the class and property of a name or type that
    ///   is not valid.
    public init(notation: [String: [String: String]]) throws(SyncError) {
        var classes: [String: [String: SyncPropertyType]] = [:]
        for (className, properties) in notation {
            try SyncName.check(className, "class")
            var types: [String: SyncPropertyType] = [:]
            for (name, type) in properties {
                try SyncName.check(name, "property")
                do {
                    types[name] = try SyncPropertyType(notation: type)
                } catch {
                    throw SyncError(.invalidValue, "property '\(name)' of class '\(className)': \(error.message)")
                }
            }
            classes[className] = types
        }
        self.init(classes)
    }
}
