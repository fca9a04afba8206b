// How an upload transaction takes changesets in: each operation checked against the write rules
// and the uploading file's subscriptions, on the objects' states as the operations before it
// leave them; refused operations left out, and answered by a compensating changeset of the
// server's (node 0) that brings every file back to the server's state of the object.
// docs/SYNC.md, "Read and write rules".
import CoveSyncCore
import Foundation
import PostgresNIO

/// An object whose operations an upload's changeset had refused, and why.
public struct Compensation: Sendable, Equatable {
    public var object: SyncObjectRef
    /// For people: the rule, or that the object is outside the file's subscriptions.
    public var reason: String

    /// Each object once, with its first reason, in order.
    static func once(_ list: [Compensation]) -> [Compensation] {
        var seen = Set<SyncObjectRef>()
        return list.filter { seen.insert($0.object).inserted }
    }

    static let outsideSubscriptions = "outside the file's subscriptions"

    static func writeRule(_ query: SubscriptionQuery) -> String {
        "write rule of class '\(query.className)' (\(query.text))"
    }
}

/// The merging of an upload transaction's changesets into the states it read.
struct UploadIntegration {
    let schema: ServerSchema?
    let rules: ServerRules?
    /// The states of the objects the uploads touch (absent: never seen).
    var states: [SyncObjectRef: SyncObjectState]
    /// The objects whose states are to be written.
    private(set) var touched = Set<SyncObjectRef>()
    /// The server's clock: its compensating changesets' clocks come after it.
    private(set) var serverClock: SyncClock
    private(set) var clockMoved = false
    /// Each user's write rules, by class (nil: none).
    private var writeRules: [String: [String: SubscriptionQuery?]] = [:]

    init(schema: ServerSchema?, rules: ServerRules?, states: [SyncObjectRef: SyncObjectState], serverClock: SyncClock) {
        self.schema = schema
        self.rules = rules
        self.states = states
        self.serverClock = serverClock
    }

    /// The touched objects' states, in (class, key) order.
    var changed: [(SyncObjectRef, SyncObjectState)] {
        touched.sorted().map { ($0, states[$0] ?? SyncObjectState()) }
    }

    /// What integrating one changeset did: the changeset as the history keeps it (without its
    /// refused operations), the server's compensating changeset, and the objects refused.
    struct Taken {
        var kept: Changeset
        var compensation: Changeset?
        var refused: [Compensation]
    }

    /// Merges `changeset` (of a file of `user` whose subscription set is `set`) in; a
    /// compensating changeset takes `serverVersion` as its version.
    mutating func integrate(_ changeset: Changeset, user: String, set: SubscriptionSet?, serverVersion: Int64) throws -> Taken {
        let byClass = set?.byClass
        var kept: [SyncOperation] = []
        var refused: [(SyncOperation, String)] = []
        kept.reserveCapacity(changeset.operations.count)
        for op in changeset.operations {
            touched.insert(op.object)
            var state = states[op.object] ?? SyncObjectState()
            let before = state
            state.apply(op)
            if let reason = refusal(op, before: before, after: state, user: user, subscriptions: byClass) {
                refused.append((op, reason))
                continue
            }
            states[op.object] = state
            kept.append(op)
        }
        guard !refused.isEmpty else { return Taken(kept: changeset, compensation: nil, refused: []) }
        // Clocks after the refused operations', and after every clock the server made before.
        let source = SyncClockSource(node: 0, maxDrift: SyncClock.maxWall, after: serverClock)
        try source.receive(changeset.clock, wall: SyncClockSource.systemWall())
        var undo: [SyncOperation] = []
        for (op, _) in refused {
            guard let cls = schema?.classes[op.object.className] else { continue }
            // Each against the state the compensations before it leave, so that two of one
            // object (a list element's removal refused, then the object's delete) do not both
            // put the element back.
            for change in Self.compensate(op, states[op.object] ?? SyncObjectState(), cls) {
                let made = try SyncOperation(clock: try source.now(wall: SyncClockSource.systemWall()), object: op.object, change: change)
                states[op.object, default: SyncObjectState()].apply(made)
                undo.append(made)
            }
        }
        let compensation = try Changeset(clientId: 0, clientVersion: UInt64(serverVersion),
                                         clock: try source.now(wall: SyncClockSource.systemWall()), operations: undo)
        serverClock = source.latest
        clockMoved = true
        return Taken(kept: try Changeset(clientId: changeset.clientId, clientVersion: changeset.clientVersion, clock: changeset.clock, operations: kept),
                     compensation: compensation, refused: Compensation.once(refused.map { Compensation(object: $0.0.object, reason: $0.1) }))
    }

