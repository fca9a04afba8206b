// The change model: one operation on one object, stamped with the clock that made it. Every
// operation names what it changes absolutely (a property, a list element by id, a set value, a map
// key), never by a position or a count, so that it means the same thing whichever changes a
// replica has seen before it.

/// One change to one object.
public struct SyncOperation: Hashable, Sendable {
    /// What an operation does.
    public enum Change: Hashable, Sendable {
        /// Creates the object (or, if it exists, updates it, as create-or-update does) with these
        /// property values. Collections start empty; their elements come by their own operations.
        case create(values: [String: SyncValue])
        /// Sets a property.
        case setProperty(String, SyncValue)
        /// Deletes the object.
        case delete
        /// Inserts a list element at a position. The element's id is the operation's clock.
        case listInsert(property: String, position: ListPosition, value: SyncValue)
        /// Removes a list element.
        case listRemove(property: String, element: SyncClock)
        /// Moves a list element to another position.
        case listMove(property: String, element: SyncClock, position: ListPosition)
        /// Replaces a list element's value.
        case listSet(property: String, element: SyncClock, value: SyncValue)
        /// Adds a value to a set.
        case setAdd(property: String, value: SyncValue)
        /// Removes a value from a set.
        case setRemove(property: String, value: SyncValue)
        /// Sets a map's key to a value.
        case mapSet(property: String, key: String, value: SyncValue)
        /// Removes a map's key.
        case mapRemove(property: String, key: String)

        /// The name of the operation's kind in the JSON-lines encoding (`create`, `list.insert`,
        /// ...).
        public var kindName: String {
            switch self {
            case .create: return "create"
            case .setProperty: return "set"
            case .delete: return "delete"
            case .listInsert: return "list.insert"
            case .listRemove: return "list.remove"
            case .listMove: return "list.move"
            case .listSet: return "list.set"
            case .setAdd: return "set.add"
            case .setRemove: return "set.remove"
            case .mapSet: return "map.set"
            case .mapRemove: return "map.remove"
            }
        }

        /// The property the change is to, if it is to one.
        public var property: String? {
            switch self {
            case .create, .delete: return nil
            case .setProperty(let p, _): return p
            case .listInsert(let p, _, _), .listRemove(let p, _), .listMove(let p, _, _), .listSet(let p, _, _),
                 .setAdd(let p, _), .setRemove(let p, _), .mapSet(let p, _, _), .mapRemove(let p, _):
                return p
            }
        }
    }

    /// The clock that made the operation; for a list insert, also the new element's id.
    public let clock: SyncClock
    /// The object changed.
    public let object: SyncObjectRef
    /// What changes.
    public let change: Change

    /// - Throws: `SyncError(.invalidValue)` when a property name is not a valid name.
    public init(clock: SyncClock, object: SyncObjectRef, change: Change) throws(SyncError) {
        if let property = change.property {
            try SyncName.check(property, "property")
        }
        if case .create(let values) = change {
            for name in values.keys {
                try SyncName.check(name, "property")
            }
        }
        self.clock = clock
        self.object = object
        self.change = change
    }
}
