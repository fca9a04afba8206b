// Mixed values that hold collections: a mixed property, or an element of a list or map of mixed,
// holds a list or a dictionary of mixed values, nested to any depth. Stored in the mixed cell's
// encoding, read back equal, reached by queries (`extra[0]`, `extra['k']`, `extra.k`, `extra[*]`,
// `.@count`, `.@keys`, `.@type`), observed, and the links inside kept as any mixed link is.
import XCTest
@testable import Cove
@testable import CoveCore

/// A model with realm-swift's names for the mixed type.
final class NestedNote: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var extra: AnyRealmValue
    @Persisted var many: List<AnyRealmValue>
    @Persisted var named: Map<String, AnyRealmValue>
}

final class NestedMixedTests: CoveTestCase {
    static let schemaJSON = """
    {"Box": {"properties": {"label": "string", "extra": "mixed", "many": "mixed[]", "bag": "mixed<>", "named": "mixed{}"},
             "indexed": ["extra"]},
     "Dog": {"properties": {"name": "string"}}}
    """

    private func open() throws -> Realm {
        try Realm(configuration: .init(path: "\(folder)/n.cove", durability: .noSync, schema: try Schema(jsonText: Self.schemaJSON)))
    }

    private static let sample: Value = .dictionary([
        "tags": .list([.string("a"), .string("b")]),
        "size": .int(3),
        "deep": .list([.dictionary(["x": .list([.double(1.5), .null])])]),
        "$odd": .bool(true),
    ])

    // MARK: The encoding

    /// A random value with collections down to `depth` levels.
    private func randomValue(_ rng: inout SeededRandom, depth: Int) -> Value {
        switch rng.next() % (depth > 0 ? 9 : 7) {
        case 0: return .null
        case 1: return .bool(rng.next() % 2 == 0)
        case 2: return .int(Int64(bitPattern: rng.next()))
        case 3: return .double(Double(rng.next() % 1000) / 8)
        case 4: return .string(String(repeating: "é", count: Int(rng.next() % 4)))
        case 5: return .data((0..<Int(rng.next() % 5)).map { UInt8($0) })
        case 6: return .timestamp(Timestamp(seconds: Int64(rng.next() % 100_000), nanoseconds: 5))
        case 7: return .list((0..<Int(rng.next() % 4)).map { _ in randomValue(&rng, depth: depth - 1) })
        default:
            var entries: [String: Value] = [:]
            for i in 0..<Int(rng.next() % 4) { entries["k\(i)\(rng.next() % 3)"] = randomValue(&rng, depth: depth - 1) }
            return .dictionary(entries)
        }
    }

    func testEveryNestedValueRoundTripsAndEveryCutIsCorrupt() throws {
        var rng = SeededRandom(seed: 41)
        for _ in 0..<300 {
            let value = Value.list([randomValue(&rng, depth: 4), randomValue(&rng, depth: 3)])
            let bytes = value.encodeMixed()
            XCTAssertEqual(bytes.count, value.mixedEncodedSize)
            XCTAssertEqual(try Value.decodeMixed(bytes), value)
            // Index keys order as values and are equal exactly when the values are.
            XCTAssertEqual(value.indexKey(), try Value.decodeMixed(bytes).indexKey())
            // A cut anywhere is damage, never a crash or another value.
            let cut = Int(rng.next() % UInt64(bytes.count - 1)) + 1
            XCTAssertThrowsError(try Value.decodeMixed(Array(bytes[0..<cut]))) { error in
                XCTAssertEqual((error as? CoveError)?.code, .corrupt)
            }
        }
        // Keys out of order, and nesting past the limit.
        let swapped: [UInt8] = [Value.Tag.dictionary.rawValue, 2, 1, 0x62, 2, 0, 0, 1, 0x61, 2, 0, 0]
        XCTAssertThrowsError(try Value.decodeMixed(swapped))
        var deep = Value.null
        for _ in 0...Value.maxNesting { deep = .list([deep]) }
        XCTAssertThrowsError(try Value.decodeMixed(deep.encodeMixed())) { error in
            XCTAssertEqual((error as? CoveError)?.code, .corrupt)
        }
    }

    // MARK: Stored

    func testNestedValuesAreStoredReadAndKeptAcrossOpens() throws {
        do {
            let realm = try open()
            try realm.write {
                let box = try realm.dynamicCreate("Box", values: [("label", .string("b")), ("extra", Self.sample)])
                try box.dynamicList("many").append(.list([.int(1), .list([.int(2)])]))
                try box.dynamicList("many").append(.string("plain"))
                try box.dynamicMap("named").setValue(.dictionary(["n": .int(7)]), forKey: "first")
                XCTAssertEqual(try box["extra"], Self.sample, "read back inside the write")
            }
        }
        let realm = try open()
        let box = try XCTUnwrap(realm.dynamicObjects("Box").first)
        XCTAssertEqual(try box["extra"], Self.sample)
        XCTAssertEqual(try box.dynamicList("many").values(), [.list([.int(1), .list([.int(2)])]), .string("plain")])
        XCTAssertEqual(try box.dynamicMap("named").value(forKey: "first"), .dictionary(["n": .int(7)]))
        // Written again whole, and replaced by a scalar.
        try realm.write { try box.setValue(.list([]), forKey: "extra") }
        XCTAssertEqual(try box["extra"], .list([]))
        try realm.write { try box.setValue(.int(1), forKey: "extra") }
        XCTAssertEqual(try box["extra"], .int(1))
        _ = try realm.verify()
    }

