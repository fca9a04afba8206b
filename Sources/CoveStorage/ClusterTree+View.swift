// Column-at-a-time access for query evaluation: a view of one cluster page that reads single
// values or decodes a whole column into a reusable buffer, straight from the packed arrays.

/// One cluster of a table, as `ClusterTree.forEachCluster` hands it out: its keys ascending and
/// its columns. Valid only during the call that hands it out.
///
/// Fixed-width reads (`key`, `int`, `double`, `isNull`...) read the page in place and never
/// allocate; their page offsets were checked when the view was made. An index `i` must be in
/// `0..<count` and a column in `0..<columns.count` (a caller's mistake traps). A column the
/// page predates reads as the column's default.
public struct ClusterView {
    @usableFromInline let leaf: ClusterLeaf
    @usableFromInline let specs: [ColumnSpec]
    @usableFromInline let reader: any OverflowReader

    @inlinable
    init(leaf: ClusterLeaf, specs: [ColumnSpec], reader: any OverflowReader) {
        self.leaf = leaf
        self.specs = specs
        self.reader = reader
    }

    /// Number of objects in the cluster.
    public var count: Int { leaf.count }

    /// The table's columns.
    public var columns: [ColumnSpec] { specs }

    /// The key of object `i`.
    /// - Complexity: O(1)
    @inlinable
    public func key(_ i: Int) -> UInt64 {
        precondition(i >= 0 && i < leaf.count, "object index out of range")
        return leaf.key(i)
    }

    @inlinable @inline(__always)
    func stored(_ column: Int) -> Bool {
        precondition(column >= 0 && column < specs.count, "column out of range")
        return column < leaf.columnCount
    }

    @inlinable @inline(__always)
    func stored(_ column: Int, _ kind: ColumnKind) -> Bool {
        precondition(column >= 0 && column < specs.count, "column out of range")
        precondition(specs[column].kind == kind || kind == .string && specs[column].kind.isBytes,
                     "column \(column) is \(specs[column].kind), read as \(kind)")
        return column < leaf.columnCount
    }

    /// Whether some object of this cluster may be null in `column` (false: none is, and bulk
    /// readers can skip the null flags).
    /// - Complexity: O(1)
    @inlinable
    public func mayHaveNulls(_ column: Int) -> Bool {
        guard stored(column) else { return specs[column].nullable }
        return leaf.hasNullBitmap(column)
    }

    /// Whether object `i` is null in `column`.
    /// - Complexity: O(1)
    @inlinable
    public func isNull(_ column: Int, _ i: Int) -> Bool {
        precondition(i >= 0 && i < leaf.count, "object index out of range")
        guard stored(column) else { return specs[column].nullable }
        return leaf.isNull(column, i)
    }

    /// Int column `column`, object `i` (0 for null).
    /// - Complexity: O(1)
    @inlinable
    public func int(_ column: Int, _ i: Int) -> Int64 {
        precondition(i >= 0 && i < leaf.count, "object index out of range")
        guard stored(column, .int) else { return 0 }
        return leaf.isNull(column, i) ? 0 : leaf.int(column, i)
    }

    /// Bool column `column`, object `i` (false for null).
    /// - Complexity: O(1)
    @inlinable
    public func bool(_ column: Int, _ i: Int) -> Bool {
        precondition(i >= 0 && i < leaf.count, "object index out of range")
        guard stored(column, .bool) else { return false }
        return leaf.bit(leaf.valuesOffset(column), i)
    }

    /// Double column `column`, object `i` (0 for null).
    /// - Complexity: O(1)
    @inlinable
    public func double(_ column: Int, _ i: Int) -> Double {
        precondition(i >= 0 && i < leaf.count, "object index out of range")
        guard stored(column, .double) else { return 0 }
        return Double(bitPattern: leaf.u64(leaf.valuesOffset(column) &+ 8 &* i))
    }

    /// Float column `column`, object `i` (0 for null).
    /// - Complexity: O(1)
    @inlinable
    public func float(_ column: Int, _ i: Int) -> Float {
        precondition(i >= 0 && i < leaf.count, "object index out of range")
        guard stored(column, .float) else { return 0 }
        return Float(bitPattern: leaf.u32(leaf.valuesOffset(column) &+ 4 &* i))
    }

    /// Link column `column`, object `i`: the target key (0 for null).
    /// - Complexity: O(1)
    @inlinable
    public func link(_ column: Int, _ i: Int) -> UInt64 {
        precondition(i >= 0 && i < leaf.count, "object index out of range")
        guard stored(column, .link) else { return 0 }
        return leaf.u64(leaf.valuesOffset(column) &+ 8 &* i)
    }

