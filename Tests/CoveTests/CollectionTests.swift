// Lists, sets, maps and embedded objects through the Swift dynamic API: every operation with its
// bad input, links in collections (backlinks, a deleted target leaving every collection),
// embedded objects living and dying with their owner, persistence, verify(), and a randomized
// run against an in-memory model with reopens.
import XCTest
import Cove

final class CollectionTests: CoveTestCase {

    static let schemaJSON = """
    {
      "Dog": {"properties": {"name": "string", "nums": "int[]", "maybe": "int?[]", "tags": "string<>",
                             "scores": "double<>", "prices": "decimal128<>", "days": "date<>",
                             "weights": "double{}", "friends": "Dog[]", "pals": "Dog<>", "byName": "Dog{}",
                             "toy": "Toy?", "toys": "Toy[]", "toyMap": "Toy{}", "anything": "mixed[]",
                             "fans": "@links(Dog.friends)"}},
      "Toy": {"embedded": true, "properties": {"brand": "string", "parts": "Part[]"}},
      "Part": {"embedded": true, "properties": {"label": "string"}}
    }
    """

    private func open(_ name: String = "c.cove") throws -> Realm {
        try Realm(configuration: .init(path: "\(folder)/\(name)", durability: .noSync,
                                       schema: try Schema(jsonText: Self.schemaJSON), schemaVersion: 1))
    }

    private func dogLink(_ realm: Realm, _ dog: DynamicObject) -> Value { .link(dog.link) }

    // MARK: Lists

    func testListOperationsAndPersistence() throws {
        do {
            let realm = try open()
            try realm.write {
                let dog = try realm.dynamicCreate("Dog", values: [("name", .string("Rex"))])
                let nums = try dog.dynamicList("nums")
                for i in 0..<5 { try nums.append(.int(Int64(i))) }        // 0 1 2 3 4
                try nums.insert(.int(10), at: 0)                          // 10 0 1 2 3 4
                try nums.insert(.int(11), at: 3)                          // 10 0 1 11 2 3 4
                try nums.replace(index: 1, with: .int(7))                 // 10 7 1 11 2 3 4
                try nums.remove(at: 6)                                    // 10 7 1 11 2 3
                try nums.move(from: 0, to: 5)                             // 7 1 11 2 3 10
                XCTAssertEqual(try nums.values(), [7, 1, 11, 2, 3, 10].map { Value.int($0) })
                XCTAssertEqual(try nums[2], .int(11))
                XCTAssertEqual(try nums.count, 6)
                let maybe = try dog.dynamicList("maybe")
                try maybe.append(.null)
                try maybe.append(.int(1))
                let anything = try dog.dynamicList("anything")
                try anything.append(.string("a"))
                try anything.append(.double(1.5))
                try anything.append(.null)
            }
            XCTAssertTrue(try realm.verify().contains("live"))
        }
        let realm = try open()
        let dog = try XCTUnwrap(realm.dynamicObjects("Dog").first)
        XCTAssertEqual(try dog.dynamicList("nums").values(), [7, 1, 11, 2, 3, 10].map { Value.int($0) })
        XCTAssertEqual(try dog.dynamicList("maybe").values(), [.null, .int(1)])
        XCTAssertEqual(try dog.dynamicList("anything").values(), [.string("a"), .double(1.5), .null])
        try realm.write { try dog.dynamicList("nums").removeAll() }
        XCTAssertEqual(try dog.dynamicList("nums").count, 0)
        XCTAssertTrue(try realm.verify().contains("live"))
    }

