// Copy-on-write B+trees over a PageStore: ordered maps from UInt64 or byte-string keys to byte
// values, with subtree counts in branch pages so that positional access and rank cost O(log n).
// This file holds the type, the page decoding every operation shares and the point lookups;
// insertion, removal, scans, large values and the invariant check live in the BTree+*.swift files.
// docs/FORMAT-btree.md is the byte-by-byte reference for the pages read and written here.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How a tree's keys are encoded and ordered.
public enum BTreeKeyKind: UInt8, Sendable {
    /// 64-bit unsigned keys in numeric order (object keys, page numbers, versions).
    case u64 = 0
    /// Byte strings of at most `maxKeyLength` bytes in lexicographic order (bytewise, a prefix
    /// before its extensions): the encoded value + object key of a secondary index.
    case bytes = 1
}

/// An ordered map from keys to byte values, stored as a copy-on-write B+tree in a `PageStore`.
///
/// The tree is a value naming a root; the pages belong to the store. Mutating calls edit pages
/// the current transaction allocated and copy every other page they touch, so a reader holding
/// an older `root` keeps seeing the old contents for as long as the store keeps its pages.
/// Branch pages record each child's subtree count, so `count`, `entry(at:)` and `rank(of:)`
/// need no scan. Values longer than a leaf can hold comfortably live in chains of overflow
/// pages.
///
/// Errors: a page that does not decode (bad type, level, offset or length, a checksum the store
/// rejects, a reference whose version does not match the page) throws `.corrupt` naming the
/// page. If a mutating call throws, the tree and the write transaction are in an unspecified
/// state and the transaction must be rolled back, as with LMDB's `MDB_BAD_TXN`.
///
/// Reads never allocate for inline values: keys and values are handed to closures as buffers
/// pointing into the pages, valid only during the call.
public struct BTree<Store: PageStore> {
    /// Where the pages live.
    public let store: Store
    /// The key encoding every page of this tree uses.
    public let keyKind: BTreeKeyKind
    /// The root page and entry count, for the owner to record at commit.
    public internal(set) var root: TreeRoot
    /// Whether a full leaf in the middle of the tree shares its entries with a neighbour
    /// instead of splitting in half (`shareInsert`), which keeps randomly filled trees fuller.
    /// An owner that accounts for the tree's pages while it edits it (the free-space tree)
    /// turns it off, so that a put changes only the pages on its own path.
    public var sharesSplits = true

    /// Opens the tree rooted at `root` (`TreeRoot.empty` for a new tree). Nothing is read until
    /// the first operation.
    /// - Complexity: O(1)
    public init(store: Store, root: TreeRoot, keyKind: BTreeKeyKind) {
        self.store = store
        self.root = root
        self.keyKind = keyKind
    }

    /// Opens the tree rooted at `root` with the key kind its root page records, for a reader
    /// that holds a root without knowing what keys the tree has (verify's page walks).
    /// - Throws: `.corrupt` when the root page is not a B+tree page.
    public init(store: Store, root: TreeRoot) throws(StorageError) {
        var kind = BTreeKeyKind.u64
        if !root.page.isNone {
            let base = try store.page(root.page.pgno)
            guard let stored = BTreeKeyKind(rawValue: base.load(fromByteOffset: BTreeLayout.keyKindOffset, as: UInt8.self)) else {
                throw BTreeNode.malformedHeader(base, pgno: root.page.pgno, kind: .u64)
            }
            kind = stored
        }
        self.init(store: store, root: root, keyKind: kind)
    }

    /// The number of entries.
    /// - Complexity: O(1)
    @inlinable
    public var count: UInt64 { root.count }

    /// Whether the tree has no entries.
    /// - Complexity: O(1)
    @inlinable
    public var isEmpty: Bool { root.page.isNone }

    /// Whether the tree is one leaf (or empty): its root page is at level 0.
    /// - Throws: `.corrupt` when the root page cannot be read.
    /// - Complexity: O(1)
    public func isOneLeaf() throws(StorageError) -> Bool {
        if root.page.isNone { return true }
        return try store.page(root.page.pgno).load(fromByteOffset: PageHeader.flagsOffset, as: UInt8.self) == 0
    }

    /// The longest byte-string key a tree accepts.
    @inlinable
    public static var maxKeyLength: Int { 1024 }

