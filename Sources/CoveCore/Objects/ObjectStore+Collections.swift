// Lists, sets and maps. A collection is either inline, its elements one byte string in its
// table's collection area (a byte-keyed B+tree per class, keyed by object and property), or,
// past `InlineCollection.limit` bytes, a B+tree of its own whose root sits in the property's
// column; the column of an inline one holds its element count and a marker. A list's tree is
// keyed by sparse u64 order keys (positions come from the subtree counts), a set's by the
// elements' order-preserving index keys, a map's by its keys' UTF-8 bytes; every value is the
// element's mixed encoding. Links held in collections (of links, or of mixed) keep counted
// backlink entries, so a deleted target can be found and removed, and embedded elements die
// with their owner.
import CoveStorage

extension TreeRoot {
    /// The page version that marks a root as an inline collection's (page 0 is never a tree's).
    static let inlineMarker: UInt64 = 1

    /// The column value of an inline collection of `count` elements.
    static func inline(count: Int) -> TreeRoot {
        TreeRoot(page: PageRef(pgno: 0, version: inlineMarker), count: UInt64(count))
    }

    /// Whether this is an inline collection's column value.
    var isInline: Bool { page.pgno == 0 && page.version == Self.inlineMarker }
}

extension ObjectStore {
    // MARK: Finding a collection

    /// Checks that `p` of `cls` is a collection of `kind` and returns its column.
    private func collectionColumn(_ t: Table, _ p: Property, _ kind: CollectionKind) throws(CoveError) -> Int {
        guard p.collection == kind else {
            let what = p.collection == .none ? "not a collection" : "a \(p.collection.rawValue), not a \(kind.rawValue)"
            throw CoveError(.wrongType, "property '\(p.name)' of class '\(t.cls.className)' is \(p.typeNotation): \(what)")
        }
        return try column(p, in: t)
    }

    /// The key of `p` of `objectKey` in its class's collection area: the object key and the
    /// property key, big-endian (an object's collections side by side, objects in key order).
    static func inlineKey(_ objectKey: Int64, _ p: Property) -> [UInt8] {
        let object = UInt64(bitPattern: objectKey), property = UInt32(truncatingIfNeeded: p.key ?? 0)
        return [UInt8](unsafeUninitializedCapacity: 12) { out, count in
            for i in 0..<8 { out[i] = UInt8(truncatingIfNeeded: object >> (56 - 8 * UInt64(i))) }
            for i in 0..<4 { out[8 + i] = UInt8(truncatingIfNeeded: property >> (24 - 8 * UInt32(i))) }
            count = 12
        }
    }

    /// Puts `bytes` as the entry of `p` of `objectKey` in `area`, its key built on the stack.
    static func putInline(_ area: inout BTree<TransactionPages>, _ objectKey: Int64, _ p: Property,
                          _ bytes: [UInt8]) throws(StorageError) {
        var key = (UInt64(bitPattern: objectKey).bigEndian, UInt32(truncatingIfNeeded: p.key ?? 0).bigEndian)
        let result = withUnsafeBytes(of: &key) { k in
            bytes.withUnsafeBytes { v in
                Result { () throws(StorageError) in _ = try area.put(UnsafeRawBufferPointer(rebasing: k[0..<12]), v) }
            }
        }
        try result.get()
    }

    /// Whether `p` may be kept inline: its property key fits the area's keys.
    static func mayBeInline(_ p: Property) -> Bool {
        guard let key = p.key else { return false }
        return key > 0 && key <= Int64(UInt32.max)
    }

    /// What a collection column holds for one object. A table made since format 6 keeps its
    /// collections in the row (`collectionInRow` columns): nothing when empty, else bytes, tag 1
    /// then the element count (LEB128) and the elements (InlineCollection's encoding), or tag 0
    /// then the `TreeRoot` of a tree of their own. A table made before keeps a `TreeRoot` per
    /// object (`collection` columns), and its small collections in the class's collection area.
    package enum CollectionCell: Equatable {
        case empty
        case tree(TreeRoot)
        /// Inline in the class's collection area, with its element count (`collection` columns).
        case area(TreeRoot)
        /// Inline in the row (`collectionInRow` columns).
        case row(InlineCollection)

        static let rowInlineTag: UInt8 = 1
        static let rowTreeTag: UInt8 = 0

        package static func == (a: CollectionCell, b: CollectionCell) -> Bool {
            switch (a, b) {
            case (.empty, .empty): return true
            case (.tree(let x), .tree(let y)), (.area(let x), .area(let y)): return x == y
            case (.row(let x), .row(let y)): return x.count == y.count && x.bytes == y.bytes
            default: return false
            }
        }
    }

    /// The collection cell `value` holds, for `p` of class `cls`.
    static func collectionCell(_ value: CellValue, _ p: Property, _ cls: ObjectSchema) throws(CoveError) -> CollectionCell {
        switch value {
        case .root(let root):
            if root.isInline { return .area(root) }
            return root.page.isNone ? .empty : .tree(root)
        case .null:
            return .empty
        case .bytes(let b):
            let result = b.withUnsafeBytes { r in Result { () throws(CoveError) -> CollectionCell in try collectionCell(bytes: r, p, cls) } }
            return try result.get()
        default:
            throw CoveError(.corrupt, "property '\(p.name)' of class '\(cls.className)' does not hold a collection")
        }
    }

    /// The collection cell a `collectionInRow` column's bytes `b` hold (nil: null).
    static func collectionCell(bytes b: UnsafeRawBufferPointer?, _ p: Property, _ cls: ObjectSchema) throws(CoveError) -> CollectionCell {
        try collectionCell(rawCell(bytes: b), p, cls)
    }

    /// A `collectionInRow` cell as read from its bytes, before the property gives it meaning:
    /// decoded without the property or class at hand, so that a read in place captures nothing
    /// large.
    enum RawCollectionCell {
        case empty
        case tree(TreeRoot)
        case inline(count: Int, elements: [UInt8])
        case malformed(String)
    }

