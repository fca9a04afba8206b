// Stable keys: every class gets a UInt32 class key and every property an Int64 property key that
// the file keeps across reopen and schema changes, so tables and columns are found by key, not by
// name or position. A removed key is never given out again (the catalog keeps the counters).

extension Schema {
    /// This schema with keys: a class present in `previous` (same name) keeps its class key; a
    /// property present in `previous` with the same name and shape (type, collection,
    /// optionality) keeps its property key; every other class and property gets a new key from
    /// counters that start above every key `previous` used or ever handed out, so a removed key
    /// is never reused. A property whose shape changed gets a new key: its stored values are of
    /// another kind and the migration copies them. Keys this schema carried already are ignored.
    /// Property keys are unique across the whole schema, not only within a class. Class keys and
    /// property keys start at 1.
    public func assigningKeys(previous: Schema?) -> Schema {
        var result = self
        var nextClass = max(nextClassKey, previous?.nextClassKey ?? 1)
        var nextProperty = max(nextPropertyKey, previous?.nextPropertyKey ?? 1)
        if let previous {
            for cls in previous.classes {
                if let k = cls.classKey { nextClass = max(nextClass, k &+ 1) }
                for p in cls.properties {
                    if let k = p.key { nextProperty = max(nextProperty, k + 1) }
                }
            }
        }
        for ci in result.classes.indices {
            let old = previous?[result.classes[ci].className]
            if let k = old?.classKey {
                result.classes[ci].classKey = k
            } else {
                result.classes[ci].classKey = nextClass
                nextClass += 1
            }
            for pi in result.classes[ci].properties.indices {
                let p = result.classes[ci].properties[pi]
                if let oldProperty = old?[property: p.name], let k = oldProperty.key, oldProperty.hasSameShape(as: p) {
                    result.classes[ci].properties[pi].key = k
                } else {
                    result.classes[ci].properties[pi].key = nextProperty
                    nextProperty += 1
                }
            }
        }
        result.nextClassKey = nextClass
        result.nextPropertyKey = nextProperty
        return result
    }

    /// This schema and the classes of `previous` it leaves out, which keep their keys: what a
    /// file holds after a realm opened with some of its classes wrote its schema.
    /// - Throws: `.schema` when a class left out no longer fits with the others (it links to a
    ///   class whose shape changed, or backlinks name a property that is gone), naming it.
    package func keeping(_ previous: Schema?) throws(CoveError) -> Schema {
        guard let previous else { return self }
        let kept = previous.classes.filter { self[$0.className] == nil }
        if kept.isEmpty { return self }
        var result = self
        result.classes += kept
        for (i, c) in result.classes.enumerated() { result.indexByName[c.className] = i }
        do {
            try result.validate()
        } catch {
            let names = kept.map { "'\($0.className)'" }.joined(separator: ", ")
            throw CoveError(.schema, "the file's classes that the schema leaves out (\(names)) stay in the file, and would no longer fit with it: \(error.message)")
        }
        return result
    }

    /// This schema without the classes named in `names`, keys and key counters kept.
    /// - Throws: `.schema` when a class that stays links to one that goes.
    package func dropping(_ names: [String]) throws(CoveError) -> Schema {
        let result = restricted(to: Set(classNames).subtracting(names))
        do {
            try result.validate()
        } catch {
            throw CoveError(.schema, "deleteData(\(names.map { "'\($0)'" }.joined(separator: ", "))): \(error.message)")
        }
        return result
    }

    /// The classes of this schema named in `names`, keys and key counters kept.
    public func restricted(to names: Set<String>) -> Schema {
        if classes.allSatisfy({ names.contains($0.className) }) { return self }
        var result = self
        result.classes = classes.filter { names.contains($0.className) }
        result.indexByName = [:]
        for (i, c) in result.classes.enumerated() { result.indexByName[c.className] = i }
        return result
    }

    /// True when every class and property has a key.
    public var hasKeys: Bool {
        classes.allSatisfy { c in c.classKey != nil && c.properties.allSatisfy { $0.key != nil } }
    }
}
