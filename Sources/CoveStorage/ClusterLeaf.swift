// Cluster leaves (page type 5): the objects of one key range of a table stored column by column.
// This file holds the value types a table stores (ColumnKind, ColumnSpec, CellValue), the page
// layout and the bounds-checked read view of one page; ClusterLeaf+Encode.swift builds pages.
// docs/FORMAT-btree.md ("Cluster leaves") is the byte-by-byte reference.

/// The type of one column of a table.
public enum ColumnKind: UInt8, Sendable {
    case bool = 1, int, float, double, timestamp, decimal128, objectId, uuid, link, string, binary, mixed, collection
    /// A list, set or map whose cell holds its value as bytes, in the page's heap as a string's
    /// are (the object layer's encoding: its elements, or the root of a tree of its own).
    case collectionInRow

    /// Whether values live in the page's heap (or in overflow pages): string, binary, mixed and
    /// collections in the row.
    @inlinable
    public var isBytes: Bool { self == .string || self == .binary || self == .mixed || self == .collectionInRow }
}

/// One column of a table: its kind and whether it accepts `.null`.
public struct ColumnSpec: Sendable, Hashable {
    public var kind: ColumnKind
    public var nullable: Bool

    /// - Complexity: O(1)
    @inlinable
    public init(_ kind: ColumnKind, nullable: Bool = false) {
        self.kind = kind
        self.nullable = nullable
    }

    /// The value an object holds in this column when nothing was stored: `.null` if nullable,
    /// otherwise false, 0, 0.0, the epoch, zero bytes, link 0, an empty byte string or an empty
    /// collection root.
    /// - Complexity: O(1)
    public var defaultValue: CellValue {
        if nullable { return .null }
        switch kind {
        case .bool: return .bool(false)
        case .int: return .int(0)
        case .float: return .float(0)
        case .double: return .double(0)
        case .timestamp: return .timestamp(seconds: 0, nanoseconds: 0)
        case .decimal128, .uuid: return .bytes16(0, 0)
        case .objectId: return .bytes12(0, 0)
        case .link: return .link(0)
        case .string, .binary, .mixed, .collectionInRow: return .bytes([])
        case .collection: return .root(.empty)
        }
    }
}

/// One value of one object.
///
/// `bytes16` holds a decimal128 as (low 64 bits, high 64 bits), and a UUID as its 16 bytes in
/// order loaded as two little-endian u64 (bytes 0..<8, bytes 8..<16): storing them back the same
/// way preserves the byte order. `bytes12` holds an ObjectId the same way (bytes 0..<8 as a
/// little-endian u64, bytes 8..<12 as a little-endian u32).
public enum CellValue: Sendable, Hashable {
    case null
    case bool(Bool), int(Int64), float(Float), double(Double)
    case timestamp(seconds: Int64, nanoseconds: Int32)
    case bytes16(UInt64, UInt64)
    case bytes12(UInt64, UInt32)
    case link(UInt64)
    case bytes([UInt8])
    case root(TreeRoot)

    /// Whether this value may be stored in a column of `kind` (`.null` is checked separately).
    @inlinable
    func fits(_ kind: ColumnKind) -> Bool {
        switch (self, kind) {
        case (.bool, .bool), (.int, .int), (.float, .float), (.double, .double), (.timestamp, .timestamp),
             (.bytes16, .decimal128), (.bytes16, .uuid), (.bytes12, .objectId), (.link, .link),
             (.bytes, .string), (.bytes, .binary), (.bytes, .mixed), (.bytes, .collectionInRow), (.root, .collection):
            return true
        default:
            return false
        }
    }
}

// MARK: - Layout

