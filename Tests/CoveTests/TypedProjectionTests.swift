import XCTest
@testable import Cove
@testable import CoveCore

final class ViewPerson: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var firstName = ""
    @Persisted var lastName = ""
    @Persisted var age = 0
    @Persisted var bestFriend: ViewPerson?
    @Persisted var friends: List<ViewPerson>
    @Persisted var clubs: MutableSet<ViewClub>
}

final class ViewClub: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var city = ""
}

final class PersonView: Projection<ViewPerson> {
    @Projected(\ViewPerson.firstName) var name
    @Projected(\ViewPerson.bestFriend?.firstName) var bestFriendName: String?
    @Projected(\ViewPerson.friends.projectTo.firstName) var friendNames: ProjectedCollection<String>
    @Projected(\ViewPerson.clubs.projectTo.city) var clubCities: ProjectedCollection<String>
    @Projected(\ViewPerson.age, transform: { "\($0) years" }) var ageText: String
}

/// A projection that names a computed property: no stored property behind it.
final class BrokenView: Projection<ViewPerson> {
    @Projected(\ViewPerson.description) var text
}

final class TypedProjectionTests: CoveTestCase {
    private func open() throws -> Realm {
        try Realm(configuration: try .init(path: "\(folder)/views.cove", objectTypes: [ViewPerson.self, ViewClub.self]))
    }

    private func people(_ realm: Realm) throws -> (ann: ViewPerson, bob: ViewPerson, cid: ViewPerson) {
        var out: [ViewPerson] = []
        try realm.write {
            for (id, first, last) in [(1, "Ann", "Ames"), (2, "Bob", "Burr"), (3, "Cid", "Cole")] {
                let p = ViewPerson()
                p.id = id
                p.firstName = first
                p.lastName = last
                p.age = 30 + id
                realm.add(p)
                out.append(p)
            }
            out[0].friends.append(out[1])
            out[0].friends.append(out[2])
            out[0].bestFriend = out[1]
            let club = ViewClub()
            club.name = "chess"
            club.city = "Oslo"
            out[0].clubs.insert(club)
        }
        return (out[0], out[1], out[2])
    }

    func testKeyPathsResolveToPropertyNames() throws {
        let fields = try PersonView.projectedProperties()
        XCTAssertEqual(fields.map(\.name), ["name", "bestFriendName", "friendNames", "clubCities", "ageText"])
        XCTAssertEqual(fields.map(\.keyPath), ["firstName", "bestFriend.firstName", "friends.firstName", "clubs.city", "age"])
        assertThrows(.invalidArgument, containing: "'text'") { _ = try BrokenView.projectedProperties() }
    }

    func testReadsAndWritesGoThroughToTheRoot() throws {
        let realm = try open()
        let (ann, bob, _) = try people(realm)
        let view = PersonView(projecting: ann)
        XCTAssertEqual(view.name, "Ann")
        XCTAssertEqual(view.bestFriendName, "Bob")
        XCTAssertEqual(Array(view.friendNames), ["Bob", "Cid"])
        XCTAssertEqual(Array(view.clubCities), ["Oslo"])
        XCTAssertEqual(view.ageText, "31 years")
        try realm.write { view.name = "Anna" }
        XCTAssertEqual(ann.firstName, "Anna")
        try realm.write { bob.firstName = "Rob" }
        XCTAssertEqual(Array(view.friendNames), ["Rob", "Cid"], "a projected collection is live")
        XCTAssertEqual(view.bestFriendName, "Rob")
        XCTAssertTrue(view.description.contains("name = Anna"), view.description)

        let all = realm.objects(PersonView.self).filter("age > 31").sorted(byKeyPath: "firstName")
        XCTAssertEqual(try all.elements().map(\.name), ["Cid", "Rob"])

        // Model objects are equal when they are faces of one stored object, as set elements need.
        let again = try XCTUnwrap(try realm.object(ofType: ViewPerson.self, forPrimaryKey: 1))
        XCTAssertFalse(again === ann)
        XCTAssertEqual(again, ann)
        XCTAssertEqual(Set([again, ann, bob]).count, 2)
        XCTAssertNotEqual(ViewPerson(), ViewPerson())

        let unmanaged = ViewPerson()
        unmanaged.firstName = "Dee"
        XCTAssertEqual(PersonView(projecting: unmanaged).name, "Dee")
        assertThrows(.invalidArgument, containing: "unmanaged") { _ = try PersonView(projecting: unmanaged).observeChanges { _ in } }
    }

    func testObserveReportsProjectedNamesExactly() throws {
        let realm = try open()
        let (ann, bob, cid) = try people(realm)
        let view = PersonView(projecting: ann)
        var changes: [ObjectChange<Projection<ViewPerson>>] = []
        let token = try view.observeChanges { changes.append($0) }
        defer { token.invalidate() }

        try realm.write { ann.lastName = "Avery" }
        try realm.refresh()
        XCTAssertTrue(changes.isEmpty, "lastName is not projected")

        try realm.write { cid.lastName = "Cobb" }
        try realm.refresh()
        XCTAssertTrue(changes.isEmpty, "friends.lastName is not projected")

        try realm.write { cid.firstName = "Cyd" }
        try realm.refresh()
        XCTAssertEqual(names(changes.popLast()), ["friendNames"])

        try realm.write { bob.firstName = "Rob" }
        try realm.refresh()
        guard case .change(_, let props)? = changes.popLast() else { return XCTFail("no change") }
        XCTAssertEqual(props.map(\.name), ["bestFriendName", "friendNames"])
        XCTAssertEqual(props[0].storedOldValue, .string("Bob"))
        XCTAssertEqual(props[0].storedNewValue, .string("Rob"))

        try realm.write { ann.age = 40 }
        try realm.refresh()
        guard case .change(_, let aged)? = changes.popLast() else { return XCTFail("no change") }
        XCTAssertEqual(aged.map(\.name), ["ageText"])
        XCTAssertEqual(aged[0].storedOldValue, .string("31 years"))
        XCTAssertEqual(aged[0].storedNewValue, .string("40 years"))

        var only: [ObjectChange<Projection<ViewPerson>>] = []
        let nameToken = try view.observeChanges(keyPaths: ["name"]) { only.append($0) }
        defer { nameToken.invalidate() }
        try realm.write { ann.age = 41 }
        try realm.refresh()
        XCTAssertTrue(only.isEmpty)
        try realm.write { ann.firstName = "Anna" }
        try realm.refresh()
        XCTAssertEqual(names(only.popLast()), ["name"])
        assertThrows(.invalidArgument, containing: "'nope'") { _ = try view.observeChanges(keyPaths: ["nope"]) { _ in } }

        changes.removeAll()
        try realm.write { realm.delete(ann) }
        try realm.refresh()
        XCTAssertEqual(changes.count, 1)
        guard case .deleted? = changes.first else { return XCTFail("deletion not reported") }
    }

    func testFreezeAndThaw() throws {
        let realm = try open()
        let (ann, _, _) = try people(realm)
        let frozen = PersonView(projecting: ann).freeze()
        XCTAssertTrue(frozen.isFrozen)
        try realm.write { ann.firstName = "Anna" }
        XCTAssertEqual(frozen.name, "Ann")
        XCTAssertEqual(try frozen.thaw(in: realm)?.name, "Anna")
        assertThrows(.frozen, containing: "frozen") { _ = try frozen.observeChanges { _ in } }
    }

    private func names(_ change: ObjectChange<Projection<ViewPerson>>?) -> [String] {
        guard case .change(_, let props)? = change else { return [] }
        return props.map(\.name)
    }
}
