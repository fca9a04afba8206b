@testable import CoveStorage
import XCTest
import Glibc

final class PageBuffersTests: XCTestCase {
    /// Every buffer handed out is aligned, zeroed and distinct from the others outstanding,
    /// whether it is new memory, a buffer given back, or one reused after a reset.
    func testBuffersAreZeroedAlignedAndDistinct() throws {
        let buffers = PageBuffers()
        var rng = SeededRandom(seed: 5)
        for round in 0..<3 {
            var outstanding: [UnsafeMutableRawPointer] = []
            var seen = Set<UInt>()
            // Past the first chunks and into 2 MiB ones; a few given back on the way.
            for i in 0..<1500 {
                let b = try buffers.take()
                XCTAssertEqual(UInt(bitPattern: b) % UInt(pageSize), 0)
                let bytes = UnsafeRawBufferPointer(start: b, count: pageSize)
                XCTAssertTrue(bytes.allSatisfy { $0 == 0 }, "round \(round) buffer \(i) is not zeroed")
                XCTAssertTrue(seen.insert(UInt(bitPattern: b)).inserted, "round \(round) buffer \(i) handed out twice")
                memset(b, 0xA5, pageSize)
                outstanding.append(b)
                if rng.below(5) == 0 {
                    let back = outstanding.remove(at: rng.below(outstanding.count))
                    seen.remove(UInt(bitPattern: back))
                    buffers.give(back)
                }
            }
            buffers.reset()
        }
    }

    /// A storage's write transactions reuse the same memory and never see the bytes an earlier
    /// transaction left in it.
    func testTransactionsSeeZeroedPages() throws {
        let storage = try Storage.open(path: nil)
        var addresses = Set<UInt>()
        for round in 0..<4 {
            let txn = try storage.beginWrite()
            for _ in 0..<40 {
                let (_, page) = try txn.allocate()
                let bytes = UnsafeRawBufferPointer(start: page, count: pageSize)
                XCTAssertTrue(bytes.allSatisfy { $0 == 0 }, "round \(round)")
                addresses.insert(UInt(bitPattern: page))
                memset(page, 0x5A, pageSize)
            }
            txn.cancel()
        }
        XCTAssertEqual(addresses.count, 40, "the buffers of the first transaction serve the next ones")
    }

    /// The table of the pages a transaction allocated comes with the buffers: the next
    /// transaction finds it empty (and back at its first size after a bulk one), and a
    /// transaction that ended no longer sees pages through it, the next one's included.
    func testTheDirtyPageTableIsKeptWithTheBuffers() throws {
        let storage = try Storage.open(path: nil)
        let first = try storage.beginWrite()
        let (firstPage, _) = try first.allocate()
        let table = first.dirtyTable
        XCTAssertTrue(first.isWritable(firstPage))
        first.cancel()
        XCTAssertFalse(first.isWritable(firstPage))
        let second = try storage.beginWrite()
        XCTAssertEqual(second.dirtyTable, table, "the table is handed over with the buffers")
        XCTAssertEqual(second.dirty.count, 0)
        var pages: [PageNumber] = []
        for _ in 0..<3000 { pages.append(try second.allocate().0) }
        XCTAssertGreaterThan(second.dirty.capacity, PageBuffers.keptTableSlots)
        for pgno in pages.prefix(50) {
            XCTAssertTrue(second.isWritable(pgno))
            XCTAssertFalse(first.isWritable(pgno), "an ended transaction sees page \(pgno) of the next one")
        }
        second.cancel()
        let third = try storage.beginWrite()
        defer { third.cancel() }
        XCTAssertEqual(third.dirty.count, 0)
        XCTAssertLessThanOrEqual(third.dirty.capacity, PageBuffers.keptTableSlots)
        for pgno in pages.prefix(50) { XCTAssertFalse(third.isWritable(pgno)) }
    }
}