    func testListBadInput() throws {
        let realm = try open()
        let dog = try realm.write { try realm.dynamicCreate("Dog") }
        let nums = try dog.dynamicList("nums")
        assertThrows(.notInWrite, containing: "outside a write") { try nums.append(.int(1)) }
        // Writes that would change nothing are refused outside a write all the same.
        assertThrows(.notInWrite, containing: "outside a write") { try dog.dynamicMutableSet("tags").remove(.string("absent")) }
        assertThrows(.notInWrite, containing: "outside a write") { try dog.dynamicMap("weights").removeValue(forKey: "absent") }
        assertThrows(.notInWrite, containing: "outside a write") { try dog.dynamicMutableSet("tags").union([]) }
        assertThrows(.notInWrite, containing: "outside a write") { _ = try dog.dynamicList("toys").appendEmbedded() }
        try realm.write {
            try nums.append(.int(1))
            assertThrows(.outOfRange, containing: "index 5 is out of range for list 'nums' of class 'Dog' (valid: 0...1)") {
                try nums.insert(.int(2), at: 5)
            }
            assertThrows(.outOfRange, containing: "index 1 is out of range") { try nums.remove(at: 1) }
            assertThrows(.outOfRange, containing: "index -1") { _ = try nums.value(at: -1) }
            assertThrows(.outOfRange, containing: "index 3") { try nums.move(from: 0, to: 3) }
            assertThrows(.wrongType, containing: "property 'nums' of class 'Dog' is int[], got string \"x\"") {
                try nums.append(.string("x"))
            }
            assertThrows(.wrongType, containing: "cannot be null") { try nums.append(.null) }
            assertThrows(.wrongType, containing: "Dog[] and cannot hold null") { try dog.dynamicList("friends").append(.null) }
            assertThrows(.wrongType, containing: "Dog<> and cannot hold null") { try dog.dynamicMutableSet("pals").insert(.null) }
            XCTAssertFalse(try dog.dynamicMutableSet("pals").contains(.null))
            assertThrows(.wrongType, containing: "not a set") { _ = try dog.dynamicMutableSet("nums") }
            assertThrows(.wrongType, containing: "not a list") { _ = try dog.dynamicList("name") }
            assertThrows(.notFound, containing: "no property 'nope'") { _ = try dog.dynamicList("nope") }
            assertThrows(.wrongType, containing: "is a list") { try dog.setValue(.int(1), forKey: "nums") }
            assertThrows(.wrongType, containing: "links to Dog") {
                let toy = try dog.createEmbeddedObject(forProperty: "toy")
                try dog.dynamicList("friends").append(.link(toy.link))
            }
            // A create with a bad value for a collection or an embedded link leaves no object behind.
            let before = try realm.objectCount("Dog")
            assertThrows(.wrongType, containing: "is a list") {
                try realm.dynamicCreate("Dog", values: [("name", .string("x")), ("nums", .int(1))])
            }
            assertThrows(.invalidArgument, containing: "create it in place") {
                try realm.dynamicCreate("Dog", values: [("name", .string("x")), ("toy", .link(try dog.createEmbeddedObject(forProperty: "toy").link))])
            }
            XCTAssertEqual(try realm.objectCount("Dog"), before)
            try realm.delete(dog)
            assertThrows(.invalidated, containing: "was deleted") { _ = try nums.count }
            assertThrows(.invalidated, containing: "was deleted") { try nums.append(.int(1)) }
            XCTAssertTrue(nums.isInvalidated)
        }
    }

    func testListOrderKeysRespaceUnderRepeatedInsertsAtOnePlace() throws {
        let realm = try open()
        var model: [Int64] = []
        try realm.write {
            let nums = try realm.dynamicCreate("Dog").dynamicList("nums")
            for i in 0..<150 {
                // At the front, then always just after the first element, then in the middle:
                // each exhausts the gap between two order keys within ~32 inserts.
                let at = i < 50 ? 0 : (i < 100 ? 1 : model.count / 2)
                try nums.insert(.int(Int64(i)), at: at)
                model.insert(Int64(i), at: at)
            }
            XCTAssertEqual(try nums.values(), model.map { Value.int($0) })
        }
        XCTAssertTrue(try realm.verify().contains("live"))
    }

