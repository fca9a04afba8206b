// The RQL lexer and parser against docs/query-language.md: every literal, the keyword rules, precedence, key
// paths, descriptors, SUBQUERY, arguments, error messages with positions, long chains, and a
// seeded fuzz that must only ever parse or throw a query error.
import XCTest
import Cove

final class QueryParserTests: CoveTestCase {
    // MARK: Helpers

    private func parse(_ q: String, arguments: Int? = nil, file: StaticString = #filePath, line: UInt = #line) -> ParsedQuery? {
        do {
            return try QueryParser.parse(q, argumentCount: arguments)
        } catch {
            XCTFail("\(q): \(error)", file: file, line: line)
            return nil
        }
    }

    private func predicate(_ q: String, file: StaticString = #filePath, line: UInt = #line) -> QueryPredicate? {
        parse(q, file: file, line: line)?.predicate
    }

    /// The one comparison of `q`.
    private func comparison(_ q: String, arguments: Int? = nil, file: StaticString = #filePath, line: UInt = #line) -> QueryComparison? {
        guard let p = parse(q, arguments: arguments, file: file, line: line)?.predicate else { return nil }
        guard case .comparison(let c) = p else {
            XCTFail("\(q): not a comparison: \(p)", file: file, line: line)
            return nil
        }
        return c
    }

