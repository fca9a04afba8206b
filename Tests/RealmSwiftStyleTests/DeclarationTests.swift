// Compile-time checks of the declarations realm-swift's reference pages give: each line names a
// declaration with the exact type the page declares, so a change of shape fails the build. The
// test at the end only runs what was compiled against a real realm.
import Cove
import Dispatch
import Foundation
import XCTest

/// RealmCollectionChange<CollectionType>: its three cases with their payloads.
func describe<C>(_ change: RealmCollectionChange<C>) -> String {
    switch change {
    case .initial(let collection): return "initial \(type(of: collection))"
    case .update(_, let deletions, let insertions, let modifications):
        let (d, i, m): ([Int], [Int], [Int]) = (deletions, insertions, modifications)
        return "update \(d) \(i) \(m)"
    case .error(let error):
        let e: Error = error
        return "error \(e)"
    }
}

/// ObjectChange<T> and PropertyChange.
func describe<T>(_ change: ObjectChange<T>) -> String {
    switch change {
    case .change(let object, let properties):
        let p: [PropertyChange] = properties
        let names: [String] = p.map(\.name)
        let values: [Any?] = p.map(\.oldValue) + p.map(\.newValue)
        return "change of \(type(of: object)) \(names) \(values.count)"
    case .deleted: return "deleted"
    case .error(let error): return "error \(error as Error)"
    }
}

/// SectionedResultsChange<Collection>, with index paths and index sets.
func describe<C>(_ change: SectionedResultsChange<C>) -> String {
    switch change {
    case .initial: return "initial"
    case .update(_, let deletions, let insertions, let modifications, let sectionsToInsert, let sectionsToDelete):
        let paths: [[IndexPath]] = [deletions, insertions, modifications]
        let sets: [IndexSet] = [sectionsToInsert, sectionsToDelete]
        return "update \(paths) \(sets)"
    case .error(let error): return "error \(error)"
    }
}

/// RealmSectionedResult: what SectionedResults and ResultsSection share.
func readAll<S: RealmSectionedResult>(_ s: S) -> (Realm?, Bool, Bool, Int, S, S?) {
    (s.realm, s.isInvalidated, s.isFrozen, s.count, s.freeze(), s.thaw())
}

/// ThreadConfined and ProjectionObservable.
func confined<T: ThreadConfined>(_ t: T) -> (Realm?, Bool, Bool) { (t.realm, t.isInvalidated, t.isFrozen) }
func projected<P: ProjectionObservable>(_ p: P) -> P.Root { p.rootObject }