    func testLinksInListsAndSetsLeaveWhenTheTargetIsDeleted() throws {
        let realm = try open()
        try realm.write {
            let a = try realm.dynamicCreate("Dog", values: [("name", .string("a"))])
            let b = try realm.dynamicCreate("Dog", values: [("name", .string("b"))])
            let c = try realm.dynamicCreate("Dog", values: [("name", .string("c"))])
            let friends = try a.dynamicList("friends")
            try friends.append(.link(b.link))
            try friends.append(.link(c.link))
            try friends.append(.link(b.link))
            try c.dynamicList("friends").append(.link(b.link))
            try a.dynamicMutableSet("pals").insert(.link(b.link))
            try a.dynamicMutableSet("pals").insert(.link(c.link))
            try a.dynamicMap("byName").setValue(.link(b.link), forKey: "bee")
            // Each link counts: a's list holds b twice.
            XCTAssertEqual(try b.linkingObjects("fans").map(\.objectKey).sorted(), [a.objectKey, a.objectKey, c.objectKey])
            XCTAssertEqual(try friends.object(at: 1)?.value(forKey: "name"), .string("c"))
            assertThrows(.invalidArgument, containing: "does not exist") {
                try friends.append(.link(ObjectLink(classKey: b.link.classKey, objectKey: 99)))
            }
            try realm.delete(b)
            XCTAssertEqual(try friends.values(), [.link(c.link)])
            XCTAssertEqual(try c.dynamicList("friends").count, 0)
            XCTAssertEqual(try a.dynamicMutableSet("pals").values(), [.link(c.link)])
            // A map keeps the key and loses the link, as Realm's dictionaries do.
            XCTAssertEqual(try a.dynamicMap("byName").value(forKey: "bee"), .null)
            try friends.remove(at: 0)
            XCTAssertEqual(try c.linkingObjects("fans").count, 0)
        }
        XCTAssertTrue(try realm.verify().contains("live"))
    }

    // MARK: Sets

    func testSetOperationsAlgebraAndAggregates() throws {
        let realm = try open()
        try realm.write {
            let a = try realm.dynamicCreate("Dog").dynamicMutableSet("tags")
            let b = try realm.dynamicCreate("Dog").dynamicMutableSet("tags")
            XCTAssertTrue(try a.insert(.string("b")))
            XCTAssertTrue(try a.insert(.string("a")))
            XCTAssertFalse(try a.insert(.string("a")))
            try a.insert(.string("c"))
            XCTAssertEqual(try a.values(), [.string("a"), .string("b"), .string("c")])
            XCTAssertEqual(try a[1], .string("b"))
            XCTAssertTrue(try a.contains(.string("c")))
            XCTAssertFalse(try a.contains(.string("z")))
            try b.union([.string("c"), .string("d")])
            XCTAssertTrue(try a.intersects(b))
            XCTAssertFalse(try a.isSubset(of: b))
            try a.intersect(b)
            XCTAssertEqual(try a.values(), [.string("c")])
            XCTAssertTrue(try a.isSubset(of: b))
            try a.union(b)
            XCTAssertTrue(try a.isEqual(to: b))
            try a.subtract(b)
            XCTAssertEqual(try a.count, 0)
            XCTAssertFalse(try a.intersects(b))
            try a.setSet(b)
            XCTAssertEqual(try a.values(), [.string("c"), .string("d")])
            XCTAssertTrue(try a.remove(.string("d")))
            XCTAssertFalse(try a.remove(.string("d")))
            assertThrows(.wrongType, containing: "min of set 'tags' of class 'Dog': its elements are string") { _ = try a.min() }
            assertThrows(.wrongType, containing: "is string<>, got int 1") { try a.insert(.int(1)) }

            let scores = try realm.dynamicCreate("Dog").dynamicMutableSet("scores")
            XCTAssertNil(try scores.min())
            XCTAssertNil(try scores.average())
            XCTAssertEqual(try scores.sum(), .double(0))          // zero of the element type
            for v in [2.5, -1.0, 4.0] { try scores.insert(.double(v)) }
            try scores.insert(.int(3))                      // widened to a double
            XCTAssertEqual(try scores.values(), [.double(-1), .double(2.5), .double(3), .double(4)])
            XCTAssertEqual(try scores.min(), .double(-1))
            XCTAssertEqual(try scores.max(), .double(4))
            XCTAssertEqual(try scores.sum(), .double(8.5))
            XCTAssertEqual(try scores.average(), .double(2.125))

            let prices = try realm.dynamicCreate("Dog").dynamicMutableSet("prices")
            for text in ["0.1", "0.2", "10"] { try prices.insert(.decimal128(try Decimal128(text))) }
            XCTAssertEqual(try prices.sum(), .decimal128(try Decimal128("10.3")))
            XCTAssertEqual(try prices.min(), .decimal128(try Decimal128("0.1")))
            guard case .decimal128(let mean)? = try prices.average() else { return XCTFail("no average") }
            XCTAssertEqual(mean.description.prefix(8), "3.433333")

            let days = try realm.dynamicCreate("Dog").dynamicMutableSet("days")
            try days.insert(.timestamp(Timestamp(seconds: 5, nanoseconds: 0)))
            try days.insert(.timestamp(Timestamp(seconds: -5, nanoseconds: 0)))
            XCTAssertEqual(try days.max(), .timestamp(Timestamp(seconds: 5, nanoseconds: 0)))
            assertThrows(.wrongType, containing: "sum of set 'days'") { _ = try days.sum() }
        }
        XCTAssertTrue(try realm.verify().contains("live"))
    }

