// The pages of one transaction as the object layer reads and writes them: a read snapshot or a
// write transaction behind one concrete PageStore, so tables, indexes and collections are
// compiled once (specialized for this type) and work in both.
import CoveStorage

/// The PageStore of the realm's current transaction: its read snapshot, or its write
/// transaction. Reads through a snapshot refuse every write with `.readOnly`.
package final class TransactionPages: PageStore {
    package enum Backing {
        case read(Snapshot)
        case write(WriteTransaction)
    }

    let backing: Backing

    package init(_ backing: Backing) {
        self.backing = backing
    }

    var isWritable: Bool {
        if case .write = backing { return true }
        return false
    }

    package var version: UInt64 {
        switch backing {
        case .read(let s): return s.version
        case .write(let w): return w.version
        }
    }

    /// The committed version the transaction reads from: the snapshot's, or the one the write
    /// transaction started from.
    package var baseVersion: UInt64 {
        switch backing {
        case .read(let s): return s.version
        case .write(let w): return w.baseVersion
        }
    }

    @inline(__always)
    package func page(_ pgno: PageNumber) throws(StorageError) -> UnsafeRawPointer {
        switch backing {
        case .read(let s): return try s.page(pgno)
        case .write(let w): return try w.page(pgno)
        }
    }

    package func prefetch(_ pgno: PageNumber, lines: Int) {
        switch backing {
        case .read(let s): s.prefetch(pgno, lines: lines)
        case .write(let w): w.prefetch(pgno, lines: lines)
        }
    }

    @inline(__always)
    package func isWritable(_ pgno: PageNumber) -> Bool {
        switch backing {
        case .read: return false
        case .write(let w): return w.isWritable(pgno)
        }
    }

    package func writablePage(_ pgno: PageNumber) -> UnsafeMutableRawPointer {
        switch backing {
        case .read(let s): return s.writablePage(pgno)
        case .write(let w): return w.writablePage(pgno)
        }
    }

    package func adoptInPlace(_ pgno: PageNumber) throws(StorageError) -> UnsafeMutableRawPointer? {
        if case .write(let w) = backing { return try w.adoptInPlace(pgno) }
        return nil
    }

    /// The write transaction that allocates pages; a read refuses with `.readOnly`.
    private func writer() throws(StorageError) -> WriteTransaction {
        guard case .write(let w) = backing else { throw .readOnly("a read transaction cannot allocate pages") }
        return w
    }

    package func allocate(replacing old: PageRef?) throws(StorageError) -> (PageNumber, UnsafeMutableRawPointer) {
        try writer().allocate(replacing: old)
    }

    package func allocateForOverwrite(replacing old: PageRef?) throws(StorageError) -> (PageNumber, UnsafeMutableRawPointer) {
        try writer().allocateForOverwrite(replacing: old)
    }

    /// The write transaction's own copy, which does not zero the page it then fills.
    package func allocateCopy(of pgno: PageNumber) throws(StorageError) -> (PageNumber, UnsafeMutableRawPointer) {
        try writer().allocateCopy(of: pgno)
    }

    package func free(_ pgno: PageNumber) {
        if case .write(let w) = backing { w.free(pgno) }
    }

    /// The catalog root this transaction reads (and, in a write, will commit).
    var catalogRoot: TreeRoot {
        switch backing {
        case .read(let s): return s.catalog
        case .write(let w): return w.catalog
        }
    }
}
