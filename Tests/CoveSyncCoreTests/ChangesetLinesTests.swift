// The JSON-lines encoding: canonical text, round trips of every operation and value type, a
// golden line, and a strict reader: every malformed field is refused with the line and field
// named, and truncated or corrupted input never does anything but decode or throw.
import XCTest
import CoveSyncCore

final class ChangesetLinesTests: XCTestCase {
    /// A changeset of `count` random operations of every kind by `client`.
    private func randomChangeset(_ random: inout SeededRandom, client: UInt64, version: UInt64, count: Int) throws -> Changeset {
        let source = SyncClockSource(node: client, after: clock(1_700_000_000_000, 0, client))
        var builder = ChangesetBuilder(clock: source, version: version)
        for _ in 0..<count {
            let object = ref(random.pick(["Dog", "Person", "_x9"]), random.primaryKey())
            let prop = random.pick(["name", "tags", "_p", "a1"])
            let element = clock(UInt64(random.int(0...1_800_000_000_000)), UInt32(random.int(0...3)), UInt64(random.int(0...9)))
            let pos = try ListPosition.between(nil, nil, node: random.next())
            let change: SyncOperation.Change
            switch random.below(11) {
            case 0:
                var values: [String: SyncValue] = [:]
                for _ in 0..<random.int(0...4) { values[random.pick(["a", "b", "c_d", "Z"])] = random.value() }
                change = .create(values: values)
            case 1: change = .setProperty(prop, random.value())
            case 2: change = .delete
            case 3: change = .listInsert(property: prop, position: pos, value: random.value())
            case 4: change = .listRemove(property: prop, element: element)
            case 5: change = .listMove(property: prop, element: element, position: pos)
            case 6: change = .listSet(property: prop, element: element, value: random.value())
            case 7: change = .setAdd(property: prop, value: random.value())
            case 8: change = .setRemove(property: prop, value: random.value())
            case 9: change = .mapSet(property: prop, key: random.text(maxLength: 4), value: random.value())
            default: change = .mapRemove(property: prop, key: random.text(maxLength: 4))
            }
            try builder.append(object, change, wall: 1_700_000_000_000 + UInt64(random.int(0...2)))
        }
        return try builder.finish(wall: 1_700_000_000_005)
    }

    private func sample() throws -> [Changeset] {
        var random = SeededRandom(seed: 5)
        return try (1...3).map { v throws in try randomChangeset(&random, client: UInt64(v) * 1000, version: UInt64(v), count: 6) }
    }

    func testRoundTripOfEveryKindAndValue() throws {
        var random = SeededRandom(seed: 1)
        var changesets: [Changeset] = []
        for i in 0..<200 {
            changesets.append(try randomChangeset(&random, client: random.next(), version: UInt64(i), count: random.int(0...8)))
        }
        let text = ChangesetLines.encode(changesets)
        XCTAssertEqual(text.split(separator: "\n").count, changesets.count)
        let decoded = try ChangesetLines.decode(text)
        XCTAssertEqual(decoded, changesets)
        // The encoding is canonical: decoding and encoding again gives the same text.
        XCTAssertEqual(ChangesetLines.encode(decoded), text)
    }

