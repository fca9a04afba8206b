// DynamicProjection: a named view of an object, each name mapped onto a key path of the root object
// (`name <- firstName`, `friendNames <- friends.firstName`, optionally transformed). Reads go
// through to the object; writes to plain projected properties go through inside a write;
// observing reports changes under the projected names, with old and new values.
import CoveCore

/// A view of a root object under other names.
public final class DynamicProjection {
    /// One projected property: its name, the root's key path, and an optional transform of the
    /// value read.
    public struct Field {
        public var name: String
        public var keyPath: String
        public var transform: (@Sendable (Value) -> Value)?

        public init(_ name: String, _ keyPath: String, transform: (@Sendable (Value) -> Value)? = nil) {
            self.name = name
            self.keyPath = keyPath
            self.transform = transform
        }
    }

    /// The projected object.
    public let root: DynamicObject
    /// The fields, in declared order.
    public let fields: [Field]
    let paths: [String: BoundPath]

    /// A projection of `root`.
    /// - Throws: `.invalidArgument` for a key path that names no property or a name given
    ///   twice.
    public init(root: DynamicObject, fields: [Field]) throws(CoveError) {
        self.root = root
        self.fields = fields
        let store = try root.realm.objectStore()
        let binder = QueryBinder(schema: store.schema, store: store, cls: root.objectSchema, elementProperty: nil, arguments: [], text: "")
        var paths: [String: BoundPath] = [:]
        for f in fields {
            guard paths[f.name] == nil else { throw CoveError(.invalidArgument, "projection: '\(f.name)' is projected twice") }
            let path = try binder.bindPath(QueryKeyPath(head: f.keyPath, steps: []))
            paths[f.name] = path
        }
        self.paths = paths
    }

    private func field(_ name: String) throws(CoveError) -> (Field, BoundPath) {
        guard let f = fields.first(where: { $0.name == name }), let path = paths[name] else {
            throw CoveError(.notFound, "the projection of \(root.objectSchema.className) has no property '\(name)'")
        }
        return (f, path)
    }

    /// The value of a projected property that is one value (through to-one links).
    /// - Throws: `.notFound`, `.wrongType` (a collection: use `values(_:)`), `.invalidated`.
    public func value(_ name: String) throws(CoveError) -> Value {
        let (f, path) = try field(name)
        if path.isMultiple {
            throw CoveError(.wrongType, "projected property '\(name)' is a collection (\(f.keyPath)): read it with values(_:)")
        }
        let v = try read(path).first ?? .null
        return f.transform.map { $0(v) } ?? v
    }

    /// The values of a projected collection path (`friends.firstName`), now.
    public func values(_ name: String) throws(CoveError) -> [Value] {
        let (f, path) = try field(name)
        let vs = try read(path)
        return f.transform.map { t in vs.map(t) } ?? vs
    }

    private func read(_ path: BoundPath) throws(CoveError) -> [Value] {
        try root.realm.checkOpen()
        if root.isInvalidated { throw CoveError(.invalidated, "the projected \(root.objectSchema.className) object was deleted") }
        var evaluator = QueryEvaluator(store: try root.realm.objectStore())
        return try evaluator.pathValues(path, .link(root.link))
    }

    /// Writes a projected property that maps onto a plain property of the root (inside a write).
    /// - Throws: `.invalidArgument` for a path through links or a transformed field, and what
    ///   the write throws.
    public func setValue(_ value: Value, forName name: String) throws(CoveError) {
        let (f, path) = try field(name)
        guard f.transform == nil, path.steps.count == 1, !path.isMultiple else {
            throw CoveError(.invalidArgument, "projected property '\(name)' maps onto '\(f.keyPath)': only a plain, untransformed property of the root can be written")
        }
        try root.setValue(value, forKey: f.keyPath)
    }

