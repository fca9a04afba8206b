// Building cluster leaves: a decoded cluster (keys and one array of cells per column) that edits
// work on, the planning of how many pages a set of objects needs, and the encoder that lays
// objects out as one page. Pages are always written whole, so the heap has no garbage.

/// The objects of one or more clusters, decoded for editing: keys ascending, `columns[j][i]`
/// the value of column `j` of object `i`.
@usableFromInline
struct ClusterRows {
    @usableFromInline var keys: [UInt64] = []
    @usableFromInline var columns: [[StoredCell]]

    @inlinable
    init(columnCount: Int) {
        columns = Array(repeating: [], count: columnCount)
    }

    /// No objects and no columns, allocating nothing: a placeholder to swap with.
    @inlinable
    init() {
        columns = []
    }

    /// Decodes every object of `leaf`; columns the page lacks get the column's default.
    /// - Complexity: O(n · c)
    @inlinable
    init(_ leaf: ClusterLeaf, specs: [ColumnSpec]) throws(StorageError) {
        keys.reserveCapacity(leaf.count)
        for i in 0..<leaf.count { keys.append(leaf.key(i)) }
        columns = []
        columns.reserveCapacity(specs.count)
        for j in 0..<specs.count {
            if j >= leaf.columnCount {
                columns.append(Array(repeating: .value(specs[j].defaultValue), count: leaf.count))
                continue
            }
            var column: [StoredCell] = []
            column.reserveCapacity(leaf.count)
            for i in 0..<leaf.count { column.append(try leaf.cell(j, i, kind: specs[j].kind)) }
            columns.append(column)
        }
    }

    @inlinable var count: Int { keys.count }

    @inlinable
    mutating func append(contentsOf other: ClusterRows) {
        keys.append(contentsOf: other.keys)
        for j in 0..<columns.count { columns[j].append(contentsOf: other.columns[j]) }
    }

    @inlinable
    mutating func insert(key: UInt64, row: [StoredCell], at i: Int) {
        keys.insert(key, at: i)
        for j in 0..<columns.count { columns[j].insert(row[j], at: i) }
    }

    @inlinable
    mutating func remove(at i: Int) -> [StoredCell] {
        keys.remove(at: i)
        var row: [StoredCell] = []
        row.reserveCapacity(columns.count)
        for j in 0..<columns.count { row.append(columns[j].remove(at: i)) }
        return row
    }

    /// Planning cost of object `i` in bits: key, fixed-width values, null bits, heap bytes.
    @inlinable
    func bits(_ i: Int, specs: [ColumnSpec]) -> Int {
        var bits = 64
        for j in 0..<specs.count {
            bits &+= ClusterLayout.fixedBits(specs[j]) &+ 8 &* columns[j][i].heapBytes
        }
        return bits
    }

    /// Planning cost of a row in bits.
    @inlinable
    static func bits(of row: [StoredCell], specs: [ColumnSpec]) -> Int {
        var bits = 64
        for j in 0..<specs.count { bits &+= ClusterLayout.fixedBits(specs[j]) &+ 8 &* row[j].heapBytes }
        return bits
    }

    /// An upper bound on the bytes a page of all these objects takes (see `ClusterLayout.overhead`).
    @inlinable
    func bound(specs: [ColumnSpec]) -> Int {
        var bits = 0
        for i in 0..<count { bits &+= self.bits(i, specs: specs) }
        return ClusterLayout.overhead(columns: specs.count) &+ (bits &+ 7) / 8
    }

    /// Cuts the objects into ranges that each fit one page: one range if they all fit,
    /// otherwise ranges of about equal size, or, with `packLeft` (appending at the end of a
    /// table), ranges as full as possible from the left. Every object fits a page alone (the
    /// table checks its schema and moves large values to overflow pages), so no range is empty.
    /// - Complexity: O(n · c)
    @inlinable
    func plan(specs: [ColumnSpec], packLeft: Bool) -> [Range<Int>] {
        if packLeft { return planPacked(specs: specs) }
        let overhead = ClusterLayout.overhead(columns: specs.count)
        let capacityBits = (pageSize &- overhead) &* 8
        var rowBits: [Int] = []
        rowBits.reserveCapacity(count)
        var total = 0
        for i in 0..<count {
            let b = bits(i, specs: specs)
            rowBits.append(b)
            total &+= b
        }
        if total <= capacityBits && count <= ClusterLayout.maxObjects { return [0..<count] }
        var ranges: [Range<Int>] = []
        var start = 0
        var remaining = total
        while start < count {
            if remaining <= capacityBits && count &- start <= ClusterLayout.maxObjects {
                ranges.append(start..<count)
                break
            }
            let pages = Swift.max(2, (remaining &+ capacityBits &- 1) / capacityBits)
            let target = packLeft ? capacityBits : (remaining &+ pages &- 1) / pages
            var end = start
            var acc = 0
            while end < count, end &- start < ClusterLayout.maxObjects {
                let b = rowBits[end]
                if end > start && (acc &+ b > capacityBits || (!packLeft && acc &+ b / 2 > target)) { break }
                acc &+= b
                end &+= 1
            }
            ranges.append(start..<end)
            remaining &-= acc
            start = end
        }
        return ranges
    }

