// Realm.writeCopy(toFile:): a compacted copy of the version a realm reads, with every kind of
// property, collection (inline and in trees, in the row and in an old table's collection area),
// index and backlink, object keys and links kept; refused over an existing file or inside a
// write; taken while another realm writes.
import XCTest
@testable import Cove
@testable import CoveCore

final class WriteCopyTests: CoveTestCase {

    static let schemaJSON = """
    {
      "Person": {"primaryKey": "name", "indexed": ["age"],
                 "properties": {"name": "string", "age": "int", "dogs": "Dog[]", "best": "Dog?", "nick": "string?",
                                "scores": "double{}", "tags": "string<>", "anything": "mixed", "notes": "Note[]"}},
      "Dog": {"properties": {"name": "string", "weight": "double?", "big": "int[]", "owners": "@links(Person.dogs)"}},
      "Note": {"embedded": true, "properties": {"text": "string"}}
    }
    """

    private func open(_ name: String, version: UInt64 = 1) throws -> Realm {
        try Realm(configuration: .init(path: "\(folder)/\(name)", durability: .noSync,
                                       schema: try Schema(jsonText: Self.schemaJSON), schemaVersion: version))
    }

    /// Every object of every class as JSON text, in key order.
    private func dump(_ realm: Realm) throws -> [String] {
        var out: [String] = []
        for cls in ["Person", "Dog"] {
            for object in try realm.dynamicObjects(cls) {
                out.append("\(cls) \(object.objectKey) \(try ObjectJSON.encode(object).serialized())")
            }
        }
        return out
    }

    private func fill(_ realm: Realm) throws {
        try realm.write {
            var dogs: [DynamicObject] = []
            for i in 0..<300 {
                let dog = try realm.dynamicCreate("Dog", values: [("name", .string("dog \(i)")), ("weight", i % 3 == 0 ? .null : .double(Double(i)))])
                if i % 50 == 0 { for n in 0..<500 { try dog.dynamicList("big").append(.int(Int64(n * i))) } }
                dogs.append(dog)
            }
            for i in 0..<400 {
                let p = try realm.dynamicCreate("Person", primaryKey: .string("p\(i)"), values: [
                    ("age", .int(Int64(i % 90))), ("nick", i % 4 == 0 ? .string(String(repeating: "n", count: 3000)) : .null),
                    ("best", .link(dogs[i % 300].link)), ("anything", i % 2 == 0 ? .link(dogs[(i * 7) % 300].link) : .int(Int64(i)))])
                for d in 0..<(i % 4) { try p.dynamicList("dogs").append(.link(dogs[(i + d) % 300].link)) }
                try p.dynamicMap("scores").setValue(.double(Double(i)), forKey: "s\(i % 5)")
                _ = try p.dynamicMutableSet("tags").insert(.string("t\(i % 11)"))
                if i % 10 == 0 { try p.dynamicList("notes").appendEmbedded().setValue(.string("note \(i)"), forKey: "text") }
            }
        }
        // Free space in the original: a third of the people go.
        try realm.write {
            for p in try realm.dynamicObjects("Person") where p.objectKey % 3 == 0 { try realm.delete(p) }
        }
    }

    func testACopyHoldsTheSameObjectsInFewerPages() throws {
        let realm = try open("a.cove")
        try fill(realm)
        try realm.writeCopy(toFile: "\(folder)/copy.cove")
        let before = try dump(realm)
        let used = try realm.fileSpace().usedBytes
        realm.close()
        let copy = try open("copy.cove")
        XCTAssertEqual(try dump(copy), before)
        let report = try copy.verify()
        XCTAssertTrue(report.contains("backlink entries match their links"), report)
        XCTAssertLessThanOrEqual(try copy.fileSpace().usedBytes, used)
        // Indexes, primary keys, backlinks and queries work in the copy, and it takes writes.
        XCTAssertEqual(try copy.objects("Person").filter("age == 7").count, try copy.objects("Person").filter("age + 0 == 7").count)
        XCTAssertNotNil(try copy.dynamicObject(ofType: "Person", forPrimaryKey: .string("p1")))
        let dog = try XCTUnwrap(copy.dynamicObjects("Dog").first)
        XCTAssertEqual(try dog.dynamicList("big").count, 500)
        try copy.write { _ = try copy.dynamicCreate("Person", primaryKey: .string("new"), values: [("age", .int(1))]) }
        XCTAssertTrue(try copy.verify().contains("live"))
    }

    func testATableWithACollectionAreaIsCopied() throws {
        do {
            Property.collectionsInArea = true
            defer { Property.collectionsInArea = false }
            let realm = try open("area.cove")
            try fill(realm)
            realm.close()
        }
        let realm = try open("area.cove")
        try realm.writeCopy(toFile: "\(folder)/area-copy.cove")
        let before = try dump(realm)
        realm.close()
        let copy = try open("area-copy.cove")
        XCTAssertEqual(try dump(copy), before)
        XCTAssertTrue(try copy.verify().contains("inline collections match"))
    }

    func testTheCopyIsOfTheVersionTheRealmReads() throws {
        let realm = try open("v.cove")
        try realm.write { for i in 0..<10 { _ = try realm.dynamicCreate("Dog", values: [("name", .string("d\(i)"))]) } }
        let frozenCount = try realm.dynamicObjects("Dog").count
        // Another realm on the file commits after this one pinned its version.
        let other = try open("v.cove")
        try other.write { for i in 0..<5 { _ = try other.dynamicCreate("Dog", values: [("name", .string("late \(i)"))]) } }
        try realm.writeCopy(toFile: "\(folder)/v-copy.cove")
        let copy = try open("v-copy.cove")
        XCTAssertEqual(try copy.dynamicObjects("Dog").count, frozenCount)
    }

