// At commit: every changed table and tree root written back into the catalog, the schema record,
// and tables conformed to the schema; the cluster-tree helpers the store edits tables through.
import CoveStorage
import Glibc
import Synchronization

extension ObjectStore {

    /// Writes every changed table and tree root into the catalog and returns the catalog's root,
    /// for the write transaction to commit.
    package func flush() throws(CoveError) -> TreeRoot {
        try forEachTable { t throws(CoveError) in
            try t.writePending()
            keepOpenPrimaryKeyRange(t)
        }
        try forEachTable { t throws(CoveError) in
            guard t.dirty else { return }
            t.entry.root = t.tree.root
            do throws(StorageError) {
                if t.dropped {
                    _ = try catalog.remove(t.tableKey)
                } else {
                    try t.entry.withEncoded { bytes throws(StorageError) in _ = try catalog.put(t.tableKey, bytes) }
                }
            } catch {
                throw CoveError(error)
            }
            t.dirty = false
        }
        saveLastTree()
        do {
            for key in dirtyTrees {
                guard let t = trees[key] else { continue }
                if t.root.page.isNone {
                    try catalog.remove(key)
                } else {
                    var bytes = [UInt8](repeating: 0, count: TreeRoot.encodedSize)
                    bytes.withUnsafeMutableBytes { t.root.encode(into: $0.baseAddress!) }
                    try catalog.put(key, bytes)
                }
            }
            dirtyTrees.removeAll()
            lastDirtyTree = nil
        } catch {
            throw CoveError(error)
        }
        return catalog.root
    }

    /// Stores the schema record (see SchemaRecord) in the catalog.
    package func writeSchemaRecord(_ bytes: [UInt8]) throws(CoveError) {
        try requireWrite()
        do { try catalog.put(CatalogKey.schema, bytes) } catch { throw CoveError(error) }
        wroteSchemaRecord = true
    }

    /// Makes every table of `schema` match its class: new tables for new classes, new columns
    /// for added properties, indexes built for added indexes. Existing data is kept.
    package func conformTables() throws(CoveError) {
        try requireWrite()
        for cls in schema.classes {
            let t = try table(cls)
            for (property, spec) in Self.columns(of: cls) where t.columnOfProperty[property] == nil {
                do { try t.tree.addColumn(spec) } catch { throw CoveError(error) }
                t.entry.columns.append((property: property, spec: spec))
                t.columnsChanged()
                if cls.primaryKeyProperty?.key == property, !(try tree(t.primaryKeyTreeKey)).isEmpty {
                    // A primary key of a new shape: the index files the old values, in the form
                    // of the old type. It starts again empty, in the form of the new one, and
                    // the migration rebuilds it once the callback has set the new values.
                    try dropPrimaryKeyIndex(t)
                }
            }
            t.dirty = true
        }
        try buildMissingIndexes()
    }

    /// The schema record, or nil when there is none or it holds the bytes `known` holds: read in
    /// place, so that the check every transaction makes for another realm's change copies
    /// nothing.
    package static func schemaRecord(_ pages: TransactionPages, unlessEqualTo known: [UInt8]?) throws(CoveError) -> [UInt8]? {
        let catalog = BTree(store: pages, root: pages.catalogRoot, keyKind: .bytes)
        do {
            let changed = try catalog.withValue(CatalogKey.schema) { (stored) throws(StorageError) -> [UInt8]? in
                if let known, known.count == stored.count, stored.count > 0,
                   known.withUnsafeBytes({ memcmp($0.baseAddress!, stored.baseAddress!, stored.count) == 0 }) {
                    return nil
                }
                return Array(stored)
            }
            return changed ?? nil
        } catch {
            throw CoveError(error)
        }
    }

    /// The schema record, or nil when there is none.
    package static func readSchemaRecord(_ pages: TransactionPages) throws(CoveError) -> [UInt8]? {
        try schemaRecord(pages, unlessEqualTo: nil)
    }
}

extension ClusterTree {
    // A non-mutating method called on `pointee` copies the tree first (retaining its store and
    // columns, then releasing them): the pointer's memory could change during the call. Called
    // through these, the tree is borrowed where it is, which halves the cost of reading a cell.

    /// `locate(_:near:)`, with the object's columns starting to load when it is found.
    @inline(__always)
    mutating func locateInPlace(_ key: UInt64, near: ClusterLocation?) throws(StorageError) -> ClusterLocation? {
        guard let found = try locate(key, near: near) else { return nil }
        prefetchRow(found)
        return found
    }

    /// `get(_:column:)`.
    @inline(__always)
    mutating func getInPlace(_ location: ClusterLocation, column: Int) throws(StorageError) -> CellValue {
        try get(location, column: column)
    }

    /// `withBytes(at:column:_:)`.
    @inline(__always)
    mutating func withBytesInPlace<R>(_ location: ClusterLocation, column: Int,
                                      _ body: (UnsafeRawBufferPointer?) throws(StorageError) -> R) throws(StorageError) -> R {
        try withBytes(at: location, column: column, body)
    }
}
