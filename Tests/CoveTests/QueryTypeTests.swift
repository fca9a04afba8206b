// `@type` on mixed values (each type name, 'numeric', realm-core's aliases, any letter case, IN
// and arguments, lists and maps of mixed under ANY/ALL/NONE), and the comparisons RQL calls type
// errors: a list of objects or backlinks against null, a collection against a collection, and
// aggregates of what has no sum, average or order. Each is an `.invalidArgument` naming the
// property and the problem, raised before any row is read.
import XCTest
import Cove
import FoundationEssentials

final class QueryTypeTests: CoveTestCase {
    static let schemaJSON = """
    {"Thing": {"properties": {"name": "string", "n": "int", "extra": "mixed", "many": "mixed[]", "bag": "mixed{}",
                              "tags": "string[]", "tags2": "string[]", "dogs": "Dog[]", "toys": "Dog[]", "pack": "Dog<>",
                              "best": "Dog?"}},
     "Dog": {"properties": {"name": "string", "age": "int", "owners": "@links(Thing.dogs)"}}}
    """

    private var realm: Realm!

    /// One thing per type of `extra`, named after it.
    override func setUpWithError() throws {
        try super.setUpWithError()
        realm = try Realm(configuration: .init(path: "\(folder)/t.cove", durability: .noSync,
                                               schema: try Schema(jsonText: Self.schemaJSON), schemaVersion: 1))
        try realm.write {
            let rex = try realm.dynamicCreate("Dog", values: [("name", .string("rex")), ("age", .int(3))])
            let extras: [(String, Value)] = [
                ("int", .int(1)), ("double", .double(2.5)), ("float", .float(1.5)), ("decimal", .decimal128(Decimal128(Int64(7)))),
                ("string", .string("s")), ("binary", .data([1, 2])), ("date", .timestamp(Timestamp(seconds: 5, nanoseconds: 0))),
                ("objectId", .objectId(try ObjectId("5f1b2c3d4e5f60718293a4b5"))), ("uuid", .uuid(UUID())),
                ("link", .link(rex.link)), ("null", .null), ("bool", .bool(true)),
            ]
            for (name, value) in extras {
                _ = try realm.dynamicCreate("Thing", values: [("name", .string(name)), ("extra", value)])
            }
            let mixedList = try realm.objects("Thing").filter("name == 'int'").element(at: 0)
            for v: Value in [.int(1), .string("a"), .null] { try mixedList.dynamicList("many").append(v) }
            try mixedList.dynamicMap("bag").setValue(.double(1), forKey: "k")
            let strings = try realm.objects("Thing").filter("name == 'string'").element(at: 0)
            for v: Value in [.int(1), .double(2)] { try strings.dynamicList("many").append(v) }
            try strings.dynamicMap("bag").setValue(.string("x"), forKey: "k")
        }
    }

    override func tearDownWithError() throws {
        realm?.close()
        realm = nil
        try super.tearDownWithError()
    }

    private func names(_ query: String, _ args: [QueryArgument] = [], file: StaticString = #filePath, line: UInt = #line) -> [String] {
        names(in: realm, "Thing", query, args, file: file, line: line)
    }

    private func fails(_ query: String, _ text: String, className: String = "Thing", file: StaticString = #filePath, line: UInt = #line) {
        assertThrows(.invalidArgument, containing: text, file: file, line: line) {
            _ = try realm.objects(className).filter(query).checkedCount()
        }
    }

    func testEachTypeName() {
        for name in ["int", "double", "float", "decimal", "string", "binary", "date", "objectId", "uuid", "null", "bool"] {
            XCTAssertEqual(names("extra.@type == '\(name)'"), [name], name)
        }
        XCTAssertEqual(names("extra.@type == 'object'"), ["link"])
        XCTAssertEqual(names("extra.@type == 'objectlink'"), ["link"])
        XCTAssertEqual(names("extra.@type == 'numeric'"), ["int", "double", "float", "decimal"])
        XCTAssertEqual(names("extra.@type == 'list' OR extra.@type == 'dictionary'"), [], "mixed values hold no collections")
    }

    func testAliasesCaseOperatorsAndArguments() {
        XCTAssertEqual(names("extra.@type == 'OBJECTID'"), ["objectId"])
        XCTAssertEqual(names("extra.@type == 'boolean'"), ["bool"])
        XCTAssertEqual(names("extra.@type == 'integer'"), ["int"])
        XCTAssertEqual(names("extra.@type == 'timestamp'"), ["date"])
        XCTAssertEqual(names("extra.@type == 'decimal128'"), ["decimal"])
        XCTAssertEqual(names("'string' == extra.@type"), ["string"])
        XCTAssertEqual(names("extra.@type != 'numeric' AND extra.@type != 'null'"),
                       ["string", "binary", "date", "objectId", "uuid", "link", "bool"])
        XCTAssertEqual(names("extra.@type IN {'int', 'string'}"), ["int", "string"])
        XCTAssertEqual(names("NOT extra.@type IN {'numeric', 'string', 'binary', 'date', 'objectid', 'uuid', 'object', 'null'}"), ["bool"])
        XCTAssertEqual(names("extra.@type == $0", [.value(.string("double"))]), ["double"])
        XCTAssertEqual(names("extra.@type IN $0", [.list([.string("float"), .string("bool")])]), ["float", "bool"])
        XCTAssertEqual(names("extra.@type == 'numeric' AND extra > 1.2"), ["double", "float", "decimal"])
    }

