// Wakes the long-polling downloads of this instance when any instance commits to the history:
// one connection LISTENs on the history's channel (uploads NOTIFY it at commit), refreshes the
// history feed and rings. A download also looks again every second, so a notification lost with
// a connection costs a second, not a stall.
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// The bell downloads wait on.
public final class HistoryBell: Service, Sendable {
    let client: PostgresClient
    /// Refreshed before the bell rings, so that the downloads it wakes find the commit there.
    let feed: HistoryFeed
    let logger: Logger
    private let state = Mutex(State())

    private struct State {
        var rings: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        /// Waits that ended (timed out) before their continuation was registered.
        var ended: Set<UInt64> = []
        var nextId: UInt64 = 0
    }

    public init(client: PostgresClient, feed: HistoryFeed, logger: Logger) {
        self.client = client
        self.feed = feed
        self.logger = logger
    }

    /// How many times the bell has rung: a download reads it before it looks at the history, and
    /// waits only while it is unchanged.
    public var rings: UInt64 { state.withLock { $0.rings } }

    /// How many downloads are waiting now.
    public var waiting: Int { state.withLock { $0.waiters.count } }

    /// Listens until cancelled or the server shuts down, connecting again a second after a
    /// failure.
    public func run() async throws {
        try await cancelWhenGracefulShutdown { try await self.listen() }
    }

    private func listen() async throws {
        // After a failure, again in 0.1 s, then in twice as long each time, up to 2 s: at start
        // the tables may still be being made.
        var delay = Duration.milliseconds(100)
        while !Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    let notifications = try await connection.listen(SyncDatabase.historyChannel)
                    // Listening: nothing committed from now on is missed.
                    try await feed.refresh()
                    ring()
                    delay = .milliseconds(100)
                    for try await _ in notifications {
                        try await feed.refresh()
                        ring()
                    }
                }
            } catch {
                if Task.isCancelled { break }
                logger.warning("listening for history commits failed; trying again", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(2))
            }
        }
    }

    /// Wakes every waiting download.
    public func ring() {
        let woken = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.rings &+= 1
            let all = Array(s.waiters.values)
            s.waiters.removeAll()
            return all
        }
        for c in woken { c.resume() }
    }

    /// Returns when the bell rings after `seen` rings, or after `timeout`, whichever comes first
    /// (at once when it has rung since).
    public func wait(after seen: UInt64, timeout: Duration) async {
        let id = state.withLock { s -> UInt64? in
            if s.rings != seen { return nil }
            s.nextId &+= 1
            return s.nextId
        }
        guard let id else { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                    let now = self.state.withLock { s -> Bool in
                        if s.ended.remove(id) != nil || s.rings != seen { return true }
                        s.waiters[id] = c
                        return false
                    }
                    if now { c.resume() }
                }
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
            // Ends the other child: a continuation still registered is resumed; one not yet
            // registered finds its id ended.
            let pending = state.withLock { s -> CheckedContinuation<Void, Never>? in
                if let c = s.waiters.removeValue(forKey: id) { return c }
                s.ended.insert(id)
                return nil
            }
            pending?.resume()
        }
        // An id whose continuation resumed by itself may be left in `ended`: drop it.
        _ = state.withLock { $0.ended.remove(id) }
    }
}
