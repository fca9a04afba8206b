// The lock file `<path>.lock`: shared memory for every process that has the database open. It
// holds the latest published version, the commit counter, the writer word and the reader slots;
// byte-range locks on it elect the process that initialises it and tell whether a writer's handle
// is alive. Memory-only databases keep the same structure in process memory. docs/FORMAT.md
// explains the protocol.
import Glibc
import Synchronization

/// The layout of the lock file (all integers little-endian; the atomic fields are 8-byte aligned
/// and accessed only with atomic operations).
///
///     offset size field
///     0      8    magic "COVELOCK"
///     8      4    lock-file format (2)
///     12     4    number of reader slots
///     16     8    file id of the database file
///     64     8    latest published version            (atomic)
///     72     8    meta slot holding it (0 or 1)        (atomic)
///     80     8    commit counter                       (atomic)
///     88     8    reader slots in use: high-water mark (atomic)
///     96     8    pid of the writer (informational)    (atomic)
///     104    8    a version whose commit failed after writing its meta slot, 0 if none (atomic)
///     112    4    writer word: 0 free, else the holder's handle byte + 1, nonce, waiting bit (atomic)
///     128    64*n reader slots: version (0 = idle), pid (0 = free), nonce, each an atomic u64
///
/// Byte-range locks (open-file-description locks, released by the kernel when the holder dies):
/// byte 0 is held shared by every open handle and exclusively by the one initialising the file;
/// bytes 2 to 32767 are handle bytes, one held exclusively by each handle that has written
/// (`WriterLock`).
enum LockLayout {
    static let magic: UInt64 = 0x4B43_4F4C_4556_4F43 // "COVELOCK"
    static let format: UInt32 = 2
    static let headerSize = 128
    static let slotSize = 64
    static let size = 128 * 1024
    static let slotCount = (size - headerSize) / slotSize

    static let fileIdOffset = 16
    static let latestVersionOffset = 64
    static let latestSlotOffset = 72
    static let commitCounterOffset = 80
    static let highWaterOffset = 88
    static let writerPidOffset = 96
    static let abandonedOffset = 104
    static let writerWordOffset = 112

    static let presenceByte: Int64 = 0
    /// Handle bytes: a handle that writes holds one exclusively while its lock file is open.
    static let handleByteBase: Int64 = 2
    static let handleSlotCount = 0x7FFE
}

// Linux open-file-description lock commands (fcntl.h defines them only under _GNU_SOURCE).
let F_OFD_GETLK_: Int32 = 36
let F_OFD_SETLK_: Int32 = 37
let F_OFD_SETLKW_: Int32 = 38

/// A byte-range lock request on one byte of `fd`, owned by the open file description, so that
/// two handles in one process exclude each other like two processes do.
/// - Returns: 0 on success, otherwise the errno (EAGAIN when held elsewhere without waiting).
func ofdLock(_ fd: Int32, byte: Int64, type: Int32, wait: Bool) -> Int32 {
    var fl = flock()
    fl.l_type = Int16(type)
    fl.l_whence = Int16(SEEK_SET)
    fl.l_start = off_t(byte)
    fl.l_len = 1
    fl.l_pid = 0
    while true {
        if fcntl(fd, wait ? F_OFD_SETLKW_ : F_OFD_SETLK_, &fl) == 0 { return 0 }
        let e = errno
        if e == EINTR { continue }
        return e == EACCES ? EAGAIN : e
    }
}

/// The shared state of one database: a mapped lock file or, for memory-only databases and
/// read-only file systems, the same bytes in process memory.
///
/// `@unchecked Sendable`: after init only the atomics in `memory` change, through atomic
/// operations; `fd` and `memory` are immutable and valid until deinit.
final class LockFile: @unchecked Sendable {
    /// `<path>.lock`, or a description when in process memory.
    let path: String
    /// The lock file's descriptor; -1 when the state is in process memory (no other process
    /// can open this database, so no byte-range lock is needed).
    let fd: Int32
    let memory: UnsafeMutableRawPointer
    /// Rung by every commit this process publishes (CommitBell.swift).
    let bell: CommitBell

    private init(path: String, fd: Int32, memory: UnsafeMutableRawPointer) {
        self.path = path
        self.fd = fd
        self.memory = memory
        bell = fd >= 0 ? CommitBell.forLockFile(fd) : CommitBell()
    }

    deinit {
        munmap(memory, LockLayout.size)
        if fd >= 0 { close(fd) } // releases this handle's byte-range locks
    }