    /// Cuts the objects into ranges as full as their exact encoding allows, from the left (an
    /// append at the end of a table): ints are measured at their frame-of-reference width and
    /// bitmaps only where a column has nulls, so pages fill to the byte instead of to the
    /// worst case `bits` assumes.
    /// - Complexity: O(n · c)
    @usableFromInline
    func planPacked(specs: [ColumnSpec]) -> [Range<Int>] {
        let c = specs.count
        var ranges: [Range<Int>] = []
        if count == 0 { return ranges }
        // Per column: the int range and whether a null was met, of the objects taken so far
        // (`lo`, `hi`, `nulls`) and with the next object (`next...`), swapped in when it fits.
        // Each cell is read once, in place.
        let bounds = UnsafeMutablePointer<Int64>.allocate(capacity: 4 &* c)
        let flags = UnsafeMutablePointer<Bool>.allocate(capacity: 2 &* c)
        defer {
            bounds.deallocate()
            flags.deallocate()
        }
        var lo = bounds, hi = bounds + c, nextLo = bounds + 2 &* c, nextHi = bounds + 3 &* c
        var nulls = flags, nextNulls = flags + c
        let kinds = specs.map(\.kind)
        let keysOffset = ClusterLayout.keysOffset(columns: c)
        var start = 0
        while start < count {
            for j in 0..<c { lo[j] = .max; hi[j] = .min; nulls[j] = false }
            var heap = 0
            var end = start
            while end < count && end &- start < ClusterLayout.maxObjects {
                // The page with object `end` added, measured exactly as `encode` lays it out.
                let n = end &- start &+ 1
                let keyWidth = ClusterLayout.keyDeltaWidth(keys[end] &- keys[start] &- UInt64(n &- 1))
                var p = keysOffset &+ ClusterLayout.steppedKeysSize(n, width: keyWidth)
                var rowHeap = 0
                let bitmap = ClusterLayout.bitmapBytes(n)
                for j in 0..<c {
                    var isNull = false
                    var l = lo[j], h = hi[j]
                    switch columns[j][end] {
                    case .value(.null): isNull = true
                    case .value(.int(let x)):
                        if x < l { l = x }
                        if x > h { h = x }
                    case .value(.bytes(let b)): rowHeap &+= b.count
                    case .overflow: rowHeap &+= ClusterLayout.overflowRefSize
                    default: break
                    }
                    nextLo[j] = l
                    nextHi[j] = h
                    let anyNull = nulls[j] || isNull
                    nextNulls[j] = anyNull
                    p = ClusterLayout.align8(p)
                    if anyNull { p &+= bitmap }
                    switch kinds[j] {
                    case .bool: p &+= bitmap
                    case .int:
                        let spread = l > h ? 0 : UInt64(bitPattern: h) &- UInt64(bitPattern: l)
                        p &+= 8 &+ ClusterLayout.deltaWidth(spread) &* n
                    case .string, .binary, .mixed, .collectionInRow: p &+= 4 &* n
                    case .timestamp: p &+= 12 &* n
                    case .collection: p &+= 24 &* n
                    default: p &+= ClusterLayout.elementSize(kinds[j]) &* n
                    }
                }
                if end > start && p &+ heap &+ rowHeap > pageSize { break }
                swap(&lo, &nextLo)
                swap(&hi, &nextHi)
                swap(&nulls, &nextNulls)
                heap &+= rowHeap
                end &+= 1
            }
            ranges.append(start..<end)
            start = end
        }
        return ranges
    }

