// Storage: one open database file. It opens or creates the file, recovers from a torn last
// commit, and hands out read snapshots and the one write transaction; commit, free space and
// verify live in the Storage+*.swift files. docs/FORMAT.md describes the file and the protocol.
import Glibc
import Synchronization

/// How hard a commit works to survive a crash.
public enum Durability: Sendable, Equatable {
    /// One `fdatasync` per commit: a commit that returned survives power loss.
    case full
    /// No flush: a commit survives the process crashing, not the machine losing power.
    case noSync
    /// An unlinked temporary file: nothing survives closing.
    case memoryOnly
}

/// Enumerates the pages a catalog entry owns outside the catalog tree (a table's tree, its
/// indexes), so that `Storage.verify()` can account for every page of the file. The storage
/// knows nothing of what catalog values mean; the layer that writes them supplies this.
/// Arguments: the snapshot being verified, the entry's key and value, and the function to call
/// with each page (which checks its checksum and that no page is counted twice).
public typealias CatalogPageWalker = @Sendable (
    _ snapshot: Snapshot, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer,
    _ page: (PageNumber) throws(StorageError) -> Void
) throws(StorageError) -> Void

/// How a `Storage` is opened.
public struct StorageOptions: Sendable {
    /// Flushing policy of commits (`.memoryOnly` also makes `open` ignore the path).
    public var durability: Durability = .full
    /// Open without writing: `beginWrite` fails with `.readOnly`, the file must exist.
    public var readOnly = false
    /// The cap on distinct versions pinned at once across every process, the latest included;
    /// 0 = unlimited. Beyond it `beginWrite` and `commit` fail with `.tooManyVersions`.
    public var maxActiveVersions: UInt64 = 0
    /// How long `beginWrite` waits for the write lock, in milliseconds; -1 = forever.
    public var writeTimeoutMs: Int64 = -1
    /// The largest the file may grow, in bytes: the size of the address range reserved for
    /// its mapping (address space only, not memory). Default 256 GiB. Where the process cannot
    /// reserve that much (`ulimit -v`, valgrind), open takes the largest half, quarter, ... of
    /// it that it can, but never less than twice the file's size; the file is then limited to
    /// that until it is opened again.
    public var maxFileSize: UInt64 = 256 << 30
    /// Opens the data file; nil uses `PosixFile.open`. Tests inject `FaultInjectingFile` here.
    public var fileFactory: FileIOFactory?
    /// Accounts for pages that catalog entries own, for `verify()`; nil: catalog values own none.
    public var catalogPages: CatalogPageWalker?
    /// The 64-byte key of an encrypted file (docs/FORMAT.md, "Encrypted files"); nil for a
    /// plain file. A new file opened with a key is encrypted; an existing one must have been
    /// made with the same key (`.decryption` otherwise, and for a plain file given a key).
    public var encryptionKey: [UInt8]?

    /// The defaults: full durability, read-write, no version cap, wait forever for the lock.
    public init() {}

    /// Options with the given policies.
    public init(durability: Durability = .full, readOnly: Bool = false, maxActiveVersions: UInt64 = 0,
                writeTimeoutMs: Int64 = -1, maxFileSize: UInt64 = 256 << 30,
                fileFactory: FileIOFactory? = nil, catalogPages: CatalogPageWalker? = nil) {
        self.durability = durability
        self.readOnly = readOnly
        self.maxActiveVersions = maxActiveVersions
        self.writeTimeoutMs = writeTimeoutMs
        self.maxFileSize = maxFileSize
        self.fileFactory = fileFactory
        self.catalogPages = catalogPages
    }
}

/// One open database file: the entry point of the storage engine.
///
/// Any number of snapshots may be open at once, on any threads; one write transaction at a
/// time per file across every handle and process (others wait in `beginWrite`). Readers never
/// wait for the writer nor for each other.
///
/// `@unchecked Sendable`: every mutable field is behind `state` (a mutex) or atomic; `file`,
/// `lock` and `writerLock` are themselves safe to share (see their comments), and the rest is
/// immutable after `open`.
public final class Storage: @unchecked Sendable {
    /// The file's path; nil for a memory-only database.
    public let path: String?
    /// What this open's recovery left out: set when this handle opened the file first (no other
    /// handle had it open) and the newest commit on disk did not check out, so the version
    /// before it was opened. Nil when nothing was discarded.
    public let recovery: RecoveryReport?
    /// The options the storage was opened with.
    public let options: StorageOptions
    let file: PageFile
    let lock: LockFile
    let writerLock: WriterLock
    /// The random id stored in the meta slots and the lock file.
    let fileId: UInt64
    let pid: UInt64
    /// A name for messages: the path or "a memory-only database".
    let name: String

