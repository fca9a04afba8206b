// Cove's object layer and SQLite's C API on the same objects, one run, one Markdown table:
// Person {id int primary key, name string, age int, score double}.
//
//   1M objects inserted in one write transaction (SQLite: one transaction, a prepared INSERT)
//   1M random primary-key lookups reading all four fields
//   1M random primary-key updates of one property in one write (SQLite: a prepared UPDATE)
//   the same two on a second file whose objects were created in shuffled id order (ids not
//   handed out by a counter: Cove's int primary-key index then holds one entry per object),
//   then 100,000 of them deleted by primary key in random order in one write
//   200,000 objects each created with its primary key, then its three other properties set
//   one by one, in one write (SQLite: the same prepared INSERT of the whole row)
//   10,000 single-object durable commits (SQLite: WAL, synchronous=FULL), the two engines in
//   turns on fresh files (CommitProbe.swift)
//   the file size after the bulk load
//   queries, after an index on age is added: a two-predicate scan counting its matches (and a
//   plain loop over the same columns in memory, the floor), an indexed equality returning ids,
//   a sorted top-1000 by a string without index, IN with 40,000 primary-key values
//
// Every row but the durable commits runs each engine's whole workload twice on fresh files, in
// the order Cove, SQLite, SQLite, Cove, and takes the mean of the two: the two engines then meet
// a machine whose speed drifts steadily alike (BENCH_PASSES=1: once each, Cove first).
//
// `objects-bench commits` takes the durable-commit row apart instead (CommitProbe.swift);
// `objects-bench load` runs only Cove's sequential load and lookups, `objects-bench load delete`
// only its shuffled load and deletes (for a profiler); `objects-bench fill` only the
// create-then-set row, Cove and SQLite in turns, three rounds.
//
// Environment: BENCH_OBJECTS (1000000), BENCH_LOOKUPS (1000000), BENCH_DELETES (100000),
// BENCH_FILLS (200000), BENCH_COMMITS (10000), BENCH_PASSES (2).
import Cove
import CSQLite
import Glibc

func fileSize(_ path: String) -> Int {
    var st = stat()
    return stat(path, &st) == 0 ? Int(st.st_size) : 0
}

let objects = envInt("BENCH_OBJECTS", 1_000_000)
let lookups = envInt("BENCH_LOOKUPS", 1_000_000)
let deletes = min(envInt("BENCH_DELETES", 100_000), objects)
let commits = envInt("BENCH_COMMITS", 10_000)
let fills = envInt("BENCH_FILLS", 200_000)
let personSchemaJSON = #"{"Person": {"primaryKey": "id", "properties": {"id": "int", "name": "string", "age": "int", "score": "double"}}}"#
let names = (0..<1000).map { "person-\($0)-" + String(repeating: "x", count: $0 % 13) }

func lookupOrder() -> [Int64] {
    var rng = SeededRandom(seed: 42)
    return (0..<lookups).map { _ in Int64(rng.next() % UInt64(objects)) }
}

struct Results {
    var insert: UInt64 = 0, lookup: UInt64 = 0, update: UInt64 = 0, commit: UInt64 = 0, size = 0
    /// Queries (after an index on age is added): a two-predicate scan counting, an indexed
    /// equality returning ids, a sorted top-1000 by name, an IN of 40,000 ids.
    var scan: UInt64 = 0, indexed: UInt64 = 0, top: UInt64 = 0, inList: UInt64 = 0
    var scanCount = 0, indexedCount = 0
    /// The load and the lookups again, ids created in shuffled order.
    var shuffledInsert: UInt64 = 0, shuffledLookup: UInt64 = 0, shuffledSize = 0
    /// Then `deletes` of those objects, in random order, in one write.
    var delete: UInt64 = 0
    /// `fills` objects created then filled property by property, in one write, on a fresh file.
    var fill: UInt64 = 0

