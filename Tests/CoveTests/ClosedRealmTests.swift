// A closed realm through the Swift API: every call on it, and on the objects, collections,
// results, sectioned results and projections read from it, throws `.closed` (never a trap, never
// an answer from before the close); `isInvalidated` answers true. For a live realm and for a
// frozen one closed while its live realm stays open.
import XCTest
import Cove

final class ClosedRealmTests: CoveTestCase {
    private static let schemaJSON = """
    {"Person": {"primaryKey": "name", "properties": {"name": "string", "age": "int", "dogs": "Dog[]",
       "tags": "string<>", "scores": "double{}", "pet": "Dog?"}},
     "Dog": {"properties": {"name": "string", "age": "int"}}}
    """

    /// What was read from a realm while it was open.
    private struct Handles {
        let realm: Realm
        let ann: DynamicObject
        let dogs: DynamicList
        let tags: DynamicSet
        let scores: DynamicMap
        let people: Results<DynamicObject>
        let sections: SectionedResults<DynamicObject>
        let view: DynamicProjection
    }

    private func populated() throws -> Realm {
        let realm = try Realm(configuration: .init(inMemory: true, schema: try Schema(jsonText: Self.schemaJSON),
                                                   schemaVersion: 1))
        try realm.write {
            let rex = try realm.dynamicCreate("Dog")
            try rex.setValue(.int(3), forKey: "age")
            let ann = try realm.dynamicCreate("Person", primaryKey: .string("ann"))
            try ann.setValue(.link(rex.link), forKey: "pet")
            try ann.dynamicList("dogs").append(.link(rex.link))
            _ = try ann.dynamicMutableSet("tags").insert(.string("a"))
            try ann.dynamicMap("scores").setValue(.double(1.5), forKey: "x")
        }
        return realm
    }

    private func handles(_ realm: Realm) throws -> Handles {
        let ann = try XCTUnwrap(try realm.dynamicObject(ofType: "Person", forPrimaryKey: .string("ann")))
        let people = try realm.objects("Person")
        return Handles(realm: realm, ann: ann, dogs: try ann.dynamicList("dogs"), tags: try ann.dynamicMutableSet("tags"),
                       scores: try ann.dynamicMap("scores"), people: people,
                       sections: try people.sectioned(by: "name"),
                       view: try DynamicProjection(root: ann, fields: [.init("n", "name")]))
    }

    /// Each call must throw `.closed` once the realm is closed.
    private let calls: [(String, (Handles) throws -> Void)] = [
        ("version", { _ = try $0.realm.version }),
        ("activeVersionCount", { _ = try $0.realm.activeVersionCount() }),
        ("beginWrite", { try $0.realm.beginWrite() }),
        ("commitWrite", { try $0.realm.commitWrite() }),
        ("cancelWrite", { try $0.realm.cancelWrite() }),
        ("refresh", { _ = try $0.realm.refresh() }),
        ("invalidate", { try $0.realm.invalidate() }),
        ("freeze", { _ = try $0.realm.freeze() }),
        ("verify", { _ = try $0.realm.verify() }),
        ("dynamicCreate", { _ = try $0.realm.dynamicCreate("Dog") }),
        ("dynamicObject", { _ = try $0.realm.dynamicObject(ofType: "Person", forPrimaryKey: .string("ann")) }),
        ("object(for:)", { _ = try $0.realm.object(for: $0.ann.link) }),
        ("objects", { _ = try $0.realm.objects("Person") }),
        ("objectCount", { _ = try $0.realm.objectCount("Person") }),
        ("delete", { try $0.realm.delete($0.ann) }),
        ("object value", { _ = try $0.ann.value(forKey: "age") }),
        ("object setValue", { try $0.ann.setValue(.int(1), forKey: "age") }),
        ("object linkedObject", { _ = try $0.ann.linkedObject("pet") }),
        ("object dynamicList", { _ = try $0.ann.dynamicList("dogs") }),
        ("object freeze", { _ = try $0.ann.freeze() }),
        ("object observe", { _ = try $0.ann.observeChanges { _ in } }),
        ("list count", { _ = try $0.dogs.count }),
        ("list value", { _ = try $0.dogs.value(at: 0) }),
        ("list append", { try $0.dogs.append(.null) }),
        ("list removeAll", { try $0.dogs.removeAll() }),
        ("list observe", { _ = try $0.dogs.observeChanges { _ in } }),
        ("set count", { _ = try $0.tags.count }),
        ("set contains", { _ = try $0.tags.contains(.string("a")) }),
        ("set insert", { _ = try $0.tags.insert(.string("b")) }),
        ("set min", { _ = try $0.tags.min() }),          // strings have none: closed comes first
        ("map count", { _ = try $0.scores.count }),
        ("map value", { _ = try $0.scores.value(forKey: "x") }),
        ("map setValue", { try $0.scores.setValue(.double(2), forKey: "y") }),
        ("results count", { _ = try $0.people.checkedCount() }),
        ("results element", { _ = try $0.people.element(at: 0) }),
        ("results filter", { _ = try $0.people.filter("age > 1").checkedCount() }),
        ("results sum", { _ = try $0.people.sum(ofProperty: "age") }),
        ("results jsonText", { _ = try $0.people.jsonText() }),
        ("results freeze", { _ = try $0.people.checkedFreeze() }),
        ("results observe", { _ = try $0.people.observeChanges { _ in } }),
        ("sections count", { _ = try $0.sections.checkedCount() }),
        ("sections section", { _ = try $0.sections.section(at: 0) }),
        ("projection value", { _ = try $0.view.value("n") }),
    ]

    private func checkClosed(frozen: Bool) throws {
        let live = try populated()
        let realm = frozen ? try live.freeze() : live
        let h = try handles(realm)
        realm.close()
        for (name, call) in calls {
            do {
                try call(h)
                XCTFail("\(name) (\(frozen ? "frozen" : "live")): no error")
            } catch let error as CoveError {
                XCTAssertEqual(error.code, .closed, "\(name) (\(frozen ? "frozen" : "live")): \(error.message)")
            } catch {
                XCTFail("\(name): unexpected \(error)")
            }
        }
        XCTAssertTrue(h.ann.isInvalidated && h.dogs.isInvalidated && h.sections.isInvalidated)
        XCTAssertTrue(realm.isClosed)
        realm.close()                          // closing twice is fine
        if frozen { XCTAssertEqual(try live.objectCount("Person"), 1) }
    }

    func testLiveRealmClosed() throws { try checkClosed(frozen: false) }

    func testFrozenRealmClosed() throws { try checkClosed(frozen: true) }
}