    /// Lays objects `range` out as one cluster leaf at `page` (all 4096 bytes are written).
    /// - Throws: `.internal` if they do not fit (the plan guarantees they do).
    /// - Complexity: O(n · c + heap bytes)
    @inlinable
    func encode(_ range: Range<Int>, specs: [ColumnSpec], into page: UnsafeMutableRawPointer) throws(StorageError) {
        page.initializeMemory(as: UInt8.self, repeating: 0, count: pageSize)
        let n = range.count
        let c = specs.count
        page.storeBytes(of: PageType.clusterLeaf.rawValue, toByteOffset: PageHeader.typeOffset, as: UInt8.self)
        page.storeBytes(of: UInt16(n).littleEndian, toByteOffset: PageHeader.countOffset, as: UInt16.self)
        page.storeBytes(of: UInt16(c).littleEndian, toByteOffset: ClusterLayout.columnCountOffset, as: UInt16.self)
        // Stepped keys: key k is base + k + delta k, the deltas ascending from 0.
        let keysOffset = ClusterLayout.keysOffset(columns: c)
        let keyBase = keys[range.lowerBound]
        let keyWidth = ClusterLayout.keyDeltaWidth(keys[range.upperBound &- 1] &- keyBase &- UInt64(n &- 1))
        page.storeBytes(of: ClusterLayout.steppedKeys, toByteOffset: ClusterLayout.keyEncodingOffset, as: UInt8.self)
        page.storeBytes(of: UInt8(keyWidth), toByteOffset: ClusterLayout.keyWidthOffset, as: UInt8.self)
        page.storeBytes(of: keyBase.littleEndian, toByteOffset: keysOffset, as: UInt64.self)
        let deltas = keysOffset &+ 8
        if keyWidth > 0 {
            for (k, i) in range.enumerated() {
                ClusterLayout.storeDelta(keys[i] &- keyBase &- UInt64(k), width: keyWidth, page, at: deltas &+ keyWidth &* k)
            }
        }
        var p = keysOffset &+ ClusterLayout.steppedKeysSize(n, width: keyWidth)
        var heap = pageSize
        let bitmap = ClusterLayout.bitmapBytes(n)
        @inline(__always) func setBit(_ offset: Int, _ k: Int) { ClusterLayout.storeBit(true, page, offset, k) }
        for j in 0..<c {
            p = ClusterLayout.align8(p)
            let column = columns[j]
            let start = p
            var hasNulls = false
            for i in range where column[i].isNull { hasNulls = true; break }
            if hasNulls {
                for (k, i) in range.enumerated() where column[i].isNull { setBit(p, k) }
                p &+= bitmap
            }
            var encoding = specs[j].kind.rawValue
            let v = p
            switch specs[j].kind {
            case .bool:
                for (k, i) in range.enumerated() { if case .value(.bool(true)) = column[i] { setBit(v, k) } }
                p &+= bitmap
            case .int:
                var lo = Int64.max, hi = Int64.min
                for i in range { if case .value(.int(let x)) = column[i] { lo = Swift.min(lo, x); hi = Swift.max(hi, x) } }
                if lo > hi { lo = 0; hi = 0 }
                let spread = UInt64(bitPattern: hi) &- UInt64(bitPattern: lo)
                let width = ClusterLayout.deltaWidth(spread)
                encoding = ClusterLayout.intEncoding(width: width)
                page.storeBytes(of: UInt64(bitPattern: lo).littleEndian, toByteOffset: v, as: UInt64.self)
                let d = v &+ 8
                for (k, i) in range.enumerated() {
                    guard case .value(.int(let x)) = column[i] else { continue }
                    ClusterLayout.storeDelta(UInt64(bitPattern: x) &- UInt64(bitPattern: lo), width: width, page, at: d &+ width &* k)
                }
                p = d &+ width &* n
            case .float, .double, .timestamp, .decimal128, .uuid, .objectId, .link, .collection:
                for (k, i) in range.enumerated() {
                    ClusterLayout.storeFixed(column[i], page, values: v, index: k, count: n)
                }
                p &+= ClusterLayout.elementSize(specs[j].kind) &* n
            case .string, .binary, .mixed, .collectionInRow:
                p &+= 4 &* n
                for (k, i) in range.enumerated() {
                    guard ClusterLayout.storeHeapValue(column[i], page, entry: v &+ 4 &* k, heap: &heap, floor: p) else {
                        throw .internal("cluster page overfull while encoding column \(j)")
                    }
                }
            }
            guard p <= heap else { throw .internal("cluster page overfull: \(p) bytes of columns, heap at \(heap)") }
            let d = ClusterLayout.directoryOffset &+ 4 &* j
            page.storeBytes(of: UInt16(start).littleEndian, toByteOffset: d, as: UInt16.self)
            page.storeBytes(of: encoding, toByteOffset: d &+ 2, as: UInt8.self)
            page.storeBytes(of: UInt8(hasNulls ? 1 : 0), toByteOffset: d &+ 3, as: UInt8.self)
        }
        page.storeBytes(of: UInt16(heap).littleEndian, toByteOffset: ClusterLayout.heapStartOffset, as: UInt16.self)
    }
}

