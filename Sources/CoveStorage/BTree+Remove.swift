// Removal and rebalancing. A page that falls under its minimum fill (a quarter of a leaf, a
// sixth of a branch) is merged with a neighbour when both fit one page, and otherwise evens its
// cells out with that neighbour; either way the parent changes and may itself need the same
// treatment, up to the root, which collapses when left with a single child.

extension BTree {
    // MARK: - Public API

    /// Removes the entry for `key`, freeing its overflow pages.
    /// - Returns: true if `key` was present.
    /// - Throws: `.invalidArgument` on a byte-keyed tree; `.corrupt`; allocation errors.
    /// - Complexity: O(log n), plus O(m / 4064) pages for an overflow value.
    @discardableResult
    public mutating func remove(_ key: UInt64) throws(StorageError) -> Bool {
        try requireKind(.u64)
        return try update(.u64(key), .remove)
    }

    /// Removes the entry for the byte-string `key`, freeing its overflow pages.
    /// - Returns: true if `key` was present.
    /// - Throws: `.invalidArgument` on a UInt64-keyed tree; `.corrupt`; allocation errors.
    /// - Complexity: O(log n · k)
    @discardableResult
    public mutating func remove(_ key: UnsafeRawBufferPointer) throws(StorageError) -> Bool {
        try requireKind(.bytes)
        return try update(.bytes(key), .remove)
    }

    /// Removes the entry for the byte-string `key`, freeing its overflow pages.
    /// - Returns: true if `key` was present.
    /// - Complexity: O(log n · k)
    @discardableResult
    public mutating func remove(_ key: [UInt8]) throws(StorageError) -> Bool {
        try withBytes(key) { k throws(StorageError) in try remove(k) }
    }

    /// Removes every entry and frees every page of the tree, overflow pages included; the tree
    /// becomes `TreeRoot.empty`.
    /// - Complexity: O(p) for p pages.
    public mutating func removeAll() throws(StorageError) {
        var pages: [PageNumber] = []
        try forEachPage { pgno throws(StorageError) in pages.append(pgno) }
        // Freed only once all are known: a page written by this transaction is reusable the
        // moment it is freed, and the walk still reads them.
        for pgno in pages { store.free(pgno) }
        root = .empty
    }

    // MARK: - The leaf

    /// Removes cell `index` of `leaf` and frees the overflow pages of its value.
    func removeFromLeaf(_ leaf: BTreeNode, _ ref: PageRef, at index: Int, isRoot: Bool) throws(StorageError) -> NodeOutcome {
        var oldChain: (ref: PageRef, length: UInt64)?
        if case .overflow(let chain, let length) = try leaf.value(index) { oldChain = (chain, length) }
        let (pgno, page) = try makeWritable(ref)
        try removeCell(in: page, pgno: pgno, at: index)
        if let oldChain { try freeOverflow(oldChain.ref, length: oldChain.length) }
        return NodeOutcome(ref: freshRef(pgno), count: UInt64(Self.load16(page, PageHeader.countOffset)), sibling: nil,
                           underflow: !isRoot && Self.usedBytes(page) < BTreeLayout.leafMinFill)
    }

    // MARK: - Rebalancing

    /// Child `index` of the branch whose cells `list` holds fell under its minimum fill: merge
    /// it with its left neighbour (its right one for the first child) if both fit one page,
    /// otherwise share their cells out evenly between the two. Updates `list` to match.
    ///
    /// In a branch the separator between the two moves down into the merged cells (as the key of
    /// the right page's first child), and a new one moves up after redistribution, so the parent
    /// may shrink or grow; the caller lays it out again with `emit`, which splits it if needed.
    func rebalance(_ list: inout CellList, at index: Int, childLevel: Int) throws(StorageError) {
        let left = index > 0 ? index - 1 : index
        let right = left + 1
        let leftRef = child(in: list, left).ref
        let rightRef = child(in: list, right).ref
        let leftNode = try node(leftRef, level: childLevel)
        let rightNode = try node(rightRef, level: childLevel)

        var pair = CellList()
        try appendCells(of: leftNode, to: &pair)
        if childLevel > 0 {
            let (firstRef, firstCount) = try rightNode.child(0)
            try insertBranchCell(&pair, at: pair.count, firstRef, firstCount,
                                 separator: Array(key(in: list, right, level: childLevel + 1)))
            try appendCells(of: rightNode, from: 1, to: &pair)
        } else {
            try appendCells(of: rightNode, to: &pair)
        }
        let merged = try emit(pair, level: childLevel, reuse: leftRef, rightRef, bias: .balanced)
        BTree.encodeChild(at: list.cell(left), merged.ref, merged.count)
        if let sibling = merged.sibling {
            try replaceBranchCell(&list, at: right, sibling.ref, sibling.count, separator: sibling.separator)
        } else {
            list.cells.remove(at: right)
        }
    }
}