    /// Timestamp column `column`, object `i` (the epoch for null).
    /// - Complexity: O(1)
    @inlinable
    public func timestamp(_ column: Int, _ i: Int) -> (seconds: Int64, nanoseconds: Int32) {
        precondition(i >= 0 && i < leaf.count, "object index out of range")
        guard stored(column, .timestamp) else { return (0, 0) }
        let v = leaf.valuesOffset(column)
        return (Int64(bitPattern: leaf.u64(v &+ 8 &* i)), Int32(bitPattern: leaf.u32(v &+ 8 &* leaf.count &+ 4 &* i)))
    }

    /// Any column of object `i` as a value (strings copied; prefer `withBytes` in loops).
    /// - Complexity: O(1), or O(m) for a value of m bytes.
    public func value(_ column: Int, _ i: Int) throws(StorageError) -> CellValue {
        precondition(i >= 0 && i < leaf.count, "object index out of range")
        guard stored(column) else { return specs[column].defaultValue }
        switch try leaf.cell(column, i, kind: specs[column].kind) {
        case .value(let v): return v
        case .overflow(let ref, let length):
            var out: [UInt8] = []
            try reader.withOverflow(ref, length: length) { bytes throws(StorageError) in out = Array(bytes) }
            return .bytes(out)
        }
    }

    /// Calls `body` with the bytes of string, binary or mixed column `column`, object `i`, in
    /// place (nil for null). Large values are assembled from their overflow pages first.
    /// - Complexity: O(1), or O(m) for a value of m bytes in overflow pages.
    public func withBytes<R>(_ column: Int, _ i: Int,
                             _ body: (UnsafeRawBufferPointer?) throws(StorageError) -> R) throws(StorageError) -> R {
        precondition(i >= 0 && i < leaf.count, "object index out of range")
        guard stored(column, .string) else {
            return try body(specs[column].nullable ? nil : UnsafeRawBufferPointer(start: leaf.base, count: 0))
        }
        if leaf.isNull(column, i) { return try body(nil) }
        switch try leaf.bytesRef(column, i) {
        case .inline(let bytes):
            return try body(bytes)
        case .overflow(let ref, let length):
            var result: R?
            try reader.withOverflow(ref, length: length) { bytes throws(StorageError) in result = try body(bytes) }
            return result!
        }
    }

    /// The byte length of string, binary or mixed column `column`, object `i` (0 for null),
    /// read from the packed array alone: an equality scan tests lengths before touching bytes.
    /// - Complexity: O(1)
    public func byteCount(_ column: Int, _ i: Int) throws(StorageError) -> Int {
        precondition(i >= 0 && i < leaf.count, "object index out of range")
        guard stored(column, .string), !leaf.isNull(column, i) else { return 0 }
        switch try leaf.bytesRef(column, i) {
        case .inline(let bytes): return bytes.count
        case .overflow(_, let length): return Int(length)
        }
    }

    // MARK: - Bulk decoding

