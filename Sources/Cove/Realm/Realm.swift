// Realm: an open database as one thread sees it. A live realm pins a snapshot of one version and
// moves forward on refresh or when it begins a write; a frozen realm stays on its version forever.
import CoveCore
import CoveStorage
import CoveSyncCore
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An open Cove database, confined to one thread at a time (frozen realms excepted).
///
/// A live realm reads the version it last advanced to; `refresh()` moves it to the newest commit
/// of any thread or process, and `beginWrite()` does so too before it takes the write lock.
public final class Realm {
    /// The configuration this realm was opened with.
    public let configuration: Configuration
    /// Whether this realm is an immutable snapshot (see `freeze()`).
    public let isFrozen: Bool

    let file: RealmFile
    private var snapshot: Snapshot? { didSet { objects = nil; generation &+= 1 } }
    private var writeTransaction: WriteTransaction? { didSet { objects = nil; generation &+= 1 } }
    /// Grows whenever the realm moves to another version or begins or ends a write, so results
    /// computed before know to run again (with the object store's write count).
    private(set) var generation: UInt64 = 0
    private var closedReason: String?
    /// The object layer over the current transaction, made when first needed.
    private var objects: ObjectStore?
    /// The file's schema, every class of it, keys included: what the object layer works on.
    private(set) var fileSchema: Schema = .empty {
        didSet {
            tableShapes = TableShapes()
            schema = Self.visible(fileSchema, visibleClassNames)
            hiddenClassNames = Self.hidden(fileSchema, schema)
        }
    }
    /// The schema this realm sees, keys included: the file's classes, or those the
    /// configuration's schema names when it gives one (as Realm's `objectTypes`): the file's
    /// other classes stay in it as they are, out of this realm's sight.
    public private(set) var schema: Schema = .empty
    /// The class names the configuration's schema gives, nil for every class of the file.
    private let visibleClassNames: Set<String>?
    /// The file's classes this realm does not see (usually none).
    private var hiddenClassNames: Set<String> = []
    /// The table shapes the transactions of this realm worked out for `fileSchema`.
    private var tableShapes = TableShapes()
    /// The bytes of the schema record `schema` was read from, to notice another process's change.
    private var schemaRecordBytes: [UInt8]?
    /// A committed version whose schema record holds `schemaRecordBytes` (0: none known): a
    /// transaction reading that version skips the check for another realm's schema change,
    /// and a commit of this realm that wrote no schema record passes it on to its version.
    private var schemaKnownAt: UInt64 = 0
    /// The thread a live realm belongs to (`pthread_self()` of the thread that opened it, or of
    /// the one `moveToCurrentThread()` moved it to).
    @usableFromInline let ownerThread = Atomic<UInt>(UInt(pthread_self()))
    /// Set while a migration block runs on this realm's write: it may not commit, cancel or close.
    private var isMigrating = false
    /// The realm's observers and their delivery.
    let notifier = RealmNotifier()
    /// The thread behind `notificationFileDescriptor()`, made when first asked for.
    var watcher: CommitWatcher?
    /// For a frozen realm made by `freeze()`: the live realm it was frozen from, where the
    /// `thaw()` of its objects and collections resolves them.
    weak var liveSource: Realm?
    /// The file's sync session, for a realm that syncs (see `syncSession`).
    var session: SyncSession?
    /// Whether this realm's writes become changesets: a synced realm's, but not those of the
    /// realms its session opens to apply downloads.
    var capturesSync: Bool {
        configuration.syncConfiguration != nil && configuration.opensSyncSession && !isFrozen && !applyingDownload
    }
    /// Set while a write applies downloaded changesets: what it writes came from the server.
    var applyingDownload = false
    /// The subscription set being changed, while a `subscriptions.update` block runs.
    var subscriptionEdit: SyncSubscriptionRecord?

