// The dynamic API's collections: a list, set or map property of one object, read and written by
// position, value or key (realm-swift's `dynamicList`, `dynamicMutableSet`, `dynamicMap`). Every
// call goes through to the realm's current version; a deleted owner makes them `.invalidated`.
import CoveCore

/// What the three collection kinds share: the owner, the property, and the store.
public class DynamicCollection {
    /// The object that owns the collection.
    public let owner: DynamicObject
    /// The collection property.
    public let property: Property
    /// The owner's class and key, held here (both `let` in the owner): handed to the core
    /// from fields of this object they are borrowed, where read through the owner the class
    /// was copied at every call, and the two reads cost a read by index 8% of its instructions.
    let cls: ObjectSchema
    let key: Int64

    init(owner: DynamicObject, property: Property) {
        self.owner = owner
        self.property = property
        cls = owner.objectSchema
        key = owner.objectKey
    }

    /// The realm the collection belongs to.
    public var realm: Realm { owner.realm }

    /// Whether the owner was deleted (or the realm closed).
    public var isInvalidated: Bool { owner.isInvalidated }

    var store: ObjectStore { get throws(CoveError) { try realm.objectStore() } }

    /// The object a link element names, or nil for null.
    func object(_ value: Value) throws(CoveError) -> DynamicObject? {
        guard case .link(let link) = value else { return nil }
        return try realm.object(for: link)
    }

    var name: String { "\(property.collection.rawValue) '\(property.name)' of class '\(cls.className)'" }
}

/// A list property of an object: ordered, duplicates allowed.
public final class DynamicList: DynamicCollection, CustomStringConvertible {
    /// The number of elements.
    /// - Complexity: O(1)
    public var count: Int { get throws(CoveError) { try store.listCount(cls, key, property) } }

    /// The element at `index`.
    /// - Throws: `.outOfRange`, `.invalidated`.
    /// - Complexity: O(log n)
    public func value(at index: Int) throws(CoveError) -> Value {
        try store.listGet(cls, key, property, index)
    }

    /// The element at `index`: `list[0]`.
    public subscript(index: Int) -> Value {
        get throws(CoveError) { try value(at: index) }
    }

    /// The object at `index` of a list of objects.
    public func object(at index: Int) throws(CoveError) -> DynamicObject? {
        try object(try value(at: index))
    }

    /// Every element, in order.
    public func values() throws(CoveError) -> [Value] {
        try store.listValues(cls, key, property)
    }

    /// Adds `value` at the end (inside a write).
    /// - Throws: `.notInWrite`, `.wrongType` (naming class, property, expected and given type),
    ///   `.invalidArgument` (a link to a missing object, or to an embedded one), `.invalidated`.
    public func append(_ value: Value) throws(CoveError) {
        try insert(value, at: try count)
    }

    /// Inserts `value` at `index` (0...count).
    /// - Throws: as `append`, and `.outOfRange`.
    /// - Complexity: O(log n); O(n) now and then, when the list's order keys are respaced.
    public func insert(_ value: Value, at index: Int) throws(CoveError) {
        try store.listInsert(cls, key, property, index, value)
    }

    /// Replaces the element at `index` (an embedded element replaced is deleted).
    public func replace(index: Int, with value: Value) throws(CoveError) {
        try store.listSet(cls, key, property, index, value)
    }

    /// Removes the element at `index` (an embedded element is deleted).
    public func remove(at index: Int) throws(CoveError) {
        try store.listErase(cls, key, property, index)
    }

    /// Moves the element at `from` to `to` (both in 0..<count).
    public func move(from: Int, to: Int) throws(CoveError) {
        try store.listMove(cls, key, property, from: from, to: to)
    }

    /// Removes every element (embedded elements are deleted).
    public func removeAll() throws(CoveError) {
        try store.listClear(cls, key, property)
    }

    /// Creates an embedded object at `index` of a list of embedded objects and returns it.
    /// - Throws: `.wrongType` (not a list of an embedded class), `.outOfRange`, `.notInWrite`.
    @discardableResult
    public func insertEmbedded(at index: Int) throws(CoveError) -> DynamicObject {
        let child = try store.listInsertEmbedded(cls, key, property, index)
        return try embedded(child)
    }

    /// Creates an embedded object at the end of a list of embedded objects and returns it.
    @discardableResult
    public func appendEmbedded() throws(CoveError) -> DynamicObject {
        try insertEmbedded(at: try count)
    }

    func embedded(_ child: Int64) throws(CoveError) -> DynamicObject {
        let s = try store
        let target = try s.embeddedTarget(property, cls)
        return DynamicObject(realm: realm, objectSchema: target, classKey: try s.classKey(of: target), objectKey: child)
    }

    public var description: String {
        guard let values = try? values() else { return "List<\(property.type.name)>(invalidated)" }
        return "List<\(property.type.name)>\(values)"
    }
}

