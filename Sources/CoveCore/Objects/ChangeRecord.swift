// ChangeRecord: what one write transaction did, kept in the commit history (one record per
// version) so that notifiers in any process can compute change sets without scanning: per
// table, the objects inserted and deleted (as key ranges, so a bulk insert costs a few bytes)
// and the properties written of the others; per collection, its operations in order.
//
// Encoding (all integers unsigned LEB128 varints, strings as length + UTF-8):
//
//     u8 format (1) | flags (bit 0: the schema changed)
//     table count | per table: class key, inserted range count, (first, count)*,
//                   deleted range count, (first, count)*,
//                   modified count, (object key, property count, property key*)*
//     collection count | per collection: class key, object key, property key, op count,
//                   per op: tag u8 (1 insert, 2 erase, 3 set, 4 move, 5 clear, 6 insert key,
//                   7 erase key, 8 set key) then index, from + to, or key

/// What one commit changed, table by table and collection by collection.
package struct ChangeRecord: Equatable, Sendable {
    /// One table's changes. An object inserted by the transaction is listed as inserted only
    /// (never also modified); one inserted and deleted again is not listed at all.
    ///
    /// While a write records, its deletes wait in an unsorted list and `settle()` folds them
    /// into the ranges at the end, in one sort and one merge: filed one at a time, deletes in
    /// random key order each moved O(r) ranges, O(k·r) for k deletes in one write. A record
    /// compares, encodes and answers `isInserted`/`isDeleted` as its settled form would.
    package struct TableChanges: Equatable, Sendable {
        /// Inserted object keys as ascending, disjoint ranges.
        package var inserted: [ClosedRange<Int64>] = []
        /// Deleted object keys as ascending, disjoint ranges.
        package var deleted: [ClosedRange<Int64>] = []
        /// The properties written (by key) of objects that existed before and still exist.
        package var modified: [Int64: Set<Int64>] = [:]
        /// Keys deleted since the last `settle()`, in the order they went. A table hands each
        /// object key out once (`TableEntry.nextObjectKey` only grows), so no insert names one.
        var unsettledDeletes: [Int64] = []

        package init() {}

        package static func == (a: TableChanges, b: TableChanges) -> Bool {
            var a = a, b = b
            a.settle()
            b.settle()
            return a.inserted == b.inserted && a.deleted == b.deleted && a.modified == b.modified
        }

        /// Whether `key` is among the inserted objects.
        package func isInserted(_ key: Int64) -> Bool {
            Self.contains(inserted, key) && (unsettledDeletes.isEmpty || !unsettledDeletes.contains(key))
        }
        /// Whether `key` is among the deleted objects.
        package func isDeleted(_ key: Int64) -> Bool {
            if Self.contains(deleted, key) { return true }
            return !unsettledDeletes.isEmpty && unsettledDeletes.contains(key) && !Self.contains(inserted, key)
        }

        /// The first range whose upper bound is at least `key`.
        static func position(_ ranges: [ClosedRange<Int64>], _ key: Int64) -> Int {
            var lo = 0, hi = ranges.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if ranges[mid].upperBound < key { lo = mid + 1 } else { hi = mid }
            }
            return lo
        }

        static func contains(_ ranges: [ClosedRange<Int64>], _ key: Int64) -> Bool {
            let i = position(ranges, key)
            return i < ranges.count && ranges[i].contains(key)
        }

        /// Adds `key`, merging it with the ranges it touches.
        /// - Complexity: O(log r), and O(r) when a new range goes in the middle.
        static func add(_ key: Int64, to ranges: inout [ClosedRange<Int64>]) {
            // The common case, objects created one after another: the last range grows.
            if let last = ranges.last, last.upperBound != .max, last.upperBound + 1 == key {
                ranges[ranges.count - 1] = last.lowerBound...key
                return
            }
            let i = position(ranges, key)
            if i < ranges.count && ranges[i].contains(key) { return }
            let joinsPrevious = i > 0 && ranges[i - 1].upperBound == key - 1
            let joinsNext = i < ranges.count && ranges[i].lowerBound == key + 1
            switch (joinsPrevious, joinsNext) {
            case (true, true):
                ranges[i - 1] = ranges[i - 1].lowerBound...ranges[i].upperBound
                ranges.remove(at: i)
            case (true, false): ranges[i - 1] = ranges[i - 1].lowerBound...key
            case (false, true): ranges[i] = key...ranges[i].upperBound
            case (false, false): ranges.insert(key...key, at: i)
            }
        }

        /// `ranges` with the ascending, distinct `keys` added.
        /// - Complexity: O(r + k)
        static func union(_ ranges: [ClosedRange<Int64>], _ keys: [Int64]) -> [ClosedRange<Int64>] {
            var out: [ClosedRange<Int64>] = []
            out.reserveCapacity(ranges.count + keys.count)
            func append(_ r: ClosedRange<Int64>) {
                if let last = out.last, last.upperBound == .max || r.lowerBound <= last.upperBound + 1 {
                    out[out.count - 1] = last.lowerBound...Swift.max(last.upperBound, r.upperBound)
                } else {
                    out.append(r)
                }
            }
            var i = 0
            for k in keys {
                while i < ranges.count && ranges[i].lowerBound <= k { append(ranges[i]); i += 1 }
                append(k...k)
            }
            while i < ranges.count { append(ranges[i]); i += 1 }
            return out
        }

        /// `ranges` without the ascending, distinct `keys`, each of which they hold.
        /// - Complexity: O(r + k)
        static func subtract(_ ranges: [ClosedRange<Int64>], _ keys: [Int64]) -> [ClosedRange<Int64>] {
            var out: [ClosedRange<Int64>] = []
            out.reserveCapacity(ranges.count + keys.count)
            var k = 0
            for r in ranges {
                var low = r.lowerBound
                var open = true
                while k < keys.count && keys[k] <= r.upperBound {
                    let key = keys[k]
                    k += 1
                    if key > low { out.append(low...(key - 1)) }
                    if key == r.upperBound { open = false } else { low = key + 1 }
                }
                if open { out.append(low...r.upperBound) }
            }
            return out
        }

        var isEmpty: Bool { inserted.isEmpty && deleted.isEmpty && modified.isEmpty && unsettledDeletes.isEmpty }

        /// Records that object `key` went: no longer modified, and (at `settle()`) no longer
        /// inserted, else deleted.
        /// - Complexity: O(1) amortized
        mutating func recordDelete(_ key: Int64) {
            modified[key] = nil
            unsettledDeletes.append(key)
        }

        /// Folds the deletes recorded since the last call into `inserted` and `deleted`.
        /// - Returns: the keys folded, ascending and distinct.
        /// - Complexity: O(k log k + k log r + r) for k deletes and r ranges
        @discardableResult
        mutating func settle() -> [Int64] {
            guard !unsettledDeletes.isEmpty else { return [] }
            var keys = unsettledDeletes
            unsettledDeletes = []
            keys.sort()
            var distinct: [Int64] = []
            var wereInserted: [Int64] = []
            var existed: [Int64] = []
            for k in keys where k != distinct.last {
                distinct.append(k)
                if Self.contains(inserted, k) { wereInserted.append(k) } else { existed.append(k) }
            }
            if !wereInserted.isEmpty { inserted = Self.subtract(inserted, wereInserted) }
            if !existed.isEmpty { deleted = Self.union(deleted, existed) }
            return distinct
        }
    }

    /// One operation on a collection, at the position (or key) it had when it ran.
    package enum CollectionOperation: Equatable, Sendable {
        case insert(Int), erase(Int), set(Int), move(from: Int, to: Int), clear
        case insertKey(String), eraseKey(String), setKey(String)
    }

    /// A collection: its owner and property.
    package struct CollectionID: Hashable, Sendable {
        package var classKey: UInt32
        package var objectKey: Int64
        package var propertyKey: Int64

        package init(classKey: UInt32, objectKey: Int64, propertyKey: Int64) {
            self.classKey = classKey
            self.objectKey = objectKey
            self.propertyKey = propertyKey
        }
    }

    /// Changes by class key.
    package var tables: [UInt32: TableChanges] = [:]
    /// Operations by collection, in the order they ran.
    package var collections: [CollectionID: [CollectionOperation]] = [:]
    /// Whether the commit changed the schema.
    package var schemaChanged = false

    package init() {}

    package static func == (a: ChangeRecord, b: ChangeRecord) -> Bool {
        let a = a.settled(), b = b.settled()
        return a.schemaChanged == b.schemaChanged && a.tables == b.tables && a.collections == b.collections
    }

    /// Whether the commit changed nothing this record describes.
    package var isEmpty: Bool {
        if needsSettling { return settled().isEmpty }
        return !schemaChanged && tables.values.allSatisfy(\.isEmpty) && collections.isEmpty
    }

    /// The keys of the classes whose objects the record inserted, deleted or modified.
    package var touchedClasses: Set<UInt32> {
        if needsSettling { return settled().touchedClasses }
        return Set(tables.filter { !$0.value.isEmpty }.keys)
    }

    /// Whether deletes wait to be folded in by `settle()`.
    var needsSettling: Bool { tables.values.contains { !$0.unsettledDeletes.isEmpty } }

    /// This record, settled.
    func settled() -> ChangeRecord {
        guard needsSettling else { return self }
        var copy = self
        copy.settle()
        return copy
    }

    /// Folds every table's waiting deletes into its ranges and drops the collection operations
    /// of the objects they deleted.
    /// - Complexity: O(k log k + r) per table, plus O(c log k) for c collections
    mutating func settle() {
        var gone: [UInt32: [Int64]] = [:]
        for classKey in tables.keys where !(tables[classKey]?.unsettledDeletes.isEmpty ?? true) {
            gone[classKey] = tables[classKey]?.settle()
        }
        guard !gone.isEmpty, !collections.isEmpty else { return }
        collections = collections.filter { id, _ in
            guard let keys = gone[id.classKey] else { return true }
            var lo = 0, hi = keys.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if keys[mid] < id.objectKey { lo = mid + 1 } else { hi = mid }
            }
            return !(lo < keys.count && keys[lo] == id.objectKey)
        }
    }

    // MARK: Recording

    mutating func recordInsert(_ classKey: UInt32, _ objectKey: Int64) {
        TableChanges.add(objectKey, to: &tables[classKey, default: TableChanges()].inserted)
    }

    mutating func recordDelete(_ classKey: UInt32, _ objectKey: Int64) {
        // Edited in place in the dictionary: a copy taken out and put back would copy its
        // arrays at every delete, which made deleting k objects in one write cost O(k²).
        // The collection operations of the object go at `settle()`.
        tables[classKey, default: TableChanges()].recordDelete(objectKey)
    }

    // An object deleted by this write is neither modified nor its collections edited after it
    // went, so the two below ask the inserted ranges alone, without the deletes waiting there.

    mutating func recordModify(_ classKey: UInt32, _ objectKey: Int64, _ propertyKey: Int64) {
        if let t = tables[classKey], TableChanges.contains(t.inserted, objectKey) { return }
        tables[classKey, default: TableChanges()].modified[objectKey, default: []].insert(propertyKey)
    }

    mutating func recordCollection(_ id: CollectionID, _ op: CollectionOperation) {
        if let t = tables[id.classKey], TableChanges.contains(t.inserted, id.objectKey) { return }
        recordModify(id.classKey, id.objectKey, id.propertyKey)
        collections[id, default: []].append(op)
    }

    // MARK: Merging

    /// Folds in the record of a later commit, so that one record describes both: an object
    /// inserted by the first and deleted by the second is in neither list, one inserted by the
    /// first stays inserted (not modified), and collection operations follow each other.
    package mutating func merge(_ later: ChangeRecord) {
        settle()
        let later = later.settled()
        schemaChanged = schemaChanged || later.schemaChanged
        if tables.isEmpty && collections.isEmpty {
            // Nothing to fold into: the later record as it is (copied on write).
            tables = later.tables
            collections = later.collections
            return
        }
        for (classKey, t) in later.tables {
            var mine = tables[classKey, default: TableChanges()]
            for range in t.inserted {
                // Keys only grow: a later insert goes at the end, joining the last range.
                if let last = mine.inserted.last, range.lowerBound == last.upperBound + 1 {
                    mine.inserted[mine.inserted.count - 1] = last.lowerBound...range.upperBound
                } else if let last = mine.inserted.last, range.lowerBound <= last.upperBound {
                    for k in range { TableChanges.add(k, to: &mine.inserted) }
                } else {
                    mine.inserted.append(range)
                }
            }
            for range in t.deleted {
                for k in range { mine.recordDelete(k) }
            }
            mine.settle()
            for (k, properties) in t.modified where !mine.isInserted(k) {
                mine.modified[k, default: []].formUnion(properties)
            }
            tables[classKey] = mine
        }
        for (id, ops) in later.collections {
            if let t = tables[id.classKey], t.isInserted(id.objectKey) || t.isDeleted(id.objectKey) { continue }
            collections[id, default: []].append(contentsOf: ops)
        }
    }

    // MARK: Encoding

    /// The bytes kept in the history.
    package func encoded() -> [UInt8] {
        if needsSettling { return settled().encoded() }
        // Room for a small commit's record at once (one allocation).
        var out: [UInt8] = []
        out.reserveCapacity(64)
        out.append(1)
        put(schemaChanged ? 1 : 0, &out)
        // One table, the usual case, needs no list of keys to sort.
        if tables.count == 1, let only = tables.first {
            put(only.value.isEmpty ? 0 : 1, &out)
            if !only.value.isEmpty { putTable(only.key, only.value, &out) }
        } else {
            let tableKeys = tables.keys.filter { !(tables[$0]?.isEmpty ?? true) }.sorted()
            put(UInt64(tableKeys.count), &out)
            for key in tableKeys {
                if let t = tables[key] { putTable(key, t, &out) }
            }
        }
        let ids = collections.keys.sorted { ($0.classKey, $0.objectKey, $0.propertyKey) < ($1.classKey, $1.objectKey, $1.propertyKey) }
        put(UInt64(ids.count), &out)
        for id in ids {
            let ops = collections[id] ?? []
            put(UInt64(id.classKey), &out)
            put(UInt64(bitPattern: id.objectKey), &out)
            put(UInt64(bitPattern: id.propertyKey), &out)
            put(UInt64(ops.count), &out)
            for op in ops {
                switch op {
                case .insert(let i): out.append(1); put(UInt64(i), &out)
                case .erase(let i): out.append(2); put(UInt64(i), &out)
                case .set(let i): out.append(3); put(UInt64(i), &out)
                case .move(let from, let to): out.append(4); put(UInt64(from), &out); put(UInt64(to), &out)
                case .clear: out.append(5)
                case .insertKey(let k): out.append(6); putString(k, &out)
                case .eraseKey(let k): out.append(7); putString(k, &out)
                case .setKey(let k): out.append(8); putString(k, &out)
                }
            }
        }
        return out
    }

    private func putTable(_ key: UInt32, _ t: TableChanges, _ out: inout [UInt8]) {
        put(UInt64(key), &out)
        putRanges(t.inserted, &out)
        putRanges(t.deleted, &out)
        put(UInt64(t.modified.count), &out)
        for objectKey in t.modified.keys.sorted() {
            let properties = (t.modified[objectKey] ?? []).sorted()
            put(UInt64(bitPattern: objectKey), &out)
            put(UInt64(properties.count), &out)
            for p in properties { put(UInt64(bitPattern: p), &out) }
        }
    }

    private func putRanges(_ ranges: [ClosedRange<Int64>], _ out: inout [UInt8]) {
        put(UInt64(ranges.count), &out)
        for r in ranges {
            put(UInt64(bitPattern: r.lowerBound), &out)
            put(UInt64(r.count), &out)
        }
    }

    private func put(_ v: UInt64, _ out: inout [UInt8]) {
        var v = v
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    private func putString(_ s: String, _ out: inout [UInt8]) {
        put(UInt64(s.utf8.count), &out)
        out.append(contentsOf: s.utf8)
    }

    /// The record `encoded()` wrote.
    /// - Throws: `.corrupt` for bytes that are not one (truncated, an unknown format or tag).
    package static func decode(_ bytes: [UInt8]) throws(CoveError) -> ChangeRecord {
        var reader = Reader(bytes: bytes)
        guard try reader.byte() == 1 else { throw CoveError(.corrupt, "change record: unknown format") }
        var record = ChangeRecord()
        record.schemaChanged = try reader.varint() & 1 == 1
        for _ in 0..<(try reader.count()) {
            let classKey = UInt32(truncatingIfNeeded: try reader.varint())
            var t = TableChanges()
            for which in 0..<2 {
                var ranges: [ClosedRange<Int64>] = []
                for _ in 0..<(try reader.count()) {
                    let first = Int64(bitPattern: try reader.varint())
                    let n = Int64(bitPattern: try reader.varint())
                    guard n > 0, first >= 0, first <= Int64.max - n else { throw CoveError(.corrupt, "change record: a bad key range") }
                    ranges.append(first...(first + n - 1))
                }
                if which == 0 { t.inserted = ranges } else { t.deleted = ranges }
            }
            let modifiedCount = try reader.count()
            t.modified.reserveCapacity(modifiedCount)
            // Objects written alike (the usual case) share one set of property keys.
            var listed: [Int64] = []
            var last: (listed: [Int64], set: Set<Int64>) = ([], [])
            for _ in 0..<modifiedCount {
                let objectKey = Int64(bitPattern: try reader.varint())
                listed.removeAll(keepingCapacity: true)
                for _ in 0..<(try reader.count()) { listed.append(Int64(bitPattern: try reader.varint())) }
                if listed != last.listed { last = (listed, Set(listed)) }
                t.modified[objectKey] = last.set
            }
            record.tables[classKey] = t
        }
        for _ in 0..<(try reader.count()) {
            let id = CollectionID(classKey: UInt32(truncatingIfNeeded: try reader.varint()),
                                  objectKey: Int64(bitPattern: try reader.varint()),
                                  propertyKey: Int64(bitPattern: try reader.varint()))
            var ops: [CollectionOperation] = []
            for _ in 0..<(try reader.count()) {
                switch try reader.byte() {
                case 1: ops.append(.insert(try reader.index()))
                case 2: ops.append(.erase(try reader.index()))
                case 3: ops.append(.set(try reader.index()))
                case 4: ops.append(.move(from: try reader.index(), to: try reader.index()))
                case 5: ops.append(.clear)
                case 6: ops.append(.insertKey(try reader.string()))
                case 7: ops.append(.eraseKey(try reader.string()))
                case 8: ops.append(.setKey(try reader.string()))
                case let tag: throw CoveError(.corrupt, "change record: unknown operation \(tag)")
                }
            }
            record.collections[id] = ops
        }
        guard reader.atEnd else { throw CoveError(.corrupt, "change record: bytes after the end") }
        return record
    }

    private struct Reader {
        let bytes: [UInt8]
        var pos = 0

        var atEnd: Bool { pos == bytes.count }

        mutating func byte() throws(CoveError) -> UInt8 {
            guard pos < bytes.count else { throw CoveError(.corrupt, "change record: truncated") }
            defer { pos += 1 }
            return bytes[pos]
        }

        mutating func varint() throws(CoveError) -> UInt64 {
            var v: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let b = try byte()
                guard shift < 64 else { throw CoveError(.corrupt, "change record: a number too long") }
                v |= UInt64(b & 0x7F) << shift
                if b & 0x80 == 0 { return v }
                shift += 7
            }
        }

        /// A count, bounded by what the remaining bytes could hold.
        mutating func count() throws(CoveError) -> Int {
            let n = try varint()
            guard n <= UInt64(bytes.count - pos) else { throw CoveError(.corrupt, "change record: a count of \(n) past the end") }
            return Int(n)
        }

        mutating func index() throws(CoveError) -> Int {
            let n = try varint()
            guard n <= UInt64(Int.max) else { throw CoveError(.corrupt, "change record: an index too large") }
            return Int(n)
        }

        mutating func string() throws(CoveError) -> String {
            let n = try count()
            let slice = bytes[pos..<(pos + n)]
            pos += n
            guard let s = String(utf8: slice) else { throw CoveError(.corrupt, "change record: a key that is not UTF-8") }
            return s
        }
    }
}
