// Tables: a B+tree of u64 keys mapping the first object key of each cluster to a reference to
// that cluster's leaf page (type 5), where the objects of the key range are stored column by
// column. This file holds the type, the reference format and the reads; edits live in
// ClusterTree+Edit.swift, scans in ClusterTree+View.swift, the checks in ClusterTree+Verify.swift.

/// The root of a table as its owner records it: the tree of cluster references and the number of
/// objects. 32 bytes on disk: the clusters' `TreeRoot` (24), then the object count (u64).
public struct TableRoot: Sendable, Hashable {
    /// The B+tree of cluster references; its count is the number of clusters.
    public var clusters: TreeRoot
    /// The number of objects in the table.
    public var objectCount: UInt64

    /// - Complexity: O(1)
    public init(clusters: TreeRoot, objectCount: UInt64) {
        self.clusters = clusters
        self.objectCount = objectCount
    }

    /// The empty table: no pages.
    public static let empty = TableRoot(clusters: .empty, objectCount: 0)
    /// Bytes of `encode(into:)`.
    public static let encodedSize = 32

    /// Writes the 32-byte form at `p`.
    /// - Complexity: O(1)
    public func encode(into p: UnsafeMutableRawPointer) {
        clusters.encode(into: p)
        p.storeBytes(of: objectCount.littleEndian, toByteOffset: 24, as: UInt64.self)
    }

    /// Reads the 32-byte form at `p` (the caller checks that 32 bytes are there).
    /// - Complexity: O(1)
    public static func decode(from p: UnsafeRawPointer) -> TableRoot {
        TableRoot(clusters: TreeRoot.decode(from: p),
                  objectCount: UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 24, as: UInt64.self)))
    }
}

/// Where a cluster is: the value stored under its first key in the table's tree.
/// 32 bytes: page number, page version, object count, zero.
@usableFromInline
struct ClusterRef {
    @usableFromInline var key: UInt64
    @usableFromInline var page: PageRef
    @usableFromInline var count: UInt64

    @usableFromInline static var encodedSize: Int { 32 }

    @inlinable
    init(key: UInt64, page: PageRef, count: UInt64) {
        self.key = key
        self.page = page
        self.count = count
    }

    @inlinable
    init(key: UInt64, _ value: UnsafeRawBufferPointer) throws(StorageError) {
        guard value.count == ClusterRef.encodedSize, let p = value.baseAddress else {
            throw .corrupt("table: the reference of the cluster at key \(key) is \(value.count) bytes, not 32")
        }
        self.key = key
        page = PageRef(pgno: UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                       version: UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        count = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        guard page.pgno != 0, count >= 1, count <= UInt64(ClusterLayout.maxObjects) else {
            throw .corrupt("table: the cluster at key \(key) names page \(page.pgno) with \(count) objects")
        }
    }

    /// Calls `body` with the 32 encoded bytes, laid out on the stack.
    @inlinable
    func withEncoded<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        var words: (UInt64, UInt64, UInt64, UInt64) = (page.pgno.littleEndian, page.version.littleEndian, count.littleEndian, 0)
        return try withUnsafeBytes(of: &words) { p throws(E) in try body(p) }
    }
}

/// An object's place in a table (see `ClusterTree.locate`).
public struct ClusterLocation {
    @usableFromInline let leaf: ClusterLeaf
    /// The cluster's reference, as the table's tree files it (for an edit at the location).
    @usableFromInline let ref: ClusterRef
    @usableFromInline let index: Int
    /// The object's key.
    public let key: UInt64

    @inlinable
    init(leaf: ClusterLeaf, ref: ClusterRef, index: Int, key: UInt64) {
        self.leaf = leaf
        self.ref = ref
        self.index = index
        self.key = key
    }
}

