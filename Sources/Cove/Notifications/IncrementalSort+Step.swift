// One change set of sorted results, from the state the last one left (IncrementalSort.swift
// says which objects may move and why).
import CoveCore

/// The order of sorted results advanced over one change record.
struct SortStep {
    let plan: IncrementalSortPlan
    let cls: ObjectSchema
    let classKey: UInt32
    let store: ObjectStore
    let record: ChangeRecord
    let touched: Set<UInt32>
    let filter: KeyPathFilter
    private var evaluator: QueryEvaluator

    init(plan: IncrementalSortPlan, cls: ObjectSchema, classKey: UInt32, store: ObjectStore, record: ChangeRecord,
         touched: Set<UInt32>, filter: KeyPathFilter) {
        self.plan = plan
        self.cls = cls
        self.classKey = classKey
        self.store = store
        self.record = record
        self.touched = touched
        self.filter = filter
        evaluator = QueryEvaluator(store: store)
    }

    /// An object with its values of the sort keys.
    typealias Sorted = (values: [SortValue], key: Int64)

    /// Advances `state` over the record; returns the changes of the whole order (before OFFSET
    /// and LIMIT). Nil when the commit touched so many of the objects that evaluating again
    /// costs less; `state` is then left as it was, or without its groups.
    mutating func advance(_ state: inout SortedRows) throws(CoveError) -> CollectionChangeSet? {
        let table = record.tables[classKey] ?? ChangeRecord.TableChanges()
        // Past a quarter of the matches, evaluating again costs less.
        let bound = (state.groups?.groupOf.count ?? state.order.count) / 4 + 64
        guard (table.inserted + table.deleted).reduce(0, { $0 + $1.count }) <= bound else { return nil }
        // The objects whose place or membership may change, and those that went.
        var deleted = Set<Int64>()
        for r in table.deleted { for k in r { deleted.insert(k) } }
        var moving = Set<Int64>()
        for r in table.inserted { for k in r { moving.insert(k) } }
        for (k, written) in table.modified where !written.isDisjoint(with: plan.reads) { moving.insert(k) }
        let links = LinkedRoots(store: store, record: record)
        for key in plan.linkedKeys {
            moving.formUnion(try links.moved(through: key))
            guard moving.count <= bound else { return nil }
        }
        guard moving.count + deleted.count <= bound else { return nil }
        let modified = try links.possiblyModified(cls, filter, touched)

        // The rows that leave the order and the objects that enter it.
        var leaving: Set<Int64>
        var entering: [Int64] = []
        if plan.distinct != nil {
            guard var groups = state.groups else { return nil }
            state.groups = nil
            (leaving, entering) = try regroup(&groups, moving, deleted)
            state.groups = groups
        } else {
            leaving = moving.union(deleted)
            for k in moving where try matches(k) { entering.append(k) }
        }
        if leaving.isEmpty && entering.isEmpty { return try inPlace(state, modified) }

        // Where the leaving rows and the possibly modified ones stand: one pass over the order.
        let order = state.order
        var leavingAt: [Int] = []
        var leavingKeys: [Int64] = []
        var oldPosition: [Int64: Int] = [:]
        var written: [(old: Int, key: Int64)] = []
        let watched = KeyFilter(Array(leaving) + Array(modified))
        order.withUnsafeBufferPointer { keys in
            for (i, k) in keys.enumerated() where watched.mayContain(k) {
                if leaving.contains(k) {
                    leavingAt.append(i)
                    leavingKeys.append(k)
                    oldPosition[k] = i
                } else if modified.contains(k) {
                    written.append((i, k))
                }
            }
        }
        // The entering objects in order, each placed before the first row that stayed and sorts
        // after it (binary search over the stayed rows by rank; each search starts where the
        // last one ended).
        var arriving: [Sorted] = []
        for k in entering { arriving.append((try values(of: k, plan.order), k)) }
        let keys = plan.order
        arriving.sort { Self.before($0, $1, keys) }
        let stayedCount = order.count - leavingAt.count
        func stayed(_ rank: Int) -> Int { CollectionChangeSet.index(ofRank: rank, skipping: leavingAt) }
        // With the codes of every row's first value the searches compare in memory; without,
        // the fence narrows them first.
        let codes = state.codes
        state.codes = nil
        let arrivingCodes = codes == nil ? nil : SortCode.codes(arriving.map { $0.values[0] })
        let secondCodes = arrivingCodes == nil ? nil : state.secondCodes
        state.secondCodes = nil
        let arrivingSecond = secondCodes == nil ? nil : SortCode.codes(arriving.map { $0.values[1] })
        var fence = state.fence
        state.fence = SortFence()
        var staying = SortFence.Staying()
        if arrivingCodes == nil {
            staying = fence.staying(leavingAt)
            if fence.isEmpty && !arriving.isEmpty && stayedCount >= 8 {
                // Built over the rows that stay, numbered by rank.
                fence = try SortFence(count: stayedCount, width: keys.count) { (r: Int) throws(CoveError) in
                    (try values(of: order[stayed(r)], keys), order[stayed(r)])
                }
                staying = SortFence.Staying(entries: Array(fence.positions.indices), ranks: fence.positions)
            }
        }
        var points: [Int] = []
        points.reserveCapacity(arriving.count)
        var lo = 0
        for (n, a) in arriving.enumerated() {
            var hi = stayedCount
            if arrivingCodes == nil {
                let bracket = fence.bracket(a, staying, stayedCount, keys)
                lo = max(lo, bracket.lowerBound)
                hi = bracket.upperBound
            }
            while lo < hi {
                let mid = (lo + hi) / 2
                let i = stayed(mid)
                if try rowBefore(order[i], codes?[i], a, arrivingCodes?[n], keys,
                                 second: (secondCodes?[i], arrivingSecond?[n])) { lo = mid + 1 } else { hi = mid }
            }
            points.append(lo)
        }
        // Into the storage of the order and codes before the last step.
        var newOrder = state.spare.order, newCodes = state.spare.codes, newSecond = state.spare.secondCodes
        state.spare = ([], [], [])
        let newPosition = Self.merge(order, leavingAt, arriving.map(\.key), points, into: &newOrder)
        if let codes, let arrivingCodes {
            _ = Self.merge(codes, leavingAt, arrivingCodes, points, into: &newCodes)
            state.codes = newCodes
            state.spare.codes = codes
            if let secondCodes, let arrivingSecond {
                _ = Self.merge(secondCodes, leavingAt, arrivingSecond, points, into: &newSecond)
                state.secondCodes = newSecond
                state.spare.secondCodes = secondCodes
            }
        } else {
            fence.advance(staying, points, arriving, newPosition)
            state.fence = fence
        }

        // An arriving row that was there before and keeps its place among the rows that stayed
        // (and the other returning rows of its gap) did not move: it is modified, not deleted
        // and inserted. A gap is a rank among the stayed rows.
        func gap(_ oldIndex: Int) -> Int { oldIndex - CollectionChangeSet.count(below: oldIndex, leavingAt) }
        var byGap: [Int: [(old: Int, new: Int, key: Int64)]] = [:]
        for (n, a) in arriving.enumerated() {
            guard let old = oldPosition[a.key] else { continue }
            byGap[points[n], default: []].append((old, newPosition[n], a.key))
        }
        var returned = Set<Int64>()
        var stillHere: [(new: Int, old: Int, key: Int64)] = []
        for (p, members) in byGap {
            // Members are in new order; kept when each was in this gap before, in this order.
            guard members.allSatisfy({ gap($0.old) == p }), zip(members, members.dropFirst()).allSatisfy({ $0.old < $1.old }) else { continue }
            for m in members {
                returned.insert(m.key)
                stillHere.append((m.new, m.old, m.key))
            }
        }
        var changes = CollectionChangeSet()
        changes.resorted = stillHere.map(\.new).sorted()
        for (i, k) in zip(leavingAt, leavingKeys) where !returned.contains(k) { changes.deletions.append(i) }
        for (n, a) in arriving.enumerated() where !returned.contains(a.key) {
            changes.insertions.append(newPosition[n])
            // A row that moved is not a modification here, but layers that regroup the rows
            // (sections) need to know its object changed.
            if oldPosition[a.key] != nil, try filter.isModified(cls, a.key, record, store, touched) {
                changes.movedModified.append(newPosition[n])
            }
        }
        // Rows that stayed and whose objects changed in a way the filter sees: the written ones
        // that never left (their new place counted from the arrivals before them), and the
        // returning ones that kept their place.
        for (old, key) in written {
            let rank = gap(old)
            stillHere.append((rank + CollectionChangeSet.count(below: rank + 1, points), old, key))
        }
        try collectModifications(stillHere, into: &changes)
        state.order = newOrder
        state.spare.order = order
        return changes
    }

