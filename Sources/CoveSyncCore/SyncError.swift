// The one error type of the sync core. Every function that reads input from outside (a clock from
// a peer, a line of changesets, a subscription query) throws it with a message that names the
// problem and where it is, so that a server can send the message back as it is.

/// An error of the sync core: what kind of problem it is, and a message for people.
public struct SyncError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kinds of problem, for code that reacts to them.
    public enum Code: String, Hashable, Sendable {
        /// A clock that cannot be represented: a wall time past the year 10889, a counter that
        /// ran out at the last millisecond, or a clock whose text or bytes are malformed.
        case invalidClock
        /// A clock from a peer further ahead of the local wall clock than the allowed drift.
        case clockDrift
        /// A value, object reference or list position that breaks the change model's rules.
        case invalidValue
        /// A changeset whose operations break the model's rules (clocks out of order, another
        /// client's clock).
        case invalidChangeset
        /// Text that is not a well-formed line of changesets: the message names the line and
        /// the field.
        case malformedEncoding
        /// A subscription query that does not parse.
        case querySyntax
        /// A subscription query that uses something subscriptions do not allow (SORT, aggregates,
        /// key paths through links, ...).
        case queryNotAllowed
        /// A subscription query that parses but does not fit the schema or its arguments.
        case queryInvalid
    }

    /// What kind of problem it is.
    public let code: Code
    /// What went wrong and where, in words.
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
