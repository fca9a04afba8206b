// Downloaded changesets into the file: each operation merges into its object's state, then the
// file is made to show what the merged states show: objects created or deleted first (so that
// links within one download find their targets), then the properties the operations touched.
// A link whose target is not in the file shows as null (left out of a list) and waits in a tree
// of its own until the target arrives, by a download or a local create.
import CoveStorage
import CoveSyncCore
import FoundationEssentials

extension ObjectStore {
    /// What a download changed, object by object.
    private struct Touched {
        var cls: ObjectSchema
        var pk: Value
        var state: SyncStoredState
        var properties: Set<String> = []
        var everything = false
        /// Taken out of the file as no longer covered by its subscriptions (not deleted: its
        /// merge state goes too).
        var removed = false
    }

    /// The objects a download touches, in the order first touched.
    private struct TouchedObjects {
        var order: [SyncObjectRef] = []
        var objects: [SyncObjectRef: Touched] = [:]

        /// The object's entry, loaded from the file the first time; nil for a class or key the
        /// file cannot hold.
        mutating func touch(_ ref: SyncObjectRef, _ store: ObjectStore) throws(CoveError) -> Bool {
            if objects[ref] != nil { return true }
            guard let cls = store.schema[ref.className], !cls.isEmbedded, ObjectStore.keyFits(ref.key, cls) else { return false }
            let pk = try ObjectStore.coveKey(ref.key)
            objects[ref] = Touched(cls: cls, pk: pk, state: try store.loadState(try store.classKey(of: cls), pk))
            order.append(ref)
            return true
        }
    }

    /// Merges downloaded changesets and writes what they change into the objects, then records
    /// `cursor` as the server version downloaded: one transaction, so the file never holds one
    /// without the other. Operations on classes the file does not have are skipped.
    package func syncApply(_ changesets: [Changeset], cursor: UInt64) throws(CoveError) {
        try requireWrite()
        guard var record = try syncRecord() else {
            throw CoveError(.invalidArgument, "the file is not synced")
        }
        var touched = TouchedObjects()
        for changeset in changesets {
            if changeset.clock > record.latestClock { record.latestClock = changeset.clock }
            for op in changeset.operations {
                guard try touched.touch(op.object, self) else { continue }
                touched.objects[op.object]?.state.merge.apply(op)
                switch op.change {
                case .create, .delete: touched.objects[op.object]?.everything = true
                default: if let name = op.change.property { touched.objects[op.object]?.properties.insert(name) }
                }
            }
        }
        try show(&touched, &record, cursor: cursor)
    }

    /// What a server sends a file that subscribes: whole object states, and objects its
    /// subscriptions no longer cover.
    package enum SyncStateItem: Sendable {
        case object(SyncObjectRef, SyncObjectState)
        case remove(SyncObjectRef)
    }

    /// Merges downloaded object states into the file's and shows them; takes out of the file
    /// the objects removed (their merge states too: they are not deleted, only no longer
    /// covered). Records `cursor` when it is greater than the file's.
    package func syncApply(states items: [SyncStateItem], cursor: UInt64) throws(CoveError) {
        try requireWrite()
        guard var record = try syncRecord() else {
            throw CoveError(.invalidArgument, "the file is not synced")
        }
        var touched = TouchedObjects()
        for item in items {
            switch item {
            case .object(let ref, let state):
                guard try touched.touch(ref, self) else { continue }
                if let latest = state.latestClock, latest > record.latestClock { record.latestClock = latest }
                touched.objects[ref]?.state.merge.merge(state)
                touched.objects[ref]?.everything = true
                touched.objects[ref]?.removed = false
            case .remove(let ref):
                guard try touched.touch(ref, self) else { continue }
                touched.objects[ref]?.removed = true
            }
        }
        try show(&touched, &record, cursor: cursor)
    }

