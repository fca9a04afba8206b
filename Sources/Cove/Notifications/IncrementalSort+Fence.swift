// Rows of a sorted order whose sort values are known, about one in 16: a binary search for
// where an arriving row goes first narrows, in memory, to the rows between two of them, and
// reads the values of only a few rows there (a read costs a lookup in the store; a search over
// 100,000 rows without the fence reads 17). The rows of the fence are those whose values were
// read or computed anyway: every 16th when the order is evaluated (or on the first search), then
// arriving rows where the fence has a gap. It follows the order from one change set to the
// next in place: the rows that left drop out, the others move to their new positions. (Short
// orders space it closer: one in two for 32 rows.)
import CoveCore

struct SortFence: Sendable {
    /// Positions in the order, ascending, and the object keys there.
    var positions: [Int] = []
    var keys: [Int64] = []
    /// The rows' values of the sort keys, `width` a row.
    var values: [SortValue] = []
    var width = 0
    /// How far apart its rows are kept.
    var spacing = 16

    /// The rows of the fence that stay in a change: their indices in the fence, and their
    /// ranks among the rows of the order that stay.
    struct Staying {
        var entries: [Int] = []
        var ranks: [Int] = []
    }

    var isEmpty: Bool { positions.isEmpty }

    /// How far apart the rows of the fence of `count` rows go.
    static func spacing(for count: Int) -> Int { max(2, min(16, count / 16)) }

    init() {}

    /// The fence of an order of `count` rows whose values `value(i)` gives.
    init(count: Int, width: Int, _ value: (Int) throws(CoveError) -> SortStep.Sorted) throws(CoveError) {
        self.width = width
        spacing = Self.spacing(for: count)
        var i = 0
        while i < count {
            let row = try value(i)
            positions.append(i)
            keys.append(row.key)
            values.append(contentsOf: row.values)
            i += spacing
        }
    }

    /// The rows of the fence that stay when the rows at `leaving` (ascending) leave.
    func staying(_ leaving: [Int]) -> Staying {
        var out = Staying()
        out.entries.reserveCapacity(positions.count)
        out.ranks.reserveCapacity(positions.count)
        var l = 0
        for (i, p) in positions.enumerated() {
            while l < leaving.count && leaving[l] < p { l += 1 }
            if l < leaving.count && leaving[l] == p { continue }
            out.entries.append(i)
            out.ranks.append(p - l)
        }
        return out
    }

    /// Whether the fence's row `i` sorts before `a` by `sortKeys`, then object key.
    private func row(_ i: Int, before a: SortStep.Sorted, _ sortKeys: [IncrementalSortKey]) -> Bool {
        for k in 0..<width {
            let c = SortValue.order(values[i * width + k], a.values[k])
            if c != 0 { return sortKeys[k].ascending ? c < 0 : c > 0 }
        }
        return keys[i] < a.key
    }

    /// The ranks between which the row `a` goes among `count` rows that stay, by the staying
    /// rows of the fence (all of them, at their positions, when `staying` is nil): after every
    /// one that sorts before it, up to the first that does not.
    func bracket(_ a: SortStep.Sorted, _ staying: Staying?, _ count: Int, _ sortKeys: [IncrementalSortKey]) -> Range<Int> {
        let n = staying?.entries.count ?? positions.count
        func entry(_ j: Int) -> Int { staying?.entries[j] ?? j }
        func rank(_ j: Int) -> Int { staying?.ranks[j] ?? positions[j] }
        var lo = 0, hi = n
        while lo < hi {
            let mid = (lo + hi) / 2
            if row(entry(mid), before: a, sortKeys) { lo = mid + 1 } else { hi = mid }
        }
        return (lo > 0 ? rank(lo - 1) + 1 : 0)..<(lo < n ? rank(lo) : count)
    }

    /// Follows the order through a change: the staying rows move to their new positions (the
    /// arrivals placed at or before a rank come before the row of that rank), the others drop
    /// out, and an arriving row at `arrivingPositions[n]` joins where it is a spacing away from
    /// the rows on both sides.
    mutating func advance(_ staying: Staying, _ points: [Int], _ arriving: [SortStep.Sorted], _ arrivingPositions: [Int]) {
        var p = 0
        for (w, (i, rank)) in zip(staying.entries, staying.ranks).enumerated() {
            while p < points.count && points[p] <= rank { p += 1 }
            positions[w] = rank + p
            if w != i {
                keys[w] = keys[i]
                for k in 0..<width { values.swapAt(w * width + k, i * width + k) }
            }
        }
        let kept = staying.entries.count
        positions.removeLast(positions.count - kept)
        keys.removeLast(keys.count - kept)
        values.removeLast(values.count - kept * width)
        // Arrivals in the gaps, found by binary search; few, so inserted one at a time.
        for (row, position) in zip(arriving, arrivingPositions) {
            let at = CollectionChangeSet.count(below: position, positions)
            if at > 0 && position - positions[at - 1] < spacing { continue }
            if at < positions.count && positions[at] - position < spacing { continue }
            if positions.isEmpty { width = row.values.count }
            positions.insert(position, at: at)
            keys.insert(row.key, at: at)
            values.insert(contentsOf: row.values, at: at * width)
        }
    }
}
