// cove_*_observe, cove_token_invalidate, cove_deliver, cove_notification_fd and
// cove_wait_for_change: the engine's notifications (Notifications/Notifier.swift) for C. A C callback is
// held by its token; the engine's closure holds it weakly, and strongly only while calling it, so
// a token released inside its own callback frees the user data once that call returns.
import CCove
import Cove

/// A C callback with its user data. `free_userdata` runs in deinit: exactly once, when the last
/// reference goes (the token's or configuration's, or that of a call in progress). Notification,
/// section key, migration and compaction callbacks all use it.
///
/// `@unchecked Sendable`: the fields never change but for `disarm()` before the callback is
/// handed out; the C side answers for the thread safety of its function and user data, as the
/// header says of each callback.
final class CCallback<Function>: @unchecked Sendable {
    let function: Function
    let userdata: UnsafeMutableRawPointer?
    private var freeUserdata: cove_free_fn?

    init(_ function: Function, _ userdata: UnsafeMutableRawPointer?, _ freeUserdata: cove_free_fn?) {
        self.function = function
        self.userdata = userdata
        self.freeUserdata = freeUserdata
    }

    /// For a registration that failed: the user data stays the caller's.
    func disarm() {
        freeUserdata = nil
    }

    deinit {
        freeUserdata?(userdata)
    }
}

// MARK: Checks

/// The key paths a caller passed: nil for a NULL array (every property), [] for none.
func keyPaths(_ paths: UnsafePointer<UnsafePointer<CChar>?>?, _ n: Int, in function: StaticString) throws(CFailure) -> [String]? {
    // size_t arrives as Int: a count above Int.max arrives negative.
    guard n >= 0 else { throw invalidArgument(function, "n_key_paths \(UInt(bitPattern: n)) is too large") }
    guard let paths else {
        if n > 0 { throw invalidArgument(function, "key_paths is NULL with n_key_paths \(n)") }
        return nil
    }
    var out: [String] = []
    out.reserveCapacity(n)
    for i in 0..<n {
        guard let p = paths[i] else { throw invalidArgument(function, "key_paths[\(i)] is NULL") }
        guard let s = String(validatingCString: p) else { throw invalidArgument(function, "key_paths[\(i)] is not valid UTF-8") }
        out.append(s)
    }
    return out
}

/// Refuses to observe where nothing can be delivered, with the header's statuses, before the
/// checks that only make sense on a live realm outside a write.
func requireObservable(_ realm: Realm, _ what: String, in function: StaticString) throws(CFailure) {
    try requireOpen(realm, in: function)
    if realm.isFrozen {
        throw failure(Int32(COVE_ERR_FROZEN), "\(function): a frozen \(what) cannot be observed: it never changes")
    }
    if realm.isInWriteTransaction {
        throw failure(Int32(COVE_ERR_IN_WRITE), "\(function): cannot observe \(what) inside a write transaction")
    }
}

/// Registers `box` through `observe` and hands out the token (+1). When registering fails, the
/// user data is not freed: it stays the caller's. `keeping` is what the engine's closure needs but
/// holds weakly (a section key callback, a projection): the token keeps it alive with the callback.
func register<F>(_ box: CCallback<F>, of realm: RealmHandle, to out: UnsafeMutablePointer<OpaquePointer?>,
                 keeping kept: AnyObject? = nil, _ observe: () throws(CoveError) -> NotificationToken) throws(CFailure) {
    let token: NotificationToken
    do throws(CFailure) {
        token = try call(observe)
    } catch {
        box.disarm()
        throw error
    }
    let held: AnyObject = kept.map { CallbackAndKept(callback: box, kept: $0) } ?? box
    out.pointee = TokenHandle(realm, token, held).retainedPointer()
}

/// A token's callback together with what its engine closure needs alive: dropped together when
/// the token goes.
private final class CallbackAndKept {
    let callback: AnyObject
    let kept: AnyObject

    init(callback: AnyObject, kept: AnyObject) {
        self.callback = callback
        self.kept = kept
    }
}

// MARK: Calling back

/// Calls a collection callback with a change object lent for the call. The callback itself is
/// kept alive until the call returns, whatever the call releases.
private func callBack(_ box: CCallback<cove_collection_cb>, _ change: CollectionChange) {
    let changes = CollectionChangesHandle(change)
    withExtendedLifetime((box, changes)) { box.function(box.userdata, changes.borrowedPointer()) }
    changes.end()
}

