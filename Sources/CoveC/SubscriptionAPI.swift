// cove_results_subscribe*, cove_results_unsubscribe and cove_subscriptions_*: the flexible-sync
// subscriptions of a synced realm (Sync/SyncSubscriptionSet.swift, Results+Subscription.swift)
// for C. Changes are committed on the calling thread; waits for the server's objects wait on the
// file's sync session, never on the realm, so that the realm stays free for its thread. The
// callback of cove_results_subscribe() is queued on the realm handle when its wait ends and runs
// inside cove_deliver() or cove_refresh(), as notifications do.
import CCove
@_spi(CoveBindings) import Cove
import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

// MARK: Checks and helpers

/// Runs a Swift call that throws untyped errors, recording a CoveError's code and message (any
/// other error is an internal one).
private func callThrowing<R>(_ function: StaticString, _ body: () throws -> R) throws(CFailure) -> R {
    do {
        return try body()
    } catch let error as CoveError {
        throw failure(error.code.rawValue, error.message)
    } catch {
        throw failure(Int32(COVE_ERR_INTERNAL), "\(function): \(error)")
    }
}

/// Refuses a realm whose subscriptions cannot be read or changed, with the statuses the Swift
/// API throws: one that does not sync, a frozen one, one in a write transaction.
private func requireSubscribable(_ realm: Realm, in function: StaticString) throws(CFailure) {
    if realm.configuration.syncConfiguration == nil {
        throw invalidArgument(function, "subscriptions need a synced realm: this one was opened without cove_config_set_sync()")
    }
    if realm.isFrozen {
        throw failure(Int32(COVE_ERR_FROZEN), "\(function): a frozen realm's subscriptions cannot be read or changed (use its live realm)")
    }
    if realm.isInWriteTransaction {
        throw failure(Int32(COVE_ERR_IN_WRITE), "\(function): refused inside a write transaction (the subscription set is written in a transaction of its own)")
    }
}

/// A live, synced realm handle whose subscriptions can be used now.
private func subscribableRealm(_ pointer: OpaquePointer?, in function: StaticString) throws(CFailure) -> RealmHandle {
    let h = try realmHandle(pointer, in: function)
    try requireSubscribable(h.realm, in: function)
    return h
}

/// A timeout in seconds: -1 or infinity for none (nil), else 0 or more.
private func timeoutSeconds(_ seconds: Double, in function: StaticString) throws(CFailure) -> Double? {
    if seconds == -1 || seconds == .infinity { return nil }
    guard seconds >= 0, seconds.isFinite else {
        throw invalidArgument(function, "timeout_s \(seconds): expected 0 or more seconds, or -1 (or INFINITY) for no limit")
    }
    return seconds
}

private func waitMode(_ mode: cove_wait_for_sync_e, in function: StaticString) throws(CFailure) -> WaitForSyncMode {
    switch mode {
    case COVE_WAIT_FOR_SYNC_ALWAYS: return .always
    case COVE_WAIT_FOR_SYNC_ON_CREATION: return .onCreation
    case COVE_WAIT_FOR_SYNC_NEVER: return .never
    default:
        throw invalidArgument(function, "mode \(mode.rawValue) is not COVE_WAIT_FOR_SYNC_ALWAYS, _ON_CREATION or _NEVER")
    }
}

