// verify() checks every backlink tree against the links its property holds: single links, lists
// (counted), and mixed values (their entries led by the target's class key). A tree that lacks
// an entry, holds one no link explains, or counts wrong is reported as corrupt, naming the class,
// the property, the target and the source.
import XCTest
@testable import Cove
@testable import CoveCore
import CoveStorage

final class BacklinkVerifyTests: CoveTestCase {
    static let schemaJSON = """
    {"Person": {"properties": {"name": "string", "dog": "Dog?", "dogs": "Dog[]", "any": "mixed"}},
     "Dog": {"properties": {"name": "string", "owners": "@links(Person.dog)"}}}
    """

    /// A realm with two dogs and a person whose link, list (rex twice) and mixed value name them.
    private func seeded() throws -> Realm {
        let realm = try Realm(configuration: .init(path: "\(folder)/b.cove", durability: .noSync,
                                                   schema: try Schema(jsonText: Self.schemaJSON), schemaVersion: 1))
        try realm.write {
            let rex = try realm.dynamicCreate("Dog", values: [("name", .string("rex"))])
            let fido = try realm.dynamicCreate("Dog", values: [("name", .string("fido"))])
            let ann = try realm.dynamicCreate("Person", values: [("name", .string("ann")), ("dog", .link(rex.link)),
                                                                  ("any", .link(fido.link))])
            for dog in [rex, fido, rex] { try ann.dynamicList("dogs").append(.link(dog.link)) }
        }
        return realm
    }

    /// Runs `tamper` on the backlink tree of `property` of Person inside a write, expects
    /// verify() to report `text`, and cancels the write.
    private func expectCorrupt(_ property: String, _ text: String, line: UInt = #line,
                               _ tamper: @escaping (inout BTree<TransactionPages>) throws(StorageError) -> Void) throws {
        let realm = try seeded()
        defer { realm.close() }
        try realm.beginWrite()
        let store = try realm.objectStore()
        let person = try store.objectSchema("Person")
        let key = CatalogKey.backlinks(sourceClass: try store.classKey(of: person), property: person[property: property]!.key!)
        try store.editTree(key, tamper)
        assertThrows(.corrupt, containing: text, line: line) { _ = try realm.verify() }
        try realm.cancelWrite()
        XCTAssertTrue(try realm.verify().contains("4 backlink entries match their links"), line: line)
    }

    func testVerifyChecksBacklinkTrees() throws {
        let realm = try seeded()
        // dog: (rex, ann); dogs: (rex, ann) counting 2 and (fido, ann); any: (Dog, fido, ann).
        XCTAssertTrue(try realm.verify().contains("4 backlink entries match their links"))
        realm.close()
    }

    func testAMissingBacklinkEntryIsCorrupt() throws {
        try expectCorrupt("dog", "backlinks of 'dog' of class 'Person': no entry for (target 0, source 0)") { t throws(StorageError) in
            _ = try t.remove(CatalogKey.bigEndian(0, bytes: 8) + CatalogKey.bigEndian(0, bytes: 8))
        }
    }

    func testABacklinkEntryNoLinkExplainsIsCorrupt() throws {
        try expectCorrupt("dog", "names no link the source holds") { t throws(StorageError) in
            _ = try t.put(CatalogKey.bigEndian(1, bytes: 8) + CatalogKey.bigEndian(0, bytes: 8), [UInt8]())
        }
    }

    func testAWrongCountIsCorrupt() throws {
        try expectCorrupt("dogs", "counts 1, the source holds the target 2 times") { t throws(StorageError) in
            _ = try t.put(CatalogKey.bigEndian(0, bytes: 8) + CatalogKey.bigEndian(0, bytes: 8), withUnsafeBytes(of: Int64(1).littleEndian) { Array($0) })
        }
    }

    func testAMixedEntryWithoutItsClassKeyIsCorrupt() throws {
        try expectCorrupt("any", "of class key") { t throws(StorageError) in
            var classKey: [UInt8] = []
            try t.forEach(fromPosition: 0) { k, _ throws(StorageError) -> Bool in
                classKey = Array(k.prefix(4))
                return false
            }
            _ = try t.remove(classKey + CatalogKey.bigEndian(1, bytes: 8) + CatalogKey.bigEndian(0, bytes: 8))
        }
    }

    /// A create puts its links into the new object's row and files their backlinks after it:
    /// objects created in a row (still waiting to be written to their table) link and are
    /// linked, and a property named twice keeps its last value and only that value's backlink.
    func testCreatedLinksHaveTheirBacklinks() throws {
        let realm = try Realm(configuration: .init(path: "\(folder)/c.cove", durability: .noSync,
                                                   schema: try Schema(jsonText: Self.schemaJSON), schemaVersion: 1))
        defer { realm.close() }
        try realm.write {
            let rex = try realm.dynamicCreate("Dog", values: [("name", .string("rex"))])
            let fido = try realm.dynamicCreate("Dog", values: [("name", .string("fido"))])
            for i in 0..<300 {
                _ = try realm.dynamicCreate("Person", values: [("name", .string("p\(i)")), ("dog", .link(i % 3 == 0 ? fido.link : rex.link)),
                                                               ("any", .link(rex.link))])
            }
            _ = try realm.dynamicCreate("Person", values: [("dog", .link(rex.link)), ("dog", .null), ("any", .link(fido.link)), ("any", .int(7))])
            _ = try realm.dynamicCreate("Person", values: [("dog", .link(rex.link)), ("dog", .link(fido.link)), ("any", .link(fido.link)), ("any", .int(7)), ("any", .link(fido.link))])
            XCTAssertEqual(try rex.linkingObjects("owners").count, 200)
            XCTAssertEqual(try fido.linkingObjects("owners").count, 101)
        }
        let report = try realm.verify()
        XCTAssertTrue(report.contains("602 backlink entries match their links"), report)
        let people = try realm.dynamicObjects("Person")
        XCTAssertEqual(people.count, 302)
        XCTAssertEqual(try people[300]["dog"], .null)
        XCTAssertEqual(try people[300]["any"], .int(7))
        XCTAssertEqual(try people[301]["dog"], try people[0]["dog"], "fido, as the first person's")
    }
}
