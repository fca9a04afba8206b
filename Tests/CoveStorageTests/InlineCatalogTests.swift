// The catalog's root leaf held in the meta slot: a small catalog is written into the slot instead
// of its own page, under a page number that stays the same from commit to commit; readers of
// older versions keep theirs; a catalog too large for the slot gets pages and comes back when it
// shrinks; reopening reads it; a leaf in the slot that does not hold together damages the slot.
import XCTest
import Glibc
@testable import CoveStorage

final class InlineCatalogTests: StorageTestCase {
    private func bigEntries(_ w: WriteTransaction, add: Bool) throws {
        var catalog = BTree(store: w, root: w.catalog, keyKind: .bytes)
        for i in 0..<40 {
            let key = Array("an empty table with a long name, number \(i)".utf8)
            if add { try catalog.put(key, TestTables.encode(.empty)) } else { _ = try catalog.remove(key) }
        }
        w.catalog = catalog.root
    }

    func testASmallCatalogLivesInTheMetaSlot() throws {
        let path = dir.file("inline")
        var s = try Storage.open(path: path, options: TestTables.options(.noSync))
        var w = try s.beginWrite()
        for k in 0..<300 as Range<UInt64> { try TestTables.put(w, "t", k, testValue(k, size: 100)) }
        try w.commit()
        var r = try s.beginRead()
        XCTAssertNotNil(r.meta.inlineCatalog, "the catalog is one small leaf")
        let catalogPage = r.catalog.page.pgno
        r.end()

        // Commits that change the table keep the leaf in the slot, under the same number, and
        // write only the table's pages besides the slot: its leaf and its root.
        var pagesWritten = 0
        for k in 300..<400 as Range<UInt64> {
            w = try s.beginWrite()
            try TestTables.put(w, "t", k, testValue(k, size: 100))
            try w.commit()
            pagesWritten += s.pagesLastWritten.load(ordering: .relaxed)
        }
        r = try s.beginRead()
        XCTAssertEqual(r.catalog.page.pgno, catalogPage)
        XCTAssertNotNil(r.meta.inlineCatalog)
        r.end()
        XCTAssertLessThanOrEqual(pagesWritten, 100 * 2 + 5, "\(pagesWritten) pages for 100 commits of one key")

        // A reader of an older version keeps its catalog while later commits change it.
        let old = try s.beginRead()
        for k in 400..<420 as Range<UInt64> {
            w = try s.beginWrite()
            try TestTables.put(w, "t", k, testValue(k, size: 100))
            try w.commit()
        }
        XCTAssertNil(try TestTables.get(old, catalog: old.catalog, "t", 410))
        XCTAssertEqual(try TestTables.get(old, catalog: old.catalog, "t", 399), testValue(399, size: 100))
        old.end()

        // Too large for the slot, the catalog gets pages; shrunk again, it returns to the slot.
        w = try s.beginWrite()
        try bigEntries(w, add: true)
        try w.commit()
        r = try s.beginRead()
        XCTAssertNil(r.meta.inlineCatalog, "a catalog of several kilobytes has pages")
        r.end()
        _ = try s.verify()
        w = try s.beginWrite()
        try bigEntries(w, add: false)
        try w.commit()
        r = try s.beginRead()
        XCTAssertNotNil(r.meta.inlineCatalog)
        r.end()
        _ = try s.verify()
        s.close()

        s = try Storage.open(path: path, options: TestTables.options(.noSync))
        defer { s.close() }
        r = try s.beginRead()
        XCTAssertNotNil(r.meta.inlineCatalog)
        XCTAssertEqual(try TestTables.contents(r, catalog: r.catalog, "t").count, 420)
        r.end()
        _ = try s.verify()
    }

    /// A catalog leaf in the slot must rebuild into a leaf of the root's version with a valid
    /// checksum, its header agreeing with its length: otherwise the slot is damaged.
    func testALeafInTheSlotThatDoesNotHoldTogetherDamagesIt() throws {
        let s = try Storage.open(path: dir.file("damaged"), options: TestTables.options(.noSync))
        defer { s.close() }
        let w = try s.beginWrite()
        try TestTables.put(w, "t", 1, [1, 2, 3])
        try w.commit()
        let r = try s.beginRead()
        let meta = r.meta
        r.end()
        let inline = try XCTUnwrap(meta.inlineCatalog)
        let at = MetaSlot.listOffset + Int(meta.listInlineBytes) + FreedPages.encodedSize(meta.recentFree)
            + HistoryEntry.encodedSize(meta.recentHistory)
        func slot(_ patch: ((UnsafeMutableRawPointer, Int) -> Void)? = nil) -> MetaSlot.Decoded {
            MetaSlotTesting.decode(meta, patch: patch.map { p in { page in p(page, at) } })
        }
        func isDamaged(_ d: MetaSlot.Decoded, _ why: String, line: UInt = #line) {
            MetaSlotTesting.assertDamaged(d, why, line: line)
        }
        guard case .valid(let decoded) = slot() else { return XCTFail("the slot as written is valid") }
        XCTAssertEqual(decoded.inlineCatalog, inline)
        XCTAssertEqual(memcmp(decoded.inlineCatalog!.page, inline.page, pageSize), 0)
        isDamaged(slot { p, at in p.storeBytes(of: p.load(fromByteOffset: at + 30, as: UInt8.self) ^ 1, toByteOffset: at + 30, as: UInt8.self) },
                  "a flipped byte fails the leaf's checksum")
        isDamaged(slot { p, at in p.storeBytes(of: UInt16(7).littleEndian, toByteOffset: at + PageHeader.countOffset, as: UInt16.self) },
                  "a cell count the length does not hold")
        isDamaged(slot { p, _ in p.storeBytes(of: UInt32(10).littleEndian, toByteOffset: 148, as: UInt32.self) },
                  "fewer bytes than a page header")
        isDamaged(slot { p, _ in p.storeBytes(of: UInt32(InlinePage.capacity + 1).littleEndian, toByteOffset: 148, as: UInt32.self) },
                  "more bytes than the slot gives the catalog")
        isDamaged(slot { p, _ in p.storeBytes(of: UInt64(meta.catalog.page.version + 1).littleEndian, toByteOffset: 40 + 8, as: UInt64.self) },
                  "a leaf written by another version than the root names")
    }
}