    // MARK: Maps

    func testMapOperations() throws {
        let realm = try open()
        try realm.write {
            let dog = try realm.dynamicCreate("Dog")
            let m = try dog.dynamicMap("weights")
            try m.setValue(.double(2), forKey: "b")
            try m.setValue(.int(1), forKey: "a")
            try m.setValue(.double(3), forKey: "ü")
            try m.setValue(.double(4), forKey: "b")
            XCTAssertEqual(try m.count, 3)
            XCTAssertEqual(try m["a"], .double(1))
            XCTAssertNil(try m["zz"])
            XCTAssertEqual(try m.keys(), ["a", "b", "ü"])
            XCTAssertEqual(try m.entry(at: 1).value, .double(4))
            XCTAssertTrue(try m.removeValue(forKey: "a"))
            XCTAssertFalse(try m.removeValue(forKey: "a"))
            assertThrows(.invalidArgument, containing: "key \"a.b\" may not contain '.'") { try m.setValue(.double(1), forKey: "a.b") }
            assertThrows(.invalidArgument, containing: "start with '$'") { try m.setValue(.double(1), forKey: "$x") }
            assertThrows(.wrongType, containing: "cannot be null") { try m.setValue(.null, forKey: "n") }
            assertThrows(.outOfRange, containing: "index 2") { _ = try m.entry(at: 2) }
            try m.removeAll()
            XCTAssertEqual(try m.count, 0)
        }
        XCTAssertTrue(try realm.verify().contains("live"))
    }

    // MARK: Embedded objects

