// Encryption through the Swift API: Configuration.encryptionKey; wrong, missing and unexpected
// keys fail with .decryption and change nothing; writeCopy adds, changes and removes a key;
// compaction (on launch too), salvage and schemaVersion(at:) take it; an in-memory identifier
// with a key; a second realm on the encrypted file sees the first's commits through
// notifications.
import FoundationEssentials
import Glibc
import Synchronization
import XCTest
@testable import Cove
@testable import CoveCore

final class EncryptionRealmTests: CoveTestCase {
    static let key = Data((0..<64).map { UInt8(($0 * 5 + 9) & 0xff) })
    static let otherKey = Data((0..<64).map { UInt8(($0 * 17 + 2) & 0xff) })
    static let schemaJSON = """
    {"Note": {"primaryKey": "id", "indexed": ["tag"],
              "properties": {"id": "int", "text": "string", "tag": "string", "links": "Note[]"}}}
    """

    private func configuration(_ name: String, key: Data?, durability: Realm.Durability = .noSync) throws -> Realm.Configuration {
        Realm.Configuration(path: "\(folder)/\(name)", durability: durability, schema: try Schema(jsonText: Self.schemaJSON),
                            schemaVersion: 1, encryptionKey: key)
    }

    private func open(_ name: String, key: Data? = key) throws -> Realm {
        try Realm(configuration: try configuration(name, key: key))
    }

    private func fill(_ realm: Realm, _ n: Int) throws {
        try realm.write {
            var previous: DynamicObject?
            for i in 0..<n {
                let o = try realm.dynamicCreate("Note", primaryKey: .int(Int64(i)), values: [
                    ("text", .string("private text \(i)")), ("tag", .string("t\(i % 7)"))])
                if let previous { try o.dynamicList("links").append(.link(previous.link)) }
                previous = o
            }
        }
    }

    private func fileSize(_ path: String) -> Int {
        var st = stat()
        return stat(path, &st) == 0 ? Int(st.st_size) : -1
    }

    /// Whether the file at `path` holds `text` (its bytes read as UTF-8, any other byte replaced).
    private func fileContains(_ path: String, _ text: String) -> Bool {
        FileHelper.read(path)?.contains(text) ?? false
    }

    private func assertCode(_ code: CoveError.Code, _ text: String, _ body: () throws -> Void, line: UInt = #line) {
        XCTAssertThrowsError(try body(), line: line) { error in
            let e = error as? CoveError
            XCTAssertEqual(e?.code, code, "\(error)", line: line)
            XCTAssertTrue(e?.message.contains(text) ?? false, "\(error)", line: line)
        }
    }

    func testAnEncryptedRealmRoundTripsAndHidesItsData() throws {
        let realm = try open("a.cove")
        try fill(realm, 400)
        XCTAssertEqual(try realm.objects("Note").filter("tag == 't3' AND links.@count == 1").count, 57)
        realm.close()
        XCTAssertFalse(fileContains("\(folder)/a.cove", "private text"))
        let again = try open("a.cove")
        defer { again.close() }
        XCTAssertEqual(try again.objects("Note").count, 400)
        XCTAssertEqual(try again.dynamicObject(ofType: "Note", forPrimaryKey: .int(42))?.value(forKey: "text"), .string("private text 42"))
        XCTAssertTrue(try again.verify().contains("live"))
        XCTAssertEqual(try Realm.schemaVersion(at: "\(folder)/a.cove", encryptionKey: Self.key), 1)
        assertCode(.decryption, "is encrypted") { _ = try Realm.schemaVersion(at: "\(folder)/a.cove") }
    }

    func testWrongMissingAndUnexpectedKeys() throws {
        let realm = try open("a.cove")
        try fill(realm, 20)
        realm.close()
        let plain = try open("plain.cove", key: nil)
        try fill(plain, 20)
        plain.close()
        assertCode(.decryption, "does not open") { _ = try self.open("a.cove", key: Self.otherKey) }
        assertCode(.decryption, "is encrypted") { _ = try self.open("a.cove", key: nil) }
        assertCode(.decryption, "not encrypted") { _ = try self.open("plain.cove", key: Self.key) }
        assertCode(.invalidArgument, "64 bytes, not 16") { _ = try self.open("b.cove", key: Data(repeating: 1, count: 16)) }
        XCTAssertEqual(access("\(folder)/b.cove", F_OK), -1, "a refused key creates no file")
        let again = try open("a.cove")
        XCTAssertEqual(try again.objects("Note").count, 20)
        again.close()
    }