    /// Opens (creating if needed) the realm a configuration describes.
    /// - Throws: `.io` (the file cannot be opened or created), `.corrupt` (not a Cove file, or
    ///   damaged), `.format` (written by a newer Cove), `.invalidArgument` (no path given, a key
    ///   not of 64 bytes), `.decryption` (an encrypted file without its key or with another, a
    ///   plain file with a key).
    public convenience init(configuration: Configuration) throws(CoveError) {
        if let identifier = configuration.inMemoryIdentifier {
            // A file in memory (/dev/shm) shared by every realm of this process with the
            // identifier, removed when the last of them closes.
            if identifier.isEmpty { throw CoveError(.invalidArgument, "an in-memory identifier may not be empty") }
            var shared = configuration
            shared.path = SharedMemoryFiles.path(identifier)
            shared.inMemory = false
            shared.inMemoryIdentifier = nil
            shared.durability = .noSync
            shared.shouldCompactOnLaunch = nil
            try self.init(opening: shared, configuration: configuration, releasing: identifier)
            return
        }
        try self.init(opening: configuration, configuration: configuration, releasing: nil)
    }

    /// Opens `opening` as a realm of `configuration` (the same, or the one with an in-memory
    /// identifier that `opening` resolves to a file); `identifier`, when given, names the shared
    /// in-memory file the realm's file releases when its last user closes.
    private convenience init(opening: Configuration, configuration: Configuration, releasing identifier: String?) throws(CoveError) {
        if opening.path == nil && !opening.inMemory {
            throw CoveError(.invalidArgument, "a configuration needs a path, or inMemory set")
        }
        if let should = opening.shouldCompactOnLaunch, let path = opening.path, !opening.inMemory,
           !opening.readOnly, access(path, F_OK) == 0 {
            try Self.compactFile(atPath: path, encryptionKey: opening.encryptionKey, shouldCompact: should)
        }
        if let identifier { SharedMemoryFiles.acquire(identifier) }
        let storage: Storage
        do {
            storage = try Storage.open(path: opening.inMemory ? nil : opening.path, options: opening.storageOptions)
        } catch {
            if let identifier { SharedMemoryFiles.release(identifier) }
            throw CoveError(error)
        }
        let snapshot: Snapshot
        do {
            snapshot = try storage.beginRead()
        } catch {
            storage.close()
            if let identifier { SharedMemoryFiles.release(identifier) }
            throw CoveError(error)
        }
        let file = RealmFile(storage)
        if let identifier { file.onLastClose = { SharedMemoryFiles.release(identifier) } }
        self.init(configuration: configuration, file: file, frozen: false, snapshot: snapshot)
        do {
            try setUpSchema()
            try setUpSync()
        } catch {
            close()
            throw error
        }
    }

    private init(configuration: Configuration, file: RealmFile, frozen: Bool, snapshot: Snapshot,
                 schema: Schema = .empty, schemaRecordBytes: [UInt8]? = nil, allClasses: Bool = false) {
        let visible = allClasses ? nil : configuration.schema.map { Set($0.classNames) }
        visibleClassNames = visible
        fileSchema = schema
        self.schema = Self.visible(schema, visible)
        hiddenClassNames = Self.hidden(schema, self.schema)
        self.schemaRecordBytes = schemaRecordBytes
        self.configuration = configuration
        self.file = file
        self.isFrozen = frozen
        self.snapshot = snapshot
        file.retainUser()
    }

    deinit {
        close()
    }

    /// What a thread of the realm's own needs to open frozen copies of it at other versions:
    /// taken on the realm's thread, used on the other.
    struct FrozenSource: @unchecked Sendable {
        let configuration: Configuration
        let file: RealmFile
        let schema: Schema
        let schemaRecordBytes: [UInt8]?
    }

    var frozenSource: FrozenSource {
        FrozenSource(configuration: configuration, file: file, schema: fileSchema, schemaRecordBytes: schemaRecordBytes)
    }

    /// A frozen realm over `snapshot` (which it ends when it closes), on any thread.
    static func frozen(_ source: FrozenSource, at snapshot: Snapshot) -> Realm {
        Realm(configuration: source.configuration, file: source.file, frozen: true, snapshot: snapshot,
              schema: source.schema, schemaRecordBytes: source.schemaRecordBytes)
    }

