// What a migration does to the stored data, inside the one write transaction that also writes
// the new schema: renames move a property's cells (and its backlink tree) to the new property;
// afterwards every column, table, index and backlink tree the new schema no longer names is
// freed, embedded objects left without an owner are deleted, and the primary-key and secondary
// indexes of changed properties are rebuilt (a duplicate primary key fails the migration).
import CoveStorage

extension ObjectStore {
    /// Moves the values of `old` (of the old schema) into `new` (same shape), for every object of
    /// `cls`. The old column is left at its defaults, so dropping it frees nothing of the moved
    /// values; the old backlink tree becomes the new one.
    package func moveProperty(_ cls: ObjectSchema, from old: Property, to new: Property) throws(CoveError) {
        guard let oldKey = old.key, let newKey = new.key else { throw CoveError(.internal, "a property without key") }
        let t = try table(cls)
        guard let from = t.columnOfProperty[oldKey], let to = t.columnOfProperty[newKey] else {
            throw CoveError(.internal, "class '\(cls.className)': no column for '\(old.name)' or '\(new.name)'")
        }
        let empty = t.entry.columns[from].spec.defaultValue
        for key in try objectKeys(cls) {
            do {
                let cell = try t.tree.get(UInt64(bitPattern: key), column: from)
                try t.tree.set(UInt64(bitPattern: key), column: to, cell)
                try t.tree.set(UInt64(bitPattern: key), column: from, empty)
            } catch {
                throw CoveError(error)
            }
        }
        t.dirty = true
        if old.keepsBacklinks {
            let classKey = try classKey(of: cls)
            let oldTree = try tree(CatalogKey.backlinks(sourceClass: classKey, property: oldKey))
            let newTreeKey = CatalogKey.backlinks(sourceClass: classKey, property: newKey)
            try editTree(newTreeKey) { (t) throws(StorageError) in t = oldTree }
            // The pages now belong to the new entry: forget the old one without freeing them.
            try editTree(CatalogKey.backlinks(sourceClass: classKey, property: oldKey)) { (t) throws(StorageError) in
                t = BTree(store: t.store, root: .empty, keyKind: .bytes)
            }
        }
    }

    /// Frees what the old schema had and the new one does not, and rebuilds the indexes whose
    /// property changed. Runs after the migration callback.
    /// - Throws: `.duplicateKey` when a new or changed primary key is not unique.
    package func finishMigration(from oldSchema: Schema) throws(CoveError) {
        for oldCls in oldSchema.classes {
            guard let classKey = oldCls.classKey else { continue }
            guard let cls = schema.objectSchema(forClassKey: classKey) else {
                try dropTable(oldCls)
                continue
            }
            let t = try table(cls)
            let keep = Set(cls.properties.compactMap(\.key))
            for p in oldCls.properties where !p.isBacklinks {
                guard let key = p.key, !keep.contains(key), let column = t.columnOfProperty[key] else { continue }
                try dropColumnData(cls, t, column: column, property: p)
                do { try t.tree.removeColumn(column) } catch { throw CoveError(error) }
                t.entry.columns.remove(at: column)
                t.columnsChanged()
                t.dirty = true
                if p.isIndexed && !p.isPrimaryKey {
                    try dropTree(CatalogKey.index(classKey, property: key))
                }
                if p.keepsBacklinks { try dropTree(CatalogKey.backlinks(sourceClass: classKey, property: key)) }
            }
            // Indexes over properties that are new to this class (a new key) were built from
            // defaults before the callback wrote values: rebuild them.
            let oldKeys = Set(oldCls.properties.compactMap(\.key))
            for p in indexedProperties(cls) where !oldKeys.contains(p.key ?? -1) {
                guard let key = p.key else { continue }
                try dropTree(CatalogKey.index(classKey, property: key))
                for object in try objectKeys(cls) {
                    try updateIndex(cls, p, try get(cls, object, p), object, remove: false)
                }
            }
            if oldCls.primaryKeyProperty?.key != cls.primaryKeyProperty?.key {
                try rebuildPrimaryKey(cls)
            }
        }
    }

