// Objects through the Swift dynamic API: schema at open, every property type, primary keys,
// links and backlinks, deletes, errors with their messages, reopen, additive schema changes.
import XCTest
import Cove
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

final class ObjectTests: CoveTestCase {

    static let schemaJSON = """
    {
      "Person": {"primaryKey": "name",
                 "properties": {"name": "string", "age": "int", "dog": "Dog?"}},
      "Dog": {"properties": {"name": "string", "age": "int", "weight": "double?", "good": "bool",
                             "born": "date?", "tag": "objectId?", "id": "uuid?", "price": "decimal128?",
                             "photo": "data?", "ratio": "float", "any": "mixed",
                             "owners": "@links(Person.dog)"}}
    }
    """

    private func open(_ name: String = "o.cove", schema: String = ObjectTests.schemaJSON, version: UInt64 = 1) throws -> Realm {
        try Realm(configuration: .init(path: "\(folder)/\(name)", durability: .noSync,
                                       schema: try Schema(jsonText: schema), schemaVersion: version))
    }

    func testEveryTypeRoundTripsAndPersists() throws {
        let uuid = UUID()
        let oid = try ObjectId("0123456789abcdef01234567")
        let price = try Decimal128("19.99")
        let born = Timestamp(seconds: -86_400, nanoseconds: -5)
        do {
            let realm = try open()
            try realm.write {
                let dog = try realm.dynamicCreate("Dog", values: [
                    ("name", .string("Rex ü")), ("age", .int(3)), ("weight", .double(12.5)), ("good", .bool(true)),
                    ("born", .timestamp(born)), ("tag", .objectId(oid)), ("id", .uuid(uuid)),
                    ("price", .decimal128(price)), ("photo", .data([0, 1, 2, 255])), ("ratio", .int(2)),
                    ("any", .string("mixed!")),
                ])
                XCTAssertEqual(try dog["ratio"], .float(2))
            }
            XCTAssertTrue(try realm.verify().contains("live"))
        }
        let realm = try open()
        let dogs = try realm.dynamicObjects("Dog")
        XCTAssertEqual(dogs.count, 1)
        let dog = dogs[0]
        XCTAssertEqual(try dog["name"], .string("Rex ü"))
        XCTAssertEqual(try dog["age"], .int(3))
        XCTAssertEqual(try dog["weight"], .double(12.5))
        XCTAssertEqual(try dog["good"], .bool(true))
        XCTAssertEqual(try dog["born"], .timestamp(born))
        XCTAssertEqual(try dog["tag"], .objectId(oid))
        XCTAssertEqual(try dog["id"], .uuid(uuid))
        XCTAssertEqual(try dog["price"], .decimal128(price))
        XCTAssertEqual(try dog["photo"], .data([0, 1, 2, 255]))
        XCTAssertEqual(try dog["any"], .string("mixed!"))
    }

    func testDefaultsAndNulls() throws {
        let realm = try open()
        try realm.beginWrite()
        let dog = try realm.dynamicCreate("Dog")
        XCTAssertEqual(try dog["name"], .string(""))
        XCTAssertEqual(try dog["age"], .int(0))
        XCTAssertEqual(try dog["weight"], .null)
        XCTAssertEqual(try dog["any"], .null)
        try dog.setValue(.null, forKey: "weight")
        assertThrows(.wrongType, containing: "property 'age' of class 'Dog' is int and cannot be null") {
            try dog.setValue(.null, forKey: "age")
        }
        assertThrows(.wrongType, containing: "property 'age' of class 'Dog' is int, got string") {
            try dog.setValue(.string("x"), forKey: "age")
        }
        assertThrows(.notFound, containing: "class 'Dog' has no property 'color'") {
            try dog.setValue(.int(1), forKey: "color")
        }
        assertThrows(.notFound, containing: "no class 'Cat'") { _ = try realm.dynamicCreate("Cat") }
        try realm.commitWrite()
        assertThrows(.notInWrite, containing: "outside a write") { try dog.setValue(.int(4), forKey: "age") }
        assertThrows(.notInWrite, containing: "outside a write") { _ = try realm.dynamicCreate("Dog") }
    }

