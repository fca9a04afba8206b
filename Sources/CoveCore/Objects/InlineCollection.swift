// Small lists, sets and maps kept in their table's collection area instead of a B+tree of their
// own: the elements of one collection as one byte string. A list is its values in order; a set
// or a map is its entries in key order (a set's key is the element's index key, a map's the UTF-8
// of its key), each key before its value. Every key and value is a LEB128 length and the bytes.
// The owner's row keeps the element count (docs/FORMAT-objects.md, "Small collections").
import CoveStorage
import Glibc

package struct InlineCollection {
    /// The encoded entries.
    private(set) var bytes: [UInt8]
    /// How many entries `bytes` holds.
    private(set) var count: Int
    /// Whether entries carry keys (sets and maps) or are values alone (lists).
    let keyed: Bool

    /// The most bytes a collection keeps inline; a bigger one moves to a B+tree of its own. A
    /// quarter page less the side tree's cell overhead, so that an inline collection always fits
    /// one leaf cell of the area without an overflow page.
    static let limit = 960
    /// A B+tree of one leaf whose entries would take at most this many bytes inline moves back
    /// (half the limit, so that a collection at the limit does not switch at every edit).
    static let shrinkLimit = limit / 2
    /// The most bytes a collection keeps inline in its object's row (tables made since format
    /// 6): an eighth of a page, so that an object with a few collections and strings stays
    /// within the quarter page a row takes before its largest values go to overflow pages.
    static let rowLimit = 480
    /// A tree of one leaf that would take at most this many bytes in the row moves back.
    static let rowShrinkLimit = rowLimit / 2

    init(keyed: Bool) {
        bytes = []
        count = 0
        self.keyed = keyed
    }

    /// The collection of `count` entries that `bytes` encodes, unchecked: for bytes this
    /// process encoded itself.
    init(encoded bytes: [UInt8], count: Int, keyed: Bool) {
        self.bytes = bytes
        self.count = count
        self.keyed = keyed
    }

    /// The collection `bytes` encodes, checked: `count` entries that fill the bytes exactly and,
    /// when keyed, keys in strictly ascending order.
    init(bytes: [UInt8], count: Int, keyed: Bool) throws(StorageError) {
        self.bytes = bytes
        self.count = count
        self.keyed = keyed
        try check()
    }

    /// Checks the encoding (see `init(bytes:count:keyed:)`).
    func check() throws(StorageError) {
        var seen = 0
        var previous: UnsafeRawBufferPointer?
        var ordered = true
        try forEach { (k, _) in
            seen += 1
            if keyed {
                if let previous, !Self.less(previous, k) { ordered = false }
                previous = k
            }
            return true
        }
        guard seen == count else { throw .corrupt("an inline collection holds \(seen) entries where its owner records \(count)") }
        guard ordered else { throw .corrupt("an inline set or map has keys out of order") }
    }

    // MARK: Reading

    /// Calls `body` with each entry's key (empty for a list) and value, in order, until it
    /// returns false.
    func forEach(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(StorageError) -> Bool) throws(StorageError) {
        let result = bytes.withUnsafeBytes { b in
            Result { () throws(StorageError) in
                var at = 0
                while at < b.count {
                    let (k, v, end) = try Self.entry(b, at: at, keyed: keyed)
                    at = end
                    if try !body(k, v) { return }
                }
            }
        }
        try result.get()
    }

    /// The entry at `index` (0..<count).
    func withEntry<R>(at index: Int, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(StorageError) -> R) throws(StorageError) -> R {
        let range = try entryRange(at: index)
        let result = bytes.withUnsafeBytes { b in
            Result { () throws(StorageError) -> R in
                let (k, v, _) = try Self.entry(b, at: range.lowerBound, keyed: keyed)
                return try body(k, v)
            }
        }
        return try result.get()
    }

    /// Where the entry with `key` is, or would go: its index, its byte offset, and whether it is
    /// there.
    func find(_ key: [UInt8]) throws(StorageError) -> (index: Int, offset: Int, found: Bool) {
        let result = bytes.withUnsafeBytes { b in
            key.withUnsafeBytes { wanted in
                Result { () throws(StorageError) -> (index: Int, offset: Int, found: Bool) in
                    var at = 0
                    var index = 0
                    while at < b.count {
                        let (k, _, end) = try Self.entry(b, at: at, keyed: true)
                        if !Self.less(k, wanted) { return (index, at, !Self.less(wanted, k)) }
                        at = end
                        index += 1
                    }
                    return (index, at, false)
                }
            }
        }
        return try result.get()
    }

    /// The value of `key`, if the collection holds it.
    func get(_ key: [UInt8]) throws(StorageError) -> [UInt8]? {
        let f = try find(key)
        guard f.found else { return nil }
        return try withEntry(at: f.index) { (_, v) in Array(v) }
    }

    // MARK: Editing

    /// Inserts `value` at `index` (0...count) of a list.
    mutating func insert(_ value: [UInt8], at index: Int) throws(StorageError) {
        let at = index == count ? bytes.count : try entryRange(at: index).lowerBound
        bytes.insert(contentsOf: Self.encoded(key: nil, value), at: at)
        count += 1
    }

    /// Replaces the value at `index` of a list; returns the old one.
    mutating func replace(at index: Int, with value: [UInt8]) throws(StorageError) -> [UInt8] {
        let range = try entryRange(at: index)
        let old = try withEntry(at: index) { (_, v) in Array(v) }
        bytes.replaceSubrange(range, with: Self.encoded(key: nil, value))
        return old
    }

    /// Removes the entry at `index`; returns its value.
    mutating func remove(at index: Int) throws(StorageError) -> [UInt8] {
        let range = try entryRange(at: index)
        let old = try withEntry(at: index) { (_, v) in Array(v) }
        bytes.removeSubrange(range)
        count -= 1
        return old
    }

    /// Sets the value of `key` in a set or map, adding the entry in key order when it is new.
    mutating func put(_ key: [UInt8], _ value: [UInt8]) throws(StorageError) {
        let f = try find(key)
        let entry = Self.encoded(key: key, value)
        if f.found {
            bytes.replaceSubrange(try entryRange(at: f.index), with: entry)
        } else {
            bytes.insert(contentsOf: entry, at: f.offset)
            count += 1
        }
    }

    /// Removes the entry of `key`; false when there was none.
    mutating func remove(key: [UInt8]) throws(StorageError) -> Bool {
        let f = try find(key)
        guard f.found else { return false }
        _ = try remove(at: f.index)
        return true
    }

    mutating func removeAll() {
        bytes = []
        count = 0
    }

    /// Appends an entry that sorts after every entry held (a set or map built in key order, a
    /// list built in order).
    mutating func append(key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: Self.encoded(key: keyed ? Array(key) : nil, Array(value)))
        count += 1
    }

    /// Appends an entry whose value is `value`'s mixed encoding, written in place: a list's
    /// next element, or (with `key`) a set's or map's entry that sorts after every entry held.
    mutating func append(key: [UInt8]? = nil, mixed value: Value) {
        if let key {
            Self.appendLength(key.count, to: &bytes)
            bytes.append(contentsOf: key)
        }
        Self.appendLength(value.mixedEncodedSize, to: &bytes)
        value.appendMixed(to: &bytes)
        count += 1
    }

    /// Room for `n` more bytes.
    mutating func reserve(_ n: Int) {
        bytes.reserveCapacity(bytes.count + n)
    }

    /// Bytes of the entry `key` (nil for a list) and `value` would take.
    static func entrySize(keyBytes: Int?, valueBytes: Int) -> Int {
        var size = lengthSize(valueBytes) + valueBytes
        if let keyBytes { size += lengthSize(keyBytes) + keyBytes }
        return size
    }

    // MARK: Encoding

    /// Lengths are LEB128, as in the mixed encoding of nested collections.
    private static func lengthSize(_ n: Int) -> Int { Value.lebSize(n) }

    static func appendLength(_ n: Int, to out: inout [UInt8]) { Value.appendLEB(n, to: &out) }

    private static func encoded(key: [UInt8]?, _ value: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(entrySize(keyBytes: key?.count, valueBytes: value.count))
        if let key {
            appendLength(key.count, to: &out)
            out.append(contentsOf: key)
        }
        appendLength(value.count, to: &out)
        out.append(contentsOf: value)
        return out
    }

    static func readLength(_ b: UnsafeRawBufferPointer, at: inout Int) throws(StorageError) -> Int {
        var value = 0
        var shift = 0
        while true {
            guard at < b.count, shift < 35 else { throw .corrupt("an inline collection has a malformed length at byte \(at)") }
            let byte = b[at]
            at += 1
            value |= Int(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }

    /// The key, value and end of the entry starting at `at`.
    private static func entry(_ b: UnsafeRawBufferPointer, at start: Int, keyed: Bool) throws(StorageError)
        -> (UnsafeRawBufferPointer, UnsafeRawBufferPointer, Int) {
        var at = start
        var key = UnsafeRawBufferPointer(start: b.baseAddress, count: 0)
        if keyed {
            let n = try readLength(b, at: &at)
            guard n <= b.count - at else { throw .corrupt("an inline collection's key at byte \(start) runs past its end") }
            key = UnsafeRawBufferPointer(rebasing: b[at..<at + n])
            at += n
        }
        let n = try readLength(b, at: &at)
        guard n <= b.count - at else { throw .corrupt("an inline collection's value at byte \(start) runs past its end") }
        let value = UnsafeRawBufferPointer(rebasing: b[at..<at + n])
        return (key, value, at + n)
    }

    /// The bytes of the entry at `index`.
    private func entryRange(at index: Int) throws(StorageError) -> Range<Int> {
        guard index >= 0, index < count else { throw .corrupt("an inline collection of \(count) entries has no entry \(index)") }
        let result = bytes.withUnsafeBytes { b in
            Result { () throws(StorageError) -> Range<Int> in
                var at = 0
                for _ in 0..<index { at = try Self.entry(b, at: at, keyed: keyed).2 }
                return at..<(try Self.entry(b, at: at, keyed: keyed).2)
            }
        }
        return try result.get()
    }

    /// Byte-wise order, a prefix first (the order of a byte-keyed B+tree).
    static func less(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        let n = Swift.min(a.count, b.count)
        if n > 0 {
            let c = memcmp(a.baseAddress!, b.baseAddress!, n)
            if c != 0 { return c < 0 }
        }
        return a.count < b.count
    }
}
