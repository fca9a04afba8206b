// The primary-key index of a class: one catalog tree per class that maps each primary-key value
// to its object's key. For a required int primary key the tree maps ranges: its UInt64 keys are
// the first primary key of each range, its values the object key of that first object and how
// many follow, so objects created with ascending keys in creation order (ids handed out by a
// counter) share one entry. Other primary keys are byte-keyed, one entry per object under the
// value's index key. docs/FORMAT.md describes both.
import CoveStorage

/// A range of a required-int primary-key index: the objects with primary keys `first ...
/// first + count - 1` (biased, see `PrimaryKeyRanges.key`) have object keys `objectKey ...
/// objectKey + count - 1`.
struct PrimaryKeyRange: Equatable {
    var first: UInt64
    var objectKey: Int64
    var count: UInt64

    /// Whether the range holds biased key `b`.
    func holds(_ b: UInt64) -> Bool { b >= first && b - first < count }

    /// Whether the range holds at least one key and its keys and object keys stay within their
    /// types.
    var isWellFormed: Bool {
        objectKey >= 0 && count >= 1 && count - 1 <= UInt64.max - first && count - 1 <= UInt64(Int64.max - objectKey)
    }
}

/// Encoding and editing of the ranges of a required-int primary-key index.
enum PrimaryKeyRanges {
    /// The tree key of primary key `pk`: its bits with the sign flipped, so that unsigned order
    /// is the order of the signed values and consecutive values have consecutive keys.
    static func key(_ pk: Int64) -> UInt64 { UInt64(bitPattern: pk) ^ (1 << 63) }

