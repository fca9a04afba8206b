// ObjectId: BSON's 12-byte identifier (4-byte big-endian seconds, 5 random bytes chosen once per
// process, 3-byte big-endian counter). Held as two big-endian integers so that comparing them is
// comparing the bytes.
import Glibc
import Synchronization

/// A 12-byte BSON ObjectId, ordered by its bytes (so roughly by creation time).
public struct ObjectId: Hashable, Comparable, Sendable {
    // Bytes 0..<8 and 8..<12, big-endian: integer order is byte order.
    private let head: UInt64
    private let tail: UInt32

    /// The ObjectId of these 12 bytes, in BSON order. Throws `CoveError(.invalidArgument)` when
    /// there are not exactly 12.
    public init<C: Collection>(bytes: C) throws(CoveError) where C.Element == UInt8 {
        guard bytes.count == 12 else {
            throw CoveError(.invalidArgument, "an ObjectId is 12 bytes, got \(bytes.count)")
        }
        var h: UInt64 = 0
        var t: UInt32 = 0
        for (i, b) in bytes.enumerated() {
            if i < 8 { h = h << 8 | UInt64(b) } else { t = t << 8 | UInt32(b) }
        }
        head = h
        tail = t
    }

    /// The ObjectId written as 24 hex digits (either case). Throws `CoveError(.invalidArgument)`
    /// naming the string when it is anything else.
    public init(_ hex: String) throws(CoveError) {
        let utf8 = Array(hex.utf8)
        guard utf8.count == 24 else {
            throw CoveError(.invalidArgument, "an ObjectId is 24 hex digits, got \(JSONValue.quoted(hex))")
        }
        var h: UInt64 = 0
        var t: UInt32 = 0
        for (i, c) in utf8.enumerated() {
            let d: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = c - UInt8(ascii: "A") + 10
            default:
                throw CoveError(.invalidArgument, "an ObjectId is 24 hex digits, got \(JSONValue.quoted(hex))")
            }
            if i < 16 { h = h << 4 | UInt64(d) } else { t = t << 4 | UInt32(d) }
        }
        head = h
        tail = t
    }

    /// The 12 bytes, in BSON order.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(12)
        for i in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: head >> UInt64(i))) }
        for i in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: tail >> UInt32(i))) }
        return out
    }

    /// The seconds since 1970 in the first four bytes (the creation time of a generated id).
    public var timestampSeconds: UInt32 { UInt32(truncatingIfNeeded: head >> 32) }

    /// Byte order.
    public static func < (a: ObjectId, b: ObjectId) -> Bool {
        (a.head, a.tail) < (b.head, b.tail)
    }

    // The per-process random part and the counter that BSON appends: the counter starts at a
    // random value and wraps at 2^24.
    private static let processRandom: UInt64 = UInt64.random(in: 0..<(1 << 40))
    private static let counter = Atomic<UInt32>(UInt32.random(in: 0..<(1 << 24)))

    /// A new ObjectId as BSON makes one: the current time in seconds (big-endian), five random
    /// bytes fixed for this process, and a three-byte counter. Thread-safe; ids generated in
    /// one process within one second are distinct (up to 2^24 of them) and increase.
    public static func generate() -> ObjectId {
        let now = UInt64(UInt32(truncatingIfNeeded: time(nil)))
        let count = counter.add(1, ordering: .relaxed).oldValue & 0xFF_FFFF
        return ObjectId(head: now << 32 | processRandom >> 8, tail: UInt32(truncatingIfNeeded: processRandom & 0xFF) << 24 | count)
    }

    private init(head: UInt64, tail: UInt32) {
        self.head = head
        self.tail = tail
    }
}

extension ObjectId: CustomStringConvertible {
    /// The 24 lowercase hex digits.
    public var description: String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(24)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
