// The change sets of sorted results, computed from what a commit touched instead of sorting
// every match again. The results are a class's objects, filtered by a predicate on their own
// properties (or not), then any of: sorted by properties of the objects or of objects reached
// through to-one links (`owner.name`), DISTINCT on own properties (before or after the sort),
// OFFSET and LIMIT. Each observer keeps, beside its rows, the order of every row before OFFSET
// and LIMIT and, for DISTINCT, every match's group (IncrementalSort+State.swift). After a commit,
// the objects whose place may change are the inserted and deleted ones, those written in a
// property the filter, the sort or DISTINCT reads, and those whose sort key reads a linked
// object that was written there (found back through the backlinks, IncrementalSort+Links.swift);
// they leave the order, and those that match now go back in by binary search over the rows that
// stayed, comparing codes of the first sort value in memory (IncrementalSort+Codes.swift) or,
// without them, narrowed by a fence of known values (IncrementalSort+Fence.swift). A commit that
// touches k objects of n rows costs one pass over the n keys (finding where the leaving rows
// were) and one copy of them and of the codes, written into the storage of the step before,
// plus O(k log n) comparisons and the reads of the k objects' values (and of rows whose codes
// tie); one that moves nothing costs O(k log n), or one pass when k is large. Windows and
// sections follow from the order's change set (below, and SectionedResults+Incremental.swift).
import CoveCore
import Synchronization

/// A sort key of the incremental path: a single-valued property of the objects, or one reached
/// through to-one links.
struct IncrementalSortKey: Sendable {
    var path: BoundPath
    var ascending: Bool
    /// The properties along the path from the objects: links, then the one whose value sorts.
    var steps: [(cls: ObjectSchema, property: Property)]
    /// The last step, on its own: a read of it copies nothing out of `steps`.
    private let valueClass: ObjectSchema
    private let valueProperty: Property

    /// Whether the key reads through links.
    var hops: Bool { steps.count > 1 }

    /// Whether its values have codes (`SortCode`).
    var hasCodes: Bool { SortCode.applies(to: valueProperty) }

    /// The key when `path` is one the incremental path follows; nil otherwise.
    init?(_ path: BoundPath, ascending: Bool) {
        guard path.root == .object, path.quantifier == nil, case .none = path.postfix, !path.isMultiple,
              !path.steps.isEmpty, path.steps.count <= KeyPathFilter.maxDepth else { return nil }
        var steps: [(cls: ObjectSchema, property: Property)] = []
        for (i, step) in path.steps.enumerated() {
            guard case .property(let cls, let p) = step, p.collection == .none, !p.isBacklinks, p.key != nil else { return nil }
            // Every step but the last follows a link to one object.
            if i < path.steps.count - 1 && !p.isLink { return nil }
            steps.append((cls, p))
        }
        self.path = path
        self.ascending = ascending
        self.steps = steps
        (valueClass, valueProperty) = steps[steps.count - 1]
    }

    /// The key's value for `objectKey` as a sort compares it: whether the path crossed a null
    /// link (such a row sorts after every value), and the value (null then).
    func value(of objectKey: Int64, _ store: ObjectStore) throws(CoveError) -> SortValue {
        var key = objectKey
        if steps.count > 1 {
            for (cls, p) in steps.dropLast() {
                guard case .link(let l) = try store.get(cls, key, p) else { return SortValue(crossed: true, value: .null) }
                key = l.objectKey
            }
        }
        return SortValue(crossed: false, value: try store.get(valueClass, key, valueProperty))
    }
}

/// One sort key's value for one row.
struct SortValue: Sendable {
    var crossed: Bool
    var value: Value

    /// -1, 0 or 1 as `a` sorts before, with or after `b` in ascending order: as the results'
    /// sort orders them (a path that crossed a null link after every value).
    static func order(_ a: SortValue, _ b: SortValue) -> Int {
        if a.crossed != b.crossed { return a.crossed ? 1 : -1 }
        // The common pairs first, as `sortOrder` orders them.
        switch (a.value, b.value) {
        case (.int(let x), .int(let y)): return x < y ? -1 : (x > y ? 1 : 0)
        case (.double(let x), .double(let y)) where !x.isNaN && !y.isNaN: return x < y ? -1 : (x > y ? 1 : 0)
        case (.string(let x), .string(let y)): return QueryEvaluator.compareUTF8(x, y)
        default: return QueryEvaluator.sortOrder(a.value, b.value)
        }
    }
}

