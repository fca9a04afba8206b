// The change sets of sorted results, computed from what a commit touched instead of sorting
// every match again: rows whose object was not written in a property the sort or the filter
// reads keep their order; the objects that were inserted, deleted or written there leave, and
// those that match now go back in by binary search over the rows that stayed. A commit that
// touches k objects of n rows costs O(n) for copying the keys plus O(k log n) reads.
import Synchronization

/// What the incremental path of sorted results needs: the filter (local to the objects, or
/// none), the sort keys (plain properties of the class) and the properties both read.
struct IncrementalSortPlan {
    var predicate: BoundPredicate?
    var keys: [(BoundPath, ascending: Bool)]
    /// Property keys the filter and the sort read; a write to any other property keeps a row
    /// where it is.
    var reads: Set<Int64>
}

extension ResultsEngine {
    /// The plan when these results are a class's objects, filtered by a local predicate (or
    /// not), sorted by plain properties, with nothing after the sort (no DISTINCT, LIMIT or
    /// OFFSET); nil otherwise.
    func incrementalSortPlan(_ cls: ObjectSchema, _ store: ObjectStore,
                             _ localPredicate: LocalPredicateCache) throws(CoveError) -> IncrementalSortPlan? {
        guard case .table = source, !stages.isEmpty, stages.count <= 2 else { return nil }
        var plan = IncrementalSortPlan(predicate: nil, keys: [], reads: [])
        for (i, stage) in stages.enumerated() {
            switch stage {
            case .query(let parsed, let args, let text):
                guard i == 0 else { return nil }
                guard let local = try localPredicate.bound(parsed, args, text, cls, store), let reads = local.reads else { return nil }
                plan.predicate = local.predicate
                plan.reads.formUnion(reads)
                if !parsed.descriptors.isEmpty {
                    // SORT alone in the query's text, and nothing after it.
                    guard stages.count == 1 else { return nil }
                    var binder = QueryBinder(schema: store.schema, store: store, cls: cls, elementProperty: nil, arguments: args, text: text)
                    let bound = try binder.bind(parsed)
                    guard bound.descriptors.count == 1, case .sort(let keys) = bound.descriptors[0] else { return nil }
                    plan.keys = keys
                }
            case .sort(let descriptors):
                guard i == stages.count - 1, plan.keys.isEmpty else { return nil }
                let binder = QueryBinder(schema: store.schema, store: store, cls: cls, elementProperty: nil, arguments: [], text: summary)
                for d in descriptors {
                    plan.keys.append((try binder.bindPath(QueryKeyPath(head: d.keyPath, steps: [])), d.ascending))
                }
            case .distinct:
                return nil
            }
        }
        guard !plan.keys.isEmpty else { return nil }
        for (path, _) in plan.keys {
            guard path.root == .object, path.steps.count == 1, case .property(_, let p) = path.steps[0], case .none = path.postfix,
                  p.collection == .none, !p.isLink, let key = p.key else { return nil }
            plan.reads.insert(key)
        }
        return plan
    }
}

extension CollectionDiffer {
    /// How many change sets the incremental path of sorted results made (tests read it).
    static let incrementallySorted = Atomic<Int>(0)

