// The encoding of a mixed cell: the value's tag byte (`Value.Tag`) then its payload in
// little-endian, with no length of its own (the table stores the cell's length).
import FoundationEssentials

extension Value {
    /// The bytes of this value as a mixed cell: the tag byte, then
    /// null: nothing; bool: 1 byte (0 or 1); int: 8 bytes; float: 4 bytes (IEEE bits);
    /// double: 8 bytes (IEEE bits); string: the UTF-8 bytes; data: the bytes; timestamp:
    /// seconds (8 bytes) then nanoseconds (4 bytes); decimal128: its 16 bytes; objectId: its 12
    /// bytes; uuid: its 16 bytes; link: class key (4 bytes) then object key (8 bytes); list:
    /// the element count (LEB128), then each element as its LEB128 length and its own encoding;
    /// dictionary: the entry count (LEB128), then each entry in ascending order of its key's
    /// UTF-8 bytes as the key's LEB128 length, the key, the value's LEB128 length and the value's
    /// encoding. Numbers are little-endian.
    public func encodeMixed() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(mixedEncodedSize)
        appendMixed(to: &out)
        return out
    }

    /// The bytes of `encodeMixed()`, without making them.
    var mixedEncodedSize: Int {
        switch self {
        case .null: return 1
        case .bool: return 2
        case .int, .double: return 9
        case .float: return 5
        case .string(let s): return 1 + s.utf8.count
        case .data(let d): return 1 + d.count
        case .timestamp, .objectId, .link: return 13
        case .decimal128, .uuid: return 17
        case .list(let elements):
            return elements.reduce(1 + Value.lebSize(elements.count)) { n, e in
                let size = e.mixedEncodedSize
                return n + Value.lebSize(size) + size
            }
        case .dictionary(let entries):
            return entries.reduce(1 + Value.lebSize(entries.count)) { n, e in
                let k = e.key.utf8.count, size = e.value.mixedEncodedSize
                return n + Value.lebSize(k) + k + Value.lebSize(size) + size
            }
        }
    }

    /// The most collections a mixed value nests in one another (a list in a dictionary in a
    /// list is 3): deeper values are refused when written and damaged when read.
    public static let maxNesting = 100

    /// How deeply collections nest in this value: 0 for a scalar, 1 for a list of scalars.
    public var nestingDepth: Int {
        switch self {
        case .list(let elements): return 1 + (elements.map(\.nestingDepth).max() ?? 0)
        case .dictionary(let entries): return 1 + (entries.values.map(\.nestingDepth).max() ?? 0)
        default: return 0
        }
    }

    static func lebSize(_ n: Int) -> Int {
        var v = UInt64(n), size = 1
        while v >= 0x80 { v >>= 7; size += 1 }
        return size
    }

    static func appendLEB(_ n: Int, to out: inout [UInt8]) {
        var v = UInt64(n)
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    /// Appends `encodeMixed()`'s bytes to `out`.
    func appendMixed(to out: inout [UInt8]) {
        out.append(tag.rawValue)
        switch self {
        case .null: break
        case .bool(let b): out.append(b ? 1 : 0)
        case .int(let i): Value.appendLittleEndian(UInt64(bitPattern: i), bytes: 8, to: &out)
        case .float(let f): Value.appendLittleEndian(UInt64(f.bitPattern), bytes: 4, to: &out)
        case .double(let d): Value.appendLittleEndian(d.bitPattern, bytes: 8, to: &out)
        case .string(let s): out.append(contentsOf: s.utf8)
        case .data(let d): out.append(contentsOf: d)
        case .timestamp(let t):
            Value.appendLittleEndian(UInt64(bitPattern: t.seconds), bytes: 8, to: &out)
            Value.appendLittleEndian(UInt64(UInt32(bitPattern: t.nanoseconds)), bytes: 4, to: &out)
        case .decimal128(let d): out.append(contentsOf: d.bytes)
        case .objectId(let o): out.append(contentsOf: o.bytes)
        case .uuid(let u): out.append(contentsOf: u.rfc4122Bytes)
        case .link(let l):
            Value.appendLittleEndian(UInt64(l.classKey), bytes: 4, to: &out)
            Value.appendLittleEndian(UInt64(bitPattern: l.objectKey), bytes: 8, to: &out)
        case .list(let elements):
            Value.appendLEB(elements.count, to: &out)
            for e in elements {
                Value.appendLEB(e.mixedEncodedSize, to: &out)
                e.appendMixed(to: &out)
            }
        case .dictionary(let entries):
            Value.appendLEB(entries.count, to: &out)
            for (key, v) in Value.sortedEntries(entries) {
                Value.appendLEB(key.utf8.count, to: &out)
                out.append(contentsOf: key.utf8)
                Value.appendLEB(v.mixedEncodedSize, to: &out)
                v.appendMixed(to: &out)
            }
        }
    }

    /// The value of a mixed cell written by `encodeMixed()`. Throws `CoveError(.corrupt)` for an
    /// empty cell, an unknown tag, a payload of the wrong length, a bool byte other than 0 or 1,
    /// a timestamp whose parts differ in sign or whose nanoseconds exceed a second, a string
    /// that is not UTF-8, and a nested collection whose lengths overrun it, whose keys are not
    /// UTF-8 or not in ascending order, or that nests deeper than `maxNesting`.
    public static func decodeMixed(_ cell: UnsafeRawBufferPointer) throws(CoveError) -> Value {
        try decodeMixed(cell, depth: 0)
    }

    private static func decodeMixed(_ cell: UnsafeRawBufferPointer, depth: Int) throws(CoveError) -> Value {
        guard let first = cell.first else { throw CoveError(.corrupt, "mixed value: empty cell") }
        guard let tag = Tag(rawValue: first) else {
            throw CoveError(.corrupt, "mixed value: unknown type tag \(first)")
        }
        let payload = UnsafeRawBufferPointer(rebasing: cell[1...])
        func expect(_ n: Int) throws(CoveError) {
            guard payload.count == n else {
                throw CoveError(.corrupt, "mixed value: a \(tag) payload is \(n) bytes, got \(payload.count)")
            }
        }
        func le(_ offset: Int, _ n: Int) -> UInt64 {
            var v: UInt64 = 0
            for i in (0..<n).reversed() { v = v << 8 | UInt64(payload[offset + i]) }
            return v
        }
        switch tag {
        case .null:
            try expect(0)
            return .null
        case .bool:
            try expect(1)
            guard payload[0] <= 1 else { throw CoveError(.corrupt, "mixed value: bool byte \(payload[0])") }
            return .bool(payload[0] == 1)
        case .int:
            try expect(8)
            return .int(Int64(bitPattern: le(0, 8)))
        case .float:
            try expect(4)
            return .float(Float(bitPattern: UInt32(le(0, 4))))
        case .double:
            try expect(8)
            return .double(Double(bitPattern: le(0, 8)))
        case .string:
            guard let s = String(utf8: payload) else {
                throw CoveError(.corrupt, "mixed value: a string that is not UTF-8")
            }
            return .string(s)
        case .data:
            return .data(Array(payload))
        case .timestamp:
            try expect(12)
            let s = Int64(bitPattern: le(0, 8))
            let ns = Int32(bitPattern: UInt32(le(8, 4)))
            guard ns.magnitude < 1_000_000_000, !(s > 0 && ns < 0), !(s < 0 && ns > 0) else {
                throw CoveError(.corrupt, "mixed value: timestamp \(s) s \(ns) ns is not normalized")
            }
            return .timestamp(Timestamp(seconds: s, nanoseconds: ns))
        case .decimal128:
            try expect(16)
            return .decimal128(Decimal128(high: le(8, 8), low: le(0, 8)))
        case .objectId:
            try expect(12)
            return .objectId(try ObjectId(bytes: payload))
        case .uuid:
            try expect(16)
            return .uuid(UUID(rfc4122Bytes: payload))
        case .link:
            try expect(12)
            return .link(ObjectLink(classKey: UInt32(le(0, 4)), objectKey: Int64(bitPattern: le(4, 8))))
        case .list, .dictionary:
            guard depth < maxNesting else {
                throw CoveError(.corrupt, "mixed value: collections nested deeper than \(maxNesting)")
            }
            var reader = NestedReader(bytes: payload)
            let count = try reader.length()
            if tag == .list {
                var elements: [Value] = []
                elements.reserveCapacity(count)
                for _ in 0..<count { elements.append(try decodeMixed(try reader.slice(), depth: depth + 1)) }
                try reader.finish()
                return .list(elements)
            }
            var entries: [String: Value] = [:]
            entries.reserveCapacity(count)
            var previous: UnsafeRawBufferPointer?
            for _ in 0..<count {
                let keyBytes = try reader.slice()
                if let previous, !previous.lexicographicallyPrecedes(keyBytes) {
                    throw CoveError(.corrupt, "mixed value: dictionary keys out of order or repeated")
                }
                previous = keyBytes
                guard let key = String(utf8: keyBytes) else {
                    throw CoveError(.corrupt, "mixed value: a dictionary key that is not UTF-8")
                }
                entries[key] = try decodeMixed(try reader.slice(), depth: depth + 1)
            }
            try reader.finish()
            guard entries.count == count else {
                throw CoveError(.corrupt, "mixed value: dictionary keys that are equal as strings")
            }
            return .dictionary(entries)
        }
    }

    /// Reads the LEB128 lengths and the byte runs of a nested collection's payload.
    private struct NestedReader {
        let bytes: UnsafeRawBufferPointer
        var at = 0

        /// A LEB128 number no larger than the bytes left could hold.
        mutating func length() throws(CoveError) -> Int {
            var v: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard at < bytes.count, shift < 63 else {
                    throw CoveError(.corrupt, "mixed value: a collection's length runs past its cell")
                }
                let b = bytes[at]
                at += 1
                v |= UInt64(b & 0x7F) << shift
                if b & 0x80 == 0 { break }
                shift += 7
            }
            guard v <= UInt64(bytes.count - at) else {
                throw CoveError(.corrupt, "mixed value: a collection's length of \(v) runs past its cell")
            }
            return Int(v)
        }

        /// A run of bytes led by its LEB128 length.
        mutating func slice() throws(CoveError) -> UnsafeRawBufferPointer {
            let n = try length()
            defer { at += n }
            return UnsafeRawBufferPointer(rebasing: bytes[at..<(at + n)])
        }

        func finish() throws(CoveError) {
            guard at == bytes.count else { throw CoveError(.corrupt, "mixed value: bytes after a collection's last entry") }
        }
    }

    /// The value of a mixed cell held in an array (see `decodeMixed(_:)`).
    public static func decodeMixed(_ cell: [UInt8]) throws(CoveError) -> Value {
        let result = cell.withUnsafeBytes { buffer in
            Result { () throws(CoveError) -> Value in try decodeMixed(buffer) }
        }
        return try result.get()
    }

    static func appendLittleEndian(_ v: UInt64, bytes n: Int, to out: inout [UInt8]) {
        // Byte by byte: cheaper than appending a slice, on the path of every mixed element.
        var rest = v
        for _ in 0..<n {
            out.append(UInt8(truncatingIfNeeded: rest))
            rest >>= 8
        }
    }
}