    /// Removes from the file every synced object not in `keep` (what a subscription set's
    /// download sent) nor in `pending` (objects with changes not yet uploaded), with their merge
    /// states, and records `cursor`: the end of a bootstrap.
    package func syncRemoveAll(except keep: Set<SyncObjectRef>, pending: Set<SyncObjectRef>, cursor: UInt64) throws(CoveError) {
        try requireWrite()
        guard var record = try syncRecord() else {
            throw CoveError(.invalidArgument, "the file is not synced")
        }
        var touched = TouchedObjects()
        for cls in syncedClasses() {
            for key in try objectKeys(cls) {
                let ref = try self.ref(cls, try primaryKeyValue(cls, key))
                if keep.contains(ref) || pending.contains(ref) { continue }
                guard try touched.touch(ref, self) else { continue }
                touched.objects[ref]?.removed = true
            }
        }
        try show(&touched, &record, cursor: cursor)
    }

    /// Makes the file show what the touched objects' merged states show, stores the states, and
    /// records `cursor` in the sync record.
    private func show(_ touched: inout TouchedObjects, _ record: inout SyncFileRecord, cursor: UInt64) throws(CoveError) {
        let order = touched.order
        // Objects into being, or out of it.
        var keys: [SyncObjectRef: Int64] = [:]
        var created: [(ObjectSchema, Int64)] = []
        for ref in order {
            guard var t = touched.objects[ref] else { continue }
            let existing = try find(t.cls, primaryKey: t.pk)
            if t.state.merge.exists && !t.removed {
                if let existing {
                    keys[ref] = existing
                } else {
                    // Made with its single values at once; its collections follow in pass two.
                    let key = try create(t.cls, primaryKey: t.pk, values: try shownValues(t.cls, t.state, ref))
                    keys[ref] = key
                    created.append((t.cls, key))
                    t.state.listOrder = [:]
                    t.everything = false
                    t.properties = Set(t.cls.properties.filter { p in
                        switch p.collection {
                        case .none: return false
                        case .list: return !t.state.merge.listElements(p.name).isEmpty
                        case .set: return !t.state.merge.setValues(p.name).isEmpty
                        case .map: return !t.state.merge.mapEntries(p.name).isEmpty
                        }
                    }.map(\.name))
                }
            } else {
                touched.objects[ref] = t
                if let existing {
                    // The links to it show as null (leave their lists) while it is gone: they
                    // wait for it, and their lists' ids lose its elements.
                    let sources = try linkingSources(to: t.cls, existing)
                    try delete(t.cls, existing)
                    for (sourceClass, sourceKey, p) in sources {
                        let sourcePk = try primaryKeyValue(sourceClass, sourceKey)
                        let sourceRef = try self.ref(sourceClass, sourcePk)
                        if var s = touched.objects[sourceRef] {
                            Self.forgetElements(linkingTo: ref, in: p, &s.state)
                            touched.objects[sourceRef] = s
                        } else {
                            let sourceClassKey = try classKey(of: sourceClass)
                            var state = try loadState(sourceClassKey, sourcePk)
                            Self.forgetElements(linkingTo: ref, in: p, &state)
                            try storeState(state, sourceClassKey, sourcePk, sourceRef)
                        }
                        try waitForLink(to: ref, from: sourceRef)
                    }
                }
                t = touched.objects[ref] ?? t
                t.state.listOrder = [:]
            }
            touched.objects[ref] = t
        }
        // What they show.
        for ref in order {
            guard var t = touched.objects[ref] else { continue }
            let classKey = try classKey(of: t.cls)
            if t.removed {
                try removeState(classKey, t.pk)
                continue
            }
            if let key = keys[ref] {
                try showState(t.cls, key, &t.state, ref, only: t.everything ? nil : t.properties)
            }
            try storeState(t.state, classKey, t.pk, ref)
        }
        for (cls, key) in created { try resolveWaitingLinks(to: cls, key) }
        record.downloadCursor = Swift.max(record.downloadCursor, cursor)
        try writeSyncRecord(record)
    }

