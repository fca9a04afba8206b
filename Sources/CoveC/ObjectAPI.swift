// cove_object_*, cove_class_key, cove_property_key and the schema functions: objects by class
// and property name (or cached key) over the Swift dynamic API.
import CCove
@_spi(CoveBindings) import Cove
#if canImport(Glibc)
import Glibc
#endif

func realmHandle(_ p: OpaquePointer?, in function: StaticString) throws(CFailure) -> RealmHandle {
    try handle(p, RealmHandle.self, "realm", in: function)
}

func objectHandle(_ p: OpaquePointer?, in function: StaticString) throws(CFailure) -> ObjectHandle {
    try handle(p, ObjectHandle.self, "object", in: function)
}

/// Hands an object out through `out` (+1), or NULL.
func give(_ object: DynamicObject?, of realm: RealmHandle, to out: UnsafeMutablePointer<OpaquePointer?>) {
    out.pointee = object.map { ObjectHandle(realm, $0).retainedPointer() }
}

@c @implementation
public func cove_config_set_schema_json(_ config: OpaquePointer?, _ json: UnsafePointer<CChar>?, _ schemaVersion: UInt64) -> cove_status_t {
    entry { () throws(CFailure) in
        let c = try handle(config, ConfigHandle.self, "config", in: "cove_config_set_schema_json")
        let text = try string(json, "json", in: "cove_config_set_schema_json")
        let schema = try call { () throws(CoveError) in try Schema(jsonText: text) }
        c.configuration.schema = schema
        c.configuration.schemaVersion = schemaVersion
    }
}

@c @implementation
public func cove_schema_json(_ realm: OpaquePointer?, _ outJson: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(outJson, "out_json", in: "cove_schema_json")
        let r = try realmHandle(realm, in: "cove_schema_json").realm
        out.pointee = strdup(r.schema.jsonText())
    }
}

@c @implementation
public func cove_class_key(_ realm: OpaquePointer?, _ className: UnsafePointer<CChar>?, _ outClassKey: UnsafeMutablePointer<UInt32>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(outClassKey, "out_class_key", in: "cove_class_key")
        let r = try realmHandle(realm, in: "cove_class_key").realm
        let name = try string(className, "class_name", in: "cove_class_key")
        guard let key = r.schema[name]?.classKey else {
            throw failure(Int32(COVE_ERR_NOT_FOUND), "cove_class_key: no class '\(name)' in the schema")
        }
        out.pointee = key
    }
}

@c @implementation
public func cove_property_key(_ realm: OpaquePointer?, _ className: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?,
                              _ outKey: UnsafeMutablePointer<Int64>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(outKey, "out_key", in: "cove_property_key")
        let r = try realmHandle(realm, in: "cove_property_key").realm
        let name = try string(className, "class_name", in: "cove_property_key")
        let propertyName = try string(property, "property", in: "cove_property_key")
        guard let cls = r.schema[name] else {
            throw failure(Int32(COVE_ERR_NOT_FOUND), "cove_property_key: no class '\(name)' in the schema")
        }
        guard let key = cls[property: propertyName]?.key else {
            throw failure(Int32(COVE_ERR_NOT_FOUND), "cove_property_key: class '\(name)' has no property '\(propertyName)'")
        }
        out.pointee = key
    }
}

@c @implementation
public func cove_object_create(_ realm: OpaquePointer?, _ className: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_object_create")
        let h = try realmHandle(realm, in: "cove_object_create")
        let name = try string(className, "class_name", in: "cove_object_create")
        let object = try call { () throws(CoveError) in try h.realm.dynamicCreate(name) }
        give(object, of: h, to: out)
    }
}

