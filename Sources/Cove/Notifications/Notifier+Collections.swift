// Observing an object's list, set or map: the collection's operations in the change records
// are replayed over its previous elements, so lists report their moves (each also a deletion
// and an insertion), sets and lists their insertions and deletions by position, maps theirs by
// key; elements that are objects are also modified when a linked object changes (as the key
// paths say).
import CoveCore

/// The changes of a map between two deliveries, by key.
public struct MapChangeSet: Equatable, Sendable {
    /// Keys that went away.
    public var deletions: [String] = []
    /// Keys that came.
    public var insertions: [String] = []
    /// Keys whose value was written (or whose object changed).
    public var modifications: [String] = []
    /// The map's owner was deleted.
    public var ownerDeleted = false

    public init() {}

    public var isEmpty: Bool { deletions.isEmpty && insertions.isEmpty && modifications.isEmpty && !ownerDeleted }
}

/// What a map observer receives.
public enum RealmMapChange: Sendable {
    case initial
    case update(MapChangeSet)
    case error(CoveError)
}

/// An observed list or set.
final class ElementsRegistration: NotifierRegistration {
    let collection: DynamicCollection
    let filter: KeyPathFilter
    let callback: (CollectionChange) -> Void
    var elements: [Value] = []

    init(collection: DynamicCollection, filter: KeyPathFilter, version: UInt64, callback: @escaping (CollectionChange) -> Void) {
        self.collection = collection
        self.filter = filter
        self.callback = callback
        super.init(version: version, initialPending: true)
    }

    private func current() throws(CoveError) -> [Value] {
        if let list = collection as? DynamicList { return try list.values() }
        if let set = collection as? DynamicSet { return try set.values() }
        return []
    }

    override func deliver(_ store: ObjectStore, _ record: ChangeRecord?) -> Bool {
        do throws(CoveError) {
            if initialPending {
                initialPending = false
                elements = try current()
                callback(.initial)
                return true
            }
            guard let record else { return true }
            let owner = collection.owner
            let cls = owner.objectSchema
            guard let classKey = cls.classKey, let propertyKey = collection.property.key else { return true }
            let ownerExists = try store.exists(cls, owner.objectKey)
            if record.tables[classKey]?.isDeleted(owner.objectKey) == true || !ownerExists {
                var changes = CollectionChangeSet()
                changes.deletions = Array(elements.indices)
                changes.ownerDeleted = true
                callback(.update(changes))
                return false
            }
            let ops = record.collections[ChangeRecord.CollectionID(classKey: classKey, objectKey: owner.objectKey, propertyKey: propertyKey)] ?? []
            let touched = record.touchedClasses
            let target = collection.property.type.objectClassName.flatMap { store.schema[$0] }
            if ops.isEmpty && !touchesElements(target, touched, store) { return true }
            // Replay: the old index of what stands at each position now (nil: inserted).
            var origin: [Int?] = elements.indices.map { $0 }
            var written = Set<Int>()
            var moved = Set<Int>()
            var cleared = false
            for op in ops {
                switch op {
                case .insert(let i): origin.insert(nil, at: Swift.min(i, origin.count))
                case .erase(let i): if i < origin.count { origin.remove(at: i) }
                case .set(let i): if i < origin.count, let o = origin[i] { written.insert(o) }
                case .move(let from, let to):
                    guard from < origin.count else { continue }
                    let x = origin.remove(at: from)
                    origin.insert(x, at: Swift.min(to, origin.count))
                    if let o = x { moved.insert(o) }
                case .clear:
                    origin.removeAll()
                    cleared = true
                case .insertKey, .eraseKey, .setKey: continue
                }
            }
            let new = try current()
            guard new.count == origin.count else {
                throw CoveError(.internal, "\(collection.property.name): the replayed operations give \(origin.count) elements, the collection has \(new.count)")
            }
            var changes = CollectionChangeSet()
            changes.cleared = cleared
            let present = Set(origin.compactMap { $0 })
            changes.deletions = elements.indices.filter { !present.contains($0) }
            for (j, o) in origin.enumerated() {
                guard let o else {
                    changes.insertions.append(j)
                    continue
                }
                // A moved element is deleted at its old index and inserted at its new one (so
                // deletions and insertions alone give the new order) and listed in `moves`;
                // whatever else happened to it, it is not a modification. The elements no
                // operation moved keep their relative order, so they need nothing more.
                if moved.contains(o) {
                    changes.deletions.append(o)
                    changes.insertions.append(j)
                    changes.moves.append((from: o, to: j))
                    continue
                }
                var modified = written.contains(o)
                if !modified, let target, case .link(let link) = new[j] {
                    modified = try filter.isModified(target, link.objectKey, record, store, touched)
                }
                if modified {
                    changes.modifications.append(j)
                    changes.modificationsOld.append(o)
                }
            }
            changes.deletions.sort()
            elements = new
            if !changes.isEmpty { callback(.update(changes)) }
            return true
        } catch {
            callback(.error(error))
            return false
        }
    }
}

/// An observed map.
final class MapRegistration: NotifierRegistration {
    let map: DynamicMap
    let filter: KeyPathFilter
    let callback: (RealmMapChange) -> Void

