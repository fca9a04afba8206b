// The first slice through the Swift API: creating and reopening files, the error cases of
// opening, transactions, refresh across handles, freezing, read-only and in-memory realms.
import Foundation
import XCTest
import Cove
#if canImport(Glibc)
import Glibc
#endif

final class RealmTests: CoveTestCase {
    private func config(_ name: String, durability: Realm.Durability = .noSync) -> Realm.Configuration {
        Realm.Configuration(path: "\(folder)/\(name)", durability: durability)
    }

    func testCreateAndReopen() throws {
        let c = config("a.cove", durability: .full)
        let start: UInt64
        do {
            let realm = try Realm(configuration: c)
            XCTAssertEqual(access(c.path!, F_OK), 0)
            XCTAssertEqual(access(c.path! + ".lock", F_OK), 0)
            start = try realm.version
            try realm.write {}
            XCTAssertEqual(try realm.version, start + 1)
            XCTAssertFalse(try realm.verify().isEmpty)
            realm.close()
            realm.close()
            assertThrows(.closed, containing: "closed") { try realm.beginWrite() }
        }
        let again = try Realm(configuration: c)
        XCTAssertEqual(try again.version, start + 1)
    }

    /// A second realm of a file asking for the write lock on the thread that holds it through
    /// the first is refused at once (it would wait for itself); one of another thread that does
    /// not get it in time says the holder is another realm of this process, not a pid.
    func testASecondRealmOfTheSameFileOnTheWritingThread() throws {
        let path = "\(folder)/w.cove"
        let first = try Realm(configuration: .init(path: path, durability: .noSync))
        let second = try Realm(configuration: .init(path: path, durability: .noSync))
        try first.beginWrite()
        assertThrows(.locked, containing: "this thread already holds the write lock") { try second.beginWrite() }
        XCTAssertFalse(second.isInWriteTransaction)
        // Another thread's realm waits, and says who holds the lock when it gives up.
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var message = ""
        Thread.detachNewThread {
            defer { done.signal() }
            guard let other = try? Realm(configuration: .init(path: path, durability: .noSync, writeTimeoutMilliseconds: 50)) else { return }
            do { try other.beginWrite() } catch { message = (error as? CoveError)?.message ?? "\(error)" }
            other.close()
        }
        done.wait()
        XCTAssertTrue(message.contains("held by another realm of this process"), message)
        try first.commitWrite()
        try second.write {}
        first.close()
        second.close()
    }

