// ObjectStore: the object layer over one transaction. It finds tables and indexes through the
// catalog, reads and writes objects' properties, keeps the primary-key index and the backlink
// trees right through every write, and at commit writes the changed roots back to the catalog.
import CoveStorage
import Glibc
import Synchronization

/// Objects over one transaction's pages: a read snapshot, or a write transaction.
package final class ObjectStore {
    let pages: TransactionPages
    /// Every class of the file (a migration's `deleteData` may take some out before commit).
    package var schema: Schema
    var catalog: BTree<TransactionPages>
    /// The tables this transaction reached: the first apart, since most transactions reach one
    /// (no dictionary to make), the others by class key.
    private var firstTable: Table?
    private var moreTables: [UInt32: Table] = [:]
    /// The table reached last: reading several properties of one object finds it without
    /// hashing.
    private var lastTable: Table?
    /// The collection read last outside a write, with its class, object and property: reading
    /// a list element by element finds its root once instead of at every element. A snapshot
    /// never changes, so it stays right for the store's life; writes never use it.
    var lastReadCollection: (classKey: UInt32?, objectKey: Int64, property: Int64?, collection: StoredCollection)?
    /// Calls `body` with every table this transaction reached.
    func forEachTable(_ body: (Table) throws(CoveError) -> Void) throws(CoveError) {
        if let first = firstTable { try body(first) }
        for t in moreTables.values { try body(t) }
    }
    var trees: [[UInt8]: BTree<TransactionPages>] = [:]
    /// The tree `tree(_:)` returned or `editTree` wrote last, and its key: lookups of one class
    /// by primary key ask for the same index every time, and comparing a key of a few bytes
    /// costs less than hashing it.
    private var lastTree: (key: [UInt8], tree: BTree<TransactionPages>)?
    /// Whether `lastTree` was edited since `trees` last held it (see `saveLastTree`).
    private var lastTreeUnsaved = false
    /// The class `objectSchema(_:)` found last (the schema never changes under a store).
    private var lastClass: ObjectSchema?
    var dirtyTrees: Set<[UInt8]> = []
    /// The key `editTree` added to `dirtyTrees` last (an edit of the same tree again adds
    /// nothing); cleared when the set is.
    var lastDirtyTree: [UInt8]?
    /// The inline collection read or written last, with its object key, property key (unique
    /// in the file) and column value: reading a small list element by element finds its entry
    /// in the collection area once. Every write to a collection area updates or clears it.
    var lastInline: (objectKey: Int64, propertyKey: Int64, root: TreeRoot, collection: InlineCollection)?
    /// What this transaction did, for the commit's history record.
    package var changes = ChangeRecord()
    /// The primary keys of the objects this write deleted, kept while the file is synced (nil
    /// otherwise): the changeset names a deleted object by its key, gone from the table by the
    /// commit.
    package var syncDeletedKeys: [ObjectLink: Value]?
    /// The row cells of a create's collections, kept from create to create (emptied) so that
    /// creating objects with collections does not allocate the list each time.
    var rowCellsScratch: [(column: Int, cell: CellValue)] = []
    /// Grows with every write through this store, so results computed before a write in
    /// progress know to run again (they show the write's own changes).
    package var editCount = 0

    /// One class's table as this transaction sees it.
    final class Table {
        let cls: ObjectSchema
        let classKey: UInt32
        /// The catalog key of the class's collection area (`CatalogKey.collections`).
        private(set) lazy var areaKey: [UInt8] = CatalogKey.collections(classKey)
        var entry: TableEntry
        /// The table's clusters; any edit drops the cached location.
        var tree: ClusterTree<TransactionPages> {
            get { clusters.pointee }
            set {
                clusters.pointee = newValue
                located = nil
            }
            _modify {
                located = nil
                yield &clusters.pointee
            }
        }
        /// What `tree` reads and writes, behind a pointer so that reading a located object's
        /// cells borrows the tree in place: a method called on a class's stored property copies
        /// the value first (retaining its store and columns), at every read of a property.
        let clusters: UnsafeMutablePointer<ClusterTree<TransactionPages>>
        /// Where the object read last is, so that reading several of its properties descends
        /// the table once.
        var located: ClusterLocation?
        /// What the columns mean to the class, shared with the realm's other transactions.
        private(set) var shape: TableShape
        var columnOfProperty: [Int64: Int] { shape.columnOfProperty }
        var dirty = false
        /// Objects created but not yet written to `tree`: their keys follow every key in it, so
        /// they go in with one `append` (one encode per cluster page, not per object). A read or
        /// a set of one of them works on its row here (`ObjectStore.table(_:holding:)`), so an
        /// object filled property by property after its create costs no more than one created
        /// with its values; every other read or edit reaches the table through
        /// `ObjectStore.table(_:)`, which writes them first.
        var pending: ClusterBatch
        static let pendingLimit = 2048
        /// What a create needs of the columns (see `TableShape`).
        var defaults: [CellValue] { shape.defaults }
        var primaryKey: (property: Property, column: Int)? { shape.primaryKey }
        var indexed: [(property: Property, column: Int)] { shape.indexed }
        var columnOfPropertyAt: [Int] { shape.columnOfPropertyAt }
        var plainColumnAt: [(column: Int, spec: ColumnSpec)] { shape.plainColumnAt }
        var storesOnlyAt: [Bool] { shape.storesOnlyAt }
        var primaryKeyColumn: Int { shape.primaryKeyColumn }
        var primaryKeySpec: ColumnSpec? { shape.primaryKeySpec }
        /// A row being created, kept between creates so that making one allocates nothing.
        private var scratch: [CellValue] = []
        /// The catalog keys of the class's table entry and of its primary-key index.
        let tableKey: [UInt8]
        let primaryKeyTreeKey: [UInt8]
        /// The last range of a range primary-key index while objects created with the next id
        /// and the next object key grow it in memory, and between transactions in the table
        /// entry (`ObjectStore+PrimaryKey.swift`); the tree holds it with
        /// `openRangeStoredCount` keys until it is closed.
        var openRange: PrimaryKeyRange?
        var openRangeStoredCount: UInt64 = 0

        func writePending() throws(CoveError) {
            if pending.isEmpty { return }
            do { try tree.append(&pending) } catch { throw CoveError(error) }
        }

        /// A row of the columns' defaults, to fill and give back with `returnRow`; with
        /// `fillingEvery` (the caller sets every column) the previous row's values are left in it.
        func takeRow(fillingEvery: Bool = false) -> [CellValue] {
            var row = scratch
            scratch = []
            if row.count != defaults.count { return defaults }
            if fillingEvery { return row }
            for j in 0..<row.count { row[j] = defaults[j] }
            return row
        }

        func returnRow(_ row: [CellValue]) { scratch = row }

        /// The position of the property named `name` in `cls`, whose positions
        /// `columnOfPropertyAt` follows; `.notFound` as `ObjectStore.property` says it.
        func position(ofProperty name: String) throws(CoveError) -> Int {
            guard let i = cls.index(ofProperty: name) else { throw ObjectStore.noProperty(name, in: cls) }
            return i
        }

        /// The position of the property whose key is `key` in `cls`; `.notFound` naming the
        /// class and the key.
        func position(ofPropertyKey key: Int64) throws(CoveError) -> Int {
            guard key >= 0, let i = shape.propertyKeyAt.firstIndex(of: key) else {
                throw CoveError(.notFound, "class '\(cls.className)' has no property with key \(key)")
            }
            return i
        }

        /// Works out again what depends on the columns, after a migration added or removed one
        /// (the pending objects were written before: every edit reaches the table through
        /// `ObjectStore.table(_:)`).
        func columnsChanged() {
            shape = TableShape(cls: cls, columns: entry.columns)
            pending = ClusterBatch(specs: shape.specs)
            scratch = []
        }
        /// Set when a migration removed the class: the catalog entry goes at commit.
        var dropped = false

        /// Set between `park()` and `reuse`: the table belongs to no transaction and `clusters`
        /// holds no tree.
        private var parked = false

        init(cls: ObjectSchema, classKey: UInt32, tableKey: [UInt8], entry: TableEntry, shape: TableShape,
             pages: TransactionPages) {
            self.cls = cls
            self.classKey = classKey
            self.entry = entry
            self.shape = shape
            self.tableKey = tableKey
            primaryKeyTreeKey = CatalogKey.primaryKey(classKey)
            clusters = UnsafeMutablePointer.allocate(capacity: 1)
            clusters.initialize(to: ClusterTree(store: pages, root: entry.root, columns: shape.specs))
            pending = ClusterBatch(specs: shape.specs)
            openRange = entry.openRange?.range
            openRangeStoredCount = entry.openRange?.stored ?? 0
        }

        /// Detaches an ended transaction's table from its pages, keeping its memory (the
        /// pending batch, emptied, the row scratch, the catalog keys) for `reuse`. A dropped
        /// table is not parked.
        func park() {
            precondition(!parked && !dropped)
            pending.removeAll()
            clusters.deinitialize(count: 1)
            located = nil
            parked = true
        }

        /// Makes a parked table of the same shape the table of a new transaction, as `init`
        /// would with `entry` and `pages`.
        func reuse(entry: TableEntry, pages: TransactionPages) {
            precondition(parked)
            self.entry = entry
            clusters.initialize(to: ClusterTree(store: pages, root: entry.root, columns: shape.specs))
            parked = false
            dirty = false
            openRange = entry.openRange?.range
            openRangeStoredCount = entry.openRange?.stored ?? 0
        }

        deinit {
            if !parked { clusters.deinitialize(count: 1) }
            clusters.deallocate()
        }
    }

    /// A number no other store of this process has: what outlives a transaction (a
    /// `DynamicCreator`) tells by it whether its store is still the realm's.
    package let serial = ObjectStore.serials.add(1, ordering: .relaxed).newValue
    private static let serials = Atomic<UInt64>(0)

    /// The shapes of this store's tables as earlier transactions of the realm worked them out;
    /// the caller gives a store the same object only while `schema` stays the same.
    let shapes: TableShapes

    deinit {
        // Tables no one else holds stay with the realm for its next transaction
        // (TableShapes.spareTables); objects still pending belonged to a write that was
        // cancelled.
        lastTable = nil
        lastReadCollection = nil
        if var t = firstTable.take() { park(&t) }
        while case (_, var t)? = moreTables.popFirst() { park(&t) }
    }

    private func park(_ t: inout Table) {
        guard isKnownUniquelyReferenced(&t), !t.dropped, shapes.byClassKey[t.classKey] === t.shape else { return }
        t.park()
        shapes.spareTables[t.classKey] = t
    }

    /// The file's classes a realm opened with some of them does not see (usually none):
    /// `visibleObjectSchema(_:)` finds none of them. The store itself works on every class of
    /// the file, so that deleting an object clears the links to it from classes out of sight.
    let hidden: Set<String>

    package init(pages: TransactionPages, schema: Schema, hidden: Set<String> = [], shapes: TableShapes = TableShapes()) {
        self.pages = pages
        self.schema = schema
        self.hidden = hidden
        self.shapes = shapes
        catalog = BTree(store: pages, root: pages.catalogRoot, keyKind: .bytes)
    }

    // MARK: Schema lookups

    package func objectSchema(_ className: String) throws(CoveError) -> ObjectSchema {
        if let last = lastClass, last.className == className { return last }
        guard let cls = schema[className] else {
            throw CoveError(.notFound, "no class '\(className)' in the schema")
        }
        lastClass = cls
        return cls
    }

    /// `objectSchema(_:)` for a class named by the realm's user: one the realm sees.
    package func visibleObjectSchema(_ className: String) throws(CoveError) -> ObjectSchema {
        if !hidden.isEmpty && hidden.contains(className) {
            throw CoveError(.notFound, "no class '\(className)' in the schema")
        }
        return try objectSchema(className)
    }

    /// `objectSchema(classKey:)` for a class the realm's user names by key: one the realm sees
    /// (`.notFound` otherwise).
    package func visibleObjectSchema(classKey: UInt32) throws(CoveError) -> ObjectSchema {
        let cls = try objectSchema(classKey: classKey)
        if !hidden.isEmpty && hidden.contains(cls.className) {
            throw CoveError(.notFound, "no class with key \(classKey) in the schema")
        }
        return cls
    }

    package func objectSchema(classKey: UInt32) throws(CoveError) -> ObjectSchema {
        guard let cls = schema.objectSchema(forClassKey: classKey) else {
            throw CoveError(.notFound, "no class with key \(classKey) in the schema")
        }
        return cls
    }

    package static func property(_ name: String, of cls: ObjectSchema) throws(CoveError) -> Property {
        guard let p = cls[property: name] else { throw noProperty(name, in: cls) }
        return p
    }

    static func noProperty(_ name: String, in cls: ObjectSchema) -> CoveError {
        CoveError(.notFound, "class '\(cls.className)' has no property '\(name)'")
    }

    package func classKey(of cls: ObjectSchema) throws(CoveError) -> UInt32 {
        guard let key = cls.classKey else { throw CoveError(.internal, "class '\(cls.className)' has no key") }
        return key
    }

    // MARK: Tables

    func table(_ cls: ObjectSchema) throws(CoveError) -> Table {
        let t = try tableForAppend(cls)
        try t.writePending()
        return t
    }

    /// The table of an object about to be read or set: its pending objects are left pending
    /// when they include the object (whose row is then read and set in the batch), written
    /// first otherwise, as `table(_:)` does.
    func table(_ cls: ObjectSchema, holding objectKey: Int64) throws(CoveError) -> Table {
        try holding(try tableForAppend(cls), objectKey)
    }

    /// `table(_:holding:)` of the visible class whose key is `classKey`: the table reached last
    /// is taken without looking the class up, as reads of many objects of one class by keys
    /// (the C API's `_by_keys` calls) ask for it at every object.
    func table(classKey: UInt32, holding objectKey: Int64) throws(CoveError) -> Table {
        if let t = lastTable, t.classKey == classKey, hidden.isEmpty { return try holding(t, objectKey) }
        return try table(try visibleObjectSchema(classKey: classKey), holding: objectKey)
    }

    /// `t`, its pending objects written unless `objectKey` is one of them. Inlined: as a call
    /// of its own it cost every read by key a retain and a release of the table.
    @inline(__always)
    private func holding(_ t: Table, _ objectKey: Int64) throws(CoveError) -> Table {
        if objectKey < 0 || t.pending.position(of: UInt64(objectKey)) == nil { try t.writePending() }
        return t
    }

    /// The table, its pending objects left pending (a create only needs its next key).
    func table(forCreate cls: ObjectSchema) throws(CoveError) -> Table {
        try tableForAppend(cls)
    }

    /// The table without writing its pending objects: for adding more of them.
    func tableForAppend(_ cls: ObjectSchema) throws(CoveError) -> Table {
        let key = try classKey(of: cls)
        if let t = lastTable, t.classKey == key { return t }
        if let t = firstTable, t.classKey == key {
            lastTable = t
            return t
        }
        if let t = moreTables[key] {
            lastTable = t
            return t
        }
        let t: Table
        do {
            // A parked table of an earlier transaction lends its catalog key; its shape, when
            // the entry lists the same columns, lets the entry be read without building any.
            let spare = shapes.spareTables.removeValue(forKey: key)
            let cached = shapes.byClassKey[key]
            let tableKey = spare?.tableKey ?? CatalogKey.table(key)
            let read = try catalog.withValue(tableKey) {
                bytes throws(StorageError) -> (entry: TableEntry, shape: TableShape?) in
                if let cached, let e = try TableEntry.decode(bytes, columnsOf: cached) { return (e, cached) }
                return (try TableEntry.decode(bytes), nil)
            }
            if let read, let shape = read.shape, let spare, spare.shape === shape {
                spare.reuse(entry: read.entry, pages: pages)
                t = spare
            } else if let read {
                let shape = read.shape ?? TableShape(cls: cls, columns: read.entry.columns)
                if read.shape == nil { shapes.byClassKey[key] = shape }
                t = Table(cls: cls, classKey: key, tableKey: tableKey, entry: read.entry, shape: shape, pages: pages)
            } else {
                let entry = TableEntry(root: .empty, nextObjectKey: 0, columns: Self.columns(of: cls))
                t = Table(cls: cls, classKey: key, tableKey: tableKey, entry: entry,
                          shape: TableShape(cls: cls, columns: entry.columns), pages: pages)
            }
        } catch {
            throw CoveError(error)
        }
        if firstTable == nil { firstTable = t } else { moreTables[key] = t }
        lastTable = t
        return t
    }

    /// The columns of a new table: one per stored property, in declared order.
    static func columns(of cls: ObjectSchema) -> [(property: Int64, spec: ColumnSpec)] {
        cls.properties.compactMap { p in
            guard let spec = p.columnSpec, let key = p.key else { return nil }
            return (property: key, spec: spec)
        }
    }

    func column(_ property: Property, in table: Table) throws(CoveError) -> Int {
        guard let key = property.key, let c = table.columnOfProperty[key] else {
            throw CoveError(.internal, "property '\(property.name)' of class '\(table.cls.className)' has no column")
        }
        return c
    }

    // MARK: Catalog trees (indexes, backlinks)

    /// The catalog tree at `key` as this transaction sees it. A tree with pages has the key kind
    /// its root page records; an empty one gets `emptyKind`.
    func tree(_ key: [UInt8], emptyKind: BTreeKeyKind = .bytes) throws(CoveError) -> BTree<TransactionPages> {
        if let last = lastTree, last.key == key { return last.tree }
        saveLastTree()
        if let t = trees[key] {
            lastTree = (key, t)
            return t
        }
        let t: BTree<TransactionPages>
        do {
            var root = TreeRoot.empty
            if let bytes = try catalog.get(key), bytes.count == TreeRoot.encodedSize {
                root = bytes.withUnsafeBytes { TreeRoot.decode(from: $0.baseAddress!) }
            }
            t = root.page.isNone ? BTree(store: pages, root: root, keyKind: emptyKind) : try BTree(store: pages, root: root)
        } catch {
            throw CoveError(error)
        }
        trees[key] = t
        lastTree = (key, t)
        return t
    }

    /// Writes the last tree back into `trees` when an edit left it there alone.
    @inline(__always)
    func saveLastTree() {
        guard lastTreeUnsaved, let last = lastTree else { return }
        trees[last.key] = last.tree
        lastTreeUnsaved = false
    }

    /// Replaces the cached tree at `key`, which must hold no pages, by an empty one of `kind`.
    func resetEmptyTree(_ key: [UInt8], kind: BTreeKeyKind) {
        saveLastTree()
        trees[key] = BTree(store: pages, root: .empty, keyKind: kind)
        lastTree = nil
    }

    func editTree(_ key: [UInt8], _ body: (inout BTree<TransactionPages>) throws(StorageError) -> Void) throws(CoveError) {
        var t = try tree(key)
        do {
            try body(&t)
        } catch {
            throw CoveError(error)
        }
        // Kept as the last tree alone until another is looked up (an edit of the same tree
        // again, the common case, then costs no dictionary write).
        lastTree = (key, t)
        lastTreeUnsaved = true
        if lastDirtyTree != key {
            dirtyTrees.insert(key)
            lastDirtyTree = key
        }
    }

    /// Set for the store of a frozen realm: writes say so rather than "not in a write".
    package var isFrozen = false

    /// Whether this store wrote the schema record (its realm then reads it again after commit).
    package var wroteSchemaRecord = false
}