    /// The longest value a tree accepts (4 GiB - 1).
    @inlinable
    public static var maxValueLength: Int { maxStoredValueLength }
}

/// A tree is a value naming a root; it may cross threads when its store may.
extension BTree: Sendable where Store: Sendable {}

// MARK: - Page layout

/// Offsets and limits of branch and leaf pages (see docs/FORMAT-btree.md).
///
///     offset size field
///     0      16   PageHeader (type branch/leaf, flags = level, count = number of cells)
///     16     2    cellStart: offset of the lowest cell byte; cells fill [cellStart, pageSize)
///     18     2    garbage: bytes in [cellStart, pageSize) that belong to no cell
///     20     1    key kind (BTreeKeyKind)
///     21     3    zero
///     24     2n   slots: the offset of each cell, in key order
///
/// Leaf cell:   key, u16 value length, value bytes; length 0xFFFF marks an overflow value,
///              followed by the first overflow page (u64 pgno, u64 version) and a u64 length.
/// Branch cell: u64 child pgno, u64 child version, u64 subtree count, key. The key of cell 0
///              is not used (zero for u64 trees, empty for byte trees): child i holds the keys
///              k with key(i) <= k < key(i + 1).
/// Key:         u64 trees: 8 bytes little-endian; byte trees: u16 length, then the bytes.
@usableFromInline
enum BTreeLayout {
    @inlinable static var cellStartOffset: Int { 16 }
    @inlinable static var garbageOffset: Int { 18 }
    @inlinable static var keyKindOffset: Int { 20 }
    @inlinable static var slotsOffset: Int { 24 }
    /// Bytes available to slots and cells.
    @inlinable static var capacity: Int { pageSize - slotsOffset }
    /// The child reference at the start of a branch cell: pgno, version, subtree count.
    @inlinable static var childRefSize: Int { 24 }
    @inlinable static var overflowMarker: Int { 0xFFFF }
    /// pgno, version and total length of an overflow value, after the marker.
    @inlinable static var overflowRefSize: Int { 24 }
    /// The largest leaf cell that keeps its value inline: four such cells and their slots fill
    /// a page exactly, so every leaf holds at least four inline entries (three when keys are
    /// near `maxKeyLength`).
    @inlinable static var maxInlineCell: Int { capacity / 4 - 2 }
    /// A non-root leaf holds at least this many bytes of slots and cells (25%).
    @inlinable static var leafMinFill: Int { capacity / 4 }
    /// A non-root branch holds at least this many bytes (16%). Lower than leaves because a
    /// branch split moves the middle key up: with keys of up to 1024 bytes, 25% could not be
    /// guaranteed on both sides of every split, one sixth always can (see `split`).
    @inlinable static var branchMinFill: Int { capacity / 6 }
    /// Levels are stored in a byte; deeper trees cannot exist (each branch has two children).
    @inlinable static var maxLevels: Int { 64 }

    // Overflow pages.
    @inlinable static var overflowNextOffset: Int { 16 }
    @inlinable static var overflowDataOffset: Int { 32 }
    @inlinable static var overflowCapacity: Int { pageSize - overflowDataOffset }

    @inlinable
    static func minFill(level: Int) -> Int { level == 0 ? leafMinFill : branchMinFill }
}

/// An entry of a UInt64-keyed tree handed out in place: `value` points into a page and is
/// valid only during the call that hands it out.
public struct BTreeEntry {
    public let key: UInt64
    public let value: UnsafeRawBufferPointer

    @inlinable
    init(key: UInt64, value: UnsafeRawBufferPointer) {
        self.key = key
        self.value = value
    }
}

/// A search key, borrowed from the caller for the duration of one operation.
@usableFromInline
enum BTreeKey {
    case u64(UInt64)
    case bytes(UnsafeRawBufferPointer)
}

/// A leaf value as stored: inline bytes in the page, or a chain of overflow pages.
@usableFromInline
enum BTreeValue {
    case inline(UnsafeRawBufferPointer)
    case overflow(PageRef, length: UInt64)
}

/// Lexicographic order of byte strings: memcmp over the common prefix, then the shorter first.
@inlinable
func compareKeyBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    let n = Swift.min(a.count, b.count)
    if n > 0, let pa = a.baseAddress, let pb = b.baseAddress {
        let c = memcmp(pa, pb, n)
        if c != 0 { return Int(c) }
    }
    return a.count &- b.count
}

