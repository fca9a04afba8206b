// In-memory realms shared by identifier (Realm's inMemoryIdentifier): realms of one identifier
// see each other's writes and notifications; another identifier is another database; the data is
// gone once the last of them closes, and nothing is left in the file system.
import XCTest
@testable import Cove
@testable import CoveCore

final class InMemoryIdentifierTests: CoveTestCase {
    private func open(_ identifier: String) throws -> Realm {
        try Realm(configuration: .init(schema: try Schema(jsonText: #"{"Note": {"properties": {"text": "string"}}}"#),
                                       schemaVersion: 1, inMemoryIdentifier: identifier))
    }

    func testRealmsOfOneIdentifierShareTheirData() throws {
        let a = try open("shared")
        let b = try open("shared")
        let other = try open("other")
        try a.write { _ = try a.dynamicCreate("Note", values: [("text", .string("hello"))]) }
        try b.refresh()
        XCTAssertEqual(try b.dynamicObjects("Note").count, 1)
        XCTAssertEqual(try other.dynamicObjects("Note").count, 0)
        XCTAssertEqual(a.configuration.inMemoryIdentifier, "shared")
        // A live query on one sees the other's commit.
        let notes = try b.objects("Note")
        var updates = 0
        let token = try notes.observeChanges { change in if case .update = change { updates += 1 } }
        try b.deliver()
        try a.write { _ = try a.dynamicCreate("Note", values: [("text", .string("again"))]) }
        try b.refresh()
        try b.deliver()
        XCTAssertEqual(updates, 1)
        token.invalidate()
        let file = SharedMemoryFiles.path("shared")
        XCTAssertTrue(FileHelper.exists(file))
        a.close()
        XCTAssertTrue(FileHelper.exists(file), "b still has it open")
        XCTAssertEqual(try b.dynamicObjects("Note").count, 2)
        b.close()
        other.close()
        XCTAssertFalse(FileHelper.exists(file))
        XCTAssertFalse(FileHelper.exists(file + ".lock"))
        // The data went with the last realm.
        let again = try open("shared")
        XCTAssertEqual(try again.dynamicObjects("Note").count, 0)
        again.close()
    }

    func testAnEmptyIdentifierIsRefused() {
        assertThrows(.invalidArgument, containing: "in-memory identifier may not be empty") { _ = try self.open("") }
    }
}
