// Handles: every pointer the C API hands out is a retained Swift object whose class tells its
// kind, so a handle of the wrong kind is refused with a status instead of being misread.
import CCove
@_spi(CoveBindings) import Cove
#if canImport(Glibc)
import Glibc
#endif

/// The base of every handle; its reference count is the handle's.
class Handle {
    /// The name C callers know the kind by, for messages.
    class var kindName: String { "handle" }

    /// A new +1 pointer for C.
    final func retainedPointer() -> OpaquePointer {
        OpaquePointer(Unmanaged.passRetained(self).toOpaque())
    }

    /// A pointer lent to a callback for the duration of the call (no reference added): the
    /// caller keeps the handle alive meanwhile, and the callback may cove_retain it.
    final func borrowedPointer() -> OpaquePointer {
        OpaquePointer(Unmanaged.passUnretained(self).toOpaque())
    }

    /// Refuses the handle of a closed realm, or one made from it, with `COVE_ERR_CLOSED` naming
    /// `function`; `handle(_:_:_:in:)` asks every handle it resolves. Handles that belong to no
    /// realm (configurations, migrations, tokens) always pass.
    func requireOpen(in function: StaticString) throws(CFailure) {}
}

/// The failure of a call on a closed realm's handle.
func closedRealm(_ function: StaticString) -> CFailure {
    failure(Int32(COVE_ERR_CLOSED), "\(function): the realm is closed")
}

/// Lets `realm` move to the calling thread when it is not writing on another (the header's
/// rule for threads), refusing with `COVE_ERR_WRONG_THREAD` naming `function` otherwise.
func takeToCurrentThread(_ realm: Realm, in function: StaticString) throws(CFailure) {
    do { try realm.moveToCurrentThread() } catch {
        throw failure(error.code.rawValue, "\(function): \(error.message)")
    }
}

/// Refuses to work on a closed realm reached otherwise than as the handle just resolved: a
/// collection's realm, or a realm a callback may have closed since the call began.
func requireOpen(_ realm: Realm, in function: StaticString) throws(CFailure) {
    if realm.isClosed { throw closedRealm(function) }
}

/// A `cove_config_t`.
final class ConfigHandle: Handle {
    override class var kindName: String { "cove_config_t" }
    var configuration: Realm.Configuration
    /// The C migration callback, kept here rather than in `configuration` so that its user data
    /// is freed when the configuration is released or the callback replaced (realms opened with
    /// it keep their configuration, and would keep the user data alive too).
    var migration: MigrationCallback?
    /// The callback cove_config_set_should_compact_on_launch() set.
    var shouldCompact: CompactCallback?

    init(_ configuration: Realm.Configuration) {
        self.configuration = configuration
    }
}

/// A `cove_sync_config_t`: the server a synced file syncs with and how (SyncAPI.swift), copied
/// into a configuration by cove_config_set_sync().
final class SyncConfigHandle: Handle {
    override class var kindName: String { "cove_sync_config_t" }
    var sync: SyncConfiguration

    init(_ sync: SyncConfiguration) {
        self.sync = sync
    }
}

/// A `cove_realm_t`: a live or frozen realm, and the buffers of the strings and binaries it
/// handed out, which stay valid until its next write, refresh, delivery or close.
final class RealmHandle: Handle {
    override class var kindName: String { "cove_realm_t" }
    let realm: Realm
    /// The creator the last create by values made (see `CreatorMemo`).
    var creatorMemo: CreatorMemo?
    /// Whether releasing the last reference closes the realm: false for a migration's old realm,
    /// which the engine closes itself when the migration ends.
    private let ownsRealm: Bool
    /// True while a migration callback runs over this realm: cove_open owns the realm's write
    /// transaction and lifetime then, so commit, cancel and close are refused.
    var isMigrating = false
    /// The subscription update cove_subscriptions_update_begin() began and no commit or cancel
    /// ended yet (SubscriptionAPI.swift).
    var subscriptionUpdate: SyncSubscriptionSet?
    /// The callbacks of cove_results_subscribe() not yet called (SubscriptionAPI.swift).
    let subscribeCompletions = SubscribeCompletions()
    /// The strings and binaries handed out since the last write, refresh or delivery.
    private var scratch = ScratchArena()
    /// Guards `scratch`: the threads reading a frozen realm's handles at once all keep their
    /// strings here.
    private let scratchLock = Lock()