    static func rawCell(bytes b: UnsafeRawBufferPointer?) -> RawCollectionCell {
        guard let b, !b.isEmpty else { return .empty }
        switch b[0] {
        case CollectionCell.rowTreeTag where b.count == 1 + TreeRoot.encodedSize:
            let root = TreeRoot.decode(from: b.baseAddress! + 1)
            guard !root.page.isNone, root.count > 0 else { return .malformed("an empty tree") }
            return .tree(root)
        case CollectionCell.rowInlineTag:
            var at = 1
            guard let count = try? InlineCollection.readLength(b, at: &at) else { return .malformed("a malformed element count") }
            guard count > 0, count <= b.count else { return .malformed("\(count) elements in \(b.count) bytes") }
            return .inline(count: count, elements: Array(UnsafeRawBufferPointer(rebasing: b[at...])))
        default:
            return .malformed("a cell of \(b.count) bytes with tag \(b[0])")
        }
    }

    static func collectionCell(_ raw: RawCollectionCell, _ p: Property, _ cls: ObjectSchema) throws(CoveError) -> CollectionCell {
        func corrupt(_ message: String) -> CoveError {
            CoveError(.corrupt, "\(p.collection.rawValue) '\(p.name)' of class '\(cls.className)': \(message)")
        }
        switch raw {
        case .empty: return .empty
        case .tree(let root): return .tree(root)
        case .malformed(let message): throw corrupt(message)
        case .inline(let count, let elements):
            do { return .row(try InlineCollection(bytes: elements, count: count, keyed: p.collection != .list)) } catch {
                throw corrupt(error.message)
            }
        }
    }

    /// The root of the tree of its own a collection cell names, if it names one: for walks
    /// that know only the column kinds (verify's page walk, dropping a table).
    package static func treeRoot(in value: CellValue) -> TreeRoot? {
        switch value {
        case .root(let root) where !root.page.isNone:
            return root
        case .bytes(let b) where b.count == 1 + TreeRoot.encodedSize && b[0] == CollectionCell.rowTreeTag:
            let root = b.withUnsafeBytes { TreeRoot.decode(from: $0.baseAddress! + 1) }
            return root.page.isNone ? nil : root
        default:
            return nil
        }
    }

    /// The cell a `collectionInRow` column stores for `cell`.
    package static func rowValue(_ cell: CollectionCell) -> CellValue {
        switch cell {
        case .empty, .area: return .null
        case .tree(let root):
            var out = [UInt8](repeating: 0, count: 1 + TreeRoot.encodedSize)
            out[0] = CollectionCell.rowTreeTag
            out.withUnsafeMutableBytes { root.encode(into: $0.baseAddress! + 1) }
            return .bytes(out)
        case .row(let c):
            var out: [UInt8] = [CollectionCell.rowInlineTag]
            out.reserveCapacity(1 + 10 + c.bytes.count)
            InlineCollection.appendLength(c.count, to: &out)
            out.append(contentsOf: c.bytes)
            return .bytes(out)
        }
    }

    /// The collection `cell` names (the column value of `p` of `objectKey`).
    func collection(_ cell: CollectionCell, _ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ kind: CollectionKind,
                    table t: Table? = nil) throws(CoveError) -> StoredCollection {
        switch cell {
        case .empty:
            return StoredCollection(.inline(InlineCollection(keyed: kind != .list)), kind: kind)
        case .row(let c):
            return StoredCollection(.inline(c), kind: kind)
        case .tree(let root):
            return StoredCollection(.tree(BTree(store: pages, root: root, keyKind: kind == .list ? .u64 : .bytes)), kind: kind)
        case .area(let root):
            if let last = lastInline, last.objectKey == objectKey, last.propertyKey == p.key, last.root == root {
                return StoredCollection(.inline(last.collection), kind: kind)
            }
            let areaKey: [UInt8]
            if let t { areaKey = t.areaKey } else { areaKey = CatalogKey.collections(try classKey(of: cls)) }
            let area = try tree(areaKey)
            do throws(StorageError) {
                guard let bytes = try area.get(Self.inlineKey(objectKey, p)) else {
                    throw StorageError.corrupt("property '\(p.name)' of the \(cls.className) object \(objectKey) holds \(root.count) elements inline, and the collection area has none")
                }
                let c = try InlineCollection(bytes: bytes, count: Int(root.count), keyed: kind != .list)
                if let key = p.key { lastInline = (objectKey, key, root, c) }
                return StoredCollection(.inline(c), kind: kind)
            } catch {
                throw CoveError(error)
            }
        }
    }

    /// The collection cell of `p` of one object.
    func collectionCell(_ t: Table, _ objectKey: Int64, column c: Int, _ p: Property) throws(CoveError) -> CollectionCell {
        if t.entry.columns[c].spec.kind == .collectionInRow {
            // Read in place: a cell naming a tree is decoded without a copy of its bytes.
            let raw = try withStoredBytes(t, objectKey, column: c) { (b) throws(CoveError) -> RawCollectionCell in Self.rawCell(bytes: b) }
            return try Self.collectionCell(raw, p, t.cls)
        }
        return try Self.collectionCell(try storedCell(t, objectKey, column: c), p, t.cls)
    }

    /// The collection `p` (a list, set or map) of one object.
    func collection(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ kind: CollectionKind) throws(CoveError) -> StoredCollection {
        let reading = !pages.isWritable && p.key != nil && cls.classKey != nil
        if reading, let m = lastReadCollection, m.objectKey == objectKey, m.property == p.key, m.classKey == cls.classKey {
            return m.collection
        }
        let t = try table(cls, holding: objectKey)
        let c = try collectionColumn(t, p, kind)
        let stored = try collection(try collectionCell(t, objectKey, column: c, p), cls, objectKey, p, kind, table: t)
        if reading { lastReadCollection = (cls.classKey, objectKey, p.key, stored) }
        return stored
    }

    /// The number of elements of `p` of one object, read from its cell alone.
    func collectionCount(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ kind: CollectionKind) throws(CoveError) -> Int {
        let t = try table(cls, holding: objectKey)
        let c = try collectionColumn(t, p, kind)
        switch try collectionCell(t, objectKey, column: c, p) {
        case .empty: return 0
        case .tree(let root), .area(let root): return Int(root.count)
        case .row(let inline): return inline.count
        }
    }