    /// State in process memory (memory-only databases, read-only file systems).
    static func inMemory(description: String, fileId: UInt64) throws(StorageError) -> LockFile {
        guard let m = mmap(nil, LockLayout.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              m != MAP_FAILED else {
            throw .io("cannot allocate the lock state of \(description): \(errnoText(errno))")
        }
        let lock = LockFile(path: description, fd: -1, memory: m)
        lock.writeHeader(fileId: fileId)
        return lock
    }

    /// Opens `lockPath`, holding its presence byte. The first handle to open it (no other
    /// handle holds the presence byte) gets it exclusively and must call `initialize` and then
    /// `finishInitialization`; the others wait until that is done and join.
    /// - Returns: nil if the lock file cannot be created because the file system is read-only
    ///   (then no process can write the database, and process-memory state is enough).
    /// - Throws: `.io` naming the path.
    static func open(lockPath: String) throws(StorageError) -> (lock: LockFile, initializer: Bool)? {
        let fd = retryOnInterrupt { Glibc.open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644) }
        if fd < 0 {
            if errno == EROFS { return nil }
            throw systemError(errno, "cannot open the lock file '\(lockPath)'")
        }
        var initializer = false
        var rc = ofdLock(fd, byte: LockLayout.presenceByte, type: Int32(F_WRLCK), wait: false)
        if rc == 0 {
            initializer = true
            var st = stat()
            if fstat(fd, &st) != 0 || st.st_size != off_t(LockLayout.size) {
                if retryOnInterrupt({ ftruncate(fd, 0) }) != 0
                    || retryOnInterrupt({ ftruncate(fd, off_t(LockLayout.size)) }) != 0 {
                    let e = errno
                    close(fd)
                    throw systemError(e, "cannot size the lock file '\(lockPath)'")
                }
            }
        } else if rc == EAGAIN {
            // Another handle is open (or initialising): wait for its initialisation to end.
            rc = ofdLock(fd, byte: LockLayout.presenceByte, type: Int32(F_RDLCK), wait: true)
            if rc != 0 {
                close(fd)
                throw systemError(rc, "cannot lock the lock file '\(lockPath)'")
            }
            var st = stat()
            if fstat(fd, &st) != 0 || st.st_size < off_t(LockLayout.size) {
                close(fd)
                throw .io("the lock file '\(lockPath)' is truncated while another process has the database open")
            }
        } else {
            close(fd)
            throw systemError(rc, "cannot lock the lock file '\(lockPath)'")
        }
        guard let m = mmap(nil, LockLayout.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), m != MAP_FAILED else {
            let e = errno
            close(fd)
            throw systemError(e, "cannot map the lock file '\(lockPath)'")
        }
        let lock = LockFile(path: lockPath, fd: fd, memory: m)
        if !initializer {
            // A header that does not hold was left by an initializer that died half way (the
            // kernel released its lock and let this handle in): initialise it again if this
            // handle is now alone; otherwise another joiner is doing so, or a process of
            // another Cove version has the database open.
            for attempt in 0..<200 where !lock.hasValidHeader {
                if ofdLock(fd, byte: LockLayout.presenceByte, type: Int32(F_WRLCK), wait: false) == 0 {
                    initializer = true
                    break
                }
                if attempt == 199 {
                    throw .format("the lock file '\(lockPath)' has another layout: a process of another Cove version has the database open")
                }
                var ts = timespec(tv_sec: 0, tv_nsec: 1_000_000)
                nanosleep(&ts, nil)
            }
        }
        return (lock, initializer)
    }

    /// The version a failed commit of the previous session left in a meta slot (0: none), if
    /// the lock file holds a previous session's header for database `fileId`. Read by the
    /// initializer before `initialize`, so recovery can skip that version even if blanking its
    /// slot failed too.
    func abandonedVersion(fileId: UInt64) -> UInt64 {
        guard memory.load(as: UInt64.self) == LockLayout.magic, self.fileId == fileId else { return 0 }
        return abandonedField.pointee.load(ordering: .acquiring)
    }

    /// Records that the commit of `version` failed after its meta slot was written.
    func abandon(version: UInt64) {
        abandonedField.pointee.store(version, ordering: .releasing)
    }

    /// Resets the state for a new session (the caller holds the presence byte exclusively, so
    /// no other process has the database open): no readers, the given latest version.
    func initialize(fileId: UInt64, latestVersion: UInt64, latestSlot: UInt64) {
        let previousCounter = memory.load(as: UInt64.self) == LockLayout.magic ? counterField.pointee.load(ordering: .relaxed) : 0
        memset(memory, 0, LockLayout.size)
        counterField.pointee.store(previousCounter, ordering: .relaxed)
        latestSlotField.pointee.store(latestSlot, ordering: .relaxed)
        latestField.pointee.store(latestVersion, ordering: .relaxed)
        writeHeader(fileId: fileId)
    }

    /// Downgrades the exclusive presence lock to shared, letting waiting openers join.
    /// Takes the presence byte exclusively when no other handle holds it: true when this handle
    /// has the database to itself (and no other can open it until `finishInitialization()`
    /// gives the byte back). Memory-only state has no other handle.
    /// Whether `leave()` gave up this handle's presence.
    private(set) var left = false

