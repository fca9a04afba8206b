// The server against a real PostgreSQL (started by .ci/postgres.sh in a temporary folder, on a
// loopback port) over real HTTP: health and metrics, binding with good, missing, forged and
// expired tokens, malformed bodies refused with a message and nothing written, a file bound by
// one user refused to another, and tables migrated by several servers at once.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CoveSyncCore
import Logging
import XCTest
@testable import CoveSyncServer

/// One PostgreSQL for the whole test run, stopped when the process exits.
final class TestDatabase: @unchecked Sendable {
    static let shared = TestDatabase()
    let folder: String
    let url: String
    let error: String?

    private init() {
        folder = NSTemporaryDirectory() + "cove-sync-pg-\(getpid())"
        let port = 56000 + Int(getpid() % 1000)
        let (status, output) = TestDatabase.run(["start", folder, String(port)])
        url = output.trimmingCharacters(in: .whitespacesAndNewlines)
        error = status == 0 ? nil : "PostgreSQL did not start: \(output)"
        startedFolder = folder
        atexit { _ = TestDatabase.run(["stop", startedFolder]) }
    }

    /// Runs .ci/postgres.sh with `arguments`; its status and output. Through system(3): the
    /// tests are async, and Foundation's Process waits for its child on a run loop they do not
    /// turn.
    static func run(_ arguments: [String]) -> (Int32, String) {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../.ci/postgres.sh").path
        let output = NSTemporaryDirectory() + "cove-sync-pg-output-\(getpid())"
        func quoted(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let command = (["bash", script] + arguments).map(quoted).joined(separator: " ") + " > \(quoted(output)) 2>&1 < /dev/null"
        let status = system(command)
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        unlink(output)
        return ((status >> 8) & 0xff, text)
    }
}

/// The folder of the PostgreSQL started, for the exit handler (which can capture nothing).
nonisolated(unsafe) var startedFolder = ""

final class ServerTests: XCTestCase {
    static let secret = "a test secret of more than thirty-two characters"

    /// A server on a free loopback port, running until the test ends.
    func startServer(schema: ServerSchema? = nil, rules: ServerRules? = nil) async throws -> (URL, SyncServer, Task<Void, any Error>) {
        let db = TestDatabase.shared
        if let error = db.error { throw XCTSkip(error) }
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let server = SyncServer(database: SyncDatabase(url: try DatabaseURL(db.url), schema: schema, rules: rules, logger: logger),
                                tokens: await TokenAuthority(secret: Self.secret), logger: logger)
        let bound = PortBox()
        let app = server.application(host: "127.0.0.1", port: 0) { port in bound.set(port) }
        let task = Task { try await app.runService(gracefulShutdownSignals: []) }
        for _ in 0..<300 where bound.port == nil { try await Task.sleep(for: .milliseconds(20)) }
        let port = try XCTUnwrap(bound.port, "the server did not start")
        return (URL(string: "http://127.0.0.1:\(port)")!, server, task)
    }

    func request(_ base: URL, _ path: String, method: String = "GET", token: String? = nil,
                         body: String? = nil) async throws -> (Int, [String: Any]?, String) {
        var r = URLRequest(url: URL(string: base.absoluteString + "/" + path)!)
        r.httpMethod = method
        if let token { r.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            r.httpBody = Data(body.utf8)
            r.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: r)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let text = String(decoding: data, as: UTF8.self)
        return (status, (try? JSONSerialization.jsonObject(with: data)) as? [String: Any], text)
    }

