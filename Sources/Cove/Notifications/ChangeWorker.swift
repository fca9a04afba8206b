// The change worker: Results observers' change sets computed off the realm's thread. The realm's
// notification thread (CommitWatcher) runs it after each commit of any thread or process, before
// it makes the notification descriptor readable: it opens a frozen copy of the realm at the
// newest version, and for each observer whose classes the commits touched runs the query there
// and diffs it against the rows the observer last delivered (or, for a new observer, runs the
// query for its initial call). Delivery on the realm's thread takes a ready change set when it
// starts from the version the observer stands on and ends at the version being delivered, and
// the query's rows with it (the Results' first read after it costs nothing); otherwise (the
// realm moved on before the worker got there) it computes the change set itself, as without a
// worker. Either way the observer then hands its new state back to the worker. Each change set
// is computed once: a delivery that finds the worker computing exactly the one it needs waits
// for it, and one that finds the worker not yet there claims the job, which the worker then
// leaves to it (a commit of the observing realm is mostly delivered before the worker wakes).
import CoveCore
import CoveStorage
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One Results observer as the worker sees it; shared by the realm's thread and the worker's,
/// so its state sits behind a lock.
final class CollectionJob: @unchecked Sendable {
    /// Where the observer stands: the version of its last delivery and its rows then (nil while
    /// its initial call is due). `id` changes with every delivery.
    struct Base: Sendable {
        var id: UInt64
        var version: UInt64
        var rows: [Value]?
    }

    /// A change set computed ahead: from the base with `baseID` to `version`.
    struct Ready: Sendable {
        var baseID: UInt64
        var version: UInt64
        /// Nil for an initial call.
        var changes: CollectionChangeSet?
        var rows: [Value]
        var plan: QueryPlan
    }

    /// Who computes the change set from the base with `baseID`: the worker (up to `version`),
    /// or the realm's thread (the worker leaves that base to it).
    struct Claim: Sendable {
        var baseID: UInt64
        var worker: UInt64?
    }

    // `differ` reads the realm's thread's engine, but the worker only moves it to its own
    // frozen realms, which reads the engine's immutable source and stages.
    let differ: CollectionDiffer
    private let state: Mutex<(base: Base, ready: Ready?, cancelled: Bool, claim: Claim?)>
    private let worker: ChangeWorker

    init(differ: CollectionDiffer, version: UInt64, worker: ChangeWorker) {
        self.differ = differ
        self.worker = worker
        state = Mutex((Base(id: 0, version: version, rows: nil), nil, false, nil))
    }

    var base: Base { state.withLock { $0.base } }
    var isCancelled: Bool { state.withLock { $0.cancelled } }

    func cancel() { state.withLock { $0.cancelled = true } }

    /// Whether a ready change set already describes the base up to `version`.
    func isReady(at version: UInt64) -> Bool {
        state.withLock { s in s.ready.map { $0.baseID == s.base.id && $0.version == version } ?? false }
    }

    /// The worker's result for `base`, kept only if the observer has not moved meanwhile.
    func publish(_ ready: Ready) {
        state.withLock { s in if ready.baseID == s.base.id { s.ready = ready } }
    }

    /// Whether the realm's thread computes the change set from the current base itself.
    var isClaimedByRealm: Bool {
        state.withLock { s in s.claim.map { $0.baseID == s.base.id && $0.worker == nil } ?? false }
    }

    /// The base, when the worker may compute from it up to `version` (the realm's thread has
    /// not claimed it); the worker's claim then holds until `endComputing`.
    func beginComputing(at version: UInt64) -> Base? {
        state.withLock { s -> Base? in
            if let c = s.claim, c.baseID == s.base.id, c.worker == nil { return nil }
            s.claim = Claim(baseID: s.base.id, worker: version)
            return s.base
        }
    }

    func endComputing() {
        state.withLock { s in if s.claim?.worker != nil { s.claim = nil } }
    }

    /// The ready change set from `start` (or the initial rows) to `end`, taken; nil when the
    /// worker has none for exactly that, and then the realm's thread computes it: the worker
    /// leaves it alone from now on. While the worker is computing exactly that change set,
    /// waits for it (at most `timeoutMs`).
    func take(startingAt start: UInt64, initial: Bool, endingAt end: UInt64, timeoutMs: Int = 1000) -> Ready? {
        enum Outcome { case taken(Ready), computing, mine }
        var pause: UInt64 = 20_000
        var waited: UInt64 = 0
        while true {
            let outcome = state.withLock { s -> Outcome in
                if let ready = s.ready, ready.baseID == s.base.id, ready.version == end,
                   initial == (s.base.rows == nil), initial || s.base.version == start {
                    s.ready = nil
                    return .taken(ready)
                }
                if let c = s.claim, c.baseID == s.base.id, c.worker == end, waited < UInt64(timeoutMs) * 1_000_000 { return .computing }
                s.claim = Claim(baseID: s.base.id, worker: nil)
                return .mine
            }
            switch outcome {
            case .taken(let ready):
                worker.served.add(1, ordering: .relaxed)
                return ready
            case .mine:
                return nil
            case .computing:
                var ts = timespec(tv_sec: 0, tv_nsec: Int(pause))
                nanosleep(&ts, nil)
                waited += pause
                pause = min(pause * 2, 1_000_000)
            }
        }
    }

