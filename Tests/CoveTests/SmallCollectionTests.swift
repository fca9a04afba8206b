// Small lists, sets and maps kept inline (in their object's row, or in their class's collection
// area in tables made before format 6), and the switch to a tree of their own and back: a
// randomized run across the limit against an in-memory model with verify() after every commit,
// in both places, the file space they take, queries and notifications on both forms, links and
// embedded objects inline, creators given collections whole, and migrations dropping inline data.
import XCTest
@testable import Cove
@testable import CoveCore

final class SmallCollectionTests: CoveTestCase {

    static let schemaJSON = """
    {
      "Box": {"properties": {"name": "string", "words": "string[]", "nums": "int[]", "tags": "string<>",
                             "scores": "string{}", "anything": "mixed[]", "items": "Item[]", "itemSet": "Item<>",
                             "itemMap": "Item{}", "notes": "Note[]"}},
      "Item": {"properties": {"label": "string"}},
      "Note": {"embedded": true, "properties": {"text": "string"}}
    }
    """

    private func open(_ name: String = "s.cove", schema: String = SmallCollectionTests.schemaJSON, version: UInt64 = 1,
                      _ block: Migration.Block? = nil) throws -> Realm {
        try Realm(configuration: .init(path: "\(folder)/\(name)", durability: .noSync, schema: try Schema(jsonText: schema),
                                       schemaVersion: version, migrationBlock: block))
    }