/// What the incremental path of sorted results needs to know of their query.
struct IncrementalSortPlan: Sendable {
    /// The filter (local to the objects), nil for none.
    var predicate: BoundPredicate?
    /// Property keys of the objects whose write may move a row, drop it or make it match.
    var reads: Set<Int64>
    /// The rows' order: by these keys, then by object key.
    var order: [IncrementalSortKey]
    /// DISTINCT on these own properties: each group of matches with equal values is one row,
    /// its first member in `groupOrder` (then object key).
    var distinct: [Property]?
    var groupOrder: [IncrementalSortKey]
    /// OFFSET and LIMIT: the rows from `start` up to `end` (nil: to the last).
    var start = 0
    var end: Int?

    var hasWindow: Bool { start > 0 || end != nil }

    /// Whether the rows alone do not say the state a change set starts from.
    var needsKeptState: Bool { distinct != nil || hasWindow }

    /// Whether a state evaluated for the initial call is worth keeping: it is needed, or it
    /// gives codes to compare by (`SortCode`).
    var keepsInitialState: Bool { needsKeptState || order.first?.hasCodes == true }

    /// The sort keys that read through links.
    var linkedKeys: [IncrementalSortKey] { (order + groupOrder).filter(\.hops) }

    /// The plan of sort and DISTINCT, OFFSET and LIMIT descriptors applied in order; nil for
    /// one the incremental path does not follow (anything after OFFSET or LIMIT, two DISTINCTs,
    /// a path through a collection, backlinks or more links than deep changes follow).
    init?(predicate: BoundPredicate?, reads: Set<Int64>, _ descriptors: [BoundDescriptor]) {
        self.predicate = predicate
        self.reads = reads
        // Sorts before DISTINCT (or all of them without one), and after it; a later sort is
        // stable over an earlier one, so its keys come first.
        var before: [IncrementalSortKey] = []
        var after: [IncrementalSortKey] = []
        var windowed = false
        for d in descriptors {
            switch d {
            case .sort(let bound):
                guard !windowed else { return nil }
                var keys: [IncrementalSortKey] = []
                for (path, ascending) in bound {
                    guard let key = IncrementalSortKey(path, ascending: ascending) else { return nil }
                    keys.append(key)
                }
                if distinct == nil { before = keys + before } else { after = keys + after }
            case .distinct(let paths):
                guard !windowed, distinct == nil else { return nil }
                var properties: [Property] = []
                for path in paths {
                    guard let (_, p) = path.ownProperty, p.key != nil else { return nil }
                    properties.append(p)
                }
                distinct = properties
            case .offset(let n):
                windowed = true
                start += n
                if let end { start = min(start, end) }
            case .limit(let n):
                windowed = true
                end = min(end ?? .max, start + n)
            }
        }
        if distinct != nil {
            order = after + before
            groupOrder = before
        } else {
            order = before
            groupOrder = []
        }
        guard !order.isEmpty || distinct != nil || windowed else { return nil }
        for key in order + groupOrder { if let k = key.steps[0].property.key { self.reads.insert(k) } }
        for p in distinct ?? [] { if let k = p.key { self.reads.insert(k) } }
    }
}

extension ResultsEngine {
    /// The plan when these results are a class's objects, filtered by a local predicate (or
    /// not) in their first stage, then sorted, made distinct or windowed as the plan follows;
    /// nil otherwise (and for a query or path that does not bind: the full evaluation says why).
    func incrementalSortPlan(_ cls: ObjectSchema, _ store: ObjectStore,
                             _ localPredicate: LocalPredicateCache) throws(CoveError) -> IncrementalSortPlan? {
        guard case .table = source, !stages.isEmpty, failure == nil else { return nil }
        var predicate: BoundPredicate?
        var reads = Set<Int64>()
        var descriptors: [BoundDescriptor] = []
        let binder = QueryBinder(schema: store.schema, store: store, cls: cls, elementProperty: nil, arguments: [], text: summary)
        do throws(CoveError) {
            for (i, stage) in stages.enumerated() {
                switch stage {
                case .query(let parsed, let args, let text):
                    guard i == 0, let local = try localPredicate.bound(parsed, args, text, cls, store),
                          let localReads = local.reads else { return nil }
                    if case .constant(true) = local.predicate {} else { predicate = local.predicate }
                    reads = localReads
                    if !parsed.descriptors.isEmpty {
                        var queryBinder = QueryBinder(schema: store.schema, store: store, cls: cls, elementProperty: nil,
                                                      arguments: args, text: text)
                        descriptors += try queryBinder.bind(parsed).descriptors
                    }
                case .sort(let keys):
                    var bound: [(BoundPath, ascending: Bool)] = []
                    for key in keys { bound.append((try binder.bindPath(QueryKeyPath(head: key.keyPath, steps: [])), key.ascending)) }
                    descriptors.append(.sort(bound))
                case .distinct(let keys):
                    var bound: [BoundPath] = []
                    for key in keys { bound.append(try binder.bindPath(QueryKeyPath(head: key, steps: []))) }
                    descriptors.append(.distinct(bound))
                }
            }
        } catch {
            return nil
        }
        return IncrementalSortPlan(predicate: predicate, reads: reads, descriptors)
    }
}

