// Reading objects: whether one exists, the keys and count of a class, property values, and the
// objects that link to one.
import CoveStorage
import Glibc
import Synchronization

extension ObjectStore {
    package func exists(_ cls: ObjectSchema, _ objectKey: Int64) throws(CoveError) -> Bool {
        guard objectKey >= 0 else { return false }
        return try exists(in: try table(cls, holding: objectKey), objectKey)
    }

    /// Whether the object with key `objectKey` (not negative) is in `t`. Inlined, so that
    /// passing the table costs no retain and release.
    @inline(__always)
    private func exists(in t: Table, _ objectKey: Int64) throws(CoveError) -> Bool {
        if t.pending.position(of: UInt64(objectKey)) != nil { return true }
        return try locate(t, objectKey) != nil
    }

    /// Where an object's row is: the table's last location when it is the object's (the table
    /// not edited since, which drops it), else found (in the cluster of the last location
    /// first: objects are often read in key order) and kept as the last location, its columns
    /// starting to load at once, as reading one property of an object is mostly followed by
    /// others.
    @inline(__always)
    func locate(_ t: Table, _ objectKey: Int64) throws(CoveError) -> ClusterLocation? {
        if let located = t.located, located.key == UInt64(objectKey) { return located }
        let found: ClusterLocation?
        do { found = try t.clusters.pointee.locateInPlace(UInt64(objectKey), near: t.located) } catch { throw CoveError(error) }
        guard let found else { return nil }
        t.located = found
        return found
    }

    package func count(_ cls: ObjectSchema) throws(CoveError) -> UInt64 {
        try table(cls).tree.count
    }

    /// Every object key of a class, ascending.
    package func objectKeys(_ cls: ObjectSchema) throws(CoveError) -> [Int64] {
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

    package func get(_ cls: ObjectSchema, _ objectKey: Int64, _ property: Property) throws(CoveError) -> Value {
        let t = try table(cls, holding: objectKey)
        if property.isBacklinks {
            throw CoveError(.wrongType, "property '\(property.name)' of class '\(cls.className)' is backlinks, not a single value")
        }
        return try value(try storedCell(t, objectKey, column: try column(property, in: t)), of: property)
    }

    /// A stored cell as the value of `property` (a link names its target class by key).
    func value(_ cell: CellValue, of property: Property) throws(CoveError) -> Value {
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
    package func get(_ cls: ObjectSchema, _ objectKey: Int64, named name: String) throws(CoveError) -> Value {
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
    package func get(_ cls: ObjectSchema, _ objectKey: Int64, propertyKey: Int64) throws(CoveError) -> Value {
        let t = try table(cls, holding: objectKey)
        return try get(t, objectKey, propertyAt: try t.position(ofPropertyKey: propertyKey))
    }

    /// Whether the object with key `objectKey` of the class whose key is `classKey` exists: as
    /// `exists(_:_:)`, the class found by its key (`.notFound` for a key no visible class has).
    package func exists(classKey: UInt32, _ objectKey: Int64) throws(CoveError) -> Bool {
        guard objectKey >= 0 else {
            _ = try visibleObjectSchema(classKey: classKey)
            return false
        }
        return try exists(in: try table(classKey: classKey, holding: objectKey), objectKey)
    }

    /// The value of the property whose key is `propertyKey` of the object with key `objectKey`
    /// of the class whose key is `classKey`: as `get(_:_:propertyKey:)`, the class found by its
    /// key (`.notFound` for a key no visible class has, `.invalidated` for an object that does
    /// not exist).
    package func get(classKey: UInt32, _ objectKey: Int64, propertyKey: Int64) throws(CoveError) -> Value {
        let t = try table(classKey: classKey, holding: objectKey)
        return try get(t, objectKey, propertyAt: try t.position(ofPropertyKey: propertyKey))
    }

    /// The objects of `sourceClass` whose link `property` points at `objectKey`, one per link:
    /// a source whose list holds the target twice is there twice (as Realm counts backlinks).
    /// In source-key order, a source's repeats together.
    package func backlinks(to objectKey: Int64, from sourceClass: ObjectSchema, via property: Property) throws(CoveError) -> [Int64] {
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
    func backlinkEntries(_ prefix: [UInt8], from sourceClass: ObjectSchema,
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
}
