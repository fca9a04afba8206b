// Links held in mixed values. A mixed property (one value, or a list, set or map of mixed) may
// hold a link to an object of any class that is not embedded. Like a link property, it keeps a
// catalog tree of counted backlink entries under its backlinks key, each entry led by the
// target's class key as well as its object key, so that deleting an object finds every mixed
// value holding it (`ObjectStore.unlinkEverywhere`): a single mixed value and a list or map
// element become null, a set loses the element.
import CoveStorage

extension Property {
    /// Whether values of the property may be links whose targets it keeps backlink entries of:
    /// links and collections of links, and mixed values (single or in a collection).
    var keepsBacklinks: Bool { isLink || type == .mixed }
}

extension ObjectStore {
    /// The leading bytes of the backlink entries of `p` that point at `link`: the target's
    /// object key, after its class key when `p` is mixed. An entry is this, then the source's
    /// object key (both big-endian).
    static func backlinkPrefix(_ p: Property, _ link: ObjectLink) -> [UInt8] {
        let target = CatalogKey.bigEndian(UInt64(bitPattern: link.objectKey), bytes: 8)
        if p.type == .mixed { return CatalogKey.bigEndian(UInt64(link.classKey), bytes: 4) + target }
        return target
    }

    /// Refuses a link a mixed property cannot hold: to a class not in the schema, to an object
    /// that does not exist, or to an embedded object (owned by its parent alone).
    func checkMixedLink(_ value: Value, _ p: Property, _ cls: ObjectSchema) throws(CoveError) {
        guard p.type == .mixed else { return }
        if value.isCollection {
            for link in value.nestedLinks { try checkMixedLink(.link(link), p, cls) }
            return
        }
        guard case .link(let link) = value else { return }
        guard let target = schema.objectSchema(forClassKey: link.classKey) else {
            throw CoveError(.invalidArgument, "property '\(p.name)' of class '\(cls.className)': a link to class key \(link.classKey), which is not in the schema")
        }
        if target.isEmbedded {
            throw CoveError(.invalidArgument, "property '\(p.name)' of class '\(cls.className)' is mixed and cannot hold an embedded \(target.className) object")
        }
        guard try exists(target, link.objectKey) else {
            throw CoveError(.invalidArgument, "property '\(p.name)' of class '\(cls.className)': the \(target.className) object \(link.objectKey) does not exist")
        }
    }

    /// Replaces the single mixed value `old` of `p` of object `source` by `new` in the backlink
    /// entries: the old target loses one, the new one gains one.
    func updateMixedBacklink(_ cls: ObjectSchema, _ p: Property, source: Int64, old: Value, new: Value) throws(CoveError) {
        guard old != new else { return }
        try countBacklink(cls, p, source: source, old, -1)
        try countBacklink(cls, p, source: source, new, 1)
    }
}

extension Value {
    /// Whether the value is a link to an object.
    var isLink: Bool {
        if case .link = self { return true }
        return false
    }

    /// Whether the value is a link or a nested collection that holds one, at any depth.
    var holdsLinks: Bool {
        switch self {
        case .link: return true
        case .list(let elements): return elements.contains(where: \.holdsLinks)
        case .dictionary(let entries): return entries.values.contains(where: \.holdsLinks)
        default: return false
        }
    }

    /// The links the value is or holds, at any depth, each as often as it appears.
    var nestedLinks: [ObjectLink] {
        var out: [ObjectLink] = []
        func collect(_ v: Value) {
            switch v {
            case .link(let l): out.append(l)
            case .list(let elements): elements.forEach(collect)
            case .dictionary(let entries): entries.values.forEach(collect)
            default: break
            }
        }
        collect(self)
        return out
    }

    /// The value with every link to `target` inside it, at any depth, replaced by null (a
    /// link itself becomes null).
    func replacingLinks(to target: ObjectLink) -> Value {
        switch self {
        case .link(let l) where l == target: return .null
        case .list(let elements): return .list(elements.map { $0.replacingLinks(to: target) })
        case .dictionary(let entries): return .dictionary(entries.mapValues { $0.replacingLinks(to: target) })
        default: return self
        }
    }
}
