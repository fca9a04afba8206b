// The schema: every form of the notation, every validation error with the class and property it
// names, the canonical JSON and catalog round trips, diffs, and stable keys across versions.
import XCTest
@testable import Cove
@testable import CoveCore

final class SchemaTests: XCTestCase {
    private let dogs = """
    {
      "Person": {"primaryKey": "name", "properties": {"name": "string", "dogs": "Dog[]"}},
      "Dog": {"properties": {"name": "string", "age": "int", "owner": "Person?", "toys": "Toy[]",
                             "tags": "string<>", "scores": "double{}", "owners": "@links(Person.dogs)",
                             "bio": "string?", "nums": "int?[]", "any": "mixed", "when": "date", "price": "decimal128",
                             "oid": "objectId?", "id": "uuid", "blob": "data", "ok": "bool", "f": "float"},
              "indexed": ["age"], "fulltext": ["bio"]},
      "Toy": {"embedded": true, "properties": {"brand": "string", "price": "double"}}
    }
    """

    private func schemaError(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            _ = try Schema(jsonText: text)
            XCTFail("accepted \(text)", file: file, line: line)
            return ""
        } catch {
            XCTAssertEqual(error.code, .schema, file: file, line: line)
            return error.message
        }
    }

    func testParsesEveryNotationForm() throws {
        let s = try Schema(jsonText: dogs)
        XCTAssertEqual(s.classNames, ["Person", "Dog", "Toy"])
        let person = try XCTUnwrap(s["Person"])
        XCTAssertEqual(person.primaryKey, "name")
        XCTAssertTrue(person[property: "name"]!.isPrimaryKey)
        XCTAssertTrue(person[property: "name"]!.isIndexed)
        XCTAssertEqual(person[property: "dogs"], Property(name: "dogs", type: .object("Dog"), collection: .list))
        let dog = try XCTUnwrap(s["Dog"])
        XCTAssertEqual(dog.properties.map(\.name), ["name", "age", "owner", "toys", "tags", "scores", "owners", "bio", "nums", "any", "when", "price", "oid", "id", "blob", "ok", "f"])
        XCTAssertEqual(dog[property: "age"], Property(name: "age", type: .int, isIndexed: true))
        XCTAssertEqual(dog[property: "owner"], Property(name: "owner", type: .object("Person"), isOptional: true))
        XCTAssertEqual(dog[property: "tags"], Property(name: "tags", type: .string, collection: .set))
        XCTAssertEqual(dog[property: "scores"], Property(name: "scores", type: .double, collection: .map))
        XCTAssertEqual(dog[property: "owners"], Property(name: "owners", type: .linkingObjects("Person", property: "dogs")))
        XCTAssertEqual(dog[property: "bio"], Property(name: "bio", type: .string, isOptional: true, isFullText: true))
        XCTAssertEqual(dog[property: "nums"], Property(name: "nums", type: .int, collection: .list, isOptional: true))
        XCTAssertTrue(dog[property: "any"]!.isOptional)
        XCTAssertEqual(dog[property: "when"]?.type, .date)
        XCTAssertEqual(dog[property: "oid"]?.typeNotation, "objectId?")
        XCTAssertEqual(dog.persistedProperties.count, 16)
        XCTAssertTrue(s["Toy"]!.isEmbedded)
        // "Dog" and "Dog?" mean the same; so do "mixed" and "mixed?".
        let a = try Schema(jsonText: #"{"A": {"properties": {"b": "B", "m": "mixed?"}}, "B": {"properties": {}}}"#)
        let b = try Schema(jsonText: #"{"A": {"properties": {"b": "B?", "m": "mixed"}}, "B": {"properties": {}}}"#)
        XCTAssertEqual(a, b)
    }

    func testObjectFormOfProperties() throws {
        let s = try Schema(jsonText: """
        {"A": {"properties": {
            "i": {"type": "int", "optional": true, "indexed": true},
            "t": {"type": "string", "fulltext": true},
            "l": {"type": "list", "objectType": "B"},
            "s": {"type": "set", "objectType": "int?"},
            "m": {"type": "dictionary", "objectType": "string"},
            "o": {"type": "object", "objectType": "B"},
            "x": {"type": "double[]"}}},
         "B": {"properties": {"back": {"type": "linkingObjects", "objectType": "A", "property": "l"}}}}
        """)
        let a = s["A"]!
        XCTAssertEqual(a[property: "i"], Property(name: "i", type: .int, isOptional: true, isIndexed: true))
        XCTAssertTrue(a[property: "t"]!.isFullText)
        XCTAssertEqual(a[property: "l"]?.typeNotation, "B[]")
        XCTAssertEqual(a[property: "s"]?.typeNotation, "int?<>")
        XCTAssertEqual(a[property: "m"]?.typeNotation, "string{}")
        XCTAssertEqual(a[property: "o"]?.typeNotation, "B?")
        XCTAssertEqual(a[property: "x"]?.typeNotation, "double[]")
        XCTAssertEqual(s["B"]![property: "back"]?.typeNotation, "@links(A.l)")
        XCTAssertTrue(schemaError(#"{"A": {"properties": {"i": {"type": "int", "size": 3}}}}"#).contains("property 'i' of class 'A' has unknown member \"size\""))
        XCTAssertTrue(schemaError(#"{"A": {"properties": {"i": {"optional": true}}}}"#).contains("property 'i' of class 'A' needs \"type\""))
        XCTAssertTrue(schemaError(#"{"A": {"properties": {"i": {"type": "list"}}}}"#).contains("needs \"objectType\""))
        XCTAssertTrue(schemaError(#"{"A": {"properties": {"i": {"type": "int", "indexed": 1}}}}"#).contains("\"indexed\" of property 'i' of class 'A' is true or false"))
    }

    func testValidationErrorsNameClassAndProperty() {
        let cases: [(String, String)] = [
            (#"{"A": {"properties": {"x": "integer"}}}"#, "property 'x' of class 'A' has unknown type \"integer\""),
            (#"{"A": {"properties": {"x": "int[][]"}}}"#, "property 'x' of class 'A' has unknown type \"int[][]\""),
            (#"{"A": {"properties": {"x": ""}}}"#, "property 'x' of class 'A' has unknown type \"\""),
            (#"{"A": {"properties": {"x": "Persn"}}}"#, "property 'x' of class 'A' links to class 'Persn', which is not in the schema"),
            (#"{"A": {"properties": {"x": "E<>"}}, "E": {"embedded": true, "properties": {}}}"#, "property 'x' of class 'A' is a set of embedded objects ('E')"),
            (#"{"A": {"properties": {"x": "A?[]"}}}"#, "property 'x' of class 'A' is a list of links, which cannot hold null"),
            (#"{"A": {"properties": {"x": "A?<>"}}}"#, "property 'x' of class 'A' is a set of links, which cannot hold null"),
            (#"{"A": {"properties": {"x": "@links(B.a)[]"}}, "B": {"properties": {"a": "A"}}}"#, "property 'x' of class 'A' is a list of backlinks"),
            (#"{"A": {"properties": {"x": "@links(B.a){}"}}, "B": {"properties": {"a": "A"}}}"#, "property 'x' of class 'A' is a map of backlinks"),
            (#"{"A": {"properties": {"x": "@links(B.a)"}}}"#, "property 'x' of class 'A' is backlinks from class 'B', which is not in the schema"),
            (#"{"A": {"properties": {"x": "@links(B.c)"}}, "B": {"properties": {"a": "A"}}}"#, "property 'x' of class 'A' is backlinks from 'B.c', but class 'B' has no property 'c'"),
            (#"{"A": {"properties": {"x": "@links(B.a)"}}, "B": {"properties": {"a": "int"}}}"#, "property 'x' of class 'A' is backlinks from 'B.a', which is int, not a link, list or set of links to 'A'"),
            (#"{"A": {"properties": {"x": "@links(B.a)"}}, "B": {"properties": {"a": "B"}}}"#, "property 'x' of class 'A' is backlinks from 'B.a', which is B?, not a link"),
            (#"{"A": {"properties": {"x": "@links(B.a)"}}, "B": {"properties": {"a": "A{}"}}}"#, "property 'x' of class 'A' is backlinks from 'B.a', which is A{}"),
            (#"{"A": {"primaryKey": "x", "properties": {"x": "double"}}}"#, "property 'x' of class 'A' cannot be the primary key: it is double"),
            (#"{"A": {"primaryKey": "x", "properties": {"x": "int[]"}}}"#, "property 'x' of class 'A' cannot be the primary key: it is int[]"),
            (#"{"A": {"primaryKey": "y", "properties": {"x": "int"}}}"#, "primary key 'y' of class 'A' is not a property of the class"),
            (#"{"A": {"primaryKey": "x", "embedded": true, "properties": {"x": "int"}}}"#, "embedded class 'A' cannot have a primary key ('x')"),
            (#"{"A": {"properties": {}}, "A": {"properties": {}}}"#, "class 'A' is declared twice"),
            (#"{"A": {"properties": {"x": "int", "x": "string"}}}"#, "property 'x' of class 'A' is declared twice"),
            (#"{"": {"properties": {}}}"#, "class name \"\" is not an identifier"),
            (#"{"A b": {"properties": {}}}"#, "class name \"A b\" is not an identifier"),
            (#"{"int": {"properties": {}}}"#, "class name 'int' is the name of a property type"),
            (#"{"A": {"properties": {"": "int"}}}"#, "property name \"\" of class 'A' is not an identifier"),
            (#"{"A": {"properties": {"1x": "int"}}}"#, "property name \"1x\" of class 'A' is not an identifier"),
            (#"{"A": {"properties": {"x": "int"}, "indexed": ["y"]}}"#, "\"indexed\" of class 'A' names property 'y', which the class does not have"),
            (#"{"A": {"properties": {"x": "int"}, "fulltext": ["y"]}}"#, "\"fulltext\" of class 'A' names property 'y', which the class does not have"),
            (#"{"A": {"properties": {"x": "double"}, "indexed": ["x"]}}"#, "property 'x' of class 'A' cannot be indexed: double is not one of"),
            (#"{"A": {"properties": {"x": "int[]"}, "indexed": ["x"]}}"#, "property 'x' of class 'A' cannot be indexed: int[]"),
            (#"{"A": {"properties": {"x": "int"}, "fulltext": ["x"]}}"#, "property 'x' of class 'A' cannot have a full-text index: it is int, not string"),
            (#"{"A": {"properties": {"x": "string"}, "fulltext": ["x"], "indexed": ["x"]}}"#, "property 'x' of class 'A' cannot have both an index and a full-text index"),
            (#"{"A": {"properties": {"x": "int"}, "extra": 1}}"#, "class 'A' has unknown member \"extra\""),
            (#"{"A": {}}"#, "class 'A' needs \"properties\""),
            (#"{"A": {"properties": {"x": 3}}}"#, "property 'x' of class 'A' is a type string or an object with \"type\", got number"),
            (#"{"A": {"primaryKey": 3, "properties": {}}}"#, "\"primaryKey\" of class 'A' is a property name, got number"),
            (#"{"A": {"embedded": "yes", "properties": {}}}"#, "\"embedded\" of class 'A' is true or false, got string"),
            (#"{"A": {"properties": {}, "indexed": "x"}}"#, "\"indexed\" of class 'A' is an array of property names, got string"),
            (#"[]"#, "a schema is a JSON object keyed by class name, got array"),
            ("{\"A\": {\n \"properties\": {,}}}", "schema: invalid JSON at line 2, column 17"),
        ]
        for (text, expected) in cases {
            let message = schemaError(text)
            XCTAssertTrue(message.hasPrefix(expected), "\(text)\n  got: \(message)\n  expected: \(expected)")
        }
    }

    func testAcceptedShapes() throws {
        // Embedded classes used by nothing or from two places; links to embedded objects in maps
        // and lists; optional primary keys of every allowed type; backlinks from sets.
        XCTAssertNoThrow(try Schema(jsonText: #"{"E": {"embedded": true, "properties": {"x": "int"}}}"#))
        XCTAssertNoThrow(try Schema(jsonText: """
        {"E": {"embedded": true, "properties": {"x": "int"}},
         "A": {"properties": {"e": "E", "l": "E[]", "m": "E{}"}}, "B": {"properties": {"e": "E"}}}
        """))
        for type in ["int", "int?", "string", "string?", "objectId", "objectId?", "uuid", "uuid?"] {
            XCTAssertNoThrow(try Schema(jsonText: #"{"A": {"primaryKey": "k", "properties": {"k": "\#(type)"}}}"#), type)
        }
        XCTAssertNoThrow(try Schema(jsonText: #"{"A": {"properties": {"b": "@links(B.s)"}}, "B": {"properties": {"s": "A<>"}}}"#))
        for type in ["bool", "int", "string", "date", "objectId", "uuid", "mixed", "string?"] {
            XCTAssertNoThrow(try Schema(jsonText: #"{"A": {"properties": {"k": "\#(type)"}, "indexed": ["k"]}}"#), type)
        }
    }

    func testCanonicalJSONRoundTrip() throws {
        let s = try Schema(jsonText: dogs)
        let text = s.jsonText()
        XCTAssertEqual(try Schema(jsonText: text), s)
        XCTAssertEqual(try Schema(jsonText: text).jsonText(), text, "canonical form is a fixed point")
        XCTAssertEqual(try Schema(jsonText: s.jsonText(pretty: true)), s)
        let person = s.json()["Person"]
        XCTAssertEqual(person, .object([JSONMember("primaryKey", .string("name")),
                                        JSONMember("properties", .object([JSONMember("name", .string("string")), JSONMember("dogs", .string("Dog[]"))]))]))
        let dog = s.json()["Dog"]
        XCTAssertEqual(dog?["indexed"], .array([.string("age")]))
        XCTAssertEqual(dog?["fulltext"], .array([.string("bio")]))
        XCTAssertEqual(dog?["properties"]?["owner"], .string("Person?"))
        XCTAssertEqual(dog?["properties"]?["owners"], .string("@links(Person.dogs)"))
        XCTAssertEqual(dog?["properties"]?["any"], .string("mixed"))
        XCTAssertEqual(dog?["properties"]?["nums"], .string("int?[]"))
        XCTAssertEqual(s.json()["Toy"]?["embedded"], .bool(true))
        // Programmatic construction gives the same schema as the notation.
        let built = try Schema([
            ObjectSchema(className: "A", properties: [Property(name: "id", type: .int), Property(name: "b", type: .object("A"))], primaryKey: "id"),
        ])
        XCTAssertEqual(built, try Schema(jsonText: #"{"A": {"primaryKey": "id", "properties": {"id": "int", "b": "A"}}}"#))
        XCTAssertNotEqual(built, try Schema(jsonText: #"{"A": {"properties": {"id": "int", "b": "A"}}}"#))
    }

    func testDiffs() throws {
        let old = try Schema(jsonText: """
        {"A": {"primaryKey": "id", "properties": {"id": "int", "x": "int", "gone": "string", "back": "@links(B.a)"}, "indexed": ["x"]},
         "B": {"properties": {"a": "A"}}, "Old": {"properties": {}}}
        """)
        XCTAssertTrue(old.changes(from: old).isEmpty)
        XCTAssertTrue(old.changes(from: old).isAdditiveOnly)
        XCTAssertEqual("\(old.changes(from: old))", "no changes")

        let additive = try Schema(jsonText: """
        {"A": {"primaryKey": "id", "properties": {"id": "int", "x": "int", "gone": "string", "back": "@links(B.a)", "new": "double?"},
               "indexed": ["x", "gone"]},
         "B": {"properties": {"a": "A"}}, "Old": {"properties": {}}, "C": {"properties": {}}}
        """)
        let c1 = additive.changes(from: old)
        XCTAssertEqual(c1.addedClasses, ["C"])
        XCTAssertEqual(c1.addedProperties.map(\.propertyName), ["new"])
        XCTAssertEqual(c1.indexChanges, [.init(className: "A", propertyName: "gone", kind: .regular, isAdded: true)])
        XCTAssertTrue(c1.isAdditiveOnly)
        XCTAssertFalse(c1.isEmpty)
        XCTAssertEqual("\(c1)", "classes added: C; properties added: A.new; index added to 'A.gone'")

        let breaking = try Schema(jsonText: """
        {"A": {"primaryKey": "x", "properties": {"id": "int?", "x": "int"}},
         "B": {"embedded": true, "properties": {"a": "A"}}}
        """)
        let c2 = breaking.changes(from: old)
        XCTAssertEqual(c2.removedClasses, ["Old"])
        XCTAssertEqual(c2.removedProperties.map(\.propertyName), ["gone", "back"])
        XCTAssertEqual(c2.removedProperties.map(\.isBacklinks), [false, true])
        XCTAssertEqual(c2.changedProperties.map { "\($0.className).\($0.old.typeNotation)->\($0.new.typeNotation)" }, ["A.int->int?"])
        XCTAssertEqual(c2.primaryKeyChanges, [.init(className: "A", old: "id", new: "x")])
        XCTAssertEqual(c2.embeddingChanges, ["B"])
        XCTAssertFalse(c2.isAdditiveOnly)
        // In words, for the messages that refuse an open.
        XCTAssertEqual("\(c2)", "classes removed: Old; embedded flag changed: B; properties removed: A.gone, A.back; "
            + "property 'A.id' changed from int to int?; primary key of 'A' changed from 'id' to 'x'")

        // Removing backlinks alone needs no migration; removing an index does.
        let noBacklinks = try Schema(jsonText: """
        {"A": {"primaryKey": "id", "properties": {"id": "int", "x": "int", "gone": "string"}, "indexed": ["x"]},
         "B": {"properties": {"a": "A"}}, "Old": {"properties": {}}}
        """)
        XCTAssertTrue(noBacklinks.changes(from: old).isAdditiveOnly)
        let noIndex = try Schema(jsonText: """
        {"A": {"primaryKey": "id", "properties": {"id": "int", "x": "int", "gone": "string", "back": "@links(B.a)"}},
         "B": {"properties": {"a": "A"}}, "Old": {"properties": {}}}
        """)
        XCTAssertEqual(noIndex.changes(from: old).indexChanges, [.init(className: "A", propertyName: "x", kind: .regular, isAdded: false)])
        XCTAssertFalse(noIndex.changes(from: old).isAdditiveOnly)
        XCTAssertEqual("\(noIndex.changes(from: old))", "index removed from 'A.x'")
    }

    func testKeysAcrossVersions() throws {
        let v1 = try Schema(jsonText: #"{"A": {"properties": {"x": "int", "y": "string"}}, "B": {"properties": {"z": "int"}}}"#)
            .assigningKeys(previous: nil)
        XCTAssertTrue(v1.hasKeys)
        XCTAssertEqual(v1.classes.map(\.classKey), [1, 2])
        XCTAssertEqual(v1.classes.flatMap { $0.properties.map(\.key) }, [1, 2, 3])
        XCTAssertEqual(v1.nextClassKey, 3)
        XCTAssertEqual(v1.nextPropertyKey, 4)

        // Catalog round trip keeps keys and counters.
        let stored = try Schema(catalog: JSONValue(parsing: v1.catalogJSON().serialized()))
        XCTAssertEqual(stored, v1)
        XCTAssertEqual(stored.classes.map(\.classKey), [1, 2])
        XCTAssertEqual(stored["A"]?[property: "y"]?.key, 2)
        XCTAssertEqual(stored.nextPropertyKey, 4)

        // v2: B removed, A.y removed, A.x changes shape, new class C and property A.w.
        let v2 = try Schema(jsonText: #"{"C": {"properties": {"c": "int"}}, "A": {"properties": {"w": "int", "x": "int?"}}}"#)
            .assigningKeys(previous: stored)
        XCTAssertEqual(v2["A"]?.classKey, 1)
        XCTAssertEqual(v2["C"]?.classKey, 3, "a removed class key is not reused")
        XCTAssertEqual(v2["C"]?[property: "c"]?.key, 4)
        XCTAssertEqual(v2["A"]?[property: "w"]?.key, 5)
        XCTAssertEqual(v2["A"]?[property: "x"]?.key, 6, "a property of a new shape gets a new key")
        // v3 brings back B and A.y: new keys, never the old ones.
        let v3 = try Schema(jsonText: #"{"A": {"properties": {"w": "int", "x": "int?", "y": "string"}}, "B": {"properties": {"z": "int"}}, "C": {"properties": {"c": "int"}}}"#)
            .assigningKeys(previous: try Schema(catalog: v2.catalogJSON()))
        XCTAssertEqual(v3["A"]?[property: "w"]?.key, 5)
        XCTAssertEqual(v3["A"]?[property: "x"]?.key, 6)
        XCTAssertEqual(v3["A"]?[property: "y"]?.key, 7)
        XCTAssertEqual(v3["B"]?.classKey, 4)
        XCTAssertEqual(v3["B"]?[property: "z"]?.key, 8)
        XCTAssertEqual(v3["C"]?.classKey, 3)
        XCTAssertEqual(v3.objectSchema(forClassKey: 4)?.className, "B")
        XCTAssertThrowsError(try Schema(catalog: .object([])))
        XCTAssertThrowsError(try Schema(jsonText: #"{"A": {"key": 1, "properties": {}}}"#), "keys only in the catalog form")
    }
}
