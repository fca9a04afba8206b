// The two meta slots (page 0, and page 8 or, in files made before format 5, page 1) that name a
// version of the database, and the list of pages each commit wrote, with their checksums, by
// which recovery tells a complete commit from a torn one. docs/FORMAT.md is the byte-by-byte
// reference.

/// The contents of a meta slot: everything a reader needs to see one committed version.
///
///     offset size field
///     0      8    magic "COVEDB\0\0"
///     8      4    format version (5)
///     12     4    page size (4096)
///     16     8    commit version
///     24     8    file id (random, made when the file was created)
///     32     8    page count (pages in use, meta slots included)
///     40     24   catalog root (TreeRoot)
///     64     24   free-space root
///     88     24   history root
///     112    8    free pages (the number of pages the free-space tree lists)
///     120    8    written-page list: first continuation page, 0 if none
///     128    4    CRC32C of that continuation page
///     132    4    number of entries in the written-page list
///     136    4    bytes of the list held inline below
///     140    4    bytes of the recently freed pages, held right after the inline list
///     144    4    bytes of the recent history records, held right after the freed pages
///     148    4    bytes of the catalog's root leaf held here (0: none), right after the records
///     152    8    the page of the second meta slot: 8, or 1 in a file made before format 5
///     160    96   zero
///     256    3836 written-page list, inline part, then the recently freed pages, then the
///                 recent history records, then the catalog's root leaf
///     4092   4    CRC32C of bytes [0, 4092)
struct MetaSlot: Equatable, Sendable {
    /// "COVEDB\0\0" read as a little-endian u64.
    static let magic: UInt64 = 0x0000_4244_4556_4F43
    /// The format this build writes and the newest it reads.
    /// 2: cluster leaves may store their keys stepped (docs/FORMAT-btree.md).
    /// 3: the slot may hold recently freed pages (`recentFree`) and the newest history records
    /// (`recentHistory`) instead of the free-space and history trees.
    /// 4: the slot may hold the catalog's root leaf (`inlineCatalog`), and the object layer's
    /// table entries the open range of a primary-key index (docs/FORMAT-objects.md).
    /// 5: the slot names the page of the second slot (`secondSlot`): files made from format 5
    /// on keep it at page 8, with seven pages after each slot where that slot's commits write
    /// the pages they rewrite again and again, in one run with the slot (docs/FORMAT.md,
    /// "Slot areas").
    /// 6: the object layer keeps small lists, sets and maps inline, in a collection area per
    /// class (docs/FORMAT-objects.md, "Small collections"); the pages themselves are as in 5.
    /// Files of formats 1 to 5 (formats 1 and 2 with bytes 140..<148 zero) are read as they
    /// are (formats 1 to 4 with their second slot at page 1), and written as format 6 from
    /// their next commit, keeping their second slot where it is.
    static let formatVersion: UInt32 = 6

    /// The second slot's page in files made from format 5 on.
    static let spreadSecondSlot: PageNumber = 8
    /// The pages a slot may be at, in either layout, and which slot each would be: what open
    /// reads before it knows the file's layout.
    static let candidatePages: [(pgno: PageNumber, slot: Int)] = [(0, 0), (1, 1), (spreadSecondSlot, 1)]
    /// Pages right after a slot that commits writing that slot may take for the pages they
    /// rewrite again and again (fewer when the other slot comes first: none after slot 0 in a
    /// file whose second slot is page 1).
    static let areaPages: UInt64 = 7

    static let versionOffset = 16
    static let listOffset = 256
    static let crcOffset = pageSize - 4
    /// Room for the inline part of the written-page list.
    static let inlineListCapacity = crcOffset - listOffset
    /// The most bytes of recently freed pages a slot holds; a commit that would need more
    /// records them in the free-space tree.
    static let recentFreeCapacity = 1024
    /// The most bytes of history records a slot holds; older records go to the history tree.
    static let recentHistoryCapacity = 1024

