// Free pages at the end of the file given back at commit: once a quarter of a file's pages are
// free and reusable, a commit lowers the page count below the free run that ends the file and,
// once durable and when no other handle has the file open, shortens the file. Pages a pinned
// reader can still see are never given back; a power loss around the shortening leaves a file
// that opens at the last flushed version.
import XCTest
import Glibc
@testable import CoveStorage
import CoveStorageTesting

final class TailGiveBackTests: StorageTestCase {
    private func fileSize(_ path: String) -> UInt64 {
        var st = stat()
        return stat(path, &st) == 0 ? UInt64(st.st_size) : 0
    }

    private func pageCount(_ s: Storage) -> UInt64 {
        s.state.withLock { $0.latest.pageCount }
    }

    /// Fills a table of `n` keys of 200 bytes (a few hundred pages), then deletes all but the
    /// first `keep`, in one commit each.
    private func fillAndEmpty(_ s: Storage, _ n: UInt64, keeping keep: UInt64) throws {
        var w = try s.beginWrite()
        for k in 0..<n { try TestTables.put(w, "t", k, testValue(k, size: 200)) }
        try w.commit()
        w = try s.beginWrite()
        for k in keep..<n { try TestTables.remove(w, "t", k) }
        try w.commit()
    }

    /// Small commits after a mass delete: the pages at the end come back, the file shrinks to
    /// about what the remaining keys need, and every version verifies and reads back.
    func testAFileEmptiedShrinksAtTheNextCommits() throws {
        let path = dir.file("shrink")
        let s = try Storage.open(path: path, options: TestTables.options(.full))
        defer { s.close() }
        try fillAndEmpty(s, 6000, keeping: 10)
        let full = pageCount(s)
        let fullSize = fileSize(path)
        XCTAssertGreaterThan(full, 300)
        for i in 0..<4 {
            let w = try s.beginWrite()
            try TestTables.put(w, "t", UInt64(i), testValue(UInt64(i) + 100, size: 200))
            try w.commit()
            _ = try s.verify()
        }
        let now = pageCount(s)
        XCTAssertLessThan(now, 64, "the pages past the last one in use were given back (\(full) -> \(now))")
        XCTAssertEqual(fileSize(path), now * UInt64(pageSize), "the file shortened to its pages in use")
        XCTAssertLessThan(fileSize(path), fullSize / 4)
        let r = try s.beginRead()
        let contents = try TestTables.contents(r, catalog: r.catalog, "t")
        r.end()
        XCTAssertEqual(contents.count, 10)
        XCTAssertEqual(contents[2], testValue(102, size: 200))
        // Growing again after shrinking: the file extends and every page reads.
        var w = try s.beginWrite()
        for k in 1000..<3000 as Range<UInt64> { try TestTables.put(w, "t", k, testValue(k, size: 200)) }
        try w.commit()
        _ = try s.verify()
        s.close()
        let reopened = try Storage.open(path: path, options: TestTables.options(.full))
        defer { reopened.close() }
        _ = try reopened.verify()
        let again = try reopened.beginRead()
        XCTAssertEqual(try TestTables.contents(again, catalog: again.catalog, "t").count, 2010)
        again.end()
        w = try reopened.beginWrite()
        try TestTables.put(w, "t", 1, testValue(1, size: 10))
        try w.commit()
    }

    /// A reader pinned before the delete keeps every page it can reach: nothing it sees is
    /// given back while it reads, and once it ends the file shrinks.
    func testAPinnedReaderKeepsItsPages() throws {
        let path = dir.file("pinned")
        let s = try Storage.open(path: path, options: TestTables.options(.noSync))
        defer { s.close() }
        var w = try s.beginWrite()
        for k in 0..<6000 as Range<UInt64> { try TestTables.put(w, "t", k, testValue(k, size: 200)) }
        try w.commit()
        let reader = try s.beginRead()
        let seen = try TestTables.tablePages(reader)
        w = try s.beginWrite()
        for k in 10..<6000 as Range<UInt64> { try TestTables.remove(w, "t", k) }
        try w.commit()
        for i in 0..<4 {
            w = try s.beginWrite()
            try TestTables.put(w, "t", UInt64(i), testValue(UInt64(i), size: 50))
            try w.commit()
            XCTAssertGreaterThan(pageCount(s), seen.max() ?? 0, "a page the reader reaches stays in the file")
        }
        XCTAssertEqual(try TestTables.contents(reader, catalog: reader.catalog, "t").count, 6000)
        reader.end()
        for i in 0..<4 {
            w = try s.beginWrite()
            try TestTables.put(w, "t", UInt64(i), testValue(UInt64(i) + 7, size: 50))
            try w.commit()
        }
        XCTAssertLessThan(pageCount(s), 64)
        XCTAssertEqual(fileSize(path), pageCount(s) * UInt64(pageSize))
        _ = try s.verify()
    }