    /// Calls `body` with a reader of int column `column` (object index to value, 0 for an
    /// unstored column; nulls read as whatever their slot holds), one per delta width so that
    /// the loop over it is tight.
    @inlinable @inline(__always)
    func withInts<R>(_ column: Int, _ body: ((Int) -> Int64) -> R) -> R {
        guard stored(column, .int) else { return body { _ in 0 } }
        let v = leaf.valuesOffset(column)
        let base = Int64(bitPattern: leaf.u64(v))
        let p = leaf.base + (v &+ 8)
        switch leaf.encoding(column) & 0x0F {
        case 0: return body { _ in base }
        case 1: return body { base &+ Int64(p.load(fromByteOffset: $0, as: UInt8.self)) }
        case 2: return body { base &+ Int64(UInt16(littleEndian: p.loadUnaligned(fromByteOffset: 2 &* $0, as: UInt16.self))) }
        case 4: return body { base &+ Int64(UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 4 &* $0, as: UInt32.self))) }
        default: return body { base &+ Int64(bitPattern: UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8 &* $0, as: UInt64.self))) }
        }
    }

    /// Calls `body` with a reader of double column `column` (0 for an unstored column).
    @inlinable @inline(__always)
    func withDoubles<R>(_ column: Int, _ body: ((Int) -> Double) -> R) -> R {
        guard stored(column, .double) else { return body { _ in 0 } }
        let p = leaf.base + leaf.valuesOffset(column)
        return body { Double(bitPattern: UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8 &* $0, as: UInt64.self))) }
    }

    /// Calls `body` with the index of every object whose slot in stored column `column` is a
    /// null one.
    @inlinable @inline(__always)
    func forEachNullSlot(_ column: Int, _ body: (Int) -> Void) {
        guard column < leaf.columnCount, leaf.hasNullBitmap(column) else { return }
        for i in 0..<leaf.count where leaf.isNull(column, i) { body(i) }
    }

    /// Replaces the contents of `out` with int column `column` of every object (0 for null).
    /// Reuses the buffer's capacity: no allocation once it is large enough.
    /// - Complexity: O(n), a tight loop per delta width.
    @inlinable
    public func ints(_ column: Int, into out: inout [Int64]) {
        let n = leaf.count
        out.resize(to: n, with: 0)
        out.withUnsafeMutableBufferPointer { b in withInts(column) { read in for i in 0..<n { b[i] = read(i) } } }
        forEachNullSlot(column) { out[$0] = 0 }
    }

    /// Replaces the contents of `out` with double column `column` of every object (0 for null).
    /// - Complexity: O(n)
    @inlinable
    public func doubles(_ column: Int, into out: inout [Double]) {
        let n = leaf.count
        out.resize(to: n, with: 0)
        out.withUnsafeMutableBufferPointer { b in withDoubles(column) { read in for i in 0..<n { b[i] = read(i) } } }
    }

    /// Sets `mask[i]` to whether int column `column` of object `i` compares to `constant` as
    /// `test` says, decoding and comparing in one loop; a null object gets `null`.
    /// - Precondition: `mask` has one element per object.
    /// - Complexity: O(n)
    @inlinable
    public func compareInts(_ column: Int, _ test: ColumnTest, _ constant: Int64, null: Bool,
                            into mask: UnsafeMutableBufferPointer<Bool>) {
        precondition(mask.count == leaf.count, "a mask of \(mask.count) for \(leaf.count) objects")
        withInts(column) { test.fill(mask, constant, $0) }
        forEachNullSlot(column) { mask[$0] = null }
    }

    /// Sets `mask[i]` to whether double column `column` of object `i` compares to `constant`
    /// as `test` says, in one loop; a null object gets `null`.
    /// - Precondition: `mask` has one element per object.
    /// - Complexity: O(n)
    @inlinable
    public func compareDoubles(_ column: Int, _ test: ColumnTest, _ constant: Double, null: Bool,
                               into mask: UnsafeMutableBufferPointer<Bool>) {
        precondition(mask.count == leaf.count, "a mask of \(mask.count) for \(leaf.count) objects")
        withDoubles(column) { test.fill(mask, constant, $0) }
        forEachNullSlot(column) { mask[$0] = null }
    }

    /// Replaces the contents of `out` with the null flags of `column` for every object.
    /// - Complexity: O(n)
    @inlinable
    public func nulls(_ column: Int, into out: inout [Bool]) {
        let n = leaf.count
        out.removeAll(keepingCapacity: true)
        guard stored(column) else {
            out.append(contentsOf: repeatElement(specs[column].nullable, count: n))
            return
        }
        guard leaf.hasNullBitmap(column) else {
            out.append(contentsOf: repeatElement(false, count: n))
            return
        }
        let off = leaf.columnOffset(column)
        for i in 0..<n { out.append(leaf.bit(off, i)) }
    }

    /// Calls `body` with the index of every object whose int column `column` equals `value`
    /// (nulls never match). The constant is translated into the page's frame of reference once,
    /// so the loop compares packed deltas.
    /// - Complexity: O(n)
    @inlinable
    public func forEachIntEqual(_ column: Int, _ value: Int64, _ body: (Int) throws(StorageError) -> Void) throws(StorageError) {
        let n = leaf.count
        guard stored(column, .int) else {
            if value == 0 && !specs[column].nullable { for i in 0..<n { try body(i) } }
            return
        }
        let v = leaf.valuesOffset(column)
        let delta = UInt64(bitPattern: value) &- leaf.u64(v)
        let p = leaf.base + (v &+ 8)
        let hasNulls = leaf.hasNullBitmap(column)
        let width = Int(leaf.encoding(column) & 0x0F)
        if width < 8 && delta >> UInt64(width &* 8) != 0 { return }
        for i in 0..<n {
            let d: UInt64
            switch width {
            case 0: d = 0
            case 1: d = UInt64(p.load(fromByteOffset: i, as: UInt8.self))
            case 2: d = UInt64(UInt16(littleEndian: p.loadUnaligned(fromByteOffset: 2 &* i, as: UInt16.self)))
            case 4: d = UInt64(UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 4 &* i, as: UInt32.self)))
            default: d = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8 &* i, as: UInt64.self))
            }
            if d == delta && !(hasNulls && leaf.isNull(column, i)) { try body(i) }
        }
    }
}

/// Reads overflow chains for a `ClusterView`, whatever the table's store type.
@usableFromInline
protocol OverflowReader {
    func withOverflow(_ ref: PageRef, length: UInt64, _ body: (UnsafeRawBufferPointer) throws(StorageError) -> Void) throws(StorageError)
}