    /// Frees the collection trees of a dropped column and deletes the embedded objects it
    /// owned.
    private func dropColumnData(_ cls: ObjectSchema, _ t: Table, column: Int, property p: Property) throws(CoveError) {
        let embeddedTarget = p.type.objectClassName.flatMap { schema[$0] }.flatMap { $0.isEmbedded ? $0 : nil }
        guard p.collection != .none || embeddedTarget != nil else { return }
        for key in try objectKeys(cls) {
            let cell: CellValue
            do { cell = try t.tree.get(UInt64(bitPattern: key), column: column) } catch { throw CoveError(error) }
            var children: [Int64] = []
            switch cell {
            case .link(let child): children.append(Int64(bitPattern: child))
            case _ where p.collection != .none:
                let held = try Self.collectionCell(cell, p, cls)
                if held == .empty { break }
                var stored = try collection(held, cls, key, p, p.collection)
                if embeddedTarget != nil {
                    for case .link(let l) in try collectionValues(stored) { children.append(l.objectKey) }
                }
                switch held {
                case .area:
                    lastInline = nil
                    let entry = Self.inlineKey(key, p)
                    try editTree(CatalogKey.collections(try classKey(of: cls))) { (area) throws(StorageError) in
                        _ = try area.remove(entry)
                    }
                case .tree:
                    do { try stored.removeAll() } catch { throw CoveError(error) }
                case .row, .empty:
                    break
                }
                let empty = t.entry.columns[column].spec.defaultValue
                do { try t.tree.set(UInt64(bitPattern: key), column: column, empty) } catch { throw CoveError(error) }
            default: break
            }
            if let target = embeddedTarget {
                for child in children where try exists(target, child) { try delete(target, child) }
            }
        }
    }

    /// Frees a whole table of a class the new schema removed, with its collections and every
    /// catalog tree of the class (primary key, indexes, backlinks of its links and mixed
    /// values), and sets to null the mixed values elsewhere that held its objects.
    private func dropTable(_ oldCls: ObjectSchema) throws(CoveError) {
        guard let classKey = oldCls.classKey else { return }
        let t = try table(oldCls)
        let collectionColumns = t.entry.columns.indices.filter {
            t.entry.columns[$0].spec.kind == .collection || t.entry.columns[$0].spec.kind == .collectionInRow
        }
        let keys = try objectKeys(oldCls)
        do {
            for key in keys {
                for c in collectionColumns {
                    guard let root = Self.treeRoot(in: try t.tree.get(UInt64(bitPattern: key), column: c)) else { continue }
                    var tree = try BTree(store: pages, root: root)
                    try tree.removeAll()
                }
            }
            try t.tree.removeAll()
        } catch {
            throw CoveError(error)
        }
        try dropTree(CatalogKey.collections(classKey))
        lastInline = nil
        t.dropped = true
        t.dirty = true
        try dropPrimaryKeyIndex(t)
        for p in oldCls.properties {
            guard let key = p.key else { continue }
            if p.keepsBacklinks { try dropTree(CatalogKey.backlinks(sourceClass: classKey, property: key)) }
            if p.isIndexed && !p.isPrimaryKey { try dropTree(CatalogKey.index(classKey, property: key)) }
        }
        // Mixed values of the classes kept that hold its objects become null.
        try unlinkClassFromMixedValues(classKey)
    }

    /// Frees a catalog tree's pages; the catalog entry goes at commit.
    func dropTree(_ key: [UInt8]) throws(CoveError) {
        try editTree(key) { (t) throws(StorageError) in try t.removeAll() }
    }

    /// Builds the primary-key index of `cls` anew from its objects.
    /// - Throws: `.duplicateKey` naming the value two objects share.
    func rebuildPrimaryKey(_ cls: ObjectSchema) throws(CoveError) {
        try dropPrimaryKeyIndex(try table(cls))
        guard let pk = cls.primaryKeyProperty else { return }
        for key in try objectKeys(cls) {
            let value = try get(cls, key, pk)
            if try find(cls, primaryKey: value) != nil {
                throw CoveError(.duplicateKey, "migration: class '\(cls.className)' has two objects with primary key \(value) in '\(pk.name)'")
            }
            try indexPrimaryKey(cls, value, key)
        }
    }
}