    func testEmbeddedObjectsLiveAndDieWithTheirOwner() throws {
        let realm = try open()
        try realm.write {
            let dog = try realm.dynamicCreate("Dog")
            let first = try dog.createEmbeddedObject(forProperty: "toy")
            try first.setValue(.string("Acme"), forKey: "brand")
            try first.dynamicList("parts").appendEmbedded().setValue(.string("wheel"), forKey: "label")
            XCTAssertEqual(try dog.linkedObject("toy")?.value(forKey: "brand"), .string("Acme"))
            XCTAssertEqual(try realm.objectCount("Part"), 1)
            // Replacing deletes the old one, with what it owns.
            let second = try dog.createEmbeddedObject(forProperty: "toy")
            XCTAssertTrue(first.isInvalidated)
            XCTAssertEqual(try realm.objectCount("Part"), 0)
            XCTAssertEqual(try realm.objectCount("Toy"), 1)
            assertThrows(.invalidArgument, containing: "create it in place") { try dog.setValue(.link(second.link), forKey: "toy") }
            try dog.setValue(.null, forKey: "toy")
            XCTAssertTrue(second.isInvalidated)

            let toys = try dog.dynamicList("toys")
            for brand in ["x", "y", "z"] { try toys.appendEmbedded().setValue(.string(brand), forKey: "brand") }
            try toys.insertEmbedded(at: 0).setValue(.string("w"), forKey: "brand")
            XCTAssertEqual(try (0..<4).map { try toys.object(at: $0)?.value(forKey: "brand") }, ["w", "x", "y", "z"].map { Value.string($0) })
            assertThrows(.invalidArgument, containing: "create them in place") { try toys.append(try toys.value(at: 0)) }
            try toys.remove(at: 1)
            XCTAssertEqual(try realm.objectCount("Toy"), 3)
            try dog.dynamicMap("toyMap").setEmbedded(forKey: "k").setValue(.string("m"), forKey: "brand")
            try dog.dynamicMap("toyMap").setEmbedded(forKey: "k")
            XCTAssertEqual(try realm.objectCount("Toy"), 4)
            assertThrows(.invalidArgument, containing: "embedded: create its objects in place") { try realm.dynamicCreate("Toy") }
            assertThrows(.wrongType, containing: "not of an embedded class") { try dog.dynamicList("friends").appendEmbedded() }

            // Deleting an embedded object directly takes it out of its owner.
            let middle = try XCTUnwrap(toys.object(at: 1))
            try realm.delete(middle)
            XCTAssertEqual(try toys.count, 2)

            try realm.delete(dog)
            XCTAssertEqual(try realm.objectCount("Toy"), 0)
            XCTAssertEqual(try realm.objectCount("Part"), 0)
        }
        XCTAssertTrue(try realm.verify().contains("live"))
    }

    func testDeletingAnOwnerFreesItsCollectionPages() throws {
        let realm = try open()
        let dog = try realm.write { try realm.dynamicCreate("Dog") }
        try realm.write {
            let nums = try dog.dynamicList("nums")
            for i in 0..<3000 { try nums.append(.int(Int64(i))) }
            let m = try dog.dynamicMap("weights")
            for i in 0..<500 { try m.setValue(.double(Double(i)), forKey: "key \(i) " + String(repeating: "x", count: 40)) }
        }
        XCTAssertTrue(try realm.verify().contains("live"))
        try realm.write { try realm.delete(dog) }
        // verify() proves live and free pages partition the file: a leaked collection page fails it.
        XCTAssertTrue(try realm.verify().contains("live"))
    }

    func testTenMegabyteValuesRoundTrip() throws {
        let big = (0..<10_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }
        let text = String(repeating: "ünïcode ", count: 1_250_000)
        do {
            let realm = try open()
            try realm.write {
                let dog = try realm.dynamicCreate("Dog", values: [("name", .string(text))])
                try dog.dynamicList("anything").append(.data(big))
                try dog.dynamicMap("weights").setValue(.double(1), forKey: "k")
            }
            realm.close()
        }
        let realm = try open()
        let dog = try XCTUnwrap(realm.dynamicObjects("Dog").first)
        XCTAssertEqual(try dog["name"], .string(text))
        XCTAssertEqual(try dog.dynamicList("anything")[0], .data(big))
        try realm.write { try realm.delete(dog) }
        XCTAssertTrue(try realm.verify().contains("live"))
    }

    // MARK: Randomized

    /// Random writes to lists, sets and maps of a few objects, checked against a model after every
    /// commit; the realm is reopened from disk at random points and verified after each commit.
    func testRandomizedCollectionsAgainstModel() throws {
        for seed in [UInt64(1), 2, 3] {
            try runRandomized(seed: seed, steps: 400)
        }
    }

    private struct Model {
        var nums: [[Int64]]
        var tags: [Set<String>]
        var weights: [[String: Double]]
        var friends: [[Int]]
    }

