// Sections kept from one delivery to the next. Sectioned by a key path, the results are sorted
// by that key first, so each section is a run of the results' rows: the sections are the rows
// with where each run starts. A change set of the results then moves only the runs' bounds:
// the rows it deletes leave their runs, those it inserts (and those that kept their place
// while their key changed) enter the run of their key, made when it is new, and only those
// rows' keys are read. Runs that do not tile the rows in key order (a key that comes back
// after another, as null does for a path through a null link) fall back to sections cut
// whole, as does a change set that does not say which rows' keys may have changed.
import CoveCore
import FoundationEssentials
import Synchronization

/// The sections of sectioned results at one version (and write) of the realm.
struct SectionGrouping: Sendable {
    var generation: UInt64
    var edits: Int
    /// The section keys, in section order.
    var keys: [Value]
    var ascending: Bool
    var layout: Layout
    /// The sections with their rows, made when first asked for.
    var materialized: [(key: Value, rows: [Value])]?

    enum Layout: Sendable {
        /// Section `s` is `rows[starts[s] ..< starts[s + 1]]`; the keys strictly in order.
        case runs(rows: [Value], starts: [Int])
        /// Each section's rows, and the section of each key.
        case lists([[Value]], position: [Value: Int])
    }

    /// The sections of `rows`, whose keys are `rowKeys`: runs when each key's rows are one run
    /// and the runs go in key order, else lists in key order.
    init(generation: UInt64, edits: Int, rows: [Value], rowKeys: [Value], ascending: Bool) {
        self.generation = generation
        self.edits = edits
        self.ascending = ascending
        var keys: [Value] = []
        var starts: [Int] = []
        for (i, k) in rowKeys.enumerated() where keys.last != k {
            keys.append(k)
            starts.append(i)
        }
        if zip(keys, keys.dropFirst()).allSatisfy({ Self.order($0, $1, ascending) < 0 }) {
            self.keys = keys
            layout = .runs(rows: rows, starts: starts + [rows.count])
            return
        }
        var order: [Value] = []
        var byKey: [Value: [Value]] = [:]
        for (v, k) in zip(rows, rowKeys) {
            if byKey[k] == nil { order.append(k) }
            byKey[k, default: []].append(v)
        }
        order.sort { Self.order($0, $1, ascending) < 0 }
        self.keys = order
        layout = .lists(order.map { byKey[$0] ?? [] }, position: Dictionary(uniqueKeysWithValues: order.enumerated().map { ($1, $0) }))
    }

    /// A grouping of sections already cut (a step's result).
    fileprivate init(generation: UInt64, edits: Int, keys: [Value], ascending: Bool, layout: Layout) {
        self.generation = generation
        self.edits = edits
        self.keys = keys
        self.ascending = ascending
        self.layout = layout
    }

    /// How two keys go in section order: -1, 0 or 1.
    static func order(_ a: Value, _ b: Value, _ ascending: Bool) -> Int {
        let c = QueryEvaluator.sortOrder(a, b)
        return ascending ? c : -c
    }

    var count: Int { keys.count }

    /// The index of the section of `key`, nil when there is none.
    func index(of key: Value) -> Int? {
        switch layout {
        case .lists(_, let position): return position[key]
        case .runs:
            var lo = 0, hi = keys.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if Self.order(keys[mid], key, ascending) < 0 { lo = mid + 1 } else { hi = mid }
            }
            return lo < keys.count && keys[lo] == key ? lo : nil
        }
    }

    func rows(at s: Int) -> [Value] {
        switch layout {
        case .runs(let rows, let starts): return Array(rows[starts[s]..<starts[s + 1]])
        case .lists(let lists, _): return lists[s]
        }
    }

    func rowCount(at s: Int) -> Int {
        switch layout {
        case .runs(_, let starts): return starts[s + 1] - starts[s]
        case .lists(let lists, _): return lists[s].count
        }
    }

    func row(_ r: Int, at s: Int) -> Value {
        switch layout {
        case .runs(let rows, let starts): return rows[starts[s] + r]
        case .lists(let lists, _): return lists[s][r]
        }
    }

    /// The sections with their rows.
    func makeSections() -> [(key: Value, rows: [Value])] {
        keys.indices.map { (keys[$0], rows(at: $0)) }
    }
}

/// What one change set of the results did to the sections.
struct SectionsStep {
    /// How many steps advanced sections instead of cutting them again (tests read it).
    static let advancedCount = Atomic<Int>(0)

    var grouping: SectionGrouping
    /// Every row that left a section (old section, old row), every row that entered one (new
    /// section, new row), and the rows that stayed in theirs and were modified (new).
    var deleted: [IndexPath] = []
    var inserted: [IndexPath] = []
    var modified: [IndexPath] = []
    /// Old indices of the sections that went, new ones of those that came.
    var sectionsDeleted: [Int] = []
    var sectionsInserted: [Int] = []

    /// The change set of the sections: rows of sections that went or came are not listed.
    var changes: SectionedChangeSet {
        var c = SectionedChangeSet()
        let gone = Set(sectionsDeleted), came = Set(sectionsInserted)
        c.deletions = deleted.filter { !gone.contains($0.section) }.sorted()
        c.insertions = inserted.filter { !came.contains($0.section) }.sorted()
        c.modifications = modified.sorted()
        c.sectionsToDelete = sectionsDeleted
        c.sectionsToInsert = sectionsInserted
        return c
    }

