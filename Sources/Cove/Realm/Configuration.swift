// Realm.Configuration: where a realm lives and how it behaves, after realm-swift's type of the
// same name.
import CoveCore
import CoveStorage
import FoundationEssentials

extension Realm {
    /// How hard a commit works to survive a crash.
    public enum Durability: Sendable, Equatable {
        /// A commit is on stable storage when it returns (one flush per commit).
        case full
        /// No flush: a commit survives the process crashing, not the machine losing power.
        case noSync
        /// An unlinked temporary file: the data disappears when the realm closes.
        case memoryOnly
    }

    /// Where a realm lives and how it behaves.
    public struct Configuration: Sendable, Equatable {
        /// The database file; `nil` with `inMemory` false is refused. Its lock file is `<path>.lock`.
        public var path: String?
        /// Keep the data in a temporary file that disappears on close (path is then ignored).
        public var inMemory: Bool
        /// Keep the data in memory, shared by every realm of this process opened with the same
        /// identifier (with notifications between them), as Realm's `inMemoryIdentifier`: it
        /// lives while one of them is open and is gone when the last closes. Replaces `path`.
        public var inMemoryIdentifier: String?
        /// Open without writing: writes fail with `.readOnly`, and the file must exist.
        public var readOnly: Bool
        /// The cap on versions pinned at once across every process; 0 = unlimited.
        public var maxActiveVersions: UInt64
        /// Flushing policy of commits.
        public var durability: Durability
        /// How long `beginWrite` waits for the write lock, in milliseconds; -1 = forever.
        public var writeTimeoutMilliseconds: Int64
        /// The schema the realm must have; nil opens the file with its own schema. A new file takes
        /// it; a file whose schema differs by added classes, properties or indexes only is brought
        /// up to it when `schemaVersion` is higher than the file's; any other difference needs a
        /// migration (`.migrationRequired`).
        public var schema: Schema?
        /// The version of `schema`; a changed schema needs a higher one.
        public var schemaVersion: UInt64
        /// Runs when the file's schema version is lower than `schemaVersion`, inside the write
        /// transaction that brings the file up to `schema`, with the file's old schema version.
        /// Throwing fails the open and leaves the file as it was. Without it, only additive
        /// changes are accepted.
        public var migrationBlock: MigrationBlock?
        /// Asked before the open, with the file's size and the bytes its data takes, when no
        /// other handle has the file open: true compacts it first (`Realm.compactFile`), as
        /// Realm's `shouldCompactOnLaunch`. Not asked for in-memory or read-only realms, or for
        /// a file that does not exist yet.
        public var shouldCompactOnLaunch: (@Sendable (_ totalBytes: UInt64, _ usedBytes: UInt64) -> Bool)?
        /// The 64-byte key the file is encrypted with, as Realm's `encryptionKey`: every page is
        /// sealed with AES-256-GCM (docs/FORMAT.md, "Encrypted files"). A new file opened with a
        /// key is encrypted; an existing file must have been made with this key. A wrong or
        /// missing key, or a key for a plain file, fails the open with `.decryption`; a key of
        /// another length with `.invalidArgument`. nil: a plain file.
        public var encryptionKey: Data?
        /// Syncs the file with a Cove Sync server (docs/SYNC.md), as Realm's
        /// `syncConfiguration`: what this file writes is uploaded, what others write is
        /// downloaded into it, by a session of its own in the background (`Realm.syncSession`).
        /// Every class of a synced file needs a primary key. nil: a local file.
        public var syncConfiguration: SyncConfiguration?
        /// False for the realms a sync session opens for itself: they neither start a session
        /// nor turn their writes into changesets.
        var opensSyncSession = true

        public init(path: String? = nil, inMemory: Bool = false, readOnly: Bool = false,
                    maxActiveVersions: UInt64 = 0, durability: Durability = .full,
                    writeTimeoutMilliseconds: Int64 = -1, schema: Schema? = nil, schemaVersion: UInt64 = 0,
                    migrationBlock: MigrationBlock? = nil,
                    shouldCompactOnLaunch: (@Sendable (_ totalBytes: UInt64, _ usedBytes: UInt64) -> Bool)? = nil,
                    inMemoryIdentifier: String? = nil, encryptionKey: Data? = nil,
                    syncConfiguration: SyncConfiguration? = nil) {
            self.path = path
            self.inMemory = inMemory
            self.readOnly = readOnly
            self.maxActiveVersions = maxActiveVersions
            self.durability = durability
            self.writeTimeoutMilliseconds = writeTimeoutMilliseconds
            self.schema = schema
            self.schemaVersion = schemaVersion
            self.migrationBlock = migrationBlock
            self.shouldCompactOnLaunch = shouldCompactOnLaunch
            self.inMemoryIdentifier = inMemoryIdentifier
            self.encryptionKey = encryptionKey
            self.syncConfiguration = syncConfiguration
        }

        /// Equal when every setting is; migration blocks compare by presence (closures have no
        /// identity to compare).
        public static func == (a: Configuration, b: Configuration) -> Bool {
            a.path == b.path && a.inMemory == b.inMemory && a.inMemoryIdentifier == b.inMemoryIdentifier && a.readOnly == b.readOnly
                && a.maxActiveVersions == b.maxActiveVersions && a.durability == b.durability
                && a.writeTimeoutMilliseconds == b.writeTimeoutMilliseconds && a.schema == b.schema
                && a.schemaVersion == b.schemaVersion && (a.migrationBlock == nil) == (b.migrationBlock == nil)
                && (a.shouldCompactOnLaunch == nil) == (b.shouldCompactOnLaunch == nil)
                && a.encryptionKey == b.encryptionKey && a.syncConfiguration == b.syncConfiguration
        }

        var storageOptions: StorageOptions {
            var options = StorageOptions()
            switch inMemory ? .memoryOnly : durability {
            case .full: options.durability = .full
            case .noSync: options.durability = .noSync
            case .memoryOnly: options.durability = .memoryOnly
            }
            options.readOnly = readOnly
            options.maxActiveVersions = maxActiveVersions
            options.writeTimeoutMs = writeTimeoutMilliseconds
            options.catalogPages = catalogPageWalker
            options.encryptionKey = encryptionKey.map { [UInt8]($0) }
            return options
        }
    }
}