    func testGoldenLine() throws {
        let dog = ref("Dog", .string("rex"))
        let c = clock(0x18b_cf2a_1c00, 0, 7)
        let element = clock(0x18b_cf2a_1c00, 1, 7)
        let ops = [
            try SyncOperation(clock: c, object: dog, change: .create(values: [
                "name": .string("Rex \"the\" dog"), "age": .int(3), "weight": .double(12.5), "photo": .data([0, 1, 2, 255]),
                "born": .date(try SyncDate(seconds: 1_700_000_000, nanoseconds: 5)), "owner": .link(ref("Person", .int(4))),
                "tag": .objectId(try SyncObjectId(hex: "5f1b2c3d4e5f60718293a4b5")), "alive": .bool(true), "vet": .null,
            ])),
            try SyncOperation(clock: element, object: dog, change: .listInsert(property: "toys", position: position("V"), value: .string("ball"))),
            try SyncOperation(clock: clock(0x18b_cf2a_1c00, 2, 7), object: dog, change: .mapSet(property: "notes", key: "vet", value: .double(.nan))),
        ]
        let changeset = try Changeset(clientId: 7, clientVersion: 3, clock: clock(0x18b_cf2a_1c00, 3, 7), operations: ops)
        let expected = #"{"client":7,"version":3,"clock":"018bcf2a1c00-00000003-0000000000000007","ops":["#
            + #"{"op":"create","clock":"018bcf2a1c00-00000000-0000000000000007","class":"Dog","key":"rex","values":{"#
            + #""age":3,"alive":true,"born":{"date":[1700000000,5]},"name":"Rex \"the\" dog","owner":{"link":{"class":"Person","key":4}},"#
            + #""photo":{"data":"AAEC/w=="},"tag":{"oid":"5f1b2c3d4e5f60718293a4b5"},"vet":null,"weight":{"double":12.5}}},"#
            + #"{"op":"list.insert","clock":"018bcf2a1c00-00000001-0000000000000007","class":"Dog","key":"rex","prop":"toys","pos":"V","value":"ball"},"#
            + #"{"op":"map.set","clock":"018bcf2a1c00-00000002-0000000000000007","class":"Dog","key":"rex","prop":"notes","mapKey":"vet","value":{"double":"nan"}}]}"#
        XCTAssertEqual(ChangesetLines.encode(changeset), expected)
        XCTAssertEqual(try ChangesetLines.decodeLine(expected), changeset)
    }

    /// `line` (a changeset with one operation, given as its members after `"op":`) must fail with
    /// a message that holds `message`.
    private func assertRefused(_ line: String, _ message: String, limits: ChangesetLimits = ChangesetLimits(),
                               file: StaticString = #filePath, lineNumber: UInt = #line) {
        XCTAssertThrowsError(try ChangesetLines.decode(line, limits: limits), file: file, line: lineNumber) { error in
            guard let error = error as? SyncError else { return XCTFail("not a SyncError: \(error)", file: file, line: lineNumber) }
            XCTAssertEqual(error.code, .malformedEncoding, file: file, line: lineNumber)
            XCTAssertTrue(error.message.contains(message), "\(error.message) lacks \(message)", file: file, line: lineNumber)
        }
    }

