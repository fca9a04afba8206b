// Shared splits. A leaf that splits in two leaves two half-full pages, and keys inserted in
// random order then keep a tree's leaves 68-72% full. When a leaf in the middle of the tree has
// no room for a new entry, its entries, the new one and those of a neighbour are laid out again
// instead: over two pages when they fill at most seven eighths of those, otherwise evenly over
// three, so that no page is left half full (the B*-tree's rule; SQLite's balancing also spreads
// a full page over its siblings), and the leaves stay about 81% full. It costs reading and
// writing the neighbour each time, about one insert in fifty.

extension BTree {
    /// The most bytes (cells and their slots) that two pages take from a shared split: more,
    /// and the next inserts into them would split them again at once.
    static var sharedTwoPageLimit: Int { 2 * BTreeLayout.capacity * 7 / 8 }

    /// The leaves of a shared split: where the first of the two sits in the parent, and the
    /// pages they now fill, each but the first with the separator before it.
    struct SharedSplit {
        var first: Int
        var parts: [(ref: PageRef, count: UInt64, separator: [UInt8])]
    }

    /// A new entry for a leaf in the middle of the tree that has no room for it: the leaf's
    /// entries, the new one and those of the emptier leaf beside it in `parent` are spread
    /// over two pages or three, without splitting the leaf first. The parent is not changed
    /// (`applyShared` records the outcome).
    /// - Returns: nil, having changed nothing, when the leaf has room for the entry, the
    ///   parent no other child, or no even cut fits the cells (large entries): the leaf then
    ///   takes the entry, or splits, as usual.
    /// - Complexity: O(b) for the b bytes of two pages, plus O(m) for a value of m bytes.
    func shareInsert(_ leaf: BTreeNode, _ ref: PageRef, _ newKey: BTreeKey, _ value: UnsafeRawBufferPointer,
                     at index: Int, parent step: PathStep) throws(StorageError) -> SharedSplit? {
        let keyPart = keyPartSize(newKey)
        let inline = Self.keepsInline(keyPart: keyPart, length: value.count)
        let size = keyPart + 2 + (inline ? value.count : BTreeLayout.overflowRefSize)
        guard try leaf.usedBytes() + size + 2 > BTreeLayout.capacity else { return nil }
        let parent = try node(step.ref, level: step.level)
        var neighbour: (node: BTreeNode, ref: PageRef, before: Bool)?
        for candidate in [step.index - 1, step.index + 1] where candidate >= 0 && candidate < parent.count {
            let candidateRef = try parent.child(candidate).ref
            let n = try node(candidateRef, level: 0)
            if let chosen = neighbour, try chosen.node.usedBytes() <= n.usedBytes() { continue }
            neighbour = (n, candidateRef, candidate < step.index)
        }
        guard let neighbour else { return nil }
        var cells = CellList()
        if neighbour.before { try appendCells(of: neighbour.node, to: &cells) }
        let at = cells.count + index
        try appendCells(of: leaf, to: &cells)
        let cell = try cells.insert(at: at, length: size)
        if !neighbour.before { try appendCells(of: neighbour.node, to: &cells) }
        var total = 0
        for c in cells.cells { total += c.length + 2 }
        guard let cuts = Self.evenCuts(cells, parts: total <= Self.sharedTwoPageLimit ? 2 : 3)
                ?? Self.evenCuts(cells, parts: 3) else { return nil }
        encodeLeafCell(at: cell, key: newKey, value: value, overflow: inline ? nil : try writeOverflow(value))

        var pool = reusablePages(neighbour.before ? [neighbour.ref, ref] : [ref, neighbour.ref])
        var shared = SharedSplit(first: neighbour.before ? step.index - 1 : step.index, parts: [])
        for range in cuts {
            let (pgno, page) = try takePage(from: &pool)
            let count = writeNode(cells, range, level: 0, into: page)
            debugCheckNode(page, pgno: pgno)
            shared.parts.append((freshRef(pgno), count, range.lowerBound == 0 ? [] : separator(in: cells, before: range.lowerBound, level: 0)))
        }
        for pgno in pool { store.free(pgno) }
        return shared
    }

