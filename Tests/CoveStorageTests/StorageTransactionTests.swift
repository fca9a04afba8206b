// Snapshots and write transactions: isolation, concurrent readers, page reuse held back by
// readers, history records and trimming, the active-version cap, and verify() after random
// workloads checked against an in-memory model.
import XCTest
import Glibc
import Synchronization
@testable import CoveStorage

final class StorageTransactionTests: StorageTestCase {
    func testSnapshotsAreIsolatedFromLaterCommits() throws {
        let s = try Storage.open(path: dir.file("db"), options: TestTables.options())
        defer { s.close() }
        var w = try s.beginWrite()
        for k in 0..<200 as Range<UInt64> { try TestTables.put(w, "t", k, testValue(k, size: 40)) }
        try w.commit()
        let old = try s.beginRead()
        w = try s.beginWrite()
        for k in 0..<200 as Range<UInt64> where k % 2 == 0 { try TestTables.remove(w, "t", k) }
        try TestTables.put(w, "t", 1, [1])
        // The writer sees its own changes; a snapshot does not.
        XCTAssertNil(try TestTables.get(w, catalog: w.catalog, "t", 0))
        XCTAssertEqual(try TestTables.get(old, catalog: old.catalog, "t", 0), testValue(0, size: 40))
        try w.commit()
        let new = try s.beginRead()
        XCTAssertEqual(try TestTables.contents(old, catalog: old.catalog, "t").count, 200)
        XCTAssertEqual(try TestTables.get(old, catalog: old.catalog, "t", 1), testValue(1, size: 40))
        XCTAssertEqual(try TestTables.contents(new, catalog: new.catalog, "t").count, 100)
        XCTAssertEqual(try TestTables.get(new, catalog: new.catalog, "t", 1), [1])
        XCTAssertEqual(s.activeVersionCount(), 2)
        old.end()
        new.end()
        XCTAssertEqual(s.activeVersionCount(), 1)
        assertStorageError({ () throws(StorageError) in _ = try old.page(2) }) {
            if case .closed = $0 { return true } else { return false }
        }
        _ = try s.verify()
    }

    /// A commit of this process rings the bell every handle of the file shares, so a waiter on
    /// another handle wakes with it (another process's commit is seen at the next poll).
    func testACommitWakesWaitersOfTheSameFileAtOnce() throws {
        let a = try Storage.open(path: dir.file("db"), options: TestTables.options(.noSync))
        defer { a.close() }
        let b = try Storage.open(path: dir.file("db"), options: TestTables.options(.noSync))
        defer { b.close() }
        XCTAssertTrue(a.lock.bell === b.lock.bell, "one bell per file in the process")
        let counter = b.commitCounter()
        let rung = b.lock.bell.count
        let woke = Atomic<UInt64>(0)
        let waiter = spawn {
            _ = b.waitForCommit(after: counter, timeoutMs: 60_000)
            woke.store(monotonicNow(), ordering: .releasing)
        }
        defer { pthread_join(waiter, nil) }
        usleep(20_000)
        XCTAssertEqual(woke.load(ordering: .acquiring), 0, "woke without a commit")
        let w = try a.beginWrite()
        try TestTables.put(w, "t", 1, [1])
        let committed = monotonicNow()
        try w.commit()
        while woke.load(ordering: .acquiring) == 0 { usleep(1_000) }
        XCTAssertGreaterThan(b.lock.bell.count, rung)
        XCTAssertLessThan(woke.load(ordering: .acquiring) - committed, 30_000_000_000, "the waiter slept through the commit")
        XCTAssertNotEqual(b.commitCounter(), counter)
    }

