// Subscription sets and subscribed downloads: sets accepted, retried, older ones refused, bad
// queries refused naming the subscription with the previous set kept; a bootstrap across several
// batches while objects change; steady downloads answering object and remove lines (an object
// leaving a query, a deleted one, one entering); a download naming a stale set refused.
import Foundation
import CoveSyncCore
import XCTest
@testable import CoveSyncServer

extension ServerTests {
    func postSet(_ base: URL, _ token: String, _ file: UUID, _ body: SyncSubscriptionSetBody) async throws -> (Int, [String: Any]?, String) {
        try await request(base, "v1/subscriptions?client_file_id=\(file.uuidString)", method: "POST", token: token, body: body.encode())
    }

    func stateDownload(_ base: URL, _ token: String, _ file: UUID, _ query: String) async throws -> (Int, SyncStateDownload?, String) {
        let (status, _, text) = try await request(base, "v1/download?client_file_id=\(file.uuidString)&" + query, token: token)
        return (status, status == 200 ? try StateLines.decode(text) : nil, text)
    }

    func testSubscriptionSetsAreStoredRetriedAndChecked() async throws {
        let (base, server, task) = try await startServer(schema: testSchema)
        defer { task.cancel() }
        let token = try await server.tokens.token(for: "alice", days: 1)
        let (file, _) = try await bind(base, token)
        let adults = SyncSubscriptionEntry(name: "adults", className: "SDog", query: "age >= $0", arguments: [.value(.int(2))])
        var (status, json, text) = try await postSet(base, token, file, SyncSubscriptionSetBody(version: 2, subscriptions: [adults]))
        XCTAssertEqual(status, 200, text)
        XCTAssertEqual(json?["version"] as? Int, 2)
        (status, _, text) = try await postSet(base, token, file, SyncSubscriptionSetBody(version: 2, subscriptions: [adults]))
        XCTAssertEqual(status, 200, "a retry is answered again: \(text)")
        (status, json, text) = try await postSet(base, token, file, SyncSubscriptionSetBody(version: 1, subscriptions: []))
        XCTAssertEqual(status, 409, text)
        XCTAssertTrue(errorMessage(json).contains("subscription set 1 is older than the file's set 2"), text)
        let bad = SyncSubscriptionEntry(name: "broken", className: "SDog", query: "age == 'x'")
        (status, json, text) = try await postSet(base, token, file, SyncSubscriptionSetBody(version: 3, subscriptions: [adults, bad]))
        XCTAssertEqual(status, 400, text)
        XCTAssertTrue(text.contains("bad_query"), text)
        XCTAssertTrue(errorMessage(json).contains("subscription 2 'broken' on class 'SDog': subscription query \"age == 'x'\""), text)
        let unknown = SyncSubscriptionEntry(name: nil, className: "Cat", query: "TRUEPREDICATE")
        (status, json, text) = try await postSet(base, token, file, SyncSubscriptionSetBody(version: 3, subscriptions: [unknown]))
        XCTAssertTrue(errorMessage(json).contains("subscription 1 on class 'Cat': the server's schema has no class 'Cat'"), text)
        let stored = try await server.database.subscriptionSet(of: file)
        XCTAssertEqual(stored?.version, 2, "the previous set stays the file's")
        (status, json, text) = try await request(base, "v1/subscriptions?client_file_id=\(file.uuidString)", method: "POST", token: token,
                                                 body: #"{"version": 3}"#)
        XCTAssertEqual(status, 400, text)
        XCTAssertTrue(errorMessage(json).contains("missing member 'subscriptions'"), text)
        // A download naming another set than the latest is refused.
        let (stale, _, staleText) = try await stateDownload(base, token, file, "subscriptions=1&after=0")
        XCTAssertEqual(stale, 409, staleText)
        XCTAssertTrue(staleText.contains("subscription set 1 is not the file's latest, 2"), staleText)
    }

    func testBootstrapAndSteadyDownloads() async throws {
        let (base, server, task) = try await startServer(schema: testSchema)
        defer { task.cancel() }
        let alice = try await server.tokens.token(for: "alice", days: 1)
        let (writer, node) = try await bind(base, alice)
        let (reader, _) = try await bind(base, alice)
        let tag = String(UUID().uuidString.prefix(8))
        func name(_ i: Int) -> String { "\(tag)-\(i)" }
        // Ten dogs of ages 0...9; the set covers this test's dogs of age >= 5 and person 7.
        var version: UInt64 = 1
        func write(_ ops: [(SyncObjectRef, SyncOperation.Change)]) async throws {
            let (status, _, text) = try await upload(base, alice, writer, try changeset(node: node, version: version, ops))
            XCTAssertEqual(status, 200, text)
            version += 1
        }
        try await write((0..<10).map { (dog(name($0)), .create(values: ["age": .int(Int64($0))])) })
        let person = try SyncObjectRef(className: "SPerson", key: .int(Int64.random(in: 1_000_000...9_000_000)))
        try await write([(person, .create(values: ["name": .string(tag)]))])
        let set = SyncSubscriptionSetBody(version: 1, subscriptions: [
            SyncSubscriptionEntry(name: "old", className: "SDog", query: "age >= $0 AND name BEGINSWITH $1", arguments: [.value(.int(5)), .value(.string(tag))]),
            SyncSubscriptionEntry(name: nil, className: "SPerson", query: "name == $0", arguments: [.value(.string(tag))]),
        ])
        let (posted, _, postText) = try await postSet(base, alice, reader, set)
        XCTAssertEqual(posted, 200, postText)
        // The bootstrap, two objects a batch; dogs change between batches.
        var cursor = "start", sent: [SyncObjectRef] = [], serverVersion: Int64 = -1, batches = 0
        while true {
            let (status, download, text) = try await stateDownload(base, alice, reader, "subscriptions=1&bootstrap=\(cursor)&limit=2")
            XCTAssertEqual(status, 200, text)
            guard let download, case .bootstrap(let s, let v, let next) = download.header.kind else { return XCTFail(text) }
            XCTAssertEqual(s, 1)
            if serverVersion < 0 { serverVersion = v } else { XCTAssertEqual(v, serverVersion, "the first batch fixes server_version") }
            XCTAssertLessThanOrEqual(download.lines.count, 2)
            sent += download.lines.map(\.object)
            batches += 1
            if batches == 1 { try await write([(dog(name(9)), .setProperty("age", .int(1)))]) }
            guard let next else { break }
            cursor = next
        }
        XCTAssertGreaterThanOrEqual(batches, 3)
        XCTAssertEqual(Set(sent), Set([person] + (5...8).map { dog(name($0)) }).union(sent.contains(dog(name(9))) ? [dog(name(9))] : []),
                       "every covered object, once")
        XCTAssertEqual(sent.count, Set(sent).count)
        // Steady state: dog 9 left (changed during the bootstrap), 6 is deleted, 7 leaves, 2 enters,
        // 3 changes without entering.
        try await write([(dog(name(6)), .delete), (dog(name(7)), .setProperty("age", .int(0))), (dog(name(2)), .setProperty("age", .int(50))),
                         (dog(name(3)), .setProperty("age", .int(4)))])
        let (status, download, text) = try await stateDownload(base, alice, reader, "subscriptions=1&after=\(serverVersion)")
        XCTAssertEqual(status, 200, text)
        guard let download, case .steady(let to, let more) = download.header.kind else { return XCTFail(text) }
        XCTAssertFalse(more)
        XCTAssertEqual(download.header.latest, to)
        var shown: [String: String] = [:]
        for line in download.lines {
            switch line {
            case .object(let ref, let state): shown[ref.key.json] = "object age \(state.property("age").map { "\($0)" } ?? "-")"
            case .remove(let ref): shown[ref.key.json] = "remove"
            }
        }
        XCTAssertEqual(shown, ["\"\(name(9))\"": "remove", "\"\(name(6))\"": "remove", "\"\(name(7))\"": "remove",
                               "\"\(name(2))\"": "object age 50", "\"\(name(3))\"": "remove"], text)
        // The writer's own downloads, without a set, are changesets as before.
        let plain = try await Self.download(base, alice, writer, after: Int(serverVersion))
        XCTAssertEqual(plain.status, 200)
        XCTAssertEqual(plain.lines.count, 0, "the file's own changesets are left out")
        // A bootstrap cursor of an older set is refused once the set changes.
        var newer = set
        newer.version = 2
        _ = try await postSet(base, alice, reader, newer)
        let (refused, _, refusedText) = try await stateDownload(base, alice, reader, "subscriptions=2&bootstrap=\(cursor)")
        XCTAssertEqual(refused, 409, refusedText)
        let (garbled, _, garbledText) = try await stateDownload(base, alice, reader, "subscriptions=2&bootstrap=zz%21")
        XCTAssertEqual(garbled, 400, garbledText)
    }
}
