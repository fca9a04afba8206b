// An in-memory replica: every object's merge state, the changesets applied to it, and what it
// shows. It is the merge rules' reference: the server's tables and the client's file must show
// what a replica that saw the same changesets shows. docs/SYNC.md states each rule and why it
// converges.

/// The merged state of every changeset applied, in memory.
///
/// `apply(_:)` is commutative, associative and idempotent: replicas that applied the same
/// changesets, in any order and any number of times each, have equal snapshots.
public struct SyncReplica: Sendable {
    private var objects: [SyncObjectRef: ObjectState] = [:]

    public init() {}

    /// Merges a changeset in.
    ///
    /// - Complexity: O(n) in the number of operations (hash lookups per operation).
    public mutating func apply(_ changeset: Changeset) {
        for op in changeset.operations {
            apply(op)
        }
    }

    /// Merges one operation in.
    public mutating func apply(_ op: SyncOperation) {
        objects[op.object, default: ObjectState()].apply(op)
    }

    /// Whether `object` exists: it was created, and not deleted since its latest create.
    public func contains(_ object: SyncObjectRef) -> Bool {
        objects[object]?.isAlive ?? false
    }

    /// The elements a list shows, in order: what a client needs to pick an element to change and
    /// the neighbours of a new position. Empty for an object that does not exist.
    public func listElements(of object: SyncObjectRef, property: String) -> [SyncListElement] {
        guard let state = objects[object], state.isAlive, let elements = state.lists[property] else { return [] }
        var out: [SyncListElement] = []
        for (id, element) in elements where element.inserted && element.removed == nil && state.shows(id) {
            guard let value = element.value, let position = element.position else { continue }
            out.append(SyncListElement(id: id, position: position.value, value: value.value))
        }
        // Position, then element id: equal positions (only a faulty node makes them) still order
        // the same way everywhere.
        return out.sorted { ($0.position, $0.id) < ($1.position, $1.id) }
    }

    /// What the replica shows: each existing object with the properties, list elements, set
    /// values and map entries that show, in a canonical order.
    ///
    /// - Complexity: O(n log n) in the size of the state.
    public func snapshot() -> SyncSnapshot {
        var result: [SyncSnapshot.Object] = []
        for (ref, state) in objects where state.isAlive {
            var properties: [String: SyncValue] = [:]
            for (name, register) in state.properties where state.shows(register.clock) {
                properties[name] = register.value
            }
            var lists: [String: [SyncValue]] = [:]
            for name in state.lists.keys {
                let values = listElements(of: ref, property: name).map(\.value)
                if !values.isEmpty { lists[name] = values }
            }
            var sets: [String: [SyncValue]] = [:]
            for (name, entries) in state.sets {
                let values = entries.compactMap { value, register in
                    register.value == .present && state.shows(register.clock) ? value : nil
                }
                if !values.isEmpty { sets[name] = values.sorted() }
            }
            var maps: [String: [SyncSnapshot.MapEntry]] = [:]
            for (name, entries) in state.maps {
                var shown: [SyncSnapshot.MapEntry] = []
                for (key, register) in entries where state.shows(register.clock) {
                    if case .present(let value) = register.value { shown.append(SyncSnapshot.MapEntry(key: key.text, value: value)) }
                }
                if !shown.isEmpty { maps[name] = shown.sorted { ByteString(text: $0.key) < ByteString(text: $1.key) } }
            }
            result.append(SyncSnapshot.Object(ref: ref, properties: properties, lists: lists, sets: sets, maps: maps))
        }
        return SyncSnapshot(objects: result.sorted { $0.ref < $1.ref })
    }
}

/// A list element as a replica shows it.
public struct SyncListElement: Hashable, Sendable {
    /// The element's id: the clock of its insert.
    public let id: SyncClock
    public let position: ListPosition
    public let value: SyncValue
}

/// What a replica shows, in a canonical order, for comparing replicas.
public struct SyncSnapshot: Hashable, Sendable, CustomStringConvertible {
    /// One existing object.
    public struct Object: Hashable, Sendable {
        public let ref: SyncObjectRef
        /// The properties that show (a property never written since the object's latest delete
        /// is absent).
        public let properties: [String: SyncValue]
        /// Each non-empty list, in order.
        public let lists: [String: [SyncValue]]
        /// Each non-empty set, its values sorted.
        public let sets: [String: [SyncValue]]
        /// Each non-empty map, its entries sorted by key (UTF-8 bytes).
        public let maps: [String: [MapEntry]]
    }

    /// A map's entry. Keys compare by their bytes.
    public struct MapEntry: Hashable, Sendable {
        public let key: String
        public let value: SyncValue

        public init(key: String, value: SyncValue) {
            self.key = key
            self.value = value
        }

        public static func == (a: MapEntry, b: MapEntry) -> Bool {
            a.key.utf8.elementsEqual(b.key.utf8) && a.value == b.value
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(ByteString(text: key))
            hasher.combine(value)
        }
    }

    /// The existing objects, sorted by class name and primary key.
    public let objects: [Object]

    /// One line per object, with every name sorted: equal snapshots have equal text, and a test
    /// failure shows where two differ.
    public var description: String {
        func sortedNames<T>(_ d: [String: T]) -> [String] { d.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) } }
        var lines: [String] = []
        for object in objects {
            var parts: [String] = []
            for name in sortedNames(object.properties) { parts.append("\(name)=\(object.properties[name] ?? .null)") }
            for name in sortedNames(object.lists) { parts.append("\(name)=[\((object.lists[name] ?? []).map(\.description).joined(separator: ", "))]") }
            for name in sortedNames(object.sets) { parts.append("\(name)=<\((object.sets[name] ?? []).map(\.description).joined(separator: ", "))>") }
            for name in sortedNames(object.maps) {
                let entries = (object.maps[name] ?? []).map { "\(SyncValue.string($0.key)): \($0.value)" }
                parts.append("\(name)={\(entries.joined(separator: ", "))}")
            }
            lines.append("\(object.ref) \(parts.joined(separator: " "))")
        }
        return lines.joined(separator: "\n")
    }
}
