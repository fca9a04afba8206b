// A realm's side of sync: starting it in a file, the session it shares with the file's other
// realms, and the transactions the session runs through realms of its own.
import CoveCore
import CoveStorage
import CoveSyncCore
import FoundationEssentials

extension Realm {
    /// The file's sync session, nil for a realm that does not sync (as Realm's `syncSession`).
    public var syncSession: SyncSession? { session }

    /// At open, for a configuration with `syncConfiguration`: checks that the schema can sync,
    /// starts sync in a file that has never synced (a new client file id, and every object it
    /// holds queued for upload), then joins the file's session.
    func setUpSync() throws(CoveError) {
        guard let sync = configuration.syncConfiguration else { return }
        try sync.check()
        if configuration.inMemory || configuration.readOnly {
            throw CoveError(.invalidArgument, "a synced realm needs a file it can write: not in memory, not read-only")
        }
        try ObjectStore.checkSyncable(schema)
        var record = try syncRecordIfAny()
        if record == nil {
            try beginWrite()
            do throws(CoveError) {
                let store = try objectStore()
                if let existing = try store.syncRecord() {
                    record = existing
                } else {
                    try store.startSync(clientFileId: try Self.newClientFileId(), wall: SyncClockSource.systemWall())
                    record = try store.syncRecord()
                }
                try commitWrite()
            } catch {
                if isInWriteTransaction { try? cancelWrite() }
                throw error
            }
        }
        guard configuration.opensSyncSession, let record, let path = configuration.path else { return }
        session = try SyncSessions.acquire(path: path, configuration: configuration, sync: sync, record: record)
    }

    /// A client reset of this file (its session found it cannot go on under its id): a new
    /// client file id, downloads from `cursor`, and what was not uploaded queued again
    /// (`recover`) or dropped with the synced objects. Returns the new record.
    func resetSync(cursor: UInt64, recover: Bool) throws(CoveError) -> SyncFileRecord {
        applyingDownload = true
        defer { applyingDownload = false }
        try inSyncWrite { store throws(CoveError) in
            _ = try store.syncReset(clientFileId: Self.newClientFileId(), cursor: cursor, recover: recover, wall: SyncClockSource.systemWall())
        }
        return try syncRecord()
    }