    // MARK: State

    /// Whether `close()` was called (or a failed commit closed the realm).
    public var isClosed: Bool { closedReason != nil }

    /// Whether a write transaction is in progress on this realm.
    public var isInWriteTransaction: Bool { writeTransaction != nil }

    /// The version this realm sees: the commit version of its snapshot; inside a write, the
    /// version the write started from.
    public var version: UInt64 {
        get throws(CoveError) {
            try checkOpen()
            if let w = writeTransaction { return w.baseVersion }
            return try pinnedSnapshot().version
        }
    }

    /// What opening the file left out, when this process opened it first and the newest commit
    /// on disk did not check out (a page it wrote does not hold what it wrote): the version
    /// discarded, the one opened instead and why. Nil when nothing was discarded, and for a
    /// file another realm of this process (or another process) had open already.
    public var recovery: Recovery? {
        file.storage.recovery.map { Recovery(discardedVersion: $0.discardedVersion, openedVersion: $0.openedVersion, reason: $0.reason) }
    }

    /// A commit the open of a file discarded (`Realm.recovery`). After a crash in the middle of
    /// a commit this is the commit that never finished; a commit that had finished means the
    /// file was damaged since, and its changes are lost.
    public struct Recovery: Sendable, Equatable, CustomStringConvertible {
        /// The newest version the file's meta slots hold, which the open left out.
        public let discardedVersion: UInt64
        /// The version opened instead.
        public let openedVersion: UInt64
        /// Why, naming the meta slot and the page that failed its check.
        public let reason: String

        public var description: String {
            "version \(discardedVersion) was discarded and version \(openedVersion) opened: \(reason)"
        }
    }

    /// How the file's space is used at the version this realm reads: what `cove info` shows,
    /// and what deciding to compact needs.
    public struct FileSpace: Sendable, Equatable {
        /// The file format version (a file of an older format is written in the newest from its
        /// next commit on).
        public let formatVersion: UInt32
        /// The size of a page.
        public let pageSize: Int
        /// The bytes of the file's pages, and of those that hold data of a version in use (the
        /// rest are free: later commits reuse them).
        public let totalBytes: UInt64
        public let usedBytes: UInt64
        public var freeBytes: UInt64 { totalBytes - usedBytes }
    }

    /// How the file's space is used at the version this realm reads (inside a write: the version
    /// the write started from).
    /// - Throws: `.closed`.
    public func fileSpace() throws(CoveError) -> FileSpace {
        try checkOpen()
        let s = try pinnedSnapshot()
        let size = UInt64(CoveStorage.pageSize)
        return FileSpace(formatVersion: s.formatVersion, pageSize: Int(size), totalBytes: s.pageCount * size,
                         usedBytes: (s.pageCount - s.freePageCount) * size)
    }

    /// The number of versions pinned now in the file by every process, the newest included.
    public func activeVersionCount() throws(CoveError) -> UInt64 {
        try checkOpen()
        return file.storage.activeVersionCount()
    }

    // MARK: Transactions

    /// Begins a write transaction, advancing to the newest version first.
    /// - Throws: `.alreadyInWrite`, `.frozen`, `.readOnly`, `.locked` (timeout), `.tooManyVersions`,
    ///   `.closed`.
    public func beginWrite() throws(CoveError) {
        try checkOpen()
        if isFrozen { throw CoveError(.frozen, "a frozen realm cannot write") }
        if writeTransaction != nil { throw CoveError(.alreadyInWrite, "the realm is already in a write transaction") }
        if configuration.readOnly { throw CoveError(.readOnly, "the realm was opened read-only") }
        // Observers hear of everything up to the newest version before the write starts (and
        // never inside it); initial calls wait for the next delivery, after the write.
        if !notifier.isEmpty && !isMigrating {
            if let s = snapshot, s.version != file.storage.latestVersion() {
                do { try repin() } catch { throw CoveError(error) }
            }
            try notifier.deliver(self, initialCalls: false)
        }
        do {
            let w = try file.storage.beginWrite()
            // The write starts from the newest version: the realm's snapshot moves there too, so
            // what it reads inside the write is the write's own state.
            snapshot?.end()
            snapshot = nil
            writeTransaction = w
            // Without observers nothing is left to deliver: the descriptor is drained up to the
            // version the write starts from.
            if notifier.isEmpty { watcher?.acknowledge(file.storage.latestVersion()) }
        } catch {
            throw CoveError(error)
        }
    }