/// Offsets and limits of cluster leaves (see docs/FORMAT-btree.md).
///
///     offset size field
///     0      16   PageHeader (type clusterLeaf, flags 0, count = objects n)
///     16     2    heapStart: lowest heap byte; the heap fills [heapStart, pageSize)
///     18     2    heap garbage bytes: of objects removed in place (0 once laid out again)
///     20     2    column count c (may be less than the table's: later columns read defaults)
///     22     1    key encoding: 0 plain (8n), 1 stepped (base, then n deltas of w bytes)
///     23     1    key delta width w (0, 1, 2, 4 or 8; 0 for plain keys)
///     24     4    schema layout id (0; reserved for the object layer)
///     28     4    zero
///     32     4c   directory: u16 column offset, u8 encoding, u8 flags (bit 0: null bitmap)
///     align8 8n   object keys, ascending: plain 8n, or stepped: a u64 base and n deltas of
///                 w bytes, key i being base + i + delta i (consecutive keys: w = 0, 8 bytes)
///     ...         columns, each 8-aligned: [null bitmap ceil(n/8)] values
///     heapStart   string and binary bytes, overflow references
///
/// Value arrays: bool a bitmap; int an i64 base then n deltas of 0/1/2/4/8 bytes; float 4n;
/// double 8n; timestamp 8n seconds then 4n nanoseconds; decimal128/uuid 16n; objectId 12n
/// (8 + 4); link 8n; string/binary/mixed 4n (u16 heap offset, u16 length; length 0xFFFF: the
/// offset names a 24-byte overflow reference); collection 24n (TreeRoot).
@usableFromInline
enum ClusterLayout {
    @inlinable static var heapStartOffset: Int { 16 }
    @inlinable static var garbageOffset: Int { 18 }
    @inlinable static var columnCountOffset: Int { 20 }
    @inlinable static var keyEncodingOffset: Int { 22 }
    @inlinable static var keyWidthOffset: Int { 23 }
    /// Key encodings: every key in 8 bytes (pages written before stepped keys), or a base and
    /// per-object deltas over `base + i`.
    @inlinable static var plainKeys: UInt8 { 0 }
    @inlinable static var steppedKeys: UInt8 { 1 }
    @inlinable static var layoutIdOffset: Int { 24 }
    @inlinable static var directoryOffset: Int { 32 }
    /// The keys alone bound a page to this many objects.
    @inlinable static var maxObjects: Int { 508 }
    /// Page bytes a non-root cluster should use at least (by `ClusterRows.bound`): a quarter.
    @inlinable static var minFill: Int { pageSize / 4 }
    @inlinable static var overflowMarker: Int { 0xFFFF }
    @inlinable static var overflowRefSize: Int { 24 }
    /// The encoding byte of an int column whose deltas take `width` bytes.
    @inlinable static func intEncoding(width: Int) -> UInt8 { 0x20 | UInt8(width) }

    @inlinable
    static func align8(_ x: Int) -> Int { (x &+ 7) & ~7 }

    /// Where the keys start in a page of `columns` columns.
    @inlinable
    static func keysOffset(columns: Int) -> Int { align8(directoryOffset &+ 4 &* columns) }

    /// The byte width (0, 1, 2, 4 or 8) of deltas up to `d`: the deltas of stepped keys (the
    /// largest is `last - first - (n - 1)`) and of an int column over its base (the spread).
    @inlinable
    static func deltaWidth(_ d: UInt64) -> Int {
        d == 0 ? 0 : d <= 0xFF ? 1 : d <= 0xFFFF ? 2 : d <= 0xFFFF_FFFF ? 4 : 8
    }

    /// The width a page laid out anew gives its key deltas when the largest is `lastDelta`: at
    /// least one byte, even for consecutive keys (deltas all 0). Removing an object in place
    /// moves every later object down a place and its delta up by one; without the byte, the
    /// first removal from a page of consecutive keys would lay the page out again (with its
    /// neighbours, as it is full), which costs tens of times an in-place removal.
    @inlinable
    static func keyDeltaWidth(_ lastDelta: UInt64) -> Int {
        Swift.max(1, deltaWidth(lastDelta))
    }

    /// The largest delta `width` bytes hold (the inverse of `deltaWidth`).
    @inlinable
    static func maxDelta(width: Int) -> UInt64 {
        width == 0 ? 0 : width >= 8 ? .max : (1 &<< UInt64(8 &* width)) &- 1
    }

    /// Bytes of `n` stepped keys with deltas of `width` bytes.
    @inlinable
    static func steppedKeysSize(_ n: Int, width: Int) -> Int { 8 &+ width &* n }

    /// Bytes of a bitmap of `n` bits.
    @inlinable
    static func bitmapBytes(_ n: Int) -> Int { (n &+ 7) &>> 3 }

    /// Bytes of one element of a fixed-width column (not bool or int).
    @inlinable
    static func elementSize(_ kind: ColumnKind) -> Int {
        switch kind {
        case .bool, .int: return 0
        case .float: return 4
        case .double, .link: return 8
        case .timestamp, .objectId: return 12
        case .decimal128, .uuid: return 16
        case .string, .binary, .mixed, .collectionInRow: return 4
        case .collection: return 24
        }
    }