    /// The changes when no row moves: the rows among `candidates` the filter sees as modified,
    /// found by binary search when they are few, else in one pass over the order.
    private mutating func inPlace(_ state: SortedRows, _ candidates: Set<Int64>) throws(CoveError) -> CollectionChangeSet {
        let order = state.order
        var found: [(new: Int, old: Int, key: Int64)] = []
        if candidates.count <= 16 {
            // Every row's values are as they were: the order is sorted by them now.
            let keys = plan.order
            for k in candidates {
                let a = (try values(of: k, keys), k)
                let code = state.codes == nil ? nil : SortCode.code(a.0[0])
                let code2 = code == nil || state.secondCodes == nil ? nil : SortCode.code(a.0[1])
                var lo = 0, hi = order.count
                if code == nil {
                    let bracket = state.fence.bracket(a, nil, order.count, keys)
                    (lo, hi) = (bracket.lowerBound, bracket.upperBound)
                }
                while lo < hi {
                    let mid = (lo + hi) / 2
                    if try rowBefore(order[mid], code == nil ? nil : state.codes?[mid], a, code, keys,
                                     second: (code2 == nil ? nil : state.secondCodes?[mid], code2)) { lo = mid + 1 } else { hi = mid }
                }
                if lo < order.count && order[lo] == k { found.append((lo, lo, k)) }
            }
        } else {
            let watched = KeyFilter(Array(candidates))
            order.withUnsafeBufferPointer { keys in
                for (i, k) in keys.enumerated() where watched.mayContain(k) && candidates.contains(k) { found.append((i, i, k)) }
            }
        }
        var changes = CollectionChangeSet()
        changes.resorted = []
        try collectModifications(found, into: &changes)
        return changes
    }

