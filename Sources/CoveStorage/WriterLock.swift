// The writer lock: one write transaction at a time across the threads of a handle (a mutex and
// a condition variable) and across handles and processes (an open-file-description lock on a
// byte of the lock file, which the kernel releases when its holder dies).
import Glibc

/// Mutual exclusion of writers, with a timeout.
///
/// Why not a robust process-shared pthread mutex in the lock file: such a mutex belongs to a
/// thread, but a write transaction belongs to a handle and may be committed by another thread
/// than the one that began it; and a mutex whose owner thread exits while the process lives on
/// is "recovered" by the next locker while the transaction may still be running. An OFD lock
/// belongs to the open file description, i.e. to exactly one `Storage`, is released by the
/// kernel when the process dies, and two handles in one process exclude each other like two
/// processes do.
///
/// `@unchecked Sendable`: `held` and `holder` are guarded by `mutex`; the pthread objects live
/// at fixed heap addresses for the object's lifetime.
final class WriterLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>
    private var held = false
    private var holder = pthread_t()
    /// The lock file's descriptor, or -1 when the database is private to this process.
    private let fd: Int32
    private let lockFile: LockFile

    init(lockFile: LockFile) {
        self.lockFile = lockFile
        fd = lockFile.fd
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        cond = .allocate(capacity: 1)
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attr)
        pthread_condattr_destroy(&attr)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    /// Takes the lock, waiting at most `timeoutMs` milliseconds (-1: forever, 0: not at all).
    /// - Throws: `.locked` on timeout; `.invalidArgument` if this thread already holds it
    ///   through this handle (waiting would never end).
    func acquire(timeoutMs: Int64, pid: UInt64) throws(StorageError) {
        let deadline = timeoutMs >= 0 ? monotonicNow() + UInt64(timeoutMs) * 1_000_000 : UInt64.max
        pthread_mutex_lock(mutex)
        if held && pthread_equal(holder, pthread_self()) != 0 {
            pthread_mutex_unlock(mutex)
            throw .invalidArgument("this thread already has a write transaction open on '\(lockFile.path)'")
        }
        while held {
            if timeoutMs < 0 {
                pthread_cond_wait(cond, mutex)
                continue
            }
            let now = monotonicNow()
            if now >= deadline {
                pthread_mutex_unlock(mutex)
                throw .locked("the write lock of '\(lockFile.path)' was not free within \(timeoutMs) ms (another thread of this process holds it)")
            }
            var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
            pthread_cond_timedwait(cond, mutex, &ts)
        }
        held = true
        holder = pthread_self()
        pthread_mutex_unlock(mutex)
        if fd >= 0 {
            do throws(StorageError) {
                try acquireAcrossProcesses(timeoutMs: timeoutMs, deadline: deadline)
            } catch {
                releaseInProcess()
                throw error
            }
        }
        lockFile.writerPidField.pointee.store(pid, ordering: .relaxed)
    }

    /// Releases the lock (the caller holds it).
    func release() {
        lockFile.writerPidField.pointee.store(0, ordering: .relaxed)
        if fd >= 0 {
            _ = ofdLock(fd, byte: LockLayout.writerByte, type: Int32(F_UNLCK), wait: false)
        }
        releaseInProcess()
    }

    private func releaseInProcess() {
        pthread_mutex_lock(mutex)
        held = false
        pthread_cond_signal(cond)
        pthread_mutex_unlock(mutex)
    }

    private func acquireAcrossProcesses(timeoutMs: Int64, deadline: UInt64) throws(StorageError) {
        var rc = ofdLock(fd, byte: LockLayout.writerByte, type: Int32(F_WRLCK), wait: false)
        if rc == 0 { return }
        if rc == EAGAIN && timeoutMs < 0 {
            rc = ofdLock(fd, byte: LockLayout.writerByte, type: Int32(F_WRLCK), wait: true)
            if rc == 0 { return }
        }
        // A finite timeout: the kernel has no timed wait for these locks, so poll with a
        // backoff from 50 µs to 2 ms (a release is noticed within 2 ms).
        var pause: UInt64 = 50_000
        while rc == EAGAIN {
            let now = monotonicNow()
            if now >= deadline {
                let other = lockFile.writerPidField.pointee.load(ordering: .relaxed)
                let who = other != 0 ? " (held by pid \(other))" : ""
                throw .locked("the write lock of '\(lockFile.path)' was not free within \(timeoutMs) ms\(who)")
            }
            var ts = timespec(tv_sec: 0, tv_nsec: Int(min(pause, deadline - now)))
            nanosleep(&ts, nil)
            pause = min(pause * 2, 2_000_000)
            rc = ofdLock(fd, byte: LockLayout.writerByte, type: Int32(F_WRLCK), wait: false)
        }
        if rc != 0 { throw systemError(rc, "cannot take the write lock of '\(lockFile.path)'") }
    }
}

/// Nanoseconds on the monotonic clock.
public func monotonicNow() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}