    /// Whether a synced primary key has the type of the class's primary key here (a file whose
    /// schema differs skips the objects it cannot hold).
    static func keyFits(_ key: SyncPrimaryKey, _ cls: ObjectSchema) -> Bool {
        switch (key, cls.primaryKeyProperty?.type) {
        case (.int, .int?), (.string, .string?), (.objectId, .objectId?), (.uuid, .uuid?): return true
        default: return false
        }
    }

    /// The objects whose links (single or in a list) hold object `key` of `cls`, with the
    /// property holding it.
    func linkingSources(to cls: ObjectSchema, _ key: Int64) throws(CoveError) -> [(ObjectSchema, Int64, Property)] {
        let target = ObjectLink(classKey: try classKey(of: cls), objectKey: key)
        var out: [(ObjectSchema, Int64, Property)] = []
        for source in schema.classes where !source.isEmbedded {
            for p in source.properties where p.isLink && p.type.objectClassName == cls.className {
                for s in try linkingSources(of: target, from: source, via: p) where !(source.className == cls.className && s == key) {
                    out.append((source, s, p))
                }
            }
        }
        return out
    }

    /// Drops from a list's ids the elements that link to `target`, which the file's list lost.
    static func forgetElements(linkingTo target: SyncObjectRef, in p: Property, _ state: inout SyncStoredState) {
        guard p.collection == .list, let ids = state.listOrder[p.name] else { return }
        var gone = Set<SyncClock>()
        for e in state.merge.listElements(p.name) where e.value == .link(target) { gone.insert(e.id) }
        if !gone.isEmpty { state.listOrder[p.name] = ids.filter { !gone.contains($0) } }
    }

    /// The single values a state shows, for creating its object with them (links whose target
    /// is not here wait for it).
    private func shownValues(_ cls: ObjectSchema, _ state: SyncStoredState, _ ref: SyncObjectRef) throws(CoveError) -> [(String, Value)] {
        var values: [(String, Value)] = []
        for p in cls.properties where !p.isBacklinks && !p.isPrimaryKey && p.collection == .none {
            guard let shown = state.merge.property(p.name) else { continue }
            if let v = try resolve(shown, for: p) {
                if Self.fits(v, p) { values.append((p.name, v)) }
            } else if case .link(let target) = shown {
                try waitForLink(to: target, from: ref)
            }
        }
        return values
    }

    /// Writes into object `key` what its merge state shows, for the properties named in `only`
    /// (nil: every property). Writes only what differs.
    func showState(_ cls: ObjectSchema, _ key: Int64, _ state: inout SyncStoredState, _ ref: SyncObjectRef,
                   only: Set<String>?) throws(CoveError) {
        for p in cls.properties where !p.isBacklinks && !p.isPrimaryKey {
            if let only, !only.contains(p.name) { continue }
            switch p.collection {
            case .none:
                var desired = Self.emptyValue(of: p)
                if let shown = state.merge.property(p.name) {
                    if let v = try resolve(shown, for: p) {
                        desired = v
                    } else if case .link(let target) = shown {
                        try waitForLink(to: target, from: ref)
                    }
                }
                // A value of another type than the property's here (a schema that differs)
                // leaves the property as it is.
                if try get(cls, key, p) != desired { try ignoringMisfits { () throws(CoveError) in try set(cls, key, p, desired) } }
            case .list:
                var ids: [SyncClock] = []
                var values: [Value] = []
                for e in state.merge.listElements(p.name) {
                    if let v = try resolve(e.value, for: p), Self.fits(v, p) {
                        ids.append(e.id)
                        values.append(v)
                    } else if case .link(let target) = e.value {
                        try waitForLink(to: target, from: ref)
                    }
                }
                try showList(cls, key, p, from: state.listOrder[p.name] ?? [], to: ids, values: values)
                state.listOrder[p.name] = ids
            case .set:
                var desired: [Value] = []
                for v in state.merge.setValues(p.name) {
                    if let c = try resolve(v, for: p), Self.fits(c, p) { desired.append(c) }
                }
                let current = try setValues(cls, key, p)
                for v in current where !desired.contains(v) { _ = try setErase(cls, key, p, v) }
                for v in desired where !current.contains(v) { _ = try setInsert(cls, key, p, v) }
            case .map:
                var desired: [String: Value] = [:]
                for e in state.merge.mapEntries(p.name) {
                    if let c = try resolve(e.value, for: p), Self.fits(c, p) { desired[e.key] = c }
                }
                var current: [String: Value] = [:]
                for (k, v) in try mapEntries(cls, key, p) { current[k] = v }
                for k in current.keys where desired[k] == nil { _ = try mapErase(cls, key, p, k) }
                for (k, v) in desired where current[k] != v { try mapSet(cls, key, p, k, v) }
            }
        }
    }

