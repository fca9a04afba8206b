// WriteTransaction: the one writer of a database, holding the write lock from beginWrite to
// commit or cancel. It is the PageStore the writer's B+trees edit: new pages live in memory until
// commit writes them; committed pages are never modified. Commit is in Storage+Commit.swift,
// page reuse in Storage+FreeSpace.swift.
import Glibc

/// A write transaction: changes made through it become visible to others at `commit()`.
///
/// Confined to one thread at a time (it may move between threads with external
/// synchronization). Deinit cancels it if it was neither committed nor cancelled.
public final class WriteTransaction: PageStore {
    /// The version this transaction will commit: `baseVersion + 1`. Pages it writes carry it.
    public let version: UInt64
    /// The version the transaction started from.
    public let baseVersion: UInt64
    /// The catalog root; the layer above edits the catalog tree through this transaction and
    /// stores its new root here before committing.
    public var catalog: TreeRoot
    /// The root of the history tree (the commit adds this transaction's record and trims it).
    public internal(set) var history: TreeRoot
    /// The storage this transaction writes.
    public let storage: Storage

    let file: PageFile
    let base: MetaSlot
    let baseSlot: Int
    /// Pages freed by a version up to this one may be reused: no reader pins an older version.
    let oldestPinned: UInt64
    var finished = false
    var historyRecord: [UInt8]?
    /// The page number of the catalog leaf the base slot holds (0: none): read from the slot.
    let baseInlinePage: PageNumber
    /// Whether `adoptInPlace` made that page this transaction's (once at most: freed, it is not
    /// taken back).
    var baseInlineAdopted = false
    /// The catalog root leaf this transaction wrote, when this commit's slot holds it instead of
    /// writing its page (0: none; set at commit before the free space settles).
    var inlineCatalogPage: PageNumber = 0
    /// Bytes of the catalog leaf this commit's slot holds (this transaction's, or the base's
    /// when the catalog did not change); 0 when the catalog has a page of its own.
    var inlineCatalogBytes = 0
    /// The history records this commit's meta slot holds (set when the commit updates the
    /// history).
    var recentHistory: [HistoryEntry] = []
    /// Room in this commit's meta slot for the written-page list and the freed-page groups,
    /// beside its history records and catalog leaf.
    var slotRoom: Int {
        MetaSlot.inlineListCapacity - HistoryEntry.encodedSize(recentHistory) - inlineCatalogBytes
    }
    /// Room for the written-page list beside all the rest (the groups set).
    var listRoom: Int { slotRoom - FreedPages.encodedSize(recentFree) }

    // Pages.
    /// Pages this transaction allocated, with their in-memory contents. Behind a pointer so
    /// that the lookups of every page access run no exclusivity check (the transaction is
    /// confined to one thread and the table is never handed out mutably).
    /// The table comes with the page buffers (`PageBuffers.dirtyTable`); once the transaction
    /// ends and gives them back, it points at an empty table of its own.
    private(set) var dirtyTable: UnsafeMutablePointer<DirtyPageTable>
    /// A read-only view of the pages this transaction allocated.
    var dirty: DirtyPageTable { dirtyTable.pointee }
    /// The page count of the file as this transaction will leave it.
    var pageCount: UInt64
    /// The memory of the dirty pages: the storage's set, taken for this transaction and given
    /// back (and set to nil) when it ends.
    var buffers: PageBuffers?

