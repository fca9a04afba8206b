// The contract between the B+trees and whoever owns the pages: a write transaction over the real
// file, a read snapshot, or an in-memory store in the tests. Trees never touch the file directly.
import CCoveCPU

/// Where a B+tree reads and writes its pages.
///
/// Copy-on-write: a tree never modifies a page it did not allocate in the current transaction.
/// To change a committed page it allocates a new one, copies, edits the copy, and frees the old
/// number; the owner decides when a freed number may be reused (never while a reader can see it).
/// Sealing (version and checksum) is the owner's job at commit, not the tree's.
public protocol PageStore: AnyObject {
    /// The version being written (a write transaction) or read (a snapshot).
    var version: UInt64 { get }

    /// The page `pgno` as this transaction sees it: its own dirty copy if it has one, otherwise the
    /// committed page. The store checks bounds and, the first time it is touched, the checksum.
    /// The pointer stays valid until the transaction ends.
    /// - Throws: `.corrupt` for a number outside the file or a checksum that does not hold.
    func page(_ pgno: PageNumber) throws(StorageError) -> UnsafeRawPointer

    /// Whether `pgno` was allocated by this transaction (and may therefore be edited in place).
    func isWritable(_ pgno: PageNumber) -> Bool

    /// The writable memory of a page this transaction allocated (`isWritable(pgno)` must hold).
    func writablePage(_ pgno: PageNumber) -> UnsafeMutableRawPointer

    /// Makes committed page `pgno` this transaction's own to edit in place, under the same
    /// number, when no reader can ever read it from the file (the catalog leaf a meta slot
    /// holds: readers of that version rebuild it from the slot); nil for any other page, which
    /// is copied to a new page instead. Afterwards `isWritable(pgno)` holds.
    func adoptInPlace(_ pgno: PageNumber) throws(StorageError) -> UnsafeMutableRawPointer?

    /// A fresh page owned by this transaction holding a copy of page `pgno` as the transaction
    /// sees it (checksum and version fields excepted: those are the owner's to seal).
    /// - Throws: as `page` and `allocate`.
    func allocateCopy(of pgno: PageNumber) throws(StorageError) -> (PageNumber, UnsafeMutableRawPointer)

    /// A fresh zeroed page owned by this transaction. `old`, when given, is the committed page
    /// whose contents the new page takes over: a store may place the page by how recently `old`
    /// was written (a page the last commit wrote is likely written by the next one too).
    /// Every store states its placement: a wrapper that forwarded `allocate()` alone would drop
    /// the hint without a word. `allocate()` is this with no `old`.
    /// - Throws: `.invalidArgument` on a read-only store, `.noSpace`/`.io` if the file cannot grow.
    func allocate(replacing old: PageRef?) throws(StorageError) -> (PageNumber, UnsafeMutableRawPointer)

    /// A page as `allocate(replacing:)`'s whose every byte the caller then writes (an encoder
    /// that lays out a whole page): its memory need not be zeroed first, and may hold anything
    /// until it is written. `allocateForOverwrite()` is this with no `old`.
    /// - Throws: as `allocate`.
    func allocateForOverwrite(replacing old: PageRef?) throws(StorageError) -> (PageNumber, UnsafeMutableRawPointer)

    /// Gives up `pgno`, which this version no longer references. A page allocated by this same
    /// transaction is reusable at once; a committed one only once no reader can see it.
    func free(_ pgno: PageNumber)

    /// A hint that `pgno` is about to be read: starts loading its first `lines` cache lines
    /// (its header and column directory with the default). Reads nothing, checks nothing, never
    /// fails; a number outside the store is ignored.
    func prefetch(_ pgno: PageNumber, lines: Int)
}

extension PageStore {
    /// No hint: a store whose pages are not mapped memory ignores it.
    public func prefetch(_ pgno: PageNumber, lines: Int) {}

    /// A zeroed page, then the copy.
    public func allocateCopy(of pgno: PageNumber) throws(StorageError) -> (PageNumber, UnsafeMutableRawPointer) {
        let source = try page(pgno)
        let (copy, page) = try allocate()
        copyPageBody(from: source, to: page)
        return (copy, page)
    }

    /// A zeroed page placed as `allocate(replacing:)` places it: zeroing is a store's choice
    /// to skip.
    public func allocateForOverwrite(replacing old: PageRef?) throws(StorageError) -> (PageNumber, UnsafeMutableRawPointer) {
        try allocate(replacing: old)
    }

    /// A fresh zeroed page, for contents that replace no committed page.
    @inline(__always)
    public func allocate() throws(StorageError) -> (PageNumber, UnsafeMutableRawPointer) {
        try allocate(replacing: nil)
    }

    /// A fresh page for a whole-page encoder, for contents that replace no committed page.
    @inline(__always)
    public func allocateForOverwrite() throws(StorageError) -> (PageNumber, UnsafeMutableRawPointer) {
        try allocateForOverwrite(replacing: nil)
    }

    /// Every committed page may be read from the file: none is adopted.
    public func adoptInPlace(_ pgno: PageNumber) throws(StorageError) -> UnsafeMutableRawPointer? { nil }

    @inlinable @inline(__always)
    public func prefetch(_ pgno: PageNumber) { prefetch(pgno, lines: 2) }
}

/// Copies a page but for its checksum and version: type, flags and count, then the body.
@inline(__always)
func copyPageBody(from source: UnsafeRawPointer, to page: UnsafeMutableRawPointer) {
    (page + PageHeader.typeOffset).copyMemory(from: source + PageHeader.typeOffset, byteCount: 4)
    (page + PageHeader.size).copyMemory(from: source + PageHeader.size, byteCount: pageSize - PageHeader.size)
}

/// Starts loading `lines` cache lines from `address` into the caches, for the object layer's
/// own arrays (a hint; see cpu.h).
public func prefetchMemory(_ address: UnsafeRawPointer, lines: Int) {
    prefetchLines(address, lines)
}

/// Starts loading `lines` cache lines from `address` into the caches (a hint; see cpu.h).
@inlinable @inline(__always)
func prefetchLines(_ address: UnsafeRawPointer, _ lines: Int) {
    var p = address
    for _ in 0..<lines {
        cove_prefetch(p)
        p += 64
    }
}

/// Starts loading the first `lines` cache lines of the page at `page` (at most the whole page).
@inline(__always)
func prefetchPage(_ page: UnsafeRawPointer, lines: Int) {
    prefetchLines(page, Swift.min(lines, pageSize / 64))
}
