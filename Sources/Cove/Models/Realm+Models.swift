// Model objects in a realm: add (with create-or-update by primary key), look up by primary key,
// every object of a class, delete; and a configuration made from model classes.
import CoveCore

extension Realm {
    /// What `add` does when an object with the same primary key exists.
    public enum UpdatePolicy: Sendable {
        /// Fail with `.duplicateKey`.
        case error
        /// Update the existing object with every property of the added one.
        case all
        /// The same as `.all`: every property is written (writing an equal value still counts as a
        /// change, as docs/notifications.md says).
        case modified
    }

    /// Adds an unmanaged object (and the unmanaged objects it links to) inside a write; from
    /// then on it reads and writes the realm. Adding a managed object of this realm does
    /// nothing.
    /// - Throws: `.notInWrite`, `.duplicateKey` (with `.error`), `.invalidArgument` (an embedded
    ///   object, or an object of another realm), `.notFound` (its class is not in the schema).
    public func checkedAdd(_ object: Object, update: UpdatePolicy = .error) throws(CoveError) {
        if let managed = object.dynamicObject {
            guard managed.realm === self else { throw CoveError(.invalidArgument, "the \(type(of: object).className) object belongs to another realm") }
            return
        }
        let className = type(of: object).className
        if object is EmbeddedObject {
            throw CoveError(.invalidArgument, "class '\(className)' is embedded: add it by assigning it to a parent's property")
        }
        guard let cls = schema[className] else { throw CoveError(.notFound, "no class '\(className)' in the schema") }
        let managed: DynamicObject
        if let pk = cls.primaryKeyProperty {
            guard let (_, persisted) = object.persistedProperties().first(where: { $0.name == pk.name }) else {
                throw CoveError(.internal, "class '\(className)' has no @Persisted '\(pk.name)'")
            }
            let key = try persisted._coveValue(self)
            if update != .error, let existing = try dynamicObject(ofType: className, forPrimaryKey: key) {
                managed = existing
            } else {
                managed = try dynamicCreate(className, primaryKey: key)
            }
        } else {
            managed = try dynamicCreate(className)
        }
        try object.adopt(managed, skipping: cls.primaryKey)
    }

    /// Adds every object of `objects`.
    public func checkedAdd<S: Sequence>(_ objects: S, update: UpdatePolicy = .error) throws(CoveError) where S.Element: Object {
        for object in objects { try checkedAdd(object, update: update) }
    }

    /// Adds an unmanaged object as realm-swift's `add` does: without `try`, stopping the
    /// program on a failure (outside a write, a duplicate primary key with `.error`); see
    /// `checkedAdd`, which throws instead.
    public func add(_ object: Object, update: UpdatePolicy = .error) {
        do { try checkedAdd(object, update: update) } catch { managedFailure("Realm.add", error) }
    }

    /// Adds every object of `objects`, as `add(_:update:)`.
    public func add<S: Sequence>(_ objects: S, update: UpdatePolicy = .error) where S.Element: Object {
        for object in objects { add(object, update: update) }
    }

    /// The object of type `T` with primary key `key`, or nil.
    /// - Throws: `.notFound` (class), `.invalidArgument` (no primary key), `.wrongType`.
    public func object<T: Object, K: _PersistableValue>(ofType type: T.Type, forPrimaryKey key: K) throws(CoveError) -> T? {
        guard let found = try dynamicObject(ofType: type.className, forPrimaryKey: try key._coveWrite(self)) else { return nil }
        return ModelRegistry.make(found) as? T
    }

    /// Every object of type `T`, as live, lazy Results (filter, sort and distinct them). As in
    /// realm-swift it does not throw: a class the schema lacks (`.notFound`), or a closed realm,
    /// makes results whose reads throw (`queryError` tells at once).
    public func objects<T: Object>(_ type: T.Type) -> Results<T> {
        let engine = ResultsEngine(realm: self, source: .table(className: type.className))
        do throws(CoveError) {
            _ = try objectStore().visibleObjectSchema(type.className)
            return Results(engine: engine)
        } catch {
            return Results(engine: engine.failing(error))
        }
    }

    /// Deletes a managed object inside a write (its embedded objects with it).
    /// - Throws: `.notInWrite`, `.invalidArgument` (unmanaged, or of another realm), `.invalidated`.
    public func checkedDelete(_ object: Object) throws(CoveError) {
        guard let managed = object.dynamicObject else {
            throw CoveError(.invalidArgument, "the \(type(of: object).className) object is not managed by a realm")
        }
        try delete(managed)
    }

    /// Deletes a managed object as realm-swift's `delete` does: without `try`, stopping the
    /// program on a failure (outside a write, an unmanaged object); see `checkedDelete`.
    public func delete(_ object: Object) {
        do { try checkedDelete(object) } catch { managedFailure("Realm.delete", error) }
    }

    /// Deletes every object of `objects` (a `Results`, a `List`, an array), as `delete(_:)`.
    public func delete<S: Sequence>(_ objects: S) where S.Element: Object {
        // The objects are taken first: deleting them changes what a live collection holds.
        for object in Array(objects) { delete(object) }
    }
}

extension Realm.Configuration {
    /// A configuration whose schema is that of model classes.
    public init(path: String? = nil, inMemory: Bool = false, objectTypes: [Object.Type], schemaVersion: UInt64 = 0,
                durability: Realm.Durability = .full, migrationBlock: Realm.Configuration.MigrationBlock? = nil) throws(CoveError) {
        self.init(path: path, inMemory: inMemory, durability: durability, schema: try Schema(objectTypes: objectTypes),
                  schemaVersion: schemaVersion, migrationBlock: migrationBlock)
    }
}
