// The reusable pages a write transaction holds, as runs of consecutive page numbers, so that the
// pages it allocates can sit next to each other in the file and commit writes them in few calls
// (and a flush waits for few separate writes).

/// Free pages ready for reuse, as ascending runs of consecutive page numbers.
///
/// Runs are disjoint and never adjacent to each other after `add`; a run whose pages were all
/// taken stays in the array with a count of 0 (so the indices of the others do not move) until
/// the next `add` rebuilds the array.
struct FreeRuns {
    struct Run {
        /// The next page of the run to hand out.
        var start: PageNumber
        /// How many pages of the run are left.
        var count: Int
    }

    private(set) var runs: [Run] = []
    /// The pages left in every run.
    private(set) var pageCount = 0
    /// Pages below this one are kept for the slot areas (docs/FORMAT.md, "Slot areas"): no run
    /// crosses it, and `firstRun` and `longestRun` leave the runs below it alone.
    let floor: PageNumber

    init(floor: PageNumber = 0) {
        self.floor = floor
    }

    var isEmpty: Bool { pageCount == 0 }

    /// Adds free pages (in any order; none may be present already) and rebuilds the runs.
    /// - Complexity: O(r + k) for r runs and k pages added in ascending order (as a free-space
    ///   record decodes them), O(r + k log k) otherwise.
    mutating func add(_ pages: [PageNumber]) {
        guard !pages.isEmpty else { return }
        var ascending = true
        for i in 1..<pages.count where pages[i - 1] >= pages[i] {
            ascending = false
            break
        }
        if ascending {
            merge(pages)
        } else {
            merge(pages.sorted())
        }
    }

    /// Rebuilds the runs from the current ones and `pages`, ascending and new.
    private mutating func merge(_ pages: [PageNumber]) {
        var merged: [Run] = []
        merged.reserveCapacity(runs.count + 1)
        var i = 0
        for r in runs where r.count > 0 {
            while i < pages.count && pages[i] < r.start {
                append(&merged, pages[i], 1)
                i += 1
            }
            append(&merged, r.start, r.count)
        }
        while i < pages.count {
            append(&merged, pages[i], 1)
            i += 1
        }
        runs = merged
        pageCount += pages.count
    }

    /// Appends `count` pages from `start` to ascending runs, extending the last run when they
    /// follow it.
    @inline(__always)
    private func append(_ merged: inout [Run], _ start: PageNumber, _ count: Int) {
        if let last = merged.last, last.start + UInt64(last.count) == start, start != floor {
            merged[merged.count - 1].count += count
        } else {
            merged.append(Run(start: start, count: count))
        }
    }

    /// Every page left, ascending.
    func pages() -> [PageNumber] {
        pages(mergedWith: [])
    }

    /// Every page left and `extra` (ascending, none of them held here), ascending.
    /// - Complexity: O(r + n) for r runs and n pages in all.
    func pages(mergedWith extra: [PageNumber]) -> [PageNumber] {
        var out: [PageNumber] = []
        out.reserveCapacity(pageCount + extra.count)
        var i = 0
        for r in runs where r.count > 0 {
            while i < extra.count && extra[i] < r.start {
                out.append(extra[i])
                i += 1
            }
            for k in 0..<UInt64(r.count) { out.append(r.start + k) }
        }
        out.append(contentsOf: extra[i...])
        return out
    }

    /// The pages left from `floor` on: those general allocation may hand out (the ones below
    /// are kept for the slot areas).
    var pagesAboveFloor: Int {
        var n = 0
        for r in runs where r.start >= floor { n &+= r.count }
        return n
    }

    /// The index of the lowest run from `floor` on with at least `length` pages left.
    func firstRun(atLeast length: Int) -> Int? {
        runs.firstIndex { $0.count >= length && $0.start >= floor }
    }

    /// The index of the run from `floor` on with the most pages left (the lowest of equals);
    /// nil when there is none.
    func longestRun() -> Int? {
        var best: Int?
        for (i, r) in runs.enumerated() where r.count > 0 && r.start >= floor && (best == nil || r.count > runs[best!].count) {
            best = i
        }
        return best
    }

    /// The index of the run whose next page is `pgno`, if it has pages left.
    func run(startingAt pgno: PageNumber) -> Int? {
        var lo = 0
        var hi = runs.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if runs[mid].start < pgno { lo = mid + 1 } else { hi = mid }
        }
        return lo < runs.count && runs[lo].start == pgno && runs[lo].count > 0 ? lo : nil
    }

    /// Hands out the lowest page of run `index`, which must have one left.
    mutating func take(fromRun index: Int) -> PageNumber {
        precondition(runs[index].count > 0, "the free run is spent")
        let p = runs[index].start
        runs[index].start += 1
        runs[index].count -= 1
        pageCount -= 1
        return p
    }
}