/// Calls `body` with the bytes of an array, keeping the typed error (Array's own
/// `withUnsafeBytes` only rethrows `any Error`).
@inlinable
func withBytes<R>(_ array: [UInt8], _ body: (UnsafeRawBufferPointer) throws(StorageError) -> R) throws(StorageError) -> R {
    try array.withUnsafeBytes { bytes in Result { () throws(StorageError) -> R in try body(bytes) } }.get()
}

// MARK: - Decoding one page

/// A decoded view of a branch or leaf page. Construction checks the header; every accessor
/// checks the offsets and lengths it reads, so a damaged page throws `.corrupt`, never traps.
@usableFromInline
struct BTreeNode {
    @usableFromInline let base: UnsafeRawPointer
    @usableFromInline let pgno: PageNumber
    /// Number of cells (entries in a leaf, children in a branch).
    @usableFromInline let count: Int
    /// 0 for a leaf.
    @usableFromInline let level: Int
    @usableFromInline let cellStart: Int
    @usableFromInline let isU64: Bool

    @inlinable @inline(__always)
    init(_ base: UnsafeRawPointer, pgno: PageNumber, kind: BTreeKeyKind) throws(StorageError) {
        let type = PageHeader.type(base)
        let level = Int(base.load(fromByteOffset: PageHeader.flagsOffset, as: UInt8.self))
        let count = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: PageHeader.countOffset, as: UInt16.self)))
        let cellStart = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: BTreeLayout.cellStartOffset, as: UInt16.self)))
        let storedKind = base.load(fromByteOffset: BTreeLayout.keyKindOffset, as: UInt8.self)
        let expectedType = level == 0 ? PageType.leaf.rawValue : PageType.branch.rawValue
        // A leaf may be empty only for a moment inside a removal, before it is merged away;
        // verify() rejects one on disk.
        guard type == expectedType, level < BTreeLayout.maxLevels, storedKind == kind.rawValue, count > 0 || level == 0,
              cellStart >= BTreeLayout.slotsOffset &+ 2 &* count, cellStart <= pageSize
        else { throw BTreeNode.malformedHeader(base, pgno: pgno, kind: kind) }
        self.base = base
        self.pgno = pgno
        self.count = count
        self.level = level
        self.cellStart = cellStart
        self.isU64 = kind == .u64
    }

    @inlinable var isLeaf: Bool { level == 0 }

    /// Where the key starts inside a cell.
    @inlinable var keyOffsetInCell: Int { level == 0 ? 0 : BTreeLayout.childRefSize }

    /// Bytes in the cell area that belong to no cell.
    @inlinable
    func garbage() throws(StorageError) -> Int {
        let g = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: BTreeLayout.garbageOffset, as: UInt16.self)))
        guard g <= pageSize &- cellStart else { throw BTreeNode.fault(pgno, "garbage \(g) exceeds the cell area") }
        return g
    }

    /// Bytes used by slots and live cells; what the fill rules count.
    @inlinable
    func usedBytes() throws(StorageError) -> Int {
        2 &* count &+ (pageSize &- cellStart) &- (try garbage())
    }

    /// The offset of cell `i` (`0 <= i < count`), checked to lie in the cell area.
    @inlinable
    func cellOffset(_ i: Int) throws(StorageError) -> Int {
        let off = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: BTreeLayout.slotsOffset &+ 2 &* i, as: UInt16.self)))
        guard off >= cellStart, off < pageSize else { throw BTreeNode.badSlot(pgno, i, off, cellStart) }
        return off
    }

    @inlinable
    func u64Key(_ i: Int) throws(StorageError) -> UInt64 {
        let off = try cellOffset(i) &+ keyOffsetInCell
        guard off &+ 8 <= pageSize else { throw BTreeNode.badCell(pgno, i) }
        return UInt64(littleEndian: base.loadUnaligned(fromByteOffset: off, as: UInt64.self))
    }

    @inlinable
    func bytesKey(_ i: Int) throws(StorageError) -> UnsafeRawBufferPointer {
        let off = try cellOffset(i) &+ keyOffsetInCell
        guard off &+ 2 <= pageSize else { throw BTreeNode.badCell(pgno, i) }
        let len = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: off, as: UInt16.self)))
        guard off &+ 2 &+ len <= pageSize else { throw BTreeNode.badCell(pgno, i) }
        return UnsafeRawBufferPointer(start: base + (off &+ 2), count: len)
    }

    /// The key of cell `i` as stored: 8 little-endian bytes for u64 trees.
    @inlinable
    func rawKey(_ i: Int) throws(StorageError) -> UnsafeRawBufferPointer {
        if isU64 {
            let off = try cellOffset(i) &+ keyOffsetInCell
            guard off &+ 8 <= pageSize else { throw BTreeNode.badCell(pgno, i) }
            return UnsafeRawBufferPointer(start: base + off, count: 8)
        }
        return try bytesKey(i)
    }

    /// Compares the key of cell `i` with `key`: negative, zero or positive.
    @inlinable
    func compare(_ i: Int, _ key: BTreeKey) throws(StorageError) -> Int {
        switch key {
        case .u64(let k):
            let stored = try u64Key(i)
            return stored < k ? -1 : (stored == k ? 0 : 1)
        case .bytes(let k):
            return compareKeyBytes(try bytesKey(i), k)
        }
    }

    /// The first index in `from..<count` whose key is >= `key` (`orEqual`) or > `key`.
    @inlinable
    func partition(_ key: BTreeKey, from: Int, orEqual: Bool) throws(StorageError) -> Int {
        var lo = from
        var hi = count
        switch key {
        case .u64(let k):
            // Keys added in ascending order land past the last one at every level: one
            // comparison settles it instead of a search.
            if lo < hi, try u64Key(hi &- 1) < k { return hi }
            while lo < hi {
                let mid = (lo &+ hi) &>> 1
                let stored = try u64Key(mid)
                if stored < k || (!orEqual && stored == k) { lo = mid &+ 1 } else { hi = mid }
            }
        case .bytes(let k):
            if lo < hi, compareKeyBytes(try bytesKey(hi &- 1), k) < 0 { return hi }
            while lo < hi {
                let mid = (lo &+ hi) &>> 1
                let c = compareKeyBytes(try bytesKey(mid), k)
                if c < 0 || (!orEqual && c == 0) { lo = mid &+ 1 } else { hi = mid }
            }
        }
        return lo
    }

    /// Leaf: the first index whose key is >= `key`, and whether that key equals `key`.
    @inlinable
    func lowerBound(_ key: BTreeKey) throws(StorageError) -> (index: Int, found: Bool) {
        let i = try partition(key, from: 0, orEqual: true)
        if i == count { return (i, false) }
        return (i, try compare(i, key) == 0)
    }

    /// Branch: the child whose range holds `key` (the last i with key(i) <= key; key(0) is -inf).
    @inlinable
    func childIndex(_ key: BTreeKey) throws(StorageError) -> Int {
        try partition(key, from: 1, orEqual: false) &- 1
    }

    /// Branch: the reference and subtree count of child `i`.
    @inlinable
    func child(_ i: Int) throws(StorageError) -> (ref: PageRef, count: UInt64) {
        let off = try cellOffset(i)
        guard off &+ BTreeLayout.childRefSize <= pageSize else { throw BTreeNode.badCell(pgno, i) }
        let pgno = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: off, as: UInt64.self))
        let version = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: off &+ 8, as: UInt64.self))
        let count = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: off &+ 16, as: UInt64.self))
        return (PageRef(pgno: pgno, version: version), count)
    }

    /// Leaf: the value of cell `i`.
    @inlinable
    func value(_ i: Int) throws(StorageError) -> BTreeValue {
        var p = try cellOffset(i)
        if isU64 {
            p &+= 8
        } else {
            guard p &+ 2 <= pageSize else { throw BTreeNode.badCell(pgno, i) }
            p &+= 2 &+ Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: p, as: UInt16.self)))
        }
        guard p &+ 2 <= pageSize else { throw BTreeNode.badCell(pgno, i) }
        let length = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: p, as: UInt16.self)))
        p &+= 2
        if length == BTreeLayout.overflowMarker {
            guard p &+ BTreeLayout.overflowRefSize <= pageSize else { throw BTreeNode.badCell(pgno, i) }
            let ref = PageRef(pgno: UInt64(littleEndian: base.loadUnaligned(fromByteOffset: p, as: UInt64.self)),
                              version: UInt64(littleEndian: base.loadUnaligned(fromByteOffset: p &+ 8, as: UInt64.self)))
            let total = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: p &+ 16, as: UInt64.self))
            return .overflow(ref, length: total)
        }
        guard p &+ length <= pageSize else { throw BTreeNode.badCell(pgno, i) }
        return .inline(UnsafeRawBufferPointer(start: base + p, count: length))
    }

    /// The offset and length of cell `i`, checked to end inside the page.
    @inlinable
    func cellExtent(_ i: Int) throws(StorageError) -> (offset: Int, length: Int) {
        let off = try cellOffset(i)
        var end = off
        if level > 0 { end &+= BTreeLayout.childRefSize }
        if isU64 {
            end &+= 8
        } else {
            guard end &+ 2 <= pageSize else { throw BTreeNode.badCell(pgno, i) }
            end &+= 2 &+ Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: end, as: UInt16.self)))
        }
        if level == 0 {
            guard end &+ 2 <= pageSize else { throw BTreeNode.badCell(pgno, i) }
            let length = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: end, as: UInt16.self)))
            end &+= 2 &+ (length == BTreeLayout.overflowMarker ? BTreeLayout.overflowRefSize : length)
        }
        guard end <= pageSize else { throw BTreeNode.badCell(pgno, i) }
        return (off, end &- off)
    }

    // Errors are built out of line so that the checks above stay small.

    @usableFromInline @inline(never)
    static func fault(_ pgno: PageNumber, _ what: String) -> StorageError {
        .corrupt("B+tree page \(pgno): \(what)")
    }

    @usableFromInline @inline(never)
    static func badSlot(_ pgno: PageNumber, _ i: Int, _ off: Int, _ cellStart: Int) -> StorageError {
        fault(pgno, "slot \(i) points at \(off), outside the cell area [\(cellStart), \(pageSize))")
    }

    @usableFromInline @inline(never)
    static func badCell(_ pgno: PageNumber, _ i: Int) -> StorageError {
        fault(pgno, "cell \(i) runs past the end of the page")
    }

    @usableFromInline @inline(never)
    static func malformedHeader(_ base: UnsafeRawPointer, pgno: PageNumber, kind: BTreeKeyKind) -> StorageError {
        let type = PageHeader.type(base)
        let level = Int(base.load(fromByteOffset: PageHeader.flagsOffset, as: UInt8.self))
        let count = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: PageHeader.countOffset, as: UInt16.self)))
        let cellStart = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: BTreeLayout.cellStartOffset, as: UInt16.self)))
        let storedKind = base.load(fromByteOffset: BTreeLayout.keyKindOffset, as: UInt8.self)
        if type != PageType.leaf.rawValue && type != PageType.branch.rawValue {
            return fault(pgno, "page type \(type) is neither branch nor leaf")
        }
        if (type == PageType.leaf.rawValue) != (level == 0) {
            return fault(pgno, "page type \(type) does not match level \(level)")
        }
        if level >= BTreeLayout.maxLevels { return fault(pgno, "level \(level) is too deep") }
        if storedKind != kind.rawValue { return fault(pgno, "key kind \(storedKind), the tree expects \(kind.rawValue)") }
        if count == 0 { return fault(pgno, "a branch without children") }
        return fault(pgno, "cell area starts at \(cellStart), which does not fit \(count) slots")
    }
}

