// CommitWatcher: the realm's notification thread and the wake-up an event loop waits on. The
// thread watches the lock file's commit counter (bumped by every commit of any thread or
// process); after each commit it runs the change worker (ChangeWorker.swift), which computes
// the Results observers' change sets at the new version, and then makes the read end of a pipe
// readable, so the realm wakes when its change sets are ready; the realm drains it when it
// delivers. `waitForChange` blocks on the same counter.
import CoveCore
import CoveStorage
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `@unchecked Sendable`: the watcher thread touches only `storage` (whose counters are atomics
/// in the shared lock file), the pipe (kernel objects, safe across threads), the worker (whose
/// shared state is behind locks) and the atomics below; the realm's thread calls `acknowledge`
/// and `stop`.
final class CommitWatcher: @unchecked Sendable {
    /// The read end, for the event loop.
    let fd: Int32
    private let writeFd: Int32
    /// Whether a byte waits in the pipe (so the pipe never fills).
    private let signalled = Atomic<Bool>(false)
    private let storage: Storage
    private let delivered: Atomic<UInt64>
    private let stopping = Atomic<Bool>(false)
    private var thread: pthread_t?
    /// The Results observers' change sets computed on this thread.
    let worker: ChangeWorker
    /// The version the worker has computed every change set for; `.max` while it has none to
    /// compute (then the newest version is ready as soon as it exists).
    private let ready = Atomic<UInt64>(.max)
    /// Set once the pipe's ends are closed: `wake` from another thread then writes nothing.
    private let closed = Mutex<Bool>(false)

    init(storage: Storage, delivered version: UInt64, worker: ChangeWorker) throws(CoveError) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw CoveError(.io, "pipe failed: \(String(cString: strerror(errno)))") }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        self.fd = ends[0]
        self.writeFd = ends[1]
        self.storage = storage
        self.delivered = Atomic(version)
        self.worker = worker
        let retained = Unmanaged.passRetained(self).toOpaque()
        var t = pthread_t()
        let rc = pthread_create(&t, nil, { arg in
            guard let arg else { return nil }
            let watcher = Unmanaged<CommitWatcher>.fromOpaque(arg).takeRetainedValue()
            watcher.run()
            return nil
        }, retained)
        guard rc == 0 else {
            Unmanaged<CommitWatcher>.fromOpaque(retained).release()
            Glibc.close(ends[0])
            Glibc.close(ends[1])
            throw CoveError(.io, "cannot start the commit watcher: \(String(cString: strerror(rc)))")
        }
        thread = t
        signalIfBehind()
    }

    private func run() {
        /// When the worker first fell behind commits that came while it worked.
        var behindSince: UInt64?
        while !stopping.load(ordering: .acquiring) {
            // Read before the work, so that a commit made during it is not missed.
            let counter = storage.commitCounter()
            worker.kicked.store(false, ordering: .releasing)
            let done = worker.run(storage) ?? .max
            ready.store(done, ordering: .releasing)
            if done != .max && done < storage.latestVersion() {
                // Newer commits came meanwhile: catch up before waking the realm, unless that
                // has taken a twentieth of a second already (then wake it with what is ready).
                let now = monotonicNow()
                let since = behindSince ?? now
                behindSince = since
                if now - since < 50_000_000 { continue }
                signalIfBehind(partial: true)
            } else {
                behindSince = nil
                signalIfBehind()
            }
            // Until the next commit, a new observer, a stop (both wake the wait), or a tenth
            // of a second. One wait, so that its polling for other processes' commits slows
            // down as it lasts instead of starting over every few milliseconds.
            _ = storage.waitForCommit(after: counter, timeoutMs: 100) {
                stopping.load(ordering: .acquiring) || worker.kicked.load(ordering: .acquiring)
            }
        }
    }

    /// Makes the fd readable when a newer version than the delivered one exists and the change
    /// sets of the newest one are ready (with `partial`, those of any newer one).
    private func signalIfBehind(partial: Bool = false) {
        let latest = storage.latestVersion()
        let done = ready.load(ordering: .acquiring)
        let target = done >= latest ? latest : partial ? done : 0
        if target > delivered.load(ordering: .acquiring),
           signalled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged {
            var one: UInt8 = 1
            _ = withUnsafeBytes(of: &one) { write(writeFd, $0.baseAddress, 1) }
        }
    }

    /// Makes the fd readable even with no new version (something else for the realm's thread to
    /// deliver, such as a finished subscription wait), from any thread; nothing once stopped.
    func wake() {
        closed.withLock { closed in
            guard !closed, signalled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
            var one: UInt8 = 1
            _ = withUnsafeBytes(of: &one) { write(writeFd, $0.baseAddress, 1) }
        }
    }

    /// The realm delivered up to `version`: the fd is drained, and signalled again at once if
    /// something newer arrived meanwhile.
    func acknowledge(_ version: UInt64) {
        delivered.store(version, ordering: .releasing)
        var buffer: UInt8 = 0
        while withUnsafeMutableBytes(of: &buffer, { read(fd, $0.baseAddress, 1) }) > 0 {}
        signalled.store(false, ordering: .releasing)
        signalIfBehind()
    }

    /// Waits until the worker is done with the newest version; false after `timeoutMs`.
    func waitUntilReady(timeoutMs: Int) -> Bool {
        for _ in 0..<max(1, timeoutMs) {
            let done = ready.load(ordering: .acquiring)
            if done != .max && done >= storage.latestVersion() { return true }
            var ts = timespec(tv_sec: 0, tv_nsec: 1_000_000)
            nanosleep(&ts, nil)
        }
        return false
    }

    /// Stops the thread and closes the fd.
    func stop() {
        stopping.store(true, ordering: .releasing)
        storage.wakeCommitWaiters()
        if let thread { pthread_join(thread, nil) }
        thread = nil
        closed.withLock { closed in
            closed = true
            Glibc.close(fd)
            Glibc.close(writeFd)
        }
    }
}