    /// Commits the write transaction; at `.full` durability it is on stable storage on return.
    /// - Throws: `.notInWrite`; `.io`/`.noSpace` (the realm is then closed and the file keeps its
    ///   last committed version); `.tooManyVersions` (the transaction is cancelled).
    public func commitWrite() throws(CoveError) {
        try checkOpen()
        if isMigrating { throw CoveError(.inWrite, "a migration block cannot commit its realm's write: the open commits it") }
        guard let w = writeTransaction else { throw CoveError(.notInWrite, "commit outside a write transaction") }
        var queuedChangesets = false
        if capturesSync, let store = objects {
            // The write as a changeset, queued in the same commit.
            do {
                queuedChangesets = !(try store.syncCapture(wall: SyncClockSource.systemWall())).isEmpty
            } catch {
                writeTransaction = nil
                w.cancel()
                try? repin()
                throw error
            }
        }
        // Every commit leaves a change record, an empty one too: a notifier reads "nothing
        // changed" from it instead of rescanning.
        w.setHistoryRecord((objects?.changes ?? ChangeRecord()).encoded())
        let schemaCarriesOver = schemaKnownAt == w.baseVersion && !(objects?.wroteSchemaRecord ?? false)
        if let store = objects {
            do {
                w.catalog = try store.flush()
            } catch {
                writeTransaction = nil
                w.cancel()
                try? repin()
                throw error
            }
        }
        writeTransaction = nil
        do {
            let committed = try w.commit()
            schemaKnownAt = schemaCarriesOver ? committed : 0
            if queuedChangesets { session?.localChangesCommitted() }
        } catch {
            let e = CoveError(error)
            if e.code == .io || e.code == .noSpace || e.code == .closed {
                close(reason: "the realm was closed after a failed commit: \(e.message)")
            } else {
                try? repin()
            }
            throw e
        }
        do {
            try repin()
        } catch {
            throw CoveError(error)
        }
    }

    /// Discards the write transaction's changes and releases the write lock.
    public func cancelWrite() throws(CoveError) {
        try checkOpen()
        if isMigrating { throw CoveError(.inWrite, "a migration block cannot cancel its realm's write: throw to fail the migration") }
        guard let w = writeTransaction else { throw CoveError(.notInWrite, "cancel outside a write transaction") }
        writeTransaction = nil
        w.cancel()
        do {
            try repin()
        } catch {
            throw CoveError(error)
        }
    }

    /// Runs `block` in a write transaction: commits when it returns, cancels when it throws.
    @discardableResult
    public func write<Result>(_ block: () throws -> Result) throws -> Result {
        try beginWrite()
        let result: Result
        do {
            result = try block()
        } catch {
            if isInWriteTransaction { try? cancelWrite() }
            throw error
        }
        if isInWriteTransaction { try commitWrite() }
        return result
    }

    /// Advances to the newest committed version of any thread or process.
    /// - Returns: whether the version changed.
    /// - Throws: `.inWrite` inside a write, `.frozen`, `.closed`.
    @discardableResult
    public func refresh() throws(CoveError) -> Bool {
        try checkOpen()
        if isFrozen { throw CoveError(.frozen, "a frozen realm cannot refresh") }
        if writeTransaction != nil { throw CoveError(.inWrite, "refresh inside a write transaction") }
        let before = snapshot?.version
        if let s = snapshot, s.version == file.storage.latestVersion() {
            try notifier.deliver(self)
            return false
        }
        do {
            try repin()
        } catch {
            throw CoveError(error)
        }
        try notifier.deliver(self)
        return snapshot?.version != before
    }