    init(map: DynamicMap, filter: KeyPathFilter, version: UInt64, callback: @escaping (RealmMapChange) -> Void) {
        self.map = map
        self.filter = filter
        self.callback = callback
        super.init(version: version, initialPending: true)
    }

    var keys = Set<String>()

    override func deliver(_ store: ObjectStore, _ record: ChangeRecord?) -> Bool {
        do throws(CoveError) {
            if initialPending {
                initialPending = false
                keys = Set(try map.keys())
                callback(.initial)
                return true
            }
            guard let record else { return true }
            let owner = map.owner
            let cls = owner.objectSchema
            guard let classKey = cls.classKey, let propertyKey = map.property.key else { return true }
            let ownerExists = try store.exists(cls, owner.objectKey)
            if record.tables[classKey]?.isDeleted(owner.objectKey) == true || !ownerExists {
                var changes = MapChangeSet()
                changes.deletions = keys.sorted()
                changes.ownerDeleted = true
                callback(.update(changes))
                return false
            }
            let ops = record.collections[ChangeRecord.CollectionID(classKey: classKey, objectKey: owner.objectKey, propertyKey: propertyKey)] ?? []
            let touched = record.touchedClasses
            let target = map.property.type.objectClassName.flatMap { store.schema[$0] }
            if ops.isEmpty && !touchesElements(target, touched, store) { return true }
            var written = Set<String>()
            for op in ops {
                switch op {
                case .insertKey(let k), .setKey(let k): written.insert(k)
                case .clear: written.formUnion(keys)
                default: continue
                }
            }
            let entries = try map.entries()
            let now = Set(entries.map(\.key))
            var changes = MapChangeSet()
            changes.deletions = keys.subtracting(now).sorted()
            changes.insertions = now.subtracting(keys).sorted()
            for (key, value) in entries where keys.contains(key) {
                var modified = written.contains(key)
                if !modified, let target, case .link(let link) = value {
                    modified = try filter.isModified(target, link.objectKey, record, store, touched)
                }
                if modified { changes.modifications.append(key) }
            }
            keys = now
            if !changes.isEmpty { callback(.update(changes)) }
            return true
        } catch {
            callback(.error(error))
            return false
        }
    }
}

/// Whether a commit that touched `touched` classes can have changed the objects of class
/// `target` a collection holds, or objects they link to (nil: the collection holds values).
private func touchesElements(_ target: ObjectSchema?, _ touched: Set<UInt32>, _ store: ObjectStore) -> Bool {
    guard let target else { return false }
    return !touched.isDisjoint(with: KeyPathFilter.reachableClasses(from: target, store.schema))
}

extension DynamicCollection {
    fileprivate func elementFilter(_ keyPaths: [String]?, _ store: ObjectStore) throws(CoveError) -> KeyPathFilter {
        if let target = property.type.objectClassName, let cls = store.schema[target] {
            return try KeyPathFilter(keyPaths, root: cls, schema: store.schema)
        }
        if let keyPaths, !keyPaths.isEmpty {
            throw CoveError(.invalidArgument, "\(name) holds values: key paths name properties of objects")
        }
        return KeyPathFilter(paths: keyPaths == nil ? nil : [])
    }

    fileprivate func prepareObservation() throws(CoveError) -> ObjectStore {
        try realm.requireObservable(name)
        if owner.isInvalidated {
            throw CoveError(.invalidated, "the \(owner.objectSchema.className) object \(owner.objectKey) that owns \(name) was deleted")
        }
        return try realm.objectStore()
    }
}

extension DynamicCollection {
    /// Observes a list's or a set's elements (`ElementsRegistration`).
    func observeElements(keyPaths: [String]?, _ block: @escaping (CollectionChange) -> Void) throws(CoveError) -> NotificationToken {
        let store = try prepareObservation()
        let registration = ElementsRegistration(collection: self, filter: try elementFilter(keyPaths, store), version: try realm.version, callback: block)
        try realm.register(registration)
        return NotificationToken(registration)
    }
}

extension DynamicList {
    /// Calls `block` with `.initial` at the next delivery, then with the list's changes after
    /// each commit that changed it or (for a list of objects) its objects: a moved element is
    /// in `moves`, and in `deletions` and `insertions` as well.
    public func observeChanges(keyPaths: [String]? = nil, _ block: @escaping (CollectionChange) -> Void) throws(CoveError) -> NotificationToken {
        try observeElements(keyPaths: keyPaths, block)
    }
}

extension DynamicSet {
    /// Calls `block` with `.initial` at the next delivery, then with the set's changes (by
    /// position in the set's order).
    public func observeChanges(keyPaths: [String]? = nil, _ block: @escaping (CollectionChange) -> Void) throws(CoveError) -> NotificationToken {
        try observeElements(keyPaths: keyPaths, block)
    }
}

extension DynamicMap {
    /// Calls `block` with `.initial` at the next delivery, then with the map's changes by key.
    public func observeChanges(keyPaths: [String]? = nil, _ block: @escaping (RealmMapChange) -> Void) throws(CoveError) -> NotificationToken {
        let store = try prepareObservation()
        let registration = MapRegistration(map: self, filter: try elementFilter(keyPaths, store), version: try realm.version, callback: block)
        try realm.register(registration)
        return NotificationToken(registration)
    }
}