/// Commits a subscription of the results behind `pointer` (`subscribe`'s first half) and returns
/// the session to wait on, the version of the set to wait for, and whether `mode` waits (and
/// for the download after it).
private func commitSubscription(_ pointer: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ mode: cove_wait_for_sync_e,
                                _ timeout: Double?, in function: StaticString)
    throws(CFailure) -> (handle: ResultsHandle, session: SyncSession?, version: UInt64, waits: Bool, download: Bool) {
    let r = try handle(pointer, ResultsHandle.self, "results", in: function)
    let wanted = try waitMode(mode, in: function)
    let subscriptionName = try nonEmptyStringOrNil(name, "name", in: function, hint: " (pass NULL for an unnamed subscription)")
    let realm = r.realmHandle.realm
    try requireSubscribable(realm, in: function)
    let (version, waits) = try callThrowing(function) {
        try r.lock.locked {
            switch r.contents {
            case .objects(let results): try results.commitSubscription(name: subscriptionName, waitForSync: wanted, timeout: timeout)
            case .elements(let results): try results.commitSubscription(name: subscriptionName, waitForSync: wanted, timeout: timeout)
            }
        }
    }
    return (r, realm.syncSession, version, waits, wanted == .always)
}

/// Waits on `session` (not on a realm) until version `version` of the set has its objects, then
/// for the download when `download` is set; the failure is returned as a status and message.
private func waitForSubscriptions(_ session: SyncSession?, _ version: UInt64, download: Bool,
                                  _ timeout: Double?) -> (cove_status_t, String?) {
    do throws(CoveError) {
        try Realm.waitForSubscriptions(session, version: version, download: download, timeout: timeout)
        return (cove_status_t(COVE_OK), nil)
    } catch {
        return (cove_status_t(error.code.rawValue), error.message)
    }
}

// MARK: Completions delivered like notifications

/// The callbacks of cove_results_subscribe() of one realm handle: waiting (their wait runs on a
/// thread of its own), then finished, until a delivery on the realm's thread calls them. Each is
/// called once: at a delivery, or when the realm closes (then with #COVE_ERR_CLOSED if its wait
/// had not ended); dropping its CCallback afterwards frees the user data.
final class SubscribeCompletions: @unchecked Sendable {
    private struct Finished {
        let callback: CCallback<cove_subscribe_cb>
        let status: cove_status_t
        let message: String?
    }

    private let lock = Lock()
    private var nextID = 0
    private var waiting: [Int: CCallback<cove_subscribe_cb>] = [:]
    private var finished: [Finished] = []
    private var closed = false
    private var delivering = false

    /// Takes a callback whose wait begins; nil once the realm is closed.
    func add(_ callback: CCallback<cove_subscribe_cb>) -> Int? {
        lock.locked { () -> Int? in
            if closed { return nil }
            nextID += 1
            waiting[nextID] = callback
            return nextID
        }
    }

    /// The wait of `id` ended: its callback waits for the next delivery.
    func finish(_ id: Int, _ status: cove_status_t, _ message: String?) {
        lock.locked {
            guard let callback = waiting.removeValue(forKey: id) else { return }
            finished.append(Finished(callback: callback, status: status, message: message))
        }
    }

    /// Calls the callbacks whose wait ended, on the delivering thread. Called again from inside
    /// one of them, it returns at once.
    func deliver() {
        let due = lock.locked { () -> [Finished] in
            if delivering { return [] }
            delivering = true
            defer { finished = [] }
            return finished
        }
        defer { lock.locked { delivering = false } }
        for f in due { call(f.callback, f.status, f.message) }
    }

    /// The realm closed: every callback is called now, those still waiting with
    /// #COVE_ERR_CLOSED; later waits that end call nothing.
    func close() {
        let (due, cut) = lock.locked { () -> ([Finished], [CCallback<cove_subscribe_cb>]) in
            closed = true
            defer { finished = []; waiting = [:] }
            return (finished, waiting.sorted { $0.key < $1.key }.map(\.value))
        }
        for f in due { call(f.callback, f.status, f.message) }
        for callback in cut {
            call(callback, cove_status_t(COVE_ERR_CLOSED), "the realm was closed before the subscription's wait ended")
        }
    }

    private func call(_ callback: CCallback<cove_subscribe_cb>, _ status: cove_status_t, _ message: String?) {
        if let message {
            message.withCString { callback.function(callback.userdata, status, $0) }
        } else {
            callback.function(callback.userdata, status, nil)
        }
    }
}