    func testSetsRefuseCollectionsAndDepthIsBounded() throws {
        let realm = try open()
        try realm.write {
            let box = try realm.dynamicCreate("Box", values: [("label", .string("b"))])
            XCTAssertThrowsError(try box.dynamicMutableSet("bag").insert(.list([.int(1)]))) { error in
                XCTAssertEqual((error as? CoveError)?.code, .wrongType)
            }
            var deep = Value.int(1)
            for _ in 0...Value.maxNesting { deep = .list([deep]) }
            XCTAssertThrowsError(try box.setValue(deep, forKey: "extra")) { error in
                XCTAssertEqual((error as? CoveError)?.code, .invalidArgument)
            }
            XCTAssertThrowsError(try box.setValue(.list([.int(1)]), forKey: "label")) { error in
                XCTAssertEqual((error as? CoveError)?.code, .wrongType)
            }
            XCTAssertEqual(try box["extra"], .null, "nothing written by the refused calls")
        }
    }

    // MARK: Links inside

    func testLinksInsideNestedValuesAreCountedAndClearedWhenTheTargetGoes() throws {
        let realm = try open()
        var box: DynamicObject!, rex: DynamicObject!, fido: DynamicObject!
        try realm.write {
            rex = try realm.dynamicCreate("Dog", values: [("name", .string("Rex"))])
            fido = try realm.dynamicCreate("Dog", values: [("name", .string("Fido"))])
            box = try realm.dynamicCreate("Box", values: [
                ("label", .string("b")),
                ("extra", .dictionary(["pets": .list([.link(rex.link), .link(fido.link), .link(rex.link)])])),
            ])
            try box.dynamicList("many").append(.list([.link(rex.link)]))
            try box.dynamicMap("named").setValue(.dictionary(["r": .link(rex.link)]), forKey: "k")
            XCTAssertThrowsError(try box.setValue(.list([.link(ObjectLink(classKey: rex.link.classKey, objectKey: 999))]), forKey: "extra")) { error in
                XCTAssertEqual((error as? CoveError)?.code, .invalidArgument, "a link inside must name an object that exists")
            }
        }
        _ = try realm.verify()
        let changes = Changes()
        let token = try box.observeChanges(keyPaths: ["extra"]) { change in
            if case .change(_, let properties) = change { changes.values += properties.compactMap(\.storedNewValue) }
        }
        defer { token.invalidate() }
        try realm.write { try realm.delete(rex) }
        try realm.deliver()
        XCTAssertEqual(try box["extra"], .dictionary(["pets": .list([.null, .link(fido.link), .null])]))
        XCTAssertEqual(try box.dynamicList("many").values(), [.list([.null])])
        XCTAssertEqual(try box.dynamicMap("named").value(forKey: "k"), .dictionary(["r": .null]))
        XCTAssertEqual(changes.values, [.dictionary(["pets": .list([.null, .link(fido.link), .null])])])
        _ = try realm.verify()
        // Replaced: Fido's count goes with the old value.
        try realm.write { try box.setValue(.list([]), forKey: "extra") }
        _ = try realm.verify()
        try realm.write { try realm.delete(fido) }
        XCTAssertEqual(try box["extra"], .list([]))
        _ = try realm.verify()
    }

    private final class Changes {
        var values: [Value] = []
    }

    // MARK: Queries

    private func labels(_ realm: Realm, _ query: String, _ arguments: Value...) throws -> [String] {
        try realm.objects("Box").filter(query, arguments: arguments.map { .value($0) }).elements().map { object -> String in
            guard case .string(let s) = try object["label"] else { return "?" }
            return s
        }.sorted()
    }

