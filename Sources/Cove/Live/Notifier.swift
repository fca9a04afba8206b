// Notifier: the observers of one realm, and their delivery. Each registration remembers the
// version its last delivery described and what it saw then (the rows of a collection, the
// values of an object); at each delivery point (deliver, refresh, the start of a write, never
// inside one) the change records of the commits since then, from any thread or process, are
// merged into one, a registration whose classes the record does not touch is skipped without
// reading anything, and the others compute their change set and call back.
import CoveStorage
import Synchronization

/// Keeps an observation alive; `invalidate()` (or releasing the token) stops it. A token may be
/// invalidated from inside its own callback, and from any thread: from the realm's thread no
/// callback runs after `invalidate()` returns; from another, a callback already under way on the
/// realm's thread finishes, and none starts after it. The realm lets go of the callback at its
/// next delivery point.
public final class NotificationToken: @unchecked Sendable {
    // The notifier is confined to its realm's thread, like the realm; `invalidate` from another
    // thread only sets the registration's atomic flag, which delivery reads on the realm's
    // thread. The reference is never written after `init`, so threads may share the token.
    private weak var registration: NotifierRegistration?

    /// A token of `registration`; of none, for an observation that could not start.
    init(_ registration: NotifierRegistration?) {
        self.registration = registration
    }

    /// Stops the observation: no callback runs after this returns (on the realm's thread).
    public func invalidate() {
        registration?.invalidate()
    }

    deinit { invalidate() }
}

/// One observer: what it observes, what it saw last, and its callback.
class NotifierRegistration {
    /// Set once by `invalidate()`, from any thread; never cleared.
    private let invalidated = Atomic<Bool>(false)
    var isInvalidated: Bool { invalidated.load(ordering: .acquiring) }

    /// Ends the observation (a token's `invalidate`, from any thread, or the end of what it
    /// observes); `didInvalidate` runs once, on the thread that ended it.
    func invalidate() {
        if !invalidated.exchange(true, ordering: .acquiringAndReleasing) { didInvalidate() }
    }

    /// What a kind of observer stops when its observation ends.
    func didInvalidate() {}

    /// The version the last delivery described.
    var version: UInt64
    /// The version the delivery in progress describes (the realm's current one).
    var target: UInt64 = 0
    /// Whether the initial call is still due (collections only).
    var initialPending: Bool

    init(version: UInt64, initialPending: Bool) {
        self.version = version
        self.initialPending = initialPending
    }

    /// Takes a change set computed ahead from `version` to `target`, if there is one; then
    /// `deliver` needs no change record. The notifier calls it before every `deliver`, and
    /// before it reads the records, so that a delivery every observer of which has its change
    /// set ready reads none.
    func claimComputedChanges() -> Bool { false }

    /// Calls back with the changes since the last delivery (`record` merges them), or the
    /// initial state; returns false when the observation ends (an error, a deleted object).
    func deliver(_ store: ObjectStore, _ record: ChangeRecord?) -> Bool { true }
}

/// The key paths an observer filters on, resolved to property keys per class: nil observes
/// every property (and linked objects' up to four levels), an empty list only insertions and
/// deletions.
struct KeyPathFilter {
    /// For each path, the properties along it: (class, property) from the observed class on.
    var paths: [[(cls: ObjectSchema, property: Property)]]?

    static let maxDepth = 4

    init(_ keyPaths: [String]?, root: ObjectSchema, schema: Schema) throws(CoveError) {
        guard let keyPaths else {
            paths = nil
            return
        }
        var resolved: [[(cls: ObjectSchema, property: Property)]] = []
        for path in keyPaths {
            var cls: ObjectSchema? = root
            var steps: [(cls: ObjectSchema, property: Property)] = []
            for name in path.split(separator: ".", omittingEmptySubsequences: false).map(String.init) {
                guard let current = cls else {
                    throw CoveError(.invalidArgument, "key path '\(path)': '\(name)' follows a property that is not a link")
                }
                guard let p = current[property: name] else {
                    throw CoveError(.invalidArgument, "key path '\(path)': class '\(current.className)' has no property '\(name)'")
                }
                steps.append((current, p))
                switch p.type {
                case .object(let target): cls = schema[target]
                case .linkingObjects(let source, _): cls = schema[source]
                default: cls = nil
                }
            }
            resolved.append(steps)
        }
        paths = resolved
    }

