// The JSON value: parsing every form, exact numbers, escapes and surrogate pairs, errors with
// line and column, invalid UTF-8, nesting limits, and compact and pretty serialization.
import XCTest
@testable import Cove
@testable import CoveCore

final class JSONTests: XCTestCase {
    private func parseError(_ text: String) -> String {
        do {
            _ = try JSONValue(parsing: text)
            return "parsed"
        } catch {
            XCTAssertEqual(error.code, .invalidArgument)
            return error.message
        }
    }

    func testParsesEveryKind() throws {
        let v = try JSONValue(parsing: #" { "a": [1, -2, 3.5, 1e3, true, false, null], "b": {"c": "d"}, "a": 0 } "#)
        XCTAssertEqual(v, .object([
            JSONMember("a", .array([.int(1), .int(-2), .double(3.5), .double(1000), .bool(true), .bool(false), .null])),
            JSONMember("b", .object([JSONMember("c", .string("d"))])),
            JSONMember("a", .int(0)),
        ]))
        XCTAssertEqual(v["b"]?["c"], .string("d"))
        XCTAssertEqual(v["a"], .array([.int(1), .int(-2), .double(3.5), .double(1000), .bool(true), .bool(false), .null]), "first of duplicates")
        XCTAssertEqual(try JSONValue(parsing: "[]"), .array([]))
        XCTAssertEqual(try JSONValue(parsing: "{}"), .object([]))
        XCTAssertEqual(try JSONValue(parsing: "\"\""), .string(""))
    }

    func testNumbersStayExact() throws {
        XCTAssertEqual(try JSONValue(parsing: "9223372036854775807"), .int(.max))
        XCTAssertEqual(try JSONValue(parsing: "-9223372036854775808"), .int(.min))
        XCTAssertEqual(try JSONValue(parsing: "9223372036854775808"), .double(9223372036854775808))
        XCTAssertEqual(try JSONValue(parsing: "1.0"), .double(1))
        guard case .double(let z) = try JSONValue(parsing: "-0") else { return XCTFail("-0 is a double") }
        XCTAssertEqual(z.sign, .minus)
        XCTAssertEqual(try JSONValue(parsing: "0.1"), .double(0.1))
        XCTAssertEqual(try JSONValue(parsing: "2.5E-3"), .double(0.0025))
        XCTAssertTrue(parseError("1e400").contains("range"))
        XCTAssertTrue(parseError("01").contains("leading zero"))
        XCTAssertTrue(parseError("1.").contains("digit after '.'"))
        XCTAssertTrue(parseError("-").contains("expected a digit"))
        XCTAssertTrue(parseError("1e+").contains("exponent"))
        XCTAssertTrue(parseError("+1").contains("expected a value"))
    }

    func testEscapesAndSurrogatePairs() throws {
        let v = try JSONValue(parsing: #""q\" b\\ s\/ \b\f\n\r\t \u0041\u00e9\u20AC \ud83d\ude00 \u0000""#)
        XCTAssertEqual(v, .string("q\" b\\ s/ \u{8}\u{C}\n\r\t Aé€ 😀 \u{0}"))
        XCTAssertEqual(try JSONValue(parsing: "\"é😀\""), .string("é😀"))
        XCTAssertTrue(parseError(#""\ud83d""#).contains("low surrogate"))
        XCTAssertTrue(parseError(#""\ud83d\u0041""#).contains("low surrogate"))
        XCTAssertTrue(parseError(#""\ude00""#).contains("high surrogate"))
        XCTAssertTrue(parseError(#""\x""#).contains("after a backslash"))
        XCTAssertTrue(parseError(#""\u12g4""#).contains("hex digits"))
        XCTAssertTrue(parseError("\"a\tb\"").contains("control character"))
        XCTAssertTrue(parseError("\"abc").contains("end the string"))
    }

    func testErrorsGiveLineAndColumn() {
        XCTAssertEqual(parseError("{\n  \"a\": 1,\n  \"b\" 2\n}"),
                       "invalid JSON at line 3, column 7: expected ':' after an object key, found '2'")
        XCTAssertEqual(parseError("[1, 2"), "invalid JSON at line 1, column 6: expected ',' or ']' in an array, found end of input")
        XCTAssertEqual(parseError("{\"é\": 1 x"), "invalid JSON at line 1, column 9: expected ',' or '}' in an object, found 'x'")
        XCTAssertEqual(parseError("[1] 2"), "invalid JSON at line 1, column 5: expected end of input, found '2'")
        XCTAssertEqual(parseError(""), "invalid JSON at line 1, column 1: expected a value, found end of input")
        XCTAssertEqual(parseError("tru"), "invalid JSON at line 1, column 4: expected 'true', found end of input")
        XCTAssertEqual(parseError("{1: 2}"), "invalid JSON at line 1, column 2: expected a string key, found '1'")
        XCTAssertEqual(parseError("[1,]"), "invalid JSON at line 1, column 4: expected a value, found ']'")
    }

    func testRefusesInvalidUTF8() {
        func bytesError(_ bytes: [UInt8]) -> String {
            do { _ = try JSONValue(parsing: bytes); return "parsed" } catch { return error.message }
        }
        let q = UInt8(ascii: "\"")
        XCTAssertTrue(bytesError([q, 0xC3, q]).contains("valid UTF-8"), "cut short")
        XCTAssertTrue(bytesError([q, 0xC0, 0xAF, q]).contains("valid UTF-8"), "overlong")
        XCTAssertTrue(bytesError([q, 0xED, 0xA0, 0x80, q]).contains("valid UTF-8"), "surrogate")
        XCTAssertTrue(bytesError([q, 0xF4, 0x90, 0x80, 0x80, q]).contains("valid UTF-8"), "beyond U+10FFFF")
        XCTAssertTrue(bytesError([q, 0xFF, q]).contains("valid UTF-8"))
        XCTAssertTrue(bytesError([0xEF, 0xBB, 0xBF, q, q]).contains("found byte 0xEF"), "no BOM outside strings")
        XCTAssertEqual(try JSONValue(parsing: [q, 0xF0, 0x9F, 0x98, 0x80, q]), .string("😀"))
    }

    func testNestingLimit() throws {
        let ok = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        XCTAssertNoThrow(try JSONValue(parsing: ok))
        let deep = String(repeating: "[", count: 513) + String(repeating: "]", count: 513)
        XCTAssertTrue(parseError(deep).contains("nesting deeper than 512"))
        let deeper = String(repeating: "{\"a\":", count: 100_000)
        XCTAssertTrue(parseError(deeper).contains("nesting deeper than 512"))
    }

    func testSerializesCompactAndPretty() throws {
        let v = JSONValue.object([
            JSONMember("z", .int(1)), JSONMember("a", .array([.double(0.1), .double(1e20), .double(-0.0), .null, .bool(true)])),
            JSONMember("e", .object([])), JSONMember("l", .array([])), JSONMember("s", .string("a\"\\\n\u{1}é")),
        ])
        XCTAssertEqual(v.serialized(), #"{"z":1,"a":[0.1,1e+20,-0.0,null,true],"e":{},"l":[],"s":"a\"\\\n\u0001é"}"#)
        XCTAssertEqual(v.serialized(pretty: true), """
        {
          "z": 1,
          "a": [
            0.1,
            1e+20,
            -0.0,
            null,
            true
          ],
          "e": {},
          "l": [],
          "s": "a\\"\\\\\\n\\u0001é"
        }
        """)
        XCTAssertEqual(JSONValue.double(.nan).serialized(), "null")
        XCTAssertEqual(try JSONValue(parsing: v.serialized()), v)
        XCTAssertEqual(try JSONValue(parsing: v.serialized(pretty: true)), v)
    }

    func testRandomRoundTrips() throws {
        var rng = SystemRandomNumberGenerator()
        func random(_ depth: Int) -> JSONValue {
            switch Int.random(in: 0..<(depth > 3 ? 5 : 7), using: &rng) {
            case 0: return .null
            case 1: return .bool(Bool.random(using: &rng))
            case 2: return .int(Int64.random(in: .min ... .max, using: &rng))
            case 3:
                let d = Double(bitPattern: UInt64.random(in: 0 ... .max, using: &rng))
                return d.isFinite ? .double(d) : .double(Double.random(in: -1e6...1e6, using: &rng))
            case 4:
                let scalars = (0..<Int.random(in: 0..<8, using: &rng)).map { _ in
                    Unicode.Scalar(UInt32.random(in: 0..<0xD800, using: &rng)) ?? "x"
                }
                return .string(String(String.UnicodeScalarView(scalars)))
            case 5: return .array((0..<Int.random(in: 0..<4, using: &rng)).map { _ in random(depth + 1) })
            default:
                return .object((0..<Int.random(in: 0..<4, using: &rng)).map { i in JSONMember("k\(i)", random(depth + 1)) })
            }
        }
        for _ in 0..<300 {
            let v = random(0)
            XCTAssertEqual(try JSONValue(parsing: v.serialized()), v)
            XCTAssertEqual(try JSONValue(parsing: v.serialized(pretty: true)), v)
        }
    }
}
