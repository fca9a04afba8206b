// The primary-key index of a required int key maps ranges of consecutive keys: random creates,
// deletes, key changes and duplicates against a dictionary, with verify() after each write and
// reopens; ids created in ascending order share one range; keys at the ends of Int64; an index
// written one entry per object (the form of other key types) still works; the open range grows
// in the table entry across commits without writing the index; migrations that give
// a class an int key, or make its int key optional, rebuild the index in the right form.
import XCTest
@testable import Cove
@testable import CoveCore
import CoveStorage

final class PrimaryKeyIndexTests: CoveTestCase {
    private func open(_ pk: String = "int", version: UInt64 = 1, migration: Migration.Block? = nil) throws -> Realm {
        let schema = try Schema(jsonText: #"{"Item": {"primaryKey": "id", "properties": {"id": "\#(pk)", "n": "int"}}}"#)
        return try Realm(configuration: .init(path: "\(folder)/pk.cove", durability: .noSync, schema: schema,
                                              schemaVersion: version, migrationBlock: migration))
    }

    private func ranges(_ realm: Realm) throws -> (kind: String, entries: UInt64) {
        let store = try realm.objectStore()
        let t = try store.primaryKeyTree(try store.objectSchema("Item"))
        return (t.keyKind == .u64 ? "ranges" : "entries", t.count)
    }

    /// The `n` of the object with primary key `id`, or nil when there is none.
    private func n(_ realm: Realm, _ id: Value) throws -> Value? {
        guard let o = try realm.dynamicObject(ofType: "Item", forPrimaryKey: id) else { return nil }
        return try o["n"]
    }

    /// Checks every id of `model` is found with its `n`, and a few absent ids are not.
    private func check(_ realm: Realm, _ model: [Int64: Int64], absent: [Int64], _ context: String) throws {
        for (id, n) in model {
            guard let o = try realm.dynamicObject(ofType: "Item", forPrimaryKey: .int(id)) else {
                return XCTFail("\(context): id \(id) not found")
            }
            XCTAssertEqual(try o["n"], .int(n), "\(context): id \(id)")
        }
        for id in absent where model[id] == nil {
            XCTAssertNil(try realm.dynamicObject(ofType: "Item", forPrimaryKey: .int(id)), "\(context): id \(id) found")
        }
        XCTAssertEqual(try realm.objects("Item").checkedCount(), model.count, context)
        _ = try realm.verify()
    }

    func testRandomWritesAgainstAModel() throws {
        var rng = SeededRandom(seed: 0x5eed_0007)
        var realm = try open()
        var model: [Int64: Int64] = [:]
        var counter: Int64 = 0
        for step in 0..<60 {
            try realm.write {
                for _ in 0..<(1 + Int(rng.next() % 25)) {
                    switch rng.next() % 8 {
                    case 0, 1, 2:
                        // A run of ascending ids, as a counter hands them out.
                        let start = counter
                        for id in start..<start + Int64(rng.next() % 6) + 1 where model[id] == nil {
                            try realm.dynamicCreate("Item", primaryKey: .int(id), values: [("n", .int(id * 3))])
                            model[id] = id * 3
                        }
                        counter = start + 7
                    case 3:
                        // A random id, maybe taken, maybe descending into a range's front.
                        let id = Int64(rng.next() % UInt64(counter + 10)) - 5
                        if model[id] != nil {
                            assertThrows(.duplicateKey, containing: "primary key \(id)") {
                                try realm.dynamicCreate("Item", primaryKey: .int(id), values: [("n", .int(0))])
                            }
                        } else {
                            try realm.dynamicCreate("Item", primaryKey: .int(id), values: [("n", .int(-id))])
                            model[id] = -id
                        }
                    case 4, 5:
                        guard let id = model.keys.sorted().randomElement(using: &rng) else { break }  // sorted: the seed alone decides
                        try realm.delete(realm.dynamicObject(ofType: "Item", forPrimaryKey: .int(id))!)
                        model[id] = nil
                    default:
                        // A changed primary key: out of one range, into another place.
                        guard let id = model.keys.sorted().randomElement(using: &rng) else { break }  // sorted: the seed alone decides
                        let to = Int64(rng.next() % UInt64(counter + 10)) - 5
                        let o = try realm.dynamicObject(ofType: "Item", forPrimaryKey: .int(id))!
                        if to != id && model[to] != nil {
                            assertThrows(.duplicateKey, containing: "primary key \(to)") { try o.setValue(.int(to), forKey: "id") }
                        } else {
                            try o.setValue(.int(to), forKey: "id")
                            let n = model.removeValue(forKey: id)!
                            model[to] = n
                        }
                    }
                    // Lookups inside the write see it, the range still growing in memory too.
                    for id in [counter - 2, counter - 1, counter, Int64(rng.next() % UInt64(counter + 10)) - 5] {
                        XCTAssertEqual(try n(realm, .int(id)), model[id].map { .int($0) }, "in the write of step \(step), id \(id)")
                    }
                }
            }
            try check(realm, model, absent: (-6..<counter + 6).map { $0 }, "step \(step)")
            if step % 15 == 14 {
                realm.close()
                realm = try open()
                try check(realm, model, absent: [], "reopened at step \(step)")
            }
        }
        XCTAssertEqual(try ranges(realm).kind, "ranges")
        realm.close()
    }

    func testAscendingIdsShareOneRange() throws {
        let realm = try open()
        try realm.write {
            for id in 0..<Int64(10_000) {
                try realm.dynamicCreate("Item", primaryKey: .int(id), values: [("n", .int(id))])
            }
        }
        XCTAssertTrue(try ranges(realm) == ("ranges", 1))
        // Deleting from the middle splits it; from an end shortens it.
        try realm.write {
            try realm.delete(realm.dynamicObject(ofType: "Item", forPrimaryKey: .int(5000))!)
            try realm.delete(realm.dynamicObject(ofType: "Item", forPrimaryKey: .int(0))!)
            try realm.delete(realm.dynamicObject(ofType: "Item", forPrimaryKey: .int(9999))!)
        }
        XCTAssertTrue(try ranges(realm) == ("ranges", 2))
        XCTAssertNil(try realm.dynamicObject(ofType: "Item", forPrimaryKey: .int(5000)))
        XCTAssertEqual(try n(realm, .int(5001)), .int(5001))
        XCTAssertEqual(try n(realm, .int(4999)), .int(4999))
        // A new object under an old id gets a new object key: its own range.
        try realm.write { _ = try realm.dynamicCreate("Item", primaryKey: .int(5000), values: [("n", .int(-1))]) }
        XCTAssertTrue(try ranges(realm) == ("ranges", 3))
        XCTAssertEqual(try n(realm, .int(5000)), .int(-1))
        _ = try realm.verify()
        realm.close()
    }

    /// The index's page (its root) as the realm's current version has it.
    private func indexRoot(_ realm: Realm) throws -> PageRef {
        let store = try realm.objectStore()
        let cls = try store.objectSchema("Item")
        return try store.tree(CatalogKey.primaryKey(try store.classKey(of: cls))).root.page
    }

    /// One-object commits with the next id grow the open range in the table entry: the index's
    /// page is written by the first of them only. Lookups answer from the range in every
    /// version, in a read transaction and after reopening; an id that does not follow, a
    /// delete and an id taken twice close it into the tree.
    func testTheOpenRangeGrowsInTheTableEntryAcrossCommits() throws {
        var realm = try open()
        try realm.write { _ = try realm.dynamicCreate("Item", primaryKey: .int(0), values: [("n", .int(0))]) }
        try realm.write { _ = try realm.dynamicCreate("Item", primaryKey: .int(1), values: [("n", .int(1))]) }
        let root = try indexRoot(realm)
        for id in Int64(2)..<60 {
            try realm.write { _ = try realm.dynamicCreate("Item", primaryKey: .int(id), values: [("n", .int(id))]) }
            if id % 20 == 0 {
                realm.close()
                realm = try open()
            }
        }
        XCTAssertEqual(try indexRoot(realm), root, "a commit with the next id wrote the index")
        XCTAssertTrue(try ranges(realm) == ("ranges", 1))
        for id in Int64(0)..<60 { XCTAssertEqual(try n(realm, .int(id)), .int(id)) }
        XCTAssertNil(try n(realm, .int(60)))
        XCTAssertNil(try n(realm, .int(-1)))
        XCTAssertTrue(try realm.verify().contains("index entries match"))
        assertThrows(.duplicateKey, containing: "30") {
            try realm.write { _ = try realm.dynamicCreate("Item", primaryKey: .int(30), values: []) }
        }
        // An id past a gap: the open range goes into the tree, the new one opens.
        try realm.write { _ = try realm.dynamicCreate("Item", primaryKey: .int(100), values: [("n", .int(100))]) }
        try realm.write { _ = try realm.dynamicCreate("Item", primaryKey: .int(101), values: [("n", .int(101))]) }
        XCTAssertTrue(try ranges(realm) == ("ranges", 2))
        for id in Int64(0)..<60 { XCTAssertEqual(try n(realm, .int(id)), .int(id)) }
        XCTAssertEqual(try n(realm, .int(101)), .int(101))
        XCTAssertNil(try n(realm, .int(102)))
        // A delete inside the open range splits it.
        try realm.write { try realm.delete(realm.dynamicObject(ofType: "Item", forPrimaryKey: .int(100))!) }
        XCTAssertNil(try n(realm, .int(100)))
        XCTAssertEqual(try n(realm, .int(101)), .int(101))
        _ = try realm.verify()
        realm.close()
        realm = try open()
        XCTAssertEqual(try realm.objects("Item").checkedCount(), 61)
        _ = try realm.verify()
        realm.close()
    }

    /// A table entry with an open range round-trips, through the shape's fast path too; one
    /// whose range is malformed or whose tail is not a range is corrupt.
    /// A transaction's table is kept for the realm's next one (the same object), and starts
    /// from the committed entry: what a cancelled or failed write left in it (objects written to
    /// its tree or still pending, a grown open range, the dirty mark) is gone.
    func testAKeptTableStartsFromTheCommittedEntry() throws {
        let realm = try open()
        defer { realm.close() }
        let cls = try realm.objectStore().objectSchema("Item")
        var model: [Int64: Int64] = [:]
        func create(_ ids: Range<Int64>, n: Int64) throws {
            for id in ids {
                _ = try realm.dynamicCreate("Item", primaryKey: .int(id), values: [("n", .int(n))])
                model[id] = n
            }
        }
        // Weak: a table freed and another made at its address would compare equal by address.
        weak var first: ObjectStore.Table?
        try realm.write {
            first = try realm.objectStore().table(forCreate: cls)
            try create(0..<5, n: 1)
        }
        // Written to the tree (a read writes the pending objects), then cancelled.
        try realm.beginWrite()
        XCTAssertTrue(try realm.objectStore().table(forCreate: cls) === first)
        for id in Int64(5)..<8 { _ = try realm.dynamicCreate("Item", primaryKey: .int(id), values: [("n", .int(2))]) }
        XCTAssertEqual(try realm.dynamicObjects("Item").count, 8)
        try realm.cancelWrite()
        // Failed writes with objects still pending (a duplicate key, another error): the
        // kept table starts without them.
        XCTAssertThrowsError(try realm.write {
            for id in Int64(5)..<7 { _ = try realm.dynamicCreate("Item", primaryKey: .int(id), values: [("n", .int(3))]) }
            _ = try realm.dynamicCreate("Item", primaryKey: .int(0), values: [("n", .int(3))])
        })
        struct Stop: Error {}
        XCTAssertThrowsError(try realm.write {
            XCTAssertTrue(try realm.objectStore().table(forCreate: cls) === first)
            for id in Int64(5)..<7 { _ = try realm.dynamicCreate("Item", primaryKey: .int(id), values: [("n", .int(3))]) }
            throw Stop()
        })
        try realm.write {
            XCTAssertTrue(try realm.objectStore().table(forCreate: cls) === first)
            try create(5..<10, n: 4)
        }
        XCTAssertEqual(try realm.dynamicObjects("Item").count, 10)
        try check(realm, model, absent: [10, 11, -1], "after the cancelled writes")
        try realm.write {
            XCTAssertTrue(try realm.objectStore().table(forCreate: cls) === first)
            try create(10..<12, n: 5)
        }
        try check(realm, model, absent: [12], "after the kept table wrote again")
        XCTAssertEqual(try ranges(realm).kind, "ranges")
        _ = try realm.verify()
    }

    /// A transaction that reaches several tables keeps each of them (the first apart, the
    /// others by class key), and each starts the next transaction from its committed entry.
    func testEveryTableATransactionReachedIsKept() throws {
        let schema = try Schema(jsonText: #"{"A": {"primaryKey": "id", "properties": {"id": "int"}}, "B": {"properties": {"n": "int"}}, "C": {"properties": {"s": "string"}}}"#)
        let realm = try Realm(configuration: .init(path: "\(folder)/three.cove", durability: .noSync, schema: schema, schemaVersion: 1))
        defer { realm.close() }
        let store = { () throws -> ObjectStore in try realm.objectStore() }
        let classes = try ["A", "B", "C"].map { try store().objectSchema($0) }
        weak var a: ObjectStore.Table?, b: ObjectStore.Table?, c: ObjectStore.Table?
        try realm.write {
            _ = try realm.dynamicCreate("A", primaryKey: .int(1))
            _ = try realm.dynamicCreate("B", values: [("n", .int(2))])
            _ = try realm.dynamicCreate("C", values: [("s", .string("x"))])
            a = try store().table(forCreate: classes[0])
            b = try store().table(forCreate: classes[1])
            c = try store().table(forCreate: classes[2])
        }
        try realm.write {
            // Reached in another order this time.
            XCTAssertTrue(try store().table(forCreate: classes[2]) === c)
            XCTAssertTrue(try store().table(forCreate: classes[0]) === a)
            XCTAssertTrue(try store().table(forCreate: classes[1]) === b)
            _ = try realm.dynamicCreate("A", primaryKey: .int(2))
            _ = try realm.dynamicCreate("C", values: [("s", .string("y"))])
        }
        XCTAssertEqual(try realm.dynamicObjects("A").count, 2)
        XCTAssertEqual(try realm.dynamicObjects("B").count, 1)
        XCTAssertEqual(try realm.dynamicObjects("C").map { try $0["s"] }, [.string("x"), .string("y")])
        XCTAssertNotNil(try realm.dynamicObject(ofType: "A", forPrimaryKey: .int(2)))
        _ = try realm.verify()
    }

    func testTableEntriesWithAnOpenRangeDecodeAndCheck() throws {
        let columns: [(property: Int64, spec: ColumnSpec)] = [(1, ColumnSpec(.int)), (2, ColumnSpec(.string, nullable: true))]
        let open = OpenPrimaryKeyRange(range: PrimaryKeyRange(first: 10, objectKey: 3, count: 7), stored: 2)
        let entry = TableEntry(root: .empty, nextObjectKey: 10, columns: columns, openRange: open)
        let bytes = try entry.withEncoded { Array($0) }
        XCTAssertEqual(try bytes.withUnsafeBytes { try TableEntry.decode($0) }, entry)
        let cls = try Schema(jsonText: #"{"Item": {"properties": {"id": "int", "n": "string?"}}}"#)["Item"]!
        let shape = TableShape(cls: cls, columns: columns)
        XCTAssertEqual(try bytes.withUnsafeBytes { try TableEntry.decode($0, columnsOf: shape) }, entry)
        func corrupt(_ patch: (inout [UInt8]) -> Void, _ why: String, line: UInt = #line) {
            var b = bytes
            patch(&b)
            XCTAssertThrowsError(try b.withUnsafeBytes { try TableEntry.decode($0) }, why, line: line) { error in
                guard let e = error as? StorageError, case .corrupt = e else { return XCTFail("\(error)", line: line) }
            }
        }
        let at = bytes.count - OpenPrimaryKeyRange.encodedSize
        corrupt({ $0[at + 16] = 1; $0[at + 17] = 0 }, "a count below the stored keys")
        corrupt({ $0[at + 15] = 0x80 }, "a negative object key")
        corrupt({ $0.append(0) }, "a tail that is not a range")
    }

    /// verify() compares the open range of the table entry with the tree's last range.
    func testAnOpenRangeThatDisagreesWithTheTreeIsCorrupt() throws {
        let realm = try open()
        defer { realm.close() }
        for id in Int64(0)..<5 {
            try realm.write { _ = try realm.dynamicCreate("Item", primaryKey: .int(id), values: [("n", .int(id))]) }
        }
        try realm.write {
            let store = try realm.objectStore()
            let t = try store.table(store.objectSchema("Item"))
            t.openRangeStoredCount += 1
        }
        assertThrows(.corrupt, containing: "open range") { _ = try realm.verify() }
    }

    func testKeysAtTheEndsOfInt64() throws {
        let realm = try open()
        let ids: [Int64] = [.min, .min + 1, -1, 0, 1, .max - 1, .max]
        try realm.write {
            for id in ids { try realm.dynamicCreate("Item", primaryKey: .int(id), values: [("n", .int(id / 2))]) }
        }
        // Created in ascending order with consecutive object keys: .min, .min + 1 and -1, 0, 1
        // and .max - 1, .max each form a range.
        XCTAssertTrue(try ranges(realm) == ("ranges", 3))
        for id in ids { XCTAssertEqual(try n(realm, .int(id)), .int(id / 2)) }
        XCTAssertNil(try realm.dynamicObject(ofType: "Item", forPrimaryKey: .int(.min + 2)))
        XCTAssertNil(try realm.dynamicObject(ofType: "Item", forPrimaryKey: .int(.max - 2)))
        try realm.write { try realm.delete(realm.dynamicObject(ofType: "Item", forPrimaryKey: .int(.max))!) }
        XCTAssertNil(try realm.dynamicObject(ofType: "Item", forPrimaryKey: .int(.max)))
        XCTAssertEqual(try n(realm, .int(.max - 1)), .int((.max - 1) / 2))
        XCTAssertEqual(try realm.objects("Item").filter("id IN {-1, 1, 9223372036854775807}").checkedCount(), 2)
        _ = try realm.verify()
        realm.close()
    }

    func testAnIndexWrittenOneEntryPerObjectStillWorks() throws {
        let realm = try open()
        try realm.write {
            for id in 0..<Int64(50) { try realm.dynamicCreate("Item", primaryKey: .int(id), values: [("n", .int(id))]) }
        }
        try realm.write {
            // Rewrite the index in the byte-keyed form, one entry per object.
            let store = try realm.objectStore()
            let cls = try store.objectSchema("Item")
            let key = CatalogKey.primaryKey(try store.classKey(of: cls))
            // The ranges' open one is closed first, as every edit of the index does.
            _ = try store.primaryKeyTree(cls)
            try store.dropTree(key)
            store.resetEmptyTree(key, kind: .bytes)
            for (objectKey, id) in try store.objectKeys(cls).enumerated() {
                XCTAssertEqual(try store.get(cls, id, cls[property: "id"]!), .int(Int64(objectKey)))
                let bytes = withUnsafeBytes(of: id.littleEndian) { Array($0) }
                try store.editTree(key) { (t) throws(StorageError) in _ = try t.put(Value.int(Int64(objectKey)).indexKey(), bytes) }
            }
        }
        XCTAssertTrue(try ranges(realm) == ("entries", 50))
        _ = try realm.verify()
        try realm.write {
            try realm.delete(realm.dynamicObject(ofType: "Item", forPrimaryKey: .int(7))!)
            _ = try realm.dynamicCreate("Item", primaryKey: .int(50), values: [("n", .int(50))])
            try realm.dynamicObject(ofType: "Item", forPrimaryKey: .int(8))!.setValue(.int(80), forKey: "id")
            assertThrows(.duplicateKey, containing: "primary key 9") {
                try realm.dynamicCreate("Item", primaryKey: .int(9), values: [("n", .int(0))])
            }
        }
        XCTAssertTrue(try ranges(realm) == ("entries", 50))
        XCTAssertNil(try realm.dynamicObject(ofType: "Item", forPrimaryKey: .int(7)))
        XCTAssertEqual(try n(realm, .int(80)), .int(8))
        XCTAssertEqual(try n(realm, .int(50)), .int(50))
        _ = try realm.verify()
        realm.close()
    }

    func testMigrationsRebuildTheIndexInTheFormOfTheNewKey() throws {
        var realm = try open("string")
        try realm.write {
            for id in 0..<Int64(20) { try realm.dynamicCreate("Item", primaryKey: .string("\(id)"), values: [("n", .int(id))]) }
        }
        XCTAssertTrue(try ranges(realm) == ("entries", 20))
        realm.close()
        // string -> int: the callback gives each object its int key.
        realm = try open("int", version: 2) { migration, _ in
            try migration.enumerateObjects(ofType: "Item") { old, new in
                guard let new, case .string(let s) = try old["id"] else { return }
                try new.setValue(.int(Int64(s)! + 100), forKey: "id")
            }
        }
        XCTAssertEqual(try n(realm, .int(105)), .int(5))
        XCTAssertEqual(try ranges(realm).kind, "ranges")
        _ = try realm.verify()
        realm.close()
        // int -> int?: a key that may be null is filed one entry per object.
        realm = try open("int?", version: 3) { migration, _ in
            try migration.enumerateObjects(ofType: "Item") { old, new in try new?.setValue(try old["id"], forKey: "id") }
        }
        XCTAssertTrue(try ranges(realm) == ("entries", 20))
        XCTAssertEqual(try n(realm, .int(119)), .int(19))
        try realm.write { _ = try realm.dynamicCreate("Item", primaryKey: .null, values: [("n", .int(-1))]) }
        XCTAssertEqual(try n(realm, .null), .int(-1))
        _ = try realm.verify()
        realm.close()
    }
}
