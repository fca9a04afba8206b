// Snapshot: one committed version pinned for reading, from any thread, for as long as it is
// open. It is the PageStore a reader's B+trees read through.
import Synchronization

/// A read-only view of one committed version. While it is open, no page it can reach is reused,
/// whatever later commits do; end it when done (deinit ends it too).
///
/// `@unchecked Sendable`: every field is immutable after init except `ended`, which is atomic;
/// pages are read through a read-only mapping that outlives the snapshot's use of it (the
/// snapshot holds the storage, which holds the mapping). So a snapshot may be read from several
/// threads at once, and ended from any of them.
public final class Snapshot: PageStore, @unchecked Sendable {
    /// The commit version this snapshot reads.
    public let version: UInt64
    /// The root of the catalog, the byte-keyed tree of the layer above.
    public let catalog: TreeRoot
    /// The root of the history tree: one record per commit, keyed by its version.
    public let history: TreeRoot
    /// The root of the free-space tree (for verification and inspection).
    public let freeSpace: TreeRoot
    /// The number of pages of this version's file, meta slots included.
    public let pageCount: UInt64
    /// The storage this snapshot belongs to.
    public let storage: Storage

    /// The meta slot this snapshot reads, shared with the storage and other snapshots of it.
    let box: MetaBox
    var meta: MetaSlot { box.meta }
    let file: PageFile
    let slot: Int
    /// The page number of the catalog leaf the meta slot holds (0: none).
    let inlinePage: PageNumber
    private let ended = Atomic<Bool>(false)

    init(storage: Storage, slot: Int, box: MetaBox) {
        self.storage = storage
        self.file = storage.file
        self.slot = slot
        self.box = box
        version = box.meta.version
        catalog = box.meta.catalog
        history = box.meta.history
        freeSpace = box.meta.freeSpace
        pageCount = box.meta.pageCount
        inlinePage = box.meta.inlineCatalogPage
    }

    deinit {
        end()
    }

    /// Unpins the version. Pages read through the snapshot must not be used afterwards, and
    /// `page(_:)` fails with `.closed`. Ending twice is harmless.
    public func end() {
        if ended.exchange(true, ordering: .acquiringAndReleasing) { return }
        storage.lock.unpin(slot)
        storage.returnSlot(slot)
    }

    /// Whether `end()` was called.
    public var isEnded: Bool { ended.load(ordering: .acquiring) }

    // MARK: PageStore

    /// The page `pgno` of this version, its checksum verified the first time this process
    /// reads it at this version.
    /// - Throws: `.corrupt` (out of range, bad checksum, a version newer than this snapshot's),
    ///   `.closed` after `end()`.
    /// - Complexity: O(1); O(page size) the first time a page is read.
    @inline(__always)
    public func page(_ pgno: PageNumber) throws(StorageError) -> UnsafeRawPointer {
        if ended.load(ordering: .relaxed) { throw endedError() }
        if pgno == inlinePage { return UnsafeRawPointer(box.meta.inlineCatalog!.page) }
        return try file.checkedPage(pgno, limit: pageCount, maxVersion: version)
    }

    /// Page `pgno` as this version has it, unchecked: the catalog leaf the meta slot holds, or
    /// the file's page (verify() checks it).
    func rawPage(_ pgno: PageNumber) throws(StorageError) -> UnsafeRawPointer {
        pgno == inlinePage ? UnsafeRawPointer(box.meta.inlineCatalog!.page) : try file.unverifiedPage(pgno)
    }

    @inline(never)
    private func endedError() -> StorageError {
        .closed("the snapshot of version \(version) has ended")
    }

    /// Starts loading the first `lines` cache lines of page `pgno`.
    public func prefetch(_ pgno: PageNumber, lines: Int) {
        file.prefetch(pgno, lines: lines, limit: pageCount)
    }

    /// Always false: a snapshot writes nothing.
    public func isWritable(_ pgno: PageNumber) -> Bool { false }

    /// Not available: `isWritable` is never true for a snapshot (a precondition of the
    /// `PageStore` contract, checked).
    public func writablePage(_ pgno: PageNumber) -> UnsafeMutableRawPointer {
        preconditionFailure("a snapshot has no writable pages (page \(pgno))")
    }

    /// - Throws: `.invalidArgument`: a snapshot is read-only.
    public func allocate(replacing old: PageRef?) throws(StorageError) -> (PageNumber, UnsafeMutableRawPointer) {
        throw .invalidArgument("a snapshot is read-only: changes need a write transaction")
    }

    /// Nothing to do: a snapshot never allocates, so a tree on it never frees.
    public func free(_ pgno: PageNumber) {}

    // MARK: History

    /// The history record of commit `version`, if it has one and it was not trimmed.
    /// - Complexity: O(log n)
    public func historyRecord(_ version: UInt64) throws(StorageError) -> [UInt8]? {
        if let entry = box.meta.recentHistory.first(where: { $0.version == version }) { return entry.bytes }
        if history.page.isNone { return nil }
        return try BTree(store: self, root: history, keyKind: .u64).get(version)
    }

    /// Calls `body` with each history record of a commit newer than `version`, oldest first,
    /// until it returns false. The buffer is valid only during the call.
    /// - Complexity: O(log n + k) for k records visited.
    public func forEachHistoryRecord(after version: UInt64,
                                     _ body: (UInt64, UnsafeRawBufferPointer) throws(StorageError) -> Bool) throws(StorageError) {
        if version == UInt64.max { return }
        var going = true
        if !history.page.isNone {
            try BTree(store: self, root: history, keyKind: .u64).forEach(from: version + 1, reverse: false) {
                key, value throws(StorageError) -> Bool in
                going = try body(key, value)
                return going
            }
        }
        // The slot's records are newer than every record of the tree.
        for entry in box.meta.recentHistory where going && entry.version > version {
            var failure: StorageError?
            going = entry.bytes.withUnsafeBytes { b in
                do throws(StorageError) { return try body(entry.version, b) } catch {
                    failure = error
                    return false
                }
            }
            if let failure { throw failure }
        }
    }

    /// The number of history records this version holds, in its meta slot and its tree.
    public var historyRecordCount: UInt64 {
        history.count + UInt64(box.meta.recentHistory.count)
    }
}

extension Snapshot {
    /// The format version of the meta slot this snapshot read (a file of an older format is
    /// written in the newest from its next commit on).
    public var formatVersion: UInt32 { meta.format }
    /// The pages of the file that no version in use references: reused by later commits.
    public var freePageCount: UInt64 { meta.freePageCount }
}