// MARK: Subscribing results

@c @implementation
public func cove_results_subscribe(_ results: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ mode: cove_wait_for_sync_e,
                                   _ timeoutS: Double, _ callback: cove_subscribe_cb?, _ userdata: UnsafeMutableRawPointer?,
                                   _ freeUserdata: cove_free_fn?) -> cove_status_t {
    let function: StaticString = "cove_results_subscribe"
    return entry { () throws(CFailure) in
        guard let callback else { throw invalidArgument(function, "callback is NULL") }
        let timeout = try timeoutSeconds(timeoutS, in: function)
        let (r, session, version, waits, download) = try commitSubscription(results, name, mode, timeout, in: function)
        let box = CCallback(callback, userdata, freeUserdata)
        let completions = r.realmHandle.subscribeCompletions
        guard let id = completions.add(box) else {
            box.disarm()
            throw closedRealm(function)
        }
        guard waits else {
            completions.finish(id, cove_status_t(COVE_OK), nil)
            r.realmHandle.realm.notificationWaker()?()
            return
        }
        // Wakes an event loop waiting on the realm's notification descriptor, which then calls
        // cove_deliver() and so the callback.
        let wake = r.realmHandle.realm.notificationWaker()
        DispatchQueue.global().async {
            let (status, message) = waitForSubscriptions(session, version, download: download, timeout)
            completions.finish(id, status, message)
            wake?()
        }
    }
}

@c @implementation
public func cove_results_subscribe_blocking(_ results: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                                            _ mode: cove_wait_for_sync_e, _ timeoutS: Double) -> cove_status_t {
    let function: StaticString = "cove_results_subscribe_blocking"
    return entry { () throws(CFailure) in
        let timeout = try timeoutSeconds(timeoutS, in: function)
        let (_, session, version, waits, download) = try commitSubscription(results, name, mode, timeout, in: function)
        guard waits else { return }
        let (status, message) = waitForSubscriptions(session, version, download: download, timeout)
        if let message { throw failure(status, "\(function): \(message)") }
    }
}

@c @implementation
public func cove_results_unsubscribe(_ results: OpaquePointer?) -> cove_status_t {
    let function: StaticString = "cove_results_unsubscribe"
    return entry { () throws(CFailure) in
        let r = try handle(results, ResultsHandle.self, "results", in: function)
        let realm = r.realmHandle.realm
        // A realm that does not sync has made no subscription: nothing to remove, as in Swift.
        guard realm.configuration.syncConfiguration != nil else { return }
        try requireSubscribable(realm, in: function)
        r.lock.locked {
            switch r.contents {
            case .objects(let results): results.unsubscribe()
            case .elements(let results): results.unsubscribe()
            }
        }
    }
}

// MARK: Updating the set

/// The update cove_subscriptions_update_begin() began on `h`.
private func openUpdate(_ h: RealmHandle, in function: StaticString) throws(CFailure) -> SyncSubscriptionSet {
    guard let set = h.subscriptionUpdate else {
        throw invalidArgument(function, "no subscription update is in progress (call cove_subscriptions_update_begin() first)")
    }
    return set
}

@c @implementation
public func cove_subscriptions_update_begin(_ realm: OpaquePointer?) -> cove_status_t {
    let function: StaticString = "cove_subscriptions_update_begin"
    return entry { () throws(CFailure) in
        let h = try subscribableRealm(realm, in: function)
        if h.subscriptionUpdate != nil {
            throw invalidArgument(function, "an update is already in progress (commit or cancel it first)")
        }
        let set = h.realm.subscriptions
        try call { () throws(CoveError) in try set.beginUpdate() }
        h.subscriptionUpdate = set
    }
}

