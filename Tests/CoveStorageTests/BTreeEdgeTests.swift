// Large values in overflow pages, damaged pages, page walks by version, fill under sequential
// insertion, argument errors and removeAll: the B+tree behaviours the randomized model tests
// reach only by chance.
import XCTest
@testable import CoveStorage
import CoveStorageTesting

final class BTreeEdgeTests: XCTestCase {
    private func pattern(_ count: Int, seed: UInt64) -> [UInt8] {
        var rng = SeededRandom(seed: seed)
        return rng.bytes(count)
    }

    private func same(_ a: [UInt8]?, _ b: [UInt8]) -> Bool {
        guard let a, a.count == b.count else { return false }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in x.elementsEqual(y) } }
    }

    // MARK: - Insert-if-absent

    func testInsertLeavesAnExistingEntryAlone() throws {
        let store = MemoryPageStore()
        var tree = BTree(store: store, root: .empty, keyKind: .bytes)
        var rng = SeededRandom(seed: 9)
        var model: [[UInt8]: [UInt8]] = [:]
        for _ in 0..<3000 {
            let key = rng.bytes(1 + rng.below(12))
            let value = rng.bytes(rng.below(40))
            let added = try tree.insert(key, value)
            XCTAssertEqual(added, model[key] == nil)
            if model[key] == nil { model[key] = value }
        }
        try tree.verify()
        XCTAssertEqual(tree.count, UInt64(model.count))
        for (key, value) in model { XCTAssertTrue(same(try tree.get(key), value)) }
        XCTAssertThrowsError(try tree.insert([UInt8](repeating: 1, count: 2000), []))
        var numbers = BTree(store: store, root: .empty, keyKind: .u64)
        XCTAssertThrowsError(try numbers.insert([1], [2]))
    }

    // MARK: - Neighbours

    /// The floor and next entries against a sorted model, over a tree of many leaves thinned by
    /// removals (leaves whose first key sits above their separator send the floor to the leaf
    /// on the left), at keys present, absent, and beyond both ends.
    func testNeighboursMatchASortedModel() throws {
        let store = MemoryPageStore()
        var tree = BTree(store: store, root: .empty, keyKind: .u64)
        var rng = SeededRandom(seed: 31)
        var model = Set<UInt64>()
        for _ in 0..<6000 {
            let key = 10 + rng.next() % 20_000
            try tree.put(key, withUnsafeBytes(of: key) { Array($0) })
            model.insert(key)
        }
        for key in model.sorted() where rng.below(3) == 0 || (key / 500) % 4 == 1 {
            XCTAssertTrue(try tree.remove(key))
            model.remove(key)
        }
        try tree.verify()
        let sorted = model.sorted()
        var probes: [UInt64] = [0, 9, 10, 11, 20_010, 20_011, UInt64.max]
        for _ in 0..<3000 { probes.append(rng.next() % 20_020) }
        for probe in probes {
            let floor = sorted.last { $0 <= probe }
            let next = sorted.first { $0 > probe }
            let found = try tree.withNeighbours(of: probe) { f, n -> (UInt64?, UInt64?) in
                if let f { XCTAssertEqual(f.value.loadUnaligned(as: UInt64.self), f.key) }
                if let n { XCTAssertEqual(n.value.loadUnaligned(as: UInt64.self), n.key) }
                return (f?.key, n?.key)
            }
            XCTAssertEqual(found.0, floor, "floor of \(probe)")
            XCTAssertEqual(found.1, next, "next of \(probe)")
            let floorOnly = try tree.withNeighbours(of: probe, next: false) { f, n -> UInt64? in
                XCTAssertNil(n)
                return f?.key
            }
            XCTAssertEqual(floorOnly, floor)
        }
        let empty = BTree(store: store, root: .empty, keyKind: .u64)
        XCTAssertTrue(try empty.withNeighbours(of: 5) { f, n in f == nil && n == nil })
        try tree.put(7, [UInt8](repeating: 1, count: 3000))
        XCTAssertThrowsError(try tree.withNeighbours(of: 7) { _, _ in 0 })
        let bytes = BTree(store: store, root: .empty, keyKind: .bytes)
        XCTAssertThrowsError(try bytes.withNeighbours(of: 1) { _, _ in 0 })
    }

    // MARK: - Overflow values

    func testTenMegabyteValueRoundTrips() throws {
        let store = MemoryPageStore()
        var tree = BTree(store: store, root: .empty, keyKind: .u64)
        let big = pattern(10 << 20, seed: 5)
        XCTAssertTrue(try tree.put(42, big))
        try tree.put(41, [1, 2, 3])
        try tree.put(43, [4])
        store.commit()
        try tree.verify()
        XCTAssertTrue(same(try tree.get(42), big))
        let length = try tree.withValue(42) { $0.count }
        XCTAssertEqual(length, big.count)
        var scanned: [UInt64] = []
        try tree.forEach(from: nil, reverse: false) { key, value in
            scanned.append(key)
            if key == 42 { XCTAssertEqual(value.count, big.count) }
            return true
        }
        XCTAssertEqual(scanned, [41, 42, 43])
        var pages = 0
        try tree.forEachPage { _ in pages += 1 }
        XCTAssertEqual(pages, 1 + (big.count + 4063) / 4064, "one leaf and the overflow chain")
        try assertNoLeak(tree, "10 MB value")

        XCTAssertTrue(try tree.remove(42))
        try tree.verify()
        try assertNoLeak(tree, "10 MB value removed")
        store.commit()
        XCTAssertEqual(store.livePageCount, 1)
    }

    func testValuesAroundTheInlineLimitAndPageBoundaries() throws {
        let store = MemoryPageStore()
        var tree = BTree(store: store, root: .empty, keyKind: .bytes)
        let overflowData = BTreeLayout.overflowCapacity
        let sizes = [0, 1, 24, 25, 900, 1000, 1005, 1006, 1007, 1020, overflowData - 1, overflowData, overflowData + 1,
                     2 * overflowData, 2 * overflowData + 1, 70_000]
        for (i, size) in sizes.enumerated() {
            // Keys of all lengths, up to the maximum, with each size.
            let key = [UInt8](repeating: UInt8(i), count: [1, 8, 200, 1024][i % 4])
            try tree.put(key, pattern(size, seed: UInt64(size)))
            try tree.verify()
        }
        store.commit()
        for (i, size) in sizes.enumerated() {
            let key = [UInt8](repeating: UInt8(i), count: [1, 8, 200, 1024][i % 4])
            XCTAssertTrue(same(try tree.get(key), pattern(size, seed: UInt64(size))), "value of \(size) bytes")
        }
        // Replace every value by one on the other side of the limit, and back.
        for round in 0..<2 {
            for (i, size) in sizes.enumerated() {
                let key = [UInt8](repeating: UInt8(i), count: [1, 8, 200, 1024][i % 4])
                let newSize = sizes[sizes.count - 1 - i]
                XCTAssertFalse(try tree.put(key, pattern(newSize, seed: UInt64(newSize) + 1)))
                try tree.verify()
                XCTAssertTrue(same(try tree.get(key), pattern(newSize, seed: UInt64(newSize) + 1)), "round \(round) size \(newSize)")
                try tree.put(key, pattern(size, seed: UInt64(size)))
            }
            store.commit()
            try assertNoLeak(tree, "round \(round)")
        }
        try tree.removeAll()
        XCTAssertEqual(tree.root, .empty)
        store.commit()
        XCTAssertEqual(store.livePageCount, 0)
    }

    func testOldSnapshotKeepsItsOverflowValue() throws {
        let store = MemoryPageStore()
        var tree = BTree(store: store, root: .empty, keyKind: .u64)
        let first = pattern(50_000, seed: 1)
        try tree.put(7, first)
        store.commit()
        let old = tree.root
        store.pin(store.committedVersion)
        try tree.put(7, pattern(60_000, seed: 2))
        store.commit()
        try tree.remove(7)
        try tree.put(8, pattern(80_000, seed: 3))   // would reuse the old chain's pages if unpinned
        store.commit()
        let reader = BTree(store: store, root: old, keyKind: .u64)
        try reader.verify()
        XCTAssertTrue(same(try reader.get(7), first))
        store.unpin(old.page.version)
        try assertNoLeak(tree, "after unpin")
    }

    func testInlineLimitAndSameSizeRewritesAllocateNothing() throws {
        let store = MemoryPageStore()
        var tree = BTree(store: store, root: .empty, keyKind: .u64)
        let limit = tree.inlineValueLimit()
        XCTAssertEqual(limit, 1006)
        for i in 0..<400 { try tree.put(UInt64(i), pattern(limit, seed: UInt64(i))) }
        var overflow = 0
        try tree.forEachPage { pgno throws(StorageError) in
            if PageHeader.type(try store.page(pgno)) == PageType.overflow.rawValue { overflow += 1 }
        }
        XCTAssertEqual(overflow, 0, "values of the limit stay inline")
        try tree.put(1000, pattern(limit + 1, seed: 1))
        var pages = 0
        try tree.forEachPage { _ in pages += 1 }
        try tree.remove(1000)
        var fewer = 0
        try tree.forEachPage { _ in fewer += 1 }
        XCTAssertEqual(pages, fewer + 1, "a value one byte over the limit takes an overflow page")

        // Rewriting values of the same size in leaves this transaction wrote: no page moves.
        store.commit()
        for i in 0..<400 { try tree.put(UInt64(i), pattern(limit, seed: UInt64(i) + 9)) }   // copies the leaves once
        let (allocations, frees) = (store.allocations, store.frees)
        for round in 0..<3 {
            for i in 0..<400 { try tree.put(UInt64(i), pattern(limit, seed: UInt64(i + round))) }
        }
        XCTAssertEqual(store.allocations, allocations)
        XCTAssertEqual(store.frees, frees)
        try tree.verify()

        var bytes = BTree(store: store, root: .empty, keyKind: .bytes)
        XCTAssertEqual(bytes.inlineValueLimit(keyLength: 10), 1016 - 12 - 2)
        XCTAssertEqual(bytes.inlineValueLimit(keyLength: 1024), 24)
        try bytes.put([UInt8](repeating: 3, count: 1024), pattern(24, seed: 3))
        try bytes.put([UInt8](repeating: 4, count: 1024), pattern(25, seed: 4))
        try bytes.verify()
    }

    func testRollbackRestoresTheCommittedTree() throws {
        let store = MemoryPageStore()
        var tree = BTree(store: store, root: .empty, keyKind: .u64)
        for i in 0..<2000 { try tree.put(UInt64(i), pattern(i % 100 == 0 ? 5000 : 30, seed: UInt64(i))) }
        store.commit()
        let committed = tree.root
        let live = store.livePageCount
        for i in 0..<2000 where i % 3 == 0 { try tree.remove(UInt64(i)) }
        for i in 2000..<2500 { try tree.put(UInt64(i), pattern(40, seed: UInt64(i))) }
        store.rollback()
        tree = BTree(store: store, root: committed, keyKind: .u64)
        try tree.verify()
        XCTAssertEqual(store.livePageCount, live)
        try assertNoLeak(tree, "after rollback")
        for i in stride(from: 0, to: 2000, by: 7) {
            XCTAssertTrue(same(try tree.get(UInt64(i)), pattern(i % 100 == 0 ? 5000 : 30, seed: UInt64(i))))
        }
        XCTAssertNil(try tree.get(2100))
    }

    // MARK: - Damage

    /// A tree of a few hundred entries over three levels, committed.
    private func sampleTree(_ store: MemoryPageStore) throws -> BTree<MemoryPageStore> {
        var tree = BTree(store: store, root: .empty, keyKind: .bytes)
        for i in 0..<400 {
            let key = [UInt8](repeating: 0x61, count: 300) + Array(String(i * 7919 % 1000).utf8)
            try tree.put(key, pattern(i % 10 == 0 ? 9000 : i % 50, seed: UInt64(i)))
        }
        store.commit()
        try tree.verify()
        return tree
    }

    private func assertCorrupt(_ what: String, _ body: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) {
        do {
            try body()
            XCTFail("\(what): no error", file: file, line: line)
        } catch let error as StorageError {
            guard case .corrupt = error else { return XCTFail("\(what): \(error), expected .corrupt", file: file, line: line) }
        } catch {
            XCTFail("\(what): \(error)", file: file, line: line)
        }
    }

    func testDamagedPageFailsItsChecksum() throws {
        let store = MemoryPageStore()
        let tree = try sampleTree(store)
        var leaves: [PageNumber] = []
        try tree.forEachPage { pgno throws(StorageError) in
            if PageHeader.type(try store.page(pgno)) == PageType.leaf.rawValue { leaves.append(pgno) }
        }
        store.damage(leaves[leaves.count / 2], atByte: 3000)
        assertCorrupt("verify") { try tree.verify() }
        assertCorrupt("scan") { try tree.forEach(from: nil) { (_: UnsafeRawBufferPointer, _) in true } }
    }

    func testMalformedPagesGiveCorruptNotACrash() throws {
        let store = MemoryPageStore()
        let tree = try sampleTree(store)
        let rootPgno = tree.root.page.pgno

        let firstKey = try tree.entry(at: 0).key
        let rootCell0 = Int(UInt16(littleEndian: try store.page(rootPgno).loadUnaligned(fromByteOffset: 24, as: UInt16.self)))
        func damaged(_ what: String, _ edit: (UnsafeMutableRawPointer) -> Void, pgno: PageNumber? = nil,
                     reads: Bool = true, file: StaticString = #filePath, line: UInt = #line) throws {
            let target = pgno ?? rootPgno
            let saved = [UInt8](UnsafeRawBufferPointer(start: try store.page(target), count: pageSize))
            store.tamper(target, edit)
            assertCorrupt("\(what): verify", { try tree.verify() }, file: file, line: line)
            if reads {
                assertCorrupt("\(what): scan", { try tree.forEach(from: nil) { (_: UnsafeRawBufferPointer, _) in true } }, file: file, line: line)
                assertCorrupt("\(what): get", { _ = try tree.get(firstKey) }, file: file, line: line)
            }
            store.tamper(target) { page in saved.withUnsafeBytes { page.copyMemory(from: $0.baseAddress!, byteCount: pageSize) } }
        }
        // A slot pointing past the page, or into the middle of another cell.
        try damaged("slot past the page") { $0.storeBytes(of: UInt16(0xFFF0).littleEndian, toByteOffset: 24, as: UInt16.self) }
        try damaged("slot into a cell", { $0.storeBytes(of: UInt16(rootCell0 + 3).littleEndian, toByteOffset: 26, as: UInt16.self) }, reads: false)
        // A child outside the store; a child referenced with the wrong version.
        try damaged("child outside the store") { $0.storeBytes(of: UInt64(1 << 40).littleEndian, toByteOffset: rootCell0, as: UInt64.self) }
        try damaged("child version") { $0.storeBytes(of: UInt64(77).littleEndian, toByteOffset: rootCell0 + 8, as: UInt64.self) }
        // More slots than the page has room for; a level that does not follow its parent's;
        // a wrong page type; a wrong key kind.
        try damaged("cell count") { $0.storeBytes(of: UInt16(3000).littleEndian, toByteOffset: PageHeader.countOffset, as: UInt16.self) }
        try damaged("level") { $0.storeBytes(of: UInt8(9), toByteOffset: PageHeader.flagsOffset, as: UInt8.self) }
        try damaged("type") { $0.storeBytes(of: PageType.overflow.rawValue, toByteOffset: PageHeader.typeOffset, as: UInt8.self) }
        try damaged("key kind") { $0.storeBytes(of: UInt8(0), toByteOffset: 20, as: UInt8.self) }
        // A subtree count that lies is caught by verify; reads do not depend on it.
        try damaged("subtree count", { page in
            let old = UInt64(littleEndian: page.loadUnaligned(fromByteOffset: rootCell0 + 16, as: UInt64.self))
            page.storeBytes(of: (old + 1).littleEndian, toByteOffset: rootCell0 + 16, as: UInt64.self)
        }, reads: false)
        // An overflow chain cut short.
        var overflowPage: PageNumber = 0
        try tree.forEachPage { pgno throws(StorageError) in
            if overflowPage == 0, PageHeader.type(try store.page(pgno)) == PageType.overflow.rawValue { overflowPage = pgno }
        }
        try damaged("overflow length", { $0.storeBytes(of: UInt16(17).littleEndian, toByteOffset: PageHeader.countOffset, as: UInt16.self) },
                    pgno: overflowPage, reads: false)
        try tree.verify()
    }

    /// Random bytes of random pages rewritten (with valid checksums): every read either works or
    /// throws `.corrupt`, and never traps.
    func testRandomDamageNeverCrashesReads() throws {
        let store = MemoryPageStore()
        let tree = try sampleTree(store)
        var pages: [PageNumber] = []
        try tree.forEachPage { pages.append($0) }
        var rng = SeededRandom(seed: 99)
        var corrupt = 0
        for round in 0..<300 {
            let pgno = pages[rng.below(pages.count)]
            // Mostly the header and slots, where a wrong byte matters most.
            let offset = rng.below(3) == 0 ? 4 + rng.below(pageSize - 4) : 4 + rng.below(60)
            let original = try store.page(pgno).load(fromByteOffset: offset, as: UInt8.self)
            let replacement = UInt8(truncatingIfNeeded: rng.next() | 1) ^ original
            store.tamper(pgno) { $0.storeBytes(of: replacement, toByteOffset: offset, as: UInt8.self) }
            do {
                try tree.verify()
                _ = try tree.get([UInt8](repeating: 0x61, count: 300) + Array(String(round).utf8))
                try tree.forEach(from: nil, reverse: round % 2 == 0) { (_: UnsafeRawBufferPointer, _) in true }
                _ = try tree.entry(at: UInt64(round) % tree.count)
                _ = try tree.rank(of: [0x61, 0x62])
                try tree.forEachPage(writtenAt: 1) { _ in }
            } catch {
                guard case .corrupt = error else { return XCTFail("seed 99 round \(round): \(error)") }
                corrupt += 1
            }
            store.tamper(pgno) { $0.storeBytes(of: original, toByteOffset: offset, as: UInt8.self) }
        }
        try tree.verify()
        XCTAssertGreaterThan(corrupt, 100, "most damage should be noticed (seed 99)")
    }

    func testStaleReferenceIsCaughtByItsVersion() throws {
        let store = MemoryPageStore()
        var tree = BTree(store: store, root: .empty, keyKind: .u64)
        try tree.put(1, [1])
        store.commit()
        let stale = tree.root
        try tree.put(1, [2])   // copies the root leaf; the old page is freed
        store.commit()         // nothing pins the old version: its page is reusable
        var other = BTree(store: store, root: .empty, keyKind: .u64)
        try other.put(9, [9])  // reuses the old page number at a newer version
        store.commit()
        XCTAssertEqual(other.root.page.pgno, stale.page.pgno, "the test relies on the page being reused")
        let reader = BTree(store: store, root: stale, keyKind: .u64)
        assertCorrupt("stale root") { _ = try reader.get(1) }
    }

    // MARK: - Page walks

    func testForEachPageWrittenAtVisitsExactlyThatCommitsPages() throws {
        let store = MemoryPageStore()
        var tree = BTree(store: store, root: .empty, keyKind: .u64)
        var rng = SeededRandom(seed: 21)
        for i in 0..<3000 { try tree.put(UInt64(i), pattern(rng.below(100) == 0 ? 6000 : rng.below(60), seed: UInt64(i))) }
        store.commit()
        for round in 0..<4 {
            for _ in 0..<40 {
                let key = UInt64(rng.below(3000))
                if rng.below(2) == 0 { try tree.remove(key) } else { try tree.put(key, pattern(rng.below(5000), seed: key)) }
            }
            // Before the commit: the pages this transaction wrote are the writable ones.
            var dirty = Set<PageNumber>()
            try tree.forEachPage(writtenAt: store.version) { dirty.insert($0) }
            var writable = Set<PageNumber>()
            try tree.forEachPage { if store.isWritable($0) { writable.insert($0) } }
            XCTAssertEqual(dirty, writable, "round \(round)")
            XCTAssertFalse(dirty.isEmpty)

            let version = store.version
            store.commit()
            var written = Set<PageNumber>()
            try tree.forEachPage(writtenAt: version) { written.insert($0) }
            var expected = Set<PageNumber>()
            try tree.forEachPage { pgno throws(StorageError) in if PageHeader.version(try store.page(pgno)) == version { expected.insert(pgno) } }
            XCTAssertEqual(written, expected, "round \(round)")
            var none = 0
            try tree.forEachPage(writtenAt: version + 7) { _ in none += 1 }
            XCTAssertEqual(none, 0)
        }
    }

    // MARK: - Fill

    func testSequentialInsertionFillsPages() throws {
        for reverse in [false, true] {
            let store = MemoryPageStore()
            var tree = BTree(store: store, root: .empty, keyKind: .u64)
            let n = 30_000
            for i in 0..<n {
                try tree.put(UInt64(reverse ? n - i : i), [UInt8](repeating: 7, count: 8))
                if i % 1000 == 0 { store.commit() }
            }
            try tree.verify()
            var leaves = 0
            try tree.forEachPage { pgno throws(StorageError) in if PageHeader.type(try store.page(pgno)) == PageType.leaf.rawValue { leaves += 1 } }
            // A full leaf holds 4072 / 20 = 203 such entries; packed appends leave them at least 70% full.
            XCTAssertLessThan(leaves, n / 140, "reverse \(reverse): \(leaves) leaves for \(n) entries")
            XCTAssertEqual(tree.count, UInt64(n))
            for i in stride(from: 0, to: n, by: 997) {
                XCTAssertEqual(try tree.u64Key(at: UInt64(i)), UInt64(reverse ? i + 1 : i))
            }
        }
    }

    /// Keys in random order: with shared splits the leaves stay about 81% full, against the
    /// 68-72% of plain splits, in u64 and byte-keyed trees; the tree verifies after commits,
    /// reads back its entries and leaks no page.
    func testRandomInsertionWithSharedSplitsFillsPages() throws {
        func leafFill(kind: BTreeKeyKind, shares: Bool) throws -> Double {
            var rng = SeededRandom(seed: 31)
            let store = MemoryPageStore()
            var tree = BTree(store: store, root: .empty, keyKind: kind)
            tree.sharesSplits = shares
            var keys = Array(0..<40_000)
            for i in stride(from: keys.count - 1, to: 0, by: -1) { keys.swapAt(i, rng.below(i + 1)) }
            func key(_ k: Int) -> [UInt8] { Array("user-\(k * 7919 % 100_003)".utf8) }
            for (n, k) in keys.enumerated() {
                let value = [UInt8](repeating: UInt8(truncatingIfNeeded: k), count: 8)
                if kind == .u64 { try tree.put(UInt64(k), value) } else { try tree.put(key(k), value) }
                if n % 5000 == 4999 {
                    try tree.verify()
                    store.commit()
                }
            }
            try tree.verify()
            XCTAssertEqual(tree.count, UInt64(keys.count))
            for k in stride(from: 0, to: keys.count, by: 37) {
                let value = kind == .u64 ? try tree.get(UInt64(k)) : try tree.get(key(k))
                XCTAssertEqual(value, [UInt8](repeating: UInt8(truncatingIfNeeded: k), count: 8), "\(kind) key \(k)")
            }
            var leaves = 0
            var used = 0
            try tree.forEachPage { pgno throws(StorageError) in
                let page = try store.page(pgno)
                guard PageHeader.type(page) == PageType.leaf.rawValue else { return }
                leaves += 1
                used += BTree<MemoryPageStore>.usedBytes(UnsafeMutableRawPointer(mutating: page))
            }
            try assertNoLeak(tree, "\(kind) shares \(shares)")
            return Double(used) / Double(leaves * BTreeLayout.capacity)
        }
        for kind in [BTreeKeyKind.u64, .bytes] {
            let plain = try leafFill(kind: kind, shares: false)
            let shared = try leafFill(kind: kind, shares: true)
            XCTAssertLessThan(plain, 0.72, "\(kind): plain splits")
            XCTAssertGreaterThan(shared, 0.78, "\(kind): shared splits (plain \(plain))")
        }
    }

    func testRemovingMostEntriesShrinksTheTree() throws {
        let store = MemoryPageStore()
        var tree = BTree(store: store, root: .empty, keyKind: .u64)
        for i in 0..<20_000 { try tree.put(UInt64(i), [UInt8](repeating: 1, count: 30)) }
        store.commit()
        var before = 0
        try tree.forEachPage { _ in before += 1 }
        for i in 0..<20_000 where i % 50 != 0 { try tree.remove(UInt64(i)) }
        try tree.verify()
        store.commit()
        var after = 0
        try tree.forEachPage { _ in after += 1 }
        XCTAssertLessThanOrEqual(after, max(3, before / 25), "\(before) pages before, \(after) after")
        try assertNoLeak(tree, "after removals")
    }

    func testCursorsWalkLikeScans() throws {
        let store = MemoryPageStore()
        var tree = BTree(store: store, root: .empty, keyKind: .bytes)
        var model = SortedModel<ByteKey>()
        var rng = SeededRandom(seed: 31)
        for i in 0..<1500 {
            let key = BytesOps.key(i)
            let value = rng.bytes(rng.below(20) == 0 ? 5000 : rng.below(300))
            XCTAssertEqual(try tree.put(key.bytes, value), model.put(key, value))
        }
        store.commit()
        for round in 0..<60 {
            let reverse = round % 2 == 1
            var cursor: BTreeCursor<MemoryPageStore>
            var expected: [ByteKey]
            if round % 3 == 0 {
                let position = rng.below(model.keys.count + 2)
                cursor = try tree.cursor(atPosition: UInt64(position), reverse: reverse)
                expected = position >= model.keys.count ? [] :
                    reverse ? Array(model.keys[...position].reversed()) : Array(model.keys[position...])
            } else {
                let from = BytesOps.key(rng.below(3000))
                cursor = try from.bytes.withUnsafeBytes { try tree.cursor(from: $0, reverse: reverse) }
                expected = model.scan(from: from, reverse: reverse, limit: Int.max)
            }
            let limit = 1 + rng.below(400)
            var got: [ByteKey] = []
            while cursor.isValid && got.count < limit {
                let key = ByteKey(bytes: try cursor.withKey { Array($0) })
                got.append(key)
                XCTAssertEqual(try cursor.withValue { Array($0) }, model.values[key], "seed 31 round \(round)")
                _ = try cursor.advance()
            }
            XCTAssertEqual(got, Array(expected.prefix(limit)), "seed 31 round \(round)")
        }
        var end = try tree.cursor(atPosition: tree.count - 1)
        XCTAssertTrue(end.isValid)
        XCTAssertFalse(try end.advance())
        XCTAssertFalse(try end.advance())
        XCTAssertThrowsError(try end.withKey { $0.count })

        var numbers = BTree(store: store, root: .empty, keyKind: .u64)
        for i in 0..<3000 { try numbers.put(UInt64(i * 3), [UInt8](repeating: 1, count: 20)) }
        var cursor = try numbers.cursor(from: 1000, reverse: true)
        var keys: [UInt64] = []
        repeat { keys.append(try cursor.u64Key()) } while try cursor.advance()
        XCTAssertEqual(keys, Array(stride(from: 999, through: 0, by: -3)))
    }

    // MARK: - Arguments and small trees

    func testArgumentErrors() throws {
        let store = MemoryPageStore()
        var bytes = BTree(store: store, root: .empty, keyKind: .bytes)
        XCTAssertThrowsError(try bytes.put([UInt8](repeating: 1, count: 1025), [1])) { error in
            guard case StorageError.invalidArgument(let message) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("1025"), message)
        }
        XCTAssertTrue(try bytes.put([UInt8](repeating: 1, count: 1024), [1]))
        XCTAssertThrowsError(try bytes.put(1, [1])) { error in
            guard case StorageError.invalidArgument = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try bytes.entry(at: 1)) { error in
            guard case StorageError.invalidArgument = error else { return XCTFail("\(error)") }
        }
        var numbers = BTree(store: store, root: .empty, keyKind: .u64)
        XCTAssertThrowsError(try numbers.get([1])) { error in
            guard case StorageError.invalidArgument = error else { return XCTFail("\(error)") }
        }
        XCTAssertNil(try numbers.get(1))
        XCTAssertFalse(try numbers.remove(1))
        XCTAssertEqual(try numbers.rank(of: 5), 0)
        try numbers.forEach { _, _ in XCTFail("empty tree"); return true }
        try numbers.verify()
        try numbers.removeAll()
    }

    func testEmptyKeyAndEmptyValue() throws {
        let store = MemoryPageStore()
        var tree = BTree(store: store, root: .empty, keyKind: .bytes)
        XCTAssertTrue(try tree.put([], []))
        XCTAssertTrue(try tree.put([0], [0]))
        XCTAssertEqual(try tree.get([]), [])
        XCTAssertEqual(try tree.rank(of: [0]), 1)
        let first = try tree.entry(at: 0)
        XCTAssertEqual(first.key, [])
        XCTAssertTrue(try tree.contains([]))
        XCTAssertTrue(try tree.remove([]))
        XCTAssertTrue(try tree.remove([0]))
        XCTAssertEqual(tree.root, .empty)
        XCTAssertEqual(store.livePageCount, 0)
    }

    func testScansStopAndStartBetweenKeys() throws {
        let store = MemoryPageStore()
        var tree = BTree(store: store, root: .empty, keyKind: .u64)
        for i in stride(from: 0, to: 10_000, by: 2) { try tree.put(UInt64(i), [UInt8](repeating: 0, count: 40)) }
        var seen: [UInt64] = []
        try tree.forEach(from: 5001) { key, _ in seen.append(key); return seen.count < 3 }
        XCTAssertEqual(seen, [5002, 5004, 5006])
        seen = []
        try tree.forEach(from: 5001, reverse: true) { key, _ in seen.append(key); return seen.count < 3 }
        XCTAssertEqual(seen, [5000, 4998, 4996])
        seen = []
        try tree.forEach(from: 1, reverse: true) { key, _ in seen.append(key); return true }
        XCTAssertEqual(seen, [0])
        seen = []
        try tree.forEach(from: 9999) { key, _ in seen.append(key); return true }
        XCTAssertEqual(seen, [])
        XCTAssertEqual(try tree.rank(of: 5001), 2501)
        XCTAssertEqual(try tree.u64Entry(at: 2500).key, 5000)
    }
}