@c @implementation
public func cove_object_create_with_primary_key(_ realm: OpaquePointer?, _ className: UnsafePointer<CChar>?,
                                                _ pk: UnsafePointer<cove_value_t>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_object_create_with_primary_key")
        let h = try realmHandle(realm, in: "cove_object_create_with_primary_key")
        let name = try string(className, "class_name", in: "cove_object_create_with_primary_key")
        let key = try ValueBridge.value(pk, "pk", in: "cove_object_create_with_primary_key")
        let object = try call { () throws(CoveError) in try h.realm.dynamicCreate(name, primaryKey: key) }
        give(object, of: h, to: out)
    }
}

@c @implementation
public func cove_object_create_or_update(_ realm: OpaquePointer?, _ className: UnsafePointer<CChar>?,
                                         _ pk: UnsafePointer<cove_value_t>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_object_create_or_update")
        let h = try realmHandle(realm, in: "cove_object_create_or_update")
        let name = try string(className, "class_name", in: "cove_object_create_or_update")
        let key = try ValueBridge.value(pk, "pk", in: "cove_object_create_or_update")
        let object = try call { () throws(CoveError) in try h.realm.dynamicCreateOrUpdate(name, primaryKey: key) }
        give(object, of: h, to: out)
    }
}

// MARK: Batch creation

/// What `cove_object_create_many` and `cove_object_create_with_values` check first and share:
/// the realm open, writable and in a write, the names valid UTF-8 and resolved once against
/// the write's own schema (unknown class or property, embedded class, backlinks, collection, a
/// name twice, the primary key missing) into a creator.
private func creator(_ realm: OpaquePointer?, _ className: UnsafePointer<CChar>?,
                     _ propertyNames: UnsafePointer<UnsafePointer<CChar>?>?, _ nProperties: Int,
                     in function: StaticString) throws(CFailure) -> (realm: RealmHandle, names: [String], creator: CreatorMemo) {
    let h = try realmHandle(realm, in: function)
    let name = try string(className, "class_name", in: function)
    // size_t arrives as Int: a count above Int.max arrives negative.
    guard nProperties >= 0 else { throw invalidArgument(function, "n_properties \(UInt(bitPattern: nProperties)) is too large") }
    if nProperties > 0 && propertyNames == nil {
        throw invalidArgument(function, "property_names is NULL with n_properties \(nProperties)")
    }
    if h.realm.isFrozen {
        throw failure(Int32(COVE_ERR_FROZEN), "\(function): the realm is frozen and cannot be written")
    }
    if !h.realm.isInWriteTransaction {
        throw failure(Int32(COVE_ERR_NOT_IN_WRITE), "\(function): cannot create objects of class '\(name)' outside a write transaction")
    }
    if let memo = h.creatorMemo, memo.matches(name, propertyNames, nProperties) {
        return (h, memo.names, memo)
    }
    var names: [String] = []
    names.reserveCapacity(nProperties)
    for j in 0..<nProperties {
        guard let p = propertyNames?[j] else { throw invalidArgument(function, "property_names[\(j)] is NULL") }
        guard let n = String(validatingCString: p) else {
            throw invalidArgument(function, "property_names[\(j)] is not valid UTF-8")
        }
        names.append(n)
    }
    // Lists, sets and maps take their elements; every other name (unknown ones included, for
    // the creator to report) a single value.
    let cls = h.realm.schema[name]
    let kinds: [CollectionKind] = names.map { n in
        guard let p = cls?[property: n], !p.isBacklinks else { return .none }
        return p.collection
    }
    let made: DynamicCreator
    do throws(CoveError) {
        made = try h.realm.dynamicCreator(name, properties: zip(names, kinds).filter { $0.1 == .none }.map(\.0),
                                          collections: zip(names, kinds).filter { $0.1 != .none }.map(\.0))
    } catch {
        throw failure(error.code.rawValue, "\(function): \(error.message)")
    }
    let memo = CreatorMemo(names: names, kinds: kinds, creator: made)
    h.creatorMemo = memo
    return (h, names, memo)
}

