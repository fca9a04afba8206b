// The subscription query subset: what parses and how it binds, golden SQL for each operator, and
// refusals, each with the message that names what is wrong.
import XCTest
import CoveSyncCore

final class SubscriptionQueryTests: XCTestCase {
    private let schema = try! SubscriptionSchema(notation: [
        "Person": ["name": "string", "age": "int", "height": "double?", "city": "string?", "active": "bool", "born": "date?",
                   "tags": "string[]", "labels": "string<>", "notes": "string{}", "best": "Dog?", "extra": "mixed",
                   "tag": "objectId?", "uid": "uuid", "photo": "data?", "price": "decimal128?", "fans": "@links(Person.best)"],
        "Dog": ["name": "string", "owners": "@links(Person.best)"],
    ])

    private func sql(_ query: String, _ arguments: [SubscriptionArgument] = [], on className: String = "Person",
                     file: StaticString = #filePath, line: UInt = #line) -> (String, [SyncValue])? {
        do {
            let q = try SubscriptionQuery(className: className, query: query, schema: schema, arguments: arguments)
            let s = try q.sql()
            return (s.condition, s.parameters)
        } catch {
            XCTFail("\(query.prefix(100)): \(error)", file: file, line: line)
            return nil
        }
    }

    private func assertSQL(_ query: String, _ expected: String, _ parameters: [SyncValue] = [], _ arguments: [SubscriptionArgument] = [],
                           file: StaticString = #filePath, line: UInt = #line) {
        guard let (condition, values) = sql(query, arguments, file: file, line: line) else { return }
        XCTAssertEqual(condition, expected, String(query.prefix(100)), file: file, line: line)
        XCTAssertEqual(values, parameters, String(query.prefix(100)), file: file, line: line)
    }