    /// A wait whose condition turns true ends without a commit, long before its timeout (a wake
    /// makes it look at once); woken while its condition is false, it waits on.
    func testAWaitEndsWhenItsConditionHoldsWithoutACommit() throws {
        let s = try Storage.open(path: dir.file("db"), options: TestTables.options(.noSync))
        defer { s.close() }
        let counter = s.commitCounter()
        let stop = Atomic<Bool>(false)
        let ended = Atomic<UInt64>(0)
        let waiter = spawn {
            _ = s.waitForCommit(after: counter, timeoutMs: 60_000) { stop.load(ordering: .acquiring) }
            ended.store(monotonicNow(), ordering: .releasing)
        }
        defer { pthread_join(waiter, nil) }
        // Woken with the condition false: it goes on waiting.
        usleep(20_000)
        s.wakeCommitWaiters()
        usleep(20_000)
        XCTAssertEqual(ended.load(ordering: .acquiring), 0, "the wait ended with its condition false")
        stop.store(true, ordering: .releasing)
        let woken = monotonicNow()
        s.wakeCommitWaiters()
        while ended.load(ordering: .acquiring) == 0 { usleep(1_000) }
        XCTAssertLessThan(ended.load(ordering: .acquiring) - woken, 30_000_000_000, "the wait ignored its condition")
        XCTAssertEqual(s.commitCounter(), counter, "no commit was needed")
    }

    func testCancelDiscardsChanges() throws {
        let s = try Storage.open(path: dir.file("db"), options: TestTables.options())
        defer { s.close() }
        let w = try s.beginWrite()
        try TestTables.put(w, "t", 1, [1])
        w.cancel()
        XCTAssertEqual(s.latestVersion(), 1)
        let w2 = try s.beginWrite()
        XCTAssertNil(try TestTables.get(w2, catalog: w2.catalog, "t", 1))
        w2.cancel()
        _ = try s.verify()
    }

