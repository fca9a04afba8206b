// PageBuffers: the memory a write transaction keeps its new pages in. Buffers are carved from
// chunks mapped with mmap (256 KiB growing to 2 MiB: no allocator call or header per page), and
// the chunks outlive the transaction (up to a cap) so that the next one writes into memory the
// kernel has already faulted in, and zeroes only pages that were used before. Transparent huge
// pages are not asked for: they make the first write of new memory several times cheaper when
// the kernel has huge pages free (2.3-3.2 ms for 32 MiB against 16-20 ms, the memory table of
// benchmarks/storage/disk-probe.c), and several times dearer when it must compact memory to
// find them (70 ms in one run); without them the cost does not depend on that state.
import Glibc

/// Page-sized, page-aligned buffers for one write transaction at a time.
///
/// Not thread-safe: a `Storage` hands its set to one write transaction at a time (which is
/// confined to one thread) and gets it back when the transaction ends.
final class PageBuffers: @unchecked Sendable {
    private struct Chunk {
        let base: UnsafeMutableRawPointer
        let pages: Int
        /// Pages below this one were handed out before and hold old bytes; the rest are
        /// still the zeros the kernel mapped.
        var used = 0
    }

    private var chunks: [Chunk] = []
    /// The next page to hand out: page `page` of chunk `chunk`.
    private var chunk = 0
    private var page = 0
    /// Buffers given back during the transaction.
    private var spare: [UnsafeMutableRawPointer] = []

    static let firstChunkPages = 64
    static let maxChunkPages = (2 << 20) / pageSize
    /// Chunks kept from one transaction to the next while they map at most this much.
    static let keptBytes = 8 << 20

    /// The table of the pages a transaction allocated in these buffers, handed over with
    /// them: a transaction takes both, and the next one finds the table empty, its slots
    /// allocated (`reset`).
    let dirtyTable: UnsafeMutablePointer<DirtyPageTable>
    /// A table kept between transactions is brought back to its first size when it grew past
    /// this many slots (a bulk load's), so that emptying it stays cheap.
    static let keptTableSlots = 1024

    init() {
        dirtyTable = .allocate(capacity: 1)
        dirtyTable.initialize(to: DirtyPageTable())
    }

    deinit {
        unmapAll()
        dirtyTable.pointee.deallocate()
        dirtyTable.deinitialize(count: 1)
        dirtyTable.deallocate()
    }

    /// A zeroed buffer of `pageSize` bytes, aligned to `pageSize`; with `zeroed: false` one
    /// whose bytes may be a previous page's, for a caller that writes all of them (a copy).
    /// - Throws: `.noSpace` when the memory cannot be mapped.
    func take(zeroed: Bool = true) throws(StorageError) -> UnsafeMutableRawPointer {
        if let b = spare.popLast() {
            if zeroed { memset(b, 0, pageSize) }
            return b
        }
        while chunk < chunks.count && page == chunks[chunk].pages {
            chunk += 1
            page = 0
        }
        if chunk == chunks.count { try mapChunk() }
        let b = chunks[chunk].base + page * pageSize
        if page < chunks[chunk].used {
            if zeroed { memset(b, 0, pageSize) }
        } else {
            chunks[chunk].used = page + 1
        }
        page += 1
        return b
    }

    /// Takes back a buffer `take` handed out in this transaction.
    func give(_ buffer: UnsafeMutableRawPointer) {
        spare.append(buffer)
    }

    /// Takes back every buffer at the end of a transaction, and empties the table; keeps the
    /// chunks for the next one unless they map more than `keptBytes`.
    func reset() {
        if dirtyTable.pointee.capacity > Self.keptTableSlots {
            dirtyTable.pointee.deallocate()
            dirtyTable.pointee = DirtyPageTable()
        } else {
            dirtyTable.pointee.removeAll()
        }
        spare.removeAll(keepingCapacity: true)
        chunk = 0
        page = 0
        if chunks.reduce(0, { $0 + $1.pages }) * pageSize > Self.keptBytes { unmapAll() }
    }

    private func mapChunk() throws(StorageError) {
        let pages = chunks.last.map { min($0.pages * 2, Self.maxChunkPages) } ?? Self.firstChunkPages
        let bytes = pages * pageSize
        guard let base = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              base != MAP_FAILED else {
            throw .noSpace("cannot map \(bytes) bytes for a write transaction's pages (errno \(errno))")
        }
        chunks.append(Chunk(base: base, pages: pages))
    }

    private func unmapAll() {
        for c in chunks { munmap(c.base, c.pages * pageSize) }
        chunks.removeAll()
        spare.removeAll()
        chunk = 0
        page = 0
    }
}