    /// The mean of two passes' times (their counts and sizes, the same in both, from `a`).
    static func mean(_ a: Results, _ b: Results) -> Results {
        func m(_ x: UInt64, _ y: UInt64) -> UInt64 { (x + y) / 2 }
        var r = a
        r.insert = m(a.insert, b.insert)
        r.lookup = m(a.lookup, b.lookup)
        r.update = m(a.update, b.update)
        r.scan = m(a.scan, b.scan)
        r.indexed = m(a.indexed, b.indexed)
        r.top = m(a.top, b.top)
        r.inList = m(a.inList, b.inList)
        r.shuffledInsert = m(a.shuffledInsert, b.shuffledInsert)
        r.shuffledLookup = m(a.shuffledLookup, b.shuffledLookup)
        r.delete = m(a.delete, b.delete)
        r.fill = m(a.fill, b.fill)
        return r
    }
}

/// The ids 0..<objects in a fixed shuffled order.
func shuffledIds() -> [Int] {
    var rng = SeededRandom(seed: 99)
    var ids = Array(0..<objects)
    ids.shuffle(using: &rng)
    return ids
}

/// The best of `runs` timings of `body` (queries are read-only, so repeats measure the same work).
func best(_ runs: Int = 3, _ body: () throws -> Void) rethrows -> UInt64 {
    var best = UInt64.max
    for _ in 0..<runs {
        let t = now()
        try body()
        best = Swift.min(best, now() - t)
    }
    return best
}

let inIds: [Int64] = {
    var rng = SeededRandom(seed: 7)
    return (0..<40_000).map { _ in Int64(rng.next() % UInt64(objects)) }
}()

/// Creates a Person for each id in one write, through a creator (the names resolved once, as
/// SQLite's prepared statement), or with `dynamic` one `dynamicCreate` each; the nanoseconds it
/// took.
func coveInsert(_ realm: Realm, _ ids: [Int], dynamic: Bool = false) throws -> UInt64 {
    let start = now()
    try realm.write {
        if dynamic {
            for i in ids {
                try realm.dynamicCreate("Person", primaryKey: .int(Int64(i)), values: [
                    ("name", .string(names[i % names.count])), ("age", .int(Int64(i % 90))), ("score", .double(Double(i) * 0.5)),
                ])
            }
            return
        }
        let creator = try realm.dynamicCreator("Person", properties: ["id", "name", "age", "score"])
        var row: [Cove.Value] = [.null, .null, .null, .null]
        for i in ids {
            row[0] = .int(Int64(i))
            row[1] = .string(names[i % names.count])
            row[2] = .int(Int64(i % 90))
            row[3] = .double(Double(i) * 0.5)
            try creator.create(row)
        }
    }
    return now() - start
}

/// Finds each id of `lookupOrder()` by primary key and reads its four fields; the nanoseconds
/// it took.
func coveLookups(_ realm: Realm) throws -> UInt64 {
    let order = lookupOrder()
    var checksum = 0
    let start = now()
    for k in order {
        guard let p = try realm.dynamicObject(ofType: "Person", forPrimaryKey: .int(k)) else { throw BenchError(description: "missing \(k)") }
        if case .int(let id) = try p["id"], case .string(let name) = try p["name"], case .int(let age) = try p["age"], case .double(let score) = try p["score"] {
            checksum &+= Int(id) &+ name.utf8.count &+ Int(age) &+ Int(score)
        }
    }
    let elapsed = now() - start
    if checksum == 42 { print("") }
    return elapsed
}

/// Finds the Person of each of `keys` by primary key and hands it to `change`, in one write;
/// the nanoseconds it took, the commit included.
func changeEach(_ realm: Realm, _ keys: [Int64], _ change: (DynamicObject, Int64) throws -> Void) throws -> UInt64 {
    let start = now()
    try realm.write {
        for k in keys {
            guard let p = try realm.dynamicObject(ofType: "Person", forPrimaryKey: .int(k)) else { throw BenchError(description: "missing \(k)") }
            try change(p, k)
        }
    }
    return now() - start
}

