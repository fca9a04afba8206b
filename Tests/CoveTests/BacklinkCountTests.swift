// Backlinks count each link, as in Realm: an object a list holds twice has two backlinks from
// that list, through the dynamic API, typed LinkingObjects, backlink Results and the query
// language (`@links.Class.prop.@count`, a backlinks property's @count). Removing one of the
// two, clearing the list, deleting the owner and deleting the target keep the count right.
import XCTest
import Cove

final class CountedPet: Object {
    @Persisted var name = ""
    @Persisted(originProperty: "pets") var keepers: LinkingObjects<CountedKeeper>
}

final class CountedKeeper: Object {
    @Persisted var name = ""
    @Persisted var pets: List<CountedPet>
}

final class BacklinkCountTests: CoveTestCase {
    static let schemaJSON = """
    {"Person": {"properties": {"name": "string", "dogs": "Dog[]", "best": "Dog?", "pack": "Dog<>"}},
     "Dog": {"properties": {"name": "string", "owners": "@links(Person.dogs)", "fans": "@links(Person.best)",
                            "packs": "@links(Person.pack)"}}}
    """

    private var realm: Realm!
    private var rex: DynamicObject!
    private var ann: DynamicObject!
    private var bob: DynamicObject!

    /// Ann's list holds Rex twice (and her set and best link once each); Bob's once.
    override func setUpWithError() throws {
        try super.setUpWithError()
        realm = try Realm(configuration: .init(path: "\(folder)/b.cove", durability: .noSync,
                                               schema: try Schema(jsonText: Self.schemaJSON), schemaVersion: 1))
        try realm.write {
            rex = try realm.dynamicCreate("Dog", values: [("name", .string("rex"))])
            ann = try realm.dynamicCreate("Person", values: [("name", .string("ann")), ("best", .link(rex.link))])
            bob = try realm.dynamicCreate("Person", values: [("name", .string("bob"))])
            for _ in 0..<2 { try ann.dynamicList("dogs").append(.link(rex.link)) }
            _ = try ann.dynamicMutableSet("pack").insert(.link(rex.link))
            try bob.dynamicList("dogs").append(.link(rex.link))
        }
    }

    override func tearDownWithError() throws {
        realm?.close()
        realm = nil
        try super.tearDownWithError()
    }

    /// The owners through every reading: the dynamic API, backlink Results and the query
    /// language, which must all agree.
    private func owners(file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let dynamic = try rex.linkingObjects("owners").map { try $0["name"].description }
        let results = try rex.linkingObjectsResults("owners")
        XCTAssertEqual(try results.elements().map { try $0["name"].description }, dynamic, file: file, line: line)
        let count = try results.checkedCount()
        for query in ["owners.@count == \(count)", "@links.Person.dogs.@count == \(count)",
                      "SUBQUERY(owners, $p, $p.name != '').@count == \(count)"] {
            XCTAssertEqual(try realm.objects("Dog").filter(query).checkedCount(), 1, query, file: file, line: line)
        }
        return dynamic
    }

    func testALinkHeldTwiceCountsTwice() throws {
        XCTAssertEqual(try owners(), ["\"ann\"", "\"ann\"", "\"bob\""])
        XCTAssertEqual(try rex.linkingObjects("fans").count, 1, "a single link is one backlink")
        XCTAssertEqual(try rex.linkingObjects("packs").count, 1, "a set holds an object once")
        // Every incoming link: two in Ann's list, one in Bob's, her best link and her set.
        XCTAssertEqual(try realm.objects("Dog").filter("@links.@count == 5").checkedCount(), 1)
        // The query language's ANY sees each owner; a filter over the results keeps both rows.
        XCTAssertEqual(try realm.objects("Person").filter("ANY dogs.owners.name == 'bob'").checkedCount(), 2)
        XCTAssertEqual(try rex.linkingObjectsResults("owners").filter("name == 'ann'").checkedCount(), 2)
        XCTAssertTrue(try realm.verify().contains("backlink entries match their links"))
    }

    func testRemovingOneOfTheTwoLeavesOne() throws {
        try realm.write { try ann.dynamicList("dogs").remove(at: 1) }
        XCTAssertEqual(try owners(), ["\"ann\"", "\"bob\""])
        try realm.write { try ann.dynamicList("dogs").replace(index: 0, with: .link(rex.link)) }
        XCTAssertEqual(try owners(), ["\"ann\"", "\"bob\""], "replacing an element by itself keeps one")
        try realm.write { try ann.dynamicList("dogs").insert(.link(rex.link), at: 0) }
        try realm.write { try ann.dynamicList("dogs").move(from: 0, to: 1) }
        XCTAssertEqual(try owners(), ["\"ann\"", "\"ann\"", "\"bob\""], "a move keeps both")
        try realm.write { try ann.dynamicList("dogs").remove(at: 0) }
        try realm.write { try ann.dynamicList("dogs").remove(at: 0) }
        XCTAssertEqual(try owners(), ["\"bob\""])
        XCTAssertTrue(try realm.verify().contains("backlink entries match their links"))
    }

