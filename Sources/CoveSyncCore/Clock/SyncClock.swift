// A hybrid logical clock's reading: wall milliseconds, a logical counter and the node that made
// it. Readings are totally ordered, so "the latest write wins" always names one write; their text
// and byte forms sort the same way as the readings, so a database can order them as plain text
// or bytes.

/// One reading of a hybrid logical clock: a point in time that orders every change of every
/// client.
///
/// Readings compare by wall time, then counter, then node. Two nodes never share an id and one
/// node never hands out a reading twice, so no two changes anywhere carry the same clock.
public struct SyncClock: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Milliseconds since 1970 UTC, as the node's wall clock saw it (or a later reading it had
    /// received). At most `SyncClock.maxWall`.
    public let wall: UInt64
    /// Orders readings within one millisecond.
    public let counter: UInt32
    /// The node (client or server) that made the reading: the final tie-break.
    public let node: UInt64

    /// The latest wall time a clock can hold: 2^48 - 1 milliseconds, in the year 10889. The text
    /// and byte forms give the wall 48 bits.
    public static let maxWall: UInt64 = (1 << 48) - 1

    /// The reading before every other: wall 0, counter 0, node 0.
    public static let zero = SyncClock(uncheckedWall: 0, counter: 0, node: 0)

    /// A reading from its parts.
    ///
    /// - Throws: `SyncError(.invalidClock)` when `wall` is past `SyncClock.maxWall`.
    public init(wall: UInt64, counter: UInt32, node: UInt64) throws(SyncError) {
        guard wall <= Self.maxWall else {
            throw SyncError(.invalidClock, "wall time \(wall) ms is past the latest a clock can hold (\(Self.maxWall))")
        }
        self.init(uncheckedWall: wall, counter: counter, node: node)
    }

    /// For callers that have checked `wall` already.
    init(uncheckedWall wall: UInt64, counter: UInt32, node: UInt64) {
        self.wall = wall
        self.counter = counter
        self.node = node
    }

    public static func < (a: SyncClock, b: SyncClock) -> Bool {
        (a.wall, a.counter, a.node) < (b.wall, b.counter, b.node)
    }

    // MARK: Text

    /// The number of characters of the text form.
    public static let textLength = 38

    /// The text form: `wwwwwwwwwwww-cccccccc-nnnnnnnnnnnnnnnn`, the wall (12), counter (8) and
    /// node (16) in lowercase hex. Fixed width, so texts sort as the clocks do.
    public var text: String {
        Hex.digits(wall, width: 12) + "-" + Hex.digits(UInt64(counter), width: 8) + "-" + Hex.digits(node, width: 16)
    }

    public var description: String { text }

    /// Reads the text form (hex digits in either case).
    ///
    /// - Throws: `SyncError(.invalidClock)` naming the text when it is not of that form.
    public init(text: String) throws(SyncError) {
        let bytes = Array(text.utf8)
        guard bytes.count == Self.textLength, bytes[12] == UInt8(ascii: "-"), bytes[21] == UInt8(ascii: "-"),
              let wall = Hex.number(bytes[0..<12]), let counter = Hex.number(bytes[13..<21]),
              let node = Hex.number(bytes[22..<38]) else {
            throw SyncError(.invalidClock, "invalid clock \(Self.shown(text)): expected 12, 8 and 16 hex digits joined by '-'")
        }
        // 12 hex digits are 48 bits and 8 are 32: both fit.
        self.init(uncheckedWall: wall, counter: UInt32(truncatingIfNeeded: counter), node: node)
    }

    /// `text` quoted for a message, cut after 60 characters.
    private static func shown(_ text: String) -> String {
        let scalars = text.unicodeScalars
        return scalars.count <= 60 ? "'\(text)'" : "'\(String(String.UnicodeScalarView(scalars.prefix(60))))…'"
    }

    // MARK: Bytes

    /// The number of bytes of the binary form.
    public static let byteCount = 18

    /// The binary form: the wall (6 bytes), counter (4) and node (8), big-endian, so that the
    /// bytes compare (memcmp) as the clocks do.
    public var bytes: [UInt8] {
        BigEndian.bytes(wall, count: 6) + BigEndian.bytes(UInt64(counter), count: 4) + BigEndian.bytes(node, count: 8)
    }

    /// Reads the binary form.
    ///
    /// - Throws: `SyncError(.invalidClock)` when `bytes` is not exactly 18 bytes long.
    public init<C: Collection>(bytes: C) throws(SyncError) where C.Element == UInt8 {
        guard bytes.count == Self.byteCount else {
            throw SyncError(.invalidClock, "a clock is \(Self.byteCount) bytes, got \(bytes.count)")
        }
        let all = Array(bytes)
        self.init(uncheckedWall: BigEndian.number(all[0..<6]), counter: UInt32(truncatingIfNeeded: BigEndian.number(all[6..<10])),
                  node: BigEndian.number(all[10..<18]))
    }
}