    /// Releases the pinned version; the next read pins the newest one.
    /// - Throws: `.inWrite`, `.frozen`, `.closed`.
    public func invalidate() throws(CoveError) {
        try checkOpen()
        if isFrozen { throw CoveError(.frozen, "a frozen realm cannot be invalidated") }
        if writeTransaction != nil { throw CoveError(.inWrite, "invalidate inside a write transaction") }
        snapshot?.end()
        snapshot = nil
    }

    /// An immutable snapshot of this realm's current version, readable from any thread.
    /// - Throws: `.inWrite` inside a write, `.tooManyVersions`, `.closed`.
    public func freeze() throws(CoveError) -> Realm {
        try checkOpen()
        if isFrozen { return self }
        if writeTransaction != nil { throw CoveError(.inWrite, "cannot freeze inside a write transaction") }
        // The frozen realm pins this realm's own version, which this realm's snapshot keeps
        // alive, so the copy cannot miss it.
        let current = try pinnedSnapshot()
        let pinned: Snapshot
        do {
            pinned = try current.duplicate()
        } catch {
            throw CoveError(error)
        }
        let frozen = Realm(configuration: configuration, file: file, frozen: true, snapshot: pinned,
                           schema: fileSchema, schemaRecordBytes: schemaRecordBytes)
        frozen.liveSource = self
        return frozen
    }

    /// Checks the whole file: page checksums, tree order and counts, that live and free pages
    /// partition the file, that every index (primary key and secondary) has exactly one entry
    /// per object, holding its value at the realm's current version, and that every backlink
    /// tree holds exactly the links its property holds, and that every small collection kept
    /// inline is whole and counted by its object. Returns a readable report.
    /// - Throws: `.corrupt` naming the first problem; `.closed`.
    public func verify() throws(CoveError) -> String {
        try checkOpen()
        let report: String
        do {
            report = String(describing: try file.storage.verify())
        } catch {
            throw CoveError(error)
        }
        let store = try objectStore()
        let entries = try store.verifyIndexes()
        let backlinks = try store.verifyBacklinks()
        let inline = try store.verifyCollections()
        return report + "; \(entries) index entries match their objects; \(backlinks) backlink entries match their links; \(inline) inline collections match their objects"
    }

    /// Closes the realm: cancels a write in progress, unpins its version, and closes the file when
    /// no other realm (a frozen one) still uses it. Closing twice is fine.
    public func close() {
        // A migration block closing its realm would commit nothing and leave the open half done:
        // the realm closes when the open fails instead.
        if isMigrating { return }
        close(reason: "the realm is closed")
    }

    // MARK: Objects

    /// The object layer over the current transaction (the write in progress, or the pinned
    /// snapshot), rereading the schema when another realm changed it.
    func objectStore() throws(CoveError) -> ObjectStore {
        try checkOpen()
        if isFrozen {
            // Frozen realms are read by any number of threads at once: each call gets a store of
            // its own over the one immutable snapshot, so no cache is shared between threads.
            guard let snapshot else { throw CoveError(.closed, closedReason ?? "the realm is closed") }
            let store = ObjectStore(pages: TransactionPages(.read(snapshot)), schema: fileSchema, hidden: hiddenClassNames)
            store.isFrozen = true
            return store
        }
        if let s = objects { return s }
        let pages = try currentPages()
        let at = pages.baseVersion
        if at != schemaKnownAt {
            if let bytes = try ObjectStore.schemaRecord(pages, unlessEqualTo: schemaRecordBytes) {
                fileSchema = try SchemaRecord.decode(bytes).schema
                schemaRecordBytes = bytes
            }
            schemaKnownAt = at
        }
        let s = ObjectStore(pages: pages, schema: fileSchema, hidden: hiddenClassNames, shapes: tableShapes)
        if writeTransaction != nil && capturesSync { s.syncDeletedKeys = [:] }
        objects = s
        return s
    }

