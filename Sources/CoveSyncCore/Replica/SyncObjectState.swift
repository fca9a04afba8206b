// One object's merge state on its own, for a replica that keeps its objects somewhere else than
// in memory: a client's file keeps one per synced object (deleted ones included, as tombstones),
// reads it when a change to the object arrives or is made, and writes it back.

/// Everything the operations seen say about one object, and what it shows.
///
/// `apply(_:)` is the same join `SyncReplica` uses: states built from the same operations in any
/// order, any of them repeated, are equal and show the same.
public struct SyncObjectState: Sendable {
    var state = ObjectState()

    public init() {}

    /// Merges one operation on this object in.
    public mutating func apply(_ op: SyncOperation) {
        state.apply(op)
    }

    /// Merges another replica's state of the same object in (a server sends whole states to a
    /// client whose subscriptions cover the object). The result is the state both operation
    /// histories together make: merging is commutative, associative and idempotent, as `apply`.
    public mutating func merge(_ other: SyncObjectState) {
        state.merge(other.state)
    }

    /// The latest clock of any write the state holds (nil for an empty state): a replica that
    /// merges the state moves its own clock past it, so that what it writes next wins over what
    /// it has seen.
    public var latestClock: SyncClock? {
        var latest = state.created
        func see(_ c: SyncClock?) { if let c, latest.map({ c > $0 }) ?? true { latest = c } }
        see(state.deleted)
        for r in state.properties.values { see(r.clock) }
        for elements in state.lists.values {
            for (id, e) in elements {
                see(id)
                see(e.value?.clock)
                see(e.position?.clock)
                see(e.removed)
            }
        }
        for entries in state.sets.values { for r in entries.values { see(r.clock) } }
        for entries in state.maps.values { for r in entries.values { see(r.clock) } }
        return latest
    }

    /// Forgets a list element entirely, as if no operation on it had been seen: for a replica
    /// that gives an element it inserted, and that no other replica has seen, another id (a
    /// client reset sends its unsynced inserts again under new clocks).
    public mutating func forgetListElement(_ property: String, id: SyncClock) {
        state.lists[property]?[id] = nil
    }

    /// Whether the object exists: created, and not deleted since its latest create.
    public var exists: Bool { state.isAlive }

    /// Whether any operation has been seen (a state that has seen none need not be kept).
    public var isEmpty: Bool {
        state.created == nil && state.deleted == nil && state.properties.isEmpty && state.lists.isEmpty
            && state.sets.isEmpty && state.maps.isEmpty
    }

    /// The value a property shows, nil when none written since the object's latest delete shows.
    public func property(_ name: String) -> SyncValue? {
        guard let register = state.properties[name], state.shows(register.clock) else { return nil }
        return register.value
    }

    /// The elements a list shows, ordered by position, then id.
    public func listElements(_ name: String) -> [SyncListElement] {
        guard state.isAlive, let elements = state.lists[name] else { return [] }
        var out: [SyncListElement] = []
        for (id, element) in elements where element.inserted && element.removed == nil && state.shows(id) {
            guard let value = element.value, let position = element.position else { continue }
            out.append(SyncListElement(id: id, position: position.value, value: value.value))
        }
        return out.sorted { ($0.position, $0.id) < ($1.position, $1.id) }
    }

    /// The values a set shows, sorted.
    public func setValues(_ name: String) -> [SyncValue] {
        guard state.isAlive, let entries = state.sets[name] else { return [] }
        return entries.compactMap { value, register in
            register.value == .present && state.shows(register.clock) ? value : nil
        }.sorted()
    }

    /// The entries a map shows, sorted by key (UTF-8 bytes).
    public func mapEntries(_ name: String) -> [SyncSnapshot.MapEntry] {
        guard state.isAlive, let entries = state.maps[name] else { return [] }
        var shown: [SyncSnapshot.MapEntry] = []
        for (key, register) in entries where state.shows(register.clock) {
            if case .present(let value) = register.value { shown.append(SyncSnapshot.MapEntry(key: key.text, value: value)) }
        }
        return shown.sorted { ByteString(text: $0.key) < ByteString(text: $1.key) }
    }
}
