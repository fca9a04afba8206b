// Several processes on one file: four writers and four readers keeping an invariant; a process
// that dies holding the write lock and a reader slot; and a kill -9 torture in which a writer is
// killed at random moments and at injected points inside its commits. The children are this
// test binary run again with COVE_STORAGE_CHILD naming their role (see testChildProcessEntry).
import XCTest
import Glibc
@testable import CoveStorage
import CoveStorageTesting

final class StorageMultiProcessTests: StorageTestCase {
    // MARK: Children

    /// The entry point of child processes; returns at once in a normal test run.
    func testChildProcessEntry() throws {
        guard let roleText = getenv("COVE_STORAGE_CHILD") else { return }
        // A child works on its parent's files and ends in _exit (or is killed), so tearDown never
        // runs: remove the directory setUp made for it now.
        dir.remove()
        let role = String(cString: roleText).split(separator: "|").map(String.init)
        let code: Int32
        do {
            switch role[0] {
            case "writer": code = try Self.writerChild(path: role[1], id: UInt64(role[2])!, commits: Int(role[3])!)
            case "reader": code = try Self.readerChild(path: role[1], milliseconds: UInt64(role[2])!)
            case "die-holding": code = try Self.dieHoldingChild(path: role[1])
            case "hold-then-die": code = try Self.holdThenDieChild(path: role[1], ready: role[2])
            case "torture": code = try Self.tortureChild(path: role[1], ack: role[2], seed: UInt64(role[3])!)
            default: code = 3
            }
        } catch {
            Self.childLog("child \(role[0]): \(error)")
            code = 1
        }
        _exit(code)
    }

    static let writers: UInt64 = 4

    /// Writes a line to the child's log (its standard error, redirected by the parent).
    static func childLog(_ text: String) {
        let bytes = Array((text + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }

    /// Commits `commits` times: table "t" key 0 counts every commit of every writer, key
    /// 100 + id this writer's; a reader checks key 0 is the sum of the others.
    static func writerChild(path: String, id: UInt64, commits: Int) throws -> Int32 {
        let s = try Storage.open(path: path, options: TestTables.options(id == 0 ? .full : .noSync))
        for i in 0..<commits {
            let w = try s.beginWrite()
            let total = try TestTables.get(w, catalog: w.catalog, "t", 0).map(decode) ?? 0
            let mine = try TestTables.get(w, catalog: w.catalog, "t", 100 + id).map(decode) ?? 0
            try TestTables.put(w, "t", 0, encode(total + 1))
            try TestTables.put(w, "t", 100 + id, encode(mine + 1))
            try TestTables.put(w, "t", 1000 + id * 10_000 + UInt64(i), testValue(UInt64(i), size: i % 10 == 0 ? 5000 : 50))
            if i % 3 == 0 && i > 0 { try TestTables.remove(w, "t", 1000 + id * 10_000 + UInt64(i - 1)) }
            try w.commit()
        }
        s.close()
        return 0
    }

    static func readerChild(path: String, milliseconds: UInt64) throws -> Int32 {
        let s = try Storage.open(path: path, options: TestTables.options(.noSync))
        let deadline = monotonicNow() + milliseconds * 1_000_000
        var reads = 0
        while monotonicNow() < deadline {
            let r = try s.beginRead()
            let total = try TestTables.get(r, catalog: r.catalog, "t", 0).map(decode) ?? 0
            var sum: UInt64 = 0
            for id in 0..<writers { sum += try TestTables.get(r, catalog: r.catalog, "t", 100 + id).map(decode) ?? 0 }
            if total != sum {
                childLog("reader: version \(r.version) counts \(total) commits, the writers \(sum)")
                return 2
            }
            r.end()
            reads += 1
            if reads % 200 == 0 { _ = try s.verify() }
        }
        s.close()
        return 0
    }

    /// Pins a version and takes the write lock, then dies without releasing either.
    static func dieHoldingChild(path: String) throws -> Int32 {
        let s = try Storage.open(path: path, options: TestTables.options(.noSync))
        let r = try s.beginRead()
        let w = try s.beginWrite()
        try TestTables.put(w, "t", 1, [1])
        _ = (r, w)
        kill(getpid(), SIGKILL)
        return 4
    }

    /// Takes the write lock, creates `ready`, and dies 300 ms later without releasing it.
    static func holdThenDieChild(path: String, ready: String) throws -> Int32 {
        let s = try Storage.open(path: path, options: TestTables.options(.noSync))
        let w = try s.beginWrite()
        try TestTables.put(w, "t", 1, [1])
        close(open(ready, O_CREAT | O_WRONLY, 0o644))
        var ts = timespec(tv_sec: 0, tv_nsec: 300_000_000)
        nanosleep(&ts, nil)
        _ = w
        kill(getpid(), SIGKILL)
        return 4
    }

    /// Commits forever, appending each acknowledged count to `ack`; sometimes kills itself at a
    /// chosen write inside a commit.
    static func tortureChild(path: String, ack: String, seed: UInt64) throws -> Int32 {
        var x = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        func next() -> UInt64 {
            x ^= x << 13
            x ^= x >> 7
            x ^= x << 17
            return x
        }
        var options = TestTables.options(seed % 2 == 0 ? .full : .noSync)
        if next() % 2 == 0 {
            let killAt = Int(next() % 60) + 1
            options.fileFactory = FaultInjectingFile.factory(beforeWrite: { n in
                if n == killAt { kill(getpid(), SIGKILL) }
            })
        }
        let s = try Storage.open(path: path, options: options)
        let ackFd = open(ack, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        while true {
            let w = try s.beginWrite()
            let n = try TestTables.get(w, catalog: w.catalog, "t", 0).map(decode) ?? 0
            let batch = 1 + next() % 4
            for k in n + 1...n + batch { try TestTables.put(w, "t", k, tortureValue(k)) }
            try TestTables.put(w, "t", 0, encode(n + batch))
            try w.commit()
            let line = Array("\(n + batch)\n".utf8)
            _ = line.withUnsafeBytes { write(ackFd, $0.baseAddress, $0.count) }
        }
    }

    static func tortureValue(_ k: UInt64) -> [UInt8] {
        testValue(k, size: k % 13 == 0 ? 3000 : Int(k % 64))
    }

    static func encode(_ v: UInt64) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }
    static func decode(_ b: [UInt8]) -> UInt64 { b.count == 8 ? b.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) } : 0 }

