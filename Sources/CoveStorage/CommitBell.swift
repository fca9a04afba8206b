// CommitBell: wakes this process's waiters for a database's commits as soon as one is published.
// Commits of other processes are still noticed by polling the lock file's commit counter
// (Storage.waitForCommit); those of this process ring the bell, which every Storage handle of
// the same lock file in the process shares, so a waiting notification thread runs at once
// instead of at its next poll.
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `@unchecked Sendable`: the count is guarded by the pthread mutex, which (with the condition
/// variable) lives in allocated memory that never moves.
final class CommitBell: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var rings: UInt64 = 0

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }

    /// How many times the bell rang: take it before checking for a commit, then `wait(after:)`
    /// returns at once if a commit rang it in between.
    var count: UInt64 {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return rings
    }

    /// Wakes every waiter.
    func ring() {
        pthread_mutex_lock(mutex)
        rings &+= 1
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Waits until the bell rings after `count` or the monotonic clock reaches `deadline` (ns).
    func wait(after count: UInt64, until deadline: UInt64) {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        pthread_mutex_lock(mutex)
        while rings == count {
            if pthread_cond_timedwait(condition, mutex, &ts) == ETIMEDOUT { break }
        }
        pthread_mutex_unlock(mutex)
    }

    // MARK: One bell per lock file in the process

    private struct FileKey: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    private final class WeakBell: @unchecked Sendable {
        weak var bell: CommitBell?
        init(_ bell: CommitBell) { self.bell = bell }
    }

    private static let shared = Mutex<[FileKey: WeakBell]>([:])

    /// The bell of the lock file open as `fd` (one per file in the process).
    static func forLockFile(_ fd: Int32) -> CommitBell {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return CommitBell() }
        let key = FileKey(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
        return shared.withLock { bells in
            if let bell = bells[key]?.bell { return bell }
            bells = bells.filter { $0.value.bell != nil }
            let bell = CommitBell()
            bells[key] = WeakBell(bell)
            return bell
        }
    }
}
