// Migrations through the Swift API: a renamed property keeps its data, a changed type is
// converted by the block, a class is split in two, a class whose data the block deletes and
// removed properties free their pages, and a failed migration (a throwing block, a duplicate new primary key) leaves the file
// exactly as it was.
import XCTest
import Cove

final class MigrationTests: CoveTestCase {
    private func open(_ schema: String, version: UInt64, _ block: Migration.Block? = nil) throws -> Realm {
        try Realm(configuration: .init(path: "\(folder)/m.cove", durability: .noSync, schema: try Schema(jsonText: schema),
                                       schemaVersion: version, migrationBlock: block))
    }

    static let v1 = """
    {"Person": {"primaryKey": "id", "properties": {"id": "int", "name": "string", "age": "string", "street": "string",
                "city": "string", "tags": "string[]", "pet": "Pet?", "nums": "int<>"}, "indexed": ["name"]},
     "Pet": {"properties": {"name": "string", "owners": "@links(Person.pet)"}},
     "Note": {"properties": {"text": "string", "lines": "string[]"}}}
    """

    private func seed() throws {
        let realm = try open(Self.v1, version: 1)
        try realm.write {
            for i in 0..<40 {
                let pet = try realm.dynamicCreate("Pet", values: [("name", .string("pet\(i)"))])
                let p = try realm.dynamicCreate("Person", primaryKey: .int(Int64(i)), values: [
                    ("name", .string("n\(i)")), ("age", .string("\(20 + i)")), ("street", .string("s\(i)")),
                    ("city", .string(i % 2 == 0 ? "Oslo" : "Rome")), ("pet", .link(pet.link)),
                ])
                for j in 0..<50 { try p.dynamicList("tags").append(.string("t\(j)")) }
                try p.dynamicMutableSet("nums").insert(.int(Int64(i)))
                let note = try realm.dynamicCreate("Note", values: [("text", .string("x"))])
                for j in 0..<30 { try note.dynamicList("lines").append(.string("line \(j)")) }
            }
        }
        realm.close()
    }

    func testRenameConvertSplitAndRemove() throws {
        try seed()
        let v2 = """
        {"Person": {"primaryKey": "id", "properties": {"id": "int", "fullName": "string", "age": "int",
                    "home": "Address?", "tags": "string[]", "companion": "Pet?"}, "indexed": ["fullName", "age"]},
         "Pet": {"properties": {"name": "string", "owners": "@links(Person.companion)"}},
         "Address": {"embedded": true, "properties": {"street": "string", "city": "string"}}}
        """
        let calls = Counter()
        let realm = try open(v2, version: 2) { migration, oldVersion in
            calls.add()
            XCTAssertEqual(oldVersion, 1)
            XCTAssertNotNil(migration.oldSchema["Note"])
            XCTAssertNil(migration.newSchema["Note"])
            try migration.renameProperty(onType: "Person", from: "name", to: "fullName")
            try migration.renameProperty(onType: "Person", from: "pet", to: "companion")
            try migration.enumerateObjects(ofType: "Person") { old, new in
                guard let new, case .string(let age) = try old["age"] else { return XCTFail("no new object") }
                try new.setValue(.int(Int64(age) ?? -1), forKey: "age")
                let home = try new.createEmbeddedObject(forProperty: "home")
                try home.setValue(try old["street"], forKey: "street")
                try home.setValue(try old["city"], forKey: "city")
            }
            var notes = 0
            try migration.enumerateObjects(ofType: "Note") { _, new in
                XCTAssertNil(new)
                notes += 1
            }
            XCTAssertEqual(notes, 40)
            // Left out of the new schema, Note would stay in the file as it is: its data goes.
            XCTAssertTrue(try migration.deleteData(forType: "Note"))
        }
        XCTAssertEqual(calls.value, 1)
        let p = try XCTUnwrap(realm.dynamicObject(ofType: "Person", forPrimaryKey: .int(7)))
        XCTAssertEqual(try p["fullName"], .string("n7"))
        XCTAssertEqual(try p["age"], .int(27))
        XCTAssertEqual(try p.linkedObject("home")?["city"], .string("Rome"))
        XCTAssertEqual(try p.linkedObject("companion")?["name"], .string("pet7"))
        XCTAssertEqual(try p.dynamicList("tags").count, 50)
        XCTAssertEqual(try p.linkedObject("companion")?.linkingObjects("owners").map(\.objectKey), [p.objectKey])
        XCTAssertEqual(try realm.dynamicObjects("Person", where: "fullName", equals: .string("n9")).count, 1)
        XCTAssertEqual(try realm.dynamicObjects("Person", where: "age", equals: .int(30)).count, 1)
        assertThrows(.notFound, containing: "no property 'street'") { _ = try p["street"] }
        // Every page of the dropped class, columns, set trees and indexes is free again.
        let report = try realm.verify()
        XCTAssertTrue(report.contains("index entries match"), report)
        realm.close()
        // The new schema is the file's now.
        let again = try open(v2, version: 2)
        XCTAssertEqual(try again.objectCount("Address"), 40)
    }

