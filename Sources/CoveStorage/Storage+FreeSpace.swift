// Free space: the free-space tree lists the pages no version in use references, keyed by the
// version that freed them. A write transaction reuses pages freed by versions no reader can see
// any more, and at commit records what it freed, settling the tree's own page churn in a loop
// that provably stops (see settleFreeSpace and docs/FORMAT.md).

/// The records of the free-space tree.
///
/// Key: `version << 20 | sequence`: the version that freed the pages, then a sequence number
/// for the records one version needs. Value: exactly `valueSize` bytes: a little-endian u16
/// count, then the LEB128 distances between ascending page numbers (the first from 0), zero
/// padded. The fixed size keeps rewriting a record from changing the shape of its leaf.
enum FreeSpaceRecord {
    static let valueSize = 992
    static let sequenceBits: UInt64 = 20
    static let maxSequence = 1 << 20

    @inline(__always)
    static func key(version: UInt64, sequence: Int) -> UInt64 {
        version << sequenceBits | UInt64(sequence)
    }

    @inline(__always)
    static func version(ofKey key: UInt64) -> UInt64 {
        key >> sequenceBits
    }

    /// A record listing no page (left by the settling loop when it needed fewer records).
    static let empty = [UInt8](repeating: 0, count: valueSize)

    /// Packs ascending page numbers into as few records as possible.
    static func encode(_ pages: [PageNumber]) -> [[UInt8]] {
        var records: [[UInt8]] = []
        var i = 0
        while i < pages.count {
            var value = [UInt8](repeating: 0, count: valueSize)
            var count = 0
            value.withUnsafeMutableBytes { v in
                let p = v.baseAddress!
                var at = 2
                var previous: UInt64 = 0
                while i < pages.count && count < Int(UInt16.max) {
                    let d = pages[i] - previous
                    if at + LEB128.size(d) > valueSize { break }
                    at += LEB128.write(d, to: p + at)
                    previous = pages[i]
                    count += 1
                    i += 1
                }
            }
            value[0] = UInt8(truncatingIfNeeded: count)
            value[1] = UInt8(truncatingIfNeeded: count >> 8)
            records.append(value)
        }
        return records
    }

    /// Appends the pages of a record to `pages`, checking each is below `pageCount` and not a
    /// meta slot (page 0 or `secondSlot`).
    /// - Returns: the number of pages appended.
    @discardableResult
    static func decode(_ value: UnsafeRawBufferPointer, key: UInt64, pageCount: UInt64, secondSlot: PageNumber,
                       into pages: inout [PageNumber]) throws(StorageError) -> Int {
        guard value.count == valueSize else {
            throw .corrupt("free-space record \(key) is \(value.count) bytes, not \(valueSize)")
        }
        let count = Int(value[0]) | Int(value[1]) << 8
        var at = 2
        try LEB128.readPages(value, at: &at, count: count, pageCount: pageCount, secondSlot: secondSlot, into: &pages,
                             "free-space record \(key)")
        return count
    }
}

extension WriteTransaction {
    /// The reusable page after the last one taken, if it is free; otherwise the first page of
    /// the lowest run of at least `wantedRun` pages (consuming more records to find one, up
    /// to a bound, while the file may grow), else nil if the file may grow, else the first page
    /// of the longest run. Once the file may not grow, free pages are plenty and (under random
    /// updates) scattered, and a commit of a few pages (`fewPages`, as a single-object commit
    /// writes) consumes records only while fewer than `wantedRun` pages are at hand (the slot
    /// areas' pages not counted: general allocation leaves them alone): each one consumed is
    /// rewritten at commit, and looking through a large record for a run it does not have cost
    /// a random single-object commit a fifth of its CPU time. A larger commit still looks for
    /// runs: taking its pages one by one would cost it a write call (and a place on the disk)
    /// for each.
    /// Pages allocated one after another thus sit side by side, and the commit writes them
    /// in few calls, where taking the lowest free page each time interleaves the pages of
    /// consecutive versions for good. nil also when no page is reusable.
    func takeReusablePage() throws(StorageError) -> PageNumber? {
        if let last = lastReused, let r = reusable.run(startingAt: last + 1) { return takeReusable(fromRun: r) }
        if !settlingFreeSpace {
            // The commit later rewrites every record consumed: look through a few at most, and,
            // past the growth bound, for a commit of a few pages only for want of pages.
            var looked = 0
            while looked < 16, reusable.pageCount < 4096, reusable.firstRun(atLeast: wantedRun) == nil,
                  mayGrow || wantedRun > WriteTransaction.fewPages || reusable.pagesAboveFloor < wantedRun {
                guard try consumeFreeRecord() else { break }
                looked += 1
            }
        }
        let run: Int
        if let last = lastReused, let r = reusable.run(startingAt: last + 1) {
            run = r     // a record just consumed freed the page after the last one taken
        } else if let r = reusable.firstRun(atLeast: wantedRun) {
            run = r
        } else if let r = reusable.longestRun(), !mayGrow {
            run = r
        } else {
            return nil
        }
        return takeReusable(fromRun: run)
    }

