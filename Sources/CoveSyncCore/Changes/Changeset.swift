// A changeset: the operations of one local commit of one client, what a client uploads and a
// server hands on. Its checks make every operation's clock unique, which the merge rules rely on
// (a list element's id is its insert's clock).

/// The operations of one commit by one client.
public struct Changeset: Hashable, Sendable {
    /// The client (or server) that made the changes; every clock in the changeset is this node's.
    public let clientId: UInt64
    /// The client's count of its changesets: 1 for its first, one more for each after. A server
    /// recognises a retried upload by it.
    public let clientVersion: UInt64
    /// The commit's clock: at or after every operation's.
    public let clock: SyncClock
    /// The operations, in the order they were made.
    public let operations: [SyncOperation]

    /// - Throws: `SyncError(.invalidChangeset)` when a clock is another node's, the operations'
    ///   clocks do not strictly increase, or the commit's clock is before the last operation's.
    public init(clientId: UInt64, clientVersion: UInt64, clock: SyncClock, operations: [SyncOperation]) throws(SyncError) {
        guard clock.node == clientId else {
            throw SyncError(.invalidChangeset, "changeset clock \(clock) is of node \(clock.node), not of client \(clientId)")
        }
        var previous: SyncClock? = nil
        for (i, op) in operations.enumerated() {
            guard op.clock.node == clientId else {
                throw SyncError(.invalidChangeset, "operation \(i) has clock \(op.clock) of node \(op.clock.node), not of client \(clientId)")
            }
            if let previous, !(previous < op.clock) {
                throw SyncError(.invalidChangeset, "operation \(i) has clock \(op.clock), not after the clock \(previous) of the operation before")
            }
            previous = op.clock
        }
        if let previous, clock < previous {
            throw SyncError(.invalidChangeset, "changeset clock \(clock) is before its last operation's clock \(previous)")
        }
        self.clientId = clientId
        self.clientVersion = clientVersion
        self.clock = clock
        self.operations = operations
    }
}

/// Collects a client's operations with fresh clocks and seals them into a changeset.
///
/// ```swift
/// var builder = ChangesetBuilder(clock: source, version: 12)
/// let dog = try SyncObjectRef(className: "Dog", key: .string("rex"))
/// try builder.append(dog, .create(values: ["age": .int(3)]), wall: now)
/// let element = try builder.append(dog, .listInsert(property: "toys", position: p, value: .string("ball")), wall: now)
/// let changeset = try builder.finish(wall: now)
/// ```
public struct ChangesetBuilder: Sendable {
    /// The client's clock; its node is the changeset's client id.
    public let source: SyncClockSource
    /// The version the changeset will carry.
    public let version: UInt64
    /// The operations so far.
    public private(set) var operations: [SyncOperation] = []

    public init(clock source: SyncClockSource, version: UInt64) {
        self.source = source
        self.version = version
    }

    /// Adds an operation stamped with a new reading of the clock, and returns that clock (for a
    /// list insert, the new element's id).
    ///
    /// - Throws: what `SyncClockSource.now(wall:)` and `SyncOperation.init` throw.
    @discardableResult
    public mutating func append(_ object: SyncObjectRef, _ change: SyncOperation.Change, wall: UInt64) throws(SyncError) -> SyncClock {
        let clock = try source.now(wall: wall)
        operations.append(try SyncOperation(clock: clock, object: object, change: change))
        return clock
    }

    /// The changeset of the operations so far, with a commit clock after them.
    ///
    /// - Throws: what `SyncClockSource.now(wall:)` throws.
    public func finish(wall: UInt64) throws(SyncError) -> Changeset {
        try Changeset(clientId: source.node, clientVersion: version, clock: try source.now(wall: wall), operations: operations)
    }
}
