// A second pin of a snapshot's version: what a frozen realm holds, so that it stays on the
// version its live realm showed even after the live realm moves on.

extension Snapshot {
    /// A new snapshot of this same version, with its own reader slot, that outlives this one.
    ///
    /// Safe without retrying: while this snapshot is open its version is pinned, so no commit can
    /// reuse that version's pages between the new slot being stored and being seen by writers.
    /// - Complexity: a few atomic operations (a slot claim the first time).
    /// - Throws: `.closed` when this snapshot has ended or the storage is closed;
    ///   `.tooManyVersions` when every reader slot of the lock file is in use.
    public func duplicate() throws(StorageError) -> Snapshot {
        if isEnded { throw .closed("the snapshot of version \(version) has ended") }
        let idle = try storage.state.withLock { s throws(StorageError) -> Int? in
            if let why = s.unusable { throw .closed(why) }
            return s.idleSlots.popLast()
        }
        let slot: Int
        if let idle {
            slot = idle
        } else {
            slot = try storage.lock.claimSlot(pid: storage.pid)
        }
        storage.lock.versionField(slot).pointee.store(version, ordering: .sequentiallyConsistent)
        return Snapshot(storage: storage, slot: slot, box: box)
    }
}