    /// Runs `body` on collection `p` of one object inside a write, then settles its form and
    /// stores it: inline while its bytes stay within the limit of where it is kept (the row or
    /// the collection area), a tree past that, and inline again once a tree of one leaf shrinks
    /// to half the limit.
    func editCollection<R>(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ kind: CollectionKind,
                           _ body: (inout StoredCollection) throws(CoveError) -> R) throws(CoveError) -> R {
        try requireWrite()
        let t = try table(cls, holding: objectKey)
        let c = try collectionColumn(t, p, kind)
        let before = try collectionCell(t, objectKey, column: c, p)
        var stored = try collection(before, cls, objectKey, p, kind, table: t)
        let result = try body(&stored)
        if t.entry.columns[c].spec.kind == .collectionInRow {
            if let after = try settleInRow(stored, was: before) {
                try storeCell(t, objectKey, column: c, Self.rowValue(after))
            }
        } else {
            let root: TreeRoot
            switch before {
            case .tree(let r), .area(let r): root = r
            case .empty, .row: root = .empty
            }
            let after = try settle(stored, was: root, t, objectKey, p)
            if after != root { try storeCell(t, objectKey, column: c, .root(after)) }
        }
        return result
    }

    /// The cell a `collectionInRow` column takes for `stored`, or nil when it is `before`.
    private func settleInRow(_ stored: StoredCollection, was before: CollectionCell) throws(CoveError) -> CollectionCell? {
        switch stored.form {
        case .inline(let c):
            if !stored.inlineEdited { return nil }
            if c.count == 0 { return before == .empty ? nil : .empty }
            if c.bytes.count <= InlineCollection.rowLimit { return .row(c) }
            do { return .tree(try StoredCollection.tree(from: c, kind: stored.kind, store: pages).root) } catch { throw CoveError(error) }
        case .tree(var tree):
            // A tree comes from a tree cell: unchanged, emptied, still large, or small again.
            if case .tree(let root) = before, tree.root == root { return nil }
            if tree.count == 0 { return .empty }
            guard tree.count * 2 <= UInt64(InlineCollection.rowShrinkLimit) else { return .tree(tree.root) }
            let c: InlineCollection?
            do { c = try StoredCollection.inline(from: tree, kind: stored.kind, limit: InlineCollection.rowShrinkLimit) } catch { throw CoveError(error) }
            guard let c else { return .tree(tree.root) }
            do { try tree.removeAll() } catch { throw CoveError(error) }
            return .row(c)
        }
    }

    /// Stores `stored` in the form its size calls for and returns the column value naming it.
    private func settle(_ stored: StoredCollection, was before: TreeRoot, _ t: Table, _ objectKey: Int64,
                        _ p: Property) throws(CoveError) -> TreeRoot {
        switch stored.form {
        case .inline(let c):
            if !stored.inlineEdited && before.isInline == (c.count > 0) { return before }
            let areaKey = t.areaKey
            lastInline = nil
            if c.count > 0 && c.bytes.count <= InlineCollection.limit && Self.mayBeInline(p) {
                try editTree(areaKey) { (area) throws(StorageError) in try Self.putInline(&area, objectKey, p, c.bytes) }
                let root = TreeRoot.inline(count: c.count)
                if let key = p.key { lastInline = (objectKey, key, root, c) }
                return root
            }
            if before.isInline {
                let entryKey = Self.inlineKey(objectKey, p)
                try editTree(areaKey) { (area) throws(StorageError) in _ = try area.remove(entryKey) }
            }
            if c.count == 0 { return .empty }
            do { return try StoredCollection.tree(from: c, kind: stored.kind, store: pages).root } catch { throw CoveError(error) }
        case .tree(var tree):
            // Only a tree this edit changed, and small enough to be worth a look, moves back.
            guard tree.count > 0, tree.count * 2 <= UInt64(InlineCollection.shrinkLimit), tree.root != before,
                  Self.mayBeInline(p) else { return tree.root }
            let c: InlineCollection?
            do { c = try StoredCollection.inline(from: tree, kind: stored.kind, limit: InlineCollection.shrinkLimit) } catch { throw CoveError(error) }
            guard let c else { return tree.root }
            do { try tree.removeAll() } catch { throw CoveError(error) }
            try editTree(t.areaKey) { (area) throws(StorageError) in try Self.putInline(&area, objectKey, p, c.bytes) }
            let root = TreeRoot.inline(count: c.count)
            lastInline = nil
            if let key = p.key { lastInline = (objectKey, key, root, c) }
            return root
        }
    }

    /// Notes a collection operation in the change record.
    func record(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ op: ChangeRecord.CollectionOperation) throws(CoveError) {
        guard let propertyKey = p.key else { return }
        changes.recordCollection(ChangeRecord.CollectionID(classKey: try classKey(of: cls), objectKey: objectKey, propertyKey: propertyKey), op)
    }

    // MARK: Elements

    /// The stored form of an element of `p`: the value checked against the element type (ints
    /// and doubles widened as for single values) and, for a link, against its class and
    /// existence. Elements of embedded classes are made in place, never linked.
    func element(_ value: Value, for p: Property, of cls: ObjectSchema, checkingTarget: Bool = true) throws(CoveError) -> Value {
        // A value of exactly the element type is its own stored form (the common case).
        switch (p.type, value) {
        case (.int, .int), (.string, .string), (.double, .double), (.bool, .bool), (.float, .float), (.data, .data),
             (.date, .timestamp), (.decimal128, .decimal128), (.objectId, .objectId), (.uuid, .uuid):
            return value
        default:
            break
        }
        // Lists and sets of links hold objects only (a single link and a map's value may be null).
        if value.isNull && p.isLink && (p.collection == .list || p.collection == .set) {
            throw CoveError(.wrongType, "property '\(p.name)' of class '\(cls.className)' is \(p.typeNotation) and cannot hold null")
        }
        let cell = try PropertyCodec.cell(value, for: p, of: cls)
        guard let targetName = p.type.objectClassName else {
            if checkingTarget { try checkMixedLink(value, p, cls) }
            return try PropertyCodec.value(cell, for: p, targetClassKey: 0)
        }
        guard case .link = value else { return .null }
        let target = try objectSchema(targetName)
        if checkingTarget && target.isEmbedded {
            throw CoveError(.invalidArgument, "property '\(p.name)' of class '\(cls.className)' holds embedded \(targetName) objects: create them in place, not by linking an existing object")
        }
        if checkingTarget {
            try checkLinkTarget(value, targetName, p, cls)
        }
        return value
    }

