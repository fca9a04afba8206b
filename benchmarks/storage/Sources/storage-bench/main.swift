// Runs one workload against Cove's storage engine, LMDB and SQLite in turn and prints a Markdown
// table with the time per operation of each and the ratio of Cove's to each anchor's.
//
//   storage-bench                      the whole workload (1M keys, 10,000 durable commits)
//   storage-bench commits ENGINE N     only N durable single-key commits on a fresh file
//                                      (ENGINE: cove, lmdb, sqlite), for counting flushes
//   storage-bench commits all N        N for each engine on fresh files, in turns, timed
//   storage-bench inserts ENGINE ORDER  only the bulk load (ORDER: sequential, random), to profile
//   storage-bench reads ENGINE N       only N begin + end read pairs, to compare builds of the read path
//
// Environment: BENCH_KEYS, BENCH_COMMITS, BENCH_PAIRS override the sizes; BENCH_ENGINES
// ("cove,lmdb") runs only some engines; BENCH_COVE_RESERVE_MIB caps Cove's address-space
// reservation (for valgrind); BENCH_FLUSHES and
// BENCH_WRITES ("cove=1.00,lmdb=2.00,sqlite=1.00"), measured by run.sh with strace, become rows.
import CLMDB
import CoveStorage
import CSQLite
import Glibc

// MARK: Helpers

/// "cove=1.00,lmdb=2.00" -> ["cove": "1.00", ...]
func envMap(_ name: String) -> [String: String]? {
    guard let p = getenv(name) else { return nil }
    var out: [String: String] = [:]
    for part in String(cString: p).split(separator: ",") {
        let kv = part.split(separator: "=", maxSplits: 1)
        if kv.count == 2 { out[String(kv[0])] = String(kv[1]) }
    }
    return out.isEmpty ? nil : out
}

/// The 16-byte value stored under `k`.
@inline(__always)
func valueFor(_ k: UInt64) -> (UInt64, UInt64) { (k, ~k) }