// MARK: - Loading pages

extension BTree {
    /// The page `ref` names, decoded and checked: its level must be `expectedLevel` (or anything
    /// for -1, the root), and a committed page must carry the version its reference records, so a
    /// stale reference to a reused page is caught. Pages written by this transaction are not
    /// sealed yet and are recognised by `ref.version == store.version`.
    @inlinable @inline(__always)
    func node(_ ref: PageRef, level expectedLevel: Int) throws(StorageError) -> BTreeNode {
        let base = try store.page(ref.pgno)
        if ref.version != store.version, PageHeader.version(base) != ref.version {
            throw BTreeNode.fault(ref.pgno, "written at version \(PageHeader.version(base)), referenced as version \(ref.version)")
        }
        let node = try BTreeNode(base, pgno: ref.pgno, kind: keyKind)
        if expectedLevel >= 0, node.level != expectedLevel {
            throw BTreeNode.fault(ref.pgno, "level \(node.level), its parent expects \(expectedLevel)")
        }
        return node
    }

    /// The leaf whose range holds `key`. The tree must not be empty.
    @inlinable
    func leaf(for key: BTreeKey) throws(StorageError) -> BTreeNode {
        var node = try self.node(root.page, level: -1)
        while node.level > 0 {
            let (ref, _) = try node.child(try node.childIndex(key))
            node = try self.node(ref, level: node.level &- 1)
        }
        return node
    }