    /// A random client file id (a version 4 UUID).
    static func newClientFileId() throws(CoveError) -> SyncUUID {
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<16 { bytes[i] = UInt8.random(in: 0...255) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        do { return try SyncUUID(bytes: bytes) } catch { throw CoveError(.internal, error.message) }
    }

    private func syncRecordIfAny() throws(CoveError) -> SyncFileRecord? {
        try objectStore().syncRecord()
    }

    /// Where a synced file stands, as the file itself records it (whether or not this realm
    /// syncs): nil for a file that has never synced.
    public func syncFileStatus() throws(CoveError) -> SyncFileStatus? {
        guard let record = try syncRecordIfAny() else { return nil }
        let subscriptions = try objectStore().syncSubscriptions()
        return SyncFileStatus(clientFileId: record.clientFileId.text, localVersion: record.localVersion,
                              uploadedVersion: record.uploadedVersion, downloadedVersion: record.downloadCursor,
                              subscriptionVersion: subscriptions.version,
                              subscriptionState: SyncSubscriptionSet.state(of: subscriptions, version: subscriptions.version),
                              subscriptions: subscriptions.entries.map(SyncSubscription.init))
    }

    /// The changesets the file holds for upload (the oldest first, at most `limit`), each as its
    /// JSON line (docs/SYNC.md, "The JSON-lines encoding"); empty for a file that has never
    /// synced.
    public func pendingSyncUploads(limit: Int = 100) throws(CoveError) -> [String] {
        guard let record = try syncRecordIfAny(), limit > 0 else { return [] }
        return try objectStore().syncQueued(after: record.uploadedVersion, limit: limit, maxBytes: .max).map {
            String(decoding: $0.line, as: UTF8.self)
        }
    }

    /// The file's sync record.
    func syncRecord() throws(CoveError) -> SyncFileRecord {
        guard let record = try objectStore().syncRecord() else { throw CoveError(.sync, "the file is not synced") }
        return record
    }

    /// The sync record and the queued changesets after the server's.
    func readSyncQueue(limit: Int, maxBytes: Int) throws(CoveError) -> (SyncFileRecord, [(version: UInt64, line: [UInt8])]) {
        let record = try syncRecord()
        return (record, try objectStore().syncQueued(after: record.uploadedVersion, limit: limit, maxBytes: maxBytes))
    }

    /// The queued changesets after local version `after`.
    func readSyncQueue(limit: Int, maxBytes: Int, after: UInt64) throws(CoveError) -> [(version: UInt64, line: [UInt8])] {
        try objectStore().syncQueued(after: after, limit: limit, maxBytes: maxBytes)
    }

    /// Records that the server holds the local changesets up to `version`.
    func acknowledgeUploads(upTo version: UInt64) throws(CoveError) {
        let record = try syncRecord()
        if version <= record.uploadedVersion { return }
        try inSyncWrite { store throws(CoveError) in try store.syncAcknowledge(upTo: version) }
    }

    /// The most operations one write transaction of a download applies, so that readers and
    /// notifications keep flowing while a large download arrives.
    static let operationsPerDownloadTransaction = 10_000

    /// Applies downloaded changesets in write transactions of at most
    /// `operationsPerDownloadTransaction` operations (a changeset is never split), the last of
    /// them recording `cursor`. After a crash between them the download comes again from the
    /// old cursor, and applying a changeset again changes nothing.
    func applyDownload(_ changesets: [Changeset], cursor: UInt64) throws(CoveError) {
        applyingDownload = true
        defer { applyingDownload = false }
        var start = 0
        repeat {
            var end = start
            var operations = 0
            while end < changesets.count, end == start || operations + changesets[end].operations.count <= Self.operationsPerDownloadTransaction {
                operations += changesets[end].operations.count
                end += 1
            }
            let last = end >= changesets.count
            try inSyncWrite { store throws(CoveError) in try store.syncApply(Array(changesets[start..<end]), cursor: last ? cursor : 0) }
            start = end
        } while start < changesets.count
    }

    /// Runs `body` in a write transaction of its own: committed when it returns, cancelled when
    /// it throws.
    func inSyncWrite(_ body: (ObjectStore) throws(CoveError) -> Void) throws(CoveError) {
        try beginWrite()
        do throws(CoveError) {
            try body(try objectStore())
            try commitWrite()
        } catch {
            if isInWriteTransaction { try? cancelWrite() }
            throw error
        }
    }

    /// The file's schema version.
    func schemaVersion() throws(CoveError) -> UInt64 {
        guard let record = try currentSchemaRecord() else { return 0 }
        return record.version
    }
}

extension Realm {
    /// The most object states one write transaction of a subscribed download applies.
    static let statesPerDownloadTransaction = 2_000

    /// Applies a subscribed download's lines in write transactions of bounded size, the last
    /// recording `cursor` (0: none, a bootstrap's batch).
    func applyStates(_ lines: [SyncStateLine], cursor: UInt64) throws(CoveError) {
        applyingDownload = true
        defer { applyingDownload = false }
        var start = 0
        repeat {
            let end = Swift.min(lines.count, start + Self.statesPerDownloadTransaction)
            let items: [ObjectStore.SyncStateItem] = lines[start..<end].map { line in
                switch line {
                case .object(let ref, let state): return .object(ref, state)
                case .remove(let ref): return .remove(ref)
                }
            }
            try inSyncWrite { store throws(CoveError) in try store.syncApply(states: items, cursor: end >= lines.count ? cursor : 0) }
            start = end
        } while start < lines.count
    }

    /// The end of a bootstrap of subscription set `set`: takes out of the file the synced
    /// objects it did not send (`keep`), but those with changes still to upload, records
    /// `cursor` as where downloads go on, and the set as complete, in one transaction.
    func finishBootstrap(set: UInt64, keep: Set<SyncObjectRef>, cursor: UInt64) throws(CoveError) {
        applyingDownload = true
        defer { applyingDownload = false }
        try inSyncWrite { store throws(CoveError) in
            guard let record = try store.syncRecord() else { throw CoveError(.sync, "the file is not synced") }
            var pending = Set<SyncObjectRef>()
            for queued in try store.syncQueued(after: record.uploadedVersion, limit: .max, maxBytes: .max) {
                let changesets: [Changeset]
                do throws(SyncError) { changesets = try ChangesetLines.decode(bytes: queued.line) } catch {
                    throw CoveError(.corrupt, "the file's upload queue: \(error.message)")
                }
                for changeset in changesets {
                    for op in changeset.operations { pending.insert(op.object) }
                }
            }
            try store.syncRemoveAll(except: keep, pending: pending, cursor: cursor)
            var subscriptions = try store.syncSubscriptions()
            subscriptions.completeVersion = Swift.max(subscriptions.completeVersion, set)
            try store.writeSyncSubscriptions(subscriptions)
        }
    }
}