    var version: UInt64
    var fileId: UInt64
    var pageCount: UInt64
    var catalog: TreeRoot
    var freeSpace: TreeRoot
    var history: TreeRoot
    var freePageCount: UInt64
    /// The first continuation page of the written-page list (0: the list is all inline).
    var listHead: PageNumber
    /// CRC32C of the continuation page `listHead` (the meta's checksum thus covers the chain).
    var listHeadChecksum: UInt32
    var listEntries: UInt32
    var listInlineBytes: UInt32
    /// Pages freed by recent versions, listed here rather than in the free-space tree (so a
    /// small commit need not rewrite the tree's pages); counted in `freePageCount`.
    var recentFree: [FreedPages]
    /// The newest history records, listed here rather than in the history tree (so a small
    /// commit need not rewrite the tree's pages): ascending versions, all newer than the tree's.
    var recentHistory: [HistoryEntry]
    /// The catalog's root leaf when the slot holds it rather than its page (`catalog` still
    /// names the page number it owns, which nothing reads from the file).
    var inlineCatalog: InlinePage? = nil

    /// The page of the second meta slot: `spreadSecondSlot`, or 1 in a file made before format 5.
    /// The same in every version of a file.
    var secondSlot: PageNumber = MetaSlot.spreadSecondSlot

    /// The format version the slot was written in (a new slot: this build's).
    var format: UInt32 = MetaSlot.formatVersion

    /// The page number of `inlineCatalog` (0: none).
    var inlineCatalogPage: PageNumber { inlineCatalog == nil ? 0 : catalog.page.pgno }

    /// The page of meta slot `slot` (0 or 1).
    @inline(__always)
    func slotPage(_ slot: Int) -> PageNumber { slot == 0 ? 0 : secondSlot }

    /// Whether `pgno` may hold a page of the database (not a meta slot) in a file of `pageCount`.
    @inline(__always)
    func holdsData(_ pgno: PageNumber) -> Bool {
        MetaSlot.holdsData(pgno, secondSlot: secondSlot, pageCount: pageCount)
    }

    @inline(__always)
    static func holdsData(_ pgno: PageNumber, secondSlot: PageNumber, pageCount: UInt64) -> Bool {
        pgno != 0 && pgno != secondSlot && pgno < pageCount
    }

    /// The pages of slot `slot`'s area (docs/FORMAT.md, "Slot areas").
    func area(_ slot: Int) -> Range<PageNumber> {
        let first = slotPage(slot) + 1
        let end = first + MetaSlot.areaPages
        // The second slot may come right after the first: slot 0 then has no area.
        if slot == 0 && secondSlot >= first && secondSlot < end { return first..<secondSlot }
        return first..<end
    }

    /// The first page past both slots' areas: where pages for any use begin.
    var areasEnd: PageNumber { secondSlot + 1 + MetaSlot.areaPages }

    /// The pages of a new, empty file: both slots and their areas.
    static let newFilePages: UInt64 = spreadSecondSlot + 1 + areaPages

    /// An empty database at `version`, in a new file: its areas' pages are free, listed as
    /// freed by version 0.
    static func empty(version: UInt64, fileId: UInt64) -> MetaSlot {
        var areas = Array(PageNumber(1)..<spreadSecondSlot)
        areas += Array((spreadSecondSlot + 1)..<newFilePages)
        return MetaSlot(version: version, fileId: fileId, pageCount: newFilePages, catalog: .empty, freeSpace: .empty,
                        history: .empty, freePageCount: UInt64(areas.count), listHead: 0, listHeadChecksum: 0,
                        listEntries: 0, listInlineBytes: 0, recentFree: [FreedPages(version: 0, pages: areas)],
                        recentHistory: [])
    }