    /// A stored element, decoded inside a storage walk (a bad one is `.corrupt`).
    static func decodeStored(_ bytes: UnsafeRawBufferPointer) throws(StorageError) -> Value {
        switch Result(catching: { () throws(CoveError) -> Value in try Value.decodeMixed(bytes) }) {
        case .success(let value): return value
        case .failure(let error): throw .corrupt(error.message)
        }
    }

    static func decodeStored(_ bytes: [UInt8]) throws(StorageError) -> Value {
        let result = bytes.withUnsafeBytes { b in Result { () throws(StorageError) -> Value in try decodeStored(b) } }
        return try result.get()
    }

    func decodeElement(_ bytes: [UInt8]) throws(CoveError) -> Value {
        do { return try Self.decodeStored(bytes) } catch { throw CoveError(error) }
    }

    /// Adds `delta` to the number of times `source`'s collection `p` (or its single mixed
    /// value) holds `value` when that is a link; the backlink entry (target, source) carries
    /// the count and goes at zero.
    func countBacklink(_ cls: ObjectSchema, _ p: Property, source: Int64, _ value: Value, _ delta: Int) throws(CoveError) {
        if value.isCollection {
            // A nested collection of a mixed value: each link it holds counts.
            for link in value.nestedLinks { try countBacklink(cls, p, source: source, .link(link), delta) }
            return
        }
        guard case .link(let link) = value, let propertyKey = p.key else { return }
        let entry = Self.backlinkPrefix(p, link) + CatalogKey.bigEndian(UInt64(bitPattern: source), bytes: 8)
        try editTree(CatalogKey.backlinks(sourceClass: try classKey(of: cls), property: propertyKey)) { (t) throws(StorageError) in
            var count: Int64 = 0
            if let bytes = try t.get(entry), bytes.count == 8 {
                count = bytes.withUnsafeBytes { Int64(littleEndian: $0.loadUnaligned(as: Int64.self)) }
            }
            count += Int64(delta)
            if count <= 0 {
                _ = try t.remove(entry)
            } else {
                _ = try t.put(entry, withUnsafeBytes(of: count.littleEndian) { Array($0) })
            }
        }
    }

    /// Deletes `value`'s object when it is an embedded element that just left its collection.
    private func deleteIfEmbedded(_ p: Property, _ value: Value) throws(CoveError) {
        guard case .link(let link) = value, let name = p.type.objectClassName else { return }
        let target = try objectSchema(name)
        if target.isEmbedded, try exists(target, link.objectKey) { try delete(target, link.objectKey) }
    }

    /// An element has left `p` of `source`: its backlink goes, and an embedded one is deleted.
    private func released(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ value: Value) throws(CoveError) {
        try countBacklink(cls, p, source: objectKey, value, -1)
        try deleteIfEmbedded(p, value)
    }

    private func outOfRange(_ p: Property, _ cls: ObjectSchema, _ index: Int, _ count: UInt64, inserting: Bool = false) -> CoveError {
        let valid = inserting ? "0...\(count)" : (count == 0 ? "none: it is empty" : "0..<\(count)")
        return CoveError(.outOfRange, "index \(index) is out of range for \(p.collection.rawValue) '\(p.name)' of class '\(cls.className)' (valid: \(valid))")
    }

    private func storage(_ body: () throws(StorageError) -> Void) throws(CoveError) {
        do { try body() } catch { throw CoveError(error) }
    }

    // MARK: Lists

    package func listCount(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property) throws(CoveError) -> Int {
        try collectionCount(cls, objectKey, p, .list)
    }

    package func listGet(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ index: Int) throws(CoveError) -> Value {
        try element(at: index, of: cls, objectKey, p, .list)
    }

    /// The element at position `index` of a list or set (in the set's order).
    private func element(at index: Int, of cls: ObjectSchema, _ objectKey: Int64, _ p: Property,
                         _ kind: CollectionKind) throws(CoveError) -> Value {
        let tree = try collection(cls, objectKey, p, kind)
        guard index >= 0, UInt64(index) < tree.count else { throw outOfRange(p, cls, index, tree.count) }
        do {
            return try tree.withEntry(at: UInt64(index)) { (_, v) throws(StorageError) -> Value in
                try Self.decodeStored(v)
            }
        } catch {
            throw CoveError(error)
        }
    }

    /// Every element, in order.
    package func listValues(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property) throws(CoveError) -> [Value] {
        try collectionValues(try collection(cls, objectKey, p, .list))
    }

    func collectionValues(_ tree: StoredCollection) throws(CoveError) -> [Value] {
        var out: [Value] = []
        out.reserveCapacity(Int(tree.count))
        do {
            try tree.forEach { (_: UnsafeRawBufferPointer, v: UnsafeRawBufferPointer) throws(StorageError) -> Bool in
                out.append(try Self.decodeStored(v))
                return true
            }
        } catch {
            throw CoveError(error)
        }
        return out
    }

    /// Inserts `value` at `index` (0...count).
    /// - Complexity: O(log n), and O(n) when the order keys around `index` have no room left
    ///   and the list is renumbered (after some 32 inserts at one place).
    package func listInsert(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ index: Int, _ value: Value) throws(CoveError) {
        let element = try element(value, for: p, of: cls)
        try listInsertStored(cls, objectKey, p, index, element)
    }

