// ObjectSchema: one class of the schema, its properties in declared order, its primary key and
// whether its objects are embedded (owned by exactly one parent, deleted with it).

/// The schema of one class.
///
/// Equality compares the class name, the embedded flag, the primary key and the properties in
/// order; keys are not compared.
public struct ObjectSchema: Sendable, Equatable {
    /// The class name, an identifier unique in the schema.
    public var className: String
    /// The properties in declared order.
    public var properties: [Property]
    /// The primary key's property name, if the class has one.
    public var primaryKey: String?
    /// Whether objects of this class are embedded objects.
    public var isEmbedded: Bool
    /// The class's stable key within the file, nil until `Schema.assigningKeys(previous:)`.
    public var classKey: UInt32?

    /// A class. The primary key property gets `isPrimaryKey` and `isIndexed` set; `Schema`'s
    /// initializers validate the rest.
    public init(className: String, properties: [Property], primaryKey: String? = nil,
                isEmbedded: Bool = false, classKey: UInt32? = nil) {
        self.className = className
        self.properties = properties
        self.primaryKey = primaryKey
        self.isEmbedded = isEmbedded
        self.classKey = classKey
        normalize()
    }

    /// Makes the per-property flags agree with the class: the primary key flag follows
    /// `primaryKey`, and implied nullability is set.
    mutating func normalize() {
        for i in properties.indices {
            let isKey = properties[i].name == primaryKey
            properties[i].isPrimaryKey = isKey
            if isKey { properties[i].isIndexed = true }
            properties[i].normalizeImpliedOptionality()
        }
    }

    /// The property named `name`, or nil.
    /// - Complexity: O(n) in the number of properties.
    public subscript(property name: String) -> Property? {
        index(ofProperty: name).map { properties[$0] }
    }

    /// The position of the property named `name` in declared order, or nil.
    public func index(ofProperty name: String) -> Int? {
        // Compares the names in place: a predicate over the elements copied each property.
        for i in properties.indices where properties[i].name == name { return i }
        return nil
    }

    /// The stored properties: all but backlinks, in declared order.
    public var persistedProperties: [Property] {
        properties.filter { !$0.isBacklinks }
    }

    /// The primary key property, if any.
    public var primaryKeyProperty: Property? {
        primaryKey.flatMap { self[property: $0] }
    }

    /// Equal in everything but keys.
    public static func == (a: ObjectSchema, b: ObjectSchema) -> Bool {
        a.className == b.className && a.isEmbedded == b.isEmbedded && a.primaryKey == b.primaryKey
            && a.properties == b.properties
    }
}
