// Clients of one cove-sync-server on loopback, for three measurements (run.sh starts the server and
// its PostgreSQL and passes SYNC_URL, SYNC_TOKEN and SYNC_SERVER_PID):
//   uploads     BENCH_WRITERS clients (8), then four times as many, each upload BENCH_UPLOADS
//               changesets (500) one a request, one request at a time; then the first clients ten
//               changesets a request: changesets integrated per second;
//   latency     BENCH_LISTENERS clients (200) long-poll while one client uploads BENCH_ROUNDS
//               changesets (100), one every 50 ms: from the upload's start to each listener's
//               receipt, median and 99th percentile;
//   idle        BENCH_IDLE clients (1000) long-poll an idle server: errors, and the server's memory
//               (VmRSS) before and while they wait, per client.
// It prints one Markdown table on stdout.
import AsyncHTTPClient
import CoveSyncCore
import Foundation
import NIOCore
import NIOHTTP1

let environment = ProcessInfo.processInfo.environment
func setting(_ name: String, _ fallback: Int) -> Int { environment[name].flatMap(Int.init) ?? fallback }

let base = environment["SYNC_URL"] ?? ""
let token = environment["SYNC_TOKEN"] ?? ""
if base.isEmpty || token.isEmpty {
    FileHandle.standardError.write(Data("sync-bench: SYNC_URL and SYNC_TOKEN must be set (benchmarks/sync/run.sh sets them)\n".utf8))
    exit(64)
}
let serverPid = environment["SYNC_SERVER_PID"].flatMap(Int32.init)

var configuration = HTTPClient.Configuration()
configuration.connectionPool = .init(idleTimeout: .seconds(120), concurrentHTTP1ConnectionsPerHostSoftLimit: 4000)
configuration.timeout = .init(connect: .seconds(10), read: .seconds(120))
let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)

struct BenchError: Error, CustomStringConvertible {
    let description: String
}

/// Sends a request; the status and the body as text.
func send(_ method: HTTPMethod, _ path: String, body: String? = nil) async throws -> (UInt, String) {
    var request = HTTPClientRequest(url: base + path)
    request.method = method
    request.headers.add(name: "Authorization", value: "Bearer \(token)")
    if let body { request.body = .bytes(ByteBuffer(string: body)) }
    let response = try await http.execute(request, timeout: .seconds(120))
    let bytes = try await response.body.collect(upTo: 64 << 20)
    return (response.status.code, String(buffer: bytes))
}

/// A client file: bound, with its node's clock and its version count.
final class Client: @unchecked Sendable {
    let file = UUID()
    var node: UInt64 = 0
    var version: UInt64 = 0
    var cursor = 0
    var source: SyncClockSource!

    func bind() async throws {
        let (status, text) = try await send(.POST, "/v1/bind", body: #"{"client_file_id": "\#(file.uuidString)", "schema_version": 1}"#)
        guard status == 200, let json = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
              let node = json["node_id"] as? Int, let version = json["server_version"] as? Int else {
            throw BenchError(description: "bind: \(status) \(text)")
        }
        self.node = UInt64(node)
        cursor = version
        source = SyncClockSource(node: self.node)
    }

    /// `count` changesets, each setting one property of one object to `text`.
    func changesets(_ count: Int, text: String) throws -> String {
        var lines = ""
        for _ in 0..<count {
            version += 1
            let wall = SyncClockSource.systemWall()
            var builder = ChangesetBuilder(clock: source, version: version)
            try builder.append(try SyncObjectRef(className: "Note", key: .int(Int64(version))), .setProperty("text", .string(text)), wall: wall)
            lines += ChangesetLines.encode(try builder.finish(wall: wall)) + "\n"
        }
        return lines
    }

    func upload(_ lines: String) async throws {
        let (status, text) = try await send(.POST, "/v1/upload?client_file_id=\(file.uuidString)", body: lines)
        guard status == 200 else { throw BenchError(description: "upload: \(status) \(text)") }
    }

    /// One long poll; the changeset lines it brought.
    func poll(wait: Int) async throws -> [Substring] {
        let (status, text) = try await send(.GET, "/v1/download?client_file_id=\(file.uuidString)&after=\(cursor)&wait=\(wait)")
        guard status == 200, let newline = text.firstIndex(of: "\n"),
              let head = try JSONSerialization.jsonObject(with: Data(text[..<newline].utf8)) as? [String: Any],
              let to = head["to"] as? Int else {
            throw BenchError(description: "download: \(status) \(text.prefix(300))")
        }
        cursor = to
        return text[text.index(after: newline)...].split(separator: "\n")
    }
}

func bound(_ count: Int) async throws -> [Client] {
    try await withThrowingTaskGroup(of: Client.self) { group in
        for _ in 0..<count { group.addTask { let c = Client(); try await c.bind(); return c } }
        var out: [Client] = []
        for try await c in group { out.append(c) }
        return out
    }
}

func residentKiB(_ pid: Int32?) -> Int? {
    guard let pid, let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return line.split(separator: " ").compactMap { Int($0) }.first
    }
    return nil
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.down)))]
}