extension Realm {
    /// A file descriptor that becomes readable when a commit of any thread or process made a
    /// version newer than the one this realm last delivered and the notification thread has
    /// computed the Results observers' change sets for it: wait on it with epoll, select or
    /// asyncio's `add_reader`, then call `refresh()`. It stays the realm's (closed with it).
    /// - Throws: `.frozen`, `.closed`, `.io` (no pipe or thread).
    public func notificationFileDescriptor() throws(CoveError) -> Int32 {
        if isClosed { throw CoveError(.closed, "the realm is closed") }
        if isFrozen { throw CoveError(.frozen, "a frozen realm never changes: it has no notification descriptor") }
        return try notificationThread().fd
    }

    /// A call that makes this realm's notification descriptor readable from any thread, for the
    /// bindings to wake an event loop when something other than a commit waits for delivery;
    /// nil for a closed or frozen realm.
    package func notificationWaker() -> (@Sendable () -> Void)? {
        guard !isClosed, !isFrozen, let watcher = try? notificationThread() else { return nil }
        return { watcher.wake() }
    }

    /// The notification thread, started when first needed.
    func notificationThread() throws(CoveError) -> CommitWatcher {
        if let watcher { return watcher }
        let w = try CommitWatcher(storage: file.storage, delivered: try version, worker: ChangeWorker(source: frozenSource))
        watcher = w
        return w
    }

    /// Lets the notification thread compute `registration`'s change sets ahead of delivery.
    func attachToChangeWorker(_ registration: CollectionRegistration) throws(CoveError) {
        let worker = try notificationThread().worker
        let job = CollectionJob(differ: registration.differ, version: registration.version, worker: worker)
        registration.job = job
        worker.add(job, source: frozenSource)
        file.storage.wakeCommitWaiters()
    }

    /// Waits until the notification thread has computed the change sets of the newest version
    /// (for tests); false after `timeoutMs`.
    func waitForChangeSetsAhead(timeoutMs: Int) -> Bool {
        guard let watcher else { return false }
        return watcher.waitUntilReady(timeoutMs: timeoutMs)
    }

    /// How many deliveries took a change set the notification thread computed ahead.
    var changeSetsComputedAhead: Int { watcher?.worker.served.load(ordering: .relaxed) ?? 0 }

    /// Waits until a commit of any thread or process makes a version newer than this realm's,
    /// or `timeoutMilliseconds` pass (-1: forever). Does not refresh.
    /// - Returns: whether a newer version exists.
    /// - Throws: `.inWrite`, `.frozen`, `.closed`.
    public func waitForChange(timeoutMilliseconds: Int64) throws(CoveError) -> Bool {
        if isClosed { throw CoveError(.closed, "the realm is closed") }
        if isFrozen { throw CoveError(.frozen, "a frozen realm never changes") }
        if isInWriteTransaction { throw CoveError(.inWrite, "waiting for a change inside a write would wait for itself") }
        let mine = try version
        let storage = file.storage
        let counter = storage.commitCounter()
        if storage.latestVersion() > mine { return true }
        _ = storage.waitForCommit(after: counter, timeoutMs: timeoutMilliseconds)
        return storage.latestVersion() > mine
    }
}
