// Each merge rule with a hand-made case, applied in every order (and twice) to show that the
// outcome never depends on the order: last writer wins per property, a delete beats concurrent
// updates, a create newer than the delete brings the object back with only what was written
// after the delete, concurrent list inserts both survive, a removal beats a concurrent set or
// move, sets per value, maps per key with removals as tombstones.
import XCTest
import CoveSyncCore

final class MergeRuleTests: XCTestCase {
    private let dog = ref("Dog", .string("rex"))

    /// One operation as a changeset of its own.
    private func op(_ wall: UInt64, _ node: UInt64, _ change: SyncOperation.Change, object: SyncObjectRef? = nil, counter: UInt32 = 0) -> Changeset {
        let c = clock(wall, counter, node)
        return try! Changeset(clientId: node, clientVersion: wall, clock: c,
                              operations: [try! SyncOperation(clock: c, object: object ?? dog, change: change)])
    }

    /// Every order of up to 5 items; 150 seeded shuffles of more.
    private func orders<T>(_ items: [T]) -> [[T]] {
        guard items.count > 5 else { return permutations(items) }
        var random = SeededRandom(seed: UInt64(items.count))
        return [items] + (0..<150).map { _ in items.shuffled(using: &random) }
    }

    private func permutations<T>(_ items: [T]) -> [[T]] {
        guard items.count > 1 else { return [items] }
        var out: [[T]] = []
        for (i, item) in items.enumerated() {
            var rest = items
            rest.remove(at: i)
            for tail in permutations(rest) { out.append([item] + tail) }
        }
        return out
    }

    /// The snapshot after `changesets`, checked to be the same for every order (or many, for more
    /// than 5) and with every changeset applied twice.
    private func merged(_ changesets: [Changeset], file: StaticString = #filePath, line: UInt = #line) -> SyncSnapshot {
        var first: SyncSnapshot? = nil
        for order in orders(changesets) {
            var replica = SyncReplica()
            for c in order { replica.apply(c) }
            var twice = replica
            for c in order.reversed() { twice.apply(c) }
            let snapshot = replica.snapshot()
            XCTAssertEqual(twice.snapshot(), snapshot, "applying again changed the outcome", file: file, line: line)
            if let first {
                XCTAssertEqual(snapshot, first, "order \(order.map(\.clock)) differs", file: file, line: line)
            }
            first = snapshot
        }
        return first ?? SyncReplica().snapshot()
    }

    private func properties(_ s: SyncSnapshot) -> [String: SyncValue]? {
        s.objects.first?.properties
    }

    func testLastWriterWinsPerProperty() {
        let s = merged([
            op(100, 1, .create(values: ["name": .string("Rex"), "age": .int(1)])),
            op(200, 2, .setProperty("age", .int(2))),
            op(200, 3, .setProperty("age", .int(3))),  // same wall and counter: node 3 wins
            op(150, 4, .setProperty("name", .string("Max"))),
        ])
        XCTAssertEqual(properties(s), ["name": .string("Max"), "age": .int(3)])
    }

    func testDeleteBeatsConcurrentUpdates() {
        // The update's clock is after the delete's (its client's clock runs ahead), and before it.
        let s = merged([
            op(100, 1, .create(values: ["age": .int(1)])),
            op(300, 1, .delete),
            op(400, 2, .setProperty("age", .int(9))),
            op(200, 3, .setProperty("age", .int(5))),
        ])
        XCTAssertEqual(s.objects, [])
    }

    func testACreateOlderThanTheDeleteStaysDeleted() {
        let s = merged([op(100, 1, .create(values: [:])), op(300, 1, .delete), op(250, 2, .create(values: ["age": .int(4)]))])
        XCTAssertEqual(s.objects, [])
    }

    func testARecreatedObjectShowsOnlyWritesAfterTheDelete() {
        let s = merged([
            op(100, 1, .create(values: ["name": .string("Rex"), "age": .int(1)])),
            op(110, 1, .listInsert(property: "toys", position: position("V"), value: .string("ball"))),
            op(120, 1, .setAdd(property: "tags", value: .string("old"))),
            op(130, 1, .mapSet(property: "notes", key: "vet", value: .string("Ann"))),
            op(300, 2, .delete),
            op(400, 3, .create(values: ["age": .int(2)])),
            // Written after the delete but concurrently with the create: it shows.
            op(350, 1, .setProperty("weight", .double(7))),
            op(360, 1, .setAdd(property: "tags", value: .string("new"))),
        ])
        XCTAssertEqual(s.objects.count, 1)
        XCTAssertEqual(properties(s), ["age": .int(2), "weight": .double(7)])
        XCTAssertEqual(s.objects.first?.lists, [:])
        XCTAssertEqual(s.objects.first?.sets, ["tags": [.string("new")]])
        XCTAssertEqual(s.objects.first?.maps, [:])
    }

    func testConcurrentCreatesMergePerProperty() {
        let s = merged([op(100, 1, .create(values: ["name": .string("A"), "age": .int(1)])), op(100, 2, .create(values: ["name": .string("B")]))])
        XCTAssertEqual(properties(s), ["name": .string("B"), "age": .int(1)])
    }

