// Secondary indexes: for each indexed property (not the primary key, which has its own unique
// index), a byte-keyed B+tree of (index key of the value, object key) with empty values, kept
// right by every create, set and delete, built for existing objects when a schema adds it, and
// checked against the table by verifyIndexes().
import CoveStorage
#if canImport(Glibc)
import Glibc
#endif

extension ObjectStore {
    /// The properties of `cls` with a secondary index.
    func indexedProperties(_ cls: ObjectSchema) -> [Property] {
        cls.properties.filter(\.hasSecondaryIndex)
    }

    private func indexTreeKey(_ cls: ObjectSchema, _ p: Property) throws(CoveError) -> [UInt8] {
        guard let propertyKey = p.key else { throw CoveError(.internal, "property '\(p.name)' of class '\(cls.className)' has no key") }
        return CatalogKey.index(try classKey(of: cls), property: propertyKey)
    }

    static func indexEntry(_ value: Value, _ objectKey: Int64) -> [UInt8] {
        value.indexKey() + CatalogKey.bigEndian(UInt64(bitPattern: objectKey), bytes: 8)
    }

    /// Adds (or, with `remove`, takes out) the entry of `value` for `objectKey`.
    func updateIndex(_ cls: ObjectSchema, _ p: Property, _ value: Value, _ objectKey: Int64, remove: Bool) throws(CoveError) {
        let entry = Self.indexEntry(value, objectKey)
        if entry.count > BTree<TransactionPages>.maxKeyLength {
            // A value too long for an index key is found by scanning; its entry holds a prefix
            // that sorts it among its neighbours, and a lookup confirms on the stored value.
            let clipped = Array(value.indexKey().prefix(BTree<TransactionPages>.maxKeyLength - 8))
                + CatalogKey.bigEndian(UInt64(bitPattern: objectKey), bytes: 8)
            try editTree(try indexTreeKey(cls, p)) { (t) throws(StorageError) in
                if remove { _ = try t.remove(clipped) } else { _ = try t.put(clipped, []) }
            }
            return
        }
        try editTree(try indexTreeKey(cls, p)) { (t) throws(StorageError) in
            if remove { _ = try t.remove(entry) } else { _ = try t.put(entry, []) }
        }
    }

    /// Takes a deleted row's entries out of its indexes.
    func unindexRow(_ cls: ObjectSchema, _ objectKey: Int64) throws(CoveError) {
        for p in indexedProperties(cls) {
            try updateIndex(cls, p, try get(cls, objectKey, p), objectKey, remove: true)
        }
    }

    /// Builds the indexes a schema change added: an index with no catalog entry over a table
    /// with rows is new (every row of an indexed table has an entry).
    func buildMissingIndexes() throws(CoveError) {
        for cls in schema.classes {
            let properties = indexedProperties(cls)
            if properties.isEmpty { continue }
            if try count(cls) == 0 { continue }
            for p in properties {
                let treeKey = try indexTreeKey(cls, p)
                let present: Bool
                do { present = try catalogContains(treeKey) } catch { throw CoveError(error) }
                if present { continue }
                for key in try objectKeys(cls) {
                    try updateIndex(cls, p, try get(cls, key, p), key, remove: false)
                }
            }
        }
    }