    // MARK: Spawning

    private func spawn(_ role: [String], log: String) -> pid_t {
        var exe = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &exe, exe.count - 1)
        precondition(n > 0, "readlink /proc/self/exe")
        let path = exe.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        let args = [path, "CoveStorageTests.StorageMultiProcessTests/testChildProcessEntry"]
        var env: [String] = []
        var e = environ
        while let entry = e.pointee {
            let s = String(cString: entry)
            if !s.hasPrefix("COVE_STORAGE_CHILD=") { env.append(s) }
            e += 1
        }
        env.append("COVE_STORAGE_CHILD=" + role.joined(separator: "|"))
        let cArgs = args.map { strdup($0) } + [nil]
        let cEnv = env.map { strdup($0) } + [nil]
        defer {
            for p in cArgs { free(p) }
            for p in cEnv { free(p) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var pid = pid_t()
        let rc = posix_spawn(&pid, path, &actions, nil, cArgs, cEnv)
        precondition(rc == 0, "posix_spawn: \(rc)")
        return pid
    }

    /// Waits for `pid`; returns its exit code, or 128 + the signal that ended it.
    private func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if status & 0x7F == 0 { return (status >> 8) & 0xFF }
        return 128 + (status & 0x7F)
    }

    private func readText(_ path: String) -> String {
        guard let f = fopen(path, "r") else { return "" }
        defer { fclose(f) }
        var out = [UInt8]()
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&buf, 1, buf.count, f)
            if n <= 0 { break }
            out.append(contentsOf: buf[0..<n])
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: Tests

    func testFourWritersFourReadersInSeparateProcesses() throws {
        let path = dir.file("db")
        try Storage.open(path: path, options: TestTables.options()).close()
        let commits = 40
        var children: [(pid_t, String)] = []
        for id in 0..<Self.writers {
            let log = dir.file("writer\(id).log")
            children.append((spawn(["writer", path, "\(id)", "\(commits)"], log: log), log))
        }
        for id in 0..<4 {
            let log = dir.file("reader\(id).log")
            children.append((spawn(["reader", path, "2000"], log: log), log))
        }
        for (pid, log) in children {
            let code = wait(pid)
            XCTAssertEqual(code, 0, "child \(pid): \(readText(log).split(separator: "\n").filter { $0.contains("child") || $0.contains("reader") }.joined(separator: "\n"))")
        }
        let s = try Storage.open(path: path, options: TestTables.options())
        defer { s.close() }
        let r = try s.beginRead()
        XCTAssertEqual(try TestTables.get(r, catalog: r.catalog, "t", 0).map(Self.decode), UInt64(commits) * Self.writers)
        for id in 0..<Self.writers {
            XCTAssertEqual(try TestTables.get(r, catalog: r.catalog, "t", 100 + id).map(Self.decode), UInt64(commits))
        }
        r.end()
        _ = try s.verify()
    }

    /// A handle on `path` with key 0 of table "t" committed.
    private func openWithOneCommit(_ path: String, writeTimeoutMs: Int64) throws -> Storage {
        var o = TestTables.options(.noSync)
        o.writeTimeoutMs = writeTimeoutMs
        let s = try Storage.open(path: path, options: o)
        let w = try s.beginWrite()
        try TestTables.put(w, "t", 0, [0])
        try w.commit()
        return s
    }