    /// Writes the fields, the freed pages, the history records and the checksum into a zeroed
    /// page whose inline list is already in place (the caller checked that all fit).
    func encode(into p: UnsafeMutableRawPointer) {
        let freeAt = MetaSlot.listOffset + Int(listInlineBytes)
        let freeBytes = FreedPages.encode(recentFree, into: p + freeAt)
        p.storeBytes(of: UInt32(freeBytes).littleEndian, toByteOffset: 140, as: UInt32.self)
        let historyBytes = HistoryEntry.encode(recentHistory, into: p + freeAt + freeBytes)
        p.storeBytes(of: UInt32(historyBytes).littleEndian, toByteOffset: 144, as: UInt32.self)
        if let inlineCatalog {
            let b = inlineCatalog.bytes
            (p + freeAt + freeBytes + historyBytes).copyMemory(from: b.baseAddress!, byteCount: b.count)
            p.storeBytes(of: UInt32(b.count).littleEndian, toByteOffset: 148, as: UInt32.self)
        }
        p.storeBytes(of: MetaSlot.magic.littleEndian, toByteOffset: 0, as: UInt64.self)
        p.storeBytes(of: MetaSlot.formatVersion.littleEndian, toByteOffset: 8, as: UInt32.self)
        p.storeBytes(of: UInt32(pageSize).littleEndian, toByteOffset: 12, as: UInt32.self)
        p.storeBytes(of: version.littleEndian, toByteOffset: 16, as: UInt64.self)
        p.storeBytes(of: fileId.littleEndian, toByteOffset: 24, as: UInt64.self)
        p.storeBytes(of: pageCount.littleEndian, toByteOffset: 32, as: UInt64.self)
        catalog.encode(into: p + 40)
        freeSpace.encode(into: p + 64)
        history.encode(into: p + 88)
        p.storeBytes(of: freePageCount.littleEndian, toByteOffset: 112, as: UInt64.self)
        p.storeBytes(of: listHead.littleEndian, toByteOffset: 120, as: UInt64.self)
        p.storeBytes(of: listHeadChecksum.littleEndian, toByteOffset: 128, as: UInt32.self)
        p.storeBytes(of: listEntries.littleEndian, toByteOffset: 132, as: UInt32.self)
        p.storeBytes(of: listInlineBytes.littleEndian, toByteOffset: 136, as: UInt32.self)
        p.storeBytes(of: secondSlot.littleEndian, toByteOffset: 152, as: UInt64.self)
        let crc = crc32c(UnsafeRawBufferPointer(start: p, count: MetaSlot.crcOffset))
        p.storeBytes(of: crc.littleEndian, toByteOffset: MetaSlot.crcOffset, as: UInt32.self)
    }

    /// What a meta slot holds.
    enum Decoded {
        case valid(MetaSlot)
        /// No Cove magic: not a Cove file (or a slot never written).
        case notCove
        /// Cove magic, but the slot does not hold together (checksum, sizes).
        case damaged(String)
        /// Written by a newer format or with another page size.
        case unsupported(String)
    }

    /// Decodes and checks a meta slot (a private copy of the page: another process may be
    /// rewriting the slot in the file while it is read).
    static func decode(_ p: UnsafeRawPointer) -> Decoded {
        func u64(_ o: Int) -> UInt64 { UInt64(littleEndian: p.loadUnaligned(fromByteOffset: o, as: UInt64.self)) }
        func u32(_ o: Int) -> UInt32 { UInt32(littleEndian: p.loadUnaligned(fromByteOffset: o, as: UInt32.self)) }
        guard u64(0) == magic else { return .notCove }
        let format = u32(8)
        // Checked before the checksum: a newer format may checksum differently.
        if format > formatVersion {
            return .unsupported("format version \(format) (this build reads up to \(formatVersion))")
        }
        let stored = u32(crcOffset)
        let computed = crc32c(UnsafeRawBufferPointer(start: p, count: crcOffset))
        guard stored == computed else { return .damaged("checksum \(hex(stored)) does not match \(hex(computed))") }
        guard format >= 1 else { return .damaged("format version 0") }
        let size = u32(12)
        guard size == UInt32(pageSize) else { return .unsupported("page size \(size) (this build uses \(pageSize))") }
        var meta = MetaSlot(version: u64(16), fileId: u64(24), pageCount: u64(32),
                            catalog: TreeRoot.decode(from: p + 40), freeSpace: TreeRoot.decode(from: p + 64),
                            history: TreeRoot.decode(from: p + 88), freePageCount: u64(112),
                            listHead: u64(120), listHeadChecksum: u32(128), listEntries: u32(132),
                            listInlineBytes: u32(136), recentFree: [], recentHistory: [])
        meta.secondSlot = format >= 5 ? u64(152) : 1
        meta.format = format
        guard meta.secondSlot == 1 || meta.secondSlot == spreadSecondSlot else {
            return .damaged("the second meta slot is at page \(meta.secondSlot), neither 1 nor \(spreadSecondSlot)")
        }
        let freeBytes = Int(u32(140))
        let historyBytes = Int(u32(144))
        let catalogBytes = Int(u32(148))
        guard meta.pageCount > meta.secondSlot, Int(meta.listInlineBytes) <= inlineListCapacity,
              freeBytes <= recentFreeCapacity, historyBytes <= recentHistoryCapacity, catalogBytes <= InlinePage.capacity,
              Int(meta.listInlineBytes) + freeBytes + historyBytes + catalogBytes <= inlineListCapacity else {
            return .damaged("page count \(meta.pageCount), list length \(meta.listInlineBytes), \(freeBytes) bytes of freed pages, \(historyBytes) of history or \(catalogBytes) of the catalog out of range")
        }
        var decoded = meta
        do throws(StorageError) {
            let freeAt = p + listOffset + Int(meta.listInlineBytes)
            decoded.recentFree = try FreedPages.decode(UnsafeRawBufferPointer(start: freeAt, count: freeBytes),
                                                      version: meta.version, pageCount: meta.pageCount,
                                                      secondSlot: meta.secondSlot)
            decoded.recentHistory = try HistoryEntry.decode(UnsafeRawBufferPointer(start: freeAt + freeBytes, count: historyBytes),
                                                           version: meta.version)
            if catalogBytes > 0 {
                guard !meta.catalog.page.isNone else { throw .corrupt("the slot holds a catalog leaf but no catalog root") }
                decoded.inlineCatalog = try InlinePage(compact: UnsafeRawBufferPointer(start: freeAt + freeBytes + historyBytes, count: catalogBytes),
                                                       ref: meta.catalog.page)
            }
        } catch {
            return .damaged(error.message)
        }
        for root in [meta.catalog, meta.freeSpace, meta.history] where !root.page.isNone {
            guard meta.holdsData(root.page.pgno), root.page.version <= meta.version else {
                return .damaged("a root names page \(root.page.pgno) at version \(root.page.version)")
            }
        }
        return .valid(decoded)
    }
}