    func testPrimaryKeys() throws {
        let realm = try open()
        try realm.beginWrite()
        let ann = try realm.dynamicCreate("Person", primaryKey: .string("Ann"), values: [("age", .int(30))])
        assertThrows(.duplicateKey, containing: "already has an object with primary key") {
            _ = try realm.dynamicCreate("Person", primaryKey: .string("Ann"))
        }
        assertThrows(.invalidArgument, containing: "has primary key 'name'") { _ = try realm.dynamicCreate("Person") }
        assertThrows(.invalidArgument, containing: "has no primary key") { _ = try realm.dynamicCreate("Dog", primaryKey: .int(1)) }
        assertThrows(.wrongType, containing: "primary key 'name' of class 'Person' is string, got int") {
            _ = try realm.dynamicCreate("Person", primaryKey: .int(5))
        }
        XCTAssertEqual(try realm.dynamicObject(ofType: "Person", forPrimaryKey: .string("Ann"))?.objectKey, ann.objectKey)
        XCTAssertNil(try realm.dynamicObject(ofType: "Person", forPrimaryKey: .string("Bob")))
        let updated = try realm.dynamicCreateOrUpdate("Person", primaryKey: .string("Ann"), values: [("age", .int(31))])
        XCTAssertEqual(updated.objectKey, ann.objectKey)
        XCTAssertEqual(try ann["age"], .int(31))
        // Changing a primary key moves it in the index.
        try ann.setValue(.string("Anna"), forKey: "name")
        XCTAssertNil(try realm.dynamicObject(ofType: "Person", forPrimaryKey: .string("Ann")))
        XCTAssertEqual(try realm.dynamicObject(ofType: "Person", forPrimaryKey: .string("Anna"))?.objectKey, ann.objectKey)
        try realm.commitWrite()
        XCTAssertEqual(try realm.objectCount("Person"), 1)
    }

    func testLinksBacklinksAndDelete() throws {
        let realm = try open()
        try realm.beginWrite()
        let rex = try realm.dynamicCreate("Dog", values: [("name", .string("Rex"))])
        let ann = try realm.dynamicCreate("Person", primaryKey: .string("Ann"), values: [("dog", .link(rex.link))])
        let bob = try realm.dynamicCreate("Person", primaryKey: .string("Bob"), values: [("dog", .link(rex.link))])
        XCTAssertEqual(try ann.linkedObject("dog")?.objectKey, rex.objectKey)
        XCTAssertEqual(Set(try rex.linkingObjects("owners").map(\.objectKey)), [ann.objectKey, bob.objectKey])
        assertThrows(.wrongType, containing: "links to Dog, got an object of Person") {
            try ann.setValue(.link(bob.link), forKey: "dog")
        }
        try bob.setValue(.null, forKey: "dog")
        XCTAssertEqual(try rex.linkingObjects("owners").map(\.objectKey), [ann.objectKey])
        try realm.delete(rex)
        XCTAssertTrue(rex.isInvalidated)
        XCTAssertEqual(try ann["dog"], .null, "a link to a deleted object becomes null")
        assertThrows(.invalidated, containing: "was deleted") { _ = try rex.value(forKey: "name") }
        try realm.delete(bob)
        XCTAssertNil(try realm.dynamicObject(ofType: "Person", forPrimaryKey: .string("Bob")))
        try realm.commitWrite()
        _ = try realm.verify()
    }

    /// Reading a property by name: a link reads as the link, an unknown name and a backlinks
    /// property fail naming the class and the property, and a read through a deleted object
    /// says it was deleted.
    func testReadingByNameNamesWhatCannotBeRead() throws {
        let realm = try open()
        try realm.beginWrite()
        let rex = try realm.dynamicCreate("Dog", values: [("name", .string("Rex"))])
        let ann = try realm.dynamicCreate("Person", primaryKey: .string("Ann"), values: [("dog", .link(rex.link))])
        XCTAssertEqual(try ann["dog"], .link(rex.link))
        XCTAssertEqual(try ann["name"], .string("Ann"))
        assertThrows(.notFound, containing: "class 'Dog' has no property 'owner'") { _ = try rex["owner"] }
        assertThrows(.wrongType, containing: "property 'owners' of class 'Dog' is backlinks, not a single value") {
            _ = try rex["owners"]
        }
        try realm.delete(ann)
        assertThrows(.invalidated, containing: "the Person object") { _ = try ann["name"] }
        try realm.commitWrite()
    }