    func testQueriesReachIntoNestedValues() throws {
        let realm = try open()
        try realm.write {
            try realm.dynamicCreate("Box", values: [("label", .string("a")), ("extra", Self.sample)])
            try realm.dynamicCreate("Box", values: [("label", .string("b")), ("extra", .list([.string("x"), .int(5), .list([.int(9)])]))])
            try realm.dynamicCreate("Box", values: [("label", .string("c")), ("extra", .string("ab"))])
            let d = try realm.dynamicCreate("Box", values: [("label", .string("d")), ("extra", .dictionary(["size": .int(4)]))])
            try d.dynamicList("many").append(.dictionary(["n": .list([.int(1), .int(2)])]))
            try d.dynamicMap("named").setValue(.list([.string("q")]), forKey: "w")
        }
        XCTAssertEqual(try labels(realm, "extra['tags'][0] == 'a'"), ["a"])
        XCTAssertEqual(try labels(realm, "extra.tags[1] == 'b'"), ["a"])
        XCTAssertEqual(try labels(realm, "extra.tags[LAST] == 'b'"), ["a"])
        XCTAssertEqual(try labels(realm, "extra.size > 2"), ["a", "d"])
        XCTAssertEqual(try labels(realm, "extra['size'] == 4"), ["d"])
        XCTAssertEqual(try labels(realm, "extra.deep[0].x[0] == 1.5"), ["a"])
        XCTAssertEqual(try labels(realm, "extra[0] == 'x'"), ["b"])
        XCTAssertEqual(try labels(realm, "extra[2][0] == 9"), ["b"])
        XCTAssertEqual(try labels(realm, "extra[*] == 5"), ["b"])
        XCTAssertEqual(try labels(realm, "ANY extra[*] == 'x'"), ["b"])
        XCTAssertEqual(try labels(realm, "extra.@count == 3"), ["b"])
        XCTAssertEqual(try labels(realm, "extra.@count == 4"), ["a"])
        XCTAssertEqual(try labels(realm, "extra.tags.@count == 2"), ["a"])
        XCTAssertEqual(try labels(realm, "extra.@type == 'list'"), ["b"])
        XCTAssertEqual(try labels(realm, "extra.@type == 'dictionary'"), ["a", "d"])
        XCTAssertEqual(try labels(realm, "extra.@type == 'collection'"), ["a", "b", "d"])
        XCTAssertEqual(try labels(realm, "extra.@keys == 'tags'"), ["a"])
        XCTAssertEqual(try labels(realm, "extra[$0] == $1", .string("size"), .int(3)), ["a"])
        XCTAssertEqual(try labels(realm, "extra == $0", .list([.string("x"), .int(5), .list([.int(9)])])), ["b"])
        XCTAssertEqual(try labels(realm, "many[0].n[1] == 2"), ["d"])
        XCTAssertEqual(try labels(realm, "named['w'][0] == 'q'"), ["d"])
        XCTAssertEqual(try labels(realm, "extra.missing == nil"), ["a", "d"], "a missing key reads as null, as in a map")
        // Sorting puts collections after every scalar.
        let sorted = try realm.objects("Box").sorted(byKeyPath: "extra").elements().map { try $0["label"] }
        // Dictionaries order by their first differing key: "$odd" before "size".
        XCTAssertEqual(sorted, [.string("c"), .string("b"), .string("a"), .string("d")])
    }

    // MARK: Models

    func testModelsHoldNestedValuesUnderRealmSwiftsNames() throws {
        let realm = try Realm(configuration: try .init(path: "\(folder)/models.cove", objectTypes: [NestedNote.self]))
        let note = NestedNote()
        note.id = 1
        note.extra = .dictionary(["tags": .list([.string("a")])])
        note.many.append(.list([.int(1), .int(2)]))
        note.named["k"] = .dictionary(["x": .bool(true)])
        try realm.write { realm.add(note) }
        let stored = try XCTUnwrap(realm.object(ofType: NestedNote.self, forPrimaryKey: 1))
        XCTAssertEqual(stored.extra, .dictionary(["tags": .list([.string("a")])]))
        XCTAssertEqual(Array(stored.many), [.list([.int(1), .int(2)])])
        XCTAssertEqual(stored.named["k"], .dictionary(["x": .bool(true)]))
        // Read, change, assign back inside a write.
        try realm.write {
            guard case .dictionary(var entries) = stored.extra, case .list(var tags)? = entries["tags"] else { return XCTFail("not a dictionary") }
            tags.append(.string("b"))
            entries["tags"] = .list(tags)
            stored.extra = .dictionary(entries)
        }
        XCTAssertEqual(stored.extra, .dictionary(["tags": .list([.string("a"), .string("b")])]))
        XCTAssertEqual(realm.objects(NestedNote.self).filter("extra.tags[1] == 'b'").count, 1)
    }

    // MARK: JSON

    func testJSONKeepsNestedValues() throws {
        let realm = try open()
        var box: DynamicObject!
        try realm.write { box = try realm.dynamicCreate("Box", values: [("label", .string("a")), ("extra", Self.sample)]) }
        let json = try ObjectJSON.encode(box)
        let text = json.serialized()
        XCTAssertTrue(text.contains("\"$dictionary\""), "a dictionary with a key like a tag is wrapped: \(text)")
        try realm.write {
            let copy = try ObjectJSON.create("Box", from: try JSONValue(parsing: text), in: realm, update: false)
            XCTAssertEqual(try copy["extra"], Self.sample)
            let plain = try ObjectJSON.create("Box", from: try JSONValue(parsing: #"{"label": "p", "extra": {"a": [1, {"b": null}]}}"#),
                                              in: realm, update: false)
            XCTAssertEqual(try plain["extra"], .dictionary(["a": .list([.int(1), .dictionary(["b": .null])])]))
        }
    }
}
