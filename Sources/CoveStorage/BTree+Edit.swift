// Editing branch and leaf pages. A cell that fits goes into its (writable) page in place; when
// pages split, merge or trade cells, the cells are first gathered into a CellList outside the
// pages and then laid out again by `emit`, which also chooses split points that keep both
// halves above their minimum fill. Copy-on-write happens here: `makeWritable` and `emit` never
// write a page this transaction did not allocate.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What became of a node after an edit below it, for its parent to record.
struct NodeOutcome {
    /// The node itself, perhaps at a new page.
    var ref: PageRef
    /// Its subtree count.
    var count: UInt64
    /// A right sibling split off the node, with the separator its parent must hold for it.
    var sibling: SplitSibling?
    /// Whether the node fell under its minimum fill (never reported for a split).
    var underflow: Bool
}

struct SplitSibling {
    var ref: PageRef
    var count: UInt64
    /// The key as stored in a branch cell, without its length: 8 little-endian bytes for u64
    /// trees.
    var separator: [UInt8]
}

/// Where to cut a node that no longer fits one page.
enum SplitBias {
    /// Halves of about equal size: random insertions, redistribution.
    case balanced
    /// As much as possible on the left: appending at the end of the tree leaves full pages
    /// behind instead of half-empty ones.
    case packLeft
    /// As much as possible on the right: prepending at the start of the tree.
    case packRight
}

/// Cells gathered outside the pages while nodes are split, merged or rebalanced: the bytes in
/// one scratch buffer, their order in `cells`. Cells keep their on-page format.
struct CellList: ~Copyable {
    let buffer: UnsafeMutableRawPointer
    let capacity: Int
    var used = 0
    var cells: [(offset: Int, length: Int)] = []

    /// Room for the cells of two full pages, a separator and a new cell.
    init() {
        capacity = 4 * pageSize
        buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        cells.reserveCapacity(64)
    }

    deinit { buffer.deallocate() }

    var count: Int { cells.count }

    /// Reserves `length` bytes for a cell placed at `index` in the order.
    mutating func insert(at index: Int, length: Int) throws(StorageError) -> UnsafeMutableRawPointer {
        // Cells of well-formed pages always fit; overlapping cells of a damaged page may not.
        guard used + length <= capacity else {
            throw .corrupt("B+tree cells claim more bytes (\(used + length)) than the pages being rebuilt hold")
        }
        let offset = used
        used += length
        if index == cells.count { cells.append((offset, length)) } else { cells.insert((offset, length), at: index) }
        return buffer + offset
    }

    /// Reserves `length` bytes for a cell that takes the place of cell `index`.
    mutating func replace(_ index: Int, length: Int) throws(StorageError) -> UnsafeMutableRawPointer {
        guard used + length <= capacity else {
            throw .corrupt("B+tree cells claim more bytes (\(used + length)) than the pages being rebuilt hold")
        }
        let offset = used
        used += length
        cells[index] = (offset, length)
        return buffer + offset
    }

    func cell(_ index: Int) -> UnsafeMutableRawPointer { buffer + cells[index].offset }
}

// MARK: - Header fields of writable pages