    struct State {
        /// Why the handle can no longer be used: closed, or poisoned by a failed commit.
        var unusable: String?
        /// Reader slots this handle claimed and does not use now.
        var idleSlots: [Int] = []
        /// Whether `close()` was called (then slots go back to every process as they free up).
        var closedByUser = false
        /// The newest meta this handle has read, and the slot it is in.
        var latest: MetaSlot {
            get { latestBox.meta }
            set { latestBox = MetaBox(newValue) }
        }
        /// The same meta, shared by the snapshots that read it: a begin-read retains it
        /// instead of copying the meta and retaining each of its lists.
        var latestBox: MetaBox
        var latestSlot: Int
    }
    let state: Mutex<State>
    /// How many pages this handle's last commit wrote (0 before the first): the next write
    /// transaction looks for free runs about that long (WriteTransaction.wantedRun).
    let pagesLastWritten = Atomic<Int>(0)
    /// How many of this handle's commits wrote their meta slot in one run with their pages, one
    /// place on the disk (docs/FORMAT.md, "Slot areas"): what the tests check of placement.
    let oneRunCommits = Atomic<Int>(0)
    /// What the last commit that looked for free pages at the end of the file and found none
    /// to give back saw (`WriteTransaction.giveBackTail`): the next ones look again only once
    /// the free pages have grown by a quarter (so that while a file grows the looks are few), or,
    /// when few pages in use stood in the last
    /// eighth of the file, a commit has freed one there (copied elsewhere, as copy-on-write
    /// moves the pages it rewrites) or, pages held for readers standing there, the oldest
    /// pinned version has moved; and, whatever it saw, after `WriteTransaction.tailLookEvery`
    /// commits (copy-on-write moves the pages in use down as they are rewritten).
    let tailSweep = Mutex<TailSweep?>(nil)
    /// How many looks at the end of the file this handle's commits made (what the tests check
    /// of how rarely a look that gives nothing back is repeated).
    let tailLooks = Atomic<Int>(0)

    struct TailSweep {
        /// The base version of the look.
        var version: UInt64
        var freePages: UInt64
        var oldestPinned: UInt64
        var heldInTheWay: Bool
        /// The first page of the part of the file watched (nil: none watched).
        var watchFrom: PageNumber?
    }

    func commitsInOneRun() -> Int {
        oneRunCommits.load(ordering: .relaxed)
    }
    /// The page memory of the last write transaction, kept for the next one (`PageBuffers`).
    let pageBuffers = Mutex<PageBuffers?>(nil)

    init(path: String?, options: StorageOptions, file: PageFile, lock: LockFile, meta: MetaSlot, slot: Int,
                 recovery: RecoveryReport? = nil) {
        self.path = path
        self.recovery = recovery
        self.options = options
        self.file = file
        self.lock = lock
        writerLock = WriterLock(lockFile: lock)
        fileId = meta.fileId
        pid = UInt64(getpid())
        name = path.map { "'\($0)'" } ?? "a memory-only database"
        state = Mutex(State(unusable: nil, latestBox: MetaBox(meta), latestSlot: slot))
    }

    deinit {
        // Every snapshot holds the storage, so none is left: each claimed slot is idle.
        let slots = state.withLock { $0.idleSlots }
        for slot in slots { lock.releaseSlot(slot) }
        file.io.close()
    }

    // MARK: Opening