    // Free space (Storage+FreeSpace.swift).
    var freeSpace: TreeRoot
    /// Pages allocated by this transaction and freed again: reusable at once.
    var localFree: [PageNumber] = []
    /// Every page this transaction allocated and freed again, its slot area's (`areaFree`) too.
    var ownFree: [PageNumber] { areaFree.isEmpty ? localFree : localFree + areaFree }
    /// Pages taken from free-space records this transaction consumed, not yet allocated.
    var reusable = FreeRuns()
    /// The last page allocation took from `reusable`: the next is the page after it while
    /// that one is reusable.
    var lastReused: PageNumber?
    /// The pages of this commit's slot area (docs/FORMAT.md, "Slot areas"): pages the base
    /// commit wrote are copied here, in order from the first, while each next one is free, so
    /// that the commit writes them in one run with its meta slot, which comes right before.
    let area: Range<PageNumber>
    /// The next page of `area` to take; past its end (or `areaClosed`) nothing more is taken.
    var areaNext: PageNumber
    /// Set once a page of the area was found in use: the run cannot go on.
    var areaClosed = false
    /// Pages of `area` this transaction allocated and freed again: kept for `areaPage`, so that
    /// no gap is left in the run (`localFree` holds the others).
    var areaFree: [PageNumber] = []
    /// How long a run of reusable pages allocation looks for before it settles for a shorter
    /// one or grows the file: about as many pages as this handle's last commit wrote.
    let wantedRun: Int
    /// Whether the file may grow rather than hand out pages from runs shorter than
    /// `wantedRun`: while its free pages are fewer than an eighth of it, or than 4 MiB.
    let mayGrow: Bool
    /// Committed pages this transaction freed: reusable once no reader pins `baseVersion`.
    var pendingFree: [PageNumber] = []
    /// The base meta slot's groups of freed pages that are not reusable yet (a reader pins a
    /// version older than the one that freed them): they stay listed, in the slot or the tree.
    var heldRecent: [FreedPages] = []
    /// The groups of freed pages this commit's meta slot lists (set when the free space settles).
    var recentFree: [FreedPages] = []
    /// Keys of the free-space records whose pages were moved into `reusable`.
    var consumedKeys: [UInt64] = []
    /// Pages moved into `reusable` from free-space records and from the base slot's groups.
    var consumedPages: UInt64 = 0
    /// The next free-space key to look at; `freeSpaceExhausted` once no reusable record is left.
    var freeCursor: UInt64 = 0
    var freeSpaceExhausted = false
    /// Set while the commit edits the free-space tree: allocation must then not read it.
    var settlingFreeSpace = false
    /// The page count before `giveBackTail` gave the pages at the end of the file back (nil:
    /// none given back); commit then shortens the file.
    var givenBackFrom: UInt64?
    /// Allocations and frees so far (the free-space update loops until a pass makes none).
    var allocations = 0
    var frees = 0

    init(storage: Storage, base: MetaSlot, baseSlot: Int, oldestPinned: UInt64) {
        self.storage = storage
        self.file = storage.file
        self.base = base
        self.baseSlot = baseSlot
        self.oldestPinned = oldestPinned
        version = base.version + 1
        baseVersion = base.version
        catalog = base.catalog
        baseInlinePage = base.inlineCatalogPage
        history = base.history
        freeSpace = base.freeSpace
        pageCount = base.pageCount
        area = base.area(1 - baseSlot)
        areaNext = area.lowerBound
        reusable = FreeRuns(floor: base.areasEnd)
        let last = storage.pagesLastWritten.load(ordering: .relaxed)
        wantedRun = last == 0 ? 8 : min(last, 16)
        mayGrow = base.freePageCount < max(1024, base.pageCount / 8)
        // The reusable groups' pages go into the runs at once: one rebuild instead of one per group.
        var reusablePages: [PageNumber] = []
        var groups = 0
        for group in base.recentFree {
            if group.version <= oldestPinned {
                if groups == 0 { reusablePages = group.pages } else { reusablePages += group.pages }
                groups += 1
            } else {
                heldRecent.append(group)
            }
        }
        if groups > 1 { reusablePages.sort() }
        reusable.add(reusablePages)
        consumedPages = UInt64(reusablePages.count)
        let pageBuffers = storage.pageBuffers.withLock { kept in
            defer { kept = nil }
            return kept
        } ?? PageBuffers()
        buffers = pageBuffers
        dirtyTable = pageBuffers.dirtyTable
    }

