// Unsigned LEB128 varints, and ascending page numbers stored as the LEB128 distances between
// them: the encoding of the meta slot's lists and of the free-space records.

enum LEB128 {
    /// Bytes of `value`'s encoding.
    @inline(__always)
    static func size(_ value: UInt64) -> Int {
        var n = 1
        var v = value >> 7
        while v != 0 { n += 1; v >>= 7 }
        return n
    }

    /// Writes `value` at `p`; returns its size.
    @inline(__always)
    static func write(_ value: UInt64, to p: UnsafeMutableRawPointer) -> Int {
        var v = value
        var i = 0
        while v >= 0x80 {
            p.storeBytes(of: UInt8(truncatingIfNeeded: v) | 0x80, toByteOffset: i, as: UInt8.self)
            v >>= 7
            i += 1
        }
        p.storeBytes(of: UInt8(v), toByteOffset: i, as: UInt8.self)
        return i + 1
    }

    /// Reads a value at `at` in `bytes`, advancing `at`; `.corrupt(malformed())` if it runs
    /// past the end or past 64 bits.
    @inline(__always)
    static func read(_ bytes: UnsafeRawBufferPointer, at: inout Int,
                     _ malformed: @autoclosure () -> String) throws(StorageError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard at < bytes.count, shift < 64 else { throw .corrupt(malformed()) }
            let b = bytes[at]
            at += 1
            value |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return value }
            shift += 7
        }
    }

    /// Reads `count` ascending page numbers stored as distances (the first from 0), appending
    /// them to `pages`; each must be below `pageCount`, not a meta slot (page 0 or
    /// `secondSlot`), and differ from the one before.
    /// `what` names the list in errors ("free-space record 7").
    static func readPages(_ bytes: UnsafeRawBufferPointer, at: inout Int, count: Int, pageCount: UInt64,
                          secondSlot: PageNumber, into pages: inout [PageNumber], _ what: String) throws(StorageError) {
        pages.reserveCapacity(pages.count + count)
        var previous: UInt64 = 0
        for i in 0..<count {
            let delta = try read(bytes, at: &at, "\(what) is malformed")
            let (pgno, overflow) = previous.addingReportingOverflow(delta)
            guard !overflow, MetaSlot.holdsData(pgno, secondSlot: secondSlot, pageCount: pageCount), i == 0 || delta != 0 else {
                throw .corrupt("\(what) lists page \(pgno), a meta slot, outside the file's \(pageCount) pages or repeated")
            }
            pages.append(pgno)
            previous = pgno
        }
    }
}