    /// Opens the database at `path`, creating it if the file is missing or empty; nil (or
    /// `.memoryOnly` durability) makes a memory-only database in an unlinked temporary file.
    /// If the last commit was torn by a crash, the version before it is the one opened.
    /// - Throws: `.io` (cannot open or create, naming the path and the reason),
    ///   `.corrupt` (not a Cove file, or damaged meta slots), `.format` (a newer format),
    ///   `.readOnly` (a read-only open of an empty file), `.invalidArgument`.
    public static func open(path: String?, options: StorageOptions = StorageOptions()) throws(StorageError) -> Storage {
        let factory: FileIOFactory
        if let custom = options.fileFactory {
            factory = custom
        } else {
            factory = PosixFile.open(path:mode:)
        }
        guard let path, options.durability != .memoryOnly else {
            return try openMemoryOnly(options: options, factory: factory)
        }
        let key = try options.encryptionKey.map { bytes throws(StorageError) in try EncryptionKey(bytes) }
        var io = try factory(path, options.readOnly ? .readOnly : .readWrite)
        try refuseForeignFile(io, encrypted: key != nil)
        if let key { io = try EncryptedFile(wrapping: io, key: key) }
        let file = try PageFile(io: io, reservation: options.maxFileSize)
        guard let (lock, initializer) = try LockFile.open(lockPath: path + ".lock") else {
            // A read-only file system: no process can write this database, so no other process
            // needs to see this one's pins.
            let (meta, slot, report) = try recover(file, readOnly: true, durability: options.durability)
            let lock = try LockFile.inMemory(description: "'\(path)' (read-only file system)", fileId: meta.fileId)
            lock.initialize(fileId: meta.fileId, latestVersion: meta.version, latestSlot: UInt64(slot))
            return Storage(path: path, options: options, file: file, lock: lock, meta: meta, slot: slot, recovery: report)
        }
        if initializer {
            // No other handle has the database open: the lock file's contents are stale (a
            // crash may have left pins and a version that did not survive); recover the data
            // file and start a new session.
            let abandoned = try peekFileId(file).map { lock.abandonedVersion(fileId: $0) } ?? 0
            let (meta, slot, report) = try recover(file, readOnly: options.readOnly, durability: options.durability, skipping: abandoned)
            lock.initialize(fileId: meta.fileId, latestVersion: meta.version, latestSlot: UInt64(slot))
            try lock.finishInitialization()
            return Storage(path: path, options: options, file: file, lock: lock, meta: meta, slot: slot, recovery: report)
        }
        // Join the session of the handles already open: the latest version is the one they
        // published.
        file.secondSlot = try secondSlotPage(file)
        try file.ensureMapped(pages: file.secondSlot + 1)
        for _ in 0..<1000 {
            let v = lock.latestVersion
            if let (meta, slot) = try readMeta(file, version: v, fileId: lock.fileId) {
                return Storage(path: path, options: options, file: file, lock: lock, meta: meta, slot: slot)
            }
            if lock.latestVersion == v {
                throw .io("the lock file '\(path).lock' names version \(v), which \(path) does not hold: another process has a different file open under this name")
            }
        }
        throw .io("cannot read a stable version of '\(path)'")
    }

    private static func openMemoryOnly(options: StorageOptions, factory: FileIOFactory) throws(StorageError) -> Storage {
        if options.readOnly {
            throw .invalidArgument("a memory-only database cannot be opened read-only")
        }
        var dir = "/tmp"
        if let t = getenv("TMPDIR"), t.pointee != 0 { dir = String(cString: t) }
        let key = try options.encryptionKey.map { bytes throws(StorageError) in try EncryptionKey(bytes) }
        var io = try factory(dir, .temporary)
        if let key { io = try EncryptedFile(wrapping: io, key: key) }
        var options = options
        options.durability = .memoryOnly
        let fileId = UInt64.random(in: 1...UInt64.max)
        try writeNewFile(io, fileId: fileId, sync: false)
        let file = try PageFile(io: io, reservation: options.maxFileSize)
        try file.ensureMapped(pages: MetaSlot.newFilePages)
        let meta = MetaSlot.empty(version: 1, fileId: fileId)
        file.secondSlot = meta.secondSlot
        let lock = try LockFile.inMemory(description: "a memory-only database", fileId: fileId)
        lock.initialize(fileId: fileId, latestVersion: 1, latestSlot: 1)
        return Storage(path: nil, options: options, file: file, lock: lock, meta: meta, slot: 1)
    }

