// Shorthands the sync tests share: clocks, object references and positions from literals whose
// validity the test vouches for, and a generator of random values of every type.
import CoveSyncCore

// Test data is valid by construction: a `try!` failing here is a broken test, not a finding.

/// A clock from parts a test knows to be valid.
func clock(_ wall: UInt64, _ counter: UInt32 = 0, _ node: UInt64) -> SyncClock {
    try! SyncClock(wall: wall, counter: counter, node: node)
}

/// An object reference from a valid class name.
func ref(_ className: String, _ key: SyncPrimaryKey) -> SyncObjectRef {
    try! SyncObjectRef(className: className, key: key)
}

/// A position from a valid key.
func position(_ key: String) -> ListPosition {
    try! ListPosition(key)
}

extension SeededRandom {
    /// A string of 0 to `maxLength` characters, some of them needing escapes in JSON.
    mutating func text(maxLength: Int = 12) -> String {
        let pieces = ["a", "b", "Z", " ", "\"", "\\", "\n", "\t", "\u{1}", "é", "e\u{301}", "日", "🐕", "/", "'", "\u{7F}"]
        return (0..<int(0...maxLength)).map { _ in pick(pieces) }.joined()
    }

    mutating func primaryKey() -> SyncPrimaryKey {
        switch below(4) {
        case 0: return .int(Int64(int(-3...3)))
        case 1: return .string(pick(["a", "b", "ç", ""]))
        case 2: return .objectId(try! SyncObjectId(bytes: (0..<12).map { _ in UInt8(below(3)) }))
        default: return .uuid(try! SyncUUID(bytes: (0..<16).map { _ in UInt8(below(2)) }))
        }
    }

    /// A value of any type, including the awkward ones (NaN, -0.0, infinities, extreme ints,
    /// empty data, negative dates).
    mutating func value() -> SyncValue {
        switch below(11) {
        case 0: return .null
        case 1: return .bool(chance(50))
        case 2: return .int(pick([0, 1, -1, Int64.max, Int64.min, Int64(int(-1000...1000))]))
        case 3: return .double(pick([0.0, -0.0, .nan, .infinity, -.infinity, 1.5, 0.1, 1e300, .leastNonzeroMagnitude, Double(int(-99...99)) / 7]))
        case 4: return .string(text())
        case 5: return .data(bytes(int(0...7)))
        case 6:
            let seconds = Int64(int(-5...5))
            let nanos = Int32(seconds < 0 ? -int(0...999_999_999) : (seconds > 0 ? int(0...999_999_999) : int(-5...5)))
            return .date(try! SyncDate(seconds: seconds, nanoseconds: nanos))
        case 7: return .objectId(try! SyncObjectId(bytes: bytes(12)))
        case 8: return .uuid(try! SyncUUID(bytes: bytes(16)))
        case 9: return .decimal128(try! SyncDecimal128(pick(["1.5", "-0", "NaN", "1e-6176", "12345678901234567890123456789012E+10"])))
        default: return .link(try! SyncObjectRef(className: pick(["Dog", "Person"]), key: primaryKey()))
        }
    }
}
