// The query language over a small fixed data set, through the Swift API: every operator family,
// the edge cases docs/query-language.md lists (null rules, empty collections under ANY/ALL/NONE, BETWEEN
// bounds, LIKE wildcards, stable SORT with ties, DISTINCT keeps the first, LIMIT after SORT,
// case and diacritic folding in Greek and Cyrillic), Results' laziness, liveness, aggregates,
// index use and errors.
import XCTest
import Cove

final class QueryTests: CoveTestCase {
    static let schemaJSON = """
    {"Person": {"properties": {"name": "string", "age": "int", "score": "double?", "nick": "string?", "active": "bool",
                               "tags": "string[]", "dogs": "Dog[]", "friend": "Person?", "bio": "string"},
                "indexed": ["age", "name"], "fulltext": ["bio"]},
     "Dog": {"primaryKey": "name", "properties": {"name": "string", "age": "int", "weight": "double",
                                                  "owners": "@links(Person.dogs)"}}}
    """

    var realm: Realm!

    override func setUpWithError() throws {
        try super.setUpWithError()
        realm = try Realm(configuration: .init(path: "\(folder)/q.cove", durability: .noSync,
                                               schema: try Schema(jsonText: Self.schemaJSON), schemaVersion: 1))
        try realm.write {
            let rex = try realm.dynamicCreate("Dog", primaryKey: .string("Rex"), values: [("age", .int(3)), ("weight", .double(30))])
            let fido = try realm.dynamicCreate("Dog", primaryKey: .string("Fido"), values: [("age", .int(5)), ("weight", .double(12))])
            let max = try realm.dynamicCreate("Dog", primaryKey: .string("Max"), values: [("age", .int(8)), ("weight", .double(25))])
            func person(_ name: String, _ age: Int64, _ score: Double?, _ nick: String?, _ tags: [String], _ dogs: [DynamicObject],
                        _ bio: String, active: Bool = false) throws -> DynamicObject {
                let p = try realm.dynamicCreate("Person", values: [
                    ("name", .string(name)), ("age", .int(age)), ("score", score.map { .double($0) } ?? .null),
                    ("nick", nick.map { .string($0) } ?? .null), ("active", .bool(active)), ("bio", .string(bio)),
                ])
                for t in tags { try p.dynamicList("tags").append(.string(t)) }
                for d in dogs { try p.dynamicList("dogs").append(.link(d.link)) }
                return p
            }
            let ann = try person("Ann", 31, 8.5, "annie", ["dev", "admin"], [rex, fido], "Loves hiking and café mornings", active: true)
            let bob = try person("Bob", 25, nil, nil, [], [], "Plays chess")
            _ = try person("Çelik", 40, 3.0, "Çe", ["ops"], [max], "Builds boats in İzmir")
            let dave = try person("dave", 25, 9.75, "", ["dev"], [rex], "chess and hiking")
            _ = try person("Όμηρος", 60, 1.0, "ΟΜΗΡΟΣ", ["intern", "dev"], [], "Ποιητής της Οδύσσειας")
            _ = try person("Юрий", 33, 5.5, "юрий", [], [], "Космонавт")
            try bob.setValue(.link(ann.link), forKey: "friend")
            try dave.setValue(.link(bob.link), forKey: "friend")
        }
    }

    override func tearDownWithError() throws {
        realm?.close()
        realm = nil
        try super.tearDownWithError()
    }

    private func names(_ query: String, _ args: [QueryArgument] = [], file: StaticString = #filePath, line: UInt = #line) -> [String] {
        names(in: realm, "Person", query, args, file: file, line: line)
    }

    private func check(_ query: String, _ expected: [String], _ args: [QueryArgument] = [], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(names(query, args, file: file, line: line), expected, query, file: file, line: line)
    }