    /// Brings the file's schema and the configured one together at open (see
    /// `Configuration.schema`); writes the schema when the file has none or an older one.
    private func setUpSchema() throws(CoveError) {
        let record = try currentSchemaRecord()
        guard let wanted = configuration.schema else {
            fileSchema = record?.schema ?? .empty
            return
        }
        if let record, try acceptsAsIs(record, wanted) {
            fileSchema = record.schema
            return
        }
        if configuration.readOnly {
            throw CoveError(.readOnly, record == nil
                ? "the file has no schema yet and the realm is opened read-only"
                : "the file's schema differs from the one given and the realm is opened read-only")
        }
        try beginWrite()
        do throws(CoveError) {
            // Decide again inside the write: another process may have written the schema since.
            let current = try currentSchemaRecord()
            if let current, try acceptsAsIs(current, wanted) {
                fileSchema = current.schema
                try cancelWrite()
                return
            }
            if let current {
                // The file's classes the schema leaves out are not removed: they stay as they are.
                let changes = wanted.changes(from: current.schema.restricted(to: Set(wanted.classNames)))
                // Backlinks are computed: declaring them or not needs no new version (a realm
                // opened with some classes cannot declare those of the classes it leaves out).
                if configuration.schemaVersion <= current.version && !changes.isEmptyBesidesBacklinks {
                    throw CoveError(.schema, "the schema differs from the file's (\(changes)) but schema version \(configuration.schemaVersion) is not higher than the file's \(current.version)")
                }
                if !changes.isAdditiveOnly && configuration.migrationBlock == nil {
                    throw CoveError(.migrationRequired, "the schema changed in ways that need a migration: \(changes)")
                }
            }
            let keyed = try wanted.assigningKeys(previous: current?.schema).keeping(current?.schema)
            let record = SchemaRecord(version: configuration.schemaVersion, schema: keyed)
            // The file as it was, for the migration block to read: the write lock is held, so the
            // newest committed version is the one this write started from.
            var oldRealm: Realm?
            if let current, configuration.migrationBlock != nil, configuration.schemaVersion > current.version {
                oldRealm = try frozenBase(schema: current.schema)
            }
            defer { oldRealm?.close() }
            fileSchema = keyed
            objects = nil
            let store = try objectStore()
            try store.writeSchemaRecord(record.encoded())
            store.changes.schemaChanged = true
            try store.conformTables()
            if let oldRealm, let current, let block = configuration.migrationBlock {
                let migration = Migration(oldRealm: oldRealm, newRealm: self, oldSchemaVersion: current.version, store: store)
                isMigrating = true
                defer { isMigrating = false }
                do {
                    try block(migration, current.version)
                } catch let error as CoveError {
                    throw error
                } catch {
                    throw CoveError(.callback, "the migration block failed: \(error)")
                }
                if !migration.classesToDrop.isEmpty {
                    let kept = try keyed.dropping(migration.classesToDrop)
                    try store.writeSchemaRecord(SchemaRecord(version: configuration.schemaVersion, schema: kept).encoded())
                    store.schema = kept
                    fileSchema = kept
                }
                try store.finishMigration(from: current.schema)
            }
            try commitWrite()
        } catch {
            if isInWriteTransaction { try? cancelWrite() }
            throw error
        }
    }

    /// The change record commit `version` stored in the history: what the notification layer
    /// computes change sets from. Nil when the record was trimmed (no reader pins a version
    /// that old) or the version has none.
    /// - Throws: `.corrupt` for a damaged record; `.closed`.
    package func changeRecord(forVersion version: UInt64) throws(CoveError) -> ChangeRecord? {
        try checkOpen()
        let bytes: [UInt8]?
        do {
            let newest = try file.storage.beginRead()
            defer { newest.end() }
            bytes = try newest.historyRecord(version)
        } catch {
            throw CoveError(error)
        }
        return try bytes.map { (b) throws(CoveError) in try ChangeRecord.decode(b) }
    }

