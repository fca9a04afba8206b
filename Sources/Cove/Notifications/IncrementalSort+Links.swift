// Which rows of sorted results a write to other objects reaches: followed back from the written
// objects through the backlinks of the links that lead to them (the commit's version holds the
// links as they are now, and any link along the way that changed is itself a write found on the
// way). Two questions: which rows may move because a sort key reads through links to a written
// object (`owner.name` after an owner's name was written), and which may be modified in the
// sense of the observer's key paths (deep changes follow every link up to four levels).
import CoveCore

/// Following links back to the objects of sorted results.
struct LinkedRoots {
    let store: ObjectStore
    let record: ChangeRecord

    /// The objects of the key's first class whose value of `key` may have changed because an
    /// object along its links was written in the property the path reads from it.
    func moved(through key: IncrementalSortKey) throws(CoveError) -> Set<Int64> {
        var out = Set<Int64>()
        for depth in 1..<key.steps.count {
            let (cls, p) = key.steps[depth]
            guard let classKey = cls.classKey, let propertyKey = p.key,
                  let table = record.tables[classKey] else { continue }
            var written = Set<Int64>()
            for (k, properties) in table.modified where properties.contains(propertyKey) { written.insert(k) }
            if written.isEmpty { continue }
            out.formUnion(try back(from: written, along: key.steps[..<depth]))
        }
        return out
    }

    /// The objects that reach `targets` along `steps` (each a property of the class before the
    /// next): followed back one step at a time, last step first.
    func back(from targets: Set<Int64>, along steps: ArraySlice<(cls: ObjectSchema, property: Property)>) throws(CoveError) -> Set<Int64> {
        var current = targets
        for (cls, p) in steps.reversed() {
            var sources = Set<Int64>()
            for t in current { sources.formUnion(try self.sources(linkingTo: t, from: cls, via: p)) }
            current = sources
            if current.isEmpty { break }
        }
        return current
    }

    /// The objects of `cls` whose property `p` leads to `target`: for a link (single or a
    /// collection), its backlinks; for backlinks (`@links(Source.property)`), the objects the
    /// target's own property holds.
    func sources(linkingTo target: Int64, from cls: ObjectSchema, via p: Property) throws(CoveError) -> [Int64] {
        if case .linkingObjects(let sourceName, let sourceProperty) = p.type {
            guard let source = store.schema[sourceName], let via = source[property: sourceProperty],
                  try store.exists(source, target) else { return [] }
            var values: [Value]
            switch via.collection {
            case .none: values = [try store.get(source, target, via)]
            case .list: values = try store.listValues(source, target, via)
            case .set: values = try store.setValues(source, target, via)
            case .map: values = try store.mapEntries(source, target, via).map(\.value)
            }
            return values.compactMap { if case .link(let l) = $0 { return l.objectKey } else { return nil } }
        }
        return try store.backlinks(to: target, from: cls, via: p)
    }

    /// The objects of `root` that may be modified in the sense of `filter` after the record:
    /// those written, and those that reach a written object through the links the filter follows
    /// (its key paths; without them every link, up to four levels, through touched classes).
    /// More than the filter may count, never fewer: the filter decides each.
    func possiblyModified(_ root: ObjectSchema, _ filter: KeyPathFilter, _ touched: Set<UInt32>) throws(CoveError) -> Set<Int64> {
        guard let rootKey = root.classKey else { return [] }
        if let paths = filter.paths, paths.isEmpty { return [] }
        var out = Set<Int64>()
        if let written = record.tables[rootKey]?.modified { out.formUnion(written.keys) }
        if let paths = filter.paths {
            for path in paths where path.count > 1 {
                for depth in 1..<path.count {
                    let (cls, p) = path[depth]
                    guard let classKey = cls.classKey, let propertyKey = p.key, let table = record.tables[classKey] else { continue }
                    var written = Set<Int64>()
                    for (k, properties) in table.modified where properties.contains(propertyKey) { written.insert(k) }
                    if !written.isEmpty { out.formUnion(try back(from: written, along: path[..<depth])) }
                }
            }
            return out
        }
        return out.union(try deeplyReaching(rootKey, touched))
    }

    /// The objects of class `rootKey` that reach an object written by the record in at most
    /// `KeyPathFilter.maxDepth` links, every object past the first of a touched class (as deep
    /// changes follow them).
    private func deeplyReaching(_ rootKey: UInt32, _ touched: Set<UInt32>) throws(CoveError) -> Set<Int64> {
        // The links of the schema into each touched class.
        var incoming: [String: [(cls: ObjectSchema, property: Property)]] = [:]
        for cls in store.schema.classes {
            for p in cls.properties where p.isLink {
                guard let target = p.type.objectClassName else { continue }
                incoming[target, default: []].append((cls, p))
            }
        }
        struct Node: Hashable {
            var classKey: UInt32
            var key: Int64
        }
        var frontier: [(cls: ObjectSchema, key: Int64)] = []
        var seen = Set<Node>()
        for (classKey, table) in record.tables where touched.contains(classKey) {
            guard let cls = store.schema.classes.first(where: { $0.classKey == classKey }) else { continue }
            for k in table.modified.keys where seen.insert(Node(classKey: classKey, key: k)).inserted { frontier.append((cls, k)) }
        }
        var out = Set<Int64>()
        for _ in 0..<KeyPathFilter.maxDepth {
            var next: [(cls: ObjectSchema, key: Int64)] = []
            for (cls, key) in frontier {
                for (source, p) in incoming[cls.className] ?? [] {
                    guard let sourceKey = source.classKey else { continue }
                    for s in try store.backlinks(to: key, from: source, via: p) {
                        if sourceKey == rootKey { out.insert(s) }
                        // Deep changes reach past an object only through touched classes.
                        if touched.contains(sourceKey), seen.insert(Node(classKey: sourceKey, key: s)).inserted {
                            next.append((source, s))
                        }
                    }
                }
            }
            if next.isEmpty { break }
            frontier = next
        }
        return out
    }
}
