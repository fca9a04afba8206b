// Flexible-sync subscriptions, as realm-swift declares them: a synced realm's subscription set
// (`realm.subscriptions`), changed inside `update` blocks, each change a new version of the set
// committed to the file; the file's session sends the newest version to the server and
// downloads what it covers (docs/SYNC.md, "Subscriptions").
import CoveCore
import CoveSyncCore
import Dispatch
import FoundationEssentials

/// Where a version of the subscription set stands.
public enum SyncSubscriptionState: Equatable, Sendable {
    /// Committed locally; the server has not taken it yet.
    case pending
    /// Taken by the server; its objects are downloading.
    case bootstrapping
    /// Its objects are in the file; downloads keep them up to date.
    case complete
    /// The server refused it (a query it cannot answer): the message says why. The set the
    /// server had before stays in force.
    case error(CoveError)
    /// A newer version was committed (by another `SyncSubscriptionSet` of the file) before
    /// this one completed.
    case superseded
}

/// One subscription: the objects of a class that match a query.
public struct SyncSubscription: Equatable, Sendable {
    /// The name given at `subscribe(name:)` or `append`, nil for an unnamed subscription.
    public let name: String?
    /// The class subscribed to.
    public let objectClassName: String
    /// The query, its arguments written `$0`, `$1`, ...
    public let queryString: String
    /// The query's arguments.
    public let arguments: [QueryArgument]
    public let createdAt: Date
    /// When its query last changed.
    public let updatedAt: Date

    init(_ entry: SubscriptionRecordEntry) {
        name = entry.name
        objectClassName = entry.className
        queryString = entry.query
        arguments = entry.arguments
        createdAt = Date(timeIntervalSince1970: Double(entry.createdAt) / 1000)
        updatedAt = Date(timeIntervalSince1970: Double(entry.updatedAt) / 1000)
    }
}

/// A subscription to add with `SyncSubscriptionSet.append`: the objects of `T` matching a query.
public struct QuerySubscription<T: Object> {
    public let name: String?
    let query: String
    let arguments: [QueryArgument]

    /// - Parameters:
    ///   - name: the subscription's name, or nil for an unnamed one.
    ///   - query: a query in the subset subscriptions take (docs/SYNC.md, "Subscription queries").
    public init(name: String? = nil, where query: String = "TRUEPREDICATE", _ arguments: Value...) {
        self.name = name
        self.query = query
        self.arguments = arguments.map { .value($0) }
    }
}

extension Realm {
    /// The realm's subscription set. Reading it needs a synced realm (`syncConfiguration`);
    /// changing it happens inside `update`.
    public var subscriptions: SyncSubscriptionSet { SyncSubscriptionSet(realm: self) }

    /// The file's subscription set as this realm reads it (the one being changed, inside an
    /// `update` block).
    func subscriptionRecord() throws(CoveError) -> SyncSubscriptionRecord {
        if let edit = subscriptionEdit { return edit }
        return try objectStore().syncSubscriptions()
    }

    /// Commits a change of the subscription set in a write of its own (the session's realms).
    func editSubscriptionRecord(_ body: (inout SyncSubscriptionRecord) throws(CoveError) -> Void) throws(CoveError) {
        try inSyncWrite { store throws(CoveError) in
            var record = try store.syncSubscriptions()
            let before = record
            try body(&record)
            if record != before { try store.writeSyncSubscriptions(record) }
        }
    }

    /// Checks that subscriptions apply to this realm: it syncs and is open, live and not in a
    /// write transaction.
    func checkSubscribable() throws(CoveError) {
        if isClosed { throw CoveError(.closed, "the realm is closed") }
        guard configuration.syncConfiguration != nil else {
            throw CoveError(.invalidArgument, "subscriptions need a synced realm: the realm at \(configuration.path ?? "memory") was opened without a sync configuration")
        }
        if isFrozen { throw CoveError(.frozen, "a frozen realm's subscriptions cannot change") }
        if isInWriteTransaction { throw CoveError(.inWrite, "subscriptions cannot change inside a write transaction") }
    }

