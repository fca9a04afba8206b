// The code examples of realm-swift's reference pages for RealmCollectionChange, Results,
// RealmSectionedResult and ProjectionObservable, as written there, compiled against
// `import Cove` and run against a real file. Where a page uses what Linux lacks (UIKit's table
// view) the fixture's TableView stands in; where a page's example cannot compile in any Swift
// (optional chaining on a non-optional), the smallest change is made and said.
import Cove
import Dispatch
import Foundation
import XCTest

final class PageExampleTests: RealmSwiftStyleTestCase {
    var notificationToken: NotificationToken?
    let tableView = TableView()

    /// RealmCollectionChange's example: a one-section table view kept by batch updates.
    func testRealmCollectionChangeTableViewExample() throws {
        let results = realm.objects(Dog.self).sorted(byKeyPath: "age")
        tableView.cell = { path in results[path.row].name }
        var errors: [Error] = []
        // -- the page's example, `self.tableView` as it is --
        self.notificationToken = results.observe { changes in
            switch changes {
            case .initial:
                // Results are now populated and can be accessed without blocking the UI
                self.tableView.reloadData([results.map(\.name)])
                break
            case .update(_, let deletions, let insertions, let modifications):
                // Query results have changed, so apply them to the TableView
                self.tableView.beginUpdates()
                self.tableView.insertRows(at: insertions.map { IndexPath(row: $0, section: 0) },
                   with: .automatic)
                self.tableView.deleteRows(at: deletions.map { IndexPath(row: $0, section: 0) },
                   with: .automatic)
                self.tableView.reloadRows(at: modifications.map { IndexPath(row: $0, section: 0) },
                   with: .automatic)
                self.tableView.endUpdates()
                break
            case .error(let err):
                // An error occurred while opening the Realm file on the background worker thread
                errors.append(err)              // the page: fatalError("\(err)")
                break
            }
        }
        // -- end of the example --
        try realm.deliver()
        XCTAssertEqual(tableView.sections, [[]])
        var dogs: [Dog] = []
        try realm.write {
            for (name, age) in [("Rex", 3), ("Fido", 1), ("Lassie", 7)] {
                let dog = Dog()
                dog.name = name
                dog.age = age
                realm.add(dog)
                dogs.append(dog)
            }
        }
        try realm.deliver()
        XCTAssertEqual(tableView.sections, [["Fido", "Rex", "Lassie"]])
        try realm.write {
            dogs[1].age = 9                  // Fido moves to the end
            dogs[0].name = "Rexy"            // Rex changes in place
            realm.delete(dogs[2])
        }
        try realm.deliver()
        XCTAssertEqual(tableView.sections, [["Rexy", "Fido"]])
        XCTAssertTrue(errors.isEmpty)
        notificationToken?.invalidate()
    }

    /// RealmSectionedResult's first example: the initial call comes after the write begun at
    /// once, and sees its dog.
    func testSectionedResultsInitialSeesTheWriteBegunAtOnce() throws {
        let person = Person()
        try realm.write { realm.add(person) }
        // -- the page's example --
        let dogs = realm.objects(Dog.self)
        let sectionedResults = dogs.sectioned(by: \.age, ascending: true)
        print("sectionedResults.count: \(sectionedResults.count)") // => 0   (the page: `sectionedResults?.count`)
        var initialCount: Int?
        let token = sectionedResults.observe { changes in
            switch changes {
            case .initial(let sectionedResults):
                // Will print "sectionedResults.count: 1"
                print("sectionedResults.count: \(sectionedResults.count)")
                initialCount = sectionedResults.count
                break
            case .update:
                // Will not be hit in this example
                XCTFail("no update is expected")
                break
            case .error:
                break
            }
        }
        try! realm.write {
            let dog = Dog()
            dog.name = "Rex"
            person.dogs.append(dog)
        }
        // end of run loop execution context
        // -- end of the example --
        try realm.deliver()
        XCTAssertEqual(initialCount, 1)
        XCTAssertEqual(sectionedResults.allKeys, [.int(0)])
        XCTAssertEqual(sectionedResults[IndexPath(row: 0, section: 0)].name, "Rex")
        token.invalidate()
    }

