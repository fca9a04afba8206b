// cove_list_*, cove_set_*, cove_map_* and cove_object_create_embedded: the collection properties
// of an object over the Swift dynamic API (DynamicList, DynamicSet, DynamicMap). Each handle
// names one property of one object and reads through to the realm's current version.
import CCove
import Cove

// MARK: Checks shared by the three kinds

private func listHandle(_ p: OpaquePointer?, in function: StaticString) throws(CFailure) -> ListHandle {
    try handle(p, ListHandle.self, "list", in: function)
}

private func setHandle(_ p: OpaquePointer?, _ name: StaticString = "set", in function: StaticString) throws(CFailure) -> SetHandle {
    try handle(p, SetHandle.self, name, in: function)
}

private func mapHandle(_ p: OpaquePointer?, in function: StaticString) throws(CFailure) -> MapHandle {
    try handle(p, MapHandle.self, "map", in: function)
}

extension DynamicCollection {
    /// "list 'tags' of class 'Dog'", for messages.
    var label: String { "\(property.collection.rawValue) '\(property.name)' of class '\(owner.objectSchema.className)'" }
}

/// Refuses a write through a closed or frozen realm, or outside a write transaction, before the
/// engine runs: some engine paths write nothing (erasing an absent element or key, a union with
/// an empty set) and would otherwise succeed outside a write, and a frozen realm can never write,
/// which its own status says better than "not in a write".
private func requireWrite(_ realm: Realm, _ what: @autoclosure () -> String, in function: StaticString) throws(CFailure) {
    try requireOpen(realm, in: function)
    if realm.isFrozen {
        throw failure(Int32(COVE_ERR_FROZEN), "\(function): \(what()) is frozen and cannot be written")
    }
    if !realm.isInWriteTransaction {
        throw failure(Int32(COVE_ERR_NOT_IN_WRITE), "\(function): cannot write \(what()) outside a write transaction")
    }
}

/// An index argument. C's size_t arrives as Int, so an index above Int.max arrives negative: it
/// is out of range of any collection, and its message shows the number the caller passed.
private func position(_ index: Int, _ name: StaticString, of c: DynamicCollection, in function: StaticString) throws(CFailure) -> Int {
    guard index >= 0 else {
        throw failure(Int32(COVE_ERR_OUT_OF_RANGE), "\(function): \(name) \(UInt(bitPattern: index)) is out of range for \(c.label)")
    }
    return index
}

/// A map key argument: NUL-terminated UTF-8 (the engine refuses '.' and a leading '$').
private func mapKey(_ key: UnsafePointer<CChar>?, in function: StaticString) throws(CFailure) -> String {
    try string(key, "key", in: function)
}

// MARK: Lists

@c @implementation
public func cove_object_get_list(_ object: OpaquePointer?, _ property: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_object_get_list")
        let o = try objectHandle(object, in: "cove_object_get_list")
        let name = try string(property, "property", in: "cove_object_get_list")
        let list = try call { () throws(CoveError) in try o.object.dynamicList(name) }
        out.pointee = ListHandle(o.realmHandle, list).retainedPointer()
    }
}

@c @implementation
public func cove_list_size(_ list: OpaquePointer?, _ out: UnsafeMutablePointer<Int>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_list_size")
        let l = try listHandle(list, in: "cove_list_size")
        out.pointee = try call { () throws(CoveError) in try l.list.count }
    }
}

@c @implementation
public func cove_list_get(_ list: OpaquePointer?, _ index: Int, _ out: UnsafeMutablePointer<cove_value_t>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_list_get")
        let l = try listHandle(list, in: "cove_list_get")
        let i = try position(index, "index", of: l.list, in: "cove_list_get")
        let value = try call { () throws(CoveError) in try l.list.value(at: i) }
        ValueBridge.write(value, to: out, realm: l.realmHandle)
    }
}

@c @implementation
public func cove_list_insert(_ list: OpaquePointer?, _ index: Int, _ value: UnsafePointer<cove_value_t>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let l = try listHandle(list, in: "cove_list_insert")
        let i = try position(index, "index", of: l.list, in: "cove_list_insert")
        let v = try ValueBridge.value(value, "value", in: "cove_list_insert")
        try requireWrite(l.list.realm, l.list.label, in: "cove_list_insert")
        try call { () throws(CoveError) in try l.list.insert(v, at: i) }
    }
}