    /// The change set of sorted results after a commit that touched their class only, and the
    /// new rows; nil when the results are not of that shape (see `incrementalSortPlan`).
    /// Ties sort by object key, as a full evaluation over the table (in key order) sorts them.
    func incrementalSorted(_ rows: [Value], _ record: ChangeRecord, _ touched: Set<UInt32>,
                           _ store: ObjectStore) throws(CoveError) -> (changes: CollectionChangeSet, rows: [Value])? {
        guard !record.schemaChanged, let cls = rootClass, let classKey = cls.classKey, touched == [classKey],
              let table = record.tables[classKey],
              let plan = try engine.incrementalSortPlan(cls, store, localPredicate) else { return nil }
        // The objects whose place may change: inserted ones, and those written in a property
        // the sort or the filter reads; every other written object stays where it is.
        var candidates = Set<Int64>()
        for r in table.inserted { for k in r { candidates.insert(k) } }
        for (k, written) in table.modified where !written.isDisjoint(with: plan.reads) { candidates.insert(k) }
        var deleted = Set<Int64>()
        for r in table.deleted { for k in r { deleted.insert(k) } }
        if candidates.isEmpty && deleted.isEmpty {
            // Nothing moves: the rows stand, and only the written ones may be modified.
            return (try modifiedInPlace(rows, table, classKey, cls, record, store, touched), rows)
        }
        // One pass over the old rows: the rows that stay, in their order; the old positions of
        // those that leave (deleted, or candidates that may move); and of the written rows
        // that stay put.
        let watched = KeyFilter(Array(candidates) + Array(deleted) + Array(table.modified.keys))
        var stayed: [Int64] = []
        stayed.reserveCapacity(rows.count)
        var leavingAt: [Int] = []
        var leavingKeys: [Int64] = []
        var written: [(old: Int, key: Int64)] = []
        var oldPosition: [Int64: Int] = [:]
        for (i, row) in rows.enumerated() {
            guard case .link(let l) = row else { return nil }
            let k = l.objectKey
            if watched.mayContain(k) {
                if deleted.contains(k) || candidates.contains(k) {
                    leavingAt.append(i)
                    leavingKeys.append(k)
                    oldPosition[k] = i
                    continue
                }
                if table.modified[k] != nil { written.append((i, k)) }
            }
            stayed.append(k)
        }
        // The candidates that match now, with their sort values, in sort order. A sort key is
        // a plain property: its value is read straight from the object's row.
        var evaluator = QueryEvaluator(store: store)
        let sortProperties = plan.keys.compactMap { key -> Property? in
            if case .property(_, let p) = key.0.steps[0] { return p } else { return nil }
        }
        func sortValue(_ k: Int, of key: Int64) throws(CoveError) -> Value {
            try store.get(cls, key, sortProperties[k])
        }
        /// Whether the row `key` sorts before the arriving row `a`, reading its sort values
        /// one key at a time (the next only on a tie).
        func sortsBefore(_ key: Int64, _ a: (values: [Value], key: Int64)) throws(CoveError) -> Bool {
            for (k, sortKey) in plan.keys.enumerated() {
                let c = QueryEvaluator.sortOrder(try sortValue(k, of: key), a.values[k])
                if c != 0 { return sortKey.ascending ? c < 0 : c > 0 }
            }
            return key < a.key
        }
        func before(_ a: (values: [Value], key: Int64), _ b: (values: [Value], key: Int64)) -> Bool {
            for (k, key) in plan.keys.enumerated() {
                let c = QueryEvaluator.sortOrder(a.values[k], b.values[k])
                if c != 0 { return key.ascending ? c < 0 : c > 0 }
            }
            return a.key < b.key
        }
        var arriving: [(values: [Value], key: Int64)] = []
        for k in candidates where !deleted.contains(k) {
            guard try store.exists(cls, k) else { continue }
            let row = Value.link(ObjectLink(classKey: classKey, objectKey: k))
            if let predicate = plan.predicate, !(try evaluator.matches(predicate, row)) { continue }
            var values: [Value] = []
            for i in plan.keys.indices { values.append(try sortValue(i, of: k)) }
            arriving.append((values, k))
        }
        arriving.sort(by: before)
        // Each arriving row goes before the first stayed row that sorts after it (binary search;
        // the arriving rows are in order, so each search starts where the last one ended).
        var points: [Int] = []
        points.reserveCapacity(arriving.count)
        var lo = 0
        for a in arriving {
            var hi = stayed.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if try sortsBefore(stayed[mid], a) { lo = mid + 1 } else { hi = mid }
            }
            points.append(lo)
        }
        // The new order: the stayed rows with the arriving ones merged in at their points.
        var newKeys: [Int64] = []
        newKeys.reserveCapacity(stayed.count + arriving.count)
        var start = 0
        var newPosition: [Int64: Int] = [:]
        for (a, p) in zip(arriving, points) {
            newKeys.append(contentsOf: stayed[start..<p])
            start = p
            newPosition[a.key] = newKeys.count
            newKeys.append(a.key)
        }
        newKeys.append(contentsOf: stayed[start...])