/// Sets the score of each id of `lookupOrder()` to `k * 0.5 + 0.25`, which moves no object
/// across the queries' bounds.
func coveUpdates(_ realm: Realm) throws -> UInt64 {
    try changeEach(realm, lookupOrder()) { p, k in try p.setValue(.double(Double(k) * 0.5 + 0.25), forKey: "score") }
}

/// The ids the delete row removes: `deletes` distinct ids in a fixed random order.
func deleteOrder() -> [Int64] {
    var rng = SeededRandom(seed: 1234)
    var ids = (0..<objects).map { Int64($0) }
    for i in stride(from: ids.count - 1, to: 0, by: -1) { ids.swapAt(i, Int(rng.next() % UInt64(i + 1))) }
    return Array(ids.prefix(deletes))
}

/// Deletes the objects of `deleteOrder()`.
func coveDeletes(_ realm: Realm) throws -> UInt64 {
    try changeEach(realm, deleteOrder()) { p, _ in try realm.delete(p) }
}

/// Creates a Person for each of `fills` ids, each with its primary key alone and then its name,
/// age and score set one by one (`DynamicObject.setValue`, what `cove_object_set` calls), in one
/// write on a fresh file at `path`; the nanoseconds it took, the commit included.
func coveFill(_ path: String) throws -> UInt64 {
    let realm = try Realm(configuration: .init(path: path, schema: try Schema(jsonText: personSchemaJSON), schemaVersion: 1))
    defer { realm.close() }
    let start = now()
    try realm.write {
        for i in 0..<fills {
            let p = try realm.dynamicCreate("Person", primaryKey: .int(Int64(i)))
            try p.setValue(.string(names[i % names.count]), forKey: "name")
            try p.setValue(.int(Int64(i % 90)), forKey: "age")
            try p.setValue(.double(Double(i) * 0.5), forKey: "score")
        }
    }
    return now() - start
}

/// SQLite's side of the fill row: the whole row through the prepared INSERT, on a fresh file.
func sqliteFill(_ path: String) throws -> UInt64 {
    try SQLite(path).bulkInsert(Array(0..<fills))
}

// MARK: Cove

