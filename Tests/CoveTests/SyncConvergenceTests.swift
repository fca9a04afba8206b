// Several files syncing through a running server (the test command starts one: COVE_SYNC_TEST_URL,
// COVE_SYNC_TEST_TOKEN) with random writes of every kind on a few shared objects, some of them
// offline (paused) for a while: once all have uploaded and downloaded, every file shows the same
// objects, and every object one file created and nobody deleted is in all of them. A loopback
// proxy between some of the files and the server drops, delays and cuts connections.
import FoundationEssentials
import Glibc
import Synchronization
import XCTest
@testable import Cove
@testable import CoveCore

final class SyncConvergenceTests: CoveTestCase {
    static let schemaJSON = """
    {"Item": {"primaryKey": "id", "properties": {"id": "string", "n": "int", "s": "string?",
              "next": "Item?", "tags": "string[]", "marks": "int<>", "scores": "int{}"}}}
    """

    private func server() throws -> (url: String, token: String) {
        let s = try SyncTestServer.fromEnvironment()
        return (s.url, s.token)
    }

    private func open(_ name: String, _ url: String, _ token: String) throws -> Realm {
        let sync = SyncConfiguration(url: url, token: token, requestTimeout: 5, longPollSeconds: 5)
        return try Realm(configuration: Realm.Configuration(path: "\(folder)/\(name)", durability: .noSync,
                                                            schema: try Schema(jsonText: Self.schemaJSON),
                                                            schemaVersion: 1, syncConfiguration: sync))
    }

    /// The objects of this run a file shows, one line each, sorted.
    private func picture(_ realm: Realm, _ run: String) throws -> String {
        try realm.refresh()
        var lines: [String] = []
        for o in try realm.dynamicObjects("Item") {
            guard case .string(let id) = try o["id"], id.hasPrefix(run) else { continue }
            let next = try o.linkedObject("next").map { "\(try $0["id"])" } ?? "-"
            let tags = try o.dynamicList("tags").values().map { "\($0)" }.joined(separator: ",")
            let marks = try o.dynamicMutableSet("marks").values().map { "\($0)" }.sorted().joined(separator: ",")
            let scores = try o.dynamicMap("scores").entries().map { "\($0.key):\($0.value)" }.sorted().joined(separator: ",")
            lines.append("\(id) n=\(try o["n"]) s=\(try o["s"]) next=\(next) tags=[\(tags)] marks=<\(marks)> scores={\(scores)}")
        }
        return lines.sorted().joined(separator: "\n")
    }

    /// One random write on one of the shared objects.
    private func randomWrite(_ realm: Realm, _ run: String, _ rng: inout SeededRandom, _ client: Int, _ step: Int) throws {
        let id = "\(run)-\(rng.below(8))"
        let existing = try realm.dynamicObject(ofType: "Item", forPrimaryKey: .string(id))
        guard let o = existing else {
            try realm.dynamicCreate("Item", primaryKey: .string(id), values: [("n", .int(Int64(step))), ("s", .string("c\(client)"))])
            return
        }
        switch rng.below(10) {
        case 0: try o.setValue(.int(Int64(rng.below(1000))), forKey: "n")
        case 1: try o.setValue(rng.below(3) == 0 ? .null : .string("c\(client)s\(step)"), forKey: "s")
        case 2:
            let target = try realm.dynamicObject(ofType: "Item", forPrimaryKey: .string("\(run)-\(rng.below(8))"))
            try o.setValue(target.map { .link($0.link) } ?? .null, forKey: "next")
        case 3, 4:
            let tags = try o.dynamicList("tags")
            try tags.insert(.string("c\(client)t\(step)"), at: rng.below(try tags.count + 1))
        case 5:
            let tags = try o.dynamicList("tags")
            if try tags.count > 0 { try tags.remove(at: rng.below(try tags.count)) }
        case 6:
            let tags = try o.dynamicList("tags")
            if try tags.count > 1 { try tags.move(from: rng.below(try tags.count), to: rng.below(try tags.count)) }
        case 7:
            let marks = try o.dynamicMutableSet("marks")
            if rng.below(2) == 0 { _ = try marks.insert(.int(Int64(rng.below(5)))) } else { _ = try marks.remove(.int(Int64(rng.below(5)))) }
        case 8:
            let scores = try o.dynamicMap("scores")
            if rng.below(3) == 0 { _ = try scores.removeValue(forKey: "k\(rng.below(3))") } else {
                try scores.setValue(.int(Int64(step)), forKey: "k\(rng.below(3))")
            }
        default:
            try realm.delete(o)
        }
    }

    /// Everyone uploads, then everyone downloads.
    private func settle(_ realms: [Realm]) throws {
        for r in realms {
            do { try r.syncSession!.wait(for: .upload, timeout: 60) } catch {
                let sessions = realms.map { q in "\(q.syncSession!.state) \(q.syncSession!.progress) \(q.syncSession!.lastError.map { $0.message } ?? "")" }
                XCTFail("sessions: \(sessions)")
                throw error
            }
        }
        for r in realms { try r.syncSession!.wait(for: .download, timeout: 60) }
    }