    /// Runs `edit` on the subscription set and commits the result as the set's next version
    /// (nothing is committed when it changes nothing). Returns the version in force after it.
    @discardableResult
    func changeSubscriptions(_ edit: (inout SyncSubscriptionRecord) throws -> Void) throws -> UInt64 {
        try checkSubscribable()
        if subscriptionEdit != nil { throw CoveError(.invalidArgument, "subscriptions are already being changed by an update block") }
        try beginWrite()
        do {
            let store = try objectStore()
            let before = try store.syncSubscriptions()
            var record = before
            try edit(&record)
            if record.entries != before.entries {
                record.version = before.version + 1
                try store.writeSyncSubscriptions(record)
            }
            try commitWrite()
            if record.version != before.version { session?.subscriptionsChanged() }
            return record.version
        } catch {
            if isInWriteTransaction { try? cancelWrite() }
            throw error
        }
    }

    /// Waits until version `version` of the subscription set has its objects in the file, then,
    /// when `download` is set, until the file holds what the server held (`timeout` seconds in
    /// all, nil for no limit). Blocks; run it off the realm's thread for `async` callers.
    package static func waitForSubscriptions(_ session: SyncSession?, version: UInt64, download: Bool, timeout: Double?) throws(CoveError) {
        guard let session else {
            throw CoveError(.sync, "the realm has no sync session to download its subscriptions (opened with opensSyncSession off)")
        }
        let deadline = timeout.map { SyncSession.now() + $0 }
        try session.waitForSubscriptions(version: version, timeout: timeout)
        if download {
            let left = deadline.map { Swift.max(0, $0 - SyncSession.now()) } ?? 1e9
            try session.wait(for: .download, timeout: left)
        }
    }

    /// The blocking wait above for an `async` caller, on a thread of its own.
    static func awaitSubscriptions(_ session: SyncSession?, version: UInt64, download: Bool, timeout: Double?) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            DispatchQueue.global().async {
                do {
                    try waitForSubscriptions(session, version: version, download: download, timeout: timeout)
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }
}

/// The subscriptions of a synced realm (`realm.subscriptions`). Reads show the file's newest
/// version (the one being built, inside `update`). Each `update` that changes something makes a
/// new version, which the session sends to the server: the server sends the objects it covers
/// and takes out of the file those no subscription covers any more.
public final class SyncSubscriptionSet: Sequence {
    let realm: Realm
    /// The version this object last saw committed or made.
    private var seenVersion: UInt64

    init(realm: Realm) {
        self.realm = realm
        seenVersion = (try? realm.subscriptionRecord().version) ?? 0
    }

    private func record() throws(CoveError) -> SyncSubscriptionRecord {
        try realm.checkSubscribable()
        return try realm.subscriptionRecord()
    }

    /// The set's version: 0 before the first change, one more at each committed `update`.
    public var version: Int { Int((try? record().version) ?? 0) }

    /// Where this version stands.
    public var state: SyncSubscriptionState {
        guard var r = try? record() else { return .pending }
        // The session may know more than this realm's snapshot shows.
        if let progress = realm.session?.subscriptionProgress() {
            r.completeVersion = Swift.max(r.completeVersion, progress.complete)
            if progress.refused > r.errorVersion { (r.errorVersion, r.errorMessage) = (progress.refused, progress.message) }
        }
        return Self.state(of: r, version: seenVersion)
    }

    static func state(of r: SyncSubscriptionRecord, version: UInt64) -> SyncSubscriptionState {
        if r.errorVersion == version && version > 0 { return .error(CoveError(.sync, r.errorMessage)) }
        if r.completeVersion >= version { return .complete }
        if r.version > version { return .superseded }
        if r.sentVersion >= version { return .bootstrapping }
        return .pending
    }