/// A meta slot shared by reference: what a handle and its snapshots hold of a version.
final class MetaBox: Sendable {
    let meta: MetaSlot

    init(_ meta: MetaSlot) {
        self.meta = meta
    }
}

// MARK: - Recent history records

/// A history record a meta slot holds.
///
/// Encoding, records one after another in ascending version order: LEB128 version, LEB128
/// length, then the record's bytes.
struct HistoryEntry: Equatable, Sendable {
    /// The commit the record belongs to.
    var version: UInt64
    /// The record, as the layer above set it.
    var bytes: [UInt8]

    /// Bytes of one record's encoding.
    static func encodedSize(_ entry: HistoryEntry) -> Int {
        LEB128.size(entry.version) + LEB128.size(UInt64(entry.bytes.count)) + entry.bytes.count
    }

    /// Bytes of `encode(entries)`.
    static func encodedSize(_ entries: [HistoryEntry]) -> Int {
        entries.reduce(0) { $0 + encodedSize($1) }
    }

    /// Writes the records at `p`; returns the bytes written.
    static func encode(_ entries: [HistoryEntry], into p: UnsafeMutableRawPointer) -> Int {
        var at = 0
        for e in entries {
            at += LEB128.write(e.version, to: p + at)
            at += LEB128.write(UInt64(e.bytes.count), to: p + at)
            e.bytes.withUnsafeBytes { b in
                if let base = b.baseAddress { (p + at).copyMemory(from: base, byteCount: b.count) }
            }
            at += e.bytes.count
        }
        return at
    }

    /// Decodes and checks the records of a slot of `version`: versions ascending and at most
    /// the slot's, lengths within the bytes.
    static func decode(_ bytes: UnsafeRawBufferPointer, version: UInt64) throws(StorageError) -> [HistoryEntry] {
        var entries: [HistoryEntry] = []
        var at = 0
        while at < bytes.count {
            let of = try LEB128.read(bytes, at: &at, "the history records of meta version \(version) are malformed")
            let length = try LEB128.read(bytes, at: &at, "the history records of meta version \(version) are malformed")
            guard of <= version, entries.last.map({ $0.version < of }) ?? true, length <= UInt64(bytes.count - at) else {
                throw .corrupt("the history records of meta version \(version) hold version \(of) (\(length) bytes) out of order or out of bounds")
            }
            entries.append(HistoryEntry(version: of, bytes: Array(bytes[at..<(at + Int(length))])))
            at += Int(length)
        }
        return entries
    }
}

// MARK: - Recently freed pages

/// Pages one version freed, as a meta slot lists them.
///
/// Encoding, groups one after another in ascending version order: LEB128 version, LEB128 page
/// count (at least 1), then the LEB128 distances between the ascending page numbers (the first
/// from 0).
struct FreedPages: Equatable, Sendable {
    /// The version that freed the pages: they may be reused once no reader pins an older one.
    var version: UInt64
    /// Ascending page numbers.
    var pages: [PageNumber]