    /// A range's value: its first object key (8 bytes little-endian), then its count (8 bytes
    /// little-endian) when more than one.
    static func value(objectKey: Int64, count: UInt64) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count == 1 ? 8 : 16)
        out.withUnsafeMutableBytes { b in
            b.storeBytes(of: objectKey.littleEndian, toByteOffset: 0, as: Int64.self)
            if count > 1 { b.storeBytes(of: count.littleEndian, toByteOffset: 8, as: UInt64.self) }
        }
        return out
    }

    static func decode(_ entry: BTreeEntry) throws(StorageError) -> PrimaryKeyRange {
        try decode(key: entry.key, value: entry.value)
    }

    static func decode(key: UInt64, value v: UnsafeRawBufferPointer) throws(StorageError) -> PrimaryKeyRange {
        guard v.count == 8 || v.count == 16 else {
            throw .corrupt("primary-key index: the range at \(key) has a value of \(v.count) bytes")
        }
        let objectKey = Int64(littleEndian: v.loadUnaligned(fromByteOffset: 0, as: Int64.self))
        let count = v.count == 16 ? UInt64(littleEndian: v.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) : 1
        let range = PrimaryKeyRange(first: key, objectKey: objectKey, count: count)
        guard range.isWellFormed, v.count == 8 || count >= 2 else {
            throw .corrupt("primary-key index: the range at \(key) (object key \(objectKey), count \(count)) is malformed")
        }
        return range
    }

    /// The object key filed under biased key `b`, or nil.
    static func find<S>(_ tree: BTree<S>, _ b: UInt64) throws(StorageError) -> Int64? {
        try tree.withNeighbours(of: b, next: false) { floor, _ throws(StorageError) -> Int64? in
            guard let floor else { return nil }
            let r = try decode(floor)
            return r.holds(b) ? r.objectKey + Int64(b - r.first) : nil
        }
    }

    /// Files `objectKey` under biased key `b`, extending the range before it or the one after
    /// it (or joining both) when the keys continue theirs.
    /// - Returns: the range that now holds `b` and whether it is the last one; a nil range,
    ///   and nothing changed, when `b` is taken.
    static func insert<S>(_ tree: inout BTree<S>, _ b: UInt64, _ objectKey: Int64) throws(StorageError) -> (range: PrimaryKeyRange?, isLast: Bool) {
        let (taken, before, after, isLast) = try tree.withNeighbours(of: b) { floor, next throws(StorageError) -> (Bool, PrimaryKeyRange?, PrimaryKeyRange?, Bool) in
            let f = try floor.map { (e) throws(StorageError) in try decode(e) }
            let n = try next.map { (e) throws(StorageError) in try decode(e) }
            if let f, f.holds(b) { return (true, nil, nil, false) }
            let extendsBefore = f.map { $0.first &+ $0.count == b && $0.objectKey &+ Int64($0.count) == objectKey } ?? false
            let continuesInto = n.map { b &+ 1 == $0.first && objectKey &+ 1 == $0.objectKey } ?? false
            return (false, extendsBefore ? f : nil, continuesInto ? n : nil, n == nil)
        }
        if taken { return (nil, false) }
        let range: PrimaryKeyRange
        switch (before, after) {
        case (let f?, let n?):
            _ = try tree.remove(n.first)
            range = PrimaryKeyRange(first: f.first, objectKey: f.objectKey, count: f.count + 1 + n.count)
        case (let f?, nil):
            range = PrimaryKeyRange(first: f.first, objectKey: f.objectKey, count: f.count + 1)
        case (nil, let n?):
            _ = try tree.remove(n.first)
            range = PrimaryKeyRange(first: b, objectKey: objectKey, count: n.count + 1)
        case (nil, nil):
            range = PrimaryKeyRange(first: b, objectKey: objectKey, count: 1)
        }
        _ = try tree.put(range.first, value(objectKey: range.objectKey, count: range.count))
        return (range, isLast)
    }

    /// Takes biased key `b` out of its range, shortening or splitting it.
    /// - Returns: false when no range holds `b`.
    static func remove<S>(_ tree: inout BTree<S>, _ b: UInt64) throws(StorageError) -> Bool {
        let holder = try tree.withNeighbours(of: b, next: false) { floor, _ throws(StorageError) -> PrimaryKeyRange? in
            guard let floor else { return nil }
            let r = try decode(floor)
            return r.holds(b) ? r : nil
        }
        guard let r = holder else { return false }
        let offset = b - r.first
        if offset > 0 {
            _ = try tree.put(r.first, value(objectKey: r.objectKey, count: offset))
        } else {
            _ = try tree.remove(r.first)
        }
        if offset + 1 < r.count {
            _ = try tree.put(b + 1, value(objectKey: r.objectKey + Int64(offset) + 1, count: r.count - offset - 1))
        }
        return true
    }

    /// Every range in key order, checked: each well formed and after the one before it.
    /// - Returns: how many primary keys the ranges hold.
    /// With `open`, the tree's last range must be the open range as far as the tree holds it.
    static func verify<S>(_ tree: BTree<S>, open: OpenPrimaryKeyRange? = nil) throws(StorageError) -> UInt64 {
        var total: UInt64 = 0
        var previous: PrimaryKeyRange?
        try tree.forEach(from: nil) { (k: UInt64, v: UnsafeRawBufferPointer) throws(StorageError) -> Bool in
            let r = try decode(key: k, value: v)
            if let p = previous, r.first - p.first < p.count {
                throw .corrupt("primary-key index: the range at \(r.first) overlaps the one at \(p.first)")
            }
            total &+= r.count
            previous = r
            return true
        }
        if let open {
            let stored = PrimaryKeyRange(first: open.range.first, objectKey: open.range.objectKey, count: open.stored)
            guard previous == stored else {
                throw .corrupt("primary-key index: the open range at \(open.range.first) (\(open.stored) keys in the index) is not the index's last range")
            }
            total &+= open.range.count - open.stored
        }
        return total
    }
}

extension ObjectSchema {
    /// The form a new primary-key index of this class takes: ranges (UInt64 keys) for a
    /// required int primary key, one byte-keyed entry per object otherwise.
    var primaryKeyIndexKind: BTreeKeyKind {
        guard let pk = primaryKeyProperty, pk.type == .int, !pk.isOptional else { return .bytes }
        return .u64
    }
}

extension ObjectStore {
    /// The primary-key index of `cls`, its open range written in when the transaction writes
    /// (a read transaction gets the tree as stored: the same ranges, the open one shorter). An
    /// index with pages keeps the form it was written in; a new one maps ranges when the key is
    /// a required int.
    func primaryKeyTree(_ cls: ObjectSchema) throws(CoveError) -> BTree<TransactionPages> {
        let t = try table(forCreate: cls)
        if pages.isWritable { try closePrimaryKeyRange(t) }
        return try storedPrimaryKeyTree(t)
    }