    /// The number of subscriptions.
    public var count: Int { (try? record().entries.count) ?? 0 }
    public var isEmpty: Bool { count == 0 }

    /// The subscription at `position`.
    public subscript(position: Int) -> SyncSubscription? {
        guard let entries = try? record().entries, entries.indices.contains(position) else { return nil }
        return SyncSubscription(entries[position])
    }

    /// The subscription named `name`, if any.
    public func first(named name: String) -> SyncSubscription? {
        (try? record().entries.first { $0.name == name }).flatMap { $0.map(SyncSubscription.init) }
    }

    /// The first subscription to `className` with this query, named or not.
    public func first(ofClass className: String, where query: String) -> SyncSubscription? {
        (try? record().entries.first { $0.className == className && $0.query == query }).flatMap { $0.map(SyncSubscription.init) }
    }

    public func makeIterator() -> IndexingIterator<[SyncSubscription]> {
        ((try? record().entries) ?? []).map(SyncSubscription.init).makeIterator()
    }

    // MARK: Changing the set

    /// Runs `block`, in which `append`, `remove` and `removeAll` change the set, and commits
    /// the changes as one new version (none when nothing changed). Returns at once; `onComplete`
    /// is called, on a thread of its own, once the version's objects are in the file (nil) or
    /// the server refused it (the error).
    /// - Throws: `.invalidArgument` on a realm that does not sync, `.inWrite` inside a write
    ///   transaction, what `block` throws (nothing is committed then).
    public func update(_ block: () throws -> Void, onComplete: (@Sendable (CoveError?) -> Void)? = nil) throws {
        let version = try commit(block)
        guard let onComplete else { return }
        let session = realm.session
        DispatchQueue.global().async {
            do throws(CoveError) {
                try Realm.waitForSubscriptions(session, version: version, download: false, timeout: nil)
                onComplete(nil)
            } catch {
                onComplete(error)
            }
        }
    }

    /// Runs `block` as `update(_:onComplete:)` does, then waits until the new version's objects
    /// are in the file.
    /// - Throws: also `.sync` when the server refuses the set (its message) or the session stops.
    public func update(_ block: () throws -> Void) async throws {
        let version = try commit(block)
        defer { if !realm.isClosed { _ = try? realm.refresh() } }
        try await Realm.awaitSubscriptions(realm.session, version: version, download: false, timeout: nil)
    }

    private func commit(_ block: () throws -> Void) throws -> UInt64 {
        let version = try realm.changeSubscriptions { record in
            realm.subscriptionEdit = record
            defer { realm.subscriptionEdit = nil }
            try block()
            record = realm.subscriptionEdit ?? record
        }
        seenVersion = version
        return version
    }

    /// An update in two calls, for the bindings (`cove_subscriptions_update_begin` and
    /// `_commit`, Python's `with realm.subscriptions.update()`): between them `append`,
    /// `remove` and `removeAll` change the set, and `commitUpdate` commits it as one new
    /// version (returned) or `cancelUpdate` drops the changes.
    package func beginUpdate() throws(CoveError) {
        try realm.checkSubscribable()
        if realm.subscriptionEdit != nil { throw CoveError(.invalidArgument, "subscriptions are already being changed by an update") }
        realm.subscriptionEdit = try realm.objectStore().syncSubscriptions()
    }

    @discardableResult
    package func commitUpdate() throws -> UInt64 {
        guard let edited = realm.subscriptionEdit else { throw CoveError(.invalidArgument, "no subscription update was begun") }
        realm.subscriptionEdit = nil
        let version = try realm.changeSubscriptions { record in record.entries = edited.entries }
        seenVersion = version
        return version
    }

    package func cancelUpdate() {
        realm.subscriptionEdit = nil
    }

