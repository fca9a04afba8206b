// realm-swift's way to observe and to move between threads: `observe(keyPaths:on:_:)` on
// results, lists, sets, objects and projections, delivering `RealmCollectionChange<Self>` and
// `ObjectChange<Self>`, and the `ThreadConfined` protocol (`realm`, `isFrozen`, `freeze()`,
// `thaw()`). These calls do not throw: a registration that cannot be made (a frozen
// collection, inside a write, a key path that names no property) is reported through the
// block's `.error` case before `observe` returns, and its token observes nothing.
// `observeChanges` is Cove's own registration, which throws and delivers the full change set.
import CoveCore
import Dispatch

/// A value that belongs to the thread of its realm, with a frozen copy readable from any thread
/// (realm-swift's `ThreadConfined`).
public protocol ThreadConfined {
    /// The realm that manages the value; nil when it has none (unmanaged) or it was closed.
    var realm: Realm? { get }
    /// Whether the value can no longer be read (its realm closed, its object deleted).
    var isInvalidated: Bool { get }
    /// Whether the value belongs to a frozen realm.
    var isFrozen: Bool { get }
    /// A frozen (immutable) copy at the realm's current version, readable from any thread;
    /// itself when already frozen. Stops the program inside a write, as realm-swift does.
    func freeze() -> Self
    /// The live value this frozen copy was made from, at that realm's current version (itself
    /// when live); nil when it is gone.
    func thaw() -> Self?
}

/// What goes from the realm's thread to a dispatch queue or an actor. `@unchecked Sendable`: it
/// is made on the realm's thread for the other side alone and never touched there again, and
/// what it carries is a change about a frozen collection or object (readable from any thread),
/// and the block to call with it.
struct Handoff<Value>: @unchecked Sendable {
    let value: Value
}

/// `block`, called directly (on the realm's thread, at its delivery) when there is no queue, or
/// on `queue` asynchronously.
func delivering<Change>(on queue: DispatchQueue?, _ block: @escaping (Change) -> Void) -> (Change) -> Void {
    guard let queue else { return block }
    return { change in
        let handoff = Handoff(value: (change, block))
        queue.async { handoff.value.1(handoff.value.0) }
    }
}

extension NotificationToken {
    /// The token of an observation that could not start: it observes nothing.
    static func inert() -> NotificationToken { NotificationToken(nil) }
}

/// An observation of realm-swift's shape over Cove's: `register` makes Cove's registration,
/// whose changes `convert` turns into realm-swift's (told whether they go to a queue, which
/// wants a frozen copy); a registration that cannot be made is `failure` to the block, once,
/// and an inert token.
func observing<Native, Change>(on queue: DispatchQueue?, _ block: @escaping (Change) -> Void,
                               failure: (Error) -> Change,
                               register: (@escaping (Native) -> Void) throws -> NotificationToken,
                               convert: @escaping (Native, _ toQueue: Bool) -> Change) -> NotificationToken {
    let send = delivering(on: queue, block)
    do {
        return try register { send(convert($0, queue != nil)) }
    } catch {
        send(failure(error))
        return .inert()
    }
}

/// An observation by Swift key paths: `names` turns them into property names for `observe`;
/// when it cannot, the block hears `failure` once.
func observing<Change>(on queue: DispatchQueue?, _ block: @escaping (Change) -> Void, failure: (Error) -> Change,
                       names: () throws(CoveError) -> [String], observe: ([String]) -> NotificationToken) -> NotificationToken {
    do {
        return observe(try names())
    } catch {
        delivering(on: queue, block)(failure(error))
        return .inert()
    }
}

extension RealmCollectionChange {
    /// The realm-swift form of a Cove change set, about `collection`.
    init(_ change: CollectionChange, _ collection: CollectionType) {
        switch change {
        case .initial: self = .initial(collection)
        case .update(let c): self = .update(collection, deletions: c.deletions, insertions: c.insertions, modifications: c.modifications)
        case .error(let e): self = .error(e)
        }
    }
}

// MARK: - Results

