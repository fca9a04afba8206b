// Changing and deleting objects: setting a property (indexes, backlinks and the change record
// kept right), deleting an object and unlinking it everywhere, replacing an embedded child.
import CoveStorage
import Glibc
import Synchronization

extension ObjectStore {
    package func set(_ cls: ObjectSchema, _ objectKey: Int64, _ property: Property, _ value: Value) throws(CoveError) {
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
    package func set(_ cls: ObjectSchema, _ objectKey: Int64, propertyKey: Int64, _ value: Value) throws(CoveError) {
        try requireWrite()
        let t = try table(cls, holding: objectKey)
        let i = try t.position(ofPropertyKey: propertyKey)
        guard t.storesOnlyAt[i], let cell = PropertyCodec.exactCell(value, t.plainColumnAt[i].spec) else {
            return try set(cls, objectKey, t.cls.properties[i], value)
        }
        if objectKey >= 0, let at = t.pending.position(of: UInt64(objectKey)) {
            // Created by this write and not written to the table yet: its row is here, and its
            // insertion covers the write (the change record keeps no modification of an object
            // it inserted).
            do { try t.pending.set(at: at, column: t.plainColumnAt[i].column, cell) } catch { throw CoveError(error) }
            t.dirty = true
            return
        }
        guard try locate(t, objectKey) != nil else { throw invalidated(t.cls, objectKey) }
        try storeCell(t, objectKey, column: t.plainColumnAt[i].column, cell)
        changes.recordModify(t.classKey, objectKey, propertyKey)
    }

    /// Sets the property whose key is `propertyKey` of the object with key `objectKey` of the
    /// class whose key is `classKey`: as `set(_:_:propertyKey:_:)`, the class found by its key
    /// (`.notFound` for a key no visible class has).
    package func set(classKey: UInt32, _ objectKey: Int64, propertyKey: Int64, _ value: Value) throws(CoveError) {
        try set(try table(classKey: classKey, holding: objectKey).cls, objectKey, propertyKey: propertyKey, value)
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
    package func delete(_ cls: ObjectSchema, _ objectKey: Int64) throws(CoveError) {
        try requireWrite()
        let t = try table(cls)
        guard try exists(cls, objectKey) else { throw invalidated(cls, objectKey) }
        if syncDeletedKeys != nil, let pk = cls.primaryKeyProperty {
            syncDeletedKeys?[ObjectLink(classKey: t.classKey, objectKey: objectKey)] = try get(cls, objectKey, pk)
        }
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
        case .none where p.type == .mixed: try set(source, s, p, try get(source, s, p).replacingLinks(to: target))
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
    package func replaceEmbeddedChild(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, with newChild: ObjectSchema?) throws(CoveError) -> Int64? {
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
}
