// The order-preserving byte encoding of values that primary-key and secondary indexes store as
// B+tree keys: (encoded value, 8-byte big-endian object key). Byte order of two encodings is the
// order of their values within a type; across types it is the order of `Value.Tag`. Encodings are
// prefix-free, so appending the object key never changes the order of values.
import FoundationEssentials

extension Value {
    /// The index key of this value: the tag byte, then
    /// - null: nothing (so null sorts first);
    /// - bool: 0 or 1;
    /// - int: 8 bytes big-endian with the sign bit flipped;
    /// - float, double: the IEEE bits big-endian, all bits inverted for negatives and the sign
    ///   bit set for positives; -0 is written as 0 and every NaN as all zero bytes (before
    ///   -Infinity), matching `==`;
    /// - decimal128: 18 bytes (see `Decimal128`): NaN, negatives, zero, positives; equal values
    ///   (1.5 and 1.50) encode equally;
    /// - timestamp: seconds (8 bytes) then nanoseconds (4 bytes), each big-endian, sign flipped;
    /// - string, data: the bytes (UTF-8 for strings, no normalization) with each 0x00 written
    ///   as 0x00 0xFF, then the terminator 0x00 0x00, so byte order is lexicographic order and a
    ///   string's key never prefixes another's;
    /// - objectId: its 12 bytes; uuid: its 16 bytes in RFC 4122 order;
    /// - link: class key (4 bytes) then object key (8 bytes, sign flipped), big-endian;
    /// - list: each element as 0x01 then its index key, then 0x00; dictionary: each entry in the
    ///   order of its key's UTF-8 bytes as 0x01, the key escaped as a string is, the value's
    ///   index key, then 0x00 (so collections order element by element, a shorter one first).
    /// - Complexity: O(n) in the size of the value.
    package func indexKey() -> [UInt8] {
        var out: [UInt8] = []
        appendIndexKey(to: &out, caseFolded: false)
        return out
    }

    /// The index key with strings case-folded by the standard library's `lowercased()` (the
    /// Unicode default lowercase mapping, e.g. "ÄB" and "äb" fold alike, "İ" folds to "i̇").
    /// Other values encode as in `indexKey()`. An index built for `==[c]` stores these keys, and
    /// the query looks up the same fold of its operand; a match is then confirmed on the value.
    package func indexKeyCaseFolded() -> [UInt8] {
        var out: [UInt8] = []
        appendIndexKey(to: &out, caseFolded: true)
        return out
    }

    /// Appends this value's index key (case-folded strings when `caseFolded`) to `out`.
    package func appendIndexKey(to out: inout [UInt8], caseFolded: Bool = false) {
        out.append(tag.rawValue)
        switch self {
        case .null:
            break
        case .bool(let b):
            out.append(b ? 1 : 0)
        case .int(let i):
            Value.appendBigEndian(UInt64(bitPattern: i) ^ (1 << 63), to: &out)
        case .float(let f):
            let bits: UInt32
            if f.isNaN {
                bits = 0
            } else {
                let p = (f == 0 ? Float(0) : f).bitPattern
                bits = p >> 31 == 1 ? ~p : p | 1 << 31
            }
            for shift in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: bits >> UInt32(shift))) }
        case .double(let d):
            let bits: UInt64
            if d.isNaN {
                bits = 0
            } else {
                let p = (d == 0 ? Double(0) : d).bitPattern
                bits = p >> 63 == 1 ? ~p : p | 1 << 63
            }
            Value.appendBigEndian(bits, to: &out)
        case .decimal128(let d):
            d.appendOrderedBytes(to: &out)
        case .timestamp(let t):
            Value.appendBigEndian(UInt64(bitPattern: t.seconds) ^ (1 << 63), to: &out)
            let ns = UInt32(bitPattern: t.nanoseconds) ^ (1 << 31)
            for shift in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: ns >> UInt32(shift))) }
        case .string(let s):
            Value.appendEscaped(caseFolded ? s.lowercased().utf8 : s.utf8, to: &out)
        case .data(let d):
            Value.appendEscaped(d, to: &out)
        case .objectId(let o):
            out.append(contentsOf: o.bytes)
        case .uuid(let u):
            out.append(contentsOf: u.rfc4122Bytes)
        case .link(let l):
            for shift in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: l.classKey >> UInt32(shift))) }
            Value.appendBigEndian(UInt64(bitPattern: l.objectKey) ^ (1 << 63), to: &out)
        case .list(let elements):
            for e in elements {
                out.append(1)
                e.appendIndexKey(to: &out, caseFolded: caseFolded)
            }
            out.append(0)
        case .dictionary(let entries):
            for (key, value) in Value.sortedEntries(entries) {
                out.append(1)
                Value.appendEscaped(key.utf8, to: &out)
                value.appendIndexKey(to: &out, caseFolded: caseFolded)
            }
            out.append(0)
        }
    }

    /// The B+tree key of one index entry: `encodedValue` (an `indexKey()`) followed by the object
    /// key as 8 bytes big-endian (object keys are non-negative, so this is their order). Entries
    /// of one value are thus adjacent and ordered by object key.
    package static func indexEntryKey(_ encodedValue: [UInt8], objectKey: Int64) -> [UInt8] {
        var out = encodedValue
        out.reserveCapacity(encodedValue.count + 8)
        appendBigEndian(UInt64(bitPattern: objectKey), to: &out)
        return out
    }

    /// The object key at the end of an index entry key (its last 8 bytes), or nil when `entry` is
    /// shorter than 8 bytes.
    package static func objectKey(ofIndexEntry entry: UnsafeRawBufferPointer) -> Int64? {
        guard entry.count >= 8 else { return nil }
        var v: UInt64 = 0
        for b in entry[(entry.count - 8)...] { v = v << 8 | UInt64(b) }
        return Int64(bitPattern: v)
    }

    static func appendBigEndian(_ v: UInt64, to out: inout [UInt8]) {
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: v >> UInt64(shift))) }
    }

    /// Bytes with 0x00 escaped as 0x00 0xFF and a 0x00 0x00 terminator: an escaped 0x00 sorts
    /// above the terminator, so a proper prefix sorts first, as lexicographic order wants.
    static func appendEscaped<S: Sequence>(_ bytes: S, to out: inout [UInt8]) where S.Element == UInt8 {
        for b in bytes {
            out.append(b)
            if b == 0 { out.append(0xFF) }
        }
        out.append(0)
        out.append(0)
    }
}
