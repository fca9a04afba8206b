// Objects created and then filled property by property in the same write, while they wait in
// their table's pending batch, against the same objects created with all their values: the same
// values inside and after the write, primary keys, indexes, backlinks, embedded objects, lists,
// change records and a file that verifies. Half the sets and reads go by property key (the C
// API's `_by_key` calls), half by name; some by keys without the object (the `_by_keys` calls).
import XCTest
@_spi(CoveBindings) @testable import Cove
@testable import CoveCore

final class FillThenSetTests: CoveTestCase {
    static let schemaJSON = """
    {
      "Item": {"primaryKey": "id",
               "properties": {"id": "int", "name": "string", "code": "string?", "n": "int", "d": "double?",
                              "blob": "data?", "owner": "Owner?", "any": "mixed", "tags": "string[]",
                              "place": "Place?"},
               "indexed": ["n", "code", "any"]},
      "Owner": {"properties": {"name": "string", "items": "@links(Item.owner)"}},
      "Place": {"embedded": true, "properties": {"city": "string"}}
    }
    """
    static let plain = ["name", "code", "n", "d", "blob", "owner", "any"]

    private func open(_ name: String) throws -> Realm {
        try Realm(configuration: .init(path: "\(folder)/\(name).cove", durability: .noSync,
                                       schema: try Schema(jsonText: Self.schemaJSON), schemaVersion: 1))
    }

    /// One object's final state, as both realms should hold it.
    struct Planned {
        var id: Int64
        var values: [(String, Value)]
        var tags: [String]
        var city: String?
    }

    static func randomValue(_ name: String, _ owners: [ObjectLink], _ rng: inout SeededRandom) -> Value {
        switch name {
        case "name": return .string("item-\(rng.below(50))")
        case "code": return rng.below(4) == 0 ? .null : .string("c\(rng.below(8))")
        case "n": return .int(Int64(rng.below(10)))
        case "d": return rng.below(3) == 0 ? .null : .double(Double(rng.below(1000)) / 8)
        // A large value now and then: its object goes past a quarter of a page.
        case "blob": return rng.below(3) == 0 ? .null : .data(rng.bytes(rng.below(6) == 0 ? 1500 + rng.below(2500) : rng.below(40)))
        case "owner": return rng.below(3) == 0 ? .null : .link(owners[rng.below(owners.count)])
        default:
            switch rng.below(4) {
            case 0: return .null
            case 1: return .int(Int64(rng.below(5)))
            case 2: return .string("m\(rng.below(5))")
            default: return .link(owners[rng.below(owners.count)])
            }
        }
    }

    static func plan(count: Int, owners: [ObjectLink], _ rng: inout SeededRandom) -> [Planned] {
        var ids = (0..<count).map { Int64($0) * 3 }
        ids.shuffle(using: &rng)
        return ids.map { id in
            let names = plain.filter { _ in rng.below(3) != 0 }
            return Planned(id: id, values: names.map { ($0, randomValue($0, owners, &rng)) },
                           tags: (0..<rng.below(3)).map { _ in "t\(rng.below(9))" },
                           city: rng.below(4) == 0 ? "city-\(rng.below(9))" : nil)
        }
    }

    /// The collections and the embedded object of `o`, made the same way in both realms.
    static func fillCollections(_ o: DynamicObject, _ p: Planned) throws {
        let list = try o.dynamicList("tags")
        for t in p.tags { try list.append(.string(t)) }
        if let city = p.city { try o.createEmbeddedObject(forProperty: "place").setValue(.string(city), forKey: "city") }
    }

    /// What property `name` of an object planned as `p` reads.
    static func expected(_ name: String, _ p: Planned) -> Value {
        if name == "id" { return .int(p.id) }
        if let v = p.values.last(where: { $0.0 == name })?.1 { return v }
        switch name {
        case "name": return .string("")
        case "n": return .int(0)
        default: return .null
        }
    }

    func assertHolds(_ o: DynamicObject, _ p: Planned, _ context: String,
                     file: StaticString = #filePath, line: UInt = #line) throws {
        for name in ["id"] + Self.plain {
            XCTAssertEqual(try o.value(forKey: name), Self.expected(name, p), "\(name) of \(p.id) (\(context))", file: file, line: line)
        }
        XCTAssertEqual(try o.dynamicList("tags").values(), p.tags.map { .string($0) }, "tags of \(p.id) (\(context))", file: file, line: line)
        let city = try o.linkedObject("place").map { try $0.value(forKey: "city") }
        XCTAssertEqual(city, p.city.map { .string($0) }, "place of \(p.id) (\(context))", file: file, line: line)
    }

