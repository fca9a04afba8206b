// Observed objects: an object observer's registration, and `observeChanges` on an object.
import CoveCore

/// An observed object: its values at the last delivery.
final class ObjectRegistration: NotifierRegistration {
    let object: DynamicObject
    let filter: KeyPathFilter
    let callback: (ObjectChange<DynamicObject>) -> Void
    var values: [String: Value]

    init(object: DynamicObject, filter: KeyPathFilter, values: [String: Value], version: UInt64,
         callback: @escaping (ObjectChange<DynamicObject>) -> Void) {
        self.object = object
        self.filter = filter
        self.values = values
        self.callback = callback
        super.init(version: version, initialPending: false)
    }

    static func snapshot(_ object: DynamicObject) throws(CoveError) -> [String: Value] {
        var out: [String: Value] = [:]
        for p in object.objectSchema.properties where p.collection == .none && !p.isBacklinks {
            out[p.name] = try object.value(forKey: p.name)
        }
        return out
    }

    override func deliver(_ store: ObjectStore, _ record: ChangeRecord?) -> Bool {
        guard let record else { return true }
        let cls = object.objectSchema
        do throws(CoveError) {
            guard let classKey = cls.classKey else { return true }
            let table = record.tables[classKey]
            let exists = try store.exists(cls, object.objectKey)
            if table?.isDeleted(object.objectKey) == true || !exists {
                callback(.deleted)
                return false
            }
            let touched = record.touchedClasses
            let own = table?.modified[object.objectKey] ?? []
            var changes: [PropertyChange] = []
            let wanted = filter.ownProperties
            for p in cls.properties where !p.isBacklinks {
                guard let key = p.key else { continue }
                if let wanted, !wanted.contains(p.name) { continue }
                var changed = own.contains(key)
                if !changed && p.isLink {
                    // A change along the link (`dog.name`, or any linked property without key
                    // paths) is a change of the link.
                    changed = try filter.linkModified(cls, object.objectKey, p, record, store, touched)
                }
                if !changed { continue }
                if p.collection == .none {
                    let new = try object.value(forKey: p.name)
                    changes.append(PropertyChange(name: p.name, old: values[p.name] ?? .null, new: new, realm: object.realm))
                    values[p.name] = new
                } else {
                    changes.append(PropertyChange(name: p.name, old: nil, new: nil, realm: nil))
                }
            }
            if !changes.isEmpty { callback(.change(object, changes)) }
            return true
        } catch {
            callback(.error(error))
            return false
        }
    }
}

extension DynamicObject {
    /// Calls `block` after each commit that wrote a property of the object (or, without key
    /// paths, of the objects it links to), with old and new values, and once when it is
    /// deleted. No initial call.
    /// - Throws: `.frozen`, `.inWrite`, `.invalidated`, `.invalidArgument` (an unknown key path).
    public func observeChanges(keyPaths: [String]? = nil, _ block: @escaping (ObjectChange<DynamicObject>) -> Void) throws(CoveError) -> NotificationToken {
        try realm.requireObservable("object")
        if isInvalidated { throw CoveError(.invalidated, "the \(objectSchema.className) object \(objectKey) was deleted: it cannot be observed") }
        let store = try realm.objectStore()
        let filter = try KeyPathFilter(keyPaths, root: objectSchema, schema: store.schema)
        let registration = ObjectRegistration(object: self, filter: filter, values: try ObjectRegistration.snapshot(self),
                                              version: try realm.version, callback: block)
        try realm.register(registration)
        return NotificationToken(registration)
    }
}