    /// The change set of the one section of `key`, as its observer sees it (section 0, always
    /// there: a section that went deletes its rows, one that came inserts them).
    func changes(ofKey key: Value, from old: SectionGrouping) -> SectionedChangeSet {
        var c = SectionedChangeSet()
        let s = old.index(of: key), t = grouping.index(of: key)
        func rows(_ paths: [IndexPath], _ section: Int?) -> [IndexPath] {
            paths.filter { $0.section == section }.map { IndexPath(row: $0.row, section: 0) }.sorted()
        }
        switch (s, t) {
        case (let s?, nil): c.deletions = (0..<old.rowCount(at: s)).map { IndexPath(row: $0, section: 0) }
        case (nil, let t?): c.insertions = (0..<grouping.rowCount(at: t)).map { IndexPath(row: $0, section: 0) }
        case (let s?, let t?):
            c.deletions = rows(deleted, s)
            c.insertions = rows(inserted, t)
            c.modifications = rows(modified, t)
        case (nil, nil): break
        }
        return c
    }

    /// The sections after `change` took the results from the rows of `old` (runs) to `rows`;
    /// `key` reads a row's key. Nil when the change set does not say which rows' keys may have
    /// changed, or the sections stop being runs in key order.
    init?(from old: SectionGrouping, _ change: CollectionChangeSet, rows: [Value], generation: UInt64, edits: Int,
          key: (Value) throws -> Value) rethrows {
        guard let resorted = change.resorted, case .runs(_, let oldStarts) = old.layout else { return nil }
        func section(of index: Int, _ starts: [Int]) -> Int {
            CollectionChangeSet.count(below: index + 1, starts) - 1
        }
        // Rows that kept their place with another key leave their section and enter another.
        var deletions = change.deletions, insertions = change.insertions
        var arrivingKeys: [Int: Value] = [:]
        var rekeyed = Set<Int>()
        for j in resorted {
            let i = CollectionChangeSet.index(ofRank: j - CollectionChangeSet.count(below: j, change.insertions), skipping: change.deletions)
            let k = try key(rows[j])
            guard k != old.keys[section(of: i, oldStarts)] else { continue }
            deletions.append(i)
            insertions.append(j)
            arrivingKeys[j] = k
            rekeyed.insert(j)
        }
        if !rekeyed.isEmpty {
            deletions.sort()
            insertions.sort()
        }
        // What each old section loses and gains, and the new keys.
        var counts = (0..<old.count).map { oldStarts[$0 + 1] - oldStarts[$0] }
        for i in deletions {
            let s = section(of: i, oldStarts)
            counts[s] -= 1
            deleted.append(IndexPath(row: i - oldStarts[s], section: s))
        }
        var newKeyCounts: [Value: Int] = [:]
        for j in insertions {
            let k: Value
            if let known = arrivingKeys[j] { k = known } else { k = try key(rows[j]); arrivingKeys[j] = k }
            if let s = old.index(of: k) { counts[s] += 1 } else { newKeyCounts[k, default: 0] += 1 }
        }
        // The sections in key order: the old ones left with rows, the new keys merged in.
        let ascending = old.ascending
        let added = newKeyCounts.keys.sorted { SectionGrouping.order($0, $1, ascending) < 0 }
        var keys: [Value] = []
        var newCounts: [Int] = []
        var newIndexOfOld = [Int?](repeating: nil, count: old.count)
        var a = 0
        for s in 0...old.count {
            while a < added.count && (s == old.count || SectionGrouping.order(added[a], old.keys[s], ascending) < 0) {
                sectionsInserted.append(keys.count)
                keys.append(added[a])
                newCounts.append(newKeyCounts[added[a]] ?? 0)
                a += 1
            }
            guard s < old.count else { break }
            // A new key that sorts equal to an old one (but is not it) has no place of its own.
            if a < added.count && SectionGrouping.order(added[a], old.keys[s], ascending) == 0 { return nil }
            if counts[s] == 0 {
                sectionsDeleted.append(s)
                continue
            }
            newIndexOfOld[s] = keys.count
            keys.append(old.keys[s])
            newCounts.append(counts[s])
        }
        guard zip(added, added.dropFirst()).allSatisfy({ SectionGrouping.order($0, $1, ascending) < 0 }) else { return nil }
        var starts = [0]
        starts.reserveCapacity(keys.count + 1)
        for c in newCounts { starts.append(starts[starts.count - 1] + c) }
        grouping = SectionGrouping(generation: generation, edits: edits, keys: keys, ascending: ascending, layout: .runs(rows: rows, starts: starts))
        // Each arriving row must fall in its section's run; the rows that stayed then fill the
        // rest of each run in order, so the runs tile the rows.
        for j in insertions {
            guard let k = arrivingKeys[j], let t = grouping.index(of: k), starts[t] <= j, j < starts[t + 1] else { return nil }
            inserted.append(IndexPath(row: j - starts[t], section: t))
        }
        for j in change.modifications where !rekeyed.contains(j) {
            let t = section(of: j, starts)
            modified.append(IndexPath(row: j - starts[t], section: t))
        }
        Self.advancedCount.add(1, ordering: .relaxed)
    }
}