    /// Records a shared split in the branch of `step`, whose cells `shared.first` and the one
    /// after it held the two leaves. In place for u64 keys when a third leaf's cell fits;
    /// otherwise the branch is laid out again, and split if it must.
    func applyShared(_ step: PathStep, _ shared: SharedSplit, count: UInt64, isRoot: Bool,
                     bias: SplitBias) throws(StorageError) -> NodeOutcome {
        let (pgno, page) = try makeWritable(step.ref)
        let parts = shared.parts
        let first = shared.first
        try setChild(in: page, pgno: pgno, at: first, parts[0].ref, parts[0].count)
        if keyKind == .u64 {
            // Separators of u64 trees have one size: the second leaf's cell is rewritten where
            // it is.
            let offset = try BTreeNode(UnsafeRawPointer(page), pgno: pgno, kind: keyKind).cellOffset(first + 1)
            guard offset + branchCellSize(separatorCount: 8) <= pageSize else { throw BTreeNode.badCell(pgno, first + 1) }
            encodeBranchCell(at: page + offset, parts[1].ref, parts[1].count, separator: parts[1].separator)
            if parts.count == 2 {
                return NodeOutcome(ref: freshRef(pgno), count: count, sibling: nil, underflow: false)
            }
            if let cell = try reserveCell(in: page, pgno: pgno, at: first + 2, size: branchCellSize(separatorCount: 8)) {
                encodeBranchCell(at: cell, parts[2].ref, parts[2].count, separator: parts[2].separator)
                return NodeOutcome(ref: freshRef(pgno), count: count, sibling: nil, underflow: false)
            }
        }
        var list = CellList()
        try appendCells(of: BTreeNode(UnsafeRawPointer(page), pgno: pgno, kind: keyKind), to: &list)
        try replaceBranchCell(&list, at: first + 1, parts[1].ref, parts[1].count, separator: parts[1].separator)
        if parts.count == 3 {
            try insertBranchCell(&list, at: first + 2, parts[2].ref, parts[2].count, separator: parts[2].separator)
        }
        // Byte-keyed separators may have shrunk: the branch can fall under its fill.
        var outcome = try emit(list, level: step.level, reuse: freshRef(pgno), bias: bias)
        if isRoot { outcome.underflow = false }
        return outcome
    }

    /// Cuts the leaf cells of `cells` into `parts` runs of about equal bytes, each of which
    /// fits a page and keeps a leaf's minimum fill.
    /// - Returns: nil when the cuts nearest the even ones leave a run outside those bounds.
    /// - Complexity: O(n) for n cells.
    static func evenCuts(_ cells: borrowing CellList, parts: Int) -> [Range<Int>]? {
        let n = cells.count
        guard n >= parts else { return nil }
        var prefix = [Int](repeating: 0, count: n + 1)
        for i in 0..<n { prefix[i + 1] = prefix[i] + cells.cells[i].length + 2 }
        let total = prefix[n]
        var bounds = [0]
        var s = 1
        for j in 1..<parts {
            let target = total * j / parts
            // The first cut at or past the target, or the one before it if that is nearer;
            // each run keeps at least one cell.
            let lowest = bounds[bounds.count - 1] + 1
            let highest = n - (parts - j)
            s = Swift.max(s, lowest)
            while s < highest && prefix[s] < target { s += 1 }
            if s > lowest && target - prefix[s - 1] < prefix[s] - target { s -= 1 }
            bounds.append(s)
        }
        bounds.append(n)
        var runs: [Range<Int>] = []
        for k in 0..<parts {
            let bytes = prefix[bounds[k + 1]] - prefix[bounds[k]]
            guard bytes <= BTreeLayout.capacity, bytes >= BTreeLayout.leafMinFill else { return nil }
            runs.append(bounds[k]..<bounds[k + 1])
        }
        return runs
    }
}
