// Sync inside a file: the file's sync record (its client file id, its changeset counts, its
// download cursor, its latest clock), the upload queue (every local changeset not yet taken by
// the server, kept in the file so that a crash or a restart loses nothing), and the merge state
// of every synced object (deleted ones too, as tombstones), all in catalog trees of their own
// that commit with the objects they describe. A local commit turns its change record into a
// changeset (`syncCapture`); a download merges changesets into the states and writes what the
// merged states show into the objects (`syncApply`).
import CoveStorage
import CoveSyncCore
import FoundationEssentials

/// A synced file's own record.
package struct SyncFileRecord: Equatable, Sendable {
    /// The file's id at the server; its node in the clocks derives from it.
    package var clientFileId: SyncUUID
    /// The newest changeset version made locally (0 before the first).
    package var localVersion: UInt64 = 0
    /// The newest local version the server has taken.
    package var uploadedVersion: UInt64 = 0
    /// The server version the file has downloaded up to.
    package var downloadCursor: UInt64 = 0
    /// The latest clock made or seen, so that the next local change comes after it.
    package var latestClock: SyncClock = .zero

    package var nodeId: UInt64 { clientFileId.nodeId }

    package init(clientFileId: SyncUUID) {
        self.clientFileId = clientFileId
    }

    static let encodedSize = 16 + 8 * 3 + SyncClock.byteCount

    func encoded() -> [UInt8] {
        var out = clientFileId.bytes
        for v in [localVersion, uploadedVersion, downloadCursor] { out += CatalogKey.bigEndian(v, bytes: 8) }
        out += latestClock.bytes
        return out
    }

    init(decoding bytes: [UInt8]) throws(CoveError) {
        guard bytes.count == Self.encodedSize else {
            throw CoveError(.corrupt, "the file's sync record has \(bytes.count) bytes, not \(Self.encodedSize)")
        }
        do {
            clientFileId = try SyncUUID(bytes: bytes[0..<16])
            latestClock = try SyncClock(bytes: bytes[40...])
        } catch {
            throw CoveError(.corrupt, "the file's sync record: \(error.message)")
        }
        localVersion = CatalogKey.number(bigEndian: bytes[16..<24])
        uploadedVersion = CatalogKey.number(bigEndian: bytes[24..<32])
        downloadCursor = CatalogKey.number(bigEndian: bytes[32..<40])
    }
}

extension CatalogKey {
    package static let syncTag: UInt8 = 0x07
    /// The file's sync record (one entry).
    static let syncRecord: [UInt8] = [syncTag, 1]
    /// The upload queue: changeset version (8 bytes big-endian) -> its JSON line.
    static let syncQueue: [UInt8] = [syncTag, 2]
    /// Merge states: class key (4) and primary key's index key -> `SyncStoredState`.
    static let syncStates: [UInt8] = [syncTag, 3]
    /// Links waiting for their target: target class key (4), length of the target's key (2),
    /// the target's key, source class key (4), the source's key -> nothing.
    static let syncWaitingLinks: [UInt8] = [syncTag, 4]
}

/// What the states tree keeps of an object: its merge state, and for each list the element ids
/// in the order the file's list holds them (the ids its indexes stand for).
struct SyncStoredState {
    var merge = SyncObjectState()
    var listOrder: [String: [SyncClock]] = [:]

    init() {}

    func encoded(_ ref: SyncObjectRef) -> [UInt8] {
        let state = merge.binary()
        var out = CatalogKey.bigEndian(UInt64(state.count), bytes: 4) + state
        for name in listOrder.keys.sorted() {
            let ids = listOrder[name] ?? []
            let n = Array(name.utf8)
            out += CatalogKey.bigEndian(UInt64(n.count), bytes: 1) + n
            out += CatalogKey.bigEndian(UInt64(ids.count), bytes: 4)
            for id in ids { out += id.bytes }
        }
        return out
    }