    /// The number of inline collections verify() reports.
    private func inlineCount(_ realm: Realm, line: UInt = #line) throws -> Int {
        let report = try realm.verify()
        guard let range = report.range(of: #"(\d+) inline collections"#, options: .regularExpression),
              let n = Int(report[range].split(separator: " ")[0]) else {
            XCTFail("no inline count in \(report)", line: line)
            return -1
        }
        return n
    }

    // MARK: Randomized, across the limit

    func testRandomEditsAcrossTheLimitMatchAModel() throws {
        try randomEdits(file: "row.cove")
    }

    /// The same in a table whose small collections live in the class's collection area.
    func testRandomEditsInTheCollectionAreaMatchAModel() throws {
        Property.collectionsInArea = true
        defer { Property.collectionsInArea = false }
        try randomEdits(file: "area.cove")
    }

    private func randomEdits(file: String) throws {
        let realm = try open(file)
        var rng = SeededRandom(seed: 34)
        let boxes = 4
        try realm.write {
            for i in 0..<boxes { _ = try realm.dynamicCreate("Box", values: [("name", .string("b\(i)"))]) }
        }
        let objects = try realm.dynamicObjects("Box")
        var words = [[String]](repeating: [], count: boxes)
        var tags = [Set<String>](repeating: [], count: boxes)
        var scores = [[String: String]](repeating: [:], count: boxes)
        var seenInline = Set<Int>()
        func word() -> String { String(repeating: "w", count: 1 + rng.below(80)) + "\(rng.below(1000))" }
        for round in 0..<60 {
            // Rounds alternate between growing (past the 960-byte limit) and shrinking.
            let growing = (round / 10) % 2 == 0
            try realm.write {
                for _ in 0..<60 {
                    let b = rng.below(boxes)
                    let box = objects[b]
                    switch rng.below(3) {
                    case 0:
                        let list = try box.dynamicList("words")
                        let n = words[b].count
                        if growing || n == 0 || rng.below(4) == 0 {
                            let w = word()
                            let at = rng.below(n + 1)
                            try list.insert(.string(w), at: at)
                            words[b].insert(w, at: at)
                        } else {
                            switch rng.below(3) {
                            case 0:
                                let at = rng.below(n)
                                try list.remove(at: at)
                                words[b].remove(at: at)
                            case 1:
                                let at = rng.below(n), w = word()
                                try list.replace(index: at, with: .string(w))
                                words[b][at] = w
                            default:
                                let from = rng.below(n), to = rng.below(n)
                                try list.move(from: from, to: to)
                                words[b].insert(words[b].remove(at: from), at: to)
                            }
                        }
                    case 1:
                        let set = try box.dynamicMutableSet("tags")
                        if growing || tags[b].isEmpty || rng.below(4) == 0 {
                            let w = word()
                            XCTAssertEqual(try set.insert(.string(w)), tags[b].insert(w).inserted)
                        } else {
                            let w = tags[b].sorted()[rng.below(tags[b].count)]
                            XCTAssertTrue(try set.remove(.string(w)))
                            tags[b].remove(w)
                        }
                    default:
                        let map = try box.dynamicMap("scores")
                        if growing || scores[b].isEmpty || rng.below(4) == 0 {
                            let k = "k\(rng.below(60))", v = word()
                            try map.setValue(.string(v), forKey: k)
                            scores[b][k] = v
                        } else {
                            let k = scores[b].keys.sorted()[rng.below(scores[b].count)]
                            XCTAssertTrue(try map.removeValue(forKey: k))
                            scores[b][k] = nil
                        }
                    }
                }
                if round % 7 == 6 {
                    // Clearing one collection at random, in either form.
                    let b = rng.below(boxes)
                    try objects[b].dynamicList("words").removeAll()
                    words[b] = []
                }
            }
            for b in 0..<boxes {
                let box = objects[b]
                XCTAssertEqual(try box.dynamicList("words").values(), words[b].map { .string($0) }, "round \(round) box \(b)")
                XCTAssertEqual(try box.dynamicList("words").count, words[b].count)
                XCTAssertEqual(Set(try box.dynamicMutableSet("tags").values()), Set(tags[b].map { .string($0) }))
                XCTAssertEqual(try box.dynamicMutableSet("tags").values(), tags[b].sorted().map { .string($0) }, "a set keeps its order inline too")
                if let w = tags[b].first { XCTAssertTrue(try box.dynamicMutableSet("tags").contains(.string(w))) }
                XCTAssertFalse(try box.dynamicMutableSet("tags").contains(.string("absent")))
                let entries = try box.dynamicMap("scores").entries()
                XCTAssertEqual(entries.map(\.key), scores[b].keys.sorted())
                XCTAssertEqual(Dictionary(uniqueKeysWithValues: entries.map { ($0.key, $0.value) }), scores[b].mapValues { .string($0) })
                for (k, v) in scores[b].prefix(3) { XCTAssertEqual(try box.dynamicMap("scores")[k], .string(v)) }
            }
            seenInline.insert(try inlineCount(realm))
        }
        // The run went both ways: many collections inline at times, fewer at others.
        XCTAssertGreaterThan(seenInline.count, 3, "\(seenInline)")
        XCTAssertTrue(seenInline.contains { $0 >= boxes * 2 }, "\(seenInline)")
        XCTAssertTrue(seenInline.contains { $0 <= boxes }, "\(seenInline)")
        // Everything survives a reopen.
        realm.close()
        let again = try open(file)
        let reread = try again.dynamicObjects("Box")
        for b in 0..<boxes {
            XCTAssertEqual(try reread[b].dynamicList("words").values(), words[b].map { .string($0) })
            XCTAssertEqual(Set(try reread[b].dynamicMutableSet("tags").values()), Set(tags[b].map { .string($0) }))
        }
    }

    /// A list that grew to a tree and shrank a little stays a tree; once it shrinks to half
    /// the limit it goes inline again.
    func testSwitchingFormsHasHysteresis() throws {
        // In the row: up to 480 bytes inline, back at 240.
        try hysteresis(file: "row.cove", shrinkTo: 7)
    }

    func testSwitchingFormsHasHysteresisInTheArea() throws {
        // In the collection area: up to 960 bytes, back at 480.
        Property.collectionsInArea = true
        defer { Property.collectionsInArea = false }
        try hysteresis(file: "area.cove", shrinkTo: 14)
    }

    /// A list that grew to a tree and shrank a little stays a tree; once it shrinks to half
    /// the limit (`shrinkTo` elements of 32 bytes) it goes inline again.
    private func hysteresis(file: String, shrinkTo small: Int) throws {
        let realm = try open(file)
        let box = try realm.write { try realm.dynamicCreate("Box") }
        let list = try box.dynamicList("words")
        let word = String(repeating: "x", count: 30)   // 32 bytes an element inline
        try realm.write { for _ in 0..<10 { try list.append(.string(word)) } }            // 320 bytes
        XCTAssertEqual(try inlineCount(realm), 1)
        try realm.write { for _ in 0..<30 { try list.append(.string(word)) } }            // 1280 bytes
        XCTAssertEqual(try inlineCount(realm), 0)
        try realm.write { for _ in 0..<(40 - 2 * small) { try list.remove(at: 0) } }      // twice the shrink limit's share
        XCTAssertEqual(try inlineCount(realm), 0, "still a tree")
        try realm.write { for _ in 0..<small { try list.remove(at: 0) } }
        XCTAssertEqual(try inlineCount(realm), 1)
        XCTAssertEqual(try list.count, small)
        assertThrows(.wrongType, containing: "property 'words' is a list, not a single value") {
            _ = try box.value(forKey: "words")
        }
        try realm.write { try list.removeAll() }
        XCTAssertEqual(try inlineCount(realm), 0)
        XCTAssertEqual(try list.values(), [])
    }

    // MARK: Space

    /// Element reads outside a write remember the collection read last: each version is still
    /// read as it is (another realm's commit, a refresh), two collections read in turns each
    /// give their own elements, and reads inside a write see its edits at once.
    func testElementReadsSeeEachVersionAndEachCollection() throws {
        let realm = try open("memo.cove")
        let other = try open("memo.cove")
        var a: DynamicObject!
        var b: DynamicObject!
        try realm.write {
            a = try realm.dynamicCreate("Box", values: [("name", .string("a"))])
            b = try realm.dynamicCreate("Box", values: [("name", .string("b"))])
            for i in 0..<3000 { try a.dynamicList("nums").append(.int(Int64(i))) }   // a tree
            try b.dynamicList("nums").append(.int(-1))                               // inline
        }
        let aNums = try a.dynamicList("nums"), bNums = try b.dynamicList("nums")
        for i in [0, 1500, 2999] {
            XCTAssertEqual(try aNums.value(at: i), .int(Int64(i)))
            XCTAssertEqual(try bNums.value(at: 0), .int(-1))
        }
        // Another realm changes both; this one sees the change once it refreshes.
        try other.refresh()
        let oa = try other.objects("Box").filter("name == 'a'").element(at: 0)
        let ob = try other.objects("Box").filter("name == 'b'").element(at: 0)
        try other.write {
            try oa.dynamicList("nums").replace(index: 1500, with: .int(-1500))
            try ob.dynamicList("nums").replace(index: 0, with: .int(-2))
        }
        try realm.refresh()
        XCTAssertEqual(try aNums.value(at: 1500), .int(-1500))
        XCTAssertEqual(try bNums.value(at: 0), .int(-2))
        XCTAssertEqual(try aNums.value(at: 1499), .int(1499))
        // Inside a write, reads follow the write's own edits.
        try realm.write {
            XCTAssertEqual(try aNums.value(at: 0), .int(0))
            try aNums.replace(index: 0, with: .int(7))
            XCTAssertEqual(try aNums.value(at: 0), .int(7))
            try aNums.remove(at: 0)
            XCTAssertEqual(try aNums.value(at: 0), .int(1))
            XCTAssertEqual(try aNums.count, 2999)
        }
        XCTAssertEqual(try aNums.value(at: 0), .int(1))
        XCTAssertEqual(try aNums.count, 2999)
        other.close()
        realm.close()
    }

    func testFiveThousandSmallCollectionsTakeUnderAMegabyte() throws {
        for (i, type) in ["int[]", "string<>", "string{}"].enumerated() {
            let schema = #"{"Owner": {"properties": {"c": "\#(type)"}}}"#
            let realm = try open("space\(i).cove", schema: schema)
            try realm.write {
                for n in 0..<5_000 {
                    let owner = try realm.dynamicCreate("Owner")
                    switch i {
                    case 0: try owner.dynamicList("c").append(.int(Int64(n)))
                    case 1: _ = try owner.dynamicMutableSet("c").insert(.string("t\(n % 7)"))
                    default: try owner.dynamicMap("c").setValue(.string("v"), forKey: "k")
                    }
                }
            }
            let space = try realm.fileSpace()
            XCTAssertLessThanOrEqual(space.usedBytes, 1_000_000, "5,000 objects with a one-element \(type)")
            XCTAssertEqual(try inlineCount(realm), 5_000)
            XCTAssertEqual(try realm.objects("Owner").filter("c.@count == 1").count, 5_000)
            realm.close()
        }
    }

    // MARK: Queries and notifications on both forms

    func testQueriesSeeBothForms() throws {
        let realm = try open()
        try realm.write {
            let small = try realm.dynamicCreate("Box", values: [("name", .string("small"))])
            for n in [3, 5, 8] { try small.dynamicList("nums").append(.int(Int64(n))) }
            let big = try realm.dynamicCreate("Box", values: [("name", .string("big"))])
            for n in 0..<400 { try big.dynamicList("nums").append(.int(Int64(n))) }
            _ = try realm.dynamicCreate("Box", values: [("name", .string("empty"))])
            for i in 0..<100 {
                let item = try realm.dynamicCreate("Item", values: [("label", .string(i < 2 ? "hot" : "cold"))])
                if i < 4 { try small.dynamicList("items").append(.link(item.link)) }
                try big.dynamicList("items").append(.link(item.link))
            }
        }
        XCTAssertEqual(try inlineCount(realm), 2, "the lists of 400 ints and of 100 links are trees")
        XCTAssertEqual(names(in: realm, "Box", "SUBQUERY(items, $i, $i.label == 'hot').@count == 2"), ["small", "big"])
        XCTAssertEqual(names(in: realm, "Box", "SUBQUERY(items, $i, $i.label == 'cold').@count == 2"), ["small"])
        XCTAssertEqual(names(in: realm, "Box", "items.@count > 50"), ["big"])
        XCTAssertEqual(names(in: realm, "Box", "ANY nums == 5"), ["small", "big"])
        XCTAssertEqual(names(in: realm, "Box", "nums.@count == 3"), ["small"])
        XCTAssertEqual(names(in: realm, "Box", "nums.@count == 0"), ["empty"])
        XCTAssertEqual(names(in: realm, "Box", "nums.@sum == 16"), ["small"])
        XCTAssertEqual(names(in: realm, "Box", "nums.@max > 100"), ["big"])
        XCTAssertEqual(names(in: realm, "Box", "8 IN nums"), ["small", "big"])
        XCTAssertEqual(names(in: realm, "Box", "ALL nums < 10"), ["small", "empty"])
    }

    func testNotificationsReportInlineListChanges() throws {
        let realm = try open()
        let box = try realm.write { () throws(CoveError) -> DynamicObject in
            let box = try realm.dynamicCreate("Box")
            for w in ["a", "b", "c"] { try box.dynamicList("words").append(.string(w)) }
            return box
        }
        let list = try box.dynamicList("words")
        var changes: [CollectionChangeSet] = []
        let token = try list.observeChanges { change in
            if case .update(let set) = change { changes.append(set) }
        }
        defer { token.invalidate() }
        try realm.deliver()
        try realm.write {
            try list.insert(.string("z"), at: 1)      // a z b c
            try list.remove(at: 3)                    // a z b
            try list.replace(index: 0, with: .string("A"))
        }
        try realm.deliver()
        XCTAssertEqual(changes.count, 1)
        XCTAssertEqual(changes.first?.insertions, [1])
        XCTAssertEqual(changes.first?.deletions, [2])
        XCTAssertEqual(changes.first?.modifications, [0])
        XCTAssertEqual(try list.values(), ["A", "z", "b"].map { .string($0) })
    }

    // MARK: Links and embedded objects inline

    func testLinksInlineKeepBacklinksAndLeaveWithTheirTarget() throws {
        let realm = try open()
        var items: [DynamicObject] = []
        let box = try realm.write { () throws(CoveError) -> DynamicObject in
            let box = try realm.dynamicCreate("Box")
            for i in 0..<3 {
                let item = try realm.dynamicCreate("Item", values: [("label", .string("i\(i)"))])
                items.append(item)
                try box.dynamicList("items").append(.link(item.link))
                _ = try box.dynamicMutableSet("itemSet").insert(.link(item.link))
                try box.dynamicMap("itemMap").setValue(.link(item.link), forKey: "k\(i)")
                try box.dynamicList("anything").append(.link(item.link))
            }
            try box.dynamicList("items").append(.link(items[1].link))
            return box
        }
        XCTAssertEqual(try inlineCount(realm), 4)
        XCTAssertTrue(try realm.verify().contains("backlink entries match their links"))
        try realm.write { try realm.delete(items[1]) }
        XCTAssertEqual(try box.dynamicList("items").count, 2, "both occurrences left the list")
        XCTAssertEqual(try box.dynamicMutableSet("itemSet").count, 2)
        XCTAssertEqual(try box.dynamicMap("itemMap")["k1"], .null, "a map keeps the key with null")
        XCTAssertEqual(try box.dynamicList("anything").values()[1], .null, "a list of mixed keeps a null")
        XCTAssertEqual(try inlineCount(realm), 4)
        try realm.write { try realm.delete(box) }
        XCTAssertEqual(try inlineCount(realm), 0, "the owner's deletion took its entries from the area")
    }

    func testEmbeddedObjectsInAnInlineListDieWithTheirOwner() throws {
        let realm = try open()
        let box = try realm.write { () throws(CoveError) -> DynamicObject in
            let box = try realm.dynamicCreate("Box")
            for i in 0..<3 { try box.dynamicList("notes").appendEmbedded().setValue(.string("n\(i)"), forKey: "text") }
            return box
        }
        XCTAssertEqual(try realm.dynamicObjects("Note").count, 3)
        XCTAssertEqual(try inlineCount(realm), 1)
        try realm.write { try box.dynamicList("notes").remove(at: 0) }
        XCTAssertEqual(try realm.dynamicObjects("Note").count, 2)
        try realm.write { try realm.delete(box) }
        XCTAssertEqual(try realm.dynamicObjects("Note").count, 0)
        XCTAssertEqual(try inlineCount(realm), 0)
    }

    // MARK: Collections given whole to a creator

    func testCreatorTakesCollectionsWhole() throws {
        let schema = #"{"Bag": {"primaryKey": "id", "properties": {"id": "int", "nums": "int[]", "tags": "string<>", "m": "int{}", "notes": "Note[]", "items": "Item[]"}}, "Item": {"properties": {"label": "string"}}, "Note": {"embedded": true, "properties": {"text": "string"}}}"#
        let realm = try open("creator.cove", schema: schema)
        try realm.write {
            let item = try realm.dynamicCreate("Item", values: [("label", .string("x"))])
            let creator = try realm.dynamicCreator("Bag", properties: ["id"], collections: ["nums", "tags", "m", "items"])
            try creator.create([.int(1)], elements: [[.int(3), .int(1), .int(3)], [.string("b"), .string("a"), .string("b")],
                                                     [.string("y"), .int(2), .string("x"), .int(1), .string("y"), .int(9)],
                                                     [.link(item.link), .link(item.link)]])
            let bag = try XCTUnwrap(realm.dynamicObject(ofType: "Bag", forPrimaryKey: .int(1)))
            XCTAssertEqual(try bag.dynamicList("nums").values(), [.int(3), .int(1), .int(3)])
            XCTAssertEqual(try bag.dynamicMutableSet("tags").values(), [.string("a"), .string("b")])
            XCTAssertEqual(try bag.dynamicMap("m").entries().map(\.key), ["x", "y"])
            XCTAssertEqual(try bag.dynamicMap("m")["y"], .int(9), "a key given twice keeps its last value")
            XCTAssertEqual(try bag.dynamicList("items").count, 2)
            // An update replaces each collection.
            XCTAssertFalse(try creator.createOrUpdate([.int(1)], elements: [[.int(7)], [], [.string("k"), .int(0)], []]))
            XCTAssertEqual(try bag.dynamicList("nums").values(), [.int(7)])
            XCTAssertEqual(try bag.dynamicMutableSet("tags").count, 0)
            XCTAssertEqual(try bag.dynamicList("items").count, 0)
            // A collection past the inline limit goes straight to a tree.
            try creator.create([.int(2)], elements: [(0..<300).map { .int(Int64($0)) }, [], [], []])
            let big = try XCTUnwrap(realm.dynamicObject(ofType: "Bag", forPrimaryKey: .int(2)))
            XCTAssertEqual(try big.dynamicList("nums").count, 300)
            XCTAssertEqual(try big.dynamicList("nums")[299], .int(299))

            assertThrows(.wrongType, containing: "property 'id' of class 'Bag' is int: give it as one value") {
                _ = try realm.dynamicCreator("Bag", properties: ["id"], collections: ["id"])
            }
            assertThrows(.wrongType, containing: "holds embedded Note objects") {
                _ = try realm.dynamicCreator("Bag", properties: ["id"], collections: ["notes"])
            }
            assertThrows(.invalidArgument, containing: "3 elements are not key and value pairs") {
                try creator.create([.int(3)], elements: [[], [], [.string("a"), .int(1), .string("b")], []])
            }
            assertThrows(.wrongType, containing: "'nums'") {
                try creator.create([.int(4)], elements: [[.string("not an int")], [], [], []])
            }
            assertThrows(.invalidArgument, containing: "2 element arrays for 4 collections") {
                try creator.create([.int(5)], elements: [[], []])
            }
        }
        XCTAssertTrue(try realm.verify().contains("backlink entries match their links"))
    }

    /// A table made before format 6 keeps its collection columns (small collections in the
    /// area); a property a migration adds to it gets a column in the row form; both work side
    /// by side, and a new class gets the row form.
    func testOldTablesKeepTheAreaAndNewColumnsUseTheRow() throws {
        let v1 = #"{"Old": {"properties": {"n": "int", "tags": "string[]"}}}"#
        do {
            Property.collectionsInArea = true
            defer { Property.collectionsInArea = false }
            let realm = try open("mixed.cove", schema: v1)
            try realm.write {
                for i in 0..<20 {
                    let o = try realm.dynamicCreate("Old", values: [("n", .int(Int64(i)))])
                    try o.dynamicList("tags").append(.string("t\(i)"))
                }
            }
            realm.close()
        }
        let v2 = #"{"Old": {"properties": {"n": "int", "tags": "string[]", "more": "int[]"}}, "New": {"properties": {"xs": "int<>"}}}"#
        let realm = try open("mixed.cove", schema: v2, version: 2)
        try realm.write {
            for (i, o) in try realm.dynamicObjects("Old").enumerated() {
                try o.dynamicList("more").append(.int(Int64(i)))
                try o.dynamicList("tags").append(.string("u"))
            }
            let n = try realm.dynamicCreate("New")
            _ = try n.dynamicMutableSet("xs").insert(.int(1))
        }
        // 20 lists in the area (tags), 20 in the rows (more), one set in a row (New.xs).
        XCTAssertEqual(try inlineCount(realm), 41)
        let first = try XCTUnwrap(realm.dynamicObjects("Old").first)
        XCTAssertEqual(try first.dynamicList("tags").values(), [.string("t0"), .string("u")])
        XCTAssertEqual(try first.dynamicList("more").values(), [.int(0)])
        XCTAssertEqual(try realm.objects("Old").filter("tags.@count == 2 AND more.@count == 1").count, 20)
        try realm.write { try realm.delete(first) }
        XCTAssertEqual(try inlineCount(realm), 39)
    }

    // MARK: Migrations

    func testMigrationDropsInlineDataOfARemovedPropertyAndClass() throws {
        do {
            let realm = try open()
            try realm.write {
                for i in 0..<50 {
                    let box = try realm.dynamicCreate("Box")
                    try box.dynamicList("words").append(.string("w\(i)"))
                    try box.dynamicList("notes").appendEmbedded().setValue(.string("n"), forKey: "text")
                    try box.dynamicMap("scores").setValue(.string("s"), forKey: "k")
                }
            }
            XCTAssertEqual(try inlineCount(realm), 150)
            realm.close()
        }
        // Box loses "words" and "notes"; Item goes away.
        let v2 = """
        {"Box": {"properties": {"name": "string", "scores": "string{}"}},
         "Note": {"embedded": true, "properties": {"text": "string"}}}
        """
        let realm = try open(schema: v2, version: 2) { _, _ in }
        XCTAssertEqual(try inlineCount(realm), 50, "only the maps are left inline")
        XCTAssertEqual(try realm.dynamicObjects("Note").count, 0, "the dropped list's embedded objects went with it")
        XCTAssertEqual(try realm.dynamicObjects("Box").first?.dynamicMap("scores")["k"], .string("s"))
        // Dropping the class frees its whole area.
        realm.close()
        let v3 = """
        {"Note": {"embedded": true, "properties": {"text": "string"}}, "Other": {"properties": {"x": "int"}}}
        """
        let last = try open(schema: v3, version: 3) { migration, _ in try migration.deleteData(forType: "Box") }
        XCTAssertEqual(try inlineCount(last), 0)
    }
}
