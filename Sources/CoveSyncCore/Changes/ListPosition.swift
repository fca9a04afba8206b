// Where an element stands in a synced list: a fractional index, a string of base-62 digits read
// as a fraction in [0, 1) that sorts byte by byte. A new key can always be made between two others,
// so inserting or moving never renumbers other elements, and each key ends with the id of the node
// that made it, so two nodes inserting at the same place make different keys.

/// A list element's position: a key that sorts (by bytes) between its neighbours' keys.
///
/// Keys are digits `0-9A-Za-z` (in that order, which is also their byte order), never end in `0`
/// (so there is always room before a key), and are at most `ListPosition.maxLength` characters.
/// Elements order by position, then by element id, so equal keys (which only a faulty node makes)
/// still order the same way everywhere.
public struct ListPosition: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The key.
    public let key: String

    /// The longest key. Inserting at one end lengthens keys by about one character every 60
    /// inserts, and between two neighbours by about one character every 6 nested inserts.
    public static let maxLength = 1024

    private static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
    private static let base = 62
    /// The node id's base-62 digits: 62^11 > 2^64.
    private static let nodeDigits = 11

    /// A position from its key.
    ///
    /// - Throws: `SyncError(.invalidValue)` when the key is empty, too long, ends in `0` or holds a
    ///   character outside `0-9A-Za-z`.
    public init(_ key: String) throws(SyncError) {
        let bytes = Array(key.utf8)
        guard !bytes.isEmpty, bytes.count <= Self.maxLength, bytes.allSatisfy({ Self.digit($0) != nil }),
              bytes.last != UInt8(ascii: "0") else {
            throw SyncError(.invalidValue, "invalid list position '\(key.prefix(80))': expected 1 to \(Self.maxLength) characters of 0-9A-Za-z, not ending in '0'")
        }
        self.key = key
    }

    private init(digits: [Int]) {
        key = String(decoding: digits.map { Self.alphabet[$0] }, as: UTF8.self)
    }

    /// Compares keys by bytes.
    public static func < (a: ListPosition, b: ListPosition) -> Bool {
        a.key.utf8.lexicographicallyPrecedes(b.key.utf8)
    }

    public var description: String { key }

    /// A new position after `before` and before `after` (either nil for the list's end), made by
    /// `node`. The same neighbours and node always give the same key; two nodes give different
    /// keys, ordered by their ids, so concurrent inserts at one place both keep a place of their
    /// own that later inserts can go between.
    ///
    /// - Throws: `SyncError(.invalidValue)` when `before` is not before `after`, or the key would
    ///   be longer than `maxLength`.
    public static func between(_ before: ListPosition?, _ after: ListPosition?, node: UInt64) throws(SyncError) -> ListPosition {
        if let before, let after, !(before < after) {
            throw SyncError(.invalidValue, "list position '\(before)' is not before '\(after)'")
        }
        let a = before.map(digits) ?? []
        var result: [Int]
        switch (before, after) {
        case (_, nil):
            result = increment(a)
        case (nil, let after?):
            result = try decrement(digits(after))
        case (_, let after?):
            result = try midpoint(a, digits(after))
        }
        // The node's digits, and a final 1 so that the key never ends in 0. Every node's suffix
        // has the same length, so two keys made from different neighbours never coincide either.
        var n = node
        var suffix = [Int](repeating: 0, count: nodeDigits)
        for i in stride(from: nodeDigits - 1, through: 0, by: -1) {
            suffix[i] = Int(n % UInt64(base))
            n /= UInt64(base)
        }
        result += suffix + [1]
        guard result.count <= maxLength else {
            throw SyncError(.invalidValue, "a list position between '\(before?.key ?? "")' and '\(after?.key ?? "")' would be longer than \(maxLength) characters")
        }
        return ListPosition(digits: result)
    }

    // The three constructions below keep two properties that make the suffix safe to append: the
    // result is above `a` without being a prefix of it, and below `b` by a smaller digit at some
    // position within its own length (so no suffix brings it level with `b`).

    /// A key after `a` with nothing required after it: the first digit below the top one goes up
    /// by one (62 appends per character of growth rather than halving the gap each time).
    private static func increment(_ a: [Int]) -> [Int] {
        guard let i = a.firstIndex(where: { $0 < base - 1 }) else { return a + [base / 2] }
        return Array(a[..<i]) + [a[i] + 1]
    }

    /// A key before `b` and after the empty key: the first digit goes down by one when it is 2
    /// or more; a first digit of 1 becomes `0z`, and a leading 0 is kept while the rest goes down
    /// (again 62 prepends per character).
    private static func decrement(_ b: [Int]) throws(SyncError) -> [Int] {
        var out: [Int] = []
        for d in b {
            if d >= 2 { return out + [d - 1] }
            if d == 1 { return out + [0, base - 1] }
            out.append(0)
        }
        throw SyncError(.invalidValue, "no list position fits before a key of zeros")
    }

    /// A key between `a` and `b` (a < b, both read as fractions padded with zeros).
    private static func midpoint(_ a: [Int], _ b: [Int]) throws(SyncError) -> [Int] {
        var out: [Int] = []
        var i = 0
        // b never ends in 0, so a < b diverge within b's length.
        while i < b.count {
            let da = i < a.count ? a[i] : 0
            let db = b[i]
            if da == db {
                out.append(da)
                i += 1
                continue
            }
            if db - da > 1 { return out + [(da + db) / 2] }
            // Adjacent digits: keep a's and go above the rest of a, with no bound above.
            return out + [da] + increment(i + 1 < a.count ? Array(a[(i + 1)...]) : [])
        }
        throw SyncError(.invalidValue, "no list position fits between keys that are not in order")
    }

    private static func digits(_ p: ListPosition) -> [Int] {
        p.key.utf8.map { digit($0) ?? 0 }
    }

    private static func digit(_ c: UInt8) -> Int? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return Int(c - UInt8(ascii: "0"))
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return Int(c - UInt8(ascii: "A")) + 10
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return Int(c - UInt8(ascii: "a")) + 36
        default: return nil
        }
    }
}