    init(decoding bytes: [UInt8]) throws(CoveError) {
        func fail(_ what: String) -> CoveError { CoveError(.corrupt, "a synced object's merge state: \(what)") }
        guard bytes.count >= 4 else { throw fail("\(bytes.count) bytes") }
        let stateCount = Int(CatalogKey.number(bigEndian: bytes[0..<4]))
        guard stateCount <= bytes.count - 4 else { throw fail("a state of \(stateCount) bytes in \(bytes.count)") }
        do {
            merge = try SyncObjectState(binary: Array(bytes[4..<(4 + stateCount)]))
        } catch {
            throw fail(error.message)
        }
        var at = 4 + stateCount
        while at < bytes.count {
            let n = Int(bytes[at])
            guard at + 1 + n + 4 <= bytes.count else { throw fail("a list order cut short") }
            let name = String(decoding: bytes[(at + 1)..<(at + 1 + n)], as: UTF8.self)
            at += 1 + n
            let count = Int(CatalogKey.number(bigEndian: bytes[at..<(at + 4)]))
            at += 4
            guard count <= (bytes.count - at) / SyncClock.byteCount else { throw fail("a list order cut short") }
            var ids: [SyncClock] = []
            ids.reserveCapacity(count)
            for _ in 0..<count {
                do { ids.append(try SyncClock(bytes: bytes[at..<(at + SyncClock.byteCount)])) } catch { throw fail(error.message) }
                at += SyncClock.byteCount
            }
            listOrder[name] = ids
        }
    }
}

extension ObjectStore {
    // MARK: The sync record and the queue

    /// The file's sync record, nil when the file has never been opened for sync.
    package func syncRecord() throws(CoveError) -> SyncFileRecord? {
        let t = try tree(CatalogKey.syncRecord)
        let bytes: [UInt8]?
        do { bytes = try t.get([1]) } catch { throw CoveError(error) }
        guard let bytes else { return nil }
        return try SyncFileRecord(decoding: bytes)
    }

    package func writeSyncRecord(_ record: SyncFileRecord) throws(CoveError) {
        try requireWrite()
        try editTree(CatalogKey.syncRecord) { t throws(StorageError) in _ = try t.put([1], record.encoded()) }
    }

    /// The schema's classes a synced file syncs (every class but embedded ones, which are
    /// refused by `checkSyncable`).
    package func syncedClasses() -> [ObjectSchema] {
        schema.classes.filter { !$0.isEmbedded }
    }

    /// Refuses a schema that sync cannot carry yet, naming the class and property.
    package static func checkSyncable(_ schema: Schema) throws(CoveError) {
        for cls in schema.classes {
            if cls.isEmbedded {
                throw CoveError(.schema, "class '\(cls.className)' is embedded: a synced file cannot have embedded classes yet")
            }
            guard let pk = cls.primaryKeyProperty else {
                throw CoveError(.schema, "class '\(cls.className)' has no primary key: every class of a synced file needs one")
            }
            switch pk.type {
            case .int, .string, .objectId, .uuid: break
            default:
                throw CoveError(.schema, "class '\(cls.className)': a synced primary key is an int, string, objectId or uuid, not \(pk.type.name)")
            }
            for p in cls.properties where !p.isBacklinks && p.isLink && p.collection != .none && p.collection != .list {
                throw CoveError(.schema, "property '\(cls.className).\(p.name)': a synced file cannot have \(p.collection == .set ? "sets" : "maps") of links yet")
            }
        }
    }

    /// Starts sync in a file that has none: its record, and a first changeset creating every
    /// object the file holds, so that they reach the server with the rest.
    package func startSync(clientFileId: SyncUUID, wall: UInt64) throws(CoveError) {
        try requireWrite()
        var record = SyncFileRecord(clientFileId: clientFileId)
        try writeSyncRecord(record)
        var capture = try SyncCapture(store: self, record: record)
        for cls in syncedClasses() {
            for key in try objectKeys(cls) { try capture.created(cls, key, wall: wall) }
        }
        let changesets = try capture.finish(wall: wall)
        for changeset in changesets {
            try enqueue(changeset)
            record.localVersion = changeset.clientVersion
            record.latestClock = changeset.clock
        }
        if !changesets.isEmpty { try writeSyncRecord(record) }
    }