    /// RealmSectionedResult's key-path example: only `name` (and the section key) notifies.
    func testSectionedResultsObservedByKeyPath() throws {
        let dog = Dog()
        dog.name = "Rex"
        dog.age = 3
        try realm.write { realm.add(dog) }
        // -- the page's example --
        let dogs = realm.objects(Dog.self)
        let sectionedResults = dogs.sectioned(by: \.age, ascending: true)
        var updates = 0
        let token = sectionedResults.observe(keyPaths: ["name"]) { changes in
            switch changes {
            case .initial(let sectionedResults):
               _ = sectionedResults
            case .update:
               // This case is hit:
               // - after the token is initialized
               // - when the name property of an object in the
               // collection is modified
               // - when an element is inserted or removed
               //   from the collection.
               // This block is not triggered:
               // - when a value other than name is modified on
               //   one of the elements.
               updates += 1
            case .error:
                break
            }
        }
        // end of run loop execution context
        // -- end of the example --
        try realm.deliver()
        try realm.write { dog.toys.append(Toy()) }
        try realm.deliver()
        XCTAssertEqual(updates, 0, "toys is not observed")
        try realm.write { dog.name = "Max" }
        try realm.deliver()
        XCTAssertEqual(updates, 1)
        try realm.write { realm.add(Dog()) }
        try realm.deliver()
        XCTAssertEqual(updates, 2)
        token.invalidate()
    }

    /// ProjectionObservable's example: `name` is observed, `lastName` and friends' other
    /// properties are not; `firstFriendsName` follows the friends' first names.
    func testProjectionObservableExample() throws {
        let person = Person()
        person.firstName = "Ann"
        let friend = Person()
        friend.firstName = "Bob"
        try realm.write {
            realm.add(person)
            person.friends.append(friend)
        }
        let projectedPerson = PersonProjection(projecting: person)
        var names: [[String]] = []
        // -- the page's example --
        let token = projectedPerson.observe(keyPaths: ["name"], { changes in
            // ...
            if case .change(_, let properties) = changes { names.append(properties.map(\.name)) }
        })
        // -- end of the example --
        var friendNames: [[String]] = []
        let friendsToken = projectedPerson.observe(keyPaths: ["firstFriendsName"]) { changes in
            if case .change(_, let properties) = changes { friendNames.append(properties.map(\.name)) }
        }
        try realm.deliver()
        try realm.write { person.lastName = "Avery" }
        try realm.deliver()
        XCTAssertEqual(names, [])
        try realm.write { person.firstName = "Anna" }
        try realm.deliver()
        XCTAssertEqual(names, [["name"]])
        try realm.write { friend.lastName = "Brown" }
        try realm.deliver()
        XCTAssertEqual(friendNames, [], "someFriend.lastName does not notify firstFriendsName")
        try realm.write { friend.firstName = "Rob" }
        try realm.deliver()
        XCTAssertEqual(friendNames, [["firstFriendsName"]])
        // The page's second note: a change reports its new value as a Swift value.
        var newValue: String?
        let valueToken = projectedPerson.observe { changes in
            if case .change(_, let propertyChanges) = changes {
                newValue = propertyChanges.first { $0.name == "name" }?.newValue as? String
            }
        }
        try realm.write { person.firstName = "Winterfell" }
        try realm.deliver()
        XCTAssertEqual(newValue, "Winterfell")
        for t in [token, friendsToken, valueToken] { t.invalidate() }
    }

    /// Results' unsubscribe example, as far as a realm without sync goes: subscribe fails with
    /// a clear error, unsubscribe has nothing to remove and the local query is unchanged.
    @MainActor
    func testSubscribeOnARealmWithoutSync() async throws {
        let dogs = realm.objects(Dog.self).filter("age > 1")
        do {
            _ = try await dogs.subscribe(name: "adults")
            XCTFail("subscribe needs a synced realm")
        } catch let error as CoveError {
            XCTAssertEqual(error.code, .invalidArgument)
            XCTAssertTrue(error.message.contains("sync"), error.message)
        }
        dogs.unsubscribe()
        XCTAssertEqual(dogs.count, 0)
    }
}
