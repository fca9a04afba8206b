// A PageStore that keeps its pages in memory, for the tests of the B+trees and cluster trees. It
// follows the same rules as the file: committed pages are sealed (version and checksum) and
// checked the first time they are read, a page freed by a committed version is reused only once
// no pinned snapshot can still see it, and it counts pages so that tests can prove that trees
// leak none.
import CoveStorage

/// An in-memory `PageStore` with commits, rollback and snapshot pins.
///
/// Page numbers start at 2, as in files made before format 5, whose meta slots are pages 0 and 1
/// (a memory store has no slots; 0 means "no page").
/// `version` is the version being written: one more than the last commit. Pages freed by a
/// committed transaction are "retired" until every pinned snapshot is at least as new as the
/// commit that freed them; pages freed by the transaction that allocated them are reusable at
/// once.
///
/// Not thread-safe: one owner at a time, as a write transaction is.
public final class MemoryPageStore: PageStore {
    private enum State: UInt8 {
        /// Part of the last commit (or older snapshots): never written again.
        case committed
        /// Allocated by the current transaction: writable, not sealed yet.
        case dirty
        /// Freed by the current transaction or a commit, still visible to older snapshots.
        case retired
        /// Reusable.
        case free
    }

    private struct Entry {
        var page: UnsafeMutableRawPointer
        var state: State
        /// Whether a committed page's checksum has been checked since it was sealed or damaged.
        var checked: Bool
    }

    /// The page table and the version, the state every read touches. It lives behind a
    /// pointer rather than in stored properties so that reads pay no dynamic exclusivity check
    /// and no reference counting: the class is used by one owner at a time.
    private struct Table {
        var entries: UnsafeMutablePointer<Entry>
        var count = 0
        var capacity: Int
        var version: UInt64
        var freeCount = 0
    }

    private let table: UnsafeMutablePointer<Table>
    private var dirty: [PageNumber] = []
    private var reusable: [PageNumber] = []
    /// Committed pages freed by the current transaction.
    private var freedNow: [PageNumber] = []
    /// Pages freed by each committed version, waiting for older snapshots to go.
    private var retired: [(version: UInt64, pages: [PageNumber])] = []
    private var pins: [UInt64: Int] = [:]

    /// Total allocations and frees over the store's life.
    public private(set) var allocations = 0
    public private(set) var frees = 0

    /// A store with no pages; the first commit will be version `firstVersion`.
    /// - Complexity: O(1)
    public init(firstVersion: UInt64 = 1) {
        table = .allocate(capacity: 1)
        table.initialize(to: Table(entries: .allocate(capacity: 64), capacity: 64, version: firstVersion))
    }

    deinit {
        for i in 0..<table.pointee.count { table.pointee.entries[i].page.deallocate() }
        table.pointee.entries.deallocate()
        table.deallocate()
    }

    /// The version being written: one more than `committedVersion`.
    /// - Complexity: O(1)
    public var version: UInt64 { table.pointee.version }

    /// The last committed version (`version - 1`).
    /// - Complexity: O(1)
    public var committedVersion: UInt64 { version - 1 }

    /// Page numbers handed out so far: every page is in use, retired or free.
    /// - Complexity: O(1)
    public var pageCount: Int { table.pointee.count }

    /// Pages not in use by the current version: retired (kept for snapshots) or reusable.
    /// - Complexity: O(1)
    public var freePageCount: Int { table.pointee.freeCount }

    /// Pages the current version uses: committed and not freed, or written by this transaction.
    /// - Complexity: O(1)
    public var livePageCount: Int { pageCount - freePageCount }

    @inline(__always)
    private func entry(_ pgno: PageNumber) -> UnsafeMutablePointer<Entry>? {
        guard pgno >= 2, pgno - 2 < UInt64(table.pointee.count) else { return nil }
        return table.pointee.entries + Int(pgno - 2)
    }

    private func setState(_ e: UnsafeMutablePointer<Entry>, _ state: State) {
        let wasFree = e.pointee.state == .retired || e.pointee.state == .free
        let isFree = state == .retired || state == .free
        if wasFree != isFree { table.pointee.freeCount += isFree ? 1 : -1 }
        e.pointee.state = state
    }

    // MARK: - PageStore

    /// - Complexity: O(1); O(page size) the first time a committed page is read.
    public func page(_ pgno: PageNumber) throws(StorageError) -> UnsafeRawPointer {
        guard let e = entry(pgno) else {
            throw .corrupt("page \(pgno) is outside the store (pages 2..<\(pageCount + 2))")
        }
        switch e.pointee.state {
        case .dirty:
            return UnsafeRawPointer(e.pointee.page)
        case .committed, .retired:
            if !e.pointee.checked {
                let stored = PageHeader.storedChecksum(e.pointee.page)
                let computed = PageHeader.computeChecksum(e.pointee.page)
                guard stored == computed else {
                    throw .corrupt("page \(pgno): checksum \(hex(stored)) does not match its contents (\(hex(computed)))")
                }
                e.pointee.checked = true
            }
            return UnsafeRawPointer(e.pointee.page)
        case .free:
            throw .corrupt("page \(pgno) is free")
        }
    }

    /// - Complexity: O(1)
    public func isWritable(_ pgno: PageNumber) -> Bool {
        entry(pgno)?.pointee.state == .dirty
    }

    /// - Complexity: O(1)
    public func writablePage(_ pgno: PageNumber) -> UnsafeMutableRawPointer {
        guard let e = entry(pgno), e.pointee.state == .dirty else {
            preconditionFailure("page \(pgno) is not writable in this transaction")
        }
        return e.pointee.page
    }