    /// The observer delivered up to `version`, where its rows are `rows`.
    func rebase(version: UInt64, rows: [Value]) {
        state.withLock { s in
            s.base = Base(id: s.base.id &+ 1, version: version, rows: rows)
            s.ready = nil
            s.claim = nil
        }
    }
}

/// The jobs of one realm and the computation of their change sets.
final class ChangeWorker: @unchecked Sendable {
    /// Set on the realm's thread, read on the worker's.
    private let jobs = Mutex<[CollectionJob]>([])
    private let source: Mutex<Realm.FrozenSource>
    /// Set when a job comes or a source changes, so the worker runs without waiting for a commit.
    let kicked = Atomic<Bool>(false)
    /// Change sets served to deliveries (for tests and diagnostics).
    let served = Atomic<Int>(0)

    init(source: Realm.FrozenSource) {
        self.source = Mutex(source)
    }

    /// Starts computing ahead for a new observer, whose realm has `newSource`'s schema now.
    func add(_ job: CollectionJob, source newSource: Realm.FrozenSource) {
        source.withLock { $0 = newSource }
        jobs.withLock { $0.append(job) }
        kicked.store(true, ordering: .releasing)
    }

    var hasJobs: Bool { jobs.withLock { $0.contains { !$0.isCancelled } } }

    /// Computes every job's change set at the newest version; returns that version, or nil
    /// when there are no jobs.
    func run(_ storage: Storage) -> UInt64? {
        let live = jobs.withLock { list -> [CollectionJob] in
            list.removeAll(where: \.isCancelled)
            return list
        }
        if live.isEmpty { return nil }
        let snapshot: Snapshot
        do { snapshot = try storage.beginRead() } catch { return storage.latestVersion() }
        let newest = snapshot.version
        let pending = live.filter {
            !$0.isReady(at: newest) && !($0.base.rows != nil && $0.base.version == newest) && !$0.isClaimedByRealm
        }
        if pending.isEmpty {
            snapshot.end()
            return newest
        }
        let history: Snapshot
        do { history = try snapshot.duplicate() } catch {
            snapshot.end()
            return newest
        }
        defer { history.end() }
        let realm = Realm.frozen(source.withLock { $0 }, at: snapshot)
        defer { realm.close() }
        guard let store = try? realm.objectStore() else { return newest }
        let oldest = pending.compactMap { $0.base.rows == nil ? nil : $0.base.version }.min() ?? newest
        var records: [UInt64: ChangeRecord] = [:]
        if oldest < newest {
            // The oldest base is pinned by its realm's notifier until the observer moves past it;
            // a record missing because it moved meanwhile leaves that job to its realm.
            records = (try? ChangeRecord.read(from: history, after: oldest, through: newest)) ?? [:]
        }
        for job in pending { compute(job, realm, store, records, newest) }
        return newest
    }

    /// One job's change set at `version` (or its initial rows); on any failure it publishes
    /// nothing, and the realm's thread computes that delivery itself.
    private func compute(_ job: CollectionJob, _ realm: Realm, _ store: ObjectStore,
                         _ records: [UInt64: ChangeRecord], _ version: UInt64) {
        guard let base = job.beginComputing(at: version) else { return }
        defer { job.endComputing() }
        do throws(CoveError) {
            let differ = try job.differ.moved(to: realm)
            guard let rows = base.rows else {
                let initial = try differ.initialRows(store, at: version)
                job.publish(.init(baseID: base.id, version: version, changes: nil, rows: initial, plan: differ.engine.lastPlan))
                return
            }
            // The realm may have delivered past this snapshot meanwhile.
            guard base.version < version else { return }
            let merged = ChangeRecord.merged(records, after: base.version, through: version)
            guard !merged.schemaChanged else { return }
            let advanced = try differ.advance(from: rows, since: base.version, merged, store, at: version)
            job.publish(.init(baseID: base.id, version: version, changes: advanced?.changes ?? .unchanged,
                              rows: advanced?.rows ?? rows, plan: differ.engine.lastPlan))
        } catch {
            return
        }
    }
}

extension ChangeRecord {
    /// What the versions after `after` up to `through` did, as one record. A version whose
    /// record `records` lacks ends the merge with `schemaChanged` set: anything may have changed.
    static func merged(_ records: [UInt64: ChangeRecord], after: UInt64, through: UInt64) -> ChangeRecord {
        var merged = ChangeRecord()
        for v in (after + 1)...through {
            guard let r = records[v] else {
                merged.schemaChanged = true
                break
            }
            merged.merge(r)
        }
        return merged
    }

    /// The change records of the versions after `after` up to `through`, from the history
    /// `snapshot` sees.
    static func read(from snapshot: Snapshot, after: UInt64, through: UInt64) throws(CoveError) -> [UInt64: ChangeRecord] {
        var records: [UInt64: ChangeRecord] = [:]
        var failure: CoveError?
        do {
            try snapshot.forEachHistoryRecord(after: after) { (version: UInt64, bytes: UnsafeRawBufferPointer) throws(StorageError) -> Bool in
                if version > through { return false }
                switch Result(catching: { () throws(CoveError) -> ChangeRecord in try ChangeRecord.decode(Array(bytes)) }) {
                case .success(let r): records[version] = r
                case .failure(let e):
                    failure = e
                    return false
                }
                return true
            }
        } catch {
            throw CoveError(error)
        }
        if let failure { throw failure }
        return records
    }
}

