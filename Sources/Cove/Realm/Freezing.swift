// Freezing and thawing single objects and collections: a frozen object is the same object in a
// frozen copy of the realm at its current version (readable from any thread, immutable); thawing
// finds it again in a live realm, where it may have been deleted since.
import CoveCore

extension DynamicObject {
    /// The object in a frozen copy of the realm at its current version.
    /// - Throws: `.inWrite` (freezing inside a write), `.invalidated`, `.closed`.
    public func freeze() throws(CoveError) -> DynamicObject {
        try realm.checkOpen()
        if realm.isFrozen { return self }
        if isInvalidated { throw CoveError(.invalidated, "the \(objectSchema.className) object \(objectKey) was deleted: it cannot be frozen") }
        let frozen = try realm.freeze()
        guard let object = try frozen.dynamicObject(ofType: objectSchema.className, objectKey: objectKey) else {
            throw CoveError(.invalidated, "the \(objectSchema.className) object \(objectKey) is not in the frozen version")
        }
        return object
    }

    /// The same object in `live` at its current version; nil when it was deleted since.
    public func thaw(in live: Realm) throws(CoveError) -> DynamicObject? {
        if live.isFrozen { throw CoveError(.frozen, "thaw needs a live realm") }
        return try live.dynamicObject(ofType: objectSchema.className, objectKey: objectKey)
    }
}

extension DynamicList {
    /// The list in a frozen copy of the realm at its current version.
    public func freeze() throws(CoveError) -> DynamicList {
        try owner.freeze().dynamicList(property.name)
    }

    /// The same list in `live`; nil when its owner was deleted since.
    public func thaw(in live: Realm) throws(CoveError) -> DynamicList? {
        try owner.thaw(in: live)?.dynamicList(property.name)
    }
}

extension DynamicSet {
    /// The set in a frozen copy of the realm at its current version.
    public func freeze() throws(CoveError) -> DynamicSet {
        try owner.freeze().dynamicMutableSet(property.name)
    }

    /// The same set in `live`; nil when its owner was deleted since.
    public func thaw(in live: Realm) throws(CoveError) -> DynamicSet? {
        try owner.thaw(in: live)?.dynamicMutableSet(property.name)
    }
}

extension DynamicMap {
    /// The map in a frozen copy of the realm at its current version.
    public func freeze() throws(CoveError) -> DynamicMap {
        try owner.freeze().dynamicMap(property.name)
    }

    /// The same map in `live`; nil when its owner was deleted since.
    public func thaw(in live: Realm) throws(CoveError) -> DynamicMap? {
        try owner.thaw(in: live)?.dynamicMap(property.name)
    }
}

extension Object {
    /// A frozen copy of a managed object (realm-swift's `freeze()`).
    public func freeze() throws(CoveError) -> Self {
        guard let dynamicObject else { throw CoveError(.invalidArgument, "an unmanaged \(Self.className) cannot be frozen") }
        guard let frozen = ModelRegistry.make(try dynamicObject.freeze()) as? Self else {
            throw CoveError(.internal, "the frozen \(Self.className) is of another class")
        }
        return frozen
    }

    /// The object in `live`; nil when it was deleted since.
    public func thaw(in live: Realm) throws(CoveError) -> Self? {
        guard let dynamicObject else { throw CoveError(.invalidArgument, "an unmanaged \(Self.className) cannot be thawed") }
        return try dynamicObject.thaw(in: live).flatMap { ModelRegistry.make($0) as? Self }
    }

    /// Calls `block` after each commit that wrote the object's properties (see
    /// `DynamicObject.observeChanges`), with this object in `.change`.
    public func observeChanges(keyPaths: [String]? = nil, _ block: @escaping (ObjectChange<Object>) -> Void) throws(CoveError) -> NotificationToken {
        guard let dynamicObject else { throw CoveError(.invalidArgument, "an unmanaged \(Self.className) cannot be observed") }
        return try dynamicObject.observeChanges(keyPaths: keyPaths) { block($0.map { _ in self }) }
    }
}

/// A stream of what `register` observes: each change as the realm delivers it. The observation
/// stops when the stream ends: dropped, or the task iterating it cancelled.
func changeStream<Change: Sendable>(_ register: (@escaping (Change) -> Void) throws(CoveError) -> NotificationToken) throws(CoveError) -> AsyncStream<Change> {
    let (stream, continuation) = AsyncStream<Change>.makeStream()
    let token = try register { continuation.yield($0) }
    continuation.onTermination = { _ in token.invalidate() }
    return stream
}

extension Results {
    /// The changes as an AsyncSequence: `.initial`, then each change set, as the realm delivers
    /// them (its `refresh()` or `deliver()`). Ends when the stream is dropped or the task
    /// iterating it is cancelled.
    public func changes(keyPaths: [String]? = nil) throws(CoveError) -> AsyncStream<CollectionChange> {
        try changeStream { (block) throws(CoveError) in try observeChanges(keyPaths: keyPaths, block) }
    }
}

extension DynamicList {
    /// The list's changes as an AsyncSequence (as `Results.changes`).
    public func changes(keyPaths: [String]? = nil) throws(CoveError) -> AsyncStream<CollectionChange> {
        try changeStream { (block) throws(CoveError) in try observeChanges(keyPaths: keyPaths, block) }
    }
}

extension DynamicSet {
    /// The set's changes as an AsyncSequence (as `Results.changes`).
    public func changes(keyPaths: [String]? = nil) throws(CoveError) -> AsyncStream<CollectionChange> {
        try changeStream { (block) throws(CoveError) in try observeChanges(keyPaths: keyPaths, block) }
    }
}

extension DynamicMap {
    /// The map's changes by key as an AsyncSequence (as `Results.changes`).
    public func changes(keyPaths: [String]? = nil) throws(CoveError) -> AsyncStream<RealmMapChange> {
        try changeStream { (block) throws(CoveError) in try observeChanges(keyPaths: keyPaths, block) }
    }
}

extension List {
    /// The list's changes as an AsyncSequence (as `Results.changes`).
    /// - Throws: `.invalidArgument` for an unmanaged list, and what observing throws.
    public func changes(keyPaths: [String]? = nil) throws(CoveError) -> AsyncStream<CollectionChange> {
        guard let managed else { throw CoveError(.invalidArgument, "an unmanaged List cannot be observed") }
        return try managed.changes(keyPaths: keyPaths)
    }
}

extension MutableSet {
    /// The set's changes as an AsyncSequence (as `Results.changes`).
    /// - Throws: `.invalidArgument` for an unmanaged set, and what observing throws.
    public func changes(keyPaths: [String]? = nil) throws(CoveError) -> AsyncStream<CollectionChange> {
        guard let managed else { throw CoveError(.invalidArgument, "an unmanaged MutableSet cannot be observed") }
        return try managed.changes(keyPaths: keyPaths)
    }
}

extension Map {
    /// The map's changes by key as an AsyncSequence (as `Results.changes`).
    /// - Throws: `.invalidArgument` for an unmanaged map, and what observing throws.
    public func changes(keyPaths: [String]? = nil) throws(CoveError) -> AsyncStream<RealmMapChange> {
        guard let managed else { throw CoveError(.invalidArgument, "an unmanaged Map cannot be observed") }
        return try managed.changes(keyPaths: keyPaths)
    }
}
