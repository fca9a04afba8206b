// Projection: a named view of an object, each name mapped onto a key path of the root object
// (`name <- firstName`, `friendNames <- friends.firstName`, optionally transformed). Reads go
// through to the object; writes to plain projected properties go through inside a write;
// observing reports changes under the projected names, with old and new values.

/// A view of a root object under other names.
public final class Projection {
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
    /// have none); the root's deletion is reported once. No initial call.
    public func observe(names: [String]? = nil, _ block: @escaping (ObjectChange) -> Void) throws(CoveError) -> NotificationToken {
        let watched = try (names ?? fields.map(\.name)).map { (n) throws(CoveError) in try field(n) }
        var old: [String: Value] = [:]
        for (f, path) in watched where !path.isMultiple { old[f.name] = try value(f.name) }
        let keyPaths = watched.map { $0.0.keyPath }
        return try root.observe(keyPaths: keyPaths) { [weak self] change in
            guard let self else { return }
            switch change {
            case .deleted: block(.deleted)
            case .error(let e): block(.error(e))
            case .change(let properties):
                let touched = Set(properties.map(\.name))
                var out: [PropertyChange] = []
                for (f, path) in watched {
                    guard let first = f.keyPath.split(separator: ".").first, touched.contains(String(first)) else { continue }
                    if path.isMultiple {
                        out.append(PropertyChange(name: f.name, oldValue: nil, newValue: nil))
                        continue
                    }
                    guard let new = try? self.value(f.name) else { continue }
                    out.append(PropertyChange(name: f.name, oldValue: old[f.name] ?? .null, newValue: new))
                    old[f.name] = new
                }
                if !out.isEmpty { block(.change(out)) }
            }
        }
    }
}
