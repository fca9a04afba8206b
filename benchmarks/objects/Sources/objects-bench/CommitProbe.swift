// Durable single-object commits, the engines taken in turns. Both the main table's row and
// `objects-bench commits` (the row taken apart) run them: each engine commits on its own fresh
// file, ten rounds of a tenth of BENCH_COMMITS each, every engine once a round and the one going
// first alternating, so that both see the same moments of a machine whose speed drifts over
// seconds. The probe runs Cove and SQLite with their flush (Cove .full, SQLite WAL with
// synchronous=FULL), then without (Cove .noSync, SQLite synchronous=OFF), and prints each round,
// so that the table shows what the flush costs, what the engine's own work costs, and whether
// either grows as the file does. With BENCH_COLD=1 it writes 64 MiB before each commit, which
// leaves the caches and TLBs as cold as a wait for the disk leaves them on a busy host, and times
// each commit's CPU (user and system) instead of the wall clock: the cost of the engine's
// memory and code footprint, without the disk's noise. `objects-bench commits interleaved`
// (`interleavedCommits`) takes turns commit by commit instead, each commit timed alone.
import Cove
import CSQLite
import Glibc

/// One engine's commits on its own file: `commit(i)` makes object `i` in a transaction of its own.
struct Committer {
    let label: String
    let commit: (Int) throws -> Void
    let close: () -> Void
}

func coveCommitter(_ path: String, _ label: String, _ durability: Realm.Durability) throws -> Committer {
    let schema = try Schema(jsonText: personSchemaJSON)
    let realm = try Realm(configuration: Realm.Configuration(path: path, durability: durability,
                                                             schema: schema, schemaVersion: 1))
    return Committer(label: label, commit: { i in
        let values: [(String, Cove.Value)] = [
            ("name", .string(names[i % names.count])), ("age", .int(Int64(i % 90))), ("score", .double(1.5)),
        ]
        try realm.write {
            try realm.dynamicCreate("Person", primaryKey: .int(Int64(i)), values: values)
        }
    }, close: { realm.close() })
}

func sqliteCommitter(_ path: String, _ label: String, synchronous: String) throws -> Committer {
    let db = try SQLite(path)
    try db.exec("PRAGMA synchronous=\(synchronous)")
    let insert = try db.prepare("INSERT INTO person (id, name, age, score) VALUES (?, ?, ?, ?)")
    return Committer(label: label, commit: { i in
        try db.exec("BEGIN")
        try db.insert(insert, i, score: 1.5)
        try db.exec("COMMIT")
    }, close: { sqlite3_finalize(insert) })
}

/// `count` commits of each committer in turns (see the top of this file), in `rounds` rounds
/// (ten unless said otherwise; `count` for one commit of each at a time); for each, the
/// nanoseconds of each round.
func alternatingCommits(_ committers: [Committer], count: Int, rounds: Int = 10) throws -> [[UInt64]] {
    let cold = envInt("BENCH_COLD", 0) != 0
    defer { for c in committers { c.close() } }
    return try inTurns(total: count, parties: committers.count, rounds: rounds) { c, first, n in
        if !cold { return try timed { for i in first..<(first + n) { try committers[c].commit(i) } } }
        // CPU time of the commits alone, each begun with cold caches.
        var cpu: UInt64 = 0
        for i in first..<(first + n) {
            evictCaches()
            let t = threadCPU()
            try committers[c].commit(i)
            cpu += threadCPU() - t
        }
        return cpu
    }
}