/// A table: objects keyed by a u64 object key, each holding one value per column, stored as
/// copy-on-write clusters of up to a page of objects, column by column.
///
/// The table is a value naming a root; the pages belong to the store. As with `BTree`, mutating
/// calls copy every committed page they change, so a reader holding an older `root` keeps seeing
/// the old contents, and if a mutating call throws the write transaction must be rolled back.
///
/// Every value of a string, binary or mixed column is stored in the cluster's heap, unless the
/// object's values would take more than a quarter of a page: then the largest go to chains of
/// overflow pages (the B+tree's format), so a page always holds several objects.
///
/// A table's columns must be narrow enough for one object to fit a page with every string in
/// its cluster (about 48 columns of the widest kinds, more of narrower ones); inserts and
/// `addColumn` refuse a schema beyond that with `.invalidArgument`.
///
/// Errors: a page that does not decode throws `.corrupt` naming it, never traps.
public struct ClusterTree<Store: PageStore> {
    /// Where the pages live.
    public let store: Store
    /// The tree of cluster references.
    @usableFromInline var index: BTree<Store>
    @usableFromInline var specs: [ColumnSpec]
    /// The tree of clusters and the object count, for the owner to record at commit.
    public internal(set) var root: TableRoot

    /// Opens the table rooted at `root` (`TableRoot.empty` for a new table) whose columns are
    /// `columns`, in the order the pages store them. Nothing is read until the first operation.
    /// - Complexity: O(c) for c columns.
    public init(store: Store, root: TableRoot, columns: [ColumnSpec]) {
        self.store = store
        self.root = root
        self.specs = columns
        self.index = BTree(store: store, root: root.clusters, keyKind: .u64)
    }

    /// The table's columns.
    /// - Complexity: O(1)
    @inlinable
    public var columns: [ColumnSpec] { specs }

    /// The number of objects.
    /// - Complexity: O(1)
    @inlinable
    public var count: UInt64 { root.objectCount }

    /// Records the index tree's new root after an edit.
    mutating func syncRoot(objectDelta: Int64 = 0) {
        root.clusters = index.root
        root.objectCount = UInt64(bitPattern: Int64(bitPattern: root.objectCount) &+ objectDelta)
    }
}

/// A table is a value naming a root; it may cross threads when its store may.
extension ClusterTree: Sendable where Store: Sendable {}

// MARK: - Finding clusters

extension ClusterTree {
    /// The cluster whose key range holds `key`: the last one whose first key is <= `key`, or the
    /// first cluster for a key below them all; nil for an empty table.
    /// - Complexity: O(log m) for m clusters.
    @inlinable
    func cluster(containing key: UInt64) throws(StorageError) -> ClusterRef? {
        if index.isEmpty { return nil }
        let floor = try index.withNeighbours(of: key, next: false) { floor, _ throws(StorageError) -> ClusterRef? in
            guard let floor else { return nil }
            return try ClusterRef(key: floor.key, floor.value)
        }
        if let floor { return floor }
        let cursor = try index.cursor(from: UInt64?.none)
        guard cursor.isValid else { return nil }
        let k = try cursor.u64Key()
        return try cursor.withValue { v throws(StorageError) in try ClusterRef(key: k, v) }
    }

    /// The page of `ref`, decoded and checked against the reference's version and count.
    /// - Complexity: O(c) for c columns.
    @inlinable
    func leaf(_ ref: ClusterRef) throws(StorageError) -> ClusterLeaf {
        let base = try store.page(ref.page.pgno)
        if ref.page.version != store.version, PageHeader.version(base) != ref.page.version {
            throw ClusterLeaf.fault(ref.page.pgno, "written at version \(PageHeader.version(base)), referenced as version \(ref.page.version)")
        }
        let leaf = try ClusterLeaf(base, pgno: ref.page.pgno, specs: specs)
        guard UInt64(leaf.count) == ref.count else {
            throw ClusterLeaf.fault(ref.page.pgno, "holds \(leaf.count) objects, its reference counts \(ref.count)")
        }
        guard leaf.key(0) == ref.key else {
            throw ClusterLeaf.fault(ref.page.pgno, "first key \(leaf.key(0)) is filed under \(ref.key)")
        }
        return leaf
    }

    @inlinable
    func checkColumn(_ column: Int) throws(StorageError) {
        guard column >= 0, column < specs.count else {
            throw .invalidArgument("column \(column) does not exist: the table has \(specs.count) columns")
        }
    }

    @usableFromInline @inline(never)
    func missing(_ key: UInt64) -> StorageError {
        .invalidArgument("object key \(key) is not in the table")
    }

    /// A stored cell as a value, reading an overflow chain into a new array.
    @inlinable
    func materialize(_ cell: StoredCell) throws(StorageError) -> CellValue {
        switch cell {
        case .value(let v): return v
        case .overflow(let ref, let length):
            var buffer: [UInt8] = []
            try index.readOverflow(ref, length: length, into: &buffer)
            return .bytes(buffer)
        }
    }

