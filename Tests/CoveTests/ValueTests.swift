// Value types: Timestamp, ObjectId, Decimal128 (parse, print, compare, BID bits), Value's
// equality and messages, the order-preserving index keys and the mixed encoding.
import XCTest
import FoundationEssentials
@_spi(CoveBindings) @testable import Cove
@testable import CoveCore

final class ValueTests: XCTestCase {
    // MARK: Timestamp

    func testTimestampNormalizesAndOrders() {
        XCTAssertEqual(Timestamp(seconds: 1, nanoseconds: -500_000_000), Timestamp(seconds: 0, nanoseconds: 500_000_000))
        XCTAssertEqual(Timestamp(seconds: -1, nanoseconds: 500_000_000), Timestamp(seconds: 0, nanoseconds: -500_000_000))
        XCTAssertEqual(Timestamp(seconds: 0, nanoseconds: 1_500_000_000), Timestamp(seconds: 1, nanoseconds: 500_000_000))
        let t = Timestamp(seconds: -2, nanoseconds: 300)
        XCTAssertEqual(t.seconds, -1)
        XCTAssertEqual(t.nanoseconds, -999_999_700)
        let sorted = [Timestamp(seconds: -1, nanoseconds: -500_000_000), Timestamp(seconds: -1), Timestamp(seconds: 0, nanoseconds: -1),
                      Timestamp(seconds: 0), Timestamp(seconds: 0, nanoseconds: 1), Timestamp(seconds: 1)]
        XCTAssertEqual(sorted.shuffled().sorted(), sorted)
    }

    func testTimestampDateAndDescription() {
        let t = Timestamp(Date(timeIntervalSince1970: 1_700_000_000.25))
        XCTAssertEqual(t.seconds, 1_700_000_000)
        XCTAssertEqual(t.nanoseconds, 250_000_000)
        XCTAssertEqual(t.date.timeIntervalSince1970, 1_700_000_000.25)
        let n = Timestamp(Date(timeIntervalSince1970: -1.5))
        XCTAssertEqual(n.seconds, -1)
        XCTAssertEqual(n.nanoseconds, -500_000_000)
        XCTAssertEqual(Date(n).timeIntervalSince1970, -1.5)
        XCTAssertEqual(Timestamp(seconds: 0).description, "1970-01-01T00:00:00Z")
        XCTAssertEqual(Timestamp(seconds: 1_709_294_400).description, "2024-03-01T12:00:00Z")
        XCTAssertEqual(Timestamp(seconds: -1, nanoseconds: -500_000_000).description, "1969-12-31T23:59:58.5Z")
        XCTAssertEqual(Timestamp(seconds: 951_782_400 - 1, nanoseconds: 123).description, "2000-02-28T23:59:59.000000123Z")
    }

    // MARK: ObjectId

    func testObjectIdHex() throws {
        let o = try ObjectId("5F0A1b2c3d4e5f6071829304")
        XCTAssertEqual(o.description, "5f0a1b2c3d4e5f6071829304")
        XCTAssertEqual(o.bytes, [0x5f, 0x0a, 0x1b, 0x2c, 0x3d, 0x4e, 0x5f, 0x60, 0x71, 0x82, 0x93, 0x04])
        XCTAssertEqual(try ObjectId(bytes: o.bytes), o)
        XCTAssertEqual(o.timestampSeconds, 0x5f0a1b2c)
        for bad in ["", "5f0a1b2c3d4e5f607182930", "5f0a1b2c3d4e5f60718293045", "5f0a1b2c3d4e5f607182930g", "5f0a1b2c3d4e5f6071829é"] {
            XCTAssertThrowsError(try ObjectId(bad)) { error in
                XCTAssertEqual((error as? CoveError)?.code, .invalidArgument)
                XCTAssertTrue((error as? CoveError)?.message.contains("24 hex digits") ?? false)
            }
        }
        XCTAssertThrowsError(try ObjectId(bytes: [UInt8](repeating: 0, count: 11)))
    }

    func testObjectIdGenerateAndOrder() throws {
        let ids = (0..<1000).map { _ in ObjectId.generate() }
        XCTAssertEqual(Set(ids).count, 1000)
        let now = UInt32(Date().timeIntervalSince1970)
        XCTAssertLessThanOrEqual(now - ids[0].timestampSeconds, 2)
        XCTAssertEqual(Set(ids.map { Array($0.bytes[4..<9]) }).count, 1, "process random part")
        let a = try ObjectId("000000000000000000000001"), b = try ObjectId("000000000000000100000000"), c = try ObjectId("ff0000000000000000000000")
        XCTAssertEqual([c, a, b].sorted(), [a, b, c])
    }