    /// The most pages a commit writes for allocation to take scattered pages it has at hand
    /// rather than look through free-space records for a run (a single-object commit writes
    /// three or four).
    static let fewPages = 4

    private func takeReusable(fromRun r: Int) -> PageNumber {
        let p = reusable.take(fromRun: r)
        lastReused = p
        return p
    }

    /// Moves the pages of the oldest free-space record into `reusable`, if that record was
    /// freed by a version no reader can see past (its version <= `oldestPinned`). The record
    /// stays in the tree until the commit rewrites or removes it.
    /// - Returns: false when no reusable record is left.
    /// - Complexity: O(log n) for a tree of n records.
    func consumeFreeRecord() throws(StorageError) -> Bool {
        if freeSpaceExhausted || freeSpace.page.isNone {
            freeSpaceExhausted = true
            return false
        }
        var found: UInt64?
        var pages: [PageNumber] = []
        let limit = oldestPinned
        let pageCount = base.pageCount
        try BTree(store: self, root: freeSpace, keyKind: .u64).forEach(from: freeCursor, reverse: false) {
            key, value throws(StorageError) -> Bool in
            found = key
            if FreeSpaceRecord.version(ofKey: key) <= limit {
                try FreeSpaceRecord.decode(value, key: key, pageCount: pageCount, secondSlot: base.secondSlot, into: &pages)
            }
            return false
        }
        guard let key = found, FreeSpaceRecord.version(ofKey: key) <= limit else {
            freeSpaceExhausted = true
            return false
        }
        consumedKeys.append(key)
        consumedPages += UInt64(pages.count)
        if key == UInt64.max { freeSpaceExhausted = true } else { freeCursor = key + 1 }
        if !pages.isEmpty {
            reusable.add(pages)
        }
        return true
    }