/// The creator a realm handle's last create by values made, and the names it was made for: a
/// program that creates objects of one class one call at a time (cove_object_create_with_values)
/// has the class and property names resolved once, as SQL's prepared statement would, instead
/// of at every call. The names are compared byte for byte; the creator itself resolves them
/// again when a later write's schema differs.
final class CreatorMemo {
    let propertyNames: [[CChar]]
    let names: [String]
    /// What each name is: a single value (`.none`), or a list, set or map given its elements.
    let kinds: [CollectionKind]
    let hasCollections: Bool
    let creator: DynamicCreator
    /// Each object's single values and collections' elements, reused from object to object.
    var row: [Value]
    var elements: [[Value]]

    init(names: [String], kinds: [CollectionKind], creator: DynamicCreator) {
        propertyNames = names.map { Array($0.utf8CString) }
        self.names = names
        self.kinds = kinds
        hasCollections = kinds.contains { $0 != .none }
        self.creator = creator
        row = [Value](repeating: .null, count: creator.properties.count)
        elements = [[Value]](repeating: [], count: creator.collections.count)
    }

    /// Reads the `names.count` values of one object from `first` on into `row` and
    /// `elements`; a bad one reported with `context(j)` naming its property.
    func read(_ values: UnsafePointer<cove_value_t>?, _ first: Int, in function: StaticString,
              _ context: (Int) -> String) throws(CFailure) {
        if !hasCollections {
            try readValues(values, first, into: &row, in: function, context)
            return
        }
        // The arrays are taken out of the object for the loop (one exclusive access each, not
        // one per value) and put back, whatever happens.
        var row: [Value] = []
        var elements: [[Value]] = []
        swap(&row, &self.row)
        swap(&elements, &self.elements)
        defer {
            swap(&row, &self.row)
            swap(&elements, &self.elements)
        }
        var single = 0, collection = 0
        for j in 0..<kinds.count {
            let v = values.map { $0 + (first + j) }
            do throws(CFailure) {
                if kinds[j] == .none {
                    row[single] = try ValueBridge.value(v, "value", in: function)
                    single += 1
                } else {
                    try ValueBridge.elements(v, map: kinds[j] == .map, in: function, into: &elements[collection])
                    collection += 1
                }
            } catch {
                throw rewordedFailure(error, function, context(j))
            }
        }
    }

    /// Whether the C strings name the same class and properties, in the same order.
    func matches(_ className: String, _ propertyNames: UnsafePointer<UnsafePointer<CChar>?>?, _ n: Int) -> Bool {
        guard n == self.propertyNames.count, creator.className == className else { return false }
        for j in 0..<n {
            guard let p = propertyNames?[j] else { return false }
            let same = self.propertyNames[j].withUnsafeBufferPointer { name in name.baseAddress.map { strcmp($0, p) == 0 } ?? false }
            if !same { return false }
        }
        return true
    }
}

/// The `row.count` values of a C array from `first` on, into `row`; a bad one reported with
/// `context(j)` naming its property.
func readValues(_ values: UnsafePointer<cove_value_t>?, _ first: Int, into row: inout [Value],
                    in function: StaticString, _ context: (Int) -> String) throws(CFailure) {
    for j in 0..<row.count {
        do throws(CFailure) {
            row[j] = try ValueBridge.value(values.map { $0 + (first + j) }, "value", in: function)
        } catch {
            throw rewordedFailure(error, function, context(j))
        }
    }
}

