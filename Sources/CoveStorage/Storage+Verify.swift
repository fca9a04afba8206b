// verify(): the whole-file check. Every reachable page's checksum, each tree's own invariants,
// and that the live pages, the free pages and the two meta slots partition the file exactly.

/// What `Storage.verify()` found in a file that holds together.
public struct VerifyReport: Sendable, Equatable, CustomStringConvertible {
    /// The version checked (the latest when verify began).
    public var version: UInt64
    /// Pages in the file at that version, meta slots included.
    public var pageCount: UInt64
    /// Pages reachable from the roots: trees, their overflow chains, pages catalog entries own,
    /// and the continuation pages of the last commit's written-page list.
    public var livePages: UInt64
    /// Pages listed by the free-space tree.
    public var freePages: UInt64
    /// Entries of the catalog.
    public var catalogEntries: UInt64
    /// History records, in the history tree and the meta slot.
    public var historyRecords: UInt64
    /// Records of the free-space tree, and groups of freed pages listed in the meta slot.
    public var freeRecords: UInt64

    public var description: String {
        "version \(version): \(pageCount) pages (2 meta, \(livePages) live, \(freePages) free); "
            + "\(catalogEntries) catalog entries, \(historyRecords) history records, \(freeRecords) free-space records"
    }
}

extension Storage {
    /// Checks the latest version of the whole file, using `options.catalogPages` for the pages
    /// catalog entries own.
    /// - Throws: `.corrupt` naming the first problem; `.closed`.
    /// - Complexity: O(p) for p pages, each read and checksummed once.
    public func verify() throws(StorageError) -> VerifyReport {
        try verify(catalogPages: options.catalogPages)
    }

    /// Checks the latest version of the whole file: every reachable page's checksum and
    /// version, each tree's `verify()`, that every page but the meta slots is either reachable
    /// exactly once or listed free exactly once, that free-space records are not newer than the
    /// version, and the meta's count of free pages.
    /// - Parameter catalogPages: enumerates the pages each catalog entry owns; nil: none.
    /// - Throws: `.corrupt` naming the first problem; `.closed`.
    public func verify(catalogPages: CatalogPageWalker?) throws(StorageError) -> VerifyReport {
        let snapshot = try beginRead()
        defer { snapshot.end() }
        let version = snapshot.version
        let pageCount = snapshot.pageCount
        let where_ = "\(name) at version \(version)"
        let meta = snapshot.meta
        var marks = [UInt8](repeating: 0, count: Int(pageCount)) // 0 unseen, 1 live, 2 free
        marks[0] = 1
        marks[Int(meta.secondSlot)] = 1
        var live: UInt64 = 0

        func markLive(_ pgno: PageNumber, _ owner: String) throws(StorageError) {
            guard meta.holdsData(pgno) else {
                throw .corrupt("\(where_): \(owner) references page \(pgno), a meta slot or outside the file's \(pageCount) pages")
            }
            guard marks[Int(pgno)] == 0 else {
                throw .corrupt("\(where_): page \(pgno) of \(owner) is also \(marks[Int(pgno)] == 1 ? "reachable elsewhere" : "listed free")")
            }
            try file.verifyPage(try snapshot.rawPage(pgno), pgno, maxVersion: version)
            marks[Int(pgno)] = 1
            live += 1
        }

        let catalog = BTree(store: snapshot, root: snapshot.catalog, keyKind: .bytes)
        let history = BTree(store: snapshot, root: snapshot.history, keyKind: .u64)
        let freeTree = BTree(store: snapshot, root: snapshot.freeSpace, keyKind: .u64)
        do throws(StorageError) {
            try catalog.verify()
        } catch {
            throw .corrupt("\(where_): the catalog tree: \(error.message)")
        }
        do throws(StorageError) {
            try history.verify()
            var newest: UInt64?
            try history.forEach(from: nil, reverse: true) { key, _ throws(StorageError) -> Bool in
                newest = key
                return false
            }
            if let newest, let first = snapshot.meta.recentHistory.first, first.version <= newest {
                throw .corrupt("the meta slot holds the record of version \(first.version), not newer than the tree's \(newest)")
            }
        } catch {
            throw .corrupt("\(where_): the history tree: \(error.message)")
        }
        do throws(StorageError) {
            try freeTree.verify()
        } catch {
            throw .corrupt("\(where_): the free-space tree: \(error.message)")
        }
        try catalog.forEachPage { pgno throws(StorageError) in try markLive(pgno, "the catalog tree") }
        try history.forEachPage { pgno throws(StorageError) in try markLive(pgno, "the history tree") }
        try freeTree.forEachPage { pgno throws(StorageError) in try markLive(pgno, "the free-space tree") }
        try WrittenPageList.forEachContinuation(meta: snapshot.meta, page: { pgno throws(StorageError) in
            try file.unverifiedPage(pgno)
        }) { pgno throws(StorageError) in
            try markLive(pgno, "the written-page list")
        }
        if let catalogPages {
            try catalog.forEach(from: nil, reverse: false) { key, value throws(StorageError) -> Bool in
                try catalogPages(snapshot, key, value) { pgno throws(StorageError) in
                    try markLive(pgno, "a catalog entry")
                }
                return true
            }
        }

        var free: UInt64 = 0
        func markFree(_ pgno: PageNumber, _ listing: @autoclosure () -> String) throws(StorageError) {
            guard marks[Int(pgno)] == 0 else {
                throw .corrupt("\(where_): free page \(pgno) (\(listing())) is also \(marks[Int(pgno)] == 1 ? "reachable" : "listed free elsewhere")")
            }
            marks[Int(pgno)] = 2
            free += 1
        }
        var records: UInt64 = 0
        var pages: [PageNumber] = []
        try freeTree.forEach(from: nil, reverse: false) { key, value throws(StorageError) -> Bool in
            records += 1
            let freedBy = FreeSpaceRecord.version(ofKey: key)
            guard freedBy <= version else {
                throw .corrupt("\(where_): free-space record \(key) was freed by version \(freedBy), newer than the file")
            }
            pages.removeAll(keepingCapacity: true)
            try FreeSpaceRecord.decode(value, key: key, pageCount: pageCount, secondSlot: meta.secondSlot, into: &pages)
            for pgno in pages { try markFree(pgno, "record \(key)") }
            return true
        }
        for group in snapshot.meta.recentFree {
            records += 1
            for pgno in group.pages { try markFree(pgno, "freed by version \(group.version), listed in the meta slot") }
        }
        if let leaked = marks.firstIndex(of: 0) {
            let count = marks.reduce(0) { $0 + ($1 == 0 ? 1 : 0) }
            throw .corrupt("\(where_): page \(leaked) is neither reachable nor free (\(count) such pages)")
        }
        guard free == snapshot.meta.freePageCount else {
            throw .corrupt("\(where_): the free-space tree and the meta slot list \(free) free pages, the meta slot records \(snapshot.meta.freePageCount)")
        }
        return VerifyReport(version: version, pageCount: pageCount, livePages: live, freePages: free,
                            catalogEntries: snapshot.catalog.count, historyRecords: snapshot.historyRecordCount,
                            freeRecords: records)
    }
}
