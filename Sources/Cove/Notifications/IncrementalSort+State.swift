// What an observer of sorted results keeps between deliveries for the incremental path: the
// order of every row before OFFSET and LIMIT, for DISTINCT each match's group with the group's
// members in order, and the codes of the rows' first sort values or a fence of known values;
// the whole of it computed once (at the initial call, or when nothing else can be started
// from), then advanced by each change set.
import CoveCore
import Synchronization

/// The state a change set of sorted results starts from.
struct SortedRows: Sendable {
    /// The object keys of every row in order (after DISTINCT, before OFFSET and LIMIT).
    var order: [Int64]
    /// For DISTINCT: the matches by group.
    var groups: DistinctGroups?
    /// Rows of `order` whose sort values are known.
    var fence = SortFence()
    /// The code of each row's first sort value (`SortCode`), when the state has them.
    var codes: [UInt64]?
    /// The code of each row's second sort value, when the state has codes of the first and the
    /// second key has them too: rows tied on the first key (`team.name`, then `name`) then
    /// compare in memory as well.
    var secondCodes: [UInt64]?
    /// The order and codes before the last step, whose storage the next one writes into.
    var spare: (order: [Int64], codes: [UInt64], secondCodes: [UInt64]) = ([], [], [])
}

/// The matches of DISTINCT results by group of equal values; each group's first member is its
/// row.
struct DistinctGroups: Sendable {
    /// Each match's group.
    var groupOf: [Int64: Int32] = [:]
    /// The group of each tuple of values (normalized as DISTINCT compares them).
    var ids: [[Value]: Int32] = [:]
    /// Each group's values (empty for a free slot) and its members, in the order that picks
    /// the first.
    var values: [[Value]] = []
    var members: [[Int64]] = []
    /// Slots of groups that emptied, to be used again.
    var free: [Int32] = []

    /// The group of `tuple`, made when there is none; and whether it was made.
    mutating func group(of tuple: [Value]) -> (id: Int32, made: Bool) {
        if let g = ids[tuple] { return (g, false) }
        let g: Int32
        if let slot = free.popLast() {
            g = slot
            values[Int(g)] = tuple
        } else {
            g = Int32(values.count)
            values.append(tuple)
            members.append([])
        }
        ids[tuple] = g
        return (g, true)
    }

    /// Frees an empty group's slot.
    mutating func release(_ g: Int32) {
        ids[values[Int(g)]] = nil
        values[Int(g)] = []
        free.append(g)
    }
}

/// A differ's plan of the incremental path (bound once per schema) and the state its last
/// change set left, found again by the version it describes and the identity of the rows it made
/// (as `RowKeysCache` finds its keys): holding the rows keeps their storage from being reused,
/// so the same storage and count mean the same rows. The version matters too: rows may stay the
/// same while the state beside them changes (a row past the LIMIT, a member of a DISTINCT group),
/// and a change set from an older version would not see what came and went in between. Shared
/// with the differ's moved copies (the change worker's).
final class SortedRowsCache: @unchecked Sendable {
    private struct PlanEntry {
        var schema: Schema
        var plan: IncrementalSortPlan?
    }

    private struct StateEntry {
        var rows: [Value]
        var version: UInt64
        var state: SortedRows
    }

    private let planEntry = Mutex<PlanEntry?>(nil)
    private let stateEntry = Mutex<StateEntry?>(nil)
    /// Empty rows whose storage the next rows made are written into.
    private let spareRows = Mutex<[Value]>([])

    /// The plan of `engine`'s results (nil when the incremental path does not follow them),
    /// with the filter bound as `localPredicate` binds it now.
    func plan(_ engine: ResultsEngine, _ cls: ObjectSchema, _ store: ObjectStore,
              _ localPredicate: LocalPredicateCache) throws(CoveError) -> IncrementalSortPlan? {
        if let e = planEntry.withLock({ $0 }), e.schema == store.schema {
            guard var plan = e.plan else { return nil }
            // A filter that names an object by primary key is bound again each time.
            if case .query(let parsed, let args, let text)? = engine.stages.first, plan.predicate != nil {
                guard let local = try localPredicate.bound(parsed, args, text, cls, store) else { return nil }
                plan.predicate = local.predicate
            }
            return plan
        }
        let plan = try engine.incrementalSortPlan(cls, store, localPredicate)
        let entry = PlanEntry(schema: store.schema, plan: plan)
        planEntry.withLock { $0 = entry }
        return plan
    }

    private static func identity(_ rows: [Value]) -> UnsafeRawPointer? {
        rows.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
    }

    /// The state kept with `rows` at `version`, taken out (nil when it was kept with others).
    func take(for rows: [Value], at version: UInt64) -> SortedRows? {
        let id = Self.identity(rows)
        return stateEntry.withLock { entry in
            guard let e = entry, e.version == version, e.rows.count == rows.count, Self.identity(e.rows) == id else { return nil }
            entry = nil
            return e.state
        }
    }

    /// Keeps `state` as the one `rows` (from `distinctStorage`) stand for at `version`.
    func keep(_ state: SortedRows, for rows: [Value], at version: UInt64) {
        let entry = StateEntry(rows: rows, version: version, state: state)
        stateEntry.withLock { $0 = entry }
    }

    /// The state kept with `rows` at `version` holds at `target` too (nothing the results read
    /// changed in between).
    func carry(_ rows: [Value], from version: UInt64, to target: UInt64) {
        let id = Self.identity(rows)
        stateEntry.withLock { entry in
            if entry?.version == version, entry?.rows.count == rows.count, entry.map({ Self.identity($0.rows) }) == id {
                entry?.version = target
            }
        }
    }