    @inlinable
    func requireKind(_ kind: BTreeKeyKind) throws(StorageError) {
        guard keyKind == kind else { throw wrongKind(kind) }
    }

    @usableFromInline @inline(never)
    func wrongKind(_ used: BTreeKeyKind) -> StorageError {
        .invalidArgument("a \(used == .u64 ? "UInt64" : "byte-string") key used on a tree keyed by \(keyKind == .u64 ? "UInt64" : "byte strings")")
    }

    /// Calls `body` with the value of cell `i` of `leaf`: in place when inline, assembled from
    /// its overflow pages otherwise.
    @inlinable
    func withValue<R>(of leaf: BTreeNode, _ i: Int, _ body: (UnsafeRawBufferPointer) throws(StorageError) -> R) throws(StorageError) -> R {
        var buffer: [UInt8] = []
        return try withValue(of: leaf, i, spill: &buffer, body)
    }

    /// `withValue(of:_:_:)` assembling an overflow value into `spill`, a buffer a scan reuses
    /// from entry to entry.
    @inlinable
    func withValue<R>(of leaf: BTreeNode, _ i: Int, spill: inout [UInt8],
                      _ body: (UnsafeRawBufferPointer) throws(StorageError) -> R) throws(StorageError) -> R {
        switch try leaf.value(i) {
        case .inline(let bytes):
            return try body(bytes)
        case .overflow(let ref, let length):
            try readOverflow(ref, length: length, into: &spill)
            return try withBytes(spill, body)
        }
    }