extension ClusterLeaf {
    /// Lays out this page with `rows` added after its objects, at `page` (all 4096 bytes are
    /// written), copying the page's columns and heap as they are instead of decoding them.
    /// An append of a few objects to a table thus costs what the page holds in bytes, not one
    /// decoded cell per value.
    ///
    /// Returns false, having written nothing of use, when the result would need a layout this
    /// page does not have: more objects than a page holds or more bytes; plain keys, or a key
    /// or int delta wider than the page's widths; an int below its column's base; a column the
    /// page lacks (added since it was written). The caller then re-encodes the objects.
    /// `rows` must have been checked against `specs` (ClusterBatch does) and fit a page alone,
    /// and their keys must ascend from above this page's last.
    /// - Complexity: O(b + r · c) for b bytes in the page, r rows and c columns.
    @usableFromInline
    func appending(_ rows: ClusterRows, specs: [ColumnSpec], into page: UnsafeMutableRawPointer) -> Bool {
        let n = count
        let added = rows.count
        let total = n &+ added
        let c = specs.count
        guard added > 0, total <= ClusterLayout.maxObjects, columnCount == c, keyStep == 1 else { return false }
        let limit = ClusterLayout.maxDelta(width: keyWidth)
        for (r, key) in rows.keys.enumerated() {
            let (d, borrow) = key.subtractingReportingOverflow(keyBase &+ UInt64(n &+ r))
            guard !borrow, d <= limit else { return false }
        }
        page.initializeMemory(as: UInt8.self, repeating: 0, count: pageSize)
        // The heap keeps its offsets: the old bytes stay where they are, new ones go below.
        var heap = heapStart
        (page + heap).copyMemory(from: base + heap, byteCount: pageSize &- heap)
        page.copyMemory(from: base, byteCount: ClusterLayout.directoryOffset)
        page.storeBytes(of: UInt16(total).littleEndian, toByteOffset: PageHeader.countOffset, as: UInt16.self)
        // Keys: the base stays, the deltas follow the old ones at the same width. Every part
        // is measured against the heap before it is written.
        let keysAt = ClusterLayout.keysOffset(columns: c)
        guard keysAt &+ ClusterLayout.steppedKeysSize(total, width: keyWidth) <= heap else { return false }
        (page + keysAt).copyMemory(from: base + keysAt, byteCount: keysEnd &- keysAt)
        for (r, key) in rows.keys.enumerated() {
            ClusterLayout.storeDelta(key &- keyBase &- UInt64(n &+ r), width: keyWidth, page, at: keyDeltas &+ keyWidth &* (n &+ r))
        }
        var p = keysAt &+ ClusterLayout.steppedKeysSize(total, width: keyWidth)
        let oldBitmap = ClusterLayout.bitmapBytes(n)
        let bitmap = ClusterLayout.bitmapBytes(total)
        @inline(__always) func setBit(_ offset: Int, _ k: Int) { ClusterLayout.storeBit(true, page, offset, k) }
        for j in 0..<c {
            let d = ClusterLayout.directoryOffset &+ 4 &* j
            let old = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: d, as: UInt16.self)))
            let encoding = base.load(fromByteOffset: d &+ 2, as: UInt8.self)
            let hadNulls = base.load(fromByteOffset: d &+ 3, as: UInt8.self) & 1 != 0
            let column = rows.columns[j]
            var hasNulls = hadNulls
            if !hasNulls { for cell in column where cell.isNull { hasNulls = true; break } }
            p = ClusterLayout.align8(p)
            let start = p
            guard let size = ClusterLayout.valuesSize(specs[j].kind, encoding: encoding, n: total),
                  start &+ (hasNulls ? bitmap : 0) &+ size <= heap else { return false }
            var oldValues = old
            if hasNulls {
                if hadNulls {
                    (page + p).copyMemory(from: base + old, byteCount: oldBitmap)
                    oldValues &+= oldBitmap
                }
                for (r, cell) in column.enumerated() where cell.isNull { setBit(p, n &+ r) }
                p &+= bitmap
            }
            let v = p
            switch specs[j].kind {
            case .bool:
                (page + v).copyMemory(from: base + oldValues, byteCount: oldBitmap)
                for (r, cell) in column.enumerated() { if case .value(.bool(true)) = cell { setBit(v, n &+ r) } }
                p &+= bitmap
            case .int:
                guard let width = ClusterLayout.intWidth(encoding) else { return false }
                let lo = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: oldValues, as: UInt64.self))
                let most = ClusterLayout.maxDelta(width: width)
                (page + v).copyMemory(from: base + oldValues, byteCount: 8 &+ width &* n)
                for (r, cell) in column.enumerated() {
                    guard case .value(.int(let x)) = cell else { continue }
                    guard x >= Int64(bitPattern: lo) else { return false }
                    let delta = UInt64(bitPattern: x) &- lo
                    guard delta <= most else { return false }
                    ClusterLayout.storeDelta(delta, width: width, page, at: v &+ 8 &+ width &* (n &+ r))
                }
                p = v &+ 8 &+ width &* total
            case .timestamp:
                // Seconds of every object, then nanoseconds: both parts move apart.
                (page + v).copyMemory(from: base + oldValues, byteCount: 8 &* n)
                (page + (v &+ 8 &* total)).copyMemory(from: base + (oldValues &+ 8 &* n), byteCount: 4 &* n)
                for (r, cell) in column.enumerated() {
                    ClusterLayout.storeFixed(cell, page, values: v, index: n &+ r, count: total)
                }
                p &+= 12 &* total
            case .string, .binary, .mixed, .collectionInRow:
                (page + v).copyMemory(from: base + oldValues, byteCount: 4 &* n)
                p &+= 4 &* total
                for (r, cell) in column.enumerated() {
                    guard ClusterLayout.storeHeapValue(cell, page, entry: v &+ 4 &* (n &+ r), heap: &heap, floor: p) else { return false }
                }
            default:
                let element = ClusterLayout.elementSize(specs[j].kind)
                (page + v).copyMemory(from: base + oldValues, byteCount: element &* n)
                for (r, cell) in column.enumerated() {
                    ClusterLayout.storeFixed(cell, page, values: v, index: n &+ r, count: total)
                }
                p &+= element &* total
            }
            // p <= heap: the column was measured against the heap before it was written, and
            // byte values only move the heap down to it.
            page.storeBytes(of: UInt16(start).littleEndian, toByteOffset: d, as: UInt16.self)
            page.storeBytes(of: encoding, toByteOffset: d &+ 2, as: UInt8.self)
            page.storeBytes(of: UInt8(hasNulls ? 1 : 0), toByteOffset: d &+ 3, as: UInt8.self)
        }
        page.storeBytes(of: UInt16(heap).littleEndian, toByteOffset: ClusterLayout.heapStartOffset, as: UInt16.self)
        return true
    }
}

