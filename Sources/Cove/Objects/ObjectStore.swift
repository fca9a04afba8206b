// ObjectStore: the object layer over one transaction. It finds tables and indexes through the
// catalog, reads and writes objects' properties, keeps the primary-key index and the backlink
// trees right through every write, and at commit writes the changed roots back to the catalog.
import CoveStorage
import Glibc
import Synchronization

/// Objects over one transaction's pages: a read snapshot, or a write transaction.
final class ObjectStore {
    let pages: TransactionPages
    /// Every class of the file (a migration's `deleteData` may take some out before commit).
    var schema: Schema
    private var catalog: BTree<TransactionPages>
    /// The tables this transaction reached: the first apart, since most transactions reach one
    /// (no dictionary to make), the others by class key.
    private var firstTable: Table?
    private var moreTables: [UInt32: Table] = [:]
    /// The table reached last: reading several properties of one object finds it without
    /// hashing.
    private var lastTable: Table?
    /// Calls `body` with every table this transaction reached.
    private func forEachTable(_ body: (Table) throws(CoveError) -> Void) throws(CoveError) {
        if let first = firstTable { try body(first) }
        for t in moreTables.values { try body(t) }
    }
    private var trees: [[UInt8]: BTree<TransactionPages>] = [:]
    /// The tree `tree(_:)` returned or `editTree` wrote last, and its key: lookups of one class
    /// by primary key ask for the same index every time, and comparing a key of a few bytes
    /// costs less than hashing it.
    private var lastTree: (key: [UInt8], tree: BTree<TransactionPages>)?
    /// Whether `lastTree` was edited since `trees` last held it (see `saveLastTree`).
    private var lastTreeUnsaved = false
    /// The class `objectSchema(_:)` found last (the schema never changes under a store).
    private var lastClass: ObjectSchema?
    private var dirtyTrees: Set<[UInt8]> = []
    /// The key `editTree` added to `dirtyTrees` last (an edit of the same tree again adds
    /// nothing); cleared when the set is.
    private var lastDirtyTree: [UInt8]?
    /// The inline collection read or written last, with its object key, property key (unique
    /// in the file) and column value: reading a small list element by element finds its entry
    /// in the collection area once. Every write to a collection area updates or clears it.
    var lastInline: (objectKey: Int64, propertyKey: Int64, root: TreeRoot, collection: InlineCollection)?
    /// What this transaction did, for the commit's history record.
    var changes = ChangeRecord()
    /// Grows with every write through this store, so results computed before a write in
    /// progress know to run again (they show the write's own changes).
    private(set) var editCount = 0

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
    let serial = ObjectStore.serials.add(1, ordering: .relaxed).newValue
    private static let serials = Atomic<UInt64>(0)

    /// The shapes of this store's tables as earlier transactions of the realm worked them out;
    /// the caller gives a store the same object only while `schema` stays the same.
    let shapes: TableShapes

