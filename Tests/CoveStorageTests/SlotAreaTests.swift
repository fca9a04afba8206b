// The slot areas (docs/FORMAT.md, "Slot areas"): a new file keeps its second meta slot at page 8,
// with seven free pages after each slot; commits put the pages they rewrite again and again right
// after their slot and write both in one call; general allocation leaves the areas alone, so a
// workload that stops rewriting a page costs at most its area; and a power loss that keeps the
// slot of such a write without its pages (or the pages without the slot) opens the version
// before, as any torn commit does.
import XCTest
import Glibc
@testable import CoveStorage
import CoveStorageTesting

final class SlotAreaTests: StorageTestCase {
    /// A new file: 16 pages, the slots at pages 0 and 8 (version 0 and 1), the other pages free;
    /// nothing at page 1 decodes as a slot.
    func testANewFileHasItsSlotsAtPages0And8() throws {
        let path = dir.file("new")
        let s = try Storage.open(path: path, options: TestTables.options())
        let report = try s.verify()
        XCTAssertEqual(report.pageCount, 16)
        XCTAssertEqual(report.freePages, 14)
        XCTAssertEqual(report.livePages, 0)
        s.close()
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        var versions: [UInt64?] = []
        for page in [0, 1, 8] {
            var bytes = [UInt8](repeating: 0, count: pageSize)
            XCTAssertEqual(pread(fd, &bytes, pageSize, off_t(page * pageSize)), pageSize)
            if case .valid(let meta) = bytes.withUnsafeBytes({ MetaSlot.decode($0.baseAddress!) }) {
                XCTAssertEqual(meta.secondSlot, 8)
                versions.append(meta.version)
            } else {
                versions.append(nil)
            }
        }
        XCTAssertEqual(versions, [0, nil, 1])
    }

    /// Appending single-key commits: after a warm-up every commit writes its slot and its pages
    /// in one call (the slot's area holds the leaf and the root the commit before wrote too),
    /// and the file grows by the pages the table gains, not by pages the areas hold back.
    func testAppendingCommitsWriteTheirSlotAndPagesInOneCall() throws {
        let (s, file) = try openWatched("appends")
        defer { s.close() }
        let table = try AppendedTable(s, keys: 2000)
        for _ in 0..<20 { try table.append() }
        let before = file.counts
        let oneRunBefore = s.commitsInOneRun()
        let sizeBefore = s.state.withLock { $0.latest.pageCount }
        let commits = 1000
        for i in 0..<commits {
            try table.append()
            if i % 250 == 0 { _ = try s.verify() }
        }
        let after = file.counts
        let oneRun = s.commitsInOneRun() - oneRunBefore
        // Leaf splits (one every 35 appends) write the full half elsewhere.
        XCTAssertGreaterThan(oneRun, commits * 9 / 10, "\(oneRun) of \(commits) commits wrote slot and pages in one call")
        let writes = Double(after.writes - before.writes) / Double(commits)
        XCTAssertLessThan(writes, 1.1, "\(writes) writes per appending commit")
        XCTAssertEqual(after.syncs - before.syncs, commits)
        let report = try s.verify()
        let grown = report.pageCount - sizeBefore
        // 1,000 values of 100 bytes fill about 30 leaves.
        XCTAssertLessThan(grown, 64, "1,000 appends grew the file by \(grown) pages")
        XCTAssertLessThan(report.freePages, 48, "\(report.freePages) pages free after the appends")
    }

    /// A reader pinning a version keeps the pages the commits after it free out of reach, the
    /// slot areas' among them: those commits write their pages elsewhere and their slot apart,
    /// never a page the reader can see; once it ends, commits go back to one call.
    func testAPinnedReaderSendsCommitsOutOfTheArea() throws {
        let s = try Storage.open(path: dir.file("pinned"), options: TestTables.options(.noSync))
        defer { s.close() }
        let table = try AppendedTable(s, keys: 500)
        for _ in 0..<10 { try table.append() }
        let pinned = try s.beginRead()
        let pinnedPages = try TestTables.tablePages(pinned)
        let pinnedContents = try TestTables.contents(pinned, catalog: pinned.catalog, "t")
        let oneRunBefore = s.commitsInOneRun()
        for _ in 0..<50 {
            try table.append { w in
                for pgno in w.dirty.keys { XCTAssertFalse(pinnedPages.contains(pgno), "page \(pgno) reused while pinned") }
            }
        }
        // Only the first two, into areas free before the pin, could take their area.
        XCTAssertLessThanOrEqual(s.commitsInOneRun() - oneRunBefore, 2)
        XCTAssertEqual(try TestTables.contents(pinned, catalog: pinned.catalog, "t"), pinnedContents)
        pinned.end()
        _ = try s.verify()
        let oneRunUnpinned = s.commitsInOneRun()
        for _ in 0..<50 { try table.append() }
        XCTAssertGreaterThan(s.commitsInOneRun() - oneRunUnpinned, 40, "commits take their areas again")
        _ = try s.verify()
    }