    /// Writes this commit's free-space records and returns the continuation pages of its
    /// written-page list (allocated here, since they are pages too).
    ///
    /// Editing the free-space tree allocates pages (copies of its committed pages, splits) and
    /// frees them (the committed originals), which changes the very lists being recorded. The
    /// loop rewrites the records from the current lists until a pass allocates and frees
    /// nothing; then the records written in that pass are exact. It stops because:
    /// - allocation during the loop never reads the tree: it takes pages stocked beforehand in
    ///   `reusable`, `localFree` or `areaFree`, else extends the file;
    /// - record values have a fixed size, so rewriting one in a page this transaction already
    ///   owns changes nothing of the tree's shape;
    /// - the set of keys only grows within the loop (a record no longer needed is written
    ///   empty, not removed), so pages are never freed by merges; the frees left are of
    ///   committed pages, each copied at most once, and allocations come from first copies,
    ///   splits (the tree only grows, bounded by its final size) and continuation pages (whose
    ///   number only grows, bounded by the list's final size).
    /// So only finitely many passes can allocate or free, and the pass after the last of them
    /// settles.
    /// - Returns: the continuation pages, ascending; the free-page count; every other page
    ///   written, ascending (the pages the written-page list names, which seal then uses).
    func settleFreeSpace() throws(StorageError) -> (continuation: [PageNumber], freePages: UInt64, written: [PageNumber]) {
        // The previous commit's continuation pages are live in the base version only.
        try WrittenPageList.forEachContinuation(meta: base, page: { pgno throws(StorageError) in
            try file.checkedPage(pgno, limit: base.pageCount, maxVersion: base.version)
        }) { pgno throws(StorageError) in
            free(pgno)
        }
        try giveBackTail()
        if let settled = settleInMetaSlot() { return settled }
        // Stock pages for the edits below, which may not read the tree while editing it.
        while reusable.pageCount + ownFree.count < 64, try consumeFreeRecord() {}

        settlingFreeSpace = true
        defer { settlingFreeSpace = false }
        var tree = BTree(store: self, root: freeSpace, keyKind: .u64)
        // The loop below relies on a put never freeing a page it allocated.
        tree.sharesSplits = false
        // Groups of the base slot that must stay listed move into the tree, under the versions
        // that freed them (a version whose pages a slot listed has no record of its own in the
        // tree holding a page).
        for group in heldRecent {
            for (i, record) in FreeSpaceRecord.encode(group.pages).enumerated() {
                try tree.put(FreeSpaceRecord.key(version: group.version, sequence: i), record)
            }
        }
        recentFree = []
        var usedConsumedKeys = -1
        var versionRecords = 0
        var continuation: [PageNumber] = []
        for _ in 0..<256 {
            let allocationsBefore = allocations
            let freesBefore = frees
            var leftover = reusable.pages(mergedWith: ownFree.sorted())
            // Reusable pages of the slot areas stay listed in the slot (few, and general
            // allocation leaves them alone: in a record, every commit looking for a run would
            // take them out of the tree and put them back).
            let areaLeftover = Array(leftover.prefix { $0 < reusable.floor })
            if !areaLeftover.isEmpty { leftover.removeFirst(areaLeftover.count) }
            let areaGroup = areaLeftover.isEmpty ? [] : [FreedPages(version: oldestPinned, pages: areaLeftover)]
            var pending = pendingFree
            pending.sort()
            let leftoverRecords = FreeSpaceRecord.encode(leftover)

            if usedConsumedKeys < 0 {
                // Leftover pages go back under the keys they came from (they are reusable
                // now and stay so); keys not needed for them go.
                usedConsumedKeys = min(leftoverRecords.count, consumedKeys.count)
                for key in consumedKeys[usedConsumedKeys...] {
                    try tree.remove(key)
                }
            }
            for i in 0..<usedConsumedKeys {
                try tree.put(consumedKeys[i], i < leftoverRecords.count ? leftoverRecords[i] : FreeSpaceRecord.empty)
            }
            // The pages this version freed go in its meta slot when they fit and no leftover
            // needs a record under this version (the next commit then finds them there and may
            // settle without the tree). All of this version's pages are then in the slot, and
            // its records in the tree, if an earlier pass wrote some, are empty: a later commit
            // that moves the group to the tree may write over them.
            let pendingGroup = [FreedPages(version: version, pages: pending)]
            let pendingInline = !pending.isEmpty && leftoverRecords.count <= usedConsumedKeys
                && FreedPages.encodedSize(areaGroup + pendingGroup) <= MetaSlot.recentFreeCapacity
            recentFree = areaGroup + (pendingInline ? pendingGroup : [])
            let pendingRecords = pendingInline ? [] : FreeSpaceRecord.encode(pending)
            // Pages this version freed (unless the slot lists them), and leftovers beyond the
            // consumed keys, under this version (the leftovers are thus kept back longer than
            // needed: rare and safe).
            let mine = pendingRecords + leftoverRecords.dropFirst(usedConsumedKeys)
            let records = max(mine.count, versionRecords)
            guard records < FreeSpaceRecord.maxSequence else {
                throw .invalidArgument("a commit may free at most \(FreeSpaceRecord.maxSequence) records of pages")
            }
            for i in 0..<records {
                try tree.put(FreeSpaceRecord.key(version: version, sequence: i), i < mine.count ? mine[i] : FreeSpaceRecord.empty)
            }
            versionRecords = records

            // The pages the list names; final in the pass that allocates nothing.
            let written = writtenPages(excluding: continuation)
            let needed = continuationPagesNeeded(for: written)
            while continuation.count < needed {
                continuation.append(try allocate().0)
            }

            if allocations == allocationsBefore && frees == freesBefore {
                freeSpace = tree.root
                continuation.sort()
                let free = base.freePageCount - consumedPages + UInt64(leftover.count + areaLeftover.count) + UInt64(pending.count)
                return (continuation, free, written)
            }
        }
        throw .internal("the free-space update of version \(version) did not settle")
    }

