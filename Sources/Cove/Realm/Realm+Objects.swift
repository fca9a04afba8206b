// Creating, finding and deleting objects by class name: the dynamic API of a realm.
import CoveCore
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
        let cls = try store.visibleObjectSchema(className)
        let key = try store.create(cls, primaryKey: primaryKey, values: values)
        return DynamicObject(realm: self, objectSchema: cls, classKey: try store.classKey(of: cls), objectKey: key)
    }

    /// A creator of objects of `className` from values given by position, one for each of
    /// `properties` in order: the names are checked and resolved once, not at every object, so
    /// a bulk load costs less per object than `dynamicCreate` (SQL's prepared statement, for
    /// creates). Use it inside writes of this realm.
    /// `collections` names lists, sets and maps whose elements each call gives too (see
    /// `DynamicCreator.create(_:elements:)`): each is written once, a small one straight into
    /// its object's collection area.
    /// - Throws: `.notFound` (class or property), `.invalidArgument` (an embedded class, a
    ///   backlinks property, a name given twice, the primary key missing from `properties`),
    ///   `.wrongType` (a collection among `properties`, a single value or a collection of
    ///   embedded objects among `collections`).
    public func dynamicCreator(_ className: String, properties: [String], collections: [String] = []) throws(CoveError) -> DynamicCreator {
        let store = try objectStore()
        let cls = try store.visibleObjectSchema(className)
        let plan = try store.createPlan(cls, properties: properties)
        try DynamicCreator.checkCollections(collections, of: cls, besides: properties, store: store)
        return DynamicCreator(realm: self, className: className, properties: properties, collections: collections,
                              plan: plan, store: store)
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
        let cls = try store.visibleObjectSchema(className)
        guard let key = try store.find(cls, primaryKey: primaryKey) else { return nil }
        return DynamicObject(realm: self, objectSchema: cls, classKey: try store.classKey(of: cls), objectKey: key)
    }

    /// The object of `className` with object key `objectKey`, or nil when there is none.
    public func dynamicObject(ofType className: String, objectKey: Int64) throws(CoveError) -> DynamicObject? {
        let store = try objectStore()
        let cls = try store.visibleObjectSchema(className)
        guard try store.exists(cls, objectKey) else { return nil }
        return DynamicObject(realm: self, objectSchema: cls, classKey: try store.classKey(of: cls), objectKey: objectKey)
    }

    /// The object of the class whose key is `classKey` with object key `objectKey`, whether it
    /// exists or not (keys are never reused: one that no longer exists reads as deleted).
    /// - Throws: `.notFound` (no visible class has the key), `.closed`.
    @_spi(CoveBindings) public func dynamicObject(classKey: UInt32, objectKey: Int64) throws(CoveError) -> DynamicObject {
        let store = try objectStore()
        return DynamicObject(realm: self, objectSchema: try store.visibleObjectSchema(classKey: classKey),
                             classKey: classKey, objectKey: objectKey)
    }

    /// Whether the object of the class whose key is `classKey` with object key `objectKey`
    /// exists at the realm's current version.
    /// - Throws: `.notFound` (no visible class has the key), `.closed`.
    @_spi(CoveBindings) public func objectExists(classKey: UInt32, objectKey: Int64) throws(CoveError) -> Bool {
        try objectStore().exists(classKey: classKey, objectKey)
    }

    /// The value of the property whose key is `propertyKey` of the object of the class whose key
    /// is `classKey` with object key `objectKey`: `DynamicObject.value(forPropertyKey:)` without
    /// an object.
    /// - Throws: `.notFound` (no visible class has the key, or the class no property),
    ///   `.invalidated` (no such object), `.wrongType` (a collection or backlinks property),
    ///   `.closed`.
    @_spi(CoveBindings) public func value(classKey: UInt32, objectKey: Int64, propertyKey: Int64) throws(CoveError) -> Value {
        try objectStore().get(classKey: classKey, objectKey, propertyKey: propertyKey)
    }

    /// Sets the property whose key is `propertyKey` of the object of the class whose key is
    /// `classKey` with object key `objectKey`, inside a write: `DynamicObject.setValue(_:forPropertyKey:)`
    /// without an object.
    /// - Throws: as `DynamicObject.setValue(_:forPropertyKey:)`, and `.notFound` when no visible
    ///   class has the key.
    @_spi(CoveBindings) public func setValue(_ value: Value, classKey: UInt32, objectKey: Int64, propertyKey: Int64) throws(CoveError) {
        try objectStore().set(classKey: classKey, objectKey, propertyKey: propertyKey, value)
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
        let cls = try store.visibleObjectSchema(className)
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
        let cls = try store.visibleObjectSchema(className)
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
        return try store.count(try store.visibleObjectSchema(className))
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

/// Creates objects of one class from values given by position (`Realm.dynamicCreator`).
public final class DynamicCreator {
    /// The realm the objects go into.
    public let realm: Realm
    /// The class of the objects.
    public let className: String
    /// The properties whose values each call gives, in order.
    public let properties: [String]
    /// The lists, sets and maps whose elements each call gives, in order.
    public let collections: [String]
    private var plan: ObjectStore.CreatePlan
    private var collectionProperties: [Property]
    /// The prepared collections of the last create, kept (emptied) for the next one.
    private var preparedScratch: [ObjectStore.PreparedCollection] = []
    /// The serial of the transaction's store `plan` was resolved in: a later write resolves it
    /// again, so a migration between them cannot leave it pointing at the wrong properties.
    private var store: UInt64

    init(realm: Realm, className: String, properties: [String], collections: [String], plan: ObjectStore.CreatePlan,
         store: ObjectStore) {
        self.realm = realm
        self.className = className
        self.properties = properties
        self.collections = collections
        self.plan = plan
        collectionProperties = collections.compactMap { plan.cls[property: $0] }
        self.store = store.serial
    }

    /// Checks that `names` are distinct lists, sets and maps of `cls`, none of embedded
    /// objects, none among `singles`.
    static func checkCollections(_ names: [String], of cls: ObjectSchema, besides singles: [String], store: ObjectStore) throws(CoveError) {
        for (j, name) in names.enumerated() {
            guard let p = cls[property: name], !p.isBacklinks else {
                if let p = cls[property: name], p.isBacklinks {
                    throw CoveError(.invalidArgument, "property '\(name)' of class '\(cls.className)' is backlinks: it is computed and cannot be set")
                }
                throw CoveError(.notFound, "class '\(cls.className)' has no property '\(name)'")
            }
            guard p.collection != .none else {
                throw CoveError(.wrongType, "property '\(name)' of class '\(cls.className)' is \(p.typeNotation): give it as one value, not as elements")
            }
            if let target = p.type.objectClassName, try store.objectSchema(target).isEmbedded {
                throw CoveError(.wrongType, "property '\(name)' of class '\(cls.className)' holds embedded \(target) objects: create them in place, one by one")
            }
            if names[..<j].contains(name) || singles.contains(name) {
                throw CoveError(.invalidArgument, "property '\(name)' of class '\(cls.className)' is named twice")
            }
        }
    }

    private func currentStore() throws(CoveError) -> ObjectStore {
        let s = try realm.objectStore()
        if s.serial != store {
            let cls = try s.visibleObjectSchema(className)
            plan = try s.createPlan(cls, properties: properties)
            try Self.checkCollections(collections, of: cls, besides: properties, store: s)
            collectionProperties = collections.compactMap { cls[property: $0] }
            store = s.serial
        }
        return s
    }

    /// Creates an object from `values`, one for each of `properties`, and `elements`, those of
    /// each of `collections` in order: a list's in order, a set's (duplicates once), a map's
    /// as key (a string), value, key, value... Each collection is written in one edit.
    /// - Throws: as `create(_:)`; for a bad element `.wrongType` or `.invalidArgument` naming
    ///   the collection (a wrong type, a bad map key, a map's elements not in pairs, a link to
    ///   a missing object); `.invalidArgument` for a wrong number of element arrays. Every
    ///   element is checked before the object is made: a refused one leaves nothing.
    public func create(_ values: [Value], elements: [[Value]]) throws(CoveError) {
        _ = try createObject(values, elements: elements)
    }

    /// `create(_:elements:)`, giving the object.
    public func createObject(_ values: [Value], elements: [[Value]]) throws(CoveError) -> DynamicObject {
        let store = try currentStore()
        var prepared = preparedScratch
        preparedScratch = []
        defer {
            // Emptied one by one: a few collections, and cheaper than removeAll(keepingCapacity:).
            while !prepared.isEmpty { prepared.removeLast() }
            preparedScratch = prepared
        }
        try prepare(store, elements, into: &prepared)
        let key = try store.create(plan, values, collections: collectionProperties, prepared: prepared)
        return try object(key, in: store)
    }

    /// The object just created. The plan's class is read once: across the module boundary each
    /// read of `plan.cls` is a copy of its own.
    private func object(_ key: Int64, in store: ObjectStore) throws(CoveError) -> DynamicObject {
        let cls = plan.cls
        return DynamicObject(realm: realm, objectSchema: cls, classKey: try store.classKey(of: cls), objectKey: key)
    }

    private func prepare(_ store: ObjectStore, _ elements: [[Value]]) throws(CoveError) -> [ObjectStore.PreparedCollection] {
        var prepared: [ObjectStore.PreparedCollection] = []
        try prepare(store, elements, into: &prepared)
        return prepared
    }

    /// The collections' elements checked and encoded, appended to `prepared`.
    private func prepare(_ store: ObjectStore, _ elements: [[Value]], into prepared: inout [ObjectStore.PreparedCollection]) throws(CoveError) {
        try requireElements(elements)
        prepared.reserveCapacity(elements.count)
        let cls = plan.cls
        for i in elements.indices { prepared.append(try store.prepareCollection(cls, collectionProperties[i], elements[i])) }
    }

    /// `createOrUpdate(_:)` with `elements` as `create(_:elements:)` takes them: an updated
    /// object's collections are replaced by them.
    @discardableResult
    public func createOrUpdate(_ values: [Value], elements: [[Value]]) throws(CoveError) -> Bool {
        let store = try currentStore()
        let prepared = try prepare(store, elements)
        let created = try store.createOrUpdate(plan, values)
        guard let pk = plan.primaryKeyValue, let key = try store.find(plan.cls, primaryKey: values[pk]) else {
            throw CoveError(.internal, "class '\(className)': the object created or updated is not found by its primary key")
        }
        for (p, e) in zip(collectionProperties, prepared) { try store.assignCollection(plan.cls, key, p, e) }
        return created
    }

    private func requireElements(_ elements: [[Value]]) throws(CoveError) {
        guard elements.count == collections.count else {
            throw CoveError(.invalidArgument, "\(elements.count) element arrays for \(collections.count) collections of class '\(className)'")
        }
    }

    /// Creates an object from `values`, one for each of `properties` in order; a caller
    /// creating many can keep one array and overwrite its values for each object.
    /// - Throws: `.notInWrite`, `.invalidArgument` (a wrong number of values, a link to a
    ///   missing object), `.duplicateKey`, `.wrongType` (naming the property, expected and
    ///   given type), `.closed`, `.frozen`. The object is not created then.
    public func create(_ values: [Value]) throws(CoveError) {
        _ = try currentStore().create(plan, values)
    }

    /// Creates an object as `create(_:)` does and gives it: for a caller that goes on with
    /// the object (its collections, say).
    /// - Throws: as `create(_:)`.
    public func createObject(_ values: [Value]) throws(CoveError) -> DynamicObject {
        let store = try currentStore()
        let key = try store.create(plan, values)
        return try object(key, in: store)
    }

    /// Updates the object whose primary key `values` give, setting the other values, or
    /// creates it when there is none; whether it was created.
    /// - Throws: as `create(_:)`, and `.invalidArgument` for a class without primary key. A
    ///   bad value met while updating leaves the values set before it.
    @discardableResult
    public func createOrUpdate(_ values: [Value]) throws(CoveError) -> Bool {
        try currentStore().createOrUpdate(plan, values)
    }
}
