// Values too large for a leaf: a chain of overflow pages, written whole when the value is stored
// and never edited afterwards (a new value gets a new chain; the old chain is freed), so every
// page of a chain carries the version of the transaction that wrote the value.
//
//     offset size field
//     0      16   PageHeader (type overflow, flags 0, count = value bytes in this page)
//     16     8    next page number (0 on the last page)
//     24     8    next page version (0 on the last page)
//     32     ...  value bytes, 4064 per page, the last page partly used

extension BTree {
    /// Whether a leaf cell whose key part takes `keyPart` bytes keeps a value of `length` bytes
    /// inline. A value no longer than the overflow reference always stays inline.
    @inlinable
    static func keepsInline(keyPart: Int, length: Int) -> Bool {
        length <= BTreeLayout.overflowRefSize || keyPart &+ 2 &+ length <= BTreeLayout.maxInlineCell
    }

    /// Writes `value` (not empty) into a fresh chain of overflow pages.
    /// - Returns: the reference to the first page, stamped with this transaction's version.
    /// - Complexity: O(m) for m bytes.
    @usableFromInline
    func writeOverflow(_ value: UnsafeRawBufferPointer) throws(StorageError) -> PageRef {
        let version = store.version
        var (pgno, page) = try store.allocate()
        let first = pgno
        var written = 0
        while true {
            let n = Swift.min(value.count &- written, BTreeLayout.overflowCapacity)
            page.storeBytes(of: PageType.overflow.rawValue, toByteOffset: PageHeader.typeOffset, as: UInt8.self)
            page.storeBytes(of: 0, toByteOffset: PageHeader.flagsOffset, as: UInt8.self)
            page.storeBytes(of: UInt16(n).littleEndian, toByteOffset: PageHeader.countOffset, as: UInt16.self)
            (page + BTreeLayout.overflowDataOffset).copyMemory(from: value.baseAddress! + written, byteCount: n)
            written &+= n
            if written == value.count {
                page.storeBytes(of: UInt64(0), toByteOffset: BTreeLayout.overflowNextOffset, as: UInt64.self)
                page.storeBytes(of: UInt64(0), toByteOffset: BTreeLayout.overflowNextOffset &+ 8, as: UInt64.self)
                return PageRef(pgno: first, version: version)
            }
            let next: (PageNumber, UnsafeMutableRawPointer)
            do {
                next = try store.allocate()
            } catch {
                // Give back the pages of the unfinished chain; they were never referenced.
                page.storeBytes(of: UInt64(0), toByteOffset: BTreeLayout.overflowNextOffset, as: UInt64.self)
                var p = first
                while p != 0 {
                    let following = UInt64(littleEndian: store.writablePage(p).loadUnaligned(
                        fromByteOffset: BTreeLayout.overflowNextOffset, as: UInt64.self))
                    store.free(p)
                    p = following
                }
                throw error
            }
            page.storeBytes(of: next.0.littleEndian, toByteOffset: BTreeLayout.overflowNextOffset, as: UInt64.self)
            page.storeBytes(of: version.littleEndian, toByteOffset: BTreeLayout.overflowNextOffset &+ 8, as: UInt64.self)
            (pgno, page) = next
        }
    }

    /// Visits the pages of the chain starting at `ref` that holds `length` bytes, checking each
    /// page's type, byte count, link and version. `body` gets the page number and the bytes it
    /// holds; it may free the page (the link is read before the call).
    /// - Complexity: O(m / 4064) pages.
    @usableFromInline
    func walkOverflow(_ ref: PageRef, length: UInt64,
                      _ body: (PageNumber, UnsafeRawBufferPointer) throws(StorageError) -> Void) throws(StorageError) {
        guard length > UInt64(BTreeLayout.overflowRefSize), length <= UInt64(Self.maxValueLength) else {
            throw BTreeNode.fault(ref.pgno, "overflow value of \(length) bytes is outside (\(BTreeLayout.overflowRefSize), \(Self.maxValueLength)]")
        }
        var remaining = Int(length)
        var current = ref
        while true {
            let page = try store.page(current.pgno)
            if current.version != store.version, PageHeader.version(page) != current.version {
                throw BTreeNode.fault(current.pgno, "overflow page written at version \(PageHeader.version(page)), referenced as version \(current.version)")
            }
            let type = PageHeader.type(page)
            let flags = page.load(fromByteOffset: PageHeader.flagsOffset, as: UInt8.self)
            let n = Int(UInt16(littleEndian: page.loadUnaligned(fromByteOffset: PageHeader.countOffset, as: UInt16.self)))
            let expected = Swift.min(remaining, BTreeLayout.overflowCapacity)
            guard type == PageType.overflow.rawValue, flags == 0 else {
                throw BTreeNode.fault(current.pgno, "type \(type) flags \(flags) where an overflow page was expected")
            }
            guard n == expected else {
                throw BTreeNode.fault(current.pgno, "overflow page holds \(n) bytes, the value needs \(expected) here")
            }
            let next = PageRef(
                pgno: UInt64(littleEndian: page.loadUnaligned(fromByteOffset: BTreeLayout.overflowNextOffset, as: UInt64.self)),
                version: UInt64(littleEndian: page.loadUnaligned(fromByteOffset: BTreeLayout.overflowNextOffset &+ 8, as: UInt64.self)))
            remaining &-= n
            if remaining == 0 {
                guard next.isNone else { throw BTreeNode.fault(current.pgno, "overflow chain continues past the value's length") }
            } else {
                guard !next.isNone else { throw BTreeNode.fault(current.pgno, "overflow chain ends \(remaining) bytes early") }
                guard next.version == ref.version else {
                    throw BTreeNode.fault(current.pgno, "overflow link to version \(next.version) in a chain of version \(ref.version)")
                }
            }
            try body(current.pgno, UnsafeRawBufferPointer(start: page + BTreeLayout.overflowDataOffset, count: n))
            if remaining == 0 { return }
            current = next
        }
    }

    /// Replaces the contents of `buffer` with the value in the chain at `ref`. The buffer grows
    /// page by page, so a damaged length cannot make it reserve more than the chain holds.
    /// - Complexity: O(m)
    @usableFromInline
    func readOverflow(_ ref: PageRef, length: UInt64, into buffer: inout [UInt8]) throws(StorageError) {
        buffer.removeAll(keepingCapacity: true)
        buffer.reserveCapacity(Int(Swift.min(length, 1 << 24)))
        try walkOverflow(ref, length: length) { _, bytes throws(StorageError) in buffer.append(contentsOf: bytes) }
    }

    /// Frees every page of the chain at `ref`.
    /// - Complexity: O(m / 4064) pages.
    @usableFromInline
    func freeOverflow(_ ref: PageRef, length: UInt64) throws(StorageError) {
        try walkOverflow(ref, length: length) { pgno, _ throws(StorageError) in store.free(pgno) }
    }
}
