// The value types that SyncValue carries besides the standard library's: dates, ObjectIds, UUIDs,
// decimals as text, and the names of classes and properties. Each checks its input when it is
// made, so a value that exists is a valid one.

/// A point in time: seconds and nanoseconds since 1970 UTC, as Cove stores dates.
public struct SyncDate: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Whole seconds since 1970 UTC.
    public let seconds: Int64
    /// Nanoseconds, within ±999,999,999 and of the same sign as `seconds` (or either sign when
    /// `seconds` is 0).
    public let nanoseconds: Int32

    /// - Throws: `SyncError(.invalidValue)` when the nanoseconds are out of range or of the other
    ///   sign than the seconds.
    public init(seconds: Int64, nanoseconds: Int32) throws(SyncError) {
        guard nanoseconds > -1_000_000_000, nanoseconds < 1_000_000_000 else {
            throw SyncError(.invalidValue, "date nanoseconds \(nanoseconds) are not within ±999999999")
        }
        guard !(seconds > 0 && nanoseconds < 0), !(seconds < 0 && nanoseconds > 0) else {
            throw SyncError(.invalidValue, "date seconds \(seconds) and nanoseconds \(nanoseconds) have different signs")
        }
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    public static func < (a: SyncDate, b: SyncDate) -> Bool {
        (a.seconds, a.nanoseconds) < (b.seconds, b.nanoseconds)
    }

    /// `T<seconds>:<nanoseconds>`, the query language's form.
    public var description: String { "T\(seconds):\(nanoseconds)" }
}

/// A MongoDB-style ObjectId: 12 bytes.
public struct SyncObjectId: Hashable, Comparable, Sendable, CustomStringConvertible {
    // The 12 bytes as 8 and 4, big-endian, so that comparing the parts compares the bytes.
    private let high: UInt64
    private let low: UInt32

    /// An ObjectId from its 12 bytes.
    ///
    /// - Throws: `SyncError(.invalidValue)` when there are not exactly 12.
    public init<C: Collection>(bytes: C) throws(SyncError) where C.Element == UInt8 {
        guard bytes.count == 12 else { throw SyncError(.invalidValue, "an ObjectId is 12 bytes, got \(bytes.count)") }
        high = BigEndian.number(bytes.prefix(8))
        low = UInt32(truncatingIfNeeded: BigEndian.number(bytes.dropFirst(8)))
    }

    /// An ObjectId from its 24 hex digits (either case).
    ///
    /// - Throws: `SyncError(.invalidValue)` naming the text when it is not 24 hex digits.
    public init(hex: String) throws(SyncError) {
        let text = Array(hex.utf8)
        guard text.count == 24, let high = Hex.number(text[0..<16]), let low = Hex.number(text[16..<24]) else {
            throw SyncError(.invalidValue, "invalid ObjectId '\(hex.prefix(40))': expected 24 hex digits")
        }
        self.high = high
        self.low = UInt32(truncatingIfNeeded: low)
    }

    /// The 12 bytes.
    public var bytes: [UInt8] {
        BigEndian.bytes(high, count: 8) + BigEndian.bytes(UInt64(low), count: 4)
    }

    /// The 24 lowercase hex digits.
    public var hex: String { Hex.digits(high, width: 16) + Hex.digits(UInt64(low), width: 8) }

    public var description: String { "oid(\(hex))" }

    public static func < (a: SyncObjectId, b: SyncObjectId) -> Bool {
        (a.high, a.low) < (b.high, b.low)
    }
}

/// A UUID: 16 bytes.
public struct SyncUUID: Hashable, Comparable, Sendable, CustomStringConvertible {
    let high: UInt64
    private let low: UInt64

    /// A UUID from its 16 bytes.
    ///
    /// - Throws: `SyncError(.invalidValue)` when there are not exactly 16.
    public init<C: Collection>(bytes: C) throws(SyncError) where C.Element == UInt8 {
        guard bytes.count == 16 else { throw SyncError(.invalidValue, "a UUID is 16 bytes, got \(bytes.count)") }
        high = BigEndian.number(bytes.prefix(8))
        low = BigEndian.number(bytes.dropFirst(8))
    }