    /// Bytes of `encode(groups)`.
    static func encodedSize(_ groups: [FreedPages]) -> Int {
        var n = 0
        for g in groups {
            n += LEB128.size(g.version) + LEB128.size(UInt64(g.pages.count))
            var previous: UInt64 = 0
            for p in g.pages {
                n += LEB128.size(p - previous)
                previous = p
            }
        }
        return n
    }

    /// Writes the groups at `p`; returns the bytes written.
    static func encode(_ groups: [FreedPages], into p: UnsafeMutableRawPointer) -> Int {
        var at = 0
        for g in groups {
            at += LEB128.write(g.version, to: p + at)
            at += LEB128.write(UInt64(g.pages.count), to: p + at)
            var previous: UInt64 = 0
            for page in g.pages {
                at += LEB128.write(page - previous, to: p + at)
                previous = page
            }
        }
        return at
    }

    /// Decodes and checks the groups of a slot of `version` and `pageCount` pages: versions
    /// ascending and at most the slot's, pages distinct and below `pageCount`, none a meta slot
    /// (page 0 or `secondSlot`), ascending within each group.
    static func decode(_ bytes: UnsafeRawBufferPointer, version: UInt64, pageCount: UInt64,
                       secondSlot: PageNumber) throws(StorageError) -> [FreedPages] {
        var groups: [FreedPages] = []
        var at = 0
        let what = "the freed-page list of meta version \(version)"
        var all: [PageNumber] = []
        while at < bytes.count {
            let freedBy = try LEB128.read(bytes, at: &at, "\(what) is malformed")
            let count = try LEB128.read(bytes, at: &at, "\(what) is malformed")
            guard freedBy <= version, groups.last.map({ $0.version < freedBy }) ?? true,
                  count >= 1, count <= UInt64(bytes.count) else {
                throw .corrupt("\(what) list version \(freedBy) (\(count) pages) out of order")
            }
            var pages: [PageNumber] = []
            try LEB128.readPages(bytes, at: &at, count: Int(count), pageCount: pageCount, secondSlot: secondSlot,
                                 into: &pages, what)
            all += pages
            groups.append(FreedPages(version: freedBy, pages: pages))
        }
        if groups.count > 1 {
            all.sort()
            for i in 1..<all.count where all[i] == all[i - 1] {
                throw .corrupt("\(what) lists page \(all[i]) twice")
            }
        }
        return groups
    }
}

// MARK: - The written-page list

/// The pages a commit wrote, each with its CRC32C, in ascending page order: the commit record by
/// which recovery checks that every page of the newest version reached the disk intact. Stored
/// in the meta slot and, when it does not fit, in a chain of continuation pages (type
/// `overflow`) written with the commit.
///
/// Entry: LEB128 varint of the page number's distance from the previous entry's (from 0 for the
/// first), then the page's CRC32C as a little-endian u32. An entry never straddles two pages.
///
/// Continuation page:
///
///     offset size field
///     0      16   PageHeader (type overflow, version = the commit's)
///     16     8    next continuation page, 0 if last
///     24     4    CRC32C of the next continuation page
///     28     4    bytes of entries used
///     32     ...  entries
enum WrittenPageList {
    static let nextOffset = 16
    static let nextChecksumOffset = 24
    static let usedOffset = 28
    static let entriesOffset = 32
    static let pageCapacity = pageSize - entriesOffset

    /// The encoded size of an entry `delta` pages after the previous one.
    @inline(__always)
    static func entrySize(delta: UInt64) -> Int {
        LEB128.size(delta) + 4
    }

    /// Writes one entry at `p`; returns its size.
    @inline(__always)
    static func writeEntry(delta: UInt64, checksum: UInt32, to p: UnsafeMutableRawPointer) -> Int {
        let i = LEB128.write(delta, to: p)
        p.storeBytes(of: checksum.littleEndian, toByteOffset: i, as: UInt32.self)
        return i + 4
    }