@c @implementation
public func cove_object_create_many(_ realm: OpaquePointer?, _ className: UnsafePointer<CChar>?,
                                    _ propertyNames: UnsafePointer<UnsafePointer<CChar>?>?, _ nProperties: Int,
                                    _ values: UnsafePointer<cove_value_t>?, _ nObjects: Int, _ update: Bool,
                                    _ outCreated: UnsafeMutablePointer<Int>?) -> cove_status_t {
    let function: StaticString = "cove_object_create_many"
    outCreated?.pointee = 0
    return entry { () throws(CFailure) in
        guard nObjects >= 0 else { throw invalidArgument(function, "n_objects \(UInt(bitPattern: nObjects)) is too large") }
        let (cellCount, overflow) = nObjects.multipliedReportingOverflow(by: max(nProperties, 0))
        if overflow { throw invalidArgument(function, "n_objects \(nObjects) times n_properties \(nProperties) is too large") }
        if cellCount > 0 && values == nil {
            throw invalidArgument(function, "values is NULL with n_objects \(nObjects) and n_properties \(nProperties)")
        }
        let (h, names, memo) = try creator(realm, className, propertyNames, nProperties, in: function)
        let creator = memo.creator
        let name = creator.className
        if update && h.realm.schema[name]?.primaryKey == nil {
            throw invalidArgument(function, "update needs a primary key, and class '\(name)' has none")
        }
        for i in 0..<nObjects {
            try memo.read(values, i * nProperties, in: function) { j in "object \(i): property '\(names[j])' of class '\(name)'" }
            // A refused row leaves nothing: the engine checks every value before the object exists.
            do throws(CoveError) {
                switch (update, memo.hasCollections) {
                case (true, false): try creator.createOrUpdate(memo.row)
                case (true, true): try creator.createOrUpdate(memo.row, elements: memo.elements)
                case (false, false): try creator.create(memo.row)
                case (false, true): try creator.create(memo.row, elements: memo.elements)
                }
            } catch {
                throw failure(error.code.rawValue, "\(function): object \(i): \(error.message)")
            }
            outCreated?.pointee = i + 1
        }
    }
}

@c @implementation
public func cove_object_create_with_values(_ realm: OpaquePointer?, _ className: UnsafePointer<CChar>?,
                                           _ propertyNames: UnsafePointer<UnsafePointer<CChar>?>?, _ nProperties: Int,
                                           _ values: UnsafePointer<cove_value_t>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    let function: StaticString = "cove_object_create_with_values"
    return entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        if nProperties > 0 && values == nil {
            throw invalidArgument(function, "values is NULL with n_properties \(nProperties)")
        }
        let (h, names, memo) = try creator(realm, className, propertyNames, nProperties, in: function)
        try memo.read(values, 0, in: function) { j in "property '\(names[j])' of class '\(memo.creator.className)'" }
        let object: DynamicObject
        do throws(CoveError) {
            object = memo.hasCollections ? try memo.creator.createObject(memo.row, elements: memo.elements)
                                         : try memo.creator.createObject(memo.row)
        } catch {
            throw failure(error.code.rawValue, "\(function): \(error.message)")
        }
        give(object, of: h, to: out)
    }
}

/// `error` (a failure already recorded) recorded again with `context` after the function's name:
/// "f: object 3: property 'age' of class 'Person': value has type tag 99, ...".
func rewordedFailure(_ error: CFailure, _ function: StaticString, _ context: String) -> CFailure {
    var message = cove_last_error_message().map { String(cString: $0) } ?? ""
    let prefix = "\(function): "
    if message.hasPrefix(prefix) { message.removeFirst(prefix.count) }
    return failure(error.status, "\(function): \(context): \(message)")
}

@c @implementation
public func cove_object_find(_ realm: OpaquePointer?, _ className: UnsafePointer<CChar>?,
                             _ pk: UnsafePointer<cove_value_t>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_object_find")
        let h = try realmHandle(realm, in: "cove_object_find")
        let name = try string(className, "class_name", in: "cove_object_find")
        let key = try ValueBridge.value(pk, "pk", in: "cove_object_find")
        let object = try call { () throws(CoveError) in try h.realm.dynamicObject(ofType: name, forPrimaryKey: key) }
        give(object, of: h, to: out)
    }
}

@c @implementation
public func cove_object_get(_ object: OpaquePointer?, _ property: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<cove_value_t>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_object_get")
        let o = try objectHandle(object, in: "cove_object_get")
        let name = try string(property, "property", in: "cove_object_get")
        let value = try call { () throws(CoveError) in try o.object.value(forKey: name) }
        ValueBridge.write(value, to: out, realm: o.realmHandle)
    }
}

