// Creating objects from values by position (`Realm.dynamicCreator`): the same objects as
// `dynamicCreate` makes, the names checked once, and every bad row refused whole.
import XCTest
import Cove
import FoundationEssentials

final class DynamicCreatorTests: CoveTestCase {

    static let schemaJSON = """
    {
      "Person": {"primaryKey": "id",
                 "properties": {"id": "int", "name": "string", "age": "int", "score": "double",
                                "dog": "Dog?", "tags": "string[]", "address": "Address?"}},
      "Dog": {"properties": {"name": "string", "weight": "double?", "good": "bool", "born": "date?",
                             "tag": "objectId?", "id": "uuid?", "price": "decimal128?", "photo": "data?",
                             "ratio": "float", "any": "mixed", "owners": "@links(Person.dog)"}},
      "Address": {"embedded": true, "properties": {"city": "string"}},
      "Point": {"properties": {"x": "int", "y": "double", "label": "string?"}},
      "Tag": {"primaryKey": "id", "properties": {"id": "objectId", "n": "int"}},
      "Nick": {"primaryKey": "name", "properties": {"name": "string?", "n": "int"}}
    }
    """

    private func open() throws -> Realm {
        try Realm(configuration: .init(path: "\(folder)/c.cove", durability: .noSync,
                                       schema: try Schema(jsonText: Self.schemaJSON), schemaVersion: 1))
    }

    private let dogProperties = ["name", "weight", "good", "born", "tag", "id", "price", "photo", "ratio", "any"]

    /// Every type goes in by position as it does by name, with the same conversions (an int for
    /// a float) and nulls in optional properties; links are set too.
    func testMakesTheObjectsDynamicCreateMakes() throws {
        let realm = try open()
        let oid = try ObjectId("0123456789abcdef01234567")
        let uuid = UUID()
        let price = try Decimal128("19.99")
        let born = Timestamp(seconds: 86_400, nanoseconds: 7)
        let full: [Value] = [.string("Rex ü"), .double(12.5), .bool(true), .timestamp(born), .objectId(oid),
                             .uuid(uuid), .decimal128(price), .data([0, 1, 255]), .int(2), .string("any")]
        let empty: [Value] = [.string(""), .null, .bool(false), .null, .null, .null, .null, .null, .float(0.5), .null]
        try realm.write {
            let dogs = try realm.dynamicCreator("Dog", properties: dogProperties)
            try dogs.create(full)
            try dogs.create(empty)
            _ = try realm.dynamicCreate("Dog", values: Array(zip(dogProperties, full)))
        }
        let made = try realm.dynamicObjects("Dog")
        XCTAssertEqual(made.count, 3)
        for name in dogProperties {
            XCTAssertEqual(try made[0][name], try made[2][name], name)
        }
        XCTAssertEqual(try made[0]["ratio"], .float(2))
        XCTAssertEqual(try made[0]["name"], .string("Rex ü"))
        XCTAssertEqual(try made[1]["weight"], .null)
        XCTAssertEqual(try made[1]["ratio"], .float(0.5))

        try realm.write {
            let people = try realm.dynamicCreator("Person", properties: ["name", "id", "dog"])
            try people.create([.string("Ann"), .int(7), .link(made[0].link)])
            try people.create([.string("Bob"), .int(8), .null])
        }
        let ann = try XCTUnwrap(try realm.dynamicObject(ofType: "Person", forPrimaryKey: .int(7)))
        XCTAssertEqual(try ann["name"], .string("Ann"))
        XCTAssertEqual(try ann["age"], .int(0), "a property not named keeps its default")
        XCTAssertEqual(try ann["dog"], .link(made[0].link))
        XCTAssertEqual(try made[0].linkingObjects("owners").count, 1, "the link has its backlink")
        _ = try realm.verify()      // throws on a damaged file or index
    }

    /// An object made from values for every column leaves nothing behind for the next one
    /// made from fewer: those get their defaults.
    func testEveryObjectStartsFromDefaults() throws {
        let realm = try open()
        try realm.write {
            let full = try realm.dynamicCreator("Point", properties: ["label", "x", "y"])
            let some = try realm.dynamicCreator("Point", properties: ["y"])
            try full.create([.string("a"), .int(1), .double(1.5)])
            try full.create([.null, .int(2), .double(2.5)])
            try some.create([.double(3.5)])
            try full.create([.string("d"), .int(4), .double(4.5)])
            _ = try realm.dynamicCreate("Point")
        }
        let points = try realm.dynamicObjects("Point")
        XCTAssertEqual(try points.map { try $0["x"] }, [.int(1), .int(2), .int(0), .int(4), .int(0)])
        XCTAssertEqual(try points.map { try $0["y"] }, [.double(1.5), .double(2.5), .double(3.5), .double(4.5), .double(0)])
        XCTAssertEqual(try points.map { try $0["label"] }, [.string("a"), .null, .null, .string("d"), .null])
    }

