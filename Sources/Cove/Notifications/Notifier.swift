// Notifier: the observers of one realm, and their delivery. Each registration remembers the
// version its last delivery described and what it saw then (the rows of a collection, the
// values of an object); at each delivery point (deliver, refresh, the start of a write, never
// inside one) the change records of the commits since then, from any thread or process, are
// merged into one, a registration whose classes the record does not touch is skipped without
// reading anything, and the others compute their change set and call back.
import CoveCore
import CoveStorage
import Synchronization

/// One observer: what it observes, what it saw last, and its callback.
class NotifierRegistration {
    /// Set once by `invalidate()`, from any thread; never cleared.
    private let invalidated = Atomic<Bool>(false)
    var isInvalidated: Bool { invalidated.load(ordering: .acquiring) }

    /// Ends the observation (a token's `invalidate`, from any thread, or the end of what it
    /// observes); `didInvalidate` runs once, on the thread that ended it.
    func invalidate() {
        if !invalidated.exchange(true, ordering: .acquiringAndReleasing) { didInvalidate() }
    }

    /// What a kind of observer stops when its observation ends.
    func didInvalidate() {}

    /// The version the last delivery described.
    var version: UInt64
    /// The version the delivery in progress describes (the realm's current one).
    var target: UInt64 = 0
    /// Whether the initial call is still due (collections only).
    var initialPending: Bool

    init(version: UInt64, initialPending: Bool) {
        self.version = version
        self.initialPending = initialPending
    }

    /// Takes a change set computed ahead from `version` to `target`, if there is one; then
    /// `deliver` needs no change record. The notifier calls it before every `deliver`, and
    /// before it reads the records, so that a delivery every observer of which has its change
    /// set ready reads none.
    func claimComputedChanges() -> Bool { false }

    /// Calls back with the changes since the last delivery (`record` merges them), or the
    /// initial state; returns false when the observation ends (an error, a deleted object).
    func deliver(_ store: ObjectStore, _ record: ChangeRecord?) -> Bool { true }
}

/// The observers of one realm.
final class RealmNotifier {
    private var registrations: [NotifierRegistration] = []
    /// A pin on the oldest version a registration last saw, so the change records after it stay
    /// in the history until they are read.
    private var pin: Snapshot?
    private var delivering = false

    func add(_ registration: NotifierRegistration, pinning snapshot: Snapshot) {
        registrations.append(registration)
        if pin == nil || (pin?.version ?? 0) > registration.version {
            pin?.end()
            pin = snapshot
        } else {
            snapshot.end()
        }
    }

    var isEmpty: Bool { registrations.allSatisfy(\.isInvalidated) }

    /// Whether a delivery is under way (a callback is running on this realm's thread).
    var isDelivering: Bool { delivering }

    /// Delivers to every registration what happened up to the realm's current version.
    /// Registrations added during delivery wait for the next one; a callback may invalidate any
    /// token, its own included. Without `initialCalls` (the delivery that starts a write), the
    /// observers still waiting for their initial call keep waiting for the next delivery, so
    /// that it shows the state after the write (as realm-swift's initial call comes once the
    /// query ran, after a write begun at once).
    func deliver(_ realm: Realm, initialCalls: Bool = true) throws(CoveError) {
        if delivering { return }
        delivering = true
        defer {
            delivering = false
            realm.acknowledgeDelivery()
        }
        registrations.removeAll(where: \.isInvalidated)
        if registrations.isEmpty {
            pin?.end()
            pin = nil
            return
        }
        let current = try realm.version
        let store = try realm.objectStore()
        // The change records are read only for the observers without a change set computed
        // ahead (which they take now, so that a newer one cannot replace it meanwhile; one the
        // notification thread is computing now is waited for, and the others are left to this
        // thread).
        var claimed = Set<ObjectIdentifier>()
        var oldest = current
        for registration in registrations where registration.version < current || registration.initialPending {
            if registration.initialPending && !initialCalls {
                // Its initial call reads the state when it comes: no record is needed for it.
                registration.version = current
                continue
            }
            registration.target = current
            if registration.claimComputedChanges() {
                claimed.insert(ObjectIdentifier(registration))
            } else {
                oldest = min(oldest, registration.version)
            }
        }
        var records: [UInt64: ChangeRecord] = [:]
        if oldest < current {
            let newest: Snapshot
            do { newest = try realm.file.storage.beginRead() } catch { throw CoveError(error) }
            defer { newest.end() }
            records = try ChangeRecord.read(from: newest, after: oldest, through: current)
        }
        // Observers that last heard of the same version share one merged record.
        var mergedSince: [UInt64: ChangeRecord] = [:]
        for registration in registrations {
            // A callback may have closed the realm: the others hear nothing more.
            if realm.isClosed { break }
            if registration.isInvalidated { continue }
            if registration.initialPending && !initialCalls { continue }
            var merged: ChangeRecord?
            if claimed.contains(ObjectIdentifier(registration)) {
                // Its change set is in hand: no record is needed.
                merged = ChangeRecord()
            } else if registration.version < current {
                if let m = mergedSince[registration.version] {
                    merged = m
                } else {
                    // A missing record cannot be, while the pin holds.
                    let m = ChangeRecord.merged(records, after: registration.version, through: current)
                    mergedSince[registration.version] = m
                    merged = m
                }
            }
            if registration.initialPending || merged != nil {
                registration.target = current
                if !registration.deliver(store, merged) { registration.invalidate() }
            }
            registration.version = current
        }
        registrations.removeAll(where: \.isInvalidated)
        // Move the pin up to the oldest version still to be described.
        if registrations.isEmpty {
            pin?.end()
            pin = nil
        } else if let p = pin, p.version < current {
            let current = try realm.pinnedSnapshot()
            let next: Snapshot
            do { next = try current.duplicate() } catch { throw CoveError(error) }
            p.end()
            pin = next
        }
    }

    func close() {
        registrations.removeAll()
        pin?.end()
        pin = nil
    }
}