    private func edit(_ body: (inout SyncSubscriptionRecord) throws(CoveError) -> Void) throws(CoveError) {
        guard var record = realm.subscriptionEdit else {
            throw CoveError(.invalidArgument, "subscriptions change only inside subscriptions.update { ... }")
        }
        try body(&record)
        realm.subscriptionEdit = record
    }

    /// Adds a subscription to the objects of `T` matching its query. A subscription with the
    /// same name is given the new query; an unnamed one with the same query is not added twice.
    public func append<T: Object>(_ subscription: QuerySubscription<T>) throws(CoveError) {
        try append(className: T.className, where: subscription.query, arguments: subscription.arguments, name: subscription.name)
    }

    /// Adds a subscription to the objects of `className` matching `query` (see the other
    /// `append`).
    /// - Throws: `.querySyntax` or `.invalidArgument` for a query subscriptions cannot take.
    public func append(className: String, where query: String = "TRUEPREDICATE", arguments: [QueryArgument] = [],
                       name: String? = nil) throws(CoveError) {
        let (text, args) = try SubscriptionQueryText.joined([(query, arguments)])
        try realm.objectStore().checkSubscription(className: className, query: text, arguments: args)
        try edit { record throws(CoveError) in
            _ = Self.add(&record, name: name, className: className, query: text, arguments: args)
        }
    }

    /// Adds (or, for a name in use with another query, changes) a subscription by the rules of
    /// `Results.subscribe`; returns whether it added or changed one.
    static func add(_ record: inout SyncSubscriptionRecord, name: String?, className: String, query: String,
                    arguments: [QueryArgument]) -> Bool {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let wanted = SubscriptionRecordEntry(name: name, className: className, query: query, arguments: arguments, createdAt: now, updatedAt: now)
        if let name {
            if let i = record.entries.firstIndex(where: { $0.name == name }) {
                if record.entries[i].hasSameQuery(as: wanted) { return false }
                record.entries[i].className = className
                record.entries[i].query = query
                record.entries[i].arguments = arguments
                record.entries[i].updatedAt = now
                return true
            }
        } else if record.entries.contains(where: { $0.name == nil && $0.hasSameQuery(as: wanted) }) {
            return false
        }
        record.entries.append(wanted)
        return true
    }

    /// Removes the subscription named `name`.
    /// - Throws: `.notFound` when there is none.
    public func remove(named name: String) throws(CoveError) {
        try edit { record throws(CoveError) in
            guard let i = record.entries.firstIndex(where: { $0.name == name }) else {
                throw CoveError(.notFound, "no subscription is named '\(name)'")
            }
            record.entries.remove(at: i)
        }
    }

    /// Removes a subscription read from this set (by its name, or for an unnamed one by its
    /// class and query).
    /// - Throws: `.notFound` when the set does not hold it.
    public func remove(_ subscription: SyncSubscription) throws(CoveError) {
        try edit { record throws(CoveError) in
            guard let i = record.entries.firstIndex(where: {
                $0.name == subscription.name && $0.className == subscription.objectClassName
                    && $0.query == subscription.queryString && $0.arguments == subscription.arguments
            }) else {
                throw CoveError(.notFound, "the set holds no subscription to \(subscription.objectClassName) where \(subscription.queryString)")
            }
            record.entries.remove(at: i)
        }
    }

    /// Removes every subscription to `className`.
    public func removeAll(ofClass className: String) throws(CoveError) {
        try edit { record throws(CoveError) in record.entries.removeAll { $0.className == className } }
    }

    /// Removes every subscription to `T`.
    public func removeAll<T: Object>(ofType type: T.Type) throws(CoveError) {
        try removeAll(ofClass: T.className)
    }

    /// Removes every subscription (only the unnamed ones when `unnamedOnly`).
    public func removeAll(unnamedOnly: Bool = false) throws(CoveError) {
        try edit { record throws(CoveError) in record.entries.removeAll { !unnamedOnly || $0.name == nil } }
    }
}