    /// Primary keys of every kind go in through a creator and are found again: an objectId,
    /// an optional string and its null, each refused when taken or of another type.
    func testPrimaryKeysOfEveryKind() throws {
        let realm = try open()
        let a = try ObjectId("0123456789abcdef01234567")
        let b = try ObjectId("76543210fedcba9876543210")
        try realm.write {
            let tags = try realm.dynamicCreator("Tag", properties: ["n", "id"])
            try tags.create([.int(1), .objectId(a)])
            try tags.create([.int(2), .objectId(b)])
            assertThrows(.duplicateKey, containing: "already has an object with primary key") { try tags.create([.int(3), .objectId(a)]) }
            assertThrows(.wrongType, containing: "primary key 'id' of class 'Tag' is objectId, got int") { try tags.create([.int(3), .int(4)]) }
            let nicks = try realm.dynamicCreator("Nick", properties: ["name", "n"])
            try nicks.create([.string("Rex"), .int(1)])
            try nicks.create([.null, .int(2)])
            assertThrows(.duplicateKey, containing: "already has an object with primary key") { try nicks.create([.null, .int(3)]) }
        }
        XCTAssertEqual(try realm.dynamicObject(ofType: "Tag", forPrimaryKey: .objectId(b))?["n"], .int(2))
        XCTAssertEqual(try realm.dynamicObject(ofType: "Nick", forPrimaryKey: .null)?["n"], .int(2))
        XCTAssertEqual(try realm.dynamicObject(ofType: "Nick", forPrimaryKey: .string("Rex"))?["n"], .int(1))
        XCTAssertEqual(try realm.objectCount("Tag"), 2)
        _ = try realm.verify()      // throws on a damaged file or index
    }

    /// The names are checked when the creator is made, each problem named.
    func testRefusesNamesItCannotCreateWith() throws {
        let realm = try open()
        try realm.beginWrite()
        defer { try? realm.cancelWrite() }
        assertThrows(.notFound, containing: "no class 'Cat'") { _ = try realm.dynamicCreator("Cat", properties: []) }
        assertThrows(.notFound, containing: "class 'Person' has no property 'colour'") {
            _ = try realm.dynamicCreator("Person", properties: ["id", "colour"])
        }
        assertThrows(.invalidArgument, containing: "property 'owners' of class 'Dog' is backlinks") {
            _ = try realm.dynamicCreator("Dog", properties: ["owners"])
        }
        assertThrows(.wrongType, containing: "property 'tags' of class 'Person' is a list (string[]): fill it through the list") {
            _ = try realm.dynamicCreator("Person", properties: ["id", "tags"])
        }
        assertThrows(.invalidArgument, containing: "property 'name' is named twice (names 1 and 2") {
            _ = try realm.dynamicCreator("Person", properties: ["id", "name", "name"])
        }
        assertThrows(.invalidArgument, containing: "class 'Person' has primary key 'id'") {
            _ = try realm.dynamicCreator("Person", properties: ["name"])
        }
        assertThrows(.invalidArgument, containing: "class 'Address' is embedded") {
            _ = try realm.dynamicCreator("Address", properties: ["city"])
        }
        assertThrows(.invalidArgument, containing: "property 'address' of class 'Person' holds an embedded Address") {
            let c = try realm.dynamicCreator("Person", properties: ["id", "address"])
            try c.create([.int(1), .link(ObjectLink(classKey: 0, objectKey: 0))])
        }
        XCTAssertEqual(try realm.objectCount("Person"), 0)
    }