    private func assertRefused(_ query: String, _ code: SyncError.Code, _ message: String, _ arguments: [SubscriptionArgument] = [],
                               file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try SubscriptionQuery(className: "Person", query: query, schema: schema, arguments: arguments),
                             file: file, line: line) { error in
            guard let error = error as? SyncError else { return XCTFail("\(error)", file: file, line: line) }
            XCTAssertEqual(error.code, code, error.message, file: file, line: line)
            XCTAssertTrue(error.message.contains(message), "\(error.message) lacks \(message)", file: file, line: line)
        }
    }

    // MARK: Golden SQL

    func testNamedArguments() throws {
        let named: [String: SubscriptionArgument] = ["user": .value(.string("ann")), "cities": .list([.string("Oslo"), .null])]
        let q = try SubscriptionQuery(className: "Person", query: "name == $user AND city IN $cities AND age > $0", schema: schema,
                                      arguments: [.value(.int(3))], namedArguments: named)
        let s = try q.sql()
        XCTAssertEqual(s.condition, #"("p_name" = $1 AND ("p_city" IN ($2) OR "p_city" IS NULL) AND "p_age" > $3)"#)
        XCTAssertEqual(s.parameters, [.string("ann"), .string("Oslo"), .int(3)])
        XCTAssertThrowsError(try SubscriptionQuery(className: "Person", query: "age == $user", schema: schema, namedArguments: named)) {
            XCTAssertEqual(($0 as? SyncError)?.code, .queryInvalid, "\($0)")
        }
        XCTAssertThrowsError(try SubscriptionQuery(className: "Person", query: "name == $cities", schema: schema, namedArguments: named)) {
            XCTAssertTrue(($0 as? SyncError)?.message.contains("argument $cities is a list") == true, "\($0)")
        }
        // Without named arguments, and for a name not given, `$name` is the syntax error it was.
        assertRefused("name == $user", .querySyntax, "invalid argument '$user'")
        XCTAssertThrowsError(try SubscriptionQuery(className: "Person", query: "name == $who", schema: schema, namedArguments: named)) {
            XCTAssertEqual(($0 as? SyncError)?.code, .querySyntax, "\($0)")
        }
    }

    func testComparisons() {
        assertSQL("age == 3", #""p_age" = $1"#, [.int(3)])
        assertSQL("age = 3", #""p_age" = $1"#, [.int(3)])
        assertSQL("age != 3", #""p_age" IS DISTINCT FROM $1"#, [.int(3)])
        assertSQL("age <> 3", #""p_age" IS DISTINCT FROM $1"#, [.int(3)])
        assertSQL("age < 3 && age <= 4 AND age > -5 and age >= 0x10", #"("p_age" < $1 AND "p_age" <= $2 AND "p_age" > $3 AND "p_age" >= $4)"#,
                  [.int(3), .int(4), .int(-5), .int(16)])
        assertSQL("age =< 3 || age => 4", #"("p_age" <= $1 OR "p_age" >= $2)"#, [.int(3), .int(4)])
        assertSQL("30 < age", #""p_age" > $1"#, [.int(30)])
        assertSQL("height > 1.5e0", #""p_height" > $1"#, [.double(1.5)])
        assertSQL("age > 29.5", #""p_age" > $1"#, [.double(29.5)])
        assertSQL("name < 'b'", #""p_name" COLLATE "C" < $1"#, [.string("b")])
        assertSQL("active == true", #""p_active" = $1"#, [.bool(true)])
        assertSQL("born >= T1700000000:5", #""p_born" >= $1"#, [.date(try! SyncDate(seconds: 1_700_000_000, nanoseconds: 5))])
        assertSQL("tag == oid(5f1b2c3d4e5f60718293a4b5)", #""p_tag" = $1"#, [.objectId(try! SyncObjectId(hex: "5f1b2c3d4e5f60718293a4b5"))])
        assertSQL("uid != uuid(12345678-1234-5678-1234-567812345678)", #""p_uid" IS DISTINCT FROM $1"#,
                  [.uuid(try! SyncUUID(text: "12345678-1234-5678-1234-567812345678"))])
        assertSQL(#"name == "O\'Brien\n""#, #""p_name" = $1"#, [.string("O'Brien\n")])
    }

    func testNullComparisons() {
        assertSQL("city == null", #""p_city" IS NULL"#)
        assertSQL("city != NIL", #""p_city" IS NOT NULL"#)
        assertSQL("null == best", #""p_best" IS NULL"#)
        assertSQL("best != null", #""p_best" IS NOT NULL"#)
        assertSQL("city == $0", #""p_city" IS NULL"#, [], [.value(.null)])
    }

    func testStringOperatorsBecomeEscapedPatterns() {
        assertSQL("name BEGINSWITH 'a%_\\\\'", #""p_name" LIKE $1"#, [.string(#"a\%\_\\%"#)])
        assertSQL("name ENDSWITH 'x'", #""p_name" LIKE $1"#, [.string("%x")])
        assertSQL("name CONTAINS ''", #""p_name" LIKE $1"#, [.string("%%")])
        assertSQL("name like 'A?n*%'", #""p_name" LIKE $1"#, [.string(#"A_n%\%"#)])
        assertSQL("name BEGINSWITH[c] 'ann'", #""p_name" ILIKE $1"#, [.string("ann%")])
        assertSQL("name ==[c] 'Ann'", #"lower("p_name") = lower($1)"#, [.string("Ann")])
        assertSQL("city !=[c] 'Oslo'", #"lower("p_city") IS DISTINCT FROM lower($1)"#, [.string("Oslo")])
        assertSQL("city IN[c] {'Oslo', 'rome'}", #"lower("p_city") IN (lower($1), lower($2))"#, [.string("Oslo"), .string("rome")])
    }

    func testInLists() {
        assertSQL("city IN {'Oslo', $0}", #""p_city" IN ($1, $2)"#, [.string("Oslo"), .string("Rome")], [.value(.string("Rome"))])
        assertSQL("city IN {'Oslo', null}", #"("p_city" IN ($1) OR "p_city" IS NULL)"#, [.string("Oslo")])
        assertSQL("city IN {null}", #""p_city" IS NULL"#)
        assertSQL("city IN {}", "FALSE")
        assertSQL("age in $1", #""p_age" IN ($1, $2, $3)"#, [.int(1), .int(2), .int(3)], [.value(.null), .list([.int(1), .int(2), .int(3)])])
        assertSQL("age IN $0", "FALSE", [], [.list([])])
    }

    func testLogicAndNullsUnderNot() {
        assertSQL("TRUEPREDICATE", "TRUE")
        assertSQL("falsepredicate", "FALSE")
        assertSQL("age == 0 || (age == 1 && !(name == 'x' OR NOT active == false))",
                  #"("p_age" = $1 OR ("p_age" = $2 AND NOT ("p_name" = $3 OR NOT ("p_active" = $4))))"#,
                  [.int(0), .int(1), .string("x"), .bool(false)])
        // Optional properties under NOT: null makes the comparison false, so NOT makes it true.
        assertSQL("NOT height > 2", #"NOT (COALESCE("p_height" > $1, FALSE))"#, [.int(2)])
        assertSQL("NOT (city == 'Oslo' AND age > 1)", #"NOT (COALESCE("p_city" = $1, FALSE) AND "p_age" > $2)"#, [.string("Oslo"), .int(1)])
        assertSQL("!(city IN {'a'})", #"NOT (COALESCE("p_city" IN ($1), FALSE))"#, [.string("a")])
        // Comparisons that are never null need nothing.
        assertSQL("NOT city != 'Oslo'", #"NOT ("p_city" IS DISTINCT FROM $1)"#, [.string("Oslo")])
        assertSQL("NOT city == null", #"NOT ("p_city" IS NULL)"#)
    }

    func testNamingAndStatement() throws {
        let q = try SubscriptionQuery(className: "Dog", query: "name == $0", schema: schema, arguments: [.value(.string("Rex"))])
        let s = try q.sql(naming: SQLNaming(tablePrefix: "t\"", columnPrefix: "c_"))
        XCTAssertEqual(s.select, #"SELECT * FROM "t""Dog" WHERE "c_name" = $1"#)
        XCTAssertEqual(try q.sql().select, #"SELECT * FROM "c_Dog" WHERE "p_name" = $1"#)
        let long = String(repeating: "a", count: 62)
        let longSchema = SubscriptionSchema([long: [long: SyncPropertyType(.int)]])
        let longQuery = try SubscriptionQuery(className: long, query: "\(long) == 1", schema: longSchema)
        XCTAssertThrowsError(try longQuery.sql()) { error in
            XCTAssertTrue("\(error)".contains("longer than the 63 bytes"), "\(error)")
        }
    }

    func testTheDocumentedExample() throws {
        let schema = try SubscriptionSchema(notation: ["Dog": ["name": "string", "age": "int", "owner": "Person?"]])
        let query = try SubscriptionQuery(className: "Dog", query: "age > $0 AND name BEGINSWITH[c] $1",
                                          schema: schema, arguments: [.value(.int(3)), .value(.string("r"))])
        let sql = try query.sql()
        XCTAssertEqual(sql.select, #"SELECT * FROM "c_Dog" WHERE ("p_age" > $1 AND "p_name" ILIKE $2)"#)
        XCTAssertEqual(sql.parameters, [.int(3), .string("r%")])
    }

    func testParametersNumberedAfterAnOffset() throws {
        let q = try SubscriptionQuery(className: "Person", query: "age > $0 OR city IN {'a', 'b'}", schema: schema, arguments: [.value(.int(3))])
        let s = try q.sql(parameterOffset: 2)
        XCTAssertEqual(s.condition, #"("p_age" > $3 OR "p_city" IN ($4, $5))"#)
        XCTAssertEqual(s.parameters, [.int(3), .string("a"), .string("b")])
        XCTAssertThrowsError(try q.sql(parameterOffset: SubscriptionQuery.maxParameters - 1)) { error in
            XCTAssertTrue("\(error)".contains("needs 65537 SQL parameters"), "\(error)")
        }
    }

    func testValuesNeverReachTheText() throws {
        let hostile = "'; DROP TABLE \"c_Person\"; --"
        let q = try SubscriptionQuery(className: "Person", query: "name == $0 OR name BEGINSWITH $0", schema: schema, arguments: [.value(.string(hostile))])
        let s = try q.sql()
        XCTAssertFalse(s.condition.contains("DROP"))
        XCTAssertEqual(s.parameters, [.string(hostile), .string(#"'; DROP TABLE "c\_Person"; --%"#)])
    }

    func testLongChainsAndDeepNesting() {
        let chain = (0..<3000).map { "age == \($0)" }.joined(separator: " OR ")
        XCTAssertEqual(sql(chain)?.1.count, 3000)
        assertRefused(chain + " OR " + chain, .queryInvalid, "at most 65536 are allowed")
        let deep = String(repeating: "(", count: 31) + "age == 1" + String(repeating: ")", count: 31)
        XCTAssertNotNil(sql(deep))
        assertRefused(String(repeating: "(", count: 40) + "age == 1" + String(repeating: ")", count: 40), .querySyntax, "nesting deeper than 32")
        assertRefused(String(repeating: "NOT ", count: 40) + "age == 1", .querySyntax, "nesting deeper than 32")
    }

    func testSchemaNotation() throws {
        for text in ["int", "string?", "Dog?", "double[]", "int?[]", "string<>", "Dog{}", "mixed", "@links(Person.best)", "decimal128?"] {
            XCTAssertEqual(try SyncPropertyType(notation: text).description, text)
        }
        XCTAssertEqual(try SyncPropertyType(notation: "Dog"), SyncPropertyType(.link("Dog"), optional: true))
        XCTAssertEqual(try SyncPropertyType(notation: "int?{}"), SyncPropertyType(.int, optional: true, collection: .map))
        for bad in ["", "int??", "[]", "in t", "@links(Person)", "@links(Person.best", "Dög"] {
            XCTAssertThrowsError(try SyncPropertyType(notation: bad), bad)
        }
        XCTAssertThrowsError(try SubscriptionSchema(notation: ["Dog": ["name": "strin g"]])) { error in
            XCTAssertTrue("\(error)".contains("property 'name' of class 'Dog'"), "\(error)")
        }
    }

    // MARK: Refusals

    func testWhatSubscriptionsDoNotAllow() {
        assertRefused("age > 1 SORT(age ASC)", .queryNotAllowed, "SORT(…) is not allowed in a subscription")
        assertRefused("TRUEPREDICATE LIMIT(5)", .queryNotAllowed, "LIMIT(…) is not allowed")
        assertRefused("TRUEPREDICATE distinct(name)", .queryNotAllowed, "DISTINCT(…) is not allowed")
        assertRefused("best.name == 'Rex'", .queryNotAllowed, "the key path 'best.name' is not allowed in a subscription")
        assertRefused("tags.@count > 2", .queryNotAllowed, "the key path 'tags.@count' is not allowed")
        assertRefused("tags@count > 2", .queryNotAllowed, "the aggregate @count is not allowed")
        assertRefused("tags[0] == 'a'", .queryNotAllowed, "a subscript ('[') is not allowed")
        assertRefused("tags == 'a'", .queryNotAllowed, "querying the list property 'tags' of class 'Person' is not allowed")
        assertRefused("labels == 'a'", .queryNotAllowed, "querying the set property")
        assertRefused("notes == 'a'", .queryNotAllowed, "querying the map property")
        assertRefused("extra == 1", .queryNotAllowed, "querying the mixed property")
        assertRefused("ANY tags == 'a'", .queryNotAllowed, "the quantifier ANY is not allowed")
        assertRefused("all tags == 'a'", .queryNotAllowed, "the quantifier ALL")
        assertRefused("SUBQUERY(tags, $x, $x == 'a').@count > 0", .queryNotAllowed, "SUBQUERY is not allowed")
        assertRefused("age BETWEEN {1, 2}", .queryNotAllowed, "BETWEEN is not allowed")
        assertRefused("name TEXT 'a'", .queryNotAllowed, "full-text search (TEXT) is not allowed")
        assertRefused("age + 1 > 2", .queryNotAllowed, "arithmetic ('+') is not allowed")
        assertRefused("age * 2 > 2", .queryNotAllowed, "arithmetic ('*') is not allowed")
        assertRefused("name ==[d] 'a'", .queryNotAllowed, "ignoring diacritics ([d]) is not allowed")
        assertRefused("name ==[cd] 'a'", .queryNotAllowed, "ignoring diacritics ([d]) is not allowed")
        assertRefused("age == %@", .queryNotAllowed, "'%' arguments")
        assertRefused("$K0 == 1", .queryNotAllowed, "a property name given as an argument")
        assertRefused("age == height", .queryNotAllowed, "comparing two properties is not allowed")
        assertRefused("@links.Person.best.@count > 0", .queryNotAllowed, "'@links' is not allowed")
    }

    func testSchemaAndTypeMismatches() {
        assertRefused("agee == 1", .queryInvalid, "class 'Person' has no property 'agee' (at position 1)")
        assertRefused("age == 'x'", .queryInvalid, "property 'age' of class 'Person' is int, compared with string 'x'")
        assertRefused("name == 3", .queryInvalid, "property 'name' of class 'Person' is string, compared with int 3")
        assertRefused("active > false", .queryInvalid, "'>' does not apply to the bool property 'active'")
        assertRefused("age BEGINSWITH 'a'", .queryInvalid, "BEGINSWITH needs a string property; property 'age' of class 'Person' is int")
        assertRefused("age ==[c] 3", .queryInvalid, "[c] applies to")
        assertRefused("name >[c] 'a'", .queryInvalid, "[c] applies to")
        assertRefused("best == 'Rex'", .queryInvalid, "a link compares only with null")
        assertRefused("best < null", .queryInvalid, "'<' does not apply to the Dog? property 'best'")
        assertRefused("height < null", .queryInvalid, "null compares only with ==, != and IN")
        assertRefused("'a' BEGINSWITH name", .queryInvalid, "BEGINSWITH needs the property on its left")
        assertRefused("1 == 1", .queryInvalid, "a comparison needs a property of class 'Person' on one side")
        assertRefused("age == $1", .queryInvalid, "argument $1 is missing: 1 argument was given", [.value(.int(1))])
        assertRefused("age == $0", .queryInvalid, "argument $0 is a list; only IN takes one", [.list([.int(1)])])
        assertRefused("age IN $0", .queryInvalid, "IN $0 needs a list argument", [.value(.int(1))])
        assertRefused("age IN 3", .queryInvalid, "IN needs a list")
        assertRefused("age == {1}", .queryInvalid, "a list {…} is only allowed after IN")
        assertRefused("age IN {1, 'a'}", .queryInvalid, "compared with string 'a'")
        assertRefused("age IN {name}", .queryInvalid, "a list holds values, not the property 'name'")
        assertRefused("fans == null", .queryNotAllowed, "querying the backlinks property")
        XCTAssertThrowsError(try SubscriptionQuery(className: "Cat", query: "TRUEPREDICATE", schema: schema)) { error in
            XCTAssertEqual((error as? SyncError)?.code, .queryInvalid)
            XCTAssertTrue("\(error)".contains("the schema has no such class"))
        }
    }

    func testSyntaxErrors() {
        assertRefused("", .querySyntax, "empty query: expected a predicate")
        assertRefused("age ==", .querySyntax, "expected a property, a value or an argument at position 7: found the end of the query")
        assertRefused("age 3", .querySyntax, "expected a comparison operator at position 5")
        assertRefused("(age == 3", .querySyntax, "expected ')'")
        assertRefused("age == 3)", .querySyntax, "unbalanced ')'")
        assertRefused("age == 3 name", .querySyntax, "expected '&&', '||' or the end of the query")
        assertRefused("name == 'abc", .querySyntax, "unterminated string at position 9")
        assertRefused("name == 'a\\q'", .querySyntax, "invalid escape in a string")
        assertRefused("age == 99999999999999999999", .querySyntax, "integer '99999999999999999999' is out of range")
        assertRefused("age == 12abc", .querySyntax, "invalid number '12abc'")
        assertRefused("born == 2020-01-01@00:00:00", .querySyntax, "dates in a subscription are written T<seconds>:<nanoseconds>")
        assertRefused("born == T1:-5", .querySyntax, "different signs")
        assertRefused("tag == oid(123)", .querySyntax, "invalid ObjectId")
        assertRefused("age == 1 & age == 2", .querySyntax, "invalid character '&'")
        assertRefused("âge == 1", .querySyntax, "names are ASCII")
        assertRefused("age == 1 ||", .querySyntax, "found the end of the query")
        assertRefused("In == 1", .queryInvalid, "has no property 'In'")
        // Keywords in a case the language does not take are names.
        assertRefused("age IN {1} AND True == 1", .queryInvalid, "has no property 'True'")
    }

    func testRandomTextNeverCrashes() {
        // Valid terms joined at random, then often cut, spliced into or corrupted.
        var random = SeededRandom(seed: 31)
        let terms = ["age == 1", "name BEGINSWITH[c] 'a'", "city IN {'a', null, $0}", "NOT active == true", "height > -2.5",
                     "born < T1:2", "age IN $1", "(age == 1 || age == 2)", "TRUEPREDICATE", "uid == $0"]
        let pieces = ["age", " ", "==", "(", ")", "{", "}", ",", "'", "\"", "$0", "$9", "-", ".", "@count", "[c]", "[", "T1:", "oid(",
                      "null", "é", "SORT(age ASC)", "\\", "&", "0x", "1e", "NOT"]
        var accepted = 0
        for _ in 0..<3000 {
            var text = (0..<random.int(1...4)).map { _ in random.pick(terms) }.joined(separator: random.pick([" && ", " || ", " AND "]))
            if random.chance(70) {
                var scalars = Array(text.unicodeScalars)
                let at = random.int(0...scalars.count)
                if random.chance(50) {
                    scalars.insert(contentsOf: random.pick(pieces).unicodeScalars, at: at)
                } else {
                    scalars.removeSubrange(at..<min(scalars.count, at + random.int(1...5)))
                }
                text = String(String.UnicodeScalarView(scalars))
            }
            if let q = try? SubscriptionQuery(className: "Person", query: text, schema: schema, arguments: [.value(.int(1)), .list([.int(2)])]) {
                accepted += 1
                XCTAssertNoThrow(try q.sql())
            }
        }
        XCTAssertGreaterThan(accepted, 100)
    }
}
