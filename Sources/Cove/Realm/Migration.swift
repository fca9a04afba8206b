// Migration: what a migration block sees while a file moves from its old schema to the new one,
// after realm-swift's type of the same name. It runs inside the write transaction that writes
// the new schema; the old realm is a frozen view of the file before it.
import CoveCore

/// The work of a migration block. realm-swift's `Migration`, over the dynamic API.
public final class Migration {
    /// The block a configuration runs: the migration and the file's old schema version.
    public typealias Block = @Sendable (Migration, UInt64) throws -> Void

    /// The file as it was, with its old schema: read-only (frozen).
    public let oldRealm: Realm
    /// The realm being migrated, in its write transaction, with the new schema.
    public let newRealm: Realm
    /// The file's schema version before the migration.
    public let oldSchemaVersion: UInt64
    let store: ObjectStore

    init(oldRealm: Realm, newRealm: Realm, oldSchemaVersion: UInt64, store: ObjectStore) {
        self.oldRealm = oldRealm
        self.newRealm = newRealm
        self.oldSchemaVersion = oldSchemaVersion
        self.store = store
    }

    /// The schema before the migration.
    public var oldSchema: Schema { oldRealm.schema }
    /// The schema after it.
    public var newSchema: Schema { newRealm.schema }

    /// Calls `block` with each object the old file has of `className`, as it was and as it is in
    /// the new realm (nil when the new schema has no such class, or the object was deleted
    /// during the migration). Properties whose type changed read their defaults on the new
    /// object until the block sets them.
    /// - Throws: `.notFound` when neither schema has the class; what `block` throws.
    public func enumerateObjects(ofType className: String,
                                 _ block: (_ oldObject: DynamicObject, _ newObject: DynamicObject?) throws -> Void) throws {
        guard oldSchema[className] != nil || newSchema[className] != nil else {
            throw CoveError(.notFound, "neither the old nor the new schema has a class '\(className)'")
        }
        guard oldSchema[className] != nil else { return }
        let hasNew = newSchema[className] != nil
        for old in try oldRealm.dynamicObjects(className) {
            let new = hasNew ? try newRealm.dynamicObject(ofType: className, objectKey: old.objectKey) : nil
            try block(old, new)
        }
    }

    /// Keeps the data of property `oldName` under its new name `newName`: the old schema must
    /// have the one, the new schema the other, with the same type.
    /// - Throws: `.notFound` (class or property), `.schema` (the types differ).
    public func renameProperty(onType className: String, from oldName: String, to newName: String) throws(CoveError) {
        guard let oldClass = oldSchema[className], let newClass = newSchema[className] else {
            throw CoveError(.notFound, "renameProperty: class '\(className)' is not in both the old and the new schema")
        }
        guard let old = oldClass[property: oldName] else {
            throw CoveError(.notFound, "renameProperty: the old schema's class '\(className)' has no property '\(oldName)'")
        }
        guard let new = newClass[property: newName] else {
            throw CoveError(.notFound, "renameProperty: the new schema's class '\(className)' has no property '\(newName)'")
        }
        guard old.hasSameShape(as: new), !old.isBacklinks else {
            throw CoveError(.schema, "renameProperty: '\(className).\(oldName)' is \(old.typeNotation) but '\(newName)' is \(new.typeNotation)")
        }
        guard newClass[property: oldName] == nil else {
            throw CoveError(.schema, "renameProperty: the new schema's class '\(className)' still has a property '\(oldName)'")
        }
        try store.moveProperty(newClass, from: old, to: new)
    }

    /// Creates an object in the new realm (for data split out of another class, say).
    @discardableResult
    public func create(_ className: String, primaryKey: Value? = nil, values: [(String, Value)] = []) throws(CoveError) -> DynamicObject {
        try newRealm.dynamicCreate(className, primaryKey: primaryKey, values: values)
    }

    /// Deletes an object of the new realm.
    public func delete(_ object: DynamicObject) throws(CoveError) {
        try newRealm.delete(object)
    }

    /// The file's classes that `deleteData(forType:)` takes out of it when the migration ends.
    private(set) var classesToDrop: [String] = []

    /// Deletes the data of class `className`, as realm-swift's `deleteData(forType:)`: every
    /// object of a class the new schema has; a class of the file that the new schema leaves out
    /// (which would otherwise stay in the file untouched) goes from the file altogether when
    /// the migration ends, its objects, indexes and schema entry with it. Returns whether there
    /// was anything to delete.
    /// - Throws: `.notFound` when the file has no such class; `.schema` (when the migration
    ///   ends) if another class the schema leaves out links to it.
    @discardableResult
    public func deleteData(forType className: String) throws(CoveError) -> Bool {
        if newSchema[className] != nil {
            let objects = try newRealm.dynamicObjects(className)
            for object in objects { try newRealm.delete(object) }
            return !objects.isEmpty
        }
        guard store.schema[className] != nil else {
            throw CoveError(.notFound, "deleteData: the file has no class '\(className)'")
        }
        if !classesToDrop.contains(className) { classesToDrop.append(className) }
        return true
    }
}

extension Realm.Configuration {
    /// The block a configuration runs to migrate (see `Migration`).
    public typealias MigrationBlock = Migration.Block
}
