// A local write as a changeset. The commit's change record says which objects were created,
// deleted and modified, and which properties; the values are read from the write's own state.
// List edits are replayed on the element ids the file's list stood for (kept with the object's
// merge state), so that a removal, a replacement or a move names the element it touched and an
// insert gets a position between its neighbours. Sets and maps are compared with what their
// merge state showed: an add or removal per value, a write or removal per key.
import CoveStorage
import CoveSyncCore

struct SyncCapture {
    unowned let store: ObjectStore
    private let source: SyncClockSource
    private var builder: ChangesetBuilder
    /// Changesets already full: a large write goes out as several, in order.
    private var full: [Changeset] = []
    let node: UInt64
    /// The objects created, for the links that wait for them.
    private(set) var createdObjects: [(ObjectSchema, Int64)] = []
    /// The most operations one changeset carries (well below what a server reads in one).
    static let operationsPerChangeset = 10_000

    init(store: ObjectStore, record: SyncFileRecord) throws(CoveError) {
        self.store = store
        node = record.nodeId
        source = SyncClockSource(node: record.nodeId, after: record.latestClock)
        builder = ChangesetBuilder(clock: source, version: record.localVersion + 1)
    }

    /// The changesets, none when no operation was made.
    func finish(wall: UInt64) throws(CoveError) -> [Changeset] {
        if builder.operations.isEmpty { return full }
        do { return full + [try builder.finish(wall: wall)] } catch { throw CoveError(.internal, "sync: \(error.message)") }
    }

    @discardableResult
    private mutating func add(_ ref: SyncObjectRef, _ change: SyncOperation.Change, _ state: inout SyncStoredState,
                              wall: UInt64) throws(CoveError) -> SyncClock {
        do {
            if builder.operations.count >= Self.operationsPerChangeset {
                let done = try builder.finish(wall: wall)
                full.append(done)
                builder = ChangesetBuilder(clock: source, version: done.clientVersion + 1)
            }
            let clock = try builder.append(ref, change, wall: wall)
            state.merge.apply(try SyncOperation(clock: clock, object: ref, change: change))
            return clock
        } catch {
            throw CoveError(.invalidArgument, "sync: \(error.message)")
        }
    }

    private func position(_ before: ListPosition?, _ after: ListPosition?) throws(CoveError) -> ListPosition {
        do { return try ListPosition.between(before, after, node: node) } catch {
            throw CoveError(.internal, "sync: \(error.message)")
        }
    }

    /// An object created by the write: a create with its single values, then its collections'
    /// elements.
    mutating func created(_ cls: ObjectSchema, _ key: Int64, wall: UInt64) throws(CoveError) {
        let classKey = try store.classKey(of: cls)
        let pk = try store.primaryKeyValue(cls, key)
        let ref = try store.ref(cls, pk)
        var state = try store.loadState(classKey, pk)
        let hadHistory = !state.merge.isEmpty
        var values: [String: SyncValue] = [:]
        for p in cls.properties where !p.isBacklinks && !p.isPrimaryKey && p.collection == .none {
            values[p.name] = try store.syncValue(try store.get(cls, key, p))
        }
        try add(ref, .create(values: values), &state, wall: wall)
        state.listOrder = [:]
        for p in cls.properties where !p.isBacklinks && p.collection != .none {
            switch p.collection {
            case .list:
                var ids: [SyncClock] = []
                var previous: ListPosition?
                for v in try store.listValues(cls, key, p) {
                    let at = try position(previous, nil)
                    ids.append(try add(ref, .listInsert(property: p.name, position: at, value: try store.syncValue(v)), &state, wall: wall))
                    previous = at
                }
                state.listOrder[p.name] = ids
            case .set:
                for v in try store.setValues(cls, key, p) {
                    try add(ref, .setAdd(property: p.name, value: try store.syncValue(v)), &state, wall: wall)
                }
            case .map:
                for (k, v) in try store.mapEntries(cls, key, p) {
                    try add(ref, .mapSet(property: p.name, key: k, value: try store.syncValue(v)), &state, wall: wall)
                }
            case .none:
                break
            }
        }
        if hadHistory {
            // An object made again over a tombstone: what others wrote after its deletion
            // (concurrently with this create) shows too, as on every other replica.
            try store.showState(cls, key, &state, ref, only: nil)
        }
        try store.storeState(state, classKey, pk, ref)
        createdObjects.append((cls, key))
    }

    /// An object the write deleted (its primary key was noted as it went).
    mutating func deleted(_ cls: ObjectSchema, _ key: Int64, wall: UInt64) throws(CoveError) {
        let classKey = try store.classKey(of: cls)
        guard let pk = store.syncDeletedKeys?[ObjectLink(classKey: classKey, objectKey: key)] else {
            throw CoveError(.internal, "sync: the primary key of a deleted object of class '\(cls.className)' was not noted")
        }
        let ref = try store.ref(cls, pk)
        var state = try store.loadState(classKey, pk)
        try add(ref, .delete, &state, wall: wall)
        state.listOrder = [:]
        try store.storeState(state, classKey, pk, ref)
    }