    private func runRandomized(seed: UInt64, steps: Int) throws {
        var state = seed &* 0x9E37_79B9_7F4A_7C15
        func random(_ n: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(n))
        }
        let name = "random-\(seed).cove"
        var realm = try open(name)
        let n = 4
        var model = Model(nums: Array(repeating: [], count: n), tags: Array(repeating: [], count: n),
                          weights: Array(repeating: [:], count: n), friends: Array(repeating: [], count: n))
        try realm.write { for _ in 0..<n { try realm.dynamicCreate("Dog") } }
        var step = 0
        while step < steps {
            let dogs = try realm.dynamicObjects("Dog")
            try realm.write {
                for _ in 0..<(1 + random(6)) {
                    step += 1
                    let i = random(n)
                    let dog = dogs[i]
                    switch random(9) {
                    case 0, 1:
                        let at = random(model.nums[i].count + 1)
                        let v = Int64(random(1000))
                        try dog.dynamicList("nums").insert(.int(v), at: at)
                        model.nums[i].insert(v, at: at)
                    case 2 where !model.nums[i].isEmpty:
                        let at = random(model.nums[i].count)
                        try dog.dynamicList("nums").remove(at: at)
                        model.nums[i].remove(at: at)
                    case 3 where !model.nums[i].isEmpty:
                        let from = random(model.nums[i].count), to = random(model.nums[i].count)
                        try dog.dynamicList("nums").move(from: from, to: to)
                        model.nums[i].insert(model.nums[i].remove(at: from), at: to)
                    case 4:
                        let t = "t\(random(12))"
                        XCTAssertEqual(try dog.dynamicMutableSet("tags").insert(.string(t)), model.tags[i].insert(t).inserted, "seed \(seed) step \(step)")
                    case 5:
                        let t = "t\(random(12))"
                        XCTAssertEqual(try dog.dynamicMutableSet("tags").remove(.string(t)), model.tags[i].remove(t) != nil, "seed \(seed) step \(step)")
                    case 6:
                        let k = "k\(random(10))", v = Double(random(100))
                        try dog.dynamicMap("weights").setValue(.double(v), forKey: k)
                        model.weights[i][k] = v
                    case 7:
                        let k = "k\(random(10))"
                        XCTAssertEqual(try dog.dynamicMap("weights").removeValue(forKey: k), model.weights[i].removeValue(forKey: k) != nil)
                    default:
                        let target = random(n)
                        try dog.dynamicList("friends").append(.link(dogs[target].link))
                        model.friends[i].append(target)
                    }
                }
            }
            // Check everything at this version, then maybe reopen.
            XCTAssertTrue(try realm.verify().contains("live"), "seed \(seed) step \(step)")
            let keyToIndex = Dictionary(uniqueKeysWithValues: dogs.enumerated().map { ($1.objectKey, $0) })
            for (i, dog) in dogs.enumerated() {
                XCTAssertEqual(try dog.dynamicList("nums").values(), model.nums[i].map { Value.int($0) }, "seed \(seed) step \(step)")
                XCTAssertEqual(try dog.dynamicMutableSet("tags").values(), model.tags[i].sorted().map { Value.string($0) }, "seed \(seed) step \(step)")
                let entries = try dog.dynamicMap("weights").entries()
                XCTAssertEqual(entries.map(\.key), model.weights[i].keys.sorted(), "seed \(seed) step \(step)")
                XCTAssertEqual(entries.map(\.value), model.weights[i].keys.sorted().map { Value.double(model.weights[i][$0] ?? -1) })
                let friends = try dog.dynamicList("friends").values().map { v -> Int in
                    guard case .link(let l) = v else { return -1 }
                    return keyToIndex[l.objectKey] ?? -1
                }
                XCTAssertEqual(friends, model.friends[i], "seed \(seed) step \(step)")
                let fans = try dog.linkingObjects("fans").map { keyToIndex[$0.objectKey] ?? -1 }.sorted()
                // One per link: a dog whose list holds this one twice is a fan twice.
                let expected = (0..<n).flatMap { j in repeatElement(j, count: model.friends[j].filter { $0 == i }.count) }
                XCTAssertEqual(fans, expected, "seed \(seed) step \(step)")
            }
            if random(5) == 0 {
                realm.close()
                realm = try open(name)
            }
        }
    }
}