extension Results: ThreadConfined {
    /// A frozen copy at the realm's current version; stops the program on a failure (inside a
    /// write), as realm-swift does (`checkedFreeze()` throws instead).
    public func freeze() -> Results<Element> {
        do { return try checkedFreeze() } catch { preconditionFailure("Results.freeze(): \(error.message)") }
    }

    /// The same results in the live realm this frozen copy was made from; itself when live;
    /// nil when that realm was closed or the results' list or set lost its owner since.
    /// `thaw(in:)` names another live realm.
    public func thaw() -> Results<Element>? {
        if !isFrozen { return self }
        guard let live = engine.realm.liveSource, !live.isClosed else { return nil }
        return try? thaw(in: live)
    }

    /// Calls `block` with `.initial(results)` at the realm's next delivery, then with
    /// `.update(results, deletions:insertions:modifications:)` after each commit that changed
    /// the matches or their objects (key paths as for `observeChanges`). With a `queue`, the
    /// block runs on it with a frozen copy of the results at the delivered version. A
    /// registration that cannot be made is `.error` before this returns.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<Results<Element>>) -> Void) -> NotificationToken {
        observing(on: queue, block, failure: { .error($0) },
                  register: { try observeChanges(keyPaths: keyPaths, $0) },
                  convert: { [self] change, toQueue in RealmCollectionChange(change, toQueue ? ((try? checkedFreeze()) ?? self) : self) })
    }
}

extension Results where Element: Object {
    /// `observe` with Swift key paths (`[\Dog.name, \Dog.owner.name]`).
    public func observe(keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<Results<Element>>) -> Void) -> NotificationToken {
        observing(on: queue, block, failure: { .error($0) }, names: { () throws(CoveError) in try _KeyPathRecorder.paths(keyPaths, of: Element.self) },
                  observe: { observe(keyPaths: $0, on: queue, block) })
    }
}

// MARK: - Objects

extension ObjectChange {
    /// The realm-swift form of an object change about `object`.
    fileprivate func about<U>(_ object: U) -> ObjectChange<U> { map { _ in object } }
}

/// What lets an object's `observe` name its own class in `ObjectChange<Self>` (every `Object`
/// is one).
public protocol ObjectObservable: AnyObject {}

extension Object: ObjectObservable {}

extension ObjectObservable where Self: Object {
    /// Calls `block` after each commit that wrote the object's properties (or, without key
    /// paths, those of the objects it links to) with `.change(object, properties)`, and once
    /// with `.deleted`. No initial call. With a `queue`, the block runs on it with a frozen
    /// copy of the object. A registration that cannot be made (an unmanaged or deleted object,
    /// a frozen one, inside a write) is `.error` before this returns.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (ObjectChange<Self>) -> Void) -> NotificationToken {
        observing(on: queue, block, failure: { .error($0) },
                  register: { try observeChanges(keyPaths: keyPaths, $0) },
                  convert: { [self] change, toQueue in change.about(toQueue ? ((try? freeze()) ?? self) : self) })
    }

    /// `observe` with Swift key paths (`[\Dog.name]`).
    public func observe(keyPaths: [PartialKeyPath<Self>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (ObjectChange<Self>) -> Void) -> NotificationToken {
        observing(on: queue, block, failure: { .error($0) }, names: { () throws(CoveError) in try _KeyPathRecorder.paths(keyPaths, of: Self.self) },
                  observe: { observe(keyPaths: $0, on: queue, block) })
    }
}

// MARK: - Projections

extension Projection: ThreadConfined {
    /// A projection of the frozen root object; stops the program on a failure (an unmanaged
    /// root, inside a write). `checkedFreeze()` throws instead.
    public func freeze() -> Self {
        do { return try checkedFreeze() } catch { preconditionFailure("\(type(of: self)).freeze(): \(error.message)") }
    }

    /// The projection of the root object in the live realm it was frozen from (itself when
    /// live); nil when it was deleted since or that realm was closed.
    public func thaw() -> Self? {
        if !isFrozen { return self }
        guard let live = rootObject.realm?.liveSource, !live.isClosed else { return nil }
        return try? thaw(in: live)
    }
}