    /// Calls `block` after each commit that changed what a projected property reads (or, with
    /// `names`, those properties only), with projected names and old and new values (collections
    /// have none); the root's deletion is reported once. No initial call. Each name is checked
    /// against its own key path, so a change of `friends[i].lastName` does not report a field
    /// projected from `friends.firstName`.
    public func observeChanges(names: [String]? = nil, _ block: @escaping (ObjectChange<DynamicProjection>) -> Void) throws(CoveError) -> NotificationToken {
        var watched: [ProjectionRegistration.Watched] = []
        for name in names ?? fields.map(\.name) {
            let (f, path) = try field(name)
            watched.append(.init(name: name, keyPath: f.keyPath,
                                 read: path.isMultiple ? nil : { () throws(CoveError) in try self.value(name) }))
        }
        return try ProjectionRegistration.observeChanges(root, watched) { block($0.map { _ in self }) }
    }
}

/// An observed projection (dynamic or typed): each projected name meets its own key-path filter.
final class ProjectionRegistration: NotifierRegistration {
    /// One observed name: the root's key path it reads, and how to read its value now (nil for a
    /// collection path, whose changes carry no values).
    struct Watched {
        var name: String
        var keyPath: String
        var read: (() throws(CoveError) -> Value)?
    }

    let root: DynamicObject
    let watched: [(field: Watched, filter: KeyPathFilter)]
    var values: [String: Value]
    let callback: (ObjectChange<DynamicObject>) -> Void

    /// Registers `watched` names of a projection of `root`, taking their values now as the old
    /// values of the first change.
    /// - Throws: `.frozen`, `.inWrite`, `.invalidated` (the root was deleted), `.invalidArgument`
    ///   (a key path the root's class does not have).
    static func observeChanges(_ root: DynamicObject, _ watched: [Watched],
                               _ block: @escaping (ObjectChange<DynamicObject>) -> Void) throws(CoveError) -> NotificationToken {
        let realm = root.realm
        try realm.requireObservable("projection")
        if root.isInvalidated { throw CoveError(.invalidated, "the projected \(root.objectSchema.className) object was deleted") }
        let store = try realm.objectStore()
        let filtered = try watched.map { (w) throws(CoveError) in
            (field: w, filter: try KeyPathFilter([w.keyPath], root: root.objectSchema, schema: store.schema))
        }
        let registration = try ProjectionRegistration(root: root, watched: filtered, version: try realm.version, callback: block)
        try realm.register(registration)
        return NotificationToken(registration)
    }

    private init(root: DynamicObject, watched: [(field: Watched, filter: KeyPathFilter)], version: UInt64,
                 callback: @escaping (ObjectChange<DynamicObject>) -> Void) throws(CoveError) {
        var old: [String: Value] = [:]
        for w in watched { if let read = w.field.read { old[w.field.name] = try read() } }
        (self.root, self.watched, self.values, self.callback) = (root, watched, old, callback)
        super.init(version: version, initialPending: false)
    }

    override func deliver(_ store: ObjectStore, _ record: ChangeRecord?) -> Bool {
        guard let record else { return true }
        let cls = root.objectSchema
        do throws(CoveError) {
            guard let classKey = cls.classKey else { return true }
            let exists = try store.exists(cls, root.objectKey)
            if record.tables[classKey]?.isDeleted(root.objectKey) == true || !exists {
                callback(.deleted)
                return false
            }
            let touched = record.touchedClasses
            var out: [PropertyChange] = []
            for w in watched where try w.filter.isModified(cls, root.objectKey, record, store, touched) {
                guard let read = w.field.read else {
                    out.append(PropertyChange(name: w.field.name, old: nil, new: nil, realm: nil))
                    continue
                }
                let new = try read()
                out.append(PropertyChange(name: w.field.name, old: values[w.field.name] ?? .null, new: new, realm: root.realm))
                values[w.field.name] = new
            }
            if !out.isEmpty { callback(.change(root, out)) }
            return true
        } catch {
            callback(.error(error))
            return false
        }
    }
}
