// Where a write transaction puts its pages: small commits write theirs in one run of consecutive
// pages (one write call, one place for the flush to wait on) instead of pages of alternate
// versions interleaved; the file still stops growing once enough pages are free; and the run
// bookkeeping itself.
import XCTest
@testable import CoveStorage

final class PageAllocationTests: StorageTestCase {
    /// Single-key commits into a tree of 5,000 keys: after a warm-up, each commit's pages go
    /// out in about one write besides the meta slot's. Taking the lowest free page each time
    /// left the pages of consecutive versions interleaved: three or four writes per commit.
    func testSmallCommitsWriteTheirPagesInOneRun() throws {
        let (s, file) = try openWatched("runs")
        defer { s.close() }
        var w = try s.beginWrite()
        for k in 0..<5000 as Range<UInt64> { try TestTables.put(w, "t", k, testValue(k, size: 100)) }
        try w.commit()
        var rng = SeededRandom(seed: 0x5EED)
        func commitOne(_ i: Int) throws {
            w = try s.beginWrite()
            let key = i % 3 == 0 ? 5000 + UInt64(i) : rng.next() % 5000
            try TestTables.put(w, "t", key, testValue(UInt64(i), size: 100))
            w.setHistoryRecord(Array("commit \(i)".utf8))
            try w.commit()
        }
        for i in 0..<100 { try commitOne(i) }
        let before = file.counts
        let commits = 200
        for i in 100..<(100 + commits) { try commitOne(i) }
        let after = file.counts
        XCTAssertEqual(after.syncs - before.syncs, commits, "one flush per commit")
        // Every commit writes its meta slot once; the rest are runs of pages.
        let runWrites = Double(after.writes - before.writes - commits) / Double(commits)
        XCTAssertLessThan(runWrites, 1.3, "\(runWrites) writes of pages per single-key commit")
        _ = try s.verify()
    }

    /// A single-key commit lists the pages it freed in its meta slot instead of rewriting the
    /// free-space tree, and the next commit reuses them from there; a pinned reader makes the
    /// slot hold its groups back until they spill into the tree; every version verifies.
    func testSmallCommitsListFreedPagesInTheMetaSlot() throws {
        let s = try Storage.open(path: dir.file("recent"), options: TestTables.options(.noSync))
        defer { s.close() }
        var w = try s.beginWrite()
        for k in 0..<2000 as Range<UInt64> { try TestTables.put(w, "t", k, testValue(k, size: 100)) }
        try w.commit()
        var rng = SeededRandom(seed: 0xF7EE)
        var appended: UInt64 = 2000
        func commitOne(_ i: Int, append: Bool = false) throws {
            w = try s.beginWrite()
            let key = append ? appended : rng.next() % 2000
            if append { appended += 1 }
            try TestTables.put(w, "t", key, testValue(UInt64(i), size: 100))
            try w.commit()
        }
        // Keys added at the end (as objects with ascending keys are): after a warm-up, no
        // commit touches the free-space tree, each reuses the pages its base slot lists, and
        // the file keeps its size but for the pages the table gains.
        for i in 0..<20 { try commitOne(i, append: true) }
        var tree = s.state.withLock { $0.latest.freeSpace }
        var size = s.state.withLock { $0.latest.pageCount }
        var treeWrites = 0
        for i in 20..<220 {
            try commitOne(i, append: true)
            let meta = s.state.withLock { $0.latest }
            if meta.freeSpace != tree { treeWrites += 1 }
            tree = meta.freeSpace
            XCTAssertEqual(meta.recentFree.last?.version, meta.version, "commit \(i) lists the pages it freed")
            if i % 50 == 0 { _ = try s.verify() }
        }
        size = s.state.withLock { $0.latest.pageCount } - size
        XCTAssertLessThanOrEqual(treeWrites, 10, "\(treeWrites) of 200 appending commits wrote the free-space tree")
        XCTAssertLessThanOrEqual(size, 16, "200 appends grew the file by \(size) pages")
        // Keys rewritten at random: a commit's pages need not be one run, and the next commit
        // then looks in the tree for one, settling there; the tree and the slots share the
        // free pages, and every version verifies.
        for i in 220..<420 {
            try commitOne(i)
            if i % 50 == 0 { _ = try s.verify() }
        }

        // A reader pins a version: nothing freed since may be reused, so the groups pile up in
        // the slot, and then move to the tree.
        let pinned = try s.beginRead()
        let pinnedContents = try TestTables.contents(pinned, catalog: pinned.catalog, "t")
        let pinnedPages = try TestTables.tablePages(pinned)
        var mostGroups = 0
        var previousGroups = 0
        var spilled = false
        for i in 420..<900 {
            w = try s.beginWrite()
            try TestTables.put(w, "t", appended, testValue(UInt64(i), size: 100))
            appended += 1
            for pgno in w.dirty.keys { XCTAssertFalse(pinnedPages.contains(pgno), "page \(pgno) reused while pinned") }
            try w.commit()
            let meta = s.state.withLock { $0.latest }
            // A slot that lists far fewer groups than its base moved them to the tree.
            if meta.recentFree.count + 5 < previousGroups { spilled = true }
            previousGroups = meta.recentFree.count
            mostGroups = max(mostGroups, meta.recentFree.count)
            if i % 40 == 0 { _ = try s.verify() }
        }
        XCTAssertGreaterThan(mostGroups, 10, "held groups stay in the slot while they fit")
        XCTAssertTrue(spilled, "held groups move to the free-space tree when the slot is full")
        XCTAssertEqual(try TestTables.contents(pinned, catalog: pinned.catalog, "t"), pinnedContents)
        _ = try s.verify()
        pinned.end()
        // Released: the pages pile up no more, and the file grows little (while its free pages
        // are few, allocation may grow it rather than scatter a commit's pages).
        for i in 900..<1000 { try commitOne(i) }
        let grown = s.state.withLock { $0.latest.pageCount }
        for i in 1000..<1200 { try commitOne(i) }
        XCTAssertLessThanOrEqual(s.state.withLock { $0.latest.pageCount }, grown + 64)
        let report = try s.verify()
        XCTAssertGreaterThan(report.freePages, 0)
        // Reopened, the slot's groups are read back and the file still verifies.
        let path = dir.file("recent")
        s.close()
        let again = try Storage.open(path: path, options: TestTables.options(.noSync))
        defer { again.close() }
        XCTAssertEqual(try again.verify().freePages, report.freePages)
        _ = try commitOneOn(again, rng.next() % 2000)
        _ = try again.verify()
    }

