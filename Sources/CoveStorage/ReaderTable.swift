// The reader slots of the lock file: each pins one version for one reader, so the writer knows
// which freed pages it may not reuse yet. A handle claims a slot once and reuses it for many
// snapshots, so beginning a read costs a few atomic operations and no system call.
import Glibc
import Synchronization

/// A random number made once per process, stored in its reader slots: a slot carrying this
/// process's pid but another nonce was left by an earlier process that had the same pid.
let processNonce: UInt64 = {
    var g = SystemRandomNumberGenerator()
    return g.next() | 1
}()

/// The pid a reaper writes into a slot while it clears it.
private let reapingMark = UInt64.max

/// What a scan of the reader slots found.
struct ReaderScan {
    /// The oldest version any reader pins, or the latest version if older than every pin.
    var oldest: UInt64
    /// The number of distinct versions pinned, the latest counted even if nobody pins it.
    var distinctVersions: UInt64
}

extension LockFile {
    @inline(__always)
    private func slotField(_ slot: Int, _ field: Int) -> UnsafeMutablePointer<Atomic<UInt64>> {
        atomic(LockLayout.headerSize + slot * LockLayout.slotSize + field * 8)
    }

    @inline(__always) func versionField(_ slot: Int) -> UnsafeMutablePointer<Atomic<UInt64>> { slotField(slot, 0) }
    @inline(__always) private func pidField(_ slot: Int) -> UnsafeMutablePointer<Atomic<UInt64>> { slotField(slot, 1) }
    @inline(__always) private func nonceField(_ slot: Int) -> UnsafeMutablePointer<Atomic<UInt64>> { slotField(slot, 2) }

    /// Claims a free slot for this process (idle: version 0).
    /// - Throws: `.tooManyVersions` when every slot is taken by a live process.
    func claimSlot(pid: UInt64) throws(StorageError) -> Int {
        for attempt in 0..<2 {
            for slot in 0..<LockLayout.slotCount {
                let pidSlot = pidField(slot)
                if pidSlot.pointee.load(ordering: .relaxed) != 0 { continue }
                if pidSlot.pointee.compareExchange(expected: 0, desired: pid, ordering: .acquiringAndReleasing).exchanged {
                    nonceField(slot).pointee.store(processNonce, ordering: .relaxed)
                    versionField(slot).pointee.store(0, ordering: .releasing)
                    let hw = highWaterField
                    var seen = hw.pointee.load(ordering: .relaxed)
                    while seen < UInt64(slot + 1) {
                        let r = hw.pointee.compareExchange(expected: seen, desired: UInt64(slot + 1), ordering: .acquiringAndReleasing)
                        if r.exchanged { break }
                        seen = r.original
                    }
                    return slot
                }
            }
            if attempt == 0 { reapDeadReaders(pid: pid, all: true) }
        }
        throw .tooManyVersions("all \(LockLayout.slotCount) reader slots of '\(path)' are in use")
    }

    /// Pins the latest version in `slot` and returns it.
    ///
    /// The handshake with the writer: the reader stores its pin, then reads the latest version
    /// again; the writer publishes a version before it scans the slots for the oldest pin. All
    /// four are sequentially consistent, so either the writer's scan sees the pin, or the
    /// reader's second read sees the newer version and pins again. A pin the writer did not see
    /// is therefore never older than the latest version when the writer scanned, and pages it
    /// may reuse were freed at or before that version.
    @inline(__always)
    func pin(_ slot: Int) -> UInt64 {
        let v = versionField(slot)
        var latest = latestField.pointee.load(ordering: .sequentiallyConsistent)
        while true {
            v.pointee.store(latest, ordering: .sequentiallyConsistent)
            let again = latestField.pointee.load(ordering: .sequentiallyConsistent)
            if again == latest { return latest }
            latest = again
        }
    }

    /// Releases the pin of `slot`; the slot stays claimed by this process.
    @inline(__always)
    func unpin(_ slot: Int) {
        versionField(slot).pointee.store(0, ordering: .releasing)
    }

    /// Gives `slot` back to every process.
    func releaseSlot(_ slot: Int) {
        versionField(slot).pointee.store(0, ordering: .releasing)
        nonceField(slot).pointee.store(0, ordering: .relaxed)
        pidField(slot).pointee.store(0, ordering: .releasing)
    }

    /// The pinned versions, the latest included: the oldest and how many distinct ones.
    func scanReaders(latest: UInt64) -> ReaderScan {
        let n = min(Int(highWaterField.pointee.load(ordering: .sequentiallyConsistent)), LockLayout.slotCount)
        // The versions in scratch memory (on the stack for the usual few slots): a writer scans
        // at every begin and commit.
        return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: n + 1) { versions in
            var oldest = latest
            versions[0] = latest
            var count = 1
            for slot in 0..<n {
                let v = versionField(slot).pointee.load(ordering: .sequentiallyConsistent)
                if v == 0 { continue }
                oldest = min(oldest, v)
                versions[count] = v
                count += 1
            }
            var pinned = UnsafeMutableBufferPointer(rebasing: versions[0..<count])
            pinned.sort()
            var distinct: UInt64 = 0
            var previous: UInt64 = 0
            for v in pinned where v != previous {
                distinct += 1
                previous = v
            }
            return ReaderScan(oldest: oldest, distinctVersions: distinct)
        }
    }

    /// Frees the slots of processes that died without releasing them (no such pid, or this
    /// process's pid with another process's nonce). With `all` false only slots pinning a
    /// version are examined (idle claimed slots cost nothing but a slot). One `kill(pid, 0)`
    /// per distinct other process.
    func reapDeadReaders(pid: UInt64, all: Bool) {
        let n = min(Int(highWaterField.pointee.load(ordering: .acquiring)), LockLayout.slotCount)
        var alive: [UInt64] = []
        var dead: [UInt64] = []
        for slot in 0..<n {
            let owner = pidField(slot).pointee.load(ordering: .acquiring)
            if owner == 0 || owner == reapingMark { continue }
            if !all {
                let v = versionField(slot).pointee.load(ordering: .relaxed)
                if v == 0 { continue }
            }
            var isDead: Bool
            if owner == pid {
                // Nonce 0: this process is claiming or releasing the slot right now.
                let nonce = nonceField(slot).pointee.load(ordering: .relaxed)
                isDead = nonce != 0 && nonce != processNonce
            } else if alive.contains(owner) {
                isDead = false
            } else if dead.contains(owner) {
                isDead = true
            } else {
                isDead = owner > UInt64(Int32.max) || (kill(pid_t(owner), 0) != 0 && errno == ESRCH)
                if isDead { dead.append(owner) } else { alive.append(owner) }
            }
            if isDead {
                // Mark the slot as being reaped before clearing it, so that neither a claimer
                // nor another reaper touches it until it is free again: clearing the version
                // of a slot someone had meanwhile claimed would drop that reader's pin.
                if pidField(slot).pointee.compareExchange(expected: owner, desired: reapingMark, ordering: .acquiringAndReleasing).exchanged {
                    versionField(slot).pointee.store(0, ordering: .relaxed)
                    nonceField(slot).pointee.store(0, ordering: .relaxed)
                    pidField(slot).pointee.store(0, ordering: .releasing)
                }
            }
        }
    }
}
