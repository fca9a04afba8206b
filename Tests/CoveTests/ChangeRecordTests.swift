// The change records commits leave in the history: inserts as key ranges, deletes, modified
// properties, collection operations in order with their positions, an empty record for an empty
// commit, the schema flag, and a decoder that refuses damaged bytes.
import XCTest
@testable import Cove
@testable import CoveCore

final class ChangeRecordTests: CoveTestCase {
    static let schemaJSON = """
    {"Dog": {"properties": {"name": "string", "age": "int", "nums": "int[]", "tags": "string<>", "scores": "double{}"}}}
    """

    private func open() throws -> Realm {
        try Realm(configuration: .init(path: "\(folder)/h.cove", durability: .noSync,
                                       schema: try Schema(jsonText: Self.schemaJSON), schemaVersion: 1))
    }

    private func lastRecord(_ realm: Realm) throws -> ChangeRecord {
        try XCTUnwrap(realm.changeRecord(forVersion: try realm.version))
    }

    func testTablesAndCollectionsAreRecorded() throws {
        let realm = try open()
        XCTAssertTrue(try lastRecord(realm).schemaChanged)
        let classKey = try XCTUnwrap(realm.schema["Dog"]?.classKey)
        let age = try XCTUnwrap(realm.schema["Dog"]?[property: "age"]?.key)
        let nums = try XCTUnwrap(realm.schema["Dog"]?[property: "nums"]?.key)
        let tags = try XCTUnwrap(realm.schema["Dog"]?[property: "tags"]?.key)
        let scores = try XCTUnwrap(realm.schema["Dog"]?[property: "scores"]?.key)

        var dogs: [DynamicObject] = []
        try realm.write {
            for i in 0..<5 { dogs.append(try realm.dynamicCreate("Dog", values: [("age", .int(Int64(i)))])) }
            let ghost = try realm.dynamicCreate("Dog")
            try realm.delete(ghost)
        }
        var record = try lastRecord(realm)
        XCTAssertFalse(record.schemaChanged)
        XCTAssertEqual(record.tables[classKey]?.inserted, [dogs[0].objectKey...dogs[4].objectKey])
        XCTAssertEqual(record.tables[classKey]?.deleted, [])
        XCTAssertEqual(record.tables[classKey]?.modified, [:])    // inserted rows are not also modified

        try realm.write {
            try dogs[1].setValue(.int(10), forKey: "age")
            try dogs[1].setValue(.int(10), forKey: "age")              // equal values still count
            let list = try dogs[2].dynamicList("nums")
            try list.append(.int(1))
            try list.insert(.int(0), at: 0)
            try list.move(from: 0, to: 1)
            try list.replace(index: 0, with: .int(5))
            try list.remove(at: 1)
            try dogs[2].dynamicMutableSet("tags").insert(.string("b"))
            try dogs[2].dynamicMutableSet("tags").insert(.string("a"))
            try dogs[2].dynamicMutableSet("tags").remove(.string("b"))
            try dogs[2].dynamicMap("scores").setValue(.double(1), forKey: "x")
            try dogs[2].dynamicMap("scores").setValue(.double(2), forKey: "x")
            try dogs[2].dynamicMap("scores").removeValue(forKey: "x")
            try realm.delete(dogs[3])
            try realm.delete(dogs[0])
        }
        record = try lastRecord(realm)
        let table = try XCTUnwrap(record.tables[classKey])
        XCTAssertEqual(table.inserted, [])
        XCTAssertEqual(table.deleted, [dogs[0].objectKey...dogs[0].objectKey, dogs[3].objectKey...dogs[3].objectKey])
        XCTAssertEqual(table.modified[dogs[1].objectKey], [age])
        XCTAssertEqual(table.modified[dogs[2].objectKey], [nums, tags, scores])
        func id(_ p: Int64) -> ChangeRecord.CollectionID { .init(classKey: classKey, objectKey: dogs[2].objectKey, propertyKey: p) }
        XCTAssertEqual(record.collections[id(nums)], [.insert(0), .insert(0), .move(from: 0, to: 1), .set(0), .erase(1)])
        XCTAssertEqual(record.collections[id(tags)], [.insert(0), .insert(0), .erase(1)])
        XCTAssertEqual(record.collections[id(scores)], [.insertKey("x"), .setKey("x"), .eraseKey("x")])
        XCTAssertEqual(try ChangeRecord.decode(record.encoded()), record)

        try realm.write {}
        XCTAssertTrue(try lastRecord(realm).isEmpty)
    }