    private func commitOneOn(_ s: Storage, _ key: UInt64) throws -> UInt64 {
        let w = try s.beginWrite()
        try TestTables.put(w, "t", key, testValue(key, size: 100))
        return try w.commit()
    }

    /// Looking for runs may grow the file instead of reusing scattered pages, but only while
    /// the free pages are few: under a workload that rewrites random keys for long, the file
    /// settles, at most 4 MiB (1,024 pages) plus a commit's worth above its size after loading.
    func testLookingForRunsKeepsTheFileBounded() throws {
        let s = try Storage.open(path: dir.file("bounded"), options: TestTables.options(.noSync))
        defer { s.close() }
        var w = try s.beginWrite()
        for k in 0..<20_000 as Range<UInt64> { try TestTables.put(w, "t", k, testValue(k, size: 100)) }
        try w.commit()
        let loaded = s.state.withLock { $0.latest.pageCount }
        var rng = SeededRandom(seed: 0xB0B)
        var sizes: [UInt64] = []
        for round in 0..<1500 {
            w = try s.beginWrite()
            for _ in 0..<(1 + round % 7) {
                try TestTables.put(w, "t", rng.next() % 20_000, testValue(rng.next(), size: 100))
            }
            try w.commit()
            if round % 100 == 99 { sizes.append(s.state.withLock { $0.latest.pageCount }) }
        }
        let last = try XCTUnwrap(sizes.last)
        XCTAssertLessThanOrEqual(last, loaded + 1024 + 64, "the file grew from \(loaded) to \(last) pages: \(sizes)")
        // Settled: the last third of the workload did not grow it.
        XCTAssertEqual(sizes[sizes.count - 5], last, "still growing: \(sizes)")
        let report = try s.verify()
        XCTAssertEqual(report.pageCount, last)
    }

    /// Table "t" of 60,000 keys whose leaves alternate in the file with those of a table loaded
    /// in turns with it and then removed: more than the growth bound's 1,024 free pages, one
    /// by one.
    private func scatterFreePages(_ s: Storage) throws {
        var w = try s.beginWrite()
        for k in 0..<60_000 as Range<UInt64> {
            try TestTables.put(w, "t", k, testValue(k, size: 100))
            try TestTables.put(w, "u", k, testValue(k, size: 100))
        }
        try w.commit()
        w = try s.beginWrite()
        for k in 0..<60_000 as Range<UInt64> { try TestTables.remove(w, "u", k) }
        try w.commit()
        XCTAssertGreaterThan(s.state.withLock { $0.latest.freePageCount }, 1100)
    }

