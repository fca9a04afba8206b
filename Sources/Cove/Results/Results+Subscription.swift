// Flexible-sync subscriptions on Results, declared as realm-swift declares them: `subscribe`
// makes the results' query a subscription of a synced realm and waits for its objects as
// `WaitForSyncMode` says; `unsubscribe` removes the subscription these results made. A realm
// opened without a sync configuration has no subscription set: `subscribe` fails on it with
// a clear error and `unsubscribe` has nothing to remove. Subscriptions are not built yet: a
// synced file downloads every object, and `subscribe` on it says so.
import CoveCore
import FoundationEssentials

/// When `subscribe` waits for the server's objects of a subscription.
public enum WaitForSyncMode: Sendable {
    /// Every time: for the download of everything the server holds for it at the call.
    case always
    /// Only when this call created the subscription.
    case onCreation
    /// Never: `subscribe` returns once the subscription is committed locally.
    case never
}

extension Results {
    /// Makes a subscription matching these results' query (named `name`, or unnamed), commits
    /// it to the realm's subscription set, and waits as `waitForSync` says (`timeout` ends the
    /// wait with an error without cancelling the subscription). Returns these results.
    /// - Throws: `.invalidArgument` on a realm opened without a sync configuration; `.sync` on
    ///   a synced realm, until subscriptions are built (a synced file downloads every object);
    ///   the query's own error (`queryError`).
    public func subscribe(name: String? = nil, waitForSync: WaitForSyncMode = .onCreation, timeout: TimeInterval? = nil,
                          _isolation: isolated (any Actor)? = #isolation) async throws -> Results<Element> {
        if let failure = engine.failure { throw failure }
        let realm = engine.realm
        if realm.isClosed { throw CoveError(.closed, "the realm is closed") }
        if realm.configuration.syncConfiguration != nil {
            throw CoveError(.sync, "subscriptions are not built yet: a synced file downloads every object the server holds (syncSession.wait(for: .download) waits for them)")
        }
        throw CoveError(.invalidArgument, "subscribe needs a synced realm: the realm at \(realm.configuration.path ?? "memory") was opened without a sync configuration")
    }

    /// Removes the subscription these results made with `subscribe` (named or unnamed) once
    /// the removal is committed to the local subscription set, without waiting for the objects
    /// to leave; the results' own query is unchanged. On a realm without sync, or results that
    /// made no subscription, there is nothing to remove and nothing happens.
    public func unsubscribe() {}
}
