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

    var isEmpty: Bool { pageCount == 0 }

    /// Adds free pages (in any order; none may be present already) and rebuilds the runs.
    /// - Complexity: O(n log n) for the n pages held afterwards.
    mutating func add(_ pages: [PageNumber]) {
        guard !pages.isEmpty else { return }
        var all = self.pages()
        all.append(contentsOf: pages)
        all.sort()
        runs.removeAll(keepingCapacity: true)
        for p in all {
            if let last = runs.last, last.start + UInt64(last.count) == p {
                runs[runs.count - 1].count += 1
            } else {
                runs.append(Run(start: p, count: 1))
            }
        }
        pageCount = all.count
    }

    /// Every page left, ascending.
    func pages() -> [PageNumber] {
        var out: [PageNumber] = []
        out.reserveCapacity(pageCount)
        for r in runs where r.count > 0 {
            for i in 0..<UInt64(r.count) { out.append(r.start + i) }
        }
        return out
    }

    /// The index of the lowest run with at least `length` pages left.
    func firstRun(atLeast length: Int) -> Int? {
        runs.firstIndex { $0.count >= length }
    }

    /// The index of the run with the most pages left (the lowest of equals); nil when empty.
    func longestRun() -> Int? {
        var best: Int?
        for (i, r) in runs.enumerated() where r.count > 0 && (best == nil || r.count > runs[best!].count) {
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