    /// Past the growth bound (free pages plenty and scattered, as random updates leave them), a
    /// single-key commit takes its pages from those its base slot lists and leaves the
    /// free-space tree alone: looking through the tree's records for a run they do not hold,
    /// and rewriting them at commit, cost a fifth of such a commit's CPU time. The file keeps
    /// its size and every version verifies.
    func testScatteredFreePagesDoNotSendEveryCommitToTheTree() throws {
        let s = try Storage.open(path: dir.file("scattered"), options: TestTables.options(.noSync))
        defer { s.close() }
        try scatterFreePages(s)
        var rng = SeededRandom(seed: 0x5CA7)
        func commitOne() throws {
            let w = try s.beginWrite()
            try TestTables.put(w, "t", rng.next() % 60_000, testValue(rng.next(), size: 100))
            try w.commit()
        }
        for _ in 0..<50 { try commitOne() }
        var tree = s.state.withLock { $0.latest.freeSpace }
        let size = s.state.withLock { $0.latest.pageCount }
        var treeWrites = 0
        let commits = 300
        for _ in 0..<commits {
            try commitOne()
            let meta = s.state.withLock { $0.latest }
            if meta.freeSpace != tree { treeWrites += 1 }
            tree = meta.freeSpace
        }
        XCTAssertLessThan(treeWrites, commits / 20, "\(treeWrites) of \(commits) commits rewrote the free-space tree")
        XCTAssertEqual(s.state.withLock { $0.latest.pageCount }, size, "the file grew")
        _ = try s.verify()
    }

    /// Past the growth bound a commit of many pages still looks through the free-space records
    /// for runs: with scattered pages at hand and long runs in a record (a table loaded alone,
    /// then removed), it writes its pages in under half as many calls. Taking the scattered
    /// pages one by one would cost it a write call (and a place on the disk) for each.
    func testLargeCommitsStillLookForRuns() throws {
        let (s, file) = try openWatched("large")
        defer { s.close() }
        try scatterFreePages(s)
        var w = try s.beginWrite()
        for k in 0..<20_000 as Range<UInt64> { try TestTables.put(w, "v", k, testValue(k, size: 100)) }
        try w.commit()
        w = try s.beginWrite()
        for k in 0..<20_000 as Range<UInt64> { try TestTables.remove(w, "v", k) }
        try w.commit()
        XCTAssertGreaterThan(s.state.withLock { $0.latest.freePageCount }, 1100)
        var rng = SeededRandom(seed: 0x1A26E)
        for round in 0..<4 {
            let before = file.counts.writes
            w = try s.beginWrite()
            for _ in 0..<100 { try TestTables.put(w, "t", rng.next() % 60_000, testValue(rng.next(), size: 100)) }
            try w.commit()
            let pages = s.pagesLastWritten.load(ordering: .relaxed)
            let writes = file.counts.writes - before
            XCTAssertGreaterThan(pages, 50)
            // The first follows small commits, whose size it goes by; the others look for runs.
            // (About 123 pages in 32-37 calls; one by one they took 116-121.)
            if round > 0 { XCTAssertLessThan(writes * 2, pages, "round \(round): \(pages) pages in \(writes) write calls") }
        }
        _ = try s.verify()
    }

    func testFreeRunsJoinConsecutivePagesAndHandThemOutInOrder() {
        var runs = FreeRuns()
        XCTAssertTrue(runs.isEmpty)
        XCTAssertNil(runs.longestRun())
        runs.add([12, 5, 7, 6, 20, 13, 14, 15])
        XCTAssertEqual(runs.runs.map { [$0.start, UInt64($0.count)] }, [[5, 3], [12, 4], [20, 1]])
        XCTAssertEqual(runs.pageCount, 8)
        XCTAssertEqual(runs.firstRun(atLeast: 3), 0)
        XCTAssertEqual(runs.firstRun(atLeast: 4), 1)
        XCTAssertNil(runs.firstRun(atLeast: 5))
        XCTAssertEqual(runs.longestRun(), 1)
        XCTAssertEqual(runs.take(fromRun: 1), 12)
        XCTAssertEqual(runs.take(fromRun: 1), 13)
        XCTAssertEqual(runs.run(startingAt: 14), 1)
        XCTAssertNil(runs.run(startingAt: 13))
        XCTAssertEqual(runs.longestRun(), 0, "the lowest of the longest")
        XCTAssertEqual(runs.take(fromRun: 2), 20)
        XCTAssertNil(runs.run(startingAt: 21), "a spent run is not offered")
        XCTAssertEqual(runs.pages(), [5, 6, 7, 14, 15])
        // Adding rebuilds: pages that now touch join one run.
        runs.add([8, 16, 4])
        XCTAssertEqual(runs.runs.map { [$0.start, UInt64($0.count)] }, [[4, 5], [14, 3]])
        XCTAssertEqual(runs.pageCount, 8)
        // Ascending pages (as a record decodes them) merge in place, around and between runs.
        XCTAssertEqual(runs.take(fromRun: 1), 14)
        runs.add([1, 2, 9, 11, 30])
        XCTAssertEqual(runs.runs.map { [$0.start, UInt64($0.count)] }, [[1, 2], [4, 6], [11, 1], [15, 2], [30, 1]])
        XCTAssertEqual(runs.pageCount, 12)
        XCTAssertEqual(runs.pages(mergedWith: [0, 3, 13, 40]), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 13, 15, 16, 30, 40])
        XCTAssertEqual(runs.pages(mergedWith: []), runs.pages())
    }
}
