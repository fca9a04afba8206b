// Creating, finding and deleting objects by class name: the dynamic API of a realm.
import CoveStorage

extension Realm {
    /// Creates an object of `className` inside a write: its primary key (when the class has
    /// one), then `values` by property name; other properties keep their defaults (null when
    /// optional; 0, false, "" otherwise).
    /// - Throws: `.notInWrite`, `.notFound` (class or property), `.invalidArgument` (a missing
    ///   or unexpected primary key, an embedded class), `.duplicateKey`, `.wrongType`.
    @discardableResult
    public func dynamicCreate(_ className: String, primaryKey: Value? = nil,
                              values: [(String, Value)] = []) throws(CoveError) -> DynamicObject {
        let store = try objectStore()
        let cls = try store.objectSchema(className)
        let key = try store.create(cls, primaryKey: primaryKey, values: values)
        return DynamicObject(realm: self, objectSchema: cls, classKey: try store.classKey(of: cls), objectKey: key)
    }

    /// Creates the object with primary key `primaryKey`, or updates the one that has it: sets
    /// `values` either way.
    @discardableResult
    public func dynamicCreateOrUpdate(_ className: String, primaryKey: Value,
                                      values: [(String, Value)] = []) throws(CoveError) -> DynamicObject {
        if let existing = try dynamicObject(ofType: className, forPrimaryKey: primaryKey) {
            for (name, value) in values where name != existing.objectSchema.primaryKey {
                try existing.setValue(value, forKey: name)
            }
            return existing
        }
        return try dynamicCreate(className, primaryKey: primaryKey, values: values)
    }

    /// The object of `className` whose primary key is `primaryKey`, or nil.
    /// - Throws: `.notFound` (class), `.invalidArgument` (no primary key), `.wrongType`.
    public func dynamicObject(ofType className: String, forPrimaryKey primaryKey: Value) throws(CoveError) -> DynamicObject? {
        let store = try objectStore()
        let cls = try store.objectSchema(className)
        guard let key = try store.find(cls, primaryKey: primaryKey) else { return nil }
        return DynamicObject(realm: self, objectSchema: cls, classKey: try store.classKey(of: cls), objectKey: key)
    }

    /// The object of `className` with object key `objectKey`, or nil when there is none.
    public func dynamicObject(ofType className: String, objectKey: Int64) throws(CoveError) -> DynamicObject? {
        let store = try objectStore()
        let cls = try store.objectSchema(className)
        guard try store.exists(cls, objectKey) else { return nil }
        return DynamicObject(realm: self, objectSchema: cls, classKey: try store.classKey(of: cls), objectKey: objectKey)
    }

    /// The object a link names, or nil when it no longer exists.
    public func object(for link: ObjectLink) throws(CoveError) -> DynamicObject? {
        let store = try objectStore()
        let cls = try store.objectSchema(classKey: link.classKey)
        guard try store.exists(cls, link.objectKey) else { return nil }
        return DynamicObject(realm: self, objectSchema: cls, classKey: link.classKey, objectKey: link.objectKey)
    }

    /// Every object of `className` at the realm's current version, in object-key order (creation
    /// order). A snapshot array: the live `Results` of the query layer replace it.
    public func dynamicObjects(_ className: String) throws(CoveError) -> [DynamicObject] {
        let store = try objectStore()
        let cls = try store.objectSchema(className)
        let classKey = try store.classKey(of: cls)
        return try store.objectKeys(cls).map { DynamicObject(realm: self, objectSchema: cls, classKey: classKey, objectKey: $0) }
    }

    /// The objects of `className` whose property `property` equals `value`, in object-key order:
    /// through the primary-key or secondary index when the property has one, by a scan
    /// otherwise.
    /// - Throws: `.notFound` (class or property), `.wrongType` (a collection or backlinks
    ///   property, or a value of another type).
    /// - Complexity: O(log n + m) for m matches with an index; O(n) without.
    public func dynamicObjects(_ className: String, where property: String, equals value: Value) throws(CoveError) -> [DynamicObject] {
        let store = try objectStore()
        let cls = try store.objectSchema(className)
        let p = try ObjectStore.property(property, of: cls)
        guard p.collection == .none, !p.isBacklinks else {
            throw CoveError(.wrongType, "property '\(property)' of class '\(className)' is \(p.typeNotation), not a single value")
        }
        // The value as the property stores it (ints widened, types checked).
        let target = try p.type.objectClassName.map { (name) throws(CoveError) in try store.classKey(of: try store.objectSchema(name)) } ?? 0
        let wanted = try PropertyCodec.value(try PropertyCodec.cell(value, for: p, of: cls), for: p, targetClassKey: target)
        let classKey = try store.classKey(of: cls)
        let keys: [Int64]
        if p.isPrimaryKey {
            keys = try store.find(cls, primaryKey: wanted).map { [$0] } ?? []
        } else if p.isIndexed {
            keys = try store.indexLookup(cls, p, wanted)
        } else {
            var matches: [Int64] = []
            for key in try store.objectKeys(cls) where try store.get(cls, key, p) == wanted { matches.append(key) }
            keys = matches
        }
        return keys.map { DynamicObject(realm: self, objectSchema: cls, classKey: classKey, objectKey: $0) }
    }

    /// The number of objects of `className`.
    public func objectCount(_ className: String) throws(CoveError) -> UInt64 {
        let store = try objectStore()
        return try store.count(try store.objectSchema(className))
    }

    /// Deletes an object inside a write; links to it become null.
    /// - Throws: `.notInWrite`, `.invalidated`, `.invalidArgument` (an object of another realm).
    public func delete(_ object: DynamicObject) throws(CoveError) {
        guard object.realm === self else {
            throw CoveError(.invalidArgument, "the object belongs to another realm")
        }
        try objectStore().delete(object.objectSchema, object.objectKey)
    }
}