    /// A bad row is refused whole: the objects before it stay, it leaves nothing, and the
    /// creator goes on with the next row.
    func testABadRowCreatesNothing() throws {
        let realm = try open()
        try realm.beginWrite()
        let c = try realm.dynamicCreator("Person", properties: ["id", "name", "age", "score", "dog"])
        try c.create([.int(1), .string("Ann"), .int(30), .double(1.5), .null])
        assertThrows(.wrongType, containing: "property 'age' of class 'Person' is int, got string") {
            try c.create([.int(2), .string("Bob"), .string("x"), .double(1), .null])
        }
        assertThrows(.wrongType, containing: "property 'name' of class 'Person' is string and cannot be null") {
            try c.create([.int(2), .null, .int(1), .double(1), .null])
        }
        assertThrows(.wrongType, containing: "primary key 'id' of class 'Person' is int, got string") {
            try c.create([.string("2"), .string("Bob"), .int(1), .double(1), .null])
        }
        assertThrows(.duplicateKey, containing: "already has an object with primary key") {
            try c.create([.int(1), .string("Ann again"), .int(1), .double(1), .null])
        }
        assertThrows(.invalidArgument, containing: "4 values for 5 properties of class 'Person'") {
            try c.create([.int(2), .string("Bob"), .int(1), .double(1)])
        }
        let dogKey = try realm.dynamicCreate("Dog").link.classKey
        assertThrows(.invalidArgument, containing: "the Dog object 999 does not exist") {
            try c.create([.int(2), .string("Bob"), .int(1), .double(1), .link(ObjectLink(classKey: dogKey, objectKey: 999))])
        }
        XCTAssertEqual(try realm.objectCount("Person"), 1)
        XCTAssertNil(try realm.dynamicObject(ofType: "Person", forPrimaryKey: .int(2)))
        try c.create([.int(2), .string("Bob"), .int(40), .int(3), .null])
        try realm.commitWrite()
        XCTAssertEqual(try realm.objectCount("Person"), 2)
        XCTAssertEqual(try realm.dynamicObject(ofType: "Person", forPrimaryKey: .int(2))?["score"], .double(3))
        _ = try realm.verify()      // throws on a damaged file or index
    }

    /// `createObject` makes what `create` makes and gives it, the object read and written
    /// through; a bad row gives nothing and creates nothing.
    func testCreateObjectGivesTheObject() throws {
        let realm = try open()
        try realm.write {
            let people = try realm.dynamicCreator("Person", properties: ["name", "id", "age"])
            let ann = try people.createObject([.string("Ann"), .int(7), .int(41)])
            XCTAssertEqual(try ann["age"], .int(41))
            XCTAssertEqual(ann.objectKey, try realm.dynamicObject(ofType: "Person", forPrimaryKey: .int(7))?.objectKey)
            try ann.setValue(.double(2.5), forKey: "score")
            assertThrows(.duplicateKey, containing: "already has an object with primary key") {
                _ = try people.createObject([.string("Bob"), .int(7), .int(1)])
            }
            let points = try realm.dynamicCreator("Point", properties: ["y", "x"])
            let p = try points.createObject([.double(1.5), .int(3)])
            XCTAssertEqual(try p["x"], .int(3))
            XCTAssertEqual(try p["label"], .null)
        }
        XCTAssertEqual(try realm.dynamicObject(ofType: "Person", forPrimaryKey: .int(7))?["score"], .double(2.5))
        XCTAssertEqual(try realm.objectCount("Person"), 1)
        XCTAssertEqual(try realm.objectCount("Point"), 1)
    }

    /// A creator made in one write works in the next (its names resolved again for it), and
    /// not outside a write.
    func testOutlivesItsWriteButNeedsOne() throws {
        let realm = try open()
        let c = try realm.write { try realm.dynamicCreator("Dog", properties: ["name"]) }
        assertThrows(.notInWrite, containing: "outside a write transaction") { try c.create([.string("Rex")]) }
        try realm.write { try c.create([.string("Max")]) }
        try realm.write { try c.create([.string("Fido")]) }
        XCTAssertEqual(try realm.dynamicObjects("Dog").map { try $0["name"] }, [.string("Max"), .string("Fido")])
    }

    /// Create-or-update by the primary key among the values: an existing object gets the other
    /// values, a new key makes an object; a class without primary key is refused.
    func testCreateOrUpdate() throws {
        let realm = try open()
        try realm.write {
            let c = try realm.dynamicCreator("Person", properties: ["age", "id", "name"])
            XCTAssertTrue(try c.createOrUpdate([.int(30), .int(1), .string("Ann")]))
            XCTAssertFalse(try c.createOrUpdate([.int(31), .int(1), .string("Annie")]))
            XCTAssertTrue(try c.createOrUpdate([.int(5), .int(2), .string("Bob")]))
            assertThrows(.wrongType, containing: "property 'age' of class 'Person' is int") {
                try c.createOrUpdate([.bool(true), .int(2), .string("Bob")])
            }
            let dogs = try realm.dynamicCreator("Dog", properties: ["name"])
            assertThrows(.invalidArgument, containing: "class 'Dog' has no primary key") {
                try dogs.createOrUpdate([.string("Rex")])
            }
        }
        XCTAssertEqual(try realm.objectCount("Person"), 2)
        let ann = try XCTUnwrap(try realm.dynamicObject(ofType: "Person", forPrimaryKey: .int(1)))
        XCTAssertEqual(try ann["age"], .int(31))
        XCTAssertEqual(try ann["name"], .string("Annie"))
    }
}