    /// A UUID from its canonical text, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (either case).
    ///
    /// - Throws: `SyncError(.invalidValue)` naming the text when it is not of that form.
    public init(text: String) throws(SyncError) {
        let t = Array(text.utf8)
        guard t.count == 36, t[8] == UInt8(ascii: "-"), t[13] == UInt8(ascii: "-"), t[18] == UInt8(ascii: "-"),
              t[23] == UInt8(ascii: "-"),
              let a = Hex.number(t[0..<8]), let b = Hex.number(t[9..<13]), let c = Hex.number(t[14..<18]),
              let d = Hex.number(t[19..<23]), let e = Hex.number(t[24..<36]) else {
            throw SyncError(.invalidValue, "invalid UUID '\(text.prefix(40))': expected xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx")
        }
        high = a << 32 | b << 16 | c
        low = d << 48 | e
    }

    /// The 16 bytes.
    public var bytes: [UInt8] {
        BigEndian.bytes(high, count: 8) + BigEndian.bytes(low, count: 8)
    }

    /// The canonical lowercase text.
    public var text: String {
        let h = Hex.digits(high, width: 16), l = Hex.digits(low, width: 16)
        return "\(h.prefix(8))-\(h.dropFirst(8).prefix(4))-\(h.suffix(4))-\(l.prefix(4))-\(l.dropFirst(4))"
    }

    public var description: String { "uuid(\(text))" }

    public static func < (a: SyncUUID, b: SyncUUID) -> Bool {
        (a.high, a.low) < (b.high, b.low)
    }
}

/// A decimal128 value, carried as its text: sync moves it without doing arithmetic, so the text
/// is checked for form only and two texts of one number ("1.0" and "1.00") are different values.
public struct SyncDecimal128: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The decimal's text: `[+-]digits[.digits][e[+-]digits]` (or `.digits`), `NaN`, `Inf` or
    /// `-Inf`.
    public let text: String

    /// The longest text accepted: 34 digits, a sign, a point and an exponent fit well within it.
    public static let maxLength = 64

    /// - Throws: `SyncError(.invalidValue)` naming the text when it is not a decimal number.
    public init(_ text: String) throws(SyncError) {
        guard Self.isDecimal(Array(text.utf8)) else {
            throw SyncError(.invalidValue, "invalid decimal128 '\(text.prefix(Self.maxLength))': expected digits with an optional sign, point and exponent, NaN, Inf or -Inf")
        }
        self.text = text
    }

    private static func isDecimal(_ t: [UInt8]) -> Bool {
        guard !t.isEmpty, t.count <= maxLength else { return false }
        if ["NaN", "Inf", "+Inf", "-Inf"].contains(String(decoding: t, as: UTF8.self)) { return true }
        func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
        var i = 0
        if t[i] == UInt8(ascii: "+") || t[i] == UInt8(ascii: "-") { i += 1 }
        var digits = 0
        while i < t.count, isDigit(t[i]) { i += 1; digits += 1 }
        if i < t.count, t[i] == UInt8(ascii: ".") {
            i += 1
            while i < t.count, isDigit(t[i]) { i += 1; digits += 1 }
        }
        guard digits > 0 else { return false }
        if i < t.count, t[i] == UInt8(ascii: "e") || t[i] == UInt8(ascii: "E") {
            i += 1
            if i < t.count, t[i] == UInt8(ascii: "+") || t[i] == UInt8(ascii: "-") { i += 1 }
            let start = i
            while i < t.count, isDigit(t[i]) { i += 1 }
            guard i > start else { return false }
        }
        return i == t.count
    }

    public static func < (a: SyncDecimal128, b: SyncDecimal128) -> Bool {
        a.text.utf8.lexicographicallyPrecedes(b.text.utf8)
    }

    public var description: String { text }
}

/// The rule for class and property names, as Cove's schema has it: an ASCII letter or `_`, then
/// letters, digits or `_`, at most 63 bytes.
public enum SyncName {
    /// The longest name.
    public static let maxLength = 63

    /// True when `name` is a valid class or property name.
    public static func isValid(_ name: String) -> Bool {
        let bytes = name.utf8
        guard let first = bytes.first, bytes.count <= maxLength else { return false }
        func isLetter(_ c: UInt8) -> Bool {
            (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z")) || c == UInt8(ascii: "_")
        }
        return isLetter(first) && bytes.allSatisfy { isLetter($0) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) }
    }

    /// Throws unless `name` is valid; `what` says what the name is of ("class", "property").
    static func check(_ name: String, _ what: String) throws(SyncError) {
        guard isValid(name) else {
            throw SyncError(.invalidValue, "invalid \(what) name '\(name.prefix(80))': expected an ASCII letter or '_', then letters, digits or '_', at most \(maxLength) bytes")
        }
    }
}