extension CollectionDiffer {
    /// How many change sets the incremental path of sorted results made (tests read it).
    static let incrementallySorted = Atomic<Int>(0)

    /// The rows of the initial call. For sorted results whose rows alone do not say what the
    /// next change set starts from (DISTINCT, OFFSET, LIMIT), or whose first sort key has codes,
    /// the state evaluated beside them is kept (an evaluation more, on the notification thread
    /// mostly, for change sets that compare in memory).
    func initialRows(_ store: ObjectStore, at version: UInt64) throws(CoveError) -> [Value] {
        let rows = try engine.elements()
        guard let cls = rootClass, let classKey = cls.classKey,
              let plan = try sortedState.plan(engine, cls, store, localPredicate), plan.keepsInitialState else { return rows }
        let state = try plan.evaluate(cls, classKey, store)
        // It stands for the rows when it gives them (the query's own evaluation takes other
        // paths: indexes, a scan keeping the first few).
        guard let keys = Self.objectKeys(of: rows, classKey), keys.elementsEqual(state.order[plan.window(state.order.count)]) else {
            return rows
        }
        let kept = SortedRowsCache.distinctStorage(rows)
        sortedState.keep(state, for: kept, at: version)
        return kept
    }

    /// The change set of sorted results after a commit, and the new rows; nil when the results
    /// are not of a shape the plan follows (see `IncrementalSortPlan`), or when they are but
    /// their rows say all the next change set needs (then the full path makes this one). Ties
    /// sort by object key, as a full evaluation over the table (in key order) sorts them.
    func incrementalSorted(_ rows: [Value], since version: UInt64, _ record: ChangeRecord, _ touched: Set<UInt32>,
                           _ store: ObjectStore, at target: UInt64) throws(CoveError) -> (changes: CollectionChangeSet, rows: [Value])? {
        guard !record.schemaChanged, let cls = rootClass, let classKey = cls.classKey,
              let plan = try sortedState.plan(engine, cls, store, localPredicate) else { return nil }
        /// Nothing to start from, or too much changed: the state afresh, and the rows compared
        /// (without DISTINCT and a window, by the full path).
        func restart() throws(CoveError) -> (changes: CollectionChangeSet, rows: [Value])? {
            guard plan.needsKeptState else { return nil }
            let fresh = try plan.evaluate(cls, classKey, store)
            let newRows = SortedRowsCache.distinctStorage(Self.rows(fresh.order[plan.window(fresh.order.count)], classKey))
            let compared = try self.changes(from: rows, to: newRows, record, touched, store)
            sortedState.keep(fresh, for: newRows, at: target)
            return (compared, newRows)
        }
        // Where the change set starts: the state kept with these rows, or (without DISTINCT and
        // a window) the rows themselves. The state is the only holder of its storage, so that
        // the step changes it in place.
        var state: SortedRows
        if let kept = sortedState.take(for: rows, at: version) {
            state = kept
        } else if !plan.needsKeptState, let keys = Self.objectKeys(of: rows, classKey) {
            state = SortedRows(order: keys, groups: nil)
        } else {
            return try restart()
        }
        var step = SortStep(plan: plan, cls: cls, classKey: classKey, store: store, record: record, touched: touched, filter: filter)
        guard let full = try step.advance(&state) else { return try restart() }
        let moved = !full.insertions.isEmpty || !full.deletions.isEmpty
        var changes = full
        var newRows = rows
        if plan.hasWindow {
            let new = plan.window(state.order.count)
            changes = full.windowed(plan.window(state.order.count - full.insertions.count + full.deletions.count), new)
            if moved { newRows = Self.rows(state.order[new], classKey) }
        } else if moved {
            newRows = sortedState.takeSpareRows()
            Self.rows(state.order[...], classKey, into: &newRows)
        }
        newRows = SortedRowsCache.distinctStorage(newRows)
        sortedState.keep(state, for: newRows, at: target)
        Self.incrementallySorted.add(1, ordering: .relaxed)
        return (changes, newRows)
    }

    /// Links to `keys`' objects of the class `classKey`, into `rows` (emptied first; its
    /// storage kept when large enough).
    static func rows(_ keys: ArraySlice<Int64>, _ classKey: UInt32, into rows: inout [Value]) {
        rows.removeAll(keepingCapacity: true)
        rows.reserveCapacity(keys.count)
        keys.withUnsafeBufferPointer { source in
            for k in source { rows.append(.link(ObjectLink(classKey: classKey, objectKey: k))) }
        }
    }

