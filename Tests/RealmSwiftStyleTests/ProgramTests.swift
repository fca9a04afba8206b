// Programs as realm-swift users write them: a sectioned table view kept by
// SectionedResultsChange over many random commits, a projection observed by Swift key paths
// and on an actor, a set driven through realm-swift's MutableSet API, and notifications handed
// to a dispatch queue with frozen collections.
import Cove
import Dispatch
import Foundation
import XCTest

final class ProgramTests: RealmSwiftStyleTestCase {
    /// A sectioned table view (sections by age) stays equal to the sections through random
    /// inserts, deletes, renames and age changes, applying only what each change says.
    func testSectionedTableViewFollowsRandomCommits() throws {
        let sections = realm.objects(Dog.self).sectioned(by: \.age, ascending: true)
        let tableView = TableView()
        tableView.cell = { path in sections[path].name }
        tableView.cellExists = { path in path.section < sections.count && path.row < sections[path.section].count }
        var calls = 0
        let token = sections.observe { change in
            calls += 1
            switch change {
            case .initial(let s):
                tableView.reloadData(s.map { $0.map(\.name) })
            case .update(_, let deletions, let insertions, let modifications, let sectionsToInsert, let sectionsToDelete):
                tableView.beginUpdates()
                tableView.deleteRows(at: deletions, with: .automatic)
                tableView.deleteSections(sectionsToDelete, with: .automatic)
                tableView.insertSections(sectionsToInsert, with: .automatic)
                tableView.insertRows(at: insertions, with: .automatic)
                tableView.reloadRows(at: modifications, with: .automatic)
                tableView.endUpdates()
            case .error(let error):
                XCTFail("\(error)")
            }
        }
        defer { token.invalidate() }
        try realm.deliver()
        var generator = SystemRandomNumberGenerator()
        var next = 0
        for round in 0..<60 {
            try realm.write {
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    let dogs = Array(realm.objects(Dog.self))
                    switch Int.random(in: 0...5, using: &generator) {
                    case 0, 1:
                        let dog = Dog()
                        dog.name = "dog \(next)"
                        dog.age = Int.random(in: 1...5, using: &generator)
                        next += 1
                        realm.add(dog)
                    case 2 where !dogs.isEmpty:
                        realm.delete(dogs.randomElement(using: &generator)!)
                    case 3 where !dogs.isEmpty:
                        dogs.randomElement(using: &generator)!.age = Int.random(in: 1...5, using: &generator)
                    case 4 where !dogs.isEmpty:
                        dogs.randomElement(using: &generator)!.name = "renamed \(round)"
                    default:
                        break
                    }
                }
            }
            try realm.deliver()
            XCTAssertEqual(tableView.sections, sections.map { $0.map(\.name) }, "round \(round)")
        }
        XCTAssertGreaterThan(calls, 1)
    }

    /// A projection observed by Swift key paths of the projection, and on an actor.
    @MainActor
    func testProjectionObservedByKeyPathsAndOnAnActor() async throws {
        let person = Person()
        person.firstName = "Ann"
        try realm.write { realm.add(person) }
        let view = PersonProjection(projecting: person)
        var byKeyPath: [[String]] = []
        let token = view.observe(keyPaths: [\PersonProjection.lastNameCaps]) { change in
            if case .change(let projection, let properties) = change {
                XCTAssertTrue(projection === view)
                byKeyPath.append(properties.map(\.name))
            }
        }
        actor Journal {
            var entries: [String] = []
            func note(_ entry: String) { entries.append(entry) }
        }
        let journal = Journal()
        let actorToken = await view.observe(keyPaths: ["name"], on: journal) { journal, change in
            if case .change(let frozen, let properties) = change {
                journal.note("\(properties.map(\.name)) \(frozen.name) frozen=\(frozen.isFrozen)")
            }
        }
        try realm.deliver()
        try realm.write { person.firstName = "Anna" }
        try realm.deliver()
        XCTAssertEqual(byKeyPath, [], "firstName is not lastNameCaps")
        try realm.write { person.lastName = "avery" }
        try realm.deliver()
        XCTAssertEqual(byKeyPath, [["lastNameCaps"]])
        XCTAssertEqual(view.lastNameCaps, "AVERY")
        for _ in 0..<200 where await journal.entries.isEmpty { try await Task.sleep(nanoseconds: 5_000_000) }
        let entries = await journal.entries
        XCTAssertEqual(entries, ["[\"name\"] Anna frozen=true"])
        token.invalidate()
        actorToken.invalidate()
    }

    /// realm-swift's MutableSet operations on a managed set of values and of objects, its
    /// aggregates by property, sectioning, and its observation.
    func testMutableSetAsRealmSwiftUsesIt() throws {
        let person = Person()
        let dogs = (1...4).map { i -> Dog in
            let dog = Dog()
            dog.name = "d\(i)"
            dog.age = i * 2
            return dog
        }
        try realm.write {
            realm.add(person)
            realm.add(dogs)
        }
        var changes: [(deletions: [Int], insertions: [Int], modifications: [Int])] = []
        let token = person.favourites.observe { change in
            if case .update(let set, let d, let i, let m) = change {
                XCTAssertTrue(set === person.favourites || set.count == person.favourites.count)
                changes.append((d, i, m))
            }
        }
        try realm.deliver()
        try realm.write {
            person.tags.insert(objectsIn: ["a", "b", "c"])
            let other = MutableSet<String>()
            other.insert(objectsIn: ["b", "c", "d"])
            XCTAssertTrue(person.tags.intersects(other))
            XCTAssertFalse(person.tags.isSubset(of: other))
            person.tags.formIntersection(other)
            XCTAssertEqual(Set(person.tags), ["b", "c"])
            person.tags.formUnion(other)
            person.tags.subtract(other)
            XCTAssertEqual(person.tags.count, 0)
            person.tags.setSet(other)
            XCTAssertTrue(person.tags.isEqual(to: other))
            person.favourites.insert(objectsIn: dogs[0...2])
        }
        try realm.deliver()
        XCTAssertEqual(changes.last?.insertions, [0, 1, 2])
        XCTAssertEqual(person.favourites.min(ofProperty: "age"), 2)
        XCTAssertEqual(person.favourites.max(ofProperty: "age"), 6)
        XCTAssertEqual(person.favourites.sum(ofProperty: "age"), 12)
        XCTAssertEqual(person.favourites.average(ofProperty: "age"), 4.0)
        XCTAssertEqual(person.favourites.sorted(byKeyPath: "age", ascending: false).map(\.name), ["d3", "d2", "d1"])
        XCTAssertEqual(person.favourites.filter("age > 2").count, 2)
        let byAge = person.favourites.sectioned(by: \.age)
        XCTAssertEqual(byAge.allKeys, [.int(2), .int(4), .int(6)])
        XCTAssertFalse(person.favourites.isFrozen)
        let frozen = person.favourites.freeze()
        XCTAssertTrue(frozen.isFrozen)
        XCTAssertEqual(frozen.count, 3)
        XCTAssertEqual(frozen.thaw()?.count, 3)
        try realm.write { dogs[1].age = 4 }
        try realm.deliver()
        XCTAssertEqual(changes.last?.modifications.count, 1, "an equal value written is a modification")
        token.invalidate()
    }

    /// `filter` takes Swift values as arguments, as realm-swift's does; frozen results thaw in
    /// the realm they were frozen from; a change's new value of a link is the object.
    func testFilterArgumentsThawAndLinkValues() throws {
        let rex = Dog(), fido = Dog()
        rex.name = "Rex"; rex.age = 3
        fido.name = "Fido"; fido.age = 7
        let person = Person()
        person.firstName = "Ann"
        try realm.write {
            realm.add([rex, fido])
            realm.add(person)
            person.dogs.append(rex)
        }
        let dogs = realm.objects(Dog.self)
        XCTAssertEqual(dogs.filter("age > $0 AND name != $1", 2, "Fido").map(\.name), ["Rex"])
        XCTAssertEqual(dogs.filter("age IN $0", [3, 7]).count, 2)
        XCTAssertEqual(realm.objects(Person.self).filter("ANY dogs == $0", rex).count, 1)
        let bad = dogs.filter("age > $0", Date.distantPast as Any, NSObject())
        XCTAssertNotNil(bad.queryError)
        XCTAssertTrue(bad.queryError?.message.contains("NSObject") == true, bad.queryError?.message ?? "")

        let frozen = dogs.sorted(byKeyPath: "age").freeze()
        XCTAssertTrue(frozen.isFrozen)
        try realm.write { rex.age = 9 }
        XCTAssertEqual(frozen.map(\.age), [3, 7], "a frozen copy keeps its version")
        let thawed = try XCTUnwrap(frozen.thaw())
        XCTAssertFalse(thawed.isFrozen)
        XCTAssertEqual(thawed.map(\.age), [7, 9])

        var linked: Any?
        let token = person.observe(keyPaths: ["dogs"]) { change in
            if case .change(_, let properties) = change { linked = properties.first?.newValue }
        }
        try realm.write { person.dogs.append(fido) }
        try realm.deliver()
        XCTAssertNil(linked, "a list's change carries no values")
        let projection = PersonProjection(projecting: person)
        var newName: Any?
        let nameToken = projection.observe(keyPaths: ["name"]) { change in
            if case .change(_, let properties) = change { newName = properties.first?.newValue }
        }
        try realm.write { person.firstName = "Anna" }
        try realm.deliver()
        XCTAssertEqual(newName as? String, "Anna")
        token.invalidate()
        nameToken.invalidate()
    }

    /// Lists, sets and maps give their changes as AsyncStreams; cancelling the task that
    /// iterates one ends its observation.
    @MainActor
    func testCollectionsStreamTheirChanges() async throws {
        let person = Person()
        try realm.write { realm.add(person) }
        var dogs = try person.dogs.changes().makeAsyncIterator()
        var tags = try person.tags.changes().makeAsyncIterator()
        var scores = try person.scores.changes().makeAsyncIterator()
        try realm.deliver()
        guard case .initial? = await dogs.next(), case .initial? = await tags.next(), case .initial? = await scores.next() else {
            return XCTFail("no initial changes")
        }
        try realm.write {
            person.dogs.append(Dog())
            person.tags.insert("a")
            person.scores["x"] = 1
        }
        try realm.deliver()
        guard case .update(let d)? = await dogs.next(), case .update(let t)? = await tags.next(),
              case .update(let m)? = await scores.next() else { return XCTFail("no updates") }
        XCTAssertEqual(d.insertions, [0])
        XCTAssertEqual(t.insertions, [0])
        XCTAssertEqual(m.insertions, ["x"])
        XCTAssertThrowsError(try List<Dog>().changes(), "an unmanaged list cannot be observed")

        // A task that iterates a stream, then is cancelled: its observation stops.
        let stream = try person.dogs.changes()
        let received = expectation(description: "the task received its initial change")
        let task = Task {
            var count = 0
            for await _ in stream {
                count += 1
                if count == 1 { received.fulfill() }
            }
            return count
        }
        try realm.deliver()
        await fulfillment(of: [received], timeout: 10)
        task.cancel()
        let seen = await task.value
        XCTAssertEqual(seen, 1, "the stream ended when its task was cancelled")
        try realm.write { person.dogs.append(Dog()) }
        try realm.deliver()
    }

    /// Results observed with a dispatch queue: the block runs there with a frozen copy.
    func testResultsDeliveredOnAQueueAsFrozenCopies() throws {
        let queue = DispatchQueue(label: "observer")
        let delivered = expectation(description: "two deliveries on the queue")
        delivered.expectedFulfillmentCount = 2
        nonisolated(unsafe) var counts: [Int] = []
        let token = realm.objects(Dog.self).observe(keyPaths: [\Dog.name], on: queue) { change in
            switch change {
            case .initial(let dogs), .update(let dogs, _, _, _):
                dispatchPrecondition(condition: .onQueue(queue))
                XCTAssertTrue(dogs.isFrozen)
                counts.append(dogs.count)
                delivered.fulfill()
            case .error(let error):
                XCTFail("\(error)")
            }
        }
        try realm.deliver()
        try realm.write { realm.add(Dog()) }
        try realm.deliver()
        wait(for: [delivered], timeout: 10)
        XCTAssertEqual(counts, [0, 1])
        token.invalidate()
    }

    /// A registration that cannot be made is reported through `.error`, not thrown: here, a
    /// key path that names no property, and observing inside a write.
    func testRegistrationErrorsComeAsErrorChanges() throws {
        var errors: [String] = []
        _ = realm.objects(Dog.self).observe(keyPaths: ["nope"]) { change in
            if case .error(let error) = change { errors.append((error as? CoveError)?.message ?? "\(error)") }
        }
        try realm.write {
            _ = realm.objects(Dog.self).observe { change in
                if case .error(let error) = change { errors.append((error as? CoveError)?.message ?? "\(error)") }
            }
        }
        XCTAssertEqual(errors.count, 2)
        XCTAssertTrue(errors[0].contains("'nope'"), errors[0])
        XCTAssertTrue(errors[1].contains("inside a write"), errors[1])
        // A query that does not parse: reads throw it, observers receive it.
        let bad = realm.objects(Dog.self).filter("age >>> 3")
        XCTAssertNotNil(bad.queryError)
        XCTAssertThrowsError(try bad.checkedCount())
        var observed: Error?
        _ = bad.observe { if case .error(let e) = $0 { observed = e } }
        XCTAssertNotNil(observed)
    }
}