func runCove(_ dir: String) throws -> Results {
    var r = Results()
    let path = "\(dir)/people.cove"
    let schema = try Schema(jsonText: personSchemaJSON)
    do {
        let realm = try Realm(configuration: .init(path: path, schema: schema, schemaVersion: 1))
        defer { realm.close() }
        r.insert = try coveInsert(realm, Array(0..<objects))
        r.size = fileSize(path)

        r.lookup = try coveLookups(realm)
        r.update = try coveUpdates(realm)
    }
    // Queries, with an index on age added by an additive schema change.
    do {
        let indexed = try Schema(jsonText: #"{"Person": {"primaryKey": "id", "properties": {"id": "int", "name": "string", "age": "int", "score": "double"}, "indexed": ["age"]}}"#)
        let realm = try Realm(configuration: .init(path: path, schema: indexed, schemaVersion: 2))
        defer { realm.close() }
        let people = try realm.objects("Person")
        r.scan = try best { r.scanCount = try people.filter("age > 50 AND score < 250000").checkedCount() }
        r.indexed = try best { r.indexedCount = try people.filter("age == 42").objectKeys().count }
        r.top = try best(1) { _ = try people.filter("TRUEPREDICATE SORT(name ASC) LIMIT(1000)").objectKeys() }
        let args = [QueryArgument.list(inIds.map { .int($0) })]
        r.inList = try best { _ = try people.filter("id IN $0", arguments: args).checkedCount() }
    }
    // The same load and lookups with ids created in shuffled order.
    do {
        let shuffledPath = "\(dir)/shuffled.cove"
        let realm = try Realm(configuration: .init(path: shuffledPath, schema: schema, schemaVersion: 1))
        defer { realm.close() }
        let ids = shuffledIds()
        r.shuffledInsert = try coveInsert(realm, ids)
        r.shuffledSize = fileSize(shuffledPath)
        r.shuffledLookup = try coveLookups(realm)
        r.delete = try coveDeletes(realm)
    }
    r.fill = try coveFill("\(dir)/fill.cove")
    return r
}

// MARK: SQLite

final class SQLite {
    var db: OpaquePointer?

    init(_ path: String) throws {
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
            throw BenchError(description: "SQLite open \(path)")
        }
        try exec("PRAGMA journal_mode=WAL")
        try exec("PRAGMA synchronous=FULL")
        try exec("CREATE TABLE IF NOT EXISTS person (id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER NOT NULL, score REAL NOT NULL)")
    }

    deinit { sqlite3_close_v2(db) }

    func fail(_ what: String) -> BenchError {
        BenchError(description: "SQLite \(what): \(String(cString: sqlite3_errmsg(db)))")
    }

    func exec(_ sql: String) throws {
        if sqlite3_exec(db, sql, nil, nil, nil) != SQLITE_OK { throw fail(sql) }
    }

    func prepare(_ sql: String) throws -> OpaquePointer? {
        var stmt: OpaquePointer?
        if sqlite3_prepare_v2(db, sql, -1, &stmt, nil) != SQLITE_OK { throw fail("prepare \(sql)") }
        return stmt
    }

    /// The random primary-key lookups reading all four fields; returns the time they took.
    func lookups() throws -> UInt64 {
        let select = try prepare("SELECT id, name, age, score FROM person WHERE id = ?")
        defer { sqlite3_finalize(select) }
        let order = lookupOrder()
        var checksum = 0
        let t0 = now()
        for k in order {
            sqlite3_bind_int64(select, 1, k)
            guard sqlite3_step(select) == SQLITE_ROW else { throw fail("lookup \(k)") }
            let id = sqlite3_column_int64(select, 0)
            let name = String(cString: sqlite3_column_text(select, 1))
            let age = sqlite3_column_int64(select, 2)
            let score = sqlite3_column_double(select, 3)
            checksum &+= Int(id) &+ name.utf8.count &+ Int(age) &+ Int(score)
            sqlite3_reset(select)
        }
        let elapsed = now() - t0
        if checksum == 42 { print("") }
        return elapsed
    }

    /// Runs the prepared statement `sql` once for each of `keys` in one transaction, after
    /// `bind` gives it its parameters for the key; each run must change one row. The time it
    /// took, the commit included.
    func changeEach(_ sql: String, _ keys: [Int64], bind: (OpaquePointer?, Int64) -> Void) throws -> UInt64 {
        let stmt = try prepare(sql)
        defer { sqlite3_finalize(stmt) }
        let t0 = now()
        try exec("BEGIN")
        for k in keys {
            bind(stmt, k)
            guard sqlite3_step(stmt) == SQLITE_DONE, sqlite3_changes(db) == 1 else { throw fail("\(sql) for \(k)") }
            sqlite3_reset(stmt)
        }
        try exec("COMMIT")
        return now() - t0
    }

    /// The counterpart of `coveUpdates`: a prepared UPDATE by id for each id of `lookupOrder()`.
    func updates() throws -> UInt64 {
        try changeEach("UPDATE person SET score = ? WHERE id = ?", lookupOrder()) { stmt, k in
            sqlite3_bind_double(stmt, 1, Double(k) * 0.5 + 0.25)
            sqlite3_bind_int64(stmt, 2, k)
        }
    }

    /// The counterpart of `coveDeletes`: a prepared DELETE by id for each id of `deleteOrder()`.
    func deletes() throws -> UInt64 {
        try changeEach("DELETE FROM person WHERE id = ?", deleteOrder()) { stmt, k in sqlite3_bind_int64(stmt, 1, k) }
    }

    /// Inserts a person for each id in one transaction through a prepared statement; returns
    /// the time it took, the commit included.
    func bulkInsert(_ ids: [Int]) throws -> UInt64 {
        let insert = try prepare("INSERT INTO person (id, name, age, score) VALUES (?, ?, ?, ?)")
        defer { sqlite3_finalize(insert) }
        let start = now()
        try exec("BEGIN")
        for i in ids { try self.insert(insert, i, score: Double(i) * 0.5) }
        try exec("COMMIT")
        return now() - start
    }

    func insert(_ stmt: OpaquePointer?, _ i: Int, score: Double) throws {
        sqlite3_bind_int64(stmt, 1, Int64(i))
        let name = names[i % names.count]
        let rc = name.withCString { p in
            sqlite3_bind_text(stmt, 2, p, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
            sqlite3_bind_int64(stmt, 3, Int64(i % 90))
            sqlite3_bind_double(stmt, 4, score)
            return sqlite3_step(stmt)
        }
        sqlite3_reset(stmt)
        if rc != SQLITE_DONE { throw fail("insert") }
    }
}

func runSQLite(_ dir: String) throws -> Results {
    var r = Results()
    let path = "\(dir)/people.db"
    do {
        let db = try SQLite(path)
        r.insert = try db.bulkInsert(Array(0..<objects))
        try db.exec("PRAGMA wal_checkpoint(TRUNCATE)")
        r.size = fileSize(path) + fileSize(path + "-wal")

        r.lookup = try db.lookups()
        r.update = try db.updates()
        try db.exec("CREATE INDEX person_age ON person(age)")
        func count(_ sql: String) throws -> Int {
            let stmt = try db.prepare(sql)
            defer { sqlite3_finalize(stmt) }
            var n = 0
            while sqlite3_step(stmt) == SQLITE_ROW { n += 1 }
            return n
        }
        r.scan = try best {
            let stmt = try db.prepare("SELECT count(*) FROM person WHERE age > 50 AND score < 250000")
            defer { sqlite3_finalize(stmt) }
            guard sqlite3_step(stmt) == SQLITE_ROW else { throw db.fail("count") }
            r.scanCount = Int(sqlite3_column_int64(stmt, 0))
        }
        r.indexed = try best { r.indexedCount = try count("SELECT id FROM person WHERE age = 42") }
        r.top = try best(1) { _ = try count("SELECT id FROM person ORDER BY name LIMIT 1000") }
        let inSQL = "SELECT count(*) FROM person WHERE id IN (" + inIds.map(String.init).joined(separator: ",") + ")"
        r.inList = try best { _ = try count(inSQL) }
    }
    do {
        let path = "\(dir)/shuffled.db"
        let db = try SQLite(path)
        r.shuffledInsert = try db.bulkInsert(shuffledIds())
        try db.exec("PRAGMA wal_checkpoint(TRUNCATE)")
        r.shuffledSize = fileSize(path) + fileSize(path + "-wal")
        r.shuffledLookup = try db.lookups()
        r.delete = try db.deletes()
    }
    r.fill = try sqliteFill("\(dir)/fill.db")
    return r
}

// MARK: Report

func fixed(_ v: Double, _ digits: Int) -> String {
    var s = String(Int((v * pow(10, Double(digits))).rounded()))
    if digits == 0 { return s }
    while s.count <= digits { s = "0" + s }
    s.insert(".", at: s.index(s.endIndex, offsetBy: -digits))
    return s
}

// `objects-bench load [insert | insert-dynamic | delete | sqlite]`: Cove's bulk insert and lookups
// alone (with `insert`, the insert alone; `insert-dynamic` through `dynamicCreate`), ids handed
// out in order, for a profiler (perf record) without SQLite or the queries in the samples;
// `delete` the shuffled load and the delete row's deletes instead; `sqlite` SQLite's bulk insert
// alone, to alternate runs of the two loads.
func loadProbe() throws {
    let dir = try freshDirectory("objects-load")
    defer { _ = system("rm -rf '\(dir)'") }
    let mode = CommandLine.arguments.dropFirst(2).first
    if mode == "sqlite" {
        let inserted = try SQLite("\(dir)/people.db").bulkInsert(Array(0..<objects))
        print("sqlite insert \(inserted / UInt64(max(objects, 1))) ns per object")
        return
    }
    let realm = try Realm(configuration: .init(path: "\(dir)/people.cove", schema: try Schema(jsonText: personSchemaJSON), schemaVersion: 1))
    defer { realm.close() }
    if mode == "delete" {
        let inserted = try coveInsert(realm, shuffledIds())
        let deleted = try coveDeletes(realm)
        print("shuffled insert \(inserted / UInt64(max(objects, 1))) ns per object, delete \(deleted / UInt64(max(deletes, 1))) ns per delete")
        return
    }
    let inserted = try coveInsert(realm, Array(0..<objects), dynamic: mode == "insert-dynamic")
    if mode == "insert" || mode == "insert-dynamic" {
        print("insert \(inserted / UInt64(max(objects, 1))) ns per object")
        return
    }
    let looked = try coveLookups(realm)
    print("insert \(inserted / UInt64(max(objects, 1))) ns per object, lookup \(looked / UInt64(max(lookups, 1))) ns per lookup")
}

func ratio(_ a: Double, _ b: Double) -> String { b == 0 ? "–" : fixed(a / b, 2) + "×" }

if CommandLine.arguments.dropFirst().first == "commits" {
    if CommandLine.arguments.dropFirst(2).first == "interleaved" {
        try interleavedCommits()
    } else {
        try commitProbe()
    }
    exit(0)
}

// `objects-bench fill`: the create-then-set row alone, Cove and SQLite in turns, three rounds on
// fresh files, each round's time per object printed.
if CommandLine.arguments.dropFirst().first == "fill" {
    let dir = try freshDirectory("objects-fill")
    defer { _ = system("rm -rf '\(dir)'") }
    for round in 0..<3 {
        let c = try coveFill("\(dir)/fill\(round).cove")
        let s = try sqliteFill("\(dir)/fill\(round).db")
        print("round \(round): cove \(c / UInt64(max(fills, 1))) ns, sqlite \(s / UInt64(max(fills, 1))) ns per object")
    }
    exit(0)
}

if CommandLine.arguments.dropFirst().first == "load" {
    try loadProbe()
    exit(0)
}

let dir = try freshDirectory("objects")
defer { _ = system("rm -rf '\(dir)'") }

FileHandleErr.print("objects-bench: \(objects) objects, \(lookups) lookups, \(commits) durable commits in \(dir)")
var cove: Results
var sqlite: Results
if envInt("BENCH_PASSES", 2) >= 2 {
    // Cove, SQLite, SQLite, Cove: each engine's mean sits at the same moment of a drift.
    for pass in ["1", "2"] {
        guard mkdir("\(dir)/\(pass)", 0o755) == 0 else { throw BenchError(description: "cannot create \(dir)/\(pass)") }
    }
    let cove1 = try runCove("\(dir)/1")
    FileHandleErr.print("cove done (first pass)")
    let sqlite1 = try runSQLite("\(dir)/1")
    FileHandleErr.print("sqlite done (first pass)")
    let sqlite2 = try runSQLite("\(dir)/2")
    FileHandleErr.print("sqlite done (second pass)")
    let cove2 = try runCove("\(dir)/2")
    FileHandleErr.print("cove done (second pass)")
    cove = Results.mean(cove1, cove2)
    sqlite = Results.mean(sqlite1, sqlite2)
} else {
    cove = try runCove(dir)
    FileHandleErr.print("cove done")
    sqlite = try runSQLite(dir)
    FileHandleErr.print("sqlite done")
}
// Durable single-object commits on fresh files, the two engines in turns one commit at a time
// (CommitProbe.swift).
let commitTimes = try alternatingCommits([
    try coveCommitter("\(dir)/commits.cove", "Cove", .full),
    try sqliteCommitter("\(dir)/commits.db", "SQLite", synchronous: "FULL"),
], count: commits, rounds: commits)
cove.commit = commitTimes[0].reduce(0, +)
sqlite.commit = commitTimes[1].reduce(0, +)
FileHandleErr.print("commits done")

let n = Double(objects), l = Double(lookups), c = Double(commits)
print("| Workload | Cove | SQLite | Cove/SQLite |")
print("|---|--:|--:|--:|")
func row(_ label: String, _ a: Double, _ b: Double, _ unit: String, _ digits: Int) {
    print("| \(label) | \(fixed(a, digits)) \(unit) | \(fixed(b, digits)) \(unit) | \(ratio(a, b)) |")
}
row("\(objects) objects inserted in one write (per object)", Double(cove.insert) / n, Double(sqlite.insert) / n, "ns", 0)
row("\(lookups) random primary-key lookups, 4 fields (per lookup)", Double(cove.lookup) / l, Double(sqlite.lookup) / l, "ns", 0)
row("\(lookups) random primary-key updates of one property, one write (per update)", Double(cove.update) / l, Double(sqlite.update) / l, "ns", 0)
row("\(commits) single-object durable commits (per commit)", Double(cove.commit) / c / 1000, Double(sqlite.commit) / c / 1000, "µs", 1)
row("File size after the bulk load", Double(cove.size) / 1_048_576, Double(sqlite.size) / 1_048_576, "MiB", 1)
row("… ids created in shuffled order: insert (per object)", Double(cove.shuffledInsert) / n, Double(sqlite.shuffledInsert) / n, "ns", 0)
row("… ids created in shuffled order: lookup (per lookup)", Double(cove.shuffledLookup) / l, Double(sqlite.shuffledLookup) / l, "ns", 0)
row("… then \(deletes) random primary-key deletes, one write (per delete)", Double(cove.delete) / Double(max(deletes, 1)), Double(sqlite.delete) / Double(max(deletes, 1)), "ns", 0)
row("… ids created in shuffled order: file size", Double(cove.shuffledSize) / 1_048_576, Double(sqlite.shuffledSize) / 1_048_576, "MiB", 1)
row("\(fills) objects created then three properties set, one write (per object)", Double(cove.fill) / Double(max(fills, 1)), Double(sqlite.fill) / Double(max(fills, 1)), "ns", 0)
if cove.scanCount != sqlite.scanCount || cove.indexedCount != sqlite.indexedCount {
    FileHandleErr.print("MISMATCH: scan \(cove.scanCount) vs \(sqlite.scanCount), indexed \(cove.indexedCount) vs \(sqlite.indexedCount)")
}
// The floor for the scan: a plain loop over the same two columns held in arrays.
var ages = (0..<objects).map { Int64($0 % 90) }
var scores = (0..<objects).map { Double($0) * 0.5 }
var plainCount = 0
let plain = best {
    var n = 0
    for i in 0..<ages.count where ages[i] > 50 && scores[i] < 250000 { n += 1 }
    plainCount = n
}
ages.removeAll()
scores.removeAll()
row("Two-predicate scan counting \(cove.scanCount) matches (whole query)", Double(cove.scan) / 1e6, Double(sqlite.scan) / 1e6, "ms", 2)
print("| … the same as a plain loop over two in-memory arrays | \(fixed(Double(plain) / 1e6, 2)) ms | | Cove/loop \(ratio(Double(cove.scan), Double(plain))) |")
row("Indexed equality returning \(cove.indexedCount) ids", Double(cove.indexed) / 1e6, Double(sqlite.indexed) / 1e6, "ms", 2)
row("Sorted top-1000 by a string, no index", Double(cove.top) / 1e6, Double(sqlite.top) / 1e6, "ms", 1)
row("IN with 40,000 primary-key values", Double(cove.inList) / 1e6, Double(sqlite.inList) / 1e6, "ms", 2)
if plainCount < 0 { print("") }

enum FileHandleErr {
    static func print(_ s: String) {
        let line = s + "\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
    }
}