    init(_ realm: Realm, ownsRealm: Bool = true) {
        self.realm = realm
        self.ownsRealm = ownsRealm
    }

    override func requireOpen(in function: StaticString) throws(CFailure) {
        if realm.isClosed { throw closedRealm(function) }
        try takeToCurrentThread(realm, in: function)
    }

    deinit {
        // Before the close, which stops the session and so ends the waits another way.
        subscribeCompletions.close()
        if ownsRealm { realm.close() }
        scratch.release()
    }

    /// A copy of `bytes` that lives until `clearScratch()`; (nil, 0) for no bytes.
    func keep(_ bytes: UnsafeRawBufferPointer) -> (UnsafeMutableRawPointer?, Int) {
        guard let copy = scratchLock.locked({ scratch.copy(bytes) }) else { return (nil, 0) }
        return (copy, bytes.count)
    }

    /// Frees the strings and binaries handed out so far (the header's lifetime rule).
    func clearScratch() {
        scratchLock.locked { scratch.clear() }
    }
}

/// Memory for the bytes of values handed out to C, carved from blocks of 64 KiB: a string read
/// costs a copy, not an allocation, and a long loop of reads between two refreshes holds a few
/// blocks rather than one allocation per value. A value over a quarter of a block gets an
/// allocation of its own. Clearing keeps the first block for the next values.
struct ScratchArena {
    static let blockSize = 65536
    private var blocks: [UnsafeMutableRawPointer] = []
    private var large: [UnsafeMutableRawPointer] = []
    /// Where the next value goes in the last block, and the bytes left there.
    private var next: UnsafeMutableRawPointer?
    private var left = 0

    /// A copy of `bytes`, valid until `clear()`; nil for no bytes.
    mutating func copy(_ bytes: UnsafeRawBufferPointer) -> UnsafeMutableRawPointer? {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return nil }
        let n = bytes.count
        let p: UnsafeMutableRawPointer
        if n > Self.blockSize / 4 {
            p = UnsafeMutableRawPointer.allocate(byteCount: n, alignment: 8)
            large.append(p)
        } else {
            if let free = next, n <= left {
                p = free
            } else {
                p = UnsafeMutableRawPointer.allocate(byteCount: Self.blockSize, alignment: 8)
                blocks.append(p)
                left = Self.blockSize
            }
            // The next value starts 8-aligned, as C expects of a binary it may cast.
            let used = min((n + 7) & ~7, left)
            next = p + used
            left -= used
        }
        p.copyMemory(from: source, byteCount: n)
        return p
    }

    /// Frees every value handed out; the first block stays for the next ones.
    mutating func clear() {
        for p in large { p.deallocate() }
        large.removeAll()
        guard let first = blocks.first else { return }
        for p in blocks.dropFirst() { p.deallocate() }
        blocks.removeAll(keepingCapacity: true)
        blocks.append(first)
        next = first
        left = Self.blockSize
    }

    /// Frees everything, the first block too.
    mutating func release() {
        clear()
        for p in blocks { p.deallocate() }
        blocks.removeAll()
        next = nil
        left = 0
    }
}

