// The models and the fixture of the realm-swift-style tests: classes declared as realm-swift's
// reference pages declare them, a realm on a real file per test, and a stand-in for UIKit's
// table view (Linux has none) that applies batch updates to rows as UITableView does, and
// fails as UITableView would when an update does not add up.
import Cove
import Foundation
import XCTest

final class Toy: Object {
    @Persisted var name = ""
}

final class Dog: Object {
    @Persisted var name: String
    @Persisted var age: Int
    @Persisted var toys: List<Toy>
}

final class Person: Object {
    @Persisted var firstName: String
    @Persisted var lastName = ""
    @Persisted var dogs: List<Dog>
    @Persisted var tags: MutableSet<String>
    @Persisted var favourites: MutableSet<Dog>
    @Persisted public var friends: List<Person>
    @Persisted var scores: Map<String, Int>
}

final class PersonProjection: Projection<Person> {
    @Projected(\Person.firstName) var name
    @Projected(\Person.lastName, transform: { $0.uppercased() }) var lastNameCaps: String
    @Projected(\Person.friends.projectTo.firstName) var firstFriendsName: ProjectedCollection<String>
}

/// A test case with a realm of these models on a file of its own.
class RealmSwiftStyleTestCase: XCTestCase {
    var folder = ""
    var realm: Realm!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("cove-rs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        realm = try Realm(configuration: configuration())
    }

    override func tearDownWithError() throws {
        realm?.close()
        realm = nil
        try? FileManager.default.removeItem(atPath: folder)
    }

    func configuration() throws -> Realm.Configuration {
        try Realm.Configuration(path: "\(folder)/default.cove", objectTypes: [Toy.self, Dog.self, Person.self],
                                schemaVersion: 1, durability: .noSync)
    }
}

/// UIKit's table view as far as these tests need it: rows per section, and batch updates
/// applied as UITableView applies them (deletions at old index paths and sections first, then
/// insertions at new ones, then reloads), checked against the data source afterwards.
final class TableView {
    enum RowAnimation { case automatic }

    private(set) var sections: [[String]] = []
    private var pendingDeletions: [IndexPath] = []
    private var pendingInsertions: [IndexPath] = []
    private var pendingReloads: [IndexPath] = []
    private var pendingSectionInsertions = IndexSet()
    private var pendingSectionDeletions = IndexSet()
    private var updating = false
    /// What the data source says a row shows, read for inserted and reloaded rows.
    var cell: (IndexPath) -> String = { _ in "" }
    private(set) var reloadedRows = 0

    func reloadData(_ rows: [[String]]) {
        sections = rows
    }

    func beginUpdates() { updating = true }
    func insertRows(at paths: [IndexPath], with animation: RowAnimation) { pendingInsertions += paths }
    func deleteRows(at paths: [IndexPath], with animation: RowAnimation) { pendingDeletions += paths }
    func reloadRows(at paths: [IndexPath], with animation: RowAnimation) { pendingReloads += paths }
    func insertSections(_ sections: IndexSet, with animation: RowAnimation) { pendingSectionInsertions.formUnion(sections) }
    func deleteSections(_ sections: IndexSet, with animation: RowAnimation) { pendingSectionDeletions.formUnion(sections) }

    /// Applies the batch; the rows must then be what the data source shows.
    func endUpdates(file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(updating, "endUpdates without beginUpdates", file: file, line: line)
        for p in pendingDeletions.sorted(by: >) {
            guard p.section < sections.count, p.row < sections[p.section].count else {
                return XCTFail("deleting row \(p) that is not there", file: file, line: line)
            }
            sections[p.section].remove(at: p.row)
        }
        for s in pendingSectionDeletions.sorted(by: >) { sections.remove(at: s) }
        for s in pendingSectionInsertions.sorted() { sections.insert([], at: s) }
        for s in pendingSectionInsertions.sorted() {
            var row = 0
            while cellExists(IndexPath(row: row, section: s)) {
                sections[s].append(cell(IndexPath(row: row, section: s)))
                row += 1
            }
        }
        for p in pendingInsertions.sorted() {
            guard p.section < sections.count, p.row <= sections[p.section].count else {
                return XCTFail("inserting row \(p) beyond the end", file: file, line: line)
            }
            sections[p.section].insert(cell(p), at: p.row)
        }
        for p in pendingReloads {
            guard p.section < sections.count, p.row < sections[p.section].count else {
                return XCTFail("reloading row \(p) that is not there", file: file, line: line)
            }
            sections[p.section][p.row] = cell(p)
            reloadedRows += 1
        }
        pendingDeletions = []
        pendingInsertions = []
        pendingReloads = []
        pendingSectionInsertions = IndexSet()
        pendingSectionDeletions = IndexSet()
        updating = false
    }

    /// Whether the data source has a row at `path` (for sections inserted whole).
    var cellExists: (IndexPath) -> Bool = { _ in false }
}
