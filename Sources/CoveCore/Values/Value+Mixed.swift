// The encoding of a mixed cell: the value's tag byte (`Value.Tag`) then its payload in
// little-endian, with no length of its own (the table stores the cell's length).
import FoundationEssentials

extension Value {
    /// The bytes of this value as a mixed cell: the tag byte, then
    /// null: nothing; bool: 1 byte (0 or 1); int: 8 bytes; float: 4 bytes (IEEE bits);
    /// double: 8 bytes (IEEE bits); string: the UTF-8 bytes; data: the bytes; timestamp:
    /// seconds (8 bytes) then nanoseconds (4 bytes); decimal128: its 16 bytes; objectId: its 12
    /// bytes; uuid: its 16 bytes; link: class key (4 bytes) then object key (8 bytes).
    /// Numbers are little-endian.
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
        }
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
        }
    }

    /// The value of a mixed cell written by `encodeMixed()`. Throws `CoveError(.corrupt)` for an
    /// empty cell, an unknown tag, a payload of the wrong length, a bool byte other than 0 or 1,
    /// a timestamp whose parts differ in sign or whose nanoseconds exceed a second, or a string
    /// that is not UTF-8.
    public static func decodeMixed(_ cell: UnsafeRawBufferPointer) throws(CoveError) -> Value {
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
        withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
    }
}