    /// Gives back the free pages at the end of the file: when a quarter of the base version's
    /// pages (and at least `tailSweepMinimum`) are free, looks at every free page (reading the
    /// records in place) for the run that ends the file and, when it is an eighth of the file or
    /// more, takes every reusable record into memory and lowers the page count below the run;
    /// the records then written no longer name those pages, and commit shortens the file once
    /// the version is durable. Pages a reader may still see (the groups and records held for
    /// readers, what this commit frees) stop the run, as does any page in use, so that a
    /// reader of any pinned version finds every page it can reach. A look that gives nothing
    /// back writes nothing and is not tried again until the free pages have grown by a quarter,
    /// or, when few pages in use stand in the last eighth of the file, one of them is freed
    /// (see `Storage.tailSweep`).
    func giveBackTail() throws(StorageError) {
        let free = base.freePageCount
        guard free >= WriteTransaction.tailSweepMinimum, free * 4 >= base.pageCount else { return }
        if let last = storage.tailSweep.withLock({ $0 }),
           free < last.freePages + last.freePages / 4 + WriteTransaction.tailSweepMinimum,
           !last.heldInTheWay || last.oldestPinned == oldestPinned,
           base.version < last.version + WriteTransaction.tailLookEvery {
            return
        }
        storage.tailLooks.add(1, ordering: .relaxed)
        // A look that writes nothing: the free pages of the records not consumed yet, read in
        // place, those reusable now apart from those held for readers.
        let fileFloor = max(MetaSlot.newFilePages, base.areasEnd)
        var held: [PageNumber] = pendingFree
        for group in heldRecent { held += group.pages }
        var inTree: [PageNumber] = []
        if !freeSpace.page.isNone {
            let pageCount = base.pageCount
            let limit = oldestPinned
            try BTree(store: self, root: freeSpace, keyKind: .u64).forEach(from: freeCursor, reverse: false) {
                key, value throws(StorageError) -> Bool in
                if FreeSpaceRecord.version(ofKey: key) <= limit {
                    _ = try FreeSpaceRecord.decode(value, key: key, pageCount: pageCount, secondSlot: base.secondSlot, into: &inTree)
                } else {
                    _ = try FreeSpaceRecord.decode(value, key: key, pageCount: pageCount, secondSlot: base.secondSlot, into: &held)
                }
                return true
            }
        }
        let floor = max(fileFloor, (held.max() ?? 0) + 1)
        /// Where the run of `free` pages (ascending) that ends the file starts, not below `floor`.
        func runStart(_ free: [PageNumber], floor: PageNumber) -> PageNumber {
            var end = pageCount
            var i = free.count - 1
            while i >= 0, end > floor, free[i] == end - 1 {
                end -= 1
                i -= 1
            }
            return end
        }
        let candidates = (reusable.pages(mergedWith: ownFree.sorted()) + inTree).sorted()
        let end = max(runStart(candidates, floor: fileFloor), floor)
        // Worth it when an eighth of the file goes: a few pages given back at every sweep would
        // have the file shortened and extended again (a chunk of zeros written) by turns.
        let worth = max(WriteTransaction.tailSweepMinimum, pageCount / 8)
        guard pageCount - end >= worth else {
            // Nothing given back. Worth watching when few pages in use stand in the last
            // eighth of the file (the pages a large commit wrote last, say): a commit that frees
            // one of them lets the next look again, and so does, when pages held for readers
            // stand there, the oldest pinned version moving. Otherwise the next look waits for
            // the free pages to grow by a quarter.
            let top = pageCount > worth ? pageCount - worth : 0
            var firstFreeInTop = candidates.count
            var lo = 0
            while lo < firstFreeInTop {
                let mid = (lo + firstFreeInTop) / 2
                if candidates[mid] < top { lo = mid + 1 } else { firstFreeInTop = mid }
            }
            let heldInTop = held.reduce(0) { $0 + ($1 >= top && $1 < pageCount ? 1 : 0) }
            let inUseInTop = Int(pageCount - top) - (candidates.count - firstFreeInTop) - heldInTop
            let watched = inUseInTop <= WriteTransaction.tailPagesInUseWatched
            let seen = Storage.TailSweep(version: base.version, freePages: free, oldestPinned: oldestPinned,
                                         heldInTheWay: watched && heldInTop > 0, watchFrom: watched ? top : nil)
            storage.tailSweep.withLock { $0 = seen }
            // Pages of the free-space tree itself there (a large commit's records land at the
            // end of the file): consuming every record makes this commit rewrite the tree, its
            // pages going where allocation puts them, low in the file.
            var ownPageInTheWay = false
            if watched, inUseInTop > 0, !freeSpace.page.isNone {
                try BTree(store: self, root: freeSpace, keyKind: .u64).forEachPage { p throws(StorageError) in
                    if p >= top { ownPageInTheWay = true }
                }
            }
            if ownPageInTheWay { while try consumeFreeRecord() {} }
            return
        }
        // Worth it: every reusable record into memory (the commit rewrites them without the
        // pages given back).
        while try consumeFreeRecord() {}
        var kept = FreeRuns(floor: reusable.floor)
        kept.add(reusable.pages().filter { $0 < end })
        reusable = kept
        lastReused = nil
        localFree.removeAll { $0 >= end }
        areaFree.removeAll { $0 >= end }
        givenBackFrom = pageCount
        pageCount = end
        storage.tailSweep.withLock { $0 = nil }
    }