    deinit {
        // Tables no one else holds stay with the realm for its next transaction
        // (TableShapes.spareTables); objects still pending belonged to a write that was
        // cancelled.
        lastTable = nil
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

    init(pages: TransactionPages, schema: Schema, hidden: Set<String> = [], shapes: TableShapes = TableShapes()) {
        self.pages = pages
        self.schema = schema
        self.hidden = hidden
        self.shapes = shapes
        catalog = BTree(store: pages, root: pages.catalogRoot, keyKind: .bytes)
    }

    // MARK: Schema lookups

    func objectSchema(_ className: String) throws(CoveError) -> ObjectSchema {
        if let last = lastClass, last.className == className { return last }
        guard let cls = schema[className] else {
            throw CoveError(.notFound, "no class '\(className)' in the schema")
        }
        lastClass = cls
        return cls
    }

    /// `objectSchema(_:)` for a class named by the realm's user: one the realm sees.
    func visibleObjectSchema(_ className: String) throws(CoveError) -> ObjectSchema {
        if !hidden.isEmpty && hidden.contains(className) {
            throw CoveError(.notFound, "no class '\(className)' in the schema")
        }
        return try objectSchema(className)
    }

    func objectSchema(classKey: UInt32) throws(CoveError) -> ObjectSchema {
        guard let cls = schema.objectSchema(forClassKey: classKey) else {
            throw CoveError(.notFound, "no class with key \(classKey) in the schema")
        }
        return cls
    }

    static func property(_ name: String, of cls: ObjectSchema) throws(CoveError) -> Property {
        guard let p = cls[property: name] else { throw noProperty(name, in: cls) }
        return p
    }

    static func noProperty(_ name: String, in cls: ObjectSchema) -> CoveError {
        CoveError(.notFound, "class '\(cls.className)' has no property '\(name)'")
    }

    func classKey(of cls: ObjectSchema) throws(CoveError) -> UInt32 {
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
        let t = try tableForAppend(cls)
        if objectKey < 0 || t.pending.position(of: UInt64(objectKey)) == nil { try t.writePending() }
        return t
    }

    /// The table, its pending objects left pending (a create only needs its next key).
    func table(forCreate cls: ObjectSchema) throws(CoveError) -> Table {
        try tableForAppend(cls)
    }

    /// The table without writing its pending objects: for adding more of them.
    private func tableForAppend(_ cls: ObjectSchema) throws(CoveError) -> Table {
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
    private func saveLastTree() {
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

    // MARK: Reads

    func exists(_ cls: ObjectSchema, _ objectKey: Int64) throws(CoveError) -> Bool {
        guard objectKey >= 0 else { return false }
        let t = try table(cls, holding: objectKey)
        if t.pending.position(of: UInt64(objectKey)) != nil { return true }
        return try locate(t, objectKey) != nil
    }

    /// Where an object's row is: the table's last location when it is the object's (the table
    /// not edited since, which drops it), else found (in the cluster of the last location
    /// first: objects are often read in key order) and kept as the last location, its columns
    /// starting to load at once, as reading one property of an object is mostly followed by
    /// others.
    @inline(__always)
    private func locate(_ t: Table, _ objectKey: Int64) throws(CoveError) -> ClusterLocation? {
        if let located = t.located, located.key == UInt64(objectKey) { return located }
        let found: ClusterLocation?
        do { found = try t.clusters.pointee.locateInPlace(UInt64(objectKey), near: t.located) } catch { throw CoveError(error) }
        guard let found else { return nil }
        t.located = found
        return found
    }

    func count(_ cls: ObjectSchema) throws(CoveError) -> UInt64 {
        try table(cls).tree.count
    }

    /// Every object key of a class, ascending.
    func objectKeys(_ cls: ObjectSchema) throws(CoveError) -> [Int64] {
        let t = try table(cls)
        var keys: [Int64] = []
        keys.reserveCapacity(Int(t.tree.count))
        do {
            try t.tree.forEachKey(from: nil) { k in
                keys.append(Int64(bitPattern: k))
                return true
            }
        } catch {
            throw CoveError(error)
        }
        return keys
    }

    func get(_ cls: ObjectSchema, _ objectKey: Int64, _ property: Property) throws(CoveError) -> Value {
        let t = try table(cls, holding: objectKey)
        if property.isBacklinks {
            throw CoveError(.wrongType, "property '\(property.name)' of class '\(cls.className)' is backlinks, not a single value")
        }
        return try value(try storedCell(t, objectKey, column: try column(property, in: t)), of: property)
    }

    /// A stored cell as the value of `property` (a link names its target class by key).
    private func value(_ cell: CellValue, of property: Property) throws(CoveError) -> Value {
        if property.collection != .none {
            throw CoveError(.wrongType, "property '\(property.name)' is a \(property.collection.rawValue), not a single value")
        }
        var target: UInt32 = 0
        if let name = property.type.objectClassName {
            target = try classKey(of: try objectSchema(name))
        }
        return try PropertyCodec.value(cell, for: property, targetClassKey: target)
    }

    /// The value of the property named `name` (`DynamicObject`'s reads): found by position in
    /// the table's class, its column by that position, without hashing its key.
    func get(_ cls: ObjectSchema, _ objectKey: Int64, named name: String) throws(CoveError) -> Value {
        let t = try table(cls, holding: objectKey)
        return try get(t, objectKey, propertyAt: try t.position(ofProperty: name))
    }

    /// The value of the property at position `i` of `t`'s class: a plain column's cell read as
    /// its kind says, without the property; other properties through `value(_:of:)`.
    private func get(_ t: Table, _ objectKey: Int64, propertyAt i: Int) throws(CoveError) -> Value {
        let plain = t.plainColumnAt[i]
        if plain.column >= 0, let v = PropertyCodec.plainValue(try storedCell(t, objectKey, column: plain.column), plain.spec.kind) {
            return v
        }
        let p = t.cls.properties[i]
        let c = t.columnOfPropertyAt[i]
        // Without a column of its own (backlinks), the general path says why.
        if c < 0 { return try get(t.cls, objectKey, p) }
        return try value(try storedCell(t, objectKey, column: c), of: p)
    }

    /// The value of the property whose key is `propertyKey` (the C API's `_by_key` reads):
    /// found by position without hashing, a plain column's cell read as its kind says.
    func get(_ cls: ObjectSchema, _ objectKey: Int64, propertyKey: Int64) throws(CoveError) -> Value {
        let t = try table(cls, holding: objectKey)
        return try get(t, objectKey, propertyAt: try t.position(ofPropertyKey: propertyKey))
    }

    /// The objects of `sourceClass` whose link `property` points at `objectKey`, one per link:
    /// a source whose list holds the target twice is there twice (as Realm counts backlinks).
    /// In source-key order, a source's repeats together.
    func backlinks(to objectKey: Int64, from sourceClass: ObjectSchema, via property: Property) throws(CoveError) -> [Int64] {
        try backlinkEntries(CatalogKey.bigEndian(UInt64(bitPattern: objectKey), bytes: 8), from: sourceClass, via: property)
            .flatMap { repeatElement($0.source, count: $0.count) }
    }

    /// The objects of `sourceClass` whose link or mixed `property` holds `link`, each once
    /// however many times it holds it.
    func linkingSources(of link: ObjectLink, from sourceClass: ObjectSchema, via property: Property) throws(CoveError) -> [Int64] {
        try backlinkEntries(Self.backlinkPrefix(property, link), from: sourceClass, via: property).map(\.source)
    }

    /// The backlink entries of `property` that start with `prefix`: the object key of each
    /// entry's target when the prefix stops before it (0 when it names it), its source, and how
    /// many times the source holds the target (a single link's entry carries no count: once).
    private func backlinkEntries(_ prefix: [UInt8], from sourceClass: ObjectSchema,
                                 via property: Property) throws(CoveError) -> [(target: Int64, source: Int64, count: Int)] {
        guard let propertyKey = property.key else { return [] }
        let t = try tree(CatalogKey.backlinks(sourceClass: try classKey(of: sourceClass), property: propertyKey))
        let length = (property.type == .mixed ? 4 : 0) + 16
        let targetAt = length - 16
        func number(_ k: UnsafeRawBufferPointer, _ from: Int) -> Int64 {
            Int64(bitPattern: CatalogKey.number(bigEndian: k[from..<(from + 8)]))
        }
        var entries: [(target: Int64, source: Int64, count: Int)] = []
        var damaged = false
        do {
            try t.forEach(from: prefix, reverse: false) { (k: UnsafeRawBufferPointer, v: UnsafeRawBufferPointer) -> Bool in
                guard k.count == length, k.prefix(prefix.count).elementsEqual(prefix) else { return false }
                var count = 1
                if v.count == 8 {
                    let stored = Int64(littleEndian: v.loadUnaligned(as: Int64.self))
                    guard stored > 0, stored <= Int64(Int32.max) else { damaged = true; return false }
                    count = Int(stored)
                } else if !v.isEmpty {
                    damaged = true
                    return false
                }
                entries.append((prefix.count > targetAt ? 0 : number(k, targetAt), number(k, length - 8), count))
                return true
            }
        } catch {
            throw CoveError(error)
        }
        if damaged {
            throw CoveError(.corrupt, "backlinks of '\(property.name)' of class '\(sourceClass.className)': an entry's count is damaged")
        }
        return entries
    }

    // MARK: Writes

    /// Set for the store of a frozen realm: writes say so rather than "not in a write".
    var isFrozen = false

    func requireWrite() throws(CoveError) {
        if isFrozen { throw CoveError(.frozen, "a frozen realm cannot be written") }
        if !pages.isWritable { throw CoveError(.notInWrite, "cannot write outside a write transaction") }
        editCount &+= 1
    }

    /// Creates an object with its primary key and the values of `values` (property names with
    /// their values; one naming the primary key is skipped: the key is `primaryKey`). Plain
    /// single values and links go into the one row insert; the links' backlinks follow it.
    /// Everything is checked before the object exists, so a bad value leaves nothing half made.
    func create(_ cls: ObjectSchema, primaryKey: Value?, values: [(String, Value)] = []) throws(CoveError) -> Int64 {
        try create(cls, primaryKey: primaryKey) { (t, row, links) throws(CoveError) in
            for (name, v) in values { try fill(t, at: try t.position(ofProperty: name), v, &row, &links) }
        }
    }

    /// Property names resolved once against a class, for creating many objects of it from
    /// values given by position (`create(_:_:)`): what a prepared statement is to SQL.
    final class CreatePlan {
        let cls: ObjectSchema
        /// The position in `cls.properties` of each name.
        let positions: [Int]
        /// Which value is the primary key's, when the class has one.
        let primaryKeyValue: Int?
        /// Whether every name but the primary key is a plain single value (neither link nor
        /// mixed), so that values of exactly their columns' types go straight into the row.
        let allPlain: Bool

        init(cls: ObjectSchema, positions: [Int], primaryKeyValue: Int?) {
            self.cls = cls
            self.positions = positions
            self.primaryKeyValue = primaryKeyValue
            allPlain = positions.allSatisfy { i in
                let p = cls.properties[i]
                return p.isPrimaryKey || (!p.isLink && p.type != .mixed)
            }
        }

        /// Refuses `values` unless there is one for each name.
        func requireValues(for values: [Value]) throws(CoveError) {
            guard values.count == positions.count else {
                throw CoveError(.invalidArgument, "\(values.count) values for \(positions.count) properties of class '\(cls.className)'")
            }
        }
    }

    /// Resolves `names` for `create(_:_:)`: each must be a single-value property of `cls`, named
    /// once, the primary key among them when the class has one.
    /// - Throws: `.notFound` (a property), `.invalidArgument` (an embedded class, a backlinks
    ///   property, a name given twice, the primary key missing), `.wrongType` (a collection).
    func createPlan(_ cls: ObjectSchema, properties names: [String]) throws(CoveError) -> CreatePlan {
        try Self.requireCreatable(cls)
        var positions: [Int] = []
        positions.reserveCapacity(names.count)
        var primaryKeyValue: Int?
        for (j, name) in names.enumerated() {
            guard let i = cls.index(ofProperty: name) else { throw Self.noProperty(name, in: cls) }
            let p = cls.properties[i]
            try Self.requireSingleValue(p, of: cls)
            if let k = positions.firstIndex(of: i) {
                throw CoveError(.invalidArgument, "property '\(name)' is named twice (names \(k) and \(j) of class '\(cls.className)')")
            }
            if p.isPrimaryKey { primaryKeyValue = j }
            positions.append(i)
        }
        if let pk = cls.primaryKey, primaryKeyValue == nil {
            throw CoveError(.invalidArgument, "class '\(cls.className)' has primary key '\(pk)': the property names must include it")
        }
        return CreatePlan(cls: cls, positions: positions, primaryKeyValue: primaryKeyValue)
    }

    /// Creates an object of `plan`'s class from `values`, one for each of its names in order,
    /// as `create(_:primaryKey:values:)` does.
    /// - Throws: as that, and `.invalidArgument` for a wrong number of values.
    func create(_ plan: CreatePlan, _ values: [Value]) throws(CoveError) -> Int64 {
        try create(plan, values, collections: [], prepared: [])
    }

    /// `create(_:_:)`, the object's collections `collections` filled with their prepared
    /// elements: a small one in a row of its own goes into the new row itself, any other is
    /// assigned once the object exists.
    func create(_ plan: CreatePlan, _ values: [Value], collections: [Property], prepared: [PreparedCollection]) throws(CoveError) -> Int64 {
        try plan.requireValues(for: values)
        var inRow: [(column: Int, cell: CellValue)] = []
        var later: [Int] = []
        if !collections.isEmpty {
            let t = try tableForAppend(plan.cls)
            for i in collections.indices {
                let column = try self.column(collections[i], in: t)
                if t.entry.columns[column].spec.kind == .collectionInRow, prepared[i].inline.bytes.count <= InlineCollection.rowLimit {
                    if prepared[i].inline.count > 0 { inRow.append((column, Self.rowValue(.row(prepared[i].inline)))) }
                } else {
                    later.append(i)
                }
            }
        }
        let key: Int64
        if plan.allPlain, let made = try createPlain(plan, values, extra: inRow) {
            key = made
        } else {
            key = try create(plan.cls, primaryKey: plan.primaryKeyValue.map { values[$0] }) { (t, row, links) throws(CoveError) in
                for j in 0..<values.count { try fill(t, at: plan.positions[j], values[j], &row, &links) }
                for (column, cell) in inRow { row[column] = cell }
            }
        }
        for i in collections.indices {
            if later.contains(i) {
                try assignCollection(plan.cls, key, collections[i], prepared[i])
            } else if collections[i].keepsBacklinks {
                for v in prepared[i].stored { try countBacklink(plan.cls, collections[i], source: key, v, 1) }
            }
        }
        return key
    }

    /// `create(_:_:)` for a plan whose names are all plain (`CreatePlan.allPlain`), when every
    /// value but the primary key is of exactly its column's type (nulls where allowed):
    /// straight into the row, with no closure, no list of links and no property copied. Nil
    /// (nothing done) for a value to convert or refuse, which the general path does with its
    /// message.
    private func createPlain(_ plan: CreatePlan, _ values: [Value], extra: [(column: Int, cell: CellValue)] = []) throws(CoveError) -> Int64? {
        try requireWrite()
        let t = try tableForAppend(plan.cls)
        var primaryKey: Value?
        if let j = plan.primaryKeyValue { primaryKey = try checkPrimaryKey(values[j], of: t) }
        // Values for as many properties as there are columns fill every column (each name is
        // another property, and only properties with a column reach this loop).
        var row = t.takeRow(fillingEvery: extra.isEmpty && values.count == t.defaults.count)
        for (column, cell) in extra { row[column] = cell }
        for j in 0..<values.count where j != plan.primaryKeyValue {
            let plain = t.plainColumnAt[plan.positions[j]]
            guard plain.column >= 0, let cell = PropertyCodec.exactCell(values[j], plain.spec) else {
                t.returnRow(row)
                return nil
            }
            row[plain.column] = cell
        }
        return try insertRow(plan.cls, t, primaryKey: primaryKey, row: &row)
    }

    /// The object of `plan`'s class whose primary key `values` give, its other values set from
    /// them, or a new object made from them; whether it was made.
    /// - Throws: as `create(_:_:)`, and `.invalidArgument` for a class without primary key.
    func createOrUpdate(_ plan: CreatePlan, _ values: [Value]) throws(CoveError) -> Bool {
        guard let pk = plan.primaryKeyValue else {
            throw CoveError(.invalidArgument, "class '\(plan.cls.className)' has no primary key to update by")
        }
        try plan.requireValues(for: values)
        guard let key = try find(plan.cls, primaryKey: values[pk]) else {
            _ = try create(plan, values)
            return true
        }
        for j in 0..<values.count where j != pk {
            try set(plan.cls, key, plan.cls.properties[plan.positions[j]], values[j])
        }
        return false
    }

    /// What both creates share: checks the class and primary key, lets `fill` put the values
    /// into a row of defaults (and the links among them, checked, into its list), inserts the
    /// row, then files the links' backlinks under the new object's key.
    private func create(_ cls: ObjectSchema, primaryKey: Value?,
                        fill: (Table, inout [CellValue], inout [(property: Property, column: Int)]) throws(CoveError) -> Void) throws(CoveError) -> Int64 {
        try requireWrite()
        try Self.requireCreatable(cls)
        let t = try tableForAppend(cls)
        var normalizedPK: Value?
        if let v = primaryKey {
            normalizedPK = try checkPrimaryKey(v, of: t)
        } else if let p = t.primaryKey?.property {
            throw CoveError(.invalidArgument, "class '\(cls.className)' has primary key '\(p.name)': give its value")
        }
        var row = t.takeRow()
        var links: [(property: Property, column: Int)] = []
        do throws(CoveError) {
            try fill(t, &row, &links)
        } catch {
            t.returnRow(row)
            throw error
        }
        // What the link properties finally hold (a property named twice keeps its last value).
        var linked: [(property: Property, cell: CellValue)] = []
        for (p, c) in links where !linked.contains(where: { $0.property.key == p.key }) {
            linked.append((p, row[c]))
        }
        let key = try insertRow(cls, t, primaryKey: normalizedPK, row: &row)
        // The targets learn of the new object here, from the cells kept above: reading the row
        // back would write the table's pending objects at every create.
        for (p, cell) in linked {
            if p.isLink {
                try updateBacklink(cls, p, source: key, old: .null, new: cell)
            } else {
                let value = try PropertyCodec.value(cell, for: p, targetClassKey: 0)
                try updateMixedBacklink(cls, p, source: key, old: .null, new: value)
            }
        }
        return key
    }

    /// Refuses to create objects of an embedded class on their own.
    static func requireCreatable(_ cls: ObjectSchema) throws(CoveError) {
        if cls.isEmbedded {
            throw CoveError(.invalidArgument, "class '\(cls.className)' is embedded: create its objects in place through their parent")
        }
    }

    /// Refuses a property that takes no single value: backlinks (computed) and collections
    /// (filled through the collection).
    static func requireSingleValue(_ p: Property, of cls: ObjectSchema) throws(CoveError) {
        if p.isBacklinks {
            throw CoveError(.invalidArgument, "property '\(p.name)' of class '\(cls.className)' is backlinks: it is computed and cannot be set")
        }
        if p.collection != .none {
            throw CoveError(.wrongType, "property '\(p.name)' of class '\(cls.className)' is a \(p.collection.rawValue) (\(p.typeNotation)): fill it through the \(p.collection.rawValue), not as one value")
        }
    }

    /// Puts value `v` of the property at position `i` of `t`'s class into `row`; a link property
    /// (or a mixed one given a link) is checked first and also named in `links`, whose backlinks
    /// the create files once the object has its key. Skips the primary key (the create has it).
    private func fill(_ t: Table, at i: Int, _ v: Value, _ row: inout [CellValue], _ links: inout [(property: Property, column: Int)]) throws(CoveError) {
        let plain = t.plainColumnAt[i]
        if plain.column >= 0, let cell = PropertyCodec.exactCell(v, plain.spec) {
            row[plain.column] = cell
            return
        }
        let cls = t.cls
        let p = cls.properties[i]
        if p.isPrimaryKey { return }
        try Self.requireSingleValue(p, of: cls)
        if !p.isLink && !(p.type == .mixed && v.isLink) {
            let c = t.columnOfPropertyAt[i]
            row[c >= 0 ? c : try column(p, in: t)] = try PropertyCodec.cell(v, for: p, of: cls)
            return
        }
        let cell = try PropertyCodec.cell(v, for: p, of: cls)
        try checkMixedLink(v, p, cls)
        if let target = p.type.objectClassName {
            if try objectSchema(target).isEmbedded, !v.isNull {
                throw CoveError(.invalidArgument, "property '\(p.name)' of class '\(cls.className)' holds an embedded \(target): create it in place (createEmbedded), not by linking an existing object")
            }
            try checkLinkTarget(v, target, p, cls)
        }
        let stored = t.columnOfPropertyAt[i]
        let c = stored >= 0 ? stored : try column(p, in: t)
        row[c] = cell
        links.append((p, c))
    }

    /// Whether the catalog (or this transaction's edits) holds a non-empty tree at `key`.
    func catalogContains(_ key: [UInt8]) throws(StorageError) -> Bool {
        saveLastTree()
        if let t = trees[key] { return !t.root.page.isNone }
        return try catalog.contains(key)
    }

    /// Adds a row of defaults to `cls`'s table under the next object key: embedded objects are
    /// made this way by their parent.
    func insertRow(_ cls: ObjectSchema) throws(CoveError) -> Int64 {
        let t = try tableForAppend(cls)
        var row = t.takeRow()
        return try insertRow(cls, t, primaryKey: nil, row: &row)
    }

    /// Adds `row` (taken from `t` by `takeRow`, and given back) to the table under the next
    /// object key, with `primaryKey` (checked) in its column. The key goes into its unique index
    /// first, under the object key the row gets: one descent finds a duplicate and files the
    /// new object.
    private func insertRow(_ cls: ObjectSchema, _ t: Table, primaryKey: Value?, row: inout [CellValue]) throws(CoveError) -> Int64 {
        defer { t.returnRow(row) }
        let key = t.entry.nextObjectKey
        let objectKey = Int64(bitPattern: key)
        if let v = primaryKey {
            let c = t.primaryKeyColumn
            guard c >= 0, let spec = t.primaryKeySpec else { throw CoveError(.internal, "class '\(cls.className)' has no primary-key column") }
            // checkPrimaryKey let through only values of exactly the key's type.
            guard let cell = PropertyCodec.exactCell(v, spec) else {
                throw CoveError(.internal, "class '\(cls.className)': primary key \(v) does not fit its column")
            }
            row[c] = cell
            guard try insertPrimaryKey(t, cls, v, objectKey) else {
                throw CoveError(.duplicateKey, "class '\(cls.className)' already has an object with primary key \(v)")
            }
        }
        do { try t.pending.append(key, row) } catch {
            if let v = primaryKey { try unindexPrimaryKey(cls, v) }
            throw CoveError(error)
        }
        t.entry.nextObjectKey = key + 1
        t.dirty = true
        for (p, c) in t.indexed {
            let value = try PropertyCodec.value(row[c], for: p, targetClassKey: 0)
            try updateIndex(cls, p, value, objectKey, remove: false)
        }
        changes.recordInsert(t.classKey, objectKey)
        if t.pending.count >= Table.pendingLimit { try t.writePending() }
        return objectKey
    }

    func set(_ cls: ObjectSchema, _ objectKey: Int64, _ property: Property, _ value: Value) throws(CoveError) {
        try requireWrite()
        try Self.requireSingleValue(property, of: cls)
        let t = try table(cls, holding: objectKey)
        let c = try column(property, in: t)
        let old = try storedCell(t, objectKey, column: c)
        var cellValue = value
        if property.isPrimaryKey {
            cellValue = try checkPrimaryKey(value, of: t)
        }
        let cell = try PropertyCodec.cell(cellValue, for: property, of: cls)
        if let targetName = property.type.objectClassName {
            if try objectSchema(targetName).isEmbedded {
                guard case .null = value else {
                    throw CoveError(.invalidArgument, "property '\(property.name)' of class '\(cls.className)' holds an embedded \(targetName): create it in place (createEmbedded), not by linking an existing object")
                }
                try replaceEmbeddedChild(cls, objectKey, property, with: nil)
                return
            }
            try checkLinkTarget(value, targetName, property, cls)
        }
        if property.isPrimaryKey && old != cell {
            if let other = try find(cls, primaryKey: cellValue), other != objectKey {
                throw CoveError(.duplicateKey, "class '\(cls.className)' already has an object with primary key \(value)")
            }
            let oldValue = try PropertyCodec.value(old, for: property, targetClassKey: 0)
            try unindexPrimaryKey(cls, oldValue)
            try indexPrimaryKey(cls, cellValue, objectKey)
        }
        if property.isLink {
            try updateBacklink(cls, property, source: objectKey, old: old, new: cell)
        } else if property.type == .mixed {
            try checkMixedLink(value, property, cls)
            let oldValue = try PropertyCodec.value(old, for: property, targetClassKey: 0)
            try updateMixedBacklink(cls, property, source: objectKey, old: oldValue, new: value)
        }
        if property.isIndexed && !property.isPrimaryKey {
            let oldValue = try self.value(old, of: property)
            try updateIndex(cls, property, oldValue, objectKey, remove: true)
            let newValue = try PropertyCodec.value(cell, for: property, targetClassKey: 0)
            try updateIndex(cls, property, newValue, objectKey, remove: false)
        }
        try storeCell(t, objectKey, column: c, cell)
        recordModify(t, objectKey, property)
    }

    /// Sets the property whose key is `propertyKey` (the C API's `_by_key` writes). A value of
    /// exactly the type of a plain, unindexed column is only stored (in the object's pending
    /// row when it is still pending) and recorded; anything else takes `set(_:_:_:_:)`.
    func set(_ cls: ObjectSchema, _ objectKey: Int64, propertyKey: Int64, _ value: Value) throws(CoveError) {
        try requireWrite()
        let t = try table(cls, holding: objectKey)
        let i = try t.position(ofPropertyKey: propertyKey)
        guard t.storesOnlyAt[i], let cell = PropertyCodec.exactCell(value, t.plainColumnAt[i].spec) else {
            return try set(cls, objectKey, t.cls.properties[i], value)
        }
        if objectKey < 0 || t.pending.position(of: UInt64(objectKey)) == nil {
            guard try locate(t, objectKey) != nil else { throw invalidated(t.cls, objectKey) }
        }
        try storeCell(t, objectKey, column: t.plainColumnAt[i].column, cell)
        changes.recordModify(t.classKey, objectKey, propertyKey)
    }

    /// Stores `cell` in column `c` of an object and marks its table changed: in the object's
    /// pending row when it is still pending, else in the table's clusters. Where the object is
    /// is asked here, not kept from the set's start: the checks between (a link target's
    /// existence, an embedded child's create) may have written the pending objects.
    func storeCell(_ t: Table, _ objectKey: Int64, column c: Int, _ cell: CellValue) throws(CoveError) {
        do {
            if objectKey >= 0, let i = t.pending.position(of: UInt64(objectKey)) {
                try t.pending.set(at: i, column: c, cell)
            } else {
                try t.tree.set(UInt64(objectKey), column: c, cell)
            }
        } catch {
            throw CoveError(error)
        }
        t.dirty = true
    }

    /// Notes in the change record that `property` of an object was written.
    func recordModify(_ t: Table, _ objectKey: Int64, _ property: Property) {
        if let key = property.key { changes.recordModify(t.classKey, objectKey, key) }
    }

    /// Deletes an object: removes it from its table, its indexes and every collection that
    /// holds it, sets single links, map values and mixed values (single, or in a list or map)
    /// that point at it to null, frees its collections, and deletes the embedded objects it
    /// owns.
    func delete(_ cls: ObjectSchema, _ objectKey: Int64) throws(CoveError) {
        try requireWrite()
        let t = try table(cls)
        guard try exists(cls, objectKey) else { throw invalidated(cls, objectKey) }
        // What it holds: its collections (emptied and freed, embedded elements deleted) and its
        // single links (leaving the backlink trees of their targets; embedded targets deleted).
        for p in cls.properties where !p.isBacklinks {
            if p.collection != .none {
                try dropCollection(cls, objectKey, p)
            } else if p.type == .mixed {
                let old = try PropertyCodec.value(try storedCell(t, objectKey, column: try column(p, in: t)), for: p, targetClassKey: 0)
                try countBacklink(cls, p, source: objectKey, old, -1)
            } else if p.isLink {
                let c = try column(p, in: t)
                let old = try storedCell(t, objectKey, column: c)
                try updateBacklink(cls, p, source: objectKey, old: old, new: .null)
                if case .link(let child) = old, let target = p.type.objectClassName, try objectSchema(target).isEmbedded {
                    try delete(try objectSchema(target), Int64(bitPattern: child))
                }
            }
        }
        try unlinkEverywhere(ObjectLink(classKey: try classKey(of: cls), objectKey: objectKey), of: cls)
        if let pk = cls.primaryKeyProperty {
            let value = try get(cls, objectKey, pk)
            try unindexPrimaryKey(cls, value)
        }
        try unindexRow(cls, objectKey)
        // Where `exists` found it, unless the table was edited since.
        guard let at = try locate(t, objectKey) else { throw invalidated(cls, objectKey) }
        do { try t.tree.remove(at: at) } catch { throw CoveError(error) }
        t.dirty = true
        changes.recordDelete(t.classKey, objectKey)
    }

    /// Takes `target`, an object of `cls` about to go, out of every value that holds it, in
    /// every class: single links and single mixed values become null, as do map elements and
    /// elements of lists of mixed; lists of links and sets lose it. Each change is recorded.
    func unlinkEverywhere(_ target: ObjectLink, of cls: ObjectSchema) throws(CoveError) {
        for source in schema.classes {
            for p in source.properties where p.type == .mixed || (p.isLink && p.type.objectClassName == cls.className) {
                for s in try linkingSources(of: target, from: source, via: p) {
                    try unlink(target, from: source, s, p)
                }
            }
        }
    }

    /// Takes every object of the class `classKey`, which a migration removes, out of the mixed
    /// values that hold one (no typed link of the new schema names the class): one scan of
    /// each mixed property's entries under the class's key.
    func unlinkClassFromMixedValues(_ classKey: UInt32) throws(CoveError) {
        let prefix = CatalogKey.bigEndian(UInt64(classKey), bytes: 4)
        for source in schema.classes {
            for p in source.properties where p.type == .mixed {
                for (target, s, _) in try backlinkEntries(prefix, from: source, via: p) {
                    try unlink(ObjectLink(classKey: classKey, objectKey: target), from: source, s, p)
                }
            }
        }
    }

    /// Takes `target` out of property `p` of object `s` of `source`: a single value becomes
    /// null; a list or map element of mixed becomes null, a set element or a list element of
    /// links goes.
    private func unlink(_ target: ObjectLink, from source: ObjectSchema, _ s: Int64, _ p: Property) throws(CoveError) {
        switch p.collection {
        case .none where p.type == .mixed: try set(source, s, p, .null)
        case .none: try clearLinkCell(source, s, p)
        case .list, .set, .map: try removeFromCollection(source, s, p, .link(target))
        }
    }

    /// Sets a single link cell to null without deleting what it pointed at (the target is the
    /// object being deleted).
    private func clearLinkCell(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property) throws(CoveError) {
        let t = try table(cls)
        let c = try column(p, in: t)
        let old = try storedCell(t, objectKey, column: c)
        try updateBacklink(cls, p, source: objectKey, old: old, new: .null)
        do { try t.tree.set(UInt64(objectKey), column: c, .null) } catch { throw CoveError(error) }
        t.dirty = true
        recordModify(t, objectKey, p)
    }

    /// Makes a new embedded object the value of single link `p` (or none, for nil), deleting the
    /// one it replaces. Returns the new object's key.
    @discardableResult
    func replaceEmbeddedChild(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, with newChild: ObjectSchema?) throws(CoveError) -> Int64? {
        let t = try table(cls, holding: objectKey)
        let c = try column(p, in: t)
        let old = try storedCell(t, objectKey, column: c)
        var cell = CellValue.null
        var childKey: Int64?
        if let newChild {
            let key = try insertRow(newChild)
            childKey = key
            cell = .link(UInt64(bitPattern: key))
        }
        try updateBacklink(cls, p, source: objectKey, old: old, new: cell)
        try storeCell(t, objectKey, column: c, cell)
        recordModify(t, objectKey, p)
        if case .link(let oldChild) = old, let target = p.type.objectClassName {
            try delete(try objectSchema(target), Int64(bitPattern: oldChild))
        }
        return childKey
    }

    // MARK: Index upkeep

    func checkLinkTarget(_ value: Value, _ targetName: String, _ property: Property, _ cls: ObjectSchema) throws(CoveError) {
        guard case .link(let link) = value else { return }
        let target = try objectSchema(targetName)
        guard link.classKey == (try classKey(of: target)) else {
            let given = (try? objectSchema(classKey: link.classKey).className) ?? "class key \(link.classKey)"
            throw CoveError(.wrongType, "property '\(property.name)' of class '\(cls.className)' links to \(targetName), got an object of \(given)")
        }
        guard try exists(target, link.objectKey) else {
            throw CoveError(.invalidArgument, "property '\(property.name)' of class '\(cls.className)': the \(targetName) object \(link.objectKey) does not exist")
        }
    }

    func updateBacklink(_ cls: ObjectSchema, _ p: Property, source: Int64, old: CellValue, new: CellValue) throws(CoveError) {
        guard let propertyKey = p.key, old != new else { return }
        let key = CatalogKey.backlinks(sourceClass: try classKey(of: cls), property: propertyKey)
        let sourceBytes = CatalogKey.bigEndian(UInt64(bitPattern: source), bytes: 8)
        try editTree(key) { (t) throws(StorageError) in
            if case .link(let target) = old {
                try t.remove(CatalogKey.bigEndian(target, bytes: 8) + sourceBytes)
            }
            if case .link(let target) = new {
                try t.put(CatalogKey.bigEndian(target, bytes: 8) + sourceBytes, [UInt8]())
            }
        }
    }

    /// The stored value of one column of an object; `.invalidated` when the object is gone.
    /// Reading several columns of one object in a row descends the table once; an object still
    /// pending is read from its row in the batch.
    func storedCell(_ t: Table, _ objectKey: Int64, column: Int) throws(CoveError) -> CellValue {
        guard objectKey >= 0 else { throw invalidated(t.cls, objectKey) }
        if let i = t.pending.position(of: UInt64(objectKey)) { return t.pending.cell(at: i, column: column) }
        guard let found = try locate(t, objectKey) else { throw invalidated(t.cls, objectKey) }
        do { return try t.clusters.pointee.getInPlace(found, column: column) } catch { throw CoveError(error) }
    }

    /// Calls `body` with the bytes of byte column `column` of one object (nil for null): in
    /// place in its page, or those of its pending row.
    func withStoredBytes<R>(_ t: Table, _ objectKey: Int64, column: Int,
                            _ body: (UnsafeRawBufferPointer?) throws(CoveError) -> R) throws(CoveError) -> R {
        guard objectKey >= 0 else { throw invalidated(t.cls, objectKey) }
        if let i = t.pending.position(of: UInt64(objectKey)) {
            switch t.pending.cell(at: i, column: column) {
            case .bytes(let b):
                let result = b.withUnsafeBytes { r in Result { () throws(CoveError) -> R in try body(r) } }
                return try result.get()
            default: return try body(nil)
            }
        }
        guard let found = try locate(t, objectKey) else { throw invalidated(t.cls, objectKey) }
        var failure: CoveError?
        let result: R?
        do {
            result = try t.clusters.pointee.withBytesInPlace(found, column: column) { (bytes) throws(StorageError) -> R? in
                do throws(CoveError) { return try body(bytes) } catch {
                    failure = error
                    return nil
                }
            }
        } catch {
            throw CoveError(error)
        }
        if let failure { throw failure }
        guard let result else { throw CoveError(.internal, "no result from a cell read") }
        return result
    }

    func invalidated(_ cls: ObjectSchema, _ objectKey: Int64) -> CoveError {
        CoveError(.invalidated, "the \(cls.className) object \(objectKey) was deleted")
    }

    // MARK: Commit

    /// Writes every changed table and tree root into the catalog and returns the catalog's root,
    /// for the write transaction to commit.
    func flush() throws(CoveError) -> TreeRoot {
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
    func writeSchemaRecord(_ bytes: [UInt8]) throws(CoveError) {
        try requireWrite()
        do { try catalog.put(CatalogKey.schema, bytes) } catch { throw CoveError(error) }
        wroteSchemaRecord = true
    }

    /// Whether this store wrote the schema record (its realm then reads it again after commit).
    private(set) var wroteSchemaRecord = false

    /// Makes every table of `schema` match its class: new tables for new classes, new columns
    /// for added properties, indexes built for added indexes. Existing data is kept.
    func conformTables() throws(CoveError) {
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
    static func schemaRecord(_ pages: TransactionPages, unlessEqualTo known: [UInt8]?) throws(CoveError) -> [UInt8]? {
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
    static func readSchemaRecord(_ pages: TransactionPages) throws(CoveError) -> [UInt8]? {
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