        // An arriving row that was there before and keeps its place among the rows that stayed
        // (and among the other returning rows of its gap) did not move: it is modified, not
        // deleted and inserted. `rank` is a position among the stayed rows.
        func countBelow(_ x: Int, in sorted: [Int]) -> Int {
            var lo = 0, hi = sorted.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if sorted[mid] < x { lo = mid + 1 } else { hi = mid }
            }
            return lo
        }
        func stayedBefore(_ oldIndex: Int) -> Int { oldIndex - countBelow(oldIndex, in: leavingAt) }
        var changes = CollectionChangeSet()
        var stillHere: [(new: Int, old: Int, key: Int64)] = []
        var byGap: [Int: [(old: Int, new: Int, key: Int64)]] = [:]
        for (a, p) in zip(arriving, points) {
            guard let old = oldPosition[a.key], let new = newPosition[a.key] else { continue }
            byGap[p, default: []].append((old, new, a.key))
        }
        var returned = Set<Int64>()
        for (gap, members) in byGap {
            // Members are in new order; kept when each was in this gap before, in this order.
            let inPlace = members.allSatisfy { stayedBefore($0.old) == gap }
                && zip(members, members.dropFirst()).allSatisfy { $0.old < $1.old }
            guard inPlace else { continue }
            for m in members {
                returned.insert(m.key)
                stillHere.append((m.new, m.old, m.key))
            }
        }
        for (i, k) in zip(leavingAt, leavingKeys) where !returned.contains(k) { changes.deletions.append(i) }
        for (a, _) in zip(arriving, points) where !returned.contains(a.key) {
            guard let new = newPosition[a.key] else { continue }
            changes.insertions.append(new)
            // A row that moved is not a modification here, but layers that regroup the rows
            // (sections) need to know its object changed.
            if oldPosition[a.key] != nil, try filter.isModified(cls, a.key, record, store, touched) {
                changes.movedModified.append(new)
            }
        }
        changes.insertions.sort()
        // Rows that stayed and whose objects changed in a way the filter sees: the written ones
        // that never left (their new place counted from the arrivals before them), and the
        // returning ones that kept their place.
        for (old, key) in written {
            let s = stayedBefore(old)
            stillHere.append((s + countBelow(s + 1, in: points), old, key))
        }
        var modified: [(new: Int, old: Int)] = []
        for r in stillHere where try filter.isModified(cls, r.key, record, store, touched) { modified.append((r.new, r.old)) }
        modified.sort { $0.new < $1.new }
        changes.modifications = modified.map(\.new)
        changes.modificationsOld = modified.map(\.old)
        Self.incrementallySorted.add(1, ordering: .relaxed)
        return (changes, newKeys.map { .link(ObjectLink(classKey: classKey, objectKey: $0)) })
    }
}

extension CollectionDiffer {
    /// The change set of rows that all stay where they are: the written ones the filter sees
    /// as modified, found in one pass over the rows.
    private func modifiedInPlace(_ rows: [Value], _ table: ChangeRecord.TableChanges, _ classKey: UInt32, _ cls: ObjectSchema,
                                 _ record: ChangeRecord, _ store: ObjectStore, _ touched: Set<UInt32>) throws(CoveError) -> CollectionChangeSet {
        var changes = CollectionChangeSet()
        let watched = KeyFilter(Array(table.modified.keys))
        for (i, row) in rows.enumerated() {
            guard case .link(let l) = row, watched.mayContain(l.objectKey), table.modified[l.objectKey] != nil,
                  try filter.isModified(cls, l.objectKey, record, store, touched) else { continue }
            changes.modifications.append(i)
            changes.modificationsOld.append(i)
        }
        return changes
    }
}

/// A quick test of whether a key may be one of a few: a bit per key over their range (a
/// hash set's lookup per row would cost more than the pass over the rows itself).
struct KeyFilter {
    private let low: Int64
    private let bits: [UInt64]
    private let others: Set<Int64>

    init(_ keys: [Int64]) {
        guard let lo = keys.min(), let hi = keys.max(), hi - lo < 1 << 26 else {
            low = 0
            bits = []
            others = Set(keys)
            return
        }
        var bits = [UInt64](repeating: 0, count: Int((hi - lo) >> 6) + 1)
        for k in keys { bits[Int((k - lo) >> 6)] |= 1 << UInt64((k - lo) & 63) }
        self.low = lo
        self.bits = bits
        self.others = []
    }

    func mayContain(_ key: Int64) -> Bool {
        if bits.isEmpty { return others.contains(key) }
        let d = key &- low
        guard d >= 0, d >> 6 < Int64(bits.count) else { return false }
        return bits[Int(d >> 6)] & (1 << UInt64(d & 63)) != 0
    }
}