    /// Why `op` is refused, nil when it is allowed: the class's write rule for `user` (a create
    /// checked after it, a delete before it, other writes before and after), then the file's
    /// subscriptions (the object covered after the operation; for a delete, before it). An
    /// operation other than a create on an object that does not exist is not checked.
    private mutating func refusal(_ op: SyncOperation, before: SyncObjectState, after: SyncObjectState, user: String,
                                  subscriptions: [String: [SubscriptionQuery]]?) -> String? {
        guard let cls = schema?.classes[op.object.className] else { return nil }
        let rule = writeRule(cls.name, user)
        guard rule != nil || subscriptions != nil else { return nil }
        let isCreate: Bool, isDelete: Bool
        switch op.change {
        case .create: (isCreate, isDelete) = (true, false)
        case .delete: (isCreate, isDelete) = (false, true)
        default: (isCreate, isDelete) = (false, false)
        }
        if !isCreate && !before.exists { return nil }
        func matches(_ q: SubscriptionQuery, _ s: SyncObjectState) -> Bool {
            s.exists && RowEvaluator(cls: cls, ref: op.object, state: s).matches(q)
        }
        if let rule {
            let ok: Bool
            if isCreate { ok = matches(rule, after) } else if isDelete { ok = matches(rule, before) } else {
                ok = matches(rule, before) && matches(rule, after)
            }
            if !ok { return Compensation.writeRule(rule) }
        }
        if let subscriptions {
            let state = isDelete ? before : after
            if !(subscriptions[cls.name] ?? []).contains(where: { matches($0, state) }) { return Compensation.outsideSubscriptions }
        }
        return nil
    }

    private mutating func writeRule(_ className: String, _ user: String) -> SubscriptionQuery? {
        guard let rules, rules.write[className] != nil else { return nil }
        if let known = writeRules[user]?[className] { return known }
        let rule = rules.writeRule(className, user: user)
        writeRules[user, default: [:]][className] = .some(rule)
        return rule
    }

    /// The changes that bring a file that applied the refused `op` back to `server`, the
    /// server's state of the object (docs/SYNC.md has the table).
    static func compensate(_ op: SyncOperation, _ server: SyncObjectState, _ cls: ServerClass) -> [SyncOperation.Change] {
        func element(_ p: String, _ id: SyncClock) -> SyncListElement? { server.listElements(p).first { $0.id == id } }
        switch op.change {
        case .create(let values):
            guard server.exists else { return [.delete] }
            return values.keys.sorted().map { .setProperty($0, server.property($0) ?? .null) }
        case .delete:
            return server.exists ? recreate(server, cls) : []
        case .setProperty(let p, _):
            return [.setProperty(p, server.property(p) ?? .null)]
        case .listInsert(let p, _, _):
            return [.listRemove(property: p, element: op.clock)]
        case .listRemove(let p, let id):
            guard let e = element(p, id) else { return [] }
            return [.listRemove(property: p, element: id), .listInsert(property: p, position: e.position, value: e.value)]
        case .listMove(let p, let id, _):
            guard let e = element(p, id) else { return [.listRemove(property: p, element: id)] }
            return [.listMove(property: p, element: id, position: e.position)]
        case .listSet(let p, let id, _):
            guard let e = element(p, id) else { return [.listRemove(property: p, element: id)] }
            return [.listSet(property: p, element: id, value: e.value)]
        case .setAdd(let p, let v), .setRemove(let p, let v):
            return [server.setValues(p).contains(v) ? .setAdd(property: p, value: v) : .setRemove(property: p, value: v)]
        case .mapSet(let p, let k, _), .mapRemove(let p, let k):
            if let e = server.mapEntries(p).first(where: { $0.key.utf8.elementsEqual(k.utf8) }) {
                return [.mapSet(property: p, key: k, value: e.value)]
            }
            return [.mapRemove(property: p, key: k)]
        }
    }

