// Sectioned results and projections through the Swift API: sections by a key path and by a key
// function, index-path change sets (a row whose key changes moves between sections; sections
// inserted and deleted), a section observed by its key, and projections that read, write and
// report changes under their own names.
import XCTest
import Cove

final class SectionTests: CoveTestCase {
    static let schemaJSON = """
    {"Person": {"properties": {"firstName": "string", "lastName": "string", "age": "int", "friends": "Person[]"}}}
    """

    private func open() throws -> Realm {
        try Realm(configuration: .init(path: "\(folder)/s.cove", durability: .noSync,
                                       schema: try Schema(jsonText: Self.schemaJSON), schemaVersion: 1))
    }

    private func names(_ objects: [DynamicObject]) throws -> [String] {
        try objects.map { o -> String in
            guard case .string(let s) = try o["firstName"] else { return "?" }
            return s
        }
    }

    func testSectionsAndTheirChanges() throws {
        let realm = try open()
        var people: [String: DynamicObject] = [:]
        try realm.write {
            for (name, age) in [("Ann", 30), ("Bob", 20), ("Amy", 20), ("Cid", 30), ("Bea", 40)] {
                people[name] = try realm.dynamicCreate("Person", values: [("firstName", .string(name)), ("age", .int(Int64(age)))])
            }
        }
        let results = try realm.objects("Person")
        let byAge = try results.sectioned(by: "age")
        XCTAssertEqual(try byAge.allKeys(), [.int(20), .int(30), .int(40)])
        XCTAssertEqual(try names(byAge.sections()[0].elements), ["Bob", "Amy"])
        let byLetter = try results.sectioned(sortDescriptors: [SortDescriptor(keyPath: "firstName")], SectionKey.firstLetter("firstName"))
        XCTAssertEqual(try byLetter.allKeys(), [.string("A"), .string("B"), .string("C")])
        XCTAssertEqual(try names(byLetter.section(at: 0).elements()), ["Amy", "Ann"])
        let descending = try results.sectioned(by: "age", ascending: false)
        XCTAssertEqual(try descending.allKeys(), [.int(40), .int(30), .int(20)])

        var changes: [SectionedResultsChange] = []
        let token = try byAge.observe(keyPaths: ["firstName"]) { if case .update(let c) = $0 { changes.append(c) } }
        var sectionChanges: [SectionedResultsChange] = []
        let thirty = try byAge.section(at: 1)
        XCTAssertEqual(thirty.key, .int(30))
        let sectionToken = try thirty.observe { if case .update(let c) = $0 { sectionChanges.append(c) } }
        try realm.deliver()
        // Bob moves from 20 to 30 (a change of the section key always notifies); Bea's section
        // goes away; a new section 50 comes; Ann is modified in place.
        try realm.write {
            try people["Bob"]?.setValue(.int(30), forKey: "age")
            try realm.delete(try XCTUnwrap(people["Bea"]))
            try realm.dynamicCreate("Person", values: [("firstName", .string("Dan")), ("age", .int(50))])
            try people["Ann"]?.setValue(.string("Ann"), forKey: "firstName")
        }
        try realm.deliver()
        let c = try XCTUnwrap(changes.last)
        XCTAssertEqual(c.sectionsToDelete, [2])
        XCTAssertEqual(c.sectionsToInsert, [2])
        XCTAssertEqual(c.deletions, [IndexPath(section: 0, row: 0)])
        XCTAssertEqual(c.insertions, [IndexPath(section: 1, row: 1)])
        XCTAssertEqual(c.modifications, [IndexPath(section: 1, row: 0)])
        // The section of 30 saw Bob arrive and Ann change.
        let s = try XCTUnwrap(sectionChanges.last)
        XCTAssertEqual(s.insertions, [IndexPath(section: 0, row: 1)])
        XCTAssertEqual(s.modifications, [IndexPath(section: 0, row: 0)])
        // The section disappears and comes back.
        try realm.write {
            try people["Ann"]?.setValue(.int(31), forKey: "age")
            try people["Bob"]?.setValue(.int(31), forKey: "age")
            try people["Cid"]?.setValue(.int(31), forKey: "age")
        }
        try realm.deliver()
        XCTAssertEqual(sectionChanges.last?.sectionsToDelete, [0])
        try realm.write { try people["Cid"]?.setValue(.int(30), forKey: "age") }
        try realm.deliver()
        XCTAssertEqual(sectionChanges.last?.sectionsToInsert, [0])
        let frozen = try byAge.freeze()
        XCTAssertTrue(frozen.isFrozen)
        frozen.realm.close()
        withExtendedLifetime([token, sectionToken]) {}
    }

    func testProjections() throws {
        let realm = try open()
        let (ann, bob) = try realm.write { () -> (DynamicObject, DynamicObject) in
            let bob = try realm.dynamicCreate("Person", values: [("firstName", .string("Bob")), ("lastName", .string("Ray"))])
            let ann = try realm.dynamicCreate("Person", values: [("firstName", .string("Ann")), ("lastName", .string("Lee"))])
            try ann.dynamicList("friends").append(.link(bob.link))
            return (ann, bob)
        }
        let view = try Projection(root: ann, fields: [
            .init("name", "firstName"), .init("friendNames", "friends.firstName"),
            .init("lastCaps", "lastName", transform: { v in if case .string(let s) = v { return .string(s.uppercased()) } else { return v } }),
        ])
        XCTAssertEqual(try view.value("name"), .string("Ann"))
        XCTAssertEqual(try view.values("friendNames"), [.string("Bob")])
        XCTAssertEqual(try view.value("lastCaps"), .string("LEE"))
        try realm.write { try view.setValue(.string("Anna"), forName: "name") }
        XCTAssertEqual(try ann["firstName"], .string("Anna"))
        assertThrows(.invalidArgument, containing: "only a plain, untransformed property") {
            try realm.write { try view.setValue(.string("x"), forName: "lastCaps") }
        }
        assertThrows(.wrongType, containing: "is a collection") { _ = try view.value("friendNames") }
        assertThrows(.invalidArgument, containing: "no property 'nope'") { _ = try Projection(root: ann, fields: [.init("x", "nope")]) }

        var changes: [[PropertyChange]] = []
        var deleted = 0
        let token = try view.observe { change in
            switch change {
            case .change(let p): changes.append(p)
            case .deleted: deleted += 1
            case .error: break
            }
        }
        try realm.write { try bob.setValue(.string("Rob"), forKey: "firstName") }
        try realm.deliver()
        XCTAssertEqual(changes.last?.map(\.name), ["friendNames"], "a change of friends[i].firstName notifies friendNames")
        try realm.write { try bob.setValue(.string("Roy"), forKey: "lastName") }
        try realm.deliver()
        XCTAssertEqual(changes.count, 1, "a change of friends[i].lastName does not")
        try realm.write { try ann.setValue(.string("Kim"), forKey: "lastName") }
        try realm.deliver()
        XCTAssertEqual(changes.last?.map(\.name), ["lastCaps"])
        XCTAssertEqual(changes.last?.first?.oldValue, .string("LEE"))
        XCTAssertEqual(changes.last?.first?.newValue, .string("KIM"))
        try realm.write { try realm.delete(ann) }
        try realm.deliver()
        XCTAssertEqual(deleted, 1)
        withExtendedLifetime(token) {}
    }
}