    private func listInsertStored(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ index: Int, _ element: Value) throws(CoveError) {
        try editCollection(cls, objectKey, p, .list) { (tree) throws(CoveError) in
            guard index >= 0, UInt64(index) <= tree.count else { throw outOfRange(p, cls, index, tree.count, inserting: true) }
            let bytes = element.encodeMixed()
            try storage { () throws(StorageError) in try tree.insert(bytes, at: UInt64(index)) }
        }
        try countBacklink(cls, p, source: objectKey, element, 1)
        try record(cls, objectKey, p, .insert(index))
    }

    /// Replaces the element at `index`.
    package func listSet(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ index: Int, _ value: Value) throws(CoveError) {
        let element = try element(value, for: p, of: cls)
        let old = try editCollection(cls, objectKey, p, .list) { (tree) throws(CoveError) -> Value in
            guard index >= 0, UInt64(index) < tree.count else { throw outOfRange(p, cls, index, tree.count) }
            var old = Value.null
            try storage { () throws(StorageError) in
                old = try Self.decodeStored(try tree.replace(at: UInt64(index), with: element.encodeMixed()))
            }
            return old
        }
        try countBacklink(cls, p, source: objectKey, element, 1)
        try released(cls, objectKey, p, old)
        try record(cls, objectKey, p, .set(index))
    }

    /// Removes the element at `index` (an embedded one is deleted).
    package func listErase(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ index: Int) throws(CoveError) {
        let old = try listTake(cls, objectKey, p, index)
        try released(cls, objectKey, p, old)
    }

    /// Removes and returns the element at `index`, its backlink and ownership untouched.
    private func listTake(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ index: Int) throws(CoveError) -> Value {
        try record(cls, objectKey, p, .erase(index))
        return try editCollection(cls, objectKey, p, .list) { (tree) throws(CoveError) -> Value in
            guard index >= 0, UInt64(index) < tree.count else { throw outOfRange(p, cls, index, tree.count) }
            var old = Value.null
            try storage { () throws(StorageError) in
                old = try Self.decodeStored(try tree.remove(at: UInt64(index)))
            }
            return old
        }
    }

    /// Moves the element at `from` so that it ends up at `to` (both in 0..<count).
    package func listMove(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, from: Int, to: Int) throws(CoveError) {
        try requireWrite()
        let count = try listCount(cls, objectKey, p)
        guard from >= 0, from < count else { throw outOfRange(p, cls, from, UInt64(count)) }
        guard to >= 0, to < count else { throw outOfRange(p, cls, to, UInt64(count)) }
        if from == to { return }
        let saved = changes
        let value = try listTake(cls, objectKey, p, from)
        // Taken and put back: the backlink count and ownership are unchanged, so the raw insert
        // is used and the count adjusted back; the record says "move", not erase and insert.
        try listInsertStored(cls, objectKey, p, to, value)
        try countBacklink(cls, p, source: objectKey, value, -1)
        changes = saved
        try record(cls, objectKey, p, .move(from: from, to: to))
    }

    /// Removes every element (embedded ones are deleted).
    package func listClear(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property) throws(CoveError) {
        try clearCollection(cls, objectKey, p, .list)
    }

    /// Creates an embedded object at `index` of a list of embedded objects.
    package func listInsertEmbedded(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ index: Int) throws(CoveError) -> Int64 {
        try requireWrite()
        let target = try embeddedTarget(p, cls)
        let count = try listCount(cls, objectKey, p)
        guard index >= 0, index <= count else { throw outOfRange(p, cls, index, UInt64(count), inserting: true) }
        let child = try insertRow(target)
        try listInsertStored(cls, objectKey, p, index, .link(ObjectLink(classKey: try classKey(of: target), objectKey: child)))
        return child
    }

    /// The embedded class `p` holds, or an error saying it holds none.
    package func embeddedTarget(_ p: Property, _ cls: ObjectSchema) throws(CoveError) -> ObjectSchema {
        guard let name = p.type.objectClassName, case let target = try objectSchema(name), target.isEmbedded else {
            throw CoveError(.wrongType, "property '\(p.name)' of class '\(cls.className)' is \(p.typeNotation), not of an embedded class")
        }
        return target
    }

    // MARK: Sets

    package func setCount(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property) throws(CoveError) -> Int {
        try collectionCount(cls, objectKey, p, .set)
    }

    /// The element at `index` in the set's order (the order of the values' index keys).
    package func setGet(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ index: Int) throws(CoveError) -> Value {
        try element(at: index, of: cls, objectKey, p, .set)
    }

    package func setValues(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property) throws(CoveError) -> [Value] {
        try collectionValues(try collection(cls, objectKey, p, .set))
    }

    package func setContains(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ value: Value) throws(CoveError) -> Bool {
        let tree = try collection(cls, objectKey, p, .set)
        // A null is simply not in a set that cannot hold one (set algebra between an optional
        // and a required set asks this).
        if value.isNull && (!p.isOptional || p.isLink) && p.type != .mixed { return false }
        let element = try element(value, for: p, of: cls, checkingTarget: false)
        do { return try tree.contains(element.indexKey()) } catch { throw CoveError(error) }
    }

    /// Adds `value`; false when it was already there.
    @discardableResult
    package func setInsert(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ value: Value) throws(CoveError) -> Bool {
        let element = try element(value, for: p, of: cls)
        let inserted = try editCollection(cls, objectKey, p, .set) { (tree) throws(CoveError) -> Int? in
            let key = element.indexKey()
            guard key.count <= BTree<TransactionPages>.maxKeyLength else {
                throw CoveError(.invalidArgument, "set '\(p.name)' of class '\(cls.className)': an element of \(key.count) bytes is longer than a set holds (\(BTree<TransactionPages>.maxKeyLength - 1))")
            }
            var inserted: Int?
            try storage { () throws(StorageError) in
                if try !tree.contains(key) {
                    try tree.put(key, element.encodeMixed())
                    inserted = Int(try tree.rank(of: key))
                }
            }
            return inserted
        }
        guard let inserted else { return false }
        try countBacklink(cls, p, source: objectKey, element, 1)
        try record(cls, objectKey, p, .insert(inserted))
        return true
    }