    func testComparisonsAndNumbers() {
        check("age > 30", ["Ann", "Çelik", "Όμηρος", "Юрий"])
        check("age == 25", ["Bob", "dave"])
        check("age = 25 && active == false", ["Bob", "dave"])
        check("age > 29.5", ["Ann", "Çelik", "Όμηρος", "Юрий"])
        check("age == 25.0", ["Bob", "dave"])
        check("age >= 40 || age <= 25", ["Bob", "Çelik", "dave", "Όμηρος"])
        check("age <> 25 AND NOT age > 35", ["Ann", "Юрий"])
        check("!age == 25 && age < 35", ["Ann", "Юрий"])
        check("age BETWEEN {25, 31}", ["Ann", "Bob", "dave"])
        check("age BETWEEN {31, 25}", [])
        check("age BETWEEN {24.5, 25.5}", ["Bob", "dave"])
        check("age IN {25, 40}", ["Bob", "Çelik", "dave"])
        check("age == {25, 40}", ["Bob", "Çelik", "dave"])
        check("NOT age IN {25, 40}", ["Ann", "Όμηρος", "Юрий"])
        check("age == NONE {25, 40}", ["Ann", "Όμηρος", "Юрий"])
        check("age * 2 > 100", ["Όμηρος"])
        check("age + 5 == 30", ["Bob", "dave"])
        check("age / 0 == 1", [])
        check("TRUEPREDICATE", ["Ann", "Bob", "Çelik", "dave", "Όμηρος", "Юрий"])
        check("FALSEPREDICATE", [])
        check("age > $0", ["Όμηρος"], [.value(.int(40))])
        check("name == %@ OR name == %@", ["Bob", "dave"], [.value(.string("Bob")), .value(.string("dave"))])
        check("age IN $0", ["Bob", "Çelik", "dave"], [.list([.int(25), .int(40)])])
    }

    func testNullRules() {
        check("score == nil", ["Bob"])
        check("score != NULL", ["Ann", "Çelik", "dave", "Όμηρος", "Юрий"])
        check("score > 5", ["Ann", "dave", "Юрий"])
        check("score < 100", ["Ann", "Çelik", "dave", "Όμηρος", "Юрий"])
        check("score <= nil", ["Bob"])
        check("nick == ''", ["dave"])
        check("nick BEGINSWITH ''", ["Ann", "Çelik", "dave", "Όμηρος", "Юрий"])
        check("nick CONTAINS NULL", ["Ann", "Bob", "Çelik", "dave", "Όμηρος", "Юрий"])
        check("nick LIKE NULL", ["Bob"])
        check("nick LIKE '*'", ["Ann", "Çelik", "dave", "Όμηρος", "Юрий"])
        check("friend == nil", ["Ann", "Çelik", "Όμηρος", "Юрий"])
        check("friend.name == 'Ann'", ["Bob"])
        check("friend.friend.name == 'Ann'", ["dave"])
        check("friend.name == nil", ["Ann", "Çelik", "Όμηρος", "Юрий"])
    }

