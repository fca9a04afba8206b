// Observed collections: a Results (or list or set) observer's registration and the differ that
// computes its change sets, on the realm's thread or on the change worker's.
import CoveCore

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