@c @implementation
public func cove_list_set(_ list: OpaquePointer?, _ index: Int, _ value: UnsafePointer<cove_value_t>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let l = try listHandle(list, in: "cove_list_set")
        let i = try position(index, "index", of: l.list, in: "cove_list_set")
        let v = try ValueBridge.value(value, "value", in: "cove_list_set")
        try requireWrite(l.list.realm, l.list.label, in: "cove_list_set")
        try call { () throws(CoveError) in try l.list.replace(index: i, with: v) }
    }
}

@c @implementation
public func cove_list_erase(_ list: OpaquePointer?, _ index: Int) -> cove_status_t {
    entry { () throws(CFailure) in
        let l = try listHandle(list, in: "cove_list_erase")
        let i = try position(index, "index", of: l.list, in: "cove_list_erase")
        try requireWrite(l.list.realm, l.list.label, in: "cove_list_erase")
        try call { () throws(CoveError) in try l.list.remove(at: i) }
    }
}

@c @implementation
public func cove_list_move(_ list: OpaquePointer?, _ from: Int, _ to: Int) -> cove_status_t {
    entry { () throws(CFailure) in
        let l = try listHandle(list, in: "cove_list_move")
        let f = try position(from, "from", of: l.list, in: "cove_list_move")
        let t = try position(to, "to", of: l.list, in: "cove_list_move")
        try requireWrite(l.list.realm, l.list.label, in: "cove_list_move")
        try call { () throws(CoveError) in try l.list.move(from: f, to: t) }
    }
}

@c @implementation
public func cove_list_clear(_ list: OpaquePointer?) -> cove_status_t {
    entry { () throws(CFailure) in
        let l = try listHandle(list, in: "cove_list_clear")
        try requireWrite(l.list.realm, l.list.label, in: "cove_list_clear")
        try call { () throws(CoveError) in try l.list.removeAll() }
    }
}

@c @implementation
public func cove_list_insert_embedded(_ list: OpaquePointer?, _ index: Int, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_list_insert_embedded")
        let l = try listHandle(list, in: "cove_list_insert_embedded")
        let i = try position(index, "index", of: l.list, in: "cove_list_insert_embedded")
        try requireWrite(l.list.realm, l.list.label, in: "cove_list_insert_embedded")
        let child = try call { () throws(CoveError) in try l.list.insertEmbedded(at: i) }
        give(child, of: l.realmHandle, to: out)
    }
}

@c @implementation
public func cove_list_freeze(_ list: OpaquePointer?, _ outFrozen: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(outFrozen, "out_frozen", in: "cove_list_freeze")
        let l = try listHandle(list, in: "cove_list_freeze")
        let live = l.list.realm
        if live.isFrozen {
            out.pointee = l.retainedPointer()
            return
        }
        let owner = l.list.owner
        if owner.isInvalidated {
            throw failure(Int32(COVE_ERR_INVALIDATED), "cove_list_freeze: the \(owner.objectSchema.className) object \(owner.objectKey) that owns \(l.list.label) was deleted")
        }
        // The same property of the same object, in a frozen realm of the list's version; the
        // realm handle made here closes that realm (unpinning its version) when the list goes.
        let frozen = RealmHandle(try call { () throws(CoveError) in try live.freeze() })
        let frozenOwner = try call { () throws(CoveError) in
            try frozen.realm.dynamicObject(ofType: owner.objectSchema.className, objectKey: owner.objectKey)
        }
        guard let frozenOwner else {
            throw failure(Int32(COVE_ERR_INTERNAL), "cove_list_freeze: the \(owner.objectSchema.className) object \(owner.objectKey) is missing from the frozen version")
        }
        let frozenList = try call { () throws(CoveError) in try frozenOwner.dynamicList(l.list.property.name) }
        out.pointee = ListHandle(frozen, frozenList).retainedPointer()
    }
}

// MARK: Sets

@c @implementation
public func cove_object_get_set(_ object: OpaquePointer?, _ property: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_object_get_set")
        let o = try objectHandle(object, in: "cove_object_get_set")
        let name = try string(property, "property", in: "cove_object_get_set")
        let set = try call { () throws(CoveError) in try o.object.dynamicMutableSet(name) }
        out.pointee = SetHandle(o.realmHandle, set).retainedPointer()
    }
}

