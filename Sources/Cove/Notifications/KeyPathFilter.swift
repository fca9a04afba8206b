// Key-path filters: which properties of which classes an observer hears about, resolved from
// the key paths it gave (`["name", "toys.brand"]`), and the classes a commit must touch to
// concern it.
import CoveCore

/// The key paths an observer filters on, resolved to property keys per class: nil observes
/// every property (and linked objects' up to four levels), an empty list only insertions and
/// deletions.
struct KeyPathFilter {
    /// For each path, the properties along it: (class, property) from the observed class on.
    var paths: [[(cls: ObjectSchema, property: Property)]]?

    static let maxDepth = 4

    init(_ keyPaths: [String]?, root: ObjectSchema, schema: Schema) throws(CoveError) {
        guard let keyPaths else {
            paths = nil
            return
        }
        var resolved: [[(cls: ObjectSchema, property: Property)]] = []
        for path in keyPaths {
            var cls: ObjectSchema? = root
            var steps: [(cls: ObjectSchema, property: Property)] = []
            for name in path.split(separator: ".", omittingEmptySubsequences: false).map(String.init) {
                guard let current = cls else {
                    throw CoveError(.invalidArgument, "key path '\(path)': '\(name)' follows a property that is not a link")
                }
                guard let p = current[property: name] else {
                    throw CoveError(.invalidArgument, "key path '\(path)': class '\(current.className)' has no property '\(name)'")
                }
                steps.append((current, p))
                switch p.type {
                case .object(let target): cls = schema[target]
                case .linkingObjects(let source, _): cls = schema[source]
                default: cls = nil
                }
            }
            resolved.append(steps)
        }
        paths = resolved
    }

    /// Whether `objectKey` of `cls` changed in a way this filter sees, per `record` (reading the
    /// object's links at the current version to follow paths and deep links).
    func isModified(_ cls: ObjectSchema, _ objectKey: Int64, _ record: ChangeRecord, _ store: ObjectStore,
                    _ touched: Set<UInt32>) throws(CoveError) -> Bool {
        guard let paths else {
            var seen = Set<Int64>()
            return try deepModified(cls, objectKey, record, store, touched, depth: 0, seen: &seen)
        }
        for path in paths where try pathModified(path[...], objectKey, record, store) { return true }
        return false
    }

    private func pathModified(_ path: ArraySlice<(cls: ObjectSchema, property: Property)>, _ objectKey: Int64,
                              _ record: ChangeRecord, _ store: ObjectStore) throws(CoveError) -> Bool {
        guard let (cls, p) = path.first, let classKey = cls.classKey, let propertyKey = p.key else { return false }
        if record.tables[classKey]?.modified[objectKey]?.contains(propertyKey) == true { return true }
        let rest = path.dropFirst()
        if rest.isEmpty { return false }
        for target in try linkedKeys(cls, objectKey, p, store) where try pathModified(rest, target, record, store) {
            return true
        }
        return false
    }

    /// Any property of the object, or of objects it links to up to `maxDepth` levels.
    private func deepModified(_ cls: ObjectSchema, _ objectKey: Int64, _ record: ChangeRecord, _ store: ObjectStore,
                              _ touched: Set<UInt32>, depth: Int, seen: inout Set<Int64>) throws(CoveError) -> Bool {
        guard let classKey = cls.classKey else { return false }
        if let props = record.tables[classKey]?.modified[objectKey], !props.isEmpty { return true }
        if depth >= Self.maxDepth { return false }
        for p in cls.properties where p.isLink {
            guard let targetName = p.type.objectClassName, let target = store.schema[targetName],
                  let targetKey = target.classKey, touched.contains(targetKey) else { continue }
            for t in try linkedKeys(cls, objectKey, p, store) where seen.insert(Int64(targetKey) << 40 ^ t).inserted {
                if try deepModified(target, t, record, store, touched, depth: depth + 1, seen: &seen) { return true }
            }
        }
        return false
    }

    /// Whether an object that `p` of the object links to changed in a way this filter sees
    /// (without key paths: deeply; with them: along the paths that start with `p`).
    func linkModified(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ record: ChangeRecord, _ store: ObjectStore,
                      _ touched: Set<UInt32>) throws(CoveError) -> Bool {
        guard let targetName = p.type.objectClassName, let target = store.schema[targetName] else { return false }
        if let paths {
            for path in paths where path.count > 1 && path[0].property.name == p.name {
                for t in try linkedKeys(cls, objectKey, p, store) where try pathModified(path.dropFirst(), t, record, store) { return true }
            }
            return false
        }
        guard let targetKey = target.classKey, touched.contains(targetKey) else { return false }
        var seen = Set<Int64>()
        for t in try linkedKeys(cls, objectKey, p, store) where try deepModified(target, t, record, store, touched, depth: 1, seen: &seen) {
            return true
        }
        return false
    }

    /// The objects property `p` of an object links to now (none when it is deleted).
    private func linkedKeys(_ cls: ObjectSchema, _ objectKey: Int64, _ p: Property, _ store: ObjectStore) throws(CoveError) -> [Int64] {
        guard try store.exists(cls, objectKey) else { return [] }
        var values: [Value]
        switch p.collection {
        case .none:
            if case .linkingObjects(let sourceName, let sourceProperty) = p.type {
                guard let source = store.schema[sourceName], let via = source[property: sourceProperty] else { return [] }
                return try store.backlinks(to: objectKey, from: source, via: via)
            }
            values = [try store.get(cls, objectKey, p)]
        case .list: values = try store.listValues(cls, objectKey, p)
        case .set: values = try store.setValues(cls, objectKey, p)
        case .map: values = try store.mapEntries(cls, objectKey, p).map(\.value)
        }
        return values.compactMap { if case .link(let l) = $0 { return l.objectKey } else { return nil } }
    }

    /// The names of the observed object's own properties this filter lists (nil: all).
    var ownProperties: Set<String>? {
        paths.map { Set($0.compactMap { $0.first?.property.name }) }
    }
}

extension KeyPathFilter {
    init(paths: [[(cls: ObjectSchema, property: Property)]]?) {
        self.paths = paths
    }
}

extension KeyPathFilter {
    /// The keys of `root`'s class and of every class reachable from it through links and
    /// backlinks, up to the depth deep changes follow (and one more): a commit that touches
    /// none of them changes nothing an observer of `root`'s objects sees.
    static func reachableClasses(from root: ObjectSchema, _ schema: Schema) -> Set<UInt32> {
        var out = Set<UInt32>()
        var frontier = [root]
        var depth = 0
        while !frontier.isEmpty && depth <= maxDepth + 1 {
            var next: [ObjectSchema] = []
            for cls in frontier {
                guard let key = cls.classKey, out.insert(key).inserted else { continue }
                for p in cls.properties {
                    switch p.type {
                    case .object(let name), .linkingObjects(let name, _):
                        if let target = schema[name] { next.append(target) }
                    default: break
                    }
                }
            }
            frontier = next
            depth += 1
        }
        return out
    }
}