/// A set property of an object: distinct values, ordered by value.
public final class DynamicSet: DynamicCollection, CustomStringConvertible {
    /// The number of elements.
    /// - Complexity: O(1)
    public var count: Int { get throws(CoveError) { try store.setCount(cls, key, property) } }

    /// The element at `index` in the set's order (by value: numbers ascending, strings by
    /// their UTF-8 bytes).
    /// - Complexity: O(log n)
    public func value(at index: Int) throws(CoveError) -> Value {
        try store.setGet(cls, key, property, index)
    }

    /// The element at `index`.
    public subscript(index: Int) -> Value {
        get throws(CoveError) { try value(at: index) }
    }

    /// Every element, in the set's order.
    public func values() throws(CoveError) -> [Value] {
        try store.setValues(cls, key, property)
    }

    /// Whether the set holds `value`.
    /// - Throws: `.wrongType` for a value the set cannot hold.
    /// - Complexity: O(log n)
    public func contains(_ value: Value) throws(CoveError) -> Bool {
        try store.setContains(cls, key, property, value)
    }

    /// Adds `value`; returns false when it was there already.
    @discardableResult
    public func insert(_ value: Value) throws(CoveError) -> Bool {
        try store.setInsert(cls, key, property, value)
    }

    /// Removes `value`; returns false when it was not there.
    @discardableResult
    public func remove(_ value: Value) throws(CoveError) -> Bool {
        try store.setErase(cls, key, property, value)
    }

    /// Removes every element.
    public func removeAll() throws(CoveError) {
        try store.setClear(cls, key, property)
    }

    /// Adds every element of `other` (Realm's `union`).
    public func union(_ other: DynamicSet) throws(CoveError) {
        try union(try other.values())
    }

    /// Adds every value of `values`.
    public func union(_ values: [Value]) throws(CoveError) {
        try store.requireWrite()
        for v in values { try insert(v) }
    }

    /// Keeps only the elements also in `other` (Realm's `intersect`).
    public func intersect(_ other: DynamicSet) throws(CoveError) {
        try store.requireWrite()
        for v in try values() where !(try other.contains(v)) { try remove(v) }
    }

    /// Removes every element of `other` (Realm's `subtract`, RLMSet's `minusSet`).
    public func subtract(_ other: DynamicSet) throws(CoveError) {
        try store.requireWrite()
        for v in try other.values() { try remove(v) }
    }

    /// Makes this set equal to `other` (RLMSet's `setSet`).
    public func setSet(_ other: DynamicSet) throws(CoveError) {
        try store.requireWrite()
        let wanted = try other.values()
        if other !== self {
            try removeAll()
            try union(wanted)
        }
    }

    /// Whether the two sets share an element.
    public func intersects(_ other: DynamicSet) throws(CoveError) -> Bool {
        for v in try values() where try other.contains(v) { return true }
        return false
    }

    /// Whether every element of this set is in `other`.
    public func isSubset(of other: DynamicSet) throws(CoveError) -> Bool {
        for v in try values() where !(try other.contains(v)) { return false }
        return true
    }

    /// Whether the two sets hold the same elements.
    public func isEqual(to other: DynamicSet) throws(CoveError) -> Bool {
        let n = try count
        guard try n == other.count else { return false }
        return try isSubset(of: other)
    }

    /// The smallest element (numbers and dates), nil when there is none.
    public func min() throws(CoveError) -> Value? {
        try requireElements(["min"], dates: true)
        return try CollectionAggregates.extreme(try values(), largest: false, of: name)
    }

    /// The greatest element (numbers and dates), nil when there is none.
    public func max() throws(CoveError) -> Value? {
        try requireElements(["max"], dates: true)
        return try CollectionAggregates.extreme(try values(), largest: true, of: name)
    }

    /// The sum of the elements: an int, a double or a decimal, by the element type.
    public func sum() throws(CoveError) -> Value {
        try requireElements(["sum"], dates: false)
        return try CollectionAggregates.sum(try values(), of: name, elementType: property.type)
    }

    /// The mean of the elements (a double, or a decimal), nil when there is none.
    public func average() throws(CoveError) -> Value? {
        try requireElements(["average"], dates: false)
        return try CollectionAggregates.average(try values(), of: name)
    }

    /// Refuses an aggregate the element type has none of, whatever the set holds now (after
    /// refusing a closed realm).
    private func requireElements(_ what: [String], dates: Bool) throws(CoveError) {
        try realm.checkOpen()
        switch property.type {
        case .int, .float, .double, .decimal128, .mixed: return
        case .date where dates: return
        default:
            throw CoveError(.wrongType, "\(what[0]) of \(name): its elements are \(property.type.name), which has no \(what[0])")
        }
    }

    public var description: String {
        guard let values = try? values() else { return "MutableSet<\(property.type.name)>(invalidated)" }
        return "MutableSet<\(property.type.name)>\(values)"
    }
}

/// A map property of an object: string keys, kept in key order.
public final class DynamicMap: DynamicCollection, CustomStringConvertible {
    /// The number of entries.
    /// - Complexity: O(1)
    public var count: Int { get throws(CoveError) { try store.mapCount(cls, key, property) } }