@c @implementation
public func cove_set_size(_ set: OpaquePointer?, _ out: UnsafeMutablePointer<Int>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_set_size")
        let s = try setHandle(set, in: "cove_set_size")
        out.pointee = try call { () throws(CoveError) in try s.set.count }
    }
}

@c @implementation
public func cove_set_get(_ set: OpaquePointer?, _ index: Int, _ out: UnsafeMutablePointer<cove_value_t>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_set_get")
        let s = try setHandle(set, in: "cove_set_get")
        let i = try position(index, "index", of: s.set, in: "cove_set_get")
        let value = try call { () throws(CoveError) in try s.set.value(at: i) }
        ValueBridge.write(value, to: out, realm: s.realmHandle)
    }
}

@c @implementation
public func cove_set_insert(_ set: OpaquePointer?, _ value: UnsafePointer<cove_value_t>?, _ outInserted: UnsafeMutablePointer<Bool>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let s = try setHandle(set, in: "cove_set_insert")
        let v = try ValueBridge.value(value, "value", in: "cove_set_insert")
        try requireWrite(s.set.realm, s.set.label, in: "cove_set_insert")
        let inserted = try call { () throws(CoveError) in try s.set.insert(v) }
        outInserted?.pointee = inserted
    }
}

@c @implementation
public func cove_set_erase(_ set: OpaquePointer?, _ value: UnsafePointer<cove_value_t>?, _ outErased: UnsafeMutablePointer<Bool>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let s = try setHandle(set, in: "cove_set_erase")
        let v = try ValueBridge.value(value, "value", in: "cove_set_erase")
        try requireWrite(s.set.realm, s.set.label, in: "cove_set_erase")
        let erased = try call { () throws(CoveError) in try s.set.remove(v) }
        outErased?.pointee = erased
    }
}

@c @implementation
public func cove_set_contains(_ set: OpaquePointer?, _ value: UnsafePointer<cove_value_t>?, _ out: UnsafeMutablePointer<Bool>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_set_contains")
        let s = try setHandle(set, in: "cove_set_contains")
        let v = try ValueBridge.value(value, "value", in: "cove_set_contains")
        out.pointee = try call { () throws(CoveError) in try s.set.contains(v) }
    }
}

@c @implementation
public func cove_set_clear(_ set: OpaquePointer?) -> cove_status_t {
    entry { () throws(CFailure) in
        let s = try setHandle(set, in: "cove_set_clear")
        try requireWrite(s.set.realm, s.set.label, in: "cove_set_clear")
        try call { () throws(CoveError) in try s.set.removeAll() }
    }
}

/// The two sets of a set operation. They must belong to the same realm (the same cove_realm_t, or
/// handles made from it): a link names an object of one file at one version, and a set of
/// another realm may show another version. Their elements must be of the same type, optionality
/// included, so that no element of one is refused by the other and a union or assignment cannot
/// stop half-way.
private func operands(_ set: OpaquePointer?, _ other: OpaquePointer?, in function: StaticString) throws(CFailure) -> (DynamicSet, DynamicSet) {
    let s = try setHandle(set, in: function).set
    let o = try setHandle(other, "other", in: function).set
    guard s.realm === o.realm else {
        throw invalidArgument(function, "other (\(o.label)) belongs to another realm than set (\(s.label)): set operations need sets of one cove_realm_t")
    }
    guard s.property.type == o.property.type, s.property.isOptional == o.property.isOptional else {
        throw failure(Int32(COVE_ERR_WRONG_TYPE), "\(function): \(s.label) is \(s.property.typeNotation) and other (\(o.label)) is \(o.property.typeNotation): set operations need the same element type")
    }
    return (s, o)
}

/// A set operation that writes into the first set.
private func assignment(_ set: OpaquePointer?, _ other: OpaquePointer?, in function: StaticString,
                        _ body: (DynamicSet, DynamicSet) throws(CoveError) -> Void) -> cove_status_t {
    entry { () throws(CFailure) in
        let (s, o) = try operands(set, other, in: function)
        try requireWrite(s.realm, s.label, in: function)
        try call { () throws(CoveError) in try body(s, o) }
    }
}