    // MARK: Decimal128

    private func d(_ s: String) -> Decimal128 {
        do { return try Decimal128(s) } catch { XCTFail("\(s): \(error)"); return .nan }
    }

    func testDecimalBitPatterns() {
        XCTAssertEqual(d("1").high, 0x3040_0000_0000_0000)
        XCTAssertEqual(d("1").low, 1)
        XCTAssertEqual(d("-1.5").high, 0xB03E_0000_0000_0000)
        XCTAssertEqual(d("-1.5").low, 15)
        XCTAssertEqual(d("0").high, 0x3040_0000_0000_0000)
        XCTAssertEqual(d("0").low, 0)
        XCTAssertEqual(d("-0").high, 0xB040_0000_0000_0000)
        XCTAssertEqual(d("NaN").high, 0x7C00_0000_0000_0000)
        XCTAssertEqual(d("Inf").high, 0x7800_0000_0000_0000)
        XCTAssertEqual(d("-Infinity").high, 0xF800_0000_0000_0000)
        XCTAssertEqual(d("1E+10").high, 0x3054_0000_0000_0000)
        XCTAssertEqual(d("9.999999999999999999999999999999999E+6144").high, 0x5FFF_ED09_BEAD_87C0)
        XCTAssertEqual(d("9.999999999999999999999999999999999E+6144").low, 0x378D_8E63_FFFF_FFFF)
        XCTAssertEqual(d("1E-6176").high, 0)
        XCTAssertEqual(d("1E-6176").low, 1)
        XCTAssertEqual(d("1").bytes, [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x30])
        XCTAssertEqual(try Decimal128(bytes: d("-1.5").bytes), d("-1.5"))
        XCTAssertEqual(Decimal128(high: 0x6C10_0000_0000_0000, low: 0).description, "0", "non-canonical coefficient reads as zero")
    }

    func testDecimalParseAndPrint() {
        let cases: [(String, String)] = [
            ("1.50", "1.50"), ("-0.001", "-0.001"), ("1E+10", "1E+10"), ("1e10", "1E+10"), ("+12", "12"),
            ("0", "0"), ("-0", "-0"), ("0.000", "0.000"), ("0E+3", "0E+3"), ("00012.3400", "12.3400"),
            ("0.0000001", "1E-7"), ("0.000001", "0.000001"), ("1.5E-7", "1.5E-7"), ("123E-2", "1.23"),
            ("1.23E+5", "1.23E+5"), (".5", "0.5"), ("5.", "5"), ("NaN", "NaN"), ("-nan", "NaN"), ("inf", "Infinity"),
            ("-Infinity", "-Infinity"), ("1234567890123456789012345678901234", "1234567890123456789012345678901234"),
            ("12345678901234567890123456789012340000", "1.234567890123456789012345678901234E+37"),
            ("1E+6144", "1.000000000000000000000000000000000E+6144"), ("0E-9000", "0E-6176"), ("10E-6177", "1E-6176"),
        ]
        for (input, expected) in cases {
            XCTAssertEqual(d(input).description, expected, input)
            XCTAssertEqual(d(d(input).description), d(input), "round trip of \(input)")
        }
        for bad in ["", "-", "abc", "1.2.3", "1e", "1e+", "1x", "12345678901234567890123456789012345", "1E+6200", "1E-6177", " 1", "0x10"] {
            XCTAssertThrowsError(try Decimal128(bad), bad) { error in
                XCTAssertEqual((error as? CoveError)?.code, .invalidArgument)
            }
        }
        XCTAssertEqual(Decimal128(Int64(-42)).description, "-42")
        XCTAssertEqual(Decimal128(Int64.min).description, "-9223372036854775808")
        XCTAssertEqual(Decimal128(0.1).description, "0.1")
        XCTAssertEqual(Decimal128(-2.5e-10).description, "-2.5E-10")
        XCTAssertTrue(Decimal128(Double.nan).isNaN)
        XCTAssertEqual(Decimal128(-Double.infinity).description, "-Infinity")
        XCTAssertEqual(d("1.25").doubleValue, 1.25)
    }