/// A projection, as realm-swift's `ProjectionObservable`: its root object and the observation
/// of its projected properties (every `Projection` subclass is one).
public protocol ProjectionObservable: AnyObject, ThreadConfined, SendableMetatype {
    /// The class of the projected object.
    associatedtype Root: Object
    /// The projected object.
    var rootObject: Root { get }
}

extension Projection: ProjectionObservable {}

extension ProjectionObservable {
    /// This projection as its base class, whose registration the methods below use.
    private var projection: Projection<Root> {
        guard let p = self as AnyObject as? Projection<Root> else {
            preconditionFailure("\(Self.self) is not a Projection of \(Root.className)")
        }
        return p
    }

    /// Calls `block` after each commit that changed what a projected property reads (with
    /// `keyPaths`, those projected properties only) with `.change(projection, properties)` in
    /// projected names, and once with `.deleted`. No initial call. With a `queue`, the block
    /// runs on it with a frozen copy. A registration that cannot be made is `.error` before
    /// this returns.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (ObjectChange<Self>) -> Void) -> NotificationToken {
        observing(on: queue, block, failure: { .error($0) },
                  register: { try projection.observeChanges(keyPaths: keyPaths, $0) },
                  convert: { [self] change, toQueue in change.about(toQueue ? freeze() : self) })
    }

    /// `observe` with key paths of the projection (`[\PersonView.name]`).
    public func observe(keyPaths: [PartialKeyPath<Self>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (ObjectChange<Self>) -> Void) -> NotificationToken {
        observing(on: queue, block, failure: { .error($0) }, names: { () throws(CoveError) in try projectedNames(keyPaths) },
                  observe: { observe(keyPaths: $0, on: queue, block) })
    }

    /// The projected property names of key paths of the projection. A projected property is
    /// found by what it reads: the key path is read on a projection of a recording root, whose
    /// properties note their names.
    private func projectedNames(_ keyPaths: [PartialKeyPath<Self>]) throws(CoveError) -> [String] {
        let fields = try ProjectionFields.of(type(of: projection))
        return try keyPaths.map { (keyPath) throws(CoveError) -> String in
            let recorder = _KeyPathRecorder()
            guard let recording = Root._coveRecording(recorder),
                  let probe = type(of: projection).init(projecting: recording) as AnyObject as? Self else {
                throw CoveError(.internal, "\(Root.className) cannot record key paths")
            }
            _ = probe[keyPath: keyPath]
            let path = recorder.names.joined(separator: ".")
            guard let field = fields.first(where: { $0.keyPath == path }) else {
                throw CoveError(.invalidArgument, "key path \(keyPath) names no @Projected property of \(Self.self)")
            }
            return field.name
        }
    }

    /// `observe`, with the block isolated to `actor`: each change is handed to the actor with a
    /// frozen copy of the projection (readable there). Returns once the observation is
    /// registered; `.error` comes first when it cannot be. The registration runs on the
    /// caller's executor, where the projection's live realm belongs.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, ObjectChange<Self>) -> Void) async -> NotificationToken {
        let hop: (ObjectChange<Self>) -> Void = { change in
            let handoff = Handoff(value: change)
            let run: @Sendable (isolated A) -> Void = { isolated in block(isolated, handoff.value) }
            Task { await actor.run(run) }
        }
        do {
            return try projection.observeChanges(keyPaths: keyPaths) { [self] change in
                hop(change.about(freeze()))
            }
        } catch {
            hop(.error(error))
            return .inert()
        }
    }
}

extension Actor {
    /// Runs `body` isolated to this actor.
    fileprivate func run(_ body: @Sendable (isolated Self) -> Void) {
        body(self)
    }
}

// MARK: - Lists and sets of model classes

/// What `List` and `MutableSet` share when managed: the dynamic list or set they go through.
protocol ManagedElements: AnyObject, Collection {
    associatedtype Managed: DynamicCollection
    var managed: Managed? { get }
    init(managed: Managed)
}

