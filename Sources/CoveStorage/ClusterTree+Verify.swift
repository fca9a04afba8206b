// The invariant check and the page walk of a table. verify() reads every page through the store
// (so checksums are checked) and proves what the reads rely on; forEachPage gives the pager
// every page a table owns.

extension ClusterTree {
    /// Calls `body` with every page of the table: the pages of its tree, every cluster page and
    /// the overflow pages of its large values (not the pages of collection trees).
    /// - Complexity: O(p) for p pages.
    public func forEachPage(_ body: (PageNumber) throws(StorageError) -> Void) throws(StorageError) {
        if index.isEmpty { return }
        try index.forEachPage(body)
        try index.forEach(from: nil) { k, v throws(StorageError) -> Bool in
            let ref = try ClusterRef(key: k, v)
            let leaf = try self.leaf(ref)
            try body(ref.page.pgno)
            for j in 0..<leaf.columnCount where specs[j].kind.isBytes {
                for i in 0..<leaf.count where !leaf.isNull(j, i) {
                    guard case .overflow(let chain, let length) = try leaf.bytesRef(j, i) else { continue }
                    try index.walkOverflow(chain, length: length) { pgno, _ throws(StorageError) in try body(pgno) }
                }
            }
            return true
        }
    }

    /// Checks the whole table: the tree (`BTree.verify`), each reference (32 bytes, page number,
    /// version matching the page, count matching the page, filed under the page's first key),
    /// each cluster page's header and column extents, keys strictly ascending within and across
    /// clusters, column arrays not overlapping each other nor the keys, no null in a
    /// non-nullable column, heap values inside the heap and not overlapping, overflow chains
    /// against their lengths, no page reached twice, and the object count against the root.
    /// - Throws: `.corrupt` naming the first page found wrong.
    /// - Complexity: O(p + n · c) for p pages, n objects and c columns.
    public func verify() throws(StorageError) {
        try index.verify()
        guard root.clusters == index.root else { throw .corrupt("table: root records a tree other than its own") }
        var seen = Set<PageNumber>()
        try index.forEachPage { pgno throws(StorageError) in seen.insert(pgno) }
        var total: UInt64 = 0
        var previousKey: UInt64?
        try index.forEach(from: nil) { k, v throws(StorageError) -> Bool in
            guard v.count == ClusterRef.encodedSize,
                  v.loadUnaligned(fromByteOffset: 24, as: UInt64.self) == 0 else {
                throw .corrupt("table: the reference filed under key \(k) is malformed")
            }
            let ref = try ClusterRef(key: k, v)
            guard ref.page.version <= store.version,
                  !store.isWritable(ref.page.pgno) || ref.page.version == store.version else {
                throw ClusterLeaf.fault(ref.page.pgno, "referenced as version \(ref.page.version) by the table")
            }
            guard seen.insert(ref.page.pgno).inserted else { throw ClusterLeaf.fault(ref.page.pgno, "reached twice") }
            let leaf = try self.leaf(ref)
            try verifyLeaf(leaf, after: previousKey, seen: &seen)
            previousKey = leaf.key(leaf.count &- 1)
            total &+= ref.count
            return true
        }
        guard total == root.objectCount else {
            throw .corrupt("table: clusters hold \(total) objects, the root records \(root.objectCount)")
        }
    }

    /// Checks one cluster page beyond what `ClusterLeaf.init` checked, its overflow chains
    /// walked.
    func verifyLeaf(_ leaf: ClusterLeaf, after previousKey: UInt64?, seen: inout Set<PageNumber>) throws(StorageError) {
        try leaf.checkLayout(specs: specs, after: previousKey) { j, i, chain, length throws(StorageError) in
            if store.isWritable(chain.pgno) {
                guard chain.version == store.version else {
                    throw ClusterLeaf.fault(leaf.pgno, "column \(j) object \(i): overflow chain of this transaction referenced as version \(chain.version)")
                }
            }
            try index.walkOverflow(chain, length: length) { pgno, _ throws(StorageError) in
                guard seen.insert(pgno).inserted else { throw ClusterLeaf.fault(pgno, "overflow page reached twice") }
            }
        }
    }