func ms(_ d: Duration) -> Double { Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15 }

var rows: [(String, String)] = []
let benchStart = ContinuousClock.now
func progress(_ what: String) {
    FileHandle.standardError.write(Data(String(format: "sync-bench: %.1f s: %@\n", ms(ContinuousClock.now - benchStart) / 1000, what).utf8))
}

// Uploads: one changeset a request from BENCH_WRITERS and from four times as many clients, then
// ten a request.
let perWriter = setting("BENCH_UPLOADS", 500)
let fewWriters = try await bound(setting("BENCH_WRITERS", 8))
let manyWriters = try await bound(4 * setting("BENCH_WRITERS", 8))
for (writers, batch) in [(fewWriters, 1), (manyWriters, 1), (fewWriters, 10)] {
    let start = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for w in writers {
            group.addTask {
                for _ in 0..<(perWriter / batch) { try await w.upload(try w.changesets(batch, text: "x")) }
            }
        }
        try await group.waitForAll()
    }
    let seconds = ms(ContinuousClock.now - start) / 1000
    let total = writers.count * (perWriter / batch) * batch
    rows.append(("uploads, \(writers.count) clients, \(batch) changeset\(batch == 1 ? "" : "s") a request", String(format: "%.0f changesets/s (%d in %.2f s)", Double(total) / seconds, total, seconds)))
}

progress("uploads done")
// Latency with many clients connected.
let listeners = try await bound(setting("BENCH_LISTENERS", 200))
let rounds = setting("BENCH_ROUNDS", 100)
let writer = try await bound(1)[0]
for l in listeners { _ = try await l.poll(wait: 0) }
let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
    for l in listeners {
        group.addTask {
            var seen: [Double] = []
            var received = 0
            while received < rounds {
                for line in try await l.poll(wait: 30) {
                    received += 1
                    // The upload's start, in milliseconds of the wall clock, is the value written.
                    if let r = line.range(of: #""value":""#),
                       let sent = Double(line[r.upperBound...].prefix { $0.isNumber || $0 == "." }) {
                        seen.append(Date().timeIntervalSince1970 * 1000 - sent)
                    }
                }
            }
            return seen
        }
    }
    group.addTask {
        try await Task.sleep(for: .milliseconds(500))
        for _ in 0..<rounds {
            let sent = Date().timeIntervalSince1970 * 1000
            try await writer.upload(try writer.changesets(1, text: String(format: "%.3f", sent)))
            try await Task.sleep(for: .milliseconds(50))
        }
        return []
    }
    var all: [Double] = []
    for try await part in group { all += part }
    return all.sorted()
}
rows.append(("write seen by another client, \(listeners.count) clients long-polling (\(latencies.count) receipts)",
             String(format: "p50 %.1f ms, p99 %.1f ms, max %.1f ms", percentile(latencies, 0.5), percentile(latencies, 0.99), latencies.last ?? .nan)))

progress("latency done")
// Idle clients.
let idleCount = setting("BENCH_IDLE", 1000)
let idle = try await bound(idleCount)
let before = residentKiB(serverPid)
let outcome = try await withThrowingTaskGroup(of: Bool.self) { group -> (Int, Int?) in
    for c in idle { group.addTask { (try? await c.poll(wait: 8)) != nil } }
    try await Task.sleep(for: .seconds(4))
    let during = residentKiB(serverPid)
    var ok = 0
    for try await success in group where success { ok += 1 }
    return (ok, during)
}
var idleText = "\(outcome.0) of \(idleCount) long polls answered without error"
if let before, let during = outcome.1 {
    idleText += String(format: "; server RSS %.1f MiB idle, %.1f MiB while they wait: %.1f KiB a client",
                       Double(before) / 1024, Double(during) / 1024, Double(during - before) / Double(idleCount))
}
rows.append(("\(idleCount) idle clients long-polling one instance", idleText))

progress("idle done")
try await http.shutdown()
progress("client shut down")
print("| sync, one server and one PostgreSQL on loopback | result |\n|---|---|")
for (what, result) in rows { print("| \(what) | \(result) |") }