    /// Refuses a file that is plainly not a Cove file before creating its lock file, or one
    /// whose encryption is not as the open expects (`encrypted`: a key was given). A file
    /// whose first bytes are zero may be one being created right now: the locked path decides.
    /// `io` is the file as it lies on the disk.
    static func refuseForeignFile(_ io: any FileIO, encrypted: Bool) throws(StorageError) {
        let size = try io.size()
        if size == 0 { return }
        let sealed = try encryptedTrailerCheck(io) != nil
        if sealed {
            if encrypted { return }
            throw .decryption("'\(io.path)' is encrypted: open it with its encryption key")
        }
        let magic = withUnsafeBytes(of: MetaSlot.magic.littleEndian) { Array($0) }
        for (pgno, _) in MetaSlot.candidatePages where try readBytes(io, count: 8, at: pgno * UInt64(pageSize)) == magic {
            if encrypted { throw .decryption("'\(io.path)' is not encrypted: open it without an encryption key") }
            return
        }
        let head = try readBytes(io, count: 8, at: 0)
        if head.count == 8 && head.allSatisfy({ $0 == 0 }) { return }
        throw .corrupt("'\(io.path)' is not a Cove file (no Cove header in its meta slots)")
    }

    /// Writes a new, empty database: version 0 in slot 0 (page 0), version 1 in slot 1 (page
    /// 8), so that both slots are valid from the start, and the slots' areas zeroed and free.
    static func writeNewFile(_ io: any FileIO, fileId: UInt64, sync: Bool) throws(StorageError) {
        let bytes = Int(MetaSlot.newFilePages) * pageSize
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: pageSize)
        defer { buffer.deallocate() }
        memset(buffer, 0, bytes)
        MetaSlot.empty(version: 0, fileId: fileId).encode(into: buffer)
        MetaSlot.empty(version: 1, fileId: fileId).encode(into: buffer + Int(MetaSlot.spreadSecondSlot) * pageSize)
        try io.write(UnsafeRawBufferPointer(start: buffer, count: bytes), at: 0)
        if sync {
            try io.sync()
            syncDirectory(of: io.path)
        }
    }

    /// Flushes the directory entry of a new file (best effort: some file systems refuse).
    private static func syncDirectory(of path: String) {
        var dir = "."
        if let slash = path.lastIndex(of: "/") {
            dir = slash == path.startIndex ? "/" : String(path[..<slash])
        }
        let fd = Glibc.open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            _ = fsync(fd)
            Glibc.close(fd)
        }
    }

    /// Finds the version to open, the caller holding the lock file exclusively: the newest meta
    /// slot that is valid, fits the file, and whose written-page list checks out (every page
    /// the commit wrote is there with the checksum it was written with); else the other slot,
    /// the version before, which the torn commit could not have touched. Creates the database
    /// if the file is empty.
    static func recover(_ file: PageFile, readOnly: Bool, durability: Durability,
                        skipping abandoned: UInt64 = 0) throws(StorageError) -> (MetaSlot, Int, RecoveryReport?) {
        let io = file.io
        var size = try io.size()
        let newFileBytes = MetaSlot.newFilePages * UInt64(pageSize)
        let unfinished = size <= newFileBytes ? try readBytesIfIntact(io, count: Int(size), at: 0)?.allSatisfy { $0 == 0 } ?? false : false
        if unfinished {
            // Empty, or a creation that crashed before its meta slots were written.
            if readOnly {
                throw .readOnly("'\(io.path)' is empty and opened read-only, so it cannot be initialised")
            }
            try writeNewFile(io, fileId: UInt64.random(in: 1...UInt64.max), sync: durability == .full)
            size = try io.size()
        }
        guard size >= UInt64(pageSize) else {
            throw .corrupt("'\(io.path)' is not a Cove file (\(size) bytes, shorter than a meta slot)")
        }
        try file.ensureMapped(pages: 1)
        if size >= UInt64(2 * pageSize) { try file.ensureMapped(pages: size / UInt64(pageSize)) }
        let filePages = size / UInt64(pageSize)

        let scan = try scanSlots(file, filePages: filePages, skipping: abandoned)
        var reasons = scan.reasons
        var leftOut = scan.leftOut
        for c in scan.candidates {
            do throws(StorageError) {
                try scan.checkWrittenPages(of: c, in: file)
                file.secondSlot = c.meta.secondSlot
                let discarded = leftOut.filter { $0.version > c.meta.version }
                let report = discarded.max { $0.version < $1.version }.map { newest in
                    RecoveryReport(discardedVersion: newest.version, openedVersion: c.meta.version,
                                   reason: discarded.map(\.why).joined(separator: "; "))
                }
                return (c.meta, c.slot, report)
            } catch {
                let why = "slot \(c.slot) (page \(c.meta.slotPage(c.slot)), version \(c.meta.version)) is a torn commit: \(error.message)"
                reasons.append(why)
                leftOut.append((c.meta.version, why))
            }
        }
        throw .corrupt("the meta slots of '\(io.path)' are damaged: " + reasons.joined(separator: "; "))
    }

    /// What the meta slots of a file hold: the valid slots that fit the file (newest first),
    /// with a private copy of each; why each other one was left out; and the versions a slot
    /// holds that do not fit the file.
    struct SlotScan {
        var candidates: [(meta: MetaSlot, slot: Int, copy: [UInt8])] = []
        var reasons: [String] = []
        /// Versions a slot holds that the open leaves out, with why (a failed commit's
        /// version, skipped on purpose, is not one).
        var leftOut: [(version: UInt64, why: String)] = []

        /// Checks the written-page list of candidate `c` (see `checkWrittenPages`).
        func checkWrittenPages(of c: (meta: MetaSlot, slot: Int, copy: [UInt8]), in file: PageFile) throws(StorageError) {
            let page = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 16)
            defer { page.deallocate() }
            c.copy.withUnsafeBytes { page.copyMemory(from: $0.baseAddress!, byteCount: pageSize) }
            try Storage.checkWrittenPages(file, meta: c.meta, metaPage: page)
        }
    }

    /// Reads the meta slots of `file` (its first `filePages` pages mapped), leaving out the
    /// version `abandoned` (a commit that failed), if not 0.
    /// - Throws: `.format` for a slot of a newer format, `.corrupt` when neither slot is a
    ///   Cove meta slot.
    static func scanSlots(_ file: PageFile, filePages: UInt64, skipping abandoned: UInt64 = 0) throws(StorageError) -> SlotScan {
        // Slot 0 is page 0; slot 1 is page 8, or page 1 in a file made before format 5. Each
        // slot names the page of the second, so a meta found on the other candidate page (a
        // page of data in this file's layout never decodes as one) does not count.
        var scan = SlotScan()
        var anyCove = false
        for (pgno, slot) in MetaSlot.candidatePages {
            guard pgno < filePages else { continue }
            let place = "slot \(slot) (page \(pgno))"
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 16)
            defer { buffer.deallocate() }
            do throws(StorageError) {
                try file.copyPage(pgno, into: buffer)
            } catch .corrupt(let why) {
                // An encrypted slot that does not authenticate: torn or damaged.
                anyCove = true
                scan.reasons.append("\(place): \(why)")
                continue
            }
            let copy = Array(UnsafeRawBufferPointer(start: buffer, count: pageSize))
            switch copy.withUnsafeBytes({ MetaSlot.decode($0.baseAddress!) }) {
            case .notCove:
                if pgno == 0 { scan.reasons.append("\(place) has no Cove header") }
            case .damaged(let why):
                anyCove = true
                scan.reasons.append("\(place): \(why)")
            case .unsupported(let why):
                throw .format("'\(file.io.path)' was written by a newer Cove: meta \(place) has \(why)")
            case .valid(let meta):
                anyCove = true
                if meta.slotPage(slot) != pgno {
                    scan.reasons.append("\(place) holds a meta slot of a file whose slot \(slot) is page \(meta.slotPage(slot))")
                } else if abandoned != 0 && meta.version == abandoned {
                    scan.reasons.append("\(place) holds version \(abandoned), whose commit failed")
                } else if meta.pageCount > filePages {
                    let why = "\(place) (version \(meta.version)) records \(meta.pageCount) pages, the file has \(filePages)"
                    scan.reasons.append(why)
                    scan.leftOut.append((meta.version, why))
                } else {
                    scan.candidates.append((meta, slot, copy))
                }
            }
        }
        guard anyCove else { throw .corrupt("'\(file.io.path)' is not a Cove file (no Cove header in its meta slots)") }
        scan.candidates.sort { $0.meta.version > $1.meta.version }
        return scan
    }

    /// The page of the second meta slot of a file other handles have open (and recovered): as
    /// slot 0 names it, else as a slot at page 1 does (a file made before format 5), else 8.
    private static func secondSlotPage(_ file: PageFile) throws(StorageError) -> PageNumber {
        for pgno in [PageNumber(0), 1] {
            guard let bytes = try readBytesIfIntact(file.io, count: pageSize, at: pgno * UInt64(pageSize)),
                  bytes.count == pageSize,
                  case .valid(let meta) = bytes.withUnsafeBytes({ MetaSlot.decode($0.baseAddress!) }),
                  pgno == 0 || meta.secondSlot == 1 else { continue }
            return meta.secondSlot
        }
        return MetaSlot.spreadSecondSlot
    }

    /// The file id in either meta slot that holds together, if any.
    private static func peekFileId(_ file: PageFile) throws(StorageError) -> UInt64? {
        for (pgno, _) in MetaSlot.candidatePages {
            guard let bytes = try readBytesIfIntact(file.io, count: pageSize, at: pgno * UInt64(pageSize)),
                  bytes.count == pageSize else { continue }
            if case .valid(let meta) = bytes.withUnsafeBytes({ MetaSlot.decode($0.baseAddress!) }) { return meta.fileId }
        }
        return nil
    }

    /// As `readBytes`, or nil where an encrypted page read does not authenticate (a torn or
    /// damaged meta slot, which the caller passes over as it passes over one that does not
    /// decode).
    static func readBytesIfIntact(_ io: any FileIO, count: Int, at offset: UInt64) throws(StorageError) -> [UInt8]? {
        do throws(StorageError) {
            return try readBytes(io, count: count, at: offset)
        } catch .corrupt(_) {
            return nil
        }
    }

    /// Up to `count` bytes of the file at `offset` (fewer at its end).
    static func readBytes(_ io: any FileIO, count: Int, at offset: UInt64) throws(StorageError) -> [UInt8] {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 8)
        defer { buffer.deallocate() }
        let n = try io.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<count]), at: offset)
        return Array(buffer[..<n])
    }

    /// Checks that every page in `meta`'s written-page list holds what the commit wrote: the
    /// checksum recorded in the list, a matching stored checksum, the commit's version.
    static func checkWrittenPages(_ file: PageFile, meta: MetaSlot, metaPage: UnsafeRawPointer) throws(StorageError) {
        try WrittenPageList.forEach(meta: meta, metaPage: metaPage, page: { pgno throws(StorageError) in try file.unverifiedPage(pgno) }) {
            (pgno, crc) throws(StorageError) in
            guard meta.holdsData(pgno) else {
                throw .corrupt("the written-page list names page \(pgno), a meta slot or outside the file")
            }
            let p = try file.unverifiedPage(pgno)
            let computed = PageHeader.computeChecksum(p)
            guard computed == crc, PageHeader.storedChecksum(p) == crc, PageHeader.version(p) == meta.version else {
                throw .corrupt("page \(pgno) does not hold what version \(meta.version) wrote")
            }
        }
    }

    /// The meta slot holding `version`, read from a private copy, or nil if neither slot holds
    /// it any more (a newer commit has reused its slot).
    static func readMeta(_ file: PageFile, version: UInt64, fileId: UInt64) throws(StorageError) -> (MetaSlot, Int)? {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 16)
        defer { buffer.deallocate() }
        for slot in 0..<2 {
            do throws(StorageError) {
                try file.copyPage(file.slotPage(slot), into: buffer)
            } catch .corrupt(_) {
                continue
            }
            guard case .valid(let meta) = MetaSlot.decode(buffer), meta.version == version else { continue }
            guard meta.fileId == fileId else {
                throw .io("'\(file.io.path)' is not the database its lock file belongs to (file id \(meta.fileId), lock file \(fileId))")
            }
            return (meta, slot)
        }
        return nil
    }

    // MARK: State

    /// The newest committed version, as published in the lock file: it sees other handles' and
    /// other processes' commits at once.
    /// - Complexity: O(1), one atomic load.
    public func latestVersion() -> UInt64 {
        lock.latestVersion
    }

    /// The number of commits published since the lock file was made (it restarts with it): a
    /// cheap "did anything change" check for pollers.
    public func commitCounter() -> UInt64 {
        lock.commitCounter
    }

    /// Waits until the commit counter differs from `counter` or `timeoutMs` passes (-1:
    /// forever): a commit of this process wakes it at once, one of another process at the next
    /// poll (with a backoff from 50 µs to 2 ms). It also ends when `interrupted` (checked at
    /// every wake-up; `wakeCommitWaiters` wakes it) returns true.
    /// - Returns: the commit counter when the wait ended.
    public func waitForCommit(after counter: UInt64, timeoutMs: Int64, or interrupted: () -> Bool = { false }) -> UInt64 {
        // A timeout too long to add to the clock (or negative) waits forever.
        let (nanos, overflow) = UInt64(clamping: timeoutMs).multipliedReportingOverflow(by: 1_000_000)
        let (sum, late) = monotonicNow().addingReportingOverflow(nanos)
        let deadline = timeoutMs >= 0 && !overflow && !late ? sum : UInt64.max
        var pause: UInt64 = 50_000
        let bell = lock.bell
        while true {
            let rung = bell.count
            let now = lock.commitCounter
            if now != counter || interrupted() { return now }
            let t = monotonicNow()
            if t >= deadline { return now }
            bell.wait(after: rung, until: t + min(pause, deadline - t))
            pause = min(pause * 2, 2_000_000)
        }
    }

    /// Wakes this process's `waitForCommit` calls on this file without a commit, so that they
    /// check their `interrupted` condition at once.
    public func wakeCommitWaiters() {
        lock.bell.ring()
    }

    /// The number of distinct versions pinned by every reader of every process, the latest
    /// version included whether pinned or not. Pins of processes that died are released first.
    /// - Complexity: O(r log r) for r reader slots in use, plus one `kill(pid, 0)` per other
    ///   process holding a pin.
    public func activeVersionCount() -> UInt64 {
        lock.reapDeadReaders(pid: pid, all: false)
        return lock.scanReaders(latest: lock.latestVersion).distinctVersions
    }

    /// Throws `.closed` if the handle was closed or poisoned.
    func checkUsable() throws(StorageError) {
        if let why = state.withLock({ $0.unusable }) { throw .closed(why) }
    }

    /// Makes the handle unusable after a failed commit.
    func poison(_ error: StorageError) {
        state.withLock { s in
            if s.unusable == nil {
                s.unusable = "\(name) is unusable after a failed commit (\(error.message)); reopen it"
            }
        }
    }

    /// The meta of `version` (normally the cached latest), and its slot; nil if a newer
    /// commit has already overwritten its slot.
    func meta(version: UInt64) throws(StorageError) -> (MetaSlot, Int)? {
        let cached = state.withLock { ($0.latest, $0.latestSlot) }
        if cached.0.version == version { return cached }
        guard let found = try Storage.readMeta(file, version: version, fileId: fileId) else { return nil }
        state.withLock { s in
            if found.0.version > s.latest.version {
                s.latest = found.0
                s.latestSlot = found.1
            }
        }
        return found
    }

    // MARK: Readers

    /// Pins the latest version and returns a snapshot of it. End it (or release it) promptly:
    /// a pinned version keeps the pages it uses from being reused, and the file grows.
    /// - Complexity: a few atomic operations; a mutex; reads the meta slot only when the
    ///   version changed since this handle last looked.
    /// - Throws: `.closed`; `.tooManyVersions` when every reader slot of the lock file is in use;
    ///   `.corrupt` if the meta slot does not hold.
    public func beginRead() throws(StorageError) -> Snapshot {
        let (idle, cached) = try state.withLock { s throws(StorageError) -> (Int?, MetaBox) in
            if let why = s.unusable { throw .closed(why) }
            return (s.idleSlots.popLast(), s.latestBox)
        }
        let slot: Int
        if let idle {
            slot = idle
        } else {
            slot = try lock.claimSlot(pid: pid)
        }
        var meta = cached
        while true {
            let v = lock.pin(slot)
            if v == meta.meta.version { break }
            do throws(StorageError) {
                if let (m, _) = try self.meta(version: v) {
                    meta = MetaBox(m)
                    break
                }
            } catch {
                lock.unpin(slot)
                returnSlot(slot)
                throw error
            }
            // The slot was reused by two newer commits between the pin and the read: pin again.
        }
        do throws(StorageError) {
            try file.ensureMapped(pages: meta.meta.pageCount)
        } catch {
            lock.unpin(slot)
            returnSlot(slot)
            throw error
        }
        return Snapshot(storage: self, slot: slot, box: meta)
    }

    /// Gives a snapshot's slot back to this handle's pool (or to everyone once closed).
    func returnSlot(_ slot: Int) {
        let closed = state.withLock { s -> Bool in
            if s.closedByUser { return true }
            s.idleSlots.append(slot)
            return false
        }
        if closed { lock.releaseSlot(slot) }
    }

    // MARK: Writers

    /// Begins the write transaction, waiting for the write lock up to
    /// `options.writeTimeoutMs`. The transaction starts from the latest version of any process.
    /// - Throws: `.readOnly`; `.locked` (timeout); `.tooManyVersions` (more distinct versions
    ///   pinned than `maxActiveVersions`); `.closed`; `.invalidArgument` if this thread already
    ///   has a write transaction open on this handle.
    public func beginWrite() throws(StorageError) -> WriteTransaction {
        try checkUsable()
        if options.readOnly { throw .readOnly("\(name) is open read-only") }
        try writerLock.acquire(timeoutMs: options.writeTimeoutMs, pid: pid)
        do throws(StorageError) {
            try checkUsable()
            lock.reapDeadReaders(pid: pid, all: false)
            let latest = lock.latestVersion
            guard let (base, slot) = try meta(version: latest) else {
                throw .corrupt("\(name): neither meta slot holds the published version \(latest)")
            }
            let scan = lock.scanReaders(latest: latest)
            if options.maxActiveVersions > 0 && scan.distinctVersions > options.maxActiveVersions {
                throw .tooManyVersions("\(name) has \(scan.distinctVersions) versions pinned, more than the \(options.maxActiveVersions) allowed")
            }
            try file.ensureMapped(pages: base.pageCount)
            return WriteTransaction(storage: self, base: base, baseSlot: slot, oldestPinned: scan.oldest)
        } catch {
            writerLock.release()
            throw error
        }
    }

    // MARK: Closing

    /// Closes the handle: later calls fail with `.closed`. Snapshots still open keep working
    /// until they end; the file and its mapping are released with the last of them. An open
    /// write transaction can no longer commit. Closing twice is harmless.
    /// Runs `body` with the database to this handle alone: no other handle, in this process or
    /// another, has it open, and none can open it until `body` returns. Nil, `body` not run,
    /// when another handle has it open.
    public func withSoleAccess<R>(_ body: () throws(StorageError) -> R) throws(StorageError) -> R? {
        guard lock.tryExclusive() else { return nil }
        defer { if !lock.left { try? lock.finishInitialization() } }
        return try body()
    }

    /// Closes this handle and gives up its presence in the lock file at once, whatever still
    /// holds the object: for a handle whose file was just replaced under its name (a compaction),
    /// so that the next handle to open starts a new session with the new file.
    public func closeAndLeave() {
        close()
        lock.leave()
    }

    public func close() {
        let idle = state.withLock { s -> [Int] in
            if s.unusable == nil { s.unusable = "\(name) is closed" }
            s.closedByUser = true
            let idle = s.idleSlots
            s.idleSlots = []
            return idle
        }
        for slot in idle { lock.releaseSlot(slot) }
    }
}

/// What opening a file left out: the newest commit on disk did not check out (a page it wrote
/// does not hold what it wrote, or the file is shorter than it says), so the version before it
/// was opened. After a crash in the middle of a commit this is the commit that never finished;
/// a commit that had finished means the file was damaged since.
public struct RecoveryReport: Sendable, Equatable {
    /// The newest version the file's meta slots hold, which the open left out.
    public let discardedVersion: UInt64
    /// The version the open took instead.
    public let openedVersion: UInt64
    /// Why, naming the slot and the page that failed.
    public let reason: String
}