    private func converge(clients: Int, rounds: Int, seed: UInt64, through proxy: LoopbackProxy? = nil) throws {
        let (url, token) = try server()
        let run = "r\(UInt32.random(in: 0...UInt32.max))"
        var realms: [Realm] = []
        for i in 0..<clients {
            // Every other file reaches the server through the proxy, when there is one.
            let via = proxy.map { i % 2 == 1 ? "http://127.0.0.1:\($0.port)" : url } ?? url
            realms.append(try open("c\(i).cove", via, token))
        }
        defer { for r in realms { r.close() } }
        // COVE_SYNC_TEST_SEED replays or varies a run.
        let seed = ProcessInfo.processInfo.environment["COVE_SYNC_TEST_SEED"].flatMap { UInt64($0) } ?? seed
        var rng = SeededRandom(seed: seed)
        var kept: [String] = []
        for round in 0..<rounds {
            // Some files go offline for the round.
            let offline = Set((0..<clients).filter { _ in rng.below(3) == 0 })
            for (i, r) in realms.enumerated() {
                if offline.contains(i) { r.syncSession!.pause() } else { r.syncSession!.resume() }
            }
            for (i, r) in realms.enumerated() {
                try r.write {
                    for step in 0..<(1 + rng.below(3)) { try randomWrite(r, run, &rng, i, round * 10 + step) }
                    if rng.below(4) == 0 {
                        // An object of its own that nobody deletes: it must reach everyone.
                        let id = "\(run)-own-\(i)-\(round)"
                        try r.dynamicCreate("Item", primaryKey: .string(id), values: [("n", .int(Int64(i)))])
                        kept.append(id)
                    }
                }
            }
            usleep(UInt32(rng.below(20_000)))
        }
        for r in realms { r.syncSession!.resume() }
        try settle(realms)
        let first = try picture(realms[0], run)
        for (i, r) in realms.enumerated().dropFirst() {
            XCTAssertEqual(try picture(r, run), first, "file \(i) differs from file 0 (seed \(seed))")
        }
        for id in kept { XCTAssertTrue(first.contains("\(id) "), "\(id) was lost") }
        XCTAssertFalse(first.isEmpty)
    }

    func testSixFilesWithOfflinePeriodsConverge() throws {
        try converge(clients: 6, rounds: 12, seed: 0xC0FE)
    }

    func testFilesBehindAProxyThatDropsDelaysAndCutsConverge() throws {
        let (url, _) = try server()
        let proxy = try LoopbackProxy(target: url)
        defer { proxy.stop() }
        try converge(clients: 4, rounds: 10, seed: 0xBADC0DE, through: proxy)
        XCTAssertGreaterThan(proxy.faults.load(ordering: .relaxed), 0)
    }
}

/// A TCP proxy on a loopback port in front of an `http://host:port` server that hurts some of
/// the connections through it: some are refused (closed at once), some have each of their
/// chunks delayed, some are cut after a while in the middle of whatever they carry.
final class LoopbackProxy: @unchecked Sendable {
    let port: UInt16
    let faults = Atomic<Int>(0)
    private let listener: Int32
    private let targetPort: UInt16
    private let stopping = Atomic<Bool>(false)
    private let connections = Atomic<Int>(0)

    init(target: String) throws {
        guard let colon = target.lastIndex(of: ":"), let p = UInt16(target[target.index(after: colon)...]) else {
            throw CoveError(.invalidArgument, "proxy target \(target)")
        }
        targetPort = p
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 128) == 0 else { throw CoveError(.io, "proxy: cannot listen") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        Self.spawn { [self] in acceptLoop() }
    }

    func stop() {
        stopping.store(true, ordering: .relaxed)
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private static func spawn(_ body: @escaping @Sendable () -> Void) {
        final class Box { let body: @Sendable () -> Void; init(_ b: @escaping @Sendable () -> Void) { body = b } }
        var t = pthread_t()
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        pthread_create(&t, nil, { arg in
            Unmanaged<Box>.fromOpaque(arg!).takeRetainedValue().body()
            return nil
        }, box)
        pthread_detach(t)
    }

    private func acceptLoop() {
        while !stopping.load(ordering: .relaxed) {
            let client = accept(listener, nil, nil)
            if client < 0 { if stopping.load(ordering: .relaxed) { return }; continue }
            let n = connections.add(1, ordering: .relaxed).newValue
            // Every fifth connection is refused, every third of the rest is cut after 40 ms,
            // every other is slowed by a few milliseconds a chunk.
            if n % 5 == 0 {
                faults.add(1, ordering: .relaxed)
                close(client)
                continue
            }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = targetPort.bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { close(client); close(server); continue }
            let cutAfter: Double? = n % 3 == 0 ? 0.04 : nil
            let delay: UInt32 = n % 2 == 0 ? 3000 : 0
            if cutAfter != nil { faults.add(1, ordering: .relaxed) }
            let pair = Pair(client, server)
            Self.spawn { [self] in pump(pair, from: pair.a, to: pair.b, delay: delay, cutAfter: cutAfter) }
            Self.spawn { [self] in pump(pair, from: pair.b, to: pair.a, delay: delay, cutAfter: cutAfter) }
        }
    }

    final class Pair: @unchecked Sendable {
        let a: Int32, b: Int32
        private let closed = Atomic<Int>(0)
        init(_ a: Int32, _ b: Int32) { self.a = a; self.b = b }
        func end() {
            shutdown(a, Int32(SHUT_RDWR))
            shutdown(b, Int32(SHUT_RDWR))
            if closed.add(1, ordering: .relaxed).newValue == 2 { close(a); close(b) }
        }
    }

    private func pump(_ pair: Pair, from: Int32, to: Int32, delay: UInt32, cutAfter: Double?) {
        var buffer = [UInt8](repeating: 0, count: 16384)
        let start = SyncSession.now()
        while !stopping.load(ordering: .relaxed) {
            let n = buffer.withUnsafeMutableBytes { recv(from, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            if let cutAfter, SyncSession.now() - start > cutAfter { break }
            if delay > 0 { usleep(delay) }
            var sent = 0
            while sent < n {
                let m = buffer.withUnsafeBytes { send(to, $0.baseAddress! + sent, n - sent, Int32(MSG_NOSIGNAL)) }
                if m <= 0 { pair.end(); return }
                sent += m
            }
        }
        pair.end()
    }
}
