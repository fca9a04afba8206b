// The subscription wire lines: object and remove lines, both download headers and the
// subscription set body round-trip with golden text, and malformed input is refused naming the
// line and field; truncations never do anything but decode or throw.
import XCTest
import CoveSyncCore

final class StateLinesTests: XCTestCase {
    private func state(_ name: String, age: Int64) throws -> SyncObjectState {
        let dog = ref("Dog", .string(name))
        var s = SyncObjectState()
        s.apply(try SyncOperation(clock: clock(1_700_000_000_000, 0, 7), object: dog, change: .create(values: ["age": .int(age)])))
        s.apply(try SyncOperation(clock: clock(1_700_000_000_000, 1, 7), object: dog,
                                  change: .listInsert(property: "toys", position: position("V"), value: .string("ball"))))
        return s
    }

    private func assertMalformed(_ body: () throws -> Void, _ expected: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            guard let e = error as? SyncError else { return XCTFail("not a SyncError: \(error)", file: file, line: line) }
            XCTAssertEqual(e.code, .malformedEncoding, file: file, line: line)
            XCTAssertTrue(e.message.contains(expected), "'\(e.message)' lacks '\(expected)'", file: file, line: line)
        }
    }

    func testObjectAndRemoveLinesRoundTrip() throws {
        let rex = try state("rex", age: 3)
        let object = SyncStateLine.object(ref("Dog", .string("rex")), rex)
        let text = object.encode()
        XCTAssertTrue(text.hasPrefix(#"{"object":{"class":"Dog","key":"rex","state":""#), text)
        guard case .object(let r, let s) = try SyncStateLine(json: text) else { return XCTFail("not an object line") }
        XCTAssertEqual(r, ref("Dog", .string("rex")))
        XCTAssertTrue(s.exists)
        XCTAssertEqual(s.property("age"), .int(3))
        XCTAssertEqual(s.listElements("toys").map(\.value), [.string("ball")])

        let oid = try SyncObjectId(hex: "5f1b2c3d4e5f60718293a4b5")
        let remove = SyncStateLine.remove(ref("Person", .objectId(oid)))
        XCTAssertEqual(remove.encode(), #"{"remove":{"class":"Person","key":{"oid":"5f1b2c3d4e5f60718293a4b5"}}}"#)
        guard case .remove(let gone) = try SyncStateLine(json: remove.encode()) else { return XCTFail("not a remove line") }
        XCTAssertEqual(gone, ref("Person", .objectId(oid)))
        XCTAssertEqual(remove.object, gone)
    }

    func testHeadersRoundTrip() throws {
        let boot = SyncDownloadHeader(.bootstrap(set: 2, serverVersion: 40, next: "c1.xyz"), count: 3, latest: 41)
        XCTAssertEqual(boot.encode(), #"{"bootstrap":{"set":2,"server_version":40,"next":"c1.xyz"},"count":3,"latest":41}"#)
        XCTAssertEqual(try SyncDownloadHeader(json: boot.encode()), boot)
        let last = SyncDownloadHeader(.bootstrap(set: 1, serverVersion: 0, next: nil), count: 0, latest: 0)
        XCTAssertEqual(last.encode(), #"{"bootstrap":{"set":1,"server_version":0,"next":null},"count":0,"latest":0}"#)
        XCTAssertEqual(try SyncDownloadHeader(json: last.encode()), last)
        let steady = SyncDownloadHeader(.steady(to: 12, more: true), count: 5, latest: 30)
        XCTAssertEqual(steady.encode(), #"{"to":12,"more":true,"count":5,"latest":30}"#)
        XCTAssertEqual(try SyncDownloadHeader(json: steady.encode()), steady)
        // Member order does not matter to the reader.
        XCTAssertEqual(try SyncDownloadHeader(json: #"{"latest":30,"count":5,"more":true,"to":12}"#), steady)
    }

    func testWholeDownloadRoundTrips() throws {
        let lines: [SyncStateLine] = [.object(ref("Dog", .string("a")), try state("a", age: 1)), .remove(ref("Dog", .int(4)))]
        let text = StateLines.encode(SyncStateDownload(header: SyncDownloadHeader(.steady(to: 3, more: false), count: 0, latest: 3), lines: lines))
        XCTAssertEqual(text.split(separator: "\n").count, 3)
        let download = try StateLines.decode(text)
        XCTAssertEqual(download.header, SyncDownloadHeader(.steady(to: 3, more: false), count: 2, latest: 3))
        XCTAssertEqual(download.lines.map(\.object), lines.map(\.object))
        XCTAssertEqual(StateLines.encode(download), text)
        assertMalformed({ _ = try StateLines.decode(String(text.dropLast(2))) }, "line 3, byte")
        assertMalformed({ _ = try StateLines.decode(text.replacingOccurrences(of: #""count":2"#, with: #""count":3"#)) },
                        "line 1: field 'count': the header counts 3 lines, but 2 follow it")
        assertMalformed({ _ = try StateLines.decode("") }, "line 1: an empty answer")
        // From bytes: the same download, and bytes that are not UTF-8 refused by line.
        let bytes = Array(text.utf8)
        XCTAssertEqual(StateLines.encode(try StateLines.decode(bytes: bytes)), text)
        XCTAssertEqual(StateLines.encode(try StateLines.decode(bytes: Array(bytes.dropLast()))), text, "without the last line feed")
        var broken = bytes
        broken[broken.firstIndex(of: 0x0A)! + 5] = 0xFF
        assertMalformed({ _ = try StateLines.decode(bytes: broken) }, "line 2: not valid UTF-8")
    }

    func testSubscriptionSetRoundTrips() throws {
        let body = SyncSubscriptionSetBody(version: 3, subscriptions: [
            SyncSubscriptionEntry(name: "adults", className: "Dog", query: "age > $0 AND name IN $1",
                                  arguments: [.value(.int(18)), .list([.string("a"), .null])]),
            SyncSubscriptionEntry(name: nil, className: "Person", query: "TRUEPREDICATE"),
        ])
        let text = body.encode()
        XCTAssertEqual(text, #"{"version":3,"subscriptions":[{"name":"adults","class":"Dog","query":"age > $0 AND name IN $1","arguments":[18,["a",null]]},{"name":null,"class":"Person","query":"TRUEPREDICATE","arguments":[]}]}"#)
        XCTAssertEqual(try SyncSubscriptionSetBody(json: text), body)
        let schema = try SubscriptionSchema(notation: ["Dog": ["name": "string", "age": "int"]])
        XCTAssertEqual(try body.subscriptions[0].query(schema: schema).sql().parameters, [.int(18), .string("a")])
    }

    func testMalformedInputIsRefusedByName() throws {
        assertMalformed({ _ = try SyncStateLine(json: #"{"object":{"class":"Dog","key":"a"}}"#, line: 4) }, "line 4: field 'object': missing member 'state'")
        assertMalformed({ _ = try SyncStateLine(json: #"{"object":{"class":"Dog","key":"a","state":"!!"}}"#) }, "field 'object.state': expected base64")
        assertMalformed({ _ = try SyncStateLine(json: #"{"object":{"class":"Dog","key":"a","state":"AAAA"}}"#) }, "field 'object.state'")
        assertMalformed({ _ = try SyncStateLine(json: #"{"remove":{"class":"Dog","key":1.5}}"#) }, "field 'remove.key'")
        assertMalformed({ _ = try SyncStateLine(json: #"{"remove":{"class":"9Dog","key":1}}"#) }, "field 'remove.class': invalid class name")
        assertMalformed({ _ = try SyncStateLine(json: #"{"gone":{"class":"Dog","key":1}}"#) }, "expected an object with one member, 'object' or 'remove'")
        assertMalformed({ _ = try SyncStateLine(json: "") }, "line 1: an empty line")
        assertMalformed({ _ = try SyncStateLine(json: #"{"remove":"#) }, "line 1, byte 11")

        assertMalformed({ _ = try SyncDownloadHeader(json: #"{"to":1,"more":true,"count":0}"#) }, "field 'header': missing member 'latest'")
        assertMalformed({ _ = try SyncDownloadHeader(json: #"{"to":-1,"more":true,"count":0,"latest":0}"#) }, "field 'to': -1 is less than 0")
        assertMalformed({ _ = try SyncDownloadHeader(json: #"{"to":5,"more":1,"count":0,"latest":5}"#) }, "field 'more': expected a boolean")
        assertMalformed({ _ = try SyncDownloadHeader(json: #"{"to":5,"more":false,"count":0,"latest":4}"#) }, "field 'latest': 4 is less than 'to', 5")
        assertMalformed({ _ = try SyncDownloadHeader(json: #"{"bootstrap":{"set":0,"server_version":1,"next":null},"count":0,"latest":1}"#) },
                        "field 'set': 0 is less than 1")
        assertMalformed({ _ = try SyncDownloadHeader(json: #"{"bootstrap":{"set":1,"server_version":1,"next":""},"count":0,"latest":1}"#) },
                        "field 'bootstrap.next': expected a non-empty string or null")
        assertMalformed({ _ = try SyncDownloadHeader(json: #"{"bootstrap":{"set":1,"server_version":1,"next":null},"count":0,"latest":1,"to":1}"#) },
                        "unknown member 'to'")

        assertMalformed({ _ = try SyncSubscriptionSetBody(json: #"{"version":0,"subscriptions":[]}"#) }, "subscription set: field 'version': 0 is less than 1")
        assertMalformed({ _ = try SyncSubscriptionSetBody(json: #"{"version":1}"#) }, "field 'body': missing member 'subscriptions'")
        assertMalformed({ _ = try SyncSubscriptionSetBody(json: #"{"version":1,"subscriptions":[{"name":3,"class":"Dog","query":"","arguments":[]}]}"#) },
                        "field 'subscriptions[0].name': expected a string or null")
        assertMalformed({ _ = try SyncSubscriptionSetBody(json: #"{"version":1,"subscriptions":[{"name":null,"class":"Dog","query":"","arguments":[{"x":1}]}]}"#) },
                        "field 'subscriptions[0].arguments[0].x': unknown value type 'x'")
        assertMalformed({ _ = try SyncSubscriptionSetBody(json: #"{"version":1,"subscriptions":[{"name":null,"class":"Dog","query":""}]}"#) },
                        "field 'subscriptions[0]': missing member 'arguments'")
        var small = ChangesetLimits()
        small.maxOperations = 2
        assertMalformed({ _ = try SyncSubscriptionSetBody(json: #"{"version":1,"subscriptions":[{"name":null,"class":"Dog","query":"","arguments":[1,[2,3]]}]}"#, limits: small) },
                        "field 'subscriptions[0].arguments[1]': more than the 2 argument values")
    }

    func testPrimaryKeysAsJSON() throws {
        let keys: [SyncPrimaryKey] = [.int(-4), .string("r\"ex"), .objectId(try SyncObjectId(hex: "5f1b2c3d4e5f60718293a4b5")),
                                      .uuid(try SyncUUID(text: "12345678-1234-5678-1234-567812345678"))]
        XCTAssertEqual(keys.map(\.json), ["-4", #""r\"ex""#, #"{"oid":"5f1b2c3d4e5f60718293a4b5"}"#, #"{"uuid":"12345678-1234-5678-1234-567812345678"}"#])
        for key in keys { XCTAssertEqual(try SyncPrimaryKey(json: key.json), key) }
        assertMalformed({ _ = try SyncPrimaryKey(json: "true") }, "primary key: field 'key': a primary key is an int, string, ObjectId or UUID")
    }

    func testTruncationsDecodeOrThrow() throws {
        let texts = [
            SyncStateLine.object(ref("Dog", .string("rex")), try state("rex", age: 3)).encode(),
            SyncDownloadHeader(.bootstrap(set: 2, serverVersion: 40, next: "c"), count: 3, latest: 41).encode(),
            SyncSubscriptionSetBody(version: 1, subscriptions: [SyncSubscriptionEntry(name: "a", className: "Dog", query: "age > $0", arguments: [.value(.int(1))])]).encode(),
        ]
        for text in texts {
            let bytes = Array(text.utf8)
            for end in 0..<bytes.count {
                let cut = String(decoding: bytes[0..<end], as: UTF8.self)
                XCTAssertThrowsError(try SyncStateLine(json: cut))
                XCTAssertThrowsError(try SyncDownloadHeader(json: cut))
                XCTAssertThrowsError(try SyncSubscriptionSetBody(json: cut))
            }
        }
    }
}