private func callBack(_ box: CCallback<cove_map_cb>, _ change: RealmMapChange) {
    let changes = MapChangesHandle(change)
    withExtendedLifetime((box, changes)) { box.function(box.userdata, changes.borrowedPointer()) }
    changes.end()
}

private func callBack(_ box: CCallback<cove_object_cb>, _ change: ObjectChange<DynamicObject>, _ object: DynamicObject) {
    let changes = ObjectChangesHandle(change, of: object)
    withExtendedLifetime((box, changes)) { box.function(box.userdata, changes.borrowedPointer()) }
    changes.end()
}

// MARK: Observing

@c @implementation
public func cove_results_observe(_ results: OpaquePointer?, _ keyPathsArray: UnsafePointer<UnsafePointer<CChar>?>?, _ nKeyPaths: Int,
                                 _ callback: cove_collection_cb?, _ userdata: UnsafeMutableRawPointer?, _ freeUserdata: cove_free_fn?,
                                 _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    let function: StaticString = "cove_results_observe"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let r = try handle(results, ResultsHandle.self, "results", in: function)
        let paths = try keyPaths(keyPathsArray, nKeyPaths, in: function)
        guard let callback else { throw invalidArgument(function, "callback is NULL") }
        let realm = r.realmHandle.realm
        try requireObservable(realm, "results", in: function)
        if let source = r.source, (try? realm.dynamicObject(ofType: source.ownerClass, objectKey: source.ownerKey)) == nil {
            throw failure(Int32(COVE_ERR_INVALIDATED), "\(function): the \(source.ownerClass) object \(source.ownerKey) that owns \(source.label) was deleted")
        }
        if !r.holdsObjects, let paths, !paths.isEmpty {
            throw invalidArgument(function, "the results hold \(r.elementsLabel): key paths name properties of objects")
        }
        let box = CCallback(callback, userdata, freeUserdata)
        let block: (CollectionChange) -> Void = { [weak box] change in
            if let box { callBack(box, change) }
        }
        try register(box, of: r.realmHandle, to: out) { () throws(CoveError) in
            try r.lock.locked { () throws(CoveError) in
                switch r.contents {
                case .objects(let results): try results.observeChanges(keyPaths: paths, block)
                case .elements(let results): try results.observeChanges(keyPaths: paths, block)
                }
            }
        }
    }
}

@c @implementation
public func cove_list_observe(_ list: OpaquePointer?, _ keyPathsArray: UnsafePointer<UnsafePointer<CChar>?>?, _ nKeyPaths: Int,
                              _ callback: cove_collection_cb?, _ userdata: UnsafeMutableRawPointer?, _ freeUserdata: cove_free_fn?,
                              _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    let function: StaticString = "cove_list_observe"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let l = try handle(list, ListHandle.self, "list", in: function)
        let paths = try keyPaths(keyPathsArray, nKeyPaths, in: function)
        guard let callback else { throw invalidArgument(function, "callback is NULL") }
        try requireObservable(l.list.realm, "list", in: function)
        let box = CCallback(callback, userdata, freeUserdata)
        try register(box, of: l.realmHandle, to: out) { () throws(CoveError) in
            try l.list.observeChanges(keyPaths: paths) { [weak box] change in
                if let box { callBack(box, change) }
            }
        }
    }
}

@c @implementation
public func cove_set_observe(_ set: OpaquePointer?, _ keyPathsArray: UnsafePointer<UnsafePointer<CChar>?>?, _ nKeyPaths: Int,
                             _ callback: cove_collection_cb?, _ userdata: UnsafeMutableRawPointer?, _ freeUserdata: cove_free_fn?,
                             _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    let function: StaticString = "cove_set_observe"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let s = try handle(set, SetHandle.self, "set", in: function)
        let paths = try keyPaths(keyPathsArray, nKeyPaths, in: function)
        guard let callback else { throw invalidArgument(function, "callback is NULL") }
        try requireObservable(s.set.realm, "set", in: function)
        let box = CCallback(callback, userdata, freeUserdata)
        try register(box, of: s.realmHandle, to: out) { () throws(CoveError) in
            try s.set.observeChanges(keyPaths: paths) { [weak box] change in
                if let box { callBack(box, change) }
            }
        }
    }
}

