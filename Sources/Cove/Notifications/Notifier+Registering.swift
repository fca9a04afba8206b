// Registering observers and delivering: `deliver()`, `observeChanges` on results, and what
// results observers need of their engine (its root class, the classes that concern it).
import CoveCore
import CoveStorage

extension Realm {
    /// Delivers the notifications that are ready: a live realm first advances to the newest
    /// version (as Realm's autorefresh does when its run loop wakes), so that what commits of
    /// any thread or process did is delivered once the notification descriptor is readable. A
    /// frozen realm delivers nothing. Never inside a write; called from inside a callback, it
    /// returns at once (the realm stays at the version being delivered).
    /// - Throws: `.inWrite`, `.closed`.
    public func deliver() throws(CoveError) {
        if isClosed { throw CoveError(.closed, "the realm is closed") }
        if isInWriteTransaction { throw CoveError(.inWrite, "notifications are not delivered inside a write") }
        if notifier.isDelivering { return }
        if isFrozen {
            try notifier.deliver(self)
        } else {
            try refresh()
        }
    }

    /// After a delivery: the notification descriptor is drained up to this version.
    func acknowledgeDelivery() {
        if let watcher, let v = try? version { watcher.acknowledge(v) }
    }

    func register(_ registration: NotifierRegistration) throws(CoveError) {
        let current = try pinnedSnapshot()
        let pin: Snapshot
        do { pin = try current.duplicate() } catch { throw CoveError(error) }
        notifier.add(registration, pinning: pin)
    }

    /// Refuses to observe where nothing can be delivered.
    func requireObservable(_ what: String) throws(CoveError) {
        if isClosed { throw CoveError(.closed, "the realm is closed") }
        if isFrozen { throw CoveError(.frozen, "a frozen \(what) cannot be observed: it never changes") }
        if isInWriteTransaction { throw CoveError(.inWrite, "cannot observe \(what) inside a write transaction") }
    }
}

extension Results {
    /// Calls `block` with `.initial` at the next delivery, then with the changes after each
    /// commit that changed the matches or their objects (key paths narrow which properties
    /// count: `["name", "toys.brand"]`; `[]` means insertions and deletions only; nil, every
    /// property and linked objects' up to four levels).
    /// - Throws: `.frozen`, `.inWrite`, `.invalidArgument` (a key path that names no property),
    ///   and the error the results were made with (`queryError`).
    public func observeChanges(keyPaths: [String]? = nil, _ block: @escaping (CollectionChange) -> Void) throws(CoveError) -> NotificationToken {
        try observeChanges(keyPaths: keyPaths, hearingResorting: false, block)
    }

    /// `observeChanges`; with `hearingResorting`, also called with change sets that only say
    /// rows may have changed their sort values in place.
    func observeChanges(keyPaths: [String]?, hearingResorting: Bool,
                        _ block: @escaping (CollectionChange) -> Void) throws(CoveError) -> NotificationToken {
        if let failure = engine.failure { throw failure }
        let realm = engine.realm
        try realm.requireObservable("results")
        let store = try realm.objectStore()
        let root = try engine.rootClass(store)
        let filter: KeyPathFilter
        if let root {
            filter = try KeyPathFilter(keyPaths, root: root, schema: store.schema)
        } else {
            if let keyPaths, !keyPaths.isEmpty {
                throw CoveError(.invalidArgument, "the results hold values: key paths name properties of objects")
            }
            filter = KeyPathFilter(paths: keyPaths == nil ? nil : [])
        }
        let differ = CollectionDiffer(engine: engine, filter: filter, relevant: try engine.relevantClasses(store), rootClass: root)
        let registration = CollectionRegistration(differ: differ, version: try realm.version, callback: block)
        registration.hearsResorting = hearingResorting
        try realm.register(registration)
        try realm.attachToChangeWorker(registration)
        return NotificationToken(registration)
    }
}

extension ResultsEngine {
    /// Observes these results and hands each change with the rows (links or values) whose
    /// objects were modified, for the layers built on results (sections, projections).
    func observeRaw(keyPaths: [String]?, _ block: @escaping (CollectionChange, Set<Value>) -> Void) throws(CoveError) -> NotificationToken {
        let results = Results<Value>(engine: self)
        return try results.observeChanges(keyPaths: keyPaths, hearingResorting: true) { [weak self] change in
            var modified = Set<Value>()
            if case .update(let c) = change {
                let rows = (try? self?.elements()) ?? []
                // A modified row that moved in the results (reported there as deleted and
                // inserted) counts too: a layer that regroups the rows may keep it in place.
                for j in c.modifications + c.movedModified where j < rows.count { modified.insert(rows[j]) }
            }
            block(change, modified)
        }
    }
}

extension ResultsEngine {
    /// The class of the objects, nil for values.
    func rootClass(_ store: ObjectStore) throws(CoveError) -> ObjectSchema? {
        switch source {
        case .table(let name): return try store.objectSchema(name)
        case .list(let l): return l.property.type.objectClassName.flatMap { store.schema[$0] }
        case .set(let s): return s.property.type.objectClassName.flatMap { store.schema[$0] }
        case .backlinks(let target, let name):
            guard case .linkingObjects(let source, _)? = target.objectSchema[property: name]?.type else { return nil }
            return store.schema[source]
        }
    }

    /// The classes whose changes can change the results: the objects' class and every class
    /// reachable from it through links and backlinks (up to the depth deep changes follow),
    /// and for a list or set its owner's class.
    func relevantClasses(_ store: ObjectStore) throws(CoveError) -> Set<UInt32> {
        switch source {
        case .table(let name): return KeyPathFilter.reachableClasses(from: try store.objectSchema(name), store.schema)
        case .list(let l): return KeyPathFilter.reachableClasses(from: l.owner.objectSchema, store.schema)
        case .set(let s): return KeyPathFilter.reachableClasses(from: s.owner.objectSchema, store.schema)
        case .backlinks(let target, _): return KeyPathFilter.reachableClasses(from: target.objectSchema, store.schema)
        }
    }
}