    /// Adds the rows of `rows` the filter sees as modified to the modifications, in new order.
    private func collectModifications(_ rows: [(new: Int, old: Int, key: Int64)], into changes: inout CollectionChangeSet) throws(CoveError) {
        var modified: [(new: Int, old: Int)] = []
        for r in rows where try filter.isModified(cls, r.key, record, store, touched) { modified.append((r.new, r.old)) }
        modified.sort { $0.new < $1.new }
        changes.modifications = modified.map(\.new)
        changes.modificationsOld = modified.map(\.old)
    }

    /// The order (or what goes with each of its rows) with the rows at `leavingAt` (ascending)
    /// taken out and `arriving` put in, each before the stayed row of rank `points[n]`
    /// (ascending), the stayed rows copied a run at a time; returns the arriving rows' new
    /// positions.
    /// The result goes into `out`, emptied first, whose storage is kept when it is large
    /// enough (a fresh array of 100,000 keys is fresh pages, each a fault).
    static func merge<T>(_ order: [T], _ leavingAt: [Int], _ arriving: [T], _ points: [Int], into out: inout [T]) -> [Int] {
        out.removeAll(keepingCapacity: true)
        out.reserveCapacity(order.count - leavingAt.count + arriving.count)
        var positions: [Int] = []
        positions.reserveCapacity(arriving.count)
        order.withUnsafeBufferPointer { old in
            var i = 0, rank = 0, l = 0, a = 0
            while true {
                while a < arriving.count && points[a] == rank {
                    positions.append(out.count)
                    out.append(arriving[a])
                    a += 1
                }
                if i == old.count { break }
                if l < leavingAt.count && leavingAt[l] == i {
                    i += 1
                    l += 1
                    continue
                }
                var end = l < leavingAt.count ? leavingAt[l] : old.count
                if a < arriving.count { end = min(end, i + points[a] - rank) }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: old[i..<end]))
                rank += end - i
                i = end
            }
        }
        return positions
    }

    /// Whether the object exists and matches the filter.
    private mutating func matches(_ key: Int64) throws(CoveError) -> Bool {
        guard try store.exists(cls, key) else { return false }
        guard let predicate = plan.predicate else { return true }
        return try evaluator.matches(predicate, .link(ObjectLink(classKey: classKey, objectKey: key)))
    }

    private func values(of key: Int64, _ keys: [IncrementalSortKey]) throws(CoveError) -> [SortValue] {
        var out: [SortValue] = []
        out.reserveCapacity(keys.count)
        for i in keys.indices { out.append(try keys[i].value(of: key, store)) }
        return out
    }

    /// Whether the row `key` (the code of its first value `code`) sorts before `a` (its code
    /// `aCode`) by `keys`, then object key: by the codes when they differ, or tie and say the
    /// values are equal and there is no other key; else by the values read.
    /// `second` holds the codes of the two rows' second values when the state has them.
    private func rowBefore(_ key: Int64, _ code: UInt64?, _ a: Sorted, _ aCode: UInt64?,
                           _ keys: [IncrementalSortKey], second: (UInt64?, UInt64?) = (nil, nil)) throws(CoveError) -> Bool {
        if let code, let aCode {
            if code != aCode { return (code < aCode) == keys[0].ascending }
            // Equal first values: the other keys decide, the second by its codes when they
            // differ or say the values are equal.
            if SortCode.isExact(code) {
                if let c2 = second.0, let a2 = second.1 {
                    if c2 != a2 { return (c2 < a2) == keys[1].ascending }
                    if SortCode.isExact(c2) { return keys.count == 2 ? key < a.key : try sortsBefore(key, a, keys, from: 2) }
                }
                return try sortsBefore(key, a, keys, from: 1)
            }
        }
        return try sortsBefore(key, a, keys)
    }

    /// Whether the row `key` sorts before `a` by `keys` from the `first` on (then object key),
    /// its values read one key at a time, the next only on a tie.
    private func sortsBefore(_ key: Int64, _ a: Sorted, _ keys: [IncrementalSortKey], from first: Int = 0) throws(CoveError) -> Bool {
        for i in first..<keys.count {
            let c = SortValue.order(try keys[i].value(of: key, store), a.values[i])
            if c != 0 { return keys[i].ascending ? c < 0 : c > 0 }
        }
        return key < a.key
    }

    static func before(_ a: Sorted, _ b: Sorted, _ keys: [IncrementalSortKey]) -> Bool {
        for i in keys.indices {
            let c = SortValue.order(a.values[i], b.values[i])
            if c != 0 { return keys[i].ascending ? c < 0 : c > 0 }
        }
        return a.key < b.key
    }

    /// Moves the matches that changed between their DISTINCT groups (out of their old group,
    /// into the one of their values now, in group order); returns the rows that leave the
    /// order (first members replaced, or that may have moved) and the objects that enter it.
    private mutating func regroup(_ groups: inout DistinctGroups, _ moving: Set<Int64>,
                                  _ deleted: Set<Int64>) throws(CoveError) -> (leaving: Set<Int64>, entering: [Int64]) {
        guard let distinct = plan.distinct else { return ([], []) }
        var leavingGroup: [Int32: Set<Int64>] = [:]
        for k in moving.union(deleted) {
            if let g = groups.groupOf.removeValue(forKey: k) { leavingGroup[g, default: []].insert(k) }
        }
        var joining: [Int32: [Int64]] = [:]
        for k in moving where try matches(k) {
            let g = groups.group(of: try IncrementalSortPlan.distinctValues(cls, k, distinct, store)).id
            joining[g, default: []].append(k)
            groups.groupOf[k] = g
        }
        var leaving = Set<Int64>()
        var entering: [Int64] = []
        for g in Set(leavingGroup.keys).union(joining.keys) {
            let i = Int(g)
            let first = groups.members[i].first
            if let out = leavingGroup[g] {
                // A few leave a group most often, the first member among them: found by a scan
                // from the front each, not a hash of every member.
                if out.count <= 8 {
                    for k in out { if let at = groups.members[i].firstIndex(of: k) { groups.members[i].remove(at: at) } }
                } else {
                    groups.members[i].removeAll { out.contains($0) }
                }
            }
            // The members left kept their values: they are in group order by their values now.
            for k in joining[g] ?? [] {
                let a = (try values(of: k, plan.groupOrder), k)
                var lo = 0, hi = groups.members[i].count
                while lo < hi {
                    let mid = (lo + hi) / 2
                    if try sortsBefore(groups.members[i][mid], a, plan.groupOrder) { lo = mid + 1 } else { hi = mid }
                }
                groups.members[i].insert(k, at: lo)
            }
            let now = groups.members[i].first
            if let first, first != now || moving.contains(first) || deleted.contains(first) { leaving.insert(first) }
            if let now, now != first || moving.contains(now) { entering.append(now) }
            if now == nil { groups.release(g) }
        }
        return (leaving, entering)
    }
}