    func testDecimalCompare() {
        XCTAssertEqual(d("1.5"), d("1.50"))
        XCTAssertEqual(d("1.5").hashValue, d("1.50").hashValue)
        XCTAssertEqual(d("0"), d("-0"))
        XCTAssertEqual(d("0E+5"), d("0.00"))
        XCTAssertEqual(d("1E+3"), d("1000"))
        XCTAssertEqual(d("NaN"), d("NaN"))
        XCTAssertNotEqual(d("1.5"), d("1.51"))
        let ordered = ["NaN", "-Infinity", "-1E+100", "-10", "-9.99", "-1E-100", "0", "1E-6176", "0.001", "1.5", "1.51", "2", "1E+1", "12", "9.999999999999999999999999999999999E+6144", "Infinity"].map(d)
        for (i, a) in ordered.enumerated() {
            for (j, b) in ordered.enumerated() {
                XCTAssertEqual(a < b, i < j, "\(a) < \(b)")
                XCTAssertEqual(a == b, i == j, "\(a) == \(b)")
            }
        }
    }

    // MARK: Value

    func testValueEqualityAndMessages() {
        XCTAssertEqual(Value.double(-0.0), .double(0))
        XCTAssertEqual(Value.double(.nan), .double(.nan))
        XCTAssertEqual(Value.float(.nan), .float(.nan))
        XCTAssertEqual(Set([Value.double(.nan), .double(.nan), .double(0), .double(-0.0)]).count, 2)
        XCTAssertNotEqual(Value.int(1), .double(1))
        XCTAssertNotEqual(Value.string("é"), .string("e\u{301}"), "bytes, not canonical equivalence")
        XCTAssertEqual(Value.decimal128(d("1.5")), .decimal128(d("1.50")))
        XCTAssertEqual(Value.string("x").typedDescription, "string \"x\"")
        XCTAssertEqual(Value.int(5).typedDescription, "int 5")
        XCTAssertEqual(Value.null.typedDescription, "null")
        XCTAssertEqual(Value.timestamp(Timestamp(seconds: 0)).typeName, "date")
        XCTAssertEqual(Value.data([0x0a, 0xff]).description, "<0aff>")
        XCTAssertEqual(Value.link(ObjectLink(classKey: 2, objectKey: 17)).description, "link(class 2, object 17)")
        XCTAssertEqual(Value.uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!).description, "e621e1f8-c36c-495a-93fc-0c247a3e6e5f")
        XCTAssertEqual(Value.string("a\"b").description, #""a\"b""#)
    }

    // MARK: Index keys

    private func lexicographicallyLess(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.lexicographicallyPrecedes(b)
    }

    /// Sorting by value equals sorting by key bytes; equal values have equal keys; no key is a
    /// proper prefix of another.
    private func checkOrder(_ values: [Value], less: (Value, Value) -> Bool, file: StaticString = #filePath, line: UInt = #line) {
        let keys = values.map { $0.indexKey() }
        for i in values.indices {
            for j in values.indices {
                let vLess = less(values[i], values[j])
                let kLess = lexicographicallyLess(keys[i], keys[j])
                if vLess != kLess {
                    XCTFail("\(values[i]) < \(values[j]) is \(vLess) but keys say \(kLess)", file: file, line: line)
                    return
                }
                XCTAssertEqual(values[i] == values[j], keys[i] == keys[j], "\(values[i]) == \(values[j])", file: file, line: line)
                if keys[i] != keys[j], keys[j].starts(with: keys[i]) {
                    XCTFail("key of \(values[i]) prefixes key of \(values[j])", file: file, line: line)
                }
            }
        }
    }