@c @implementation
public func cove_object_set(_ object: OpaquePointer?, _ property: UnsafePointer<CChar>?, _ value: UnsafePointer<cove_value_t>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let o = try objectHandle(object, in: "cove_object_set")
        let name = try string(property, "property", in: "cove_object_set")
        let v = try ValueBridge.value(value, "value", in: "cove_object_set")
        try call { () throws(CoveError) in try o.object.setValue(v, forKey: name) }
    }
}

@c @implementation
public func cove_object_get_by_key(_ object: OpaquePointer?, _ propertyKey: Int64, _ out: UnsafeMutablePointer<cove_value_t>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_object_get_by_key")
        let o = try objectHandle(object, in: "cove_object_get_by_key")
        let value = try call { () throws(CoveError) in try o.object.value(forPropertyKey: propertyKey) }
        ValueBridge.write(value, to: out, realm: o.realmHandle)
    }
}

@c @implementation
public func cove_object_set_by_key(_ object: OpaquePointer?, _ propertyKey: Int64, _ value: UnsafePointer<cove_value_t>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let o = try objectHandle(object, in: "cove_object_set_by_key")
        let v = try ValueBridge.value(value, "value", in: "cove_object_set_by_key")
        try call { () throws(CoveError) in try o.object.setValue(v, forPropertyKey: propertyKey) }
    }
}

@c @implementation
public func cove_object_get_object(_ object: OpaquePointer?, _ property: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_object_get_object")
        let o = try objectHandle(object, in: "cove_object_get_object")
        let name = try string(property, "property", in: "cove_object_get_object")
        let target = try call { () throws(CoveError) in try o.object.linkedObject(name) }
        give(target, of: o.realmHandle, to: out)
    }
}

@c @implementation
public func cove_object_delete(_ object: OpaquePointer?) -> cove_status_t {
    entry { () throws(CFailure) in
        let o = try objectHandle(object, in: "cove_object_delete")
        try call { () throws(CoveError) in try o.object.realm.delete(o.object) }
    }
}

@c @implementation
public func cove_object_is_valid(_ object: OpaquePointer?, _ out: UnsafeMutablePointer<Bool>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_object_is_valid")
        let o = try handle(object, ObjectHandle.self, "object", in: "cove_object_is_valid", closedAllowed: true)
        out.pointee = !o.object.isInvalidated
    }
}

@c @implementation
public func cove_object_freeze(_ object: OpaquePointer?, _ outFrozen: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(outFrozen, "out_frozen", in: "cove_object_freeze")
        let o = try objectHandle(object, in: "cove_object_freeze")
        let realm = o.object.realm
        if realm.isFrozen {
            out.pointee = o.retainedPointer()
            return
        }
        if realm.isInWriteTransaction { throw failure(Int32(COVE_ERR_IN_WRITE), "cove_object_freeze: cannot freeze inside a write transaction") }
        let frozen = try call { () throws(CoveError) in try o.object.freeze() }
        // The frozen object's own realm handle closes that frozen realm when the object goes.
        out.pointee = ObjectHandle(RealmHandle(frozen.realm), frozen).retainedPointer()
    }
}

@c @implementation
public func cove_object_thaw(_ frozen: OpaquePointer?, _ live: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_object_thaw")
        let o = try objectHandle(frozen, in: "cove_object_thaw")
        let l = try realmHandle(live, in: "cove_object_thaw")
        if l.realm.isFrozen { throw invalidArgument("cove_object_thaw", "live is a frozen realm") }
        let thawed = try call { () throws(CoveError) in try o.object.thaw(in: l.realm) }
        give(thawed, of: l, to: out)
    }
}