    deinit {
        if !finished { cancel() }
    }

    /// What an ended transaction's lookups find: no page. Shared and never written: an ended
    /// transaction allocates nothing (`pageMemory` refuses), and removing finds nothing.
    nonisolated(unsafe) private static let noPages: UnsafeMutablePointer<DirtyPageTable> = {
        let table = UnsafeMutablePointer<DirtyPageTable>.allocate(capacity: 1)
        table.initialize(to: DirtyPageTable())
        return table
    }()

    /// Records the bytes the layer above keeps for this commit in the history tree (its change
    /// record). Replaces an earlier call's bytes.
    public func setHistoryRecord(_ bytes: [UInt8]) {
        historyRecord = bytes
    }

    /// Discards every change and releases the write lock. Harmless after commit or cancel.
    public func cancel() {
        if finished { return }
        finished = true
        releasePages()
        storage.writerLock.release()
    }

    /// Frees every in-memory page, and gives their memory back to the storage for the next
    /// write transaction.
    func releasePages() {
        guard let b = buffers else { return }
        buffers = nil
        dirtyTable = Self.noPages
        b.reset()
        storage.pageBuffers.withLock { $0 = b }
    }

    // MARK: PageStore

    /// The page as this transaction sees it: its own copy if it allocated the page, otherwise
    /// the committed page (checksum verified the first time this process reads it).
    /// - Throws: `.corrupt` for a page outside the base version's file or failing its check.
    @inline(__always)
    public func page(_ pgno: PageNumber) throws(StorageError) -> UnsafeRawPointer {
        if let p = dirtyTable.pointee.page(pgno) { return UnsafeRawPointer(p) }
        if pgno == baseInlinePage { return UnsafeRawPointer(base.inlineCatalog!.page) }
        return try file.checkedPage(pgno, limit: base.pageCount, maxVersion: base.version)
    }

    /// Starts loading the first `lines` cache lines of page `pgno` as this transaction sees it.
    public func prefetch(_ pgno: PageNumber, lines: Int) {
        if let p = dirtyTable.pointee.page(pgno) {
            prefetchPage(UnsafeRawPointer(p), lines: lines)
        } else {
            file.prefetch(pgno, lines: lines, limit: base.pageCount)
        }
    }

    /// Whether this transaction allocated `pgno` (and may therefore edit it in place).
    @inline(__always)
    public func isWritable(_ pgno: PageNumber) -> Bool {
        dirtyTable.pointee.page(pgno) != nil
    }

    /// The memory of a page this transaction allocated.
    @inline(__always)
    public func writablePage(_ pgno: PageNumber) -> UnsafeMutableRawPointer {
        guard let p = dirtyTable.pointee.page(pgno) else {
            preconditionFailure("page \(pgno) was not allocated by this write transaction")
        }
        return p
    }

    /// The catalog leaf the base slot holds, copied into a page of this transaction under its
    /// own number: no reader reads that number from the file (each rebuilds the leaf from its
    /// slot), so the leaf needs no new page, and the page numbers a commit writes stay one run.
    public func adoptInPlace(_ pgno: PageNumber) throws(StorageError) -> UnsafeMutableRawPointer? {
        guard pgno == baseInlinePage, !baseInlineAdopted, let inline = base.inlineCatalog else { return nil }
        let buffer = try pageMemory().take(zeroed: false)
        buffer.copyMemory(from: inline.page, byteCount: pageSize)
        dirtyTable.pointee.insert(pgno, buffer)
        baseInlineAdopted = true
        return buffer
    }

    /// A zeroed page: in this commit's slot area when it replaces a page the base commit wrote
    /// (`areaPage`), else one this transaction freed, else a page freed long enough ago that no
    /// reader can see it, else a new page at the end of the file.
    /// - Throws: `.invalidArgument` after commit or cancel; `.noSpace` beyond the file's size
    ///   limit; `.corrupt` if the free-space tree does not decode.
    public func allocate(replacing old: PageRef?) throws(StorageError) -> (PageNumber, UnsafeMutableRawPointer) {
        try allocate(zeroed: true, recent: old?.version == baseVersion)
    }