    /// A file growing under a pinned reader has a quarter of its pages free at every commit,
    /// none of them at the end: the looks that find nothing are repeated only as the free
    /// pages grow by a quarter (reading every free-space record at each commit would make the
    /// growth quadratic).
    func testLooksAtTheEndAreRareWhileAFileGrows() throws {
        let s = try Storage.open(path: dir.file("growing"), options: TestTables.options(.noSync))
        defer { s.close() }
        var w = try s.beginWrite()
        for k in 0..<500 as Range<UInt64> { try TestTables.put(w, "t", k, testValue(k, size: 200)) }
        try w.commit()
        let reader = try s.beginRead()
        for round in 0..<300 {
            w = try s.beginWrite()
            for k in stride(from: UInt64(round % 7), to: 500, by: 7) { try TestTables.put(w, "t", k, testValue(k + UInt64(round), size: 200)) }
            try w.commit()
        }
        let looks = s.tailLooks.load(ordering: .relaxed)
        XCTAssertGreaterThan(looks, 0)
        XCTAssertLessThan(looks, 40, "\(looks) looks in 300 commits")
        XCTAssertEqual(try TestTables.contents(reader, catalog: reader.catalog, "t").count, 500)
        reader.end()
        _ = try s.verify()
    }

    /// Another handle of the file: the page count still comes down, but the file keeps its
    /// length (that handle's writer trusts the size it knows); the first commit once it has
    /// closed and pages come back shortens it.
    func testAnotherHandleKeepsTheFileLength() throws {
        let path = dir.file("shared")
        let s = try Storage.open(path: path, options: TestTables.options(.noSync))
        defer { s.close() }
        var other: Storage? = try Storage.open(path: path, options: TestTables.options(.noSync))
        try fillAndEmpty(s, 6000, keeping: 10)
        let length = fileSize(path)
        for i in 0..<4 {
            let w = try s.beginWrite()
            try TestTables.put(w, "t", UInt64(i), testValue(UInt64(i), size: 50))
            try w.commit()
        }
        XCTAssertLessThan(pageCount(s), 64)
        XCTAssertEqual(fileSize(path), length, "not shortened while another handle has it open")
        let r = try XCTUnwrap(other).beginRead()
        XCTAssertEqual(try TestTables.contents(r, catalog: r.catalog, "t").count, 10)
        r.end()
        // Gone from the lock file at once (a closed handle otherwise leaves when released).
        other?.closeAndLeave()
        other = nil
        // Pages freed again, then given back: this time the file shortens.
        var w = try s.beginWrite()
        for k in 100..<3000 as Range<UInt64> { try TestTables.put(w, "t", k, testValue(k, size: 200)) }
        try w.commit()
        w = try s.beginWrite()
        for k in 100..<3000 as Range<UInt64> { try TestTables.remove(w, "t", k) }
        try w.commit()
        for i in 0..<4 {
            w = try s.beginWrite()
            try TestTables.put(w, "t", UInt64(i), testValue(UInt64(i) + 3, size: 50))
            try w.commit()
        }
        XCTAssertEqual(fileSize(path), pageCount(s) * UInt64(pageSize))
        _ = try s.verify()
    }

    /// Power loss at every point of the commits that give pages back and shorten the file:
    /// the file opens at the last flushed version or the one being committed, and verifies.
    func testPowerLossAroundShortening() throws {
        let (s, file) = try openWatched("traced", recordTrace: true)
        var model: [UInt64: [UInt8]] = [:]
        var w = try s.beginWrite()
        for k in 0..<3000 as Range<UInt64> {
            try TestTables.put(w, "t", k, testValue(k, size: 200))
            model[k] = testValue(k, size: 200)
        }
        try w.commit()
        w = try s.beginWrite()
        for k in 5..<3000 as Range<UInt64> {
            try TestTables.remove(w, "t", k)
            model[k] = nil
        }
        try w.commit()
        var commits: [(before: Int, after: Int, version: UInt64, model: [UInt64: [UInt8]])] = []
        for i in 0..<4 {
            let before = file.trace.count
            w = try s.beginWrite()
            try TestTables.put(w, "t", UInt64(i), testValue(UInt64(i) + 50, size: 200))
            model[UInt64(i)] = testValue(UInt64(i) + 50, size: 200)
            let v = try w.commit()
            commits.append((before, file.trace.count, v, model))
        }
        let shortened = file.trace.contains { if case .truncate = $0 { return true } else { return false } }
        XCTAssertTrue(shortened, "a commit shortened the file")
        s.close()
        let trace = file.trace
        let crash = dir.file("crash")
        var seed: UInt64 = 0xC0FFEE
        func next() -> UInt64 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return seed >> 29
        }
        for point in commits[0].before...trace.count {
            let synced = commits.last { $0.after <= point }?.version ?? (commits[0].version - 1)
            let inFlight = commits.first { $0.before < point && point < $0.after }?.version
            let image = FaultInjectingFile.crashImage(trace: trace, at: point, fate: { _, _ in
                switch next() % 4 {
                case 0: return .lost
                case 1: return .torn(sectorMask: next() << 32 | next())
                default: return .kept
                }
            }, order: { $0.shuffled() })
            let context = "point \(point) of \(trace.count)"
            guard let reopened = openCrashImage(image, at: crash, context, synced: synced, inFlight: inFlight) else { continue }
            let v = reopened.latestVersion()
            XCTAssertNoThrow(try reopened.verify(), context)
            if let expected = commits.first(where: { $0.version == v })?.model {
                let r = try reopened.beginRead()
                XCTAssertEqual(try TestTables.contents(r, catalog: r.catalog, "t"), expected, context)
                r.end()
            }
            reopened.close()
        }
    }
}
