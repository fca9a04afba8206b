// The server against a real PostgreSQL (started by .ci/postgres.sh in a temporary folder, on a
// loopback port) over real HTTP: health and metrics, binding with good, missing, forged and
// expired tokens, malformed bodies refused with a message and nothing written, a file bound by
// one user refused to another, and tables migrated by several servers at once.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
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
    private func startServer() async throws -> (URL, SyncServer, Task<Void, any Error>) {
        let db = TestDatabase.shared
        if let error = db.error { throw XCTSkip(error) }
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let server = SyncServer(database: SyncDatabase(url: try DatabaseURL(db.url), logger: logger),
                                tokens: await TokenAuthority(secret: Self.secret), logger: logger)
        let bound = PortBox()
        let app = server.application(host: "127.0.0.1", port: 0) { port in bound.set(port) }
        let task = Task { try await app.runService(gracefulShutdownSignals: []) }
        for _ in 0..<300 where bound.port == nil { try await Task.sleep(for: .milliseconds(20)) }
        let port = try XCTUnwrap(bound.port, "the server did not start")
        return (URL(string: "http://127.0.0.1:\(port)")!, server, task)
    }

    private func request(_ base: URL, _ path: String, method: String = "GET", token: String? = nil,
                         body: String? = nil) async throws -> (Int, [String: Any]?, String) {
        var r = URLRequest(url: base.appendingPathComponent(path))
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

    private func errorMessage(_ json: [String: Any]?) -> String {
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
