// Schema: the classes of a realm in declared order, always valid once built (every initializer
// validates), with lookup by name. Validation errors name the class and the property, because a
// schema is written by hand in JSON, Python or Swift and the message is all the author sees.

/// A validated set of classes.
///
/// Two schemas are equal when they hold equal classes, in any order; keys are not compared (use
/// `changes(from:)` to see what differs).
public struct Schema: Sendable, Equatable {
    /// The classes in declared order.
    public internal(set) var classes: [ObjectSchema]
    var indexByName: [String: Int]
    /// The class key the next new class gets; above every class key this file has used.
    public internal(set) var nextClassKey: UInt32 = 1
    /// The property key the next new property gets; above every property key this file has used.
    public internal(set) var nextPropertyKey: Int64 = 1

    /// A schema of `classes`, validated. Throws `CoveError(.schema)` naming the class and the
    /// property at fault (see `validate()` for the rules).
    public init(_ classes: [ObjectSchema]) throws(CoveError) {
        self.classes = classes
        indexByName = [:]
        for i in self.classes.indices { self.classes[i].normalize() }
        for (i, c) in self.classes.enumerated() {
            if indexByName[c.className] != nil {
                throw CoveError(.schema, "class '\(c.className)' is declared twice")
            }
            indexByName[c.className] = i
        }
        try validate()
    }

    /// The empty schema.
    public static let empty: Schema = Schema(unchecked: [])

    private init(unchecked classes: [ObjectSchema]) {
        self.classes = classes
        indexByName = [:]
        for (i, c) in classes.enumerated() { indexByName[c.className] = i }
    }

    /// The class named `className`, or nil.
    /// - Complexity: O(1)
    public subscript(className: String) -> ObjectSchema? {
        indexByName[className].map { classes[$0] }
    }

    /// The class whose key is `classKey`, or nil.
    /// - Complexity: O(n) in the number of classes.
    public func objectSchema(forClassKey classKey: UInt32) -> ObjectSchema? {
        classes.first(where: { $0.classKey == classKey })
    }

    /// The class names in declared order.
    public var classNames: [String] { classes.map(\.className) }

    /// Equal classes, in any order; keys not compared.
    public static func == (a: Schema, b: Schema) -> Bool {
        a.classes.count == b.classes.count && a.classes.allSatisfy { b[$0.className] == $0 }
    }

    /// Types a property may be indexed on.
    static let indexableTypes: Set<PropertyType> = [.bool, .int, .string, .date, .objectId, .uuid, .mixed]
    /// Types a primary key may have.
    static let primaryKeyTypes: Set<PropertyType> = [.int, .string, .objectId, .uuid]

    /// Checks the rules of the object model; throws `CoveError(.schema)` naming the class and
    /// property. Class and property names are ASCII identifiers (a letter or '_', then letters,
    /// digits, '_'), unique, and a class is not named after a type ("int", "mixed"...). A link's
    /// class exists; sets of embedded objects are refused; lists and sets of links hold no null.
    /// Backlinks are a single property (no collection, not optional) naming an existing class
    /// and, in it, a link, list or set of links to this class. A primary key is a property of
    /// type int, string, objectId or uuid (optional allowed), not a collection, and not on an
    /// embedded class. Indexes are on bool, int, string, date, objectId, uuid or mixed
    /// properties that are not collections; full-text indexes on non-collection strings, and a
    /// property is not both. Embedded classes may be used from any number of places (or none).
    public func validate() throws(CoveError) {
        for cls in classes {
            let c = cls.className
            guard Property.isIdentifier(c) else {
                throw CoveError(.schema, "class name \(JSONValue.quoted(c)) is not an identifier (a letter or '_', then letters, digits or '_')")
            }
            if PropertyType.primitivesByName[c] != nil {
                throw CoveError(.schema, "class name '\(c)' is the name of a property type")
            }
            var seen = Set<String>()
            for p in cls.properties {
                let what = "property '\(p.name)' of class '\(c)'"
                guard Property.isIdentifier(p.name) else {
                    throw CoveError(.schema, "property name \(JSONValue.quoted(p.name)) of class '\(c)' is not an identifier (a letter or '_', then letters, digits or '_')")
                }
                guard seen.insert(p.name).inserted else {
                    throw CoveError(.schema, "\(what) is declared twice")
                }
                try validateType(of: p, in: cls, what: what)
                if p.isIndexed && !p.isPrimaryKey {
                    guard p.collection == .none, Schema.indexableTypes.contains(p.type) else {
                        throw CoveError(.schema, "\(what) cannot be indexed: \(p.typeNotation) is not one of bool, int, string, date, objectId, uuid, mixed")
                    }
                }
                if p.isFullText {
                    guard p.collection == .none, p.type == .string else {
                        throw CoveError(.schema, "\(what) cannot have a full-text index: it is \(p.typeNotation), not string")
                    }
                    if p.isIndexed {
                        throw CoveError(.schema, "\(what) cannot have both an index and a full-text index")
                    }
                }
            }
            if let pk = cls.primaryKey {
                guard let p = cls[property: pk] else {
                    throw CoveError(.schema, "primary key '\(pk)' of class '\(c)' is not a property of the class")
                }
                if cls.isEmbedded {
                    throw CoveError(.schema, "embedded class '\(c)' cannot have a primary key ('\(pk)')")
                }
                guard p.collection == .none, Schema.primaryKeyTypes.contains(p.type) else {
                    throw CoveError(.schema, "property '\(pk)' of class '\(c)' cannot be the primary key: it is \(p.typeNotation), and a primary key is int, string, objectId or uuid (optional allowed)")
                }
            }
        }
    }

    private func validateType(of p: Property, in cls: ObjectSchema, what: String) throws(CoveError) {
        switch p.type {
        case .object(let target):
            guard let targetClass = self[target] else {
                if let first = target.unicodeScalars.first, first.properties.isLowercase {
                    throw CoveError(.schema, "\(what) has unknown type \(JSONValue.quoted(target)) (expected a type such as \"int\", \"string?\", \"Dog\", \"int[]\", \"string<>\", \"double{}\" or \"@links(Class.property)\")")
                }
                throw CoveError(.schema, "\(what) links to class '\(target)', which is not in the schema")
            }
            if targetClass.isEmbedded && p.collection == .set {
                throw CoveError(.schema, "\(what) is a set of embedded objects ('\(target)'); sets cannot hold embedded objects")
            }
            if p.isOptional && (p.collection == .list || p.collection == .set) {
                throw CoveError(.schema, "\(what) is a \(p.collection.rawValue) of links, which cannot hold null ('\(target)?\(p.collection.suffix)')")
            }
        case .linkingObjects(let origin, let originProperty):
            if p.collection != .none {
                throw CoveError(.schema, "\(what) is a \(p.collection.rawValue) of backlinks; backlinks are written '@links(Class.property)' alone")
            }
            if p.isOptional {
                throw CoveError(.schema, "\(what) is optional backlinks; backlinks cannot be optional")
            }
            guard let originClass = self[origin] else {
                throw CoveError(.schema, "\(what) is backlinks from class '\(origin)', which is not in the schema")
            }
            guard let source = originClass[property: originProperty] else {
                throw CoveError(.schema, "\(what) is backlinks from '\(origin).\(originProperty)', but class '\(origin)' has no property '\(originProperty)'")
            }
            guard source.type == .object(cls.className), source.collection != .map else {
                throw CoveError(.schema, "\(what) is backlinks from '\(origin).\(originProperty)', which is \(source.typeNotation), not a link, list or set of links to '\(cls.className)'")
            }
        default:
            break
        }
    }
}