    func testStrings() {
        check("name BEGINSWITH 'd'", ["dave"])
        check("name BEGINSWITH[c] 'D'", ["dave"])
        check("name ENDSWITH 'b'", ["Bob"])
        check("name CONTAINS 'e'", ["Çelik", "dave"])
        check("name ==[c] 'ANN'", ["Ann"])
        check("name LIKE '?o?'", ["Bob"])
        check("name LIKE '*a*'", ["dave"])
        check("name LIKE[c] 'a*'", ["Ann"])
        check("name < 'B'", ["Ann"])
        check("name > 'a'", ["Çelik", "dave", "Όμηρος", "Юрий"])
        check("'Bob' == name", ["Bob"])
        check("'hello dave' CONTAINS name", ["dave"])
        check("name IN[c] {'ann', 'BOB'}", ["Ann", "Bob"])
        check(#"name == "dave" "#, ["dave"])
        check(#"name == 'O\'Brien' OR name == "Ann""#, ["Ann"])
        check("name.@size == 3", ["Ann", "Bob"])
    }

    func testUnicodeFolding() {
        // Greek and Cyrillic fold by case; diacritics fold with [d].
        check("name ==[c] 'όμηρος'", ["Όμηρος"])
        check("nick ==[c] 'ομηρος'", ["Όμηρος"])
        check("name ==[c] 'ομηρος'", [])
        check("nick ==[cd] 'ομηρος'", ["Όμηρος"])
        check("name ==[c] 'ЮРИЙ'", ["Юрий"])
        check("nick ==[c] 'ЮРИЙ'", ["Юрий"])
        check("name ==[c] 'celik'", [])
        check("name ==[cd] 'celik'", ["Çelik"])
        check("name ==[d] 'Celik'", ["Çelik"])
        check("name BEGINSWITH[cd] 'ομη'", ["Όμηρος"])
        check("name CONTAINS[c] 'РИ'", ["Юрий"])
    }

    func testCollectionsQuantifiersAndAggregates() {
        check("ANY tags == 'dev'", ["Ann", "dave", "Όμηρος"])
        check("tags == 'dev'", ["Ann", "dave", "Όμηρος"])
        check("'dev' IN tags", ["Ann", "dave", "Όμηρος"])
        check("ALL tags == 'dev'", ["Bob", "dave", "Юрий"])
        check("NONE tags == 'dev'", ["Bob", "Çelik", "Юрий"])
        check("tags == {'dev', 'admin'}", ["Ann"])
        check("ANY tags IN {'ops', 'intern'}", ["Çelik", "Όμηρος"])
        check("tags.@count == 0", ["Bob", "Юрий"])
        check("tags.@size > 1", ["Ann", "Όμηρος"])
        check("tags[FIRST] == 'intern'", ["Όμηρος"])
        check("tags[1] == 'admin'", ["Ann"])
        check("dogs.age > 6", ["Çelik"])
        check("dogs.@count > 0 AND dogs.age < 4", ["Ann", "dave"])
        check("dogs.@max.age == 8", ["Çelik"])
        check("dogs.@sum.age == 8", ["Ann", "Çelik"])
        check("dogs.@avg.weight > 20", ["Ann", "Çelik", "dave"])
        check("dogs.@min.weight == nil", ["Bob", "Όμηρος", "Юрий"])
        check("SUBQUERY(dogs, $d, $d.age > 2 AND $d.weight > 20).@count > 0", ["Ann", "Çelik", "dave"])
        check("dogs.age > 4 AND dogs.weight > 20", ["Ann", "Çelik"])
        check("SUBQUERY(dogs, $d, $d.age > 4 AND $d.weight > 20).@count > 0", ["Çelik"])
        check("ANY dogs.name == 'Rex'", ["Ann", "dave"])
        check("bio TEXT 'hiking'", ["Ann", "dave"])
        check("bio TEXT 'hiking -chess'", ["Ann"])
        check("bio TEXT 'cafe'", ["Ann"])
        check("bio TEXT 'ΟΔΥΣ*'", ["Όμηρος"])
        check("bio TEXT 'οδυσσειας'", ["Όμηρος"])
    }

    func testBacklinksAndOtherClasses() throws {
        let dogs = try realm.objects("Dog").filter("owners.@count > 1").elements().map { try $0["name"] }
        XCTAssertEqual(dogs, [.string("Rex")])
        let annsDogs = try realm.objects("Dog").filter("ANY owners.name == 'Ann'").elements().map { try $0["name"] }
        XCTAssertEqual(annsDogs, [.string("Rex"), .string("Fido")])
        let viaLinks = try realm.objects("Dog").filter("@links.Person.dogs.@count == 0").checkedCount()
        XCTAssertEqual(viaLinks, 0)
    }

    func testSortDistinctLimitOffset() {
        check("TRUEPREDICATE SORT(age ASC, name DESC)", ["dave", "Bob", "Ann", "Юрий", "Çelik", "Όμηρος"])
        check("TRUEPREDICATE SORT(score ASC)", ["Bob", "Όμηρος", "Çelik", "Юрий", "Ann", "dave"])
        check("TRUEPREDICATE SORT(age DESC)", ["Όμηρος", "Çelik", "Юрий", "Ann", "Bob", "dave"])
        check("TRUEPREDICATE DISTINCT(age)", ["Ann", "Bob", "Çelik", "Όμηρος", "Юрий"])
        check("TRUEPREDICATE DISTINCT(friend.age)", ["Bob", "dave"])
        check("TRUEPREDICATE SORT(age DESC) LIMIT(2)", ["Όμηρος", "Çelik"])
        check("TRUEPREDICATE LIMIT(3) SORT(age ASC)", ["Bob", "Ann", "Çelik"])
        check("age > 20 OFFSET(4)", ["Όμηρος", "Юрий"])
        check("age > 20 SORT(age ASC) OFFSET(1) LIMIT(2)", ["dave", "Ann"])
        check("TRUEPREDICATE SORT(tags.@count DESC, name ASC)", ["Ann", "Όμηρος", "dave", "Çelik", "Bob", "Юрий"])
        // Rows whose path crosses a null link sort last ascending, first descending.
        check("TRUEPREDICATE SORT(friend.name ASC)", ["Bob", "dave", "Ann", "Çelik", "Όμηρος", "Юрий"])
        check("TRUEPREDICATE SORT(friend.name DESC)", ["Ann", "Çelik", "Όμηρος", "Юрий", "dave", "Bob"])
    }

    func testResultsAreLazyLiveAndChainable() throws {
        let adults = try realm.objects("Person").filter("age > 30").sorted(byKeyPath: "age", ascending: false)
        XCTAssertEqual(try adults.checkedCount(), 4)
        let chained = adults.filter("name != 'Юрий'").distinct(by: ["active"])
        XCTAssertEqual(try chained.elements().map { try $0["name"] }, [.string("Όμηρος"), .string("Ann")])
        try realm.write {
            try realm.dynamicCreate("Person", values: [("name", .string("Zed")), ("age", .int(99))])
            // A write in progress is visible to Results on its thread.
            XCTAssertEqual(try adults.checkedCount(), 5)
            XCTAssertEqual(try adults[0]["name"], .string("Zed"))
            try realm.cancelWrite()
        }
        XCTAssertEqual(try adults.checkedCount(), 4)
        // A later write starts from scratch: nothing of the cancelled one shows.
        try realm.beginWrite()
        try realm.dynamicCreate("Person", values: [("name", .string("Young")), ("age", .int(10))])
        XCTAssertEqual(try adults.checkedCount(), 4)
        try realm.cancelWrite()
        // Iteration walks the matches as they were when it began.
        var seen = 0
        for _ in adults { seen += 1 }
        XCTAssertEqual(seen, 4)
        XCTAssertEqual(try adults.min(ofProperty: "age"), .int(31))
        XCTAssertEqual(try adults.max(ofProperty: "score"), .double(8.5))
        XCTAssertEqual(try realm.objects("Person").sum(ofProperty: "age"), .int(214))
        XCTAssertEqual(try realm.objects("Person").average(ofProperty: "score"), .double((8.5 + 3 + 9.75 + 1 + 5.5) / 5))
        XCTAssertNil(try realm.objects("Person").filter("age > 100").min(ofProperty: "age"))
        assertThrows(.wrongType, containing: "string has no min") {
            _ = try self.realm.objects("Person").filter("age > 100").min(ofProperty: "name")
        }
        let frozen = try adults.checkedFreeze()
        try realm.write { try realm.delete(try realm.objects("Person").filter("name == 'Ann'")[0]) }
        XCTAssertEqual(try adults.checkedCount(), 3)
        XCTAssertEqual(try frozen.checkedCount(), 4)
        XCTAssertTrue(frozen.isFrozen)
        frozen.sourceRealm.close()
    }

    func testResultsOverListsAndSets() throws {
        let ann = try realm.objects("Person").filter("name == 'Ann'")[0]
        let dogs = try ann.dynamicList("dogs").asResults().filter("age > 4")
        XCTAssertEqual(try dogs.checkedCount(), 1)
        let tags = try ann.dynamicList("tags").asResults().filter("self BEGINSWITH 'a'")
        XCTAssertEqual(try tags.elements(), [.string("admin")])
        XCTAssertEqual(try ann.dynamicList("tags").asResults().sorted(byKeyPath: "self").elements(), [.string("admin"), .string("dev")])
    }

    /// explain() prints the plan step by step in the order the steps ran, counting lookups and
    /// candidates in the singular when there is one.
    func testExplainPrintsThePlanStepByStep() throws {
        let max = try realm.objects("Dog").filter("name == 'Max'")
        XCTAssertEqual(try max.checkedCount(), 1)
        XCTAssertEqual(try max.explain(), "primary-key index on Dog.name (1 lookup, 1 candidate)")
        let sorted = try realm.objects("Person").filter("age > 0 SORT(name DESC) LIMIT(2)")
        XCTAssertEqual(try sorted.checkedCount(), 2)
        let plan = try sorted.explain()
        let steps = plan.components(separatedBy: ", then ")
        XCTAssertEqual(steps.count, 3, plan)
        XCTAssertTrue(steps[0].hasSuffix("scan of 6 Person objects"), plan)
        XCTAssertEqual(steps[1], "sort by name DESC keeping the first 2", plan)
        XCTAssertEqual(steps[2], "limit 2", plan)
    }

    func testIndexesAndLongQueries() throws {
        let byAge = try realm.objects("Person").filter("age == 25 AND name BEGINSWITH 'd'")
        XCTAssertEqual(try byAge.checkedCount(), 1)
        let plan = try byAge.explain()
        XCTAssertTrue(plan.contains("secondary index on Person.age"), plan)
        XCTAssertTrue(try realm.objects("Dog").filter("name == 'Max'").explain().contains("primary-key index"))
        XCTAssertTrue(try realm.objects("Person").filter("score > 1").explain().contains("scan of 6"))
        // count() without collecting the matches: an index that answers the whole query, a
        // column scan; an index that does not answer it all is checked row by row.
        for (cls, query) in [("Person", "age == 25"), ("Dog", "name == 'Max'"), ("Person", "age IN {25, 31, 40}"),
                             ("Person", "age == 25 AND name BEGINSWITH 'd'"), ("Person", "score > 1"), ("Person", "age > 30")] {
            let counted = try realm.objects(cls).filter(query).checkedCount()
            XCTAssertEqual(counted, try realm.objects(cls).filter(query).objectKeys().count, "\(cls): \(query)")
        }
        // 10,000 OR terms, and IN with 40,000 values through a hash set.
        let chain = (0..<10_000).map { "age == \($0)" }.joined(separator: " OR ")
        check(chain, ["Ann", "Bob", "Çelik", "dave", "Όμηρος", "Юрий"])
        let many = (0..<40_000).map { Value.int(Int64($0 * 5)) }
        check("age IN $0", ["Bob", "Çelik", "dave", "Όμηρος"], [.list(many)])
        check("score IN $0", ["Çelik", "Όμηρος"], [.list(many.map { if case .int(let i) = $0 { return .double(Double(i) / 5) } else { return $0 } })])
    }

    func testErrors() {
        func fails(_ query: String, _ code: CoveError.Code, _ text: String, _ args: [QueryArgument] = [], file: StaticString = #filePath, line: UInt = #line) {
            assertThrows(code, containing: text, file: file, line: line) {
                _ = try self.realm.objects("Person").filter(query, arguments: args).checkedCount()
            }
        }
        fails("nope > 1", .invalidArgument, "no property 'nope'")
        fails("age > 'x'", .invalidArgument, "cannot compare 'age' (int) with string")
        fails("age == '25'", .invalidArgument, "cannot compare")
        fails("active < true", .invalidArgument, "does not order bools")
        fails("ANY age > 3", .invalidArgument, "needs a collection")
        fails("5 > 3", .invalidArgument, "two constants")
        fails("age BETWEEN {1, 2, 3}", .querySyntax, "exactly two values")
        fails("age ==[c] 5", .invalidArgument, "[c]/[d] apply to strings")
        fails("name TEXT 'x'", .invalidArgument, "no full-text index")
        fails("age > $1", .invalidArgument, "out of range", [.value(.int(1))])
        fails("tags.@sum > 1", .invalidArgument, "@sum needs numbers")
        fails("age.@count > 1", .invalidArgument, "@count")
        fails("age >", .querySyntax, "expected a value at position 6")
        fails("age > 3 SORT(", .querySyntax, "expected a key path")
        assertThrows(.invalidArgument, containing: "cannot sort on 'tags'") {
            _ = try self.realm.objects("Person").sorted(byKeyPath: "tags").checkedCount()
        }
        assertThrows(.notFound, containing: "no class 'Nope'") { _ = try self.realm.objects("Nope") }
    }

    /// Random and mutated query text, run through the parser, the binder and the evaluator on
    /// the data set: each query returns results or throws a CoveError naming a syntax or
    /// argument problem; nothing traps or hangs.
    func testFuzzedQueriesFailCleanly() throws {
        let seeds = ["age > 30", "name BEGINSWITH[c] 'd'", "ANY tags == 'dev'", "dogs.@avg.weight > 20",
                     "SUBQUERY(dogs, $d, $d.age > 2).@count > 0", "score == nil OR friend.name == 'Ann'",
                     "TRUEPREDICATE SORT(age DESC) LIMIT(2)", "age IN {25, 40}", "tags[FIRST] == 'x'",
                     "age BETWEEN {1, 40}", "name LIKE '*a?'", "@links.@count > 0", "age * 2 + 1 > 3"]
        let pieces = ["(", ")", "{", "}", "'", "\"", " AND ", " OR ", "!", "==", "<", ">=", "[c]", "[cd]", "@count",
                      "@sum", ".", ",", "$0", "%@", "SORT(", "LIMIT(", "nil", "1.5", "-", "*", "ANY ", "ALL ", "NONE ",
                      "IN", "BETWEEN", "SUBQUERY(", "$d", "age", "dogs", "tags", "name", "friend", "\u{0}", "é", "0x1F"]
        var state: UInt64 = 0xC0FFEE
        func random(_ n: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(n))
        }
        let people = try realm.objects("Person")
        var parsed = 0
        for _ in 0..<3000 {
            var text = Array(seeds[random(seeds.count)])
            for _ in 0..<(1 + random(4)) {
                let at = random(text.count + 1)
                switch random(3) {
                case 0: text.insert(contentsOf: Array(pieces[random(pieces.count)]), at: at)
                case 1: if at < text.count { text.remove(at: at) }
                default: if at < text.count { text[at] = Character(Unicode.Scalar(UInt8(32 + random(95)))) }
                }
            }
            let query = String(text)
            let outcome = Result { () throws(CoveError) -> Int in try people.filter(query, arguments: [.value(.int(3))]).checkedCount() }
            switch outcome {
            case .success: parsed += 1
            case .failure(let error):
                XCTAssertTrue([.querySyntax, .invalidArgument].contains(error.code), "\(query): \(error)")
            }
        }
        XCTAssertGreaterThan(parsed, 100, "some mutations still make valid queries")
    }

    /// The column scan (plain properties against constants, over packed columns) and the
    /// general evaluator agree on random predicates over random data, nulls included.
    func testColumnScanAgreesWithTheEvaluator() throws {
        let schema = try Schema(jsonText: #"{"Item": {"properties": {"i": "int?", "d": "double?", "s": "string?", "b": "bool", "f": "float", "t": "date?", "tags": "int[]"}}}"#)
        let items = try Realm(configuration: .init(path: "\(folder)/items.cove", durability: .noSync, schema: schema, schemaVersion: 1))
        defer { items.close() }
        var state: UInt64 = 77
        func random(_ n: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(n))
        }
        try items.write {
            for _ in 0..<3000 {
                try items.dynamicCreate("Item", values: [
                    ("i", random(8) == 0 ? .null : .int(Int64(random(2000)) - 1000)),
                    ("d", random(8) == 0 ? .null : .double(Double(random(2000)) / 7 - 100)),
                    // Strings past eight bytes that share their first eight, and zero bytes,
                    // for the top-k's comparison by prefix.
                    ("s", random(8) == 0 ? .null : .string(["", "a", "ab", "abc", "b", "ba", "é", "z", "a\u{0}", "abcdefgh",
                                                            "abcdefgh\u{0}", "abcdefgha", "abcdefghij"][random(13)])),
                    ("b", .bool(random(2) == 0)), ("f", .float(Float(random(100)) / 4)),
                    ("t", random(8) == 0 ? .null : .timestamp(Timestamp(seconds: Int64(random(100)) - 50))),
                ])
            }
        }
        let atoms = ["i > %d", "i <= %d", "i == %d", "i != %d", "i == nil", "i != nil", "d < %d", "d >= %d.5", "d == nil",
                     "s == 'ab'", "s < 'b'", "s >= 'ab'", "s BEGINSWITH 'a'", "s CONTAINS 'b'", "s LIKE '?b*'", "s == nil",
                     "s != 'a'", "b == true", "b != false", "f > %d", "t < T%d:0", "t == nil", "i BETWEEN {-%d, %d}",
                     "i IN {1, 2, 3, %d}", "d IN {0.5, %d}", "%d < i"]
        var scanned = 0
        for _ in 0..<200 {
            var terms: [String] = []
            for _ in 0..<(1 + random(3)) {
                let number = random(1000) - 500
                var atom = atoms[random(atoms.count)]
                while let r = atom.range(of: "%d") { atom.replaceSubrange(r, with: String(abs(number) % 60)) }
                terms.append(random(4) == 0 ? "NOT \(atom)" : atom)
            }
            var query = terms.joined(separator: random(2) == 0 ? " AND " : " OR ")
            if random(3) == 0 {
                // Nested groups combine masks at more than one depth.
                var atom = atoms[random(6)]
                while let r = atom.range(of: "%d") { atom.replaceSubrange(r, with: String(random(50))) }
                query = "(\(query)) \(random(2) == 0 ? "AND" : "OR") NOT (\(atom) OR b == true)"
            }
            let fast = try items.objects("Item").filter(query)
            // `tags.@count >= 0` holds for every object but cannot be scanned by column, so
            // the same query goes through the general evaluator.
            let slow = try items.objects("Item").filter("(\(query)) AND tags.@count >= 0")
            let expected = try slow.objectKeys()
            // A count on fresh results runs over the columns without collecting the keys.
            XCTAssertEqual(try items.objects("Item").filter(query).checkedCount(), expected.count, query)
            XCTAssertEqual(try fast.objectKeys(), expected, query)
            if try fast.explain().contains("column scan") { scanned += 1 }
            XCTAssertFalse(try slow.explain().contains("column scan"))
        }
        XCTAssertEqual(scanned, 200)
        // A top-k by a string (kept from the column's bytes in one pass) equals the full sort's
        // first k, nulls and ties included, both ways.
        for k in [1, 7, 100] {
            for direction in ["ASC", "DESC"] {
                let top = try items.objects("Item").filter("TRUEPREDICATE SORT(s \(direction)) LIMIT(\(k))")
                let full = try items.objects("Item").filter("TRUEPREDICATE SORT(s \(direction))")
                XCTAssertEqual(try top.objectKeys(), Array(try full.objectKeys().prefix(k)), "k \(k) \(direction)")
                XCTAssertTrue(try top.explain().contains("keeping the first \(k)"))
            }
        }
        // With a predicate over the columns, the first k are kept while the table is scanned;
        // they equal the general evaluator's, and the descriptors after the limit still apply.
        for predicate in ["TRUEPREDICATE", "i > 10", "s BEGINSWITH 'ab' OR i == nil", "NOT (s == nil)", "s == nil"] {
            for k in [1, 7, 100] {
                for direction in ["ASC", "DESC"] {
                    let order = "SORT(s \(direction)) LIMIT(\(k))"
                    let top = try items.objects("Item").filter("\(predicate) \(order)")
                    let general = try items.objects("Item").filter("(\(predicate)) AND tags.@count >= 0 \(order)")
                    let full = try items.objects("Item").filter("\(predicate) SORT(s \(direction))")
                    let expected = Array(try full.objectKeys().prefix(k))
                    XCTAssertEqual(try top.objectKeys(), expected, "\(predicate) \(order)")
                    XCTAssertEqual(try general.objectKeys(), expected, "\(predicate) \(order)")
                    let plan = try top.explain()
                    XCTAssertTrue(plan.contains("column scan of 3000 Item objects keeping the first \(k) by s \(direction)"), plan)
                    let resorted = try items.objects("Item").filter("\(predicate) \(order) SORT(i DESC)")
                    let resortedGeneral = try items.objects("Item").filter("(\(predicate)) AND tags.@count >= 0 \(order) SORT(i DESC)")
                    XCTAssertEqual(try resorted.objectKeys(), try resortedGeneral.objectKeys(), "\(predicate) \(order) SORT(i DESC)")
                }
            }
        }
    }

    func testJSONExport() throws {
        let json = try realm.objects("Dog").filter("age < 6").sorted(byKeyPath: "age").jsonText()
        XCTAssertEqual(json, #"[{"name":"Rex","age":3,"weight":30.0},{"name":"Fido","age":5,"weight":12.0}]"#)
    }
}