    /// Removes `value`; false when it was not there.
    @discardableResult
    package func setErase(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ value: Value) throws(CoveError) -> Bool {
        try requireWrite()
        guard try setContains(cls, objectKey, p, value) else { return false }
        let element = try element(value, for: p, of: cls, checkingTarget: false)
        let position = try editCollection(cls, objectKey, p, .set) { (tree) throws(CoveError) -> Int in
            var position = 0
            try storage { () throws(StorageError) in
                position = Int(try tree.rank(of: element.indexKey()))
                try tree.remove(key: element.indexKey())
            }
            return position
        }
        try countBacklink(cls, p, source: objectKey, element, -1)
        try record(cls, objectKey, p, .erase(position))
        return true
    }

    package func setClear(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property) throws(CoveError) {
        try clearCollection(cls, objectKey, p, .set)
    }

    // MARK: Maps

    /// Checks a map key: Realm's rules (no '.', no leading '$'), so that key paths and query
    /// operators stay unambiguous.
    func checkMapKey(_ key: String, _ p: Property, _ cls: ObjectSchema) throws(CoveError) {
        if key.utf8.contains(UInt8(ascii: ".")) || key.hasPrefix("$") {
            throw CoveError(.invalidArgument, "map '\(p.name)' of class '\(cls.className)': key \"\(key)\" may not contain '.' or start with '$'")
        }
        if key.utf8.count > BTree<TransactionPages>.maxKeyLength {
            throw CoveError(.invalidArgument, "map '\(p.name)' of class '\(cls.className)': a key of \(key.utf8.count) bytes is longer than \(BTree<TransactionPages>.maxKeyLength)")
        }
    }

    package func mapCount(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property) throws(CoveError) -> Int {
        try collectionCount(cls, objectKey, p, .map)
    }

    package func mapGet(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ key: String) throws(CoveError) -> Value? {
        let tree = try collection(cls, objectKey, p, .map)
        let bytes: [UInt8]?
        do { bytes = try tree.get(key.utf8Bytes) } catch { throw CoveError(error) }
        guard let bytes else { return nil }
        return try decodeElement(bytes)
    }

    /// The entry at `index` in key order (UTF-8 byte order).
    package func mapEntry(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ index: Int) throws(CoveError) -> (key: String, value: Value) {
        let tree = try collection(cls, objectKey, p, .map)
        guard index >= 0, UInt64(index) < tree.count else { throw outOfRange(p, cls, index, tree.count) }
        do {
            return try tree.withEntry(at: UInt64(index)) { (k, v) throws(StorageError) -> (key: String, value: Value) in
                guard let key = String(utf8: k) else { throw .corrupt("map '\(p.name)': a key is not UTF-8") }
                return (key, try Self.decodeStored(v))
            }
        } catch {
            throw CoveError(error)
        }
    }

    package func mapEntries(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property) throws(CoveError) -> [(key: String, value: Value)] {
        let tree = try collection(cls, objectKey, p, .map)
        var out: [(key: String, value: Value)] = []
        out.reserveCapacity(Int(tree.count))
        do {
            try tree.forEach { (k: UnsafeRawBufferPointer, v: UnsafeRawBufferPointer) throws(StorageError) -> Bool in
                guard let key = String(utf8: k) else { throw .corrupt("map '\(p.name)': a key is not UTF-8") }
                out.append((key, try Self.decodeStored(v)))
                return true
            }
        } catch {
            throw CoveError(error)
        }
        return out
    }

    /// Sets the value of `key`, adding the entry when it is new.
    package func mapSet(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ key: String, _ value: Value) throws(CoveError) {
        try checkMapKey(key, p, cls)
        let element = try element(value, for: p, of: cls)
        try mapPut(cls, objectKey, p, key, element)
    }

    private func mapPut(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ key: String, _ element: Value) throws(CoveError) {
        let old = try editCollection(cls, objectKey, p, .map) { (tree) throws(CoveError) -> Value? in
            var old: Value?
            try storage { () throws(StorageError) in
                if let bytes = try tree.get(key.utf8Bytes) {
                    old = try Self.decodeStored(bytes)
                }
                try tree.put(key.utf8Bytes, element.encodeMixed())
            }
            return old
        }
        try countBacklink(cls, p, source: objectKey, element, 1)
        if let old { try released(cls, objectKey, p, old) }
        try record(cls, objectKey, p, old == nil ? .insertKey(key) : .setKey(key))
    }

    /// Removes the entry of `key`; false when there was none.
    @discardableResult
    package func mapErase(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ key: String) throws(CoveError) -> Bool {
        try requireWrite()
        guard let old = try mapGet(cls, objectKey, p, key) else {
            _ = try collection(cls, objectKey, p, .map)
            return false
        }
        try editCollection(cls, objectKey, p, .map) { (tree) throws(CoveError) in
            try storage { () throws(StorageError) in try tree.remove(key: key.utf8Bytes) }
        }
        try released(cls, objectKey, p, old)
        try record(cls, objectKey, p, .eraseKey(key))
        return true
    }

    package func mapClear(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property) throws(CoveError) {
        try clearCollection(cls, objectKey, p, .map)
    }

    /// Creates an embedded object as the value of `key` (replacing, and deleting, the old one).
    package func mapSetEmbedded(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ key: String) throws(CoveError) -> Int64 {
        try requireWrite()
        let target = try embeddedTarget(p, cls)
        try checkMapKey(key, p, cls)
        _ = try collection(cls, objectKey, p, .map)
        let child = try insertRow(target)
        try mapPut(cls, objectKey, p, key, .link(ObjectLink(classKey: try classKey(of: target), objectKey: child)))
        return child
    }

    // MARK: Clearing, and the owner's or a target's deletion