    func testIndexKeyOrderPerType() throws {
        var rng = SystemRandomNumberGenerator()
        let ints = ([0, 1, -1, .max, .min] + (0..<60).map { _ in Int64.random(in: .min ... .max, using: &rng) }).map(Value.int)
        checkOrder(ints) { if case .int(let a) = $0, case .int(let b) = $1 { return a < b }; return false }

        func dbl(_ v: Value) -> Double { if case .double(let x) = v { return x }; return 0 }
        let doubles = ([0, -0.0, .nan, .infinity, -.infinity, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .greatestFiniteMagnitude, 1, -1]
            + (0..<60).map { _ in Double(bitPattern: UInt64.random(in: 0 ... .max, using: &rng)) }.filter { !$0.isNaN }).map(Value.double)
        checkOrder(doubles) { a, b in
            let x = dbl(a), y = dbl(b)
            if x.isNaN { return !y.isNaN }
            return !y.isNaN && x < y
        }
        func flt(_ v: Value) -> Float { if case .float(let x) = v { return x }; return 0 }
        let floats = ([0, -0.0, .nan, .infinity, -.infinity, 1, -1] + (0..<40).map { _ in Float.random(in: -1e30...1e30, using: &rng) }).map(Value.float)
        checkOrder(floats) { a, b in
            let x = flt(a), y = flt(b)
            if x.isNaN { return !y.isNaN }
            return !y.isNaN && x < y
        }

        let strings = ["", "a", "a\0", "a\0\0", "a\0b", "ab", "b", "\0", "\0a", "é", "z", "😀", "aa", "a\u{1}"]
            + (0..<30).map { _ in String((0..<Int.random(in: 0..<4, using: &rng)).map { _ in ["a", "b", "\0", "é", "\u{FF}"].randomElement(using: &rng)! }) }
        checkOrder(strings.map(Value.string)) { a, b in
            if case .string(let x) = a, case .string(let y) = b { return x.utf8.lexicographicallyPrecedes(y.utf8) }
            return false
        }
        let datas: [[UInt8]] = [[], [0], [0, 0], [0, 0xFF], [0, 1], [1], [0xFF], [0xFF, 0], [1, 0, 2]]
            + (0..<30).map { _ in (0..<Int.random(in: 0..<4, using: &rng)).map { _ in [0, 1, 0xFF].randomElement(using: &rng)! } }
        checkOrder(datas.map(Value.data)) { a, b in
            if case .data(let x) = a, case .data(let y) = b { return x.lexicographicallyPrecedes(y) }
            return false
        }

        let stamps = ([Timestamp(seconds: -1, nanoseconds: -1), Timestamp(seconds: 0, nanoseconds: -1), Timestamp(seconds: 0)]
            + (0..<50).map { _ in Timestamp(seconds: Int64.random(in: -3...3, using: &rng), nanoseconds: Int32.random(in: -999_999_999...999_999_999, using: &rng)) })
        checkOrder(stamps.map(Value.timestamp)) { a, b in
            if case .timestamp(let x) = a, case .timestamp(let y) = b { return x < y }
            return false
        }

        let decimals = ["NaN", "-Infinity", "-1E+100", "-10", "-10.0", "-9.99", "-1E-100", "0", "-0", "0.00", "1E-6176", "1.5", "1.50", "1.51", "2", "1E+1", "10", "Infinity"].map(d)
            + (0..<40).map { _ in d("\(Int64.random(in: -999...999, using: &rng))E\(Int.random(in: -5...5, using: &rng))") }
        checkOrder(decimals.map(Value.decimal128)) { a, b in
            if case .decimal128(let x) = a, case .decimal128(let y) = b { return x < y }
            return false
        }

        let oids = (0..<30).map { _ in try! ObjectId(bytes: (0..<12).map { _ in UInt8.random(in: 0...2, using: &rng) }) }
        checkOrder(oids.map(Value.objectId)) { a, b in
            if case .objectId(let x) = a, case .objectId(let y) = b { return x < y }
            return false
        }
        let uuids = (0..<30).map { _ in UUID() }
        checkOrder(uuids.map(Value.uuid)) { a, b in
            if case .uuid(let x) = a, case .uuid(let y) = b { return x.rfc4122Bytes.lexicographicallyPrecedes(y.rfc4122Bytes) }
            return false
        }
        checkOrder([Value.bool(false), .bool(true)]) { a, b in a == .bool(false) && b == .bool(true) }
        let links = (0..<30).map { _ in ObjectLink(classKey: UInt32.random(in: 0...2, using: &rng), objectKey: Int64.random(in: -2...2, using: &rng)) }
        checkOrder(links.map(Value.link)) { a, b in
            if case .link(let x) = a, case .link(let y) = b { return (x.classKey, x.objectKey) < (y.classKey, y.objectKey) }
            return false
        }
    }