    /// Places a page without regard to `old`.
    /// - Complexity: O(1) amortized (O(page size) to zero the page).
    public func allocate(replacing old: PageRef?) throws(StorageError) -> (PageNumber, UnsafeMutableRawPointer) {
        let pgno: PageNumber
        if let reused = reusable.popLast() {
            pgno = reused
            let e = entry(pgno)!
            e.pointee.page.initializeMemory(as: UInt8.self, repeating: 0, count: pageSize)
            setState(e, .dirty)
            e.pointee.checked = false
        } else {
            if table.pointee.count == table.pointee.capacity {
                let capacity = table.pointee.capacity * 2
                let entries = UnsafeMutablePointer<Entry>.allocate(capacity: capacity)
                entries.moveInitialize(from: table.pointee.entries, count: table.pointee.count)
                table.pointee.entries.deallocate()
                table.pointee.entries = entries
                table.pointee.capacity = capacity
            }
            let page = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 16)
            page.initializeMemory(as: UInt8.self, repeating: 0, count: pageSize)
            (table.pointee.entries + table.pointee.count).initialize(to: Entry(page: page, state: .dirty, checked: false))
            table.pointee.count += 1
            pgno = PageNumber(table.pointee.count + 1)
        }
        dirty.append(pgno)
        allocations += 1
        return (pgno, entry(pgno)!.pointee.page)
    }

    /// - Complexity: O(1)
    public func free(_ pgno: PageNumber) {
        guard let e = entry(pgno) else { preconditionFailure("free of page \(pgno), outside the store") }
        switch e.pointee.state {
        case .dirty:
            setState(e, .free)
            reusable.append(pgno)
        case .committed:
            setState(e, .retired)
            freedNow.append(pgno)
        case .retired, .free:
            preconditionFailure("page \(pgno) freed twice")
        }
        frees += 1
    }

    // MARK: - Transactions

    /// Seals every page written by this transaction with `version` and its checksum, makes the
    /// pages it freed wait for older snapshots, and starts the next version.
    /// - Complexity: O(d · page size) for d pages written.
    public func commit() {
        for pgno in dirty {
            let e = entry(pgno)!
            guard e.pointee.state == .dirty else { continue }   // allocated, then freed again
            PageHeader.seal(e.pointee.page, version: version)
            setState(e, .committed)
            e.pointee.checked = true
        }
        dirty.removeAll(keepingCapacity: true)
        if !freedNow.isEmpty {
            retired.append((version, freedNow))
            freedNow = []
        }
        table.pointee.version += 1
        reclaim()
    }

    /// Forgets everything this transaction wrote and freed. Trees edited in the transaction must
    /// go back to the roots they had at the last commit.
    /// - Complexity: O(d + f) for d pages written and f freed.
    public func rollback() {
        for pgno in dirty where entry(pgno)!.pointee.state == .dirty {
            setState(entry(pgno)!, .free)
            reusable.append(pgno)
        }
        dirty.removeAll(keepingCapacity: true)
        for pgno in freedNow { setState(entry(pgno)!, .committed) }
        freedNow.removeAll(keepingCapacity: true)
    }

    /// Keeps the pages of committed `version` readable until `unpin(_:)`: pages freed by later
    /// commits are not reused while it is pinned. Pins nest.
    /// - Complexity: O(1)
    public func pin(_ version: UInt64) {
        precondition(version < self.version, "only committed versions can be pinned")
        pins[version, default: 0] += 1
    }

    /// Releases one pin of `version`.
    /// - Complexity: O(r) for r retired groups.
    public func unpin(_ version: UInt64) {
        guard let n = pins[version] else { preconditionFailure("version \(version) is not pinned") }
        pins[version] = n > 1 ? n - 1 : nil
        reclaim()
    }

    /// Makes reusable the pages freed by commits that no pinned snapshot predates: a page freed
    /// by version v is still part of every snapshot older than v.
    private func reclaim() {
        let oldest = pins.keys.min() ?? UInt64.max
        retired.removeAll { group in
            guard group.version <= oldest else { return false }
            for pgno in group.pages {
                setState(entry(pgno)!, .free)
                reusable.append(pgno)
            }
            return true
        }
    }

    // MARK: - Testing aids

    /// Flips the bits of one byte of a committed page, as a damaged disk would, so that the
    /// next read of the page fails its checksum.
    /// - Complexity: O(1)
    public func damage(_ pgno: PageNumber, atByte offset: Int) {
        guard let e = entry(pgno), offset >= 0, offset < pageSize else { preconditionFailure("no byte \(offset) of page \(pgno)") }
        let page = e.pointee.page
        page.storeBytes(of: ~page.load(fromByteOffset: offset, as: UInt8.self), toByteOffset: offset, as: UInt8.self)
        e.pointee.checked = false
    }

    /// Rewrites a committed page through `body` and seals it again with its own version, as a
    /// bug that wrote a well-formed but wrong page would: the checksum holds, the contents lie.
    /// - Complexity: O(page size)
    public func tamper(_ pgno: PageNumber, _ body: (UnsafeMutableRawPointer) -> Void) {
        guard let e = entry(pgno) else { preconditionFailure("no page \(pgno)") }
        let page = e.pointee.page
        body(page)
        PageHeader.seal(page, version: PageHeader.version(UnsafeRawPointer(page)))
        e.pointee.checked = true
    }

    private func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
    }
}
