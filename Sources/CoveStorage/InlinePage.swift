// InlinePage: the catalog's root leaf held in the meta slot instead of in its own page. A commit
// whose catalog is one small leaf (the usual case: a schema record and a few roots) stores the
// leaf's header, slots and cells in the slot, so it writes one page less; the page number stays
// allocated to the leaf, and readers of that version get the page rebuilt from the slot.
import Glibc

/// A B+tree leaf as a meta slot holds it: bytes `[0, 24 + 2n)` of the page (header and slots),
/// then bytes `[cellStart, pageSize)` (the cells); the bytes between are zero. The page rebuilt
/// from them carries the checksum and version it was sealed with.
///
/// `@unchecked Sendable`: immutable after `init`; the page and the compact form share one block
/// of memory (the page, then the compact form), which lives as long as the object.
final class InlinePage: @unchecked Sendable, Equatable {
    /// The most bytes a slot gives the catalog's leaf: with the freed pages and history records
    /// at their limits, a quarter of the slot is still left for the written-page list.
    static let capacity = 1024

    /// The compact form, as the slot stores it.
    let bytes: UnsafeRawBufferPointer
    /// The whole page, rebuilt.
    let page: UnsafeMutableRawPointer

    /// The cell count, cell start and garbage a leaf's header gives, and where its slots end.
    private static func layout(_ p: UnsafeRawPointer) -> (count: Int, cellStart: Int, garbage: Int, prefix: Int) {
        let count = Int(UInt16(littleEndian: p.loadUnaligned(fromByteOffset: PageHeader.countOffset, as: UInt16.self)))
        let cellStart = Int(UInt16(littleEndian: p.loadUnaligned(fromByteOffset: BTreeLayout.cellStartOffset, as: UInt16.self)))
        let garbage = Int(UInt16(littleEndian: p.loadUnaligned(fromByteOffset: BTreeLayout.garbageOffset, as: UInt16.self)))
        return (count, cellStart, garbage, BTreeLayout.slotsOffset + 2 * count)
    }

    /// Whether `p` is a leaf (type and level).
    private static func isLeaf(_ p: UnsafeRawPointer) -> Bool {
        PageHeader.type(p) == PageType.leaf.rawValue && p.load(fromByteOffset: PageHeader.flagsOffset, as: UInt8.self) == 0
    }

    /// The bytes of the compact form of leaf `p` as it is and with its garbage packed away, or
    /// nil when `p` is not a leaf.
    static func compactSizes(_ p: UnsafeRawPointer) -> (asIs: Int, packed: Int)? {
        guard isLeaf(p) else { return nil }
        let l = layout(p)
        guard l.cellStart >= l.prefix, l.cellStart <= pageSize, l.garbage <= pageSize - l.cellStart else { return nil }
        let size = l.prefix + pageSize - l.cellStart
        return (size, size - l.garbage)
    }

    /// A block holding the page whose `prefix` bytes of header and slots are at `head` and
    /// whose cells, from `cellStart` to the end of the page, are at `cells` (zero between), and
    /// after it the compact form; `seal` seals the page (at `version`) before the compact form
    /// is taken from it.
    private static func build(head: UnsafeRawPointer, prefix: Int, cells: UnsafeRawPointer, cellStart: Int,
                              seal version: UInt64?) -> (page: UnsafeMutableRawPointer, compact: UnsafeRawBufferPointer) {
        let cellBytes = pageSize - cellStart
        let block = UnsafeMutableRawPointer.allocate(byteCount: pageSize + prefix + cellBytes, alignment: 16)
        block.copyMemory(from: head, byteCount: prefix)
        memset(block + prefix, 0, cellStart - prefix)
        (block + cellStart).copyMemory(from: cells, byteCount: cellBytes)
        if let version { PageHeader.seal(block, version: version) }
        let compact = block + pageSize
        compact.copyMemory(from: block, byteCount: prefix)
        (compact + prefix).copyMemory(from: block + cellStart, byteCount: cellBytes)
        return (block, UnsafeRawBufferPointer(start: compact, count: prefix + cellBytes))
    }

    /// The leaf `p` (whose compact form fits `capacity`) as a page of its own sealed at
    /// `version`, the bytes between its slots and its cells zero, and its compact form. `p`
    /// itself is left as it was: a transaction's page that no one writes to the file.
    init(sealing p: UnsafeRawPointer, version: UInt64) {
        let (_, cellStart, _, prefix) = InlinePage.layout(p)
        (page, bytes) = InlinePage.build(head: p, prefix: prefix, cells: p + cellStart, cellStart: cellStart, seal: version)
    }

    /// Rebuilds the leaf of root `ref` from a slot's compact form, checking that the header
    /// agrees with the lengths, that the page is a leaf written by `ref.version`, and its checksum.
    init(compact: UnsafeRawBufferPointer, ref: PageRef) throws(StorageError) {
        guard compact.count >= BTreeLayout.slotsOffset, compact.count <= InlinePage.capacity, let c = compact.baseAddress else {
            throw .corrupt("the catalog leaf held in the meta slot has \(compact.count) bytes")
        }
        let (count, cellStart, _, prefix) = InlinePage.layout(c)
        guard prefix <= compact.count, cellStart == pageSize - (compact.count - prefix) else {
            throw .corrupt("the catalog leaf held in the meta slot does not hold its \(count) cells in \(compact.count) bytes")
        }
        let (page, bytes) = InlinePage.build(head: c, prefix: prefix, cells: c + prefix, cellStart: cellStart, seal: nil)
        let stored = PageHeader.storedChecksum(page)
        let computed = PageHeader.computeChecksum(page)
        guard InlinePage.isLeaf(page), PageHeader.version(page) == ref.version, stored == computed else {
            page.deallocate()
            throw .corrupt("the catalog leaf held in the meta slot is not a leaf of version \(ref.version) with a valid checksum (stored \(hex(stored)), computed \(hex(computed)))")
        }
        self.page = page
        self.bytes = bytes
    }

    deinit {
        page.deallocate()
    }

    static func == (a: InlinePage, b: InlinePage) -> Bool {
        a.bytes.count == b.bytes.count && memcmp(a.bytes.baseAddress!, b.bytes.baseAddress!, a.bytes.count) == 0
    }
}