func commitProbe() throws {
    let dir = try freshDirectory("commits")
    defer { _ = system("rm -rf '\(dir)'") }
    FileHandleErr.print("objects-bench commits: \(commits) single-object commits per engine in \(dir), in turns")
    // BENCH_ONLY=1..4 runs one row alone (for a profiler).
    let only = envInt("BENCH_ONLY", 0)
    var runs: [(String, [UInt64])] = []
    func pair(_ a: () throws -> Committer, _ b: () throws -> Committer, _ first: Int) throws {
        var committers: [Committer] = []
        if only == 0 || only == first { committers.append(try a()) }
        if only == 0 || only == first + 1 { committers.append(try b()) }
        if committers.isEmpty { return }
        let times = try alternatingCommits(committers, count: commits)
        for (c, t) in zip(committers, times) { runs.append((c.label, t)) }
    }
    try pair({ try coveCommitter("\(dir)/full.cove", "Cove, full", .full) },
             { try sqliteCommitter("\(dir)/full.db", "SQLite WAL, synchronous=FULL", synchronous: "FULL") }, 1)
    try pair({ try coveCommitter("\(dir)/nosync.cove", "Cove, noSync", .noSync) },
             { try sqliteCommitter("\(dir)/off.db", "SQLite WAL, synchronous=OFF", synchronous: "OFF") }, 3)
    let step = Swift.max(1, commits / 10)
    let heads: [String] = (0..<runs[0].1.count).map { (k: Int) -> String in "\(k * step)…" }
    print("| Engine | per commit | \(heads.joined(separator: " | ")) |")
    print("|---|--:|" + String(repeating: "--:|", count: runs[0].1.count))
    for (label, times) in runs {
        let total = Double(times.reduce(0, +)) / Double(commits) / 1000
        let parts: [String] = times.map { (t: UInt64) -> String in fixed(Double(t) / Double(step) / 1000, 1) }
        let cells: String = parts.joined(separator: " | ")
        print("| \(label) | \(fixed(total, 1)) µs | \(cells) |")
    }
}

/// This thread's CPU time (user and system) in nanoseconds.
func threadCPU() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

nonisolated(unsafe) private let evictionBuffer = UnsafeMutableRawPointer.allocate(byteCount: 64 << 20, alignment: 4096)
nonisolated(unsafe) private var evictionRound: UInt8 = 0
/// Writes 64 MiB, evicting the caches and TLBs a commit's work would find warm.
func evictCaches() {
    evictionRound &+= 1
    memset(evictionBuffer, Int32(evictionRound), 64 << 20)
}

/// `objects-bench commits interleaved`: BENCH_COMMITS durable commits of each engine (Cove
/// `.full`, SQLite WAL with synchronous=FULL) taken in turns one commit at a time, the engine
/// going first alternating, each commit timed alone: the engines meet the moments of a machine
/// whose speed drifts alike, down to single commits. Prints, per engine, the median over the
/// commits after the first third (by then SQLite's WAL file has stopped growing) and over the
/// first third, and the mean of all.
func interleavedCommits() throws {
    let dir = try freshDirectory("commits")
    defer { _ = system("rm -rf '\(dir)'") }
    FileHandleErr.print("objects-bench commits interleaved: \(commits) single-object commits per engine in \(dir), one of each at a time")
    let committers = [try coveCommitter("\(dir)/full.cove", "Cove, full", .full),
                      try sqliteCommitter("\(dir)/full.db", "SQLite WAL, synchronous=FULL", synchronous: "FULL")]
    // One round per commit: each round's time is one commit's.
    let times = try alternatingCommits(committers, count: commits, rounds: commits).map { $0.map { Double($0) / 1000 } }
    func median(_ xs: ArraySlice<Double>) -> Double {
        let sorted = xs.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }
    let third = commits / 3
    print("| Engine | median, commits \(third + 1)-\(commits) | median, commits 1-\(third) | mean, all |")
    print("|---|--:|--:|--:|")
    for (c, t) in zip(committers, times) {
        let mean = t.reduce(0, +) / Double(max(t.count, 1))
        print("| \(c.label) | \(fixed(median(t[third...]), 1)) µs | \(fixed(median(t[..<third]), 1)) µs | \(fixed(mean, 1)) µs |")
    }
    let late = times.map { median($0[third...]) }
    let all = times.map { $0.reduce(0, +) }
    print("| Cove/SQLite | \(ratio(late[0], late[1])) | \(ratio(median(times[0][..<third]), median(times[1][..<third]))) | \(ratio(all[0], all[1])) |")
}