    @inlinable
    func withValue<R>(_ key: BTreeKey, _ body: (UnsafeRawBufferPointer) throws(StorageError) -> R) throws(StorageError) -> R? {
        if root.page.isNone { return nil }
        let leaf = try leaf(for: key)
        let (i, found) = try leaf.lowerBound(key)
        guard found else { return nil }
        return try withValue(of: leaf, i, body)
    }
}

// MARK: - Point lookups

extension BTree {
    /// Calls `body` with the value stored under `key`, in place (the buffer is valid only during
    /// the call; values in overflow pages are first assembled into a temporary buffer).
    /// - Returns: what `body` returned, or nil if `key` is absent.
    /// - Throws: `.invalidArgument` on a byte-keyed tree; `.corrupt`.
    /// - Complexity: O(log n), plus O(m) for a value of m bytes in overflow pages.
    @inlinable
    public func withValue<R>(_ key: UInt64, _ body: (UnsafeRawBufferPointer) throws(StorageError) -> R) throws(StorageError) -> R? {
        try requireKind(.u64)
        return try withValue(.u64(key), body)
    }

    /// A copy of the value stored under `key`, or nil.
    /// - Complexity: O(log n + m) for a value of m bytes.
    @inlinable
    public func get(_ key: UInt64) throws(StorageError) -> [UInt8]? {
        try withValue(key) { bytes throws(StorageError) in Array(bytes) }
    }