    /// Whether `objectKey` of `cls` changed in a way this filter sees, per `record` (reading the
    /// object's links at the current version to follow paths and deep links).
    func isModified(_ cls: ObjectSchema, _ objectKey: Int64, _ record: ChangeRecord, _ store: ObjectStore,
                    _ touched: Set<UInt32>) throws(CoveError) -> Bool {
        guard let paths else {
            var seen = Set<Int64>()
            return try deepModified(cls, objectKey, record, store, touched, depth: 0, seen: &seen)
        }
        for path in paths where try pathModified(path[...], objectKey, record, store) { return true }
        return false
    }

    private func pathModified(_ path: ArraySlice<(cls: ObjectSchema, property: Property)>, _ objectKey: Int64,
                              _ record: ChangeRecord, _ store: ObjectStore) throws(CoveError) -> Bool {
        guard let (cls, p) = path.first, let classKey = cls.classKey, let propertyKey = p.key else { return false }
        if record.tables[classKey]?.modified[objectKey]?.contains(propertyKey) == true { return true }
        let rest = path.dropFirst()
        if rest.isEmpty { return false }
        for target in try linkedKeys(cls, objectKey, p, store) where try pathModified(rest, target, record, store) {
            return true
        }
        return false
    }

    /// Any property of the object, or of objects it links to up to `maxDepth` levels.
    private func deepModified(_ cls: ObjectSchema, _ objectKey: Int64, _ record: ChangeRecord, _ store: ObjectStore,
                              _ touched: Set<UInt32>, depth: Int, seen: inout Set<Int64>) throws(CoveError) -> Bool {
        guard let classKey = cls.classKey else { return false }
        if let props = record.tables[classKey]?.modified[objectKey], !props.isEmpty { return true }
        if depth >= Self.maxDepth { return false }
        for p in cls.properties where p.isLink {
            guard let targetName = p.type.objectClassName, let target = store.schema[targetName],
                  let targetKey = target.classKey, touched.contains(targetKey) else { continue }
            for t in try linkedKeys(cls, objectKey, p, store) where seen.insert(Int64(targetKey) << 40 ^ t).inserted {
                if try deepModified(target, t, record, store, touched, depth: depth + 1, seen: &seen) { return true }
            }
        }
        return false
    }

    /// Whether an object that `p` of the object links to changed in a way this filter sees
    /// (without key paths: deeply; with them: along the paths that start with `p`).
    func linkModified(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ record: ChangeRecord, _ store: ObjectStore,
                      _ touched: Set<UInt32>) throws(CoveError) -> Bool {
        guard let targetName = p.type.objectClassName, let target = store.schema[targetName] else { return false }
        if let paths {
            for path in paths where path.count > 1 && path[0].property.name == p.name {
                for t in try linkedKeys(cls, objectKey, p, store) where try pathModified(path.dropFirst(), t, record, store) { return true }
            }
            return false
        }
        guard let targetKey = target.classKey, touched.contains(targetKey) else { return false }
        var seen = Set<Int64>()
        for t in try linkedKeys(cls, objectKey, p, store) where try deepModified(target, t, record, store, touched, depth: 1, seen: &seen) {
            return true
        }
        return false
    }

    /// The objects property `p` of an object links to now (none when it is deleted).
    private func linkedKeys(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ store: ObjectStore) throws(CoveError) -> [Int64] {
        guard try store.exists(cls, objectKey) else { return [] }
        var values: [Value]
        switch p.collection {
        case .none:
            if case .linkingObjects(let sourceName, let sourceProperty) = p.type {
                guard let source = store.schema[sourceName], let via = source[property: sourceProperty] else { return [] }
                return try store.backlinks(to: objectKey, from: source, via: via)
            }
            values = [try store.get(cls, objectKey, p)]
        case .list: values = try store.listValues(cls, objectKey, p)
        case .set: values = try store.setValues(cls, objectKey, p)
        case .map: values = try store.mapEntries(cls, objectKey, p).map(\.value)
        }
        return values.compactMap { if case .link(let l) = $0 { return l.objectKey } else { return nil } }
    }

    /// The names of the observed object's own properties this filter lists (nil: all).
    var ownProperties: Set<String>? {
        paths.map { Set($0.compactMap { $0.first?.property.name }) }
    }
}

/// The observers of one realm.
final class RealmNotifier {
    private var registrations: [NotifierRegistration] = []
    /// A pin on the oldest version a registration last saw, so the change records after it stay
    /// in the history until they are read.
    private var pin: Snapshot?
    private var delivering = false

