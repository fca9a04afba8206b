// Freezing and thawing single objects and collections: a frozen object is the same object in a
// frozen copy of the realm at its current version (readable from any thread, immutable); thawing
// finds it again in a live realm, where it may have been deleted since.

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

extension Results {
    /// The changes as an AsyncSequence: `.initial`, then each change set, as the realm delivers
    /// them (its `refresh()` or `deliver()`). Ends when the stream is dropped.
    public func changes(keyPaths: [String]? = nil) throws(CoveError) -> AsyncStream<CollectionChange> {
        let (stream, continuation) = AsyncStream<CollectionChange>.makeStream()
        let token = try observeChanges(keyPaths: keyPaths) { continuation.yield($0) }
        continuation.onTermination = { _ in token.invalidate() }
        return stream
    }
}