    /// The right side of `a == <literal>`.
    private func literal(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> QueryExpression? {
        comparison("a == \(text)", file: file, line: line)?.right
    }

    private func assertLiteral(_ text: String, _ expected: QueryConstant, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(literal(text, file: file, line: line), .constant(expected), text, file: file, line: line)
    }

    private func assertSyntaxError(_ q: String, _ text: String = "", file: StaticString = #filePath, line: UInt = #line) {
        assertThrows(.querySyntax, containing: text, file: file, line: line) { _ = try QueryParser.parse(q) }
    }

    private func path(_ head: String, _ steps: [QueryPathStep] = [], _ postfix: QueryPathPostfix = .none,
                      quantifier: QueryQuantifier? = nil, variable: Bool = false) -> QueryExpression {
        .keyPath(QueryKeyPath(head: head, isVariable: variable, steps: steps, postfix: postfix, quantifier: quantifier))
    }

    private func int(_ v: Int64) -> QueryExpression { .constant(.int(v)) }
    private func str(_ s: String) -> QueryExpression { .constant(.string(s)) }

    /// A comparison without its position, for building expected trees.
    private func cmp(_ left: QueryExpression, _ op: QueryOperator, _ right: QueryExpression, _ options: QueryStringOptions = []) -> QueryPredicate {
        .comparison(QueryComparison(left: left, op: op, options: options, right: right))
    }

    /// `p` with every comparison position zeroed, so trees compare by shape.
    private func shape(_ p: QueryPredicate?) -> QueryPredicate? {
        guard let p else { return nil }
        switch p {
        case .comparison(var c):
            c.position = 0
            c.left = shape(c.left)
            c.right = shape(c.right)
            return .comparison(c)
        case .and(let ps): return .and(ps.compactMap { shape($0) })
        case .or(let ps): return .or(ps.compactMap { shape($0) })
        case .not(let inner): return shape(inner).map { .not($0) }
        default: return p
        }
    }

    private func shape(_ e: QueryExpression) -> QueryExpression {
        switch e {
        case .subquery(let path, let variable, let p):
            return .subquery(path: path, variable: variable, predicate: shape(p) ?? p)
        case .arithmetic(let op, let a, let b):
            return .arithmetic(op, shape(a), shape(b))
        default:
            return e
        }
    }

    private func assertShape(_ q: String, _ expected: QueryPredicate, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(shape(predicate(q, file: file, line: line)), expected, q, file: file, line: line)
    }

    // MARK: Literals

    func testIntegers() {
        assertLiteral("42", .int(42))
        assertLiteral("-7", .int(-7))
        assertLiteral("+7", .int(7))
        assertLiteral("0x1F", .int(31))
        assertLiteral("0X1f", .int(31))
        assertLiteral("-0x10", .int(-16))
        assertLiteral("9223372036854775807", .int(.max))
        assertLiteral("-9223372036854775808", .int(.min))
        assertLiteral("0x7FFFFFFFFFFFFFFF", .int(.max))
        assertSyntaxError("a == 9223372036854775808", "integer '9223372036854775808' is out of range at position 6")
        assertSyntaxError("a == 0x8000000000000000", "out of range")
        assertSyntaxError("a == 0x", "expected hex digits after '0x' at position 8, found end of input")
        assertSyntaxError("a == 0x1G", "invalid number '0x1G' at position 6")
        assertSyntaxError("a == 5abc", "invalid number '5abc'")
    }

    func testFloats() {
        assertLiteral("1.5", .double(1.5))
        assertLiteral(".5", .double(0.5))
        assertLiteral("-.5", .double(-0.5))
        assertLiteral("1.", .double(1))
        assertLiteral("2e3", .double(2000))
        assertLiteral("2E2", .double(200))
        assertLiteral("1.5e-3", .double(0.0015))
        assertLiteral("-1.5E+3", .double(-1500))
        assertLiteral("1.5f", .float(1.5))
        assertLiteral("2f", .float(2))
        assertLiteral("-2.5e1f", .float(-25))
        assertLiteral("inf", .double(.infinity))
        assertLiteral("INF", .double(.infinity))
        assertLiteral("+infinity", .double(.infinity))
        assertLiteral("-inf", .double(-.infinity))
        assertLiteral("-Infinity", .double(-.infinity))
        for nan in ["nan", "NaN", "NAN", "-nan", "+NaN"] {
            guard case .constant(.double(let d))? = literal(nan) else { XCTFail(nan); continue }
            XCTAssertTrue(d.isNaN, nan)
        }
        // `info` and `nano` are names, not numbers.
        XCTAssertEqual(literal("info"), path("info"))
        XCTAssertEqual(literal("nano"), path("nano"))
        assertSyntaxError("a == 1e", "invalid number '1e'")
    }

    func testStrings() {
        assertLiteral("'s'", .string("s"))
        assertLiteral("\"s\"", .string("s"))
        assertLiteral("''", .string(""))
        assertLiteral("\"it's\"", .string("it's"))
        assertLiteral("'say \"hi\"'", .string("say \"hi\""))
        assertLiteral("'héllo wörld ✓'", .string("héllo wörld ✓"))
        assertLiteral("'two\nlines'", .string("two\nlines"))
    }

    func testStringEscapes() {
        // Cove's decision 1: strings are unescaped.
        assertLiteral(#"'O\'Brien'"#, .string("O'Brien"))
        assertLiteral(#""O\"Brien""#, .string("O\"Brien"))
        assertLiteral(#"'a\\b'"#, .string("a\\b"))
        assertLiteral(#"'a\/b'"#, .string("a/b"))
        assertLiteral(#"'\b\f\n\r\t'"#, .string("\u{8}\u{C}\n\r\t"))
        assertLiteral(#"'nul\0'"#, .string("nul\u{0}"))
        assertLiteral(#"'\u00e9\u00C9'"#, .string("éÉ"))
        assertLiteral(#"'\ud83d\ude00'"#, .string("😀"))
        assertSyntaxError(#"name == 'G\*'"#, #"invalid escape '\*' in a string at position 11"#)
        assertSyntaxError(#"name == 'a\x41'"#, "invalid escape")
        assertSyntaxError(#"name == '\u12'"#, "expected four hex digits after \\u")
        assertSyntaxError(#"name == '\ud83d'"#, "high surrogate")
        assertSyntaxError(#"name == '\ude00'"#, "low surrogate")
        assertSyntaxError(#"name == 'abc\"#, "unterminated string at position 9")
    }

    func testBase64() {
        assertLiteral(#"B64"czE=""#, .string("s1"))
        assertLiteral(#"B64"""#, .string(""))
        assertLiteral(#"bin(B64"/w==")"#, .binary([0xFF]))
        assertSyntaxError(#"a == B64"/w==""#, "B64 string is not UTF-8 text")
        assertSyntaxError(#"a == B64"czE""#, "invalid B64 string")
        assertSyntaxError(#"a == B64"c-E=""#, "invalid B64 string")
        assertSyntaxError(#"a == B64"czE="#, "unterminated B64 string")
        // `B64` alone is a name.
        XCTAssertEqual(literal("B64"), path("B64"))
    }

    func testBoolsAndNull() {
        assertLiteral("true", .bool(true))
        assertLiteral("TRUE", .bool(true))
        assertLiteral("false", .bool(false))
        assertLiteral("FALSE", .bool(false))
        for null in ["null", "NULL", "Null", "nil", "NIL", "Nil"] { assertLiteral(null, .null) }
        // Only all-lower and all-upper spell a bool.
        XCTAssertEqual(literal("True"), path("True"))
        XCTAssertEqual(literal("fALSE"), path("fALSE"))
    }

    func testSecondsTimestamps() {
        assertLiteral("T1:2", .timestamp(Timestamp(seconds: 1, nanoseconds: 2)))
        assertLiteral("T-1:-5", .timestamp(Timestamp(seconds: -1, nanoseconds: -5)))
        assertLiteral("T0:-5", .timestamp(Timestamp(seconds: 0, nanoseconds: -5)))
        assertLiteral("T+3:0", .timestamp(Timestamp(seconds: 3)))
        assertSyntaxError("a == T1:-1", "invalid timestamp 'T1:-1' at position 6: the seconds and nanoseconds must have the same sign")
        assertSyntaxError("a == T-1:1", "same sign")
        assertSyntaxError("a == T1:1000000000", "nanoseconds")
        assertSyntaxError("a == T99999999999999999999:0", "the seconds are out of range")
        // `T1` alone is a name.
        XCTAssertEqual(literal("T1"), path("T1"))
    }

    func testDateTimestamps() {
        assertLiteral("2020-01-01@00:00:00", .timestamp(Timestamp(seconds: 1_577_836_800)))
        assertLiteral("2020-01-01T00:00:00", .timestamp(Timestamp(seconds: 1_577_836_800)))
        assertLiteral("2020-1-1@0:0:0", .timestamp(Timestamp(seconds: 1_577_836_800)))
        assertLiteral("2024-02-29@12:34:56:789", .timestamp(Timestamp(seconds: 1_709_210_096, nanoseconds: 789)))
        assertLiteral("1900-01-01@00:00:00", .timestamp(Timestamp(seconds: -2_208_988_800)))
        assertLiteral("1969-12-31@23:59:59", .timestamp(Timestamp(seconds: -1)))
        assertLiteral("2038-01-19T03:14:08", .timestamp(Timestamp(seconds: 2_147_483_648)))
        assertSyntaxError("a == 1899-12-31@23:59:59", "invalid timestamp '1899-12-31@23:59:59' at position 6: the year must be 1900 or later")
        assertSyntaxError("a == 2020-13-01@00:00:00", "the month must be 1 to 12")
        assertSyntaxError("a == 2021-02-29@00:00:00", "day 29 is not in month 2")
        assertSyntaxError("a == 2020-01-01@24:00:00", "the hour")
        assertSyntaxError("a == 2020-01-01@00:60:00", "the minute")
        assertSyntaxError("a == 2020-01-01@00:00:60", "the second")
        assertSyntaxError("a == 2020-01-01@00:00", "expected YYYY-MM-DD@HH:MM:SS")
        assertSyntaxError("a == 2020-01-01", "invalid timestamp '2020-01-01'")
        assertSyntaxError("a == 2020-01-01T@00:00:00", "invalid timestamp")
        assertSyntaxError("a == 2020-01-01@00:00:00Z", "invalid timestamp")
        assertSyntaxError("a == 2020-01-01@00:00:00:1000000000", "the nanoseconds")
    }

    func testObjectIdAndUUID() throws {
        let oid = try ObjectId("5f0a1b2c3d4e5f6a7b8c9d0e")
        assertLiteral("oid(5f0a1b2c3d4e5f6a7b8c9d0e)", .objectId(oid))
        assertLiteral("oid(5F0A1B2C3D4E5F6A7B8C9D0E)", .objectId(oid))
        assertSyntaxError("a == oid(5f0a)", "invalid ObjectId 'oid(5f0a)' at position 6")
        assertSyntaxError("a == oid(5f0a1b2c3d4e5f6a7b8c9d0g)", "invalid ObjectId")
        assertSyntaxError("a == oid(5f0a", "invalid ObjectId")
        let bytes: [UInt8] = [0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3, 0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00]
        assertLiteral("uuid(123e4567-e89b-12d3-a456-426614174000)", .uuid(UUIDValue(bytes: bytes)))
        assertLiteral("uuid(123E4567-E89B-12D3-A456-426614174000)", .uuid(UUIDValue(bytes: bytes)))
        assertSyntaxError("a == uuid(123e4567e89b12d3a456426614174000)", "invalid UUID")
        assertSyntaxError("a == uuid(123e4567-e89b-12d3-a456-42661417400)", "invalid UUID")
        // `uuid` and `oid` without a parenthesis are names.
        XCTAssertEqual(comparison("uuid == oid")?.left, path("uuid"))
        XCTAssertEqual(comparison("uuid == oid")?.right, path("oid"))
    }

    func testBinary() {
        assertLiteral("bin('ab')", .binary([0x61, 0x62]))
        assertLiteral("binary(\"ab\")", .binary([0x61, 0x62]))
        assertLiteral("BIN( 'a\\0' )", .binary([0x61, 0]))
        assertLiteral("Binary('')", .binary([]))
        assertSyntaxError("a == bin(5)", "expected a string or B64\"…\" in bin(…) at position 10, found '5'")
        assertSyntaxError("a == bin('x'", "expected ')' to close bin(…)")
        // Without a parenthesis `bin` and `binary` are names.
        XCTAssertEqual(comparison("binary == bin")?.right, path("bin"))
    }

    func testLinkConstants() throws {
        assertLiteral("obj('Person', 5)", .objectByPrimaryKey(className: "Person", primaryKey: QueryConstantBox(.int(5))))
        assertLiteral("OBJ(\"Person\", -5)", .objectByPrimaryKey(className: "Person", primaryKey: QueryConstantBox(.int(-5))))
        assertLiteral("obj('Person', 'jo')", .objectByPrimaryKey(className: "Person", primaryKey: QueryConstantBox(.string("jo"))))
        let oid = try ObjectId("5f0a1b2c3d4e5f6a7b8c9d0e")
        assertLiteral("obj('P', oid(5f0a1b2c3d4e5f6a7b8c9d0e))", .objectByPrimaryKey(className: "P", primaryKey: QueryConstantBox(.objectId(oid))))
        assertLiteral("obj('P', null)", .objectByPrimaryKey(className: "P", primaryKey: QueryConstantBox(.null)))
        assertSyntaxError("a == obj(Person, 5)", "expected the class name as a string")
        assertSyntaxError("a == obj('Person' 5)", "expected ',' after the class name")
        assertSyntaxError("a == obj('Person', 1.5)", "expected a primary key")
        assertSyntaxError("a == obj", "expected '(' after obj")
        assertLiteral("O5", .objectKey(5))
        assertLiteral("O0", .objectKey(0))
        assertLiteral("L3:7", .link(classKey: 3, objectKey: 7))
        XCTAssertEqual(literal("O5x"), path("O5x"))
        XCTAssertEqual(literal("L3"), path("L3"))
        assertSyntaxError("a == L99999999999:1", "invalid link")
    }

    func testLists() {
        XCTAssertEqual(literal("{}"), .list([], quantifier: nil))
        XCTAssertEqual(literal("{1, 'a', null, 2.5, true}"),
                       .list([int(1), str("a"), .constant(.null), .constant(.double(2.5)), .constant(.bool(true))], quantifier: nil))
        XCTAssertEqual(literal("ANY {1}"), .list([int(1)], quantifier: .any))
        XCTAssertEqual(literal("some{1}"), .list([int(1)], quantifier: .any))
        XCTAssertEqual(literal("ALL {}"), .list([], quantifier: .all))
        XCTAssertEqual(literal("NONE {$0, $1}"), .list([.argument(0), .argument(1)], quantifier: QueryQuantifier.none))
        XCTAssertEqual(literal("{bin('a'), obj('P', 1), -inf}"),
                       .list([.constant(.binary([0x61])), .constant(.objectByPrimaryKey(className: "P", primaryKey: QueryConstantBox(.int(1)))),
                              .constant(.double(-.infinity))], quantifier: nil))
        assertSyntaxError("a == {1, {2}}", "a list cannot hold a list at position 10")
        assertSyntaxError("a == {1, b}", "expected a constant or an argument at position 10, found 'b': in the list that opens at position 6")
        assertSyntaxError("a == {1, }", "expected a constant or an argument")
        assertSyntaxError("a == {1 2}", "expected ',' or '}' at position 9, found '2': in the list that opens at position 6")
        assertSyntaxError("a == {1 + 1}", "expected ',' or '}'")
        assertSyntaxError("a == {1", "found end of input")
        assertSyntaxError("a == ANY 5", "expected a key path or a list after ANY at position 10, found '5'")
        // A list of 40,000 values.
        let values = (0..<40_000).map(String.init).joined(separator: ",")
        guard case .list(let items, nil)? = literal("{\(values)}") else { return XCTFail("not a list") }
        XCTAssertEqual(items.count, 40_000)
        XCTAssertEqual(items.last, int(39_999))
    }

    func testArguments() {
        XCTAssertEqual(literal("$0"), .argument(0))
        XCTAssertEqual(literal("$12"), .argument(12))
        XCTAssertEqual(comparison("$K0 == $1")?.left, path("$K0"))
        XCTAssertEqual(comparison("$K0.name == $1")?.left, path("$K0", [.property("name")]))
        // `%@` is the next positional argument; `%K` the next one spliced in as a key path.
        assertShape("a == %@ && b IN {%@, %@} && %K == %@",
                    .and([cmp(path("a"), .equal, .argument(0)),
                          cmp(path("b"), .in, .list([.argument(1), .argument(2)], quantifier: nil)),
                          cmp(path("$K3"), .equal, .argument(4))]))
        XCTAssertEqual(comparison("d[%@] == 1")?.left, path("d", [.argumentKey(0)]))
        assertSyntaxError("a == $0 && b == %@", "'%@' cannot be mixed with $n arguments at position 17")
        assertSyntaxError("a == %@ && b == $0", "'$0' cannot be mixed with %@ arguments")
        assertSyntaxError("$K0 == %@", "cannot be mixed")
        // Out of range against the count given.
        XCTAssertNotNil(comparison("a == $1", arguments: 2))
        assertThrows(.invalidArgument, containing: "argument $2 is out of range: the query has 2 arguments") {
            _ = try QueryParser.parse("a == $2", argumentCount: 2)
        }
        assertThrows(.invalidArgument, containing: "argument $1 is out of range: the query has 1 argument") {
            _ = try QueryParser.parse("a == %@ || b == %@", argumentCount: 1)
        }
        assertThrows(.invalidArgument, containing: "argument $0 is out of range: the query has 0 arguments") {
            _ = try QueryParser.parse("$K0 == 1", argumentCount: 0)
        }
        assertThrows(.invalidArgument, containing: "in query \"d[$3] == 1\"") {
            _ = try QueryParser.parse("d[$3] == 1", argumentCount: 1)
        }
        assertSyntaxError("a == $99999999999", "argument '$99999999999' is out of range")
        // `$0x` is a name, as the longest match.
        XCTAssertEqual(literal("$0x"), path("$0x"))
    }

    // MARK: Keywords and identifiers

    func testKeywordCaseRules() {
        XCTAssertEqual(comparison("True == 1")?.left, path("True"))
        XCTAssertEqual(comparison("truepredicates == 1")?.left, path("truepredicates"))
        XCTAssertEqual(comparison("NOT0 == 1")?.left, path("NOT0"))
        XCTAssertEqual(comparison("Not == 1")?.left, path("Not"))
        XCTAssertEqual(comparison("In == 1")?.left, path("In"))
        XCTAssertEqual(comparison("Any == 1")?.left, path("Any"))
        XCTAssertEqual(comparison("First == 1")?.left, path("First"))
        XCTAssertEqual(predicate("TRUEPREDICATE"), .truePredicate)
        XCTAssertEqual(predicate("truepredicate"), .truePredicate)
        XCTAssertEqual(predicate("TruePredicate"), .truePredicate)
        XCTAssertEqual(predicate("FalsePredicate"), .falsePredicate)
        assertShape("a == 1 AND b == 2 and c == 3 And d == 4",
                    .and([cmp(path("a"), .equal, int(1)), cmp(path("b"), .equal, int(2)),
                          cmp(path("c"), .equal, int(3)), cmp(path("d"), .equal, int(4))]))
        assertShape("a == 1 OR b == 2 oR c == 3",
                    .or([cmp(path("a"), .equal, int(1)), cmp(path("b"), .equal, int(2)), cmp(path("c"), .equal, int(3))]))
        assertShape("not a == 1", .not(cmp(path("a"), .equal, int(1))))
        assertShape("NOT a == 1", .not(cmp(path("a"), .equal, int(1))))
        assertSyntaxError("Not a == 1", "expected a comparison operator at position 5, found 'a'")
        assertShape("a in {1}", cmp(path("a"), .in, .list([int(1)], quantifier: nil)))
        assertShape("a IN {1}", cmp(path("a"), .in, .list([int(1)], quantifier: nil)))
        assertSyntaxError("a In {1}", "expected a comparison operator")
        assertShape("a BeginsWith 'x' && b endswith 'y' && c Contains 'z' && d LIKE '*' && e text 'w'",
                    .and([cmp(path("a"), .beginsWith, str("x")), cmp(path("b"), .endsWith, str("y")),
                          cmp(path("c"), .contains, str("z")), cmp(path("d"), .like, str("*")), cmp(path("e"), .text, str("w"))]))
    }

    func testSoftKeywordsAsPropertyNames() {
        for name in ["in", "sort", "distinct", "limit", "offset", "asc", "desc", "ascending", "descending", "beginswith",
                     "endswith", "contains", "like", "between", "text", "bin", "binary", "first", "last", "size", "SORT", "LIMIT"] {
            XCTAssertEqual(comparison("\(name) == 1")?.left, path(name), name)
            XCTAssertEqual(comparison("x.\(name) == 1")?.left, path("x", [.property(name)]), name)
        }
        assertShape("in IN {1}", cmp(path("in"), .in, .list([int(1)], quantifier: nil)))
        assertShape("contains CONTAINS 'x'", cmp(path("contains"), .contains, str("x")))
        assertShape("between BETWEEN {1, 2}", cmp(path("between"), .between, .list([int(1), int(2)], quantifier: nil)))
        let q = parse("sort == 1 SORT(sort ASC, limit DESC) DISTINCT(distinct) LIMIT(1)")
        XCTAssertEqual(q?.descriptors, [.sort([(QueryKeyPath(head: "sort"), ascending: true), (QueryKeyPath(head: "limit"), ascending: false)]),
                                        .distinct([QueryKeyPath(head: "distinct")]), .limit(1)])
        // Hard keywords are not names.
        assertSyntaxError("any == 1", "expected a key path or a list after any at position 5, found '=='")
        assertSyntaxError("a == and", "expected a value at position 6, found 'and'")
        assertSyntaxError("subquery == 1", "expected '(' after SUBQUERY")
    }

    func testIdentifiers() {
        XCTAssertEqual(comparison("age-5 == 1")?.left, path("age-5"))
        XCTAssertEqual(comparison("_x$y == 1")?.left, path("_x$y"))
        XCTAssertEqual(comparison("$x == 1")?.left, path("$x"))
        XCTAssertEqual(comparison("prénom == 'é'")?.left, path("prénom"))
        XCTAssertEqual(comparison("名前 == 1")?.left, path("名前"))
        XCTAssertEqual(comparison(#"float\ fees == 1"#)?.left, path("float fees"))
        XCTAssertEqual(comparison("a\\\tb == 1")?.left, path("a\tb"))
        XCTAssertEqual(comparison(#"a\nb == 1"#)?.left, path("a\nb"))
        XCTAssertEqual(comparison(#"owner.first\ name == 1"#)?.left, path("owner", [.property("first name")]))
        // An escaped name is never a keyword.
        XCTAssertEqual(comparison(#"a == tr\ ue"#)?.right, path("tr ue"))
        assertSyntaxError(#"a\x == 1"#, "invalid character '\\' at position 2")
        assertSyntaxError("a # 1", "invalid character '#' at position 3")
        assertSyntaxError("a == 1 & b == 2", "invalid character '&' at position 8: did you mean '&&'?")
        assertSyntaxError("a == 1 | b == 2", "did you mean '||'?")
        assertSyntaxError("a == \u{7}", "invalid character U+0007 at position 6")
        assertSyntaxError("a.@foo == 1", "unknown operator '@foo' at position 3")
        assertSyntaxError("a == %d", "invalid character '%' at position 6")
    }

    func testSignsAndArithmetic() {
        assertShape("age - 5 > 20", cmp(.arithmetic(.subtract, path("age"), int(5)), .greater, int(20)))
        assertShape("age-5 > 20", cmp(path("age-5"), .greater, int(20)))
        assertSyntaxError("age -5 > 20", "expected a comparison operator at position 5, found '-5': a sign before digits belongs to the number")
        assertSyntaxError("age +5 > 20", "found '+5'")
        assertShape("age > -5", cmp(path("age"), .greater, int(-5)))
        assertShape("age>-5", cmp(path("age"), .greater, int(-5)))
        assertShape("a + b * c == 1", cmp(.arithmetic(.add, path("a"), .arithmetic(.multiply, path("b"), path("c"))), .equal, int(1)))
        assertShape("a * b + c == 1", cmp(.arithmetic(.add, .arithmetic(.multiply, path("a"), path("b")), path("c")), .equal, int(1)))
        assertShape("a - b - c == 1", cmp(.arithmetic(.subtract, .arithmetic(.subtract, path("a"), path("b")), path("c")), .equal, int(1)))
        assertShape("a / b * c == 1", cmp(.arithmetic(.multiply, .arithmetic(.divide, path("a"), path("b")), path("c")), .equal, int(1)))
        assertShape("(a + b) * c == 1", cmp(.arithmetic(.multiply, .arithmetic(.add, path("a"), path("b")), path("c")), .equal, int(1)))
        assertShape("((a)) * 2 > (b - 1)", cmp(.arithmetic(.multiply, path("a"), int(2)), .greater, .arithmetic(.subtract, path("b"), int(1))))
        assertShape("a * (b + c) == 1", cmp(.arithmetic(.multiply, path("a"), .arithmetic(.add, path("b"), path("c"))), .equal, int(1)))
        assertShape("5 < a", cmp(int(5), .less, path("a")))
    }

    func testConstantFolding() {
        XCTAssertEqual(comparison("a == 2 * 3 + 1")?.right, int(7))
        XCTAssertEqual(comparison("a == (1 + 2) * (3 - 1)")?.right, int(6))
        XCTAssertEqual(comparison("a == 4 / 2")?.right, int(2))
        XCTAssertEqual(comparison("a == 1 / 2")?.right, .constant(.double(0.5)))
        XCTAssertEqual(comparison("a == 1 + 0.5")?.right, .constant(.double(1.5)))
        XCTAssertEqual(comparison("a == 1.5f * 2")?.right, .constant(.float(3)))
        XCTAssertEqual(comparison("a == 9223372036854775807 + 1")?.right, .constant(.double(9_223_372_036_854_775_808)))
        // Division by zero and non-numbers are the compiler's to judge.
        XCTAssertEqual(comparison("a == 1 / 0")?.right, .arithmetic(.divide, int(1), int(0)))
        XCTAssertEqual(comparison("a == 'x' + 1")?.right, .arithmetic(.add, str("x"), int(1)))
        XCTAssertEqual(comparison("a == $0 + 1")?.right, .arithmetic(.add, .argument(0), int(1)))
        // Comparing two constants parses; the compiler rejects it.
        assertShape("1 == 1", cmp(int(1), .equal, int(1)))
        // Only a value may stand beside a string operator.
        assertSyntaxError("a + b CONTAINS 'x'", "CONTAINS compares a value, not arithmetic at position 7")
        assertSyntaxError("a CONTAINS 'x' + 'y'", "CONTAINS compares a value, not arithmetic at position 12")
        assertShape("(name) CONTAINS 'x'", cmp(path("name"), .contains, str("x")))
    }

    // MARK: Predicates

    func testPrecedence() {
        assertShape("!a == 1 && b == 2", .and([.not(cmp(path("a"), .equal, int(1))), cmp(path("b"), .equal, int(2))]))
        assertShape("a == 1 || b == 2 && c == 3",
                    .or([cmp(path("a"), .equal, int(1)), .and([cmp(path("b"), .equal, int(2)), cmp(path("c"), .equal, int(3))])]))
        assertShape("a == 1 && b == 2 || c == 3",
                    .or([.and([cmp(path("a"), .equal, int(1)), cmp(path("b"), .equal, int(2))]), cmp(path("c"), .equal, int(3))]))
        assertShape("!(a == 1 || b == 2)", .not(.or([cmp(path("a"), .equal, int(1)), cmp(path("b"), .equal, int(2))])))
        assertShape("!!a == 1", .not(.not(cmp(path("a"), .equal, int(1)))))
        assertShape("NOT a IN {1, 2}", .not(cmp(path("a"), .in, .list([int(1), int(2)], quantifier: nil))))
        assertShape("(a == 1) && ((b == 2))", .and([cmp(path("a"), .equal, int(1)), cmp(path("b"), .equal, int(2))]))
        // A parenthesized chain of the same kind joins the enclosing chain.
        assertShape("(a == 1 || b == 2) || c == 3",
                    .or([cmp(path("a"), .equal, int(1)), cmp(path("b"), .equal, int(2)), cmp(path("c"), .equal, int(3))]))
        assertShape("TRUEPREDICATE && !FALSEPREDICATE", .and([.truePredicate, .not(.falsePredicate)]))
        assertSyntaxError("(a == 1", "expected '&&', '||' or ')' at position 8, found end of input: the '(' at position 1 is not closed")
        assertSyntaxError("a == 1)", "expected '&&', '||', SORT, DISTINCT, LIMIT, OFFSET or end of input at position 7, found ')'")
        assertSyntaxError("(a) && b == 1", "expected a comparison operator at position 5, found '&&'")
        assertSyntaxError("(a == 1) + 1 > 2", "found '+'")
        assertSyntaxError("a == 1 &&", "expected a value at position 10, found end of input")
        assertSyntaxError("!", "expected a value at position 2, found end of input")
        assertSyntaxError("a == b == c", "found '=='")
    }

    func testComparisonOperators() {
        let ops: [(String, QueryOperator)] = [("==", .equal), ("=", .equal), ("!=", .notEqual), ("<>", .notEqual), ("<", .less),
                                              ("<=", .lessOrEqual), ("=<", .lessOrEqual), (">", .greater), (">=", .greaterOrEqual),
                                              ("=>", .greaterOrEqual)]
        for (text, op) in ops {
            XCTAssertEqual(comparison("a \(text) 1")?.op, op, text)
            XCTAssertEqual(comparison("a\(text)1")?.op, op, text)
        }
        let c = comparison("name ==[c] 'x'")
        XCTAssertEqual(c?.options, .caseInsensitive)
        XCTAssertEqual(comparison("name == [cd] 'x'")?.options, [.caseInsensitive, .diacriticInsensitive])
        XCTAssertEqual(comparison("name != [d] 'x'")?.options, .diacriticInsensitive)
        XCTAssertEqual(comparison("name IN[c] {'a'}")?.options, .caseInsensitive)
        XCTAssertEqual(comparison("name BEGINSWITH[c] 'x'")?.options, .caseInsensitive)
        XCTAssertEqual(comparison("name ENDSWITH[d] 'x'")?.options, .diacriticInsensitive)
        XCTAssertEqual(comparison("name CONTAINS[cd] 'x'")?.options, [.caseInsensitive, .diacriticInsensitive])
        XCTAssertEqual(comparison("name LIKE[c] 'x*'")?.options, .caseInsensitive)
        XCTAssertEqual(comparison("'x' CONTAINS name")?.left, str("x"))
        assertSyntaxError("a <[c] 'x'", "'[c]' cannot follow '<' at position 4")
        assertSyntaxError("a TEXT[c] 'x'", "'[c]' cannot follow TEXT")
        assertSyntaxError("a BETWEEN[c] {1, 2}", "cannot follow BETWEEN")
        assertSyntaxError("a [c]== 'x'", "expected a comparison operator at position 3, found '[c]'")
        assertSyntaxError("a ==[C] 'x'", "expected a value at position 5, found '['")
        // The position is the byte offset of the comparison.
        XCTAssertEqual((predicate("a == 1 && bb > 2").flatMap { p -> Int? in
            if case .and(let ps) = p, case .comparison(let c) = ps[1] { return c.position }
            return nil
        }), 10)
    }

    func testBetweenAndIn() {
        assertShape("age BETWEEN {18, 65}", cmp(path("age"), .between, .list([int(18), int(65)], quantifier: nil)))
        assertShape("age between {$0, 2.5}", cmp(path("age"), .between, .list([.argument(0), .constant(.double(2.5))], quantifier: nil)))
        assertSyntaxError("age BETWEEN {1}", "BETWEEN takes a list of exactly two values {low, high} at position 13")
        assertSyntaxError("age BETWEEN {1, 2, 3}", "exactly two values")
        assertSyntaxError("age BETWEEN 5", "expected a list {low, high} after BETWEEN at position 13, found '5'")
        assertSyntaxError("age BETWEEN ANY {1, 2}", "expected a list {low, high} after BETWEEN")
        assertShape("'v' IN tags", cmp(str("v"), .in, path("tags")))
        assertShape("age IN $0", cmp(path("age"), .in, .argument(0)))
        assertShape("ANY tags IN {'a'}", cmp(path("tags", quantifier: .any), .in, .list([str("a")], quantifier: nil)))
        assertShape("ALL scores > 5", cmp(path("scores", quantifier: .all), .greater, int(5)))
        assertShape("NONE dogs.age > 5", cmp(path("dogs", [.property("age")], quantifier: QueryQuantifier.none), .greater, int(5)))
        assertShape("SOME dogs.age > 5", cmp(path("dogs", [.property("age")], quantifier: .any), .greater, int(5)))
        assertShape("age == NONE {1, 2}", cmp(path("age"), .equal, .list([int(1), int(2)], quantifier: QueryQuantifier.none)))
    }

    // MARK: Key paths

    func testKeyPaths() {
        XCTAssertEqual(comparison("owner.address.city == 'x'")?.left, path("owner", [.property("address"), .property("city")]))
        XCTAssertEqual(comparison("l[0] == 1")?.left, path("l", [.index(0)]))
        XCTAssertEqual(comparison("l[12].name == 1")?.left, path("l", [.index(12), .property("name")]))
        XCTAssertEqual(comparison("l[FIRST] == 1")?.left, path("l", [.first]))
        XCTAssertEqual(comparison("l[first] == 1")?.left, path("l", [.first]))
        XCTAssertEqual(comparison("l[LAST] == 1")?.left, path("l", [.last]))
        XCTAssertEqual(comparison("l[*] == 1")?.left, path("l", [.all]))
        XCTAssertEqual(comparison("l[SIZE] == 1")?.left, path("l", [], .count))
        XCTAssertEqual(comparison("l[size] == 1")?.left, path("l", [], .count))
        XCTAssertEqual(comparison("d['k'] == 1")?.left, path("d", [.key("k")]))
        XCTAssertEqual(comparison("d[\"k k\"].x == 1")?.left, path("d", [.key("k k"), .property("x")]))
        XCTAssertEqual(comparison("d[$0] == 1")?.left, path("d", [.argumentKey(0)]))
        XCTAssertEqual(comparison("d.k == 1")?.left, path("d", [.property("k")]))
        XCTAssertEqual(comparison("d[*] == 1")?.left, path("d", [.all]))
        XCTAssertEqual(comparison("pets.@values.age > 1")?.left, path("pets", [.all, .property("age")]))
        XCTAssertEqual(comparison("d.@keys == 'k'")?.left, path("d", [.keys]))
        XCTAssertEqual(comparison("a.b[0]['x'][*].c == 1")?.left, path("a", [.property("b"), .index(0), .key("x"), .all, .property("c")]))
        assertSyntaxError("l[-1] == 1", "expected an unsigned index, FIRST, LAST, SIZE, '*', a string key or an argument in '[ ]' at position 3, found '-1'")
        assertSyntaxError("l[0x1] == 1", "expected an unsigned index")
        assertSyntaxError("l[1.5] == 1", "expected an unsigned index")
        assertSyntaxError("l[First] == 1", "expected an unsigned index")
        assertSyntaxError("l[0 == 1", "expected ']' after the subscript at position 5, found '=='")
        assertSyntaxError("a. == 1", "expected a property name or an @ operator after '.' at position 4, found '=='")
        assertSyntaxError("l[99999999999999999999] == 1", "out of range")
    }

    func testPostfixes() {
        XCTAssertEqual(comparison("dogs.@count > 1")?.left, path("dogs", [], .count))
        XCTAssertEqual(comparison("dogs.@size > 1")?.left, path("dogs", [], .count))
        XCTAssertEqual(comparison("owner.dogs.@count > 1")?.left, path("owner", [.property("dogs")], .count))
        XCTAssertEqual(comparison("mixed.@type == 'int'")?.left, path("mixed", [], .type))
        XCTAssertEqual(comparison("name.length > 1")?.left, path("name", [], .length))
        XCTAssertEqual(comparison("tags.length > 1")?.left, path("tags", [], .length))
        // `.length` is a postfix only as the last component.
        XCTAssertEqual(comparison("a.length.b > 1")?.left, path("a", [.property("length"), .property("b")]))
        XCTAssertEqual(comparison("length > 1")?.left, path("length"))
        XCTAssertEqual(comparison("dogs.@sum.weight > 1")?.left, path("dogs", [], .aggregate(.sum, property: [.property("weight")])))
        XCTAssertEqual(comparison("dogs.@avg.owner.age > 1")?.left,
                       path("dogs", [], .aggregate(.avg, property: [.property("owner"), .property("age")])))
        XCTAssertEqual(comparison("scores.@min > 1")?.left, path("scores", [], .aggregate(.min, property: [])))
        XCTAssertEqual(comparison("scores.@max == $0")?.left, path("scores", [], .aggregate(.max, property: [])))
        XCTAssertEqual(comparison("ANY dogs.@count > 1")?.left, path("dogs", [], .count, quantifier: .any))
        assertSyntaxError("dogs.@count.x > 1", "a key path cannot go on after @count at position 12")
        assertSyntaxError("dogs.@count[0] > 1", "cannot go on after @count")
        assertSyntaxError("l[SIZE].x > 1", "cannot go on after @count")
        assertSyntaxError("m.@type.x == 'int'", "cannot go on after @type")
        assertSyntaxError("dogs.@sum.@count > 1", "expected a property name after '@sum.' at position 11, found '@count'")
        assertSyntaxError("dogs.@sum.x[0] > 1", "cannot go on after @sum")
        assertSyntaxError("@count > 1", "expected a value at position 1, found '@count'")
    }

    func testBacklinks() {
        XCTAssertEqual(comparison("@links.Person.dogs.@count > 1")?.left, path("", [.backlinks(className: "Person", property: "dogs")], .count))
        XCTAssertEqual(comparison("@links.@count == 0")?.left, path("", [.allBacklinks], .count))
        XCTAssertEqual(comparison("@links.@size == 0")?.left, path("", [.allBacklinks], .count))
        XCTAssertEqual(comparison("@links.Person.dogs.name == 'x'")?.left,
                       path("", [.backlinks(className: "Person", property: "dogs"), .property("name")]))
        XCTAssertEqual(comparison("owner.@links.Person.dogs.@sum.age > 1")?.left,
                       path("owner", [.backlinks(className: "Person", property: "dogs")], .aggregate(.sum, property: [.property("age")])))
        XCTAssertEqual(comparison("ANY @links.Person.dogs.age > 1")?.left,
                       path("", [.backlinks(className: "Person", property: "dogs"), .property("age")], quantifier: .any))
        XCTAssertEqual(comparison("@links.A.b.@links.C.d.@count > 1")?.left,
                       path("", [.backlinks(className: "A", property: "b"), .backlinks(className: "C", property: "d")], .count))
        assertSyntaxError("@links.Person == 1", "expected .property after @links.Person at position 15, found '=='")
        assertSyntaxError("@links == 1", "expected .Class.property or .@count after @links at position 8")
        assertSyntaxError("@links.@type == 1", "expected .Class.property or .@count after @links")
        assertSyntaxError("@links.@count.x == 1", "cannot go on after @count")
    }

    // MARK: SUBQUERY

    func testSubquery() {
        let c = comparison("SUBQUERY(dogs, $d, $d.age > 4 AND $d.weight > 20).@count > 0")
        XCTAssertEqual(c.map { shape($0.left) },
                       .subquery(path: QueryKeyPath(head: "dogs"), variable: "$d",
                                 predicate: .and([cmp(path("$d", [.property("age")], variable: true), .greater, int(4)),
                                                  cmp(path("$d", [.property("weight")], variable: true), .greater, int(20))])))
        XCTAssertEqual(c?.right, int(0))
        XCTAssertNotNil(comparison("subquery(dogs, $d, $d.age > 4).@size == 1"))
        XCTAssertNotNil(comparison("SUBQUERY(@links.Person.dogs, $p, $p.age > 4).@count == 1"))
        // Nested, with the outer variable visible inside.
        let nested = comparison("SUBQUERY(people, $p, SUBQUERY($p.dogs, $d, $d.age > $p.age).@count > 1).@count > 0")
        guard case .subquery(_, "$p", .comparison(let inner))? = nested?.left,
              case .subquery(let innerPath, "$d", .comparison(let innermost)) = inner.left else {
            return XCTFail("\(String(describing: nested))")
        }
        XCTAssertEqual(innerPath, QueryKeyPath(head: "$p", isVariable: true, steps: [.property("dogs")]))
        XCTAssertEqual(innermost.right, path("$p", [.property("age")], variable: true))
        // Outside its SUBQUERY a `$name` is not a variable.
        assertShape("SUBQUERY(dogs, $d, $d.age > 4).@count > 0 && $d == 1",
                    .and([cmp(.subquery(path: QueryKeyPath(head: "dogs"), variable: "$d",
                                        predicate: cmp(path("$d", [.property("age")], variable: true), .greater, int(4))), .greater, int(0)),
                          cmp(path("$d"), .equal, int(1))]))
        assertSyntaxError("SUBQUERY(dogs, $d, $d.age > 4) > 0", "expected .@count or .@size after SUBQUERY(…) at position 32, found '>'")
        assertSyntaxError("SUBQUERY(dogs, $d, $d.age > 4).@sum > 0", "expected .@count or .@size")
        assertSyntaxError("SUBQUERY(dogs, d, d.age > 4).@count > 0", "expected a variable such as $x in SUBQUERY(path, $x, predicate) at position 16, found 'd'")
        assertSyntaxError("SUBQUERY(dogs, $0, $0 > 4).@count > 0", "expected a variable such as $x")
        assertSyntaxError("SUBQUERY(dogs $d, $d.age > 4).@count > 0", "expected ',' after the key path")
        assertSyntaxError("SUBQUERY(dogs, $d, $d.age).@count > 0", "expected a comparison operator")
        assertSyntaxError("SUBQUERY(dogs, $d, $d.age > 4", "expected '&&', '||' or ')' to close SUBQUERY(…)")
        assertThrows(.invalidArgument, containing: "variable $d at position 40 is already used by an enclosing SUBQUERY") {
            _ = try QueryParser.parse("SUBQUERY(people, $d, SUBQUERY($d.dogs, $d, $d.age > 1).@count > 0).@count > 0")
        }
    }

    // MARK: Descriptors

    func testDescriptors() {
        let q = parse("age > 1 SORT(age ASC, name DESCENDING) DISTINCT(name, owner.name) LIMIT(10) OFFSET(5) SORT(b Descending) limit(0)")
        XCTAssertEqual(q?.descriptors, [
            .sort([(QueryKeyPath(head: "age"), ascending: true), (QueryKeyPath(head: "name"), ascending: false)]),
            .distinct([QueryKeyPath(head: "name"), QueryKeyPath(head: "owner", steps: [.property("name")])]),
            .limit(10), .offset(5),
            .sort([(QueryKeyPath(head: "b"), ascending: false)]),
            .limit(0),
        ])
        XCTAssertEqual(parse("TRUEPREDICATE sort(a asc) distinct(a) offset(1)")?.descriptors,
                       [.sort([(QueryKeyPath(head: "a"), ascending: true)]), .distinct([QueryKeyPath(head: "a")]), .offset(1)])
        XCTAssertEqual(parse("TRUEPREDICATE LIMIT(3) SORT(age ASCENDING)")?.descriptors,
                       [.limit(3), .sort([(QueryKeyPath(head: "age"), ascending: true)])])
        XCTAssertEqual(parse("TRUEPREDICATE SORT(dogs.@count DESC, d['k'] ASC)")?.descriptors,
                       [.sort([(QueryKeyPath(head: "dogs", postfix: .count), ascending: false),
                               (QueryKeyPath(head: "d", steps: [.key("k")]), ascending: true)])])
        XCTAssertEqual(parse("a == 1 && b == 2 LIMIT ( 5 )")?.descriptors, [.limit(5)])
        XCTAssertEqual(parse("TRUEPREDICATE LIMIT(007)")?.descriptors, [.limit(7)])
        assertSyntaxError("TRUEPREDICATE LIMIT(-1)", "expected a non-negative decimal integer in LIMIT(…) at position 21, found '-1'")
        assertSyntaxError("TRUEPREDICATE LIMIT(2.7)", "found '2.7'")
        assertSyntaxError("TRUEPREDICATE LIMIT(0x10)", "found '0x10'")
        assertSyntaxError("TRUEPREDICATE LIMIT($0)", "found '$0'")
        assertSyntaxError("TRUEPREDICATE LIMIT()", "found ')'")
        assertSyntaxError("TRUEPREDICATE LIMIT(1, 2)", "expected ')' after the count in LIMIT(…)")
        assertSyntaxError("TRUEPREDICATE OFFSET(+1)", "expected a non-negative decimal integer in OFFSET(…)")
        assertSyntaxError("TRUEPREDICATE LIMIT(99999999999999999999)", "out of range")
        assertSyntaxError("TRUEPREDICATE SORT(age)", "expected ASC, ASCENDING, DESC or DESCENDING after the key path in SORT at position 23, found ')'")
        assertSyntaxError("TRUEPREDICATE SORT()", "expected a key path in SORT(…)")
        assertSyntaxError("TRUEPREDICATE SORT(a ASC b DESC)", "expected ',' or ')' in SORT(…)")
        assertSyntaxError("TRUEPREDICATE DISTINCT()", "expected a key path in DISTINCT(…)")
        assertSyntaxError("TRUEPREDICATE DISTINCT(a,)", "expected a key path in DISTINCT(…)")
        assertSyntaxError("TRUEPREDICATE SORT(a ASC) && b == 1", "expected SORT, DISTINCT, LIMIT, OFFSET or end of input at position 27, found '&&'")
        assertSyntaxError("TRUEPREDICATE SORT", "expected '&&', '||', SORT, DISTINCT, LIMIT, OFFSET or end of input at position 15, found 'SORT'")
        // A predicate is mandatory.
        assertSyntaxError("LIMIT(1)", "expected a predicate before LIMIT(…) at position 1")
        assertSyntaxError("sort(a ASC)", "expected a predicate before SORT(…)")
        assertSyntaxError("", "empty query: expected a predicate at position 1")
        assertSyntaxError("  \n ", "empty query")
    }

    // MARK: Errors

    func testErrorMessages() {
        assertThrows(.querySyntax, containing: #"syntax error in query "age >": expected a value at position 6, found end of input"#) {
            _ = try QueryParser.parse("age >")
        }
        assertSyntaxError("age", #"syntax error in query "age": expected a comparison operator at position 4, found end of input"#)
        assertSyntaxError("age == 'x", #"syntax error in query "age == 'x": unterminated string at position 8: expected a closing ' before the end of the query"#)
        assertSyntaxError("é == 1 && ü ==", "expected a value at position 15, found end of input")
        assertSyntaxError("a == 1 &&\n  b ==\n", "expected a value at position 18 (line 3, column 1), found end of input")
        assertSyntaxError("a == 1 &&\n  b == )", "at position 18 (line 2, column 8), found ')'")
        // A long query is cut in the message.
        let long = (0..<100).map { "a == \($0)" }.joined(separator: " || ") + " ||"
        assertSyntaxError(long, "…: expected a value at position \(long.count + 1), found end of input")
    }

    /// `a == 1 && (a == 1 || (a == 1 && …))`: AND and OR alternating `levels` times, a tree
    /// `levels + 1` high.
    private static func alternating(_ levels: Int) -> String {
        var q = "a == 1"
        for k in 0..<levels { q = "a == 1 \(k % 2 == 0 ? "&&" : "||") (\(q))" }
        return q
    }

    /// `levels` SUBQUERYs, each inside the one before.
    private static func nestedSubqueries(_ levels: Int) -> String {
        (0..<levels).map { "SUBQUERY(a, $v\($0), " }.joined() + "b == 1" + String(repeating: ").@count > 0", count: levels)
    }

    func testNesting() {
        let n = QueryParser.maxNesting
        // Redundant parentheses and chains of one kind add no depth: 5,000 parse, with no stack.
        let redundant = String(repeating: "(", count: 5000) + "a == 1" + String(repeating: ")", count: 5000)
        XCTAssertEqual(shape(predicate(redundant)), cmp(path("a"), .equal, int(1)))
        XCTAssertNotNil(comparison(String(repeating: "(", count: 5000) + "a" + String(repeating: ")", count: 5000) + " == 1"))
        // What a program folding conditions one at a time writes: one OR of 2,000.
        var folded = "a == 0"
        for i in 1..<2000 { folded = "(\(folded)) || (a == \(i))" }
        guard case .or(let terms)? = predicate(folded) else { return XCTFail("not an OR") }
        XCTAssertEqual(terms.count, 2000)
        // Levels that do count, up to the limit and one past it.
        guard case .and(let top)? = predicate(Self.alternating(n - 1)) else { return XCTFail("not an AND") }
        XCTAssertEqual(top.count, 2)
        assertSyntaxError(Self.alternating(n), "nesting deeper than \(n) levels")
        XCTAssertNotNil(predicate(String(repeating: "!", count: n - 1) + "a == 1"))
        assertSyntaxError(String(repeating: "!", count: n) + "a == 1", "nesting deeper than \(n) levels at position \(n)")
        XCTAssertNotNil(predicate(String(repeating: "!(", count: n / 2) + "a == 1" + String(repeating: ")", count: n / 2)))
        XCTAssertEqual(comparison("a == " + String(repeating: "(", count: n) + "1" + String(repeating: ")", count: n))?.right, int(1))
        assertSyntaxError("a == " + String(repeating: "(", count: n + 1) + "1" + String(repeating: ")", count: n + 1),
                          "nesting deeper than \(n) levels at position \(n + 6)")
        XCTAssertNotNil(comparison(Self.nestedSubqueries(n - 1)))
        assertSyntaxError(Self.nestedSubqueries(n), "nesting deeper than \(n) levels")
        for deep in [String(repeating: "(", count: 100_000), String(repeating: "!", count: 100_000) + "a == 1",
                     "a == " + String(repeating: "(", count: 100_000) + "1", Self.nestedSubqueries(1000)] {
            assertThrows(.querySyntax, containing: "syntax error") { _ = try QueryParser.parse(deep) }
        }
        assertSyntaxError(String(repeating: "(", count: 100_000), "more than 10000 parentheses open at position 10001")
        let sum = "a == " + Array(repeating: "b", count: QueryParser.maxArithmeticDepth + 2).joined(separator: " + ")
        assertSyntaxError(sum, "arithmetic nested deeper than \(QueryParser.maxArithmeticDepth) operators")
        // Constants fold as they go, so a long constant sum is one number.
        let constants = "a == " + Array(repeating: "1", count: 10_000).joined(separator: " + ")
        XCTAssertEqual(comparison(constants)?.right, int(10_000))
    }

    #if canImport(Glibc)
    /// The deepest nesting accepted parses on a thread with a 512 KB stack (the least a secondary
    /// thread usually gets), in a debug build too.
    func testDeepestNestingFitsASmallStack() {
        // Written by the thread below and read after pthread_join, which orders the accesses.
        final class Run: @unchecked Sendable {
            var queries: [String] = []
            var parsed = 0
        }
        let n = QueryParser.maxNesting
        let run = Run()
        run.queries = [
            Self.alternating(n - 1),
            String(repeating: "!", count: n - 1) + "a == 1",
            "a == " + String(repeating: "(", count: n) + "1" + String(repeating: ")", count: n),
            String(repeating: "(", count: 10_000) + "a" + String(repeating: ")", count: 10_000) + " == 1",
            Self.nestedSubqueries(n - 1),
        ]
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, 512 * 1024)
        var thread = pthread_t()
        let created = pthread_create(&thread, &attributes, { context in
            guard let context else { return nil }
            let run = Unmanaged<Run>.fromOpaque(context).takeUnretainedValue()
            for q in run.queries where (try? QueryParser.parse(q)) != nil { run.parsed += 1 }
            return nil
        }, Unmanaged.passUnretained(run).toOpaque())
        XCTAssertEqual(created, 0)
        pthread_join(thread, nil)
        XCTAssertEqual(run.parsed, run.queries.count)
    }
    #endif

    func testLongChains() {
        let terms = 10_000
        let started = ContinuousClock.now
        let or = (0..<terms).map { "age == \($0)" }.joined(separator: " || ")
        guard case .or(let ors)? = predicate(or) else { return XCTFail("not an OR") }
        XCTAssertEqual(ors.count, terms)
        XCTAssertEqual(shape(ors.last), cmp(path("age"), .equal, int(Int64(terms - 1))))
        let and = (0..<terms).map { "!(x.y[\($0)] != 'v')" }.joined(separator: " AND ")
        guard case .and(let ands)? = predicate(and) else { return XCTFail("not an AND") }
        XCTAssertEqual(ands.count, terms)
        // Alternating AND/OR: one OR of 5,000 ANDs of two.
        let mixed = (0..<terms).map { "a == \($0)" }.enumerated().map { $0.offset % 2 == 0 ? $0.element + " &&" : $0.element + " ||" }
            .joined(separator: " ") + " TRUEPREDICATE"
        guard case .or(let groups)? = predicate(mixed) else { return XCTFail("not an OR") }
        XCTAssertEqual(groups.count, terms / 2 + 1)
        // Linear: three chains of 10,000 terms take well under a second even in a debug build.
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(10))
    }

    // MARK: Fuzz

    func testFuzz() {
        let tokens = ["age", "name", "dogs", "$d", "$0", "$K0", "%@", "%K", "@links", ".@count", ".@size", ".@type", ".@sum", ".@values",
                      ".@keys", ".", "[", "]", "[c]", "[d]", "[cd]", "[0]", "[FIRST]", "[LAST]", "[SIZE]", "[*]", "['k']", "(", ")",
                      "{", "}", ",", "==", "=", "!=", "<>", "<", "<=", "=<", ">", ">=", "=>", "+", "-", "*", "/", "&&", "||", "!",
                      "AND", "OR", "NOT", "not", "IN", "in", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "TEXT", "BETWEEN",
                      "ANY", "ALL", "NONE", "SOME", "TRUEPREDICATE", "FALSEPREDICATE", "SUBQUERY", "SORT", "DISTINCT", "LIMIT",
                      "OFFSET", "ASC", "DESC", "true", "false", "null", "nil", "inf", "-inf", "nan", "42", "-7", "0x1F", "1.5",
                      ".5", "2e3", "1.5f", "'s'", "\"s\"", "'O\\'B'", "'\\u00e9'", "B64\"czE=\"", "T1:2", "2020-01-01@00:00:00",
                      "2020-01-01T00:00:00:5", "oid(5f0a1b2c3d4e5f6a7b8c9d0e)", "uuid(123e4567-e89b-12d3-a456-426614174000)",
                      "bin('x')", "obj('P', 1)", "O5", "L1:2", "é", "float\\ fees", "age-5", " ", "\n", "\t"]
        let fragments = ["'", "\"", "\\", "\\u", "0x", "1e", "T", "@", "%", "#", "&", "|", "$", "$K", "oid(", "uuid(", "B64\"", "2020-",
                         "\u{0}", "\u{7F}", "😀", "\u{301}"]
        let seeds = ["age > 30 && name BEGINSWITH[c] 'j' SORT(age DESC) LIMIT(10)",
                     "SUBQUERY(dogs, $d, $d.age > 4 AND $d.weight > 20).@count > 0",
                     "ANY tags IN {'a', 'b'} || @links.Person.dogs.@count == 0 DISTINCT(name) OFFSET(2)",
                     "d['k'] == $0 && l[FIRST] != nil && dogs.@sum.weight BETWEEN {1.5, 2e3}",
                     "!(a + b * 3 == 7) OR created > 2020-01-01@00:00:00 && id == oid(5f0a1b2c3d4e5f6a7b8c9d0e)"]
        var rng = SeededRandom(seed: 0x5EED_C0DE)
        var parsed = 0
        let started = ContinuousClock.now
        for i in 0..<20_000 {
            var text: String
            switch i % 4 {
            case 0, 1:
                // Tokens of the grammar in random order.
                text = ""
                for _ in 0..<(1 + rng.below(24)) {
                    text += tokens[rng.below(tokens.count)]
                    if rng.below(3) > 0 { text += " " }
                }
            case 2:
                // A valid query, mutated: characters deleted, duplicated, replaced or inserted.
                var scalars = Array(seeds[rng.below(seeds.count)].unicodeScalars)
                for _ in 0..<(1 + rng.below(4)) where !scalars.isEmpty {
                    let at = rng.below(scalars.count)
                    switch rng.below(4) {
                    case 0: scalars.remove(at: at)
                    case 1: scalars.insert(scalars[at], at: at)
                    case 2: scalars[at] = Array(fragments[rng.below(fragments.count)].unicodeScalars).first ?? " "
                    default: scalars.insert(contentsOf: Array(tokens[rng.below(tokens.count)].unicodeScalars), at: at)
                    }
                }
                text = String(String.UnicodeScalarView(scalars))
            default:
                // Random bytes, repaired into a String, with grammar fragments.
                var bytes: [UInt8] = []
                for _ in 0..<rng.below(40) {
                    if rng.below(4) == 0 {
                        bytes += Array(fragments[rng.below(fragments.count)].utf8)
                    } else {
                        bytes.append(UInt8(truncatingIfNeeded: rng.next()))
                    }
                }
                text = String(decoding: bytes, as: UTF8.self)
            }
            do {
                _ = try QueryParser.parse(text, argumentCount: rng.below(2) == 0 ? nil : rng.below(3))
                parsed += 1
            } catch {
                XCTAssertTrue(error.code == .querySyntax || error.code == .invalidArgument, "\(text): \(error)")
                XCTAssertTrue(error.message.contains("in query "), "\(text): \(error.message)")
            }
        }
        let elapsed = ContinuousClock.now - started
        XCTAssertLessThan(elapsed, .seconds(10), "the fuzz took \(elapsed)")
        // The mutated seeds keep some queries valid.
        XCTAssertGreaterThan(parsed, 100)
    }
}
