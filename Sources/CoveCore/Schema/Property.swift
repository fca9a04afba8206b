// Property: one declared property of a class, its type and collection kind, and the flags the
// object layer needs (optional, indexed, primary key, full-text). The notation string of a
// property ("int?[]", "Dog{}", "@links(Person.dogs)") is defined here, in both directions.

/// The type of a property's values (of its elements, for a collection).
public enum PropertyType: Hashable, Sendable {
    /// A bool.
    case bool
    /// A 64-bit integer.
    case int
    /// A 32-bit float.
    case float
    /// A 64-bit double.
    case double
    /// A string.
    case string
    /// Binary data.
    case data
    /// A date (`Timestamp`).
    case date
    /// A decimal128.
    case decimal128
    /// An ObjectId.
    case objectId
    /// A UUID.
    case uuid
    /// Any value of the types above, or a link; always nullable.
    case mixed
    /// A link to an object of the named class (an embedded object when that class is embedded).
    case object(String)
    /// Backlinks: the objects of class `className` whose property `property` links to this one.
    /// Computed, never stored.
    case linkingObjects(String, property: String)

    /// The primitive types by their notation names.
    static let primitivesByName: [String: PropertyType] = [
        "bool": .bool, "int": .int, "float": .float, "double": .double, "string": .string,
        "data": .data, "date": .date, "decimal128": .decimal128, "objectId": .objectId,
        "uuid": .uuid, "mixed": .mixed,
    ]

    /// The notation name of this type: "int", "objectId", the class name of a link,
    /// "@links(Person.dogs)" for backlinks.
    public var name: String {
        switch self {
        case .bool: "bool"
        case .int: "int"
        case .float: "float"
        case .double: "double"
        case .string: "string"
        case .data: "data"
        case .date: "date"
        case .decimal128: "decimal128"
        case .objectId: "objectId"
        case .uuid: "uuid"
        case .mixed: "mixed"
        case .object(let c): c
        case .linkingObjects(let c, let p): "@links(\(c).\(p))"
        }
    }

    /// The linked class of a link, else nil.
    public var objectClassName: String? {
        if case .object(let c) = self { return c }
        return nil
    }
}

/// Whether a property holds one value or a collection of them.
public enum CollectionKind: String, Hashable, Sendable, CaseIterable {
    /// One value.
    case none
    /// An ordered list, duplicates allowed (`"int[]"`).
    case list
    /// A set of distinct values (`"int<>"`).
    case set
    /// A map from string keys to values (`"int{}"`).
    case map

    /// The notation suffix: "", "[]", "<>", "{}".
    var suffix: String {
        switch self {
        case .none: ""
        case .list: "[]"
        case .set: "<>"
        case .map: "{}"
        }
    }
}

/// One property of a class.
///
/// Equality compares everything but `key`: two schemas read from different files are equal when
/// they declare the same thing.
public struct Property: Sendable, CustomStringConvertible {
    /// The property's name, an identifier unique within its class.
    public var name: String
    /// The type of its values (of its elements, for a collection).
    public var type: PropertyType
    /// One value, or a list, set or map of them.
    public var collection: CollectionKind
    /// Whether a value (an element, for a collection) may be null. Always true for a single link,
    /// a map of links and mixed; always false for backlinks and lists or sets of links.
    public var isOptional: Bool
    /// Whether the property has a secondary index (true for the primary key).
    public var isIndexed: Bool
    /// Whether the property has an index of its own beside the primary key's: indexed, a
    /// single stored value, not the primary key.
    var hasSecondaryIndex: Bool { isIndexed && !isPrimaryKey && collection == .none && !isBacklinks }
    /// Whether this is its class's primary key.
    public var isPrimaryKey: Bool
    /// Whether the property has a full-text index (strings only), for the TEXT operator.
    public var isFullText: Bool
    /// The property's stable key within the file, nil until `Schema.assigningKeys(previous:)`.
    public var key: Int64?

