// A client reset: the file can no longer go on syncing under its client file id (it is an older
// copy of itself, or the server lost history it had downloaded), so it takes a new id and starts
// again with the server. Recovering keeps the objects and their merge states and sends the
// changes the server never took again, under new clocks of the new id (as realm-swift's
// recoverUnsyncedChanges: they apply on top of the server's state); discarding drops the synced
// objects and everything not uploaded, for the server's state to come back by downloads.
import CoveStorage
import CoveSyncCore

extension ObjectStore {
    /// Resets sync in this file (one write transaction): a new client file id, the download
    /// cursor at `cursor`, the subscription set to be sent again; with `recover`, the queued
    /// changesets the server has not taken are queued again under the new id (list elements
    /// they inserted get new ids, here too), else they and every synced object are dropped.
    /// Returns the number of changesets queued again.
    package func syncReset(clientFileId: SyncUUID, cursor: UInt64, recover: Bool, wall: UInt64) throws(CoveError) -> Int {
        try requireWrite()
        guard let old = try syncRecord() else { throw CoveError(.invalidArgument, "the file is not synced") }
        var unsynced: [Changeset] = []
        for queued in try syncQueued(after: old.uploadedVersion, limit: .max, maxBytes: .max) {
            do throws(SyncError) { unsynced += try ChangesetLines.decode(bytes: queued.line) } catch {
                throw CoveError(.corrupt, "the file's upload queue: \(error.message)")
            }
        }
        try clearTree(CatalogKey.syncQueue)
        var record = SyncFileRecord(clientFileId: clientFileId)
        record.latestClock = old.latestClock
        record.downloadCursor = cursor
        var subscriptions = try syncSubscriptions()
        subscriptions.sentVersion = 0
        subscriptions.completeVersion = 0
        subscriptions.errorVersion = 0
        subscriptions.errorMessage = ""
        try writeSyncSubscriptions(subscriptions)
        if !recover {
            for cls in syncedClasses() {
                for key in try objectKeys(cls) { try delete(cls, key) }
            }
            try clearTree(CatalogKey.syncStates)
            try clearTree(CatalogKey.syncWaitingLinks)
            try writeSyncRecord(record)
            return 0
        }
        // The unsynced operations again, in order, under clocks of the new id.
        let source = SyncClockSource(node: record.nodeId, after: record.latestClock)
        var builder = ChangesetBuilder(clock: source, version: 1)
        var changesets: [Changeset] = []
        var renamed: [SyncClock: SyncClock] = [:]
        var forgotten: [SyncObjectRef: [(String, SyncClock)]] = [:]
        var touched: [SyncObjectRef: [SyncOperation]] = [:]
        var order: [SyncObjectRef] = []
        do throws(SyncError) {
            for op in unsynced.flatMap(\.operations) {
                if builder.operations.count >= SyncCapture.operationsPerChangeset {
                    let done = try builder.finish(wall: wall)
                    changesets.append(done)
                    builder = ChangesetBuilder(clock: source, version: done.clientVersion + 1)
                }
                var change = op.change
                switch change {
                case .listRemove(let p, let id): change = .listRemove(property: p, element: renamed[id] ?? id)
                case .listMove(let p, let id, let at): change = .listMove(property: p, element: renamed[id] ?? id, position: at)
                case .listSet(let p, let id, let v): change = .listSet(property: p, element: renamed[id] ?? id, value: v)
                default: break
                }
                let clock = try builder.append(op.object, change, wall: wall)
                if case .listInsert(let p, _, _) = change {
                    renamed[op.clock] = clock
                    forgotten[op.object, default: []].append((p, op.clock))
                }
                if touched[op.object] == nil { order.append(op.object) }
                touched[op.object, default: []].append(try SyncOperation(clock: clock, object: op.object, change: change))
            }
            if !builder.operations.isEmpty { changesets.append(try builder.finish(wall: wall)) }
        } catch {
            throw CoveError(.internal, "sync: \(error.message)")
        }
        // The objects' states learn the new clocks; an element inserted under an old one is
        // known by its new id only (no other replica has seen the old).
        for ref in order {
            guard let cls = schema[ref.className], !cls.isEmbedded, Self.keyFits(ref.key, cls) else { continue }
            let pk = try Self.coveKey(ref.key)
            let classKey = try self.classKey(of: cls)
            var state = try loadState(classKey, pk)
            for op in touched[ref] ?? [] { state.merge.apply(op) }
            for (name, ids) in state.listOrder {
                state.listOrder[name] = ids.map { renamed[$0] ?? $0 }
            }
            for (name, id) in forgotten[ref] ?? [] { state.merge.forgetListElement(name, id: id) }
            try storeState(state, classKey, pk, ref)
        }
        for changeset in changesets {
            try enqueue(changeset)
            record.localVersion = changeset.clientVersion
            record.latestClock = changeset.clock
        }
        try writeSyncRecord(record)
        return changesets.count
    }

    /// Removes every entry of a catalog tree.
    private func clearTree(_ name: [UInt8]) throws(CoveError) {
        let t = try tree(name)
        var keys: [[UInt8]] = []
        do {
            try t.forEach(from: []) { key, _ throws(StorageError) -> Bool in
                keys.append(Array(key))
                return true
            }
        } catch {
            throw CoveError(error)
        }
        if keys.isEmpty { return }
        try editTree(name) { t throws(StorageError) in
            for key in keys { _ = try t.remove(key) }
        }
    }
}