@c @implementation
public func cove_subscriptions_append(_ realm: OpaquePointer?, _ className: UnsafePointer<CChar>?, _ query: UnsafePointer<CChar>?,
                                      _ args: UnsafePointer<cove_value_t>?, _ nArgs: Int, _ name: UnsafePointer<CChar>?) -> cove_status_t {
    let function: StaticString = "cove_subscriptions_append"
    return entry { () throws(CFailure) in
        let h = try realmHandle(realm, in: function)
        let cls = try string(className, "class_name", in: function)
        var text = "TRUEPREDICATE"
        if query != nil { text = try string(query, "query", in: function) }
        let arguments = try queryArguments(args, nArgs, in: function)
        let subscriptionName = try nonEmptyStringOrNil(name, "name", in: function, hint: " (pass NULL for an unnamed subscription)")
        let set = try openUpdate(h, in: function)
        try call { () throws(CoveError) in
            try set.append(className: cls, where: text, arguments: arguments, name: subscriptionName)
        }
    }
}

@c @implementation
public func cove_subscriptions_remove(_ realm: OpaquePointer?, _ name: UnsafePointer<CChar>?) -> cove_status_t {
    let function: StaticString = "cove_subscriptions_remove"
    return entry { () throws(CFailure) in
        let h = try realmHandle(realm, in: function)
        let subscriptionName = try string(name, "name", in: function)
        let set = try openUpdate(h, in: function)
        try call { () throws(CoveError) in try set.remove(named: subscriptionName) }
    }
}

@c @implementation
public func cove_subscriptions_remove_all(_ realm: OpaquePointer?, _ className: UnsafePointer<CChar>?, _ unnamedOnly: Bool) -> cove_status_t {
    let function: StaticString = "cove_subscriptions_remove_all"
    return entry { () throws(CFailure) in
        let h = try realmHandle(realm, in: function)
        var cls: String?
        if className != nil { cls = try string(className, "class_name", in: function) }
        let set = try openUpdate(h, in: function)
        try call { () throws(CoveError) in
            switch (cls, unnamedOnly) {
            case (nil, _): try set.removeAll(unnamedOnly: unnamedOnly)
            case (let cls?, false): try set.removeAll(ofClass: cls)
            case (let cls?, true):
                // The set has no call for both: the unnamed ones of the class, one by one.
                for subscription in Array(set) where subscription.name == nil && subscription.objectClassName == cls {
                    try set.remove(subscription)
                }
            }
        }
    }
}

@c @implementation
public func cove_subscriptions_update_commit(_ realm: OpaquePointer?, _ outVersion: UnsafeMutablePointer<UInt64>?) -> cove_status_t {
    let function: StaticString = "cove_subscriptions_update_commit"
    return entry { () throws(CFailure) in
        let h = try realmHandle(realm, in: function)
        let set = try openUpdate(h, in: function)
        // Committing ends the update, whether it succeeds or not.
        h.subscriptionUpdate = nil
        let version = try callThrowing(function) { try set.commitUpdate() }
        outVersion?.pointee = version
    }
}

@c @implementation
public func cove_subscriptions_update_cancel(_ realm: OpaquePointer?) -> cove_status_t {
    entry { () throws(CFailure) in
        let h = try realmHandle(realm, in: "cove_subscriptions_update_cancel")
        h.subscriptionUpdate?.cancelUpdate()
        h.subscriptionUpdate = nil
    }
}

// MARK: Reading the set

@c @implementation
public func cove_subscriptions_get_version(_ realm: OpaquePointer?, _ outVersion: UnsafeMutablePointer<UInt64>?) -> cove_status_t {
    let function: StaticString = "cove_subscriptions_get_version"
    return entry { () throws(CFailure) in
        let out = try required(outVersion, "out_version", in: function)
        let h = try subscribableRealm(realm, in: function)
        out.pointee = UInt64(max(0, h.realm.subscriptions.version))
    }
}