    /// A page like `allocate(replacing:)`'s, its buffer not zeroed: the caller writes all of it.
    public func allocateForOverwrite(replacing old: PageRef?) throws(StorageError) -> (PageNumber, UnsafeMutableRawPointer) {
        try allocate(zeroed: false, recent: old?.version == baseVersion)
    }

    /// A copy of page `pgno` in a page of its own, its buffer not zeroed first (the copy writes
    /// every byte but the checksum and version, which commit seals). The copy of a page the
    /// base commit wrote goes in this commit's slot area while it has room (`areaPage`).
    public func allocateCopy(of pgno: PageNumber) throws(StorageError) -> (PageNumber, UnsafeMutableRawPointer) {
        let source = try page(pgno)
        let (copy, buffer) = try allocate(zeroed: false, recent: PageHeader.version(source) == baseVersion)
        copyPageBody(from: source, to: buffer)
        return (copy, buffer)
    }

    /// `recent`: the page replaces one the base commit wrote, so the next commits will likely
    /// write it again: it goes in the slot area if it can.
    private func allocate(zeroed: Bool, recent: Bool) throws(StorageError) -> (PageNumber, UnsafeMutableRawPointer) {
        let buffers = try pageMemory()
        let buffer = try buffers.take(zeroed: zeroed)
        let pgno: PageNumber
        do throws(StorageError) {
            if recent, let p = try areaPage() { pgno = p } else { pgno = try nextPageNumber() }
        } catch {
            buffers.give(buffer)
            throw error
        }
        dirtyTable.pointee.insert(pgno, buffer)
        allocations += 1
        return (pgno, buffer)
    }

    /// The transaction's page memory, while it has not ended.
    func pageMemory() throws(StorageError) -> PageBuffers {
        guard !finished, let buffers else { throw .invalidArgument("the write transaction has ended") }
        return buffers
    }

    /// The next page of the slot area, if it is free (reusable now, freed by this transaction,
    /// or the file's next page): the pages taken are then the area's first ones, one run right
    /// after the slot. A page in use ends the run for this transaction: taking pages after it
    /// would split the run. A page this transaction took from the area and freed again is
    /// taken back first, so that no gap is left.
    private func areaPage() throws(StorageError) -> PageNumber? {
        if let i = areaFree.firstIndex(where: { $0 < areaNext }) { return areaFree.remove(at: i) }
        guard !areaClosed, areaNext < area.upperBound else { return nil }
        let p = areaNext
        if let r = reusable.run(startingAt: p) {
            _ = reusable.take(fromRun: r)
        } else if let i = areaFree.firstIndex(of: p) {
            areaFree.remove(at: i)
        } else if p == pageCount, pageCount < file.maxPages {
            pageCount += 1
        } else {
            areaClosed = true
            return nil
        }
        areaNext += 1
        return p
    }

    /// The page number of the next allocation: one this transaction freed, a reusable one, or
    /// a new one at the end of the file.
    private func nextPageNumber() throws(StorageError) -> PageNumber {
        if let p = localFree.popLast() { return p }
        if let p = try takeReusablePage() { return p }
        guard pageCount < file.maxPages else {
            throw .noSpace("\(storage.name) has reached its size limit of \(file.maxPages) pages (\(PageFile.sizeLimit))")
        }
        pageCount += 1
        return pageCount - 1
    }

    /// Gives up `pgno`: at once if this transaction allocated it, otherwise once no reader can
    /// see the version before this one.
    public func free(_ pgno: PageNumber) {
        frees += 1
        if let b = dirtyTable.pointee.remove(pgno) {
            buffers?.give(b)
            if area.contains(pgno) { areaFree.append(pgno) } else { localFree.append(pgno) }
        } else {
            pendingFree.append(pgno)
        }
    }
}