    func add(_ registration: NotifierRegistration, pinning snapshot: Snapshot) {
        registrations.append(registration)
        if pin == nil || (pin?.version ?? 0) > registration.version {
            pin?.end()
            pin = snapshot
        } else {
            snapshot.end()
        }
    }

    var isEmpty: Bool { registrations.allSatisfy(\.isInvalidated) }

    /// Whether a delivery is under way (a callback is running on this realm's thread).
    var isDelivering: Bool { delivering }

    /// Delivers to every registration what happened up to the realm's current version.
    /// Registrations added during delivery wait for the next one; a callback may invalidate any
    /// token, its own included. Without `initialCalls` (the delivery that starts a write), the
    /// observers still waiting for their initial call keep waiting for the next delivery, so
    /// that it shows the state after the write (as realm-swift's initial call comes once the
    /// query ran, after a write begun at once).
    func deliver(_ realm: Realm, initialCalls: Bool = true) throws(CoveError) {
        if delivering { return }
        delivering = true
        defer {
            delivering = false
            realm.acknowledgeDelivery()
        }
        registrations.removeAll(where: \.isInvalidated)
        if registrations.isEmpty {
            pin?.end()
            pin = nil
            return
        }
        let current = try realm.version
        let store = try realm.objectStore()
        // The change records are read only for the observers without a change set computed
        // ahead (which they take now, so that a newer one cannot replace it meanwhile; one the
        // notification thread is computing now is waited for, and the others are left to this
        // thread).
        var claimed = Set<ObjectIdentifier>()
        var oldest = current
        for registration in registrations where registration.version < current || registration.initialPending {
            if registration.initialPending && !initialCalls {
                // Its initial call reads the state when it comes: no record is needed for it.
                registration.version = current
                continue
            }
            registration.target = current
            if registration.claimComputedChanges() {
                claimed.insert(ObjectIdentifier(registration))
            } else {
                oldest = min(oldest, registration.version)
            }
        }
        var records: [UInt64: ChangeRecord] = [:]
        if oldest < current {
            let newest: Snapshot
            do { newest = try realm.file.storage.beginRead() } catch { throw CoveError(error) }
            defer { newest.end() }
            records = try ChangeRecord.read(from: newest, after: oldest, through: current)
        }
        // Observers that last heard of the same version share one merged record.
        var mergedSince: [UInt64: ChangeRecord] = [:]
        for registration in registrations {
            // A callback may have closed the realm: the others hear nothing more.
            if realm.isClosed { break }
            if registration.isInvalidated { continue }
            if registration.initialPending && !initialCalls { continue }
            var merged: ChangeRecord?
            if claimed.contains(ObjectIdentifier(registration)) {
                // Its change set is in hand: no record is needed.
                merged = ChangeRecord()
            } else if registration.version < current {
                if let m = mergedSince[registration.version] {
                    merged = m
                } else {
                    // A missing record cannot be, while the pin holds.
                    let m = ChangeRecord.merged(records, after: registration.version, through: current)
                    mergedSince[registration.version] = m
                    merged = m
                }
            }
            if registration.initialPending || merged != nil {
                registration.target = current
                if !registration.deliver(store, merged) { registration.invalidate() }
            }
            registration.version = current
        }
        registrations.removeAll(where: \.isInvalidated)
        // Move the pin up to the oldest version still to be described.
        if registrations.isEmpty {
            pin?.end()
            pin = nil
        } else if let p = pin, p.version < current {
            let current = try realm.pinnedSnapshot()
            let next: Snapshot
            do { next = try current.duplicate() } catch { throw CoveError(error) }
            p.end()
            pin = next
        }
    }

    func close() {
        registrations.removeAll()
        pin?.end()
        pin = nil
    }
}

// MARK: - Collections

/// What a Results observer computes its changes with, on the realm's thread or on the change
/// worker's (with the engine moved to a frozen copy of the realm there).
struct CollectionDiffer {
    let engine: ResultsEngine
    let filter: KeyPathFilter
    /// Class keys whose changes can change the rows or their objects.
    let relevant: Set<UInt32>
    let rootClass: ObjectSchema?
    /// The keys of the rows it last read or made, shared with its moved copies.
    var rowKeys = RowKeysCache()
    /// Its query's predicate, bound once for the incremental path, shared with its moved copies.
    var localPredicate = LocalPredicateCache()
    /// The plan and state of the incremental path of sorted results, shared likewise.
    var sortedState = SortedRowsCache()

