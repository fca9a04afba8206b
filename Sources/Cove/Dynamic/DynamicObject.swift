// DynamicObject: an object reached by class and property names, for schemas known only at run
// time (realm-swift's dynamic API). Every read goes through to the realm's current version.
import CoveCore
import CoveStorage

/// An object of a realm, read and written by property name.
///
/// A handle stays valid while the object exists: after a delete (in this realm or, once seen,
/// another) reads and writes fail with `.invalidated`.
public final class DynamicObject: CustomStringConvertible {
    /// The realm the object belongs to.
    public let realm: Realm
    /// The object's class.
    public let objectSchema: ObjectSchema
    /// The object's key within its class (never reused).
    public let objectKey: Int64
    let classKey: UInt32

    init(realm: Realm, objectSchema: ObjectSchema, classKey: UInt32, objectKey: Int64) {
        self.realm = realm
        self.objectSchema = objectSchema
        self.classKey = classKey
        self.objectKey = objectKey
    }

    /// The object as a link value, to store in a link property.
    public var link: ObjectLink { ObjectLink(classKey: classKey, objectKey: objectKey) }

    /// Whether the object was deleted (or its realm closed).
    public var isInvalidated: Bool {
        guard let store = try? realm.objectStore() else { return true }
        return !((try? store.exists(objectSchema, objectKey)) ?? false)
    }

    /// The value of a property.
    /// - Throws: `.notFound` (no such property), `.invalidated`, `.wrongType` (a collection or
    ///   backlinks property), `.closed`.
    public func value(forKey name: String) throws(CoveError) -> Value {
        try realm.objectStore().get(objectSchema, objectKey, named: name)
    }

    /// Sets a property inside a write. Ints are accepted for float and double properties.
    /// - Throws: `.notInWrite`, `.notFound`, `.wrongType` (naming class, property, expected and
    ///   given type), `.duplicateKey` (a primary key taken), `.invalidArgument` (a link to a
    ///   missing object), `.invalidated`, `.closed`.
    public func setValue(_ value: Value, forKey name: String) throws(CoveError) {
        let store = try realm.objectStore()
        try store.set(objectSchema, objectKey, try ObjectStore.property(name, of: objectSchema), value)
    }

    /// The value of the property whose key is `propertyKey` (`Property.key`): as
    /// `value(forKey:)`, without looking the name up.
    @_spi(CoveBindings) public func value(forPropertyKey propertyKey: Int64) throws(CoveError) -> Value {
        try realm.objectStore().get(objectSchema, objectKey, propertyKey: propertyKey)
    }

    /// Sets the property whose key is `propertyKey` (`Property.key`): as `setValue(_:forKey:)`,
    /// without looking the name up.
    @_spi(CoveBindings) public func setValue(_ value: Value, forPropertyKey propertyKey: Int64) throws(CoveError) {
        try realm.objectStore().set(objectSchema, objectKey, propertyKey: propertyKey, value)
    }

    /// Reads a property: `dog["name"]`.
    public subscript(name: String) -> Value {
        get throws(CoveError) { try value(forKey: name) }
    }

    /// The object a link property points at, or nil when the link is null.
    public func linkedObject(_ name: String) throws(CoveError) -> DynamicObject? {
        let property = try ObjectStore.property(name, of: objectSchema)
        guard property.isLink, property.collection == .none else {
            throw CoveError(.wrongType, "property '\(name)' of class '\(objectSchema.className)' is \(property.typeNotation), not a link")
        }
        guard case .link(let link) = try value(forKey: name) else { return nil }
        return try realm.object(for: link)
    }

    /// The objects whose backlinks property `name` (`@links(Person.dogs)`) points here, one
    /// per link as in Realm: a Person whose `dogs` holds this dog twice is there twice. In
    /// object-key order of the linking objects.
    /// - Throws: `.notFound` (no such property), `.wrongType` (not backlinks), `.invalidated`,
    ///   `.closed`.
    public func linkingObjects(_ name: String) throws(CoveError) -> [DynamicObject] {
        let (source, classKey, keys) = try linkingKeys(name, requireExisting: true)
        return keys.map { DynamicObject(realm: realm, objectSchema: source, classKey: classKey, objectKey: $0) }
    }

    /// The class, class key and object keys of the objects linking here through backlinks
    /// property `name`, one key per link; no keys when the object is gone and
    /// `requireExisting` is false.
    func linkingKeys(_ name: String, requireExisting: Bool) throws(CoveError) -> (ObjectSchema, UInt32, [Int64]) {
        let property = try ObjectStore.property(name, of: objectSchema)
        guard case .linkingObjects(let sourceName, let sourceProperty) = property.type else {
            throw CoveError(.wrongType, "property '\(name)' of class '\(objectSchema.className)' is not backlinks")
        }
        let store = try realm.objectStore()
        let source = try store.objectSchema(sourceName)
        let via = try ObjectStore.property(sourceProperty, of: source)
        let key = try store.classKey(of: source)
        guard try store.exists(objectSchema, objectKey) else {
            if !requireExisting { return (source, key, []) }
            throw CoveError(.invalidated, "the \(objectSchema.className) object \(objectKey) was deleted")
        }
        return (source, key, try store.backlinks(to: objectKey, from: source, via: via))
    }

    public var description: String {
        if isInvalidated { return "\(objectSchema.className)(deleted)" }
        let fields = objectSchema.properties.compactMap { p -> String? in
            guard !p.isBacklinks, p.collection == .none, let v = try? value(forKey: p.name) else { return nil }
            return "\(p.name) = \(v)"
        }
        return "\(objectSchema.className) { \(fields.joined(separator: "; ")) }"
    }
}
