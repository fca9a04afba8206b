// A realm opened with some of the file's classes (realm-swift's `objectTypes:`): the others stay
// in the file as they are, out of sight; deleting an object clears the links to it from classes
// the realm does not see; a migration's `deleteData(forType:)` deletes a class's objects, or
// takes a class left out of the schema out of the file.
import XCTest
import Cove

final class SubsetSchemaTests: CoveTestCase {
    static let full = """
    {"Person": {"primaryKey": "id", "properties": {"id": "int", "name": "string", "pet": "Pet?", "pets": "Pet[]"},
                "indexed": ["name"]},
     "Pet": {"properties": {"name": "string", "owners": "@links(Person.pet)"}},
     "Note": {"properties": {"text": "string", "lines": "string[]"}}}
    """
    static let petsOnly = """
    {"Pet": {"properties": {"name": "string"}}}
    """
    static let notesOnly = """
    {"Note": {"properties": {"text": "string", "lines": "string[]"}}}
    """

    private func open(_ schema: String, version: UInt64, _ block: Migration.Block? = nil) throws -> Realm {
        try Realm(configuration: .init(path: "\(folder)/s.cove", durability: .noSync, schema: try Schema(jsonText: schema),
                                       schemaVersion: version, migrationBlock: block))
    }

    private func seed() throws {
        let realm = try open(Self.full, version: 1)
        try realm.write {
            for i in 0..<10 {
                let pet = try realm.dynamicCreate("Pet", values: [("name", .string("pet\(i)"))])
                let p = try realm.dynamicCreate("Person", primaryKey: .int(Int64(i)), values: [
                    ("name", .string("n\(i)")), ("pet", .link(pet.link)),
                ])
                try p.dynamicList("pets").append(.link(pet.link))
                let note = try realm.dynamicCreate("Note", values: [("text", .string("note\(i)"))])
                try note.dynamicList("lines").append(.string("line"))
            }
        }
        realm.close()
    }

    func testClassesLeftOutStayInTheFileUntouched() throws {
        try seed()
        // Same version, fewer classes: no migration, nothing removed.
        let notes = try open(Self.notesOnly, version: 1)
        XCTAssertEqual(notes.schema.classNames, ["Note"])
        assertThrows(.notFound, containing: "no class 'Person'") { _ = try notes.objects("Person") }
        assertThrows(.notFound, containing: "no class 'Person'") { _ = try notes.dynamicCreate("Person", primaryKey: .int(99)) }
        try notes.write {
            try notes.dynamicCreate("Note", values: [("text", .string("added"))])
        }
        XCTAssertEqual(try notes.objectCount("Note"), 11)
        notes.close()

        let all = try open(Self.full, version: 1)
        defer { all.close() }
        XCTAssertEqual(Set(all.schema.classNames), ["Person", "Pet", "Note"])
        XCTAssertEqual(try all.objectCount("Person"), 10)
        XCTAssertEqual(try all.objectCount("Note"), 11)
        let p = try XCTUnwrap(all.dynamicObject(ofType: "Person", forPrimaryKey: .int(3)))
        XCTAssertEqual(try p.linkedObject("pet")?["name"], .string("pet3"))
        XCTAssertEqual(try all.dynamicObjects("Person", where: "name", equals: .string("n4")).count, 1)
        XCTAssertTrue(try all.verify().contains("index entries match"))
    }

    func testAHigherVersionWithFewerClassesNeedsNoMigration() throws {
        try seed()
        let notes = try open(Self.notesOnly, version: 2)
        XCTAssertEqual(try notes.objectCount("Note"), 10)
        notes.close()
        // The file's schema keeps every class, at the new version.
        XCTAssertEqual(try Realm.schemaVersion(at: "\(folder)/s.cove"), 2)
        let all = try open(Self.full, version: 2)
        defer { all.close() }
        XCTAssertEqual(try all.objectCount("Person"), 10)
        XCTAssertEqual(try all.objectCount("Pet"), 10)
    }

    func testDeletingAnObjectClearsLinksFromClassesOutOfSight() throws {
        try seed()
        let pets = try open(Self.petsOnly, version: 1)
        try pets.write {
            for pet in try pets.dynamicObjects("Pet") where try pet["name"] == .string("pet2") || pet["name"] == .string("pet5") {
                try pets.delete(pet)
            }
        }
        XCTAssertEqual(try pets.objectCount("Pet"), 8)
        // The check reads every class of the file, those out of sight too.
        XCTAssertTrue(try pets.verify().contains("index entries match"))
        pets.close()

        let all = try open(Self.full, version: 1)
        defer { all.close() }
        for i in 0..<10 {
            let p = try XCTUnwrap(all.dynamicObject(ofType: "Person", forPrimaryKey: .int(Int64(i))))
            let gone = i == 2 || i == 5
            XCTAssertEqual(try p.linkedObject("pet") == nil, gone, "person \(i)")
            XCTAssertEqual(try p.dynamicList("pets").count, gone ? 0 : 1, "person \(i)")
        }
        _ = try all.verify()
    }

    func testDeleteDataDeletesObjectsOrTakesAClassOut() throws {
        try seed()
        // Note left out, and its data deleted; Pet kept, its objects deleted.
        let v2 = """
        {"Person": {"primaryKey": "id", "properties": {"id": "int", "name": "string", "pet": "Pet?", "pets": "Pet[]"},
                    "indexed": ["name"]},
         "Pet": {"properties": {"name": "string", "owners": "@links(Person.pet)"}}}
        """
        let realm = try open(v2, version: 2) { migration, _ in
            XCTAssertTrue(try migration.deleteData(forType: "Note"))
            XCTAssertTrue(try migration.deleteData(forType: "Pet"))
            XCTAssertThrowsError(try migration.deleteData(forType: "Nothing")) { error in
                XCTAssertEqual((error as? CoveError)?.code, .notFound)
            }
        }
        XCTAssertEqual(try realm.objectCount("Pet"), 0)
        XCTAssertEqual(try realm.objectCount("Person"), 10)
        XCTAssertNil(try realm.dynamicObject(ofType: "Person", forPrimaryKey: .int(1))?.linkedObject("pet"))
        _ = try realm.verify()
        realm.close()
        // Note is gone from the file: a schema naming it again starts it empty.
        let again = try open(Self.full, version: 3)
        defer { again.close() }
        XCTAssertEqual(try again.objectCount("Note"), 0)
        XCTAssertEqual(try again.objectCount("Person"), 10)
    }

    func testAClassOutOfSightMustStillFit() throws {
        try seed()
        // Person loses `pet`, which the backlinks of Pet, left out, follow.
        let noPet = """
        {"Person": {"primaryKey": "id", "properties": {"id": "int", "name": "string", "pets": "Pet[]"}}}
        """
        assertThrows(.schema, containing: "'Pet'") { _ = try open(noPet, version: 2) { _, _ in } }
        // Person, left out, links to Pet: Pet's data cannot go from the file under it.
        assertThrows(.schema, containing: "deleteData('Pet')") {
            _ = try open(Self.notesOnly, version: 2) { migration, _ in try migration.deleteData(forType: "Pet") }
        }
        // Nothing changed.
        let all = try open(Self.full, version: 1)
        defer { all.close() }
        XCTAssertEqual(try all.objectCount("Pet"), 10)
    }
}
