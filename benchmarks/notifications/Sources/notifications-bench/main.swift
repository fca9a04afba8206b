// Over 100,000 Person objects, observe Results `age > 50` (about 49,000 rows) and measure, per
// commit, the time from the start of the commit (commitWrite, after the edits) to the callback
// and the CPU the delivery takes on the observing thread and on the realm's notification thread,
// for a transaction that changes 100 objects inside the results and for one that moves 100
// objects out of and 100 into them: committed by the observing realm itself (which delivers at
// once, computing the change set on its own thread), and by another thread's realm (the
// observing thread waits on the notification descriptor, which becomes readable once the
// realm's notification thread has computed the change set, then refreshes); beside it, the
// naive way: re-running the query and diffing the keys. Then sorted results over every object,
// observed one at a time, after commits that write 100 objects (the sort key untouched, or
// written), beside sorting again; and the same with DISTINCT, LIMIT, a sort key through a link
// (each person is on one of 1,000 teams) and sections. Environment: BENCH_OBJECTS (100000),
// BENCH_ROUNDS (50); BENCH_ROWS (for profiling): only the sorted rows whose label contains it,
// without the first table and without evaluating again.
import Cove
import Dispatch
import Glibc

func cpu(_ clock: clockid_t = CLOCK_THREAD_CPUTIME_ID) -> UInt64 {
    var ts = timespec()
    clock_gettime(clock, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// The CPU of every thread of the process.
func processCPU() -> UInt64 { cpu(CLOCK_PROCESS_CPUTIME_ID) }

/// Lets the notification thread finish its work on the last commit (sleeping costs no CPU).
func settle() {
    var ts = timespec(tv_sec: 0, tv_nsec: 3_000_000)
    nanosleep(&ts, nil)
}

let objects = envInt("BENCH_OBJECTS", 100_000)
let rounds = envInt("BENCH_ROUNDS", 50)
let onlyRows = getenv("BENCH_ROWS").map { String(cString: $0) }
/// The rounds of the first table (none when profiling some sorted rows).
let firstRounds = onlyRows == nil ? rounds : 0
let dir = try freshDirectory("notifications")
defer { _ = system("rm -rf '\(dir)'") }

let schema = try Schema(jsonText: #"""
    {"Person": {"properties": {"name": "string", "age": "int", "score": "double", "team": "Team?"}},
     "Team": {"properties": {"name": "string"}}}
    """#)
let realm = try Realm(configuration: .init(path: "\(dir)/n.cove", durability: .noSync, schema: schema, schemaVersion: 1))
var state: UInt64 = 1
@MainActor func random(_ n: Int) -> Int {
    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
    return Int((state >> 33) % UInt64(n))
}
let teamCount = 1_000
let teams = try realm.write { () -> [DynamicObject] in
    let teams = try (0..<teamCount).map { i in try realm.dynamicCreate("Team", values: [("name", .string("t\(i)"))]) }
    for i in 0..<objects {
        try realm.dynamicCreate("Person", values: [("name", .string("p\(i)")), ("age", .int(Int64(random(100)))), ("score", .double(0)),
                                                   ("team", .link(teams[random(teamCount)].link))])
    }
    return teams
}
let people = try realm.objects("Person")
let adults = people.filter("age > 50")
let all = try people.elements()
var delivered = 0
var deliveredAt: UInt64 = 0
let token = try adults.observeChanges { change in
    delivered += 1
    deliveredAt = now()
}
try realm.deliver()
let note = "observing \(try adults.checkedCount()) of \(objects) objects\n"
_ = note.withCString { write(2, $0, strlen($0)) }

struct Figures {
    var latency: [Double] = []
    var cpu: [Double] = []
    var commit: [Double] = []
    /// The CPU of the process's other threads meanwhile: the realm's notification thread.
    var worker: [Double] = []
}

/// How long the last measured commitWrite took (ms), and the CPU the notification thread
/// spent on it (ms): the process's CPU from the start of the commit until the notification
/// thread is done, less the committing and observing threads'.
var lastCommit = 0.0
var lastWorker = 0.0

/// Runs `edit` in a write, then delivers; returns (commit start → callback, delivery CPU).
@MainActor func measure(_ edit: () throws -> Void) throws -> (Double, Double) {
    let before = delivered
    try realm.beginWrite()
    try edit()
    let p0 = processCPU(), t0 = cpu()
    let start = now()
    try realm.commitWrite()
    lastCommit = Double(now() - start) / 1e6
    let c0 = cpu()
    try realm.deliver()
    let c1 = cpu()
    guard delivered >= before + 1 else { throw CoveError(.internal, "no delivery") }
    settle()
    lastWorker = max(0, Double(Int64(processCPU() - p0) - Int64(cpu() - t0)) / 1e6)
    return (Double(deliveredAt - start) / 1e6, Double(c1 - c0) / 1e6)
}

/// The naive way: run the query again and diff the keys with a hash set.
@MainActor func naive(_ edit: () throws -> Void) throws -> (Double, Double) {
    let old = try adults.objectKeys()
    try realm.beginWrite()
    try edit()
    let start = now()
    try realm.commitWrite()
    let c0 = cpu()
    let fresh = try realm.objects("Person").filter("age > 50").objectKeys()
    let oldSet = Set(old), newSet = Set(fresh)
    let changes = old.filter { !newSet.contains($0) }.count + fresh.filter { !oldSet.contains($0) }.count
    let c1 = cpu()
    if changes < 0 { print("") }
    let figures = (Double(now() - start) / 1e6, Double(c1 - c0) / 1e6)
    try realm.deliver()     // the observer hears of this commit outside the measurement
    return figures
}

func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }

var inside = Figures(), moving = Figures(), naiveInside = Figures(), naiveMoving = Figures()
for _ in 0..<firstRounds {
    let inAdults = try adults.elements()
    let change100 = { () throws in
        for _ in 0..<100 { try inAdults[random(inAdults.count)].setValue(.double(Double(random(1000))), forKey: "score") }
    }
    var (l, c) = try measure(change100)
    inside.latency.append(l); inside.cpu.append(c); inside.commit.append(lastCommit); inside.worker.append(lastWorker)
    (l, c) = try naive(change100)
    naiveInside.latency.append(l); naiveInside.cpu.append(c)
    let move200 = { () throws in
        let current = try adults.elements()
        for _ in 0..<100 { try current[random(current.count)].setValue(.int(Int64(random(50))), forKey: "age") }
        for _ in 0..<100 { try all[random(all.count)].setValue(.int(Int64(51 + random(49))), forKey: "age") }
    }
    (l, c) = try measure(move200)
    moving.latency.append(l); moving.cpu.append(c); moving.commit.append(lastCommit); moving.worker.append(lastWorker)
    (l, c) = try naive(move200)
    naiveMoving.latency.append(l); naiveMoving.cpu.append(c)
}
// Commits from another thread: the observing (main) thread waits on the descriptor, then
// refreshes; the writer notes when its commit started.
final class Writer: @unchecked Sendable {
    let go = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    var moveRound = false
    var startedAt: UInt64 = 0
    var endedAt: UInt64 = 0
    /// The process's CPU at the start of the commit, and the committing thread's for it.
    var processCPUAtStart: UInt64 = 0
    var commitCPU: UInt64 = 0
    var failure: Error?
}
let writer = Writer()
let path = "\(dir)/n.cove"
DispatchQueue.global().async { [schema, path, writer] in
    do {
        let other = try Realm(configuration: .init(path: path, durability: .noSync, schema: schema, schemaVersion: 1))
        let everyone = try other.objects("Person").elements()
        var seed: UInt64 = 7
        func pick(_ n: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(n))
        }
        while true {
            writer.go.wait()
            if writer.startedAt == UInt64.max { break }
            _ = try other.refresh()
            let current = try other.objects("Person").filter("age > 50").elements()
            try other.beginWrite()
            if writer.moveRound {
                for _ in 0..<100 { try current[pick(current.count)].setValue(.int(Int64(pick(50))), forKey: "age") }
                for _ in 0..<100 { try everyone[pick(everyone.count)].setValue(.int(Int64(51 + pick(49))), forKey: "age") }
            } else {
                for _ in 0..<100 { try current[pick(current.count)].setValue(.double(Double(pick(1000))), forKey: "score") }
            }
            writer.processCPUAtStart = processCPU()
            let t0 = cpu()
            writer.startedAt = now()
            try other.commitWrite()
            writer.endedAt = now()
            writer.commitCPU = cpu() - t0
            writer.done.signal()
        }
        other.close()
    } catch {
        writer.failure = error
        writer.done.signal()
    }
}

/// Another thread commits; this one waits for the descriptor and refreshes.
@MainActor func measureAcross(move: Bool) throws -> (Double, Double) {
    let before = delivered
    let m0 = cpu()
    writer.moveRound = move
    writer.go.signal()
    writer.done.wait()
    if let failure = writer.failure { throw failure }
    var p = pollfd(fd: try realm.notificationFileDescriptor(), events: Int16(POLLIN), revents: 0)
    _ = poll(&p, 1, 10_000)
    let c0 = cpu()
    _ = try realm.refresh()
    let c1 = cpu()
    guard delivered >= before + 1 else { throw CoveError(.internal, "no delivery") }
    let m1 = cpu()
    settle()
    lastWorker = max(0, Double(Int64(processCPU() - writer.processCPUAtStart) - Int64(writer.commitCPU) - Int64(m1 - m0)) / 1e6)
    lastCommit = Double(writer.endedAt - writer.startedAt) / 1e6
    return (Double(deliveredAt - writer.startedAt) / 1e6, Double(c1 - c0) / 1e6)
}

var insideAcross = Figures(), movingAcross = Figures()
for _ in 0..<firstRounds {
    var (l, c) = try measureAcross(move: false)
    insideAcross.latency.append(l); insideAcross.cpu.append(c); insideAcross.commit.append(lastCommit)
    insideAcross.worker.append(lastWorker)
    (l, c) = try measureAcross(move: true)
    movingAcross.latency.append(l); movingAcross.cpu.append(c); movingAcross.commit.append(lastCommit)
    movingAcross.worker.append(lastWorker)
}
writer.startedAt = UInt64.max
writer.go.signal()

func ms(_ v: Double) -> String { String(Int((v * 100).rounded())).leftPad() }
extension String {
    func leftPad() -> String {
        let s = self.count < 3 ? String(repeating: "0", count: 3 - self.count) + self : self
        return String(s.dropLast(2)) + "." + String(s.suffix(2))
    }
}
func row(_ label: String, _ f: Figures, _ naive: Figures?) {
    let rerun = naive.map { " \(ms(median($0.latency))) ms | \(ms(median($0.cpu))) ms |" } ?? " | |"
    print("| \(label) | \(ms(median(f.latency))) ms | \(ms(median(f.commit))) ms | \(ms(median(f.cpu))) ms | \(ms(median(f.worker))) ms |" + rerun)
}
if firstRounds > 0 {
    print("| Commit (\(rounds) runs, medians) | Cove: commit → callback | of which commitWrite | Cove: delivery CPU | Cove: notification thread CPU | Re-run and diff: commit → result | Re-run and diff: CPU |")
    print("|---|--:|--:|--:|--:|--:|--:|")
    row("100 objects changed inside the results", inside, naiveInside)
    row("100 objects moved out, 100 in", moving, naiveMoving)
    row("100 objects changed inside, committed by another thread", insideAcross, nil)
    row("100 moved out, 100 in, committed by another thread", movingAcross, nil)
}
token.invalidate()

// Sorted live results over every object: each observed alone, 100 objects written per commit
// (the sort key untouched, or written), commit to callback; beside it, evaluating again (a new
// Results, or new sections, read once). Each edit gets every person and, when it needs them, the
// observed rows (read before the write).
@MainActor func sortedRow(_ label: String, observe: (@escaping () -> Void) throws -> NotificationToken,
                          rows: (() throws -> [DynamicObject])?, again evaluate: () throws -> Void,
                          _ edit: ([DynamicObject], [DynamicObject]) throws -> Void) throws {
    if let onlyRows, !label.contains(onlyRows) { return }
    var f = Figures(), again = Figures()
    let sortedToken = try observe {
        delivered += 1
        deliveredAt = now()
    }
    try realm.deliver()
    for _ in 0..<rounds {
        let shown = try rows?() ?? []
        let (l, c) = try measure { try edit(all, shown) }
        f.latency.append(l); f.cpu.append(c); f.commit.append(lastCommit); f.worker.append(lastWorker)
        let c0 = cpu()
        let start = now()
        if onlyRows == nil { try evaluate() }
        again.latency.append(Double(now() - start) / 1e6); again.cpu.append(Double(cpu() - c0) / 1e6)
    }
    sortedToken.invalidate()
    row(label, f, again)
}

/// A row for live results: `make` builds them over a fresh `Person` results (the observed ones
/// once, new ones for each evaluation again).
@MainActor func resultsRow(_ label: String, _ make: @escaping (Results<DynamicObject>) throws -> Results<DynamicObject>,
                           needsRows: Bool = false, _ edit: ([DynamicObject], [DynamicObject]) throws -> Void) throws {
    let observed = try make(people)
    try sortedRow(label, observe: { callback in try observed.observeChanges { _ in callback() } },
                  rows: needsRows ? { try observed.elements() } : nil, again: { _ = try make(try realm.objects("Person")).objectKeys() }, edit)
}

/// Writes the score of `n` objects picked from every person.
@MainActor func writeScores(_ n: Int) -> ([DynamicObject], [DynamicObject]) throws -> Void {
    { all, _ in for _ in 0..<n { try all[random(all.count)].setValue(.double(Double(random(1000))), forKey: "score") } }
}
@MainActor func writeAges(_ n: Int) -> ([DynamicObject], [DynamicObject]) throws -> Void {
    { all, _ in for _ in 0..<n { try all[random(all.count)].setValue(.int(Int64(random(100))), forKey: "age") } }
}

print("")
print("| Sorted results over all \(objects) objects (\(rounds) runs, medians) | Cove: commit → callback | of which commitWrite | Cove: delivery CPU | Cove: notification thread CPU | Sort again: time | Sort again: CPU |")
print("|---|--:|--:|--:|--:|--:|--:|")
try resultsRow("sorted by name, 100 scores written", { $0.sorted(byKeyPath: "name") }, writeScores(100))
try resultsRow("sorted by score, 100 scores written", { $0.sorted(byKeyPath: "score") }, writeScores(100))
try resultsRow("sorted by age, 100 ages written", { $0.sorted(byKeyPath: "age") }, writeAges(100))
try resultsRow("sorted by name, 1 score written", { $0.sorted(byKeyPath: "name") }, writeScores(1))
try resultsRow("sorted by score, distinct by name, 100 scores written",
               { $0.sorted(byKeyPath: "score").distinct(by: ["name"]) }, writeScores(100))
// The 100 rows are each age's lowest score: raising theirs puts another in each place.
try resultsRow("sorted by score, distinct by age (100 rows), the rows' 100 scores raised",
               { $0.sorted(byKeyPath: "score").distinct(by: ["age"]) }, needsRows: true) { _, shown in
    for o in shown { try o.setValue(.double(Double(1000 + random(1000))), forKey: "score") }
}
// 100 scores written at random and one of a row: that row mostly leaves, and the next enters.
try resultsRow("sorted by score descending, limit 100, 100 scores written",
               { $0.filter("TRUEPREDICATE SORT(score DESC) LIMIT(100)") }, needsRows: true) { all, shown in
    for _ in 0..<100 { try all[random(all.count)].setValue(.double(Double(random(2000))), forKey: "score") }
    try shown[random(shown.count)].setValue(.double(Double(random(2000))), forKey: "score")
}
try resultsRow("sorted by team.name, name; 100 teams written",
               { $0.sorted(by: [SortDescriptor(keyPath: "team.name"), SortDescriptor(keyPath: "name")]) }) { all, _ in
    for _ in 0..<100 { try all[random(all.count)].setValue(.link(teams[random(teamCount)].link), forKey: "team") }
}
try resultsRow("sorted by team.name, name; 1 team's name written (its rows move)",
               { $0.sorted(by: [SortDescriptor(keyPath: "team.name"), SortDescriptor(keyPath: "name")]) }) { all, _ in
    guard case .link(let team) = try all[random(all.count)]["team"], let t = try realm.object(for: team) else { return }
    try t.setValue(.string("t\(random(teamCount))"), forKey: "name")
}
let byAge = try people.sectioned(by: "age")
try sortedRow("sectioned by age, 100 ages written",
              observe: { callback in try byAge.observeChanges { _ in callback() } }, rows: nil,
              again: { _ = try realm.objects("Person").sectioned(by: "age").sectionRows() }, writeAges(100))
try sortedRow("sectioned by age, 100 scores written",
              observe: { callback in try byAge.observeChanges { _ in callback() } }, rows: nil,
              again: { _ = try realm.objects("Person").sectioned(by: "age").sectionRows() }, writeScores(100))
realm.close()