    /// The index as the tree holds it (without the open range's growth).
    private func storedPrimaryKeyTree(_ t: Table) throws(CoveError) -> BTree<TransactionPages> {
        try tree(t.primaryKeyTreeKey, emptyKind: t.cls.primaryKeyIndexKind)
    }

    /// Edits the index of `t`, which `primaryKeyTree` has just read (open range closed, the
    /// tree in this transaction's cache in its form).
    private func editPrimaryKeyTree<R>(_ t: Table, _ body: (inout BTree<TransactionPages>) throws(StorageError) -> R) throws(CoveError) -> R {
        var result: R?
        try editTree(t.primaryKeyTreeKey) { (tree) throws(StorageError) in
            result = try body(&tree)
        }
        guard let result else { throw CoveError(.internal, "the primary-key index of class '\(t.cls.className)' was not edited") }
        return result
    }

    /// Keeps the open range (as far as it has grown) in the table entry for the next
    /// transaction, which grows it further without writing the index's page; the entry is
    /// written when it changes. Called at commit.
    func keepOpenPrimaryKeyRange(_ t: Table) {
        let open = t.openRange.map { OpenPrimaryKeyRange(range: $0, stored: t.openRangeStoredCount) }
        if open != t.entry.openRange {
            t.entry.openRange = open
            t.dirty = true
        }
    }

    /// Writes the open range's length into the tree and stops growing it (the table entry
    /// drops it at commit).
    func closePrimaryKeyRange(_ t: Table) throws(CoveError) {
        guard let open = t.openRange else { return }
        t.openRange = nil
        if open.count == t.openRangeStoredCount { return }
        try editTree(t.primaryKeyTreeKey) { (tree) throws(StorageError) in
            _ = try tree.put(open.first, PrimaryKeyRanges.value(objectKey: open.objectKey, count: open.count))
        }
    }

    /// Frees the class's primary-key index (an open range is dropped with it). What is filed
    /// next goes in the form of the class's key, which a migration may have changed.
    func dropPrimaryKeyIndex(_ t: Table) throws(CoveError) {
        t.openRange = nil
        try dropTree(t.primaryKeyTreeKey)
        resetEmptyTree(t.primaryKeyTreeKey, kind: t.cls.primaryKeyIndexKind)
    }

    package func find(_ cls: ObjectSchema, primaryKey: Value) throws(CoveError) -> Int64? {
        let table = try table(forCreate: cls)
        let normalized = try checkPrimaryKey(primaryKey, of: table)
        if case .int(let i) = normalized, let open = table.openRange {
            // The open range is the last: a key at or past its start is in it or nowhere; one
            // before it is in the tree, whose entry for the open range does not reach it.
            let b = PrimaryKeyRanges.key(i)
            if b >= open.first { return open.holds(b) ? open.objectKey + Int64(b - open.first) : nil }
        }
        let t = try storedPrimaryKeyTree(table)
        do {
            if t.keyKind == .u64 {
                guard case .int(let i) = normalized else { return nil }
                return try PrimaryKeyRanges.find(t, PrimaryKeyRanges.key(i))
            }
            guard let bytes = try t.get(normalized.indexKey()), bytes.count == 8 else { return nil }
            return bytes.withUnsafeBytes { Int64(littleEndian: $0.loadUnaligned(as: Int64.self)) }
        } catch {
            throw CoveError(error)
        }
    }

    /// `value` as a primary key of `t`'s class: it is one when it has the key's type, or is
    /// null for an optional key (told by the key's column, with no property to copy).
    /// - Throws: `.invalidArgument` when the class has no primary key, `.wrongType` naming
    ///   the key, its type and the value's.
    func checkPrimaryKey(_ value: Value, of t: Table) throws(CoveError) -> Value {
        if let spec = t.primaryKeySpec {
            switch (spec.kind, value) {
            case (.int, .int), (.string, .string), (.objectId, .objectId), (.uuid, .uuid): return value
            case (_, .null) where spec.nullable: return value
            default: break
            }
        }
        guard let p = t.primaryKey?.property else {
            throw CoveError(.invalidArgument, "class '\(t.cls.className)' has no primary key")
        }
        throw CoveError(.wrongType, "primary key '\(p.name)' of class '\(t.cls.className)' is \(p.typeNotation), got \(value.typedDescription)")
    }

