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

    /// True when every class and property has a key.
    public var hasKeys: Bool {
        classes.allSatisfy { c in c.classKey != nil && c.properties.allSatisfy { $0.key != nil } }
    }
}
