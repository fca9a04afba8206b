// The pieces of a replica's state and how each merges. Every piece is a join: merging keeps the
// greater of two entries by a total order (a clock, then a value for the tie that only a faulty
// node could cause), or ORs a flag, or keeps the latest clock. A join is commutative, associative
// and idempotent, so a state built from any order of the same operations, some of them twice,
// is the same state.

/// A last-writer-wins register: the value written with the latest clock.
struct Register<Value: Comparable & Sendable>: Sendable {
    private(set) var value: Value
    private(set) var clock: SyncClock

    init(_ value: Value, _ clock: SyncClock) {
        self.value = value
        self.clock = clock
    }

    /// Keeps the write with the later clock; for one clock (two different writes only a faulty
    /// node makes), the greater value, so that the outcome still does not depend on order.
    mutating func merge(_ other: Value, _ otherClock: SyncClock) {
        if otherClock > clock || (otherClock == clock && value < other) {
            value = other
            clock = otherClock
        }
    }
}

extension Optional {
    /// Merges a write into a register that may not exist yet.
    mutating func merge<V>(_ value: V, _ clock: SyncClock) where Wrapped == Register<V> {
        if self == nil {
            self = Register(value, clock)
        } else {
            self?.merge(value, clock)
        }
    }
}

extension Optional where Wrapped == SyncClock {
    /// Keeps the later of two clocks.
    mutating func keepLatest(_ clock: SyncClock) {
        if let current = self, current >= clock { return }
        self = clock
    }
}

/// A map key's last state: there with a value, or removed. Removal orders first, so at one clock
/// a write beats a removal (only a faulty node makes both).
enum Entry: Comparable, Sendable {
    case removed
    case present(SyncValue)
}

/// A set value's last state, ordered as `Entry` is.
enum Presence: Comparable, Sendable {
    case removed
    case present
}

/// A string compared by its UTF-8 bytes, as map keys are: Swift's String equality would make
/// two spellings of one text (`é`, `e` and a combining accent) one key.
struct ByteString: Hashable, Comparable, Sendable {
    let text: String

    static func == (a: ByteString, b: ByteString) -> Bool {
        a.text.utf8.elementsEqual(b.text.utf8)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(text.utf8.count)
        for b in text.utf8 { hasher.combine(b) }
    }

    static func < (a: ByteString, b: ByteString) -> Bool {
        a.text.utf8.lexicographicallyPrecedes(b.text.utf8)
    }
}

/// One list element, as far as the operations seen tell: whether its insert has been seen, its
/// value and position (each a register the insert starts and sets and moves write), and the
/// latest removal.
struct ElementState: Sendable {
    var inserted = false
    var value: Register<SyncValue>?
    var position: Register<ListPosition>?
    var removed: SyncClock?
}

/// Everything the operations seen say about one object.
struct ObjectState: Sendable {
    /// The latest create.
    var created: SyncClock?
    /// The latest delete.
    var deleted: SyncClock?
    var properties: [String: Register<SyncValue>] = [:]
    /// Elements by id (their insert's clock).
    var lists: [String: [SyncClock: ElementState]] = [:]
    var sets: [String: [SyncValue: Register<Presence>]] = [:]
    var maps: [String: [ByteString: Register<Entry>]] = [:]

    /// Whether the object exists: a create later than every delete.
    var isAlive: Bool {
        guard let created else { return false }
        return deleted.map { created > $0 } ?? true
    }

    /// Whether a write with `clock` shows: it was made after the latest delete. Writes before a
    /// delete belong to the object that was deleted, never to one created again with that key.
    func shows(_ clock: SyncClock) -> Bool {
        deleted.map { clock > $0 } ?? true
    }

    mutating func apply(_ op: SyncOperation) {
        let clock = op.clock
        switch op.change {
        case .create(let values):
            created.keepLatest(clock)
            for (name, value) in values {
                properties[name].merge(value, clock)
            }
        case .setProperty(let name, let value):
            properties[name].merge(value, clock)
        case .delete:
            deleted.keepLatest(clock)
        case .listInsert(let name, let position, let value):
            var element = lists[name, default: [:]][clock, default: ElementState()]
            element.inserted = true
            element.value.merge(value, clock)
            element.position.merge(position, clock)
            lists[name, default: [:]][clock] = element
        case .listRemove(let name, let id):
            lists[name, default: [:]][id, default: ElementState()].removed.keepLatest(clock)
        case .listMove(let name, let id, let position):
            lists[name, default: [:]][id, default: ElementState()].position.merge(position, clock)
        case .listSet(let name, let id, let value):
            lists[name, default: [:]][id, default: ElementState()].value.merge(value, clock)
        case .setAdd(let name, let value):
            sets[name, default: [:]][value].merge(Presence.present, clock)
        case .setRemove(let name, let value):
            sets[name, default: [:]][value].merge(Presence.removed, clock)
        case .mapSet(let name, let key, let value):
            maps[name, default: [:]][ByteString(text: key)].merge(Entry.present(value), clock)
        case .mapRemove(let name, let key):
            maps[name, default: [:]][ByteString(text: key)].merge(Entry.removed, clock)
        }
    }
}

extension ElementState {
    /// Joins what another replica knows of this element.
    mutating func merge(_ other: ElementState) {
        inserted = inserted || other.inserted
        if let v = other.value { value.merge(v.value, v.clock) }
        if let p = other.position { position.merge(p.value, p.clock) }
        if let r = other.removed { removed.keepLatest(r) }
    }
}

extension ObjectState {
    /// Joins another replica's state of the same object: the state both would reach from every
    /// operation either has seen.
    mutating func merge(_ other: ObjectState) {
        if let c = other.created { created.keepLatest(c) }
        if let d = other.deleted { deleted.keepLatest(d) }
        for (name, r) in other.properties { properties[name].merge(r.value, r.clock) }
        for (name, elements) in other.lists {
            for (id, e) in elements { lists[name, default: [:]][id, default: ElementState()].merge(e) }
        }
        for (name, entries) in other.sets {
            for (value, r) in entries { sets[name, default: [:]][value].merge(r.value, r.clock) }
        }
        for (name, entries) in other.maps {
            for (key, r) in entries { maps[name, default: [:]][key].merge(r.value, r.clock) }
        }
    }
}
