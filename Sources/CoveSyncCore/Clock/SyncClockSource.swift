// The hybrid logical clock of one node: readings that follow the wall clock where they can and
// never go backwards, and that stay after every reading received from another node, so a change
// made after seeing another always has the later clock.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A node's hybrid logical clock (Kulkarni et al., 2014), safe to share between threads.
///
/// `now(wall:)` stamps a local change; `receive(_:wall:)` takes in a clock seen on a change from
/// elsewhere. The wall time is passed in, so that tests (and a server that reads the time once per
/// request) decide it; `SyncClockSource.systemWall()` reads the system's.
public final class SyncClockSource: Sendable {
    /// This node's id: the last part of every clock it makes.
    public let node: UInt64
    /// How far ahead of the local wall clock a received clock may be, in milliseconds.
    public let maxDrift: UInt64
    private let last: Mutex<SyncClock>

    /// The default allowed drift: five minutes, more than a phone's clock is usually off, far
    /// less than would let one bad clock drag every node's clocks into the future.
    public static let defaultMaxDrift: UInt64 = 5 * 60 * 1000

    /// A clock for `node` that has made no reading yet, or that goes on after `last` (a clock read
    /// back from storage, so that a restarted node never repeats one).
    public init(node: UInt64, maxDrift: UInt64 = SyncClockSource.defaultMaxDrift, after last: SyncClock = .zero) {
        self.node = node
        self.maxDrift = maxDrift
        self.last = Mutex(last)
    }

    /// The latest reading made or received.
    public var latest: SyncClock {
        last.withLock { $0 }
    }

    /// A reading for a local change: after every earlier reading, and at `wall` when the wall
    /// clock is ahead of them.
    ///
    /// - Parameter wall: the wall clock, in milliseconds since 1970 UTC. It may step back; the
    ///   reading then keeps the earlier wall time and counts up.
    /// - Throws: `SyncError(.invalidClock)` when `wall` is past `SyncClock.maxWall`, or the clock
    ///   ran out of counter values at the last representable millisecond.
    public func now(wall: UInt64) throws(SyncError) -> SyncClock {
        guard wall <= SyncClock.maxWall else {
            throw SyncError(.invalidClock, "wall time \(wall) ms is past the latest a clock can hold (\(SyncClock.maxWall))")
        }
        return try last.withLock { (last: inout SyncClock) throws(SyncError) -> SyncClock in
            let next: SyncClock
            if wall > last.wall {
                next = SyncClock(uncheckedWall: wall, counter: 0, node: node)
            } else {
                next = try Self.tick(wall: last.wall, counter: last.counter, node: node)
            }
            last = next
            return next
        }
    }

    /// Takes in a clock seen on a change from another node, so that the next reading comes after
    /// it, and returns the reading for the receipt.
    ///
    /// - Parameters:
    ///   - remote: the other node's clock.
    ///   - wall: the local wall clock, in milliseconds since 1970 UTC.
    /// - Throws: `SyncError(.clockDrift)` when `remote` is more than `maxDrift` milliseconds ahead
    ///   of `wall` (nothing changes then); `SyncError(.invalidClock)` as `now(wall:)` does.
    @discardableResult
    public func receive(_ remote: SyncClock, wall: UInt64) throws(SyncError) -> SyncClock {
        guard wall <= SyncClock.maxWall else {
            throw SyncError(.invalidClock, "wall time \(wall) ms is past the latest a clock can hold (\(SyncClock.maxWall))")
        }
        if remote.wall > wall, remote.wall - wall > maxDrift {
            throw SyncError(.clockDrift, "clock \(remote) of node \(remote.node) is \(remote.wall - wall) ms ahead of the local wall clock; at most \(maxDrift) ms is allowed")
        }
        return try last.withLock { (last: inout SyncClock) throws(SyncError) -> SyncClock in
            let top = max(wall, last.wall, remote.wall)
            let next: SyncClock
            switch (top == last.wall, top == remote.wall) {
            case (true, true): next = try Self.tick(wall: top, counter: max(last.counter, remote.counter), node: node)
            case (true, false): next = try Self.tick(wall: top, counter: last.counter, node: node)
            case (false, true): next = try Self.tick(wall: top, counter: remote.counter, node: node)
            case (false, false): next = SyncClock(uncheckedWall: top, counter: 0, node: node)
            }
            last = next
            return next
        }
    }

    /// The reading after (`wall`, `counter`): the next counter value, or the next millisecond
    /// when the counter is used up. A counter of 32 bits is used up only by four billion changes
    /// in one millisecond, so the wall time this moves ahead stays negligible.
    private static func tick(wall: UInt64, counter: UInt32, node: UInt64) throws(SyncError) -> SyncClock {
        if counter < UInt32.max {
            return SyncClock(uncheckedWall: wall, counter: counter + 1, node: node)
        }
        guard wall < SyncClock.maxWall else {
            throw SyncError(.invalidClock, "the clock ran out of counter values at the latest wall time it can hold")
        }
        return SyncClock(uncheckedWall: wall + 1, counter: 0, node: node)
    }

    /// The system's wall clock in milliseconds since 1970 UTC (0 if it reads before 1970).
    public static func systemWall() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        guard ts.tv_sec >= 0 else { return 0 }
        return UInt64(ts.tv_sec) &* 1000 &+ UInt64(ts.tv_nsec / 1_000_000)
    }
}