@c @implementation
public func cove_subscriptions_get_state(_ realm: OpaquePointer?, _ outState: UnsafeMutablePointer<Int32>?,
                                         _ outError: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> cove_status_t {
    let function: StaticString = "cove_subscriptions_get_state"
    return entry { () throws(CFailure) in
        let out = try required(outState, "out_state", in: function)
        let h = try subscribableRealm(realm, in: function)
        var message: String?
        switch h.realm.subscriptions.state {
        case .pending: out.pointee = Int32(COVE_SUBSCRIPTION_PENDING.rawValue)
        case .bootstrapping: out.pointee = Int32(COVE_SUBSCRIPTION_BOOTSTRAPPING.rawValue)
        case .complete: out.pointee = Int32(COVE_SUBSCRIPTION_COMPLETE.rawValue)
        case .superseded: out.pointee = Int32(COVE_SUBSCRIPTION_SUPERSEDED.rawValue)
        case .error(let error):
            out.pointee = Int32(COVE_SUBSCRIPTION_ERROR.rawValue)
            message = error.message
        }
        outError?.pointee = message.map { strdup($0) } ?? nil
    }
}

@c @implementation
public func cove_subscriptions_count(_ realm: OpaquePointer?, _ outCount: UnsafeMutablePointer<Int>?) -> cove_status_t {
    let function: StaticString = "cove_subscriptions_count"
    return entry { () throws(CFailure) in
        let out = try required(outCount, "out_count", in: function)
        out.pointee = try subscribableRealm(realm, in: function).realm.subscriptions.count
    }
}

/// A date of the set (milliseconds since 1970) as a timestamp, nanoseconds of the seconds' sign.
private func timestamp(_ date: Date) -> cove_timestamp_t {
    let ms = (date.timeIntervalSince1970 * 1000).rounded()
    guard ms.isFinite, ms.magnitude < 9e15 else { return cove_timestamp_t(seconds: 0, nanoseconds: 0) }
    let whole = Int64(ms)
    return cove_timestamp_t(seconds: whole / 1000, nanoseconds: Int32(whole % 1000) * 1_000_000)
}

@c @implementation
public func cove_subscriptions_get(_ realm: OpaquePointer?, _ index: Int, _ out: UnsafeMutablePointer<cove_subscription_t>?) -> cove_status_t {
    let function: StaticString = "cove_subscriptions_get"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let h = try subscribableRealm(realm, in: function)
        let i = try position(index, "index", in: function)
        let set = h.realm.subscriptions
        guard let s = set[i] else {
            throw failure(Int32(COVE_ERR_OUT_OF_RANGE), "\(function): index \(i) is out of range (the set holds \(set.count))")
        }
        func text(_ s: String) -> UnsafePointer<CChar>? {
            let (p, _) = (Array(s.utf8) + [0]).withUnsafeBytes { h.keep($0) }
            return p.map { UnsafePointer($0.assumingMemoryBound(to: CChar.self)) }
        }
        var sub = cove_subscription_t()
        sub.name = s.name.flatMap(text)
        sub.class_name = text(s.objectClassName)
        sub.query = text(s.queryString)
        sub.created_at = timestamp(s.createdAt)
        sub.updated_at = timestamp(s.updatedAt)
        out.pointee = sub
    }
}

@c @implementation
public func cove_subscriptions_wait(_ realm: OpaquePointer?, _ version: UInt64, _ timeoutS: Double) -> cove_status_t {
    let function: StaticString = "cove_subscriptions_wait"
    return entry { () throws(CFailure) in
        let h = try subscribableRealm(realm, in: function)
        let timeout = try timeoutSeconds(timeoutS, in: function)
        let newest = UInt64(max(0, h.realm.subscriptions.version))
        if version > newest {
            throw invalidArgument(function, "version \(version) of the subscription set was not committed (the newest is \(newest))")
        }
        // From here on the realm is not used: its thread may take it back during the wait.
        let (status, message) = waitForSubscriptions(h.realm.syncSession, version, download: false, timeout)
        if let message { throw failure(status, "\(function): \(message)") }
    }
}
