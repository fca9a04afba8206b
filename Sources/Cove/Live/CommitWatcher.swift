// CommitWatcher: the wake-up an event loop waits on. A thread of the realm's own watches the
// lock file's commit counter (bumped by every commit of any thread or process) and makes the
// read end of a pipe readable when a version newer than the one the realm last delivered
// exists; the realm drains it when it delivers. `waitForChange` blocks on the same counter.
import CoveStorage
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `@unchecked Sendable`: the watcher thread touches only `storage` (whose counters are atomics
/// in the shared lock file), the pipe (kernel objects, safe across threads) and the atomics
/// below; the realm's thread calls `acknowledge` and `stop`.
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

    init(storage: Storage, delivered version: UInt64) throws(CoveError) {
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
        var counter = storage.commitCounter()
        while !stopping.load(ordering: .acquiring) {
            counter = storage.waitForCommit(after: counter, timeoutMs: 100)
            signalIfBehind()
        }
    }

    /// Makes the fd readable when a newer version than the delivered one exists.
    private func signalIfBehind() {
        if storage.latestVersion() > delivered.load(ordering: .acquiring),
           signalled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged {
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

    /// Stops the thread and closes the fd.
    func stop() {
        stopping.store(true, ordering: .releasing)
        if let thread { pthread_join(thread, nil) }
        thread = nil
        Glibc.close(fd)
        Glibc.close(writeFd)
    }
}

extension Realm {
    /// A file descriptor that becomes readable when a commit of any thread or process made a
    /// version newer than the one this realm last delivered: wait on it with epoll, select or
    /// asyncio's `add_reader`, then call `refresh()`. It stays the realm's (closed with it).
    /// - Throws: `.frozen`, `.closed`, `.io` (no eventfd or thread).
    public func notificationFileDescriptor() throws(CoveError) -> Int32 {
        if isClosed { throw CoveError(.closed, "the realm is closed") }
        if isFrozen { throw CoveError(.frozen, "a frozen realm never changes: it has no notification descriptor") }
        if let watcher { return watcher.fd }
        let w = try CommitWatcher(storage: file.storage, delivered: try version)
        watcher = w
        return w.fd
    }

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
