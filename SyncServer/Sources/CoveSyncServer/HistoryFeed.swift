// The newest part of the history, kept in this instance's memory, so that a commit costs one
// query however many downloads wait for it: the bell refreshes the feed when it hears a commit,
// then wakes the downloads, which take their batches from here. A download whose cursor is older
// than what the feed holds reads the database.
import Foundation

/// The history's newest changesets, in order, and up to which version they go.
public actor HistoryFeed {
    let database: SyncDatabase
    /// The changesets after `floor`, up to `known`, in order (versions are gap-free).
    private var entries: [SyncDatabase.HistoryRow] = []
    /// The versions the feed covers: `floor` < v <= `known`. Both -1 before the first refresh.
    private var floor: Int64 = -1
    private var known: Int64 = -1
    private var refreshing: Task<Void, any Error>?
    /// The most changesets kept; the oldest go first.
    let capacity: Int

    public init(database: SyncDatabase, capacity: Int = 20_000) {
        self.database = database
        self.capacity = capacity
    }

    /// Reads what was committed since the last refresh. Concurrent callers share one query.
    public func refresh() async throws {
        if let running = refreshing {
            try await running.value
            return
        }
        let task = Task { try await self.load() }
        refreshing = task
        defer { refreshing = nil }
        try await task.value
    }

    private func load() async throws {
        if known < 0 {
            // The feed starts at the present: older cursors read the database.
            known = try await database.latestVersion()
            floor = known
            return
        }
        while true {
            let rows = try await database.rows(after: known, limit: 5_000)
            guard !rows.isEmpty else { return }
            take(rows)
            if rows.count < 5_000 { return }
        }
    }

    /// Takes in rows this instance just committed: appended when they follow on from what the
    /// feed holds (no query), read with the rest otherwise (another instance's commits came
    /// between, or the feed has not started).
    public func append(_ rows: [SyncDatabase.HistoryRow]) async throws {
        guard let first = rows.first, let last = rows.last, last.version > known else { return }
        guard known >= 0, first.version == known + 1, refreshing == nil else {
            // A refresh already running may have begun before these rows committed.
            for _ in 0..<3 where known < last.version { try await refresh() }
            return
        }
        take(rows)
    }

    /// Adds rows that follow on from `known`, dropping the oldest beyond `capacity`.
    private func take(_ rows: [SyncDatabase.HistoryRow]) {
        entries += rows
        known = rows.last?.version ?? known
        if entries.count > capacity {
            let drop = entries.count - capacity
            floor = entries[drop - 1].version
            entries.removeFirst(drop)
        }
    }

    /// The newest server version the feed has read, nil before its first refresh.
    public var latest: Int64? { known >= 0 ? known : nil }

    /// The batch after `after` for `clientFileId` from memory, or nil when the feed does not
    /// cover `after` (an older cursor, or one newer than the feed has heard of).
    func batch(for clientFileId: UUID, after: Int64, limit: Int) -> SyncDatabase.Batch? {
        guard known >= 0, after >= floor, after <= known else { return nil }
        let start = Int(after - floor)
        return SyncDatabase.Batch(of: entries[start...], for: clientFileId, after: after, limit: limit)
    }
}