    func testConcurrentReadersWhileWriterCommits() throws {
        let s = try Storage.open(path: dir.file("db"), options: TestTables.options(.noSync))
        defer { s.close() }
        // Invariant each commit keeps: table "t" holds keys 0..<n, each value = [n as byte]
        // repeated; readers check a snapshot is never a mix of two commits.
        let commits = 150
        let failures = Mutex<[String]>([])
        let done = Atomic<Bool>(false)
        let readerThreads = 4
        let reads = Atomic<Int>(0)
        var threads: [pthread_t] = []
        let storage = s
        for _ in 0..<readerThreads {
            threads.append(spawn {
                while !done.load(ordering: .relaxed) {
                    do {
                        let r = try storage.beginRead()
                        let contents = try TestTables.contents(r, catalog: r.catalog, "t")
                        let n = contents.count
                        for (k, v) in contents where k >= UInt64(n) || v != [UInt8](repeating: UInt8(truncatingIfNeeded: n), count: 8) {
                            failures.withLock { $0.append("version \(r.version): key \(k) of \(n) holds \(v)") }
                            break
                        }
                        r.end()
                        reads.wrappingAdd(1, ordering: .relaxed)
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            })
        }
        for n in 1...commits {
            let w = try s.beginWrite()
            let value = [UInt8](repeating: UInt8(truncatingIfNeeded: n), count: 8)
            for k in 0..<UInt64(n) { try TestTables.put(w, "t", k, value) }
            try w.commit()
        }
        done.store(true, ordering: .relaxed)
        for t in threads { pthread_join(t, nil) }
        XCTAssertEqual(failures.withLock { $0 }, [])
        XCTAssertGreaterThan(reads.load(ordering: .relaxed), 0)
        _ = try s.verify()
    }

    /// Pages freed by a commit are not reused while a reader pins the version before it, and
    /// are reused (the file stops growing) once it ends.
    func testPageReuseWaitsForReaders() throws {
        let s = try Storage.open(path: dir.file("db"), options: TestTables.options(.noSync))
        defer { s.close() }
        var w = try s.beginWrite()
        for k in 0..<300 as Range<UInt64> { try TestTables.put(w, "t", k, testValue(k, size: 100)) }
        try w.commit()
        let pinned = try s.beginRead()
        let pinnedContents = try TestTables.contents(pinned, catalog: pinned.catalog, "t")
        let pinnedPages = try TestTables.tablePages(pinned)
        // Rewrite everything many times while the old version is pinned.
        for round in 0..<10 as Range<UInt64> {
            w = try s.beginWrite()
            for k in 0..<300 as Range<UInt64> { try TestTables.put(w, "t", k, testValue(k + round * 1000, size: 100)) }
            // No page the pinned version uses may be handed out.
            for pgno in w.dirty.keys { XCTAssertFalse(pinnedPages.contains(pgno), "page \(pgno) reused while pinned") }
            try w.commit()
        }
        XCTAssertEqual(try TestTables.contents(pinned, catalog: pinned.catalog, "t"), pinnedContents)
        _ = try s.verify()
        pinned.end()
        // Now the file stops growing: the same workload reuses freed pages.
        let grownTo = s.state.withLock { $0.latest.pageCount }
        for round in 10..<30 as Range<UInt64> {
            w = try s.beginWrite()
            for k in 0..<300 as Range<UInt64> { try TestTables.put(w, "t", k, testValue(k + round * 1000, size: 100)) }
            try w.commit()
        }
        let after = s.state.withLock { $0.latest.pageCount }
        XCTAssertLessThanOrEqual(after, grownTo, "the file grew from \(grownTo) to \(after) pages with free pages available")
        let report = try s.verify()
        XCTAssertGreaterThan(report.freePages, 0)
    }

    func testHistoryRecordsAndTrimming() throws {
        let s = try Storage.open(path: dir.file("db"), options: TestTables.options(.noSync))
        defer { s.close() }
        var pins: [Snapshot] = []
        for i in 0..<10 as Range<UInt64> {
            let w = try s.beginWrite()
            try TestTables.put(w, "t", i, [UInt8(i)])
            w.setHistoryRecord(Array("commit \(w.version)".utf8))
            let v = try w.commit()
            if v == 5 { pins.append(try s.beginRead()) }
        }
        // Version 5 is pinned: the records of versions 5... stay readable.
        let r = try s.beginRead()
        var seen: [UInt64] = []
        try r.forEachHistoryRecord(after: 5) { v, bytes throws(StorageError) -> Bool in
            XCTAssertEqual(Array(bytes), Array("commit \(v)".utf8))
            seen.append(v)
            return true
        }
        XCTAssertEqual(seen, Array(6...11))
        XCTAssertEqual(try r.historyRecord(5), Array("commit 5".utf8))
        XCTAssertNil(try r.historyRecord(3), "trimmed below the oldest pin")
        r.end()
        for p in pins { p.end() }
        // With no pin, the next commits trim everything older than the base version.
        for _ in 0..<2 {
            let w = try s.beginWrite()
            w.setHistoryRecord([1])
            try w.commit()
        }
        let r2 = try s.beginRead()
        var left: [UInt64] = []
        try r2.forEachHistoryRecord(after: 0) { v, _ throws(StorageError) -> Bool in
            left.append(v)
            return true
        }
        XCTAssertEqual(left, [12, 13])
        r2.end()
        _ = try s.verify()
    }

    /// The newest history records live in the meta slot: small commits with no reader behind
    /// write no history page; records a pinned reader still needs move to the tree once the
    /// slot is full, a record too large for the slot goes there at once, and every record a
    /// reader may ask for stays readable, in order, across reopen.
    func testRecentHistoryRecordsStayInTheMetaSlot() throws {
        let path = dir.file("db")
        var s = try Storage.open(path: path, options: TestTables.options(.noSync))
        func commit(_ record: [UInt8]) throws -> WriteTransaction {
            let w = try s.beginWrite()
            try TestTables.put(w, "t", w.version % 50, record)
            w.setHistoryRecord(record)
            try w.commit()
            return w
        }
        func record(_ v: UInt64, _ size: Int = 40) -> [UInt8] { Array("commit \(v) ".utf8) + Array(repeating: UInt8(v & 0xFF), count: size) }
        for _ in 0..<5 { _ = try commit(record(s.latestVersion() + 1)) }
        for _ in 0..<50 {
            let w = try commit(record(s.latestVersion() + 1))
            let meta = s.state.withLock { $0.latest }
            XCTAssertTrue(meta.history.page.isNone, "version \(w.version) wrote a history tree")
            XCTAssertEqual(meta.recentHistory.map(\.version), [w.version - 1, w.version], "the base's record and this one")
        }
        // A reader pins a version: the records after it pile up in the slot, then in the tree.
        let pinned = try s.beginRead()
        for _ in 0..<60 { _ = try commit(record(s.latestVersion() + 1)) }
        let large = try commit(record(s.latestVersion() + 1, 2000))
        XCTAssertTrue(s.state.withLock { $0.latest.recentHistory.isEmpty }, "too large for the slot")
        _ = try commit(record(s.latestVersion() + 1))
        func check(_ r: Snapshot, from: UInt64) throws {
            var seen: [UInt64] = []
            try r.forEachHistoryRecord(after: from) { v, bytes throws(StorageError) -> Bool in
                XCTAssertEqual(Array(bytes), record(v, v == large.version ? 2000 : 40), "record \(v)")
                seen.append(v)
                return true
            }
            XCTAssertEqual(seen, Array((from + 1)...r.version))
            XCTAssertEqual(try r.historyRecord(r.version), record(r.version, r.version == large.version ? 2000 : 40))
            var firstOnly: [UInt64] = []
            try r.forEachHistoryRecord(after: from) { v, _ throws(StorageError) -> Bool in
                firstOnly.append(v)
                return false
            }
            XCTAssertEqual(firstOnly, [from + 1], "stops when told")
        }
        let newest = try s.beginRead()
        XCTAssertFalse(newest.history.page.isNone, "the records that did not fit went to the tree")
        XCTAssertFalse(newest.meta.recentHistory.isEmpty)
        try check(newest, from: pinned.version)
        XCTAssertEqual(try s.verify().historyRecords, newest.version - pinned.version + 1)
        newest.end()
        _ = try commit(record(s.latestVersion() + 1))
        let from = pinned.version
        pinned.end()
        s.close()
        s = try Storage.open(path: path, options: TestTables.options(.noSync))
        defer { s.close() }
        let reopened = try s.beginRead()
        try check(reopened, from: from)
        reopened.end()
        // Nothing pinned any more: the tree empties again.
        for _ in 0..<3 { _ = try commit(record(s.latestVersion() + 1)) }
        XCTAssertTrue(s.state.withLock { $0.latest.history.page.isNone })
        XCTAssertEqual(try s.verify().historyRecords, 2)
    }

    func testMaxActiveVersions() throws {
        var o = TestTables.options(.noSync)
        o.maxActiveVersions = 2
        let s = try Storage.open(path: dir.file("db"), options: o)
        defer { s.close() }
        let a = try s.beginRead() // pins 1
        var w = try s.beginWrite()
        try TestTables.put(w, "t", 1, [1])
        try w.commit() // 2 active: 1 (pinned) and 2
        let b = try s.beginRead() // pins 2
        w = try s.beginWrite() // still 2 distinct
        try TestTables.put(w, "t", 2, [2])
        assertStorageError({ () throws(StorageError) in try w.commit() }) {
            if case .tooManyVersions = $0 { return true } else { return false }
        }
        XCTAssertEqual(s.latestVersion(), 2)
        a.end()
        w = try s.beginWrite()
        try TestTables.put(w, "t", 2, [2])
        try w.commit()
        let c = try s.beginRead() // pins 3; 2 and 3 pinned
        b.end()
        c.end()
        _ = try s.verify()
    }

    /// Random puts and removes over several tables, checked against a model after each commit
    /// (through a fresh snapshot) and with verify() (the partition of the file).
    func testRandomWorkloadKeepsThePartition() throws {
        let path = dir.file("db")
        var s = try Storage.open(path: path, options: TestTables.options(.noSync))
        var model: [String: [UInt64: [UInt8]]] = [:]
        var rng = SystemRandomNumberGenerator()
        var seed = UInt64.random(in: 0...UInt64.max, using: &rng)
        func next() -> UInt64 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return seed >> 33
        }
        var pins: [Snapshot] = []
        for round in 0..<60 {
            let w = try s.beginWrite()
            for _ in 0..<(Int(next() % 200) + 1) {
                let table = "t\(next() % 3)"
                let key = next() % 500
                if next() % 4 == 0 {
                    try TestTables.remove(w, table, key)
                    model[table, default: [:]][key] = nil
                } else {
                    let size = next() % 8 == 0 ? Int(next() % 5000) : Int(next() % 100)
                    let value = testValue(next(), size: size)
                    try TestTables.put(w, table, key, value)
                    model[table, default: [:]][key] = value
                }
            }
            if next() % 5 == 0 { w.cancel(); model = try modelOf(s) } else { try w.commit() }
            if next() % 3 == 0 { pins.append(try s.beginRead()) }
            if pins.count > 3 { pins.removeFirst().end() }
            let r = try s.beginRead()
            for (table, rows) in model {
                XCTAssertEqual(try TestTables.contents(r, catalog: r.catalog, table), rows, "round \(round) table \(table) seed \(seed)")
            }
            r.end()
            do {
                _ = try s.verify()
            } catch {
                XCTFail("round \(round): \(error)")
                break
            }
            if round % 20 == 19 {
                for p in pins { p.end() }
                pins = []
                s.close()
                s = try Storage.open(path: path, options: TestTables.options(.noSync))
            }
        }
        for p in pins { p.end() }
        s.close()
    }

    private func modelOf(_ s: Storage) throws -> [String: [UInt64: [UInt8]]] {
        let r = try s.beginRead()
        defer { r.end() }
        var out: [String: [UInt64: [UInt8]]] = [:]
        for t in ["t0", "t1", "t2"] { out[t] = try TestTables.contents(r, catalog: r.catalog, t) }
        return out
    }

    func testLargeCommitUsesContinuationPages() throws {
        let path = dir.file("db")
        do {
            let s = try Storage.open(path: path, options: TestTables.options())
            let w = try s.beginWrite()
            for k in 0..<8000 as Range<UInt64> { try TestTables.put(w, "t", k &* 7919 % 100_003, testValue(k, size: 400)) }
            try w.commit()
            let meta = s.state.withLock { $0.latest }
            XCTAssertNotEqual(meta.listHead, 0, "a commit of \(meta.listEntries) pages needs continuation pages")
            _ = try s.verify()
            // The next commit frees them.
            let w2 = try s.beginWrite()
            try TestTables.put(w2, "t", 1, [1])
            try w2.commit()
            _ = try s.verify()
            s.close()
        }
        let s = try Storage.open(path: path, options: TestTables.options())
        _ = try s.verify()
        s.close()
    }

    func testBeginReadIsCheap() throws {
        let s = try Storage.open(path: dir.file("db"), options: TestTables.options(.noSync))
        defer { s.close() }
        let n = 20_000
        let start = monotonicNow()
        for _ in 0..<n {
            let r = try s.beginRead()
            r.end()
        }
        let perRead = (monotonicNow() - start) / UInt64(n)
        // Debug build, shared machine: a loose bound that still catches a system call per read.
        XCTAssertLessThan(perRead, 20_000, "beginRead + end took \(perRead) ns")
        print("beginRead + end: \(perRead) ns (debug build)")
    }
}