    /// Lets the next commit look at the end of the file again when this one freed a page in
    /// the part of the file the last look watched (its pages freed are final once the free
    /// space settled).
    func noteFreedForTail() {
        storage.tailSweep.withLock { last in
            guard let from = last?.watchFrom, pendingFree.contains(where: { $0 >= from }) else { return }
            last = nil
        }
    }

    /// The fewest free pages worth a look at the end of the file (`giveBackTail`).
    static let tailSweepMinimum: UInt64 = 64
    /// The most pages in use in the last eighth of the file for a look that gave nothing back to
    /// watch for them to be freed.
    static let tailPagesInUseWatched = 32
    /// The commits after which a look that gave nothing back is made again anyway: the pages in
    /// use move down as commits rewrite them, until the end of the file is free.
    static let tailLookEvery: UInt64 = 1024

    /// The most reusable pages a commit leaves over in its slot. More go back to the free-space
    /// tree, where they cost nothing until a commit needs them, rather than being taken apart
    /// and listed again by every commit (pages the allocator passes over, single pages between
    /// runs, would otherwise travel from slot to slot).
    static let leftoverLimitInMetaSlot = 32

    /// Settles the free space without touching the free-space tree, when no record of it was
    /// consumed, at most `leftoverLimitInMetaSlot` reusable pages are left over, and the
    /// pages to list fit the meta slot beside an all-inline written-page list:
    /// the slot then lists the pages left reusable (under the oldest pinned version, so the
    /// next commit may take them), the groups still held, and the pages this version freed.
    /// A small commit thus writes no free-space page. nil when the tree must be edited.
    private func settleInMetaSlot() -> (continuation: [PageNumber], freePages: UInt64, written: [PageNumber])? {
        let freed = ownFree.sorted()
        guard consumedKeys.isEmpty, reusable.pageCount + freed.count <= WriteTransaction.leftoverLimitInMetaSlot else { return nil }
        let written = writtenPages(excluding: [])
        guard let listBytes = inlineListBytes(for: written) else { return nil }
        // Sorted in place: nothing allocates or frees once the free space settles.
        pendingFree.sort()
        let leftover = reusable.pages(mergedWith: freed)
        let pending = pendingFree
        var groups: [FreedPages] = []
        if !leftover.isEmpty { groups.append(FreedPages(version: oldestPinned, pages: leftover)) }
        groups += heldRecent
        if !pending.isEmpty { groups.append(FreedPages(version: version, pages: pending)) }
        let bytes = FreedPages.encodedSize(groups)
        guard bytes <= MetaSlot.recentFreeCapacity,
              listBytes + bytes <= slotRoom else { return nil }
        recentFree = groups
        let free = base.freePageCount - consumedPages + UInt64(leftover.count) + UInt64(pending.count)
        return ([], free, written)
    }

    /// The bytes of the written-page list for `written` if it fits the meta slot, else nil.
    private func inlineListBytes(for written: [PageNumber]) -> Int? {
        var bytes = 0
        var previous: UInt64 = 0
        for p in written {
            bytes += WrittenPageList.entrySize(delta: p - previous)
            previous = p
        }
        return bytes <= slotRoom ? bytes : nil
    }

    /// The written pages of this commit (the continuation pages and a catalog leaf the meta slot
    /// holds excepted), ascending.
    func writtenPages(excluding continuation: [PageNumber]) -> [PageNumber] {
        var pages = Array(dirty.keys)
        if inlineCatalogPage != 0, let i = pages.firstIndex(of: inlineCatalogPage) { pages.remove(at: i) }
        if !continuation.isEmpty {
            let skip = Set(continuation)
            pages.removeAll { skip.contains($0) }
        }
        pages.sort()
        return pages
    }

    /// How many continuation pages the written-page list needs now.
    private func continuationPagesNeeded(for written: [PageNumber]) -> Int {
        var room = listRoom
        var pages = 0
        var previous: UInt64 = 0
        for p in written {
            let size = WrittenPageList.entrySize(delta: p - previous)
            if size > room {
                pages += 1
                room = WrittenPageList.pageCapacity
            }
            room -= size
            previous = p
        }
        return pages
    }
}