/// The overflow chains of a table are in the B+tree format, read by the B+tree's code. Holds only
/// the store, so that the existential in `ClusterView` stores it inline (no allocation per view).
@usableFromInline
struct TreeOverflowReader<Store: PageStore>: OverflowReader {
    @usableFromInline let store: Store

    @inlinable
    init(_ store: Store) { self.store = store }

    @usableFromInline
    func withOverflow(_ ref: PageRef, length: UInt64, _ body: (UnsafeRawBufferPointer) throws(StorageError) -> Void) throws(StorageError) {
        let tree = BTree(store: store, root: .empty, keyKind: .u64)
        if length <= UInt64(BTreeLayout.overflowCapacity) {
            try tree.walkOverflow(ref, length: length) { _, bytes throws(StorageError) in try body(bytes) }
            return
        }
        var buffer: [UInt8] = []
        try tree.readOverflow(ref, length: length, into: &buffer)
        try CoveStorage.withBytes(buffer, body)
    }
}

extension ClusterTree {
    /// Calls `body` with each cluster in key order until it returns false: column-at-a-time
    /// access for query evaluation. Memory works ahead of `body`: a page's header is requested
    /// `Self.headerDistance` clusters before its turn, and what `plan` names of it one cluster
    /// before (the page is read then), while the cluster before it is scanned. The results are
    /// the same with any plan, only sooner.
    /// - Complexity: O(m · c) for m clusters and c columns, plus what `body` reads.
    public func forEachCluster(prefetching plan: ClusterPrefetch = .nothing,
                               _ body: (ClusterView) throws(StorageError) -> Bool) throws(StorageError) {
        if index.isEmpty { return }
        var upcoming: [ClusterRef] = []
        upcoming.reserveCapacity(Self.headerDistance + 1)
        var ready: ClusterLeaf?
        var going = true
        /// Scans the ready cluster, if any, and makes `next` (nil at the end) the ready one.
        func advance(to next: ClusterRef?) throws(StorageError) {
            let leaf = try next.map { ref throws(StorageError) in try self.leaf(ref) }
            leaf?.prefetch(plan, specs: specs)
            if let current = ready {
                going = try body(ClusterView(leaf: current, specs: specs, reader: TreeOverflowReader(store)))
            }
            ready = leaf
        }
        try index.forEach(from: nil) { k, value throws(StorageError) -> Bool in
            let ref = try ClusterRef(key: k, value)
            store.prefetch(ref.page.pgno)
            upcoming.append(ref)
            if upcoming.count > Self.headerDistance { try advance(to: upcoming.removeFirst()) }
            return going
        }
        while going, !upcoming.isEmpty { try advance(to: upcoming.removeFirst()) }
        if going { try advance(to: nil) }
    }

    /// How many clusters ahead of the scan `forEachCluster` requests a page's header.
    static var headerDistance: Int { 3 }
}

/// What `ClusterTree.forEachCluster` requests from memory ahead of the scan, page by page.
public struct ClusterPrefetch: Sendable {
    /// The columns the scan reads (with the heap, for a string or binary one).
    public var columns: [Int]
    /// Whether the scan reads the objects' keys.
    public var keys: Bool

    public init(columns: [Int], keys: Bool = false) {
        self.columns = columns
        self.keys = keys
    }

    /// Only the pages' headers requested ahead.
    public static var nothing: ClusterPrefetch { ClusterPrefetch(columns: []) }
}

/// A comparison of a column's values with a constant, for the fused scans of ClusterView.
public enum ColumnTest: Sendable {
    case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual

    /// `mask[i] = read(i) <test> constant` for every i, one specialised loop per test.
    @inlinable @inline(__always)
    func fill<T: Comparable>(_ mask: UnsafeMutableBufferPointer<Bool>, _ constant: T, _ read: (Int) -> T) {
        let n = mask.count
        switch self {
        case .equal: for i in 0..<n { mask[i] = read(i) == constant }
        case .notEqual: for i in 0..<n { mask[i] = read(i) != constant }
        case .less: for i in 0..<n { mask[i] = read(i) < constant }
        case .lessOrEqual: for i in 0..<n { mask[i] = read(i) <= constant }
        case .greater: for i in 0..<n { mask[i] = read(i) > constant }
        case .greaterOrEqual: for i in 0..<n { mask[i] = read(i) >= constant }
        }
    }
}

extension Array {
    /// Makes the array hold `n` elements, keeping its capacity: elements beyond `n` are
    /// dropped, new ones are `fill` (callers overwrite them).
    @inlinable @inline(__always)
    public mutating func resize(to n: Int, with fill: Element) {
        if count > n {
            removeLast(count - n)
        } else {
            reserveCapacity(n)
            while count < n { append(fill) }
        }
    }
}