extension BTree {
    @inline(__always)
    static func load16(_ page: UnsafeMutableRawPointer, _ offset: Int) -> Int {
        Int(UInt16(littleEndian: page.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
    }

    @inline(__always)
    static func store16(_ page: UnsafeMutableRawPointer, _ offset: Int, _ value: Int) {
        page.storeBytes(of: UInt16(truncatingIfNeeded: value).littleEndian, toByteOffset: offset, as: UInt16.self)
    }

    /// Formats `page` as an empty node of `level`.
    func initNode(_ page: UnsafeMutableRawPointer, level: Int) {
        let type = level == 0 ? PageType.leaf : PageType.branch
        page.storeBytes(of: type.rawValue, toByteOffset: PageHeader.typeOffset, as: UInt8.self)
        page.storeBytes(of: UInt8(level), toByteOffset: PageHeader.flagsOffset, as: UInt8.self)
        Self.store16(page, PageHeader.countOffset, 0)
        Self.store16(page, BTreeLayout.cellStartOffset, pageSize)
        Self.store16(page, BTreeLayout.garbageOffset, 0)
        page.storeBytes(of: keyKind.rawValue, toByteOffset: BTreeLayout.keyKindOffset, as: UInt8.self)
        page.storeBytes(of: 0, toByteOffset: BTreeLayout.keyKindOffset + 1, as: UInt8.self)
        page.storeBytes(of: 0, toByteOffset: BTreeLayout.keyKindOffset + 2, as: UInt8.self)
        page.storeBytes(of: 0, toByteOffset: BTreeLayout.keyKindOffset + 3, as: UInt8.self)
    }

    /// Bytes of slots and live cells in a writable node.
    static func usedBytes(_ page: UnsafeMutableRawPointer) -> Int {
        2 * load16(page, PageHeader.countOffset) + pageSize - load16(page, BTreeLayout.cellStartOffset)
            - load16(page, BTreeLayout.garbageOffset)
    }

    /// The page `ref` names, writable: itself if this transaction allocated it, otherwise a
    /// copy (the original is freed; the owner keeps it for older readers).
    func makeWritable(_ ref: PageRef) throws(StorageError) -> (PageNumber, UnsafeMutableRawPointer) {
        if store.isWritable(ref.pgno) { return (ref.pgno, store.writablePage(ref.pgno)) }
        if let page = try store.adoptInPlace(ref.pgno) { return (ref.pgno, page) }
        let (pgno, page) = try store.allocateCopy(of: ref.pgno)
        store.free(ref.pgno)
        return (pgno, page)
    }

    /// The reference under which a page written now is recorded.
    @inline(__always)
    func freshRef(_ pgno: PageNumber) -> PageRef { PageRef(pgno: pgno, version: store.version) }

    // MARK: - Cells in place

    /// The bytes a key takes in a cell.
    @inline(__always)
    func keyPartSize(_ key: BTreeKey) -> Int {
        switch key {
        case .u64: return 8
        case .bytes(let k): return 2 + k.count
        }
    }

    /// The bytes a separator (as `SplitSibling.separator` holds it) takes in a branch cell.
    @inline(__always)
    func branchCellSize(separatorCount: Int) -> Int {
        BTreeLayout.childRefSize + (keyKind == .u64 ? 8 : 2 + separatorCount)
    }

    /// Reserves `size` bytes for a new cell at slot `index` of a writable node, compacting the
    /// page first if its free bytes are scattered.
    /// - Returns: where to write the cell, or nil if it does not fit.
    func reserveCell(in page: UnsafeMutableRawPointer, pgno: PageNumber, at index: Int, size: Int)
        throws(StorageError) -> UnsafeMutableRawPointer? {
        let n = Self.load16(page, PageHeader.countOffset)
        var cellStart = Self.load16(page, BTreeLayout.cellStartOffset)
        let garbage = Self.load16(page, BTreeLayout.garbageOffset)
        let slotsEnd = BTreeLayout.slotsOffset + 2 * n
        guard cellStart >= slotsEnd, cellStart <= pageSize, garbage <= pageSize - cellStart, index <= n else {
            throw BTreeNode.fault(pgno, "header (\(n) cells from \(cellStart), \(garbage) garbage) does not fit the page")
        }
        let need = size + 2
        if cellStart - slotsEnd < need {
            guard cellStart - slotsEnd + garbage >= need else { return nil }
            try compact(page, pgno: pgno)
            cellStart = Self.load16(page, BTreeLayout.cellStartOffset)
        }
        let slot = page + BTreeLayout.slotsOffset + 2 * index
        if index < n { memmove(slot + 2, slot, 2 * (n - index)) }
        cellStart -= size
        Self.store16(slot, 0, cellStart)
        Self.store16(page, BTreeLayout.cellStartOffset, cellStart)
        Self.store16(page, PageHeader.countOffset, n + 1)
        return page + cellStart
    }

    /// Removes cell `index` from a writable node. Its bytes become free space if it was the
    /// lowest cell, garbage otherwise.
    func removeCell(in page: UnsafeMutableRawPointer, pgno: PageNumber, at index: Int) throws(StorageError) {
        let node = try BTreeNode(UnsafeRawPointer(page), pgno: pgno, kind: keyKind)
        let (offset, length) = try node.cellExtent(index)
        let garbage = try node.garbage()
        let slot = page + BTreeLayout.slotsOffset + 2 * index
        if index + 1 < node.count { memmove(slot, slot + 2, 2 * (node.count - index - 1)) }
        if offset == node.cellStart {
            Self.store16(page, BTreeLayout.cellStartOffset, offset + length)
        } else {
            Self.store16(page, BTreeLayout.garbageOffset, garbage + length)
        }
        Self.store16(page, PageHeader.countOffset, node.count - 1)
    }

    /// Packs the cells of a writable node against the end of the page, turning garbage into
    /// contiguous free space.
    func compact(_ page: UnsafeMutableRawPointer, pgno: PageNumber) throws(StorageError) {
        try withUnsafeTemporaryAllocation(byteCount: pageSize, alignment: 16) { (scratch) throws(StorageError) in
            let copy = scratch.baseAddress!
            copy.copyMemory(from: page, byteCount: pageSize)
            let node = try BTreeNode(UnsafeRawPointer(copy), pgno: pgno, kind: keyKind)
            let floor = BTreeLayout.slotsOffset + 2 * node.count
            var top = pageSize
            for i in 0..<node.count {
                let (offset, length) = try node.cellExtent(i)
                top -= length
                guard top >= floor else { throw BTreeNode.fault(pgno, "cells overlap: they claim more bytes than the page has") }
                (page + top).copyMemory(from: copy + offset, byteCount: length)
                Self.store16(page, BTreeLayout.slotsOffset + 2 * i, top)
            }
            Self.store16(page, BTreeLayout.cellStartOffset, top)
            Self.store16(page, BTreeLayout.garbageOffset, 0)
        }
    }

    /// Writes a key in cell format at `p`; returns the bytes written.
    @inline(__always)
    func encodeKey(_ key: BTreeKey, at p: UnsafeMutableRawPointer) -> Int {
        switch key {
        case .u64(let k):
            p.storeBytes(of: k.littleEndian, as: UInt64.self)
            return 8
        case .bytes(let k):
            Self.store16(p, 0, k.count)
            if let base = k.baseAddress, k.count > 0 { (p + 2).copyMemory(from: base, byteCount: k.count) }
            return 2 + k.count
        }
    }

    /// Writes a leaf cell: the key, then the value inline or, when `overflow` is given, the
    /// reference to its chain.
    func encodeLeafCell(at p: UnsafeMutableRawPointer, key: BTreeKey, value: UnsafeRawBufferPointer, overflow: PageRef?) {
        let k = encodeKey(key, at: p)
        if let overflow {
            Self.store16(p, k, BTreeLayout.overflowMarker)
            p.storeBytes(of: overflow.pgno.littleEndian, toByteOffset: k + 2, as: UInt64.self)
            p.storeBytes(of: overflow.version.littleEndian, toByteOffset: k + 10, as: UInt64.self)
            p.storeBytes(of: UInt64(value.count).littleEndian, toByteOffset: k + 18, as: UInt64.self)
        } else {
            Self.store16(p, k, value.count)
            if let base = value.baseAddress, value.count > 0 { (p + k + 2).copyMemory(from: base, byteCount: value.count) }
        }
    }

    /// Writes the child reference at the start of a branch cell.
    @inline(__always)
    static func encodeChild(at p: UnsafeMutableRawPointer, _ ref: PageRef, _ count: UInt64) {
        p.storeBytes(of: ref.pgno.littleEndian, as: UInt64.self)
        p.storeBytes(of: ref.version.littleEndian, toByteOffset: 8, as: UInt64.self)
        p.storeBytes(of: count.littleEndian, toByteOffset: 16, as: UInt64.self)
    }

    /// Writes a branch cell; a nil separator writes the unused key of cell 0.
    func encodeBranchCell(at p: UnsafeMutableRawPointer, _ ref: PageRef, _ count: UInt64, separator: [UInt8]?) {
        Self.encodeChild(at: p, ref, count)
        let keyAt = p + BTreeLayout.childRefSize
        if keyKind == .u64 {
            if let separator {
                separator.withUnsafeBytes { keyAt.copyMemory(from: $0.baseAddress!, byteCount: 8) }
            } else {
                keyAt.storeBytes(of: UInt64(0), as: UInt64.self)
            }
        } else {
            let key = separator ?? []
            Self.store16(keyAt, 0, key.count)
            key.withUnsafeBytes { if let base = $0.baseAddress, $0.count > 0 { (keyAt + 2).copyMemory(from: base, byteCount: $0.count) } }
        }
    }

    /// Points cell `index` of a writable branch at a new child reference and count.
    func setChild(in page: UnsafeMutableRawPointer, pgno: PageNumber, at index: Int, _ ref: PageRef, _ count: UInt64) throws(StorageError) {
        let node = try BTreeNode(UnsafeRawPointer(page), pgno: pgno, kind: keyKind)
        let offset = try node.cellOffset(index)
        guard offset + BTreeLayout.childRefSize <= pageSize else { throw BTreeNode.badCell(pgno, index) }
        Self.encodeChild(at: page + offset, ref, count)
    }

    // MARK: - Cell lists

    /// Copies cells `from..<count` of `node` to the end of `list`.
    func appendCells(of node: BTreeNode, from start: Int = 0, to list: inout CellList) throws(StorageError) {
        guard start < node.count else { return }
        for i in start..<node.count {
            let (offset, length) = try node.cellExtent(i)
            let p = try list.insert(at: list.count, length: length)
            p.copyMemory(from: node.base + offset, byteCount: length)
        }
    }

    /// The child reference of branch cell `index` in a list.
    func child(in list: borrowing CellList, _ index: Int) -> (ref: PageRef, count: UInt64) {
        let p = list.cell(index)
        return (PageRef(pgno: UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)),
                        version: UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self))),
                UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 16, as: UInt64.self)))
    }

    /// The key of cell `index` in a list, without its length (8 bytes for u64 trees).
    func key(in list: borrowing CellList, _ index: Int, level: Int) -> UnsafeRawBufferPointer {
        let p = UnsafeRawPointer(list.cell(index)) + (level == 0 ? 0 : BTreeLayout.childRefSize)
        if keyKind == .u64 { return UnsafeRawBufferPointer(start: p, count: 8) }
        return UnsafeRawBufferPointer(start: p + 2, count: Int(UInt16(littleEndian: p.loadUnaligned(as: UInt16.self))))
    }

    /// Inserts a branch cell for `ref` with `separator` at `index` of a list.
    func insertBranchCell(_ list: inout CellList, at index: Int, _ ref: PageRef, _ count: UInt64, separator: [UInt8]) throws(StorageError) {
        let p = try list.insert(at: index, length: branchCellSize(separatorCount: separator.count))
        encodeBranchCell(at: p, ref, count, separator: separator)
    }

    /// Replaces branch cell `index` of a list by one for `ref` with `separator`.
    func replaceBranchCell(_ list: inout CellList, at index: Int, _ ref: PageRef, _ count: UInt64, separator: [UInt8]) throws(StorageError) {
        let p = try list.replace(index, length: branchCellSize(separatorCount: separator.count))
        encodeBranchCell(at: p, ref, count, separator: separator)
    }

    // MARK: - Laying cells out into pages

    /// The shortest key s with `left` < s <= `right` (`left` < `right`): a leaf separator that
    /// keeps branch pages small. For u64 trees, `right` itself.
    func separator(between left: UnsafeRawBufferPointer, and right: UnsafeRawBufferPointer) -> [UInt8] {
        if keyKind == .u64 { return Array(right) }
        var d = 0
        while d < left.count && d < right.count && left[d] == right[d] { d += 1 }
        return Array(right[0..<Swift.min(d + 1, right.count)])
    }

    /// Lays the cells of `list` out as one node of `level`, or two when they do not fit one page,
    /// in pages taken from `reuse` when this transaction may write them (the others are freed)
    /// and freshly allocated otherwise. The cells are already copied out of those pages.
    /// - Returns: the first page and, after a split, the second with its separator; `underflow`
    ///   when a single page falls under the minimum fill.
    func emit(_ list: borrowing CellList, level: Int, reuse first: PageRef, _ second: PageRef? = nil,
              bias: SplitBias) throws(StorageError) -> NodeOutcome {
        let n = list.count
        guard n > 0 else { throw BTreeNode.fault(first.pgno, "a merge found no cells in two sibling pages") }
        // A branch page's first cell loses its key (it moves up as the separator), which for
        // byte keys shortens the cell.
        let isU64 = keyKind == .u64
        func stripped(_ k: Int) -> Int { level > 0 && !isU64 ? key(in: list, k, level: level).count : 0 }
        var total = 0
        for c in list.cells { total += c.length + 2 }

        var cut = n
        if total - stripped(0) > BTreeLayout.capacity {
            let minFill = BTreeLayout.minFill(level: level)
            var best = -1
            var bestScore = Int.max
            var prefix = 0
            for s in 1..<n {
                prefix += list.cells[s - 1].length + 2
                let left = prefix - stripped(0)
                let right = total - prefix - stripped(s)
                guard left >= minFill, right >= minFill, left <= BTreeLayout.capacity, right <= BTreeLayout.capacity else { continue }
                let score: Int
                switch bias {
                case .balanced: score = abs(left - right)
                case .packLeft: score = -left
                case .packRight: score = left
                }
                if score < bestScore { bestScore = score; best = s }
            }
            guard best > 0 else {
                throw .internal("B+tree: no split point for \(n) cells of \(total) bytes at level \(level)")
            }
            cut = best
        }

        var pool = reusablePages(second.map { [first, $0] } ?? [first])
        // An append's split: later appends leave the full left half alone, so it goes to a new
        // page, and the right half, which they rewrite, keeps the page of the node (which may
        // lie in the commit's slot area, docs/FORMAT.md "Slot areas").
        let apart = bias == .packLeft && cut < n && pool.count == 1
        let (leftPgno, leftPage) = apart ? try store.allocate() : try takePage(from: &pool, replacing: first)
        let leftCount = writeNode(list, 0..<cut, level: level, into: leftPage)
        debugCheckNode(leftPage, pgno: leftPgno)
        var outcome = NodeOutcome(ref: freshRef(leftPgno), count: leftCount, sibling: nil, underflow: false)
        if cut < n {
            let (rightPgno, rightPage) = try takePage(from: &pool, replacing: apart ? first : second)
            let rightCount = writeNode(list, cut..<n, level: level, into: rightPage)
            debugCheckNode(rightPage, pgno: rightPgno)
            outcome.sibling = SplitSibling(ref: freshRef(rightPgno), count: rightCount,
                                           separator: separator(in: list, before: cut, level: level))
        } else {
            outcome.underflow = Self.usedBytes(leftPage) < BTreeLayout.minFill(level: level)
        }
        for pgno in pool { store.free(pgno) }
        return outcome
    }

    /// The pages of `refs` that this transaction may write again, in order, for laying cells
    /// out into; the committed ones are freed (their contents go to fresh copies).
    func reusablePages(_ refs: [PageRef]) -> [PageNumber] {
        var pool: [PageNumber] = []
        for ref in refs {
            if store.isWritable(ref.pgno) { pool.append(ref.pgno) } else { store.free(ref.pgno) }
        }
        return pool
    }

    /// The first page of `pool`, or a fresh one when it is empty. Pages left in the pool after
    /// the last take are the caller's to free.
    /// `replacing`: the committed page whose contents the new page takes over, if any (the
    /// store may place the page by it, `PageStore.allocate(replacing:)`).
    func takePage(from pool: inout [PageNumber], replacing old: PageRef? = nil) throws(StorageError) -> (PageNumber, UnsafeMutableRawPointer) {
        if pool.isEmpty { return try store.allocate(replacing: old) }
        let pgno = pool.removeFirst()
        return (pgno, store.writablePage(pgno))
    }

    /// The separator a parent holds for a page whose cells start at cell `cut` of `list`: for
    /// a leaf the shortest key between the cells either side of the cut, for a branch the
    /// key of its first cell (which moves up).
    func separator(in list: borrowing CellList, before cut: Int, level: Int) -> [UInt8] {
        level == 0
            ? separator(between: key(in: list, cut - 1, level: 0), and: key(in: list, cut, level: 0))
            : Array(key(in: list, cut, level: level))
    }

    /// Formats `page` as a node holding `cells` of `list`; returns its subtree count.
    func writeNode(_ list: borrowing CellList, _ cells: Range<Int>, level: Int, into page: UnsafeMutableRawPointer) -> UInt64 {
        initNode(page, level: level)
        var top = pageSize
        var subtree: UInt64 = 0
        for (slot, k) in cells.enumerated() {
            let source = list.cell(k)
            if level > 0 {
                subtree &+= UInt64(littleEndian: source.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
            }
            if level > 0 && slot == 0 {
                // The first child's key is not used: write the cell without it.
                let length = branchCellSize(separatorCount: 0)
                top -= length
                (page + top).copyMemory(from: source, byteCount: BTreeLayout.childRefSize)
                if keyKind == .u64 {
                    (page + top).storeBytes(of: UInt64(0), toByteOffset: BTreeLayout.childRefSize, as: UInt64.self)
                } else {
                    Self.store16(page, top + BTreeLayout.childRefSize, 0)
                }
            } else {
                let length = list.cells[k].length
                top -= length
                (page + top).copyMemory(from: source, byteCount: length)
            }
            Self.store16(page, BTreeLayout.slotsOffset + 2 * slot, top)
        }
        Self.store16(page, PageHeader.countOffset, cells.count)
        Self.store16(page, BTreeLayout.cellStartOffset, top)
        return level == 0 ? UInt64(cells.count) : subtree
    }
}