    /// The schema version of a file, read without a schema and without changing the file.
    func testSchemaVersionAtAPath() throws {
        let path = "\(folder)/v.cove"
        assertThrows(.notFound, containing: "no file") { _ = try Realm.schemaVersion(at: path) }
        XCTAssertEqual(access(path, F_OK), -1, "nothing was created")
        try Realm(configuration: .init(path: path, durability: .noSync)).close()
        XCTAssertEqual(try Realm.schemaVersion(at: path), 0, "no schema yet")
        let schema = try Schema(jsonText: #"{"A": {"properties": {"x": "int"}}}"#)
        try Realm(configuration: .init(path: path, durability: .noSync, schema: schema, schemaVersion: 7)).close()
        let before = FileHelper.read(path)
        XCTAssertEqual(try Realm.schemaVersion(at: path), 7)
        XCTAssertEqual(FileHelper.read(path), before, "the file is unchanged")
        // While a realm has it open, too.
        let open = try Realm(configuration: .init(path: path, durability: .noSync, schema: schema, schemaVersion: 7))
        XCTAssertEqual(try Realm.schemaVersion(at: path), 7)
        open.close()
        XCTAssertTrue(FileHelper.write("\(folder)/junk.cove", String(repeating: "junk", count: 4096)))
        assertThrows(.corrupt, containing: "not a Cove file") { _ = try Realm.schemaVersion(at: "\(folder)/junk.cove") }
    }

    func testNotACoveFileIsCorrupt() throws {
        let path = "\(folder)/notes.txt"
        let text = String(repeating: "plain text, not a database\n", count: 400)
        XCTAssertTrue(FileHelper.write(path, text))
        assertThrows(.corrupt, containing: "not a Cove file") {
            _ = try Realm(configuration: .init(path: path))
        }
        XCTAssertEqual(FileHelper.read(path), text, "a refused file is left as it was")
    }

    func testMissingDirectoryIsIOError() {
        assertThrows(.io, containing: "no/such/dir/x.cove") {
            _ = try Realm(configuration: .init(path: "\(folder)/no/such/dir/x.cove"))
        }
    }

    func testTransactionStateErrors() throws {
        let realm = try Realm(configuration: config("t.cove"))
        assertThrows(.notInWrite, containing: "outside") { try realm.commitWrite() }
        assertThrows(.notInWrite, containing: "outside") { try realm.cancelWrite() }
        try realm.beginWrite()
        XCTAssertTrue(realm.isInWriteTransaction)
        assertThrows(.alreadyInWrite, containing: "already") { try realm.beginWrite() }
        assertThrows(.inWrite, containing: "inside") { try realm.refresh() }
        assertThrows(.inWrite, containing: "inside") { _ = try realm.freeze() }
        try realm.cancelWrite()
        let v = try realm.version
        struct Boom: Error {}
        XCTAssertThrowsError(try realm.write { throw Boom() })
        XCTAssertFalse(realm.isInWriteTransaction)
        XCTAssertEqual(try realm.version, v)
    }

    func testRefreshSeesOtherHandlesCommits() throws {
        let a = try Realm(configuration: config("r.cove"))
        let b = try Realm(configuration: config("r.cove"))
        let v = try a.version
        try b.write {}
        XCTAssertEqual(try a.version, v, "a snapshot does not move by itself")
        XCTAssertTrue(try a.refresh())
        XCTAssertEqual(try a.version, v + 1)
        XCTAssertFalse(try a.refresh())
    }

    func testFrozenRealmKeepsItsVersion() throws {
        let realm = try Realm(configuration: config("f.cove"))
        let frozen = try realm.freeze()
        XCTAssertTrue(frozen.isFrozen)
        let v = try frozen.version
        try realm.write {}
        try realm.write {}
        XCTAssertEqual(try frozen.version, v)
        XCTAssertEqual(try realm.activeVersionCount(), 2)
        assertThrows(.frozen, containing: "frozen") { try frozen.beginWrite() }
        assertThrows(.frozen, containing: "frozen") { try frozen.refresh() }
        frozen.close()
        XCTAssertEqual(try realm.activeVersionCount(), 1)
    }

    func testFreezeShowsTheRealmsOwnVersionNotTheNewest() throws {
        let a = try Realm(configuration: config("g.cove"))
        let b = try Realm(configuration: config("g.cove"))
        let v = try a.version
        try b.write {}
        let frozen = try a.freeze()
        XCTAssertEqual(try frozen.version, v)
        XCTAssertEqual(try a.version, v, "freezing does not advance the live realm")
    }

    func testReadOnly() throws {
        let c = config("ro.cove")
        try Realm(configuration: c).close()
        var ro = c
        ro.readOnly = true
        let realm = try Realm(configuration: ro)
        assertThrows(.readOnly, containing: "read-only") { try realm.beginWrite() }
    }

    func testInMemory() throws {
        let realm = try Realm(configuration: .init(inMemory: true))
        let v = try realm.version
        try realm.write {}
        XCTAssertEqual(try realm.version, v + 1)
        assertThrows(.invalidArgument, containing: "path") {
            _ = try Realm(configuration: .init())
        }
    }

    func testStatusNames() {
        XCTAssertEqual(CoveError.Code.corrupt.statusName, "COVE_ERR_CORRUPT")
        XCTAssertEqual(CoveError.Code.tooManyVersions.statusName, "COVE_ERR_TOO_MANY_VERSIONS")
        XCTAssertEqual(CoveError.Code.invalidArgument.statusName, "COVE_ERR_INVALID_ARGUMENT")
        XCTAssertEqual(CoveError.Code.internal.statusName, "COVE_ERR_INTERNAL")
    }
}