    /// Calls `body` with the entry of the greatest key <= `key` and (unless `next` is false) the
    /// entry of the least key > `key`, each nil when there is none: the neighbourhood a map of ranges keyed by their
    /// first key reads to find, extend or split the range holding `key`. Values are handed in
    /// place and are valid only during the call.
    /// - Throws: `.invalidArgument` on a byte-keyed tree, or when a value it would hand out
    ///   lives in overflow pages (this is for trees of small values); `.corrupt`.
    /// - Complexity: O(log n); one descent when both entries are in the leaf holding `key`.
    @inlinable
    public func withNeighbours<R>(of key: UInt64, next wantNext: Bool = true,
                                  _ body: (_ floor: BTreeEntry?, _ next: BTreeEntry?) throws(StorageError) -> R) throws(StorageError) -> R {
        try requireKind(.u64)
        if root.page.isNone { return try body(nil, nil) }
        // The descent notes whether it kept to the first (last) child all the way: only then
        // is there no leaf to the left (right) to look in.
        var leaf = try self.node(root.page, level: -1)
        var leftmost = true
        var rightmost = true
        while leaf.level > 0 {
            let i = try leaf.childIndex(.u64(key))
            if i != 0 { leftmost = false }
            if i != leaf.count &- 1 { rightmost = false }
            leaf = try self.node(try leaf.child(i).ref, level: leaf.level &- 1)
        }
        let after = try leaf.partition(.u64(key), from: 0, orEqual: false)
        var floor: BTreeEntry?
        var next: BTreeEntry?
        if after > 0 {
            floor = try Self.inlineEntry(leaf, after &- 1)
        } else if !leftmost {
            // Deletions can leave a leaf whose first key is above its separator: the floor is
            // then the last entry of a leaf to the left.
            let c = try cursor(from: .u64(key), reverse: true)
            if let l = c.leaf { floor = try Self.inlineEntry(l, c.index) }
        }
        if wantNext && after < leaf.count {
            next = try Self.inlineEntry(leaf, after)
        } else if wantNext && !rightmost && key < UInt64.max {
            let c = try cursor(from: .u64(key &+ 1), reverse: false)
            if let l = c.leaf { next = try Self.inlineEntry(l, c.index) }
        }
        return try body(floor, next)
    }

    @inlinable
    static func inlineEntry(_ leaf: BTreeNode, _ i: Int) throws(StorageError) -> BTreeEntry {
        guard case .inline(let bytes) = try leaf.value(i) else {
            throw .invalidArgument("withNeighbours: the value under key \(try leaf.u64Key(i)) lives in overflow pages")
        }
        return BTreeEntry(key: try leaf.u64Key(i), value: bytes)
    }

    /// Whether `key` is present.
    /// - Complexity: O(log n)
    @inlinable
    public func contains(_ key: UInt64) throws(StorageError) -> Bool {
        try requireKind(.u64)
        if root.page.isNone { return false }
        return try leaf(for: .u64(key)).lowerBound(.u64(key)).found
    }

    /// Calls `body` with the value stored under the byte-string `key`, in place.
    /// - Returns: what `body` returned, or nil if `key` is absent.
    /// - Throws: `.invalidArgument` on a UInt64-keyed tree; `.corrupt`.
    /// - Complexity: O(log n · k) for a key of k bytes, plus O(m) for an overflow value.
    @inlinable
    public func withValue<R>(_ key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws(StorageError) -> R) throws(StorageError) -> R? {
        try requireKind(.bytes)
        return try withValue(.bytes(key), body)
    }

    /// A copy of the value stored under the byte-string `key`, or nil.
    /// - Complexity: O(log n · k + m)
    @inlinable
    public func get(_ key: UnsafeRawBufferPointer) throws(StorageError) -> [UInt8]? {
        try withValue(key) { bytes throws(StorageError) in Array(bytes) }
    }

    /// Calls `body` with the value stored under the byte-string `key`, in place.
    /// - Returns: what `body` returned, or nil if `key` is absent.
    @inlinable
    public func withValue<R>(_ key: [UInt8], _ body: (UnsafeRawBufferPointer) throws(StorageError) -> R) throws(StorageError) -> R? {
        try withBytes(key) { k throws(StorageError) in try withValue(k, body) }
    }

    /// A copy of the value stored under the byte-string `key`, or nil.
    /// - Complexity: O(log n · k + m)
    @inlinable
    public func get(_ key: [UInt8]) throws(StorageError) -> [UInt8]? {
        try withBytes(key) { k throws(StorageError) in try get(k) }
    }

    /// Whether the byte-string `key` is present.
    /// - Complexity: O(log n · k)
    @inlinable
    public func contains(_ key: UnsafeRawBufferPointer) throws(StorageError) -> Bool {
        try requireKind(.bytes)
        if root.page.isNone { return false }
        return try leaf(for: .bytes(key)).lowerBound(.bytes(key)).found
    }

    /// Whether the byte-string `key` is present.
    /// - Complexity: O(log n · k)
    @inlinable
    public func contains(_ key: [UInt8]) throws(StorageError) -> Bool {
        try withBytes(key) { k throws(StorageError) in try contains(k) }
    }
}