@c @implementation
public func cove_object_to_link(_ object: OpaquePointer?, _ outLink: UnsafeMutablePointer<cove_value_t>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(outLink, "out_link", in: "cove_object_to_link")
        let o = try objectHandle(object, in: "cove_object_to_link")
        if o.object.isInvalidated {
            throw failure(Int32(COVE_ERR_INVALIDATED), "cove_object_to_link: the \(o.object.objectSchema.className) object \(o.object.objectKey) was deleted")
        }
        ValueBridge.write(.link(o.object.link), to: out, realm: o.realmHandle)
    }
}

@c @implementation
public func cove_object_from_link(_ realm: OpaquePointer?, _ link: UnsafePointer<cove_value_t>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_object_from_link")
        let h = try realmHandle(realm, in: "cove_object_from_link")
        guard case .link(let l) = try ValueBridge.value(link, "link", in: "cove_object_from_link") else {
            throw failure(Int32(COVE_ERR_WRONG_TYPE), "cove_object_from_link: link is not a COVE_TYPE_LINK value")
        }
        let object: DynamicObject?
        do throws(CoveError) {
            object = try h.realm.object(for: l)
        } catch {
            throw failure(error.code.rawValue, "cove_object_from_link: \(error.message)")
        }
        guard let object else {
            let cls = h.realm.schema.objectSchema(forClassKey: l.classKey)?.className ?? "key \(l.classKey)"
            throw failure(Int32(COVE_ERR_NOT_FOUND), "cove_object_from_link: no object of class '\(cls)' has key \(l.objectKey) (it was deleted, or never made)")
        }
        give(object, of: h, to: out)
    }
}

@c @implementation
public func cove_object_get_by_object_key(_ realm: OpaquePointer?, _ className: UnsafePointer<CChar>?, _ objectKey: Int64,
                                          _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_object_get_by_object_key")
        let h = try realmHandle(realm, in: "cove_object_get_by_object_key")
        let name = try string(className, "class_name", in: "cove_object_get_by_object_key")
        let object = try call { () throws(CoveError) in try h.realm.dynamicObject(ofType: name, objectKey: objectKey) }
        give(object, of: h, to: out)
    }
}

@c @implementation
public func cove_object_from_keys(_ realm: OpaquePointer?, _ classKey: UInt32, _ objectKey: Int64,
                                  _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_object_from_keys")
        let h = try realmHandle(realm, in: "cove_object_from_keys")
        let object = try call { () throws(CoveError) in try h.realm.dynamicObject(classKey: classKey, objectKey: objectKey) }
        give(object, of: h, to: out)
    }
}

@c @implementation
public func cove_object_exists_by_keys(_ realm: OpaquePointer?, _ classKey: UInt32, _ objectKey: Int64,
                                       _ out: UnsafeMutablePointer<Bool>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_object_exists_by_keys")
        let h = try realmHandle(realm, in: "cove_object_exists_by_keys")
        out.pointee = try call { () throws(CoveError) in try h.realm.objectExists(classKey: classKey, objectKey: objectKey) }
    }
}

@c @implementation
public func cove_object_get_by_keys(_ realm: OpaquePointer?, _ classKey: UInt32, _ objectKey: Int64, _ propertyKey: Int64,
                                    _ out: UnsafeMutablePointer<cove_value_t>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_object_get_by_keys")
        let h = try realmHandle(realm, in: "cove_object_get_by_keys")
        let value = try call { () throws(CoveError) in
            try h.realm.value(classKey: classKey, objectKey: objectKey, propertyKey: propertyKey)
        }
        ValueBridge.write(value, to: out, realm: h)
    }
}

@c @implementation
public func cove_object_set_by_keys(_ realm: OpaquePointer?, _ classKey: UInt32, _ objectKey: Int64, _ propertyKey: Int64,
                                    _ value: UnsafePointer<cove_value_t>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let h = try realmHandle(realm, in: "cove_object_set_by_keys")
        let v = try ValueBridge.value(value, "value", in: "cove_object_set_by_keys")
        try call { () throws(CoveError) in
            try h.realm.setValue(v, classKey: classKey, objectKey: objectKey, propertyKey: propertyKey)
        }
    }
}