    /// The same differ reading `realm` (a frozen copy at another version).
    func moved(to realm: Realm) throws(CoveError) -> CollectionDiffer {
        CollectionDiffer(engine: try engine.moved(to: realm), filter: filter, relevant: relevant, rootClass: rootClass,
                         rowKeys: rowKeys, localPredicate: localPredicate, sortedState: sortedState)
    }

    /// The changes from `rows` (the results at `version`, the record's first) to the results at
    /// `target`, the engine's realm's version, and the new rows; nil when the record touches
    /// nothing that can change them (the rows stand).
    func advance(from rows: [Value], since version: UInt64, _ record: ChangeRecord, _ store: ObjectStore,
                 at target: UInt64) throws(CoveError) -> (changes: CollectionChangeSet, rows: [Value])? {
        let touched = record.touchedClasses
        if !record.schemaChanged && touched.isDisjoint(with: relevant) {
            sortedState.carry(rows, from: version, to: target)
            return nil
        }
        if let fast = try incremental(rows, record, touched, store) { return fast }
        if let fast = try incrementalSorted(rows, since: version, record, touched, store, at: target) { return fast }
        let new = try engine.elements()
        return (try changes(from: rows, to: new, record, touched, store), new)
    }

    /// The changes from `rows` to `new` found by comparing them, the rows that stayed checked
    /// against the key-path filter.
    func changes(from rows: [Value], to new: [Value], _ record: ChangeRecord, _ touched: Set<UInt32>,
                 _ store: ObjectStore) throws(CoveError) -> CollectionChangeSet {
        var modified: (Value) -> Bool = { _ in false }
        var failure: CoveError?
        if let cls = rootClass {
            modified = { [filter] v in
                guard case .link(let link) = v, failure == nil else { return false }
                switch Result(catching: { () throws(CoveError) -> Bool in
                    try filter.isModified(cls, link.objectKey, record, store, touched)
                }) {
                case .success(let b): return b
                case .failure(let e):
                    failure = e
                    return false
                }
            }
        }
        let changes = CollectionChangeSet.diff(old: rows, new: new, modified: modified)
        if let failure { throw failure }
        return changes
    }
}

/// An observed Results (or list or set): its rows at the last delivery and the classes whose
/// changes could alter them. With a change worker, the worker computes the change set ahead
/// and delivery takes it when it describes exactly this delivery's versions.
final class CollectionRegistration: NotifierRegistration {
    let differ: CollectionDiffer
    let callback: (CollectionChange) -> Void
    /// Whether it also hears of change sets whose rows may have changed their sort values in
    /// place and nothing else (layers keyed on those values: sections).
    var hearsResorting = false
    var rows: [Value]
    /// The worker's side of this observer (nil: every change set is computed here).
    var job: CollectionJob?

    /// The worker stops computing for it (`CollectionJob.cancel` takes the job's lock; `job` is
    /// set before the token is handed out).
    override func didInvalidate() { job?.cancel() }

    init(differ: CollectionDiffer, version: UInt64, callback: @escaping (CollectionChange) -> Void) {
        self.differ = differ
        self.rows = []
        self.callback = callback
        super.init(version: version, initialPending: true)
    }

    /// The worker's change set taken by `claimComputedChanges`, for this delivery.
    private var claimed: CollectionJob.Ready?

    override func claimComputedChanges() -> Bool {
        claimed = job?.take(startingAt: version, initial: initialPending, endingAt: target)
        return claimed != nil
    }

    override func deliver(_ store: ObjectStore, _ record: ChangeRecord?) -> Bool {
        // The rows of the previous delivery, mostly last held here once the results and the
        // worker hold the new ones: let go after the callback (freeing 100,000 rows takes a
        // quarter of a millisecond), their storage kept for the next rows of sorted results.
        var previous = rows
        defer { differ.sortedState.recycle(&previous, current: rows) }
        do throws(CoveError) {
            // The worker's change set, when the notifier claimed one for this delivery (it
            // starts where this observer stands and ends at this delivery's version).
            let computed = claimed
            claimed = nil
            if let job, let ready = computed {
                rows = ready.rows
                differ.engine.seed(ready.rows, plan: ready.plan)
                if initialPending {
                    initialPending = false
                    job.rebase(version: target, rows: rows)
                    callback(.initial)
                } else {
                    job.rebase(version: target, rows: rows)
                    if let changes = ready.changes, calls(changes) { callback(.update(changes)) }
                }
                return true
            }
            if initialPending {
                initialPending = false
                rows = try differ.initialRows(store, at: target)
                job?.rebase(version: target, rows: rows)
                callback(.initial)
                return true
            }
            guard let record else { return true }
            let advanced = try differ.advance(from: rows, since: version, record, store, at: target)
            if let advanced {
                // The rows are the results' at this version, whichever path made them: a read
                // after the delivery needs not evaluate (or sort) them again.
                rows = advanced.rows
                differ.engine.seed(rows, plan: differ.engine.lastPlan)
            }
            job?.rebase(version: target, rows: rows)
            if let changes = advanced?.changes, calls(changes) { callback(.update(changes)) }
            return true
        } catch {
            callback(.error(error))
            return false
        }
    }

