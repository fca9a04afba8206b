// Group commit of uploads: the uploads that arrive while this instance's last upload transaction
// runs go together into the next one, so that they share one flush of PostgreSQL's log (and one
// hold of the counter row, which orders every instance's uploads) instead of queueing for one
// each.
import Foundation

/// Takes uploads and writes them in batches, one transaction at a time.
public actor UploadIntegrator {
    let database: SyncDatabase
    /// Run after a transaction that added to the history commits, before its uploads are
    /// answered: the server brings its history feed up to date, so that a download on this
    /// instance sees an upload once it is answered.
    let committed: @Sendable ([SyncDatabase.HistoryRow]) async -> Void
    /// The most uploads in one transaction.
    let batchLimit: Int
    private var pending: [(SyncDatabase.UploadRequest, CheckedContinuation<Result<SyncDatabase.Upload, SyncServerError>, any Error>)] = []
    private var draining = false

    public init(database: SyncDatabase, batchLimit: Int = 256,
                committed: @escaping @Sendable ([SyncDatabase.HistoryRow]) async -> Void = { _ in }) {
        self.database = database
        self.committed = committed
        self.batchLimit = batchLimit
    }

    /// Writes `request` with the uploads around it.
    /// - Throws: its refusal (`SyncServerError`), or the database's failure.
    public func upload(_ request: SyncDatabase.UploadRequest) async throws -> SyncDatabase.Upload {
        let result = try await withCheckedThrowingContinuation { continuation in
            pending.append((request, continuation))
            if !draining {
                draining = true
                Task { await self.drain() }
            }
        }
        return try result.get()
    }

    private func drain() async {
        while !pending.isEmpty {
            let batch = Array(pending.prefix(batchLimit))
            pending.removeFirst(batch.count)
            do {
                let (results, rows) = try await database.upload(batch.map(\.0))
                // The next batch need not wait for this one's answers: the feed's update and the
                // answers go on beside it.
                let committed = committed
                Task {
                    if !rows.isEmpty { await committed(rows) }
                    for (item, result) in zip(batch, results) { item.1.resume(returning: result) }
                }
            } catch {
                for item in batch { item.1.resume(throwing: error) }
            }
        }
        draining = false
    }
}