extension ClusterLayout {
    /// Writes the value of `cell`, of a fixed-size kind (float, double, timestamp, decimal128 and uuid,
    /// objectId, link, a collection's root), as object `i` of a column whose values start at
    /// `v` in a page of `n` objects: the one writer of those kinds, for pages laid out anew,
    /// appended to and written in place. A timestamp's seconds are in the first `8 · n` bytes,
    /// its nanoseconds after them. Other cells (null, bool, int, bytes, overflow) have layouts
    /// of their own and are the caller's.
    @inlinable @inline(__always)
    static func storeFixed(_ cell: StoredCell, _ page: UnsafeMutableRawPointer, values v: Int, index i: Int, count n: Int) {
        @inline(__always) func store<T: FixedWidthInteger>(_ x: T, at offset: Int) {
            page.storeBytes(of: x.littleEndian, toByteOffset: offset, as: T.self)
        }
        // Each case matched through the cell, so that no value is copied out of it.
        switch cell {
        case .value(.float(let x)): store(x.bitPattern, at: v &+ 4 &* i)
        case .value(.double(let x)): store(x.bitPattern, at: v &+ 8 &* i)
        case .value(.link(let x)): store(x, at: v &+ 8 &* i)
        case .value(.timestamp(let s, let ns)):
            store(UInt64(bitPattern: s), at: v &+ 8 &* i)
            store(UInt32(bitPattern: ns), at: v &+ 8 &* n &+ 4 &* i)
        case .value(.bytes16(let a, let b)):
            store(a, at: v &+ 16 &* i)
            store(b, at: v &+ 16 &* i &+ 8)
        case .value(.bytes12(let a, let b)):
            store(a, at: v &+ 12 &* i)
            store(b, at: v &+ 12 &* i &+ 8)
        case .value(.root(let r)): r.encode(into: page + (v &+ 24 &* i))
        default: break
        }
    }
}

