// Where the object layer's commits put their pages: a single-object commit into a table with a
// primary key (the benchmarks' Person) rewrites the same cluster and index leaves as the commit
// before it, so after the first few it writes them and its meta slot in one call, one place on
// the disk (docs/FORMAT.md, "Slot areas"); the file verifies throughout.
import XCTest
@testable import Cove
@testable import CoveCore
@testable import CoveStorage
#if canImport(Glibc)
import Glibc
#endif

final class CommitPlacementTests: CoveTestCase {
    func testSingleObjectCommitsWriteInOneCall() throws {
        let schema = try Schema(jsonText: """
            {"Person": {"primaryKey": "id", "properties": {"id": "int", "name": "string", "age": "int", "score": "double"}}}
            """)
        let realm = try Realm(configuration: Realm.Configuration(path: "\(folder)/people.cove", durability: .full,
                                                                 schema: schema, schemaVersion: 1))
        defer { realm.close() }
        let storage = realm.file.storage
        var before = 0
        for i in 0..<600 {
            if i == 100 { before = storage.commitsInOneRun() }
            try realm.write {
                try realm.dynamicCreate("Person", primaryKey: .int(Int64(i)),
                                        values: [("name", .string("person \(i)")), ("age", .int(Int64(i % 90))), ("score", .double(1.5))])
            }
            if i % 200 == 199 { XCTAssertFalse(try realm.verify().isEmpty) }
        }
        let oneCall = storage.commitsInOneRun() - before
        XCTAssertGreaterThan(oneCall, 450, "\(oneCall) of 500 single-object commits wrote their slot and pages in one call")
        let people = try realm.objects("Person")
        XCTAssertEqual(try people.checkedCount(), 600)
    }
}
