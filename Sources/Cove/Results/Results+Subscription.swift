// Flexible-sync subscriptions on Results, declared as realm-swift declares them: `subscribe`
// makes the results' query a subscription of a synced realm and waits for its objects as
// `WaitForSyncMode` says; `unsubscribe` removes the subscription these results made. The rules
// for names and queries are realm-swift's (docs/SYNC.md, "Subscribing").
import CoveCore
import FoundationEssentials

/// When `subscribe` waits for the server's objects of a subscription.
public enum WaitForSyncMode: Sendable {
    /// Every time: for the download of everything the server holds for it at the call.
    case always
    /// Only when this call created the subscription (or gave a name a new query).
    case onCreation
    /// Never: `subscribe` returns once the subscription is committed locally.
    case never
}

extension Results {
    /// The class and query a subscription of these results takes: the class of a realm's
    /// objects, the filters joined (a sort, DISTINCT or LIMIT orders or thins out what the
    /// filters match, so the subscription is to the filters alone).
    private func subscriptionQuery() throws(CoveError) -> (className: String, query: String, arguments: [QueryArgument]) {
        if let failure = engine.failure { throw failure }
        guard case .table(let className) = engine.source else {
            throw CoveError(.invalidArgument, "only results of a class's objects can be subscribed to, not \(engine.summary)")
        }
        var filters: [(text: String, arguments: [QueryArgument])] = []
        for stage in engine.stages {
            if case .query(_, let arguments, let text) = stage { filters.append((text, arguments)) }
        }
        let (query, arguments) = try SubscriptionQueryText.joined(filters)
        return (className, query, arguments)
    }

    /// Makes a subscription matching these results' query (named `name`, or unnamed), commits
    /// it to the realm's subscription set, and waits as `waitForSync` says. Unnamed: a query
    /// an unnamed subscription has already adds nothing. Named: a name in use with the same
    /// query adds nothing, with another query gives it this one. `timeout` (seconds) ends the
    /// wait with a `.sync` error without cancelling the subscription. Returns these results.
    /// - Throws: `.invalidArgument` on a realm opened without a sync configuration, for results
    ///   that are not of a class's objects, or a query outside what subscriptions take
    ///   (`.querySyntax` for one that does not parse); `.inWrite` inside a write transaction;
    ///   `.sync` when the server refuses the subscription, the wait times out or the session
    ///   stops.
    public func subscribe(name: String? = nil, waitForSync: WaitForSyncMode = .onCreation, timeout: TimeInterval? = nil,
                          _isolation: isolated (any Actor)? = #isolation) async throws -> Results<Element> {
        let realm = engine.realm
        let (version, waits) = try commitSubscription(name: name, waitForSync: waitForSync, timeout: timeout)
        if waits {
            // What the download brought (or the refusal), in this realm's next read.
            defer { if !realm.isClosed { _ = try? realm.refresh() } }
            try await Realm.awaitSubscriptions(realm.session, version: version, download: waitForSync == .always, timeout: timeout)
        }
        return self
    }

    /// `subscribe`'s first half: commits the subscription and says which version of the set
    /// to wait for, and whether `waitForSync` waits (the bindings wait in their own ways).
    package func commitSubscription(name: String?, waitForSync: WaitForSyncMode, timeout: Double?) throws -> (version: UInt64, waits: Bool) {
        let realm = engine.realm
        try realm.checkSubscribable()
        if let timeout, !(timeout >= 0) { throw CoveError(.invalidArgument, "a timeout must be 0 or more seconds, not \(timeout)") }
        let (className, query, arguments) = try subscriptionQuery()
        try realm.objectStore().checkSubscription(className: className, query: query, arguments: arguments)
        var created = false
        let version = try realm.changeSubscriptions { record in
            created = SyncSubscriptionSet.add(&record, name: name, className: className, query: query, arguments: arguments)
        }
        engine.subscription.withLock {
            $0 = SubscriptionRecordEntry(name: name, className: className, query: query, arguments: arguments, createdAt: 0, updatedAt: 0)
        }
        return (version, waitForSync == .always || (waitForSync == .onCreation && created))
    }

    /// Removes the subscription these results made with `subscribe` (the named one, or the
    /// unnamed one with their query) once the removal is committed to the local subscription
    /// set, without waiting for the objects to leave; the results' own query is unchanged. On a
    /// realm without sync, results that made no subscription, or one already removed, there is
    /// nothing to remove and nothing happens.
    public func unsubscribe() {
        guard let made = engine.subscription.withLock({ s -> SubscriptionRecordEntry? in defer { s = nil }; return s }) else { return }
        _ = try? engine.realm.changeSubscriptions { record in
            if let name = made.name {
                record.entries.removeAll { $0.name == name && $0.hasSameQuery(as: made) }
            } else if let i = record.entries.firstIndex(where: { $0.name == nil && $0.hasSameQuery(as: made) }) {
                record.entries.remove(at: i)
            }
        }
    }
}