extension ClusterLayout {
    /// Sets (`on`) or clears bit `k` of the bitmap at `offset`.
    @inlinable @inline(__always)
    static func storeBit(_ on: Bool, _ page: UnsafeMutableRawPointer, _ offset: Int, _ k: Int) {
        let at = offset &+ (k &>> 3)
        let bit = UInt8(1) << UInt8(k & 7)
        let byte = page.load(fromByteOffset: at, as: UInt8.self)
        page.storeBytes(of: on ? byte | bit : byte & ~bit, toByteOffset: at, as: UInt8.self)
    }

    /// Stores `delta` in `width` bytes (0, 1, 2, 4 or 8) at `offset`, little-endian.
    @inlinable @inline(__always)
    static func storeDelta(_ delta: UInt64, width: Int, _ page: UnsafeMutableRawPointer, at offset: Int) {
        switch width {
        case 0: break
        case 1: page.storeBytes(of: UInt8(truncatingIfNeeded: delta), toByteOffset: offset, as: UInt8.self)
        case 2: page.storeBytes(of: UInt16(truncatingIfNeeded: delta).littleEndian, toByteOffset: offset, as: UInt16.self)
        case 4: page.storeBytes(of: UInt32(truncatingIfNeeded: delta).littleEndian, toByteOffset: offset, as: UInt32.self)
        default: page.storeBytes(of: delta.littleEndian, toByteOffset: offset, as: UInt64.self)
        }
    }

    /// Stores a byte value's entry at `entry` (u16 heap offset, u16 length) and its bytes or
    /// overflow reference below `heap`, which moves down; columns end at `floor`.
    /// - Returns: false (nothing stored) when the heap would reach below `floor`.
    @inlinable
    static func storeHeapValue(_ cell: StoredCell, _ page: UnsafeMutableRawPointer, entry: Int, heap: inout Int, floor: Int) -> Bool {
        var off = 0
        var len = 0
        switch cell {
        case .value(.bytes(let bytes)) where !bytes.isEmpty:
            guard heap &- bytes.count >= floor else { return false }
            heap &-= bytes.count
            bytes.withUnsafeBytes { (page + heap).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            off = heap
            len = bytes.count
        case .overflow(let ref, let length):
            guard heap &- overflowRefSize >= floor else { return false }
            heap &-= overflowRefSize
            page.storeBytes(of: ref.pgno.littleEndian, toByteOffset: heap, as: UInt64.self)
            page.storeBytes(of: ref.version.littleEndian, toByteOffset: heap &+ 8, as: UInt64.self)
            page.storeBytes(of: length.littleEndian, toByteOffset: heap &+ 16, as: UInt64.self)
            off = heap
            len = overflowMarker
        default:
            break
        }
        page.storeBytes(of: UInt16(off).littleEndian, toByteOffset: entry, as: UInt16.self)
        page.storeBytes(of: UInt16(len).littleEndian, toByteOffset: entry &+ 2, as: UInt16.self)
        return true
    }
}

// MARK: - One value in place

extension ClusterLeaf {
    /// Whether this page's layout holds `value` as object `i`'s value in column `j` as it
    /// stands: a stored column; null only where the column has a null bitmap; an int within the
    /// column's base and delta width; a string, binary or mixed value only in place of an inline
    /// one of the same length. Anything else needs the page laid out again. The value is assumed
    /// valid for the column (`ClusterLayout.validate`).
    /// - Complexity: O(1)
    func holds(_ value: CellValue, at j: Int, _ i: Int, kind: ColumnKind) -> Bool {
        guard j < columnCount, i >= 0, i < count else { return false }
        switch value {
        case .null:
            return hasNullBitmap(j) && (!kind.isBytes || isNull(j, i))
        case .int(let x):
            let base = Int64(bitPattern: u64(valuesOffset(j)))
            return x >= base && UInt64(bitPattern: x &- base) <= ClusterLayout.maxDelta(width: Int(encoding(j) & 0x0F))
        case .bytes(let b):
            guard !isNull(j, i), let stored = try? bytesRef(j, i), case .inline(let old) = stored else { return false }
            return old.count == b.count
        default:
            return true
        }
    }