/// A mutual-exclusion lock (a pthread mutex), for the state of handles that several threads may
/// use at once: frozen handles.
final class Lock {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    init() {
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` holding the lock. Not reentrant: `body` must not take it again.
    func locked<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// A handle made from a realm handle, which it keeps alive: its strings and binaries go into that
/// realm handle's scratch, it is frozen when that realm is, and closed when it is.
class RealmChild: Handle {
    let realmHandle: RealmHandle

    init(_ realmHandle: RealmHandle) {
        self.realmHandle = realmHandle
    }

    override func requireOpen(in function: StaticString) throws(CFailure) {
        let realm = realmHandle.realm
        if realm.isClosed { throw closedRealm(function) }
        try takeToCurrentThread(realm, in: function)
    }
}

/// A `cove_object_t`: an object of a realm (its handle keeps the realm handle alive).
final class ObjectHandle: RealmChild {
    override class var kindName: String { "cove_object_t" }
    let object: DynamicObject

    init(_ realmHandle: RealmHandle, _ object: DynamicObject) {
        self.object = object
        super.init(realmHandle)
    }
}

/// A `cove_list_t`: a list property of one object.
final class ListHandle: RealmChild {
    override class var kindName: String { "cove_list_t" }
    let list: DynamicList

    init(_ realmHandle: RealmHandle, _ list: DynamicList) {
        self.list = list
        super.init(realmHandle)
    }
}

/// A `cove_set_t`: a set property of one object.
final class SetHandle: RealmChild {
    override class var kindName: String { "cove_set_t" }
    let set: DynamicSet

    init(_ realmHandle: RealmHandle, _ set: DynamicSet) {
        self.set = set
        super.init(realmHandle)
    }
}

/// A `cove_map_t`: a map property of one object.
final class MapHandle: RealmChild {
    override class var kindName: String { "cove_map_t" }
    let map: DynamicMap

    init(_ realmHandle: RealmHandle, _ map: DynamicMap) {
        self.map = map
        super.init(realmHandle)
    }
}

/// A `cove_results_t`: live, lazy results (Results.swift) of a query over a class, or the
/// elements of a list or set, chained with filters, sorts and distincts.
final class ResultsHandle: RealmChild {
    override class var kindName: String { "cove_results_t" }

    /// The engine's results: objects of a class and elements of a collection are different Swift
    /// types.
    enum Contents {
        /// Objects of a class (cove_query(), backlinks).
        case objects(Results<DynamicObject>)
        /// The elements of a list or set property: links to objects for a collection of objects,
        /// values otherwise.
        case elements(Results<Value>)
    }

    /// The list or set whose elements the results hold, named so that the results can tell
    /// when its owner is gone and what its elements are, in whatever realm they move to.
    struct CollectionSource {
        let ownerClass: String
        let ownerKey: Int64
        let property: Property

        init(_ collection: DynamicCollection) {
            ownerClass = collection.owner.objectSchema.className
            ownerKey = collection.owner.objectKey
            property = collection.property
        }

        /// "list 'dogs' of class 'Person'", for messages.
        var label: String { "\(property.collection.rawValue) '\(property.name)' of class '\(ownerClass)'" }
    }

    let contents: Contents
    /// Nil for objects of a class.
    let source: CollectionSource?
    /// Serializes reads: the engine keeps its last evaluation in the Results, and a frozen
    /// results handle may be read by several threads at once.
    let lock = Lock()

    init(_ realmHandle: RealmHandle, _ contents: Contents, source: CollectionSource?) {
        self.contents = contents
        self.source = source
        super.init(realmHandle)
    }

    /// Whether the elements are objects: a class's objects, or a collection of links.
    var holdsObjects: Bool { source.map { $0.property.isLink } ?? true }
}

/// A `cove_sectioned_results_t`: results of objects cut into sections by a key path or by a C key
/// callback (SectionsAPI.swift). It keeps the unsectioned results too, so that freezing cuts a
/// frozen copy of them the same way.
final class SectionedHandle: RealmChild {
    override class var kindName: String { "cove_sectioned_results_t" }

    /// The engine's sectioned results: objects of a class, or the links of a list or set.
    enum Contents {
        case objects(SectionedResults<DynamicObject>)
        case elements(SectionedResults<Value>)
    }

    /// How a row gets its section key.
    enum Sectioning {
        case keyPath(String, ascending: Bool)
        case callback(SectionKeyCallback)
    }

    /// The sections: keys in order, rows as links.
    typealias Sections = [(key: Value, rows: [Value])]

    let contents: Contents
    let base: ResultsHandle.Contents
    let sectioning: Sectioning

    init(_ realmHandle: RealmHandle, _ contents: Contents, base: ResultsHandle.Contents, sectioning: Sectioning) {
        self.contents = contents
        self.base = base
        self.sectioning = sectioning
        super.init(realmHandle)
    }
}

/// A `cove_section_t`: the rows of one key in sectioned results, following the key wherever its
/// section moves (and empty while no row has it).
final class SectionHandle: RealmChild {
    override class var kindName: String { "cove_section_t" }

    /// The engine's section, for observing.
    enum Contents {
        case objects(ResultsSection<DynamicObject>)
        case elements(ResultsSection<Value>)
    }

    let parent: SectionedHandle
    let key: Value
    let contents: Contents

    init(_ parent: SectionedHandle, key: Value, _ contents: Contents) {
        self.parent = parent
        self.key = key
        self.contents = contents
        super.init(parent.realmHandle)
    }
}

/// A `cove_projection_t`: names mapped onto key paths of a root object (ProjectionAPI.swift).
final class ProjectionHandle: RealmChild {
    override class var kindName: String { "cove_projection_t" }
    let projection: DynamicProjection

    init(_ realmHandle: RealmHandle, _ projection: DynamicProjection) {
        self.projection = projection
        super.init(realmHandle)
    }
}

/// A `cove_token_t`: one observation (NotificationAPI.swift). It holds the C callback and its
/// user data; invalidating or releasing it stops the observation and lets the user data go.
final class TokenHandle: RealmChild {
    override class var kindName: String { "cove_token_t" }
    private var token: NotificationToken?
    /// The C callback (a CCallback), of which this is the only lasting reference:
    /// dropping it frees the user data, at once or when a call in progress returns.
    private var callback: AnyObject?

    init(_ realmHandle: RealmHandle, _ token: NotificationToken, _ callback: AnyObject) {
        self.token = token
        self.callback = callback
        super.init(realmHandle)
    }

    /// Stopping an observation works on a closed realm too: it reads nothing of the realm.
    override func requireOpen(in function: StaticString) throws(CFailure) {}

    /// Stops the observation and drops the callback; a second call does nothing.
    func invalidate() {
        token?.invalidate()
        token = nil
        callback = nil
    }

    deinit { token?.invalidate() }
}

/// A `cove_migration_t`: what a migration callback works with. Valid only while the callback
/// runs; afterwards (a caller may have retained it) every call answers `COVE_ERR_INVALIDATED`.
final class MigrationHandle: Handle {
    override class var kindName: String { "cove_migration_t" }

    /// The migration in progress and the realm handles made for it.
    struct Scope {
        let migration: Migration
        let oldSchemaVersion: UInt64
        /// The file as it was: frozen, old schema, closed by the engine when the migration ends.
        let oldRealm: RealmHandle
        /// The realm being opened, in its write: the handle cove_open returns.
        let newRealm: RealmHandle
    }

    /// Nil once the callback returned.
    private(set) var scope: Scope?

    init(_ scope: Scope) {
        self.scope = scope
        scope.oldRealm.isMigrating = true
        scope.newRealm.isMigrating = true
    }

    /// Ends the handle's validity and hands the realms back to cove_open.
    func end() {
        scope?.oldRealm.isMigrating = false
        scope?.newRealm.isMigrating = false
        scope = nil
    }
}

/// The handle behind `pointer`, which must be of kind `H` and, unless `closedAllowed`, not of a
/// closed realm: this is where every call refuses a closed realm's handles with
/// `COVE_ERR_CLOSED`, before it reads anything (the engine would report a closed realm's
/// objects as deleted, and some answers, a section's key, are kept in the handle). Only the
/// calls that answer for a closed realm by design (cove_close, the is_valid questions) pass
/// `closedAllowed`. A made-up pointer is undefined behaviour, as the header says; NULL and
/// other kinds are refused.
func handle<H: Handle>(_ pointer: UnsafeRawPointer?, _ kind: H.Type, _ name: StaticString,
                       in function: StaticString, closedAllowed: Bool = false) throws(CFailure) -> H {
    guard let pointer else { throw invalidArgument(function, "\(name) is NULL") }
    let object = Unmanaged<Handle>.fromOpaque(pointer).takeUnretainedValue()
    guard let typed = object as? H else {
        throw invalidArgument(function, "\(name) is a \(type(of: object).kindName), expected a \(H.kindName)")
    }
    if !closedAllowed { try typed.requireOpen(in: function) }
    return typed
}

func handle<H: Handle>(_ pointer: OpaquePointer?, _ kind: H.Type, _ name: StaticString,
                       in function: StaticString, closedAllowed: Bool = false) throws(CFailure) -> H {
    try handle(UnsafeRawPointer(pointer), kind, name, in: function, closedAllowed: closedAllowed)
}