final class DeclarationTests: RealmSwiftStyleTestCase {
    func testDeclarationsHaveThePagesShapes() throws {
        let dog = Dog()
        dog.name = "Rex"
        dog.age = 3
        let person = Person()
        person.firstName = "Ann"
        try realm.write {
            realm.add(person)
            person.dogs.append(dog)
            person.favourites.insert(dog)
        }
        let queue: DispatchQueue? = nil
        // Results: Equatable, RandomAccessCollection, description, subscript(position:), observe.
        let results: Results<Dog> = realm.objects(Dog.self)
        let equal: Bool = results == results
        let description: String = results.description
        let first: Dog = results[0]
        let count: Int = results.count
        let token1: NotificationToken = results.observe(keyPaths: ["name"], on: queue) { (_: RealmCollectionChange<Results<Dog>>) in }
        let token2: NotificationToken = results.observe(keyPaths: [\Dog.name], on: queue) { _ in }
        let sorted: Results<Dog> = results.sorted(byKeyPath: "age", ascending: false).filter("age > 1")
        let encoded = try JSONEncoder().encode(realm.objects(Dog.self).sorted(byKeyPath: "age").map(\.age))
        XCTAssertTrue(equal && count == 1 && first.name == "Rex" && description.contains("Results<Dog>") && sorted.count == 1)
        XCTAssertEqual(String(decoding: encoded, as: UTF8.self), "[3]")
        let subscribe: (Results<Dog>) async throws -> Results<Dog> = { try await $0.subscribe(name: "n", waitForSync: .always, timeout: 5) }
        let unsubscribe: (Results<Dog>) -> Void = { $0.unsubscribe() }
        _ = (subscribe, unsubscribe, WaitForSyncMode.onCreation, WaitForSyncMode.never)

        // SectionedResults and ResultsSection.
        let sections: SectionedResults<Dog> = results.sectioned(by: \.age, ascending: true)
        let section: ResultsSection<Dog> = sections[0]
        let byPath: Dog = sections[IndexPath(row: 0, section: 0)]
        let keys: [Value] = sections.allKeys
        let (realm1, invalid1, frozen1, count1, _, _) = readAll(sections)
        let (_, _, _, count2, frozenSection, thawed) = readAll(section)
        XCTAssertTrue(realm1 === realm && !invalid1 && !frozen1 && count1 == 1 && count2 == 1 && byPath.name == "Rex")
        XCTAssertEqual(keys, [.int(3)])
        XCTAssertTrue(frozenSection.isFrozen && thawed?.isFrozen == false)
        let token3: NotificationToken = sections.observe(keyPaths: ["name"], on: queue) { (_: SectionedResultsChange<SectionedResults<Dog>>) in }
        let token4: NotificationToken = section.observe(keyPaths: [\Dog.age], on: queue) { (_: RealmSectionedResultsChange<ResultsSection<Dog>>) in }

        // MutableSet.
        let set: MutableSet<Dog> = person.favourites
        let setBits: (Int, Bool, Bool, Bool) = (set.count, set.isInvalidated, set.isFrozen, set.contains(dog))
        let setFrozen: MutableSet<Dog> = set.freeze()
        let setThawed: MutableSet<Dog>? = setFrozen.thaw()
        let minAge: Int? = set.min(ofProperty: "age")
        let maxAge: Int? = set.max(ofProperty: "age")
        let sumAge: Int = set.sum(ofProperty: "age")
        let meanAge: Double? = set.average(ofProperty: "age")
        let setSections: SectionedResults<Dog> = set.sectioned(by: \.age)
        let token5: NotificationToken = set.observe(keyPaths: nil, on: queue) { (_: RealmCollectionChange<MutableSet<Dog>>) in }
        let setOperations: [(MutableSet<Dog>) -> Void] = [set.formUnion, set.formIntersection, set.subtract, set.setSet]
        let setTests: [(MutableSet<Dog>) -> Bool] = [set.intersects, { set.isSubset(of: $0) }, set.isEqual(to:)]
        XCTAssertTrue(setBits == (1, false, false, true) && setThawed != nil && minAge == 3 && maxAge == 3 && sumAge == 3 && meanAge == 3)
        XCTAssertEqual(setSections.count, 1)
        XCTAssertEqual(setOperations.count + setTests.count, 7)

        // Objects and projections: ObjectChange<Self>, key paths, queues, actors.
        let token6: NotificationToken = dog.observe(keyPaths: ["name"], on: queue) { (_: ObjectChange<Dog>) in }
        let token7: NotificationToken = dog.observe(keyPaths: [\Dog.age]) { change in _ = describe(change) }
        let projection = PersonProjection(projecting: person)
        let root: Person = projected(projection)
        let (realm2, _, _) = confined(projection)
        let token8: NotificationToken = projection.observe(keyPaths: ["name"], on: queue) { (_: ObjectChange<PersonProjection>) in }
        let token9: NotificationToken = projection.observe(keyPaths: [\PersonProjection.name], on: queue) { _ in }
        let frozenProjection: PersonProjection = projection.freeze()
        XCTAssertTrue(root === person && realm2 === realm && frozenProjection.isFrozen && frozenProjection.thaw()?.isFrozen == false)
        let onActor: (PersonProjection, MainActor) async -> NotificationToken = { p, actor in
            await p.observe(keyPaths: nil, on: actor) { (_: isolated MainActor, _: ObjectChange<PersonProjection>) in }
        }
        _ = onActor

        // The change types' shapes, through the describe functions above.
        XCTAssertEqual(describe(RealmCollectionChange<Int>.update(1, deletions: [0], insertions: [1], modifications: [])), "update [0] [1] []")
        XCTAssertEqual(describe(ObjectChange<Int>.deleted), "deleted")
        let sectioned = describe(SectionedResultsChange<Int>.update(1, deletions: [], insertions: [IndexPath(row: 1, section: 2)], modifications: [],
                                                                    sectionsToInsert: IndexSet([3]), sectionsToDelete: IndexSet()))
        XCTAssertTrue(sectioned.hasPrefix("update [[], [[2, 1]], []]"), sectioned)
        for t in [token1, token2, token3, token4, token5, token6, token7, token8, token9] { t.invalidate() }
    }
}