    func testMalformedFieldsAreRefusedByName() {
        let c0 = "018bcf2a1c00-00000000-0000000000000007", c1 = "018bcf2a1c00-00000001-0000000000000007"
        func line(_ op: String, client: String = "7", clock: String = c1) -> String {
            #"{"client":\#(client),"version":1,"clock":"\#(clock)","ops":[{"op":\#(op)}]}"#
        }
        let ok = line(#""set","clock":"\#(c0)","class":"Dog","key":1,"prop":"age","value":4"#)
        XCTAssertNoThrow(try ChangesetLines.decode(ok))
        assertRefused(line(#""explode","clock":"\#(c0)","class":"Dog","key":1"#), "line 1: field 'ops[0].op': unknown operation kind 'explode'")
        assertRefused(line(#""set","clock":"018bcf2a1c00-0000000-0000000000000007","class":"Dog","key":1,"prop":"age","value":4"#),
                      "field 'ops[0].clock': invalid clock")
        assertRefused(line(#""set","clock":"\#(c0)","class":"Dog","key":1,"prop":"age""#), "field 'ops[0]': missing member 'value'")
        assertRefused(line(#""set","clock":"\#(c0)","class":"Dog","key":1,"prop":"age","value":4,"extra":1"#), "unknown member 'extra'")
        assertRefused(line(#""set","clock":"\#(c0)","class":"Dog","key":1.5,"prop":"age","value":4"#), "field 'ops[0].key': expected an integer")
        assertRefused(line(#""set","clock":"\#(c0)","class":"Dog","key":true,"prop":"age","value":4"#), "a primary key is an int, string, ObjectId or UUID")
        assertRefused(line(#""set","clock":"\#(c0)","class":"Dog","key":1,"prop":"age","value":9223372036854775808"#), "out of the 64-bit signed range")
        assertRefused(line(#""set","clock":"\#(c0)","class":"Dog","key":1,"prop":"age","value":[1]"#), "field 'ops[0].value': expected a value, got an array")
        assertRefused(line(#""set","clock":"\#(c0)","class":"Dog","key":1,"prop":"age","value":{"int":1}"#), "unknown value type 'int'")
        assertRefused(line(#""set","clock":"\#(c0)","class":"Dog","key":1,"prop":"age","value":{"double":1e999}"#), "out of a double's range")
        assertRefused(line(#""set","clock":"\#(c0)","class":"Dog","key":1,"prop":"age","value":{"data":"AAE"}"#), "field 'ops[0].value.data': expected base64")
        assertRefused(line(#""set","clock":"\#(c0)","class":"Dog","key":1,"prop":"age","value":{"data":"AAF="}"#), "expected base64")
        assertRefused(line(#""set","clock":"\#(c0)","class":"Dog","key":1,"prop":"age","value":{"date":[1,-1]}"#), "different signs")
        assertRefused(line(#""set","clock":"\#(c0)","class":"Dog","key":1,"prop":"age","value":{"oid":"12"}"#), "invalid ObjectId")
        assertRefused(line(#""set","clock":"\#(c0)","class":"Dog","key":1,"prop":"age","value":{"decimal":"1..2"}"#), "invalid decimal128")
        assertRefused(line(#""set","clock":"\#(c0)","class":"Dog","key":1,"prop":"age","value":{"link":{"class":"Dog"}}"#), "field 'ops[0].value.link': missing member 'key'")
        assertRefused(line(#""set","clock":"\#(c0)","class":"Dog","key":1,"prop":"age","value":{"double":1,"data":""}"#), "one member naming its type")
        assertRefused(line(#""set","clock":"\#(c0)","class":"Dog house","key":1,"prop":"age","value":4"#), "field 'ops[0].class': invalid class name")
        assertRefused(line(#""set","clock":"\#(c0)","class":"Dog","key":1,"prop":"1age","value":4"#), "field 'ops[0].prop': invalid property name")
        assertRefused(line(#""list.move","clock":"\#(c0)","class":"Dog","key":1,"prop":"toys","elem":"\#(c0)","pos":"V0""#), "field 'ops[0].pos': invalid list position")
        assertRefused(line(#""delete","clock":"\#(c0)","class":"Dog","key":1"#, client: "8", clock: "018bcf2a1c00-00000001-0000000000000008"),
                      "operation 0 has clock 018bcf2a1c00-00000000-0000000000000007 of node 7, not of client 8")
        assertRefused(line(#""delete","clock":"\#(c1)","class":"Dog","key":1"#, clock: c0), "changeset clock")
        assertRefused(#"{"client":7,"version":-1,"clock":"\#(c0)","ops":[]}"#, "field 'version': integer -1 is out of the 64-bit unsigned range")
        assertRefused(#"{"client":7,"version":1,"clock":"\#(c0)","ops":{}}"#, "field 'ops': expected an array")
        assertRefused(#"{"client":7,"version":1,"clock":"\#(c0)"}"#, "field 'changeset': missing member 'ops'")
        assertRefused(#"[]"#, "field 'changeset': expected an object")
        let two = #"{"op":"delete","clock":"\#(c0)","class":"Dog","key":1},{"op":"delete","clock":"\#(c0)","class":"Dog","key":2}"#
        assertRefused(#"{"client":7,"version":1,"clock":"\#(c1)","ops":[\#(two)]}"#, "operation 1 has clock \(c0), not after")
    }

    func testMalformedJSONIsRefusedWithLineAndByte() {
        let c0 = "018bcf2a1c00-00000000-0000000000000007"
        let good = #"{"client":7,"version":1,"clock":"\#(c0)","ops":[]}"#
        XCTAssertEqual(try ChangesetLines.decode(good + "\n" + good + "\n").count, 2)
        assertRefused(good + "\n\n" + good, "line 2: an empty line")
        assertRefused(good + "\n" + good + "x", "line 2, byte 83: expected the end of the line after the value")
        assertRefused(#"{"client":7,"client":7}"#, "line 1, byte 13: duplicate member \"client\"")
        assertRefused(#"{"client":07}"#, "may not start with 0")
        assertRefused(#"{"client":7,}"#, "expected a member name in quotes")
        assertRefused(#"{"client":"\ud800"}"#, "a high surrogate escape without a low one")
        assertRefused(#"{"client":"\q"}"#, "invalid escape")
        assertRefused("{\"client\":\"\u{1}\"}", "a control character in a string must be escaped")
        assertRefused(#"{"client":NaN}"#, "expected a value, found 'N'")
        XCTAssertThrowsError(try ChangesetLines.decode(bytes: Array(#"{"client":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8))) { error in
            XCTAssertTrue("\(error)".contains("not valid UTF-8"), "\(error)")
        }
        let small = ChangesetLimits(maxLineBytes: 100, maxStringBytes: 10, maxOperations: 1, maxDepth: 3)
        assertRefused(#"{"client":"12345678901"}"#, "a string longer than 10 bytes", limits: small)
        assertRefused(#"[[[[1]]]]"#, "nesting deeper than 3 levels", limits: small)
        assertRefused(String(repeating: " ", count: 101), "101 bytes, more than the 100", limits: small)
        let ops = #"{"op":"delete","clock":"\#(c0)","class":"D","key":1}"#
        assertRefused(#"{"client":7,"version":1,"clock":"\#(c0)","ops":[\#(ops),\#(ops)]}"#, "2 operations, more than the 1",
                      limits: ChangesetLimits(maxOperations: 1))
        // Deep nesting under the default limit fails cleanly, without deep recursion.
        assertRefused(String(repeating: "[", count: 100_000), "nesting deeper than 8 levels")
    }

    func testTruncationAtEveryByteDecodesAPrefixOrThrows() throws {
        let changesets = try sample()
        let bytes = Array(ChangesetLines.encode(changesets).utf8)
        var decodedSome = 0
        for cut in 0..<bytes.count {
            do {
                let decoded = try ChangesetLines.decode(bytes: Array(bytes[..<cut]))
                // Only whole lines decode, and they are the sample's first ones.
                XCTAssertEqual(decoded, Array(changesets.prefix(decoded.count)), "cut at \(cut)")
                decodedSome += 1
            } catch {
                XCTAssertEqual(error.code, .malformedEncoding)
            }
        }
        // The cuts right after each line's end (with or without its line feed) and the empty text.
        XCTAssertEqual(decodedSome, 1 + 2 * (changesets.count - 1) + 1)
    }

    func testRandomByteFlipsNeverCrash() throws {
        let bytes = Array(ChangesetLines.encode(try sample()).utf8)
        var random = SeededRandom(seed: 99)
        var failures = 0
        for _ in 0..<3000 {
            var corrupt = bytes
            for _ in 0..<random.int(1...3) {
                let i = random.below(corrupt.count)
                corrupt[i] = random.chance(50) ? UInt8(random.below(256)) : corrupt[i] ^ UInt8(1 << random.below(8))
            }
            do {
                let decoded = try ChangesetLines.decode(bytes: corrupt)
                // What decodes must encode and decode to itself.
                XCTAssertEqual(try ChangesetLines.decode(ChangesetLines.encode(decoded)), decoded)
            } catch {
                failures += 1
            }
        }
        XCTAssertGreaterThan(failures, 1000)
    }
}
