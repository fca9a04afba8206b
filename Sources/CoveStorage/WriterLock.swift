// The writer lock: one write transaction at a time across the threads of a handle (a mutex and
// a condition variable) and across handles and processes (a futex word in the shared lock file,
// naming the handle that holds it; a waiter that finds the holder's handle gone takes the word).
import CCoveCPU
import Glibc
import Synchronization

/// Mutual exclusion of writers, with a timeout.
///
/// Across handles, the lock is the lock file's writer word: 0 when free, otherwise the holder's
/// token (its handle byte's number, a nonce, and a bit saying someone waits). Taking and
/// releasing it uncontended are one atomic operation each, with no system call; a waiter sleeps
/// on the word (futex) and is woken by the release.
///
/// The word belongs to a handle, not to a thread: a write transaction may be committed by
/// another thread than the one that began it. A holder that dies cannot release it, so each
/// handle that writes holds an open-file-description lock on a byte of its own (its *handle
/// byte*), which the kernel releases when the process dies. A waiter checks the holder's byte
/// before it sleeps and every 10 ms while it sleeps: when no other handle holds it, the holder is
/// gone, and the waiter clears the word. The nonce makes a stale token unlikely to equal a live one.
///
/// Why not a robust process-shared pthread mutex in the lock file: such a mutex belongs to a
/// thread, and a mutex whose owner thread exits while its process lives on is "recovered" by
/// the next locker while the transaction may still be running.
///
/// `@unchecked Sendable`: `held`, `holder`, `handleSlot` and `token` are guarded by `mutex`
/// (the last two change only while this handle holds the lock within the process); the pthread
/// objects live at fixed heap addresses for the object's lifetime.
final class WriterLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>
    private var held = false
    private var holder = pthread_t()
    /// The lock file's descriptor, or -1 when the database is private to this process.
    private let fd: Int32
    private let lockFile: LockFile
    /// This handle's byte among the handle bytes (claimed at its first write), and its token.
    private var handleSlot = -1
    private var token: UInt32 = 0
    /// The lock file's identity (device, inode), for `acquiring`; nil in memory.
    private let fileID: FileID?

    /// A lock file, whatever path opened it.
    struct FileID: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
    }

    /// The thread that took each file's write lock through one of this process's handles, while
    /// it holds it: a second handle of the same file asking on that thread would wait for itself
    /// forever, so it is refused at once.
    private static let acquiring = Mutex<[FileID: UInt]>([:])

    init(lockFile: LockFile) {
        self.lockFile = lockFile
        fd = lockFile.fd
        var st = stat()
        fileID = fd >= 0 && fstat(fd, &st) == 0 ? FileID(device: UInt64(st.st_dev), inode: UInt64(st.st_ino)) : nil
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
            let me = UInt(pthread_self())
            if let fileID, Self.acquiring.withLock({ $0[fileID] }) == me {
                releaseInProcess()
                throw .locked("this thread already holds the write lock of '\(lockFile.path)' through another realm of this file: a second write on the same thread would wait for itself")
            }
            do throws(StorageError) {
                try acquireAcrossProcesses(timeoutMs: timeoutMs, deadline: deadline, pid: pid)
            } catch {
                releaseInProcess()
                throw error
            }
            if let fileID { Self.acquiring.withLock { $0[fileID] = me } }
        }
        lockFile.writerPidField.pointee.store(pid, ordering: .relaxed)
    }

    /// Releases the lock (the caller holds it).
    func release() {
        lockFile.writerPidField.pointee.store(0, ordering: .relaxed)
        if let fileID { _ = Self.acquiring.withLock { $0.removeValue(forKey: fileID) } }
        if fd >= 0 {
            let old = lockFile.writerWord.pointee.exchange(0, ordering: .releasing)
            if old & WriterWord.waiting != 0 { cove_futex_wake_all(lockFile.writerWordAddress) }
        }
        releaseInProcess()
    }

    private func releaseInProcess() {
        pthread_mutex_lock(mutex)
        held = false
        pthread_cond_signal(cond)
        pthread_mutex_unlock(mutex)
    }

    private func acquireAcrossProcesses(timeoutMs: Int64, deadline: UInt64, pid: UInt64) throws(StorageError) {
        if handleSlot < 0 { try claimHandleSlot() }
        let word = lockFile.writerWord
        if word.pointee.compareExchange(expected: 0, desired: token, ordering: .acquiring).exchanged { return }
        // Contended: from now on take the word with the waiting bit, as others may wait too.
        while true {
            let seen = word.pointee.load(ordering: .acquiring)
            if seen == 0 {
                if word.pointee.compareExchange(expected: 0, desired: token | WriterWord.waiting, ordering: .acquiring).exchanged { return }
                continue
            }
            if try holderIsGone(seen) {
                // Its handle byte is free: the holder died. Clear the word (unless it moved on).
                if word.pointee.compareExchange(expected: seen, desired: 0, ordering: .relaxed).exchanged {
                    cove_futex_wake_all(lockFile.writerWordAddress)
                }
                continue
            }
            let now = monotonicNow()
            if timeoutMs >= 0 && now >= deadline {
                let other = lockFile.writerPidField.pointee.load(ordering: .relaxed)
                let who = other == pid ? " (held by another realm of this process)" : other != 0 ? " (held by pid \(other))" : ""
                throw .locked("the write lock of '\(lockFile.path)' was not free within \(timeoutMs) ms\(who)")
            }
            if seen & WriterWord.waiting == 0 {
                if !word.pointee.compareExchange(expected: seen, desired: seen | WriterWord.waiting, ordering: .relaxed).exchanged { continue }
            }
            // Sleep until a release wakes this process, or 10 ms pass to look at the holder again.
            let nap = timeoutMs >= 0 ? min(deadline - now, 10_000_000) : 10_000_000
            _ = cove_futex_wait(lockFile.writerWordAddress, seen | WriterWord.waiting, Int64(nap))
        }
    }

    /// Whether the handle named by writer word `seen` is gone: no handle holds its byte.
    private func holderIsGone(_ seen: UInt32) throws(StorageError) -> Bool {
        let slot = Int((seen & WriterWord.slotMask) >> WriterWord.slotShift) - 1
        guard slot >= 0 else { return true }
        var fl = flock()
        fl.l_type = Int16(F_WRLCK)
        fl.l_whence = Int16(SEEK_SET)
        fl.l_start = off_t(LockLayout.handleByteBase + Int64(slot))
        fl.l_len = 1
        fl.l_pid = 0
        while fcntl(fd, F_OFD_GETLK_, &fl) != 0 {
            let e = errno
            if e != EINTR { throw systemError(e, "cannot test a lock of '\(lockFile.path)'") }
        }
        return fl.l_type == Int16(F_UNLCK)
    }

    /// Takes the first free handle byte for this handle (for as long as its lock file is open).
    /// A word still naming the byte (its previous holder died) is cleared by this handle's own
    /// acquisition: the kernel reports no conflict with a lock of the asking description, so
    /// `holderIsGone` finds that holder gone.
    private func claimHandleSlot() throws(StorageError) {
        for slot in 0..<LockLayout.handleSlotCount {
            let rc = ofdLock(fd, byte: LockLayout.handleByteBase + Int64(slot), type: Int32(F_WRLCK), wait: false)
            if rc == EAGAIN { continue }
            if rc != 0 { throw systemError(rc, "cannot lock a handle byte of '\(lockFile.path)'") }
            let nonce = UInt32.random(in: 0...UInt32.max)
            handleSlot = slot
            token = (UInt32(slot + 1) << WriterWord.slotShift) | (nonce & WriterWord.nonceMask)
            return
        }
        throw .locked("'\(lockFile.path)' has \(LockLayout.handleSlotCount) handles writing to it already")
    }
}

/// The writer word of the lock file: 0 when free, otherwise the holder's handle byte number + 1
/// (bits 16-30), a nonce of the holder's handle (bits 0-15), and bit 31 when someone waits.
enum WriterWord {
    static let waiting: UInt32 = 1 << 31
    static let slotShift: UInt32 = 16
    static let slotMask: UInt32 = 0x7FFF_0000
    static let nonceMask: UInt32 = 0xFFFF
}

/// Nanoseconds on the monotonic clock.
public func monotonicNow() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}