    /// Binds a new file for `token`'s user; its id and node id.
    func bind(_ base: URL, _ token: String) async throws -> (UUID, UInt64) {
        let file = UUID()
        let (status, json, text) = try await request(base, "v1/bind", method: "POST", token: token,
                                                     body: #"{"client_file_id": "\#(file.uuidString)", "schema_version": 1}"#)
        XCTAssertEqual(status, 200, text)
        let node = UInt64(try XCTUnwrap(json?["node_id"] as? Int))
        XCTAssertEqual(node, try SyncUUID(text: file.uuidString).nodeId, "the node id derived from the file's id")
        return (file, node)
    }

    /// Changesets `versions` of `node`, each setting `Note(id).text`.
    private func changesets(node: UInt64, _ versions: ClosedRange<UInt64>, text: String = "hello") throws -> String {
        let source = SyncClockSource(node: node)
        var lines = ""
        for v in versions {
            var builder = ChangesetBuilder(clock: source, version: v)
            let object = try SyncObjectRef(className: "Note", key: .int(Int64(v)))
            try builder.append(object, .setProperty("text", .string("\(text) \(v)")), wall: 1_800_000_000_000 + v)
            lines += ChangesetLines.encode(try builder.finish(wall: 1_800_000_000_000 + v)) + "\n"
        }
        return lines
    }

    /// The download after `after`: its header and its changeset lines.
    static func download(_ base: URL, _ token: String, _ file: UUID, after: Int, wait: Int = 0,
                          limit: Int? = nil) async throws -> (to: Int, more: Bool, latest: Int, lines: [String], status: Int, text: String) {
        var path = "v1/download?client_file_id=\(file.uuidString)&after=\(after)&wait=\(wait)"
        if let limit { path += "&limit=\(limit)" }
        var r = URLRequest(url: URL(string: base.absoluteString + "/" + path)!)
        r.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        r.timeoutInterval = 90
        let (data, response) = try await URLSession.shared.data(for: r)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let text = String(decoding: data, as: UTF8.self)
        let lines = text.split(separator: "\n").map(String.init)
        guard status == 200, let first = lines.first,
              let head = try? JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any] else {
            return (0, false, 0, [], status, text)
        }
        return (head["to"] as? Int ?? -1, head["more"] as? Bool ?? false, head["latest"] as? Int ?? -1,
                Array(lines.dropFirst()), status, text)
    }

    func upload(_ base: URL, _ token: String, _ file: UUID, _ lines: String) async throws -> (Int, [String: Any]?, String) {
        try await request(base, "v1/upload?client_file_id=\(file.uuidString)", method: "POST", token: token, body: lines)
    }

    /// A running server with two users, each with a bound file.
    struct TwoClients {
        var base: URL
        var server: SyncServer
        var task: Task<Void, any Error>
        var alice: String, bob: String
        var a: UUID, nodeA: UInt64
        var b: UUID, nodeB: UInt64
    }

    private func twoClients() async throws -> TwoClients {
        let (base, server, task) = try await startServer()
        let alice = try await server.tokens.token(for: "alice", days: 1)
        let bob = try await server.tokens.token(for: "bob", days: 1)
        let (a, nodeA) = try await bind(base, alice)
        let (b, nodeB) = try await bind(base, bob)
        return TwoClients(base: base, server: server, task: task, alice: alice, bob: bob, a: a, nodeA: nodeA, b: b, nodeB: nodeB)
    }