    /// Turns this write's changes into the next changesets (one, or several for a write of more
    /// than `SyncCapture.operationsPerChangeset` operations), queues them for upload and merges
    /// them into the objects' states: called just before the commit, in the same transaction.
    /// Returns none when the write changed nothing synced.
    @discardableResult
    package func syncCapture(wall: UInt64) throws(CoveError) -> [Changeset] {
        guard var record = try syncRecord() else { return [] }
        let changes = self.changes.settled()
        if changes.tables.isEmpty { return [] }
        var capture = try SyncCapture(store: self, record: record)
        for classKey in changes.tables.keys.sorted() {
            guard let t = changes.tables[classKey], let cls = schema.objectSchema(forClassKey: classKey), !cls.isEmbedded else { continue }
            for range in t.deleted { for key in range { try capture.deleted(cls, key, wall: wall) } }
            for range in t.inserted { for key in range { try capture.created(cls, key, wall: wall) } }
            for key in t.modified.keys.sorted() {
                try capture.modified(cls, key, properties: t.modified[key] ?? [], collections: changes.collections, wall: wall)
            }
        }
        let changesets = try capture.finish(wall: wall)
        if changesets.isEmpty { return [] }
        for changeset in changesets {
            try enqueue(changeset)
            record.localVersion = changeset.clientVersion
            record.latestClock = changeset.clock
        }
        try writeSyncRecord(record)
        // Objects made here that downloaded links were waiting for.
        for (cls, key) in capture.createdObjects { try resolveWaitingLinks(to: cls, key) }
        return changesets
    }

    func enqueue(_ changeset: Changeset) throws(CoveError) {
        let line = Array(ChangesetLines.encode(changeset).utf8)
        try editTree(CatalogKey.syncQueue) { t throws(StorageError) in
            _ = try t.put(CatalogKey.bigEndian(changeset.clientVersion, bytes: 8), line)
        }
    }

    /// The queued changesets after local version `after`, oldest first, as JSON lines, at most
    /// `limit` of them and about `maxBytes` (at least one).
    package func syncQueued(after: UInt64, limit: Int, maxBytes: Int) throws(CoveError) -> [(version: UInt64, line: [UInt8])] {
        let t = try tree(CatalogKey.syncQueue)
        var out: [(UInt64, [UInt8])] = []
        var bytes = 0
        do {
            try t.forEach(from: CatalogKey.bigEndian(after &+ 1, bytes: 8)) { key, value throws(StorageError) -> Bool in
                let version = CatalogKey.number(bigEndian: key)
                if version <= after { return true }
                out.append((version, Array(value)))
                bytes += value.count
                return out.count < limit && bytes < maxBytes
            }
        } catch {
            throw CoveError(error)
        }
        return out
    }

    /// Records that the server holds every local changeset up to `version`: they leave the queue.
    package func syncAcknowledge(upTo version: UInt64) throws(CoveError) {
        guard var record = try syncRecord(), version > record.uploadedVersion else { return }
        let first = record.uploadedVersion + 1
        let last = Swift.min(version, record.localVersion)
        if first <= last {
            try editTree(CatalogKey.syncQueue) { t throws(StorageError) in
                for v in first...last { _ = try t.remove(CatalogKey.bigEndian(v, bytes: 8)) }
            }
        }
        record.uploadedVersion = Swift.max(record.uploadedVersion, last)
        try writeSyncRecord(record)
    }

    // MARK: States

    static func stateKey(_ classKey: UInt32, _ pk: Value) -> [UInt8] {
        var key = CatalogKey.bigEndian(UInt64(classKey), bytes: 4)
        pk.appendIndexKey(to: &key)
        return key
    }

    func loadState(_ classKey: UInt32, _ pk: Value) throws(CoveError) -> SyncStoredState {
        let t = try tree(CatalogKey.syncStates)
        let bytes: [UInt8]?
        do { bytes = try t.get(Self.stateKey(classKey, pk)) } catch { throw CoveError(error) }
        guard let bytes else { return SyncStoredState() }
        return try SyncStoredState(decoding: bytes)
    }

    func storeState(_ state: SyncStoredState, _ classKey: UInt32, _ pk: Value, _ ref: SyncObjectRef) throws(CoveError) {
        let bytes = state.encoded(ref)
        try editTree(CatalogKey.syncStates) { t throws(StorageError) in _ = try t.put(Self.stateKey(classKey, pk), bytes) }
    }

    /// Forgets an object's merge state (an object taken out of the file, not deleted).
    func removeState(_ classKey: UInt32, _ pk: Value) throws(CoveError) {
        try editTree(CatalogKey.syncStates) { t throws(StorageError) in _ = try t.remove(Self.stateKey(classKey, pk)) }
    }

    // MARK: Values