    /// Empties a collection: backlinks of its links go, embedded elements are deleted, and the
    /// tree's pages are freed.
    private func clearCollection(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ kind: CollectionKind) throws(CoveError) {
        try requireWrite()
        let values = try collectionValues(try collection(cls, objectKey, p, kind))
        try editCollection(cls, objectKey, p, kind) { (tree) throws(CoveError) in
            try storage { () throws(StorageError) in try tree.removeAll() }
        }
        if p.keepsBacklinks {
            for v in values { try released(cls, objectKey, p, v) }
        }
        if !values.isEmpty { try record(cls, objectKey, p, .clear) }
    }

    /// Replaces every element of collection `p` by `elements` in one edit: a list's in order, a
    /// set's (duplicates once), a map's as key, value, key, value... (a key given twice keeps
    /// its last value). The old elements go as `clear` would take them; the new ones are
    /// checked as one by one inserts check them, and nothing changes when one is refused. A
    /// small collection is written to its object's collection area once.
    /// - Throws: `.wrongType` (a value of the wrong type, a collection of embedded objects,
    ///   `p` not a collection), `.invalidArgument` (a bad map key, a map's elements not in
    ///   pairs, a link to a missing object), `.notInWrite`.
    package func assignCollection(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ elements: [Value]) throws(CoveError) {
        try assignCollection(cls, objectKey, p, try prepareCollection(cls, p, elements))
    }

    /// Elements checked and encoded for `assignCollection`, before any object changes.
    package struct PreparedCollection {
        /// The stored values, in the collection's order (a list's only when it keeps
        /// backlinks: of links or of mixed values).
        var stored: [Value]
        /// A map's keys, in order.
        var mapKeys: [String]
        /// How many elements there are.
        let count: Int
        /// The bytes of the inline form.
        let inlineByteCount: Int
        /// The encoded elements: the inline form (`rowPrefix` 0), or a list's led by the prefix
        /// of a row cell (`rowValue(.row(_:))`, `rowPrefix` bytes), so that a create that puts
        /// the list in its row makes no second copy. Stored fields, not computed ones, so that
        /// reading one from an array of them copies nothing.
        private let bytes: [UInt8]
        private let rowPrefix: Int
        private let keyed: Bool

        init(stored: [Value], inline: InlineCollection, mapKeys: [String]) {
            self.stored = stored
            self.mapKeys = mapKeys
            count = inline.count
            inlineByteCount = inline.bytes.count
            bytes = inline.bytes
            rowPrefix = 0
            keyed = inline.keyed
        }

        /// A list whose row cell `bytes` holds `count` elements after a prefix of `prefix` bytes.
        init(stored: [Value], rowCell bytes: [UInt8], count: Int, prefix: Int) {
            self.stored = stored
            mapKeys = []
            self.count = count
            inlineByteCount = bytes.count - prefix
            self.bytes = bytes
            rowPrefix = prefix
            keyed = false
        }

        /// The elements in the inline form (which a tree is built from when they are too many).
        var inline: InlineCollection {
            InlineCollection(encoded: rowPrefix == 0 ? bytes : Array(bytes[rowPrefix...]), count: count, keyed: keyed)
        }

        /// The collection as the cell of a row (`rowValue(.row(inline))`).
        var rowCell: CellValue {
            rowPrefix == 0 ? ObjectStore.rowValue(.row(inline)) : .bytes(bytes)
        }
    }

    /// Checks and encodes `elements` for collection `p` of `cls` (see `assignCollection`).
    package func prepareCollection(_ cls: ObjectSchema, _ p: Property, _ elements: [Value]) throws(CoveError) -> PreparedCollection {
        try requireWrite()
        let kind = p.collection
        guard kind != .none else { throw CoveError(.wrongType, "property '\(p.name)' of class '\(cls.className)' is \(p.typeNotation), not a list, set or map") }
        if let name = p.type.objectClassName, try objectSchema(name).isEmbedded {
            throw CoveError(.wrongType, "property '\(p.name)' of class '\(cls.className)' holds embedded \(name) objects: create them in place, one by one")
        }
        var inline = InlineCollection(keyed: kind != .list)
        var stored: [Value] = []
        var mapKeys: [String] = []
        switch kind {
        case .map:
            guard elements.count % 2 == 0 else {
                throw CoveError(.invalidArgument, "map '\(p.name)' of class '\(cls.className)': \(elements.count) elements are not key and value pairs")
            }
            var position: [String: Int] = [:]
            for i in stride(from: 0, to: elements.count, by: 2) {
                guard case .string(let key) = elements[i] else {
                    throw CoveError(.invalidArgument, "map '\(p.name)' of class '\(cls.className)': key \(i / 2) is \(elements[i]), not a string")
                }
                try checkMapKey(key, p, cls)
                let e = try element(elements[i + 1], for: p, of: cls)
                if let at = position[key] {
                    stored[at] = e
                } else {
                    position[key] = mapKeys.count
                    mapKeys.append(key)
                    stored.append(e)
                }
            }
            let order = mapKeys.indices.sorted { a, b in mapKeys[a].utf8.lexicographicallyPrecedes(mapKeys[b].utf8) }
            mapKeys = order.map { mapKeys[$0] }
            stored = order.map { stored[$0] }
            for (k, e) in zip(mapKeys, stored) { inline.append(key: k.utf8Bytes, mixed: e) }
        case .set:
            var keyed: [(key: [UInt8], value: Value)] = []
            var seen: Set<[UInt8]> = []
            for v in elements {
                let e = try element(v, for: p, of: cls)
                let key = e.indexKey()
                guard key.count <= BTree<TransactionPages>.maxKeyLength else {
                    throw CoveError(.invalidArgument, "set '\(p.name)' of class '\(cls.className)': an element of \(key.count) bytes is longer than a set holds (\(BTree<TransactionPages>.maxKeyLength - 1))")
                }
                if seen.insert(key).inserted { keyed.append((key, e)) }
            }
            keyed.sort { $0.key.lexicographicallyPrecedes($1.key) }
            stored = keyed.map(\.value)
            for k in keyed { inline.append(key: k.key, mixed: k.value) }
        default:
            // A list is encoded as a row cell at once (its count is known): the prefix, then
            // each element's length and mixed encoding. The stored values are kept only where
            // backlinks need them.
            if p.keepsBacklinks { stored.reserveCapacity(elements.count) }
            var bytes: [UInt8] = []
            // Room for ints and doubles (a length byte, a tag, 8 bytes); longer ones grow it.
            bytes.reserveCapacity(11 + 10 * elements.count)
            bytes.append(CollectionCell.rowInlineTag)
            InlineCollection.appendLength(elements.count, to: &bytes)
            let prefix = bytes.count
            for v in elements {
                let e = try element(v, for: p, of: cls)
                let size = e.mixedEncodedSize
                InlineCollection.appendLength(size, to: &bytes)
                e.appendMixed(to: &bytes)
                if p.keepsBacklinks { stored.append(e) }
            }
            return PreparedCollection(stored: stored, rowCell: bytes, count: elements.count, prefix: prefix)
        }
        return PreparedCollection(stored: stored, inline: inline, mapKeys: mapKeys)
    }