extension ManagedElements {
    var managedIsInvalidated: Bool { managed.map { $0.owner.isInvalidated || $0.realm.isClosed } ?? false }
    var managedIsFrozen: Bool { managed?.realm.isFrozen ?? false }

    /// The same collection of `owner` (another version of its object).
    private func reopened(on owner: DynamicObject) throws(CoveError) -> Self {
        guard let same = try owner.collection(managed?.property.name ?? "") as? Managed else {
            throw CoveError(.internal, "\(Self.self): the property is of another kind")
        }
        return Self(managed: same)
    }

    /// A frozen copy of a managed collection (an unmanaged one is itself); stops the program
    /// on a failure (inside a write).
    func frozenCopy() -> Self {
        guard let managed, !managed.realm.isFrozen else { return self }
        do { return try reopened(on: try managed.owner.freeze()) } catch { managedFailure("\(Self.self).freeze()", error) }
    }

    /// The live collection a frozen copy was made from; nil when its owner was deleted since.
    func thawedCopy() -> Self? {
        guard let managed, managed.realm.isFrozen else { return self }
        guard let live = managed.realm.liveSource, !live.isClosed,
              let owner = try? managed.owner.thaw(in: live) else { return nil }
        return try? reopened(on: owner)
    }

    /// realm-swift's observation of a list or set.
    func observeElements(keyPaths: [String]?, on queue: DispatchQueue?,
                         _ block: @escaping (RealmCollectionChange<Self>) -> Void) -> NotificationToken {
        observing(on: queue, block, failure: { .error($0) },
                  register: { callback in
                      guard let managed else { throw CoveError(.invalidArgument, "an unmanaged \(Self.self) cannot be observed") }
                      return try managed.observeElements(keyPaths: keyPaths, callback)
                  },
                  convert: { [self] change, toQueue in RealmCollectionChange(change, toQueue ? frozenCopy() : self) })
    }
}

extension List: ThreadConfined, ManagedElements {
    /// Whether the list can no longer be read (its owner was deleted or its realm closed).
    public var isInvalidated: Bool { managedIsInvalidated }
    /// Whether the list belongs to a frozen realm.
    public var isFrozen: Bool { managedIsFrozen }
    /// A frozen copy of a managed list (an unmanaged list is itself); stops the program on a
    /// failure (inside a write).
    public func freeze() -> List<Element> { frozenCopy() }
    /// The live list this frozen copy was made from; nil when its owner was deleted since.
    public func thaw() -> List<Element>? { thawedCopy() }

    /// Calls `block` with `.initial(list)` at the realm's next delivery, then with the list's
    /// changes (a move is a deletion and an insertion). A registration that cannot be made (an
    /// unmanaged list, a frozen one, inside a write) is `.error` before this returns.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<List<Element>>) -> Void) -> NotificationToken {
        observeElements(keyPaths: keyPaths, on: queue, block)
    }
}

extension MutableSet: ThreadConfined, ManagedElements {
    /// The realm of a managed set.
    public var realm: Realm? { managed?.realm }
    /// Whether the set can no longer be read (its owner was deleted or its realm closed).
    public var isInvalidated: Bool { managedIsInvalidated }
    /// Whether the set belongs to a frozen realm.
    public var isFrozen: Bool { managedIsFrozen }
    /// A frozen copy of a managed set (an unmanaged set is itself); stops the program on a
    /// failure (inside a write).
    public func freeze() -> MutableSet<Element> { frozenCopy() }
    /// The live set this frozen copy was made from; nil when its owner was deleted since.
    public func thaw() -> MutableSet<Element>? { thawedCopy() }

    /// Calls `block` with `.initial(set)` at the realm's next delivery, then with the set's
    /// changes by position in its order. A registration that cannot be made is `.error`
    /// before this returns.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<MutableSet<Element>>) -> Void) -> NotificationToken {
        observeElements(keyPaths: keyPaths, on: queue, block)
    }
}
