// The invariant check and the page walks. verify() reads every page of the tree through the
// store (so checksums are checked) and proves the structure the other files rely on; the page
// walks give the pager the pages a tree owns, all of them or those one commit wrote.

extension BTree {
    // MARK: - Page walks

    /// Calls `body` with every page of the tree: branches and leaves (each before its
    /// children) and the overflow pages of every value.
    /// - Complexity: O(p) for p pages.
    public func forEachPage(_ body: (PageNumber) throws(StorageError) -> Void) throws(StorageError) {
        if root.page.isNone { return }
        try visitPages(root.page, level: -1, writtenAt: nil, body)
    }

    /// Calls `body` with the pages written at `version`: the root if its reference carries
    /// `version`, then, recursively, the children and overflow chains whose references carry
    /// it. Copy-on-write makes this the set of pages the commit of `version` wrote for this tree
    /// (a page written then is reachable only through pages also written then), which is what
    /// recovery checks after a crash. Pages of older versions are neither visited nor read.
    /// - Complexity: O(p) for the p pages visited (and the branch pages above them).
    public func forEachPage(writtenAt version: UInt64, _ body: (PageNumber) throws(StorageError) -> Void) throws(StorageError) {
        if root.page.isNone || root.page.version != version { return }
        try visitPages(root.page, level: -1, writtenAt: version, body)
    }

    /// Visits the subtree at `ref`; recursion depth is the tree's height.
    func visitPages(_ ref: PageRef, level: Int, writtenAt version: UInt64?,
                    _ body: (PageNumber) throws(StorageError) -> Void) throws(StorageError) {
        let node = try self.node(ref, level: level)
        try body(ref.pgno)
        if node.isLeaf {
            for i in 0..<node.count {
                guard case .overflow(let chain, let length) = try node.value(i) else { continue }
                if let version, chain.version != version { continue }
                try walkOverflow(chain, length: length) { pgno, _ throws(StorageError) in try body(pgno) }
            }
        } else {
            for i in 0..<node.count {
                let child = try node.child(i).ref
                if let version, child.version != version { continue }
                try visitPages(child, level: node.level - 1, writtenAt: version, body)
            }
        }
    }

    // MARK: - verify

    /// Checks the whole tree: every page's checksum (through the store), header and layout
    /// (slots inside the cell area, cells inside the page and not overlapping, garbage
    /// accounted for), key order within pages and against the separators above, one level per
    /// depth, the minimum fill of every page but the root, a root branch with two children or
    /// more, subtree counts against the entries below them, the total against `count`, overflow
    /// chains against their lengths, each page referenced once, and references whose versions
    /// match the pages (a page this transaction wrote carries `store.version`).
    /// - Throws: `.corrupt` naming the first page found wrong.
    /// - Complexity: O(p + n) for p pages and n entries.
    public func verify() throws(StorageError) {
        if root.page.isNone {
            guard root.count == 0 else { throw .corrupt("B+tree: empty root records \(root.count) entries") }
            return
        }
        var seen = Set<PageNumber>()
        let total = try verifyNode(root.page, level: -1, isRoot: true, lower: nil, upper: nil, seen: &seen)
        guard total == root.count else {
            throw .corrupt("B+tree rooted at page \(root.page.pgno) holds \(total) entries, its root records \(root.count)")
        }
    }

    /// Checks one reference to a page: not seen before, and the page's version agrees.
    private func checkReference(_ ref: PageRef, seen: inout Set<PageNumber>) throws(StorageError) {
        // Page 0 is a meta slot in every file; reading the page refuses the other slot's.
        guard ref.pgno != 0 else { throw .corrupt("B+tree reference to page 0, a meta slot") }
        guard seen.insert(ref.pgno).inserted else { throw BTreeNode.fault(ref.pgno, "referenced twice") }
        guard ref.version <= store.version else {
            throw BTreeNode.fault(ref.pgno, "referenced as version \(ref.version), after the store's \(store.version)")
        }
        if store.isWritable(ref.pgno) {
            guard ref.version == store.version else {
                throw BTreeNode.fault(ref.pgno, "written by this transaction but referenced as version \(ref.version)")
            }
        } else {
            let page = try store.page(ref.pgno)
            guard PageHeader.version(page) == ref.version else {
                throw BTreeNode.fault(ref.pgno, "written at version \(PageHeader.version(page)), referenced as version \(ref.version)")
            }
        }
    }