    /// Writes `value` as object `i`'s value in column `j` into `page`, a writable page laid out
    /// as this one (this page itself, or a copy of it); `holds(value, at: j, i, kind:)` must be
    /// true. What it writes is what the encoder would write for that object, but for an int
    /// column's base, which stays what it was: the minimum of the values the page was laid out
    /// with.
    /// - Complexity: O(1)
    func overwrite(_ j: Int, _ i: Int, with value: CellValue, kind: ColumnKind, in page: UnsafeMutableRawPointer) {
        let v = valuesOffset(j)
        if hasNullBitmap(j) { ClusterLayout.storeBit(value == .null, page, columnOffset(j), i) }
        @inline(__always) func store<T: FixedWidthInteger>(_ x: T, at offset: Int) {
            page.storeBytes(of: x.littleEndian, toByteOffset: offset, as: T.self)
        }
        let width = Int(encoding(j) & 0x0F)
        switch (value, kind) {
        case (.null, .bool):
            ClusterLayout.storeBit(false, page, v, i)
        case (.null, .int):
            ClusterLayout.storeDelta(0, width: width, page, at: v &+ 8 &+ width &* i)
        case (.null, .timestamp):
            store(UInt64(0), at: v &+ 8 &* i)
            store(UInt32(0), at: v &+ 8 &* count &+ 4 &* i)
        case (.null, _):
            // A bytes column holds null in place only where it was null: nothing to store.
            if !kind.isBytes { (page + (v &+ ClusterLayout.elementSize(kind) &* i)).initializeMemory(as: UInt8.self, repeating: 0, count: ClusterLayout.elementSize(kind)) }
        case (.bool(let b), _):
            ClusterLayout.storeBit(b, page, v, i)
        case (.int(let x), _):
            ClusterLayout.storeDelta(UInt64(bitPattern: x &- Int64(bitPattern: u64(v))), width: width, page, at: v &+ 8 &+ width &* i)
        case (.float, _), (.double, _), (.timestamp, _), (.bytes16, _), (.bytes12, _), (.link, _), (.root, _):
            ClusterLayout.storeFixed(.value(value), page, values: v, index: i, count: count)
        case (.bytes(let b), _):
            if !b.isEmpty {
                let at = u16(v &+ 4 &* i)
                b.withUnsafeBytes { (page + at).copyMemory(from: $0.baseAddress!, byteCount: b.count) }
            }
        }
    }
}

// MARK: - One object removed in place

extension ClusterLeaf {
    /// Whether object `i` can be removed from this page without laying it out again: not the
    /// first object (whose key files the cluster in the table's tree) nor the only one; keys
    /// stepped (a page of plain keys, from before them, is laid out again in the stepped form),
    /// whose later deltas still fit the page's width once they grow by one (their objects move
    /// down a place, and deltas never shrink, so the last is the widest); and the page keeps the
    /// minimum fill without it, so that rebalancing with a neighbour stays the general path's
    /// business.
    /// - Complexity: O(c) for c columns.
    func canRemoveInPlace(_ i: Int, specs: [ColumnSpec]) -> Bool {
        guard i > 0, i < count, count > 1, keyStep == 1 else { return false }
        let lastDelta = key(count &- 1) &- keyBase &- UInt64(count &- 1)
        guard lastDelta < ClusterLayout.maxDelta(width: keyWidth) else { return false }
        // The bytes the page's objects take without object i (header, keys, columns, live heap
        // bytes), as the general path would measure the cluster to rebalance it.
        var used = keysEnd &- keyWidth &+ (pageSize &- heapStart) &- u16(ClusterLayout.garbageOffset)
        let m = count &- 1
        for j in 0..<columnCount {
            let kind = specs[j].kind
            used &+= (hasNullBitmap(j) ? ClusterLayout.bitmapBytes(m) : 0) &+ (ClusterLayout.valuesSize(kind, encoding: encoding(j), n: m) ?? 0)
            if kind.isBytes { used &-= heapBytes(j, i) }
        }
        return used >= ClusterLayout.minFill
    }