/// A comparison of two sets.
private func comparison(_ set: OpaquePointer?, _ other: OpaquePointer?, _ out: UnsafeMutablePointer<Bool>?, in function: StaticString,
                        _ body: (DynamicSet, DynamicSet) throws(CoveError) -> Bool) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let (s, o) = try operands(set, other, in: function)
        out.pointee = try call { () throws(CoveError) in try body(s, o) }
    }
}

@c @implementation
public func cove_set_union(_ set: OpaquePointer?, _ other: OpaquePointer?) -> cove_status_t {
    assignment(set, other, in: "cove_set_union") { (s, o) throws(CoveError) in try s.union(o) }
}

@c @implementation
public func cove_set_intersect(_ set: OpaquePointer?, _ other: OpaquePointer?) -> cove_status_t {
    assignment(set, other, in: "cove_set_intersect") { (s, o) throws(CoveError) in try s.intersect(o) }
}

@c @implementation
public func cove_set_minus(_ set: OpaquePointer?, _ other: OpaquePointer?) -> cove_status_t {
    assignment(set, other, in: "cove_set_minus") { (s, o) throws(CoveError) in try s.subtract(o) }
}

@c @implementation
public func cove_set_assign(_ set: OpaquePointer?, _ other: OpaquePointer?) -> cove_status_t {
    assignment(set, other, in: "cove_set_assign") { (s, o) throws(CoveError) in try s.setSet(o) }
}

@c @implementation
public func cove_set_intersects(_ set: OpaquePointer?, _ other: OpaquePointer?, _ out: UnsafeMutablePointer<Bool>?) -> cove_status_t {
    comparison(set, other, out, in: "cove_set_intersects") { (s, o) throws(CoveError) in try s.intersects(o) }
}

@c @implementation
public func cove_set_is_subset(_ set: OpaquePointer?, _ other: OpaquePointer?, _ out: UnsafeMutablePointer<Bool>?) -> cove_status_t {
    comparison(set, other, out, in: "cove_set_is_subset") { (s, o) throws(CoveError) in try s.isSubset(of: o) }
}

@c @implementation
public func cove_set_equals(_ set: OpaquePointer?, _ other: OpaquePointer?, _ out: UnsafeMutablePointer<Bool>?) -> cove_status_t {
    comparison(set, other, out, in: "cove_set_equals") { (s, o) throws(CoveError) in try s.isEqual(to: o) }
}

/// An aggregate that may find nothing: `out` gets the value (NULL when there is none) and
/// `outFound` whether there was one.
private func aggregate(_ set: OpaquePointer?, _ out: UnsafeMutablePointer<cove_value_t>?, _ outFound: UnsafeMutablePointer<Bool>?,
                       in function: StaticString, _ body: (DynamicSet) throws(CoveError) -> Value?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: function)
        let found = try required(outFound, "out_found", in: function)
        let s = try setHandle(set, in: function)
        let value = try call { () throws(CoveError) in try body(s.set) }
        ValueBridge.write(value ?? .null, to: out, realm: s.realmHandle)
        found.pointee = value != nil
    }
}

@c @implementation
public func cove_set_min(_ set: OpaquePointer?, _ out: UnsafeMutablePointer<cove_value_t>?, _ outFound: UnsafeMutablePointer<Bool>?) -> cove_status_t {
    aggregate(set, out, outFound, in: "cove_set_min") { (s) throws(CoveError) in try s.min() }
}

@c @implementation
public func cove_set_max(_ set: OpaquePointer?, _ out: UnsafeMutablePointer<cove_value_t>?, _ outFound: UnsafeMutablePointer<Bool>?) -> cove_status_t {
    aggregate(set, out, outFound, in: "cove_set_max") { (s) throws(CoveError) in try s.max() }
}

@c @implementation
public func cove_set_sum(_ set: OpaquePointer?, _ out: UnsafeMutablePointer<cove_value_t>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_set_sum")
        let s = try setHandle(set, in: "cove_set_sum")
        let value = try call { () throws(CoveError) in try s.set.sum() }
        ValueBridge.write(value, to: out, realm: s.realmHandle)
    }
}

@c @implementation
public func cove_set_average(_ set: OpaquePointer?, _ out: UnsafeMutablePointer<cove_value_t>?, _ outFound: UnsafeMutablePointer<Bool>?) -> cove_status_t {
    aggregate(set, out, outFound, in: "cove_set_average") { (s) throws(CoveError) in try s.average() }
}

// MARK: Maps