    /// Checks the subtree at `ref`, whose keys must lie in [lower, upper); returns its entry
    /// count. Recursion depth is the tree's height.
    private func verifyNode(_ ref: PageRef, level: Int, isRoot: Bool, lower: BTreeKey?, upper: BTreeKey?,
                            seen: inout Set<PageNumber>) throws(StorageError) -> UInt64 {
        try checkReference(ref, seen: &seen)
        let node = try self.node(ref, level: level)
        let pgno = ref.pgno
        func fail(_ what: String) -> StorageError { BTreeNode.fault(pgno, what) }

        try checkNodeLayout(node)

        // Fill.
        let used = try node.usedBytes()
        if isRoot {
            guard node.isLeaf || node.count >= 2 else { throw fail("root branch with a single child") }
        } else {
            let minFill = BTreeLayout.minFill(level: node.level)
            guard used >= minFill else { throw fail("holds \(used) bytes, under the minimum fill of \(minFill)") }
        }

        // Keys: ascending, inside [lower, upper), bytes keys not too long; the key of a branch's
        // first cell is unused and must be empty.
        let first = node.isLeaf ? 0 : 1
        for i in first..<node.count {
            if let lower {
                // A leaf key may equal its lower bound; a separator may not (its left child
                // would have no keys).
                let c = try node.compare(i, lower)
                guard node.isLeaf ? c >= 0 : c > 0 else { throw fail("key \(i) is below the separator above it") }
            }
            if let upper {
                guard try node.compare(i, upper) < 0 else { throw fail("key \(i) is not below the next separator above it") }
            }
        }

        if node.isLeaf {
            let keyPart = node.isU64 ? 8 : 2
            for i in 0..<node.count {
                let part = node.isU64 ? keyPart : keyPart + (try node.bytesKey(i)).count
                switch try node.value(i) {
                case .inline(let value):
                    guard Self.keepsInline(keyPart: part, length: value.count) else {
                        throw fail("entry \(i) keeps \(value.count) bytes inline, over the limit")
                    }
                case .overflow(let chain, let length):
                    guard length <= UInt64(Self.maxValueLength), !Self.keepsInline(keyPart: part, length: Int(length)) else {
                        throw fail("entry \(i) keeps \(length) bytes in overflow pages, which belong inline")
                    }
                    try checkReference(chain, seen: &seen)
                    // walkOverflow checks each page's type, length, link and version.
                    var pages = 0
                    try walkOverflow(chain, length: length) { overflow, _ throws(StorageError) in
                        pages += 1
                        if pages > 1, !seen.insert(overflow).inserted { throw BTreeNode.fault(overflow, "referenced twice") }
                    }
                }
            }
            return UInt64(node.count)
        }

        var total: UInt64 = 0
        for i in 0..<node.count {
            let (child, recorded) = try node.child(i)
            let low = i == 0 ? lower : try keyOf(node, i)
            let high = i + 1 < node.count ? try keyOf(node, i + 1) : upper
            let actual = try verifyNode(child, level: node.level - 1, isRoot: false, lower: low, upper: high, seen: &seen)
            guard actual == recorded else {
                throw fail("child \(i) (page \(child.pgno)) holds \(actual) entries, the branch records \(recorded)")
            }
            total &+= actual
        }
        return total
    }

    /// Checks what a node page holds on its own: cells inside `[cellStart, pageSize)`, disjoint,
    /// with the garbage covering the rest of the cell area exactly; keys ascending and not too
    /// long; a branch's first cell without a key. (Its place in the tree, bounds and fill are
    /// `verify()`'s.)
    func checkNodeLayout(_ node: BTreeNode) throws(StorageError) {
        let pgno = node.pgno
        func fail(_ what: String) -> StorageError { BTreeNode.fault(pgno, what) }
        // Layout: cells inside [cellStart, pageSize), disjoint, and with the garbage covering
        // the area exactly.
        guard node.count > 0 else { throw fail("no entries") }
        for b in 21..<24 where node.base.load(fromByteOffset: b, as: UInt8.self) != 0 {
            throw fail("reserved byte \(b) is not zero")
        }
        var extents: [(offset: Int, length: Int)] = []
        extents.reserveCapacity(node.count)
        for i in 0..<node.count { extents.append(try node.cellExtent(i)) }
        extents.sort { $0.offset < $1.offset }
        var covered = 0
        for (k, e) in extents.enumerated() {
            if k > 0 {
                let previous = extents[k - 1]
                guard previous.offset + previous.length <= e.offset else {
                    throw fail("cells at \(previous.offset) and \(e.offset) overlap")
                }
            }
            covered += e.length
        }
        let garbage = try node.garbage()
        guard covered + garbage == pageSize - node.cellStart else {
            throw fail("cells (\(covered) bytes) and garbage (\(garbage)) do not cover the cell area (\(pageSize - node.cellStart))")
        }

        let first = node.isLeaf ? 0 : 1
        if !node.isLeaf {
            if node.isU64 {
                guard try node.u64Key(0) == 0 else { throw fail("first branch cell carries a key") }
            } else {
                guard try node.bytesKey(0).isEmpty else { throw fail("first branch cell carries a key") }
            }
        }
        for i in first..<node.count {
            if !node.isU64 {
                let length = try node.bytesKey(i).count
                guard length <= Self.maxKeyLength else { throw fail("key \(i) is \(length) bytes long") }
            }
            if i > first {
                guard try node.compare(i - 1, keyOf(node, i)) < 0 else { throw fail("keys \(i - 1) and \(i) are out of order") }
            }
        }
    }

    /// Debug builds: checks a node page this transaction just laid out (the pages of a split,
    /// of a merge, of cells shared out between neighbours) with `checkNodeLayout`, and traps
    /// naming what is wrong. Release builds compile nothing.
    @inline(__always)
    func debugCheckNode(_ page: UnsafeMutableRawPointer, pgno: PageNumber) {
        #if DEBUG
        do throws(StorageError) {
            try checkNodeLayout(BTreeNode(UnsafeRawPointer(page), pgno: pgno, kind: keyKind))
        } catch {
            preconditionFailure("B+tree node \(pgno) broken as laid out: \(error)")
        }
        #endif
    }

    /// The key of cell `i` as a search key (pointing into the page).
    private func keyOf(_ node: BTreeNode, _ i: Int) throws(StorageError) -> BTreeKey {
        node.isU64 ? .u64(try node.u64Key(i)) : .bytes(try node.bytesKey(i))
    }
}