    func runFill(seed: UInt64, count: Int) throws {
        var rng = SeededRandom(seed: seed)
        let filled = try open("filled-\(seed)")
        let whole = try open("whole-\(seed)")
        defer { filled.close(); whole.close() }
        var owners: [ObjectLink] = []
        for realm in [filled, whole] {
            try realm.write {
                owners = try (0..<4).map { i in try realm.dynamicCreate("Owner", values: [("name", .string("o\(i)"))]).link }
            }
        }
        let planned = Self.plan(count: count, owners: owners, &rng)
        let context = "seed \(seed)"

        // Created with every single value at once.
        var wholeObjects: [DynamicObject] = []
        try whole.write {
            for p in planned {
                let o = try whole.dynamicCreate("Item", primaryKey: .int(p.id), values: p.values)
                try Self.fillCollections(o, p)
                wholeObjects.append(o)
            }
        }

        // Created with the primary key alone (now and then a stand-in, set to the real one
        // afterwards), then set one property at a time, some twice, with reads of the object,
        // of other objects and queries between.
        var filledObjects: [DynamicObject] = []
        try filled.write {
            for (k, p) in planned.enumerated() {
                let standIn = rng.below(8) == 0
                let o = try filled.dynamicCreate("Item", primaryKey: .int(standIn ? p.id + 1 : p.id))
                filledObjects.append(o)
                for (name, value) in p.values {
                    let key = try XCTUnwrap(o.objectSchema[property: name]?.key)
                    if rng.below(4) == 0 { try o.setValue(Self.randomValue(name, owners, &rng), forKey: name) }
                    if rng.below(5) == 0 { _ = try o.value(forKey: name) }
                    switch rng.below(4) {
                    case 0, 1: try o.setValue(value, forPropertyKey: key)
                    case 2: try filled.setValue(value, classKey: o.classKey, objectKey: o.objectKey, propertyKey: key)
                    default: try o.setValue(value, forKey: name)
                    }
                    XCTAssertEqual(try o.value(forKey: name), value, "\(name) of \(p.id) read back at once (\(context))")
                    XCTAssertEqual(try o.value(forPropertyKey: key), value, "\(name) of \(p.id) read by key (\(context))")
                    XCTAssertEqual(try filled.value(classKey: o.classKey, objectKey: o.objectKey, propertyKey: key), value,
                                   "\(name) of \(p.id) read by keys without the object (\(context))")
                }
                if standIn { try o.setValue(.int(p.id), forKey: "id") }
                try Self.fillCollections(o, p)
                switch rng.below(40) {
                case 0:
                    // Reading an earlier object writes the pending ones.
                    let j = rng.below(k + 1)
                    try assertHolds(filledObjects[j], planned[j], "inside the write, \(context)")
                case 1:
                    _ = try filled.objects("Item").filter("n == 3").checkedCount()
                case 2:
                    // An earlier object set again to its own value: its row wherever it is.
                    let j = rng.below(k + 1)
                    try filledObjects[j].setValue(Self.expected("name", planned[j]), forKey: "name")
                case 3:
                    // The same by key, and read back by key.
                    let j = rng.below(k + 1)
                    let key = try XCTUnwrap(o.objectSchema[property: "n"]?.key)
                    try filledObjects[j].setValue(Self.expected("n", planned[j]), forPropertyKey: key)
                    XCTAssertEqual(try filledObjects[j].value(forPropertyKey: key), Self.expected("n", planned[j]), context)
                default: break
                }
            }
            for (o, p) in zip(filledObjects, planned) { try assertHolds(o, p, "end of the write, \(context)") }
        }
        let filledRecord = try XCTUnwrap(filled.changeRecord(forVersion: try filled.version))
        let wholeRecord = try XCTUnwrap(whole.changeRecord(forVersion: try whole.version))

        XCTAssertEqual(filledObjects.map(\.objectKey), wholeObjects.map(\.objectKey), context)
        for (o, p) in zip(filledObjects, planned) { try assertHolds(o, p, "after the commit, \(context)") }
        for p in planned {
            let a = try filled.dynamicObject(ofType: "Item", forPrimaryKey: .int(p.id))
            let b = try whole.dynamicObject(ofType: "Item", forPrimaryKey: .int(p.id))
            XCTAssertEqual(a?.objectKey, b?.objectKey, "primary key \(p.id) (\(context))")
            XCTAssertNil(try filled.dynamicObject(ofType: "Item", forPrimaryKey: .int(p.id + 1)), context)
        }
        // The indexes, looked up directly.
        let probes: [(String, Value)] = (0..<10).map { ("n", .int(Int64($0))) } + (0..<8).map { ("code", .string("c\($0)")) }
            + [("code", .null), ("any", .null), ("any", .int(2)), ("any", .string("m3")), ("any", .link(owners[1]))]
        for (name, value) in probes {
            let a = try filled.dynamicObjects("Item", where: name, equals: value).map(\.objectKey)
            let b = try whole.dynamicObjects("Item", where: name, equals: value).map(\.objectKey)
            XCTAssertEqual(a, b, "\(name) == \(value) (\(context))")
            XCTAssertEqual(a.count, planned.filter { Self.expected(name, $0) == value }.count, "\(name) == \(value) (\(context))")
        }
        for owner in owners {
            let a = try XCTUnwrap(filled.object(for: owner)).linkingObjects("items").map(\.objectKey)
            let b = try XCTUnwrap(whole.object(for: owner)).linkingObjects("items").map(\.objectKey)
            XCTAssertEqual(a, b, "backlinks of \(owner) (\(context))")
        }
        XCTAssertEqual(filledRecord, wholeRecord, "change record (\(context))")
        _ = try filled.verify()
        _ = try whole.verify()
    }