    /// Replaces every element of collection `p` of one object by the prepared ones.
    package func assignCollection(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ prepared: PreparedCollection) throws(CoveError) {
        let kind = p.collection
        let stored = prepared.stored
        let t = try table(cls, holding: objectKey)
        let c = try collectionColumn(t, p, kind)
        let before = try collectionCell(t, objectKey, column: c, p)
        // A new object's collection is empty: nothing to read, release or record.
        let old = before == .empty ? [] : try collectionValues(try collection(before, cls, objectKey, p, kind, table: t))
        try editCollection(cls, objectKey, p, kind) { (c) throws(CoveError) in
            try storage { () throws(StorageError) in try c.replaceAll(with: prepared.inline) }
        }
        if p.keepsBacklinks {
            for v in old { try released(cls, objectKey, p, v) }
            for v in stored { try countBacklink(cls, p, source: objectKey, v, 1) }
        }
        if !old.isEmpty { try record(cls, objectKey, p, .clear) }
        if kind == .map {
            for key in prepared.mapKeys { try record(cls, objectKey, p, .insertKey(key)) }
        } else {
            for i in 0..<prepared.count { try record(cls, objectKey, p, .insert(i)) }
        }
    }

    /// Empties and frees collection `p` of an object that is being deleted.
    func dropCollection(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property) throws(CoveError) {
        try clearCollection(cls, objectKey, p, p.collection)
    }

    /// Takes every occurrence of `link` out of collection `p` of `source` (its target is being
    /// deleted): removed from lists of links and from sets, set to null in maps and in lists of
    /// mixed (which hold nulls), as Realm does.
    func removeFromCollection(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ link: Value) throws(CoveError) {
        switch p.collection {
        case .none:
            return
        case .list where p.type == .mixed:
            let values = try listValues(cls, objectKey, p)
            for i in values.indices where values[i] == link || values[i].isCollection {
                guard case .link(let target) = link else { break }
                let replaced = values[i].replacingLinks(to: target)
                if replaced != values[i] { try listSet(cls, objectKey, p, i, replaced) }
            }
        case .list:
            let values = try listValues(cls, objectKey, p)
            for i in values.indices.reversed() where values[i] == link {
                _ = try listTake(cls, objectKey, p, i)
                try countBacklink(cls, p, source: objectKey, link, -1)
            }
        case .set:
            _ = try setErase(cls, objectKey, p, link)
        case .map:
            for (key, value) in try mapEntries(cls, objectKey, p) where value == link || value.isCollection {
                guard case .link(let target) = link else { break }
                let replaced = value.replacingLinks(to: target)
                if replaced == value { continue }
                try editCollection(cls, objectKey, p, .map) { (tree) throws(CoveError) in
                    try storage { () throws(StorageError) in try tree.put(key.utf8Bytes, replaced.encodeMixed()) }
                }
                try countBacklink(cls, p, source: objectKey, value, -1)
                try countBacklink(cls, p, source: objectKey, replaced, 1)
                try record(cls, objectKey, p, .setKey(key))
            }
        }
    }
}

extension ObjectStore {
    // MARK: Checking

    /// Checks the collections of every object against the two forms: an inline one has its
    /// entry in its class's collection area, holding as many well-formed elements as its column
    /// counts (sets and maps in strictly ascending key order), within the inline limit; an
    /// empty one holds no root; the area holds an entry for nothing else. Returns the number of
    /// inline collections checked. (The trees' own pages are checked by the storage's verify.)
    /// - Throws: `.corrupt` naming class, property and object.
    package func verifyCollections() throws(CoveError) -> Int {
        var checked = 0
        for cls in schema.classes {
            let area = try tree(CatalogKey.collections(try classKey(of: cls)))
            let properties = cls.properties.filter { $0.collection != .none && !$0.isBacklinks && $0.key != nil }
            var inline: UInt64 = 0
            if !properties.isEmpty {
                let t = try table(cls)
                for key in try objectKeys(cls) {
                    for p in properties {
                        let cell = try collectionCell(t, key, column: try column(p, in: t), p)
                        let where_ = "\(p.collection.rawValue) '\(p.name)' of the \(cls.className) object \(key)"
                        let limit: Int
                        switch cell {
                        case .empty, .tree: continue
                        case .area(let root):
                            guard root.count > 0 else { throw CoveError(.corrupt, "\(where_) is inline with no elements") }
                            limit = InlineCollection.limit
                            inline += 1
                        case .row:
                            limit = InlineCollection.rowLimit
                        }
                        let stored: StoredCollection
                        do { stored = try collection(cell, cls, key, p, p.collection) } catch {
                            throw CoveError(.corrupt, "\(where_): \(error.message)")
                        }
                        guard case .inline(let c) = stored.form, c.bytes.count <= limit else {
                            throw CoveError(.corrupt, "\(where_) is inline and larger than \(limit) bytes")
                        }
                        _ = try collectionValues(stored)
                        checked += 1
                    }
                }
            }
            guard area.count == inline else {
                throw CoveError(.corrupt, "the collection area of class '\(cls.className)' holds \(area.count) entries for \(inline) inline collections")
            }
        }
        return checked
    }
}
