// Realm.fileSpace(): the format, the bytes of the file's pages and of those in use, as writes
// grow the file and deletes free its pages for later commits.
import XCTest
@testable import Cove
@testable import CoveCore

final class FileSpaceTests: CoveTestCase {
    func testSpaceFollowsWritesAndDeletes() throws {
        let schema = try Schema(jsonText: #"{"Item": {"properties": {"text": "string"}}}"#)
        let realm = try Realm(configuration: .init(path: "\(folder)/space.cove", durability: .noSync, schema: schema, schemaVersion: 1))
        defer { realm.close() }
        let empty = try realm.fileSpace()
        XCTAssertEqual(empty.formatVersion, 6)
        XCTAssertEqual(empty.pageSize, 4096)
        XCTAssertEqual(empty.totalBytes % 4096, 0)
        XCTAssertLessThan(empty.usedBytes, empty.totalBytes)
        try realm.write {
            for i in 0..<5000 { try realm.dynamicCreate("Item", values: [("text", .string(String(repeating: "x", count: 100) + "\(i)"))]) }
        }
        let full = try realm.fileSpace()
        XCTAssertGreaterThan(full.usedBytes, empty.usedBytes + 500_000, "5,000 objects of 100 bytes")
        XCTAssertEqual(full.usedBytes + full.freeBytes, full.totalBytes)
        try realm.write { for o in try realm.dynamicObjects("Item") { try realm.delete(o) } }
        // The freed pages are free once no version in use needs them: two more commits.
        try realm.write {}
        try realm.write {}
        let emptied = try realm.fileSpace()
        XCTAssertLessThan(emptied.totalBytes, full.totalBytes / 4, "the free pages that ended the file were given back")
        XCTAssertLessThan(emptied.usedBytes, full.usedBytes / 4)
        XCTAssertEqual(try realm.verify().contains("\(emptied.freeBytes / 4096) free"), true)
    }
}