    /// Commits that stop rewriting a page of an area (random keys after appends) leave that
    /// page where it is until a commit rewrites it: the commits of that slot then write as they
    /// would without areas (the pages in a run of their own, the slot apart), never worse;
    /// every version verifies, and the file does not grow for it.
    func testAWorkloadThatChangesLeavesTheAreasConsistent() throws {
        let (s, file) = try openWatched("mixed")
        defer { s.close() }
        var w = try s.beginWrite()
        for k in 0..<3000 as Range<UInt64> { try TestTables.put(w, "t", k, testValue(k, size: 100)) }
        try w.commit()
        var rng = SeededRandom(seed: 0xA2EA)
        var model: [UInt64: [UInt8]] = [:]
        var next: UInt64 = 3000
        for phase in 0..<6 {
            let before = file.counts
            for i in 0..<150 {
                w = try s.beginWrite()
                let key: UInt64
                if phase % 2 == 0 {
                    key = next
                    next += 1
                } else {
                    key = rng.next() % next
                }
                let value = testValue(UInt64(phase * 1000 + i), size: 100)
                try TestTables.put(w, "t", key, value)
                model[key] = value
                try w.commit()
            }
            let writes = Double(file.counts.writes - before.writes) / 150
            // Random keys: the pages' run and the slot, as without areas (2.0). Appends: one
            // call while the areas are free (1.04 and 1.05 in the first two append phases); in
            // the last, a page of the random phases still holds the start of one slot's area,
            // and that slot's commits write in two (1.55).
            let limit = phase % 2 == 1 ? 2.1 : phase == 0 ? 1.3 : 1.9
            XCTAssertLessThan(writes, limit, "phase \(phase): \(writes) writes a commit")
            let r = try s.beginRead()
            let contents = try TestTables.contents(r, catalog: r.catalog, "t")
            r.end()
            for (k, v) in model { XCTAssertEqual(contents[k], v, "phase \(phase), key \(k)") }
            _ = try s.verify()
        }
        XCTAssertLessThan(s.state.withLock { $0.latest.pageCount }, 400)
    }

    /// Power loss during a commit that wrote its slot and pages in one call: a crash that kept
    /// the slot's sectors but not all the pages', or the pages' but not the slot's, opens the
    /// version before; one that kept all of it opens the commit. Every image verifies.
    func testATornOneCallCommitFallsBackToTheVersionBefore() throws {
        let (s, file) = try openWatched("traced", recordTrace: true)
        var models: [UInt64: [UInt64: [UInt8]]] = [1: [:]]
        var model: [UInt64: [UInt8]] = [:]
        // Per commit: where its trace entries end, its version, and whether its one write led
        // with the slot.
        var commits: [(end: Int, version: UInt64, oneCall: Bool)] = []
        for i in 0..<12 as Range<UInt64> {
            let runs = s.commitsInOneRun()
            let w = try s.beginWrite()
            let value = testValue(i, size: 300)
            try TestTables.put(w, "t", i, value)
            model[i] = value
            let v = try w.commit()
            models[v] = model
            commits.append((file.trace.count, v, s.commitsInOneRun() > runs))
        }
        s.close()
        let trace = file.trace
        let crash = dir.file("crash")
        var checked = 0
        for (n, c) in commits.enumerated() where c.oneCall && n > 0 {
            // The commit's trace: its one write, then its flush (a commit that grew the file
            // also extended it first).
            guard case .write(let offset, let bytes) = trace[c.end - 2], case .sync = trace[c.end - 1] else {
                XCTFail("version \(c.version): not one write and a flush")
                continue
            }
            if case .write = trace[c.end - 3] { XCTFail("version \(c.version) wrote twice") }
            XCTAssertEqual(offset % UInt64(pageSize), 0)
            XCTAssertGreaterThan(bytes.count, pageSize, "the slot and at least one page")
            let slotSectors = UInt64(pageSize / 512)
            for (fate, expected) in [(FaultInjectingFile.PendingFate.torn(sectorMask: (1 << slotSectors) - 1), c.version - 1),
                                     (.torn(sectorMask: ~((1 << slotSectors) - 1)), c.version - 1),
                                     (.lost, c.version - 1),
                                     (.kept, c.version)] {
                let image = FaultInjectingFile.crashImage(trace: trace, at: c.end - 1, fate: { _, _ in fate })
                writeFile(crash, image)
                let reopened = try Storage.open(path: crash, options: TestTables.options(.full))
                XCTAssertEqual(reopened.latestVersion(), expected, "version \(c.version), \(fate)")
                _ = try reopened.verify()
                let r = try reopened.beginRead()
                XCTAssertEqual(try TestTables.contents(r, catalog: r.catalog, "t"), models[expected] ?? [:])
                r.end()
                reopened.close()
                checked += 1
            }
        }
        XCTAssertGreaterThan(checked, 20, "most of the commits wrote in one call")
    }

    /// Table "t" of a storage, filled with `keys` keys of 100-byte values, then one key added at
    /// its end per commit.
    private final class AppendedTable {
        let storage: Storage
        var next: UInt64

        init(_ storage: Storage, keys: UInt64) throws {
            self.storage = storage
            next = keys
            let w = try storage.beginWrite()
            for k in 0..<keys { try TestTables.put(w, "t", k, testValue(k, size: 100)) }
            try w.commit()
        }

        /// Commits the next key; `check` sees the transaction before it commits.
        func append(check: (WriteTransaction) -> Void = { _ in }) throws {
            let w = try storage.beginWrite()
            try TestTables.put(w, "t", next, testValue(next, size: 100))
            next += 1
            check(w)
            try w.commit()
        }
    }
}