    private func calls(_ changes: CollectionChangeSet) -> Bool {
        !changes.isEmpty || (hearsResorting && changes.mayHaveResorted)
    }
}

extension CollectionDiffer {
    /// The fast path, whose cost follows what changed rather than the size of the results: a
    /// class's objects in key order filtered by a predicate on their own plain properties, after
    /// commits that touched that class only. The predicate runs on the inserted and modified
    /// objects alone, the rows are merged by key, and only the modified objects are checked
    /// against the key-path filter. Nil when it does not apply.
    func incremental(_ rows: [Value], _ record: ChangeRecord, _ touched: Set<UInt32>,
                     _ store: ObjectStore) throws(CoveError) -> (changes: CollectionChangeSet, rows: [Value])? {
        guard !record.schemaChanged, let cls = rootClass, let classKey = cls.classKey, touched == [classKey],
              case .table = engine.source, engine.stages.count <= 1 else { return nil }
        var predicate = BoundPredicate.constant(true)
        var reads: Set<Int64>? = []
        if case .query(let parsed, let args, let text)? = engine.stages.first {
            guard parsed.descriptors.isEmpty else { return nil }
            guard let local = try localPredicate.bound(parsed, args, text, cls, store) else { return nil }
            predicate = local.predicate
            reads = local.reads
        } else if !engine.stages.isEmpty {
            return nil
        }
        guard let table = record.tables[classKey] else { return nil }
        // The rows are links in ascending key order (a table read in key order, filtered);
        // their keys are at hand when these rows came out of the last change set.
        let old: SortedKeys
        if let known = rowKeys.keys(of: rows) {
            old = known
        } else {
            var keys: [Int64] = []
            keys.reserveCapacity(rows.count)
            for row in rows {
                guard case .link(let l) = row else { return nil }
                if let last = keys.last, l.objectKey <= last { return nil }
                keys.append(l.objectKey)
            }
            old = SortedKeys(keys)
        }
        let oldKeys = old.keys
        // The objects whose membership may have changed: the inserted ones, and those written
        // in a property the predicate reads (`reads`; nil: any). Any other object matches
        // now exactly when it matched before. (An object is never both inserted and modified.)
        var candidates: [Int64] = []
        for r in table.inserted { candidates.append(contentsOf: r) }
        for (k, written) in table.modified where reads.map({ !written.isDisjoint(with: $0) }) ?? true {
            candidates.append(k)
        }
        candidates.sort()
        var evaluator = QueryEvaluator(store: store)
        // Old positions of the rows that leave, and keys of the objects that arrive.
        var leaving: [Int] = []
        var arriving: [Int64] = []
        for r in table.deleted { for k in r { if let i = old.position(of: k) { leaving.append(i) } } }
        for k in candidates {
            var matches = try store.exists(cls, k)
            if matches { matches = try evaluator.matches(predicate, .link(ObjectLink(classKey: classKey, objectKey: k))) }
            let was = old.position(of: k)
            if let was, !matches { leaving.append(was) }
            if was == nil && matches { arriving.append(k) }
        }
        var changes = CollectionChangeSet()
        var newKeys = oldKeys
        var newRows = rows
        let sameRows = leaving.isEmpty && arriving.isEmpty
        if !sameRows {
            leaving = Array(Set(leaving)).sorted()
            arriving.sort()
            changes.deletions = leaving
            // The keys of the rows that stay, copied a run at a time between the leaving ones,
            // with the arriving ones merged in by key; then the rows made from the keys (a link
            // made from a key costs less than a row copied).
            newKeys = []
            newKeys.reserveCapacity(oldKeys.count - leaving.count + arriving.count)
            var a = 0
            var from = 0
            for i in leaving + [oldKeys.count] {
                var s = from
                while s < i {
                    while a < arriving.count && arriving[a] < oldKeys[s] {
                        changes.insertions.append(newKeys.count)
                        newKeys.append(arriving[a])
                        a += 1
                    }
                    // A run of staying rows up to the next arrival.
                    let end = a < arriving.count ? SortedKeys.lowerBound(of: arriving[a], in: oldKeys, s..<i) : i
                    newKeys.append(contentsOf: oldKeys[s..<end])
                    s = end
                }
                from = i + 1
            }
            for k in arriving[a...] {
                changes.insertions.append(newKeys.count)
                newKeys.append(k)
            }
            newRows = newKeys.map { .link(ObjectLink(classKey: classKey, objectKey: $0)) }
        }
        let new = sameRows ? old : SortedKeys(newKeys)
        // Rows that stayed and whose objects changed in a way the filter sees.
        var modified: [(new: Int, old: Int)] = []
        let wanted = Array(table.modified.keys)
        let oldPositions = old.positions(of: wanted)
        let newPositions = sameRows ? oldPositions : new.positions(of: wanted)
        for (n, k) in wanted.enumerated() {
            guard let i = oldPositions[n], let j = newPositions[n] else { continue }
            if try filter.isModified(cls, k, record, store, touched) { modified.append((j, i)) }
        }
        modified.sort { $0.new < $1.new }
        changes.modifications = modified.map(\.new)
        changes.modificationsOld = modified.map(\.old)
        rowKeys.remember(newRows, new)
        return (changes, newRows)
    }
}