    func testABulkInsertRecordStaysSmall() throws {
        let realm = try open()
        try realm.write {
            for _ in 0..<20_000 { try realm.dynamicCreate("Dog") }
        }
        let record = try lastRecord(realm)
        XCTAssertEqual(record.tables.values.first?.inserted.count, 1)
        XCTAssertLessThan(record.encoded().count, 16)
    }

    /// Deletes in random order in one write, among objects the same write inserted and
    /// modified: the record lists as deleted exactly the old objects deleted (as ranges), as
    /// inserted the new ones that remain, and as modified the old ones that remain.
    func testManyDeletesInRandomOrder() throws {
        let realm = try open()
        let classKey = try XCTUnwrap(realm.schema["Dog"]?.classKey)
        let old = try realm.write { try (0..<3000).map { _ in try realm.dynamicCreate("Dog").objectKey } }
        var rng = SystemRandomNumberGenerator()
        var deleted = Set<Int64>()
        var modified = Set<Int64>()
        var inserted = Set<Int64>()
        try realm.write {
            let fresh = try (0..<500).map { _ in try realm.dynamicCreate("Dog").objectKey }
            inserted = Set(fresh)
            for key in old.shuffled(using: &rng).prefix(1000) {
                try XCTUnwrap(realm.dynamicObject(ofType: "Dog", objectKey: key)).setValue(.int(1), forKey: "age")
                modified.insert(key)
            }
            for key in (old + fresh).shuffled(using: &rng).prefix(2000) {
                try realm.delete(try XCTUnwrap(realm.dynamicObject(ofType: "Dog", objectKey: key)))
                if inserted.remove(key) == nil { deleted.insert(key) }
                modified.remove(key)
            }
        }
        let t = try XCTUnwrap(try lastRecord(realm).tables[classKey])
        func keys(_ ranges: [ClosedRange<Int64>]) -> [Int64] { ranges.flatMap { Array($0) } }
        XCTAssertEqual(keys(t.deleted), deleted.sorted())
        XCTAssertEqual(keys(t.inserted), inserted.sorted())
        XCTAssertEqual(Set(t.modified.keys), modified)
        for (a, b) in zip(t.deleted, t.deleted.dropFirst()) { XCTAssertLessThan(a.upperBound + 1, b.lowerBound, "ranges merged") }
    }