    func testACopyIsRefusedOverAFileOrInsideAWrite() throws {
        let realm = try open("r.cove")
        try realm.write { _ = try realm.dynamicCreate("Dog", values: [("name", .string("x"))]) }
        assertThrows(.invalidArgument, containing: "already exists") { try realm.writeCopy(toFile: "\(self.folder)/r.cove") }
        try realm.write {
            assertThrows(.invalidArgument, containing: "in a write transaction") { try realm.writeCopy(toFile: "\(self.folder)/w.cove") }
        }
        XCTAssertFalse(FileHelper.exists("\(folder)/w.cove"))
        assertThrows(.io, containing: "No such file or directory") { try realm.writeCopy(toFile: "\(self.folder)/no/such/folder/x.cove") }
        realm.close()
        assertThrows(.closed, containing: "closed") { try realm.writeCopy(toFile: "\(self.folder)/c.cove") }
    }
}

/// Realm.compactFile(atPath:) and Configuration.shouldCompactOnLaunch: a file compacted in place
/// when no other handle has it open, its objects the same; left alone when another realm has it
/// open or the callback says no.
final class CompactTests: CoveTestCase {
    private func config(_ path: String, _ should: (@Sendable (UInt64, UInt64) -> Bool)? = nil) throws -> Realm.Configuration {
        .init(path: path, durability: .noSync, schema: try Schema(jsonText: WriteCopyTests.schemaJSON), schemaVersion: 1,
              shouldCompactOnLaunch: should)
    }

    private func fileSize(_ path: String) -> Int {
        var st = stat()
        return stat(path, &st) == 0 ? Int(st.st_size) : -1
    }

    /// A file that held 8,000 dogs and now holds 100: most of its pages are free.
    private func makeSparseFile(_ path: String) throws -> [String] {
        let realm = try Realm(configuration: try config(path))
        try realm.write {
            for i in 0..<8_000 { _ = try realm.dynamicCreate("Dog", values: [("name", .string("dog number \(i) " + String(repeating: "x", count: 200)))]) }
        }
        try realm.write { for d in try realm.dynamicObjects("Dog") where d.objectKey >= 100 { try realm.delete(d) } }
        let names = try realm.dynamicObjects("Dog").map { try $0.value(forKey: "name").description }
        realm.close()
        return names
    }

    func testCompactFileShrinksAFileNoOneHasOpen() throws {
        let path = "\(folder)/c.cove"
        let names = try makeSparseFile(path)
        let before = fileSize(path)
        var asked: (UInt64, UInt64) = (0, 0)
        XCTAssertTrue(try Realm.compactFile(atPath: path) { total, used in asked = (total, used); return true })
        XCTAssertLessThanOrEqual(asked.0, UInt64(before))
        XCTAssertLessThan(asked.1, asked.0 / 2)
        XCTAssertLessThan(fileSize(path), before / 2)
        XCTAssertFalse(FileHelper.exists(path + ".compacting"))
        let realm = try Realm(configuration: try config(path))
        XCTAssertEqual(try realm.dynamicObjects("Dog").map { try $0.value(forKey: "name").description }, names)
        XCTAssertTrue(try realm.verify().contains("live"))
        try realm.write { _ = try realm.dynamicCreate("Dog", values: [("name", .string("after"))]) }
        XCTAssertEqual(try realm.dynamicObjects("Dog").count, 101)
    }

    func testAFileAnotherRealmHasOpenIsLeftAlone() throws {
        let path = "\(folder)/open.cove"
        _ = try makeSparseFile(path)
        let other = try Realm(configuration: try config(path))
        let before = fileSize(path)
        XCTAssertFalse(try Realm.compactFile(atPath: path) { _, _ in
            XCTFail("not asked while another handle has the file open")
            return true
        })
        XCTAssertEqual(fileSize(path), before)
        XCTAssertEqual(try other.dynamicObjects("Dog").count, 100)
        other.close()
    }

    func testShouldCompactOnLaunch() throws {
        let path = "\(folder)/launch.cove"
        let names = try makeSparseFile(path)
        let before = fileSize(path)
        // Declined: the file stays as it is. (A realm's handle lets go of the file when the
        // realm goes away.)
        do {
            let declined = try Realm(configuration: try config(path) { _, _ in false })
            declined.close()
        }
        XCTAssertEqual(fileSize(path), before)
        // Asked with the file's numbers, and compacted.
        let realm = try Realm(configuration: try config(path) { total, used in total > 2 * used })
        XCTAssertEqual(try realm.dynamicObjects("Dog").map { try $0.value(forKey: "name").description }, names)
        XCTAssertLessThan(fileSize(path), before / 2)
        // A second realm on the open file is not compacted under the first.
        let second = try Realm(configuration: try config(path) { _, _ in
            XCTFail("not asked while another handle has the file open")
            return true
        })
        XCTAssertEqual(try second.dynamicObjects("Dog").count, 100)
        second.close()
        realm.close()
    }

    func testAStaleCopyFromACrashIsReplaced() throws {
        let path = "\(folder)/stale.cove"
        _ = try makeSparseFile(path)
        // A compaction that died before its rename leaves a partial copy beside the file.
        XCTAssertTrue(FileHelper.write(path + ".compacting", "partial"))
        XCTAssertTrue(try Realm.compactFile(atPath: path))
        XCTAssertFalse(FileHelper.exists(path + ".compacting"))
        XCTAssertEqual(try Realm(configuration: try config(path)).dynamicObjects("Dog").count, 100)
    }
}
