// The catalog: the byte-keyed tree at the root of every version, where the object layer keeps
// its schema record and the roots of its tables and indexes. Every entry is self-describing
// enough that verify() can walk its pages without the schema (see `catalogPageWalker`).
import CoveStorage
import Glibc

/// Keys of the catalog tree. The first byte says what the entry is.
package enum CatalogKey {
    static let schemaTag: UInt8 = 0x01
    package static let tableTag: UInt8 = 0x02
    package static let primaryKeyTag: UInt8 = 0x03
    package static let backlinksTag: UInt8 = 0x04
    package static let indexTag: UInt8 = 0x05
    package static let collectionsTag: UInt8 = 0x06

    /// The schema record: schema version, keys and the notation.
    static let schema: [UInt8] = [schemaTag]

    /// A class's table.
    static func table(_ classKey: UInt32) -> [UInt8] {
        key(tableTag, UInt64(classKey), 4)
    }

    /// A class's primary-key index: index key of the value -> object key.
    static func primaryKey(_ classKey: UInt32) -> [UInt8] {
        key(primaryKeyTag, UInt64(classKey), 4)
    }

    /// The reverse of one link property: (target key, source key) pairs.
    static func backlinks(sourceClass: UInt32, property: Int64) -> [UInt8] {
        key(backlinksTag, UInt64(sourceClass), 4, UInt64(bitPattern: property), 8)
    }

    /// A secondary index: (index key of the value, object key) pairs.
    static func index(_ classKey: UInt32, property: Int64) -> [UInt8] {
        key(indexTag, UInt64(classKey), 4, UInt64(bitPattern: property), 8)
    }

    /// A class's collection area: the small lists, sets and maps of its objects, each one
    /// entry (object key, property key) -> the collection's elements (see `InlineCollection`).
    static func collections(_ classKey: UInt32) -> [UInt8] {
        key(collectionsTag, UInt64(classKey), 4)
    }

    /// `tag`, then `first` in `firstBytes` big-endian bytes and `second` in `secondBytes`: built
    /// in one array (keys are made at every lookup of a table or index).
    private static func key(_ tag: UInt8, _ first: UInt64, _ firstBytes: Int, _ second: UInt64 = 0, _ secondBytes: Int = 0) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 1 + firstBytes + secondBytes) { out, count in
            out[0] = tag
            store(first, bytes: firstBytes, into: out, at: 1)
            store(second, bytes: secondBytes, into: out, at: 1 + firstBytes)
            count = 1 + firstBytes + secondBytes
        }
    }

    static func bigEndian(_ value: UInt64, bytes: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: bytes) { out, count in
            store(value, bytes: bytes, into: out, at: 0)
            count = bytes
        }
    }

    private static func store(_ value: UInt64, bytes: Int, into out: UnsafeMutableBufferPointer<UInt8>, at: Int) {
        for i in 0..<bytes { out[at + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(bytes - 1 - i))) }
    }

    /// The number that `bytes` hold big-endian (as keys store class and object keys).
    static func number<C: Collection>(bigEndian bytes: C) -> UInt64 where C.Element == UInt8 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }
}

