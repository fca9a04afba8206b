// What a collection notification carries: deletions (old indices), insertions and
// modifications (new indices, with the modified rows' old indices too), moves for lists, and
// the cleared and owner-deleted flags; and how one is computed from two versions of a
// collection's elements: rows in both whose relative order holds (a longest increasing run of
// their old positions) stay, the others are deleted and inserted again.

/// The changes of a collection between two deliveries, ready for a table view's batch update:
/// delete `deletions` (old indices), insert `insertions`, reload `modifications` (new indices).
public struct CollectionChangeSet: Equatable, Sendable {
    /// Old indices of the rows that went away, ascending.
    public var deletions: [Int] = []
    /// New indices of the rows that came, ascending.
    public var insertions: [Int] = []
    /// New indices of the rows that stayed and whose objects changed, ascending.
    public var modifications: [Int] = []
    /// The same rows' old indices, in the same order.
    public var modificationsOld: [Int] = []
    /// Lists only: rows moved by the list's own move operations, as (old index, new index).
    public var moves: [(from: Int, to: Int)] = []
    /// The collection was emptied by a clear.
    public var cleared = false
    /// The object owning the collection was deleted.
    public var ownerDeleted = false
    /// New indices of rows that moved (so are in `deletions` and `insertions`) and whose
    /// objects changed too: what layers that regroup the rows (sections) need. Not compared.
    var movedModified: [Int] = []

    public init() {}

    /// Whether nothing changed.
    public var isEmpty: Bool {
        deletions.isEmpty && insertions.isEmpty && modifications.isEmpty && moves.isEmpty && !cleared && !ownerDeleted
    }

    public static func == (a: CollectionChangeSet, b: CollectionChangeSet) -> Bool {
        a.deletions == b.deletions && a.insertions == b.insertions && a.modifications == b.modifications
            && a.modificationsOld == b.modificationsOld && a.moves.map(\.from) == b.moves.map(\.from)
            && a.moves.map(\.to) == b.moves.map(\.to) && a.cleared == b.cleared && a.ownerDeleted == b.ownerDeleted
    }

    /// The changes from `old` to `new` (object links, or set values), with `modified(element)`
    /// telling which rows that stayed changed. An element may be there several times (an
    /// object linking twice to the target of backlinks): its n-th occurrence in `new` is its
    /// n-th in `old`.
    /// - Complexity: O(n log n) in the number of rows.
    static func diff(old: [Value], new: [Value], modified: (Value) -> Bool) -> CollectionChangeSet {
        var result = CollectionChangeSet()
        var oldIndex: [Value: Int] = [:]
        oldIndex.reserveCapacity(old.count)
        for (i, v) in old.enumerated() where oldIndex[v] == nil { oldIndex[v] = i }
        // With repeated elements, the old positions of each element's occurrences, in order.
        var repeats: [Value: [Int]] = [:]
        var used: [Value: Int] = [:]
        if oldIndex.count < old.count {
            for (i, v) in old.enumerated() { repeats[v, default: []].append(i) }
        }
        // The rows in both, in new order, with their old positions.
        var common: [(new: Int, old: Int)] = []
        var inNew = Set<Int>()
        for (j, v) in new.enumerated() {
            var found = oldIndex[v]
            if found != nil, let positions = repeats[v] {
                let n = used[v, default: 0]
                used[v] = n + 1
                found = n < positions.count ? positions[n] : nil
            }
            // An old row matches one new row; a further occurrence is an insertion.
            if let i = found, inNew.insert(i).inserted {
                common.append((j, i))
            } else {
                result.insertions.append(j)
            }
        }
        for i in old.indices where !inNew.contains(i) { result.deletions.append(i) }
        // Those whose old positions do not increase along the new order moved: report them as
        // deleted and inserted, keeping the longest run that did not move.
        let keep = longestIncreasing(common.map(\.old))
        for (k, pair) in common.enumerated() {
            if keep.contains(k) {
                if modified(new[pair.new]) {
                    result.modifications.append(pair.new)
                    result.modificationsOld.append(pair.old)
                }
            } else {
                result.deletions.append(pair.old)
                result.insertions.append(pair.new)
                if modified(new[pair.new]) { result.movedModified.append(pair.new) }
            }
        }
        result.deletions.sort()
        result.insertions.sort()
        return result
    }

    /// The positions (into `values`) of a longest strictly increasing subsequence.
    /// - Complexity: O(n log n)
    static func longestIncreasing(_ values: [Int]) -> Set<Int> {
        var tails: [Int] = []          // positions of the smallest tail of each length
        var previous = [Int](repeating: -1, count: values.count)
        for (i, v) in values.enumerated() {
            var lo = 0, hi = tails.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if values[tails[mid]] < v { lo = mid + 1 } else { hi = mid }
            }
            if lo > 0 { previous[i] = tails[lo - 1] }
            if lo == tails.count { tails.append(i) } else { tails[lo] = i }
        }
        var out = Set<Int>()
        var k = tails.last ?? -1
        while k >= 0 {
            out.insert(k)
            k = previous[k]
        }
        return out
    }

    /// Applies the change set to `old`, with `new` supplying inserted and modified rows: what a
    /// table view does with it (tests check that this gives exactly the new contents).
    public static func apply<T>(_ changes: CollectionChangeSet, to old: [T], new: [T]) -> [T] {
        var rows = old
        let moved = changes.moves.map { (from: $0.from, item: old[$0.from]) }
        var removals = Set(changes.deletions)
        for m in changes.moves { removals.insert(m.from) }
        rows = rows.enumerated().filter { !removals.contains($0.offset) }.map(\.element)
        var inserts: [(at: Int, item: T)] = changes.insertions.map { ($0, new[$0]) }
        for (k, m) in changes.moves.enumerated() { inserts.append((m.to, moved[k].item)) }
        inserts.sort { $0.at < $1.at }
        for (at, item) in inserts { rows.insert(item, at: at) }
        for j in changes.modifications where j < rows.count { rows[j] = new[j] }
        return rows
    }
}

/// The changes of one object between two deliveries: the properties written (with their values
/// before and after), or its deletion.
public enum ObjectChange: Sendable {
    /// Properties were written (a value written equal to the old one is listed too).
    case change([PropertyChange])
    /// The object was deleted; nothing more is delivered.
    case deleted
    /// Computing the changes failed; the observation stopped.
    case error(CoveError)
}

/// One written property of an object notification.
public struct PropertyChange: Sendable, Equatable {
    /// The property's name.
    public var name: String
    /// Its value at the previous delivery (nil for a collection property).
    public var oldValue: Value?
    /// Its value now (nil for a collection property).
    public var newValue: Value?
}

/// What a collection observer receives (realm-swift's RealmCollectionChange).
public enum RealmCollectionChange: Sendable {
    /// The first delivery, with the collection as it is.
    case initial
    /// A later delivery.
    case update(CollectionChangeSet)
    /// Computing the changes failed; the observation stopped.
    case error(CoveError)
}