    func testClearingTheListAndDeletingTheOwner() throws {
        try realm.write { try ann.dynamicList("dogs").removeAll() }
        XCTAssertEqual(try owners(), ["\"bob\""])
        try realm.write { for _ in 0..<3 { try ann.dynamicList("dogs").append(.link(rex.link)) } }
        XCTAssertEqual(try owners(), ["\"ann\"", "\"ann\"", "\"ann\"", "\"bob\""])
        try realm.write { try realm.delete(ann) }
        XCTAssertEqual(try owners(), ["\"bob\""])
        XCTAssertEqual(try rex.linkingObjects("fans").count, 0)
        XCTAssertEqual(try rex.linkingObjects("packs").count, 0)
        XCTAssertTrue(try realm.verify().contains("backlink entries match their links"))
    }

    func testDeletingTheTargetTakesItOutOfBothPlaces() throws {
        let results = try rex.linkingObjectsResults("owners")
        XCTAssertEqual(try results.checkedCount(), 3)
        try realm.write { try realm.delete(rex) }
        XCTAssertEqual(try ann.dynamicList("dogs").values(), [])
        XCTAssertEqual(try bob.dynamicList("dogs").values(), [])
        XCTAssertEqual(try results.checkedCount(), 0, "nothing links to a deleted object")
        assertThrows(.invalidated, containing: "was deleted") { _ = try rex.linkingObjects("owners") }
        XCTAssertTrue(try realm.verify().contains("backlink entries match their links"))
    }

    func testBacklinkResultsAreLiveAndFreeze() throws {
        let results = try rex.linkingObjectsResults("owners")
        let frozen = results.freeze()
        try realm.write { try bob.dynamicList("dogs").append(.link(rex.link)) }
        XCTAssertEqual(try results.checkedCount(), 4)
        XCTAssertEqual(try frozen.checkedCount(), 3)
        XCTAssertEqual(try results.sorted(byKeyPath: "name", ascending: false).elements().map { try $0["name"].description },
                       ["\"bob\"", "\"bob\"", "\"ann\"", "\"ann\""])
        assertThrows(.wrongType, containing: "not backlinks") { _ = try rex.linkingObjectsResults("name") }
        assertThrows(.notFound, containing: "nope") { _ = try rex.linkingObjectsResults("nope") }
    }

    func testBacklinkResultsNotifyEachLink() throws {
        let results = try rex.linkingObjectsResults("owners")
        var changes: [CollectionChangeSet] = []
        var initial = 0
        let token = try results.observeChanges { change in
            switch change {
            case .initial: initial += 1
            case .update(let c): changes.append(c)
            case .error(let e): XCTFail("\(e)")
            }
        }
        try realm.deliver()
        XCTAssertEqual(initial, 1)
        var rows = try results.elements().map(\.objectKey)
        /// Commits `edit`, delivers, and checks that the change set turns the old rows into the new.
        func step(_ edit: () throws -> Void, deletions: [Int], insertions: [Int], line: UInt = #line) throws {
            try realm.write { try edit() }
            try realm.deliver()
            let now = try results.elements().map(\.objectKey)
            let c = try XCTUnwrap(changes.last, line: line)
            changes.removeAll()
            XCTAssertEqual(c.deletions, deletions, line: line)
            XCTAssertEqual(c.insertions, insertions, line: line)
            XCTAssertEqual(CollectionChangeSet.apply(c, to: rows, new: now), now, line: line)
            rows = now
        }
        try step({ try bob.dynamicList("dogs").append(.link(rex.link)) }, deletions: [], insertions: [3])    // ann ann bob bob
        try step({ try ann.dynamicList("dogs").remove(at: 0) }, deletions: [1], insertions: [])              // ann bob bob
        try step({ try ann.dynamicList("dogs").append(.link(rex.link)) }, deletions: [], insertions: [1])    // ann ann bob bob
        try step({ try ann.dynamicList("dogs").removeAll() }, deletions: [0, 1], insertions: [])             // bob bob
        token.invalidate()
    }

    func testTypedLinkingObjectsCountEachLink() throws {
        let typed = try Realm(configuration: try .init(path: "\(folder)/typed.cove", objectTypes: [CountedPet.self, CountedKeeper.self],
                                                       schemaVersion: 1, durability: .noSync))
        defer { typed.close() }
        let pet = CountedPet()
        pet.name = "rex"
        let keeper = CountedKeeper()
        keeper.name = "ann"
        try typed.write {
            typed.add(keeper)
            typed.add(pet)
            keeper.pets.append(pet)
            keeper.pets.append(pet)
        }
        XCTAssertEqual(pet.keepers.count, 2)
        XCTAssertEqual(pet.keepers.map(\.name), ["ann", "ann"])
        try typed.write { keeper.pets.remove(at: 0) }
        XCTAssertEqual(pet.keepers.count, 1)
        try typed.write { keeper.pets.removeAll() }
        XCTAssertEqual(pet.keepers.count, 0)
    }
}