    /// A frozen realm on the newest committed version, with `schema` (a migration's old realm).
    private func frozenBase(schema: Schema) throws(CoveError) -> Realm {
        let base: Snapshot
        do { base = try file.storage.beginRead() } catch { throw CoveError(error) }
        let bytes: [UInt8]?
        do {
            bytes = try ObjectStore.readSchemaRecord(TransactionPages(.read(base)))
        } catch {
            base.end()
            throw error
        }
        return Realm(configuration: configuration, file: file, frozen: true, snapshot: base,
                     schema: schema, schemaRecordBytes: bytes, allClasses: true)
    }

    /// Whether the file's schema record already is what the configuration asks for.
    private func acceptsAsIs(_ record: SchemaRecord, _ wanted: Schema) throws(CoveError) -> Bool {
        if configuration.schemaVersion < record.version {
            throw CoveError(.schema, "schema version \(configuration.schemaVersion) is lower than the file's \(record.version)")
        }
        return record.schema.restricted(to: Set(wanted.classNames)) == wanted && configuration.schemaVersion == record.version
    }

    /// The pages of the current transaction: the write in progress, or the pinned snapshot.
    private func currentPages() throws(CoveError) -> TransactionPages {
        if let w = writeTransaction { return TransactionPages(.write(w)) }
        return TransactionPages(.read(try pinnedSnapshot()))
    }

    /// The schema version of the file at `path`, read without a schema and without changing
    /// the file (Realm's `schemaVersion(at:)`); 0 for a file that holds no schema yet.
    /// - Throws: `.notFound` when there is no file at `path`, and what opening it read-only
    ///   throws (`.corrupt`, `.format`, `.io`).
    public static func schemaVersion(at path: String, encryptionKey: Data? = nil) throws(CoveError) -> UInt64 {
        guard access(path, F_OK) == 0 else { throw CoveError(.notFound, "no file at '\(path)'") }
        let realm = try Realm(configuration: Configuration(path: path, readOnly: true, encryptionKey: encryptionKey))
        defer { realm.close() }
        return try realm.currentSchemaRecord()?.version ?? 0
    }

    func currentSchemaRecord() throws(CoveError) -> SchemaRecord? {
        guard let bytes = try ObjectStore.readSchemaRecord(try currentPages()) else { return nil }
        let record = try SchemaRecord.decode(bytes)
        schemaRecordBytes = bytes
        schemaKnownAt = 0
        return record
    }

    // MARK: Internals

    /// `schema` restricted to `names`, or all of it for nil.
    private static func visible(_ schema: Schema, _ names: Set<String>?) -> Schema {
        names.map { schema.restricted(to: $0) } ?? schema
    }

    /// The classes of `file` that `visible` leaves out.
    private static func hidden(_ file: Schema, _ visible: Schema) -> Set<String> {
        file.classes.count == visible.classes.count ? [] : Set(file.classNames).subtracting(visible.classNames)
    }

    private func close(reason: String) {
        guard closedReason == nil else { return }
        closedReason = reason
        if let session {
            self.session = nil
            SyncSessions.release(session)
        }
        notifier.close()
        watcher?.stop()
        watcher = nil
        writeTransaction?.cancel()
        writeTransaction = nil
        snapshot?.end()
        snapshot = nil
        file.releaseUser()
    }

    /// Throws `.closed` once the realm is closed: the first check of the calls that would
    /// otherwise answer from what a handle remembers (a frozen object freezing to itself) or
    /// call a closed realm's objects deleted.
    func checkOpen() throws(CoveError) {
        if let reason = closedReason { throw CoveError(.closed, reason) }
        if !isFrozen && ownerThread.load(ordering: .relaxed) != UInt(pthread_self()) {
            throw CoveError(.wrongThread, "the realm is used by a thread other than the one it belongs to: a live realm, its objects and its results stay on the thread that opened it (freeze() them to read them on another thread)")
        }
    }