    /// Keeps the storage of `rows`, the rows of a previous delivery that nothing else holds now
    /// (emptied here), for the next rows made: a fresh array of 100,000 rows is fresh pages,
    /// each a fault. Not when they are `current` (the delivery kept its rows), or the results
    /// are not of the incremental path's shape. (Rows something else still holds are not
    /// emptied: emptying them makes an array of their capacity instead.)
    func recycle(_ rows: inout [Value], current: [Value]) {
        let incremental = planEntry.withLock { $0?.plan != nil }
        guard incremental, !rows.isEmpty, Self.identity(rows) != Self.identity(current) else { return }
        var spare: [Value] = []
        swap(&spare, &rows)
        spare.removeAll(keepingCapacity: true)
        spareRows.withLock { $0 = spare }
    }

    /// The spare storage for rows (empty), taken.
    func takeSpareRows() -> [Value] {
        spareRows.withLock { spare in
            defer { spare = [] }
            return spare
        }
    }

    /// `rows`, with storage of their own when they are empty (every empty array shares one
    /// storage, which could not tell one state's rows from another's).
    static func distinctStorage(_ rows: [Value]) -> [Value] {
        if rows.capacity > 0 { return rows }
        var own: [Value] = []
        own.reserveCapacity(1)
        return own
    }
}

extension IncrementalSortPlan {
    /// The state at the store's version, computed from scratch: the matches, grouped, sorted.
    func evaluate(_ cls: ObjectSchema, _ classKey: UInt32, _ store: ObjectStore) throws(CoveError) -> SortedRows {
        var matches: [Int64]
        if let predicate {
            if let scanned = try store.columnScan(cls, predicate) {
                matches = scanned
            } else {
                var evaluator = QueryEvaluator(store: store)
                matches = []
                for k in try store.objectKeys(cls) where try evaluator.matches(predicate, .link(ObjectLink(classKey: classKey, objectKey: k))) {
                    matches.append(k)
                }
            }
        } else {
            matches = try store.objectKeys(cls)
        }
        guard let distinct else {
            let (keys, fence, codes, secondCodes) = try Self.sorted(matches, by: order, classKey, store)
            return SortedRows(order: keys, groups: nil, fence: fence, codes: codes, secondCodes: secondCodes)
        }
        // Each group's first member in group order stands for it; the rows are those, sorted.
        var groups = DistinctGroups()
        var firsts: [Int64] = []
        for k in try Self.sorted(matches, by: groupOrder, classKey, store).keys {
            let (g, made) = groups.group(of: try Self.distinctValues(cls, k, distinct, store))
            if made { firsts.append(k) }
            groups.members[Int(g)].append(k)
            groups.groupOf[k] = g
        }
        let (keys, fence, codes, secondCodes) = try Self.sorted(firsts, by: order, classKey, store)
        return SortedRows(order: keys, groups: groups, fence: fence, codes: codes, secondCodes: secondCodes)
    }

    /// The values DISTINCT compares of one object.
    static func distinctValues(_ cls: ObjectSchema, _ key: Int64, _ properties: [Property],
                               _ store: ObjectStore) throws(CoveError) -> [Value] {
        var values: [Value] = []
        for p in properties { values.append(QueryEvaluator.normalized(try store.get(cls, key, p))) }
        return values
    }

    /// `keys` sorted by `sortKeys`, then by key; the fence of the order, and the codes of the
    /// rows' first values when they have them, with those of their second values when these
    /// have them too.
    static func sorted(_ keys: [Int64], by sortKeys: [IncrementalSortKey], _ classKey: UInt32,
                       _ store: ObjectStore) throws(CoveError) -> (keys: [Int64], fence: SortFence, codes: [UInt64]?, secondCodes: [UInt64]?) {
        if sortKeys.isEmpty {
            let sorted = keys.sorted()
            return (sorted, try SortFence(count: sorted.count, width: 0) { (i: Int) throws(CoveError) in ([], sorted[i]) }, nil, nil)
        }
        // Own properties of keys in ascending order are read a column at a time.
        let ascendingKeys = zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 }
        let rows = ascendingKeys ? CollectionDiffer.rows(keys[...], classKey) : []
        var columns: [[SortValue]] = []
        for key in sortKeys {
            if !key.hops, ascendingKeys, let values = try store.columnValues(key.path, rows) {
                columns.append(values.map { SortValue(crossed: false, value: $0) })
                continue
            }
            var column: [SortValue] = []
            column.reserveCapacity(keys.count)
            for k in keys { column.append(try key.value(of: k, store)) }
            columns.append(column)
        }
        var order = Array(keys.indices)
        order.sort { a, b in
            for c in sortKeys.indices {
                let o = SortValue.order(columns[c][a], columns[c][b])
                if o != 0 { return sortKeys[c].ascending ? o < 0 : o > 0 }
            }
            return keys[a] < keys[b]
        }
        let fence = try SortFence(count: order.count, width: sortKeys.count) { (i: Int) throws(CoveError) in
            (columns.map { $0[order[i]] }, keys[order[i]])
        }
        let codes = sortKeys[0].hasCodes ? SortCode.codes(order.map { columns[0][$0] }) : nil
        let secondCodes = codes != nil && sortKeys.count > 1 && sortKeys[1].hasCodes
            ? SortCode.codes(order.map { columns[1][$0] }) : nil
        return (order.map { keys[$0] }, fence, codes, secondCodes)
    }
}