    /// The byte width of int deltas for an encoding byte, or nil if it is not an int encoding.
    @inlinable
    static func intWidth(_ encoding: UInt8) -> Int? {
        guard encoding & 0xF0 == 0x20 else { return nil }
        switch encoding & 0x0F {
        case 0: return 0
        case 1: return 1
        case 2: return 2
        case 4: return 4
        case 8: return 8
        default: return nil
        }
    }

    /// Bytes of a column's values (after the null bitmap) for `n` objects, or nil if the
    /// encoding does not belong to `kind`.
    @inlinable
    static func valuesSize(_ kind: ColumnKind, encoding: UInt8, n: Int) -> Int? {
        switch kind {
        case .bool:
            return encoding == kind.rawValue ? bitmapBytes(n) : nil
        case .int:
            guard let w = intWidth(encoding) else { return nil }
            return 8 &+ w &* n
        default:
            return encoding == kind.rawValue ? elementSize(kind) &* n : nil
        }
    }

    /// Planning cost of one object in bits, not counting its heap bytes.
    @inlinable
    static func fixedBits(_ spec: ColumnSpec) -> Int {
        let nullBit = spec.nullable ? 1 : 0
        switch spec.kind {
        case .bool: return 1 &+ nullBit
        case .int: return 64 &+ nullBit
        default: return elementSize(spec.kind) &* 8 &+ nullBit
        }
    }

    /// Upper bound on a page's bytes outside keys, values and heap: header, directory, the key
    /// base (8) and, per column, an int base (8), alignment (7) and the rounding of two bitmaps (2).
    @inlinable
    static func overhead(columns: Int) -> Int { keysOffset(columns: columns) &+ 8 &+ 17 &* columns }
}

// MARK: - Reading one page

/// A checked view of one cluster leaf. Construction validates the header and every column's
/// extent against the object count and the heap, so element reads of fixed-width columns need
/// no further checks; heap references are checked where they are read.
@usableFromInline
struct ClusterLeaf {
    @usableFromInline let base: UnsafeRawPointer
    @usableFromInline let pgno: PageNumber
    /// Number of objects.
    @usableFromInline let count: Int
    /// Columns stored in this page (the table may have more; those read as defaults).
    @usableFromInline let columnCount: Int
    @usableFromInline let heapStart: Int
    @usableFromInline let keysOffset: Int
    /// Key `i` is `keyBase + keyStep * i` plus its delta of `keyWidth` bytes at `keyDeltas`:
    /// plain keys are base 0, step 0, width 8 at `keysOffset`.
    @usableFromInline let keyBase: UInt64
    @usableFromInline let keyStep: UInt64
    @usableFromInline let keyWidth: Int
    @usableFromInline let keyDeltas: Int
    /// Where the keys end (the columns start at or after it).
    @usableFromInline let keysEnd: Int