/// A table's catalog entry: its root, the next object key, and its columns (the property key and
/// the stored kind of each), so the pages can be walked and the properties found without
/// guessing; for a class with a range primary-key index, the index's open range may follow.
///
///     TableRoot (32) | next object key u64 | column count u32 | per column: property key i64,
///     kind u8, nullable u8 | optional open range: first u64, object key i64, count u64,
///     stored u64
package struct TableEntry: Equatable {
    package var root: TableRoot
    var nextObjectKey: UInt64
    package var columns: [(property: Int64, spec: ColumnSpec)]
    /// The last range of the primary-key index as it has grown beyond the tree: the tree holds
    /// the range at `range.first` with `stored` keys, the table `range.count` of them. Objects
    /// created with the next id and the next object key grow it in the entry, which every such
    /// commit writes anyway, instead of in the index's page (ObjectStore+PrimaryKey.swift).
    var openRange: OpenPrimaryKeyRange?

    package static func == (a: TableEntry, b: TableEntry) -> Bool {
        a.root == b.root && a.nextObjectKey == b.nextObjectKey && a.openRange == b.openRange
            && a.columns.map(\.property) == b.columns.map(\.property) && a.columns.map(\.spec) == b.columns.map(\.spec)
    }

    /// Bytes of the fixed part before the column list.
    static let columnsOffset = 40

    private var encodedSize: Int {
        Self.columnsOffset + 4 + columns.count * 10 + (openRange == nil ? 0 : OpenPrimaryKeyRange.encodedSize)
    }

    private func encode(into base: UnsafeMutableRawPointer) {
        root.encode(into: base)
        base.storeBytes(of: nextObjectKey.littleEndian, toByteOffset: 32, as: UInt64.self)
        Self.encodeColumns(columns, into: base + Self.columnsOffset)
        openRange?.encode(into: base + Self.columnsOffset + 4 + columns.count * 10)
    }

    /// Calls `body` with the entry's bytes in temporary memory (on the stack for an entry of
    /// a usual size): what a commit writes into the catalog without allocating.
    package func withEncoded<R>(_ body: (UnsafeRawBufferPointer) throws(StorageError) -> R) throws(StorageError) -> R {
        let size = encodedSize
        let result = withUnsafeTemporaryAllocation(byteCount: size, alignment: 8) { out in
            encode(into: out.baseAddress!)
            return Result { () throws(StorageError) -> R in try body(UnsafeRawBufferPointer(out)) }
        }
        return try result.get()
    }

    /// The column list as an entry stores it: count u32, then per column property key i64,
    /// kind u8, nullable u8.
    static func encodedColumns(_ columns: [(property: Int64, spec: ColumnSpec)]) -> [UInt8] {
        let size = 4 + columns.count * 10
        return [UInt8](unsafeUninitializedCapacity: size) { out, count in
            encodeColumns(columns, into: UnsafeMutableRawPointer(out.baseAddress!))
            count = size
        }
    }

    private static func encodeColumns(_ columns: [(property: Int64, spec: ColumnSpec)], into base: UnsafeMutableRawPointer) {
        base.storeBytes(of: UInt32(columns.count).littleEndian, toByteOffset: 0, as: UInt32.self)
        for (i, c) in columns.enumerated() {
            let o = 4 + i * 10
            base.storeBytes(of: c.property.littleEndian, toByteOffset: o, as: Int64.self)
            base.storeBytes(of: c.spec.kind.rawValue, toByteOffset: o + 8, as: UInt8.self)
            base.storeBytes(of: c.spec.nullable ? 1 : 0, toByteOffset: o + 9, as: UInt8.self)
        }
    }

    /// The entry in `bytes` with the columns of `shape`, or nil when its column list is not
    /// `shape`'s (which the caller decodes the long way).
    /// - Throws: `.corrupt` for a malformed open range.
    static func decode(_ b: UnsafeRawBufferPointer, columnsOf shape: TableShape) throws(StorageError) -> TableEntry? {
        let result = shape.columnBytes.withUnsafeBytes { c in
            Result { () throws(StorageError) -> TableEntry? in
                guard b.count >= columnsOffset + c.count,
                      memcmp(b.baseAddress! + columnsOffset, c.baseAddress!, c.count) == 0 else { return nil }
                return try entry(b, columnsEnd: columnsOffset + c.count, columns: shape.columns)
            }
        }
        return try result.get()
    }

    package static func decode(_ bytes: UnsafeRawBufferPointer) throws(StorageError) -> TableEntry {
        guard bytes.count >= columnsOffset + 4, let p = bytes.baseAddress else {
            throw .corrupt("catalog: a table entry of \(bytes.count) bytes is too short")
        }
        let count = Int(UInt32(littleEndian: p.loadUnaligned(fromByteOffset: columnsOffset, as: UInt32.self)))
        guard count <= 0xFFFF, bytes.count >= columnsOffset + 4 + count * 10 else {
            throw .corrupt("catalog: a table entry of \(bytes.count) bytes does not hold its \(count) columns")
        }
        var columns: [(property: Int64, spec: ColumnSpec)] = []
        for i in 0..<count {
            let o = columnsOffset + 4 + i * 10
            let key = Int64(littleEndian: p.loadUnaligned(fromByteOffset: o, as: Int64.self))
            guard let kind = ColumnKind(rawValue: p.load(fromByteOffset: o + 8, as: UInt8.self)) else {
                throw .corrupt("catalog: column \(i) of a table has an unknown kind")
            }
            columns.append((key, ColumnSpec(kind, nullable: p.load(fromByteOffset: o + 9, as: UInt8.self) != 0)))
        }
        return try entry(bytes, columnsEnd: columnsOffset + 4 + count * 10, columns: columns)
    }

    /// The entry whose column list (`columns`, already read) ends at `columnsEnd`: what follows
    /// it must be nothing or an open range.
    private static func entry(_ b: UnsafeRawBufferPointer, columnsEnd: Int, columns: [(property: Int64, spec: ColumnSpec)]) throws(StorageError) -> TableEntry {
        guard b.count == columnsEnd || b.count == columnsEnd + OpenPrimaryKeyRange.encodedSize else {
            throw .corrupt("catalog: a table entry of \(b.count) bytes does not hold its \(columns.count) columns")
        }
        let p = b.baseAddress!
        return TableEntry(root: TableRoot.decode(from: p),
                          nextObjectKey: UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 32, as: UInt64.self)),
                          columns: columns,
                          openRange: b.count == columnsEnd ? nil : try OpenPrimaryKeyRange.decode(from: p + columnsEnd))
    }
}

