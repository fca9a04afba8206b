// Secondary indexes through the Swift API: lookups by indexed, primary-key and unindexed
// properties agree with a scan through creates, sets and deletes; an index added by an additive
// schema change is built for the objects already there; verify() checks every entry.
import XCTest
import Cove

final class IndexTests: CoveTestCase {
    static func schema(indexed: Bool) -> String {
        """
        {"Person": {"primaryKey": "id", "properties": {"id": "int", "name": "string", "age": "int",
                    "born": "date?", "any": "mixed", "nick": "string?"},
                    "indexed": \(indexed ? #"["name", "age", "born", "any"]"# : "[]")}}
        """
    }

    private func open(indexed: Bool = true, version: UInt64 = 1) throws -> Realm {
        try Realm(configuration: .init(path: "\(folder)/i.cove", durability: .noSync,
                                       schema: try Schema(jsonText: Self.schema(indexed: indexed)), schemaVersion: version))
    }

    private func ids(_ objects: [DynamicObject]) throws -> [Int64] {
        try objects.map { object throws -> Int64 in
            guard case .int(let id) = try object["id"] else { throw CoveError(.internal, "no id") }
            return id
        }.sorted()
    }

    func testLookupsFollowEveryWrite() throws {
        let realm = try open()
        let long = String(repeating: "x", count: 3000)
        try realm.write {
            for i in 0..<60 {
                try realm.dynamicCreate("Person", primaryKey: .int(Int64(i)), values: [
                    ("name", .string(i % 3 == 0 ? "Ann" : (i == 7 ? long : "Bob"))), ("age", .int(Int64(i % 5))),
                    ("born", i % 2 == 0 ? .null : .timestamp(Timestamp(seconds: 100))), ("any", i % 4 == 0 ? .string("s") : .int(Int64(i % 4))),
                ])
            }
        }
        XCTAssertEqual(try ids(realm.dynamicObjects("Person", where: "name", equals: .string("Ann"))), stride(from: 0, to: 60, by: 3).map { Int64($0) })
        XCTAssertEqual(try ids(realm.dynamicObjects("Person", where: "name", equals: .string(long))), [7])
        XCTAssertEqual(try realm.dynamicObjects("Person", where: "age", equals: .int(2)).count, 12)
        XCTAssertEqual(try realm.dynamicObjects("Person", where: "born", equals: .null).count, 30)
        XCTAssertEqual(try ids(realm.dynamicObjects("Person", where: "any", equals: .int(3))), stride(from: 3, to: 60, by: 4).map { Int64($0) })
        XCTAssertEqual(try ids(realm.dynamicObjects("Person", where: "id", equals: .int(42))), [42])
        XCTAssertEqual(try realm.dynamicObjects("Person", where: "nick", equals: .null).count, 60)
        let report = try realm.verify()
        XCTAssertTrue(report.contains("300 index entries match"), report)

        try realm.write {
            let p = try XCTUnwrap(realm.dynamicObject(ofType: "Person", forPrimaryKey: .int(0)))
            try p.setValue(.string("Zed"), forKey: "name")
            try p.setValue(.int(9), forKey: "age")
            try realm.delete(try XCTUnwrap(realm.dynamicObject(ofType: "Person", forPrimaryKey: .int(3))))
            try realm.delete(try XCTUnwrap(realm.dynamicObject(ofType: "Person", forPrimaryKey: .int(7))))
            // Inside the write, lookups see the write's own changes.
            XCTAssertEqual(try ids(realm.dynamicObjects("Person", where: "name", equals: .string("Zed"))), [0])
        }
        XCTAssertEqual(try realm.dynamicObjects("Person", where: "name", equals: .string("Ann")).count, 18)
        XCTAssertEqual(try realm.dynamicObjects("Person", where: "name", equals: .string(long)).count, 0)
        XCTAssertEqual(try ids(realm.dynamicObjects("Person", where: "age", equals: .int(9))), [0])
        XCTAssertTrue(try realm.verify().contains("290 index entries match"))
        assertThrows(.wrongType, containing: "property 'age' of class 'Person' is int, got string") {
            _ = try realm.dynamicObjects("Person", where: "age", equals: .string("1"))
        }
        assertThrows(.notFound, containing: "no property 'nope'") { _ = try realm.dynamicObjects("Person", where: "nope", equals: .null) }
    }

    func testAnIndexAddedLaterIsBuiltForExistingObjects() throws {
        do {
            let realm = try open(indexed: false)
            try realm.write {
                for i in 0..<500 {
                    try realm.dynamicCreate("Person", primaryKey: .int(Int64(i)), values: [("name", .string("n\(i % 10)")), ("age", .int(Int64(i)))])
                }
            }
            realm.close()
        }
        let realm = try open(indexed: true, version: 2)
        XCTAssertEqual(try realm.dynamicObjects("Person", where: "name", equals: .string("n4")).count, 50)
        XCTAssertEqual(try ids(realm.dynamicObjects("Person", where: "age", equals: .int(321))), [321])
        let report = try realm.verify()
        XCTAssertTrue(report.contains("2500 index entries match"), report)
    }
}