/// A differ's query predicate bound once, when it is local (it reads only the tested object's
/// own properties), with the keys of the properties it reads; every change set of the
/// incremental path would otherwise bind the query again. The entry holds for the schema it
/// was bound against. A binding that looked an object up by primary key is not kept: that
/// object may be created or deleted later.
final class LocalPredicateCache: @unchecked Sendable {
    private struct Entry {
        var schema: Schema
        var predicate: BoundPredicate?
        var reads: Set<Int64>?
    }

    private let entry = Mutex<Entry?>(nil)

    /// The bound predicate of `parsed` on `cls` and the keys of the properties it reads (nil
    /// when one has no key); nil when it is not local.
    func bound(_ parsed: ParsedQuery, _ arguments: [QueryArgument], _ text: String, _ cls: ObjectSchema,
               _ store: ObjectStore) throws(CoveError) -> (predicate: BoundPredicate, reads: Set<Int64>?)? {
        if let e = entry.withLock({ $0 }), e.schema == store.schema {
            return e.predicate.map { ($0, e.reads) }
        }
        var binder = QueryBinder(schema: store.schema, store: store, cls: cls, elementProperty: nil, arguments: arguments, text: text)
        let predicate = try binder.bind(parsed.predicate)
        let local = predicate.isLocal ? predicate : nil
        let reads = local?.readPropertyKeys
        if !binder.lookedUpObjects {
            let e = Entry(schema: store.schema, predicate: local, reads: reads)
            entry.withLock { $0 = e }
        }
        return local.map { ($0, reads) }
    }
}

/// The object keys of the rows a differ made last, found again by the identity of the rows'
/// storage: the next change set starts from those rows, and reading the keys out of every row
/// again would cost a pass over all of them. Holding the rows keeps their storage from being
/// reused, so the same storage and count mean the same rows.
final class RowKeysCache: Sendable {
    private let last = Mutex<(rows: [Value], keys: SortedKeys)?>(nil)

    private static func identity(_ rows: [Value]) -> UnsafeRawPointer? {
        rows.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
    }

    /// The keys of `rows` if they are the rows last remembered.
    func keys(of rows: [Value]) -> SortedKeys? {
        guard !rows.isEmpty else { return nil }
        let id = Self.identity(rows)
        return last.withLock { entry in
            guard let entry, entry.rows.count == rows.count, Self.identity(entry.rows) == id else { return nil }
            return entry.keys
        }
    }

    /// Remembers that `keys` are the object keys of `rows`, in order.
    func remember(_ rows: [Value], _ keys: SortedKeys) {
        last.withLock { $0 = (rows, keys) }
    }
}

/// Object keys in ascending order, with every 32nd of them in a small fence: finding a key
/// reads the fence (a few KiB, which stays in cache between deliveries) and one block of 32
/// keys, where a binary search over all of them would miss the cache at nearly every step.
struct SortedKeys: Sendable {
    let keys: [Int64]
    private let fence: [Int64]
    private static let block = 32