    /// Decodes the entries in `[p, p + length)`, continuing from page number `previous`.
    /// - Returns: the last page number decoded.
    static func readEntries(_ p: UnsafeRawPointer, length: Int, previous: UInt64,
                            _ body: (PageNumber, UInt32) throws(StorageError) -> Void) throws(StorageError) -> UInt64 {
        let bytes = UnsafeRawBufferPointer(start: p, count: length)
        var i = 0
        var pgno = previous
        while i < length {
            let delta = try LEB128.read(bytes, at: &i, "the written-page list is malformed")
            guard i + 4 <= length else { throw .corrupt("the written-page list is malformed") }
            let crc = UInt32(littleEndian: p.loadUnaligned(fromByteOffset: i, as: UInt32.self))
            i += 4
            let (next, overflow) = pgno.addingReportingOverflow(delta)
            guard !overflow else { throw .corrupt("the written-page list is malformed") }
            pgno = next
            try body(pgno, crc)
        }
        return pgno
    }

    /// Visits the continuation pages of `meta`'s list, checking each as `forEach` does, without
    /// decoding the entries.
    static func forEachContinuation(meta: MetaSlot, page: (PageNumber) throws(StorageError) -> UnsafeRawPointer,
                                    _ body: (PageNumber) throws(StorageError) -> Void) throws(StorageError) {
        try walkContinuations(meta: meta, page: page) { pgno, _ throws(StorageError) in try body(pgno) }
    }

    /// The chain of continuation pages: each checked (in range, no cycle, its CRC32C the one
    /// recorded by whoever points at it, its version the meta's) before `body` sees its bytes.
    private static func walkContinuations(meta: MetaSlot, page: (PageNumber) throws(StorageError) -> UnsafeRawPointer,
                                          _ body: (PageNumber, UnsafeRawPointer) throws(StorageError) -> Void) throws(StorageError) {
        var next = meta.listHead
        var expected = meta.listHeadChecksum
        var hops: UInt64 = 0
        while next != 0 {
            hops += 1
            guard meta.holdsData(next), hops <= meta.pageCount else {
                throw .corrupt("the written-page list of version \(meta.version) names page \(next), outside the file")
            }
            let p = try page(next)
            try checkContinuation(p, next, expected: expected, meta: meta)
            try body(next, p)
            next = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: nextOffset, as: UInt64.self))
            expected = UInt32(littleEndian: p.loadUnaligned(fromByteOffset: nextChecksumOffset, as: UInt32.self))
        }
    }

    private static func checkContinuation(_ p: UnsafeRawPointer, _ pgno: PageNumber, expected: UInt32, meta: MetaSlot) throws(StorageError) {
        let crc = PageHeader.computeChecksum(p)
        guard crc == expected, PageHeader.storedChecksum(p) == crc,
              PageHeader.version(p) == meta.version, PageHeader.type(p) == PageType.overflow.rawValue else {
            throw .corrupt("continuation page \(pgno) of the written-page list of version \(meta.version) is not the one written")
        }
        let used = Int(UInt32(littleEndian: p.loadUnaligned(fromByteOffset: usedOffset, as: UInt32.self)))
        guard used <= pageCapacity else { throw .corrupt("continuation page \(pgno) claims \(used) bytes") }
    }

    /// Visits every entry of `meta`'s list (`metaPage` is the slot's page) and, before reading
    /// each continuation page, checks it: in range, its CRC32C the one recorded by whoever
    /// points at it, and its version the meta's. `page` maps a page number to its bytes.
    static func forEach(meta: MetaSlot, metaPage: UnsafeRawPointer,
                        page: (PageNumber) throws(StorageError) -> UnsafeRawPointer,
                        _ body: (PageNumber, UInt32) throws(StorageError) -> Void) throws(StorageError) {
        var seen: UInt32 = 0
        var last = try readEntries(metaPage + MetaSlot.listOffset, length: Int(meta.listInlineBytes), previous: 0) {
            (pgno, crc) throws(StorageError) in
            seen += 1
            try body(pgno, crc)
        }
        try walkContinuations(meta: meta, page: page) { _, p throws(StorageError) in
            let used = Int(UInt32(littleEndian: p.loadUnaligned(fromByteOffset: usedOffset, as: UInt32.self)))
            last = try readEntries(p + entriesOffset, length: used, previous: last) { (pgno, crc) throws(StorageError) in
                seen += 1
                try body(pgno, crc)
            }
        }
        guard seen == meta.listEntries else {
            throw .corrupt("the written-page list of version \(meta.version) has \(seen) entries, not \(meta.listEntries)")
        }
    }
}