    func testFilledObjectsMatchObjectsCreatedWithTheirValues() throws {
        for seed: UInt64 in 1...12 { try runFill(seed: seed, count: 1 + Int(seed) * 37) }
    }

    /// More objects than a table keeps pending: some are written mid-way, the rest edited in
    /// the batch.
    func testPastThePendingLimit() throws {
        try runFill(seed: 99, count: 2_600)
    }

    /// A property key that the class does not have, and one of a collection or of backlinks:
    /// the errors of the same calls by name. Reads by keys without the object give the same, and
    /// an unknown class key is not found.
    func testPropertyKeysThatNameNothingSettable() throws {
        let realm = try open("keys")
        defer { realm.close() }
        try realm.write {
            let o = try realm.dynamicCreate("Item", primaryKey: .int(1))
            func byKeys(_ key: Int64, classKey: UInt32? = nil) throws -> Value {
                try realm.value(classKey: classKey ?? o.classKey, objectKey: o.objectKey, propertyKey: key)
            }
            func code(_ error: Error) -> CoveError.Code? { (error as? CoveError)?.code }
            for bad: Int64 in [-1, 987_654] {
                XCTAssertThrowsError(try o.setValue(.int(1), forPropertyKey: bad)) { XCTAssertEqual(code($0), .notFound) }
                XCTAssertThrowsError(try o.value(forPropertyKey: bad)) { XCTAssertEqual(code($0), .notFound) }
                XCTAssertThrowsError(try byKeys(bad)) { XCTAssertEqual(code($0), .notFound) }
            }
            let tags = try XCTUnwrap(o.objectSchema[property: "tags"]?.key)
            XCTAssertThrowsError(try o.setValue(.string("x"), forPropertyKey: tags)) { XCTAssertEqual(code($0), .wrongType) }
            XCTAssertThrowsError(try byKeys(tags)) { XCTAssertEqual(code($0), .wrongType) }
            let n = try XCTUnwrap(o.objectSchema[property: "n"]?.key)
            XCTAssertThrowsError(try o.setValue(.string("x"), forPropertyKey: n)) { XCTAssertEqual(code($0), .wrongType) }
            XCTAssertThrowsError(try byKeys(n, classKey: 99_999)) { XCTAssertEqual(code($0), .notFound) }
            XCTAssertThrowsError(try realm.setValue(.int(1), classKey: 99_999, objectKey: o.objectKey, propertyKey: n)) {
                XCTAssertEqual(code($0), .notFound)
            }
            XCTAssertThrowsError(try realm.setValue(.string("x"), classKey: o.classKey, objectKey: o.objectKey, propertyKey: n)) {
                XCTAssertEqual(code($0), .wrongType)
            }
            XCTAssertThrowsError(try realm.objectExists(classKey: 99_999, objectKey: o.objectKey)) { XCTAssertEqual(code($0), .notFound) }
            XCTAssertEqual(try byKeys(n), .int(0))
            XCTAssertTrue(try realm.objectExists(classKey: o.classKey, objectKey: o.objectKey))
            XCTAssertFalse(try realm.objectExists(classKey: o.classKey, objectKey: -1))
            try realm.delete(o)
            XCTAssertThrowsError(try o.setValue(.int(2), forPropertyKey: n)) { XCTAssertEqual(code($0), .invalidated) }
            XCTAssertThrowsError(try o.value(forPropertyKey: n)) { XCTAssertEqual(code($0), .invalidated) }
            XCTAssertThrowsError(try byKeys(n)) { XCTAssertEqual(code($0), .invalidated) }
            XCTAssertThrowsError(try realm.setValue(.int(2), classKey: o.classKey, objectKey: o.objectKey, propertyKey: n)) {
                XCTAssertEqual(code($0), .invalidated)
            }
            XCTAssertFalse(try realm.objectExists(classKey: o.classKey, objectKey: o.objectKey))
            XCTAssertTrue(try realm.dynamicObject(classKey: o.classKey, objectKey: o.objectKey).isInvalidated)
        }
    }