    /// Runs `body`, ignoring a wrong-type refusal.
    private func ignoringMisfits(_ body: () throws(CoveError) -> Void) throws(CoveError) {
        do { try body() } catch where error.code == .wrongType {}
    }

    /// Whether `v` is a value property `p` (its elements, for a collection) can hold.
    static func fits(_ v: Value, _ p: Property) -> Bool {
        switch (v, p.type) {
        case (_, .mixed): return true
        case (.null, _): return p.isOptional || p.isLink
        case (.bool, .bool), (.int, .int), (.float, .float), (.double, .double), (.string, .string), (.data, .data),
             (.timestamp, .date), (.decimal128, .decimal128), (.objectId, .objectId), (.uuid, .uuid), (.link, .object):
            return true
        default: return false
        }
    }

    /// Edits a list that holds the elements `from` stands for into one holding `values` (whose
    /// ids are `to`): the elements both start and end with stay, the middle is replaced, then
    /// any element whose value differs is set.
    private func showList(_ cls: ObjectSchema, _ key: Int64, _ p: Property, from: [SyncClock], to: [SyncClock],
                          values: [Value]) throws(CoveError) {
        var current = try listValues(cls, key, p)
        var old = from
        if old.count != current.count {
            // The ids do not stand for the list (not expected): the whole list is replaced.
            old = []
            try listClear(cls, key, p)
            current = []
        }
        var prefix = 0
        while prefix < old.count, prefix < to.count, old[prefix] == to[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < old.count - prefix, suffix < to.count - prefix,
              old[old.count - 1 - suffix] == to[to.count - 1 - suffix] { suffix += 1 }
        for i in stride(from: old.count - suffix - 1, through: prefix, by: -1) {
            try listErase(cls, key, p, i)
            current.remove(at: i)
        }
        for i in prefix..<(to.count - suffix) {
            try listInsert(cls, key, p, i, values[i])
            current.insert(values[i], at: i)
        }
        for i in 0..<values.count where current[i] != values[i] {
            try listSet(cls, key, p, i, values[i])
        }
    }

    /// The value a property shows when nothing written since the object's latest delete shows.
    static func emptyValue(of p: Property) -> Value {
        if p.isOptional || p.isLink || p.type == .mixed { return .null }
        switch p.type {
        case .bool: return .bool(false)
        case .int: return .int(0)
        case .float: return .float(0)
        case .double: return .double(0)
        case .string: return .string("")
        case .data: return .data([])
        case .date: return .timestamp(Timestamp(seconds: 0))
        case .decimal128: return .decimal128(Decimal128(Int64(0)))
        case .objectId: return (try? .objectId(ObjectId(bytes: [UInt8](repeating: 0, count: 12)))) ?? .null
        case .uuid: return .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        case .mixed, .object, .linkingObjects: return .null
        }
    }

    // MARK: Links that wait for their target

    private static func waitingPrefix(_ targetClassKey: UInt32, _ targetKey: [UInt8]) -> [UInt8] {
        CatalogKey.bigEndian(UInt64(targetClassKey), bytes: 4) + CatalogKey.bigEndian(UInt64(targetKey.count), bytes: 2) + targetKey
    }

    /// Notes that object `source` has a link to `target`, which the file does not hold yet.
    func waitForLink(to target: SyncObjectRef, from source: SyncObjectRef) throws(CoveError) {
        guard let targetClass = schema[target.className], let sourceClass = schema[source.className] else { return }
        var key = Self.waitingPrefix(try classKey(of: targetClass), try Self.coveKey(target.key).indexKey())
        key += CatalogKey.bigEndian(UInt64(try classKey(of: sourceClass)), bytes: 4)
        key += try Self.coveKey(source.key).indexKey()
        try editTree(CatalogKey.syncWaitingLinks) { t throws(StorageError) in
            _ = try t.put(key, Self.encodeKey(source.key))
        }
    }

    /// Shows again every link that waited for object `key` of `cls`, now that it is here.
    func resolveWaitingLinks(to cls: ObjectSchema, _ key: Int64) throws(CoveError) {
        let tree = try tree(CatalogKey.syncWaitingLinks)
        if tree.root.count == 0 { return }
        let prefix = Self.waitingPrefix(try classKey(of: cls), try primaryKeyValue(cls, key).indexKey())
        var found: [(entry: [UInt8], sourceClass: UInt32, sourceKey: SyncPrimaryKey)] = []
        do {
            try tree.forEach(from: prefix) { k, v throws(StorageError) -> Bool in
                guard k.count >= prefix.count + 4, k.starts(with: prefix) else { return false }
                let sourceClass = UInt32(CatalogKey.number(bigEndian: k[prefix.count..<(prefix.count + 4)]))
                if let sourceKey = Self.decodeKey(Array(v)) { found.append((Array(k), sourceClass, sourceKey)) }
                return true
            }
        } catch {
            throw CoveError(error)
        }
        for f in found {
            try editTree(CatalogKey.syncWaitingLinks) { t throws(StorageError) in _ = try t.remove(f.entry) }
            guard let sourceClass = schema.objectSchema(forClassKey: f.sourceClass) else { continue }
            let pk = try Self.coveKey(f.sourceKey)
            guard let sourceObject = try find(sourceClass, primaryKey: pk) else { continue }
            var state = try loadState(f.sourceClass, pk)
            let ref = try self.ref(sourceClass, pk)
            let links = Set(sourceClass.properties.filter { $0.type.objectClassName == cls.className }.map(\.name))
            try showState(sourceClass, sourceObject, &state, ref, only: links)
            try storeState(state, f.sourceClass, pk, ref)
        }
    }

    /// A primary key in the waiting tree's values: a kind byte, then the key.
    static func encodeKey(_ key: SyncPrimaryKey) -> [UInt8] {
        switch key {
        case .int(let v): return [0] + CatalogKey.bigEndian(UInt64(bitPattern: v), bytes: 8)
        case .string(let s): return [1] + Array(s.utf8)
        case .objectId(let o): return [2] + o.bytes
        case .uuid(let u): return [3] + u.bytes
        }
    }

    static func decodeKey(_ bytes: [UInt8]) -> SyncPrimaryKey? {
        guard let kind = bytes.first else { return nil }
        let rest = bytes.dropFirst()
        switch kind {
        case 0 where rest.count == 8: return .int(Int64(bitPattern: CatalogKey.number(bigEndian: rest)))
        case 1: return .string(String(decoding: rest, as: UTF8.self))
        case 2: return (try? SyncObjectId(bytes: rest)).map { .objectId($0) }
        case 3: return (try? SyncUUID(bytes: rest)).map { .uuid($0) }
        default: return nil
        }
    }
}