    /// A property; nullability implied by the type (single links, maps of links, mixed) is set
    /// whatever `isOptional` says.
    public init(name: String, type: PropertyType, collection: CollectionKind = .none,
                isOptional: Bool = false, isIndexed: Bool = false, isPrimaryKey: Bool = false,
                isFullText: Bool = false, key: Int64? = nil) {
        self.name = name
        self.type = type
        self.collection = collection
        self.isOptional = isOptional
        self.isIndexed = isIndexed || isPrimaryKey
        self.isPrimaryKey = isPrimaryKey
        self.isFullText = isFullText
        self.key = key
        normalizeImpliedOptionality()
    }

    mutating func normalizeImpliedOptionality() {
        switch type {
        case .object: if collection == .none || collection == .map { isOptional = true }
        case .mixed: isOptional = true
        default: break
        }
    }

    /// True for a link or a collection of links.
    public var isLink: Bool { type.objectClassName != nil }
    /// True for backlinks (computed, not stored).
    public var isBacklinks: Bool {
        if case .linkingObjects = type { return true }
        return false
    }

    /// The type in the schema notation: "int", "string?", "Dog?", "Dog[]", "int?[]", "double{}",
    /// "@links(Person.dogs)". Mixed is written without '?' (it is always nullable), a single link
    /// with it.
    public var typeNotation: String {
        if isBacklinks { return type.name }
        let question = isOptional && type != .mixed && !(isLink && collection == .map) ? "?" : ""
        return type.name + question + collection.suffix
    }

    /// The property as the notation writes it: `name: int?[]`.
    public var description: String { "\(name): \(typeNotation)" }

    /// True when the two properties would store values the same way: same type, collection and
    /// optionality.
    package func hasSameShape(as other: Property) -> Bool {
        type == other.type && collection == other.collection && isOptional == other.isOptional
    }
}

extension Property: Equatable {
    /// Equal in everything but `key`.
    public static func == (a: Property, b: Property) -> Bool {
        a.name == b.name && a.hasSameShape(as: b) && a.isIndexed == b.isIndexed
            && a.isPrimaryKey == b.isPrimaryKey && a.isFullText == b.isFullText
    }
}

extension Property {
    /// Parses a type in the notation: a base type ("int", "Dog", "@links(Person.dogs)"), then
    /// '?' for optional, then "[]", "<>" or "{}" for a collection. Returns nil when the text is
    /// not of that shape; whether a class name exists is checked by validation.
    static func parseNotation(_ text: String) -> (type: PropertyType, collection: CollectionKind, optional: Bool)? {
        var base = Substring(text)
        var collection = CollectionKind.none
        for kind in [CollectionKind.list, .set, .map] where base.hasSuffix(kind.suffix) {
            collection = kind
            base = base.dropLast(2)
            break
        }
        var optional = false
        if base.hasSuffix("?") {
            optional = true
            base = base.dropLast()
        }
        if base.hasPrefix("@links(") && base.hasSuffix(")") {
            // Collections and '?' of backlinks are parsed so that validation can name the fault.
            let inner = base.dropFirst(7).dropLast()
            guard let dot = inner.firstIndex(of: ".") else { return nil }
            let cls = String(inner[..<dot])
            let prop = String(inner[inner.index(after: dot)...])
            guard isIdentifier(cls), isIdentifier(prop) else { return nil }
            return (.linkingObjects(cls, property: prop), collection, optional)
        }
        let name = String(base)
        if let primitive = PropertyType.primitivesByName[name] {
            return (primitive, collection, optional)
        }
        guard isIdentifier(name) else { return nil }
        return (.object(name), collection, optional)
    }

    /// True for an ASCII identifier: a letter or '_', then letters, digits or '_'.
    static func isIdentifier(_ s: String) -> Bool {
        guard let first = s.utf8.first else { return false }
        func isLetter(_ c: UInt8) -> Bool {
            (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z")) || c == UInt8(ascii: "_")
        }
        guard isLetter(first) else { return false }
        return s.utf8.allSatisfy { isLetter($0) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) }
    }
}