    func testConcurrentInsertsAtOnePlaceBothSurvive() throws {
        let p1 = try ListPosition.between(position("V"), nil, node: 2)
        let p2 = try ListPosition.between(position("V"), nil, node: 3)
        let s = merged([
            op(100, 1, .create(values: [:])),
            op(110, 1, .listInsert(property: "toys", position: position("V"), value: .string("first"))),
            op(200, 2, .listInsert(property: "toys", position: p1, value: .string("from 2"))),
            op(200, 3, .listInsert(property: "toys", position: p2, value: .string("from 3"))),
            // Equal positions (a faulty node) still order, by element id.
            op(210, 5, .listInsert(property: "toys", position: position("X"), value: .string("x from 5"))),
            op(210, 4, .listInsert(property: "toys", position: position("X"), value: .string("x from 4"))),
        ])
        XCTAssertEqual(s.objects.first?.lists["toys"], [.string("first"), .string("from 2"), .string("from 3"), .string("x from 4"), .string("x from 5")])
    }

    func testRemoveBeatsConcurrentSetAndMove() {
        let element = clock(110, 0, 1)
        let s = merged([
            op(100, 1, .create(values: [:])),
            op(110, 1, .listInsert(property: "toys", position: position("V"), value: .string("ball"))),
            op(120, 1, .listInsert(property: "toys", position: position("k"), value: .string("bone"))),
            op(200, 2, .listRemove(property: "toys", element: element)),
            op(300, 3, .listSet(property: "toys", element: element, value: .string("kite"))),
            op(300, 4, .listMove(property: "toys", element: element, position: position("z"))),
        ])
        XCTAssertEqual(s.objects.first?.lists["toys"], [.string("bone")])
    }

    func testConcurrentMovesAndSetsOfOneElement() {
        let element = clock(110, 0, 1)
        let s = merged([
            op(100, 1, .create(values: [:])),
            op(110, 1, .listInsert(property: "toys", position: position("V"), value: .string("ball"))),
            op(120, 1, .listInsert(property: "toys", position: position("k"), value: .string("bone"))),
            op(200, 2, .listMove(property: "toys", element: element, position: position("z"))),
            op(190, 3, .listMove(property: "toys", element: element, position: position("A"))),
            op(200, 3, .listSet(property: "toys", element: element, value: .string("kite"))),
        ])
        // The latest move wins; the element shows once.
        XCTAssertEqual(s.objects.first?.lists["toys"], [.string("bone"), .string("kite")])
    }

    func testOperationsOnAnElementBeforeItsInsertArrive() {
        let element = clock(110, 0, 1)
        let s = merged([
            op(100, 1, .create(values: [:])),
            op(200, 2, .listSet(property: "toys", element: element, value: .string("kite"))),
            op(110, 1, .listInsert(property: "toys", position: position("V"), value: .string("ball"))),
        ])
        XCTAssertEqual(s.objects.first?.lists["toys"], [.string("kite")])
    }

    func testSetsKeepTheLatestAddOrRemovePerValue() {
        let s = merged([
            op(100, 1, .create(values: [:])),
            op(200, 1, .setAdd(property: "tags", value: .int(1))),
            op(300, 2, .setRemove(property: "tags", value: .int(1))),
            op(200, 2, .setRemove(property: "tags", value: .int(2))),
            op(250, 3, .setAdd(property: "tags", value: .int(2))),
            op(260, 3, .setAdd(property: "tags", value: .double(2))),
        ])
        XCTAssertEqual(s.objects.first?.sets["tags"], [.int(2), .double(2)])
    }

    func testMapsKeepTheLatestWritePerKeyWithRemovalsAsTombstones() {
        let s = merged([
            op(100, 1, .create(values: [:])),
            op(200, 1, .mapSet(property: "notes", key: "a", value: .int(1))),
            op(300, 2, .mapRemove(property: "notes", key: "a")),
            op(250, 3, .mapSet(property: "notes", key: "a", value: .int(3))),
            op(200, 2, .mapRemove(property: "notes", key: "b")),
            op(210, 3, .mapSet(property: "notes", key: "b", value: .int(4))),
            // Two spellings of one text are two keys.
            op(220, 3, .mapSet(property: "notes", key: "\u{E9}", value: .int(5))),
            op(230, 3, .mapSet(property: "notes", key: "e\u{301}", value: .int(6))),
        ])
        XCTAssertEqual(s.objects.first?.maps["notes"], [
            SyncSnapshot.MapEntry(key: "b", value: .int(4)), SyncSnapshot.MapEntry(key: "e\u{301}", value: .int(6)),
            SyncSnapshot.MapEntry(key: "\u{E9}", value: .int(5)),
        ])
    }

    func testKeysThatDifferInBytesNameDifferentObjects() {
        let a = ref("Dog", .string("\u{E9}")), b = ref("Dog", .string("e\u{301}"))
        let s = merged([op(100, 1, .create(values: ["n": .int(1)]), object: a), op(100, 2, .create(values: ["n": .int(2)]), object: b)])
        XCTAssertEqual(s.objects.map(\.ref), [b, a])
    }

    func testSnapshotTextIsCanonical() {
        let s = merged([
            op(100, 1, .create(values: ["b": .int(1), "a": .string("x")])),
            op(110, 1, .setAdd(property: "s", value: .int(2))),
            op(120, 1, .setAdd(property: "s", value: .int(1))),
            op(130, 1, .mapSet(property: "m", key: "k", value: .null)),
        ])
        XCTAssertEqual(s.description, "Dog['rex'] a='x' b=1 s=<1, 2> m={'k': null}")
    }
}
