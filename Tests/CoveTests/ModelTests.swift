// Model classes in the realm-swift style: the schema discovered from @Persisted properties,
// unmanaged objects added with their links and embedded objects, managed accessors reading
// through to the file, typed lists, sets and maps, backlinks, upsert, delete, reopen.
import XCTest
import Cove
import FoundationEssentials

final class ModelDog: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var name = ""
    @Persisted var weight: Double?
    @Persisted var born: Date
    @Persisted var tag: ObjectId?
    @Persisted var price: Decimal128
    @Persisted var anything: Value
    @Persisted var toys: List<ModelToy>
    @Persisted var tags: MutableSet<String>
    @Persisted var scores: Map<String, Double>
    @Persisted var owner: ModelPerson?
    @Persisted var friends: List<ModelDog>
    @Persisted(originProperty: "friends") var fans: LinkingObjects<ModelDog>
    @Persisted var collar: ModelToy?
}

final class ModelToy: EmbeddedObject {
    @Persisted var brand = ""
    @Persisted var price = 0.0
}

final class ModelPerson: Object {
    @Persisted var name = ""
    @Persisted var nums: List<Int>
    @Persisted(originProperty: "owner") var dogs: LinkingObjects<ModelDog>
}

final class ModelTests: CoveTestCase {
    private func open() throws -> Realm {
        try Realm(configuration: try .init(path: "\(folder)/models.cove", objectTypes: [ModelDog.self, ModelToy.self, ModelPerson.self],
                                           schemaVersion: 1, durability: .noSync))
    }

    func testSchemaIsDiscoveredFromTheClasses() throws {
        let schema = try Schema(objectTypes: [ModelDog.self, ModelToy.self, ModelPerson.self])
        let dog = try XCTUnwrap(schema["ModelDog"])
        XCTAssertEqual(dog.primaryKey, "id")
        XCTAssertEqual(dog.properties.map(\.description), [
            "id: int", "name: string", "weight: double?", "born: date", "tag: objectId?", "price: decimal128",
            "anything: mixed", "toys: ModelToy[]", "tags: string<>", "scores: double{}", "owner: ModelPerson?",
            "friends: ModelDog[]", "fans: @links(ModelDog.friends)", "collar: ModelToy?",
        ])
        XCTAssertTrue(dog[property: "name"]?.isIndexed ?? false)
        XCTAssertTrue(schema["ModelToy"]?.isEmbedded ?? false)
        XCTAssertEqual(schema["ModelPerson"]?.properties.map(\.description), ["name: string", "nums: int[]", "dogs: @links(ModelDog.owner)"])
    }

    func testAddReadWriteAndReopen() throws {
        let born = Date(timeIntervalSince1970: 1_000_000)
        do {
            let realm = try open()
            let rex = ModelDog()
            rex.id = 1
            rex.name = "Rex"
            rex.born = born
            rex.price = try Decimal128("9.95")
            rex.anything = .string("any")
            let ball = ModelToy()
            ball.brand = "Acme"
            rex.toys.append(ball)
            rex.tags.insert("good")
            rex.scores["speed"] = 7.5
            let ann = ModelPerson()
            ann.name = "Ann"
            ann.nums.append(contentsOf: [3, 1, 2])
            rex.owner = ann
            XCTAssertNil(rex.realm)
            try realm.write { realm.add(rex) }
            XCTAssertTrue(rex.realm === realm)
            XCTAssertTrue(ann.realm === realm)     // added with the dog that links to it
            XCTAssertEqual(rex.toys.count, 1)
            XCTAssertEqual(rex.toys[0].brand, "Acme")
            try realm.write {
                rex.name = "Rex II"
                rex.weight = 12.5
                rex.tags.insert("fast")
                rex.tags.insert("good")
                rex.toys.append(ModelToy())
                rex.toys[1].brand = "Zoom"
                rex.collar = ModelToy()
                rex.collar?.brand = "Leather"
                let fido = ModelDog()
                fido.id = 2
                fido.name = "Fido"
                fido.friends.append(rex)
                realm.add(fido)
            }
            XCTAssertEqual(rex.fans.map(\.name), ["Fido"])
            XCTAssertEqual(ann.dogs.map(\.id), [1])
            realm.close()
        }
        let realm = try open()
        let rex = try XCTUnwrap(realm.object(ofType: ModelDog.self, forPrimaryKey: 1))
        XCTAssertEqual(rex.name, "Rex II")
        XCTAssertEqual(rex.weight, 12.5)
        XCTAssertEqual(rex.born, born)
        XCTAssertEqual(rex.price, try Decimal128("9.95"))
        XCTAssertEqual(rex.anything, .string("any"))
        XCTAssertEqual(rex.toys.map(\.brand), ["Acme", "Zoom"])
        XCTAssertEqual(rex.tags.elements, ["fast", "good"])
        XCTAssertEqual(rex.scores["speed"], 7.5)
        XCTAssertNil(rex.scores["nope"])
        XCTAssertEqual(rex.owner?.name, "Ann")
        XCTAssertEqual(rex.owner?.nums.map { $0 }, [3, 1, 2])
        XCTAssertEqual(rex.collar?.brand, "Leather")
        XCTAssertEqual(realm.objects(ModelDog.self).map(\.id), [1, 2])
        XCTAssertNil(try realm.object(ofType: ModelDog.self, forPrimaryKey: 99))

        // Upsert by primary key, and the duplicate refused without it.
        let again = ModelDog()
        again.id = 1
        again.name = "Rex III"
        XCTAssertThrowsError(try realm.write { try realm.checkedAdd(again) }) { error in
            XCTAssertEqual((error as? CoveError)?.code, .duplicateKey)
        }
        try realm.write { realm.add(again, update: .all) }
        XCTAssertEqual(rex.name, "Rex III")
        XCTAssertEqual(rex.toys.count, 0)         // every property written, the empty list too

        try realm.write { realm.delete(rex) }
        XCTAssertTrue(rex.isInvalidated)
        XCTAssertEqual(try realm.objectCount("ModelToy"), 0)
        XCTAssertTrue(try realm.verify().contains("index entries match"))
    }

    func testTypedSetAggregatesAndErrors() throws {
        let realm = try open()
        let unmanaged = MutableSet<Int>()
        for v in [5, 1, 9] { unmanaged.insert(v) }
        XCTAssertEqual(unmanaged.min(), 1)
        XCTAssertEqual(unmanaged.max(), 9)
        XCTAssertEqual(unmanaged.sum(), 15)
        XCTAssertEqual(unmanaged.average(), 5)
        let embedded = ModelToy()
        XCTAssertThrowsError(try realm.write { try realm.checkedAdd(embedded) }) { error in
            XCTAssertEqual((error as? CoveError)?.code, .invalidArgument)
        }
        XCTAssertThrowsError(try realm.write { try realm.checkedDelete(ModelPerson()) }) { error in
            XCTAssertEqual((error as? CoveError)?.code, .invalidArgument)
        }
    }
}