    /// The objects of `cls` whose indexed property `p` equals `value`, ascending.
    /// - Complexity: O(log n + m) for m matches.
    package func indexLookup(_ cls: ObjectSchema, _ p: Property, _ value: Value) throws(CoveError) -> [Int64] {
        let t = try tree(try indexTreeKey(cls, p))
        var prefix = value.indexKey()
        if prefix.count > BTree<TransactionPages>.maxKeyLength - 8 { prefix = Array(prefix.prefix(BTree<TransactionPages>.maxKeyLength - 8)) }
        let exact = prefix.count == value.indexKey().count
        var keys: [Int64] = []
        do {
            let n = prefix.count
            // The prefix padded to whole words, compared a word at a time with each entry's key
            // (entries are the value's key and then the object key, 8 bytes).
            let words = (n + 7) / 8
            let wanted = UnsafeMutableRawPointer.allocate(byteCount: words * 8 + 8, alignment: 8)
            defer { wanted.deallocate() }
            wanted.initializeMemory(as: UInt8.self, repeating: 0, count: words * 8 + 8)
            prefix.withUnsafeBytes { if let b = $0.baseAddress, n > 0 { wanted.copyMemory(from: b, byteCount: n) } }
            try t.forEachKey(from: prefix) { (k: UnsafeRawBufferPointer) -> Bool in
                guard k.count == n + 8, let base = k.baseAddress else { return false }
                var w = 0
                while w + 1 < words {
                    if base.loadUnaligned(fromByteOffset: w * 8, as: UInt64.self) != wanted.load(fromByteOffset: w * 8, as: UInt64.self) { return false }
                    w += 1
                }
                var i = w * 8
                while i < n {
                    if base.load(fromByteOffset: i, as: UInt8.self) != wanted.load(fromByteOffset: i, as: UInt8.self) { return false }
                    i += 1
                }
                keys.append(Int64(bitPattern: UInt64(bigEndian: base.loadUnaligned(fromByteOffset: n, as: UInt64.self))))
                return true
            }
        } catch {
            throw CoveError(error)
        }
        if exact { return keys }
        // Clipped entries: confirm on the stored values.
        var confirmed: [Int64] = []
        for key in keys where try get(cls, key, p) == value { confirmed.append(key) }
        return confirmed
    }

    /// Checks every primary-key and secondary index against its table: one entry per object,
    /// each holding the object's current value. Returns the number of entries checked.
    /// - Throws: `.corrupt` naming class, property and object.
    package func verifyIndexes() throws(CoveError) -> Int {
        var checked = 0
        for cls in schema.classes {
            let rows = try count(cls)
            var indexed = indexedProperties(cls)
            if let pk = cls.primaryKeyProperty { indexed.append(pk) }
            if indexed.isEmpty { continue }
            let keys = try objectKeys(cls)
            for p in indexed {
                let entries = p.isPrimaryKey ? try primaryKeyIndexCount(cls) : try tree(try indexTreeKey(cls, p)).count
                guard entries == rows else {
                    throw CoveError(.corrupt, "index of '\(p.name)' of class '\(cls.className)' has \(entries) entries for \(rows) objects")
                }
                for key in keys {
                    let value = try get(cls, key, p)
                    let found: Bool
                    if p.isPrimaryKey {
                        found = try find(cls, primaryKey: value) == key
                    } else {
                        found = try indexLookup(cls, p, value).contains(key)
                    }
                    guard found else {
                        throw CoveError(.corrupt, "index of '\(p.name)' of class '\(cls.className)' has no entry for object \(key) with value \(value)")
                    }
                    checked += 1
                }
            }
        }
        return checked
    }