    /// A primary key as sync names it.
    static func syncKey(_ pk: Value, of cls: ObjectSchema) throws(CoveError) -> SyncPrimaryKey {
        switch pk {
        case .int(let v): return .int(v)
        case .string(let v): return .string(v)
        case .objectId(let v):
            do { return .objectId(try SyncObjectId(bytes: v.bytes)) } catch { throw CoveError(.internal, error.message) }
        case .uuid(let v):
            do { return .uuid(try SyncUUID(bytes: Self.uuidBytes(v))) } catch { throw CoveError(.internal, error.message) }
        default:
            throw CoveError(.schema, "class '\(cls.className)': a primary key of type \(pk.tag) cannot sync")
        }
    }

    static func uuidBytes(_ u: UUID) -> [UInt8] {
        withUnsafeBytes(of: u.uuid) { Array($0) }
    }

    package static func coveKey(_ key: SyncPrimaryKey) throws(CoveError) -> Value {
        try coveValue(key.value, for: nil)
    }

    func ref(_ cls: ObjectSchema, _ pk: Value) throws(CoveError) -> SyncObjectRef {
        do { return try SyncObjectRef(className: cls.className, key: try Self.syncKey(pk, of: cls)) } catch let e as SyncError {
            throw CoveError(.schema, e.message)
        } catch {
            throw error as! CoveError
        }
    }

    /// An object's primary key.
    func primaryKeyValue(_ cls: ObjectSchema, _ key: Int64) throws(CoveError) -> Value {
        guard let p = cls.primaryKeyProperty else {
            throw CoveError(.schema, "class '\(cls.className)' has no primary key: every class of a synced file needs one")
        }
        return try get(cls, key, p)
    }

    /// A stored value as sync carries it.
    func syncValue(_ v: Value) throws(CoveError) -> SyncValue {
        switch v {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .float(let f): return .double(Double(f))
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .data(let d): return .data(d)
        case .timestamp(let t):
            do { return .date(try SyncDate(seconds: t.seconds, nanoseconds: t.nanoseconds)) } catch { throw CoveError(.internal, error.message) }
        case .decimal128(let d):
            do { return .decimal128(try SyncDecimal128(d.description)) } catch { throw CoveError(.internal, error.message) }
        case .objectId(let o):
            do { return .objectId(try SyncObjectId(bytes: o.bytes)) } catch { throw CoveError(.internal, error.message) }
        case .uuid(let u):
            do { return .uuid(try SyncUUID(bytes: Self.uuidBytes(u))) } catch { throw CoveError(.internal, error.message) }
        case .link(let l):
            let target = try objectSchema(classKey: l.classKey)
            return .link(try ref(target, try primaryKeyValue(target, l.objectKey)))
        case .list, .dictionary:
            throw CoveError(.invalidArgument, "a mixed value holding a collection cannot sync yet")
        }
    }

    /// A synced value as the property `p` stores it (nil `p`: as it comes). Links resolve to the
    /// target's object key; one whose target is not in the file is nil.
    static func coveValue(_ v: SyncValue, for p: Property?) throws(CoveError) -> Value {
        switch v {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i):
            if let p, p.type == .double { return .double(Double(i)) }
            if let p, p.type == .float { return .float(Float(i)) }
            return .int(i)
        case .double(let d):
            if let p, p.type == .float { return .float(Float(d)) }
            if let p, p.type == .int, let i = Int64(exactly: d) { return .int(i) }
            return .double(d)
        case .string(let s): return .string(s)
        case .data(let d): return .data(d)
        case .date(let d): return .timestamp(Timestamp(seconds: d.seconds, nanoseconds: d.nanoseconds))
        case .decimal128(let d): return .decimal128(try Decimal128(d.text))
        case .objectId(let o): return .objectId(try ObjectId(bytes: o.bytes))
        case .uuid(let u):
            let b = u.bytes
            return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
        case .link:
            throw CoveError(.internal, "a link resolves through the store")
        }
    }

    /// A synced value for property `p` of this file: a link becomes the target's object key, or
    /// nil when the target is not here (yet).
    func resolve(_ v: SyncValue, for p: Property) throws(CoveError) -> Value? {
        // A value this file cannot hold (text that is no decimal, ...) shows as nothing.
        guard case .link(let target) = v else { return try? Self.coveValue(v, for: p) }
        guard let cls = schema[target.className], !cls.isEmbedded else { return nil }
        guard let key = try find(cls, primaryKey: try Self.coveKey(target.key)) else { return nil }
        return .link(ObjectLink(classKey: try classKey(of: cls), objectKey: key))
    }
}