    /// Column `column` of object `i` of `leaf`, the default if the page predates the column.
    @inlinable
    func value(_ leaf: ClusterLeaf, _ column: Int, _ i: Int) throws(StorageError) -> CellValue {
        if column >= leaf.columnCount { return specs[column].defaultValue }
        let v = try materialize(try leaf.cell(column, i, kind: specs[column].kind))
        if case .null = v, !specs[column].nullable {
            throw ClusterLeaf.fault(leaf.pgno, "object \(leaf.key(i)) is null in non-nullable column \(column)")
        }
        return v
    }
}

// MARK: - Reads

extension ClusterTree {
    /// Whether `key` is in the table.
    /// - Complexity: O(log n)
    @inlinable
    public func contains(_ key: UInt64) throws(StorageError) -> Bool {
        try locate(key) != nil
    }

    /// The value of column `column` of object `key` (large strings are copied out of their
    /// overflow pages; prefer `withBytes` to read strings in place).
    /// - Throws: `.invalidArgument` for a missing key or column; `.corrupt`.
    /// - Complexity: O(log n), plus O(m) for a value of m bytes.
    @inlinable
    public func get(_ key: UInt64, column: Int) throws(StorageError) -> CellValue {
        try checkColumn(column)
        guard let at = try locate(key) else { throw missing(key) }
        return try value(at.leaf, column, at.index)
    }

    /// Where object `key` is, or nil if it is absent: for reading several of its columns with
    /// one descent. A location stays valid while the table is not edited (the owner drops it
    /// at every edit).
    /// - Complexity: O(log n)
    @inlinable
    public func locate(_ key: UInt64) throws(StorageError) -> ClusterLocation? {
        guard let ref = try cluster(containing: key) else { return nil }
        let leaf = try self.leaf(ref)
        let (i, found) = leaf.lowerBound(key)
        return found ? ClusterLocation(leaf: leaf, ref: ref, index: i, key: key) : nil
    }

    /// `locate(key)`, looked for first in the cluster of `near` (a location this table gave
    /// and has not been edited since): a key between that cluster's first and last keys can
    /// be in no other cluster, so the objects of one cluster, read in turn, are found without
    /// descending the table each time.
    /// - Complexity: O(1) for the next key of a cluster of consecutive keys, O(log c) for
    ///   another key of the cluster, else O(log n).
    @inlinable
    public func locate(_ key: UInt64, near: ClusterLocation?) throws(StorageError) -> ClusterLocation? {
        if let near, key >= near.leaf.key(0), key <= near.leaf.key(near.leaf.count &- 1) {
            let (i, found) = near.leaf.lowerBound(key)
            return found ? ClusterLocation(leaf: near.leaf, ref: near.ref, index: i, key: key) : nil
        }
        return try locate(key)
    }

    /// Starts loading the cache lines of every column of the object at `location`: for a
    /// caller about to read several of its properties (a hint; it changes no result).
    @inlinable
    public func prefetchRow(_ location: ClusterLocation) {
        location.leaf.prefetchRow(location.index, specs: specs)
    }

    /// The value of column `column` of the object at `location`.
    /// - Complexity: O(1), plus O(m) for a value of m bytes in overflow pages.
    @inlinable
    public func get(_ location: ClusterLocation, column: Int) throws(StorageError) -> CellValue {
        try checkColumn(column)
        return try value(location.leaf, column, location.index)
    }

    /// Every column of object `key`, or nil if it is absent.
    /// - Complexity: O(log n + c + m) for c columns and m bytes of values.
    public func getRow(_ key: UInt64) throws(StorageError) -> [CellValue]? {
        guard let at = try locate(key) else { return nil }
        var row: [CellValue] = []
        row.reserveCapacity(specs.count)
        for j in 0..<specs.count { row.append(try value(at.leaf, j, at.index)) }
        return row
    }

    /// Calls `body` with the bytes of a string, binary or mixed value in place (nil for null).
    /// A value in one overflow page is read in place too; a longer one is first assembled.
    /// The buffer is valid only during the call.
    /// - Throws: `.invalidArgument` for a missing key or column, or a column of another kind;
    ///   `.corrupt`; what `body` throws.
    /// - Complexity: O(log n), plus O(m) for a value of m bytes in several overflow pages.
    @inlinable
    public func withBytes<R>(_ key: UInt64, column: Int,
                             _ body: (UnsafeRawBufferPointer?) throws(StorageError) -> R) throws(StorageError) -> R {
        try checkColumn(column)
        guard let at = try locate(key) else { throw missing(key) }
        return try withBytes(at: at, column: column, body)
    }