    func testCopiesAddChangeAndRemoveTheKey() throws {
        let realm = try open("a.cove")
        try fill(realm, 300)
        try realm.writeCopy(toFile: "\(folder)/rekeyed.cove", encryptionKey: Self.otherKey)
        try realm.writeCopy(toFile: "\(folder)/plain.cove")
        realm.close()
        XCTAssertTrue(fileContains("\(folder)/plain.cove", "private text"))
        XCTAssertFalse(fileContains("\(folder)/rekeyed.cove", "private text"))
        let rekeyed = try open("rekeyed.cove", key: Self.otherKey)
        XCTAssertEqual(try rekeyed.objects("Note").filter("links.@count == 1").count, 299)
        rekeyed.close()
        let plain = try open("plain.cove", key: nil)
        try plain.writeCopy(toFile: "\(folder)/sealed.cove", encryptionKey: Self.key)
        plain.close()
        let sealed = try open("sealed.cove")
        XCTAssertEqual(try sealed.objects("Note").count, 300)
        sealed.close()
        assertCode(.invalidArgument, "64 bytes") {
            let r = try self.open("a.cove")
            defer { r.close() }
            try r.writeCopy(toFile: "\(self.folder)/short.cove", encryptionKey: Data([1, 2, 3]))
        }
    }

    /// 6,000 notes of which 500 are left.
    private func makeSparseFile(_ name: String) throws {
        let realm = try open(name)
        try fill(realm, 6000)
        try realm.write { for o in try realm.dynamicObjects("Note") where o.objectKey % 12 != 0 { try realm.delete(o) } }
        realm.close()
    }

    func testCompactionSalvageAndInMemoryTakeTheKey() throws {
        try makeSparseFile("a.cove")
        let before = fileSize("\(folder)/a.cove")
        assertCode(.decryption, "is encrypted") { try Realm.compactFile(atPath: "\(self.folder)/a.cove") }
        // Compacted on launch: the configuration's key opens the file and seals the copy.
        var config = try configuration("a.cove", key: Self.key)
        let asked = AtomicFlag()
        config.shouldCompactOnLaunch = { total, used in
            asked.set()
            return used < total / 2
        }
        let compacted = try Realm(configuration: config)
        XCTAssertTrue(asked.isSet)
        XCTAssertEqual(try compacted.objects("Note").count, 500)
        compacted.close()
        XCTAssertLessThan(fileSize("\(folder)/a.cove"), before / 2)
        XCTAssertFalse(fileContains("\(folder)/a.cove", "private text"))

        let report = try Realm.salvage(fromFile: "\(folder)/a.cove", toFile: "\(folder)/saved.cove", encryptionKey: Self.key)
        XCTAssertTrue(report.isComplete)
        XCTAssertFalse(fileContains("\(folder)/saved.cove", "private text"))
        let saved = try open("saved.cove")
        XCTAssertEqual(try saved.objects("Note").count, 500)
        saved.close()

        var memory = Realm.Configuration(schema: try Schema(jsonText: Self.schemaJSON), schemaVersion: 1,
                                         inMemoryIdentifier: "sealed-\(getpid())", encryptionKey: Self.key)
        let m1 = try Realm(configuration: memory)
        try fill(m1, 10)
        memory.encryptionKey = Self.key
        let m2 = try Realm(configuration: memory)
        XCTAssertEqual(try m2.objects("Note").count, 10)
        m2.close()
        m1.close()
    }

    /// Two realms on one encrypted file, each decrypting into memory of its own: the second is
    /// told of the first's commits and reads them, as pages are freed and reused.
    func testASecondRealmSeesCommitsThroughNotifications() throws {
        let writer = try open("shared.cove")
        let reader = try open("shared.cove")
        defer {
            writer.close()
            reader.close()
        }
        let results = try reader.objects("Note").filter("tag == 't1'")
        var counts: [Int] = []
        let token = results.observe { change in
            if case .update(let r, _, _, _) = change { counts.append(r.count) }
        }
        defer { token.invalidate() }
        for round in 0..<5 {
            try writer.write {
                for i in 0..<50 {
                    let id = Int64(round * 50 + i)
                    _ = try writer.dynamicCreate("Note", primaryKey: .int(id), values: [
                        ("text", .string(String(repeating: "x", count: 200))), ("tag", .string("t\(id % 3)"))])
                }
            }
            _ = try reader.refresh()
        }
        XCTAssertEqual(counts.last, 83)
        XCTAssertEqual(results.count, 83)
    }
}

/// A flag set from a callback that may run on another thread.
final class AtomicFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .relaxed) }
    var isSet: Bool { value.load(ordering: .relaxed) }
}