    /// Checks every backlink tree against the links its property holds: exactly one entry per
    /// (target, source) pair, whose count (for collections and mixed values) is how many times
    /// the source holds the target (nested collections of mixed values included). Returns the number of entries checked.
    /// - Throws: `.corrupt` naming class, property, target and source.
    package func verifyBacklinks() throws(CoveError) -> Int {
        var checked = 0
        for cls in schema.classes {
            let keys = try objectKeys(cls)
            for p in cls.properties where p.keepsBacklinks && !p.isBacklinks {
                guard let propertyKey = p.key else { continue }
                let counted = Self.countsBacklinks(p)
                var expected = try heldLinks(cls, p, sources: keys)
                let where_ = "backlinks of '\(p.name)' of class '\(cls.className)'"
                let tree = try tree(CatalogKey.backlinks(sourceClass: try classKey(of: cls), property: propertyKey))
                var failure: String?
                do {
                    try tree.forEach(fromPosition: 0) { (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws(StorageError) -> Bool in
                        let entry = Array(key)
                        let count: Int64
                        if counted {
                            guard value.count == 8 else {
                                failure = "\(where_): the entry \(Self.describe(entry)) has a count of \(value.count) bytes"
                                return false
                            }
                            count = Int64(littleEndian: value.loadUnaligned(as: Int64.self))
                        } else {
                            guard value.isEmpty else {
                                failure = "\(where_): the entry \(Self.describe(entry)) has a value of \(value.count) bytes"
                                return false
                            }
                            count = 1
                        }
                        guard let wanted = expected.removeValue(forKey: entry) else {
                            failure = "\(where_): the entry \(Self.describe(entry)) names no link the source holds"
                            return false
                        }
                        guard wanted == count else {
                            failure = "\(where_): the entry \(Self.describe(entry)) counts \(count), the source holds the target \(wanted) times"
                            return false
                        }
                        checked += 1
                        return true
                    }
                } catch {
                    throw CoveError(error)
                }
                if let failure { throw CoveError(.corrupt, failure) }
                if let missing = expected.keys.min(by: { $0.lexicographicallyPrecedes($1) }) {
                    throw CoveError(.corrupt, "\(where_): no entry for \(Self.describe(missing)), a link the source holds")
                }
            }
        }
        return checked
    }

    /// Whether the backlink entries of `p` carry counts: those of collections and mixed values
    /// do, a single link's are empty.
    private static func countsBacklinks(_ p: Property) -> Bool {
        p.collection != .none || p.type == .mixed
    }

    /// The backlink entries the links that `p` of the objects `sources` of `cls` holds call for
    /// (nested collections of mixed values included), each with the number of times its source
    /// holds its target.
    private func heldLinks(_ cls: ObjectSchema, _ p: Property, sources: [Int64]) throws(CoveError) -> [[UInt8]: Int64] {
        var held: [[UInt8]: Int64] = [:]
        for source in sources {
            let values: [Value]
            switch p.collection {
            case .none: values = [try get(cls, source, p)]
            case .list: values = try listValues(cls, source, p)
            case .set: values = try setValues(cls, source, p)
            case .map: values = try mapEntries(cls, source, p).map(\.value)
            }
            for link in values.flatMap(\.nestedLinks) {
                held[Self.backlinkPrefix(p, link) + CatalogKey.bigEndian(UInt64(bitPattern: source), bytes: 8), default: 0] += 1
            }
        }
        return held
    }

    /// Builds every primary-key index, secondary index and backlink tree anew from the objects:
    /// for tables written without them (a salvage copies rows alone), whose catalog holds none.
    /// - Throws: `.duplicateKey` when two objects share a primary key.
    package func rebuildIndexes() throws(CoveError) {
        try requireWrite()
        for cls in schema.classes where cls.primaryKeyProperty != nil {
            try rebuildPrimaryKey(cls)
        }
        try buildMissingIndexes()
        for cls in schema.classes {
            let keys = try objectKeys(cls)
            for p in cls.properties where p.keepsBacklinks && !p.isBacklinks {
                guard let propertyKey = p.key else { continue }
                let entries = try heldLinks(cls, p, sources: keys).sorted { $0.key.lexicographicallyPrecedes($1.key) }
                if entries.isEmpty { continue }
                let counted = Self.countsBacklinks(p)
                try editTree(CatalogKey.backlinks(sourceClass: try classKey(of: cls), property: propertyKey)) { (t) throws(StorageError) in
                    for (entry, count) in entries {
                        _ = try t.put(entry, counted ? withUnsafeBytes(of: count.littleEndian) { Array($0) } : [])
                    }
                }
            }
        }
    }

    /// A backlink entry as target and source keys (and the target's class key when it leads).
    private static func describe(_ entry: [UInt8]) -> String {
        guard entry.count >= 16 else { return "of \(entry.count) bytes" }
        let source = CatalogKey.number(bigEndian: entry[(entry.count - 8)...])
        let target = CatalogKey.number(bigEndian: entry[(entry.count - 16)..<(entry.count - 8)])
        let classPart = entry.count == 20 ? " of class key \(CatalogKey.number(bigEndian: entry[0..<4]))" : ""
        return "(target \(target)\(classPart), source \(source))"
    }
}
