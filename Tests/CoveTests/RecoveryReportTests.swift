// The open says what it discarded: a file whose last commit has a page that no longer holds what
// the commit wrote opens at the version before, and `Realm.recovery` names the version left out,
// the one opened and the page; an intact file, or one another realm has open, reports nothing.
import Glibc
import XCTest
@testable import Cove
@testable import CoveCore

final class RecoveryReportTests: CoveTestCase {
    private func open(_ path: String) throws -> Realm {
        let schema = try Schema(jsonText: #"{"Item": {"properties": {"n": "int", "text": "string"}}}"#)
        return try Realm(configuration: .init(path: path, durability: .full, schema: schema, schemaVersion: 1))
    }

    private func add(_ realm: Realm, _ range: Range<Int>) throws {
        try realm.write {
            for i in range { try realm.dynamicCreate("Item", values: [("n", .int(Int64(i))), ("text", .string("item \(i)"))]) }
        }
    }

    private func bytes(_ path: String) throws -> [UInt8] {
        Array(try XCTUnwrap(FileManager.default.contents(atPath: path)))
    }

    /// Opens the file, runs `body`, and closes it; the realm is gone once this returns, so the
    /// next open is the first of the file again (and recovers it).
    private func session<R>(_ path: String, _ body: (Realm) throws -> R) throws -> R {
        let realm = try open(path)
        defer { realm.close() }
        return try body(realm)
    }

    func testADamagedPageOfTheLastCommitIsReported() throws {
        let path = "\(folder)/r.cove"
        let kept = try session(path) { realm in
            try add(realm, 0..<100)
            return try realm.version
        }
        let before = try bytes(path)
        let lost = try session(path) { realm in
            XCTAssertNil(realm.recovery, "an intact file")
            try add(realm, 100..<2100)
            return try realm.version
        }

        // Sixteen bytes of a page the last commit wrote (not a meta slot) go bad.
        var after = try bytes(path)
        let pages = after.count / 4096
        let page = try XCTUnwrap((0..<pages).reversed().first { p in
            guard p != 0 && p != 8 else { return false }
            let now = after[(p * 4096)..<((p + 1) * 4096)]
            let was = p * 4096 < before.count ? Array(before[(p * 4096)..<((p + 1) * 4096)]) : [UInt8](repeating: 0, count: 4096)
            return !now.elementsEqual(was)
        })
        for i in 0..<16 { after[page * 4096 + 2000 + i] ^= 0xA5 }
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(after)))

        try session(path) { realm in
            let recovery = try XCTUnwrap(realm.recovery)
            XCTAssertEqual(recovery.discardedVersion, lost)
            XCTAssertEqual(recovery.openedVersion, kept)
            XCTAssertTrue(recovery.reason.contains("page \(page)"), recovery.reason)
            XCTAssertTrue(recovery.description.contains("version \(lost) was discarded"), recovery.description)
            XCTAssertEqual(try realm.objectCount("Item"), 100)
            XCTAssertEqual(try realm.version, kept)
            // A second realm joins the open file: it recovered nothing itself.
            let second = try open(path)
            XCTAssertNil(second.recovery)
            second.close()
        }

        // The tool, opening the file first, says so: `info` shows it, `check` fails with it.
        let info = CLITool.run(["info", path], in: folder)
        XCTAssertEqual(info.status, 0, info.err)
        XCTAssertTrue(info.out.contains("recovery: version \(lost) was discarded and version \(kept) opened"), info.out)
        let check = CLITool.run(["check", path, "--quick"], in: folder)
        XCTAssertNotEqual(check.status, 0)
        XCTAssertTrue(check.err.contains("discarded its last commit") && check.err.contains("page \(page)"), check.err)
    }
}