    func testWritesAreIsolatedUntilCommitAndCancelDiscards() throws {
        let a = try open()
        let b = try open()
        try a.beginWrite()
        _ = try a.dynamicCreate("Dog", values: [("name", .string("Rex"))])
        try a.cancelWrite()
        XCTAssertEqual(try a.objectCount("Dog"), 0)
        try a.write { _ = try a.dynamicCreate("Dog", values: [("name", .string("Max"))]) }
        XCTAssertEqual(try b.objectCount("Dog"), 0, "b still reads its snapshot")
        XCTAssertTrue(try b.refresh())
        XCTAssertEqual(try b.dynamicObjects("Dog").map { try $0["name"] }, [.string("Max")])
        let frozen = try b.freeze()
        try a.write { _ = try a.dynamicCreate("Dog") }
        XCTAssertEqual(try frozen.objectCount("Dog"), 1)
    }

    func testSchemaAtOpen() throws {
        let first = try open("s.cove", schema: #"{"A": {"properties": {"x": "int"}}}"#, version: 1)
        try first.write { _ = try first.dynamicCreate("A", values: [("x", .int(7))]) }
        first.close()
        // Opening without a schema uses the file's.
        let plain = try Realm(configuration: .init(path: "\(folder)/s.cove"))
        XCTAssertEqual(plain.schema.classNames, ["A"])
        plain.close()
        // A changed schema with the same version is refused.
        assertThrows(.schema, containing: "not higher") {
            _ = try self.open("s.cove", schema: #"{"A": {"properties": {"x": "int", "y": "string"}}}"#, version: 1)
        }
        // A lower version is refused.
        assertThrows(.schema, containing: "lower than the file's") {
            _ = try self.open("s.cove", schema: #"{"A": {"properties": {"x": "int"}}}"#, version: 0)
        }
        // Additive changes apply by themselves with a higher version; data is kept.
        let second = try open("s.cove", schema: #"{"A": {"properties": {"x": "int", "y": "string?"}}, "B": {"properties": {"z": "bool"}}}"#, version: 2)
        let a = try second.dynamicObjects("A")[0]
        XCTAssertEqual(try a["x"], .int(7))
        XCTAssertEqual(try a["y"], .null)
        try second.write { try a.setValue(.string("new"), forKey: "y") }
        XCTAssertEqual(try a["y"], .string("new"))
        _ = try second.verify()
        second.close()
        // Changing a type needs a migration.
        assertThrows(.migrationRequired, containing: "migration") {
            _ = try self.open("s.cove", schema: #"{"A": {"properties": {"x": "string", "y": "string?"}}, "B": {"properties": {"z": "bool"}}}"#, version: 3)
        }
        // And the refused open changed nothing.
        let again = try Realm(configuration: .init(path: "\(folder)/s.cove"))
        XCTAssertEqual(try again.dynamicObjects("A")[0]["x"], .int(7))
    }

    func testManyObjectsAcrossClustersVerifyAndReopen() throws {
        do {
            let realm = try open("many.cove")
            try realm.write {
                for i in 0..<3000 {
                    _ = try realm.dynamicCreate("Person", primaryKey: .string("p\(i)"), values: [("age", .int(Int64(i)))])
                }
            }
            try realm.write {
                for i in stride(from: 0, to: 3000, by: 3) {
                    try realm.delete(try XCTUnwrap(realm.dynamicObject(ofType: "Person", forPrimaryKey: .string("p\(i)"))))
                }
            }
            _ = try realm.verify()
        }
        let realm = try open("many.cove")
        XCTAssertEqual(try realm.objectCount("Person"), 2000)
        XCTAssertNil(try realm.dynamicObject(ofType: "Person", forPrimaryKey: .string("p300")))
        XCTAssertEqual(try realm.dynamicObject(ofType: "Person", forPrimaryKey: .string("p301"))?["age"], .int(301))
    }
}