    func testProcessDyingWithTheWriteLockAndAPinDoesNotStopOthers() throws {
        let path = dir.file("db")
        let s = try openWithOneCommit(path, writeTimeoutMs: 5000)
        defer { s.close() }
        let pid = spawn(["die-holding", path], log: dir.file("die.log"))
        XCTAssertEqual(wait(pid), 128 + SIGKILL)
        // A new handle claims the dead writer's handle byte (the lowest free one) and takes the
        // lock at once: the word naming that byte is stale.
        var now = TestTables.options(.noSync)
        now.writeTimeoutMs = 0
        let other = try Storage.open(path: path, options: now)
        let first = try other.beginWrite()
        try TestTables.put(first, "t", 3, [3])
        try first.commit()
        other.close()
        // Its write lock went with it, and its pin is reaped.
        let w = try s.beginWrite()
        try TestTables.put(w, "t", 2, [2])
        try w.commit()
        XCTAssertEqual(s.activeVersionCount(), 1, "the dead process's pin was reaped")
        let r = try s.beginRead()
        XCTAssertNil(try TestTables.get(r, catalog: r.catalog, "t", 1), "the dead writer's change is gone")
        r.end()
        _ = try s.verify()
    }

    /// A writer already waiting when the holder dies notices within its next look at the
    /// holder's handle byte (every 10 ms), and one that gives up while the holder lives says so.
    func testAWaitingWriterTakesTheLockWhenItsHolderDies() throws {
        let path = dir.file("db")
        let s = try openWithOneCommit(path, writeTimeoutMs: 20_000)
        defer { s.close() }
        let ready = dir.file("ready")
        let pid = spawn(["hold-then-die", path, ready], log: dir.file("hold.log"))
        let started = monotonicNow()
        while access(ready, F_OK) != 0 {
            XCTAssertLessThan(monotonicNow() - started, 20_000_000_000, "the child never took the lock")
            var ts = timespec(tv_sec: 0, tv_nsec: 1_000_000)
            nanosleep(&ts, nil)
        }
        var quick = TestTables.options(.noSync)
        quick.writeTimeoutMs = 20
        let other = try Storage.open(path: path, options: quick)
        assertStorageError({ () throws(StorageError) in _ = try other.beginWrite() }) {
            if case .locked(let message) = $0 { return message.contains("held by pid \(pid)") } else { return false }
        }
        other.close()
        let before = monotonicNow()
        let w = try s.beginWrite()
        let waited = monotonicNow() - before
        XCTAssertEqual(wait(pid), 128 + SIGKILL)
        XCTAssertGreaterThan(waited, 50_000_000, "the writer did not wait for the holder")
        XCTAssertLessThan(waited, 5_000_000_000, "the writer did not notice the holder's death")
        try TestTables.put(w, "t", 2, [2])
        try w.commit()
        let r = try s.beginRead()
        XCTAssertNil(try TestTables.get(r, catalog: r.catalog, "t", 1), "the dead writer's change is gone")
        XCTAssertEqual(try TestTables.get(r, catalog: r.catalog, "t", 2), [2])
        r.end()
        _ = try s.verify()
    }

    func testKillNineTorture() throws {
        let path = dir.file("db")
        let ack = dir.file("ack")
        let log = dir.file("torture.log")
        let start = monotonicNow()
        var kills = 0
        var lastCount: UInt64 = 0
        var rng = SystemRandomNumberGenerator()
        let base = UInt64.random(in: 0...UInt64.max >> 1, using: &rng)
        while kills < 200 && monotonicNow() - start < 20_000_000_000 {
            unlink(ack)
            let pid = spawn(["torture", path, ack, "\(base &+ UInt64(kills))"], log: log)
            var ts = timespec(tv_sec: 0, tv_nsec: Int.random(in: 2_000_000...40_000_000))
            nanosleep(&ts, nil)
            kill(pid, SIGKILL)
            let code = wait(pid)
            if code != 128 + SIGKILL {
                XCTFail("torture child exited with \(code): \(readText(log).suffix(2000))")
                break
            }
            kills += 1
            let acked = readText(ack).split(separator: "\n").last.flatMap { UInt64($0) } ?? 0
            do {
                let s = try Storage.open(path: path, options: TestTables.options(.full))
                defer { s.close() }
                _ = try s.verify()
                let r = try s.beginRead()
                defer { r.end() }
                let n = try TestTables.get(r, catalog: r.catalog, "t", 0).map(Self.decode) ?? 0
                XCTAssertGreaterThanOrEqual(n, max(acked, lastCount), "kill \(kills): an acknowledged commit was lost")
                let rows = try TestTables.contents(r, catalog: r.catalog, "t")
                XCTAssertEqual(UInt64(rows.count), n == 0 ? 0 : n + 1, "kill \(kills)")
                for k in Swift.stride(from: max(n, 1), to: 0, by: -Int(max(1, n / 16))) where n > 0 {
                    XCTAssertEqual(rows[k], Self.tortureValue(k), "kill \(kills): key \(k)")
                }
                lastCount = n
            } catch {
                XCTFail("kill \(kills): reopen after kill -9: \(error)")
                break
            }
        }
        print("kill -9 torture: \(kills) kills in \((monotonicNow() - start) / 1_000_000) ms, \(lastCount) rows committed")
        XCTAssertGreaterThanOrEqual(kills, 100)
        XCTAssertGreaterThan(lastCount, 0)
    }
}