    func testListsAndMapsOfMixed() {
        XCTAssertEqual(names("many.@type == 'string'"), ["int"])
        XCTAssertEqual(names("ANY many.@type == 'null'"), ["int"])
        XCTAssertEqual(names("ALL many.@type == 'numeric' AND many.@count > 0"), ["string"])
        XCTAssertEqual(names("NONE many.@type == 'string' AND many.@count > 0"), ["string"])
        XCTAssertEqual(names("bag.@type == 'string'"), ["string"])
        XCTAssertEqual(names("bag['k'].@type == 'numeric'"), ["int"])
        XCTAssertEqual(names("bag.@values.@type == 'double'"), ["int"])
    }

    func testTypeErrors() {
        fails("extra.@type == 'integr'", "unknown type name 'integr'")
        fails("extra.@type == 'mixed'", "unknown type name 'mixed'")
        fails("extra.@type IN {'int', 'nope'}", "unknown type name 'nope'")
        fails("n.@type == 'int'", "@type applies to mixed values, but 'n' is int")
        fails("name.@type == 'string'", "'name' is string")
        fails("best.@type == 'object'", "'best' is a link to Dog")
        fails("tags.@type == 'string'", "'tags' is string")
        fails("extra.@type > 'int'", "@type compares with ==, != and IN only")
        fails("extra.@type BEGINSWITH 'i'", "@type compares with ==, != and IN only")
        fails("extra.@type ==[c] 'int'", "[c]/[d] do not apply to @type")
        fails("extra.@type == 5", "compares with type names such as 'int', 'string' or 'numeric', got int 5")
        fails("extra.@type == nil", "got null")
        fails("extra.@type == name", "'extra.@type' compares with type names, not with 'name'")
        assertThrows(.invalidArgument, containing: "got int 3") {
            _ = try realm.objects("Thing").filter("extra.@type == $0", arguments: [.value(.int(3))]).checkedCount()
        }
        assertThrows(.querySyntax, containing: "cannot go on after @type") { _ = try realm.objects("Thing").filter("extra.@type.x == 'int'").checkedCount() }
    }

    func testObjectCollectionsAgainstNull() {
        fails("dogs == nil", "cannot compare 'dogs' (a list of Dog objects) with null: it holds no nulls (test 'dogs.@count == 0'")
        fails("dogs != NULL", "'dogs' (a list of Dog objects)")
        fails("ANY dogs == nil", "'dogs' (a list of Dog objects)")
        fails("nil == pack", "'pack' (a set of Dog objects)")
        fails("owners == nil", "'owners' (backlinks from Thing.dogs)", className: "Dog")
        fails("@links.Thing.dogs == nil", "(backlinks from Thing.dogs)", className: "Dog")
        assertThrows(.invalidArgument, containing: "'dogs' (a list of Dog objects) with null") {
            _ = try realm.objects("Thing").filter("dogs == $0", arguments: [.value(.null)]).checkedCount()
        }
        // What stays allowed: a single link, values in a list (ANY element null), counts.
        XCTAssertEqual(names("best == nil").count, 12)
        XCTAssertEqual(names("many == nil"), ["int"])
        XCTAssertEqual(names("dogs.@count == 0").count, 12)
    }

    func testCollectionsAgainstCollections() {
        fails("dogs == toys", "cannot compare two collections, 'dogs' and 'toys'")
        fails("tags == tags2", "cannot compare two collections, 'tags' and 'tags2'")
        fails("tags IN tags2", "'tags' and 'tags2'")
        fails("ANY tags == ANY tags2", "'tags' and 'tags2'")
        fails("dogs.age == toys.age", "'dogs.age' and 'toys.age'")
        fails("many != bag", "'many' and 'bag'")
        fails("many.@type == bag.@type", "'many.@type' and 'bag.@type'")
        XCTAssertEqual(names("extra.@type == many.@type"), ["int"], "an int among the list's int, string and null")
        // A collection against a value, a list literal or a count is fine.
        XCTAssertEqual(names("tags == {'a'}"), [])
        XCTAssertEqual(names("tags.@count == tags2.@count").count, 12)
        XCTAssertEqual(names("ANY dogs.name == name"), [])
    }

    func testAggregatesRQLDoesNotAllow() {
        fails("tags.@sum > 1", "@sum needs numbers, but 'tags.@sum' is string")
        fails("tags.@avg > 1", "@avg needs numbers, but 'tags.@avg' is string")
        fails("tags.@min > 'a'", "@min needs numbers or dates, but 'tags.@min' is string")
        fails("dogs.@sum > 1", "@sum over 'dogs' needs a property of the Dog objects after it ('dogs.@sum.property')")
        fails("dogs.@max > 1", "@max over 'dogs' needs a property of the Dog objects")
        fails("owners.@avg > 1", "@avg over 'owners' needs a property", className: "Dog")
        fails("dogs.@avg.name > 1", "@avg needs numbers, but 'dogs.@avg.name' is string")
        fails("dogs.@sum.owners > 1", "the property after @sum must be a plain property")
        fails("n.@sum > 1", "'n.@sum' needs a collection")
        // Allowed: numbers, dates for min/max, mixed.
        XCTAssertEqual(names("dogs.@sum.age == 0").count, 12)
        // In a list of mixed, @sum and @avg take the numbers and leave the rest; @min and @max
        // order every value as SORT does (numbers before strings).
        XCTAssertEqual(names("many.@sum == 3"), ["string"])
        XCTAssertEqual(names("many.@sum == 1"), ["int"])
        XCTAssertEqual(names("many.@avg == 1.5"), ["string"])
        XCTAssertEqual(names("many.@max == 'a'"), ["int"])
        XCTAssertEqual(names("many.@min == 1"), ["int", "string"])
    }
}