    /// The int a range index files `value` under; an error for any other value (the schema
    /// gives a range index only to required int keys, and a migration to another key type
    /// empties the index before anything is filed).
    private func rangeKey(_ value: Value, _ cls: ObjectSchema) throws(CoveError) -> UInt64 {
        guard case .int(let i) = value else {
            throw CoveError(.internal, "the int primary-key index of class '\(cls.className)' was given \(value.typedDescription)")
        }
        return PrimaryKeyRanges.key(i)
    }

    /// Files `objectKey` under `value` in the primary-key index of `cls` (whose table is
    /// `table`) unless the value is taken.
    /// - Returns: false when another object has the value (nothing changed).
    func insertPrimaryKey(_ table: Table, _ cls: ObjectSchema, _ value: Value, _ objectKey: Int64) throws(CoveError) -> Bool {
        if case .int(let i) = value, let open = table.openRange {
            // Ids handed out by a counter: the next id for the next object key grows the open
            // range in memory (nothing is past it, so the id is free).
            let b = PrimaryKeyRanges.key(i)
            let (end, wrapped) = open.first.addingReportingOverflow(open.count)
            if b == end && !wrapped && objectKey == open.objectKey + Int64(open.count) {
                table.openRange?.count += 1
                return true
            }
            if open.holds(b) { return false }
        }
        if try primaryKeyTree(cls).keyKind == .u64 {
            let b = try rangeKey(value, cls)
            let placed = try editPrimaryKeyTree(table) { (t) throws(StorageError) in try PrimaryKeyRanges.insert(&t, b, objectKey) }
            guard let range = placed.range else { return false }
            if placed.isLast {
                table.openRange = range
                table.openRangeStoredCount = range.count
            }
            return true
        }
        let bytes = withUnsafeBytes(of: objectKey.littleEndian) { Array($0) }
        return try editPrimaryKeyTree(table) { (t) throws(StorageError) in try t.insert(value.indexKey(), bytes) }
    }

    /// Files `objectKey` under `value`, replacing what the value was filed under.
    func indexPrimaryKey(_ cls: ObjectSchema, _ value: Value, _ objectKey: Int64) throws(CoveError) {
        let table = try table(forCreate: cls)
        if try primaryKeyTree(cls).keyKind == .u64 {
            let b = try rangeKey(value, cls)
            try editPrimaryKeyTree(table) { (t) throws(StorageError) in
                _ = try PrimaryKeyRanges.remove(&t, b)
                _ = try PrimaryKeyRanges.insert(&t, b, objectKey)
            }
            return
        }
        let bytes = withUnsafeBytes(of: objectKey.littleEndian) { Array($0) }
        try editPrimaryKeyTree(table) { (t) throws(StorageError) in _ = try t.put(value.indexKey(), bytes) }
    }

    func unindexPrimaryKey(_ cls: ObjectSchema, _ value: Value) throws(CoveError) {
        let table = try table(forCreate: cls)
        if try primaryKeyTree(cls).keyKind == .u64 {
            let b = try rangeKey(value, cls)
            try editPrimaryKeyTree(table) { (t) throws(StorageError) in _ = try PrimaryKeyRanges.remove(&t, b) }
            return
        }
        try editPrimaryKeyTree(table) { (t) throws(StorageError) in _ = try t.remove(value.indexKey()) }
    }

    /// How many objects the primary-key index of `cls` files (for verify): its entries, or
    /// for a range index the keys its ranges hold, checked for order and overlap.
    /// Reads without writing, so a read transaction can check too: an open range counts the
    /// keys it holds beyond the tree's.
    func primaryKeyIndexCount(_ cls: ObjectSchema) throws(CoveError) -> UInt64 {
        let table = try table(forCreate: cls)
        let t = try storedPrimaryKeyTree(table)
        if t.keyKind == .bytes { return t.count }
        let open = table.openRange.map { OpenPrimaryKeyRange(range: $0, stored: table.openRangeStoredCount) }
        do { return try PrimaryKeyRanges.verify(t, open: open) } catch { throw CoveError(error) }
    }
}