    func testIndexKeyLayout() {
        XCTAssertEqual(Value.null.indexKey(), [0])
        XCTAssertLessThan(Value.null.indexKey().lexicographicallyPrecedes(Value.bool(false).indexKey()) ? 0 : 1, 1, "null first")
        XCTAssertEqual(Value.int(1).indexKey(), [Value.Tag.int.rawValue, 0x80, 0, 0, 0, 0, 0, 0, 1])
        XCTAssertEqual(Value.string("a\0").indexKey(), [Value.Tag.string.rawValue, 0x61, 0, 0xFF, 0, 0])
        let entry = Value.indexEntryKey(Value.string("a").indexKey(), objectKey: 258)
        XCTAssertEqual(entry, [Value.Tag.string.rawValue, 0x61, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2])
        XCTAssertEqual(entry.withUnsafeBytes { Value.objectKey(ofIndexEntry: $0) }, 258)
        // Entries of a shorter string sort before those of a longer one whatever their object keys.
        let e1 = Value.indexEntryKey(Value.string("a").indexKey(), objectKey: .max)
        let e2 = Value.indexEntryKey(Value.string("a\0").indexKey(), objectKey: 0)
        XCTAssertTrue(e1.lexicographicallyPrecedes(e2))
        XCTAssertEqual(Value.string("ÄBc").indexKeyCaseFolded(), Value.string("äbC").indexKeyCaseFolded())
        XCTAssertNotEqual(Value.string("ÄBc").indexKey(), Value.string("äbC").indexKey())
        XCTAssertEqual(Value.int(3).indexKeyCaseFolded(), Value.int(3).indexKey())
    }

    // MARK: Mixed

    func testMixedRoundTrips() throws {
        let values: [Value] = [
            .null, .bool(true), .bool(false), .int(.min), .int(-1), .float(1.5), .float(-.infinity), .double(.pi), .double(-0.0),
            .string(""), .string("héllo\0😀"), .data([]), .data([0, 1, 0xFF]), .timestamp(Timestamp(seconds: -5, nanoseconds: -7)),
            .decimal128(d("-1.50")), .decimal128(d("NaN")), .objectId(ObjectId.generate()), .uuid(UUID()),
            .link(ObjectLink(classKey: 7, objectKey: 123_456_789_012)),
        ]
        for v in values {
            let bytes = v.encodeMixed()
            XCTAssertEqual(bytes.first, v.tag.rawValue)
            let back = try Value.decodeMixed(bytes)
            XCTAssertEqual(back, v)
            XCTAssertEqual(back.indexKey(), v.indexKey())
        }
        XCTAssertEqual(Value.int(1).encodeMixed(), [Value.Tag.int.rawValue, 1, 0, 0, 0, 0, 0, 0, 0])
        XCTAssertEqual(Value.decimal128(d("1")).encodeMixed(), [Value.Tag.decimal128.rawValue] + d("1").bytes)
        let corrupt: [[UInt8]] = [[], [200], [Value.Tag.int.rawValue, 1], [Value.Tag.bool.rawValue, 2], [Value.Tag.null.rawValue, 0],
                                  [Value.Tag.string.rawValue, 0xC3], [Value.Tag.objectId.rawValue] + [UInt8](repeating: 0, count: 11),
                                  [Value.Tag.timestamp.rawValue, 1, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF]]
        for c in corrupt {
            XCTAssertThrowsError(try Value.decodeMixed(c), "\(c)") { error in
                XCTAssertEqual((error as? CoveError)?.code, .corrupt)
            }
        }
    }

    // MARK: Strings from stored bytes

    func testStringFromUTF8BytesRefusesWhatIsNotUTF8() {
        for text in ["", "a", "person-7-xxxxxxx", "größe", "日本語", "😀 and \u{0}"] {
            XCTAssertEqual(String(utf8: Array(text.utf8)), text)
            XCTAssertEqual(String(utf8: ArraySlice([0x20] + Array(text.utf8)).dropFirst()), text)
        }
        let invalid: [[UInt8]] = [
            [0x80],                          // a lone continuation byte
            [0xC3],                          // a truncated two-byte sequence
            [0xF0, 0x9F, 0x98, 0x41],        // a truncated four-byte sequence: repaired to one
                                             // U+FFFD, three bytes for three, so sizes match
            [0xED, 0xA0, 0x80],              // an encoded surrogate
            [0xC0, 0xAF],                    // an overlong encoding
            [0x61, 0xFF, 0x62],
        ]
        for bytes in invalid {
            XCTAssertNil(String(utf8: bytes), "\(bytes)")
            XCTAssertNil(bytes.withUnsafeBytes { String(utf8: $0) }, "\(bytes)")
        }
    }
}
