// Rows of a sorted order whose sort values are known, about one in 32: a binary search
// for where an arriving row goes first narrows, in memory, to the rows between two of them, and
// reads the values of only a few rows there (a read costs a lookup in the store; a search over
// 100,000 rows without the fence reads 17). The rows of the fence are those whose values were
// read or computed anyway: every 32nd when the order is evaluated (or on the first search), then
// the arriving rows, thinned so that they stay about as far apart. (Short orders space them
// closer: one in two for 32 rows.)

struct SortFence: Sendable {
    /// Positions in the order, ascending, and the rows there with their values.
    var positions: [Int] = []
    var rows: [(values: [SortValue], key: Int64)] = []
    /// How far apart its rows are kept.
    var spacing = 32

    var isEmpty: Bool { positions.isEmpty }

    /// How far apart the rows of the fence of `count` rows go.
    static func spacing(for count: Int) -> Int { max(2, min(32, count / 16)) }

    /// The fence of an order of `count` rows whose values `value(i)` gives.
    init(count: Int, _ value: (Int) throws(CoveError) -> (values: [SortValue], key: Int64)) throws(CoveError) {
        spacing = Self.spacing(for: count)
        var i = 0
        while i < count {
            positions.append(i)
            rows.append(try value(i))
            i += spacing
        }
    }

    init() {}

    /// The fence's rows that stay when the rows at `leaving` (ascending) leave, numbered by
    /// their rank among the rows that stay.
    func staying(_ leaving: [Int]) -> SortFence {
        var out = SortFence()
        out.spacing = spacing
        var l = 0
        for (p, row) in zip(positions, rows) {
            while l < leaving.count && leaving[l] < p { l += 1 }
            if l < leaving.count && leaving[l] == p { continue }
            out.positions.append(p - l)
            out.rows.append(row)
        }
        return out
    }

    /// The ranks between which the row `a` goes, by the rows of the fence (numbered by rank):
    /// after every row of the fence that sorts before it, up to the first that does not.
    func bracket(_ a: SortStep.Sorted, _ count: Int, _ before: (SortStep.Sorted, SortStep.Sorted) -> Bool) -> Range<Int> {
        var lo = 0, hi = rows.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if before(rows[mid], a) { lo = mid + 1 } else { hi = mid }
        }
        return (lo > 0 ? positions[lo - 1] + 1 : 0)..<(lo < rows.count ? positions[lo] : count)
    }

    /// The fence after the merge: the staying rows (numbered by rank) at their new positions,
    /// the arriving ones at theirs, each kept when it is at least half a spacing past the last
    /// one kept.
    func merged(_ points: [Int], _ arriving: [SortStep.Sorted], _ arrivingPositions: [Int]) -> SortFence {
        var out = SortFence()
        out.spacing = spacing
        var a = 0, p = 0
        func keep(_ position: Int, _ row: SortStep.Sorted) {
            if let last = out.positions.last, position - last < spacing / 2 { return }
            out.positions.append(position)
            out.rows.append(row)
        }
        for (rank, row) in zip(positions, rows) {
            // Arrivals before this row: those placed at or before its rank.
            while p < points.count && points[p] <= rank { p += 1 }
            let position = rank + p
            while a < arriving.count && arrivingPositions[a] < position {
                keep(arrivingPositions[a], arriving[a])
                a += 1
            }
            keep(position, row)
        }
        while a < arriving.count {
            keep(arrivingPositions[a], arriving[a])
            a += 1
        }
        return out
    }
}
