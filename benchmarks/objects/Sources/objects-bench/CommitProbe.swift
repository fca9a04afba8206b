// `objects-bench commits`: the durable-commit row taken apart. The same single-object commits
// as the main table (BENCH_COMMITS of them on a fresh file), for each engine with and without
// its flush, timed in segments of a tenth, so that the table shows what the flush costs, what
// the engine's own work costs, and whether either grows as the file does.
import Cove
import CSQLite
import Glibc

/// Nanoseconds of each tenth of `count` calls of `body(i)`.
private func segments(_ count: Int, _ body: (Int) throws -> Void) rethrows -> [UInt64] {
    let step = Swift.max(1, count / 10)
    var times: [UInt64] = []
    var i = 0
    while i < count {
        let end = Swift.min(count, i + step)
        let t = now()
        while i < end { try body(i); i += 1 }
        times.append(now() - t)
    }
    return times
}

private func coveCommits(_ dir: String, _ tag: String, _ durability: Realm.Durability) throws -> [UInt64] {
    let schema = try Schema(jsonText: personSchemaJSON)
    let configuration = Realm.Configuration(path: "\(dir)/\(tag).cove", durability: durability,
                                            schema: schema, schemaVersion: 1)
    let realm = try Realm(configuration: configuration)
    defer { realm.close() }
    return try segments(commits) { (i: Int) throws -> Void in
        let values: [(String, Cove.Value)] = [
            ("name", .string(names[i % names.count])), ("age", .int(Int64(i % 90))), ("score", .double(1.5)),
        ]
        try realm.write {
            try realm.dynamicCreate("Person", primaryKey: .int(Int64(i)), values: values)
        }
    }
}

private func sqliteCommits(_ dir: String, _ tag: String, synchronous: String) throws -> [UInt64] {
    let db = try SQLite("\(dir)/\(tag).db")
    try db.exec("PRAGMA synchronous=\(synchronous)")
    let insert = try db.prepare("INSERT INTO person (id, name, age, score) VALUES (?, ?, ?, ?)")
    defer { sqlite3_finalize(insert) }
    return try segments(commits) { i in
        try db.exec("BEGIN")
        try db.insert(insert, i, score: 1.5)
        try db.exec("COMMIT")
    }
}

func commitProbe() throws {
    let dir = try freshDirectory("commits")
    defer { _ = system("rm -rf '\(dir)'") }
    FileHandleErr.print("objects-bench commits: \(commits) single-object commits per engine in \(dir)")
    // BENCH_ONLY=1..4 runs one row alone (for a profiler).
    let only = envInt("BENCH_ONLY", 0)
    var runs: [(String, [UInt64])] = []
    if only == 0 || only == 1 { runs.append(("Cove, full", try coveCommits(dir, "full", Realm.Durability.full))) }
    if only == 0 || only == 2 { runs.append(("SQLite WAL, synchronous=FULL", try sqliteCommits(dir, "full", synchronous: "FULL"))) }
    if only == 0 || only == 3 { runs.append(("Cove, noSync", try coveCommits(dir, "nosync", Realm.Durability.noSync))) }
    if only == 0 || only == 4 { runs.append(("SQLite WAL, synchronous=OFF", try sqliteCommits(dir, "off", synchronous: "OFF"))) }
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