    func testAFailedMigrationLeavesTheFileAsItWas() throws {
        try seed()
        let before = try open(Self.v1, version: 1)
        let version = try before.version
        before.close()
        let v2 = Self.v1.replacingAge(with: "int")
        struct Refused: Error {}
        XCTAssertThrowsError(try open(v2, version: 2) { migration, _ in
            try migration.enumerateObjects(ofType: "Person") { _, new in try new?.setValue(.int(1), forKey: "age") }
            throw Refused()
        }) { error in
            XCTAssertEqual((error as? CoveError)?.code, .callback)
            XCTAssertTrue("\(error)".contains("Refused"), "\(error)")
        }
        // The block cannot commit or cancel the migration's write itself.
        assertThrows(.inWrite, containing: "cannot commit") {
            _ = try self.open(v2, version: 2) { migration, _ in try migration.newRealm.commitWrite() }
        }
        assertThrows(.inWrite, containing: "cannot cancel") {
            _ = try self.open(v2, version: 2) { migration, _ in try migration.newRealm.cancelWrite() }
        }
        // Without a block the change needs a migration.
        assertThrows(.migrationRequired, containing: "need a migration: property 'Person.age' changed from string to int") {
            _ = try self.open(v2, version: 2)
        }
        // A new primary key that is not unique fails the migration too.
        let duplicatePK = Self.v1.replacingOccurrences("\"primaryKey\": \"id\"", "\"primaryKey\": \"city\"")
        assertThrows(.duplicateKey, containing: "two objects with primary key") {
            _ = try self.open(duplicatePK, version: 2) { _, _ in }
        }
        let realm = try open(Self.v1, version: 1)
        XCTAssertEqual(try realm.version, version)
        XCTAssertEqual(try realm.dynamicObject(ofType: "Person", forPrimaryKey: .int(3))?["age"], .string("23"))
        XCTAssertTrue(try realm.verify().contains("index entries match"))
    }

    func testTheBlockRunsForAdditiveChangesToo() throws {
        try seed()
        let v2 = Self.v1.replacingOccurrences("\"nums\": \"int<>\"", "\"nums\": \"int<>\", \"score\": \"double\"")
        let realm = try open(v2, version: 5) { migration, old in
            XCTAssertEqual(old, 1)
            XCTAssertEqual(migration.oldSchemaVersion, 1)
            try migration.enumerateObjects(ofType: "Person") { _, new in try new?.setValue(.double(1.5), forKey: "score") }
        }
        XCTAssertEqual(try realm.dynamicObject(ofType: "Person", forPrimaryKey: .int(0))?["score"], .double(1.5))
        assertThrows(.notFound, containing: "class 'Nope' is not in both") {
            let r = try self.open(v2.replacingOccurrences("\"score\": \"double\"", "\"score\": \"double\", \"s2\": \"int\""), version: 6) { m, _ in
                try m.renameProperty(onType: "Nope", from: "a", to: "b")
            }
            r.close()
        }
    }

    /// A realm keeps the shape of each table between its transactions. Another realm that adds
    /// an index (the same columns) or a property (one more column) changes what the shape must
    /// say, and the first realm's next write must follow it.
    func testARealmWritesWhatAnotherRealmChangedInTheSchema() throws {
        let v1 = #"{"Dog": {"properties": {"name": "string"}}}"#
        let v2 = #"{"Dog": {"properties": {"name": "string"}, "indexed": ["name"]}}"#
        let v3 = #"{"Dog": {"properties": {"name": "string", "age": "int"}, "indexed": ["name"]}}"#
        let first = try open(v1, version: 1)
        defer { first.close() }
        try first.write { _ = try first.dynamicCreate("Dog", values: [("name", .string("a"))]) }
        try first.write { _ = try first.dynamicCreate("Dog", values: [("name", .string("b"))]) }
        let second = try open(v2, version: 2)
        second.close()
        _ = try first.refresh()
        try first.write { _ = try first.dynamicCreate("Dog", values: [("name", .string("c"))]) }
        XCTAssertEqual(try first.dynamicObjects("Dog", where: "name", equals: .string("c")).count, 1)
        _ = try first.verify()
        let third = try open(v3, version: 3)
        try third.write { _ = try third.dynamicCreate("Dog", values: [("name", .string("d")), ("age", .int(3))]) }
        third.close()
        _ = try first.refresh()
        try first.write { _ = try first.dynamicCreate("Dog", values: [("name", .string("e")), ("age", .int(4))]) }
        let dogs = try first.dynamicObjects("Dog")
        XCTAssertEqual(try dogs.map { try $0["age"] }, [.int(0), .int(0), .int(0), .int(3), .int(4)])
        _ = try first.verify()
    }
}

/// A count a Sendable block can bump.
final class Counter: @unchecked Sendable {
    // Only touched from the thread that opens the realm (the block runs inside the open).
    private(set) var value = 0
    func add() { value += 1 }
}

extension String {
    func replacingAge(with type: String) -> String {
        replacingOccurrences("\"age\": \"string\"", "\"age\": \"\(type)\"")
    }

    /// `self` with every `target` replaced (no Foundation in the tests).
    func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        var out = ""
        var rest = Substring(self)
        while let range = rest.range(of: target) {
            out += rest[..<range.lowerBound] + replacement
            rest = rest[range.upperBound...]
        }
        return out + rest
    }
}