    /// Gives up the presence byte (the handle stays mapped until deinit but counts as gone).
    func leave() {
        left = true
        guard fd >= 0 else { return }
        _ = ofdLock(fd, byte: LockLayout.presenceByte, type: Int32(F_UNLCK), wait: false)
    }

    func tryExclusive() -> Bool {
        guard fd >= 0 else { return true }
        return ofdLock(fd, byte: LockLayout.presenceByte, type: Int32(F_WRLCK), wait: false) == 0
    }

    func finishInitialization() throws(StorageError) {
        guard fd >= 0 else { return }
        let rc = ofdLock(fd, byte: LockLayout.presenceByte, type: Int32(F_RDLCK), wait: false)
        if rc != 0 { throw systemError(rc, "cannot downgrade the lock on '\(path)'") }
    }

    private func writeHeader(fileId: UInt64) {
        memory.storeBytes(of: LockLayout.format, toByteOffset: 8, as: UInt32.self)
        memory.storeBytes(of: UInt32(LockLayout.slotCount), toByteOffset: 12, as: UInt32.self)
        memory.storeBytes(of: fileId, toByteOffset: LockLayout.fileIdOffset, as: UInt64.self)
        // The magic last: a header with the magic is complete (an initializer that dies half
        // way leaves none, and the next handle initialises again).
        atomicMemoryFence(ordering: .releasing)
        memory.storeBytes(of: LockLayout.magic, toByteOffset: 0, as: UInt64.self)
    }

    /// Whether the header is one this build wrote completely.
    var hasValidHeader: Bool {
        memory.load(as: UInt64.self) == LockLayout.magic
            && memory.load(fromByteOffset: 8, as: UInt32.self) == LockLayout.format
            && memory.load(fromByteOffset: 12, as: UInt32.self) == UInt32(LockLayout.slotCount)
    }

    /// The id of the database file this lock file belongs to.
    var fileId: UInt64 { memory.load(fromByteOffset: LockLayout.fileIdOffset, as: UInt64.self) }

    // MARK: Atomic fields

    @inline(__always)
    func atomic(_ offset: Int) -> UnsafeMutablePointer<Atomic<UInt64>> {
        (memory + offset).assumingMemoryBound(to: Atomic<UInt64>.self)
    }

    var latestField: UnsafeMutablePointer<Atomic<UInt64>> { atomic(LockLayout.latestVersionOffset) }
    var latestSlotField: UnsafeMutablePointer<Atomic<UInt64>> { atomic(LockLayout.latestSlotOffset) }
    var counterField: UnsafeMutablePointer<Atomic<UInt64>> { atomic(LockLayout.commitCounterOffset) }
    var highWaterField: UnsafeMutablePointer<Atomic<UInt64>> { atomic(LockLayout.highWaterOffset) }
    var writerPidField: UnsafeMutablePointer<Atomic<UInt64>> { atomic(LockLayout.writerPidOffset) }
    var abandonedField: UnsafeMutablePointer<Atomic<UInt64>> { atomic(LockLayout.abandonedOffset) }
    /// The writer word (`WriterLock`), as an atomic and as the address the futex calls take.
    var writerWord: UnsafeMutablePointer<Atomic<UInt32>> {
        (memory + LockLayout.writerWordOffset).assumingMemoryBound(to: Atomic<UInt32>.self)
    }
    var writerWordAddress: UnsafeMutablePointer<UInt32> {
        (memory + LockLayout.writerWordOffset).assumingMemoryBound(to: UInt32.self)
    }

    /// The latest published version.
    @inline(__always)
    var latestVersion: UInt64 { latestField.pointee.load(ordering: .acquiring) }

    /// The meta slot holding the latest version (read after `latestVersion`; a reader confirms
    /// the slot's version, since a later commit may have moved on).
    var latestSlot: UInt64 { latestSlotField.pointee.load(ordering: .acquiring) }

    /// The number of commits published since the lock file was created.
    var commitCounter: UInt64 { counterField.pointee.load(ordering: .acquiring) }

    /// Makes `version` (in meta slot `slot`) the one new readers pin, and counts the commit.
    /// Sequentially consistent: see `ReaderTable.pin` for the handshake with readers.
    func publish(version: UInt64, slot: UInt64) {
        if abandonedField.pointee.load(ordering: .relaxed) != 0 {
            abandonedField.pointee.store(0, ordering: .relaxed)
        }
        latestSlotField.pointee.store(slot, ordering: .sequentiallyConsistent)
        latestField.pointee.store(version, ordering: .sequentiallyConsistent)
        counterField.pointee.wrappingAdd(1, ordering: .sequentiallyConsistent)
        bell.ring()
    }
}