    /// Deletes recorded out of order wait unsorted; before and after `settle()` the record
    /// answers, compares and encodes as a model of key sets says, and the collection
    /// operations of deleted objects go. Keys come from a counter, as a table hands them out.
    func testWaitingDeletesSettleToTheModel() throws {
        var generator = SeededRandom(seed: 7)
        for round in 0..<60 {
            var record = ChangeRecord()
            var inserted = Set<Int64>(), deleted = Set<Int64>(), edited = Set<Int64>()
            var live = Set(Int64(0)..<200)
            var everUsed = live
            var next: Int64 = 200
            for _ in 0..<Int.random(in: 1..<300, using: &generator) {
                switch Int.random(in: 0..<5, using: &generator) {
                case 0, 1:
                    let key = next
                    next += 1
                    everUsed.insert(key)
                    record.recordInsert(1, key)
                    inserted.insert(key)
                    live.insert(key)
                case 2, 3:
                    let pickLast = Int.random(in: 0..<3, using: &generator) == 0
                    guard let key = pickLast ? live.max() : live.randomElement(using: &generator) else { continue }
                    live.remove(key)
                    record.recordDelete(1, key)
                    if inserted.remove(key) == nil { deleted.insert(key) }
                    edited.remove(key)
                default:
                    guard let key = live.randomElement(using: &generator) else { continue }
                    record.recordCollection(.init(classKey: 1, objectKey: key, propertyKey: 3), .insert(0))
                    if !inserted.contains(key) { edited.insert(key) }
                }
                if Int.random(in: 0..<10, using: &generator) == 0 { record.settle() }
            }
            let unsettled = record
            let settled = record.settled()
            XCTAssertFalse(settled.needsSettling)
            XCTAssertEqual(unsettled, settled, "round \(round)")
            XCTAssertEqual(unsettled.encoded(), settled.encoded(), "round \(round)")
            let t = settled.tables[1] ?? .init()
            XCTAssertEqual(t.inserted.flatMap { Array($0) }, inserted.sorted(), "round \(round)")
            XCTAssertEqual(t.deleted.flatMap { Array($0) }, deleted.sorted(), "round \(round)")
            for (a, b) in zip(t.deleted, t.deleted.dropFirst()) { XCTAssertLessThan(a.upperBound + 1, b.lowerBound) }
            for (a, b) in zip(t.inserted, t.inserted.dropFirst()) { XCTAssertLessThan(a.upperBound + 1, b.lowerBound) }
            let u = unsettled.tables[1] ?? .init()
            for key in everUsed {
                XCTAssertEqual(u.isInserted(key), inserted.contains(key), "round \(round) key \(key)")
                XCTAssertEqual(u.isDeleted(key), deleted.contains(key), "round \(round) key \(key)")
            }
            XCTAssertEqual(Set(settled.collections.keys.map(\.objectKey)), edited, "round \(round)")
            let decoded = try ChangeRecord.decode(unsettled.encoded())
            XCTAssertEqual(decoded, unsettled, "round \(round)")
        }
    }

    /// The range merges against sets of keys.
    func testRangeUnionAndSubtraction() {
        var generator = SeededRandom(seed: 3)
        typealias T = ChangeRecord.TableChanges
        func ranges(_ keys: Set<Int64>) -> [ClosedRange<Int64>] {
            var out: [ClosedRange<Int64>] = []
            for k in keys.sorted() { T.add(k, to: &out) }
            return out
        }
        for _ in 0..<300 {
            let present = Set((0..<Int.random(in: 0..<60, using: &generator)).map { _ in Int64.random(in: -40...40, using: &generator) })
            let more = Set((0..<Int.random(in: 0..<30, using: &generator)).map { _ in Int64.random(in: -40...40, using: &generator) })
                .subtracting(present)
            XCTAssertEqual(T.union(ranges(present), more.sorted()), ranges(present.union(more)))
            let taken = present.filter { _ in Bool.random(using: &generator) }
            XCTAssertEqual(T.subtract(ranges(present), taken.sorted()), ranges(present.subtracting(taken)))
        }
        XCTAssertEqual(T.union([0...Int64.max], [5]), [0...Int64.max])
        XCTAssertEqual(T.subtract([(Int64.max - 2)...Int64.max], [Int64.max]), [(Int64.max - 2)...(Int64.max - 1)])
    }

    func testDamagedRecordsAreRefused() throws {
        var record = ChangeRecord()
        record.schemaChanged = true
        let bytes = record.encoded()
        assertThrows(.corrupt, containing: "truncated") { _ = try ChangeRecord.decode(Array(bytes.dropLast())) }
        assertThrows(.corrupt, containing: "unknown format") { _ = try ChangeRecord.decode([9] + bytes.dropFirst()) }
        assertThrows(.corrupt, containing: "after the end") { _ = try ChangeRecord.decode(bytes + [0]) }
        assertThrows(.corrupt, containing: "past the end") { _ = try ChangeRecord.decode([1, 0, 0x80, 0x80, 0x01]) }
        for _ in 0..<2000 {
            let junk = (0..<Int.random(in: 0..<24)).map { _ in UInt8.random(in: 0...255) }
            let result = Result { () throws(CoveError) -> ChangeRecord in try ChangeRecord.decode([1] + junk) }
            if case .failure(let error) = result { XCTAssertEqual(error.code, .corrupt) }
        }
    }
}