/// The open range of a range primary-key index as a table entry keeps it (see
/// `TableEntry.openRange`).
struct OpenPrimaryKeyRange: Equatable {
    var range: PrimaryKeyRange
    /// How many keys of the range the index's tree holds (at least one, at most `range.count`).
    var stored: UInt64

    static let encodedSize = 32

    func encode(into p: UnsafeMutableRawPointer) {
        p.storeBytes(of: range.first.littleEndian, toByteOffset: 0, as: UInt64.self)
        p.storeBytes(of: range.objectKey.littleEndian, toByteOffset: 8, as: Int64.self)
        p.storeBytes(of: range.count.littleEndian, toByteOffset: 16, as: UInt64.self)
        p.storeBytes(of: stored.littleEndian, toByteOffset: 24, as: UInt64.self)
    }

    static func decode(from p: UnsafeRawPointer) throws(StorageError) -> OpenPrimaryKeyRange {
        let first = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        let objectKey = Int64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: Int64.self))
        let count = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        let stored = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
        let range = PrimaryKeyRange(first: first, objectKey: objectKey, count: count)
        guard range.isWellFormed, stored >= 1, count >= stored else {
            throw .corrupt("catalog: the open primary-key range at \(first) (object key \(objectKey), count \(count), \(stored) in the index) is malformed")
        }
        return OpenPrimaryKeyRange(range: range, stored: stored)
    }
}

/// Walks the pages of every catalog entry for `Storage.verify()`: tables (their clusters and
/// overflow chains, the trees of their lists, sets and maps), primary-key indexes and backlink
/// trees, secondary indexes, collection areas.
package let catalogPageWalker: CatalogPageWalker = { snapshot, key, value, page throws(StorageError) in
    guard let tag = key.first else { return }
    switch tag {
    case CatalogKey.tableTag:
        let entry = try TableEntry.decode(value)
        let tree = ClusterTree(store: snapshot, root: entry.root, columns: entry.columns.map(\.spec))
        try tree.forEachPage(page)
        // The lists, sets and maps of its objects: each a tree of its own, checked whole.
        let collectionColumns = entry.columns.indices.filter {
            entry.columns[$0].spec.kind == .collection || entry.columns[$0].spec.kind == .collectionInRow
        }
        if collectionColumns.isEmpty { return }
        try tree.forEachCluster { view throws(StorageError) in
            for i in 0..<view.count {
                for c in collectionColumns {
                    guard let root = ObjectStore.treeRoot(in: try view.value(c, i)) else { continue }
                    let collection = try BTree(store: snapshot, root: root)
                    try collection.verify()
                    try collection.forEachPage(page)
                }
            }
            return true
        }
    case CatalogKey.primaryKeyTag, CatalogKey.backlinksTag, CatalogKey.indexTag, CatalogKey.collectionsTag, CatalogKey.syncTag:
        guard value.count == TreeRoot.encodedSize, let p = value.baseAddress else {
            throw .corrupt("catalog: an index entry of \(value.count) bytes")
        }
        // Secondary indexes and backlinks are byte-keyed; a primary-key index is byte-keyed or,
        // for a required int key, a UInt64-keyed map of ranges: the root page says which.
        let root = TreeRoot.decode(from: p)
        if root.page.isNone { return }
        let tree = try BTree(store: snapshot, root: root)
        try tree.forEachPage(page)
    default:
        return
    }
}