    /// Makes the calling thread the one this live realm belongs to, when the realm is not in a
    /// write transaction on the thread it belongs to now: the C API and the Python binding let a
    /// realm move between threads while it is idle, as thread pools need. Nothing for a frozen
    /// realm, which any thread may read.
    /// - Throws: `.wrongThread` while another thread writes through it.
    /// Inlined into the bindings' calls: the common case, a realm already on this thread, costs
    /// a load and a compare there.
    @_spi(CoveBindings) @inlinable public func moveToCurrentThread() throws(CoveError) {
        let me = UInt(pthread_self())
        if ownerThread.load(ordering: .relaxed) == me || isFrozen { return }
        try move(to: me)
    }

    @usableFromInline func move(to me: UInt) throws(CoveError) {
        if writeTransaction != nil {
            throw CoveError(.wrongThread, "the realm is in a write transaction on another thread: it can move to this thread once that write commits or is cancelled")
        }
        ownerThread.store(me, ordering: .relaxed)
    }

    /// The snapshot this realm reads, pinning the newest version if it has none.
    func pinnedSnapshot() throws(CoveError) -> Snapshot {
        if let s = snapshot { return s }
        do {
            let s = try file.storage.beginRead()
            snapshot = s
            return s
        } catch {
            throw CoveError(error)
        }
    }

    private func repin() throws(StorageError) {
        let next = try file.storage.beginRead()
        snapshot?.end()
        snapshot = next
    }
}

/// One open file shared by a live realm and the frozen realms made from it; the storage closes
/// when the last of them closes.
/// Frozen realms may close on any thread, hence the lock around the count.
final class RealmFile {
    let storage: Storage
    private let users = Mutex(0)
    /// Runs once the storage closed with its last user (a shared in-memory file's release).
    var onLastClose: (() -> Void)?

    init(_ storage: Storage) {
        self.storage = storage
    }

    func retainUser() {
        users.withLock { $0 += 1 }
    }

    func releaseUser() {
        let last = users.withLock { (n: inout Int) -> Bool in
            n -= 1
            return n == 0
        }
        if last {
            storage.close()
            onLastClose?()
            onLastClose = nil
        }
    }
}

/// The files of in-memory realms shared by identifier: one per identifier and process, in
/// /dev/shm (memory) when it is there, else in the temporary folder; counted by the realms that
/// have it open, and removed when the count drops to zero.
enum SharedMemoryFiles {
    private static let counts = Mutex<[String: Int]>([:])

    /// The folder: /dev/shm when writable, else $TMPDIR or /tmp.
    private static let folder: String = {
        if access("/dev/shm", W_OK) == 0 { return "/dev/shm" }
        if let t = getenv("TMPDIR"), access(t, W_OK) == 0 { return String(cString: t) }
        return "/tmp"
    }()

    /// The file of `identifier` in this process (its name encodes the identifier in hex).
    static func path(_ identifier: String) -> String {
        let hex = identifier.utf8.map { String($0, radix: 16, uppercase: false) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined()
        return "\(folder)/cove-memory-\(getpid())-\(hex).cove"
    }

    /// Counts one more realm on `identifier`'s file; the first makes it anew (removing what a
    /// crashed process with the same id left).
    static func acquire(_ identifier: String) {
        let file = path(identifier)
        counts.withLock { counts in
            if counts[identifier, default: 0] == 0 {
                unlink(file)
                unlink(file + ".lock")
            }
            counts[identifier, default: 0] += 1
        }
    }

    /// Counts one realm less on `identifier`'s file; the last removes it.
    static func release(_ identifier: String) {
        let file = path(identifier)
        counts.withLock { counts in
            let n = counts[identifier, default: 1] - 1
            if n > 0 {
                counts[identifier] = n
                return
            }
            counts[identifier] = nil
            unlink(file)
            unlink(file + ".lock")
        }
    }
}