    /// Decodes and checks the page at `base` of a table whose columns are `specs`.
    /// - Complexity: O(c) for c columns.
    @inlinable
    init(_ base: UnsafeRawPointer, pgno: PageNumber, specs: [ColumnSpec]) throws(StorageError) {
        let type = PageHeader.type(base)
        let flags = base.load(fromByteOffset: PageHeader.flagsOffset, as: UInt8.self)
        let n = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: PageHeader.countOffset, as: UInt16.self)))
        let heapStart = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: ClusterLayout.heapStartOffset, as: UInt16.self)))
        let garbage = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: ClusterLayout.garbageOffset, as: UInt16.self)))
        let c = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: ClusterLayout.columnCountOffset, as: UInt16.self)))
        guard type == PageType.clusterLeaf.rawValue, flags == 0 else {
            throw ClusterLeaf.fault(pgno, "type \(type) flags \(flags) where a cluster leaf was expected")
        }
        guard n >= 1, n <= ClusterLayout.maxObjects else { throw ClusterLeaf.fault(pgno, "holds \(n) objects") }
        guard c <= specs.count else {
            throw ClusterLeaf.fault(pgno, "has \(c) columns, the table \(specs.count)")
        }
        let keysOffset = ClusterLayout.keysOffset(columns: c)
        let keyEncoding = base.load(fromByteOffset: ClusterLayout.keyEncodingOffset, as: UInt8.self)
        let keyWidth = Int(base.load(fromByteOffset: ClusterLayout.keyWidthOffset, as: UInt8.self))
        let keysEnd: Int
        switch (keyEncoding, keyWidth) {
        case (ClusterLayout.plainKeys, 0):
            keysEnd = keysOffset &+ 8 &* n
        case (ClusterLayout.steppedKeys, 0), (ClusterLayout.steppedKeys, 1), (ClusterLayout.steppedKeys, 2),
             (ClusterLayout.steppedKeys, 4), (ClusterLayout.steppedKeys, 8):
            keysEnd = keysOffset &+ ClusterLayout.steppedKeysSize(n, width: keyWidth)
        default:
            throw ClusterLeaf.fault(pgno, "key encoding \(keyEncoding) width \(keyWidth) is not one this version writes")
        }
        guard heapStart <= pageSize, keysEnd <= heapStart, garbage <= pageSize &- heapStart else {
            throw ClusterLeaf.fault(pgno, "heap starts at \(heapStart) (garbage \(garbage)), which does not fit \(n) keys and \(c) columns")
        }
        for j in 0..<c {
            let d = ClusterLayout.directoryOffset &+ 4 &* j
            let off = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: d, as: UInt16.self)))
            let enc = base.load(fromByteOffset: d &+ 2, as: UInt8.self)
            let colFlags = base.load(fromByteOffset: d &+ 3, as: UInt8.self)
            guard let size = ClusterLayout.valuesSize(specs[j].kind, encoding: enc, n: n), colFlags & ~1 == 0 else {
                throw ClusterLeaf.fault(pgno, "column \(j) has encoding \(enc) flags \(colFlags), not valid for a \(specs[j].kind) column")
            }
            let total = size &+ (colFlags & 1 != 0 ? ClusterLayout.bitmapBytes(n) : 0)
            guard off & 7 == 0, off >= keysEnd, off &+ total <= heapStart else {
                throw ClusterLeaf.fault(pgno, "column \(j) at \(off) (\(total) bytes) lies outside [\(keysEnd), \(heapStart))")
            }
        }
        self.base = base
        self.pgno = pgno
        self.count = n
        self.columnCount = c
        self.heapStart = heapStart
        self.keysOffset = keysOffset
        self.keysEnd = keysEnd
        if keyEncoding == ClusterLayout.steppedKeys {
            keyBase = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: keysOffset, as: UInt64.self))
            keyStep = 1
            self.keyWidth = keyWidth
            keyDeltas = keysOffset &+ 8
        } else {
            keyBase = 0
            keyStep = 0
            self.keyWidth = 8
            keyDeltas = keysOffset
        }
    }

    /// The key of object `i` (`0 <= i < count`).
    @inlinable @inline(__always)
    func key(_ i: Int) -> UInt64 {
        let delta: UInt64
        switch keyWidth {
        case 0: delta = 0
        case 1: delta = UInt64(base.load(fromByteOffset: keyDeltas &+ i, as: UInt8.self))
        case 2: delta = UInt64(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: keyDeltas &+ 2 &* i, as: UInt16.self)))
        case 4: delta = UInt64(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: keyDeltas &+ 4 &* i, as: UInt32.self)))
        default: delta = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: keyDeltas &+ 8 &* i, as: UInt64.self))
        }
        return keyBase &+ keyStep &* UInt64(truncatingIfNeeded: i) &+ delta
    }

    /// The first index whose key is >= `key`, and whether it equals `key`.
    ///
    /// Keys are distinct and ascending, so key `i` is at least `first + i` and at most
    /// `last - (count - 1 - i)`: the search starts in the window those bounds leave, which for
    /// a cluster of consecutive keys (objects created one after another) is the one slot.
    /// - Complexity: O(log n); O(1) when the keys are consecutive.
    @inlinable
    func lowerBound(_ key: UInt64) -> (index: Int, found: Bool) {
        let n = count
        if n == 0 { return (0, false) }
        let first = self.key(0)
        if key <= first { return (0, key == first) }
        // Key `d` slots after the first is at least `key`; equal means it is the one.
        let d = key &- first
        if d < UInt64(n), self.key(Int(d)) == key { return (Int(d), true) }
        let last = self.key(n &- 1)
        if key > last { return (n, false) }
        var lo = 0
        var hi = n
        if d < UInt64(n) { hi = Int(d) }
        if last &- key < UInt64(n) { lo = Swift.max(lo, n &- 1 &- Int(last &- key)) }
        while lo < hi {
            let mid = (lo &+ hi) &>> 1
            if self.key(mid) < key { lo = mid &+ 1 } else { hi = mid }
        }
        return (lo, lo < count && self.key(lo) == key)
    }

    /// The offset of column `j`'s array (its null bitmap if it has one).
    @inlinable @inline(__always)
    func columnOffset(_ j: Int) -> Int {
        Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: ClusterLayout.directoryOffset &+ 4 &* j, as: UInt16.self)))
    }

    @inlinable @inline(__always)
    func encoding(_ j: Int) -> UInt8 {
        base.load(fromByteOffset: ClusterLayout.directoryOffset &+ 4 &* j &+ 2, as: UInt8.self)
    }

    @inlinable @inline(__always)
    func hasNullBitmap(_ j: Int) -> Bool {
        base.load(fromByteOffset: ClusterLayout.directoryOffset &+ 4 &* j &+ 3, as: UInt8.self) & 1 != 0
    }

    /// Starts loading the cache lines `plan` names: the null bitmap and values of its stored
    /// columns (and the heap, for a string or binary column) and the keys if it asks for them,
    /// so that they are on their way when the page is scanned.
    @inlinable
    func prefetch(_ plan: ClusterPrefetch, specs: [ColumnSpec]) {
        @inline(__always) func lines(_ start: Int, _ end: Int) {
            let first = start & ~63
            let last = Swift.min(end, pageSize)
            if last > first { prefetchLines(base + first, (last &- first &+ 63) &>> 6) }
        }
        if plan.keys { lines(keysOffset, keysEnd) }
        var heap = false
        for j in plan.columns where j < columnCount {
            let bitmap = hasNullBitmap(j) ? ClusterLayout.bitmapBytes(count) : 0
            let size = ClusterLayout.valuesSize(specs[j].kind, encoding: encoding(j), n: count) ?? 0
            lines(columnOffset(j), columnOffset(j) &+ bitmap &+ size)
            heap = heap || specs[j].kind.isBytes
        }
        if heap { lines(heapStart, pageSize) }
    }

    /// Starts loading what reading object `i`'s values needs: per stored column the line of its
    /// value (and of an int column's base, and of its null bit), so that reading several
    /// properties of one object waits for memory about once rather than once per column.
    @inlinable
    func prefetchRow(_ i: Int, specs: [ColumnSpec]) {
        for j in 0..<Swift.min(columnCount, specs.count) {
            let start = columnOffset(j)
            if hasNullBitmap(j) && start &+ (i &>> 3) < pageSize { prefetchLines(base + (start &+ (i &>> 3)), 1) }
            let values = valuesOffset(j)
            guard values < pageSize else { continue }
            prefetchLines(base + values, 1)
            if let before = ClusterLayout.valuesSize(specs[j].kind, encoding: encoding(j), n: i), values &+ before < pageSize {
                prefetchLines(base + (values &+ before), 1)
            }
        }
    }

    /// Where column `j`'s values start (after its null bitmap).
    @inlinable @inline(__always)
    func valuesOffset(_ j: Int) -> Int {
        columnOffset(j) &+ (hasNullBitmap(j) ? ClusterLayout.bitmapBytes(count) : 0)
    }

    @inlinable @inline(__always)
    func bit(_ offset: Int, _ i: Int) -> Bool {
        base.load(fromByteOffset: offset &+ (i &>> 3), as: UInt8.self) & (1 << UInt8(i & 7)) != 0
    }

    /// Whether object `i` is null in stored column `j` (`j < columnCount`).
    @inlinable @inline(__always)
    func isNull(_ j: Int, _ i: Int) -> Bool {
        hasNullBitmap(j) && bit(columnOffset(j), i)
    }

    @inlinable @inline(__always)
    func u64(_ offset: Int) -> UInt64 {
        UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    @inlinable @inline(__always)
    func u32(_ offset: Int) -> UInt32 {
        UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @inlinable @inline(__always)
    func u16(_ offset: Int) -> Int {
        Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
    }

    /// Int column `j`, object `i`: base plus the delta at the page's width.
    @inlinable @inline(__always)
    func int(_ j: Int, _ i: Int) -> Int64 {
        let v = valuesOffset(j)
        let base = Int64(bitPattern: u64(v))
        let p = v &+ 8
        switch encoding(j) & 0x0F {
        case 0: return base
        case 1: return base &+ Int64(self.base.load(fromByteOffset: p &+ i, as: UInt8.self))
        case 2: return base &+ Int64(UInt16(littleEndian: self.base.loadUnaligned(fromByteOffset: p &+ 2 &* i, as: UInt16.self)))
        case 4: return base &+ Int64(u32(p &+ 4 &* i))
        default: return base &+ Int64(bitPattern: u64(p &+ 8 &* i))
        }
    }

    /// The heap bytes or overflow reference of bytes column `j`, object `i`, checked.
    @inlinable
    func bytesRef(_ j: Int, _ i: Int) throws(StorageError) -> StoredBytes {
        let e = valuesOffset(j) &+ 4 &* i
        let off = u16(e)
        let len = u16(e &+ 2)
        if len == ClusterLayout.overflowMarker {
            guard off >= heapStart, off &+ ClusterLayout.overflowRefSize <= pageSize else {
                throw ClusterLeaf.fault(pgno, "column \(j) object \(i): overflow reference at \(off) is outside the heap")
            }
            return .overflow(PageRef(pgno: u64(off), version: u64(off &+ 8)), length: u64(off &+ 16))
        }
        if len == 0 { return .inline(UnsafeRawBufferPointer(start: base, count: 0)) }
        guard off >= heapStart, off &+ len <= pageSize else {
            throw ClusterLeaf.fault(pgno, "column \(j) object \(i): \(len) bytes at \(off) run outside the heap [\(heapStart), \(pageSize))")
        }
        return .inline(UnsafeRawBufferPointer(start: base + off, count: len))
    }

    /// The stored form of column `j` (`j < columnCount`), object `i`.
    /// - Complexity: O(1)
    @inlinable
    func cell(_ j: Int, _ i: Int, kind: ColumnKind) throws(StorageError) -> StoredCell {
        if isNull(j, i) { return .value(.null) }
        let v = valuesOffset(j)
        switch kind {
        case .bool: return .value(.bool(bit(v, i)))
        case .int: return .value(.int(int(j, i)))
        case .float: return .value(.float(Float(bitPattern: u32(v &+ 4 &* i))))
        case .double: return .value(.double(Double(bitPattern: u64(v &+ 8 &* i))))
        case .timestamp:
            return .value(.timestamp(seconds: Int64(bitPattern: u64(v &+ 8 &* i)),
                                     nanoseconds: Int32(bitPattern: u32(v &+ 8 &* count &+ 4 &* i))))
        case .decimal128, .uuid: return .value(.bytes16(u64(v &+ 16 &* i), u64(v &+ 16 &* i &+ 8)))
        case .objectId: return .value(.bytes12(u64(v &+ 12 &* i), u32(v &+ 12 &* i &+ 8)))
        case .link: return .value(.link(u64(v &+ 8 &* i)))
        case .collection: return .value(.root(TreeRoot.decode(from: base + (v &+ 24 &* i))))
        case .string, .binary, .mixed, .collectionInRow:
            switch try bytesRef(j, i) {
            case .inline(let bytes): return .value(.bytes(Array(bytes)))
            case .overflow(let ref, let length): return .overflow(ref, length: length)
            }
        }
    }

    @usableFromInline @inline(never)
    static func fault(_ pgno: PageNumber, _ what: String) -> StorageError {
        .corrupt("cluster page \(pgno): \(what)")
    }
}

/// A string or binary value as a page holds it.
@usableFromInline
enum StoredBytes {
    case inline(UnsafeRawBufferPointer)
    case overflow(PageRef, length: UInt64)
}

/// A value as a decoded cluster holds it: large byte values stay references to their overflow
/// chain, which is read only when asked for and freed only when the value goes.
@usableFromInline
enum StoredCell: Hashable {
    case value(CellValue)
    case overflow(PageRef, length: UInt64)

    @inlinable
    var isNull: Bool { if case .value(.null) = self { return true } else { return false } }

    /// Bytes this value takes in the heap.
    @inlinable
    var heapBytes: Int {
        switch self {
        case .value(.bytes(let b)): return b.count
        case .overflow: return ClusterLayout.overflowRefSize
        default: return 0
        }
    }
}