/// A quick test of whether a key may be one of a few: a bit per key over their range when it
/// is narrow (up to a million keys, or 256 a key), else a bit per hash of the key in a table of
/// 256 bits per key (a hash set's lookup per row would cost more than the pass over the rows
/// itself). False positives only.
struct KeyFilter {
    private let low: Int64
    private let bits: [UInt64]
    /// Hashed: the shift that keeps a multiplied key's top bits.
    private let shift: UInt64?

    init(_ keys: [Int64]) {
        let lo = keys.min() ?? 0, hi = keys.max() ?? 0
        if hi &- lo >= 0 && hi &- lo < max(Int64(keys.count) << 8, 1 << 20) {
            var bits = [UInt64](repeating: 0, count: Int((hi - lo) >> 6) + 1)
            for k in keys { bits[Int((k - lo) >> 6)] |= 1 << UInt64((k - lo) & 63) }
            self.low = lo
            self.bits = bits
            self.shift = nil
            return
        }
        var width: UInt64 = 6
        while (1 << width) < keys.count * 256 { width += 1 }
        var bits = [UInt64](repeating: 0, count: 1 << (width - 6))
        let shift = 64 - width
        for k in keys {
            let h = Self.hash(k, shift)
            bits[Int(h >> 6)] |= 1 << (h & 63)
        }
        self.low = 0
        self.bits = bits
        self.shift = shift
    }

    @inline(__always)
    private static func hash(_ key: Int64, _ shift: UInt64) -> UInt64 {
        (UInt64(bitPattern: key) &* 0x9E37_79B9_7F4A_7C15) >> shift
    }

    @inline(__always)
    func mayContain(_ key: Int64) -> Bool {
        if let shift {
            let h = Self.hash(key, shift)
            return bits[Int(h >> 6)] & (1 << (h & 63)) != 0
        }
        let d = key &- low
        guard d >= 0, d >> 6 < Int64(bits.count) else { return false }
        return bits[Int(d >> 6)] & (1 << UInt64(d & 63)) != 0
    }
}