@c @implementation
public func cove_object_get_map(_ object: OpaquePointer?, _ property: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_object_get_map")
        let o = try objectHandle(object, in: "cove_object_get_map")
        let name = try string(property, "property", in: "cove_object_get_map")
        let map = try call { () throws(CoveError) in try o.object.dynamicMap(name) }
        out.pointee = MapHandle(o.realmHandle, map).retainedPointer()
    }
}

@c @implementation
public func cove_map_size(_ map: OpaquePointer?, _ out: UnsafeMutablePointer<Int>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_map_size")
        let m = try mapHandle(map, in: "cove_map_size")
        out.pointee = try call { () throws(CoveError) in try m.map.count }
    }
}

@c @implementation
public func cove_map_get(_ map: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<cove_value_t>?,
                         _ outFound: UnsafeMutablePointer<Bool>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_map_get")
        let found = try required(outFound, "out_found", in: "cove_map_get")
        let m = try mapHandle(map, in: "cove_map_get")
        let k = try mapKey(key, in: "cove_map_get")
        let value = try call { () throws(CoveError) in try m.map.value(forKey: k) }
        ValueBridge.write(value ?? .null, to: out, realm: m.realmHandle)
        found.pointee = value != nil
    }
}

@c @implementation
public func cove_map_set(_ map: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ value: UnsafePointer<cove_value_t>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let m = try mapHandle(map, in: "cove_map_set")
        let k = try mapKey(key, in: "cove_map_set")
        let v = try ValueBridge.value(value, "value", in: "cove_map_set")
        try requireWrite(m.map.realm, m.map.label, in: "cove_map_set")
        try call { () throws(CoveError) in try m.map.setValue(v, forKey: k) }
    }
}

@c @implementation
public func cove_map_erase(_ map: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ outErased: UnsafeMutablePointer<Bool>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let m = try mapHandle(map, in: "cove_map_erase")
        let k = try mapKey(key, in: "cove_map_erase")
        try requireWrite(m.map.realm, m.map.label, in: "cove_map_erase")
        let erased = try call { () throws(CoveError) in try m.map.removeValue(forKey: k) }
        outErased?.pointee = erased
    }
}

@c @implementation
public func cove_map_get_at(_ map: OpaquePointer?, _ index: Int, _ outKey: UnsafeMutablePointer<cove_string_t>?,
                            _ outValue: UnsafeMutablePointer<cove_value_t>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let outKey = try required(outKey, "out_key", in: "cove_map_get_at")
        let outValue = try required(outValue, "out_value", in: "cove_map_get_at")
        let m = try mapHandle(map, in: "cove_map_get_at")
        let i = try position(index, "index", of: m.map, in: "cove_map_get_at")
        let entry = try call { () throws(CoveError) in try m.map.entry(at: i) }
        // The key is kept NUL-terminated, so that it can be passed straight back as a key.
        let utf8 = Array(entry.key.utf8)
        let (bytes, _) = (utf8 + [0]).withUnsafeBytes { m.realmHandle.keep($0) }
        outKey.pointee = cove_string_t(data: bytes.map { UnsafePointer($0.assumingMemoryBound(to: CChar.self)) }, size: utf8.count)
        ValueBridge.write(entry.value, to: outValue, realm: m.realmHandle)
    }
}

@c @implementation
public func cove_map_set_embedded(_ map: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_map_set_embedded")
        let m = try mapHandle(map, in: "cove_map_set_embedded")
        let k = try mapKey(key, in: "cove_map_set_embedded")
        try requireWrite(m.map.realm, m.map.label, in: "cove_map_set_embedded")
        let child = try call { () throws(CoveError) in try m.map.setEmbedded(forKey: k) }
        give(child, of: m.realmHandle, to: out)
    }
}

// MARK: Embedded objects in single links

@c @implementation
public func cove_object_create_embedded(_ parent: OpaquePointer?, _ property: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_object_create_embedded")
        let o = try objectHandle(parent, in: "cove_object_create_embedded")
        let name = try string(property, "property", in: "cove_object_create_embedded")
        let owner = o.object.objectSchema.className
        try requireWrite(o.object.realm, "property '\(name)' of class '\(owner)'", in: "cove_object_create_embedded")
        let child = try call { () throws(CoveError) in try o.object.createEmbeddedObject(forProperty: name) }
        give(child, of: o.realmHandle, to: out)
    }
}