    /// An object that existed before the write and still does: each property written.
    mutating func modified(_ cls: ObjectSchema, _ key: Int64, properties: Set<Int64>,
                           collections: [ChangeRecord.CollectionID: [ChangeRecord.CollectionOperation]],
                           wall: UInt64) throws(CoveError) {
        let classKey = try store.classKey(of: cls)
        let pk = try store.primaryKeyValue(cls, key)
        let ref = try store.ref(cls, pk)
        var state = try store.loadState(classKey, pk)
        for p in cls.properties where !p.isBacklinks && !p.isPrimaryKey {
            guard let propertyKey = p.key, properties.contains(propertyKey) else { continue }
            switch p.collection {
            case .none:
                try add(ref, .setProperty(p.name, try store.syncValue(try store.get(cls, key, p))), &state, wall: wall)
            case .list:
                let ops = collections[ChangeRecord.CollectionID(classKey: classKey, objectKey: key, propertyKey: propertyKey)] ?? []
                try listEdited(cls, key, p, ops, ref, &state, wall: wall)
            case .set:
                let now = Set(try store.setValues(cls, key, p).map { v throws(CoveError) in try store.syncValue(v) })
                let before = Set(state.merge.setValues(p.name))
                for v in now.subtracting(before).sorted() { try add(ref, .setAdd(property: p.name, value: v), &state, wall: wall) }
                for v in before.subtracting(now).sorted() { try add(ref, .setRemove(property: p.name, value: v), &state, wall: wall) }
            case .map:
                var before: [String: SyncValue] = [:]
                for e in state.merge.mapEntries(p.name) { before[e.key] = e.value }
                var now: [String: SyncValue] = [:]
                for (k, v) in try store.mapEntries(cls, key, p) { now[k] = try store.syncValue(v) }
                for k in now.keys.sorted() where before[k] != now[k] {
                    try add(ref, .mapSet(property: p.name, key: k, value: now[k] ?? .null), &state, wall: wall)
                }
                for k in before.keys.sorted() where now[k] == nil {
                    try add(ref, .mapRemove(property: p.name, key: k), &state, wall: wall)
                }
            }
        }
        try store.storeState(state, classKey, pk, ref)
    }

    /// One element of a list being replayed: one the list held before the write (by id), or one
    /// the write inserted.
    private enum Slot: Equatable {
        case existing(SyncClock)
        case new
    }

    /// A list's operations replayed on the ids its elements stood for, then the element
    /// operations they amount to.
    private mutating func listEdited(_ cls: ObjectSchema, _ key: Int64, _ p: Property,
                                     _ ops: [ChangeRecord.CollectionOperation], _ ref: SyncObjectRef,
                                     _ state: inout SyncStoredState, wall: UInt64) throws(CoveError) {
        let before = state.listOrder[p.name] ?? []
        var slots: [Slot] = before.map { .existing($0) }
        var removed: [SyncClock] = []
        var moved = Set<SyncClock>()
        var replaced = Set<SyncClock>()
        var consistent = true
        for op in ops {
            switch op {
            case .insert(let i):
                guard i >= 0, i <= slots.count else { consistent = false; break }
                slots.insert(.new, at: i)
            case .erase(let i):
                guard i >= 0, i < slots.count else { consistent = false; break }
                if case .existing(let id) = slots.remove(at: i) { removed.append(id) }
            case .set(let i):
                guard i >= 0, i < slots.count else { consistent = false; break }
                if case .existing(let id) = slots[i] { replaced.insert(id) }
            case .move(let from, let to):
                guard from >= 0, from < slots.count, to >= 0, to < slots.count else { consistent = false; break }
                let s = slots.remove(at: from)
                slots.insert(s, at: to)
                if case .existing(let id) = s { moved.insert(id) }
            case .clear:
                for case .existing(let id) in slots { removed.append(id) }
                slots = []
            case .insertKey, .eraseKey, .setKey:
                consistent = false
            }
            if !consistent { break }
        }
        let values = try store.listValues(cls, key, p)
        if !consistent || slots.count != values.count {
            // The ids no longer stand for the list (not expected): every old element goes and
            // the list's elements come again.
            removed = before
            slots = Array(repeating: .new, count: values.count)
            moved = []
            replaced = []
        }
        for id in removed { try add(ref, .listRemove(property: p.name, element: id), &state, wall: wall) }
        var positions: [SyncClock: ListPosition] = [:]
        for e in state.merge.listElements(p.name) { positions[e.id] = e.position }
        // Elements keeping their place keep their position; the others get one between the
        // element before them and the next that keeps its place.
        func keeps(_ s: Slot) -> Bool {
            if case .existing(let id) = s { return !moved.contains(id) && positions[id] != nil }
            return false
        }
        var ids: [SyncClock] = []
        ids.reserveCapacity(slots.count)
        var previous: ListPosition?
        for (i, s) in slots.enumerated() {
            if keeps(s), case .existing(let id) = s, let at = positions[id] {
                if replaced.contains(id) {
                    try add(ref, .listSet(property: p.name, element: id, value: try store.syncValue(values[i])), &state, wall: wall)
                }
                ids.append(id)
                previous = at
                continue
            }
            var next: ListPosition?
            for later in slots[(i + 1)...] where keeps(later) {
                if case .existing(let id) = later { next = positions[id] }
                break
            }
            let at = try position(previous, next)
            switch s {
            case .existing(let id):
                try add(ref, .listMove(property: p.name, element: id, position: at), &state, wall: wall)
                if replaced.contains(id) {
                    try add(ref, .listSet(property: p.name, element: id, value: try store.syncValue(values[i])), &state, wall: wall)
                }
                ids.append(id)
            case .new:
                ids.append(try add(ref, .listInsert(property: p.name, position: at, value: try store.syncValue(values[i])), &state, wall: wall))
            }
            previous = at
        }
        state.listOrder[p.name] = ids
    }
}