    /// `withBytes(_:column:_:)` for the object at `location` (found by `locate`).
    /// - Complexity: O(1), plus O(m) for a value of m bytes in several overflow pages.
    @inlinable
    public func withBytes<R>(at location: ClusterLocation, column: Int,
                             _ body: (UnsafeRawBufferPointer?) throws(StorageError) -> R) throws(StorageError) -> R {
        try checkColumn(column)
        guard specs[column].kind.isBytes else {
            throw .invalidArgument("column \(column) is \(specs[column].kind), not a string, binary or mixed column")
        }
        let leaf = location.leaf, i = location.index
        if column >= leaf.columnCount {
            return try body(specs[column].nullable ? nil : UnsafeRawBufferPointer(start: leaf.base, count: 0))
        }
        if leaf.isNull(column, i) { return try body(nil) }
        return try withStoredBytes(try leaf.bytesRef(column, i), body)
    }

    /// Calls `body` with stored bytes: in place, or from the overflow chain (in place when the
    /// chain is one page).
    @inlinable
    func withStoredBytes<R>(_ stored: StoredBytes, _ body: (UnsafeRawBufferPointer) throws(StorageError) -> R) throws(StorageError) -> R {
        switch stored {
        case .inline(let bytes):
            return try body(bytes)
        case .overflow(let ref, let length):
            if length <= UInt64(BTreeLayout.overflowCapacity) {
                var result: R?
                try index.walkOverflow(ref, length: length) { _, bytes throws(StorageError) in result = try body(bytes) }
                guard let result else { throw ClusterLeaf.fault(ref.pgno, "empty overflow chain") }
                return result
            }
            var buffer: [UInt8] = []
            try index.readOverflow(ref, length: length, into: &buffer)
            return try CoveStorage.withBytes(buffer, body)
        }
    }

    /// Calls `body` with each object key from the first key >= `key` (the first object when nil),
    /// ascending, until it returns false.
    /// - Complexity: O(log n + k) for k keys visited.
    public func forEachKey(from key: UInt64?, _ body: (UInt64) throws(StorageError) -> Bool) throws(StorageError) {
        if index.isEmpty { return }
        let start: UInt64? = try key.flatMap { k throws(StorageError) in try cluster(containing: k)?.key }
        try index.forEach(from: start) { k, value throws(StorageError) -> Bool in
            let leaf = try self.leaf(try ClusterRef(key: k, value))
            var i = key.map { leaf.lowerBound($0).index } ?? 0
            while i < leaf.count {
                if try !body(leaf.key(i)) { return false }
                i &+= 1
            }
            return true
        }
    }

    /// The key of the object at `position` (0-based, in key order).
    /// - Throws: `.invalidArgument` if `position >= count`; `.corrupt`.
    /// - Complexity: O(m) for m clusters (their counts are read in order), plus O(c).
    public func key(at position: UInt64) throws(StorageError) -> UInt64 {
        guard position < root.objectCount else {
            throw .invalidArgument("position \(position) is out of range for \(root.objectCount) objects")
        }
        var remaining = position
        var found: UInt64?
        try index.forEach(from: nil) { k, value throws(StorageError) -> Bool in
            let ref = try ClusterRef(key: k, value)
            if remaining < ref.count {
                found = try self.leaf(ref).key(Int(remaining))
                return false
            }
            remaining &-= ref.count
            return true
        }
        guard let found else { throw .corrupt("table: cluster counts add up to less than its \(root.objectCount) objects") }
        return found
    }

    /// The largest object key, or nil for an empty table.
    /// - Complexity: O(log n)
    public func lastKey() throws(StorageError) -> UInt64? {
        if index.isEmpty { return nil }
        let cursor = try index.cursor(from: UInt64?.none, reverse: true)
        guard cursor.isValid else { return nil }
        let k = try cursor.u64Key()
        let ref = try cursor.withValue { v throws(StorageError) in try ClusterRef(key: k, v) }
        let leaf = try self.leaf(ref)
        return leaf.key(leaf.count &- 1)
    }
}
