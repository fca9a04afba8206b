// Sync through faults of the server side: a server instance killed (SIGKILL) while a file
// uploads to it and started again, and PostgreSQL restarted while files upload and download.
// Every write arrives, once, and the files converge. Needs the server the test command starts
// (COVE_SYNC_TEST_SERVER, COVE_SYNC_TEST_CONFIG, COVE_SYNC_TEST_POSTGRES and the URL and token).
import FoundationEssentials
import Glibc
import XCTest
@testable import Cove
@testable import CoveCore

final class SyncFaultTests: CoveTestCase {
    static let schemaJSON = """
    {"Note": {"primaryKey": "id", "properties": {"id": "string", "n": "int", "text": "string"}}}
    """

    private func server() throws -> SyncTestServer {
        try SyncTestServer.fromEnvironment()
    }

    private func open(_ name: String, _ url: String, _ token: String) throws -> Realm {
        let sync = SyncConfiguration(url: url, token: token, requestTimeout: 5, longPollSeconds: 2)
        return try Realm(configuration: Realm.Configuration(path: "\(folder)/\(name)", durability: .noSync,
                                                            schema: try Schema(jsonText: Self.schemaJSON),
                                                            schemaVersion: 1, syncConfiguration: sync))
    }

    /// A free loopback port.
    private func freePort() -> UInt16 {
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(s) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(s, $0, &length) } }
        return UInt16(bigEndian: address.sin_port)
    }

    /// Starts another instance of the server on `port` (same database); returns its pid.
    private func startInstance(_ s: SyncTestServer, port: UInt16) throws -> Int32 {
        let pidFile = "\(folder)/instance.pid"
        let command = "'\(s.binary)' serve --config '\(s.config)' --listen 127.0.0.1:\(port) --log-level warning >> '\(folder)/instance.log' 2>&1 < /dev/null & echo $! > '\(pidFile)'"
        XCTAssertEqual(system(command), 0)
        for _ in 0..<300 {
            if system("curl -sf http://127.0.0.1:\(port)/health > /dev/null 2>&1") == 0 {
                return Int32(FileHelper.read(pidFile)?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
            }
            usleep(100_000)
        }
        throw CoveError(.io, "the second server instance did not come up: \(FileHelper.read("\(folder)/instance.log") ?? "")")
    }

    private func notes(_ realm: Realm) throws -> [String] {
        try realm.refresh()
        return try realm.dynamicObjects("Note").compactMap { o in
            guard case .string(let id) = try o["id"], case .int(let n) = try o["n"] else { return nil }
            return "\(id) \(n)"
        }.sorted()
    }

    func testAServerKilledMidUploadAndPostgresRestartedLoseNothing() throws {
        let s = try server()
        let port = freePort()
        var pid = try startInstance(s, port: port)
        defer { if pid > 0 { kill(pid, SIGKILL) } }
        let run = "f\(UInt32.random(in: 0...UInt32.max))"
        let writer = try open("writer.cove", "http://127.0.0.1:\(port)", s.token)
        let reader = try open("reader.cove", s.url, s.token)
        defer { writer.close(); reader.close() }
        var expected: [String] = []
        func write(_ i: Int) throws {
            try writer.write {
                try writer.dynamicCreate("Note", primaryKey: .string("\(run)-\(i)"), values: [("n", .int(Int64(i))), ("text", .string("note \(i)"))])
                if i > 0, let previous = try writer.dynamicObject(ofType: "Note", forPrimaryKey: .string("\(run)-\(i - 1)")) {
                    try previous.setValue(.int(Int64(i * 1000)), forKey: "n")
                }
            }
        }
        for i in 0..<60 {
            try write(i)
            if i == 30 {
                // The instance dies in the middle of the uploads, and comes back.
                kill(pid, SIGKILL)
                var status: Int32 = 0
                waitpid(pid, &status, 0)
                usleep(200_000)
                pid = try startInstance(s, port: port)
            }
            usleep(2000)
        }
        // PostgreSQL restarts under both instances while more is written.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        for i in 60..<80 {
            try write(i)
            if i == 65 { XCTAssertEqual(system("bash '\(root)/.ci/postgres.sh' restart '\(s.postgres)' > /dev/null 2>&1"), 0) }
            usleep(2000)
        }
        for i in 0..<80 { expected.append("\(run)-\(i) \(i == 79 ? 79 : (i + 1) * 1000)") }
        do {
            try writer.syncSession!.wait(for: .upload, timeout: 60)
        } catch {
            XCTFail("the second instance's log: \(FileHelper.read("\(folder)/instance.log") ?? "none")")
            throw error
        }
        XCTAssertEqual(writer.syncSession!.progress.uploadedVersion, writer.syncSession!.progress.localVersion)
        try reader.syncSession!.wait(for: .download, timeout: 90)
        XCTAssertEqual(try notes(reader).filter { $0.hasPrefix(run) }, expected.sorted())
        XCTAssertEqual(try notes(writer).filter { $0.hasPrefix(run) }, expected.sorted())
        // One changeset a write, every one of them taken.
        XCTAssertEqual(writer.syncSession!.progress.localVersion, 80)
    }
}