    /// A model object added to a realm adopts its values property by property, its row still
    /// pending: what it holds, its index entries, backlinks and embedded objects are there inside
    /// the write and after it.
    func testAddedModelObjectsHoldTheirValues() throws {
        let realm = try Realm(configuration: try .init(path: "\(folder)/models.cove",
                                                       objectTypes: [ModelDog.self, ModelToy.self, ModelPerson.self],
                                                       schemaVersion: 1, durability: .noSync))
        defer { realm.close() }
        let count = 300
        try realm.write {
            let person = ModelPerson()
            person.name = "ann"
            try realm.checkedAdd(person)
            var previous: ModelDog?
            for i in 0..<count {
                let dog = ModelDog()
                dog.id = i
                dog.name = "dog-\(i % 10)"
                dog.weight = i % 3 == 0 ? nil : Double(i) / 4
                dog.anything = .int(Int64(i))
                dog.owner = i % 2 == 0 ? person : nil
                let toy = ModelToy()
                toy.brand = "brand-\(i)"
                dog.toys.append(toy)
                let collar = ModelToy()
                collar.price = Double(i)
                dog.collar = collar
                dog.tags.insert("t\(i % 4)")
                dog.scores["s"] = Double(i)
                if let previous { dog.friends.append(previous) }
                try realm.checkedAdd(dog)
                XCTAssertEqual(dog.name, "dog-\(i % 10)")
                XCTAssertEqual(dog.toys.first?.brand, "brand-\(i)")
                previous = dog
            }
            XCTAssertEqual(person.dogs.count, count / 2)
        }
        let dogs = realm.objects(ModelDog.self)
        XCTAssertEqual(dogs.count, count)
        for i in stride(from: 0, to: count, by: 7) {
            let dog = try XCTUnwrap(try realm.object(ofType: ModelDog.self, forPrimaryKey: i))
            XCTAssertEqual(dog.name, "dog-\(i % 10)")
            XCTAssertEqual(dog.weight, i % 3 == 0 ? nil : Double(i) / 4)
            XCTAssertEqual(dog.anything, .int(Int64(i)))
            XCTAssertEqual(dog.owner?.name, i % 2 == 0 ? "ann" : nil)
            XCTAssertEqual(dog.toys.map(\.brand), ["brand-\(i)"])
            XCTAssertEqual(dog.collar?.price, Double(i))
            XCTAssertEqual(Array(dog.tags), ["t\(i % 4)"])
            XCTAssertEqual(dog.scores["s"], Double(i))
            XCTAssertEqual(dog.friends.map(\.id), i == 0 ? [] : [i - 1])
            XCTAssertEqual(dog.fans.map(\.id), i == count - 1 ? [] : [i + 1])
        }
        XCTAssertEqual(try realm.dynamicObjects("ModelDog", where: "name", equals: .string("dog-3")).count, count / 10)
        _ = try realm.verify()
    }
}