/// Bytes taken by the regular files of `dir`, and removal of the directory.
func directoryBytes(_ dir: String) -> UInt64 {
    var total: UInt64 = 0
    for name in directoryEntries(dir) {
        var st = stat()
        if stat("\(dir)/\(name)", &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG { total += UInt64(st.st_size) }
    }
    return total
}

func directoryEntries(_ dir: String) -> [String] {
    guard let d = opendir(dir) else { return [] }
    defer { closedir(d) }
    var names: [String] = []
    while let e = readdir(d) {
        let name = withUnsafeBytes(of: e.pointee.d_name) { raw in
            String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
        }
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}

func removeDirectory(_ dir: String) {
    for name in directoryEntries(dir) { unlink("\(dir)/\(name)") }
    rmdir(dir)
}

// MARK: Engines

/// What every engine runs. Each call is a whole phase; the caller times it.
protocol Engine: AnyObject {
    static var name: String { get }
    init(directory: String) throws
    /// Inserts `keys` (16-byte values) in one write transaction and commits it durably.
    func bulkInsert(_ keys: [UInt64]) throws
    /// Looks up every key in one read transaction; returns a checksum of the values.
    func pointReads(_ keys: [UInt64]) throws -> UInt64
    /// Visits every entry in key order in one read transaction; returns the count.
    func scan() throws -> UInt64
    /// `count` transactions each inserting one key from `first` and committing durably.
    func durableCommits(first: UInt64, count: Int) throws
    /// Begins and ends `count` read transactions.
    func readTransactionPairs(_ count: Int) throws
    func close()
}

// MARK: Cove

/// Cove's storage engine: a UInt64-keyed BTree whose root is kept in the catalog under "kv".
final class CoveEngine: Engine {
    static let name = "Cove"
    static let treeName: [UInt8] = Array("kv".utf8)
    let storage: Storage

    init(directory: String) throws {
        var options = StorageOptions(durability: .full)
        // Valgrind cannot reserve the default 256 GiB of address space.
        if let mib = getenv("BENCH_COVE_RESERVE_MIB").flatMap({ UInt64(String(cString: $0)) }) {
            options.maxFileSize = mib << 20
        }
        storage = try Storage.open(path: "\(directory)/cove.db", options: options)
    }

    /// The root of the benchmark tree as the catalog `catalog` records it.
    func treeRoot<S: PageStore>(_ store: S, catalog: TreeRoot) throws -> TreeRoot {
        let cat = BTree(store: store, root: catalog, keyKind: .bytes)
        let found = try Self.treeName.withUnsafeBytes { key in
            try cat.withValue(key) { v throws(StorageError) in TreeRoot.decode(from: v.baseAddress!) }
        }
        return found ?? .empty
    }

    /// Records the tree's root in the catalog and commits.
    func finish(_ txn: WriteTransaction, _ tree: BTree<WriteTransaction>) throws {
        var cat = BTree(store: txn, root: txn.catalog, keyKind: .bytes)
        var encoded = [UInt8](repeating: 0, count: TreeRoot.encodedSize)
        encoded.withUnsafeMutableBytes { tree.root.encode(into: $0.baseAddress!) }
        _ = try cat.put(Self.treeName, encoded)
        txn.catalog = cat.root
        try txn.commit()
    }

    @inline(__always)
    func put(_ tree: inout BTree<WriteTransaction>, _ k: UInt64) throws {
        var v = valueFor(k)
        try withUnsafeBytes(of: &v) { raw in _ = try tree.put(k, raw) }
    }

    func bulkInsert(_ keys: [UInt64]) throws {
        let txn = try storage.beginWrite()
        var tree = BTree(store: txn, root: try treeRoot(txn, catalog: txn.catalog), keyKind: .u64)
        for k in keys { try put(&tree, k) }
        try finish(txn, tree)
    }

    func pointReads(_ keys: [UInt64]) throws -> UInt64 {
        let snap = try storage.beginRead()
        defer { snap.end() }
        let tree = BTree(store: snap, root: try treeRoot(snap, catalog: snap.catalog), keyKind: .u64)
        var sum: UInt64 = 0
        for k in keys {
            guard let v = try tree.withValue(k, { v throws(StorageError) in v.loadUnaligned(as: UInt64.self) }) else {
                throw BenchError(description: "Cove: key \(k) not found")
            }
            sum &+= v
        }
        return sum
    }

    func scan() throws -> UInt64 {
        let snap = try storage.beginRead()
        defer { snap.end() }
        let tree = BTree(store: snap, root: try treeRoot(snap, catalog: snap.catalog), keyKind: .u64)
        var count: UInt64 = 0
        var sum: UInt64 = 0
        try tree.forEach { k, v throws(StorageError) -> Bool in
            count += 1
            sum &+= k &+ v.loadUnaligned(as: UInt64.self)
            return true
        }
        if sum == 1 { print("") }
        return count
    }

    func durableCommits(first: UInt64, count: Int) throws {
        for i in 0..<count {
            let txn = try storage.beginWrite()
            var tree = BTree(store: txn, root: try treeRoot(txn, catalog: txn.catalog), keyKind: .u64)
            try put(&tree, first + UInt64(i))
            try finish(txn, tree)
        }
    }

    func readTransactionPairs(_ count: Int) throws {
        for _ in 0..<count {
            let snap = try storage.beginRead()
            snap.end()
        }
    }

    func close() { storage.close() }
}

// MARK: LMDB

func lmdbCheck(_ rc: Int32, _ what: String) throws {
    if rc != 0 { throw BenchError(description: "LMDB \(what): \(String(cString: mdb_strerror(rc)))") }
}

/// LMDB with MDB_INTEGERKEY (native-endian u64 keys), default flags otherwise (sync on commit).
final class LMDBEngine: Engine {
    static let name = "LMDB"
    var env: OpaquePointer?
    var dbi: MDB_dbi = 0

    init(directory: String) throws {
        try lmdbCheck(mdb_env_create(&env), "env_create")
        try lmdbCheck(mdb_env_set_mapsize(env, 16 << 30), "set_mapsize")
        try lmdbCheck(mdb_env_open(env, "\(directory)/lmdb.db", UInt32(MDB_NOSUBDIR), 0o644), "env_open")
        var txn: OpaquePointer?
        try lmdbCheck(mdb_txn_begin(env, nil, 0, &txn), "txn_begin")
        try lmdbCheck(mdb_dbi_open(txn, nil, UInt32(MDB_INTEGERKEY | MDB_CREATE), &dbi), "dbi_open")
        try lmdbCheck(mdb_txn_commit(txn), "txn_commit")
    }

    @inline(__always)
    func put(_ txn: OpaquePointer?, _ k: UInt64) throws {
        var kk = k
        var vv = valueFor(k)
        let rc = withUnsafeMutableBytes(of: &kk) { kb in
            withUnsafeMutableBytes(of: &vv) { vb in
                var key = MDB_val(mv_size: 8, mv_data: kb.baseAddress)
                var val = MDB_val(mv_size: 16, mv_data: vb.baseAddress)
                return mdb_put(txn, dbi, &key, &val, 0)
            }
        }
        try lmdbCheck(rc, "put")
    }

    func bulkInsert(_ keys: [UInt64]) throws {
        var txn: OpaquePointer?
        try lmdbCheck(mdb_txn_begin(env, nil, 0, &txn), "txn_begin")
        for k in keys { try put(txn, k) }
        try lmdbCheck(mdb_txn_commit(txn), "txn_commit")
    }

    func pointReads(_ keys: [UInt64]) throws -> UInt64 {
        var txn: OpaquePointer?
        try lmdbCheck(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "txn_begin")
        defer { mdb_txn_abort(txn) }
        var sum: UInt64 = 0
        for k in keys {
            var kk = k
            var val = MDB_val()
            let rc = withUnsafeMutableBytes(of: &kk) { kb in
                var key = MDB_val(mv_size: 8, mv_data: kb.baseAddress)
                return mdb_get(txn, dbi, &key, &val)
            }
            try lmdbCheck(rc, "get \(k)")
            sum &+= UnsafeRawPointer(val.mv_data!).loadUnaligned(as: UInt64.self)
        }
        return sum
    }

    func scan() throws -> UInt64 {
        var txn: OpaquePointer?
        try lmdbCheck(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "txn_begin")
        defer { mdb_txn_abort(txn) }
        var cursor: OpaquePointer?
        try lmdbCheck(mdb_cursor_open(txn, dbi, &cursor), "cursor_open")
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var val = MDB_val()
        var count: UInt64 = 0
        var sum: UInt64 = 0
        var rc = mdb_cursor_get(cursor, &key, &val, MDB_FIRST)
        while rc == 0 {
            count += 1
            sum &+= UnsafeRawPointer(key.mv_data!).loadUnaligned(as: UInt64.self)
                &+ UnsafeRawPointer(val.mv_data!).loadUnaligned(as: UInt64.self)
            rc = mdb_cursor_get(cursor, &key, &val, MDB_NEXT)
        }
        if rc != MDB_NOTFOUND { try lmdbCheck(rc, "cursor_get") }
        if sum == 1 { print("") }
        return count
    }

    func durableCommits(first: UInt64, count: Int) throws {
        for i in 0..<count {
            var txn: OpaquePointer?
            try lmdbCheck(mdb_txn_begin(env, nil, 0, &txn), "txn_begin")
            try put(txn, first + UInt64(i))
            try lmdbCheck(mdb_txn_commit(txn), "txn_commit")
        }
    }

    func readTransactionPairs(_ count: Int) throws {
        for _ in 0..<count {
            var txn: OpaquePointer?
            try lmdbCheck(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "txn_begin")
            mdb_txn_abort(txn)
        }
    }

    func close() {
        mdb_env_close(env)
        env = nil
    }
}

// MARK: SQLite

/// SQLite: WAL, synchronous=FULL, a 256 MiB page cache, prepared statements.
final class SQLiteEngine: Engine {
    static let name = "SQLite"
    var db: OpaquePointer?

    init(directory: String) throws {
        let rc = sqlite3_open_v2("\(directory)/sqlite.db", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
        if rc != SQLITE_OK { throw BenchError(description: "SQLite open: \(rc)") }
        try exec("PRAGMA journal_mode=WAL")
        try exec("PRAGMA synchronous=FULL")
        try exec("PRAGMA cache_size=-262144")
        try exec("CREATE TABLE IF NOT EXISTS kv(k INTEGER PRIMARY KEY, v BLOB)")
    }

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

    /// Runs a statement expected to return no row, and resets it.
    func run(_ stmt: OpaquePointer?) throws {
        let rc = sqlite3_step(stmt)
        sqlite3_reset(stmt)
        if rc != SQLITE_DONE && rc != SQLITE_ROW { throw fail("step") }
    }

    @inline(__always)
    func insert(_ stmt: OpaquePointer?, _ k: UInt64) throws {
        var v = valueFor(k)
        sqlite3_bind_int64(stmt, 1, Int64(bitPattern: k))
        let rc = withUnsafeBytes(of: &v) { raw -> Int32 in
            // No destructor (SQLITE_STATIC): the buffer outlives the step.
            sqlite3_bind_blob(stmt, 2, raw.baseAddress, 16, nil)
            return sqlite3_step(stmt)
        }
        sqlite3_reset(stmt)
        if rc != SQLITE_DONE { throw fail("insert \(k)") }
    }

    func bulkInsert(_ keys: [UInt64]) throws {
        let stmt = try prepare("INSERT INTO kv(k, v) VALUES(?, ?)")
        defer { sqlite3_finalize(stmt) }
        try exec("BEGIN")
        for k in keys { try insert(stmt, k) }
        try exec("COMMIT")
    }

    func pointReads(_ keys: [UInt64]) throws -> UInt64 {
        let stmt = try prepare("SELECT v FROM kv WHERE k = ?")
        defer { sqlite3_finalize(stmt) }
        try exec("BEGIN")
        var sum: UInt64 = 0
        for k in keys {
            sqlite3_bind_int64(stmt, 1, Int64(bitPattern: k))
            guard sqlite3_step(stmt) == SQLITE_ROW, let p = sqlite3_column_blob(stmt, 0) else {
                throw fail("get \(k)")
            }
            sum &+= p.loadUnaligned(as: UInt64.self)
            sqlite3_reset(stmt)
        }
        try exec("COMMIT")
        return sum
    }

    func scan() throws -> UInt64 {
        let stmt = try prepare("SELECT k, v FROM kv ORDER BY k")
        defer { sqlite3_finalize(stmt) }
        try exec("BEGIN")
        var count: UInt64 = 0
        var sum: UInt64 = 0
        var rc = sqlite3_step(stmt)
        while rc == SQLITE_ROW {
            count += 1
            sum &+= UInt64(bitPattern: sqlite3_column_int64(stmt, 0))
                &+ sqlite3_column_blob(stmt, 1)!.loadUnaligned(as: UInt64.self)
            rc = sqlite3_step(stmt)
        }
        if rc != SQLITE_DONE { throw fail("scan") }
        sqlite3_reset(stmt)
        try exec("COMMIT")
        if sum == 1 { print("") }
        return count
    }

    func durableCommits(first: UInt64, count: Int) throws {
        let stmt = try prepare("INSERT INTO kv(k, v) VALUES(?, ?)")
        defer { sqlite3_finalize(stmt) }
        // Autocommit: each INSERT is its own transaction.
        for i in 0..<count { try insert(stmt, first + UInt64(i)) }
    }

    func readTransactionPairs(_ count: Int) throws {
        // A bare BEGIN/COMMIT never touches the database; reading the schema cookie takes the
        // read snapshot (a WAL read mark) the way any first read does.
        let begin = try prepare("BEGIN")
        let touch = try prepare("PRAGMA schema_version")
        let commit = try prepare("COMMIT")
        defer {
            sqlite3_finalize(begin)
            sqlite3_finalize(touch)
            sqlite3_finalize(commit)
        }
        for _ in 0..<count {
            try run(begin)
            try run(touch)
            try run(commit)
        }
    }

    func close() {
        sqlite3_close_v2(db)
        db = nil
    }
}

// MARK: Workload

struct Results {
    var bulkSequential: UInt64 = 0   // ns total
    var bulkRandom: UInt64 = 0
    var pointReads: UInt64 = 0
    var scan: UInt64 = 0
    var commits: UInt64 = 0
    var readPairs: UInt64 = 0
    var fileBytes: UInt64 = 0
}

let keyCount = envInt("BENCH_KEYS", 1_000_000)
let commitCount = envInt("BENCH_COMMITS", 10_000)
let pairCount = envInt("BENCH_PAIRS", 1_000_000)

func log(_ s: String) {
    var line = Array((s + "\n").utf8)
    _ = line.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
}

/// `v` with `decimals` digits after the point.
func fixed(_ v: Double, _ decimals: Int) -> String {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let n = Int64((v * scale).rounded())
    if decimals == 0 { return "\(n)" }
    let whole = n / Int64(scale), frac = abs(n % Int64(scale))
    var f = "\(frac)"
    while f.count < decimals { f = "0" + f }
    return (n < 0 && whole == 0 ? "-" : "") + "\(whole).\(f)"
}

/// An engine's whole workload but the durable commits, which `alternatingCommits` runs for every
/// engine in turns; returns the results so far and the engine, open on the file of the random load.
func runAll<E: Engine>(_ type: E.Type, sequential: [UInt64], random: [UInt64], reads: [UInt64]) throws
    -> (results: Results, engine: any Engine, directory: String) {
    var r = Results()
    let tag = E.name.lowercased()

    let dir1 = try freshDirectory(tag)
    do {
        let e = try E(directory: dir1)
        r.bulkSequential = try timed { try e.bulkInsert(sequential) }
        e.close()
    }
    removeDirectory(dir1)
    log("\(E.name): sequential insert \(Double(r.bulkSequential) / 1e9) s")

    let dir2 = try freshDirectory(tag)
    let e = try E(directory: dir2)
    r.bulkRandom = try timed { try e.bulkInsert(random) }
    r.fileBytes = directoryBytes(dir2)
    log("\(E.name): random insert \(Double(r.bulkRandom) / 1e9) s")

    var checksum: UInt64 = 0
    r.pointReads = try timed { checksum = try e.pointReads(reads) }
    var expected: UInt64 = 0
    for k in reads { expected &+= k }
    if checksum != expected { throw BenchError(description: "\(E.name): point reads returned wrong values") }
    log("\(E.name): point reads \(Double(r.pointReads) / 1e9) s")

    var count: UInt64 = 0
    r.scan = try timed { count = try e.scan() }
    if count != UInt64(random.count) { throw BenchError(description: "\(E.name): scan saw \(count) entries") }
    log("\(E.name): scan \(Double(r.scan) / 1e9) s")

    r.readPairs = try timed { try e.readTransactionPairs(pairCount) }
    log("\(E.name): read transactions \(Double(r.readPairs) / 1e9) s")

    return (r, e, dir2)
}

/// The durable single-key commits of every engine, taken in turns one commit at a time
/// (`inTurns`), so that the engines' commits meet the machine's drift alike; each engine's
/// total nanoseconds.
func alternatingCommits(_ engines: [any Engine], first: UInt64, total: Int = commitCount) throws -> [UInt64] {
    try inTurns(total: total, parties: engines.count, rounds: total) { i, from, count in
        try timed { try engines[i].durableCommits(first: first + UInt64(from), count: count) }
    }.map { $0.reduce(0, +) }
}

func formatNs(_ ns: Double) -> String {
    if ns >= 1_000_000 { return fixed(ns / 1_000_000, 2) + " ms" }
    if ns >= 10_000 { return fixed(ns / 1000, 1) + " µs" }
    if ns >= 1000 { return fixed(ns / 1000, 2) + " µs" }
    if ns >= 100 { return fixed(ns, 0) + " ns" }
    return fixed(ns, 1) + " ns"
}

func ratio(_ a: Double, _ b: Double) -> String {
    b > 0 ? fixed(a / b, 2) + "×" : "–"
}

/// The engine named on the command line, on a fresh directory.
func makeEngine(_ engine: String, _ dir: String) throws -> any Engine {
    switch engine {
    case "cove": return try CoveEngine(directory: dir)
    case "lmdb": return try LMDBEngine(directory: dir)
    case "sqlite": return try SQLiteEngine(directory: dir)
    default: throw BenchError(description: "unknown engine \(engine)")
    }
}

/// `storage-bench commits all N`: N durable single-key commits for each engine on fresh files,
/// in turns (`alternatingCommits`), each engine's time per commit on stderr.
func commitsAlternating(_ n: Int) throws {
    let names = ["cove", "lmdb", "sqlite"]
    var dirs: [String] = []
    var engines: [any Engine] = []
    defer { for d in dirs { removeDirectory(d) } }
    for name in names {
        dirs.append(try freshDirectory(name))
        engines.append(try makeEngine(name, dirs[dirs.count - 1]))
    }
    let times = try alternatingCommits(engines, first: 1, total: n)
    for (i, name) in names.enumerated() {
        engines[i].close()
        log("\(name): \(n) durable commits, \(formatNs(Double(times[i]) / Double(max(n, 1)))) per commit")
    }
}

func commitsOnly(_ engine: String, _ n: Int) throws {
    if engine == "all" { return try commitsAlternating(n) }
    let dir = try freshDirectory(engine)
    defer { removeDirectory(dir) }
    let e = try makeEngine(engine, dir)
    try e.durableCommits(first: 1, count: n)
    e.close()
}

/// Only the begin + end read pairs, timed, on a file of a few committed keys: for comparing
/// builds of the read path, alternating runs.
func readPairsOnly(_ engine: String, _ n: Int) throws {
    let dir = try freshDirectory(engine)
    defer { removeDirectory(dir) }
    let e = try makeEngine(engine, dir)
    try e.durableCommits(first: 1, count: 10)
    let ns = try timed { try e.readTransactionPairs(n) }
    e.close()
    log("\(engine): \(n) begin + end read pairs: \(formatNs(Double(ns) / Double(n))) per pair")
}

/// Only the bulk load of `order` ("sequential" or "random"), timed, for profiling.
func insertsOnly(_ engine: String, _ order: String) throws {
    let keys = order == "random" ? shuffledKeys() : (1...UInt64(keyCount)).map { $0 }
    let dir = try freshDirectory(engine)
    defer { removeDirectory(dir) }
    let e = try makeEngine(engine, dir)
    let ns = try timed { try e.bulkInsert(keys) }
    e.close()
    log("\(engine): \(order) insert of \(keys.count) keys: \(formatNs(Double(ns) / Double(keys.count))) per insert")
}

/// Keys 1...keyCount in the fixed-seed shuffled order every engine sees.
func shuffledKeys(_ rng: inout SeededRandom) -> [UInt64] {
    var random = (1...UInt64(keyCount)).map { $0 }
    for i in stride(from: random.count - 1, to: 0, by: -1) {
        let j = Int(rng.next() % UInt64(i + 1))
        random.swapAt(i, j)
    }
    return random
}

func shuffledKeys() -> [UInt64] {
    var rng = SeededRandom(seed: 0xC0FE)
    return shuffledKeys(&rng)
}

func main() throws {
    let args = CommandLine.arguments
    if args.count >= 4 && args[1] == "commits" {
        try commitsOnly(args[2], Int(args[3]) ?? 1000)
        return
    }
    if args.count >= 4 && args[1] == "reads" {
        try readPairsOnly(args[2], Int(args[3]) ?? 1_000_000)
        return
    }
    if args.count >= 4 && args[1] == "inserts" {
        try insertsOnly(args[2], args[3])
        return
    }

    let sequential = (1...UInt64(keyCount)).map { $0 }
    var rng = SeededRandom(seed: 0xC0FE)
    let random = shuffledKeys(&rng)
    let reads = (0..<keyCount).map { _ in 1 + rng.next() % UInt64(keyCount) }

    // BENCH_ENGINES ("cove,lmdb,sqlite" by default) runs a subset; the others' columns stay empty.
    let engines = getenv("BENCH_ENGINES").map { String(cString: $0) } ?? "cove,lmdb,sqlite"
    let selected = Set(engines.split(separator: ",").map(String.init))
    var runs: [(name: String, results: Results, engine: any Engine, directory: String)] = []
    if selected.contains("cove") {
        let r = try runAll(CoveEngine.self, sequential: sequential, random: random, reads: reads)
        runs.append(("cove", r.results, r.engine, r.directory))
    }
    if selected.contains("lmdb") {
        let r = try runAll(LMDBEngine.self, sequential: sequential, random: random, reads: reads)
        runs.append(("lmdb", r.results, r.engine, r.directory))
    }
    if selected.contains("sqlite") {
        let r = try runAll(SQLiteEngine.self, sequential: sequential, random: random, reads: reads)
        runs.append(("sqlite", r.results, r.engine, r.directory))
    }
    let commitTimes = try alternatingCommits(runs.map(\.engine), first: UInt64(random.count) + 1)
    for i in runs.indices {
        runs[i].results.commits = commitTimes[i]
        log("\(runs[i].name): durable commits \(Double(commitTimes[i]) / 1e9) s")
        runs[i].engine.close()
        removeDirectory(runs[i].directory)
    }
    func results(_ name: String) -> Results { runs.first { $0.name == name }?.results ?? Results() }
    let cove = results("cove"), lmdb = results("lmdb"), sqlite = results("sqlite")

    let n = Double(keyCount)
    let kn = keyCount >= 1000 && keyCount % 1_000_000 == 0 ? "\(keyCount / 1_000_000)M" : "\(keyCount)"
    var rows: [(String, (Results) -> Double)] = [
        ("\(kn) sequential inserts, one transaction (per insert)", { Double($0.bulkSequential) / n }),
        ("\(kn) random-order inserts, one transaction (per insert)", { Double($0.bulkRandom) / n }),
        ("\(kn) random point reads, one read transaction (per read)", { Double($0.pointReads) / n }),
        ("Full ordered scan of \(kn) entries (per entry)", { Double($0.scan) / n }),
        ("\(commitCount) durable single-key commits (per commit)", { Double($0.commits) / Double(commitCount) }),
        ("Begin + end read transaction (per pair)", { Double($0.readPairs) / Double(pairCount) }),
    ]
    print("| Workload | Cove | LMDB | SQLite | Cove/LMDB | Cove/SQLite |")
    print("|---|--:|--:|--:|--:|--:|")
    for (label, f) in rows {
        let c = f(cove), l = f(lmdb), s = f(sqlite)
        print("| \(label) | \(formatNs(c)) | \(formatNs(l)) | \(formatNs(s)) | \(ratio(c, l)) | \(ratio(c, s)) |")
    }
    rows.removeAll()
    let mib = { (r: Results) in Double(r.fileBytes) / 1_048_576 }
    print("| Files after the random-order load (MiB) | \(fixed(mib(cove), 1)) | \(fixed(mib(lmdb), 1)) | "
        + "\(fixed(mib(sqlite), 1)) | \(ratio(mib(cove), mib(lmdb))) | \(ratio(mib(cove), mib(sqlite))) |")
    for (env, label) in [("BENCH_FLUSHES", "fsync + fdatasync + msync per durable commit"),
                         ("BENCH_WRITES", "write system calls per durable commit")] {
        if let m = envMap(env) {
            print("| \(label) | \(m["cove"] ?? "–") | \(m["lmdb"] ?? "–") | \(m["sqlite"] ?? "–") | | |")
        }
    }
}

do {
    try main()
} catch {
    log("storage-bench: \(error)")
    exit(1)
}