@c @implementation
public func cove_map_observe(_ map: OpaquePointer?, _ keyPathsArray: UnsafePointer<UnsafePointer<CChar>?>?, _ nKeyPaths: Int,
                             _ callback: cove_map_cb?, _ userdata: UnsafeMutableRawPointer?, _ freeUserdata: cove_free_fn?,
                             _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    let function: StaticString = "cove_map_observe"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let m = try handle(map, MapHandle.self, "map", in: function)
        let paths = try keyPaths(keyPathsArray, nKeyPaths, in: function)
        guard let callback else { throw invalidArgument(function, "callback is NULL") }
        try requireObservable(m.map.realm, "map", in: function)
        let box = CCallback(callback, userdata, freeUserdata)
        try register(box, of: m.realmHandle, to: out) { () throws(CoveError) in
            try m.map.observeChanges(keyPaths: paths) { [weak box] change in
                if let box { callBack(box, change) }
            }
        }
    }
}

@c @implementation
public func cove_object_observe(_ object: OpaquePointer?, _ keyPathsArray: UnsafePointer<UnsafePointer<CChar>?>?, _ nKeyPaths: Int,
                                _ callback: cove_object_cb?, _ userdata: UnsafeMutableRawPointer?, _ freeUserdata: cove_free_fn?,
                                _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    let function: StaticString = "cove_object_observe"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let o = try objectHandle(object, in: function)
        let paths = try keyPaths(keyPathsArray, nKeyPaths, in: function)
        guard let callback else { throw invalidArgument(function, "callback is NULL") }
        let observed = o.object
        try requireObservable(observed.realm, "object", in: function)
        if observed.isInvalidated {
            throw failure(Int32(COVE_ERR_INVALIDATED), "\(function): the \(observed.objectSchema.className) object \(observed.objectKey) was deleted: it cannot be observed")
        }
        let box = CCallback(callback, userdata, freeUserdata)
        try register(box, of: o.realmHandle, to: out) { () throws(CoveError) in
            try observed.observeChanges(keyPaths: paths) { [weak box] change in
                if let box { callBack(box, change, observed) }
            }
        }
    }
}

@c @implementation
public func cove_token_invalidate(_ token: OpaquePointer?) -> cove_status_t {
    entry { () throws(CFailure) in
        try handle(token, TokenHandle.self, "token", in: "cove_token_invalidate").invalidate()
    }
}

// MARK: Delivery

@c @implementation
public func cove_notification_fd(_ realm: OpaquePointer?, _ outFd: UnsafeMutablePointer<Int32>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(outFd, "out_fd", in: "cove_notification_fd")
        let h = try realmHandle(realm, in: "cove_notification_fd")
        out.pointee = try call { () throws(CoveError) in try h.realm.notificationFileDescriptor() }
    }
}

@c @implementation
public func cove_deliver(_ realm: OpaquePointer?) -> cove_status_t {
    entry { () throws(CFailure) in
        let h = try realmHandle(realm, in: "cove_deliver")
        try requireOpen(h.realm, in: "cove_deliver")
        if h.realm.isFrozen {
            throw failure(Int32(COVE_ERR_FROZEN), "cove_deliver: a frozen realm never changes: it has nothing to deliver")
        }
        // A callback may release the caller's last reference to the realm handle: it closes
        // the realm only once the delivery is over.
        defer { withExtendedLifetime(h) {} }
        h.clearScratch()
        try call { () throws(CoveError) in try h.realm.deliver() }
        h.subscribeCompletions.deliver()
    }
}

/// The longest wait passed on as such: beyond it (about 31 years) the engine's deadline
/// arithmetic would overflow, and the wait is as good as forever.
private let longestWaitMs: Int64 = 1_000_000_000_000

@c @implementation
public func cove_wait_for_change(_ realm: OpaquePointer?, _ timeoutMs: Int64, _ outChanged: UnsafeMutablePointer<Bool>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let h = try realmHandle(realm, in: "cove_wait_for_change")
        if timeoutMs < -1 {
            throw invalidArgument("cove_wait_for_change", "timeout \(timeoutMs) ms is below -1 (forever)")
        }
        let timeout = timeoutMs > longestWaitMs ? -1 : timeoutMs
        let changed = try call { () throws(CoveError) in try h.realm.waitForChange(timeoutMilliseconds: timeout) }
        outChanged?.pointee = changed
    }
}