    /// The value of `key`, or nil when the map has no such key (a null value is `.null`).
    /// - Complexity: O(log n)
    public func value(forKey key: String) throws(CoveError) -> Value? {
        try store.mapGet(cls, self.key, property, key)
    }

    /// The value of `key`: `map["a"]`.
    public subscript(key: String) -> Value? {
        get throws(CoveError) { try value(forKey: key) }
    }

    /// The entry at `index` in key order (by the keys' UTF-8 bytes).
    public func entry(at index: Int) throws(CoveError) -> (key: String, value: Value) {
        try store.mapEntry(cls, key, property, index)
    }

    /// Every entry, in key order.
    public func entries() throws(CoveError) -> [(key: String, value: Value)] {
        try store.mapEntries(cls, key, property)
    }

    /// The keys, in order.
    public func keys() throws(CoveError) -> [String] {
        try entries().map(\.key)
    }

    /// Sets the value of `key` (adding the entry when new).
    /// - Throws: `.notInWrite`, `.wrongType`, `.invalidArgument` (a key with '.' or a leading
    ///   '$', a link to a missing or embedded object).
    public func setValue(_ value: Value, forKey key: String) throws(CoveError) {
        try store.mapSet(cls, self.key, property, key, value)
    }

    /// Removes the entry of `key`; false when there was none.
    @discardableResult
    public func removeValue(forKey key: String) throws(CoveError) -> Bool {
        try store.mapErase(cls, self.key, property, key)
    }

    /// Removes every entry.
    public func removeAll() throws(CoveError) {
        try store.mapClear(cls, key, property)
    }

    /// Creates an embedded object as the value of `key` (deleting one it replaces).
    @discardableResult
    public func setEmbedded(forKey key: String) throws(CoveError) -> DynamicObject {
        let s = try store
        let child = try s.mapSetEmbedded(cls, self.key, property, key)
        let target = try s.embeddedTarget(property, cls)
        return DynamicObject(realm: realm, objectSchema: target, classKey: try s.classKey(of: target), objectKey: child)
    }

    public var description: String {
        guard let entries = try? entries() else { return "Map<String, \(property.type.name)>(invalidated)" }
        return "Map<String, \(property.type.name)>[" + entries.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "]"
    }
}

extension DynamicObject {
    private func collectionProperty(_ name: String, _ kind: CollectionKind) throws(CoveError) -> Property {
        try realm.checkOpen()
        let p = try ObjectStore.property(name, of: objectSchema)
        guard p.collection == kind, !p.isBacklinks else {
            throw CoveError(.wrongType, "property '\(name)' of class '\(objectSchema.className)' is \(p.typeNotation), not a \(kind.rawValue)")
        }
        guard !isInvalidated else {
            throw CoveError(.invalidated, "the \(objectSchema.className) object \(objectKey) was deleted")
        }
        return p
    }

    /// The list property `name`.
    /// - Throws: `.notFound`, `.wrongType` (not a list), `.invalidated`.
    public func dynamicList(_ name: String) throws(CoveError) -> DynamicList {
        DynamicList(owner: self, property: try collectionProperty(name, .list))
    }

    /// The set property `name`.
    public func dynamicMutableSet(_ name: String) throws(CoveError) -> DynamicSet {
        DynamicSet(owner: self, property: try collectionProperty(name, .set))
    }

    /// The map property `name`.
    public func dynamicMap(_ name: String) throws(CoveError) -> DynamicMap {
        DynamicMap(owner: self, property: try collectionProperty(name, .map))
    }

    /// The list, set or map property `name`, of the kind its property is.
    func collection(_ name: String) throws(CoveError) -> DynamicCollection {
        switch try ObjectStore.property(name, of: objectSchema).collection {
        case .list: try dynamicList(name)
        case .set: try dynamicMutableSet(name)
        default: try dynamicMap(name)
        }
    }

    /// Creates a new embedded object as the value of link property `name` (deleting the one it
    /// replaces) and returns it. Setting the property to null deletes it.
    /// - Throws: `.notInWrite`, `.notFound`, `.wrongType` (not a link to an embedded class),
    ///   `.invalidated`.
    @discardableResult
    public func createEmbeddedObject(forProperty name: String) throws(CoveError) -> DynamicObject {
        let store = try realm.objectStore()
        try store.requireWrite()
        let p = try ObjectStore.property(name, of: objectSchema)
        guard p.collection == .none else {
            throw CoveError(.wrongType, "property '\(name)' of class '\(objectSchema.className)' is \(p.typeNotation): insert embedded objects through the \(p.collection.rawValue)")
        }
        let target = try store.embeddedTarget(p, objectSchema)
        guard let child = try store.replaceEmbeddedChild(objectSchema, objectKey, p, with: target) else {
            throw CoveError(.internal, "no embedded object was made")
        }
        return DynamicObject(realm: realm, objectSchema: target, classKey: try store.classKey(of: target), objectKey: child)
    }
}