    /// A create with the server's values, and every element of its collections again (list
    /// elements removed and inserted anew, so that they show after the refused delete).
    static func recreate(_ server: SyncObjectState, _ cls: ServerClass) -> [SyncOperation.Change] {
        var values: [String: SyncValue] = [:]
        var rest: [SyncOperation.Change] = []
        for (name, type) in cls.properties.sorted(by: { $0.key < $1.key }) where name != cls.primaryKey {
            if case .linkingObjects = type.base { continue }
            switch type.collection {
            case nil:
                if let v = server.property(name) { values[name] = v }
            case .list?:
                for e in server.listElements(name) {
                    rest += [.listRemove(property: name, element: e.id), .listInsert(property: name, position: e.position, value: e.value)]
                }
            case .set?:
                rest += server.setValues(name).map { .setAdd(property: name, value: $0) }
            case .map?:
                rest += server.mapEntries(name).map { .mapSet(property: name, key: $0.key, value: $0.value) }
            }
        }
        return [.create(values: values)] + rest
    }
}

/// The compensations an upload transaction made, for `cove_sync_compensations`: what a retry
/// of the upload is answered.
struct CompensationRows {
    private var files: [UUID] = [], versions: [Int64] = [], positions: [Int32] = []
    private var classes: [String] = [], keys: [String] = [], reasons: [String] = []

    mutating func add(_ file: UUID, _ version: Int64, _ list: [Compensation]) {
        for (i, c) in list.enumerated() {
            files.append(file)
            versions.append(version)
            positions.append(Int32(i))
            classes.append(c.object.className)
            keys.append(c.object.key.json)
            reasons.append(c.reason)
        }
    }

    func write(into statement: inout FoldedStatement) {
        guard !files.isEmpty else { return }
        statement.add("""
            INSERT INTO cove_sync_compensations (client_file_id, client_version, position, class, key, reason)
            SELECT * FROM unnest(\(statement.bind(files))::uuid[], \(statement.bind(versions))::bigint[], \(statement.bind(positions))::integer[],
                                 \(statement.bind(classes))::text[], \(statement.bind(keys))::text[], \(statement.bind(reasons))::text[])
            WHERE \(statement.gate)
            """)
    }
}

/// One statement of several data-modifying CTEs (each table written once), so that a
/// transaction's writes take one round trip.
struct FoldedStatement {
    private(set) var bindings = PostgresBindings()
    private var parts: [String] = []
    /// The condition every part after the first writes under (an upload's: the counter was
    /// still what it read).
    var gate = "TRUE"

    /// The parameter `value` is bound to, as `$n`.
    mutating func bind<T: PostgresNonThrowingEncodable>(_ value: T) -> String {
        bindings.append(value)
        return "$\(bindings.count)"
    }

    mutating func bind(_ value: String?) -> String {
        if let value { bindings.append(value) } else { bindings.appendNull() }
        return "$\(bindings.count)"
    }

    /// A data-modifying statement, run whatever the final SELECT reads.
    mutating func add(_ sql: String) { parts.append("w\(parts.count) AS (\(sql))") }

    var isEmpty: Bool { parts.isEmpty }

    func query(final: String) -> PostgresQuery {
        PostgresQuery(unsafeSQL: (parts.isEmpty ? "" : "WITH " + parts.joined(separator: ",\n") + "\n") + final, binds: bindings)
    }
}