    /// Debug builds: checks a cluster page this transaction just wrote (laid out, appended to,
    /// written in place) as `verify()` checks each page, without its overflow chains, and traps
    /// naming what is wrong. Release builds compile nothing.
    @inline(__always)
    func debugCheckPage(_ page: UnsafeMutableRawPointer, pgno: PageNumber) {
        #if DEBUG
        do throws(StorageError) {
            try ClusterLeaf(UnsafeRawPointer(page), pgno: pgno, specs: specs).checkLayout(specs: specs, after: nil) { _, _, _, _ in }
        } catch {
            preconditionFailure("cluster page \(pgno) broken as written: \(error)")
        }
        #endif
    }
}

extension ClusterLeaf {
    /// Checks this page beyond what `init` checked: keys strictly ascending (and after
    /// `previousKey`), the page type, column arrays not overlapping, no null in a non-nullable
    /// column, heap values not overlapping and, with the garbage, covering the heap exactly.
    /// Calls `overflow` with each value kept in an overflow chain (column, object, chain,
    /// length) once its reference checked out.
    func checkLayout(specs: [ColumnSpec], after previousKey: UInt64?,
                     overflow: (Int, Int, PageRef, UInt64) throws(StorageError) -> Void) throws(StorageError) {
        let leaf = self
        let n = leaf.count
        var last = previousKey
        for i in 0..<n {
            let k = leaf.key(i)
            if let last, k <= last { throw ClusterLeaf.fault(leaf.pgno, "key \(k) at \(i) does not follow \(last)") }
            last = k
        }
        guard PageHeader.type(leaf.base) == PageType.clusterLeaf.rawValue else { throw ClusterLeaf.fault(leaf.pgno, "type") }
        // Bytes 22 and 23 (the key encoding and width) were checked by `ClusterLeaf.init`, and
        // the loop above saw the keys they give ascend.
        // Column extents: sorted, they must not overlap each other.
        var extents: [(start: Int, end: Int, column: Int)] = []
        var heapRanges: [(start: Int, end: Int)] = []
        for j in 0..<leaf.columnCount {
            let spec = specs[j]
            let off = leaf.columnOffset(j)
            let size = ClusterLayout.valuesSize(spec.kind, encoding: leaf.encoding(j), n: n) ?? 0
            extents.append((off, leaf.valuesOffset(j) &+ size, j))
            if !spec.nullable, leaf.hasNullBitmap(j) {
                for i in 0..<n where leaf.isNull(j, i) {
                    throw ClusterLeaf.fault(leaf.pgno, "object \(leaf.key(i)) is null in non-nullable column \(j)")
                }
            }
            guard spec.kind.isBytes else { continue }
            for i in 0..<n where !leaf.isNull(j, i) {
                let e = leaf.valuesOffset(j) &+ 4 &* i
                switch try leaf.bytesRef(j, i) {
                case .inline(let bytes):
                    if bytes.count > 0 { heapRanges.append((leaf.u16(e), leaf.u16(e) &+ bytes.count)) }
                case .overflow(let chain, let length):
                    heapRanges.append((leaf.u16(e), leaf.u16(e) &+ ClusterLayout.overflowRefSize))
                    guard length > UInt64(ClusterLayout.overflowRefSize) else {
                        throw ClusterLeaf.fault(leaf.pgno, "column \(j) object \(i): overflow value of \(length) bytes")
                    }
                    try overflow(j, i, chain, length)
                }
            }
        }
        extents.sort { $0.start < $1.start }
        for x in 1..<Swift.max(1, extents.count) where extents[x].start < extents[x &- 1].end {
            throw ClusterLeaf.fault(leaf.pgno, "columns \(extents[x &- 1].column) and \(extents[x].column) overlap")
        }
        heapRanges.sort { $0.start < $1.start }
        for x in 1..<Swift.max(1, heapRanges.count) where heapRanges[x].start < heapRanges[x &- 1].end {
            throw ClusterLeaf.fault(leaf.pgno, "heap values at \(heapRanges[x &- 1].start) and \(heapRanges[x].start) overlap")
        }
        var heapBytes = 0
        for r in heapRanges { heapBytes &+= r.end &- r.start }
        let garbage = leaf.u16(ClusterLayout.garbageOffset)
        guard heapBytes &+ garbage == pageSize &- leaf.heapStart else {
            throw ClusterLeaf.fault(leaf.pgno, "heap of \(pageSize &- leaf.heapStart) bytes holds \(heapBytes) bytes of values and \(garbage) of garbage")
        }
    }
}