    func testUploadsAreIdempotentAndDownloadsSeeOthersChanges() async throws {
        let t = try await twoClients()
        defer { t.task.cancel() }
        let (base, alice, bob, a, nodeA, b, nodeB) = (t.base, t.alice, t.bob, t.a, t.nodeA, t.b, t.nodeB)
        XCTAssertNotEqual(nodeA, nodeB)
        let start = try await Self.download(base, bob, b, after: 0).to

        var (status, json, text) = try await upload(base, alice, a, try changesets(node: nodeA, 1...3))
        XCTAssertEqual(status, 200, text)
        XCTAssertEqual(json?["uploaded_version"] as? Int, 3)
        XCTAssertEqual(json?["accepted"] as? Int, 3)
        // The same upload again (its answer lost): nothing new, the same state.
        (status, json, text) = try await upload(base, alice, a, try changesets(node: nodeA, 1...3))
        XCTAssertEqual(status, 200, text)
        XCTAssertEqual(json?["accepted"] as? Int, 0)
        XCTAssertEqual(json?["uploaded_version"] as? Int, 3)
        // Overlapping: only the new one is taken.
        (status, json, text) = try await upload(base, alice, a, try changesets(node: nodeA, 3...4))
        XCTAssertEqual(json?["accepted"] as? Int, 1, text)

        // Binding again after what it knows held: the clocks of the changesets after it, for a
        // client to tell its own from another copy's.
        let held = try ChangesetLines.decode(try changesets(node: nodeA, 3...4)).map(\.clock.description)
        (status, json, text) = try await request(base, "v1/bind", method: "POST", token: alice,
                                                 body: #"{"client_file_id": "\#(a.uuidString)", "schema_version": 1, "acknowledged": 2}"#)
        XCTAssertEqual(status, 200, text)
        XCTAssertEqual(json?["held_clocks"] as? [String], held, text)
        (status, _, text) = try await request(base, "v1/bind", method: "POST", token: alice,
                                              body: #"{"client_file_id": "\#(a.uuidString)", "schema_version": 1, "acknowledged": -1}"#)
        XCTAssertEqual(status, 400, text)

        // Bob sees Alice's four changesets, in order; Alice sees none of her own.
        let got = try await Self.download(base, bob, b, after: start)
        XCTAssertEqual(got.lines.count, 4, got.text)
        XCTAssertTrue(got.lines[0].contains("hello 1") && got.lines[3].contains("hello 4"), got.text)
        let decoded = try ChangesetLines.decode(got.lines.joined(separator: "\n"))
        XCTAssertEqual(decoded.map(\.clientVersion), [1, 2, 3, 4])
        let own = try await Self.download(base, alice, a, after: start)
        XCTAssertEqual(own.lines.count, 0)
        XCTAssertEqual(own.to, got.to, "the cursor moves past a client's own changesets")
        // In batches; each says how far the history goes, so that the client can tell how much
        // is left.
        var cursor = start
        var batches = 0
        var seen = 0
        while true {
            let batch = try await Self.download(base, bob, b, after: cursor, limit: 3)
            seen += batch.lines.count
            cursor = batch.to
            batches += 1
            XCTAssertEqual(batch.latest, got.to, batch.text)
            if !batch.more { break }
        }
        XCTAssertEqual(seen, 4)
        XCTAssertEqual(batches, 2)
    }

    /// The first line of a download: `to`, `more`, `count`, then `latest`, the newest version the
    /// server knows of, however far behind the cursor is.
    func testADownloadSaysHowFarTheHistoryGoes() async throws {
        let t = try await twoClients()
        defer { t.task.cancel() }
        let start = Int(try await t.server.database.latestVersion())
        let (status, _, text) = try await upload(t.base, t.alice, t.a, try changesets(node: t.nodeA, 1...5))
        XCTAssertEqual(status, 200, text)
        let newest = try await t.server.database.latestVersion()
        XCTAssertEqual(newest, Int64(start + 5))

        let first = try await Self.download(t.base, t.bob, t.b, after: start, limit: 2)
        XCTAssertTrue(first.text.hasPrefix("{\"to\":\(start + 2),\"more\":true,\"count\":2,\"latest\":\(newest)}\n"), first.text)
        XCTAssertEqual(first.latest - first.to, 3, "three changesets to go")
        // From the start of the history (older than the instance keeps in memory, or not): the same.
        let old = try await Self.download(t.base, t.bob, t.b, after: 0, limit: 1)
        XCTAssertEqual(old.latest, Int(newest), old.text)
        // Caught up: latest is the cursor; a client's own changesets count too.
        let last = try await Self.download(t.base, t.bob, t.b, after: first.to)
        XCTAssertEqual(last.to, Int(newest))
        XCTAssertEqual(last.latest, last.to, last.text)
        let own = try await Self.download(t.base, t.alice, t.a, after: start, limit: 2)
        XCTAssertEqual(own.latest, Int(newest), own.text)
        XCTAssertEqual(own.lines.count, 0)
    }

    func testBadUploadsWriteNothing() async throws {
        let t = try await twoClients()
        defer { t.task.cancel() }
        let (base, alice, bob, a, nodeA, b, nodeB) = (t.base, t.alice, t.bob, t.a, t.nodeA, t.b, t.nodeB)
        for (lines, token, file, status, why) in [
            (try changesets(node: nodeA, 2...3), alice, a, 400, "does not follow 0"),
            (try changesets(node: nodeB, 1...1), alice, a, 400, "not of this file's node"),
            (try changesets(node: nodeA, 1...1), bob, a, 403, "bound to another user"),
            ("{\"not\": \"a changeset\"}\n", alice, a, 400, "do not decode"),
            (String(try changesets(node: nodeA, 1...1).dropLast(20)), alice, a, 400, "do not decode"),
        ] {
            let (got, json, text) = try await upload(base, token, file, lines)
            XCTAssertEqual(got, status, text)
            XCTAssertTrue(errorMessage(json).contains(why), "\(why): \(text)")
        }
        var (status, json, text) = try await request(base, "v1/upload", method: "POST", token: alice, body: "")
        XCTAssertTrue(status == 400 && errorMessage(json).contains("client_file_id is missing"), text)
        (status, json, text) = try await request(base, "v1/download?client_file_id=\(a.uuidString)&wait=600", token: alice)
        XCTAssertTrue(status == 400 && errorMessage(json).contains("wait '600'"), text)
        _ = nodeB
        // Nothing of it reached the history: Bob downloads nothing of Alice's.
        let got = try await Self.download(base, bob, b, after: 0)
        XCTAssertFalse(got.lines.contains { $0.contains("\"client\":\(nodeA)") || $0.contains("hello") && $0.contains("\(nodeA)") }, got.text)
        let (status2, json2, _) = try await upload(base, alice, a, try changesets(node: nodeA, 1...1))
        XCTAssertEqual(status2, 200)
        XCTAssertEqual(json2?["uploaded_version"] as? Int, 1, "the file's versions start over at 1: nothing was taken")
    }

    /// Uploads of eight clients at once, one changeset a request, go into shared transactions:
    /// every one is taken once, and the history's versions stay gap-free and in each client's order.
    func testConcurrentUploadsKeepTheHistoryGapFree() async throws {
        let (base, server, task) = try await startServer()
        defer { task.cancel() }
        // Half the clients upload to a second instance: the two instances' writes collide and
        // are taken again.
        let (otherBase, _, otherTask) = try await startServer()
        defer { otherTask.cancel() }
        let token = try await server.tokens.token(for: "dora", days: 1)
        var clients: [(UUID, UInt64)] = []
        for _ in 0..<8 { clients.append(try await bind(base, token)) }
        let from = try await server.database.latestVersion()
        let perClient: UInt64 = 30
        var payloads: [(UUID, [String])] = []
        for (file, node) in clients {
            let lines = try changesets(node: node, 1...perClient).split(separator: "\n").map { String($0) + "\n" }
            payloads.append((file, lines))
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (i, (file, lines)) in payloads.enumerated() {
                let base = i % 2 == 0 ? base : otherBase
                group.addTask {
                    for line in lines {
                        let (status, _, text) = try await Self.post(base, token, "v1/upload?client_file_id=\(file.uuidString)", line)
                        XCTAssertEqual(status, 200, text)
                    }
                }
            }
            try await group.waitForAll()
        }
        let rows = try await server.database.rows(after: from, limit: 10_000)
        XCTAssertEqual(rows.count, clients.count * Int(perClient))
        XCTAssertEqual(rows.map(\.version), Array((from + 1)...(from + Int64(rows.count))), "gap-free, in commit order")
        for (file, _) in clients {
            let versions = rows.filter { $0.clientFileId == file }.map { try! ChangesetLines.decodeLine($0.line).clientVersion }
            XCTAssertEqual(versions, Array(1...perClient), "each client's changesets in its order")
        }
        // Every client wrote each note at one wall time; its state keeps the latest write (the
        // highest node's): no merge was lost when the instances' writes collided.
        let top = clients.map(\.1).max() ?? 0
        for v in [UInt64(1), perClient / 2, perClient] {
            let found = try await texts(server, "SELECT encode(state, 'base64') FROM cove_sync_objects WHERE class = 'Note' AND key = $1", [String(v)])
            let body = try XCTUnwrap(found.first?.first ?? nil)
            let state = try SyncObjectState(binary: Array(try XCTUnwrap(Data(base64Encoded: body, options: .ignoreUnknownCharacters))))
            // (Earlier runs on this database wrote these notes at the same wall time too.)
            XCTAssertGreaterThanOrEqual(state.latestClock?.node ?? 0, top, "note \(v)")
        }
    }

    private static func post(_ base: URL, _ token: String, _ path: String, _ body: String) async throws -> (Int, Data, String) {
        var r = URLRequest(url: URL(string: base.absoluteString + "/" + path)!)
        r.httpMethod = "POST"
        r.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        r.httpBody = Data(body.utf8)
        let (data, response) = try await URLSession.shared.data(for: r)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data, String(decoding: data, as: UTF8.self))
    }

    /// The history an instance keeps in memory: it covers the newest changesets up to its
    /// capacity and declines an older cursor (the database answers those) or one it has not heard of.
    func testTheHistoryFeedKeepsTheNewestChangesets() async throws {
        let t = try await twoClients()
        defer { t.task.cancel() }
        let server = t.server
        let feed = HistoryFeed(database: server.database, capacity: 3)
        try await feed.refresh()
        let start = try await server.database.latestVersion()
        _ = try await upload(t.base, t.alice, t.a, try changesets(node: t.nodeA, 1...6))
        try await feed.refresh()
        let known = start + 6
        let older = await feed.batch(for: t.b, after: start, limit: 100)
        XCTAssertNil(older, "older than what the feed keeps")
        let keptBatch = await feed.batch(for: t.b, after: known - 3, limit: 100)
        let kept = try XCTUnwrap(keptBatch)
        XCTAssertEqual(kept.lines.count, 3)
        XCTAssertTrue(kept.lines[0].contains("hello 4") && kept.lines[2].contains("hello 6"))
        XCTAssertEqual(kept.to, known)
        let ownBatch = await feed.batch(for: t.a, after: known - 3, limit: 2)
        let own = try XCTUnwrap(ownBatch)
        XCTAssertEqual(own.lines, [], "a client's own changesets are left out")
        XCTAssertEqual(own.to, known - 1)
        XCTAssertTrue(own.more)
        let atKnown = await feed.batch(for: t.b, after: known, limit: 100)
        XCTAssertEqual(atKnown?.lines, [])
        let newer = await feed.batch(for: t.b, after: known + 1, limit: 100)
        XCTAssertNil(newer, "newer than the feed has heard of")
        // The database answers what the feed declines, the same way.
        let fromDatabase = try await server.database.history(clientFileId: t.b, after: start, limit: 100)
        XCTAssertEqual(fromDatabase.lines.count, 6)
        XCTAssertEqual(Array(fromDatabase.lines.suffix(3)), kept.lines)
    }

    /// A download waiting for a commit returns soon after another client's upload, not at the end
    /// of its wait.
    func testALongPollWakesOnAnUpload() async throws {
        let t = try await twoClients()
        defer { t.task.cancel() }
        let (base, alice, bob, a, nodeA, b) = (t.base, t.alice, t.bob, t.a, t.nodeA, t.b)
        let cursor = try await Self.download(base, bob, b, after: 0).to
        let started = ContinuousClock.now
        async let waited = Self.download(base, bob, b, after: cursor, wait: 20)
        try await Task.sleep(for: .milliseconds(300))
        _ = try await upload(base, alice, a, try changesets(node: nodeA, 1...1, text: "wake"))
        let got = try await waited
        let elapsed = ContinuousClock.now - started
        XCTAssertEqual(got.lines.count, 1, got.text)
        XCTAssertTrue(got.lines.first?.contains("wake 1") ?? false)
        print("long poll woken after \(elapsed)")
        XCTAssertLessThan(elapsed, .seconds(5), "woken by the commit, not by the end of the wait")
        // Nothing comes: the wait ends with an empty batch and the same cursor.
        let quiet = try await Self.download(base, bob, b, after: got.to, wait: 1)
        XCTAssertEqual(quiet.lines.count, 0)
        XCTAssertEqual(quiet.to, got.to)
    }

    func errorMessage(_ json: [String: Any]?) -> String {
        ((json?["error"] as? [String: Any])?["message"] as? String) ?? ""
    }

    func testHealthMetricsAndBinding() async throws {
        let (base, server, task) = try await startServer()
        defer { task.cancel() }
        var (status, json, text) = try await request(base, "health")
        XCTAssertEqual(status, 200, text)
        XCTAssertEqual(json?["database"] as? String, "ok")

        let token = try await server.tokens.token(for: "alice", days: 1)
        let file = UUID()
        (status, json, text) = try await request(base, "v1/bind", method: "POST", token: token,
                                                 body: #"{"client_file_id": "\#(file.uuidString)", "schema_version": 3}"#)
        XCTAssertEqual(status, 200, text)
        XCTAssertEqual(json?["user"] as? String, "alice")
        XCTAssertEqual(json?["uploaded_version"] as? Int, 0)
        XCTAssertNotNil(json?["server_version"] as? Int)
        // Binding again is fine and keeps the file; another user may not take it.
        (status, _, text) = try await request(base, "v1/bind", method: "POST", token: token,
                                              body: #"{"client_file_id": "\#(file.uuidString)", "schema_version": 4}"#)
        XCTAssertEqual(status, 200, text)
        let bob = try await server.tokens.token(for: "bob", days: 1)
        (status, json, text) = try await request(base, "v1/bind", method: "POST", token: bob,
                                                 body: #"{"client_file_id": "\#(file.uuidString)", "schema_version": 4}"#)
        XCTAssertEqual(status, 403, text)
        XCTAssertTrue(errorMessage(json).contains("bound to another user"), text)

        (status, _, text) = try await request(base, "metrics")
        XCTAssertEqual(status, 200)
        XCTAssertTrue(text.contains("cove_sync_binds_total 2"), text)
        XCTAssertTrue(text.contains("cove_sync_refused_total 1"), text)
        XCTAssertTrue(text.contains("cove_sync_clients "), text)
    }

    /// A file's node id is derived from its id (`SyncUUID.nodeId`); a new file whose node id
    /// another file has is refused with 409, whoever binds it, and nothing is written.
    func testANodeIdTakenByAnotherFileIsAConflict() async throws {
        let (base, server, task) = try await startServer()
        defer { task.cancel() }
        let erin = try await server.tokens.token(for: "erin", days: 1)
        let frank = try await server.tokens.token(for: "frank", days: 1)
        // Two ids whose first eight bytes differ only in the top bit: one node id.
        var bytes = UUID().uuid
        bytes.0 &= 0x7F
        let first = UUID(uuid: bytes)
        bytes.0 |= 0x80
        bytes.15 ^= 0xFF
        let second = UUID(uuid: bytes)
        let node = try SyncUUID(text: first.uuidString).nodeId
        XCTAssertEqual(try SyncUUID(text: second.uuidString).nodeId, node)
        func body(_ file: UUID) -> String { #"{"client_file_id": "\#(file.uuidString)", "schema_version": 1}"# }

        var (status, json, text) = try await request(base, "v1/bind", method: "POST", token: erin, body: body(first))
        XCTAssertEqual(status, 200, text)
        XCTAssertEqual((json?["node_id"] as? Int).map { UInt64($0) }, node, text)
        let before = try await server.database.clientCount()
        for token in [erin, frank] {
            (status, json, text) = try await request(base, "v1/bind", method: "POST", token: token, body: body(second))
            XCTAssertEqual(status, 409, text)
            XCTAssertEqual((json?["error"] as? [String: Any])?["code"] as? String, "conflict", text)
            XCTAssertEqual(errorMessage(json), "client file \(second): its node id \(node) is taken by another file; the client must take a new file id")
        }
        let after = try await server.database.clientCount()
        XCTAssertEqual(after, before, "nothing written")
        let owner = try await server.database.owner(of: second)
        XCTAssertNil(owner)
        // The first file binds again as before, and its changesets, of its node, are taken.
        (status, json, text) = try await request(base, "v1/bind", method: "POST", token: erin, body: body(first))
        XCTAssertEqual(status, 200, text)
        XCTAssertEqual((json?["node_id"] as? Int).map { UInt64($0) }, node, text)
        (status, json, text) = try await upload(base, erin, first, try changesets(node: node, 1...2))
        XCTAssertEqual(status, 200, text)
        XCTAssertEqual(json?["accepted"] as? Int, 2, text)
    }

    func testBindsOfOneNewFileAtOnceAllSucceed() async throws {
        let (base, server, task) = try await startServer()
        defer { task.cancel() }
        let token = try await server.tokens.token(for: "gail", days: 1)
        for _ in 0..<5 {
            // A new file's session binds from two threads at once, or a client retries.
            let file = UUID()
            let body = #"{"client_file_id": "\#(file.uuidString)", "schema_version": 1}"#
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<8 { group.addTask { try await Self.post(base, token, "v1/bind", body).0 } }
                var all: [Int] = []
                for try await status in group { all.append(status) }
                return all
            }
            XCTAssertEqual(statuses, Array(repeating: 200, count: 8))
        }
    }

    func testBadTokensAndBodiesAreRefusedByName() async throws {
        let (base, server, task) = try await startServer()
        defer { task.cancel() }
        let body = #"{"client_file_id": "\#(UUID().uuidString)", "schema_version": 1}"#
        var (status, json, text) = try await request(base, "v1/bind", method: "POST", body: body)
        XCTAssertEqual(status, 401, text)
        XCTAssertTrue(errorMessage(json).contains("no Authorization header"), text)
        let forged = try await TokenAuthority(secret: String(repeating: "x", count: 40)).token(for: "alice", days: 1)
        (status, json, text) = try await request(base, "v1/bind", method: "POST", token: forged, body: body)
        XCTAssertEqual(status, 401, text)
        XCTAssertTrue(errorMessage(json).contains("not one this server signed"), text)
        let expired = try await server.tokens.token(for: "alice", days: 1, now: Date(timeIntervalSinceNow: -3 * 86_400))
        (status, json, text) = try await request(base, "v1/bind", method: "POST", token: expired, body: body)
        XCTAssertEqual(status, 401, text)
        XCTAssertTrue(errorMessage(json).contains("expired"), text)

        let token = try await server.tokens.token(for: "carol", days: 1)
        let before = try await server.database.clientCount()
        for (bad, why) in [("not json", "not a JSON object"), (#"{"schema_version": 1}"#, "\"client_file_id\" is missing"),
                           (#"{"client_file_id": 5, "schema_version": 1}"#, "\"client_file_id\" has the wrong type"),
                           (#"{"client_file_id": "not-a-uuid", "schema_version": 1}"#, "\"client_file_id\""),
                           (#"{"client_file_id": "\#(UUID().uuidString)", "schema_version": -1}"#, "cannot be negative")] {
            (status, json, text) = try await request(base, "v1/bind", method: "POST", token: token, body: bad)
            XCTAssertEqual(status, 400, "\(bad): \(text)")
            XCTAssertTrue(errorMessage(json).contains(why), "\(bad): \(text)")
        }
        let after = try await server.database.clientCount()
        XCTAssertEqual(after, before, "nothing written by refused requests")
    }

    func testSeveralServersMigrateAtOnce() async throws {
        let db = TestDatabase.shared
        if let error = db.error { throw XCTSkip(error) }
        let logger = Logger(label: "test")
        try await withThrowingTaskGroup(of: Void.self) { group in
            var databases: [SyncDatabase] = []
            for _ in 0..<4 {
                let d = SyncDatabase(url: try DatabaseURL(db.url), logger: logger)
                databases.append(d)
                group.addTask { await d.client.run() }
            }
            try await withThrowingTaskGroup(of: Void.self) { migrations in
                for d in databases { migrations.addTask { try await d.migrate() } }
                try await migrations.waitForAll()
            }
            group.cancelAll()
        }
    }

    func testConfigurationIsCheckedByName() throws {
        XCTAssertThrowsError(try ServerConfig(listen: "nowhere", database: "postgres://u@h/d", tokenSecret: Self.secret).validate()) {
            XCTAssertTrue("\($0)".contains("listen 'nowhere' is not host:port"), "\($0)")
        }
        XCTAssertThrowsError(try ServerConfig(database: "mysql://u@h/d", tokenSecret: Self.secret).validate()) {
            XCTAssertTrue("\($0)".contains("is not a postgres:// URL"), "\($0)")
        }
        XCTAssertThrowsError(try ServerConfig(database: "postgres://u@h/d", tokenSecret: "short").validate()) {
            XCTAssertTrue("\($0)".contains("at least 32"), "\($0)")
        }
        XCTAssertThrowsError(try ServerConfig(database: "postgres://u@h/d", tokenSecret: Self.secret, logLevel: "loud").validate()) {
            XCTAssertTrue("\($0)".contains("log_level 'loud'"), "\($0)")
        }
        let url = try DatabaseURL("postgres://sync:pw@db.example:6543/cove")
        XCTAssertEqual(url, DatabaseURL(host: "db.example", port: 6543, user: "sync", password: "pw", database: "cove"))
    }
}

/// The port the server reports once it listens.
final class PortBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Int?
    var port: Int? { lock.withLock { value } }
    func set(_ port: Int) { lock.withLock { value = port } }
}