    init(_ keys: [Int64]) {
        self.keys = keys
        var fence: [Int64] = []
        fence.reserveCapacity(keys.count / Self.block + 1)
        var i = 0
        while i < keys.count {
            fence.append(keys[i])
            i += Self.block
        }
        self.fence = fence
    }

    /// The index of `key`, or nil when it is not one of the keys.
    func position(of key: Int64) -> Int? {
        blockStart(of: key).flatMap { position(of: key, inBlockAt: $0) }
    }

    /// The indices of `wanted` (nil for a key not among them), as `position(of:)` finds them,
    /// but with the blocks the keys fall in fetched into the cache first, all at once: for
    /// scattered keys the misses then overlap instead of following one another.
    func positions(of wanted: [Int64]) -> [Int?] {
        let starts = wanted.map(blockStart(of:))
        keys.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            // A block of 32 keys spans at most five cache lines.
            for case let start? in starts { prefetchMemory(base + start * MemoryLayout<Int64>.stride, lines: 5) }
        }
        return zip(wanted, starts).map { key, start in start.flatMap { position(of: key, inBlockAt: $0) } }
    }

    /// Where the block that would hold `key` starts: the last block whose first key is at most
    /// `key` (nil when `key` is below every key).
    private func blockStart(of key: Int64) -> Int? {
        var lo = 0, hi = fence.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if fence[mid] <= key { lo = mid + 1 } else { hi = mid }
        }
        return lo > 0 ? (lo - 1) * Self.block : nil
    }

    private func position(of key: Int64, inBlockAt start: Int) -> Int? {
        let i = Self.lowerBound(of: key, in: keys, start..<Swift.min(start + Self.block, keys.count))
        return i < keys.count && keys[i] == key ? i : nil
    }

    /// The first index of `range` in ascending `keys` whose key is not below `key`
    /// (`range.upperBound` when there is none).
    static func lowerBound(of key: Int64, in keys: [Int64], _ range: Range<Int>) -> Int {
        var lo = range.lowerBound, hi = range.upperBound
        while lo < hi {
            let mid = (lo + hi) / 2
            if keys[mid] < key { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}

extension BoundPredicate {
    /// Whether the predicate reads only the tested object's own single-valued properties (no
    /// links, collections, backlinks, subqueries or variables), so that whether an object
    /// matches can change only when that object is written.
    var isLocal: Bool {
        switch self {
        case .constant: return true
        case .and(let terms), .or(let terms): return terms.allSatisfy(\.isLocal)
        case .not(let inner): return inner.isLocal
        case .compare(let c): return c.left.isLocal && c.right.isLocal
        }
    }
}

extension BoundPredicate {
    /// The keys of the tested object's properties a local predicate reads; nil when one of
    /// them has no key (then any write may matter).
    var readPropertyKeys: Set<Int64>? {
        var keys = Set<Int64>()
        return collectReads(into: &keys) ? keys : nil
    }

    private func collectReads(into keys: inout Set<Int64>) -> Bool {
        switch self {
        case .constant: return true
        case .and(let terms), .or(let terms): return terms.allSatisfy { $0.collectReads(into: &keys) }
        case .not(let inner): return inner.collectReads(into: &keys)
        case .compare(let c): return c.left.collectReads(into: &keys) && c.right.collectReads(into: &keys)
        }
    }
}

extension BoundExpression {
    /// Adds the keys of the properties of the tested object this expression reads; false when
    /// one has no key.
    fileprivate func collectReads(into keys: inout Set<Int64>) -> Bool {
        switch self {
        case .constant, .list: return true
        case .arithmetic(_, let a, let b): return a.collectReads(into: &keys) && b.collectReads(into: &keys)
        case .subquery: return false
        case .path(let p):
            for step in p.steps {
                guard case .property(_, let property) = step else { continue }
                guard let key = property.key else { return false }
                keys.insert(key)
            }
            return true
        }
    }

    var isLocal: Bool {
        switch self {
        case .constant, .list: return true
        case .subquery: return false
        case .arithmetic(_, let a, let b): return a.isLocal && b.isLocal
        case .path(let p):
            guard p.root == .object, p.steps.count <= 1 else { return false }
            if case .aggregate = p.postfix { return false }
            if case .count = p.postfix, p.isMultiple { return true }
            if let step = p.steps.first, case .property(_, let property) = step { return !property.isBacklinks }
            return p.steps.isEmpty
        }
    }
}

// MARK: - Objects

/// An observed object: its values at the last delivery.
final class ObjectRegistration: NotifierRegistration {
    let object: DynamicObject
    let filter: KeyPathFilter
    let callback: (ObjectChange<DynamicObject>) -> Void
    var values: [String: Value]

    init(object: DynamicObject, filter: KeyPathFilter, values: [String: Value], version: UInt64,
         callback: @escaping (ObjectChange<DynamicObject>) -> Void) {
        self.object = object
        self.filter = filter
        self.values = values
        self.callback = callback
        super.init(version: version, initialPending: false)
    }

    static func snapshot(_ object: DynamicObject) throws(CoveError) -> [String: Value] {
        var out: [String: Value] = [:]
        for p in object.objectSchema.properties where p.collection == .none && !p.isBacklinks {
            out[p.name] = try object.value(forKey: p.name)
        }
        return out
    }

    override func deliver(_ store: ObjectStore, _ record: ChangeRecord?) -> Bool {
        guard let record else { return true }
        let cls = object.objectSchema
        do throws(CoveError) {
            guard let classKey = cls.classKey else { return true }
            let table = record.tables[classKey]
            let exists = try store.exists(cls, object.objectKey)
            if table?.isDeleted(object.objectKey) == true || !exists {
                callback(.deleted)
                return false
            }
            let touched = record.touchedClasses
            let own = table?.modified[object.objectKey] ?? []
            var changes: [PropertyChange] = []
            let wanted = filter.ownProperties
            for p in cls.properties where !p.isBacklinks {
                guard let key = p.key else { continue }
                if let wanted, !wanted.contains(p.name) { continue }
                var changed = own.contains(key)
                if !changed && p.isLink {
                    // A change along the link (`dog.name`, or any linked property without key
                    // paths) is a change of the link.
                    changed = try filter.linkModified(cls, object.objectKey, p, record, store, touched)
                }
                if !changed { continue }
                if p.collection == .none {
                    let new = try object.value(forKey: p.name)
                    changes.append(PropertyChange(name: p.name, old: values[p.name] ?? .null, new: new, realm: object.realm))
                    values[p.name] = new
                } else {
                    changes.append(PropertyChange(name: p.name, old: nil, new: nil, realm: nil))
                }
            }
            if !changes.isEmpty { callback(.change(object, changes)) }
            return true
        } catch {
            callback(.error(error))
            return false
        }
    }
}

// MARK: - Registering

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

extension KeyPathFilter {
    init(paths: [[(cls: ObjectSchema, property: Property)]]?) {
        self.paths = paths
    }
}

extension DynamicObject {
    /// Calls `block` after each commit that wrote a property of the object (or, without key
    /// paths, of the objects it links to), with old and new values, and once when it is
    /// deleted. No initial call.
    /// - Throws: `.frozen`, `.inWrite`, `.invalidated`, `.invalidArgument` (an unknown key path).
    public func observeChanges(keyPaths: [String]? = nil, _ block: @escaping (ObjectChange<DynamicObject>) -> Void) throws(CoveError) -> NotificationToken {
        try realm.requireObservable("object")
        if isInvalidated { throw CoveError(.invalidated, "the \(objectSchema.className) object \(objectKey) was deleted: it cannot be observed") }
        let store = try realm.objectStore()
        let filter = try KeyPathFilter(keyPaths, root: objectSchema, schema: store.schema)
        let registration = ObjectRegistration(object: self, filter: filter, values: try ObjectRegistration.snapshot(self),
                                              version: try realm.version, callback: block)
        try realm.register(registration)
        return NotificationToken(registration)
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

extension KeyPathFilter {
    /// The keys of `root`'s class and of every class reachable from it through links and
    /// backlinks, up to the depth deep changes follow (and one more): a commit that touches
    /// none of them changes nothing an observer of `root`'s objects sees.
    static func reachableClasses(from root: ObjectSchema, _ schema: Schema) -> Set<UInt32> {
        var out = Set<UInt32>()
        var frontier = [root]
        var depth = 0
        while !frontier.isEmpty && depth <= maxDepth + 1 {
            var next: [ObjectSchema] = []
            for cls in frontier {
                guard let key = cls.classKey, out.insert(key).inserted else { continue }
                for p in cls.properties {
                    switch p.type {
                    case .object(let name), .linkingObjects(let name, _):
                        if let target = schema[name] { next.append(target) }
                    default: break
                    }
                }
            }
            frontier = next
            depth += 1
        }
        return out
    }
}