    /// The heap bytes object `i`'s value takes in bytes column `j`: its inline bytes, the
    /// reference of a value in overflow pages, nothing for null.
    func heapBytes(_ j: Int, _ i: Int) -> Int {
        if isNull(j, i) { return 0 }
        let length = u16(valuesOffset(j) &+ 4 &* i &+ 2)
        return length == ClusterLayout.overflowMarker ? ClusterLayout.overflowRefSize : length
    }

    /// Removes object `r` into `page`, a writable page laid out as this one (this page itself,
    /// or a copy of it); `canRemoveInPlace(r, specs:)` must be true. Every column keeps its
    /// place and shrinks by one element; the object's heap bytes (and the reference of a value
    /// in overflow pages, whose chain the caller frees) become the page's heap garbage.
    /// - Throws: `.corrupt` if the copy it reads from fails the checks of a page read (this
    ///   page passed them, so it does not).
    /// - Complexity: O(b) for b bytes in the page.
    func removeInPlace(_ r: Int, specs: [ColumnSpec], into page: UnsafeMutableRawPointer) throws(StorageError) {
        // A copy is read as it is; this very page, from a copy of it.
        if UnsafeRawPointer(page) != base {
            remove(r, reading: self, specs: specs, into: page)
            return
        }
        try withUnsafeTemporaryAllocation(byteCount: pageSize, alignment: 16) { buffer throws(StorageError) in
            buffer.baseAddress!.copyMemory(from: base, byteCount: pageSize)
            remove(r, reading: try ClusterLeaf(UnsafeRawPointer(buffer.baseAddress!), pgno: pgno, specs: specs), specs: specs, into: page)
        }
    }

    /// `removeInPlace` from `old`, a page with this one's bytes that is not `page`.
    private func remove(_ r: Int, reading old: ClusterLeaf, specs: [ColumnSpec], into page: UnsafeMutableRawPointer) {
        let n = count
        let m = n &- 1
        /// The n bits at `from` without bit r, as m bits at `to` (the rest of the last byte 0).
        func moveBits(from: Int, to: Int) {
            (page + to).initializeMemory(as: UInt8.self, repeating: 0, count: ClusterLayout.bitmapBytes(m))
            for k in 0..<m where old.bit(from, k < r ? k : k &+ 1) { ClusterLayout.storeBit(true, page, to, k) }
        }
        /// The n elements of `size` bytes at `from` without element r, as m elements at `to`.
        func moveElements(from: Int, to: Int, size: Int) {
            guard size > 0 else { return }
            if r > 0 { (page + to).copyMemory(from: old.base + from, byteCount: r &* size) }
            if m > r { (page + (to &+ r &* size)).copyMemory(from: old.base + (from &+ (r &+ 1) &* size), byteCount: (m &- r) &* size) }
        }
        // Keys (stepped): the base stays, and each later object, one place lower, has a
        // delta one larger.
        for k in r..<m {
            ClusterLayout.storeDelta(old.key(k &+ 1) &- keyBase &- UInt64(k), width: keyWidth, page, at: keyDeltas &+ keyWidth &* k)
        }
        var garbage = old.u16(ClusterLayout.garbageOffset)
        for j in 0..<columnCount {
            let start = old.columnOffset(j)
            let nulls = old.hasNullBitmap(j)
            let from = old.valuesOffset(j)
            let to = start &+ (nulls ? ClusterLayout.bitmapBytes(m) : 0)
            if nulls { moveBits(from: start, to: start) }
            switch specs[j].kind {
            case .bool:
                moveBits(from: from, to: to)
            case .int:
                (page + to).copyMemory(from: old.base + from, byteCount: 8)
                moveElements(from: from &+ 8, to: to &+ 8, size: Int(old.encoding(j) & 0x0F))
            case .timestamp:
                moveElements(from: from, to: to, size: 8)
                moveElements(from: from &+ 8 &* n, to: to &+ 8 &* m, size: 4)
            case .string, .binary, .mixed, .collectionInRow:
                garbage &+= old.heapBytes(j, r)
                moveElements(from: from, to: to, size: 4)
            case let kind:
                moveElements(from: from, to: to, size: ClusterLayout.elementSize(kind))
            }
        }
        page.storeBytes(of: UInt16(garbage).littleEndian, toByteOffset: ClusterLayout.garbageOffset, as: UInt16.self)
        page.storeBytes(of: UInt16(m).littleEndian, toByteOffset: PageHeader.countOffset, as: UInt16.self)
    }
}