    /// Links to `keys`' objects of the class `classKey`.
    static func rows(_ keys: ArraySlice<Int64>, _ classKey: UInt32) -> [Value] {
        keys.withUnsafeBufferPointer { source in
            [Value](unsafeUninitializedCapacity: source.count) { buffer, count in
                guard let to = buffer.baseAddress, let from = source.baseAddress else { return }
                for i in 0..<source.count { (to + i).initialize(to: .link(ObjectLink(classKey: classKey, objectKey: from[i]))) }
                count = source.count
            }
        }
    }

    /// The object keys of rows that are links to objects of the class `classKey`; nil when one
    /// is not.
    static func objectKeys(of rows: [Value], _ classKey: UInt32) -> [Int64]? {
        var keys: [Int64] = []
        keys.reserveCapacity(rows.count)
        for row in rows {
            guard case .link(let l) = row, l.classKey == classKey else { return nil }
            keys.append(l.objectKey)
        }
        return keys
    }
}

extension IncrementalSortPlan {
    /// The window of `count` ordered rows that OFFSET and LIMIT show.
    func window(_ count: Int) -> Range<Int> {
        let lower = min(start, count)
        return lower..<max(lower, min(end ?? count, count))
    }
}

extension CollectionChangeSet {
    /// The changes of the rows in window `new` of the new order against those in window `old`
    /// of the old one, from the changes of the whole order. The rows that stayed (neither
    /// deleted nor inserted) keep their relative order, so they are numbered alike in both: by
    /// `rank`, their position among the stayed rows. Those of the old window are a range of
    /// ranks, as are those of the new; a row in one range and not the other left or entered
    /// the window. Costs the changes plus the rows that crossed a window's edge.
    func windowed(_ old: Range<Int>, _ new: Range<Int>) -> CollectionChangeSet {
        // The deletions inside the old window and the insertions inside the new one (as
        // ranges of positions in `deletions` and `insertions`).
        let deletedIn = Self.count(below: old.lowerBound, deletions)..<Self.count(below: old.upperBound, deletions)
        let insertedIn = Self.count(below: new.lowerBound, insertions)..<Self.count(below: new.upperBound, insertions)
        // The ranks of the stayed rows in each window: an index less the changes before it.
        let oldRanks = (old.lowerBound - deletedIn.lowerBound)..<(old.upperBound - deletedIn.upperBound)
        let newRanks = (new.lowerBound - insertedIn.lowerBound)..<(new.upperBound - insertedIn.upperBound)
        var out = CollectionChangeSet()
        out.deletions = deletions[deletedIn].map { $0 - old.lowerBound }
        for r in Self.ranks(oldRanks, outside: newRanks) { out.deletions.append(Self.index(ofRank: r, skipping: deletions) - old.lowerBound) }
        out.insertions = insertions[insertedIn].map { $0 - new.lowerBound }
        for r in Self.ranks(newRanks, outside: oldRanks) { out.insertions.append(Self.index(ofRank: r, skipping: insertions) - new.lowerBound) }
        out.deletions.sort()
        out.insertions.sort()
        for (j, i) in zip(modifications, modificationsOld) where old.contains(i) && new.contains(j) {
            out.modifications.append(j - new.lowerBound)
            out.modificationsOld.append(i - old.lowerBound)
        }
        out.movedModified = movedModified.filter { new.contains($0) }.map { $0 - new.lowerBound }
        out.resorted = resorted?.filter { new.contains($0) }.map { $0 - new.lowerBound }
        return out
    }

    /// The change set of a commit that changed nothing the rows show.
    static var unchanged: CollectionChangeSet {
        var c = CollectionChangeSet()
        c.resorted = []
        return c
    }

    /// Whether rows that kept their place may have changed their sort values.
    var mayHaveResorted: Bool { resorted.map { !$0.isEmpty } ?? true }

    /// How many of the ascending `indices` are below `bound`.
    static func count(below bound: Int, _ indices: [Int]) -> Int {
        var lo = 0, hi = indices.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if indices[mid] < bound { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// The ranks in `ranks` and not in `other` (at most two runs).
    private static func ranks(_ ranks: Range<Int>, outside other: Range<Int>) -> [Int] {
        let below = ranks.lowerBound..<max(ranks.lowerBound, min(other.lowerBound, ranks.upperBound))
        let above = min(max(other.upperBound, ranks.lowerBound), ranks.upperBound)..<ranks.upperBound
        return other.isEmpty ? Array(ranks) : Array(below) + Array(above)
    }

    /// The index of the stayed row of rank `rank` in a list where the ascending indices
    /// `changed` are not stayed rows.
    static func index(ofRank rank: Int, skipping changed: [Int]) -> Int {
        // changed[c] - c stayed rows come before the c-th changed index: the row of `rank` comes
        // after every changed index with at most `rank` stayed rows before it.
        var lo = 0, hi = changed.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if changed[mid] - mid <= rank { lo = mid + 1 } else { hi = mid }
        }
        return rank + lo
    }
}
